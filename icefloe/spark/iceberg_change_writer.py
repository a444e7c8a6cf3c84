"""A merge-on-read change's files written by icefloe's JVM writer (``ChangeWriter.java``).

The tasks that receive a change's clustered rows write them with Spark's own Parquet writer: the
position delete files (one per data file, format v2) or one Puffin file of deletion vectors per
task (v3, each vector merged with the data file's earlier deletes, read where they are kept), and
the updated and inserted rows' data files (on a partitioned table, each row's partition named by a
key column, ``partition_key``, each partition's rows in their own files, which the driver then moves
into their partition's directory). No Python worker starts and no row leaves the JVM. Each
task answers the files it wrote, with their footers, and its count of positions per data file and
kind; the driver turns them into DataFiles as ``described_writes`` does for an append.

``usable`` says where it applies: icefloe's JVM classes load, Spark reaches the table's files, and
the rows to write (if any) go to an unsorted table whose columns Spark's writer
stores as Iceberg does. Elsewhere ``iceberg_delete_write`` writes with Arrow in Python tasks.
"""
from __future__ import annotations

import os
import struct
from typing import TYPE_CHECKING, Any, Callable, Optional

from icefloe.core.types import FixedType, ListType, MapType, StructType, UUIDType, VariantType
from icefloe.core.types.model import UnknownType
from icefloe.iceberg.arrow_writer import estimate_records_per_file
from icefloe.iceberg.delete_files import POSITION_DELETE_SCHEMA, delete_granularity, describe_delete_file
from icefloe.iceberg.manifest import DATA, POSITION_DELETES, DataFile
from icefloe.iceberg.metrics_modes import MetricsConfig, for_table
from icefloe.iceberg.parquet_props import ParquetSettings
from icefloe.iceberg.sort_order import writer_sort_columns
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.spark import described_writes, jvm
from icefloe.spark.iceberg_evolved_read import has_nanos, schema_has_uuid
from icefloe.spark.iceberg_read import delete_sources
from icefloe.spark.iceberg_write import decode_partition_key, describe_files, partition_key_expr

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.core.io import FileIO

KEY = "_icefloe_partition_key"      # the partition key column of a keyed write
_NOT_STORED_BY_SPARK = (UnknownType, VariantType, FixedType, UUIDType)


def usable(spark: SparkSession, meta: TableMetadata, io: FileIO, row_meta: Optional[TableMetadata] = None,
           previous: Optional[dict] = None) -> bool:
    """Whether ``ChangeWriter`` can write this change: the class loads, Spark reaches the table's
    files, delete files are written one per data file (or as vectors, each data file's ``previous``
    deletes all of a kind the tasks read: ``iceberg_read.delete_sources``), and, when rows are written
    (``row_meta`` given), the table has no sort order and its
    columns hold no type Spark's Parquet writer stores differently from Iceberg."""
    if not io.spark_native or not jvm.available(spark):
        return False
    if meta.format_version < 3 and delete_granularity(dict(meta.properties)) != "file":
        return False
    if not all(ParquetSettings.of(meta.properties, delete=d).spark_writable() for d in (False, True)):
        return False        # a codec Spark's Parquet writer lacks (brotli): the Arrow writers have it
    if meta.format_version >= 3 and any(delete_sources(p, ds) is None for p, ds in (previous or {}).items()):
        return False
    if row_meta is None:
        return True
    schema = row_meta.schema
    if writer_sort_columns(meta)[1]:
        return False
    if schema_has_uuid(schema) or has_nanos(schema):
        return False
    if any(isinstance(f.field_type, (StructType, ListType, MapType)) for f in schema.fields):
        return False        # the field ids of nested fields: the Arrow writer sets them all
    return not any(isinstance(f.field_type, _NOT_STORED_BY_SPARK) for f in schema.fields)


def write(clustered: DataFrame, meta: TableMetadata, io: FileIO, partition_of: dict, previous: dict, job_id: str,
          marker: str, deleting: tuple, writing: tuple, row_meta: Optional[TableMetadata] = None) -> tuple:
    """Run ``ChangeWriter`` over ``clustered`` (``row_meta``'s columns to write, if given, then the
    data file's path, the position and the kind, as ints); returns (files written, positions per
    (data file, kind)). ``previous`` maps a data file to its earlier position deletes and vectors,
    merged into its new vector on a v3 table."""
    spark = clustered.sparkSession
    props = dict(meta.properties)
    # the data files' metrics modes, refused (naming the property) before anything is written
    modes = for_table(row_meta, props) if row_meta is not None else None
    data_options = ParquetSettings.of(props).hadoop_options()      # refused before anything is written
    delete_options = ParquetSettings.of(props, delete=True).hadoop_options()
    lines = [("job", job_id), ("data-dir", f"{meta.location.rstrip('/')}/data"), ("marker", marker),
             ("field-ids", ",".join(str(f.field_id) for f in row_meta.schema.fields) if row_meta else ""),
             ("deleting", ",".join(str(int(k)) for k in deleting)),
             ("writing", ",".join(str(int(k)) for k in writing)), ("vectors", str(meta.format_version >= 3).lower())]
    # Spark's Parquet writer options of each kind of file: the table's write.parquet.* and write.delete.parquet.*
    lines += [("data-option", f"{k}={v}") for k, v in data_options.items()]
    lines += [("delete-option", f"{k}={v}") for k, v in delete_options.items()]
    if row_meta is not None:
        target = int(props.get("write.target-file-size-bytes", 512 * 1024 * 1024))
        lines.append(("max-records", str(estimate_records_per_file(meta, target, row_meta.schema))))
    fault = getattr(io, "task_fault", None)      # a test's FileIO that fails the tasks' writes
    if fault:
        lines.append(("fail-at", fault))
    keyed = row_meta is not None and not meta.spec.is_unpartitioned
    if keyed:
        lines.append(("keyed", "true"))
    if meta.format_version >= 3:
        for path, deletes in previous.items():
            sources = delete_sources(path, deletes)
            if sources is None:     # ``usable`` refuses such a change: the tasks never see one
                raise ValueError(f"the change writer cannot merge the earlier deletes of {path}")
            for kind, file, offset, length in sources:
                lines.append(("previous", f"{path}\t{kind}\t{file}\t{int(offset)}\t{int(length)}"))
    settings = "\n".join(f"{k}\t{v}" for k, v in lines)
    gateway: Any = spark._jvm       # py4j's view of the JVM: its classes are known at run time
    jdf: Any = clustered._jdf
    frames = bytes(gateway.icefloe.jvm.ChangeWriter.write(spark._jsparkSession, jdf, settings))
    files, counts = _parse(frames, meta, partition_of, row_meta, modes)
    if keyed:       # each partition's files into its directory, as every other write places them
        data_dir = f"{meta.location.rstrip('/')}/data"
        for f in files:
            if f.content == DATA:
                final = f"{data_dir}/{meta.spec.partition_path(meta.schema, f.partition)}/{os.path.basename(f.file_path)}"
                io.rename(f.file_path, final)
                f.file_path = final
    return files, counts


def in_scan_order(rows: DataFrame) -> bool:
    """Whether ``rows`` reach their tasks as one file scan reads them, each task holding every row of
    each data file it reads, in position order (``ScanOrder.java``): then they are already clustered
    as ``write`` takes them, and no exchange is needed. An UPDATE's or DELETE's rows on a table
    whose data files hold one row group each (``iceberg_read.whole_files``) come so; a MERGE's come
    from a join."""
    gateway: Any = rows.sparkSession._jvm
    jdf: Any = rows._jdf
    return bool(gateway.icefloe.jvm.ScanOrder.keepsFilesWhole(jdf))


_MAPPED_FILES = 2000         # data files whose first row ids a plan's map may hold


def rows_for(row_meta: TableMetadata, tasks: Optional[list], file_col: str, pos_col: str,
             kind_col: str) -> Optional[Callable[[DataFrame], DataFrame]]:
    """A function of the change's rows (the table's columns, its stored lineage when ``tasks``
    is given, ``file_col``, ``pos_col`` and ``kind_col``) giving what ``write`` takes: ``row_meta``'s
    columns, the lineage of new rows computed (a row id inherited from its file's first row id and
    position where null; the last sequence number null, the commit's), then the path, the position
    and the kind, as ``file_path``, ``pos`` and an int ``kind_col``, then, on a partitioned table,
    each row's partition key (``iceberg_write.partition_key_expr``). None where the files are too
    many to map. (``write`` gives the columns their field ids.)"""
    from pyspark.sql import functions as F

    from icefloe.spark.iceberg_lineage import LAST_UPDATED, ROW_ID, ROW_ID_COL

    if tasks is not None and len(tasks) > _MAPPED_FILES:
        return None

    def build(df: DataFrame):
        out = []
        for f in row_meta.schema.fields:
            if tasks is not None and f.name == ROW_ID.name:
                firsts = F.create_map(*[c for t in tasks for c in (F.lit(t.path), F.lit(t.file.first_row_id).cast("long"))])
                c = F.coalesce(F.col(ROW_ID_COL).cast("long"), firsts[F.col(file_col)] + F.col(pos_col)).alias(f.name)
            elif tasks is not None and f.name == LAST_UPDATED.name:
                c = F.lit(None).cast("long").alias(f.name)
            else:
                c = f"`{f.name}`"
            out.append(c)
        key = [] if row_meta.spec.is_unpartitioned else [partition_key_expr(row_meta.spec, row_meta.schema).alias(KEY)]
        return df.select(*out, F.col(file_col).alias("file_path"), F.col(pos_col).alias("pos"),
                         F.col(kind_col).cast("int").alias(kind_col), *key)

    return build


def _parse(frames: bytes, meta: TableMetadata, partition_of: dict, row_meta: Optional[TableMetadata],
           modes: Optional[MetricsConfig] = None) -> tuple:
    files: list = []
    counts: dict = {}
    pos = 0

    def string() -> str:
        nonlocal pos
        (n,) = struct.unpack_from(">i", frames, pos)
        pos += 4 + n
        return frames[pos - n:pos].decode("utf-8")

    def footer():
        nonlocal pos
        size, n = struct.unpack_from(">qi", frames, pos)
        pos += 12 + n
        return size, described_writes.parse_footer(frames[pos - n:pos])

    while pos < len(frames):
        tag = frames[pos:pos + 1]
        pos += 1
        if tag in (b"D", b"K"):     # a data file; a keyed write's names its partition by its rows' key
            if row_meta is None or modes is None:
                raise ValueError("a data file from the change writer of a change that writes no rows")
            path = string()
            size, md = footer()
            partition = decode_partition_key(string(), meta.spec, meta.schema) if tag == b"K" else ()
            (f,) = describe_files([(path, partition, size, md)], row_meta.schema, meta.spec, modes)
            f.sort_order_id = 0
            files.append(f)
        elif tag == b"P":
            path = string()
            size, md = footer()
            target = string()
            spec_id, partition = partition_of[target]
            f = describe_delete_file(path, size, md, POSITION_DELETE_SCHEMA, partition, spec_id, POSITION_DELETES)
            f.referenced_data_file = target
            files.append(f)
        elif tag == b"V":
            path = string()
            (size,) = struct.unpack_from(">q", frames, pos)
            pos += 8
            target = string()
            offset, length, cardinality = struct.unpack_from(">qqq", frames, pos)
            pos += 24
            spec_id, partition = partition_of[target]
            files.append(DataFile(path, "PUFFIN", partition, cardinality, size, content=POSITION_DELETES,
                                  spec_id=spec_id, referenced_data_file=target, content_offset=offset,
                                  content_size_in_bytes=length))
        elif tag == b"C":
            target = string()
            kind, n = struct.unpack_from(">iq", frames, pos)
            pos += 12
            counts[(target, kind)] = counts.get((target, kind), 0) + n
        else:
            raise ValueError(f"unknown frame {tag!r} from the change writer")
    return files, counts


__all__ = ["usable", "write", "rows_for", "in_scan_order"]
