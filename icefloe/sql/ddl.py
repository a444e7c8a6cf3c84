"""DDL on icefloe tables: CREATE [AS SELECT], DROP, SHOW TABLES, DESCRIBE, ALTER TABLE."""
from __future__ import annotations

import contextlib

from sqlglot import exp

from icefloe.core.redact import redact_properties
from icefloe.core.types import parse_schema
from icefloe.errors import CommitFailedError, IcefloeError, SchemaError
from icefloe.sql import catalog_statements as cs, column_defaults, parser as p, system_database
from icefloe.sql.errors import SqlError
from icefloe.sql.names import table_parts
from icefloe.sql.translate import partition_term
from icefloe.core.types import from_spark_schema
from icefloe.iceberg.catalog import RenameNotSupportedError, ReplaceNotSupportedError
from icefloe.iceberg.transforms import default_field_name, parse_partition_expr
from icefloe.paimon.catalog import DEFAULT_DATABASE
from icefloe.table.capabilities import BRANCH_TABLES, TAG_LISTS

ICEFLOE_PROVIDERS = ("iceberg", "paimon", "icefloe")


# --------------------------------------------------------------------------- CREATE
def _provider(create: exp.Create):
    props = create.args.get("properties")
    if props is None:
        return None
    for prop in props.expressions:
        if isinstance(prop, exp.FileFormatProperty):
            return prop.name.lower() if prop.this is not None else None
    return None


def _is_ours(sess, table: exp.Table, provider) -> bool:
    parts = table_parts(table)
    if len(parts) == 1 and sess.namespace:
        return True
    if len(parts) == 3 and parts[0].lower() == sess.catalog_name.lower():
        return True
    if len(parts) == 2 and provider is None and _namespace_exists(sess, parts[0]):
        return True             # db.t without USING where db is a namespace of the catalog: its table
    return provider in ICEFLOE_PROVIDERS


# table options only a Paimon table has: a CREATE TABLE giving them means a Paimon table
_PAIMON_ONLY = ("primary-key", "bucket", "bucket-key", "merge-engine", "changelog-producer", "sequence.field",
                "deletion-vectors.enabled")


def _refuse_paimon_table_in_spark(sess, tree: exp.Create, target: exp.Table) -> None:
    """A Paimon catalog's CREATE TABLE of a name without a database, with Paimon's table options or a
    PRIMARY KEY, would reach Spark's own catalog and create a plain table without them: refused."""
    if not _is_paimon(sess):
        return
    props = tree.args.get("properties")
    given = [prop.name for prop in (props.expressions if props else []) if isinstance(prop, exp.Property)
             and not isinstance(prop, (exp.FileFormatProperty, exp.LocationProperty)) and prop.name in _PAIMON_ONLY]
    if isinstance(tree.this, exp.Schema) and any(isinstance(c, exp.PrimaryKey) for c in tree.this.expressions):
        given.append("PRIMARY KEY")
    if given:
        name = ".".join(table_parts(target))
        raise sess.error(f"CREATE TABLE {name} names no database, so Spark's own catalog would create a plain "
                         f"table without {', '.join(given)}; create the Paimon table as "
                         f"{sess.catalog_name}.{DEFAULT_DATABASE}.{name} (or USE {sess.catalog_name}."
                         f"{DEFAULT_DATABASE} first)", target)


def _namespace_exists(sess, name: str) -> bool:
    try:
        return sess.catalog.namespace_exists(name)
    except IcefloeError:
        return False


def _target_name(sess, table: exp.Table) -> str:
    parts = sess.qualify(table_parts(table))
    if len(parts) == 3 and parts[0].lower() == sess.catalog_name.lower():
        parts = parts[1:]
    if len(parts) != 2:
        raise sess.error(f"table name {'.'.join(table_parts(table))} must be db.table or "
                         f"{sess.catalog_name}.db.table", table)
    return ".".join(parts)


def create(sess, tree: exp.Create):
    kind = str(tree.args.get("kind") or "").upper()
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    provider = _provider(tree)
    like = _like_source(tree)
    if like is not None and kind == "TABLE" and isinstance(target, exp.Table) and \
            (_is_ours(sess, target, provider) or sess.resolve(like)[0] is not None):
        return _create_like(sess, tree, target, like, provider)
    if kind != "TABLE" or not isinstance(target, exp.Table) or not _is_ours(sess, target, provider):
        if kind == "TABLE" and isinstance(target, exp.Table) and provider is None:
            _refuse_paimon_table_in_spark(sess, tree, target)
        return sess.query_statement(tree)        # views, functions, Spark's own tables
    fmt = sess.catalog.format
    if provider in ("iceberg", "paimon") and provider != fmt:
        raise sess.error(f"this catalog holds {fmt} tables; USING {provider} needs a catalog opened "
                         f"with format={provider!r} (icefloe --format {provider})", tree)
    replace = bool(tree.args.get("replace"))
    replace_only = bool(getattr(sess.statement, "replace_only", False))
    verb = "REPLACE TABLE" if replace_only else "CREATE OR REPLACE TABLE"
    name = _target_name(sess, target)
    exists = sess.exists(name)
    if replace and tree.args.get("exists"):
        raise sess.error(f"{verb} cannot be combined with IF NOT EXISTS", tree)
    if exists and not replace:
        if tree.args.get("exists"):
            return sess.empty()
        raise sess.error(f"table {name} already exists", target)
    if replace_only and not exists:
        raise sess.error(f"table {name} does not exist, so REPLACE TABLE cannot replace it "
                         "(CREATE OR REPLACE TABLE creates it)", target)
    partitioned_by, properties = [], {}
    for prop in (tree.args.get("properties").expressions if tree.args.get("properties") else []):
        if isinstance(prop, exp.PartitionedByProperty):
            terms = prop.this.expressions if isinstance(prop.this, exp.Schema) else [prop.this]
            partitioned_by = [partition_term(t) for t in terms]
        elif isinstance(prop, (exp.FileFormatProperty, exp.LocationProperty)):
            # checked before exp.Property, their base class: USING iceberg is not a table property
            if isinstance(prop, exp.LocationProperty):
                raise _location_refused(sess, prop)
        elif isinstance(prop, exp.SchemaCommentProperty):
            properties["comment"] = prop.this.name      # the table comment, as Iceberg's Spark catalog keeps it
        elif isinstance(prop, exp.Property):
            properties[prop.name] = prop.args["value"].name if prop.args.get("value") is not None else ""
        else:
            raise sess.not_supported(f"CREATE TABLE clause {prop.sql('spark')}", prop)
    query = tree.expression
    if isinstance(tree.this, exp.Schema):
        if query is not None:
            raise sess.error("CREATE TABLE AS SELECT takes no column list", tree.this)
        cols = [c for c in tree.this.expressions if isinstance(c, exp.ColumnDef)]
        if not cols:
            raise sess.error("CREATE TABLE needs at least one column", tree.this)
        for c in tree.this.expressions:
            if isinstance(c, exp.PrimaryKey):
                # PRIMARY KEY (...) NOT ENFORCED: a Paimon primary-key table (Flink's and Paimon's spelling)
                if not _is_paimon(sess):
                    raise sess.not_supported("PRIMARY KEY on Iceberg tables (use SET IDENTIFIER FIELDS)", c)
                if "primary-key" in properties:
                    raise sess.error("the primary key is given twice (PRIMARY KEY and 'primary-key')", c)
                properties["primary-key"] = ",".join(i.name for i in c.expressions)
            elif not isinstance(c, exp.ColumnDef):
                raise sess.not_supported(f"CREATE TABLE clause {c.sql('spark')}", c)
        cols, defaults = column_defaults.created_defaults(sess, cols, properties, _is_paimon(sess), tree.this)
        ddl = ", ".join(c.sql("spark") for c in cols)
        try:
            schema = parse_schema(ddl)
        except SchemaError as e:
            raise sess.error(str(e), tree.this) from None
        if defaults:
            schema = column_defaults.with_write_defaults(sess, schema, defaults, tree.this)
        if replace:
            _replace(sess, name, ddl if _is_paimon(sess) else schema, partitioned_by, properties, None,
                     not replace_only, target)
        else:
            # Paimon keeps TINYINT/SMALLINT, which the shared schema widens: give it the DDL itself
            _create(sess, name, ddl if _is_paimon(sess) else schema, partitioned_by, properties, target)
        return sess.empty()
    if query is None:
        raise sess.error("CREATE TABLE needs a column list or AS SELECT", tree)
    df = sess.query_df(query)

    schema = from_spark_schema(df.schema)
    if replace:
        _replace(sess, name, df.schema if _is_paimon(sess) else schema, partitioned_by, properties, df,
                 not replace_only, target)
        return sess.empty()
    t = _create(sess, name, df.schema if _is_paimon(sess) else schema, partitioned_by, properties, target)
    try:
        t.append(df)
    except Exception:
        sess.catalog.drop_table(name, purge=True)   # CTAS is all or nothing: its own files go too
        raise
    return sess.empty()


def _like_source(tree: exp.Create):
    props = tree.args.get("properties")
    for prop in (props.expressions if props else []):
        if isinstance(prop, exp.LikeProperty):
            return prop.this
    return None


# what CREATE TABLE ... LIKE never copies (Paimon's rule)
_NOT_COPIED = ("path", "provider", "location", "owner", "external", "is-managed-location")


def _create_like(sess, tree: exp.Create, target: exp.Table, like: exp.Table, provider):
    """Paimon's ``CREATE TABLE t LIKE s [TBLPROPERTIES (...)]``: the source's fields, partition keys,
    primary key, options and comment; the statement's TBLPROPERTIES win."""
    if not _is_paimon(sess):
        raise sess.not_supported("CREATE TABLE ... LIKE on iceberg tables", tree)
    if provider is not None and provider not in ICEFLOE_PROVIDERS:
        raise sess.not_supported(f"CREATE TABLE ... LIKE a Paimon table USING {provider}", tree)
    src_ref = sess.resolve_or_fail(like)
    src = sess.load(src_ref)
    name = _target_name(sess, target)
    if sess.exists(name):
        if tree.args.get("exists"):
            return sess.empty()
        raise sess.error(f"table {name} already exists", target)
    schema = src.table_schema
    properties = {k: v for k, v in schema.options.items() if k not in _NOT_COPIED}
    if schema.primary_keys:
        properties["primary-key"] = ",".join(schema.primary_keys)
    if schema.comment is not None:
        properties["comment"] = schema.comment
    for prop in tree.args["properties"].expressions:
        if isinstance(prop, (exp.LikeProperty, exp.FileFormatProperty)):
            continue
        if isinstance(prop, exp.LocationProperty):
            raise _location_refused(sess, prop)
        if isinstance(prop, exp.SchemaCommentProperty):
            properties["comment"] = prop.this.name
        elif isinstance(prop, exp.Property):
            properties[prop.name] = prop.args["value"].name if prop.args.get("value") is not None else ""
        else:
            raise sess.not_supported(f"CREATE TABLE ... LIKE clause {prop.sql('spark')}", prop)
    _create(sess, name, list(schema.fields), list(schema.partition_keys), properties, target)
    return sess.empty()


def _is_paimon(sess) -> bool:
    return getattr(sess.catalog, "format", "iceberg") == "paimon"


def _create(sess, name, schema, partitioned_by, properties, node):
    try:
        return sess.catalog.create_table(name, schema, partitioned_by=partitioned_by or None,
                                         properties=properties or None)
    except SqlError:
        raise
    except IcefloeError as e:
        raise sess.error(str(e), node) from None


def _replace(sess, name, schema, partitioned_by, properties, data, create_if_missing, node):
    """Iceberg's replace: a new schema, spec and properties (and the data of AS SELECT as one new
    snapshot) in one metadata version; older snapshots, branches and tags stay."""
    try:
        with sess.refused_as("CREATE OR REPLACE TABLE", node):
            return sess.catalog.replace_table(name, schema, partitioned_by=partitioned_by or None,
                                              properties=properties or None, data=data,
                                              create_if_missing=create_if_missing)
    except (SqlError, CommitFailedError):
        raise
    except ReplaceNotSupportedError as e:
        raise sess.not_supported(str(e), node) from None
    except IcefloeError as e:
        raise sess.error(str(e), node) from None


# --------------------------------------------------------------------------- DROP / SHOW / DESCRIBE
def drop(sess, tree: exp.Drop):
    tables = tree.args.get("tables") or ([tree.this] if tree.this is not None else [])
    table = tables[0] if len(tables) == 1 else None
    if str(tree.args.get("kind") or "").upper() != "TABLE" or not isinstance(table, exp.Table):
        return sess.run_spark(sess.statement.text)
    ref, ours = sess.resolve(table)
    if ref is None:
        if ours:
            if tree.args.get("exists"):
                return sess.empty()
            raise sess.error(f"unknown table {'.'.join(table_parts(table))}", table)
        return sess.run_spark(sess.statement.text)      # a table of Spark's own catalog
    if ref.metadata:
        raise sess.error(f"metadata table {ref} cannot be dropped", table)
    # DROP TABLE ... PURGE deletes the files; without PURGE the catalog's own default holds (Spark's:
    # an SQL or REST catalog keeps them, a warehouse directory is the table and goes).
    sess.catalog_for(ref).drop_table(ref.name, purge=True if tree.args.get("purge") else None)
    return sess.empty()


def list_tables(catalog, namespace=None) -> list:
    """(namespace, table) pairs of the catalog, optionally of one namespace."""
    if namespace is not None:
        namespaces = [namespace]
    else:
        namespaces = catalog.list_namespaces()
    out = []
    for ns in namespaces:
        try:
            names = catalog.list_tables(ns)
        except IcefloeError:
            if namespace is not None:
                raise
            continue
        out.extend((ns, n.split(".", 1)[1]) for n in names)
    return out


def _location_refused(sess, prop):
    """``CREATE TABLE ... LOCATION``: refused, with the catalog's reason."""
    return sess.not_supported(f"CREATE TABLE ... LOCATION ({sess.catalog.table_location_rule})", prop)


def show_tables(sess, stmt: p.ShowTables):
    ns = sess.namespace
    if stmt.namespace is not None:
        parts = list(stmt.namespace.parts)
        if len(parts) == 2 and parts[0].lower() == sess.catalog_name.lower():
            parts = parts[1:]
        elif len(parts) != 1:
            raise SqlError(f"unknown namespace {stmt.namespace}", stmt.namespace.line, stmt.namespace.column)
        ns = parts[0]
    if ns is not None and system_database.is_system_database(sess, [ns]):
        rows = [(ns, t, False) for t in system_database.table_names(sess)]
        return sess.spark.createDataFrame(rows, "namespace string, tableName string, isTemporary boolean")
    try:
        rows = [(n, t, False) for n, t in list_tables(sess.catalog, ns)]
    except IcefloeError as e:
        raise SqlError(str(e), stmt.namespace.line, stmt.namespace.column) from None
    return sess.spark.createDataFrame(rows, "namespace string, tableName string, isTemporary boolean")


def describe(sess, tree: exp.Describe):
    if not isinstance(tree.this, exp.Table):
        return sess.query_statement(tree)
    ref, ours = sess.resolve(tree.this)
    if ref is None:
        if ours:
            raise sess.error(f"unknown table {'.'.join(table_parts(tree.this))}", tree.this)
        return sess.query_statement(tree)
    if ref.metadata:
        df = sess.table_df(ref, None, tree.this)
        rows = [(f.name, f.dataType.simpleString(), "") for f in df.schema.fields]
        return sess.spark.createDataFrame(rows, "col_name string, data_type string, comment string")
    t = sess.load(ref)
    rows = describe_rows(t, extended=str(tree.args.get("style") or "").upper() in ("EXTENDED", "FORMATTED"))
    return sess.spark.createDataFrame(rows, "col_name string, data_type string, comment string")


def describe_rows(t, extended: bool = False) -> list:
    """Spark's DESCRIBE TABLE rows: columns, partitioning, then (extended) table information."""
    rows = list(t.describe_columns())
    terms = t.partitioning()
    if terms:
        rows.append(("", "", ""))
        rows.append(("# Partitioning", "", ""))
        rows.extend((f"Part {i}", term, "") for i, term in enumerate(terms))
    if extended:
        rows.append(("", "", ""))
        rows.append(("# Detailed Table Information", "", ""))
        rows.append(("Name", t.name, ""))
        rows.append(("Type", "MANAGED", ""))
        rows.append(("Location", t.location, ""))
        rows.append(("Provider", t.format, ""))
        snap = t.current_snapshot() if hasattr(t, "current_snapshot") else None
        if snap is not None:
            rows.append(("Current Snapshot", str(snap.snapshot_id), ""))
        if hasattr(t, "metadata_location"):
            rows.append(("Metadata Location", t.metadata_location, ""))
        props = redact_properties(getattr(t, "properties", {}) or {})     # shown, never a secret's value
        if props.get("comment"):
            rows.append(("Comment", props["comment"], ""))
        rows.append(("Table Properties",
                     "[" + ",".join(f"{k}={v}" for k, v in sorted(props.items())
                                    if k != "schema.name-mapping.default") + "]", ""))
        extra = t.describe_extra() if hasattr(t, "describe_extra") else []
        if extra:                       # a Paimon table that is an Iceberg table too
            rows.append(("", "", ""))
            rows.append(("# Iceberg View", "", ""))
            rows.extend((k, v, "") for k, v in extra)
    return rows


# --------------------------------------------------------------------------- ALTER TABLE
def _alter_target(sess, table: exp.Table):
    ref = sess.resolve_or_fail(table)
    return sess.load(ref)


def alter(sess, tree: exp.Alter):
    if str(tree.args.get("kind") or "").upper() != "TABLE" or not isinstance(tree.this, exp.Table):
        return sess.query_statement(tree)
    ref, ours = sess.resolve(tree.this)
    if ref is None and not ours:
        return sess.query_statement(tree)
    t = _alter_target(sess, tree.this)
    schema = t.schema
    for action in tree.args.get("actions") or []:
        if isinstance(action, exp.AlterRename):
            _rename(sess, t, action)
            continue
        try:
            _alter_action(sess, t, schema, action)
        except (SqlError, CommitFailedError):
            raise
        except IcefloeError as e:       # a change the table's rules refuse (SchemaError, ...)
            raise sess.error(str(e), action) from None
        t.refresh() if hasattr(t, "refresh") else None
        schema = t.schema
    return sess.empty()


def _column_name(node) -> str:
    if isinstance(node, exp.Column):
        return ".".join(p.name for p in node.parts)
    return node.name


def _check_column(sess, schema, name: str, node):
    if schema.find_field_or_none(name) is None:
        raise sess.error(f"unknown column {name}; columns are {', '.join(schema.column_names)}", node)


@contextlib.contextmanager
def _schema_update(sess, t, capability: str, node=None):
    with sess.refused_as(capability, node), t.update_schema() as u:
        yield u


def _sibling(path: str, other_parts: list) -> str:
    """The column ``AFTER x`` names: a sibling of ``path`` (or a full path when dotted)."""
    if len(other_parts) > 1:
        return ".".join(other_parts)
    parent = path.rsplit(".", 1)[0] + "." if "." in path else ""
    return parent + other_parts[0]


def _alter_action(sess, t, schema, action):
    if isinstance(action, exp.Schema):        # ADD COLUMNS (...)
        cols = [c for c in action.expressions if isinstance(c, exp.ColumnDef)]
        paths = [_added_path(c) for c in cols]
        for c, path in zip(cols, paths):
            if schema.find_field_or_none(path) is not None:
                raise sess.error(f"column {path} already exists", c)
            if "." in path and schema.find_field_or_none(path.rsplit(".", 1)[0]) is None:
                raise sess.error(f"ADD COLUMN {path}: no column {path.rsplit('.', 1)[0]} to add it to; columns are "
                                 f"{', '.join(schema.column_names)}", c)
        added: list = []
        with _schema_update(sess, t, "ALTER TABLE ... ADD COLUMNS (schema evolution)", action) as u:
            for c, path in zip(cols, paths):
                c, default = column_defaults.added_default(sess, c, path, _is_paimon(sess))
                parsed = _column_def(sess, c)
                field_type = parsed.field_type
                if c.args.get("kind") is not None:     # as the table stores it (Paimon keeps TINYINT)
                    field_type = t.parse_column_type(c.args["kind"].sql("spark"))
                u.add_column(path, field_type=field_type, doc=parsed.doc, required=bool(parsed.required),
                             **({"default": default} if default is not None else {}))
                _place_added(sess, u, schema, path, c.args.get("position"), added)
                added.append(path)
        return
    if isinstance(action, exp.ColumnDef):
        return _alter_action(sess, t, schema, exp.Schema(expressions=[action]))
    if isinstance(action, exp.RenameColumn):
        old = _column_name(action.this)
        _check_column(sess, schema, old, action.this)
        new = _column_name(action.args["to"])
        with _schema_update(sess, t, "ALTER TABLE ... RENAME COLUMN (schema evolution)", action) as u:
            u.rename_column(old, new)
        return
    if isinstance(action, exp.Drop) and str(action.args.get("kind") or "").upper() == "COLUMN":
        names = [_column_name(c) for c in action.args.get("tables") or [action.this]]
        for n, node in zip(names, action.args.get("tables") or [action.this]):
            _check_column(sess, schema, n, node)
        with _schema_update(sess, t, "ALTER TABLE ... DROP COLUMN (schema evolution)", action) as u:
            for n in names:
                u.delete_column(n)
        return
    if isinstance(action, exp.AlterColumn):
        name = _column_name(action.this)
        _check_column(sess, schema, name, action.this)
        kwargs = {}
        if action.args.get("dtype") is not None:
            try:
                kwargs["field_type"] = _column_type(t, action.args["dtype"].sql("spark"))
            except SchemaError as e:
                raise sess.error(str(e), action) from None
        if action.args.get("comment") is not None:
            kwargs["doc"] = action.args["comment"].name
        if action.args.get("allow_null") is not None:
            kwargs["required"] = not action.args["allow_null"]
        if not kwargs:
            raise sess.not_supported(f"ALTER COLUMN form {action.sql('spark')}", action)
        with _schema_update(sess, t, "ALTER TABLE ... ALTER COLUMN (schema evolution)", action) as u:
            u.update_column(name, **kwargs)
        return
    if isinstance(action, exp.AlterSet):
        updates = {}
        for props in action.expressions:
            for prop in getattr(props, "expressions", []):
                if isinstance(prop, exp.Property):
                    updates[prop.name] = prop.args["value"].name
        if not updates:
            raise sess.not_supported(f"ALTER TABLE SET form {action.sql('spark')}", action)
        with sess.refused_as("ALTER TABLE ... SET TBLPROPERTIES", action):
            t.update_properties(set=updates)
        return
    raise sess.not_supported(f"ALTER TABLE action {action.sql('spark')}", action)


def _column_type(t, text: str):
    """A column type of ALTER TABLE as the table stores it (Paimon keeps TINYINT and SMALLINT)."""
    return t.parse_column_type(text)


def _place_added(sess, u, schema, name: str, position, added: list) -> None:
    """``ADD COLUMNS (c int FIRST | AFTER x)``: move the column just added."""
    if position is None:
        return
    where = str(position.args.get("position") or "").upper()
    if where == "FIRST":
        u.move_first(name)
        return
    other_node = position.this
    other = _sibling(name, [p.name for p in other_node.parts] if isinstance(other_node, exp.Column)
                     else [other_node.name])
    if schema.find_field_or_none(other) is None and other not in added:
        raise sess.error(f"AFTER names unknown column {other}; columns are "
                         f"{', '.join(schema.column_names + added)}", other_node)
    u.move_after(name, other)


def _added_path(c: exp.ColumnDef) -> str:
    """The name ``ADD COLUMN`` gives, dotted for a nested field (``point.z``, ``points.element.z``)."""
    if isinstance(c.this, exp.Dot):
        return ".".join(p.name for p in c.this.flatten())
    return c.name


def _column_def(sess, c: exp.ColumnDef):
    if c.args.get("position") is not None or isinstance(c.this, exp.Dot):
        c = c.copy()
        c.set("position", None)
        if isinstance(c.this, exp.Dot):       # the type of a nested field: parsed under its own name
            c.set("this", exp.to_identifier(list(c.this.flatten())[-1].name))
    try:
        return parse_schema(c.sql("spark")).fields[0]
    except SchemaError as e:
        raise sess.error(str(e), c) from None


def _rename(sess, t, action: exp.AlterRename):
    """``ALTER TABLE t RENAME TO [db.]t2`` (a one-part name stays in t's namespace)."""
    new_table = action.this
    parts = table_parts(new_table)
    if len(parts) == 3 and parts[0].lower() == sess.catalog_name.lower():
        parts = parts[1:]
    if len(parts) == 1:
        parts = [t.name.split(".")[0]] + parts
    if len(parts) != 2:
        raise sess.error(f"new table name {'.'.join(table_parts(new_table))} must be db.table or "
                         f"{sess.catalog_name}.db.table", new_table)
    new_name = ".".join(parts)

    try:
        sess.catalog.rename_table(t.name, new_name)
    except RenameNotSupportedError as e:
        raise sess.not_supported(str(e), action) from None
    except IcefloeError as e:
        raise sess.error(str(e), new_table) from None


def alter_extension(sess, stmt):
    ref, ours = sess.resolve_name(list(stmt.table.parts))
    if ref is None and not ours:
        return sess.run_spark(sess.statement.text)      # a table of Spark's own catalog
    if ref is None or ref.metadata:
        raise SqlError(f"unknown table {stmt.table}", stmt.table.line, stmt.table.column)
    t = sess.load(ref)
    try:
        return _alter_extension(sess, t, stmt)
    except (SqlError, CommitFailedError):
        raise
    except IcefloeError as e:
        raise SqlError(str(e), stmt.table.line, stmt.table.column) from None


def _alter_extension(sess, t, stmt):
    if isinstance(stmt, p.AlterColumn):
        return _alter_column(sess, t, stmt)
    if isinstance(stmt, p.AlterColumns):
        schema = t.schema
        if stmt.action == "drop_columns":
            names = [n for n in stmt.names if schema.find_field_or_none(n) is not None or not stmt.if_exists]
            for n in names:
                if schema.find_field_or_none(n) is None:
                    raise SqlError(f"unknown column {n}; columns are {', '.join(schema.column_names)}",
                                   stmt.table.line, stmt.table.column)
            with _schema_update(sess, t, "ALTER TABLE ... DROP COLUMNS (schema evolution)") as u:
                for n in names:
                    u.delete_column(n)
        else:
            with sess.refused_as("ALTER TABLE ... UNSET TBLPROPERTIES"):
                t.update_properties(remove=list(stmt.names))
        return sess.empty()
    if isinstance(stmt, p.AlterDropPartitions) and stmt.add:
        raise sess.not_supported(f"ALTER TABLE ... ADD PARTITION on {t.format} table {stmt.table}: a partition of "
                                 f"a {t.format} table exists through the data files written to it (its "
                                 "metadata lists files, not partitions), so there is no empty partition to add; "
                                 "INSERT its rows instead")
    if isinstance(stmt, p.AlterDropPartitions):
        return drop_partitions(sess, t, stmt)
    if isinstance(stmt, p.AlterPartitionField):
        return _partition_field(sess, t, stmt)
    if isinstance(stmt, p.AlterWriteOrder):
        return cs.write_order(sess, t, stmt)
    if isinstance(stmt, p.AlterIdentifierFields):
        return cs.identifier_fields(sess, t, stmt)
    return _ref_ddl(sess, t, stmt)


def _alter_column(sess, t, stmt: p.AlterColumn):
    """``ALTER|CHANGE COLUMN c TYPE t | COMMENT s | SET/DROP NOT NULL | FIRST | AFTER x`` for each
    listed column, all in one schema change (field ids stay; a move only reorders)."""
    schema = t.schema

    def fail(reason, name: p.Name):
        return SqlError(reason, name.line, name.column)

    with _schema_update(sess, t, "ALTER TABLE ... ALTER COLUMN (schema evolution)") as u:
        for ch in stmt.changes:
            name = ".".join(ch.column.parts)
            f = schema.find_field_or_none(name)
            if f is None:
                raise fail(f"unknown column {name}; columns are {', '.join(schema.column_names)}", ch.column)
            if ch.new_name is not None and ch.new_name.parts[-1].lower() != ch.column.parts[-1].lower():
                raise fail(f"CHANGE COLUMN {name} {ch.new_name} would rename the column: renaming is not "
                           f"supported in Hive-style CHANGE COLUMN, use RENAME COLUMN {name} TO {ch.new_name}",
                           ch.new_name)
            kwargs = {}
            if ch.type_text is not None:
                try:
                    kwargs["field_type"] = _column_type(t, ch.type_text)
                except SchemaError as e:
                    raise SqlError(str(e), *(ch.type_at or (ch.column.line, ch.column.column))) from None
            if ch.comment is not None:
                kwargs["doc"] = ch.comment
            if ch.nullable is not None:
                kwargs["required"] = not ch.nullable
            if kwargs:
                try:
                    u.update_column(name, **kwargs)
                except SchemaError as e:
                    at = ch.type_at if "field_type" in kwargs and ch.type_at else (ch.column.line, ch.column.column)
                    raise SqlError(str(e), *at) from None
            if ch.default is not None or ch.drop_default:
                column_defaults.set_default(sess, u, f, name, ch.default, (ch.column.line, ch.column.column))
            if ch.position == "first":
                u.move_first(name)
            elif ch.position == "after":
                other = _sibling(name, list(ch.after.parts))
                if schema.find_field_or_none(other) is None:
                    raise fail(f"AFTER names unknown column {other}; columns are "
                               f"{', '.join(schema.column_names)}", ch.after)
                try:
                    u.move_after(name, other)
                except SchemaError as e:
                    raise fail(str(e), ch.after) from None
    return sess.empty()


def _partition_field(sess, t, stmt: p.AlterPartitionField):
    schema = t.schema

    def parse(term):
        try:
            transform, col = parse_partition_expr(term)
        except IcefloeError as e:
            raise SqlError(str(e), stmt.table.line, stmt.table.column) from None
        if schema.find_field_or_none(col) is None:
            raise SqlError(f"unknown column {col} in partition term {term}", stmt.table.line, stmt.table.column)
        return transform, col

    def existing_field_name(term):
        """A partition field named by its name or by its term (``bucket(16, id)``)."""
        for f in t.spec.fields:
            if f.name == term:
                return f.name
        transform, col = parse(term)
        src = schema.find_field(col)
        for f in t.spec.fields:
            if f.source_id == src.field_id and str(f.transform) == str(transform):
                return f.name
        raise SqlError(f"table {t.name} has no partition field {term}", stmt.table.line, stmt.table.column)

    capability = f"ALTER TABLE ... {stmt.action.upper()} PARTITION FIELD (partition evolution)"
    if stmt.action == "drop":
        name = existing_field_name(stmt.term)
        with sess.refused_as(capability), t.update_spec() as u:
            u.remove_field(name)
        return sess.empty()
    transform, col = parse(stmt.term)
    new_name = stmt.alias or default_field_name(transform, col)
    old_name = existing_field_name(stmt.old) if stmt.action == "replace" else None
    with sess.refused_as(capability), t.update_spec() as u:
        if old_name is not None:
            u.remove_field(old_name)
        u.add_field(stmt.term, name=new_name)
    return sess.empty()


def drop_partitions(sess, t, stmt: p.AlterDropPartitions):
    """Paimon's DROP PARTITION / TRUNCATE ... PARTITION: one OVERWRITE snapshot deleting the
    partitions' files."""
    if not callable(getattr(t, "drop_partitions", None)):
        raise sess.not_supported(f"{stmt.statement} on {t.format} tables (use DELETE FROM t WHERE "
                                 "<partition condition>)")
    t.drop_partitions(stmt.partitions, if_exists=stmt.if_exists)
    return sess.empty()


def _ref_ddl(sess, t, stmt: p.AlterRef):
    kind = stmt.kind
    if kind == "branch" and t.supports(BRANCH_TABLES):     # Paimon's branches are made and dropped by procedures
        raise sess.not_supported(f"ALTER TABLE ... {stmt.action.upper()} BRANCH on Paimon table {t.name} (Iceberg's "
                                 "branch DDL; Paimon's branches: CALL sys.create_branch(table, branch[, tag]), "
                                 "CALL sys.delete_branch, CALL sys.fast_forward)")
    refs = getattr(getattr(t, "metadata", None), "refs", None)
    if refs is None and callable(getattr(t, "refs", None)):
        refs = t.refs()                      # Paimon tables: their tags
    refs = refs or {}
    exists = stmt.ref in refs
    where = (stmt.table.line, stmt.table.column)
    if stmt.action == "rename":                 # Paimon's ALTER TABLE t RENAME TAG a TO b
        if not callable(getattr(t, "rename_tag", None)):
            raise sess.not_supported(f"ALTER TABLE ... RENAME TAG on {t.format} tables (a Paimon statement)")
        if not exists:
            raise SqlError(f"table {t.name} has no tag {stmt.ref}", *where)
        if stmt.new_name in refs:
            raise SqlError(f"tag {stmt.new_name} already exists in table {t.name}", *where)
        t.rename_tag(stmt.ref, stmt.new_name)
        return sess.empty()
    if stmt.action == "drop" and kind == "tag" and t.supports(TAG_LISTS) and "," in stmt.ref:
        names = [n.strip() for n in stmt.ref.split(",") if n.strip()]     # Paimon: DELETE TAG `a,b`
        missing = [n for n in names if n not in refs]
        if missing and not stmt.if_exists:
            raise SqlError(f"table {t.name} has no tag {', '.join(missing)}; nothing was deleted", *where)
        for n in names:
            if n in refs:
                t.drop_tag(n)
        return sess.empty()
    if stmt.action == "drop":
        if not exists:
            if stmt.if_exists:
                return sess.empty()
            raise SqlError(f"table {t.name} has no {kind} {stmt.ref}", *where)
        with sess.refused_as(f"ALTER TABLE ... DROP {kind.upper()}"):
            t.drop_tag(stmt.ref) if kind == "tag" else t.drop_branch(stmt.ref)
        return sess.empty()
    retention = dict(max_ref_age_ms=stmt.retain_ms, min_snapshots_to_keep=stmt.min_snapshots_to_keep,
                     max_snapshot_age_ms=stmt.max_snapshot_age_ms)
    if exists:
        if stmt.if_not_exists and stmt.action == "create":
            return sess.empty()
        if stmt.action == "create":
            raise SqlError(f"{kind} {stmt.ref} already exists in table {t.name}", *where)
        if refs[stmt.ref].type != kind:
            raise SqlError(f"{stmt.ref} is a {refs[stmt.ref].type} of table {t.name}, not a {kind}", *where)
        # REPLACE moves the ref (to the current snapshot unless AS OF VERSION says otherwise) and keeps
        # its retention settings unless new ones are given, as Iceberg's REPLACE BRANCH|TAG does
        capability = f"ALTER TABLE ... REPLACE {kind.upper()}"
        snap = stmt.snapshot_id
        if snap is None:
            current = t.current_snapshot()
            if current is None:
                raise SqlError(f"table {t.name} has no current snapshot to point {kind} {stmt.ref} at", *where)
            snap = current.snapshot_id
        with sess.refused_as(capability):
            if kind == "tag":
                t.replace_tag(stmt.ref, snap, max_ref_age_ms=stmt.retain_ms)
            else:
                t.replace_branch(stmt.ref, snap, **retention)
        return sess.empty()
    if stmt.action == "replace":
        raise SqlError(f"table {t.name} has no {kind} {stmt.ref} to replace", *where)
    capability = f"ALTER TABLE ... CREATE {kind.upper()}"
    with sess.refused_as(capability):
        if kind == "tag":
            t.create_tag(stmt.ref, stmt.snapshot_id, max_ref_age_ms=stmt.retain_ms)
        else:
            t.create_branch(stmt.ref, stmt.snapshot_id, **retention)
    return sess.empty()
