# pyright: strict
"""Where data files live: ``<table>/<k1>=<v1>/<k2>=<v2>/bucket-<N>/<file>``.

A partition value becomes a directory name the way Java Paimon spells it. With
``partition.legacy-name = true`` (the default) that is Java's ``toString`` of
the internal value: a DATE is its day number (``19723``), a TIMESTAMP is a
``LocalDateTime`` string (``2024-01-01T10:00``). Otherwise values are cast to
strings (``2024-01-01``, ``2024-01-01 10:00:00``). A null or blank value is
``partition.default-name`` (``__DEFAULT_PARTITION__``). Keys and values are
escaped like Hive paths (``%XX`` for ``/ = : % # ? * ' " \\ { } [ ] ^`` and
control characters).

Readers never parse these names: they rebuild the path from the partition
BinaryRow in the manifest, so writers and readers must agree on this function.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import math
from typing import Any, Sequence

from icefloe.errors import SchemaError
from icefloe.core.types import IcebergType, precision_of
from icefloe.paimon.types import root as root_of

_ESCAPE = set("\"#%'*/:=?\\{}[]^")
_EPOCH_DATE = _dt.date(1970, 1, 1)


def escape_path_name(s: str) -> str:
    return "".join(f"%{ord(c):02X}" if ord(c) < 32 or ord(c) == 127 or c in _ESCAPE else c for c in s)


def java_double_string(v: float, single: bool = False) -> str:
    """Java's ``Double.toString`` / ``Float.toString`` for the shortest round-trip digits."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    if single:
        import numpy as np

        digits = np.format_float_positional(np.float32(v), unique=True, trim="-")
        d = decimal.Decimal(digits)
    else:
        d = decimal.Decimal(repr(v))
    if decimal.Decimal("0.001") <= abs(d) < decimal.Decimal("1e7"):
        text = format(d, "f")
        if "." not in text:
            text += ".0"
        else:
            text = text.rstrip("0")
            if text.endswith("."):
                text += "0"
        return text
    sign, digs, exp = d.normalize().as_tuple()
    assert isinstance(exp, int)   # a finite decimal's exponent (the letters are NaN's and infinity's)
    digs = "".join(map(str, digs))
    exponent = exp + len(digs) - 1
    mantissa = digs[0] + "." + (digs[1:] or "0")
    return f"{'-' if sign else ''}{mantissa}E{exponent}"


def _local_date_time_string(v: _dt.datetime) -> str:
    """``java.time.LocalDateTime.toString()``."""
    text = v.strftime("%Y-%m-%dT%H:%M")
    if v.second or v.microsecond:
        text += f":{v.second:02d}"
        if v.microsecond:
            text += f".{v.microsecond // 1000:03d}" if v.microsecond % 1000 == 0 else f".{v.microsecond:06d}"
    return text


def _cast_timestamp_string(v: _dt.datetime, precision: int) -> str:
    text = v.strftime("%Y-%m-%d %H:%M:%S")
    fraction = f"{v.microsecond * 1000:09d}"
    while len(fraction) > precision and fraction.endswith("0"):
        fraction = fraction[:-1]
    return text + ("." + fraction if fraction else "")


def partition_value_string(value: Any, t: IcebergType, legacy: bool = True) -> str:
    """The directory spelling of one non-null partition value."""
    r = root_of(t)
    if r == "BOOLEAN":
        return "true" if value else "false"
    if r in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
        return str(int(value))
    if r in ("FLOAT", "DOUBLE"):
        return java_double_string(float(value), single=(r == "FLOAT"))
    if r in ("CHAR", "VARCHAR"):
        return str(value)
    if r == "DECIMAL":
        return format(value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value)), "f")
    if r == "DATE":
        d = value.date() if isinstance(value, _dt.datetime) else value
        return str((d - _EPOCH_DATE).days) if legacy else d.isoformat()
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        v = value
        if r == "TIMESTAMP_LTZ" and v.tzinfo is not None:
            v = v.astimezone(_dt.timezone.utc)
            if not legacy:
                v = v.astimezone()  # Java casts LTZ with the JVM's default time zone
        v = v.replace(tzinfo=None)
        return _local_date_time_string(v) if legacy else _cast_timestamp_string(v, precision_of(t))
    raise SchemaError(f"{t} values cannot be used as partition values")


def partition_path(keys: Sequence[str], types: Sequence[IcebergType], values: Sequence[Any],
                   default_name: str = "__DEFAULT_PARTITION__", legacy: bool = True) -> str:
    """``k1=v1/k2=v2`` (empty for an unpartitioned table)."""
    parts: list[str] = []
    for k, t, v in zip(keys, types, values):
        if v is None or (isinstance(v, str) and (v == "" or v.isspace())):
            text = default_name
        else:
            text = partition_value_string(v, t, legacy)
        parts.append(f"{escape_path_name(k)}={escape_path_name(text)}")
    return "/".join(parts)


def bucket_path(table_path: str, partition_rel: str, bucket: int) -> str:
    """The directory of a bucket; bucket-unaware tables use ``bucket-0``."""
    b = 0 if bucket < 0 else bucket
    return f"{table_path}/{partition_rel + '/' if partition_rel else ''}bucket-{b}"
