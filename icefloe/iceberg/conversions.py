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
        unscaled = int.from_bytes(data, "big", signed=True)
        return decimal.Decimal(unscaled).scaleb(-t.scale)
    return bytes(data)


def unscaled(value: decimal.Decimal, scale: int) -> int:
    return int(value.scaleb(scale).to_integral_value())


def decimal_to_bytes(value: decimal.Decimal, scale: int) -> bytes:
    n = unscaled(value, scale)
    length = max(1, (n + (n < 0)).bit_length() // 8 + 1)
    return n.to_bytes(length, "big", signed=True)


def min_bytes_signed(n: int) -> bytes:
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
        if isinstance(value, _dt.time):
            return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
        return int(value)
    if isinstance(t, DecimalType):
        return decimal.Decimal(value) if not isinstance(value, decimal.Decimal) else value
    if s == "uuid" and isinstance(value, str):
        return _uuid.UUID(value)
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
