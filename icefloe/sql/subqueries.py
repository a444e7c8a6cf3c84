"""Subqueries inside the conditions and values of DELETE, UPDATE and MERGE.

The table API evaluates a row-level statement's condition as Spark SQL text against the target's
rows, so a subquery in it must name what Spark can read: each icefloe table it reads becomes a
temporary view (as in queries). A correlated reference to the target (``t.id`` in
``EXISTS (SELECT 1 FROM o WHERE o.id = t.id)``) is written without its qualifier, the target's rows
having none; where a table of the subquery has a column of the same name, that table is read
through a projection that renames the column, so the bare name still means the target's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet

from sqlglot import exp

from icefloe.sql.names import table_parts

if TYPE_CHECKING:
    from icefloe.sql.statement_context import StatementSession

INNER_PREFIX = "__icefloe_inner_"


def _outermost_selects(node: exp.Expression) -> list[exp.Select]:
    """The queries of ``node`` not inside another query of it."""
    out: list[exp.Select] = []
    for s in node.find_all(exp.Select):
        p = s.parent
        while p is not None and p is not node and not isinstance(p, exp.Select):
            p = p.parent
        if p is None or p is node:
            out.append(s)
    return out


def with_subqueries(sess: StatementSession, node: exp.Expression, quals: AbstractSet[str]) -> exp.Expression:
    """A copy of ``node`` whose subqueries read icefloe tables through views, and whose references
    qualified by the target (``quals``; none for MERGE, whose rows keep their aliases) are bare."""
    node = node.copy()
    for sub in _outermost_selects(node):
        rewritten, _ = sess.rewrite(sub)
        if quals:
            rewritten = _correlated(sess, rewritten, {q.lower() for q in quals if q})
        sub.replace(rewritten)
    return node


def _columns(sess: StatementSession, table: exp.Table) -> list[str]:
    try:
        return list(sess.spark.table(".".join(f"`{p}`" for p in table_parts(table))).columns)
    except Exception:       # a CTE name or a table Spark reports itself when the statement runs
        return []


def _correlated(sess: StatementSession, select: exp.Expression, quals: AbstractSet[str]) -> exp.Expression:
    tables = [t for t in select.find_all(exp.Table) if t.name]
    quals = quals - {t.alias_or_name.lower() for t in tables}    # an inner table of that name hides the target
    outer = [c for c in select.find_all(exp.Column)
             if c.table and c.table.lower() in quals and not c.args.get("db") and not isinstance(c.this, exp.Star)]
    if not outer:
        return select
    outer_ids = {id(c) for c in outer}
    names = {c.name.lower() for c in outer}
    clashing: dict[int, tuple[exp.Table, list[str]]] = {}
    for t in tables:
        cols = _columns(sess, t)
        if any(c.lower() in names for c in cols):
            clashing[id(t)] = (t, cols)
    renamed = {n for _t, cols in clashing.values() for n in (c.lower() for c in cols) if n in names}
    for c in list(select.find_all(exp.Column)):
        if isinstance(c.this, exp.Star):
            continue
        if id(c) in outer_ids:
            c.replace(exp.column(c.this.copy()))
        elif c.name.lower() in renamed:
            c.set("this", exp.to_identifier(INNER_PREFIX + c.name.lower(), quoted=True))
    for t, cols in clashing.values():
        plain = t.copy()
        plain.set("alias", None)
        projection = [exp.alias_(exp.column(c, quoted=True), INNER_PREFIX + c.lower() if c.lower() in names else c,
                                 quoted=True) for c in cols]
        t.replace(exp.select(*projection).from_(plain).subquery(t.alias_or_name))
    return select
