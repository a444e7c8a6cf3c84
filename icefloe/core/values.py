"""Logical values in their internal form, the same for both formats.

Dates are days since 1970-01-01, times and timestamps microseconds (since midnight, since
the epoch; an instant is UTC), decimals exact ``Decimal``s or their unscaled integers:
the forms Iceberg's single-value serialization and Paimon's BinaryRow both start from.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import re
import uuid as _uuid
from typing import Any

from icefloe.core.types import DecimalType, IcebergType

EPOCH_DATE = _dt.date(1970, 1, 1)
EPOCH_DT = _dt.datetime(1970, 1, 1)
EPOCH_DT_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_FRACTION = re.compile(r"\.(\d{1,9})")


def unscaled(value: "decimal.Decimal | float | int | str", scale: int) -> int:
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
    assert isinstance(exp, int)   # a finite decimal's exponent (the letters are NaN's and infinity's)
    with decimal.localcontext() as ctx:
        ctx.prec = max(ctx.prec, len(digits) + abs(exp) + abs(scale) + 2)
        return int(value.scaleb(scale).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def from_unscaled(n: int, scale: int) -> decimal.Decimal:
    """The Decimal with unscaled value ``n`` and exponent ``-scale``, built exactly."""
    digits = tuple(int(c) for c in str(abs(n)))
    return decimal.Decimal((1 if n < 0 else 0, digits, -scale))


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
            return _datetime_micros(value)
        if isinstance(value, _dt.date):
            return (value - EPOCH_DATE).days * 86_400_000_000
        return int(value)
    if s in ("timestamp_ns", "timestamptz_ns"):
        return to_nanos(value)
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
        return _uuid.UUID(bytes=value.tobytes() if isinstance(value, memoryview) else bytes(value))
    if s in ("tinyint", "smallint", "int", "long"):
        return int(value)
    if s in ("float", "double"):
        return float(value)
    return value


def to_nanos(value: Any) -> int:
    """A timestamp as nanoseconds since the epoch (format v3's ``_ns`` types): from an int (taken
    as nanoseconds), a pandas ``Timestamp`` or numpy ``datetime64`` (exact), an ISO string (up to
    nine fraction digits) or a ``datetime`` (microseconds); an aware value is taken as its instant."""
    if isinstance(value, int):
        return value
    if hasattr(value, "value") and hasattr(value, "nanosecond"):        # pandas Timestamp
        return int(value.value)
    if type(value).__name__ == "datetime64":
        import numpy as np

        return int(value.astype("datetime64[ns]").astype(np.int64))
    if isinstance(value, str):
        text = value.strip().replace(" ", "T", 1)
        frac = ""
        m = _FRACTION.search(text)
        if m:
            frac, text = m.group(1), text[:m.start()] + text[m.end():]
        whole = _dt.datetime.fromisoformat(text)
        return _datetime_micros(whole) * 1000 + int((frac + "000000000")[:9])
    if isinstance(value, _dt.datetime):
        return _datetime_micros(value) * 1000
    if isinstance(value, _dt.date):
        return (value - EPOCH_DATE).days * 86_400_000_000_000
    return int(value)


def _datetime_micros(value: _dt.datetime) -> int:
    delta = value - (EPOCH_DT if value.tzinfo is None else EPOCH_DT_UTC)
    return delta.days * 86_400_000_000 + delta.seconds * 1_000_000 + delta.microseconds


def nanos_to_datetime(ns: int, utc: bool = False) -> _dt.datetime:
    """Nanoseconds since the epoch as a ``datetime`` (its microseconds, floored)."""
    return micros_to_datetime(ns // 1000, utc)


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
