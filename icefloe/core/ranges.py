"""The range of dates and timestamps a partition value can take, shared by both formats.

Partition values of dates and timestamps (identity, or year/month/day/hour of one) are
rendered in partition paths and turned into Python values on the driver, and Spark
supports 0001-01-01 .. 9999-12-31 23:59:59.999999. Outside that range a partition value
cannot be represented (an Iceberg hour even overflows its int for the extremes), so a
write holding one is rejected before any file is written.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    import pyarrow as pa

MIN_DAYS, MAX_DAYS = -719_162, 2_932_896                                    # days from 1970-01-01
MIN_MICROS, MAX_MICROS = -62_135_596_800_000_000, 253_402_300_799_999_999   # micros from the epoch

_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def arrow_out_of_range(col: "pa.Array | pa.ChunkedArray") -> Optional[str]:
    """The first value of an Arrow date or timestamp column outside the range, as text
    (None if every value is inside, or the column is of another type)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = col.type
    if pa.types.is_date32(t):
        raw, lo, hi = col.cast(pa.int32()), MIN_DAYS, MAX_DAYS
    elif pa.types.is_date64(t):
        raw, lo, hi = col.cast(pa.int64()), MIN_DAYS * 86_400_000, MAX_DAYS * 86_400_000 + 86_399_999
    elif pa.types.is_timestamp(t):
        per = _PER_SECOND[t.unit]
        raw = col.cast(pa.int64())
        lo = max(-(-MIN_MICROS * per // 1_000_000), -2 ** 63)
        hi = min((MAX_MICROS * per) // 1_000_000, 2 ** 63 - 1)
    else:
        return None
    bad = pc.or_(pc.less(raw, lo), pc.greater(raw, hi))
    if not pc.any(bad).as_py():
        return None
    value = raw.filter(bad)[0].as_py()
    unit = "days" if pa.types.is_date32(t) else "ms" if pa.types.is_date64(t) else t.unit
    return f"{value} {unit} from 1970-01-01"


def out_of_range_message(column: str, value: str, table_name: Optional[str] = None) -> str:
    table = f" of table {table_name}" if table_name else ""
    return f"partition value out of range (years 1 to 9999) in column {column!r}{table}: {value}"
