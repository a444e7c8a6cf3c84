"""Paimon's hidden metadata columns, as its Spark connector reads them: ``__paimon_file_path`` (the
data file a row is stored in), ``__paimon_row_index`` (its position in that file, from 0),
``__paimon_partition`` (a struct of the partition's values) and ``__paimon_bucket``; and of a
row-tracking table (``icefloe.paimon.row_tracking``) ``_ROW_ID`` and ``_SEQUENCE_NUMBER``.
A data-evolution table's row is merged from the files of its row-id range: its file is the range's
oldest (where its rows were first written), its position the one there.

Paimon gives the file and position of a row where the row is one stored record: an append table,
a deletion-vector table (its files above level 0) or a primary-key table whose buckets are fully
compacted (one sorted run, nothing to merge). A row merged from several records has neither, and
Paimon's reader refuses them there; so does this one, with the way out (a full compaction).
The files are read by Spark's Parquet reader, which gives each row's file and position itself.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from icefloe.errors import NotSupportedError
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon import row_tracking
from icefloe.spark import paimon_data_evolution as evolution
from icefloe.spark.paimon_data_evolution import read_evolved
from icefloe.spark.paimon_read import raw_buckets, read_files, read_merged, unmarking_scan
from icefloe.paimon.arrow_read import is_parquet

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.paimon.manifest import ManifestEntry
    from icefloe.paimon.schema import TableSchema
    from icefloe.paimon.snapshot import Snapshot
    from icefloe.spark.paimon_target import SparkPaimonTable

FILE_PATH = "__paimon_file_path"
ROW_INDEX = "__paimon_row_index"
PARTITION = "__paimon_partition"
BUCKET = "__paimon_bucket"
NAMES = (FILE_PATH, ROW_INDEX, PARTITION, BUCKET)


def read_with_metadata(table: SparkPaimonTable, schema: TableSchema, snapshot: Optional[Snapshot],
                       entries: Sequence[ManifestEntry], names: Sequence[str]) -> DataFrame:
    """The rows of ``entries`` (a planned snapshot of ``table``, whose schema is ``schema``) with
    the table's columns, then the metadata columns ``names``."""
    from pyspark.sql import functions as F

    tracked = [n for n in names if n in row_tracking.NAMES]
    unknown = [n for n in names if n not in NAMES and n not in tracked]
    if unknown:
        raise ValueError(f"unknown metadata columns {unknown}; Paimon's: {', '.join(NAMES + row_tracking.NAMES)}")
    if tracked and not row_tracking.enabled(schema.options):
        raise ValueError(f"{', '.join(tracked)}: table {table.name} does not track rows "
                         f"({row_tracking.ENABLED} is not set)")
    spark = table.spark
    if tracked or evolution.enabled(schema.options):     # a data-evolution table's rows are merged by row id
        return _read_tracked(table, schema, snapshot, entries, names)
    if schema.primary_keys and not dv.enabled(schema.options) and FILE_PATH not in names and ROW_INDEX not in names:
        df = read_merged(spark, table, schema, entries, bucket_col=BUCKET)      # partition and bucket only
        if PARTITION in names:
            df = df.withColumn(PARTITION, F.struct(*[F.col(f"`{k}`") for k in schema.partition_keys]))
        return df.select(*[F.col(f"`{f.name}`") for f in schema.fields], *[F.col(n) for n in names])
    if schema.primary_keys:
        entries = _stored_rows(table, schema, snapshot, entries, names)
    # an append table's rows its deletion vectors mark are gone: dropped by the scan, else joined away
    deleted = vectors_in_scan(table, entries, snapshot) if not schema.primary_keys else {}
    df = read_files(spark, [e.file.path for e in entries], schema.fields,
                    file_fields=[table.schema_by_id(e.file.schema_id).fields for e in entries],
                    file_col=FILE_PATH, pos_col=ROW_INDEX, io=table.io, deleted=deleted or None)
    if deleted is None:
        df = without_marked(table, df, entries, snapshot, FILE_PATH, ROW_INDEX)
    if BUCKET in names:
        buckets = spark.createDataFrame(sorted({(e.file.path, e.bucket) for e in entries}),
                                        f"`{FILE_PATH}_of` string, `{BUCKET}` int")
        df = df.join(F.broadcast(buckets), df[FILE_PATH] == buckets[f"{FILE_PATH}_of"], "left") \
            .drop(f"{FILE_PATH}_of")
    if PARTITION in names:
        df = df.withColumn(PARTITION, F.struct(*[F.col(f"`{k}`") for k in schema.partition_keys]))
    return df.select(*[F.col(f"`{f.name}`") for f in schema.fields], *[F.col(n) for n in names])


def _stored_rows(table: SparkPaimonTable, schema: TableSchema, snapshot: Optional[Snapshot],
                 entries: Sequence[ManifestEntry], names: Sequence[str]) -> list[ManifestEntry]:
    """The entries of a primary-key table whose stored records are its rows, as they are; a
    refusal naming the columns asked for when some rows exist only merged."""
    if dv.enabled(schema.options):
        readable = dv.readable(entries)
        vectors = dv.bucket_vectors(table.store, snapshot)
        marked = [e for e in readable
                  if (bv := vectors.get((e.partition.to_bytes(), e.bucket))) is not None and e.file.file_name in bv.ranges]
        if marked:
            raise NotSupportedError(f"reading {', '.join(names)}", table.name, "paimon",
                                    f"{len(marked)} data file(s) have rows deleted by a deletion vector; icefloe "
                                    "reads these columns of deletion-vector tables only where no file has one yet "
                                    "(CALL sys.compact(table => ..., compact_strategy => 'full') rewrites them)")
        return readable
    raw, merged = raw_buckets(entries)
    if merged:
        raise NotSupportedError(f"reading {', '.join(names)}", table.name, "paimon",
                                "some buckets hold records that merge into one row (level 0 files or several "
                                "sorted runs), so a row has no one file or position; Paimon reads these columns "
                                "of append tables, deletion-vector tables and fully compacted primary-key tables "
                                "(CALL sys.compact(table => ..., compact_strategy => 'full') compacts it fully)")
    return raw


def read_tracked(table: SparkPaimonTable, schema: TableSchema, entries: Sequence[ManifestEntry], file_col: str,
                 pos_col: str, bucket_col: Optional[str] = None,
                 deleted: Optional[dict[str, str]] = None) -> DataFrame:
    """The rows of an append table's ``entries`` with ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` after its
    columns (``row_tracking``: the file's own columns where it has them, else its first row id + the
    row's position and its highest sequence number), then each row's file and position (and bucket).
    ``deleted``: the options of a scan that drops marked positions (``vectors_in_scan``)."""
    from pyspark.sql import functions as F

    if evolution.enabled(schema.options):        # a row-id range's files merged: the range's oldest file
        return read_evolved(table, schema, entries, tracked=True, file_col=file_col, pos_col=pos_col,
                            bucket_col=bucket_col)
    spark = table.spark
    fields = list(schema.fields) + list(row_tracking.FIELDS)
    df = read_files(spark, [e.file.path for e in entries], fields,
                    file_fields=[list(table.schema_by_id(e.file.schema_id).fields) + list(row_tracking.FIELDS)
                                 for e in entries],
                    file_col=file_col, pos_col=pos_col, io=table.io, deleted=deleted)
    facts = spark.createDataFrame(
        sorted({(e.file.path, e.file.first_row_id, e.file.max_sequence_number, e.bucket) for e in entries}),
        "`_icefloe_of` string, `_icefloe_first` long, `_icefloe_seq` long, `_icefloe_bucket` int")
    df = df.join(F.broadcast(facts), df[file_col] == facts["_icefloe_of"], "left")
    row_id = F.coalesce(F.col(f"`{row_tracking.ROW_ID}`"), F.col("_icefloe_first") + F.col(pos_col))
    seq = F.coalesce(F.col(f"`{row_tracking.SEQUENCE_NUMBER}`"), F.col("_icefloe_seq"))
    return df.select(*[F.col(f"`{f.name}`") for f in schema.fields], row_id.alias(row_tracking.ROW_ID),
                     seq.alias(row_tracking.SEQUENCE_NUMBER), F.col(file_col), F.col(pos_col),
                     *([F.col("_icefloe_bucket").alias(bucket_col)] if bucket_col else []))


def _read_tracked(table: SparkPaimonTable, schema: TableSchema, snapshot: Optional[Snapshot],
                  entries: Sequence[ManifestEntry],
                  names: Sequence[str]) -> DataFrame:
    """A row-tracking table's rows with the metadata columns ``names``."""

    if evolution.enabled(schema.options):
        return _with_names(read_tracked(table, schema, entries, FILE_PATH, ROW_INDEX, BUCKET), schema, names)
    deleted = vectors_in_scan(table, entries, snapshot)
    df = read_tracked(table, schema, entries, FILE_PATH, ROW_INDEX, BUCKET, deleted or None)
    if deleted is None:
        df = without_marked(table, df, entries, snapshot, FILE_PATH, ROW_INDEX)
    return _with_names(df, schema, names)


def _with_names(df: DataFrame, schema: TableSchema, names: Sequence[str]) -> DataFrame:
    from pyspark.sql import functions as F

    if PARTITION in names:
        df = df.withColumn(PARTITION, F.struct(*[F.col(f"`{k}`") for k in schema.partition_keys]))
    return df.select(*[F.col(f"`{f.name}`") for f in schema.fields], *[F.col(f"`{n}`") for n in names])


def vectors_in_scan(table: SparkPaimonTable, entries: Sequence[ManifestEntry],
                    base: Optional[Snapshot]) -> Optional[dict[str, str]]:
    """The options of a Parquet scan of an append table's ``entries`` that drops the positions
    ``base``'s deletion vectors mark (``paimon_read.unmarking_scan``): the driver holds no marked
    position where they are many. ``{}`` where no file is marked; None where the scan cannot drop
    them (the session lacks the scan's format, Spark does not read the table's paths, or a file is
    not Parquet, whose rows Spark gives no position): ``without_marked`` then joins them away."""
    if base is None:
        return {}
    vectors = dv.bucket_vectors(table.store, base)
    marked = [(e, bv) for e in entries
              if (bv := vectors.get((e.partition.to_bytes(), e.bucket))) is not None and e.file.file_name in bv.ranges]
    if not marked:
        return {}
    if not table.io.spark_native or not all(is_parquet(e.file.path) for e in entries):
        return None
    return unmarking_scan(table.spark, table, marked)


def without_marked(table: SparkPaimonTable, df: DataFrame, entries: Sequence[ManifestEntry],
                   base: Optional[Snapshot], file_col: str, pos_col: str) -> DataFrame:
    """``df`` (an append table's rows of ``entries`` with their file path ``file_col`` and position
    ``pos_col``) less the positions ``base``'s deletion vectors mark: the marked (file, position)
    pairs, read on the driver, joined away."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    vectors = dv.bucket_vectors(table.store, base) if base is not None else {}
    files: list[str] = []
    positions: list[Any] = []
    loaded: dict[tuple[bytes, int], dict[str, Any]] = {}
    for e in entries:
        key = (e.partition.to_bytes(), e.bucket)
        bv = vectors.get(key)
        if bv is None or e.file.file_name not in bv.ranges:
            continue
        if key not in loaded:
            loaded[key] = bv.load(table.io)
        marked = loaded[key][e.file.file_name].to_array()
        files += [e.file.path] * len(marked)
        positions.append(marked)
    if not files:
        return df
    import numpy as np

    gone = table.spark.createDataFrame(pa.table({file_col: pa.array(files, pa.string()),
                                                 pos_col: pa.array(np.concatenate(positions).astype(np.int64))}))
    return df.join(F.broadcast(gone), [file_col, pos_col], "left_anti")
