# pyright: strict
"""Value statistics of a data file (``_VALUE_STATS``): min, max and null count per column.

The statistics cover the top-level columns of the schema in order (so
``_VALUE_STATS_COLS`` is null). Per ``metadata.stats-mode`` (default
``truncate(16)``): ``full`` keeps exact bounds; ``truncate(N)`` keeps a string's
first N characters as lower bound and, as upper bound, the first N characters
with the last one incremented (no upper bound if that is impossible);
``counts`` keeps only null counts; ``none`` records no statistics at all.
Nested columns (ROW, ARRAY, MAP) get no bounds. Floating point bounds are
dropped when a NaN was seen (a NaN makes min/max meaningless).

Two sources: an Arrow table (the Arrow writer) and a Parquet footer (files
Spark wrote); both end in ``value_stats``.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence, cast

from icefloe.core.parquet import string_upper_bound
from icefloe.core.types import IcebergType as DataType
from icefloe.core.types import scale_of
from icefloe.paimon.binary_row import encode_row
from icefloe.paimon.data_file import EMPTY_STATS, SimpleStats
from icefloe.paimon.types import DataField, root as root_of

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq


@dataclass
class ColumnStats:
    min: Any = None
    max: Any = None
    null_count: Optional[int] = None


def truncate_min(s: str, n: int) -> str:
    return s if len(s) <= n else s[:n]


def truncate_max(s: str, n: int) -> Optional[str]:
    """A string >= every string starting with ``s[:n]``, or None if there is none."""
    return string_upper_bound(s, n)


def apply_stats_mode(col: ColumnStats, t: DataType, mode: str, truncate: Optional[int]) -> ColumnStats:
    if not t.is_primitive or mode == "counts":
        return ColumnStats(None, None, col.null_count)
    if truncate and root_of(t) in ("CHAR", "VARCHAR"):
        lo = truncate_min(col.min, truncate) if col.min is not None else None
        hi = truncate_max(col.max, truncate) if col.max is not None else None
        return ColumnStats(lo, hi, col.null_count)
    return col


def value_stats(fields: Sequence[DataField], columns: Sequence[ColumnStats], mode: str,
                truncate: Optional[int]) -> tuple[SimpleStats, Optional[tuple[str, ...]]]:
    """(``_VALUE_STATS``, ``_VALUE_STATS_COLS``) of one file."""
    if mode == "none":
        return EMPTY_STATS, ()
    types = [f.type for f in fields]
    cols = [apply_stats_mode(c, t, mode, truncate) for c, t in zip(columns, types)]
    stats = SimpleStats(
        encode_row([c.min for c in cols], types),
        encode_row([c.max for c in cols], types),
        tuple(c.null_count for c in cols),
    )
    return stats, None


# --------------------------------------------------------------------------- from Arrow
def _is_float(t: DataType) -> bool:
    return root_of(t) in ("FLOAT", "DOUBLE")


def stats_from_arrow(table: pa.Table, fields: Sequence[DataField]) -> list[ColumnStats]:
    """Exact statistics of the columns of an Arrow table (matched by name)."""
    import pyarrow.compute as pc

    out: list[ColumnStats] = []
    for f in fields:
        col = table.column(f.name)
        nulls: int = col.null_count
        if not f.type.is_primitive or nulls == len(col):
            out.append(ColumnStats(None, None, nulls))
            continue
        if _is_float(f.type) and pc.any(pc.is_nan(col)).as_py():
            out.append(ColumnStats(None, None, nulls))
            continue
        mm = pc.min_max(col)
        out.append(ColumnStats(_py_value(mm["min"]), _py_value(mm["max"]), nulls))
    return out


_UNITS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds"}


def _py_value(scalar: pa.Scalar[Any]) -> Any:
    """An Arrow scalar's Python value. A timestamp with a time zone (as Spark hands its rows to
    Python) is converted here exactly as pyarrow converts it, because pyarrow's own conversion
    imports pandas first, to ask whether it is there: a second or more in each new Spark worker."""
    t: Any = scalar.type
    unit = getattr(t, "unit", None)
    if getattr(t, "tz", None) and unit in _UNITS and scalar.is_valid:
        from pyarrow.lib import string_to_tzinfo  # pyright: ignore[reportUnknownVariableType]  # untyped in pyarrow

        utc = _dt.datetime(1970, 1, 1) + _dt.timedelta(**{_UNITS[unit]: int(scalar.value)})
        return utc.replace(tzinfo=_dt.timezone.utc).astimezone(cast(_dt.tzinfo, string_to_tzinfo(t.tz, prefer_zoneinfo=True)))
    return scalar.as_py()


# --------------------------------------------------------------------------- from a Parquet footer
def stats_from_footer(metadata: pq.FileMetaData, fields: Sequence[DataField]) -> list[ColumnStats]:
    """Statistics of a Parquet file's top-level columns from its footer (by column name).

    Null counts of nested columns cannot be told from leaf statistics and are None.
    """
    md = metadata
    by_path: dict[str, list[Any]] = {}
    for rg_i in range(md.num_row_groups):
        rg = md.row_group(rg_i)
        for ci in range(rg.num_columns):
            col: Any = rg.column(ci)
            by_path.setdefault(col.path_in_schema, []).append(col)
    out: list[ColumnStats] = []
    for f in fields:
        chunks = by_path.get(f.name)
        if not f.type.is_primitive or chunks is None:
            out.append(ColumnStats(None, None, None))
            continue
        nulls: Optional[int] = 0
        lo = hi = None
        bounds_ok = True
        for c in chunks:
            st = c.statistics
            if st is None or not st.has_null_count:
                nulls = None
            elif nulls is not None:
                nulls += st.null_count
            if st is None:
                bounds_ok = False
                continue
            if not st.has_min_max:
                if st.null_count != c.num_values:
                    bounds_ok = False
                continue
            try:
                a, b = _footer_value(f.type, st, "min"), _footer_value(f.type, st, "max")
            except Exception:  # statistics pyarrow cannot convert: bounds unknown
                bounds_ok = False
                continue
            if a is None or b is None or (_is_float(f.type) and (math.isnan(a) or math.isnan(b))):
                bounds_ok = False
                continue
            lo = a if lo is None or a < lo else lo
            hi = b if hi is None or b > hi else hi
        if not bounds_ok:
            lo = hi = None
        out.append(ColumnStats(lo, hi, nulls))
    return out


def _footer_value(t: DataType, st: Any, which: str) -> Any:   # a value of the column's type
    r = root_of(t)
    if r == "DECIMAL":
        # pyarrow cannot convert decimals stored as INT32/INT64 (Spark's layout): use raw
        v = getattr(st, f"{which}_raw")
    else:
        v = getattr(st, which)
    if v is None:
        return None
    if r in ("CHAR", "VARCHAR") and isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8")
    if r == "DECIMAL" and not isinstance(v, decimal.Decimal):
        if isinstance(v, int):
            return decimal.Decimal(v).scaleb(-scale_of(t))
        return decimal.Decimal(int.from_bytes(bytes(v), "big", signed=True)).scaleb(-scale_of(t))
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ") and isinstance(v, _dt.datetime):
        if r == "TIMESTAMP_LTZ" and v.tzinfo is None:
            return v.replace(tzinfo=_dt.timezone.utc)
        if r == "TIMESTAMP" and v.tzinfo is not None:
            return v.replace(tzinfo=None)
        return v
    if r == "BOOLEAN":
        return bool(v)
    if r in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
        return int(v)
    if r in ("FLOAT", "DOUBLE"):
        return float(v)
    return v
