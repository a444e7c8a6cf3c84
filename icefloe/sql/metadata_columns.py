"""Hidden metadata columns in queries (Paimon's ``__paimon_file_path``, ``__paimon_row_index``,
``__paimon_partition``, ``__paimon_bucket``): a query naming one reads its table with them, and
every ``*`` over that table is written out as the table's own columns, so ``SELECT *`` stays
what it is without them (``SELECT *, __paimon_file_path FROM t``).
"""
from __future__ import annotations

from sqlglot import exp

from icefloe.sql.errors import SqlError
from icefloe.sql.parser import node_position

PREFIX = "__paimon_"
ROW_TRACKING = ("_row_id", "_sequence_number")     # a row-tracking Paimon table's


def referenced(tree: exp.Expression) -> frozenset:
    """The lower-case names of the columns ``tree`` names that may be metadata columns."""
    return frozenset(c.name.lower() for c in tree.find_all(exp.Column)
                     if c.name.lower().startswith(PREFIX) or c.name.lower() in ROW_TRACKING)


def _source_name(source: exp.Expression) -> str:
    alias = source.args.get("alias")
    if alias is not None and alias.name:
        return alias.name
    return source.name if isinstance(source, exp.Table) else ""


def expand_stars(tree: exp.Expression, hidden: dict) -> None:
    """Write out, in place, each ``*`` and ``alias.*`` over a table read with metadata columns.
    ``hidden``: {view name: the table's own columns}."""
    for select in list(tree.find_all(exp.Select)):
        from_ = select.args.get("from_") or select.args.get("from")
        sources = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
        own = {}
        for s in sources:
            if isinstance(s, exp.Table) and s.name in hidden:
                own[_source_name(s).lower()] = hidden[s.name]
        if not own:
            continue
        out = []
        for e in select.expressions:
            if isinstance(e, exp.Star):
                out.extend(_all_sources(e, sources, hidden))
            elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star) and e.table.lower() in own:
                out.extend(exp.column(exp.to_identifier(c, quoted=True), table=exp.to_identifier(e.table))
                           for c in own[e.table.lower()])
            else:
                out.append(e)
        select.set("expressions", out)


def _all_sources(star: exp.Star, sources: list, hidden: dict) -> list:
    """``*`` over the sources of one SELECT, in their order."""
    if star.args.get("except") or star.args.get("replace") or star.args.get("rename"):
        line, col = node_position(star)
        raise SqlError("* EXCEPT/REPLACE over a table read with metadata columns: name the columns", line, col)
    if len(sources) == 1:
        return [exp.column(exp.to_identifier(c, quoted=True)) for c in hidden[sources[0].name]]
    out = []
    for s in sources:
        name = _source_name(s)
        if not name:
            line, col = node_position(star)
            raise SqlError("* over a join with a subquery that has no alias, in a query reading metadata columns: "
                           "give the subquery an alias", line, col)
        if isinstance(s, exp.Table) and s.name in hidden:
            out.extend(exp.column(exp.to_identifier(c, quoted=True), table=exp.to_identifier(name))
                       for c in hidden[s.name])
        else:
            out.append(exp.column(exp.Star(), table=exp.to_identifier(name)))
    return out
