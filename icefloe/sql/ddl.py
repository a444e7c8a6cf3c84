"""DDL on icefloe tables: CREATE [AS SELECT], CREATE ... LIKE, DROP, SHOW TABLES, DESCRIBE (ALTER TABLE:
``icefloe.sql.alter_table``)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Protocol, cast

from sqlglot import exp

from icefloe.core.redact import redact_properties
from icefloe.core.types import parse_schema
from icefloe.errors import CommitFailedError, IcefloeError, SchemaError
from icefloe.sql import column_defaults, parser as p, system_database
from icefloe.sql.errors import NotSupportedYetError, SqlError
from icefloe.sql.names import table_parts
from icefloe.sql.translate import partition_term
from icefloe.core.types import from_spark_schema
from icefloe.iceberg.catalog import ReplaceNotSupportedError
from icefloe.paimon.catalog import DEFAULT_DATABASE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.paimon.schema import TableSchema
    from icefloe.sql.statement_context import StatementCatalog, StatementSession
    from icefloe.table.base import Table

ICEFLOE_PROVIDERS = ("iceberg", "paimon", "icefloe")


class _PaimonSchemaTable(Protocol):
    """The source of ``CREATE TABLE ... LIKE`` (a Paimon table): its schema as Paimon keeps it."""

    @property
    def table_schema(self) -> TableSchema: ...


# --------------------------------------------------------------------------- CREATE
def _provider(create: exp.Create) -> Optional[str]:
    props = create.args.get("properties")
    if props is None:
        return None
    for prop in props.expressions:
        if isinstance(prop, exp.FileFormatProperty):
            return prop.name.lower() if prop.this is not None else None
    return None


def _is_ours(sess: StatementSession, table: exp.Table, provider: Optional[str]) -> bool:
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


def _refuse_paimon_table_in_spark(sess: StatementSession, tree: exp.Create, target: exp.Table) -> None:
    """A Paimon catalog's CREATE TABLE of a name without a database, with Paimon's table options or a
    PRIMARY KEY, would reach Spark's own catalog and create a plain table without them: refused."""
    if not is_paimon(sess):
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


def _namespace_exists(sess: StatementSession, name: str) -> bool:
    try:
        return sess.catalog.namespace_exists(name)
    except IcefloeError:
        return False


def _target_name(sess: StatementSession, table: exp.Table) -> str:
    parts = sess.qualify(table_parts(table))
    if len(parts) == 3 and parts[0].lower() == sess.catalog_name.lower():
        parts = parts[1:]
    if len(parts) != 2:
        raise sess.error(f"table name {'.'.join(table_parts(table))} must be db.table or "
                         f"{sess.catalog_name}.db.table", table)
    return ".".join(parts)


def create(sess: StatementSession, tree: exp.Create) -> DataFrame:
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
    location: Optional[str] = None
    clauses = tree.args.get("properties")
    for prop in (clauses.expressions if clauses else []):
        if isinstance(prop, exp.PartitionedByProperty):
            terms = prop.this.expressions if isinstance(prop.this, exp.Schema) else [prop.this]
            partitioned_by = [partition_term(t) for t in terms]
        elif isinstance(prop, (exp.FileFormatProperty, exp.LocationProperty)):
            # checked before exp.Property, their base class: USING iceberg is not a table property
            if isinstance(prop, exp.LocationProperty):
                if not sess.catalog.takes_table_locations:
                    raise _location_refused(sess, prop)
                if replace:
                    raise sess.not_supported(f"{verb} ... LOCATION (a replaced table keeps its location; "
                                             "CREATE TABLE ... LOCATION places a new one)", prop)
                location = prop.this.name
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
                if not is_paimon(sess):
                    raise sess.not_supported("PRIMARY KEY on Iceberg tables (use SET IDENTIFIER FIELDS)", c)
                if "primary-key" in properties:
                    raise sess.error("the primary key is given twice (PRIMARY KEY and 'primary-key')", c)
                properties["primary-key"] = ",".join(i.name for i in c.expressions)
            elif not isinstance(c, exp.ColumnDef):
                raise sess.not_supported(f"CREATE TABLE clause {c.sql('spark')}", c)
        cols, defaults = column_defaults.created_defaults(sess, cols, properties, is_paimon(sess), tree.this)
        ddl = ", ".join(c.sql("spark") for c in cols)
        try:
            schema = parse_schema(ddl)
        except SchemaError as e:
            raise sess.error(str(e), tree.this) from None
        if defaults:
            schema = column_defaults.with_write_defaults(sess, schema, defaults, tree.this)
        if replace:
            _replace(sess, name, ddl if is_paimon(sess) else schema, partitioned_by, properties, None,
                     not replace_only, target)
        else:
            # Paimon keeps TINYINT/SMALLINT, which the shared schema widens: give it the DDL itself
            _create(sess, name, ddl if is_paimon(sess) else schema, partitioned_by, properties, target, location)
        return sess.empty()
    if query is None:
        raise sess.error("CREATE TABLE needs a column list or AS SELECT", tree)
    df = sess.query_df(query)

    schema = from_spark_schema(df.schema)
    if replace:
        _replace(sess, name, df.schema if is_paimon(sess) else schema, partitioned_by, properties, df,
                 not replace_only, target)
        return sess.empty()
    _create(sess, name, df.schema if is_paimon(sess) else schema, partitioned_by, properties, target, location)
    try:        # written as the statement's writes are: with the session's Paimon file options
        sess.load(sess.resolve_or_fail(target), write=True).append(df)
    except Exception:
        sess.catalog.drop_table(name, purge=True)   # CTAS is all or nothing: its own files go too
        raise
    return sess.empty()


def _like_source(tree: exp.Create) -> Optional[exp.Table]:
    props = tree.args.get("properties")
    for prop in (props.expressions if props else []):
        if isinstance(prop, exp.LikeProperty):
            return prop.this
    return None


# what CREATE TABLE ... LIKE never copies (Paimon's rule)
_NOT_COPIED = ("path", "provider", "location", "owner", "external", "is-managed-location")


def _create_like(sess: StatementSession, tree: exp.Create, target: exp.Table, like: exp.Table,
                 provider: Optional[str]) -> DataFrame:
    """Paimon's ``CREATE TABLE t LIKE s [TBLPROPERTIES (...)]``: the source's fields, partition keys,
    primary key, options and comment; the statement's TBLPROPERTIES win."""
    if not is_paimon(sess):
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
    schema = cast(_PaimonSchemaTable, src).table_schema     # a Paimon catalog's table
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


def is_paimon(sess: StatementSession) -> bool:
    return getattr(sess.catalog, "format", "iceberg") == "paimon"


def _create(sess: StatementSession, name: str, schema: Any, partitioned_by: list[Any], properties: dict[str, str],
            node: exp.Expression, location: Optional[str] = None) -> Table:
    try:
        if location is not None:
            return sess.catalog.create_table(name, schema, partitioned_by=partitioned_by or None,
                                             properties=properties or None, location=location)
        return sess.catalog.create_table(name, schema, partitioned_by=partitioned_by or None,
                                         properties=properties or None)
    except SqlError:
        raise
    except IcefloeError as e:
        raise sess.error(str(e), node) from None


def _replace(sess: StatementSession, name: str, schema: Any, partitioned_by: list[Any], properties: dict[str, str],
             data: Optional[DataFrame], create_if_missing: bool, node: exp.Expression) -> Any:
    """Iceberg's replace: a new schema, spec and properties (and the data of AS SELECT as one new
    snapshot) in one metadata version; older snapshots, branches and tags stay."""
    if data is not None and is_paimon(sess) and (opts := sess.paimon_file_options(sess.catalog_name, name)):
        raise sess.error(f"CREATE OR REPLACE TABLE ... AS SELECT writes its rows with the table's own file options, "
                         f"not the session's Paimon options {', '.join(f'{k}={v}' for k, v in sorted(opts.items()))} "
                         "(SET spark.paimon.*): RESET them first, or replace the table without AS SELECT and "
                         "INSERT the rows", node)
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
def drop(sess: StatementSession, tree: exp.Drop) -> DataFrame:
    tables = tree.args.get("tables") or ([tree.this] if tree.this is not None else [])
    table = tables[0] if len(tables) == 1 else None
    stmt = sess.statement
    assert stmt is not None, "DROP runs as a statement"
    if str(tree.args.get("kind") or "").upper() != "TABLE" or not isinstance(table, exp.Table):
        return sess.run_spark(stmt.text)
    ref, ours = sess.resolve(table)
    if ref is None:
        if ours:
            if tree.args.get("exists"):
                return sess.empty()
            raise sess.error(f"unknown table {'.'.join(table_parts(table))}", table)
        return sess.run_spark(stmt.text)      # a table of Spark's own catalog
    if ref.metadata:
        raise sess.error(f"metadata table {ref} cannot be dropped", table)
    # DROP TABLE ... PURGE deletes the files; without PURGE the catalog's own default holds (Spark's:
    # an SQL or REST catalog keeps them, a warehouse directory is the table and goes).
    sess.catalog_for(ref).drop_table(ref.name, purge=True if tree.args.get("purge") else None)
    return sess.empty()


def list_tables(catalog: StatementCatalog, namespace: Optional[str] = None) -> list[tuple[str, str]]:
    """(namespace, table) pairs of the catalog, optionally of one namespace."""
    if namespace is not None:
        namespaces = [namespace]
    else:
        namespaces = catalog.list_namespaces()
    out: list[tuple[str, str]] = []
    for ns in namespaces:
        try:
            names = catalog.list_tables(ns)
        except IcefloeError:
            if namespace is not None:
                raise
            continue
        out.extend((ns, n.split(".", 1)[1]) for n in names)
    return out


def _location_refused(sess: StatementSession, prop: exp.LocationProperty) -> NotSupportedYetError:
    """``CREATE TABLE ... LOCATION``: refused, with the catalog's reason."""
    return sess.not_supported(f"CREATE TABLE ... LOCATION ({sess.catalog.table_location_rule})", prop)


def show_tables(sess: StatementSession, stmt: p.ShowTables) -> DataFrame:
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
    except IcefloeError as e:     # at the namespace named; the statement's place for that of USE
        at = (stmt.namespace.line, stmt.namespace.column) if stmt.namespace is not None else (None, None)
        raise SqlError(str(e), *at) from None
    return sess.spark.createDataFrame(rows, "namespace string, tableName string, isTemporary boolean")


def describe(sess: StatementSession, tree: exp.Describe) -> DataFrame:
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


def describe_rows(t: Table, extended: bool = False) -> list[tuple[str, str, Optional[str]]]:
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
            rows.append(("Metadata Location", getattr(t, "metadata_location"), ""))
        props = redact_properties(getattr(t, "properties", {}) or {})     # shown, never a secret's value
        if props.get("comment"):
            rows.append(("Comment", str(props["comment"]), ""))
        rows.append(("Table Properties",
                     "[" + ",".join(f"{k}={v}" for k, v in sorted(props.items())
                                    if k != "schema.name-mapping.default") + "]", ""))
        extra = getattr(t, "describe_extra")() if hasattr(t, "describe_extra") else []
        if extra:                       # a Paimon table that is an Iceberg table too
            rows.append(("", "", ""))
            rows.append(("# Iceberg View", "", ""))
            rows.extend((k, v, "") for k, v in extra)
    return rows
