"""Single-value serialization (Iceberg spec, Appendix D) and value helpers.

Bounds in manifests and partition summaries in manifest lists are stored as
bytes in this encoding: little-endian fixed-width numbers, UTF-8 strings,
big-endian two's-complement unscaled decimals, big-endian UUIDs.

Python values used throughout the Iceberg package ("internal values"):
int for int/long/date (days)/time (us)/timestamp(tz) (us), float, bool, str,
bytes for binary/fixed, uuid.UUID, decimal.Decimal.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import math
import struct
import uuid as _uuid
from typing import Any

from icefloe.core.types import DecimalType, IcebergType

EPOCH_DATE = _dt.date(1970, 1, 1)
EPOCH_DT = _dt.datetime(1970, 1, 1)
EPOCH_DT_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def to_bytes(t: IcebergType, value: Any) -> bytes:
    s = str(t)
    if s == "boolean":
        return b"\x01" if value else b"\x00"
    if s in ("int", "date"):
        return struct.pack("<i", value)
    if s in ("long", "time", "timestamp", "timestamptz"):
        return struct.pack("<q", value)
    if s == "float":
        return struct.pack("<f", value)
    if s == "double":
        return struct.pack("<d", value)
    if s == "string":
        return value.encode("utf-8")
    if s == "uuid":
        if isinstance(value, str):
            value = _uuid.UUID(value)
        return value.bytes if isinstance(value, _uuid.UUID) else bytes(value)
    if isinstance(t, DecimalType):
        return decimal_to_bytes(value, t.scale)
    # binary, fixed[L]
    return bytes(value)


def from_bytes(t: IcebergType, data: bytes) -> Any:
    s = str(t)
    if s == "boolean":
        return data != b"\x00"
    if s in ("int", "date"):
        return struct.unpack("<i", data)[0]
    if s in ("long", "time", "timestamp", "timestamptz"):
        # Spec: a long bound may be stored as 4 bytes when promoted from int.
        return struct.unpack("<q", data)[0] if len(data) == 8 else struct.unpack("<i", data)[0]
    if s == "float":
        return struct.unpack("<f", data)[0]
    if s == "double":
        return struct.unpack("<d", data)[0] if len(data) == 8 else struct.unpack("<f", data)[0]
    if s == "string":
        return data.decode("utf-8")
    if s == "uuid":
        return _uuid.UUID(bytes=bytes(data))
    if isinstance(t, DecimalType):
        return from_unscaled(int.from_bytes(data, "big", signed=True), t.scale)
    return bytes(data)


def unscaled(value: decimal.Decimal, scale: int) -> int:
    """The unscaled integer of ``value`` at ``scale`` (``12.34``, 2 -> ``1234``).

    Exact for any number of digits: the arithmetic runs in a context wide enough
    for the value, not in the default 28-digit context (which would silently
    round decimal(38, s) values). Extra fraction digits round half-even.
    """
    if not isinstance(value, decimal.Decimal):
        value = decimal.Decimal(str(value)) if isinstance(value, float) else decimal.Decimal(value)
    if not value.is_finite():
        raise ValueError(f"cannot store non-finite decimal {value}")
    _sign, digits, exp = value.as_tuple()
    with decimal.localcontext() as ctx:
        ctx.prec = max(ctx.prec, len(digits) + abs(exp) + abs(scale) + 2)
        return int(value.scaleb(scale).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def from_unscaled(n: int, scale: int) -> decimal.Decimal:
    """The Decimal with unscaled value ``n`` and exponent ``-scale``, built exactly."""
    digits = tuple(int(c) for c in str(abs(n)))
    return decimal.Decimal((1 if n < 0 else 0, digits, -scale))


def decimal_to_bytes(value: decimal.Decimal, scale: int) -> bytes:
    return min_bytes_signed(unscaled(value, scale))


def min_bytes_signed(n: int) -> bytes:
    """Minimal two's-complement big-endian bytes of ``n`` (at least one byte)."""
    length = max(1, (n + (n < 0)).bit_length() // 8 + 1)
    return n.to_bytes(length, "big", signed=True)


# ------------------------------------------------------------------ python <-> internal
def to_internal(t: IcebergType, value: Any) -> Any:
    """Convert a user-facing Python value (datetime, date, Decimal...) to its internal form."""
    if value is None:
        return None
    s = str(t)
    if s == "date":
        if isinstance(value, _dt.datetime):
            value = value.date()
        if isinstance(value, _dt.date):
            return (value - EPOCH_DATE).days
        if isinstance(value, str):
            return (_dt.date.fromisoformat(value) - EPOCH_DATE).days
        return int(value)
    if s in ("timestamp", "timestamptz"):
        if isinstance(value, str):
            value = _dt.datetime.fromisoformat(value)
        if isinstance(value, _dt.datetime):
            if value.tzinfo is None:
                delta = value - EPOCH_DT
            else:
                delta = value - EPOCH_DT_UTC
            return delta.days * 86_400_000_000 + delta.seconds * 1_000_000 + delta.microseconds
        if isinstance(value, _dt.date):
            return (value - EPOCH_DATE).days * 86_400_000_000
        return int(value)
    if s == "time":
        if isinstance(value, str):
            value = _dt.time.fromisoformat(value)
        if isinstance(value, _dt.time):
            return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        return int(value)
    if isinstance(t, DecimalType):
        return decimal.Decimal(value) if not isinstance(value, decimal.Decimal) else value
    if s == "uuid" and isinstance(value, str):
        return _uuid.UUID(value)
    if s == "uuid" and isinstance(value, (bytes, bytearray, memoryview)):
        # Arrow and Avro carry uuids as 16 big-endian bytes (fixed_size_binary(16) / fixed[16])
        return _uuid.UUID(bytes=bytes(value))
    if s in ("int", "long"):
        return int(value)
    if s in ("float", "double"):
        return float(value)
    return value


def micros_to_datetime(us: int, utc: bool = False) -> _dt.datetime:
    base = EPOCH_DT_UTC if utc else EPOCH_DT
    return base + _dt.timedelta(microseconds=us)


def days_to_date(days: int) -> _dt.date:
    return EPOCH_DATE + _dt.timedelta(days=days)


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of the proleptic Gregorian date ``days`` after 1970-01-01.

    Pure integer arithmetic, so it works for every int/long day count, also
    outside Python's ``datetime`` range of years 1..9999. Days are grouped in
    400-year eras of 146097 days that start on a March 1st (so the leap day is
    the last day of an era-year); floor division keeps negative days correct.
    """
    z = days + 719468  # days from 0000-03-01 to 1970-01-01
    era = z // 146097
    doe = z - era * 146097  # day of era, 0..146096
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365  # year of era, 0..399
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)  # day of the March-based year, 0..365
    mp = (5 * doy + 2) // 153  # March-based month, 0..11
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


def human_string(t: IcebergType, value: Any) -> str:
    """The spec's human-readable form of a value, used in partition paths."""
    if value is None:
        return "null"
    s = str(t)
    if s == "date":
        return days_to_date(value).isoformat()
    if s == "timestamp":
        return micros_to_datetime(value).isoformat(timespec="microseconds")
    if s == "timestamptz":
        return micros_to_datetime(value, utc=True).isoformat(timespec="microseconds")
    if s == "time":
        return (_dt.datetime.min + _dt.timedelta(microseconds=value)).time().isoformat()
    if s in ("binary",) or s.startswith("fixed"):
        import base64

        return base64.b64encode(bytes(value)).decode()
    if s == "boolean":
        return "true" if value else "false"
    if s in ("float", "double") and isinstance(value, float) and math.isnan(value):
        return "NaN"
    return str(value)
