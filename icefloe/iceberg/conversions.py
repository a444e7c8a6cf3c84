# pyright: strict
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

from icefloe.core.types import (
    BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType, IcebergType, IntegerType,
    LongType, StringType, TimestamptzType, TimeType, UUIDType, is_floating, is_micros, is_nanos,
)

# values in their internal form are shared with Paimon (core.values), importable from here too
# (the "as" names re-export them)
from icefloe.core.values import EPOCH_DATE as EPOCH_DATE  # noqa: E402
from icefloe.core.values import EPOCH_DT as EPOCH_DT  # noqa: E402
from icefloe.core.values import EPOCH_DT_UTC as EPOCH_DT_UTC  # noqa: E402
from icefloe.core.values import civil_from_days as civil_from_days  # noqa: E402
from icefloe.core.values import (  # noqa: E402
    days_to_date, from_unscaled, micros_to_datetime, nanos_to_datetime, to_nanos, unscaled,
)
from icefloe.core.values import to_internal as to_internal  # noqa: E402


def to_bytes(t: IcebergType, value: Any) -> bytes:
    if isinstance(t, BooleanType):
        return b"\x01" if value else b"\x00"
    if isinstance(t, (IntegerType, DateType)):
        return struct.pack("<i", value)
    if isinstance(t, LongType) or is_micros(t):
        return struct.pack("<q", value)
    if is_nanos(t):
        return struct.pack("<q", to_nanos(value))
    if isinstance(t, FloatType):
        return struct.pack("<f", value)
    if isinstance(t, DoubleType):
        return struct.pack("<d", value)
    if isinstance(t, StringType):
        return value.encode("utf-8")
    if isinstance(t, UUIDType):
        if isinstance(value, str):
            value = _uuid.UUID(value)
        return value.bytes if isinstance(value, _uuid.UUID) else bytes(value)
    if isinstance(t, DecimalType):
        return decimal_to_bytes(value, t.scale)
    # binary, fixed[L]
    return bytes(value)


def from_bytes(t: IcebergType, data: bytes) -> Any:
    if isinstance(t, BooleanType):
        return data != b"\x00"
    if isinstance(t, (IntegerType, DateType)):
        return struct.unpack("<i", data)[0]
    if isinstance(t, LongType) or is_micros(t) or is_nanos(t):
        # Spec: a long bound may be stored as 4 bytes when promoted from int.
        return struct.unpack("<q", data)[0] if len(data) == 8 else struct.unpack("<i", data)[0]
    if isinstance(t, FloatType):
        return struct.unpack("<f", data)[0]
    if isinstance(t, DoubleType):
        return struct.unpack("<d", data)[0] if len(data) == 8 else struct.unpack("<f", data)[0]
    if isinstance(t, StringType):
        return data.decode("utf-8")
    if isinstance(t, UUIDType):
        return _uuid.UUID(bytes=bytes(data))
    if isinstance(t, DecimalType):
        return from_unscaled(int.from_bytes(data, "big", signed=True), t.scale)
    return bytes(data)


def decimal_to_bytes(value: decimal.Decimal, scale: int) -> bytes:
    return min_bytes_signed(unscaled(value, scale))


def min_bytes_signed(n: int) -> bytes:
    """Minimal two's-complement big-endian bytes of ``n`` (at least one byte)."""
    length = max(1, (n + (n < 0)).bit_length() // 8 + 1)
    return n.to_bytes(length, "big", signed=True)


def human_string(t: IcebergType, value: Any) -> str:
    """The spec's human-readable form of a value, used in partition paths."""
    if value is None:
        return "null"
    if isinstance(t, DateType):
        return days_to_date(value).isoformat()
    if is_nanos(t):
        text = nanos_to_datetime(value).isoformat(timespec="seconds") + f".{value % 1_000_000_000:09d}"
        return text + ("+00:00" if isinstance(t, TimestamptzType) else "")
    if is_micros(t) and isinstance(t, TimeType):
        return (_dt.datetime.min + _dt.timedelta(microseconds=value)).time().isoformat()
    if is_micros(t):
        return micros_to_datetime(value, utc=isinstance(t, TimestamptzType)).isoformat(timespec="microseconds")
    if isinstance(t, (BinaryType, FixedType)):
        import base64

        return base64.b64encode(bytes(value)).decode()
    if isinstance(t, BooleanType):
        return "true" if value else "false"
    if is_floating(t) and isinstance(value, float) and math.isnan(value):
        return "NaN"
    return str(value)
