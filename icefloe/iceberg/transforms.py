# pyright: strict
"""Partition transforms (Iceberg spec, "Partition Transforms").

Each transform is a pure function on internal values (see conversions.py),
with an Arrow-vectorised twin used by the Arrow write path. Time transforms
count whole units since 1970-01-01 and round toward negative infinity, so a
value before 1970 lands in the earlier unit.
"""
from __future__ import annotations

import math
import re
import struct
import uuid as _uuid
from typing import TYPE_CHECKING, Any

import mmh3

from icefloe.core.types import (
    PRIMITIVES_BY_NAME, DecimalType, IcebergType,
)
from icefloe.errors import UnknownTransformError
from icefloe.iceberg import conversions
from icefloe.core.types import (
    BinaryType, BooleanType, DateType, IntegerType, LongType, StringType, TimeType, TimestampType, TimestamptzType, UUIDType, VariantType,
    is_floating, is_integral, is_micros, is_nanos, is_plain_string, to_arrow_type,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

US_PER_HOUR = 3_600_000_000
US_PER_DAY = 86_400_000_000

INT = PRIMITIVES_BY_NAME["int"]
DATE = PRIMITIVES_BY_NAME["date"]


# ------------------------------------------------------------------ murmur3 (bucket)
_CANONICAL_NAN_BITS = struct.pack("<q", 0x7FF8000000000000)
_NANOS = (TimestampType(9), TimestamptzType(9))       # format v3: nanoseconds since the epoch


def _hash_bytes(t: IcebergType, v: Any) -> bytes:
    """The bytes the spec hashes for a value (Appendix B)."""
    if is_integral(t) or isinstance(t, DateType) or is_micros(t):
        return struct.pack("<q", v)  # ints hash as 8-byte longs so promotion keeps buckets
    if is_nanos(t):
        return struct.pack("<q", v // 1000)  # hashed as microseconds, as the microsecond types
    if is_plain_string(t):
        return v.encode("utf-8")
    if isinstance(t, UUIDType):
        if isinstance(v, str):
            v = _uuid.UUID(v)
        return v.bytes if isinstance(v, _uuid.UUID) else bytes(v)  # 16 bytes, big endian
    if isinstance(t, DecimalType):
        return conversions.min_bytes_signed(conversions.unscaled(v, t.scale))
    if isinstance(t, BooleanType):
        return struct.pack("<q", 1 if v else 0)
    if is_floating(t):
        # doubleToLongBits of the value as a double; NaN canonical, -0.0 as 0.0
        f = float(v)
        if math.isnan(f):
            return _CANONICAL_NAN_BITS
        return struct.pack("<d", 0.0 if f == 0.0 else f)
    return bytes(v)  # binary, fixed[L]


def murmur3_hash(t: IcebergType, v: Any) -> int:
    """32-bit signed murmur3 (x86, seed 0) of a value's spec hash bytes."""
    return mmh3.hash(_hash_bytes(t, v), 0, signed=True)


# ------------------------------------------------------------------ transforms
class Transform:
    name = ""

    def result_type(self, source: IcebergType) -> IcebergType:
        return source

    def can_transform(self, source: IcebergType) -> bool:
        return not isinstance(source, VariantType)          # a variant has no order and no equality to partition by

    def apply(self, source: IcebergType, v: Any) -> Any:
        raise NotImplementedError

    def human(self, source: IcebergType, v: Any) -> str:
        return conversions.human_string(self.result_type(source), v)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Transform({self})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Transform) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    @property
    def preserves_order(self) -> bool:
        return False


class IdentityTransform(Transform):
    name = "identity"

    def apply(self, source: IcebergType, v: Any) -> Any:
        return v

    @property
    def preserves_order(self) -> bool:
        return True


class VoidTransform(Transform):
    name = "void"

    def apply(self, source: IcebergType, v: Any) -> Any:
        return None


class BucketTransform(Transform):
    def __init__(self, n: int):
        if n <= 0:
            raise UnknownTransformError(f"bucket count must be positive, got {n}")
        self.num_buckets = n

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"bucket[{self.num_buckets}]"

    def result_type(self, source: IcebergType) -> IcebergType:
        return INT

    def can_transform(self, source: IcebergType) -> bool:
        return not (isinstance(source, BooleanType) or is_floating(source))

    def apply(self, source: IcebergType, v: Any) -> Any:
        if v is None:
            return None
        return (murmur3_hash(source, v) & 0x7FFFFFFF) % self.num_buckets


def _wrap(n: int, bits: int) -> int:
    """``n`` as a two's-complement integer of ``bits`` bits (Java int/long overflow)."""
    half = 1 << (bits - 1)
    return ((n + half) % (1 << bits)) - half


class TruncateTransform(Transform):
    def __init__(self, width: int):
        if width <= 0:
            raise UnknownTransformError(f"truncate width must be positive, got {width}")
        self.width = width

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"truncate[{self.width}]"

    def can_transform(self, source: IcebergType) -> bool:
        return source in (IntegerType(), LongType(), StringType(), BinaryType()) or isinstance(source, DecimalType)

    def apply(self, source: IcebergType, v: Any) -> Any:
        if v is None:
            return None
        w = self.width
        if is_integral(source):
            # Python's % is already non-negative for w > 0 (the spec's "positive remainder").
            # Near the type's minimum the result leaves the type's range; wrap it as the
            # Java reference implementation's int/long arithmetic does.
            return _wrap(v - v % w, 32 if isinstance(source, IntegerType) else 64)
        if isinstance(source, DecimalType):
            u = conversions.unscaled(v, source.scale)
            return conversions.from_unscaled(u - u % w, source.scale)
        if is_plain_string(source):
            return v[:w]  # Python str slices by code point, as the spec requires
        return bytes(v)[:w]

    @property
    def preserves_order(self) -> bool:
        return True


class _TimeTransform(Transform):
    sources: tuple[IcebergType, ...] = ()     # the source types (each subclass's)

    def can_transform(self, source: IcebergType) -> bool:
        return source in self.sources

    @property
    def preserves_order(self) -> bool:
        return True


def _micros(source: IcebergType, v: int) -> int:
    """A timestamp value in microseconds (the ``_ns`` types hold nanoseconds), floored."""
    return v // 1000 if is_nanos(source) else v


def _days(source: IcebergType, v: int) -> int:
    return v if isinstance(source, DateType) else _micros(source, v) // US_PER_DAY


class YearTransform(_TimeTransform):
    name = "year"
    sources = (DateType(), TimestampType(), TimestamptzType()) + _NANOS

    def result_type(self, source: IcebergType) -> IcebergType:
        return INT

    def apply(self, source: IcebergType, v: Any) -> Any:
        if v is None:
            return None
        return conversions.civil_from_days(_days(source, v))[0] - 1970

    def human(self, source: IcebergType, v: Any) -> str:
        return "null" if v is None else f"{1970 + v:04d}"


class MonthTransform(_TimeTransform):
    name = "month"
    sources = (DateType(), TimestampType(), TimestamptzType()) + _NANOS

    def result_type(self, source: IcebergType) -> IcebergType:
        return INT

    def apply(self, source: IcebergType, v: Any) -> Any:
        if v is None:
            return None
        year, month, _day = conversions.civil_from_days(_days(source, v))
        return (year - 1970) * 12 + (month - 1)

    def human(self, source: IcebergType, v: Any) -> str:
        if v is None:
            return "null"
        y, m = divmod(v, 12)
        return f"{1970 + y:04d}-{m + 1:02d}"


class DayTransform(_TimeTransform):
    name = "day"
    sources = (DateType(), TimestampType(), TimestamptzType()) + _NANOS

    def result_type(self, source: IcebergType) -> IcebergType:
        return DATE

    def apply(self, source: IcebergType, v: Any) -> Any:
        if v is None:
            return None
        return _days(source, v)

    def human(self, source: IcebergType, v: Any) -> str:
        if v is None:
            return "null"
        y, m, d = conversions.civil_from_days(v)
        return f"{y:04d}-{m:02d}-{d:02d}"


class HourTransform(_TimeTransform):
    name = "hour"
    sources = (TimestampType(), TimestamptzType()) + _NANOS

    def result_type(self, source: IcebergType) -> IcebergType:
        return INT

    def apply(self, source: IcebergType, v: Any) -> Any:
        if v is None:
            return None
        return _micros(source, v) // US_PER_HOUR

    def human(self, source: IcebergType, v: Any) -> str:
        if v is None:
            return "null"
        # not strftime: its %Y does not zero-pad years before 1000 on glibc
        days, hour = divmod(v, 24)
        y, m, d = conversions.civil_from_days(days)
        return f"{y:04d}-{m:02d}-{d:02d}-{hour:02d}"


_BUCKET_RE = re.compile(r"^bucket\[(\d+)\]$")
_TRUNC_RE = re.compile(r"^truncate\[(\d+)\]$")


def parse_transform(text: str) -> Transform:
    """Parse the spec's transform string (``identity``, ``bucket[16]``, ``year``...)."""
    s = text.strip().lower()
    simple = {"identity": IdentityTransform, "void": VoidTransform, "year": YearTransform,
              "month": MonthTransform, "day": DayTransform, "hour": HourTransform}
    if s in simple:
        return simple[s]()
    m = _BUCKET_RE.match(s)
    if m:
        return BucketTransform(int(m.group(1)))
    m = _TRUNC_RE.match(s)
    if m:
        return TruncateTransform(int(m.group(1)))
    raise UnknownTransformError(
        f"unknown partition transform {text!r}; expected identity, bucket[N], truncate[W], "
        "year, month, day, hour or void")


# Spark SQL spellings: years(ts), months(ts), days(ts), hours(ts), bucket(16, id), truncate(10, s)
_CALL_RE = re.compile(r"^\s*([A-Za-z_]+)\s*\((.*)\)\s*$", re.S)
_PLAIN_COL_RE = re.compile(r"^[A-Za-z_][\w.]*$")
_INT_RE = re.compile(r"^[+-]?\d+$")
_ONE_COLUMN = {
    "year": YearTransform, "years": YearTransform,
    "month": MonthTransform, "months": MonthTransform,
    "day": DayTransform, "days": DayTransform, "date": DayTransform,
    "hour": HourTransform, "hours": HourTransform, "date_hour": HourTransform,
    "identity": IdentityTransform, "void": VoidTransform,
}
_EXPECTED = ("expected a column, years(col), months(col), days(col), hours(col), "
             "bucket(N, col) or truncate(W, col)")


def _column_name(text: str, expr: str) -> str:
    """A column reference: a plain name (``ts``, ``a.b``) or a backtick-quoted one (any characters)."""
    t = text.strip()
    if len(t) >= 2 and t.startswith("`") and t.endswith("`"):
        inner = t[1:-1].replace("``", "`")
        if inner:
            return inner
    elif _PLAIN_COL_RE.match(t):
        return t
    raise UnknownTransformError(f"cannot parse partition term {expr!r}: {text.strip()!r} is not a column "
                                f"name; {_EXPECTED}")


def parse_partition_expr(expr: object) -> tuple[Transform, str]:
    """Parse one ``PARTITIONED BY`` term into (transform, source column name).

    Raises :class:`UnknownTransformError` naming the term for anything else.
    """
    if not isinstance(expr, str) or not expr.strip():
        raise UnknownTransformError(f"empty partition term {expr!r}; {_EXPECTED}")
    m = _CALL_RE.match(expr)
    if not m:
        return IdentityTransform(), _column_name(expr, expr)
    fn = m.group(1).lower()
    args = [a.strip() for a in m.group(2).split(",")]
    if fn in _ONE_COLUMN:
        if len(args) != 1 or not args[0]:
            raise UnknownTransformError(
                f"partition transform {expr!r} takes exactly one column, e.g. {fn}(ts)")
        return _ONE_COLUMN[fn](), _column_name(args[0], expr)
    if fn in ("bucket", "truncate"):
        if len(args) != 2:
            raise UnknownTransformError(
                f"partition transform {expr!r} takes a number and a column, e.g. {fn}(16, id)")
        # Spark's Iceberg DDL spells the number first; accept the column first as well.
        if _INT_RE.match(args[0]):
            n, col = args
        elif _INT_RE.match(args[1]):
            col, n = args
        else:
            raise UnknownTransformError(
                f"partition transform {expr!r} needs an integer {'bucket count' if fn == 'bucket' else 'width'}"
                f", e.g. {fn}(16, id)")
        try:
            t: Transform = BucketTransform(int(n)) if fn == "bucket" else TruncateTransform(int(n))
        except UnknownTransformError as e:
            raise UnknownTransformError(f"invalid partition term {expr!r}: {e}") from None
        return t, _column_name(col, expr)
    raise UnknownTransformError(f"unknown partition transform {expr!r}; {_EXPECTED}")


def default_field_name(t: Transform, source_name: str) -> str:
    """Partition field names as Spark's Iceberg integration names them (``ts_year``)."""
    if isinstance(t, IdentityTransform):
        return source_name
    if isinstance(t, BucketTransform):
        return f"{source_name}_bucket"
    if isinstance(t, TruncateTransform):
        return f"{source_name}_trunc"
    if isinstance(t, VoidTransform):
        return f"{source_name}_null"
    return f"{source_name}_{t.name}"


# ------------------------------------------------------------------ Arrow (vectorised)
_UNIT_PER_US = {"s": (1_000_000, 1), "ms": (1000, 1), "us": (1, 1), "ns": (1, 1000)}
_TEMPORAL = (DateType(), TimeType(), TimestampType(), TimestamptzType()) + _NANOS


def _arrow_ints(source: IcebergType, arr: Any) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Internal integer values of an int/long/date/time/timestamp Arrow array.

    Returns (int64 numpy values with nulls as 0, numpy null mask). Dates become
    days; times and timestamps microseconds, floored (also from nanoseconds) so
    values before 1970 stay in the earlier unit, exactly as the scalar path.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    at = arr.type
    mask = np.asarray(pc.is_null(arr).to_numpy(zero_copy_only=False), dtype=bool)
    if pa.types.is_date64(at):
        ms = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        return np.floor_divide(ms, 86_400_000), mask
    if pa.types.is_date32(at):
        raw = arr.cast(pa.int32()).cast(pa.int64())
        unit = None
    elif pa.types.is_timestamp(at) or pa.types.is_time(at):
        raw = arr.cast(pa.int64())
        unit = at.unit
    else:
        raw = arr.cast(pa.int64())
        unit = "ns" if source in _NANOS else "us" if source in (TimeType(), TimestampType(), TimestamptzType()) else None
    vals = pc.fill_null(raw, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    if unit is not None:
        mul, div = _UNIT_PER_US[unit]
        if mul != 1:
            vals = vals * mul
        if div != 1:
            vals = np.floor_divide(vals, div)
    return vals, mask


def _civil_np(days: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Vectorised :func:`conversions.civil_from_days` (year, month) on int64 numpy days."""
    import numpy as np

    z = days.astype(np.int64) + 719468
    era = np.floor_divide(z, 146097)
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year, month


def apply_arrow(t: Transform, source: IcebergType, arr: Any) -> Any:
    """Apply ``t`` to a pyarrow array of the source type.

    Returns an Arrow array of the result type whose values, read back with
    ``conversions.to_internal(t.result_type(source), v)``, equal the scalar
    ``t.apply(source, conversions.to_internal(source, v))`` value by value
    (nulls stay null). Identity returns ``arr`` itself; day returns date32.
    """
    import numpy as np
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    temporal = source in _TEMPORAL
    if isinstance(t, IdentityTransform):
        return arr
    if isinstance(t, VoidTransform):
        return pa.nulls(len(arr), type=pa.int32())
    if isinstance(t, (YearTransform, MonthTransform, DayTransform, HourTransform)) and temporal:
        vals, mask = _arrow_ints(source, arr)
        if isinstance(t, HourTransform):
            return pa.array(np.floor_divide(vals, US_PER_HOUR).astype(np.int32), type=pa.int32(), mask=mask)
        days = vals if isinstance(source, DateType) else np.floor_divide(vals, US_PER_DAY)
        if isinstance(t, DayTransform):
            return pa.array(days.astype(np.int32), type=pa.int32(), mask=mask).cast(pa.date32())
        year, month = _civil_np(days)
        if isinstance(t, YearTransform):
            out = year - 1970
        else:
            out = (year - 1970) * 12 + (month - 1)
        return pa.array(out.astype(np.int32), type=pa.int32(), mask=mask)
    if isinstance(t, TruncateTransform) and is_integral(source):
        vals, mask = _arrow_ints(source, arr)
        w = t.width
        # numpy's % is a floor modulo (non-negative for w > 0); int64 arithmetic wraps
        # like Java's long, and the int32 cast wraps like Java's int.
        with np.errstate(over="ignore"):
            out = vals - np.mod(vals, w)
        if isinstance(source, IntegerType):
            return pa.array(out.astype(np.int32), type=pa.int32(), mask=mask)
        return pa.array(out, type=pa.int64(), mask=mask)
    if isinstance(t, TruncateTransform) and is_plain_string(source):
        import pyarrow.compute as pc

        # slices by code points (not bytes), as the spec requires
        return pc.utf8_slice_codeunits(arr, 0, t.width)
    if isinstance(t, BucketTransform) and (is_integral(source) or temporal):
        vals, mask = _arrow_ints(source, arr)
        packed = vals.astype("<i8").tobytes()
        n = t.num_buckets
        out = [None if mask[i] else (mmh3.hash(packed[8 * i:8 * i + 8], 0, signed=True) & 0x7FFFFFFF) % n
               for i in range(len(vals))]
        return pa.array(out, type=pa.int32())
    # bucket of strings/uuids/decimals/binary, decimal/binary truncate: per value
    vals = [t.apply(source, conversions.to_internal(source, x)) for x in arr.to_pylist()]
    rt = t.result_type(source)
    if isinstance(rt, UUIDType):
        vals = [None if v is None else v.bytes for v in vals]
    at = to_arrow_type(rt)
    if isinstance(rt, DecimalType):
        # truncating next to the precision's bound can add a digit (decimal(2, 0): -99 ->
        # -100 with W=10); carry such values in a wider Arrow decimal instead of failing
        limit = 10 ** rt.precision
        if any(v is not None and abs(conversions.unscaled(v, rt.scale)) >= limit for v in vals):
            at = pa.decimal128(38, rt.scale) if rt.precision < 38 else pa.decimal256(76, rt.scale)
    return pa.array(vals, type=at)
