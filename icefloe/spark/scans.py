"""File scans and session settings with few round trips to the JVM.

A table's read is planned on the driver in a few milliseconds; through PySpark's reader, building
its scan costs one JVM round trip per option, per path (the list is converted element by element)
and for the schema, about twenty for ten files, which used to be most of the planning time. Where
icefloe's JVM classes are loadable (``deleted_rows``: the embedded session, or a session with its
jar) the scan is built in one call (``icefloe.jvm.Scans``); elsewhere (Spark Connect, a session
without the jar) through PySpark's reader, with the same result.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from icefloe.spark import deleted_rows, jvm

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

SEP = "\u0000"          # between the items of a list sent as one string (no path or option holds it)
_members: dict = {}     # (id(JavaSparkContext), name) -> (the context, the static method of Scans)
NEVER_SKIP = {"ignoreCorruptFiles": "false", "ignoreMissingFiles": "false"}
# Spark's Parquet as a table's files are read (``file_scan``): the files the option names (one per
# line) each read whole, string columns' dictionary entries decoded once per column chunk rather
# than once per row, and a whole file's row index counted rather than boxed per row; the format of
# deleted rows (``deleted_rows.CLASS``) extends it
PARQUET_CLASS = "icefloe.jvm.TableParquetFormat"
ORC_CLASS = "org.apache.spark.sql.execution.datasources.orc.OrcFileFormat"   # Spark's own ORC reader
WHOLE_FILES_OPTION = "icefloe.whole-files"


def empty_frame(spark: SparkSession, schema: StructType):
    """An empty DataFrame of ``schema`` (a ``StructType``) that starts no Python worker when a job
    reads it: PySpark's ``createDataFrame([], schema)`` is a Python RDD whose empty partitions each
    start a worker (most of a second in a session's first Python job: a MERGE that inserts joined
    its source with one). Built in the JVM where the session is PySpark's classic one."""
    try:
        jspark: Any = spark._jsparkSession      # py4j: the JVM's SparkSession
    except AttributeError:          # Spark Connect: no JVM here
        jspark = None
    if jspark is None:
        return spark.createDataFrame([], schema)
    from pyspark.sql import DataFrame

    gateway: Any = spark._jvm
    return DataFrame(jspark.createDataFrame(gateway.java.util.ArrayList(), jspark.parseDataType(schema.json())),
                     spark)


def local_frame(spark: SparkSession, columns: dict):
    """A small DataFrame of ``columns`` (name -> (values, Arrow type name)) made from Arrow: from a
    list of tuples PySpark makes a Python RDD, whose reading starts Python workers."""
    import pyarrow as pa

    return spark.createDataFrame(pa.table({name: pa.array(values, getattr(pa, kind)())
                                           for name, (values, kind) in columns.items()}))


def _scans_method(spark: SparkSession, name: str):
    if not jvm.available(spark):
        return None
    jsc = spark._jsc
    hit = _members.get((id(jsc), name))
    if hit is None or hit[0] is not jsc:
        gateway: Any = spark._jvm
        hit = _members[(id(jsc), name)] = (jsc, getattr(gateway.icefloe.jvm.Scans, name))
    return hit[1]


def file_scan(spark: SparkSession, paths: Sequence[str], schema: StructType,
              options: Optional[Mapping[str, str]] = None, fmt: str = "parquet",
              whole: Sequence[str] = ()) -> DataFrame:
    """``spark.read.format(fmt).options(options).schema(schema).load(paths)``: a DataFrame of
    ``paths`` (at least one) read with ``schema`` (a StructType). A table's files are never
    skipped, even in a session set to skip unreadable or missing files
    (``spark.sql.files.ignoreCorruptFiles`` / ``ignoreMissingFiles``): that would silently drop
    their rows.

    ``whole``: those of ``paths`` that hold one row group, each read by one task. Spark cuts a
    file into byte ranges, and of a one-row-group file cut in two, one range reads every row and
    the other only the footer: a task that costs a scheduling round and the footer's read for
    nothing.

    Where icefloe's JVM classes are loadable, Parquet is read by ``PARQUET_CLASS`` (Spark's reader,
    with ``whole``, each dictionary entry of a string column decoded once, and a whole file's
    ``_metadata.row_index`` counted); elsewhere by Spark's own, and ``whole`` is not applied."""
    options = {**NEVER_SKIP, **(options or {})}
    load = _scans_method(spark, "load")
    if load is not None and fmt == "parquet":
        fmt = PARQUET_CLASS
    elif load is not None and fmt == "orc":
        fmt = ORC_CLASS
    if whole and load is not None and fmt in (PARQUET_CLASS, deleted_rows.CLASS):
        options[WHOLE_FILES_OPTION] = "\n".join(whole)
    if load is not None:
        from pyspark.sql.dataframe import DataFrame

        flat = SEP.join(s for kv in options.items() for s in kv)
        return DataFrame(load(spark._jsparkSession, fmt, flat, schema.json(), SEP.join(paths)), spark)
    reader = spark.read.format(fmt)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.schema(schema).load(list(paths))


def ensure_conf(spark: SparkSession, settings: Mapping[str, str]) -> None:
    """Set each of ``settings`` the session holds otherwise; a static setting of a running session,
    which cannot change, is left as it is."""
    ensure = _scans_method(spark, "ensureConf")
    if ensure is not None:
        ensure(spark._jsparkSession, SEP.join(s for kv in settings.items() for s in kv))
        return
    for k, v in settings.items():
        try:
            if spark.conf.get(k, None) != v:
                spark.conf.set(k, v)
        except Exception:
            pass


__all__ = ["file_scan", "ensure_conf"]
