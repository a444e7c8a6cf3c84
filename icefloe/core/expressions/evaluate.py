"""Evaluating a bound expression against one row (field id -> internal value), with SQL's null semantics."""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Union

from icefloe.core.expressions.tree import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundReference,
    EqualTo,
    Expr,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    Predicate,
    SetPredicate,
    StartsWith,
    Unknown,
    literal_of,
    rewrite_not,
)
from icefloe.errors import ExpressionError


# =========================================================================== evaluation
def is_nan(v: object) -> bool:
    return isinstance(v, float) and math.isnan(v)


def sort_key(v: Any) -> tuple[int, Any]:
    """Spark's ordering for floats: NaN above everything, NaN equal to NaN."""
    if isinstance(v, float):
        return (1, 0.0) if math.isnan(v) else (0, v)
    return (0, v)


def values_equal(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return sort_key(a) == sort_key(b)
    return a == b


MISSING = object()


def evaluate(expr: Expr, row: Row) -> bool:
    """Whether a row (field id -> internal value) satisfies a bound expression.

    SQL semantics: a row "matches" when the expression is TRUE (a comparison
    with a null is not). ``Unknown`` counts as a match ("may match"), so the
    result is inclusive; a field id missing from ``row`` also makes its
    predicates match.
    """
    return eval_nnf(rewrite_not(expr), row)


Row = Union[Mapping[int, Any], Callable[[int], Any]]


def _lookup(row: Row, fid: int) -> Any:
    if callable(row):
        return row(fid)
    return row.get(fid, MISSING) if hasattr(row, "get") else row[fid]


def eval_nnf(e: Expr, row: Row) -> bool:
    if isinstance(e, And):
        return eval_nnf(e.left, row) and eval_nnf(e.right, row)
    if isinstance(e, Or):
        return eval_nnf(e.left, row) or eval_nnf(e.right, row)
    if isinstance(e, (AlwaysTrue, Unknown)):
        return True
    if isinstance(e, AlwaysFalse):
        return False
    if isinstance(e, Not):
        return eval_nnf(rewrite_not(e), row)
    if not isinstance(e, Predicate) or not isinstance(e.term, BoundReference):
        raise ExpressionError(f"cannot evaluate unbound expression {e}; bind it first")
    v = _lookup(row, e.term.field_id)
    if v is MISSING:
        return True
    return eval_predicate(e, v)


def eval_predicate(p: Predicate, v: Any) -> bool:
    """Whether the value ``v`` (internal form, None for null) satisfies predicate ``p``."""
    if isinstance(p, IsNull):
        return v is None
    if isinstance(p, NotNull):
        return v is not None
    if isinstance(p, IsNaN):
        return is_nan(v)
    if isinstance(p, NotNaN):
        return not is_nan(v)
    if v is None:
        return False
    if isinstance(p, SetPredicate):
        found = any(values_equal(v, x) for x in p.literals)
        return found if isinstance(p, In) else not found
    lit = literal_of(p)
    if isinstance(p, StartsWith):
        return isinstance(v, str) and v.startswith(lit)
    if isinstance(p, NotStartsWith):
        return isinstance(v, str) and not v.startswith(lit)
    if isinstance(p, EqualTo):
        return values_equal(v, lit)
    if isinstance(p, NotEqualTo):
        return not values_equal(v, lit)
    a, b = sort_key(v), sort_key(lit)
    if isinstance(p, LessThan):
        return a < b
    if isinstance(p, LessThanOrEqual):
        return a <= b
    if isinstance(p, GreaterThan):
        return a > b
    if isinstance(p, GreaterThanOrEqual):
        return a >= b
    raise ExpressionError(f"cannot evaluate {p!r}")  # pragma: no cover
