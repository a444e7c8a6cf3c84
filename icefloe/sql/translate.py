"""Small translations from sqlglot trees to what the table API takes.

Partition terms (``PARTITIONED BY``, ``ADD PARTITION FIELD``), column lists,
predicates without the target table's qualifier, literal values.
"""
from __future__ import annotations

from typing import AbstractSet, Any, Optional

from sqlglot import exp

from icefloe.sql.errors import SqlError
from icefloe.sql.parser import node_position

_UNIT_FUNCS = {exp.Year: "year", exp.Month: "month", exp.Day: "day", exp.Hour: "hour"}


def partition_term(node: exp.Expression, stmt_text: str = "") -> str:
    """``bucket(16, id)``, ``years(ts)``, ``name``: the term string icefloe's spec builder reads."""
    if isinstance(node, (exp.Identifier, exp.Column)):
        return _col(node)
    if isinstance(node, exp.PartitionedByBucket):
        return f"bucket({_int(node.expression, node)}, {_col(node.this)})"
    if isinstance(node, exp.PartitionByTruncate):
        return f"truncate({_int(node.expression, node)}, {_col(node.this)})"
    if isinstance(node, exp.Trunc):
        return f"truncate({_int(node.this, node)}, {_col(node.args.get('decimals'))})"
    for cls, name in _UNIT_FUNCS.items():
        if isinstance(node, cls):
            return f"{name}({_col(_only_column(node))})"
    if isinstance(node, exp.Cast) and node.to.is_type("date"):
        return f"day({_col(_only_column(node))})"
    if isinstance(node, exp.Anonymous):
        args = []
        for a in node.expressions:
            if isinstance(a, exp.Literal) and not a.is_string:
                args.append(a.this)
            else:
                args.append(_col(a))
        return f"{node.name.lower()}({', '.join(args)})"
    line, col = node_position(node)
    raise SqlError(f"unsupported partition term {node.sql('spark')}: expected a column, years(col), "
                   "months(col), days(col), hours(col), bucket(N, col) or truncate(W, col)", line, col)


def _only_column(node: exp.Expression) -> exp.Expression:
    cols = list(node.find_all(exp.Column))
    if len(cols) != 1:
        line, col = node_position(node)
        raise SqlError(f"partition term {node.sql('spark')} must use exactly one column", line, col)
    return cols[0]


def _col(node: Optional[exp.Expression]) -> str:
    if isinstance(node, exp.Column):
        if node.table:
            line, col = node_position(node)
            raise SqlError(f"partition terms name a column of the table, not {node.sql('spark')}", line, col)
        return node.name
    if isinstance(node, exp.Identifier):
        return node.name
    line, col = node_position(node)
    raise SqlError(f"expected a column name, got {node.sql('spark') if node is not None else 'nothing'}",
                   line, col)


def _int(node: exp.Expression, where: exp.Expression) -> int:
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return int(node.this)
        except ValueError:
            pass
    line, col = node_position(where)
    raise SqlError(f"expected an integer in {where.sql('spark')}", line, col)


def literal_value(node: exp.Expression) -> Any:
    """The Python value of a literal (numbers, strings, booleans, NULL, -n), else raise ValueError."""
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        try:
            return int(text)
        except ValueError:
            return float(text)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return -literal_value(node.this)
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Paren):
        return literal_value(node.this)
    raise ValueError(node.sql("spark"))


def strip_qualifier(node: exp.Expression, qualifiers: AbstractSet[str]) -> exp.Expression:
    """A copy of ``node`` whose columns qualified by the target table lose the qualifier."""
    low = {q.lower() for q in qualifiers if q}

    def fix(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and n.table and n.table.lower() in low and not n.args.get("db"):
            return exp.column(n.this.copy())
        if isinstance(n, exp.Column) and n.args.get("db") and n.db.lower() in low and not n.args.get("catalog"):
            return exp.column(n.this.copy(), table=n.args["table"].copy())    # t.s.f: field f of struct s
        return n

    return node.copy().transform(fix)


def unknown_columns(node: exp.Expression, known: AbstractSet[str], qualifiers: AbstractSet[str],
                    other_qualifiers: AbstractSet[str] = frozenset(), other_known: AbstractSet[str] = frozenset()) -> list:
    """Column nodes (outside subqueries) that name nothing: for errors before anything runs."""
    bad = []
    low_known = {k.lower() for k in known}
    low_other = {k.lower() for k in other_known}
    q = {x.lower() for x in qualifiers if x}
    oq = {x.lower() for x in other_qualifiers if x}
    for c in node.find_all(exp.Column):
        if not _inside(c, node):
            continue
        name = c.name.lower()
        if isinstance(c.this, exp.Star):
            continue
        t = (c.table or "").lower()
        if t in q:
            if name not in low_known:
                bad.append(c)
        elif t in oq:
            if oq and low_other and name not in low_other:
                bad.append(c)
        elif not t:
            if name not in low_known and name not in low_other:
                bad.append(c)
    return bad


def _inside(c: exp.Expression, root: exp.Expression) -> bool:
    """True when no Select lies between ``c`` and ``root`` (the column is not in a subquery)."""
    n = c.parent
    while n is not None and n is not root:
        if isinstance(n, (exp.Select, exp.Subquery)):
            return False
        n = n.parent
    return True
