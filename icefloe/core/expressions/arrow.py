"""A bound expression as a ``pyarrow.compute`` filter that selects exactly the rows Spark SQL would.

Rows match only where the condition is true (SQL's three-valued logic): a comparison with a null
is never true, ``NOT`` of it neither; ``NaN`` equals itself and sorts above every other float, as
in Spark. The expression is first put in negation normal form, so every ``NOT`` sits on a leaf.
What Arrow cannot evaluate exactly (terms the tree keeps as ``Unknown``, instants of a local time
zone) raises :class:`~icefloe.errors.UnsupportedFilterError`: the caller filters with Spark instead.
"""
from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.core.expressions.tree import (
    AlwaysFalse, AlwaysTrue, And, EqualTo, Expr, GreaterThan, GreaterThanOrEqual, In, IsNaN, IsNull, LessThan,
    LessThanOrEqual, Not, NotEqualTo, NotIn, NotNaN, NotNull, NotStartsWith, Or, Predicate, StartsWith, rewrite_not,
    literal_of,
)
from icefloe.core.types import DecimalType, IcebergType
from icefloe.core.values import days_to_date
from icefloe.errors import UnsupportedFilterError

_FLOATS = ("float", "double")


def _scalar(value: Any, t: IcebergType) -> pa.Scalar:
    """An internal literal of type ``t`` as an Arrow scalar."""
    s = str(t)
    if isinstance(t, DecimalType):
        return pa.scalar(value, pa.decimal128(t.precision, t.scale))
    if s == "date":
        return pa.scalar(days_to_date(value), pa.date32())
    if s == "timestamp":
        return pa.scalar(value, pa.timestamp("us"))
    simple = {"boolean": pa.bool_(), "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(),
              "long": pa.int64(), "float": pa.float32(),
              "double": pa.float64(), "string": pa.string()}
    if s not in simple:
        raise UnsupportedFilterError(f"cannot filter on a {s} column without Spark")
    return pa.scalar(value, simple[s])


def _is_nan_literal(v: object) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _leaf(p: Predicate) -> pc.Expression:
    ref = p.ref
    t = ref.field_type
    s = str(t)
    col = pc.field(ref.name)
    if s == "timestamptz":
        raise UnsupportedFilterError(f"column {ref.name!r} holds instants shown in the session time zone; "
                                     "filter it with Spark")
    if isinstance(p, IsNull):
        return col.is_null()
    if isinstance(p, NotNull):
        return col.is_valid()
    if isinstance(p, IsNaN):
        return pc.is_nan(col) if s in _FLOATS else pc.scalar(False)
    if isinstance(p, NotNaN):           # isnan(NULL) is false: NOT holds for nulls
        return (~pc.is_nan(col) | col.is_null()) if s in _FLOATS else pc.scalar(True)
    if isinstance(p, (In, NotIn)):
        if any(v is None or _is_nan_literal(v) for v in p.literals):
            raise UnsupportedFilterError("IN lists with NULL or NaN need Spark")
        values = pa.array([_scalar(v, t).as_py() for v in p.literals], type=_scalar(p.literals[0], t).type)
        member = pc.is_in(col, value_set=values)
        return member if isinstance(p, In) else (~member & col.is_valid())
    lit = literal_of(p)
    if isinstance(p, (StartsWith, NotStartsWith)):
        if s != "string":
            raise UnsupportedFilterError(f"LIKE on the {s} column {ref.name!r} needs Spark")
        hit = pc.starts_with(col, lit)
        return hit if isinstance(p, StartsWith) else ~hit
    if _is_nan_literal(lit):
        raise UnsupportedFilterError("comparisons with NaN need Spark")
    v = _scalar(lit, t)
    nan = pc.is_nan(col) if s in _FLOATS else None
    if isinstance(p, EqualTo):
        return col == v
    if isinstance(p, NotEqualTo):
        return col != v
    if isinstance(p, LessThan):
        return col < v
    if isinstance(p, LessThanOrEqual):
        return col <= v
    if isinstance(p, GreaterThan):                  # NaN sorts above every number
        return (col > v) | nan if nan is not None else col > v
    if isinstance(p, GreaterThanOrEqual):
        return (col >= v) | nan if nan is not None else col >= v
    raise UnsupportedFilterError(f"condition {p} needs Spark")


def to_arrow_filter(expr: Expr) -> pc.Expression:
    """The exact Arrow filter of a bound expression (see the module doc)."""
    def go(e: Expr) -> pc.Expression:
        if isinstance(e, AlwaysTrue):
            return pc.scalar(True)
        if isinstance(e, AlwaysFalse):
            return pc.scalar(False)
        if isinstance(e, And):
            return go(e.left) & go(e.right)
        if isinstance(e, Or):
            return go(e.left) | go(e.right)
        if isinstance(e, Predicate):
            return _leaf(e)
        if isinstance(e, Not):
            raise UnsupportedFilterError(f"condition NOT {e.child} needs Spark")
        raise UnsupportedFilterError(f"condition {e} needs Spark (functions, casts, column comparisons)")
    return go(rewrite_not(expr))
