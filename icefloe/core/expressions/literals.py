"""Literal values of predicates read as numbers, dates and timestamps (timestamps without an offset are UTC)."""
from __future__ import annotations

import datetime as _dt
import math
import re
import struct
from typing import Any

from icefloe.errors import NotLiteral


def to_float(v: Any) -> float:
    if isinstance(v, bool):
        raise ValueError("a boolean is not a number")
    if isinstance(v, str):
        s = v.strip()
        low = s.lower()
        if low in ("nan",):
            return math.nan
        if low in ("inf", "infinity", "+inf", "+infinity"):
            return math.inf
        if low in ("-inf", "-infinity"):
            return -math.inf
        return float(s)
    return float(v)


def float32(f: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", f))[0]
    except OverflowError:
        return math.copysign(math.inf, f)


def to_date(v: object) -> _dt.date:
    if isinstance(v, _dt.datetime):
        return v.date()
    if isinstance(v, _dt.date):
        return v
    if isinstance(v, str):
        s = v.strip()
        try:
            return _dt.date.fromisoformat(s)
        except ValueError:
            pass
        if len(s) > 10 and s[10] in "T ":  # Spark's string->date keeps the date part
            return _dt.date.fromisoformat(s[:10])
        raise ValueError(f"invalid date {v!r}")
    raise ValueError(f"cannot convert {v!r} to a date")


FRACTION = re.compile(r"^(.*[T ]\d{2}:\d{2}:\d{2})\.(\d{1,6})(.*)$")


def parse_datetime(text: str) -> _dt.datetime:
    """ISO date or timestamp: ``2023-01-01``, ``2023-01-01 10:00:00.5``, ``...T10:00Z``, offsets."""
    s = text.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    m = FRACTION.match(s)
    if m:  # Python < 3.11 only reads 3 or 6 fraction digits
        s = f"{m.group(1)}.{m.group(2).ljust(6, '0')}{m.group(3)}"
    return _dt.datetime.fromisoformat(s)


def to_timestamp(v: object, utc: bool) -> _dt.datetime:
    """TIMESTAMP literals become aware (UTC when no offset); TIMESTAMP_NTZ naive."""
    if isinstance(v, str):
        s = v.strip()
        try:
            d = parse_datetime(s)
        except ValueError:
            raise ValueError(f"invalid timestamp {v!r}") from None
    elif isinstance(v, _dt.datetime):
        d = v
    elif isinstance(v, _dt.date):
        d = _dt.datetime(v.year, v.month, v.day)
    else:
        raise ValueError(f"cannot convert {v!r} to a timestamp")
    if utc:
        return d.replace(tzinfo=_dt.timezone.utc) if d.tzinfo is None else d
    if d.tzinfo is not None:
        raise NotLiteral()
    return d
