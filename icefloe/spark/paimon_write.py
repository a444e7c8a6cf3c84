"""Spark writes Paimon data files; the driver turns them into commit messages.

The fast path is Spark's own Parquet writer:

1. the DataFrame is fitted to the table's fields (by name; safe widenings only;
   a null in a NOT NULL column fails the Spark job, and with it the write),
   every column carrying its Paimon field id as ``parquet.field.id``;
2. each row gets a key column: its bucket (Paimon's bucket function, computed by
   an Arrow UDF on the bucket-key columns) and its partition tuple (``partition_key``,
   computed with Spark expressions);
3. rows are clustered by that key and Spark writes them, zstd-compressed, to a
   hidden staging directory of the table, partitioned by the key;
4. the driver moves each file to ``<partition>/bucket-<N>/data-<uuid>-<n>.parquet``
   and reads its footer for the row count and the value statistics.

Partition columns stay in the data files, as Paimon requires. Nothing is
committed here; on any failure the files written so far are deleted.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import os
import uuid
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, Sequence, cast

import pyarrow as pa   # (loaded with paimon.writer anyway) resolves the bucket UDF's type hints at runtime

from icefloe.errors import SchemaMismatchError
from icefloe.spark.jobs import clean_up_failed_job
from icefloe.paimon import row_tracking
from icefloe.paimon import types as pt
from icefloe.paimon.binary_row import encode_row
from icefloe.paimon.commit import CommitMessage
from icefloe.paimon.data_file import DataFileMeta, DataFileNamer, local_now_millis
from icefloe.paimon.stats import stats_from_footer, value_stats
from icefloe.spark import described_writes, jvm, partition_key
from icefloe.spark.align import Target, check_partition_ranges, explain_spark_error, fit_dataframe
from icefloe.core.io import normalize_location, staged_files
from icefloe.paimon.bucket import buckets_of_columns
from icefloe.paimon.file_index import index_options
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.kv_writer import write_kv_table
from icefloe.paimon.writer import restored_sequence_numbers, write_arrow_table
from icefloe.spark.iceberg_write import task_input

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType

    from icefloe.paimon.schema import TableSchema
    from icefloe.core.types import IcebergType as PaimonType
    from icefloe.paimon.types import DataField
    from icefloe.spark.paimon_target import PaimonStore

    #: how a sort compaction spreads rows over tasks: (rows, key column or None) -> arranged rows
    Arrange = Callable[[DataFrame, Optional[str]], DataFrame]

KEY_COL = "__icefloe_paimon_key"
_EPOCH = _dt.datetime(1970, 1, 1)


# --------------------------------------------------------------------------- fitting the DataFrame
def _int_rank(dt: DataType) -> Optional[int]:
    from pyspark.sql import types as T

    for i, cls in enumerate((T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        if isinstance(dt, cls):
            return i
    return None


def _check_compatible(src: DataType, dst: DataType, path: str) -> None:
    """Raise unless Spark type ``src`` can be written as ``dst`` without loss."""
    from pyspark.sql import types as T

    if isinstance(src, T.NullType) or src == dst:
        return
    if isinstance(dst, T.StructType):
        if not isinstance(src, T.StructType):
            raise SchemaMismatchError(f"column {path!r}: expected a struct, got {src.simpleString()}")
        names = {f.name.lower(): f for f in src.fields}
        for tf in dst.fields:
            sf = names.pop(tf.name.lower(), None)
            if sf is None:
                raise SchemaMismatchError(f"struct {path!r} lacks field {tf.name!r}")
            _check_compatible(sf.dataType, tf.dataType, f"{path}.{tf.name}")
        if names:
            raise SchemaMismatchError(f"struct {path!r} has fields the table does not: {sorted(names)}")
        return
    if isinstance(dst, T.ArrayType):
        if not isinstance(src, T.ArrayType):
            raise SchemaMismatchError(f"column {path!r}: expected an array, got {src.simpleString()}")
        return _check_compatible(src.elementType, dst.elementType, f"{path}.element")
    if isinstance(dst, T.MapType):
        if not isinstance(src, T.MapType):
            raise SchemaMismatchError(f"column {path!r}: expected a map, got {src.simpleString()}")
        _check_compatible(src.keyType, dst.keyType, f"{path}.key")
        return _check_compatible(src.valueType, dst.valueType, f"{path}.value")
    a, b = _int_rank(src), _int_rank(dst)
    if a is not None and b is not None and a <= b:
        return
    if isinstance(src, T.FloatType) and isinstance(dst, T.DoubleType):
        return
    if isinstance(src, T.DecimalType) and isinstance(dst, T.DecimalType) and src.scale <= dst.scale \
            and src.precision - src.scale <= dst.precision - dst.scale:
        return
    if isinstance(src, (T.StringType, T.VarcharType, T.CharType)) and isinstance(dst, T.StringType):
        return
    raise SchemaMismatchError(
        f"column {path!r} has type {src.simpleString()} but the table column is {dst.simpleString()}; "
        "cast it explicitly (only wider integers, float->double and wider decimals are implicit)")


def align_dataframe(df: DataFrame, fields: Sequence[DataField], table_name: str = "table") -> DataFrame:
    """``df`` fitted to a Paimon table's ``fields`` (Paimon's types; wider integers, float to
    double, wider decimals and char/varchar to string are implicit), with the one fitting both
    formats use (``spark.align.fit_dataframe``)."""
    targets: list[Target] = []
    for f in fields:
        spark_type = pt.to_spark_type(f.type)
        targets.append(Target(f.name, f.id, spark_type, not f.nullable,
                              lambda src, path, dst=spark_type: _check_compatible(cast("DataType", src), dst, path)))
    return fit_dataframe(df, targets, table_name)


# --------------------------------------------------------------------------- the key column
def _internal(col: Column, t: PaimonType) -> Column:
    """A Spark expression of a partition value in a form its text decodes exactly from."""
    from pyspark.sql import functions as F

    r = pt.root(t)
    if r == "DATE":
        return F.unix_date(col)
    if r == "TIMESTAMP_LTZ":
        return F.unix_micros(col)
    if r == "TIMESTAMP":
        return F.timestamp_diff("MICROSECOND", F.lit("1970-01-01 00:00:00").cast("timestamp_ntz"), col)
    return col


_TEXT_ROOTS = ("CHAR", "VARCHAR", "STRING")
_INT_ROOTS = ("TINYINT", "SMALLINT", "INT", "BIGINT")


def _decode(v: Optional[str], t: PaimonType) -> Any:
    if v is None:
        return None
    r = pt.root(t)
    if r in _TEXT_ROOTS:
        return partition_key.unhex_text(v)
    if r in _INT_ROOTS:
        return int(v)
    if r == "BOOLEAN":
        return v == "true"
    if r == "DATE":
        return _dt.date(1970, 1, 1) + _dt.timedelta(days=int(v))
    if r == "TIMESTAMP":
        return _EPOCH + _dt.timedelta(microseconds=int(v))
    if r == "TIMESTAMP_LTZ":
        return (_EPOCH + _dt.timedelta(microseconds=int(v))).replace(tzinfo=_dt.timezone.utc)
    if r == "DECIMAL":
        return decimal.Decimal(v)
    if r in ("FLOAT", "DOUBLE"):
        return float(v)
    return v


def _bucket_udf(key_types: list[PaimonType], num_buckets: int) -> Callable[..., Column]:
    from pyspark.sql.functions import arrow_udf

    # (pyspark's stubs list only the forms naming a functionType; Spark takes it from the hints: scalar)
    @arrow_udf("int")  # pyright: ignore[reportCallIssue]
    def paimon_bucket(*columns: pa.Array) -> pa.Array:  # runs in the Python workers
        import pyarrow as pa

        return pa.array(buckets_of_columns(list(columns), key_types, num_buckets), type=pa.int32())

    return paimon_bucket


# the form of each bucket-key type's values the JVM bucket function takes (``jvm/PaimonBucket.java``)
_JVM_BUCKET_KINDS = {"BOOLEAN": "boolean", "TINYINT": "byte", "SMALLINT": "short", "INT": "int", "DATE": "int",
                     "BIGINT": "long", "FLOAT": "float", "DOUBLE": "double", "CHAR": "string", "VARCHAR": "string",
                     "BINARY": "binary", "VARBINARY": "binary", "DECIMAL": "decimal", "TIMESTAMP": "timestamp",
                     "TIMESTAMP_LTZ": "timestamp"}


def _jvm_bucket(keys: Sequence[DataField], num_buckets: int) -> Optional[Column]:
    """The bucket of each row computed in the JVM tasks (``jvm/PaimonBucket.java``), or None where
    the session has no JVM with icefloe's classes (Spark Connect) or a key type has no JVM form
    (TIME): then a Python UDF computes it."""
    from pyspark.sql import functions as F

    kinds = [_JVM_BUCKET_KINDS.get(pt.root(k.type) or "") for k in keys]
    if None in kinds:
        return None
    values: list[Column] = []
    for i, k in enumerate(keys):
        col = F.col(f"`{k.name}`")
        values.append((_internal(col, k.type) if pt.root(k.type) in ("DATE", "TIMESTAMP", "TIMESTAMP_LTZ")
                       else col).alias(f"k{i}"))
    precisions = [getattr(k.type, "precision", 0) or 0 for k in keys]
    scales = [getattr(k.type, "scale", 0) or 0 for k in keys]

    def build(spark: SparkSession) -> Any:       # a py4j JavaObject (the JVM Column)
        gateway: Any = spark.sparkContext._gateway     # py4j: untyped
        jvm: Any = spark._jvm

        def array(of: Any, items: Sequence[Any]) -> Any:
            out = gateway.new_array(of, len(items))
            for i, x in enumerate(items):
                out[i] = x
            return out

        return jvm.icefloe.jvm.PaimonBucket.of(F.struct(*values)._jc, array(jvm.java.lang.String, kinds),
                                               array(jvm.int, precisions), array(jvm.int, scales), num_buckets)

    return jvm.jvm_column(build)


def key_column(schema: TableSchema) -> Optional[Column]:
    """``<bucket>_<partition key>`` (``partition_key``; None if neither is needed)."""
    from pyspark.sql import functions as F

    parts: list[Column] = []
    if schema.num_buckets > 0:
        keys = schema.bucket_key_fields
        bucket = _jvm_bucket(keys, schema.num_buckets)
        if bucket is None:
            bucket = _bucket_udf([k.type for k in keys], schema.num_buckets)(*[F.col(f"`{k.name}`") for k in keys])
        parts.append(bucket.cast("string"))
    elif schema.partition_keys:
        parts.append(F.lit("0"))
    else:
        return None
    for f in schema.partition_fields:
        parts.append(partition_key.field_text(_internal(F.col(f"`{f.name}`"), f.type), pt.root(f.type) in _TEXT_ROOTS))
    return partition_key.key_of(parts)


def decode_key(key: str, schema: TableSchema) -> tuple[tuple[Any, ...], int]:
    bucket_text, _, fields = key.partition(partition_key.SEP)
    texts = partition_key.field_texts(fields, len(schema.partition_fields)) if schema.partition_keys else []
    return tuple(_decode(v, f.type) for v, f in zip(texts, schema.partition_fields)), int(bucket_text)


# --------------------------------------------------------------------------- the write
def _records_per_file(schema: TableSchema, target_bytes: int) -> int:
    per_row = 0.0
    for f in schema.fields:
        r = pt.root(f.type) or "NESTED"
        per_row += {"BOOLEAN": 0.2, "TINYINT": 1, "SMALLINT": 1.5, "INT": 2.5, "BIGINT": 4, "DATE": 2,
                    "FLOAT": 4, "DOUBLE": 6, "TIMESTAMP": 4, "TIMESTAMP_LTZ": 4}.get(r, 8)
    return max(1000, int(target_bytes / max(per_row, 0.1)))


def write_data_files(df: DataFrame, table: PaimonStore, arrange: Optional[Arrange] = None,
                     target_file_size: Optional[int] = None, tracked: bool = False) -> list[CommitMessage]:
    """Write ``df`` as data files of ``table`` (a PaimonTable); return commit messages.
    ``arrange(rows, key column or None)``, if given, spreads the aligned rows over the tasks and
    orders them within each (sort compaction), in place of the shuffle by partition and bucket;
    ``target_file_size`` (bytes) replaces the table's ``target-file-size``. ``tracked``: ``df`` has
    the rows' ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` after the table's columns (rows a row-tracking
    table moves to new files), written as columns of the files (``row_tracking``)."""
    schema = table.table_schema
    store = table.store
    co = schema.core_options
    fields = list(schema.fields) + (list(row_tracking.FIELDS) if tracked else [])
    aligned = check_partition_ranges(align_dataframe(df, fields, table.name), schema.partition_keys,
                                     table.name)
    key = key_column(schema)
    # a store Spark cannot reach, a table with file indexes (built from the rows each task writes) or
    # an ORC table (Arrow's ORC writer, statistics from the task's rows): Python tasks write the
    # files through the FileIO (moved rows of a row-tracking table with their ids as columns)
    if not store.io.spark_native or not index_options(schema.options).empty or co.file_format != "parquet":
        if arrange is not None:
            return _write_in_python(arrange(aligned, None), table, tracked)
        return _write_in_python(aligned if key is None else aligned.repartition(key), table, tracked)
    if arrange is not None:
        if key is not None:
            aligned = aligned.withColumn(KEY_COL, key)
        aligned = arrange(aligned, KEY_COL if key is not None else None)
    elif key is not None:
        aligned = aligned.withColumn(KEY_COL, key).repartition(KEY_COL)
    write_id = uuid.uuid4().hex
    staging = f"{table.location}/.staging-{write_id}"
    codec = co.file_compression
    writer = (aligned.write.mode("error")
              .option("compression", "none" if codec in ("none", "uncompressed") else codec)
              .option("maxRecordsPerFile", _records_per_file(schema, target_file_size or co.target_file_size)))
    block_size = co.block_size()
    if block_size is not None:          # file.block-size: Parquet's row-group size, as Paimon's writer takes it
        writer = writer.option("parquet.block.size", str(block_size))
    if key is not None:
        writer = writer.partitionBy(KEY_COL)
    try:
        with staged_files(store.io) as moved:
            try:
                footers = described_writes.save(aligned.sparkSession, writer, staging, write_id)
            except Exception as e:  # a failed Spark job: our null check or anything else
                raise explain_spark_error(e) from None
            return _collect(store, schema, staging, key is not None, moved, footers,
                            tuple(f.name for f in fields) if tracked else None)
    finally:
        store.io.delete_tree(staging)


def _write_in_python(aligned: DataFrame, table: PaimonStore, tracked: bool = False) -> list[CommitMessage]:
    """Each task writes its rows with Arrow through the table's FileIO (all rows of a partition and
    bucket are in one task) and returns its commit messages; the driver gets only those.
    ``tracked``: the rows carry their ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (``write_data_files``)."""
    import pickle

    io, location, schema, name = table.store.io.for_tasks(), table.store.table_path, table.table_schema, table.name

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # in the Python workers
        import pyarrow as pa

        got = task_input(batches)
        if got is None:
            return
        messages = write_arrow_table(FileStore(io, location, schema), schema, got[0], name, tracked=tracked)
        yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(messages)], pa.binary())], names=["messages"])

    try:
        rows = aligned.mapInArrow(run, "messages binary").collect()
    except Exception as e:
        raise explain_spark_error(e) from None
    return [m for r in rows for m in pickle.loads(r["messages"])]


def _collect(store: FileStore, schema: TableSchema, staging: str, keyed: bool, moved: list[str],
             footers: dict[str, Any], write_cols: Optional[tuple[str, ...]] = None) -> list[CommitMessage]:
    """Move staged files into place and describe them (their footers as the writing tasks gave
    them, ``described_writes``, or read here), grouped per (partition, bucket)."""
    co = schema.core_options
    namer = DataFileNamer(co.data_file_prefix, co.file_format)
    staged: list[tuple[str, tuple[Any, ...], int]] = []
    for path in sorted(store.io.walk_files(staging)):
        name = os.path.basename(path)
        if not name.endswith(".parquet") or name.startswith((".", "_")):
            continue
        if keyed:
            rel = os.path.relpath(os.path.dirname(path), staging)
            partition, bucket = decode_key(rel.split("=", 1)[1], schema)
        else:
            partition, bucket = (), 0
        staged.append((path, partition, bucket))

    described = list(zip(staged, described_writes.footers(footers, store.io, [p for p, _, _ in staged])))
    total_buckets = schema.num_buckets if schema.num_buckets > 0 else -1
    restored = restored_sequence_numbers(store) if total_buckets > 0 else {}
    groups: dict[tuple[tuple[Any, ...], int], list[DataFileMeta]] = {}
    for (path, partition, bucket), (size, md) in described:
        if md.num_rows == 0:
            store.io.delete(path)
            continue
        name = namer.next()
        final = f"{store.bucket_dir(partition, bucket)}/{name}"
        store.io.rename(path, final)
        moved.append(final)
        stats, stats_cols = value_stats(schema.fields, stats_from_footer(md, schema.fields),
                                        co.stats_mode, co.stats_truncate_length)
        meta = DataFileMeta(
            file_name=name, file_size=size, row_count=md.num_rows, value_stats=stats,
            min_sequence_number=0, max_sequence_number=md.num_rows - 1, schema_id=schema.id,
            creation_time=local_now_millis(), value_stats_cols=stats_cols, file_path=final, write_cols=write_cols,
        )
        gkey = (partition, bucket)
        if total_buckets > 0:
            seq_key = (encode_row(list(partition), schema.partition_types).data, bucket)
            start = restored.get(seq_key, -1) + 1
            meta = meta.with_sequence_numbers(start)
            restored[seq_key] = meta.max_sequence_number
        groups.setdefault(gkey, []).append(meta)
    return [CommitMessage(p, b, total_buckets, files) for (p, b), files in groups.items()]


# --------------------------------------------------------------------------- Python data source hooks
# (in their own light module: a Python worker imports it to write its first batch)
from icefloe.spark.paimon_tasks import (  # noqa: E402
    TASK_SEQUENCE_BITS as TASK_SEQUENCE_BITS,
    paimon_abort as paimon_abort,
    paimon_commit as paimon_commit,
    paimon_write_batches as paimon_write_batches,
)


def _local(location: str) -> str:
    return normalize_location(location)


# --------------------------------------------------------------------------- primary-key tables
ARRIVAL_COL = "__icefloe_arrival"


def write_kv_files(df: DataFrame, table: PaimonStore, restored: dict[tuple[bytes, int], int],
                   kind: Optional[int] = None, kind_column: Optional[str] = None) -> list[CommitMessage]:
    """Upserts into a primary-key table: rows go to one Spark task per group of (partition,
    bucket)s (dynamic buckets: per group of partitions, whose task assigns the buckets), in
    the order ``df`` holds them, and each task numbers and writes its buckets' records
    (``icefloe.paimon.kv_writer``); the driver gets only
    the commit messages. ``restored``: the highest committed sequence number per
    (partition bytes, bucket); ``kind``: one row kind for every row (e.g. DELETE), else
    the ``rowkind.field`` column's or inserts. ``kind_column``: rows built by icefloe (the
    table's columns in its types, as MERGE makes them) whose kinds are in that column."""
    import pickle

    from pyspark.sql import functions as F

    schema = table.table_schema
    aligned = df if kind_column else align_dataframe(df, schema.fields, table.name)
    aligned = check_partition_ranges(aligned, schema.partition_keys, table.name)
    # dynamic buckets: one task per partition assigns its keys buckets from the HASH index
    key = key_column(schema)
    staged = aligned.withColumn(ARRIVAL_COL, F.monotonically_increasing_id())
    staged = staged.repartition(1) if key is None else staged.withColumn(KEY_COL, key).repartition(KEY_COL)
    staged = staged.sortWithinPartitions(ARRIVAL_COL).drop(KEY_COL, ARRIVAL_COL)
    io, location, name = table.io, table.location, table.name
    index_base = (table.store.snapshots.latest_id() or 0) if schema.num_buckets == -1 else None

    job = str(uuid.uuid4())[:24]          # every file of this write is named data-/index-<job>...
    marker = abort_marker(table.store.table_path, job)

    def write_buckets(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa
        from pyspark import TaskContext

        parts = [b for b in batches if b.num_rows]
        if not parts:
            return
        store = FileStore(io, location, schema)
        ctx = TaskContext.get()
        namer = DataFileNamer(schema.core_options.data_file_prefix, schema.core_options.file_format)
        namer.uuid = job_uuid(job, ctx.partitionId() if ctx else 0)
        data = pa.Table.from_batches(parts)
        kinds = None if kind is None else pa.array([kind] * data.num_rows, pa.int8())
        if kind_column:
            kinds = data.column(kind_column)
            data = data.drop_columns([kind_column])
        messages = write_kv_table(store, schema, data, name, restored, kinds, namer=namer, index_base=index_base)
        if io.exists(marker):              # the write failed elsewhere and its files are being removed
            store.delete_uncommitted(messages)
            return
        yield pa.RecordBatch.from_pylist([{"message": pickle.dumps(m)} for m in messages],
                                         schema=pa.schema([("message", pa.binary())]))

    try:
        rows = staged.mapInArrow(write_buckets, "message binary").collect()
    except Exception as e:
        # a failed task removed its own files; those of the tasks that finished are found by
        # name. A task still running (Spark kills them asynchronously) looks for the marker
        # after its last write and removes its own files: it either sees the marker or wrote
        # everything before the marker existed, and so before the listing below.
        io.write_bytes(marker, b"", overwrite=True)
        clean_up_failed_job(df.sparkSession, lambda: remove_job_files(
            table.store, f"{schema.core_options.data_file_prefix}{job}", f"index-{job}",
            f"{schema.core_options.changelog_file_prefix}{job}"))
        raise explain_spark_error(e) from None
    return [pickle.loads(r.message) for r in rows]


def abort_marker(table_path: str, job: str) -> str:
    """The file that tells the tasks of a failed write to remove what they wrote. It lives in
    a ``.staging-`` directory, which orphan cleanup removes once it is old."""
    return f"{table_path}/.staging-{job}/aborted"


def job_uuid(job: str, task: int) -> str:
    """A writer task's file-name uuid: the job's 24 leading characters, then the task id."""
    return f"{job}{task:012x}"


def remove_job_files(store: FileStore, *prefixes: str) -> None:
    """Delete the data and index files of a failed write (their names start with ``prefixes``)."""
    for path in list(store.io.walk_files(store.table_path)):
        rel = os.path.relpath(path, store.table_path).split(os.sep)
        if rel[0] in ("snapshot", "manifest", "schema", "tag", "branch"):
            continue
        if os.path.basename(path).startswith(prefixes):
            store.io.delete(path)
