"""Statements about the catalog and a table's definition: namespaces (``SHOW NAMESPACES``,
``CREATE``/``DROP NAMESPACE``, ``USE``), ``SHOW CREATE TABLE``, ``SHOW TBLPROPERTIES``,
``TRUNCATE TABLE`` and the Iceberg extensions ``WRITE ... ORDERED BY`` and ``SET``/``DROP
IDENTIFIER FIELDS``. Names under another catalog (``spark_catalog.x``) go to Spark unchanged."""
from __future__ import annotations

import fnmatch
import re
from typing import TYPE_CHECKING, Any, Callable, Optional

from sqlglot import exp

from icefloe.errors import IcefloeError, SchemaError
from icefloe.sql import parser as p, system_database, wap
from icefloe.paimon.global_system_tables import SYSTEM_DATABASE
from icefloe.sql.errors import SqlError
from icefloe.sql.names import table_parts

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.sql.statement_context import StatementSession
    from icefloe.table.base import Table

DISTRIBUTION_MODE = "write.distribution-mode"


def _at(name: Optional[p.Name]) -> tuple[Optional[int], Optional[int]]:
    return (name.line, name.column) if name is not None else (None, None)


def _by_spark(sess: StatementSession) -> DataFrame:
    """The statement run by Spark as written (it names none of the session's catalogs)."""
    stmt = sess.statement
    assert stmt is not None, "a statement is answered while it runs"
    return sess.run_spark(stmt.text)


# --------------------------------------------------------------------------- namespaces
def _namespace(sess: StatementSession, parts: list[str], node: Optional[exp.Expression] = None) -> Optional[str]:
    """The icefloe namespace ``parts`` names (``db`` or ``<catalog>.db``); None when the name
    belongs to another catalog."""
    if len(parts) == 2 and parts[0].lower() == sess.catalog_name.lower():
        return parts[1]
    if len(parts) == 1:
        return parts[0]
    if len(parts) >= 2 and parts[0].lower() != sess.catalog_name.lower():
        return None
    raise sess.error(f"namespace {'.'.join(parts)} must be db or {sess.catalog_name}.db", node)


_ALTER_NAMESPACE = re.compile(
    r"^\s*ALTER\s+(?:DATABASE|SCHEMA|NAMESPACE)\s+(?P<name>(?:`[^`]+`|[\w-]+)(?:\.(?:`[^`]+`|[\w-]+))*)\s+"
    r"(?P<action>SET|UNSET)\s+(?P<what>DBPROPERTIES|PROPERTIES|LOCATION)\b(?P<rest>.*)$", re.I | re.S)


def alter_namespace(sess: StatementSession, text: str) -> Optional[DataFrame]:
    """``ALTER DATABASE|SCHEMA|NAMESPACE ns SET|UNSET DBPROPERTIES|PROPERTIES (...)`` and ``SET LOCATION`` on a
    namespace of the session's catalogs, or None when ``text`` is not one of those (Spark's own database)."""
    m = _ALTER_NAMESPACE.match(text)
    if m is None:
        return None
    parts = [x.strip("`") for x in re.findall(r"`[^`]+`|[^.`]+", m.group("name"))]
    catalog, shown = sess.catalog, sess.catalog_name
    if len(parts) == 2 and parts[0].lower() in sess.catalogs:
        catalog, shown, parts = sess.catalogs[parts[0].lower()], parts[0], parts[1:]
    elif len(parts) == 2 and parts[0].lower() == sess.catalog_name.lower():
        parts = parts[1:]
    if len(parts) != 1:
        return None
    ns = parts[0]
    if not catalog.namespace_exists(ns):
        if shown != sess.catalog_name or "." in m.group("name"):
            raise sess.error(f"namespace {ns} does not exist in catalog {shown} ({catalog.warehouse})")
        return None                                      # Spark's own database
    action, what = m.group("action").upper(), m.group("what").upper()
    if (refused := catalog.alter_namespace_refused) is not None:
        raise sess.not_supported(f"ALTER NAMESPACE ... {action} {what} on namespace {ns} of catalog {shown}: "
                                 f"{refused}")
    if what == "LOCATION":
        raise sess.not_supported(f"ALTER NAMESPACE ... SET LOCATION on namespace {ns} of catalog {shown}: icefloe "
                                 f"places a namespace's tables under the warehouse ({catalog.warehouse}), and a "
                                 "table's metadata records the absolute paths of its files, so they cannot move with it")
    if not catalog.keeps_namespace_properties:
        raise sess.not_supported(f"ALTER NAMESPACE ... {action} {what} on namespace {ns} of catalog {shown}: in "
                                 f"a warehouse of {catalog.format.capitalize()} tables a namespace is a directory and keeps no properties "
                                 "(a SQL or REST catalog keeps them)")
    rest = m.group("rest")
    if action == "SET":
        pairs = re.findall(r"'((?:[^'\\]|\\.)*)'\s*=\s*'((?:[^'\\]|\\.)*)'", rest)
        if not pairs:
            raise sess.error(f"ALTER NAMESPACE ... SET {what} needs ('key' = 'value', ...)")
        catalog.update_namespace_properties(ns, updates=dict(pairs))
    else:
        rest = re.sub(r"^\s*IF\s+EXISTS\b", "", rest, flags=re.I)
        keys = re.findall(r"'((?:[^'\\]|\\.)*)'", rest)
        if not keys:
            raise sess.error(f"ALTER NAMESPACE ... UNSET {what} needs ('key', ...)")
        catalog.update_namespace_properties(ns, removals=keys)
    return sess.empty()


def show_namespaces(sess: StatementSession, stmt: p.ShowNamespaces) -> DataFrame:
    if stmt.catalog is not None and ".".join(stmt.catalog.parts).lower() != sess.catalog_name.lower():
        return _by_spark(sess)
    names = sorted(sess.catalog.list_namespaces())
    if stmt.pattern:   # Spark's SHOW ... LIKE: '*' any characters, '|' alternatives, case-insensitive
        alts = [re.compile(fnmatch.translate(a.strip().replace(".*", "*").lower())) for a in stmt.pattern.split("|")]
        names = [n for n in names if any(a.match(n.lower()) for a in alts)]
    return sess.spark.createDataFrame([(n,) for n in names], "namespace string")


def create_namespace(sess: StatementSession, tree: exp.Create) -> DataFrame:
    parts = table_parts(tree.this)
    ns = _namespace(sess, parts, tree.this)
    if ns is None:
        return _by_spark(sess)
    props = tree.args.get("properties")
    if props is not None and props.expressions:
        raise sess.not_supported("namespace properties, comments and locations (a warehouse namespace is "
                                 "a directory)", props)
    try:
        sess.catalog.create_namespace(ns, exist_ok=bool(tree.args.get("exists")))
    except IcefloeError as e:
        raise sess.error(str(e), tree.this) from None
    return sess.empty()


def drop_namespace(sess: StatementSession, tree: exp.Drop) -> DataFrame:
    for table in tree.args.get("tables") or [tree.this]:
        ns = _namespace(sess, table_parts(table), table)
        if ns is None:
            return _by_spark(sess)
        try:
            sess.catalog.drop_namespace(ns, cascade=bool(tree.args.get("cascade")),
                                        missing_ok=bool(tree.args.get("exists")))
        except IcefloeError as e:
            raise sess.error(str(e), table) from None
        if sess.namespace == ns:
            sess.namespace = None
    return sess.empty()


def use(sess: StatementSession, tree: exp.Use) -> DataFrame:
    target = tree.this
    parts = table_parts(target) if isinstance(target, exp.Table) else [target.name]
    alias = target.args.get("alias") if isinstance(target, exp.Table) else None
    if alias is not None and parts[-1].upper() in ("NAMESPACE", "DATABASE", "SCHEMA"):
        parts = [alias.name]                       # USE NAMESPACE db
    if len(parts) == 1 and parts[0].lower() == sess.catalog_name.lower():
        sess.namespace = None                      # USE local: the catalog, no namespace
        return sess.empty()
    if system_database.is_system_database(sess, parts):
        sess.namespace = SYSTEM_DATABASE           # USE sys: Paimon's global system tables by their names
        return sess.empty()
    ns = _namespace(sess, parts, target) if len(parts) <= 2 else None
    if ns is not None and sess.catalog.namespace_exists(ns):
        sess.namespace = ns
        return sess.empty()
    if len(parts) == 2 and parts[0].lower() == sess.catalog_name.lower():
        raise sess.error(f"namespace {ns} does not exist in {sess.catalog.warehouse}", target)
    sess.namespace = None                          # Spark's own database
    return _by_spark(sess)


# --------------------------------------------------------------------------- one table's definition
def _table(sess: StatementSession, name: p.Name) -> Optional[Table]:
    ref, ours = sess.resolve_name(list(name.parts))
    if ref is None and not ours:
        return None
    if ref is None or ref.metadata:
        raise SqlError(f"unknown table {name}", *_at(name))
    return sess.load(ref)


def _quote(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _ident(s: str) -> str:
    return s if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s) else "`" + s.replace("`", "``") + "`"


def show_create_table(sess: StatementSession, stmt: p.ShowCreateTable) -> DataFrame:
    t = _table(sess, stmt.table)
    if t is None:
        return _by_spark(sess)
    cols: list[str] = []
    for name, dtype, comment in t.describe_columns():
        col = f"  {_ident(name)} {dtype.replace(' not null', '').upper()}" + (" NOT NULL" if "not null" in dtype else "")
        cols.append(col + (f" COMMENT {_quote(comment)}" if comment else ""))
    props = t.shown_properties()
    comment = props.pop("comment", None)
    lines = [f"CREATE TABLE {sess.catalog_name}.{t.name} (", ",\n".join(cols) + ")", f"USING {t.format}"]
    if t.partitioning():
        lines.append(f"PARTITIONED BY ({', '.join(t.partitioning())})")
    if comment:
        lines.append(f"COMMENT {_quote(comment)}")
    if props:
        lines.append("TBLPROPERTIES (\n" + ",\n".join(f"  {_quote(k)} = {_quote(v)}" for k, v in sorted(props.items()))
                     + ")")
    return sess.spark.createDataFrame([("\n".join(lines) + "\n",)], "createtab_stmt string")


def show_tblproperties(sess: StatementSession, stmt: p.ShowTblProperties) -> DataFrame:
    t = _table(sess, stmt.table)
    if t is None:
        return _by_spark(sess)
    props = t.shown_properties()
    if stmt.key is not None:
        value = props.get(stmt.key, f"Table {sess.catalog_name}.{t.name} does not have property: {stmt.key}")
        rows = [(stmt.key, value)]
    else:
        rows = sorted(props.items())
    return sess.spark.createDataFrame(rows, "key string, value string")


def show_tags(sess: StatementSession, stmt: p.ShowTags) -> DataFrame:
    """Paimon's ``SHOW TAGS t``: the tag names, sorted (column ``tag``)."""
    t = _table(sess, stmt.table)
    if t is None:
        raise SqlError(f"unknown table {stmt.table}", *_at(stmt.table))
    tags: Optional[Callable[[], list[str]]] = getattr(t, "tags", None)     # Paimon's tables list their tags
    if not callable(tags):
        raise sess.not_supported(f"SHOW TAGS on {t.format} tables (a Paimon statement; Iceberg's tags are in "
                                 f"{t.name}.refs)")
    return sess.spark.createDataFrame([(n,) for n in sorted(tags())], "tag string")


def truncate(sess: StatementSession, tree: exp.TruncateTable) -> DataFrame:
    """``TRUNCATE TABLE t``: every row removed in one snapshot (the files are dropped, none read)."""
    partition = tree.args.get("partition")
    tables: list[Table] = []
    for table in tree.expressions:
        ref, ours = sess.resolve(table)
        if ref is None and not ours:
            return _by_spark(sess)
        if ref is None or ref.metadata:
            raise sess.error(f"unknown table {'.'.join(table_parts(table))}", table)
        tables.append(wap.write_target(sess, sess.load(ref), None, "TRUNCATE TABLE", table))
    if partition is not None:          # Paimon's TRUNCATE TABLE t PARTITION (...): the partition's files dropped
        # Paimon's tables drop partitions
        drop: Optional[Callable[..., Any]] = getattr(tables[0], "drop_partitions", None) if len(tables) == 1 else None
        if not callable(drop):
            raise sess.not_supported("TRUNCATE TABLE ... PARTITION" + (f" on {tables[0].format} tables" if tables
                                     else "") + " (use DELETE FROM t WHERE <partition condition>)", partition)
        try:
            drop([p.partition_spec(partition.expressions)], if_exists=True)
        except IcefloeError as e:
            raise sess.error(str(e), partition) from None
        return sess.empty()
    for t in tables:
        with sess.refused_as("TRUNCATE TABLE"):
            t.truncate()
    return sess.empty()


# --------------------------------------------------------------------------- Iceberg extensions
def write_order(sess: StatementSession, t: Table, stmt: p.AlterWriteOrder) -> DataFrame:
    """``WRITE [LOCALLY] ORDERED BY`` / ``UNORDERED`` / ``DISTRIBUTED BY PARTITION``: the sort
    order, and ``write.distribution-mode`` as Iceberg's Spark extensions set it."""
    with sess.refused_as("ALTER TABLE ... WRITE ORDERED BY"):
        try:
            t.replace_sort_order(*stmt.terms)
        except (SchemaError, ValueError) as e:
            raise SqlError(str(e), *_at(stmt.table)) from None
        t.update_properties(set={DISTRIBUTION_MODE: stmt.distribution})
    return sess.empty()


def identifier_fields(sess: StatementSession, t: Table, stmt: p.AlterIdentifierFields) -> DataFrame:
    with sess.refused_as(f"ALTER TABLE ... {stmt.action.upper()} IDENTIFIER FIELDS"):
        u = t.update_schema()
        if not hasattr(u, "set_identifier_fields"):
            raise t.unsupported("identifier fields", "a Paimon table's row identity is its primary key")
        schema = t.schema
        current = [schema.find_field(i).name for i in schema.identifier_field_ids]
        if stmt.action == "set":
            names = stmt.names
        else:
            low = {c.lower(): c for c in current}
            missing = [n for n in stmt.names if n.lower() not in low]
            if missing:
                raise SqlError(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not an identifier "
                               f"field of {t.name} (identifier fields: {', '.join(current) or 'none'})",
                               *_at(stmt.table))
            drop = {n.lower() for n in stmt.names}
            names = [c for c in current if c.lower() not in drop]
        try:
            with u:
                u.set_identifier_fields(*names)
        except SchemaError as e:
            raise SqlError(str(e), *_at(stmt.table)) from None
    return sess.empty()
