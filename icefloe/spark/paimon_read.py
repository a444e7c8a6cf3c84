"""Reading planned Paimon data files with Spark's own Parquet reader.

The driver plans (``icefloe.paimon.scan``); Spark reads exactly the files that may
match. Spark matches Parquet columns by name: the read schema carries no
``parquet.field.id`` (files written by pypaimon have no field ids, and Spark refuses
id-based reads of such files). After schema evolution a file's columns carry the
names of the schema it was written with, so the files are read in groups, one per
schema layout, each under its own schema's names and types; each group's columns are
then matched to the read schema by field id (renamed, cast to a widened type, nulls
for columns added later; ROW fields by id too) and the groups are unioned. The files
are passed one by one, so Spark infers no partition columns from the ``k=v``
directories. The filter is applied again on rows.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence

from icefloe.paimon import chain
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon import merge as mg
from icefloe.paimon import row_tracking
from icefloe.paimon import types as pt
from icefloe.core.io import LOCAL, normalize_location, strip_scheme
from icefloe.errors import CorruptDataFileError, CorruptMetadataError, NotSupportedError, UnsupportedTableError
from icefloe.core import types as core
from icefloe.paimon.arrow_read import is_avro, is_orc, is_parquet, iter_data_file, read_data_file
from icefloe.paimon.changelog import KIND_LABELS
from icefloe.paimon.merge import iter_merged_bucket
from icefloe.spark import connect, deleted_rows, jvm
from icefloe.spark.scans import empty_frame, file_scan
from icefloe.paimon.schema import SchemaHistory, evolve_arrow, layout, same_layout, same_type_layout
from icefloe.paimon.table import FileStoreTable
from icefloe.spark.bitmaps import bit_is_clear, bit_of, bitmap_words, literal_filter, word_of
from icefloe.spark.iceberg_read import raise_if_missing, table_path_of

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession

    from icefloe.core.io import FileIO
    from icefloe.core.timetravel import AsOf
    from icefloe.paimon.deletion_vectors import BucketVectors
    from icefloe.paimon.manifest import ManifestEntry
    from icefloe.paimon.schema import TableSchema
    from icefloe.paimon.snapshot import Snapshot
    from icefloe.paimon.types import DataField
    from icefloe.spark.paimon_target import PaimonStore, Where

    #: a marked file: its manifest entry and its bucket's deletion vectors
    Marked = tuple[ManifestEntry, BucketVectors]


def read_files(spark: SparkSession, paths: Sequence[str], fields: Sequence[DataField], where: Where = None,
               columns: Optional[Sequence[str]] = None, file_fields: Optional[Sequence[Sequence[DataField]]] = None,
               file_col: Optional[str] = None, pos_col: Optional[str] = None, io: Optional[FileIO] = None,
               extra: Optional[Mapping[str, str]] = None, deleted: Optional[Mapping[str, str]] = None) -> DataFrame:
    """A DataFrame of the given data files under the table's (Paimon) fields.
    ``file_fields[i]``, if given, are the fields of the schema ``paths[i]`` was written
    with (default: ``fields``). ``file_col`` adds a column of that name holding each row's
    data file (the path as ``paths`` has it), ``pos_col`` one with its position in that file,
    for row-level changes. ``io``: the table's FileIO; when Spark cannot take its paths (an object
    store without the session's connector) Python tasks read the files through it. ``deleted``: the
    options of the in-scan deletes (``deleted_rows.scan_options``), if the scan drops rows."""
    schema = pt.to_spark_schema(fields, with_ids=False)
    if paths and io is not None and not io.spark_native:
        df = _read_in_python(spark, paths, file_fields or [fields] * len(paths), fields, file_col, pos_col, io)
    elif not paths:
        df = empty_frame(spark, schema)
        if file_col:
            from pyspark.sql import functions as F

            df = df.withColumn(file_col, F.lit(None).cast("string"))
            if pos_col:
                df = df.withColumn(pos_col, F.lit(None).cast("long"))
    else:

        groups: dict[tuple[Any, ...], tuple[Sequence[DataField], list[str]]] = {}
        for i, path in enumerate(paths):
            ff = file_fields[i] if file_fields is not None else fields
            key = (layout(ff), tuple((str(f.type), f.nullable) for f in ff), is_orc(path), is_avro(path))
            groups.setdefault(key, (ff, []))[1].append(path)
        # Spark's ORC reader has no ``_metadata.row_index``: ORC files whose row positions are
        # wanted are read by Python tasks, which count them; so are Avro files (Spark has no Avro
        # reader of its own)
        frames = [_read_in_python(spark, group_paths, [ff] * len(group_paths), fields, file_col, pos_col,
                                  io or LOCAL)
                  if _in_python(group_paths[0], pos_col, extra, deleted) else
                  _read_group(spark, group_paths, ff, fields, file_col, pos_col, extra, deleted)
                  for ff, group_paths in groups.values()]
        df = frames[0]
        for other in frames[1:]:
            df = df.union(other)
    if where is not None:
        df = df.where(where)
    if columns:
        df = df.select(*[f"`{c}`" for c in columns] + [c for c in (file_col, pos_col) if c])
    return df


def _in_python(path: str, pos_col: Optional[str], extra: Optional[Mapping[str, str]],
               deleted: Optional[Mapping[str, str]]) -> bool:
    """Whether files of ``path``'s format are read by Python tasks rather than Spark's reader."""
    if is_avro(path):
        if extra or deleted:       # (readers keep Avro files out of the scans that need them)
            raise CorruptDataFileError(strip_scheme(path), "an Avro data file cannot join a scan of Spark's "
                                       "Parquet reader")
        return True
    return bool(pos_col and not extra and not deleted and is_orc(path))


def _read_in_python(spark: SparkSession, paths: Sequence[str], file_fields: Sequence[Sequence[DataField]],
                    fields: Sequence[DataField], file_col: Optional[str], pos_col: Optional[str],
                    io: FileIO) -> DataFrame:
    """One Python task per data file: read through ``io`` with pyarrow, evolved to ``fields`` by
    field id (the driver holds only the paths)."""
    import pickle

    from pyspark.sql.types import LongType, StringType, StructField, StructType

    out = pt.to_spark_schema(fields, with_ids=False)
    extra = ([StructField(file_col, StringType(), False)] if file_col else []) + \
        ([StructField(pos_col, LongType(), False)] if pos_col else [])
    out = StructType(list(out.fields) + extra)
    task_io = io.for_tasks()

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # in the Python workers
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema as spark_arrow_schema

        wanted = spark_arrow_schema(out, timezone="UTC")
        for batch in batches:
            for blob in batch.column(0).to_pylist():
                path, ff = pickle.loads(blob)
                data = evolve_arrow(read_data_file(path, task_io), ff, list(fields))
                if file_col:
                    data = data.append_column(file_col, pa.array([path] * data.num_rows, pa.string()))
                if pos_col:
                    data = data.append_column(pos_col, pa.array(range(data.num_rows), pa.int64()))
                cols = [data.column(i).cast(f.type) for i, f in enumerate(wanted)]
                yield from pa.Table.from_arrays(cols, schema=wanted).to_batches(max_chunksize=65536)

    payload = [(pickle.dumps((p, list(ff))),) for p, ff in zip(paths, file_fields)]
    return connect.task_frame(spark, payload, "task binary", 10_000).mapInArrow(run, out)


def _read_group(spark: SparkSession, paths: Sequence[str], file_fields: Sequence[DataField],
                fields: Sequence[DataField], file_col: Optional[str] = None, pos_col: Optional[str] = None,
                extra_columns: Optional[Mapping[str, str]] = None,
                deleted: Optional[Mapping[str, str]] = None) -> DataFrame:
    """Files written with ``file_fields`` as a DataFrame of ``fields`` (by field id)."""
    read_schema = pt.to_spark_schema(fields, with_ids=False)
    file_schema = pt.to_spark_schema(file_fields, with_ids=False)
    plain = same_layout(file_fields, fields) and \
        [f.dataType for f in read_schema.fields] == [f.dataType for f in file_schema.fields]
    schema = read_schema if plain else file_schema
    try:            # (file_scan never skips a file a session would let it skip)
        df = file_scan(spark, paths, schema, deleted,
                       "orc" if is_orc(paths[0]) else deleted_rows.CLASS if deleted else "parquet")
    except Exception as e:
        raise_if_missing(e, paths, "data file")
        raise
    from pyspark.sql import functions as F

    extra = [table_path_of(F.col("_metadata.file_path")).alias(file_col)] if file_col else []
    if pos_col:
        extra.append(F.col("_metadata.row_index").alias(pos_col))
    extra.extend(F.col(source).alias(name) for name, source in (extra_columns or {}).items())
    if plain:
        return df.select("*", *extra) if extra else df

    by_id = {f.id: f for f in file_fields}
    cols: list[Column] = []
    for rf in fields:
        target = pt.to_spark_type(rf.type, False)
        ff = by_id.get(rf.id)
        if ff is None:
            c = F.lit(None).cast(target)
        else:
            c = _evolve_expr(F.col(_quote(ff.name)), ff.type, rf.type)
        cols.append(c.alias(rf.name))
    return df.select(*cols, *extra)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _evolve_expr(c: Column, ftype: core.IcebergType, rtype: core.IcebergType) -> Column:
    """A Spark column of Paimon type ``ftype`` as ``rtype``: ROW fields matched by id."""
    from pyspark.sql import functions as F

    target = pt.to_spark_type(rtype, False)
    if same_type_layout(ftype, rtype):
        return c if pt.to_spark_type(ftype, False) == target else c.cast(target)
    if isinstance(ftype, core.StructType) and isinstance(rtype, core.StructType):
        by_id = {f.field_id: f for f in ftype.fields}
        parts: list[Column] = []
        for rf in rtype.fields:
            ff = by_id.get(rf.field_id)
            v = (F.lit(None).cast(pt.to_spark_type(rf.field_type, False)) if ff is None
                 else _evolve_expr(c.getField(ff.name), ff.field_type, rf.field_type))
            parts.append(v.alias(rf.name))
        return F.when(c.isNull(), F.lit(None).cast(target)).otherwise(F.struct(*parts))
    if isinstance(ftype, core.ListType) and isinstance(rtype, core.ListType):
        return F.transform(c, lambda x: _evolve_expr(x, ftype.element_type, rtype.element_type))
    if isinstance(ftype, core.MapType) and isinstance(rtype, core.MapType):
        c = F.transform_values(c, lambda _k, v: _evolve_expr(v, ftype.value_type, rtype.value_type))
        if pt.to_spark_type(ftype.key_type, False) != pt.to_spark_type(rtype.key_type, False):
            c = F.transform_keys(c, lambda k, _v: k.cast(pt.to_spark_type(rtype.key_type, False)))
        return c
    return c.cast(target)


# --------------------------------------------------------------------------- Python data source hooks
def _table(location: str, io: FileIO = LOCAL) -> FileStoreTable:
    loc = normalize_location(location)
    return FileStoreTable(loc.rstrip("/").rsplit("/", 1)[-1], loc, io)


paimon_table_at = _table


def paimon_schema_ddl(location: str, io: FileIO = LOCAL) -> str:
    """The Spark DDL of a Paimon table's columns (for ``DataSource.schema``)."""
    table = _table(location, io)
    return ", ".join(
        f"`{f.name.replace('`', '``')}` {pt.to_spark_type(f.type, False).simpleString()}"
        + ("" if f.nullable else " NOT NULL")
        for f in table.table_schema.fields)


# ``#dv=<offset>,<size>,<index file>``: an append table's file and its deletion vector
_PARTITION_RE = re.compile(r"^(?P<path>.*)#schema=(?P<file>\d+),(?P<read>\d+)"
                           r"(?:#dv=(?P<offset>\d+),(?P<size>\d+),(?P<index>.*))?$", re.S)


def paimon_partitions(location: str, options: Mapping[str, Optional[str]], where: Any = None,
                      io: FileIO = LOCAL) -> list[str]:
    """The data files a read uses (``snapshot-id`` / ``as-of-timestamp`` options), each as
    ``<path>#schema=<file schema id>,<table schema id>`` so the task reading it can match
    its columns by field id (a data file's path ends in its format's extension, never so)."""
    table = _table(location, io)
    if chain.active(table):
        raise UnsupportedTableError(f"Paimon table at {location} is a chain table: its rows are main's, its snapshot "
                                    "branch's and its delta branch's merged, which this data source does not plan; "
                                    "read it through a catalog (load_table(...).to_spark(), or SQL)")
    sid = options.get("snapshot-id")
    as_of = options.get("as-of-timestamp")
    sid = int(sid) if sid not in (None, "") else None
    as_of = int(as_of) if as_of not in (None, "") else None
    entries = table.plan(where if isinstance(where, str) else None, sid, as_of=as_of, ref=options.get("tag") or None)
    return partitions_of(table, entries, sid, as_of, options.get("tag") or None)


def partitions_of(table: PaimonStore, entries: Sequence[ManifestEntry], snapshot_id: Optional[int] = None,
                  as_of: Optional[AsOf] = None, ref: Optional[str] = None) -> list[str]:
    """What each read task of the data source gets: a data file (append tables), or a whole
    (partition, bucket) to merge (``merge:`` and its files, primary-key tables)."""
    import json

    if table.table_schema.primary_keys:
        table.check_mergeable(table.table_schema)
        options = table.table_schema.options
        if dv.skips_level0(options):                   # as Paimon's batch reads (see deletion_vectors)
            entries = dv.readable(entries)
        vectors: dict[str, list[Any]] = {}
        if dv.enabled(options):                        # each file's vector travels with its task
            bvs = dv.bucket_vectors(table.store, table.snapshot_for(snapshot_id, as_of, ref))
            for e in entries:
                bv = bvs.get((e.partition.to_bytes(), e.bucket))
                if bv is not None and e.file.file_name in bv.ranges:
                    off, size, _card = bv.ranges[e.file.file_name]
                    vectors[e.file.path] = [bv.index_path(e.file.file_name), off, size]
        ids = {e.file.path: e.file.schema_id for e in entries}
        levels = {e.file.path: e.file.level for e in entries}
        return [MERGE_PREFIX + json.dumps({"paths": paths, "schema_ids": [ids[p] for p in paths],
                                           "levels": [levels[p] for p in paths],
                                           "vectors": {p: vectors[p] for p in paths if p in vectors}})
                for paths, _ in table.buckets_of(entries)]
    if row_tracking.evolution_enabled(table.table_schema.options):
        raise NotSupportedError("a read file by file (the data source)", table.name, "paimon",
                                "a data-evolution table's files of some columns are merged with the other files of "
                                "their row-id range; read it through a catalog (SELECT, to_spark, to_arrow)")
    current = table.table_schema.id
    # an append table's file with a deletion vector: the vector's place travels with its task
    marks = dv.file_vectors(table.store, table.snapshot_for(snapshot_id, as_of, ref)) if entries else {}

    def vector(e: ManifestEntry) -> str:
        where = marks.get(e.file.file_name)
        return "" if where is None else f"#dv={where[1]},{where[2]},{where[0]}"
    return [f"{e.file.path}#schema={e.file.schema_id},{current}{vector(e)}" for e in entries]


MERGE_PREFIX = "merge:"


def paimon_read_bucket(location: str, spec: str, target: pa.Schema, io: FileIO = LOCAL,
                       kind_col: Optional[str] = None) -> Iterator[pa.RecordBatch]:
    """Arrow batches of one merged (partition, bucket) of a primary-key table, cast to ``target``.
    With ``kind_col`` (a column of ``target``) each row carries its row kind (+I, +U, -D, ...), and
    a key whose merge retracts it stays as its retraction, as Paimon's ``audit_log`` reads it."""
    import json

    import pyarrow as pa
    import pyarrow.compute as pc

    table = _table(location, io)
    task = json.loads(spec[len(MERGE_PREFIX):])
    schema = table.table_schema
    fields = [table.schema_by_id(i).fields for i in task["schema_ids"]]
    if dv.enabled(schema.options):          # each key once above level 0: the files minus their vectors
        parts: list[pa.Table] = []
        for path, ff in zip(task["paths"], fields):
            deleted = None
            if path in task.get("vectors", {}):
                deleted = dv.read_vector(table.io, *task["vectors"][path])
            if kind_col is None:
                parts.append(dv.read_rows(table.io, path, ff, schema.fields, deleted))
            else:
                parts.append(dv.without_positions(mg.read_kv_file(path, table.io, ff, schema.fields), deleted))
        stream = iter(parts)
    else:
        stream = iter_merged_bucket(table.io, task["paths"], fields, schema, table.name, levels=task.get("levels"),
                                    keep_deletes=kind_col is not None)
    for merged in stream:
        names = {n.lower(): n for n in merged.column_names}
        cols: list[Any] = []
        for f in target:
            if f.name == kind_col:
                kinds = merged.column(mg.VALUE_KIND).cast(pa.int32())
                cols.append(pc.take(pa.array(KIND_LABELS, pa.string()), kinds))
                continue
            src = names.get(f.name.lower())
            cols.append(pa.nulls(merged.num_rows, f.type) if src is None else merged.column(src).cast(f.type))
        yield from pa.Table.from_arrays(cols, schema=target).to_batches()


def paimon_read_file(location: str, path: str, target: pa.Schema,
                     io: FileIO = LOCAL) -> Iterator[pa.RecordBatch]:
    """Arrow batches of one data file, cast to ``target`` (Spark's read schema: the table's
    columns by name). With the schema ids ``paimon_partitions`` appends, columns are
    matched by field id; a bare path matches them by name."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.startswith(MERGE_PREFIX):
        yield from paimon_read_bucket(location, path, target, io)
        return
    m = _PARTITION_RE.match(path)
    if m is not None:
        path = m.group("path")

    def batches() -> Iterator[Any]:     # the file's column names, then its record batches
        # errors name the file: this runs in a Python worker, where pyarrow's message alone
        # ("Parquet magic bytes not found in footer") would not say which file
        local = strip_scheme(path)
        if not is_parquet(path):
            tables = iter_data_file(path, io)
            first = next(tables)
            yield first.column_names
            for t in (first, *tables):
                yield from t.to_batches()
            return
        try:
            with io.open_read(path) as fh:
                pf = pq.ParquetFile(fh, page_checksum_verification=True)
                yield pf.schema_arrow.names
                yield from pf.iter_batches(batch_size=65536)
        except FileNotFoundError:
            raise CorruptDataFileError(local, "data file referenced by the snapshot is missing") from None
        except (pa.ArrowException, OSError) as e:
            raise CorruptDataFileError(local, f"not a readable Parquet file ({type(e).__name__}: {e})") from None

    it = batches()
    file_names = next(it)
    if m is not None and m.group("index") is not None:      # rows an append table's vector marks dropped
        it = _unmarked(it, dv.read_vector(io, m.group("index"), int(m.group("offset")), int(m.group("size"))))
    if m is not None:
        yield from _read_by_id(location, it, int(m.group("file")), int(m.group("read")), target, io)
        return
    names = {n.lower(): n for n in file_names}
    for batch in it:
        cols: list[Any] = []
        for f in target:
            src = names.get(f.name.lower())
            if src is None:
                cols.append(pa.nulls(batch.num_rows, f.type))
            else:
                col = batch.column(batch.schema.get_field_index(src))
                cols.append(col.cast(f.type) if col.type != f.type else col)
        yield pa.RecordBatch.from_arrays(cols, schema=target)


def _unmarked(batches: Iterable[pa.RecordBatch], deleted: Any) -> Iterator[pa.RecordBatch]:
    """A file's batches (in file order) minus the positions the vector ``deleted`` marks."""
    import numpy as np
    import pyarrow as pa

    marked = np.fromiter(deleted, dtype=np.int64)
    start = 0
    for batch in batches:
        end = start + batch.num_rows
        inside = marked[(marked >= start) & (marked < end)] - start
        if len(inside):
            keep = np.ones(batch.num_rows, dtype=bool)
            keep[inside] = False
            batch = batch.filter(pa.array(keep))
        start = end
        yield batch


def _read_by_id(location: str, batches: Iterable[pa.RecordBatch], file_schema_id: int, read_schema_id: int,
                target: pa.Schema, io: FileIO = LOCAL) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa

    schemas = SchemaHistory(io, normalize_location(location))
    file_fields = schemas.get(file_schema_id).fields
    table_fields = schemas.get(read_schema_id).fields
    read_fields: list[DataField] = []
    for f in target:
        match = [x for x in table_fields if x.name == f.name] or \
            [x for x in table_fields if x.name.lower() == f.name.lower()]
        # a column Spark asks for that the table schema lacks: an id no file has (nulls)
        read_fields.append(match[0] if match else pt.DataField(
            -1, f.name, core.from_arrow_schema([f.with_nullable(True)], precise=True).fields[0].field_type))
    for batch in batches:
        data = evolve_arrow(pa.Table.from_batches([batch]), file_fields, read_fields)
        cols = [data.column(i).cast(f.type) if data.column(i).type != f.type else data.column(i)
                for i, f in enumerate(target)]
        yield pa.RecordBatch.from_arrays([c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c
                                          for c in cols], schema=target)


# --------------------------------------------------------------------------- primary-key tables
def read_merged(spark: SparkSession, table: PaimonStore, schema: TableSchema, entries: Sequence[ManifestEntry],
                where: Where = None, columns: Optional[Sequence[str]] = None,
                bucket_col: Optional[str] = None) -> DataFrame:
    """A primary-key table's merged rows as a DataFrame: one Spark task per (partition,
    bucket) reads that bucket's files and merges its records by key with the table's merge
    engine (``icefloe.paimon.merge``); the driver only plans. ``where`` applies to the
    merged rows, never to the records before the merge (an older record would show).
    ``bucket_col`` adds a last column of that name holding each row's bucket."""
    import json

    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import IntegerType, StructField, StructType

    out_schema = pt.to_spark_schema(schema.fields, with_ids=False)
    if bucket_col:
        out_schema = StructType(list(out_schema.fields) + [StructField(bucket_col, IntegerType(), False)])
    raw, entries = raw_buckets(entries)
    buckets = table.buckets_of(entries)
    bucket_of = {e.file.path: e.bucket for e in entries}
    plain = None
    if raw:                  # buckets that need no merge: Spark's own Parquet reader, as an append table
        file_col = "__icefloe_file" if bucket_col else None
        plain = read_files(spark, [e.file.path for e in raw], schema.fields,
                           file_fields=[table.schema_by_id(e.file.schema_id).fields for e in raw], io=table.io,
                           file_col=file_col)
        if bucket_col and file_col is not None:
            of = spark.createDataFrame(sorted({(e.file.path, e.bucket) for e in raw}),
                                       f"__icefloe_of string, `{bucket_col}` int")
            plain = plain.join(F.broadcast(of), plain[file_col] == of["__icefloe_of"], "left") \
                .drop(file_col, "__icefloe_of")
    if not buckets:
        df = plain if plain is not None else empty_frame(spark, out_schema)
    else:
        by_id: dict[int, list[DataField]] = {}
        tasks: list[tuple[str]] = []
        levels = {e.file.path: e.file.level for e in entries}
        for paths, _ in buckets:
            ids = [_schema_id_of(table, p, entries) for p in paths]
            for i in ids:
                by_id[i] = table.schema_by_id(i).fields
            tasks.append((json.dumps({"paths": paths, "schema_ids": ids, "levels": [levels[p] for p in paths],
                                      "bucket": bucket_of[paths[0]]}),))
        arrow_out = to_arrow_schema(out_schema, timezone="UTC")
        io, name = table.io, table.name

        def merge_buckets(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            import pyarrow as pa

            for batch in batches:
                for spec in batch.column(0).to_pylist():
                    task = json.loads(spec)
                    for merged in iter_merged_bucket(io, task["paths"], [by_id[i] for i in task["schema_ids"]],
                                                     schema, name, levels=task["levels"]):
                        if bucket_col:
                            merged = merged.append_column(bucket_col, pa.array([task["bucket"]] * merged.num_rows,
                                                                               pa.int32()))
                        merged = pa.Table.from_arrays([c.cast(f.type) for c, f in zip(merged.columns, arrow_out)],
                                                      schema=arrow_out)
                        yield from merged.to_batches()

        parallelism = max(1, min(len(tasks), connect.default_parallelism(spark) * 2))
        df = spark.createDataFrame(tasks, "task string").repartition(parallelism).mapInArrow(merge_buckets,
                                                                                             out_schema)
        if plain is not None:
            df = df.unionByName(plain)
    return _where_and_columns(df, where, columns)


def read_append(spark: SparkSession, table: PaimonStore, schema: TableSchema, snapshot: Optional[Snapshot],
                entries: Sequence[ManifestEntry], where: Where = None,
                columns: Optional[Sequence[str]] = None) -> DataFrame:
    """An append table's rows of ``entries`` (planned at ``snapshot``), less those the snapshot's
    deletion vectors mark (``read_with_vectors``, where it has any)."""
    if dv.has_vectors(table.store, snapshot):
        return read_with_vectors(spark, table, schema, snapshot, entries, where, columns)
    return read_files(spark, [e.file.path for e in entries], schema.fields, where, columns,
                      file_fields=[table.schema_by_id(e.file.schema_id).fields for e in entries], io=table.io)


def read_with_vectors(spark: SparkSession, table: PaimonStore, schema: TableSchema, snapshot: Optional[Snapshot],
                      entries: Sequence[ManifestEntry], where: Where = None,
                      columns: Optional[Sequence[str]] = None) -> DataFrame:
    """A table with deletion vectors: its files above level 0 as they are (each key has one live
    record there; an append table: all its files), minus the rows their vectors mark. Spark's own Parquet reader scans all the
    files; the vectors (index metadata, read on the driver as Paimon's readers plan with them) are
    applied inside that scan (``icefloe.spark.deleted_rows``) or, where its format cannot load, as
    bitmaps of a filter (``icefloe.spark.bitmaps``) keyed by file size: no shuffle, no Python. A
    file's size names it when no two files of the scan share one; otherwise (and where Spark cannot
    read the paths) Python tasks read the marked files and drop their rows. ORC files: Spark's ORC
    reader scans the unmarked ones, Python tasks the marked ones (Spark gives ORC rows no position);
    Python tasks read Avro files."""
    vectors = dv.bucket_vectors(table.store, snapshot)
    readable = dv.readable(entries) if schema.primary_keys else list(entries)
    plain: list[tuple[ManifestEntry, Optional[BucketVectors]]] = []
    marked: list[Marked] = []
    for e in readable:
        bv = vectors.get((e.partition.to_bytes(), e.bucket))
        if bv is not None and e.file.file_name in bv.ranges:
            marked.append((e, bv))
        else:
            plain.append((e, bv))
    fields_of: dict[int, list[DataField]] = {}

    def fields(e: ManifestEntry) -> list[DataField]:
        return fields_of.setdefault(e.file.schema_id, table.schema_by_id(e.file.schema_id).fields)

    frames: list[DataFrame] = []
    # Spark's ORC reader gives no row positions (and Spark reads no Avro): marked ORC and Avro files
    # are read by Python tasks, and unmarked ones stay out of the Parquet scans that drop rows by position
    in_python = [(e, bv) for e, bv in marked if not is_parquet(e.file.path)]
    marked = [(e, bv) for e, bv in marked if is_parquet(e.file.path)]
    other = [(e, bv) for e, bv in plain if not is_parquet(e.file.path)]
    plain = [(e, bv) for e, bv in plain if is_parquet(e.file.path)]
    sizes = [e.file.file_size for e in readable if is_parquet(e.file.path)]
    distinct = len(set(sizes)) == len(sizes)        # the SQL filter names files by size
    by_bitmap = bool(marked) and table.io.spark_native and (distinct or jvm.available(spark))
    if by_bitmap:
        frame, took_unmarked = _marked_by_bitmap(spark, table, schema, marked, fields, plain, by_size=distinct)
        frames.append(frame)
        if took_unmarked:
            plain = []
    plain += other
    if plain or not (marked or in_python):
        frames.append(read_files(spark, [e.file.path for e, _ in plain], schema.fields,
                                 file_fields=[fields(e) for e, _ in plain], io=table.io))
    if marked and not by_bitmap:
        in_python = marked + in_python
    if in_python:
        frames.append(_read_marked_in_python(spark, table, schema, [(e, bv, fields(e)) for e, bv in in_python]))
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other)
    return _where_and_columns(df, where, columns)


def _marked_by_bitmap(spark: SparkSession, table: PaimonStore, schema: TableSchema, marked: Sequence[Marked],
                      fields: Callable[[ManifestEntry], list[DataField]],
                      unmarked: Sequence[tuple[ManifestEntry, Optional[BucketVectors]]] = (),
                      by_size: bool = True) -> tuple[DataFrame, bool]:
    """The marked files' rows by Spark's reader less the positions their vectors mark: dropped
    inside the scan (``deleted_rows``; the ``unmarked`` files join the same scan, returned as
    ``(frame, True)``), else a row kept when its bit is clear, the vectors as constants of the filter
    (``bitmaps.literal_filter``; the unmarked files join that scan too) or, when too big for the
    plan, one broadcast row of bitmap words per file keyed by the file's size (``(frame, False)``).
    Without distinct sizes (``by_size``) and the in-scan format, Python tasks drop the rows."""
    import numpy as np
    import pyarrow as pa
    from pyspark.sql import functions as F

    key_col, row_col, word_col, bit_col, words_col = ("_icefloe_size", "_icefloe_row", "_icefloe_word",
                                                      "_icefloe_bit", "_icefloe_words")
    in_scan = _vectors_read_in_scan(spark, table, marked)
    if in_scan is None:
        positions = _marked_positions(table, marked)
        in_scan = deleted_rows.scan_options(spark, {e.file.path: p for (e, _), p in zip(marked, positions)})
    if in_scan is not None:          # the vectors applied inside the Parquet scan
        both = [*marked, *unmarked]
        return read_files(spark, [e.file.path for e, _ in both], schema.fields,
                          file_fields=[fields(e) for e, _ in both], deleted=in_scan), True
    if not by_size:                 # two files share a size: the filter cannot name them
        return _read_marked_in_python(spark, table, schema, [(e, bv, fields(e)) for e, bv in marked]), False
    words = [bitmap_words(p, e.file.row_count).view(np.int64) for (e, _), p in zip(marked, positions)]
    extra = {key_col: "_metadata.file_size", row_col: "_metadata.row_index"}
    constants = literal_filter([(e.file.file_size, w) for (e, _), w in zip(marked, words)], key_col, row_col)
    if constants is not None:
        both = [*marked, *unmarked]
        df = read_files(spark, [e.file.path for e, _ in both], schema.fields,
                        file_fields=[fields(e) for e, _ in both], extra=extra)
        return df.where(constants).drop(key_col, row_col), True
    df = read_files(spark, [e.file.path for e, _ in marked], schema.fields,
                    file_fields=[fields(e) for e, _ in marked], extra=extra)
    table_words = spark.createDataFrame(pa.table({key_col: pa.array([e.file.file_size for e, _ in marked], pa.int64()),
                                                  words_col: pa.array(words, pa.list_(pa.int64()))}))
    df = df.withColumn(word_col, F.expr(word_of(row_col))).withColumn(bit_col, F.expr(bit_of(row_col)))
    return (df.join(F.broadcast(table_words), key_col, "left")
            .where(F.expr(bit_is_clear(words_col, word_col, bit_col)))
            .drop(key_col, row_col, word_col, bit_col, words_col)), False


def unmarking_scan(spark: SparkSession, table: PaimonStore, marked: Sequence[Marked]) -> Optional[dict[str, str]]:
    """The options of a Parquet scan (``deleted_rows``) that drops the positions the vectors of the
    ``marked`` files mark: read by the scan's tasks, or, where they hold few positions, read here and
    sent in the options (as ``read_with_vectors`` does); None where the session cannot load the
    scan's format or the positions cannot travel in its options."""
    if not marked or not jvm.available(spark):
        return None
    options = _vectors_read_in_scan(spark, table, marked)
    if options is not None:
        return options
    return deleted_rows.scan_options(spark, {e.file.path: p for (e, _), p in zip(marked, _marked_positions(table, marked))})


def _marked_positions(table: PaimonStore, marked: Sequence[Marked]) -> list[Any]:
    """The positions each of the ``marked`` files' vectors marks, in order, read here (each index
    file read once)."""
    loaded: dict[str, dict[str, Any]] = {}
    out: list[Any] = []
    for e, bv in marked:
        key = bv.index_path(e.file.file_name)
        if key not in loaded:
            loaded[key] = bv.load(table.io)
        out.append(loaded[key][e.file.file_name].to_array())
    return out


def _vectors_read_in_scan(spark: SparkSession, table: PaimonStore, marked: Sequence[Marked]) -> Optional[dict[str, str]]:
    """The options of a scan whose tasks read each marked file's vector from its index file
    (``deleted_rows.source_options``): the driver reads no vector. None where the scan's class
    is not loadable, or where the driver reads the vectors (their cardinalities, as the index
    manifest gives them, at most ``deleted_rows.DRIVER_READ_POSITIONS``). A missing index file is
    named now."""
    sources: dict[str, list[tuple[str, str, int, int]]] = {}
    positions = 0
    for e, bv in marked:
        offset, size, cardinality = bv.ranges[e.file.file_name]
        positions += cardinality if cardinality is not None else deleted_rows.DRIVER_READ_POSITIONS + 1
        sources[e.file.path] = [(deleted_rows.PAIMON_VECTOR, bv.index_path(e.file.file_name), offset, size)]
    options = deleted_rows.source_options(spark, sources, positions)
    if options is not None:
        for path in sorted({bv.index_path(e.file.file_name) for e, bv in marked}):
            if not table.io.exists(path):
                raise CorruptMetadataError(path, "deletion vector index file referenced by the snapshot is missing")
    return options


def _where_and_columns(df: DataFrame, where: Where, columns: Optional[Sequence[str]]) -> DataFrame:
    """The merged (or vector-filtered) rows, filtered by ``where``, then the ``columns`` asked for."""
    if where is not None:
        df = df.where(where)
    if columns:
        df = df.select(*[f"`{c}`" for c in columns])
    return df


def _read_marked_in_python(spark: SparkSession, table: PaimonStore, schema: TableSchema,
                           marked: Sequence[tuple[ManifestEntry, BucketVectors, Sequence[DataField]]]) -> DataFrame:
    """One Python task per marked file: read it and drop the rows its vector marks."""
    import pickle

    from pyspark.sql.pandas.types import to_arrow_schema

    out_schema = pt.to_spark_schema(schema.fields, with_ids=False)
    arrow_out = to_arrow_schema(out_schema, timezone="UTC")
    io, fields, kv = table.io.for_tasks(), schema.fields, bool(schema.primary_keys)
    tasks = [(pickle.dumps((e.file.path, ff, bv.index_path(e.file.file_name), bv.ranges[e.file.file_name])),)
             for e, bv, ff in marked]

    def read_marked(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        for batch in batches:
            for blob in batch.column(0).to_pylist():
                path, ff, index_path, (offset, size, _card) = pickle.loads(blob)
                rows = dv.read_rows(io, path, ff, fields, dv.read_vector(io, index_path, offset, size), kv)
                rows = pa.Table.from_arrays([c.cast(f.type) for c, f in zip(rows.columns, arrow_out)], schema=arrow_out)
                yield from rows.to_batches()

    parallelism = max(1, min(len(tasks), connect.default_parallelism(spark) * 2))
    return spark.createDataFrame(tasks, "task binary").repartition(parallelism).mapInArrow(read_marked, out_schema)


def raw_buckets(entries: Iterable[ManifestEntry]) -> tuple[list[ManifestEntry], list[ManifestEntry]]:
    """``entries`` split into those of buckets whose rows need no merge and the rest. A bucket needs
    none when all its files are one sorted run written by a compaction (one level above 0, so each
    key once, in key order across the files) and none holds a record that deletes a key: its
    stored rows are the table's rows, as Paimon's readers take such buckets without merging (a file
    whose delete count is unknown is merged)."""
    groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        groups.setdefault((e.partition.data, e.bucket), []).append(e)
    raw: list[ManifestEntry] = []
    rest: list[ManifestEntry] = []
    for group in groups.values():
        levels = {e.file.level for e in group}
        if len(levels) == 1 and min(levels) > 0 and all(e.file.delete_row_count == 0 for e in group):
            raw.extend(group)
        else:
            rest.extend(group)
    return raw, rest


def _schema_id_of(table: PaimonStore, path: str, entries: Iterable[ManifestEntry]) -> int:
    for e in entries:
        if e.file.path == path:
            return e.file.schema_id
    return table.table_schema.id  # pragma: no cover - every path comes from the entries
