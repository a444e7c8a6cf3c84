"""Paimon's system database ``sys`` in SQL: ``USE sys``, ``SHOW TABLES`` in it, and reads of its global
system tables (``sys.tables``, ``sys.partitions``, ``sys.all_table_options``, ``sys.catalog_options``)
as ``sys.<t>``, ``<catalog>.sys.<t>`` or, after ``USE sys``, ``<t>``.

The rows are built by ``icefloe.paimon.global_system_tables`` from every table of the catalog; a
query reads them through a temporary view, like any metadata table.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from sqlglot import exp

from icefloe.errors import NoSuchTableError
from icefloe.paimon.global_system_tables import NAMES, SYSTEM_DATABASE, catalog_options, names
from icefloe.sql.metadata_tables import to_spark
from icefloe.sql.names import table_parts

if TYPE_CHECKING:
    from icefloe.sql.statement_context import StatementCatalog, StatementSession


def is_system_database(sess: StatementSession, parts: list[str]) -> bool:
    """Whether ``parts`` (``sys`` or ``<catalog>.sys``) name the session catalog's system database."""
    low = [str(p).lower() for p in parts]
    if low[:1] == [sess.catalog_name.lower()]:
        low = low[1:]
    return low == [SYSTEM_DATABASE] and sess.catalog.has_system_database


def _catalog_of(sess: StatementSession, parts: list[str]) -> Optional[tuple[StatementCatalog, str, str]]:
    """(catalog, its name, the table's name in sys) when ``parts`` name a table of a ``sys`` database."""
    low = [str(p).lower() for p in parts]
    if len(low) == 1 and sess.namespace is not None and sess.namespace.lower() == SYSTEM_DATABASE:
        # after USE sys: its tables by their names (any other one-part name, a CTE's, is not ours)
        return (sess.catalog, sess.catalog_name, parts[0]) if low[0] in NAMES else None
    if len(low) == 2 and low[0] == SYSTEM_DATABASE:
        return sess.catalog, sess.catalog_name, parts[1]
    if len(low) == 3 and low[1] == SYSTEM_DATABASE:
        if low[0] == sess.catalog_name.lower():
            return sess.catalog, sess.catalog_name, parts[2]
        if low[0] in sess.catalogs:
            return sess.catalogs[low[0]], low[0], parts[2]
    return None


def system_table(sess: StatementSession, table: exp.Table) -> Optional[str]:
    """The temporary view of the global system table ``table`` names, or None when it names none.

    Raises SqlError for a table ``sys`` does not have and for time travel (the tables describe the
    catalog now)."""
    found = _catalog_of(sess, table_parts(table))
    if found is None or not found[0].has_system_database:
        return None
    catalog, catalog_name, name = found
    if table.args.get("version") is not None:
        raise sess.error(f"sys.{name} describes the catalog's tables now; it takes no VERSION or TIMESTAMP AS OF",
                         table)
    try:
        rows = catalog.system_table(name)
    except NoSuchTableError as e:
        raise sess.error(str(e), table) from None
    return sess.temp_view(to_spark(sess.spark, rows), f"sys_{name}", f"{catalog_name}.sys.{name}")


def table_names(sess: StatementSession) -> list[str]:
    """The tables ``SHOW TABLES`` lists in the session catalog's ``sys``."""
    return list(names(catalog_options(sess.catalog.warehouse, sess.catalog.properties)))


def refuse_change(sess: StatementSession, tree: exp.Expression) -> None:
    """Refuse a statement that would change or drop a table of ``sys`` (Paimon's global system tables
    are views of the catalog: they are read, never written)."""
    if not isinstance(tree, (exp.Insert, exp.Delete, exp.Update, exp.Merge, exp.Drop, exp.Alter, exp.TruncateTable,
                             exp.Create)):
        return
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if isinstance(tree, exp.TruncateTable) and tree.expressions:
        target = tree.expressions[0]
    if not isinstance(target, exp.Table):
        return
    found = _catalog_of(sess, table_parts(target))
    if found is not None and found[0].has_system_database:
        raise sess.error(f"{found[1]}.sys.{found[2]} is one of Paimon's global system tables, which describe the "
                         f"catalog's tables: {tree.key.upper()} cannot change it (read it with SELECT)", target)
