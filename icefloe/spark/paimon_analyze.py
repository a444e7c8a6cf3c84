"""``ANALYZE TABLE`` on a Paimon table: the rows' statistics as Paimon's Spark integration takes them.

Spark computes, in one aggregation over the merged rows, the row count and per column: an
approximate distinct count (HyperLogLog++, ``spark.sql.statistics.ndv.maxError``), min and max
(numbers, booleans, dates and timestamps only), the null count, and the average and maximum
length (string and binary: of the values, else the type's default size). They become Paimon's
``Statistics`` (``paimon/statistics.py``): min and max as the text Paimon's serializers write
(a date as its epoch day, a timestamp as local wall-clock text with the column's precision).
"""
from __future__ import annotations

import datetime as _dt
import math
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Optional, Sequence, cast

from icefloe.core import types as core
from icefloe.errors import IcefloeError
from icefloe.paimon.statistics import ColStats, Statistics

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType

    from icefloe.paimon.types import DataField
    from icefloe.spark.paimon_target import SparkPaimonTable

_EPOCH_DAY = _dt.date(1970, 1, 1)


def _spark_types() -> tuple[Any, tuple[type, ...], tuple[type, ...]]:
    """``pyspark.sql.types``, the types with min and max statistics, and every type ANALYZE takes."""
    from pyspark.sql import types as T

    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    with_min_max = integral + (T.DecimalType, T.DoubleType, T.FloatType, T.BooleanType, T.DateType,
                               T.TimestampType, T.TimestampNTZType)
    return T, with_min_max, with_min_max + (T.BinaryType, T.StringType)


def _java_double(v: float, single: bool = False) -> str:
    """Java's ``Double.toString`` (``Float.toString`` for ``single``): shortest digits, scientific
    notation below 1e-3 and from 1e7."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if single:
        import numpy as np

        digits = np.format_float_scientific(np.float32(v), unique=True, trim="-")
    else:
        digits = f"{Decimal(repr(v)):e}"
    mantissa, exp = digits.lower().split("e")
    exp_n = int(exp)
    sign = "-" if mantissa.startswith("-") else ""
    mantissa = mantissa.lstrip("-")
    int_part, _, frac = mantissa.partition(".")
    all_digits = (int_part + frac).rstrip("0") or "0"
    a = abs(v)
    if a == 0 or 1e-3 <= a < 1e7:
        point = 1 + exp_n
        if point <= 0:
            text = "0." + "0" * (-point) + all_digits
        elif point >= len(all_digits):
            text = all_digits + "0" * (point - len(all_digits)) + ".0"
        else:
            text = all_digits[:point] + "." + all_digits[point:]
        return sign + text
    return f"{sign}{all_digits[0]}.{all_digits[1:] or '0'}E{exp_n}"


def _wall_text(micros: int, precision: int) -> str:
    """Paimon's timestamp text: the local wall-clock time of the instant (the JVM's zone, as
    Spark's ``toJavaTimestamp`` gives Paimon), fraction trimmed of zeros down to ``precision``."""
    t = _dt.datetime.fromtimestamp(micros // 1_000_000, tz=_dt.timezone.utc).astimezone().replace(tzinfo=None)
    fraction = f"{(micros % 1_000_000) * 1000:09d}"
    while len(fraction) > precision and fraction.endswith("0"):
        fraction = fraction[:-1]
    return t.strftime("%Y-%m-%d %H:%M:%S") + (f".{fraction}" if fraction else "")


def _default_size(t: DataType) -> int:
    """Spark's ``DataType.defaultSize``: what its statistics give as a fixed-width column's length."""
    from pyspark.sql import types as T

    if isinstance(t, T.DecimalType):
        return 8 if t.precision <= 18 else 16
    sizes = ((T.ByteType, 1), (T.BooleanType, 1), (T.ShortType, 2), (T.IntegerType, 4), (T.FloatType, 4),
             (T.DateType, 4), (T.LongType, 8), (T.DoubleType, 8), (T.TimestampType, 8), (T.TimestampNTZType, 8),
             (T.StringType, 20), (T.BinaryType, 100))
    return next(n for cls, n in sizes if isinstance(t, cls))


def _bound_text(value: Any, spark_type: DataType, field: DataField) -> Optional[str]:
    from pyspark.sql import types as T

    if value is None:
        return None
    if isinstance(spark_type, T.BooleanType):
        return "true" if value else "false"
    if isinstance(spark_type, (T.DoubleType, T.FloatType)):
        return _java_double(float(value), single=isinstance(spark_type, T.FloatType))
    if isinstance(spark_type, T.DecimalType):
        return format(Decimal(value), "f")
    if isinstance(spark_type, T.DateType):
        return str((value - _EPOCH_DAY).days)
    if isinstance(spark_type, (T.TimestampType, T.TimestampNTZType)):
        try:
            precision = core.precision_of(field.type)
        except IcefloeError:
            precision = 6
        if isinstance(value, _dt.datetime):
            value = (value - _dt.datetime(1970, 1, 1)) // _dt.timedelta(microseconds=1)
        return _wall_text(int(value), precision)
    return str(int(value))


def column_statistics(df: DataFrame, fields: Sequence[DataField], names: Sequence[str],
                      max_error: float) -> tuple[int, dict[str, ColStats]]:
    """(row count, {name: ColStats}) of the DataFrame ``df`` for the columns ``names``;
    ``fields`` are the table's fields (for their ids and precisions)."""
    from pyspark.sql import functions as F

    T, with_min_max, supported = _spark_types()
    spark_types = {f.name: f.dataType for f in df.schema.fields}
    by_name = {f.name: f for f in fields}
    for name in names:
        if not isinstance(spark_types[name], supported):
            raise IcefloeError(f"ANALYZE TABLE cannot analyze column {name}: its type "
                               f"{spark_types[name].simpleString()} has no statistics in Paimon (numbers, "
                               "booleans, dates, timestamps, strings and binaries have)")
    aggs = [F.count(F.lit(1)).alias("__rows")]
    for i, name in enumerate(names):
        col, t = F.col(f"`{name}`"), spark_types[name]
        # timestamps as epoch microseconds: the instant, whatever the session time zone
        # (a TIMESTAMP_NTZ comes back as its wall-clock time, taken as UTC, as Spark's long of it is)
        as_micros = F.unix_micros(col) if isinstance(t, T.TimestampType) else col
        aggs.append(F.approx_count_distinct(col, max_error).alias(f"ndv{i}"))
        aggs.append((F.count(F.lit(1)) - F.count(col)).alias(f"nulls{i}"))
        if isinstance(t, with_min_max):
            aggs += [F.min(as_micros).alias(f"min{i}"), F.max(as_micros).alias(f"max{i}")]
        if isinstance(t, (T.StringType, T.BinaryType)):
            aggs += [F.ceil(F.avg(F.length(col))).alias(f"avg{i}"), F.max(F.length(col)).alias(f"maxlen{i}")]
    row = df.agg(*aggs).collect()[0]
    stats: dict[str, ColStats] = {}
    for i, name in enumerate(names):
        t = spark_types[name]
        size = _default_size(t)
        fixed = not isinstance(t, (T.StringType, T.BinaryType))
        avg = size if fixed or row[f"avg{i}"] is None else int(row[f"avg{i}"])
        longest = size if fixed or row[f"maxlen{i}"] is None else int(row[f"maxlen{i}"])
        lo = hi = None
        if isinstance(t, with_min_max):
            lo = _bound_text(row[f"min{i}"], t, by_name[name])
            hi = _bound_text(row[f"max{i}"], t, by_name[name])
        stats[name] = ColStats(col_id=by_name[name].id, distinct_count=int(row[f"ndv{i}"]), min=lo, max=hi,
                               null_count=int(row[f"nulls{i}"]), avg_len=avg, max_len=longest)
    return int(row["__rows"]), stats


def analyze(table: SparkPaimonTable, columns
: Optional[Sequence[str]] = None, all_columns: bool = False) -> Optional[Statistics]:
    """The statistics of the latest snapshot of ``table`` (a PaimonTable): the merged row count
    and size, and column statistics of ``columns`` (or every column with ``all_columns``); None
    when the table has no snapshot."""
    if columns and all_columns:
        raise IcefloeError("ANALYZE TABLE takes FOR COLUMNS or FOR ALL COLUMNS, not both")
    snapshot = table.current_snapshot()
    if snapshot is None:
        return None
    schema = table.schema_by_id(snapshot.schema_id)
    df = table.to_spark(snapshot_id=snapshot.id)
    if all_columns:
        names = [f.name for f in schema.fields]
    else:
        known = {f.name.lower(): f.name for f in schema.fields}
        missing = [c for c in columns or () if c.lower() not in known]
        if missing:
            raise IcefloeError(f"ANALYZE TABLE: table {table.name} has no column {', '.join(missing)} "
                               f"(columns: {', '.join(known.values())})")
        names = [known[c.lower()] for c in columns or ()]
    max_error = float(cast(str, table.spark.conf.get("spark.sql.statistics.ndv.maxError", "0.05")))
    rows, col_stats = column_statistics(df, schema.fields, names, max_error)
    total_size = sum(f.file_size for f in (e.file for e in table.plan(snapshot_id=snapshot.id)))
    total_rows = snapshot.total_record_count
    size = int(total_size * rows / total_rows) if total_rows else 0
    return Statistics(snapshot.id, snapshot.schema_id, rows, size, col_stats)


__all__ = ["analyze", "column_statistics"]
