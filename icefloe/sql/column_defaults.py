"""Column ``DEFAULT`` values in Spark's DDL on Iceberg tables: ``CREATE TABLE t (c int DEFAULT 0)``,
``ALTER TABLE t ADD COLUMN c int DEFAULT 0``, ``ALTER TABLE t ALTER COLUMN c SET DEFAULT 1`` and
``... DROP DEFAULT``.

Iceberg keeps defaults in the format v3 schema (spec, "Default values"): a field's
``write-default`` is what a row written without the column gets; its ``initial-default`` is what
rows written before the column existed read, set once when the column is added and never changed.
So ``CREATE TABLE`` and ``SET DEFAULT`` set the write default, ``ADD COLUMN`` both, ``DROP DEFAULT``
removes the write default. Both are single values in the schema, so a default is a constant
expression (``1 + 1``, ``DATE '2024-01-01'``), evaluated once here; one evaluated at each write
(``current_timestamp()``) cannot be stored. Format v1 and v2 schemas have no defaults: refused.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Optional

from sqlglot import exp

from icefloe.core.types.ddl import to_spark_ddl_type
from icefloe.core.types.model import Schema
from icefloe.errors import SchemaError
from icefloe.iceberg.schema import default_json
from icefloe.iceberg.table_metadata import DEFAULT_FORMAT_VERSION
from icefloe.sql.errors import NotSupportedYetError, SqlError

if TYPE_CHECKING:
    from icefloe.core.types.model import NestedField
    from icefloe.sql.statement_context import StatementSession

    #: a DEFAULT clause of CREATE TABLE: (its expression, the column's Spark type as written)
    Written = tuple[exp.Expression, Optional[str]]

# Spark functions whose value depends on when or where they run: not a value a schema can hold
_PER_WRITE = (exp.CurrentDate, exp.CurrentTimestamp, exp.CurrentTime, exp.CurrentUser, exp.Rand, exp.Randn,
              exp.Uuid)
_PER_WRITE_NAMES = {"now", "current_timezone", "localtimestamp", "uuid", "rand", "random", "randn", "shuffle",
                    "monotonically_increasing_id", "spark_partition_id", "input_file_name", "current_catalog",
                    "current_database", "current_schema", "current_user", "user", "session_user", "unix_timestamp"}


def _default_node(c: exp.ColumnDef) -> Optional[exp.Expression]:
    for con in c.args.get("constraints") or []:
        if isinstance(con.args.get("kind"), exp.DefaultColumnConstraint):
            return con.args["kind"].this
    return None


def without_default(c: exp.ColumnDef) -> tuple[exp.ColumnDef, Optional[exp.Expression]]:
    """``c`` without its ``DEFAULT`` clause, and that clause's expression (None: none)."""
    node = _default_node(c)
    if node is None:
        return c, None
    c = c.copy()
    kept = [con for con in c.args.get("constraints") or []
            if not isinstance(con.args.get("kind"), exp.DefaultColumnConstraint)]
    c.set("constraints", kept or None)
    return c, node


def value_of(sess: StatementSession, node: exp.Expression, spark_type: str, column: str) -> Any:
    """The value of a ``DEFAULT`` expression, cast to the column's Spark type (None for NULL)."""
    for n in node.walk():
        if isinstance(n, (exp.Column, exp.Subquery, exp.Select)):
            raise sess.error(f"DEFAULT of column {column}: {node.sql('spark')} is not a constant (a default "
                             "cannot read columns or tables)", node)
        name = n.name.lower() if isinstance(n, exp.Anonymous) else ""
        if isinstance(n, _PER_WRITE) or name in _PER_WRITE_NAMES:
            raise sess.error(f"DEFAULT of column {column}: {node.sql('spark')} changes from write to write; "
                             "Iceberg's write-default is a single value kept in the schema (give a constant)", node)
    return sess.run_spark(f"SELECT CAST(({node.sql('spark')}) AS {spark_type})").collect()[0][0]


def check_format(sess: StatementSession, version: int, what: str, node: Optional[exp.Expression] = None) -> None:
    if version < 3:
        raise sess.error(f"{what}: column default values are Iceberg format v3's (initial-default, write-default); "
                         f"this table is format version {version} (create it with TBLPROPERTIES "
                         "('format-version'='3'), or upgrade it with ALTER TABLE ... SET TBLPROPERTIES "
                         "('format-version'='3'))", node)


def created_defaults(sess: StatementSession, cols: list[exp.ColumnDef], properties: dict[str, str], paimon: bool,
                     node: Optional[exp.Expression] = None) -> tuple[list[exp.ColumnDef], dict[str, Any]]:
    """``CREATE TABLE``'s columns without their ``DEFAULT`` clauses, and the defaults' values by
    column name (refused on Paimon tables and before format version 3)."""
    stripped: list[exp.ColumnDef] = []
    defaults: dict[str, Written] = {}
    for c in cols:
        c, default = without_default(c)
        stripped.append(c)
        if default is not None:
            defaults[c.name] = (default, c.args["kind"].sql("spark") if c.args.get("kind") is not None else None)
    if not defaults:
        return stripped, {}
    if paimon:
        raise refuse_paimon(sess, node)
    version = str(properties.get("format-version", DEFAULT_FORMAT_VERSION))
    check_format(sess, int(version) if version.isdigit() else 0, "CREATE TABLE with DEFAULT", node)
    values: dict[str, Any] = {}
    for name, (d, kind) in defaults.items():
        if kind is None:        # sqlglot reads a column without a type; its DEFAULT has no type to be cast to
            raise sess.error(f"column {name} has a DEFAULT but no type (write {name} <type> DEFAULT ...)", d)
        values[name] = value_of(sess, d, kind, name)
    return stripped, values


def added_default(sess: StatementSession, c: exp.ColumnDef, path: str, paimon: bool) -> tuple[exp.ColumnDef, Any]:
    """``ADD COLUMN``'s column without its ``DEFAULT`` clause, and the default's value (None: none)."""
    c, default = without_default(c)
    if default is None:
        return c, None
    if paimon:
        raise refuse_paimon(sess, c)
    return c, value_of(sess, default, c.args["kind"].sql("spark"), path)


def refuse_paimon(sess: StatementSession, node: Optional[exp.Expression] = None) -> NotSupportedYetError:
    return sess.not_supported("column DEFAULT on Paimon tables (Paimon keeps a column's default in the table "
                              "option 'fields.<column>.default-value': TBLPROPERTIES "
                              "('fields.c.default-value' = '0'))", node)


def set_default(sess: StatementSession, u: Any, field: NestedField, name: str, node: Optional[exp.Expression],
                at: tuple[Optional[int], Optional[int]]) -> None:
    """``ALTER COLUMN name SET DEFAULT node`` (``node`` None: ``DROP DEFAULT``) on schema update ``u``."""
    value = None if node is None else value_of(sess, node, to_spark_ddl_type(field.field_type), name)
    try:
        u.update_column_default(name, value)
    except SchemaError as e:
        raise SqlError(str(e), *at) from None


def with_write_defaults(sess: StatementSession, schema: Schema, defaults: dict[str, Any],
                        node: Optional[exp.Expression] = None) -> Schema:
    """``schema`` with each top-level column of ``defaults`` (name -> value) given that write default."""
    fields = []
    for f in schema.fields:
        if f.name in defaults and defaults[f.name] is not None:
            try:
                f = dataclasses.replace(f, write_default=default_json(f.field_type, defaults[f.name], f.name))
            except SchemaError as e:
                raise sess.error(str(e), node) from None
        fields.append(f)
    return Schema(fields, schema.schema_id, schema.identifier_field_ids)


__all__ = ["without_default", "value_of", "check_format", "created_defaults", "added_default", "set_default",
           "with_write_defaults"]
