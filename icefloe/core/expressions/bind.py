"""Binding: column names resolved to field ids of a schema, literals converted to the column's internal form."""
from __future__ import annotations

import datetime as _dt
import decimal
import math
import uuid as _uuid
from dataclasses import dataclass
from typing import Any, Callable, Union

from icefloe.core.expressions.literals import float32, parse_datetime, to_date, to_float
from icefloe.core.expressions.tree import (
    AlwaysFalse,
    AlwaysNull,
    AlwaysTrue,
    And,
    BoundReference,
    EqualTo,
    Expr,
    GreaterThan,
    In,
    IsNaN,
    IsNull,
    LessThanOrEqual,
    LikeEqualTo,
    LikeNotEqualTo,
    LiteralPredicate,
    Not,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    Predicate,
    SetPredicate,
    StartsWith,
    Unknown,
    and_,
    format_literal,
    not_,
    or_,
)
from icefloe.core.types import (
    BinaryType, BooleanType, ByteType, DateType, DecimalType, FixedType, FloatType, IcebergType, IntegerType, ListType,
    LongType, MapType, NestedField, Schema, ShortType, StructType, TimestampType, TimestamptzType, TimeType, UUIDType,
    is_floating, is_plain_string,
)
from icefloe.core.values import to_internal
from icefloe.errors import ExpressionError
from icefloe.core.types import PRIMITIVES_BY_NAME

# =========================================================================== binding
INT_MIN, INT_MAX = -(2 ** 31), 2 ** 31 - 1
LONG_MIN, LONG_MAX = -(2 ** 63), 2 ** 63 - 1
INTEGER_RANGES: dict[IcebergType, tuple[int, int]] = {
    ByteType(): (-(2 ** 7), 2 ** 7 - 1), ShortType(): (-(2 ** 15), 2 ** 15 - 1),
    IntegerType(): (INT_MIN, INT_MAX), LongType(): (LONG_MIN, LONG_MAX)}
US_PER_DAY = 86_400_000_000


@dataclass
class _Field:
    path: str
    field: NestedField
    repeated: bool  # inside a list or a map


def _fields(schema: Schema) -> list[_Field]:
    out: list[_Field] = []

    def walk(t: IcebergType, prefix: str, repeated: bool):
        if isinstance(t, StructType):
            for f in t.fields:
                p = f"{prefix}.{f.name}" if prefix else f.name
                out.append(_Field(p, f, repeated))
                walk(f.field_type, p, repeated)
        elif isinstance(t, ListType):
            f = t.element_field
            p = f"{prefix}.element"
            out.append(_Field(p, f, True))
            walk(t.element_type, p, True)
        elif isinstance(t, MapType):
            for f in (t.key_field, t.value_field):
                p = f"{prefix}.{f.name}"
                out.append(_Field(p, f, True))
                walk(f.field_type, p, True)

    walk(schema.struct, "", False)
    return out


class _Resolver:
    def __init__(self, schema: Schema, case_sensitive: bool):
        self.schema = schema
        self.case_sensitive = case_sensitive
        self.fields = _fields(schema)
        self.by_path = {f.path: f for f in self.fields}
        self.by_lower: dict[str, list[_Field]] = {}
        for f in self.fields:
            self.by_lower.setdefault(f.path.lower(), []).append(f)
        self.by_id = {f.field.field_id: f for f in self.fields}

    def known(self) -> str:
        names = [f.path for f in self.fields if not f.repeated]
        return ", ".join(names) if names else "(none)"

    def resolve(self, name: str) -> BoundReference:
        f = self.by_path.get(name)
        if f is None and not self.case_sensitive:
            cands = self.by_lower.get(name.lower(), [])
            if len(cands) > 1:
                raise ExpressionError(f"column {name!r} is ambiguous: matches "
                                      f"{', '.join(c.path for c in cands)}")
            f = cands[0] if cands else None
        if f is None:
            raise ExpressionError(f"no column {name!r} in the table; columns are {self.known()}")
        if f.repeated:
            raise ExpressionError(f"column {name!r} is inside a list or map and cannot be "
                                  "used in a filter")
        return BoundReference(f.field.field_id, f.path, f.field.field_type)

    def check(self, ref: BoundReference) -> BoundReference:
        if ref.field_id not in self.by_id:
            raise ExpressionError(f"no field with id {ref.field_id} ({ref.name!r}) in the table; "
                                  f"columns are {self.known()}")
        return ref


def bind(expr: Expr, schema: Schema, case_sensitive: bool = False) -> Expr:
    """Resolve column names to fields and convert literals to internal values.

    Names match case-insensitively by default (an exact match wins); dotted
    names reach struct fields. Literals are converted to the column's type the
    way Spark compares them: strings compared with date/timestamp columns are
    parsed as ISO dates/timestamps (naive timestamps are UTC for timestamptz
    columns), numeric literals that an int/long/decimal column cannot hold
    exactly are rounded into an equivalent comparison (``i < 1.5`` becomes
    ``i <= 1``), comparisons with NaN become NaN tests. Comparisons whose
    meaning depends on a conversion the AST cannot express become ``Unknown``.

    Raises :class:`ExpressionError` for an unknown column (naming the
    columns) or a literal that cannot be compared with the column's type.
    """
    return _bind(expr, _Resolver(schema, case_sensitive))


def _bind(e: Expr, r: _Resolver) -> Expr:
    if isinstance(e, And):
        return and_(_bind(e.left, r), _bind(e.right, r))
    if isinstance(e, Or):
        return or_(_bind(e.left, r), _bind(e.right, r))
    if isinstance(e, Not):
        return not_(_bind(e.child, r))
    if isinstance(e, (AlwaysTrue, AlwaysFalse, AlwaysNull, Unknown)):
        return e
    if not isinstance(e, Predicate):
        raise ExpressionError(f"not an expression: {e!r}")
    if isinstance(e.term, BoundReference):
        r.check(e.term)
        return e
    ref = r.resolve(e.term.name)
    t = ref.field_type
    if isinstance(e, IsNull):
        return IsNull(ref)
    if isinstance(e, NotNull):
        return NotNull(ref)
    if isinstance(e, (IsNaN, NotNaN)):
        if is_floating(t):
            return type(e)(ref)
        if t in INTEGER_RANGES or isinstance(t, DecimalType):
            return AlwaysFalse() if isinstance(e, IsNaN) else AlwaysTrue()
        return Unknown(str(e))
    if isinstance(e, (StartsWith, NotStartsWith)):
        if is_plain_string(t) and isinstance(e.literal, str):
            return type(e)(ref, e.literal)
        if e.literal is None:
            return AlwaysNull()
        return Unknown(str(e))
    if isinstance(e, (LikeEqualTo, LikeNotEqualTo)):
        if is_plain_string(t) and isinstance(e.literal, str):
            return (EqualTo if isinstance(e, LikeEqualTo) else NotEqualTo)(ref, e.literal)
        return Unknown(str(e))
    if not t.is_primitive:
        raise ExpressionError(f"cannot compare column {ref.name!r} of type {t} with a value in {e}")
    if isinstance(e, (In, NotIn)):
        bound = _bind_in(e, ref)
        if isinstance(e, In) or isinstance(bound, Unknown):
            return bound
        if isinstance(bound, AlwaysFalse):  # no value can be in the list: any non-null row
            return NotNull(ref)
        return bound.negate()  # keeps AlwaysNull: NOT of this may be taken again
    if isinstance(e, LiteralPredicate):
        if e.literal is None:
            return AlwaysNull()  # a comparison with NULL is unknown, and so is its NOT
        return _bind_compare(e, ref)
    raise ExpressionError(f"cannot bind {e!r}")  # pragma: no cover


def _bind_in(e: SetPredicate, ref: BoundReference) -> Expr:
    vals: list[Any] = []
    nan = False
    has_null = False
    for lit in e.literals:
        if lit is None:
            has_null = True
            continue
        kind, v = _to_domain(ref, lit, e)
        if kind == "exact":
            vals.append(v)
        elif kind == "nan":
            nan = True
        elif kind == "unknown":
            return Unknown(str(e))
        # "between", "above", "below": can never be equal to a column value
    base = In(ref, vals) if vals else AlwaysFalse()
    if nan:
        base = or_(base, IsNaN(ref))
    # a NULL in the list makes every non-match unknown rather than false
    return or_(base, AlwaysNull()) if has_null else base


def _bind_compare(e: LiteralPredicate, ref: BoundReference) -> Expr:
    kind, v = _to_domain(ref, e.literal, e)
    op = e.op
    if kind == "exact":
        return type(e)(ref, v)
    if kind == "unknown":
        return Unknown(str(e))
    if kind == "nan":
        return {
            "=": lambda: IsNaN(ref), ">=": lambda: IsNaN(ref), ">": lambda: AlwaysFalse(),
            "<=": lambda: NotNull(ref),
            "<": lambda: And(NotNull(ref), NotNaN(ref)), "!=": lambda: And(NotNull(ref), NotNaN(ref)),
        }[op]()
    if kind == "above":  # the literal is above every value of the column
        return NotNull(ref) if op in ("<", "<=", "!=") else AlwaysFalse()
    if kind == "below":
        return NotNull(ref) if op in (">", ">=", "!=") else AlwaysFalse()
    # "between": the literal lies strictly between v and the next column value
    return {
        "=": lambda: AlwaysFalse(), "!=": lambda: NotNull(ref),
        "<": lambda: LessThanOrEqual(ref, v), "<=": lambda: LessThanOrEqual(ref, v),
        ">": lambda: GreaterThan(ref, v), ">=": lambda: GreaterThan(ref, v),
    }[op]()


def _to_domain(ref: BoundReference, lit: Any, e: Expr) -> tuple[str, Any]:
    """Place a literal in the column's value domain.

    Returns ``("exact", internal)``, ``("between", floor)`` (between floor and
    the next representable value), ``("above", None)``, ``("below", None)``,
    ``("nan", None)`` or ``("unknown", None)``. Raises ExpressionError when the
    literal cannot be compared with the column at all.
    """
    t = ref.field_type

    def bad(why: str = "") -> ExpressionError:
        return ExpressionError(f"cannot compare column {ref.name!r} of type {t} with "
                               f"{format_literal(lit)} in {e}{': ' + why if why else ''}")

    try:
        if isinstance(t, BooleanType):
            if isinstance(lit, bool):
                return "exact", lit
            if isinstance(lit, str) and lit.strip().lower() in ("true", "false"):
                return "exact", lit.strip().lower() == "true"
            raise bad()
        if t in INTEGER_RANGES:
            lo, hi = INTEGER_RANGES[t]
            num = _numeric(lit, bad)
            if isinstance(num, float):
                if math.isnan(num):
                    return "above", None  # NaN sorts above every number
                if math.isinf(num):
                    return ("above" if num > 0 else "below"), None
                if isinstance(t, LongType) and abs(num) >= 2.0 ** 53:
                    return "unknown", None  # Spark compares as double: rounding
                num = decimal.Decimal(num)
            return _discrete(num, lo, hi)
        if is_floating(t):
            if isinstance(lit, str):
                try:
                    f = to_float(lit)
                except ValueError:
                    raise bad() from None
            else:
                num = _numeric(lit, bad)
                if isinstance(t, FloatType) and isinstance(num, int):
                    f = float32(float(num))
                else:
                    f = float(num)
            if math.isnan(f):
                return "nan", None
            return "exact", f
        if isinstance(t, DecimalType):
            num = _numeric(lit, bad)
            if isinstance(num, float):
                return "unknown", None  # Spark compares decimal with double as double
            d = decimal.Decimal(num)
            unscaled = d.scaleb(t.scale)
            limit = 10 ** t.precision
            kind, u = _discrete(unscaled, -limit + 1, limit - 1)
            if kind in ("exact", "between"):
                return kind, decimal.Decimal(u).scaleb(-t.scale)
            return kind, None
        if isinstance(t, DateType):
            if isinstance(lit, _dt.datetime):
                us = to_internal(_ts_type(lit), lit)
                days, rem = divmod(us, US_PER_DAY)
                return ("exact" if rem == 0 else "between"), days
            if isinstance(lit, (_dt.date, str)):
                try:
                    return "exact", to_internal(t, to_date(lit))
                except ValueError as err:
                    raise bad(str(err)) from None
            raise bad()
        if t in (TimestampType(), TimestamptzType()):
            if isinstance(lit, str):
                try:
                    d = parse_datetime(lit)
                except ValueError:
                    raise bad("not an ISO timestamp") from None
                if d.tzinfo is not None and isinstance(t, TimestampType):
                    return "unknown", None  # an offset on a zone-less column: ambiguous
                return "exact", to_internal(t, d)
            if isinstance(lit, (_dt.datetime, _dt.date)):
                return "exact", to_internal(t, lit)
            raise bad()
        if t == TimeType():
            if isinstance(lit, str):
                try:
                    lit = _dt.time.fromisoformat(lit.strip())
                except ValueError:
                    raise bad("not an ISO time") from None
            if isinstance(lit, _dt.time):
                return "exact", to_internal(t, lit)
            raise bad()
        if is_plain_string(t):
            if isinstance(lit, str):
                return "exact", lit
            return "unknown", None  # Spark would cast the column: not a string comparison
        if isinstance(t, UUIDType):
            if isinstance(lit, _uuid.UUID):
                return "exact", lit
            if isinstance(lit, str):
                try:
                    return "exact", _uuid.UUID(lit.strip())
                except ValueError:
                    raise bad("not a UUID") from None
            if isinstance(lit, (bytes, bytearray)) and len(lit) == 16:
                return "exact", _uuid.UUID(bytes=bytes(lit))
            raise bad()
        if t == BinaryType() or isinstance(t, FixedType):
            if isinstance(lit, (bytes, bytearray)):
                return "exact", bytes(lit)
            if isinstance(lit, str):
                return "exact", lit.encode("utf-8")
            raise bad()
    except ExpressionError:
        raise
    except (TypeError, ValueError, ArithmeticError) as err:
        raise bad(str(err)) from None
    return "unknown", None


def _ts_type(v: _dt.datetime) -> IcebergType:
    return PRIMITIVES_BY_NAME["timestamptz" if v.tzinfo is not None else "timestamp"]


def _numeric(lit: object, bad: Callable[..., ExpressionError]) -> Union[int, decimal.Decimal, float]:
    """int, Decimal or float from a numeric literal or numeric string."""
    if isinstance(lit, bool):
        raise bad()
    if isinstance(lit, (int, decimal.Decimal, float)):
        return lit
    if isinstance(lit, str):
        s = lit.strip()
        try:
            d = decimal.Decimal(s)
        except decimal.InvalidOperation:
            raise bad("not a number") from None
        if d.is_nan():
            return math.nan
        if d.is_infinite():
            return math.inf if d > 0 else -math.inf
        return d
    raise bad()


def _discrete(num: Union[int, decimal.Decimal], lo: int, hi: int) -> tuple[str, Any]:
    """Place an int/Decimal on the integers in [lo, hi]."""
    if num > hi:
        return "above", None
    if num < lo:
        return "below", None
    if isinstance(num, int):
        return "exact", num
    fl = int(num.to_integral_value(rounding=decimal.ROUND_FLOOR))
    return ("exact" if fl == num else "between"), fl


