"""ALTER TABLE on icefloe tables: Spark's forms (ADD/RENAME/DROP/ALTER COLUMN, SET TBLPROPERTIES, RENAME TO)
and the extension statements the parser hands over as records (``ALTER|CHANGE COLUMN`` lists, DROP COLUMNS,
UNSET TBLPROPERTIES, partition fields, branches and tags, DROP PARTITION, WRITE ORDERED BY, IDENTIFIER FIELDS),
each carried out through the table contract's schema, spec, properties and ref updates."""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Iterator, Optional, Protocol, Union, cast

from sqlglot import exp

from icefloe.core.types import parse_schema
from icefloe.errors import CommitFailedError, IcefloeError, SchemaError
from icefloe.iceberg.catalog import RenameNotSupportedError
from icefloe.iceberg.transforms import default_field_name, parse_partition_expr
from icefloe.sql import catalog_statements as cs, column_defaults, parser as p
from icefloe.sql.ddl import is_paimon
from icefloe.sql.errors import SqlError
from icefloe.sql.names import table_parts
from icefloe.table.capabilities import BRANCH_TABLES, METASTORE_PARTITIONS, TAG_LISTS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.core.types.model import IcebergType, NestedField, Schema
    from icefloe.iceberg.partitioning import PartitionSpec
    from icefloe.iceberg.transforms import Transform
    from icefloe.sql.statement_context import StatementSession
    from icefloe.table.base import Table

    #: the ALTER TABLE statements the parser hands over as records
    AlterStatement = Union[p.AlterColumn, p.AlterColumns, p.AlterDropPartitions, p.AlterPartitionField,
                           p.AlterWriteOrder, p.AlterIdentifierFields, p.AlterRef]


class _SpecTable(Protocol):
    """A table that took a partition spec change (an Iceberg table): its current spec."""

    @property
    def spec(self) -> PartitionSpec: ...


class _ColumnMoves(Protocol):
    """The moves of a schema change (``Table.update_schema()``'s, either format's)."""

    def move_first(self, name: str) -> Any: ...

    def move_after(self, name: str, other: str) -> Any: ...


def _alter_target(sess: StatementSession, table: exp.Table) -> Table:
    ref = sess.resolve_or_fail(table)
    return sess.load(ref)


def alter(sess: StatementSession, tree: exp.Alter) -> DataFrame:
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


def _column_name(node: exp.Expression) -> str:
    if isinstance(node, exp.Column):
        return ".".join(p.name for p in node.parts)
    return node.name


def _check_column(sess: StatementSession, schema: Schema, name: str, node: exp.Expression) -> None:
    if schema.find_field_or_none(name) is None:
        raise sess.error(f"unknown column {name}; columns are {', '.join(schema.column_names)}", node)


@contextlib.contextmanager
def _schema_update(sess: StatementSession, t: Table, capability: str,
                   node: Optional[exp.Expression] = None) -> Iterator[Any]:
    with sess.refused_as(capability, node), t.update_schema() as u:
        yield u


def _sibling(path: str, other_parts: list[str]) -> str:
    """The column ``AFTER x`` names: a sibling of ``path`` (or a full path when dotted)."""
    if len(other_parts) > 1:
        return ".".join(other_parts)
    parent = path.rsplit(".", 1)[0] + "." if "." in path else ""
    return parent + other_parts[0]


def _alter_action(sess: StatementSession, t: Table, schema: Schema, action: exp.Expression) -> None:
    if isinstance(action, exp.Schema):        # ADD COLUMNS (...)
        cols = [c for c in action.expressions if isinstance(c, exp.ColumnDef)]
        paths = [_added_path(c) for c in cols]
        for c, path in zip(cols, paths):
            if schema.find_field_or_none(path) is not None:
                raise sess.error(f"column {path} already exists", c)
            if "." in path and schema.find_field_or_none(path.rsplit(".", 1)[0]) is None:
                raise sess.error(f"ADD COLUMN {path}: no column {path.rsplit('.', 1)[0]} to add it to; columns are "
                                 f"{', '.join(schema.column_names)}", c)
        added: list[str] = []
        with _schema_update(sess, t, "ALTER TABLE ... ADD COLUMNS (schema evolution)", action) as u:
            for c, path in zip(cols, paths):
                c, default = column_defaults.added_default(sess, c, path, is_paimon(sess))
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


def _column_type(t: Table, text: str) -> IcebergType:
    """A column type of ALTER TABLE as the table stores it (Paimon keeps TINYINT and SMALLINT)."""
    return t.parse_column_type(text)


def _place_added(sess: StatementSession, u: _ColumnMoves, schema: Schema, name: str, position: Optional[exp.Expression],
                 added: list[str]) -> None:
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


def _column_def(sess: StatementSession, c: exp.ColumnDef) -> NestedField:
    if c.args.get("position") is not None or isinstance(c.this, exp.Dot):
        c = c.copy()
        c.set("position", None)
        if isinstance(c.this, exp.Dot):       # the type of a nested field: parsed under its own name
            c.set("this", exp.to_identifier(list(c.this.flatten())[-1].name))
    try:
        return parse_schema(c.sql("spark")).fields[0]
    except SchemaError as e:
        raise sess.error(str(e), c) from None


def _rename(sess: StatementSession, t: Table, action: exp.AlterRename) -> None:
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


def alter_extension(sess: StatementSession, stmt: AlterStatement) -> DataFrame:
    ref, ours = sess.resolve_name(list(stmt.table.parts))
    if ref is None and not ours:
        statement = sess.statement
        assert statement is not None, "ALTER TABLE runs as a statement"
        return sess.run_spark(statement.text)      # a table of Spark's own catalog
    if ref is None or ref.metadata:
        raise SqlError(f"unknown table {stmt.table}", stmt.table.line, stmt.table.column)
    t = sess.load(ref)
    try:
        return _alter_extension(sess, t, stmt)
    except (SqlError, CommitFailedError):
        raise
    except IcefloeError as e:
        raise SqlError(str(e), stmt.table.line, stmt.table.column) from None


def _alter_extension(sess: StatementSession, t: Table, stmt: AlterStatement) -> DataFrame:
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
        paimon = (" (Paimon registers a partition ahead of its rows only in a metastore: a Hive or REST catalog with "
                  "metastore.partitioned-table; in a filesystem catalog its ADD PARTITION does nothing)"
                  if t.supports(METASTORE_PARTITIONS) else "")
        raise sess.not_supported(f"ALTER TABLE ... ADD PARTITION on {t.format} table {stmt.table}: a partition of "
                                 f"a {t.format} table exists through the data files written to it (its "
                                 "metadata lists files, not partitions), so there is no empty partition to add"
                                 f"{paimon}; INSERT its rows instead")
    if isinstance(stmt, p.AlterDropPartitions):
        return drop_partitions(sess, t, stmt)
    if isinstance(stmt, p.AlterPartitionField):
        return _partition_field(sess, t, stmt)
    if isinstance(stmt, p.AlterWriteOrder):
        return cs.write_order(sess, t, stmt)
    if isinstance(stmt, p.AlterIdentifierFields):
        return cs.identifier_fields(sess, t, stmt)
    return _ref_ddl(sess, t, stmt)


def _alter_column(sess: StatementSession, t: Table, stmt: p.AlterColumn) -> DataFrame:
    """``ALTER|CHANGE COLUMN c TYPE t | COMMENT s | SET/DROP NOT NULL | FIRST | AFTER x`` for each
    listed column, all in one schema change (field ids stay; a move only reorders)."""
    schema = t.schema

    def fail(reason: str, name: p.Name) -> SqlError:
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


def _partition_field(sess: StatementSession, t: Table, stmt: p.AlterPartitionField) -> DataFrame:
    schema = t.schema

    def parse(term: str) -> tuple[Transform, str]:
        try:
            transform, col = parse_partition_expr(term)
        except IcefloeError as e:
            raise SqlError(str(e), stmt.table.line, stmt.table.column) from None
        if schema.find_field_or_none(col) is None:
            raise SqlError(f"unknown column {col} in partition term {term}", stmt.table.line, stmt.table.column)
        return transform, col

    def existing_field_name(term: str) -> str:
        """A partition field named by its name or by its term (``bucket(16, id)``); asked once the table
        took the spec change (so it has a spec)."""
        spec = cast(_SpecTable, t).spec
        for f in spec.fields:
            if f.name == term:
                return f.name
        transform, col = parse(term)
        src = schema.find_field(col)
        for f in spec.fields:
            if f.source_id == src.field_id and str(f.transform) == str(transform):
                return f.name
        raise SqlError(f"table {t.name} has no partition field {term}", stmt.table.line, stmt.table.column)

    capability = f"ALTER TABLE ... {stmt.action.upper()} PARTITION FIELD (partition evolution)"
    # the field to drop or replace is looked up inside the change: a table without partition
    # evolution (Paimon's) refuses the statement first, and a failed lookup commits nothing
    if stmt.action == "drop":
        with sess.refused_as(capability), t.update_spec() as u:
            u.remove_field(existing_field_name(stmt.term))
        return sess.empty()
    transform, col = parse(stmt.term)
    new_name = stmt.alias or default_field_name(transform, col)
    old = stmt.old if stmt.action == "replace" else None
    with sess.refused_as(capability), t.update_spec() as u:
        if old is not None:
            u.remove_field(existing_field_name(old))
        u.add_field(stmt.term, name=new_name)
    return sess.empty()


def drop_partitions(sess: StatementSession, t: Table, stmt: p.AlterDropPartitions) -> DataFrame:
    """Paimon's DROP PARTITION / TRUNCATE ... PARTITION: one OVERWRITE snapshot deleting the
    partitions' files."""
    drop = getattr(t, "drop_partitions", None)
    if not callable(drop):
        raise sess.not_supported(f"{stmt.statement} on {t.format} tables (use DELETE FROM t WHERE "
                                 "<partition condition>)")
    drop(stmt.partitions, if_exists=stmt.if_exists)
    return sess.empty()


def _ref_ddl(sess: StatementSession, t: Table, stmt: p.AlterRef) -> DataFrame:
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
        rename = getattr(t, "rename_tag", None)
        if not callable(rename):
            raise sess.not_supported(f"ALTER TABLE ... RENAME TAG on {t.format} tables (a Paimon statement)")
        if not exists:
            raise SqlError(f"table {t.name} has no tag {stmt.ref}", *where)
        if stmt.new_name in refs:
            raise SqlError(f"tag {stmt.new_name} already exists in table {t.name}", *where)
        rename(stmt.ref, stmt.new_name)
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
