"""Spark writes Iceberg data files; the driver turns them into commit messages.

The fast path is Spark's own Parquet writer. The DataFrame is fitted to the
table schema (field ids as ``parquet.field.id`` metadata), each row gets a key
column holding its partition tuple (computed with Spark expressions that
follow the spec's transforms), rows are clustered by that key (Iceberg's
``write.distribution-mode=hash``) and Spark writes them to a hidden staging
directory partitioned by the key. The driver then moves each file to
``data/<partition path>/`` and reads its footer for the column metrics.
Nothing is committed here: the caller commits the returned DataFiles.

Tables with uuid columns take another path: the spec stores uuids as
fixed_len_byte_array(16), which Spark's writer cannot produce, so the tasks
write with Arrow (``iceberg/arrow_writer.py``, uuid strings turned into 16
bytes) and send their DataFiles back to the driver.
"""
from __future__ import annotations

import binascii
import os
import re
import uuid
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, cast

from icefloe.core.io import FileIO, staged_files
from icefloe.core.parquet import metrics_from_footer
from icefloe.core.types import (
    BinaryType, BooleanType, DateType, DecimalType, FixedType, IntegerType, Schema, StringType, TimestampType,
    TimestamptzType, UUIDType, is_floating, is_integral, is_micros, is_plain_string, to_arrow_type,
)
from icefloe.iceberg import conversions
from icefloe.iceberg.arrow_writer import data_file_from_metrics, estimate_records_per_file
from icefloe.iceberg.manifest import DataFile
from icefloe.iceberg.metrics_modes import MetricsConfig, apply_modes, for_table
from icefloe.iceberg.parquet_props import ParquetSettings
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.iceberg.transforms import (
    BucketTransform, DayTransform, HourTransform, IdentityTransform, MonthTransform,
    TruncateTransform, VoidTransform, YearTransform,
)
from icefloe.spark import described_writes, jvm, partition_key
from icefloe.spark.align import align_dataframe, check_partition_ranges, explain_spark_error, stored_columns
from icefloe.core.types import ListType, MapType, StructType, primitive_from_string
from icefloe.core.types.model import contains_nanos, is_nanos, type_names
from icefloe.errors import SchemaMismatchError
from icefloe.iceberg.arrow_writer import align_arrow, write_arrow
from icefloe.iceberg.schema import nanos_as_long
from icefloe.iceberg.sort_order import writer_sort_columns
from icefloe.spark.iceberg_evolved_read import has_uuid, has_nanos, schema_has_uuid

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame

    from icefloe.core.types import IcebergType, NestedField
    from icefloe.iceberg.transforms import Transform

    #: how a rewrite spreads its rows over the writing tasks: (rows, partition key column or None) -> rows
    Arrange = Callable[[DataFrame, Optional[str]], DataFrame]

KEY_COL = "__icefloe_partition"
_PART_RE = re.compile(r"part-(\d+)-")


# --------------------------------------------------------------------------- partition values in Spark
def _internal_expr(col: Column, t: IcebergType) -> Column:
    """A Spark expression giving the internal (JSON-friendly) form of a source value."""
    from pyspark.sql import functions as F

    if isinstance(t, DateType):
        return F.unix_date(col)
    if t == TimestamptzType():
        return F.unix_micros(col)
    if t == TimestampType():
        return _ntz_micros(col)
    if isinstance(t, DecimalType):
        return col.cast("string")
    if t == BinaryType() or isinstance(t, FixedType):
        return F.hex(col)
    return col


def _ntz_micros(col: Column) -> Column:
    from pyspark.sql import functions as F

    return F.timestamp_diff("MICROSECOND", F.lit("1970-01-01 00:00:00").cast("timestamp_ntz"), col)


def _utc_micros(col: Column, t: IcebergType) -> Column:
    if t == TimestamptzType():
        from pyspark.sql import functions as F

        return F.unix_micros(col)
    return _ntz_micros(col)


def _days_expr(col: Column, t: IcebergType) -> Column:
    from pyspark.sql import functions as F

    if isinstance(t, DateType):
        return F.unix_date(col)
    return F.floor(_utc_micros(col, t) / F.lit(86_400_000_000)).cast("int")


def transform_expr(transform: Transform, col: Column, t: IcebergType) -> Column:
    """Spark expression for an Iceberg transform; values match the spec's (see tests)."""
    from pyspark.sql import functions as F

    if isinstance(transform, IdentityTransform):
        return _internal_expr(col, t)
    if isinstance(transform, VoidTransform):
        return F.lit(None).cast("int")
    if isinstance(transform, (YearTransform, MonthTransform)):
        d = F.date_from_unix_date(_days_expr(col, t))
        if isinstance(transform, YearTransform):
            return (F.year(d) - 1970).cast("int")
        return ((F.year(d) - 1970) * 12 + F.month(d) - 1).cast("int")
    if isinstance(transform, DayTransform):
        return _days_expr(col, t)
    if isinstance(transform, HourTransform):
        return F.floor(_utc_micros(col, t) / F.lit(3_600_000_000)).cast("int")
    if isinstance(transform, TruncateTransform):
        w = transform.width
        if is_integral(t):
            return col - F.pmod(col, F.lit(w).cast("int" if isinstance(t, IntegerType) else "bigint"))
        if is_plain_string(t):
            return F.substring(col, 1, w)
        if t == BinaryType():
            return F.hex(F.substring(col, 1, w))
        if isinstance(t, DecimalType):
            unscaled = (col * F.lit(10 ** t.scale)).cast("decimal(38,0)")
            truncated = unscaled - F.pmod(unscaled, F.lit(w).cast("decimal(38,0)"))
            return (truncated / F.lit(10 ** t.scale)).cast(f"decimal({t.precision},{t.scale})").cast("string")
    if isinstance(transform, BucketTransform):
        jvm = _jvm_bucket(transform.num_buckets, col, t)
        return jvm if jvm is not None else _bucket_udf(transform.num_buckets, t)(_internal_expr(col, t))
    raise ValueError(f"no Spark expression for transform {transform}")


# the bucket function's form of each source type's values (``jvm/IcebergBucket.java``)
_JVM_BUCKET_KINDS = {"int": "long", "long": "long", "date": "long", "time": "long", "timestamp": "long",
                     "timestamptz": "long", "string": "string", "uuid": "uuid", "binary": "binary"}


def _jvm_bucket(n: int, col: Column, t: IcebergType) -> Optional[Column]:
    """The bucket transform run in the JVM tasks (``jvm/IcebergBucket.java``), or None where the
    session has no JVM with icefloe's classes (Spark Connect) or the type has no JVM form (nanosecond
    timestamps): then a Python UDF computes it."""
    s = str(t)
    kind = "decimal" if isinstance(t, DecimalType) else "binary" if s.startswith("fixed") else _JVM_BUCKET_KINDS.get(s)
    if kind is None or not hasattr(col, "_jc"):
        return None
    value = _internal_expr(col, t).cast("bigint") if kind == "long" else col
    scale = t.scale if isinstance(t, DecimalType) else 0
    return jvm.jvm_column(lambda spark: spark._jvm.icefloe.jvm.IcebergBucket.of(value._jc, kind, n, scale))


def _bucket_udf(n: int, t: IcebergType) -> Callable[[Column], Column]:
    """Bucket in a vectorised UDF over the value's internal form (zone-free longs for times)."""
    from pyspark.sql.functions import pandas_udf

    type_str = str(t)

    # PySpark reads a pandas UDF's kind from its type hints, resolved in this module's names: without
    # any it is the scalar kind, and the driver need not import pandas to annotate ``values`` (a
    # pandas Series); PySpark's stubs list only the calls that name the kind
    @pandas_udf("int")  # pyright: ignore[reportCallIssue, reportArgumentType, reportUntypedFunctionDecorator]
    def bucket(values):  # noqa: ANN001  # runs in the Python workers
        import binascii
        import decimal

        import pandas as pd

        src = primitive_from_string(type_str)
        tr = BucketTransform(n)
        if is_integral(src) or isinstance(src, DateType) or is_micros(src):
            conv = int
        elif isinstance(src, DecimalType):
            conv = decimal.Decimal
        elif src == BinaryType() or isinstance(src, FixedType):
            conv = binascii.unhexlify
        elif isinstance(src, UUIDType):
            import uuid

            conv = uuid.UUID
        else:
            conv = str
        # each value in its internal form (text or a whole number); a float is only pandas' NaN for a missing one
        out = [None if v is None or (isinstance(v, float) and v != v)
               else tr.apply(src, conv(v))  # pyright: ignore[reportArgumentType]
               for v in values.astype(object).where(values.notna(), None)]
        return pd.Series(out, dtype="Int32")

    return cast("Callable[[Column], Column]", bucket)     # a UDF: the decorator made it one (see above)


def partition_key_expr(spec: PartitionSpec, schema: Schema) -> Column:
    """One string column naming a row's partition (``partition_key``): each field's transform
    result, text results (strings, uuids) keyed by the hex of their bytes."""
    from pyspark.sql import functions as F

    parts: list[Column] = []
    for pf, rt in zip(spec.fields, spec.result_types(schema)):
        src = schema.find_field(pf.source_id)
        value = transform_expr(pf.transform, F.col(f"`{src.name}`"), src.field_type)
        parts.append(partition_key.field_text(value, rt in _TEXT_RESULTS))
    return partition_key.key_of(parts)


_TEXT_RESULTS = (StringType(), UUIDType())


def decode_partition_key(key: str, spec: PartitionSpec, schema: Schema) -> tuple:
    """The partition tuple ``partition_key_expr`` named."""
    out = []
    for v, rt in zip(partition_key.field_texts(key, len(spec.fields)), spec.result_types(schema)):
        if v is None:
            out.append(None)
        elif rt in _TEXT_RESULTS:
            v = partition_key.unhex_text(v)
            out.append(conversions.to_internal(rt, v) if isinstance(rt, UUIDType) else v)
        elif rt == BinaryType() or isinstance(rt, FixedType):
            out.append(binascii.unhexlify(v))
        elif isinstance(rt, DecimalType):
            import decimal

            out.append(decimal.Decimal(v))
        elif is_floating(rt):
            out.append(float(v))
        elif isinstance(rt, BooleanType):
            out.append(v == "true")
        else:       # ints, dates, times and timestamps (their internal numbers)
            out.append(int(v))
    return tuple(out)


# --------------------------------------------------------------------------- the write
def write_data_files(df: DataFrame, meta: TableMetadata, io: FileIO, table_name: str, nanos_raw: bool = False,
                     clustered: bool = False, arrange: Optional[Arrange] = None) -> list[DataFile]:
    """Write ``df`` as data files of the table's default spec; return them uncommitted.
    ``nanos_raw``: ``df`` holds the nanosecond timestamps, at any depth, as their raw ``long``
    nanoseconds (``read_tasks(nanos_raw=True)``), written back exactly. ``clustered``: ``df`` holds
    the rows of a copy-on-write rewrite, read from the files they replace, each of which holds rows
    of one partition; unless a shuffle lies between those scans and ``df`` (``without_shuffle``),
    each task's rows are then written where they are, sorted by partition within the task, rather
    than shuffled by ``write.distribution-mode``: each rewritten file's rows stay together."""
    schema = meta.schema
    spec = meta.spec
    clustered = clustered and not spec.is_unpartitioned and without_shuffle(df)
    props = meta.properties
    location = meta.location.rstrip("/")
    fit = nanos_as_long(schema) if nanos_raw else schema
    aligned = check_partition_ranges(align_dataframe(df, fit, table_name), range_checked(spec, schema), table_name)
    write_id = uuid.uuid4().hex
    modes = for_table(meta)           # metrics modes, refused (naming the property) before anything is written

    parquet = ParquetSettings.of(props)     # the table's write.parquet.*, refused before anything is written
    # Arrow writes in the tasks: Parquet's fixed_len_byte_array (uuid, fixed), and stores Spark cannot reach
    if (schema_has_uuid(schema) or has_fixed(schema) or has_nanos(schema) or not io.spark_native
            or not parquet.spark_writable()):       # a codec Spark's Parquet writer lacks (brotli)
        parquet.arrow_options()         # one the Arrow writers lack (lz4) refused here, not in the tasks
        return _write_with_arrow(aligned, meta, io, write_id, nanos_raw, clustered, arrange)
    staging = f"{location}/data/.staging-{write_id}"
    partitioned = not spec.is_unpartitioned
    if partitioned:
        aligned = aligned.withColumn(KEY_COL, partition_key_expr(spec, schema))
        mode = "arranged" if arrange is not None else _distribution(props, clustered)
        if mode == "hash":
            aligned = aligned.repartition(KEY_COL)
        elif mode == "range":
            aligned = aligned.repartitionByRange(KEY_COL)

    order_id, sort_cols = writer_sort_columns(meta)
    if arrange is not None:
        aligned = arrange(aligned, KEY_COL if partitioned else None)
        order_id, sort_cols = 0, []
    if sort_cols:  # the table's sort order, within each file (after the partition key)
        aligned = aligned.sortWithinPartitions(*([KEY_COL] if partitioned else []),
                                               *[_sort_col(c, asc, nulls_first) for c, asc, nulls_first in sort_cols])
    target = int(props.get("write.target-file-size-bytes", 512 * 1024 * 1024))
    aligned = stored_columns(aligned, schema)      # unknown fields are never stored (the spec)
    writer = (aligned.write.mode("error").options(**parquet.hadoop_options())   # codec, level, sizes, limits
              .option("maxRecordsPerFile", estimate_records_per_file(meta, target, schema)))
    if partitioned:
        writer = writer.partitionBy(KEY_COL)
    try:
        with staged_files(io) as moved:
            try:
                footers = described_writes.save(aligned.sparkSession, writer, staging, write_id)
            except Exception as e:  # a failed Spark job: our null check or anything else
                raise explain_spark_error(e) from None
            files = _collect_staged(io, staging, location, spec, schema, write_id, moved, footers)
            described = _drop_empty(io, describe_files(files, schema, spec, modes))
            for f in described:
                f.sort_order_id = order_id
            return described
    finally:
        io.delete_tree(staging)


def range_checked(spec: PartitionSpec, schema: Schema) -> list[str]:
    """The columns whose values must lie in the range partition values can take: sources of the
    partition fields whose transform keeps order (``check_partition_ranges``)."""
    return [schema.find_field(pf.source_id).name for pf in spec.fields
            if not isinstance(pf.transform, (BucketTransform, TruncateTransform, VoidTransform))]


def _collect_staged(io: FileIO, staging: str, location: str, spec: PartitionSpec, schema: Schema,
                    write_id: str, moved: list, footers: dict) -> list[tuple]:
    """The staged files moved into place: ``(final path, partition, size, footer)`` each, the
    footer as the writing task gave it (``described_writes``) or read here."""
    out = []
    counters: dict = {}
    staged = [p for p in sorted(io.walk_files(staging))
              if p.endswith(".parquet") and not os.path.basename(p).startswith((".", "_"))]
    for path, (size, md) in zip(staged, described_writes.footers(footers, io, staged)):
        name = os.path.basename(path)
        rel = os.path.relpath(os.path.dirname(path), staging)
        partition: tuple = ()
        if not spec.is_unpartitioned:
            key = rel.split("=", 1)[1] if "=" in rel else ""
            partition = decode_partition_key(key, spec, schema)     # (never null: no Hive default directory)
        m = _PART_RE.match(name)
        task = int(m.group(1)) if m else 0
        counters[task] = counters.get(task, 0) + 1
        final_name = f"{task:05d}-{counters[task] - 1}-{write_id}-{counters[task]:05d}.parquet"
        sub = spec.partition_path(schema, partition) if partition else ""
        final = f"{location}/data/{sub + '/' if sub else ''}{final_name}"
        io.rename(path, final)
        moved.append(final)
        out.append((final, partition, size, md))
    return out


def _sort_col(name: str, ascending: bool, nulls_first: bool) -> Column:
    from pyspark.sql import functions as F

    c = F.col(f"`{name}`")
    if ascending:
        return c.asc_nulls_first() if nulls_first else c.asc_nulls_last()
    return c.desc_nulls_first() if nulls_first else c.desc_nulls_last()


def describe_files(files: list, schema: Schema, spec: PartitionSpec, modes: MetricsConfig) -> list[DataFile]:
    """DataFiles of written Parquet files: ``(path, partition, size, footer)`` each, their metrics
    as the table's metrics ``modes`` keep them."""
    out = []
    for path, partition, size, md in files:
        m = apply_modes(metrics_from_footer(md, schema, truncate=None, skip_float_bounds=True), modes, schema)
        out.append(data_file_from_metrics(path, size, partition, spec.spec_id, schema, m))
    return out


# --------------------------------------------------------------------------- tables with uuid columns
def has_fixed(schema: Schema) -> bool:
    return any(n.startswith("fixed[") for n in type_names(schema.struct))


def without_shuffle(rows: DataFrame) -> bool:
    """Whether no shuffle lies between ``rows`` and the file scans they come from
    (``jvm/ScanOrder.java``): each task holds rows of the file ranges it reads. False where the
    session has no JVM with icefloe's classes."""
    try:
        gateway: Any = rows.sparkSession._jvm       # py4j: icefloe's JVM classes, untyped
        return bool(gateway.icefloe.jvm.ScanOrder.withoutShuffle(rows._jdf))
    except Exception:  # noqa: BLE001 - Spark Connect, or the classes not loaded
        return False


def _distribution(props: dict, clustered: bool) -> str:
    """How a partitioned table's rows are spread over the writing tasks: ``write.distribution-mode``
    (hash by default), or none for rows already held together by partition (``clustered``)."""
    return "none" if clustered else props.get("write.distribution-mode", "hash")


def _write_with_arrow(aligned: DataFrame, meta: TableMetadata, io: FileIO, write_id: str,
                      nanos_raw: bool = False, clustered: bool = False,
                      arrange: Optional[Arrange] = None) -> list[DataFile]:
    """Write ``aligned`` with Arrow inside the tasks (uuid as fixed[16]); DataFiles come back pickled."""
    import pickle

    schema, spec = meta.schema, meta.spec
    location = meta.location.rstrip("/")
    raw_sources = nanos_raw and any(is_nanos(schema.find_field(pf.source_id).field_type) for pf in spec.fields)
    if arrange is not None:
        keyed = not spec.is_unpartitioned and not raw_sources
        if keyed:
            aligned = aligned.withColumn(KEY_COL, partition_key_expr(spec, schema))
        aligned = arrange(aligned, KEY_COL if keyed else None)
        aligned = aligned.drop(KEY_COL) if keyed else aligned
    elif not spec.is_unpartitioned and not raw_sources:   # (raw nanoseconds: the tasks split by partition)
        aligned = aligned.withColumn(KEY_COL, partition_key_expr(spec, schema))
        mode = _distribution(meta.properties, clustered)
        if mode == "hash":
            aligned = aligned.repartition(KEY_COL)
        elif mode == "range":
            aligned = aligned.repartitionByRange(KEY_COL)
        aligned = aligned.drop(KEY_COL)
    run = _arrow_task(io, meta, write_id, nanos_raw)
    try:
        rows = aligned.mapInArrow(run, "files binary").collect()
    except Exception as e:  # a failed Spark job: our null check or anything else
        _delete_written(io, location, write_id)
        raise explain_spark_error(e) from None
    return _drop_empty(io, [f for r in rows for f in pickle.loads(r["files"])])


def _drop_empty(io: FileIO, files: list[DataFile]) -> list[DataFile]:
    """The files that hold rows; the empty ones (Spark writes one for an empty task) deleted."""
    for f in files:
        if f.record_count == 0:
            io.delete(f.file_path)
    return [f for f in files if f.record_count > 0]


def task_input(batches: Iterable[pa.RecordBatch]) -> Optional[tuple[pa.Table, int]]:
    """A Python task's Arrow batches as one table, with the task's partition id; None when the
    task got no rows."""
    import pyarrow as pa
    from pyspark import TaskContext

    batches = list(batches)
    if not batches:
        return None
    table = pa.Table.from_batches(batches)
    if table.num_rows == 0:
        return None
    ctx = TaskContext.get()
    return table, (ctx.partitionId() if ctx is not None else 0)


def _arrow_task(io: FileIO, meta: TableMetadata, write_id: str,
                nanos_raw: bool = False) -> Callable[[Iterable[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # runs in the Python workers
        import pickle

        import pyarrow as pa

        got = task_input(batches)
        if got is None:
            return
        table, task_id = got
        files = arrow_rows_to_files(io, meta, write_id, table, task_id, nanos_raw=nanos_raw)
        if files:
            yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(files)], pa.binary())], names=["files"])

    return run


def arrow_rows_to_files(io: FileIO, meta: TableMetadata, write_id: str, table: pa.Table, task_id: int,
                        first_counter: int = 0, nanos_raw: bool = False) -> list[DataFile]:
    """In a task: ``table`` (Arrow, the table's columns as Spark gives them) fitted to the table's
    schema and written as data files of its default spec; returns their DataFiles. ``nanos_raw``:
    the nanosecond timestamp columns come as their raw ``long`` nanoseconds."""
    import pyarrow as pa

    schema = meta.schema

    def column(f: NestedField) -> pa.Array:
        col = uuid_strings_to_bytes(table.column(f.name).combine_chunks(), f.field_type, f.name)
        if nanos_raw and contains_nanos(f.field_type):      # raw nanoseconds (longs) at any depth
            return col.cast(to_arrow_type(f.field_type, with_ids=False))
        return col

    table = pa.Table.from_arrays([column(f) for f in schema.fields], names=[f.name for f in schema.fields])
    return write_arrow(io, align_arrow(table, schema), schema, meta.spec, meta.location, dict(meta.properties),
                       task_id=task_id, write_id=write_id, meta=meta, first_counter=first_counter)


def uuid_strings_to_bytes(arr: pa.Array, t: IcebergType, path: str) -> pa.Array:
    """An Arrow array of ``t`` with uuid strings (anywhere inside) as 16-byte fixed binaries."""
    import pyarrow as pa

    if not has_uuid(t):
        return arr
    if isinstance(t, StructType):
        children = [uuid_strings_to_bytes(arr.field(i), f.field_type, f"{path}.{f.name}")
                    for i, f in enumerate(t.fields)]
        return pa.StructArray.from_arrays(children, names=[f.name for f in t.fields], mask=arr.is_null())
    if isinstance(t, ListType):
        values = uuid_strings_to_bytes(arr.values, t.element_type, f"{path}.element")
        return pa.ListArray.from_arrays(arr.offsets, values, mask=arr.is_null())
    if isinstance(t, MapType):
        keys = uuid_strings_to_bytes(arr.keys, t.key_type, f"{path}.key")
        items = uuid_strings_to_bytes(arr.items, t.value_type, f"{path}.value")
        return pa.MapArray.from_arrays(arr.offsets, keys, items, mask=arr.is_null())
    out: list[Optional[bytes]] = []
    for v in arr.to_pylist():
        if v is None or isinstance(v, bytes) and len(v) == 16:
            out.append(v)
            continue
        try:
            out.append(uuid.UUID(cast(str, v)).bytes)      # else an error, raised below
        except (ValueError, TypeError, AttributeError):

            raise SchemaMismatchError(f"column {path!r}: {v!r} is not a uuid") from None
    return pa.array(out, pa.binary(16))


def _delete_written(io: FileIO, location: str, write_id: str) -> None:
    """Remove the data files a failed Arrow write left (their names carry ``write_id``)."""
    data = f"{location}/data"
    try:
        paths = [p for p in io.walk_files(data) if write_id in os.path.basename(p)]
    except (FileNotFoundError, OSError):
        return
    for p in paths:
        io.delete(p)
