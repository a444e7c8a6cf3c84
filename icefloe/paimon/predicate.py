# pyright: strict
"""Pruning Paimon files with the one expression tree both formats share.

``where`` is Spark SQL text, parsed and bound by ``icefloe.core.expressions`` against the Paimon
fields (their field ids are Paimon's); the bound tree is put in negation normal form, so ``NOT``
prunes by SQL's three-valued logic instead of being given up on. ``may_match`` evaluates it against
what is known of a partition or a data file per column: a ``ColumnRange`` (lower and upper bound,
null count, row count; an exact partition value is a range with equal bounds). Pruning is only ever
inclusive: Spark applies the full condition to the rows. Floating point, TIMESTAMP_LTZ, binary and
time columns are never used for pruning (NaN ordering, session time zones and truncated bounds make
them unsafe to compare), and a condition that cannot be bound prunes nothing.

``to_arrow_expression`` is the exact Arrow filter of a condition (``icefloe.core.expressions.arrow``).
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence


from icefloe.core import expressions as ex
from icefloe.core.expressions.arrow import to_arrow_filter
from icefloe.core.expressions.tree import literal_of
from icefloe.core.values import to_internal
from icefloe.errors import IcefloeError
from icefloe.errors import UnsupportedFilterError  # noqa: F401 - defined in icefloe.errors, importable here too
from icefloe.paimon.types import DataField, to_core_schema

if TYPE_CHECKING:
    import pyarrow.compute as pc

ALWAYS = ex.AlwaysTrue()          # prunes nothing
Always = ex.AlwaysTrue

_UNPRUNABLE = ("float", "double", "timestamptz", "binary", "time", "uuid")


@dataclass
class ColumnRange:
    lower: Any = None
    upper: Any = None
    null_count: Optional[int] = None
    row_count: Optional[int] = None

    @property
    def all_null(self) -> bool:
        return self.null_count is not None and self.row_count is not None and self.null_count >= self.row_count


# --------------------------------------------------------------------------- parsing and binding
def parse_where(text: object) -> ex.Expr:
    """Spark SQL condition text as an unbound tree (``ALWAYS`` when there is none or it cannot be read)."""
    if text is None or not str(text).strip():
        return ALWAYS
    try:
        return ex.parse_predicate(str(text))
    except IcefloeError:
        return ALWAYS


def bind(node: ex.Expr, fields: Sequence[DataField]) -> ex.Expr:
    """``node`` bound to the Paimon fields (names case-insensitively, literals in their internal
    form), NOT pushed to the leaves; ``ALWAYS`` if it cannot be bound (Spark reports the error)."""
    if isinstance(node, ex.AlwaysTrue):
        return node
    try:
        return ex.rewrite_not(ex.bind(node, to_core_schema(fields)))
    except IcefloeError:
        return ALWAYS


def conjuncts(node: ex.Expr) -> list[ex.Expr]:
    """The top-level AND terms of a tree (nested ANDs flattened)."""
    if isinstance(node, ex.And):
        return conjuncts(node.left) + conjuncts(node.right)
    return [node]


def referenced_columns(node: ex.Expr) -> set[str]:
    if isinstance(node, (ex.And, ex.Or)):
        return referenced_columns(node.left) | referenced_columns(node.right)
    if isinstance(node, ex.Not):
        return referenced_columns(node.child)
    if isinstance(node, ex.Predicate) and isinstance(node.term, ex.BoundReference):
        return {node.term.name}
    return set()


# --------------------------------------------------------------------------- exact row filters
def to_arrow_expression(text: str, fields: Sequence[DataField]) -> pc.Expression:
    """The pyarrow.compute expression of a Spark SQL condition, evaluated exactly (SQL's
    three-valued logic). Raises ``UnsupportedFilterError`` for what Arrow cannot evaluate
    exactly (functions, casts, comparisons of columns, TIMESTAMP_LTZ literals)."""
    try:
        bound = ex.bind(ex.parse_predicate(str(text)), to_core_schema(fields))
    except IcefloeError as e:
        raise UnsupportedFilterError(f"cannot filter with {text!r} without Spark: {e}") from None
    return to_arrow_filter(bound)


# --------------------------------------------------------------------------- pruning
def _in_range(v: Any, lo: Any, hi: Any) -> bool:
    return (lo is None or lo <= v) and (hi is None or v <= hi)


def may_match(node: ex.Expr, ranges: Mapping[str, ColumnRange]) -> bool:
    """False only if no row described by ``ranges`` (column name -> ColumnRange) can match."""
    if isinstance(node, ex.AlwaysFalse):
        return False
    if isinstance(node, ex.And):
        return may_match(node.left, ranges) and may_match(node.right, ranges)
    if isinstance(node, ex.Or):
        return may_match(node.left, ranges) or may_match(node.right, ranges)
    if not isinstance(node, ex.Predicate) or not isinstance(node.term, ex.BoundReference):
        return True                           # AlwaysTrue, Unknown, NOT of what NNF cannot push down
    ref = node.term
    r = ranges.get(ref.name)
    if r is None:
        return True
    t = ref.field_type
    kind = str(t)
    if kind in _UNPRUNABLE or kind.startswith("fixed"):
        return True
    if isinstance(node, ex.IsNull):
        return r.null_count is None or r.null_count > 0
    if isinstance(node, ex.NotNull):
        return not r.all_null
    if isinstance(node, (ex.IsNaN, ex.NotNaN)):
        return True
    if r.all_null:
        return False                          # a comparison with null is never true, nor its NOT
    try:
        lo, hi = r.lower, r.upper
        if isinstance(lo, _dt.date) or isinstance(hi, _dt.date):    # dates and timestamps: days, micros
            lo, hi = to_internal(t, lo), to_internal(t, hi)
        if isinstance(node, ex.In):
            return any(_in_range(v, lo, hi) for v in node.literals)
        if isinstance(node, ex.NotIn):        # all values one listed value: no row is outside the list
            return not (lo is not None and lo == hi and lo in node.literals)
        v = literal_of(node)
        if isinstance(node, ex.EqualTo):
            return _in_range(v, lo, hi)
        if isinstance(node, ex.NotEqualTo):
            return not (lo is not None and lo == hi == v)
        if isinstance(node, ex.LessThan):
            return lo is None or lo < v
        if isinstance(node, ex.LessThanOrEqual):
            return lo is None or lo <= v
        if isinstance(node, ex.GreaterThan):
            return hi is None or hi > v
        if isinstance(node, ex.GreaterThanOrEqual):
            return hi is None or hi >= v
        if isinstance(node, ex.StartsWith):
            if isinstance(lo, str) and isinstance(hi, str):
                return lo[:len(v)] <= v <= hi[:len(v)]
            return True
        if isinstance(node, ex.NotStartsWith):   # every value between two with the prefix has it too
            return not (isinstance(lo, str) and isinstance(hi, str) and lo.startswith(v) and hi.startswith(v))
    except (TypeError, ValueError):
        return True
    return True
