"""The functions Iceberg's Spark extensions register under ``system`` (spark-queries): the
partition transforms as SQL functions, computed with icefloe's transforms (spec "Partition
Transforms"), so ``system.bucket(16, id)`` gives the bucket a row of a ``bucket(16, id)``
partition is written to.

Each runs as a Python UDF that also receives ``typeof(value)`` (Spark's name of the value's
type), which says how to read the value: a ``timestamp`` arrives as the worker's local wall-clock
time and is turned back into its instant, a ``timestamp_ntz`` is taken as UTC, a ``date`` as days
since 1970-01-01, an ``int`` (and smaller) or ``bigint`` as a number.
"""
from __future__ import annotations

import datetime as _dt
import decimal
from typing import TYPE_CHECKING, Any, Optional

from icefloe.core.types import primitive_from_string
from icefloe.core.types.model import DecimalType
from icefloe.iceberg.transforms import BucketTransform, DayTransform, HourTransform, MonthTransform, YearTransform

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from icefloe.iceberg.transforms import Transform

PREFIX = "__icefloe_system_"
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_DAY = _dt.date(1970, 1, 1)
_ONE_MICRO = _dt.timedelta(microseconds=1)
_SPARK_TO_ICEBERG = {"tinyint": "int", "smallint": "int", "int": "int", "bigint": "long", "string": "string",
                     "binary": "binary", "date": "date", "timestamp": "timestamptz", "timestamp_ntz": "timestamp"}


def iceberg_value(value: Any, spark_type: str) -> tuple[Any, Any]:
    """(Iceberg type, the value's internal form) of a UDF argument of Spark type ``spark_type``."""
    t = spark_type.lower()
    if t.startswith("decimal"):
        precision, scale = (int(x) for x in t[t.index("(") + 1:-1].split(","))
        return DecimalType(precision, scale), decimal.Decimal(value)
    name = _SPARK_TO_ICEBERG.get(t)
    if name is None:
        raise ValueError(f"Iceberg's transforms take no {spark_type} values")
    source = primitive_from_string(name)
    if name == "date":
        return source, (value - _EPOCH_DAY).days
    if name == "timestamptz":     # local wall-clock time in the worker: back to its instant
        return source, (value.astimezone(_dt.timezone.utc) - _EPOCH_UTC) // _ONE_MICRO
    if name == "timestamp":
        return source, (value - _EPOCH) // _ONE_MICRO
    if name == "binary":
        return source, bytes(value)
    return source, value


def _apply(transform: Transform, value: Any, spark_type: str):
    if value is None:
        return None
    source, v = iceberg_value(value, spark_type)
    if not transform.can_transform(source):
        raise ValueError(f"cannot apply {transform} to a {spark_type} value")
    return transform.apply(source, v)


def bucket(n: int, value: Any, spark_type: str) -> Optional[int]:
    return _apply(BucketTransform(int(n)), value, spark_type)


def years(value: Any, spark_type: str) -> Optional[int]:
    return _apply(YearTransform(), value, spark_type)


def months(value: Any, spark_type: str) -> Optional[int]:
    return _apply(MonthTransform(), value, spark_type)


def days(value: Any, spark_type: str) -> Optional[_dt.date]:
    d = _apply(DayTransform(), value, spark_type)
    return None if d is None else _EPOCH_DAY + _dt.timedelta(days=d)


def hours(value: Any, spark_type: str) -> Optional[int]:
    return _apply(HourTransform(), value, spark_type)


# name -> (function, Spark return type); registered as PREFIX + name
UDFS = {"bucket": (bucket, "int"), "years": (years, "int"), "months": (months, "int"), "days": (days, "date"),
        "hours": (hours, "int")}


def register(spark: SparkSession) -> None:
    """Register the UDFs in ``spark`` (once a session; the names are icefloe's own)."""
    if getattr(spark, "_icefloe_system_functions", False):
        return
    for name, (fn, returns) in UDFS.items():
        spark.udf.register(PREFIX + name, fn, returns)
    setattr(spark, "_icefloe_system_functions", True)  # a mark on the session: registered once
