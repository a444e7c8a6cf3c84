"""Reading planned Iceberg files with Spark's own Parquet reader.

The driver plans (icefloe.iceberg.scan); Spark reads only the files that can
match, with the table schema carrying ``parquet.field.id`` so columns are
matched by id (a renamed column keeps its data, a column added later reads
as null). The filter is applied again on rows, and projected columns reach
Spark's reader as a plain select it pushes down.

Merge-on-read tables (spec, "Row-level Deletes"): when a planned file has
delete files, every row also carries its data file and 0-based position
(Spark's ``_metadata.file_path`` / ``_metadata.row_index``) and the file's data
sequence number and partition, and the deletes are applied as anti joins that
re-check the spec's rules per row:

* position deletes: same data file and position, data sequence number <= the
  delete file's;
* equality deletes (one anti join per set of equality field ids): equal on
  those columns with null equal to null, data sequence number < the delete
  file's, same partition unless the delete file is unpartitioned.

Small delete sets are broadcast. Files without deletes take the plain path. When every
delete is a position delete and the paths are plain, rows are matched on Spark's own
``_metadata.file_path`` in one anti join, with no per-row path decoding and no per-file join.

Files without Parquet field ids (e.g. registered with pyiceberg's ``add_files``)
are read apart, by name through the table's name mapping (spec, "Column
Projection"), and unioned with the rest. Finding them costs a footer read, so
only files whose names are not icefloe's own are checked, once per path.
"""
from __future__ import annotations

import contextvars
import json
import os
import re
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Optional, Sequence, Union, cast

from icefloe.core.io import FileIO

from icefloe.core.io import LOCAL
from icefloe.core.types import Schema, to_spark_field, to_spark_schema, to_spark_type
from icefloe.core.types.model import type_names
from icefloe.iceberg.manifest import EQUALITY_DELETES, POSITION_DELETES
from icefloe.iceberg.schema import stored_schema
from icefloe.errors import UnsupportedFeatureError  # noqa: F401 - defined in icefloe.errors, importable here too
from icefloe.errors import CorruptDataFileError
from icefloe.iceberg.delete_files import POSITION_DELETE_SCHEMA, names_only, positions_by_data_file
from icefloe.spark.align import fitted_column, spark_default
# FILE_COL: the data file a row was read from (the path as the table's metadata has it); POS_COL: the
# row's 0-based position in that file
from icefloe.spark import deleted_rows
from icefloe.spark import connect
from icefloe.spark.scans import empty_frame, file_scan, local_frame
from icefloe.spark.bitmaps import bit_is_clear, bit_of, bitmap_words, literal_filter, word_of
from icefloe.spark.python_read import FILE_COL, POS_COL, read_tasks_in_python
from icefloe.spark.target import RowFilter
from icefloe.spark.iceberg_evolved_read import has_nanos, mapping_from_history, name_read_plan, read_parquet_by_field_id, read_parquet_by_name, restore_column_names, spark_read_schema

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession

    from icefloe.core.types import NestedField
    from icefloe.iceberg.manifest import DataFile
    from icefloe.iceberg.scan import FileScanTask

#: a table's name mapping (``schema.name-mapping.default``): its JSON text, or parsed
NameMapping = Union[str, list[Any], None]

_SEQ_COL = "_icefloe_seq"
_PART_COL = "_icefloe_part"
_RAW_PATH = "_icefloe_raw_path"
BROADCAST_ROWS = 2_000_000

# data files icefloe writes: <task>-<n>-<32 hex write id>-<counter>.parquet, always with field ids
_ICEFLOE_FILE = re.compile(r"^\d{5}-\d+-[0-9a-f]{32}-\d{5}\.parquet$")
_FOOTERS: dict[str, tuple[frozenset[int], Optional[pa.Schema]]] = {}   # path -> (its top-level field ids, its Arrow schema if it has none)
_READ_IO = contextvars.ContextVar("icefloe_read_io", default=LOCAL)
_FOOTERS_MAX = 200_000


def _io() -> FileIO:
    """The FileIO the driver reads the table's files through during ``read_tasks`` (footers, sizes,
    delete files): the table's, else the local file system."""
    return _READ_IO.get()


def read_tasks(spark: SparkSession, tasks: list[FileScanTask], schema: Schema, where: RowFilter = None,
               columns: Optional[Sequence[str]] = None, with_positions: bool = False, history: Sequence[Schema] = (),
               name_mapping: NameMapping = None, io: Optional[FileIO] = None, nanos_raw: bool = False) -> DataFrame:
    """A DataFrame of the planned ``tasks`` (deletes applied).

    ``with_positions`` adds FILE_COL and POS_COL, which row-level writes need to
    point position deletes at rows or to find the files they must rewrite.
    ``name_mapping`` (the table property ``schema.name-mapping.default``, JSON text or
    parsed) resolves columns of files without field ids; without it, the names each
    field id had in ``history`` and ``schema`` are used. ``io``: the table's FileIO; when Spark
    cannot take its paths (an object store without the session's connector) Python tasks read the
    files through it (``python_read``). ``nanos_raw``: nanosecond timestamp columns as their raw
    ``long`` nanoseconds (``python_read``), for a rewrite that must keep every digit.
    """
    token = _READ_IO.set(io or LOCAL)
    try:
        return _read_tasks_with_io(spark, tasks, schema, where, columns, with_positions, history, name_mapping, io,
                                   nanos_raw)
    finally:
        _READ_IO.reset(token)


def _read_tasks_with_io(spark: SparkSession, tasks: list[FileScanTask], schema: Schema, where: RowFilter,
                        columns: Optional[Sequence[str]], with_positions: bool, history: Sequence[Schema],
                        name_mapping: NameMapping, io: Optional[FileIO], nanos_raw: bool) -> DataFrame:
    stored = schema
    if "unknown" in type_names(schema.struct):
        try:
            stored = stored_schema(schema)
        except UnsupportedFeatureError:     # a list or map of unknown: no stored form for Spark to read
            stored = None
    if (io is not None and not io.spark_native) or has_nanos(schema) or stored is None:
        # Python tasks: a store Spark cannot reach, or types Spark's reader refuses (nanosecond
        # timestamps, a list or map of unknown)
        return read_tasks_in_python(spark, tasks, schema, where, columns, with_positions, name_mapping, io or LOCAL,
                                    nanos_raw=nanos_raw)
    if stored is not schema:        # format v3's unknown: never stored, always null (Spark's void)
        from pyspark.sql import functions as F

        df = read_tasks(spark, tasks, stored, None, None, with_positions, history, name_mapping, io)
        kept = {f.field_id for f in stored.fields}
        cols: list[Column] = []
        for f in schema.fields:
            if f.field_id not in kept:
                cols.append(F.lit(None).alias(f.name))
                continue
            c = F.col(f"`{f.name}`")
            target = to_spark_type(f.field_type, with_ids=False)
            if df.schema[f.name].dataType != target:     # its struct fields of type unknown, as nulls
                c = fitted_column(c, df.schema[f.name].dataType, target).alias(f.name)
            cols.append(c)
        df = df.select(*cols, *([FILE_COL, POS_COL] if with_positions else []))
        if where is not None:
            df = df.where(where)
        if columns:
            df = df.select(*[f"`{c}`" for c in columns], *([FILE_COL, POS_COL] if with_positions else []))
        return df
    try:
        groups = _by_missing_defaults(tasks, schema)
        if groups is None:
            return _read_tasks(spark, tasks, schema, where, columns, with_positions, history,
                               name_mapping)
        parts: list[DataFrame] = []
        for missing, group in groups.items():
            df = _read_tasks(spark, group, schema, None, None, with_positions, history, name_mapping)
            parts.append(_with_defaults(df, [schema.find_field(i) for i in missing]))
        df = _union(parts)
        if where is not None:
            df = df.where(where)
        if columns:
            df = df.select(*[f"`{c}`" for c in columns], *([FILE_COL, POS_COL] if with_positions else []))
        return df
    except Exception as e:
        raise_if_missing(e, [t.path for t in tasks], "data file")
        raise_if_missing(e, list({d.file_path: None for t in tasks for d in t.deletes}), "delete file")
        raise


def _by_missing_defaults(tasks: list[FileScanTask],
                         schema: Schema) -> Optional[dict[tuple[int, ...], list[FileScanTask]]]:
    """Format v3 ``initial-default``: the tasks grouped by which of the table's top-level fields
    with an initial default their file lacks (those rows read the default, not null); None when
    no field has one, or no file lacks one."""
    fields = [f for f in schema.fields if f.initial_default is not None]
    if not fields or not tasks:
        return None
    groups: dict[tuple[int, ...], list[FileScanTask]] = {}
    for t in tasks:
        ids = _file_field_ids(t.path)
        groups.setdefault(tuple(f.field_id for f in fields if f.field_id not in ids), []).append(t)
    return None if list(groups) == [()] else groups


def _file_field_ids(path: str) -> frozenset[int]:
    """The top-level field ids of a Parquet file."""
    return _footer(path)[0]


def _with_defaults(df: DataFrame, fields: list[NestedField]) -> DataFrame:
    """``df`` with each of ``fields`` (which its files lack) set to its initial default."""
    from pyspark.sql import functions as F

    for f in fields:
        if f.name in df.columns:
            value = spark_default(f.field_type, f.initial_default)
            df = df.withColumn(f.name, F.lit(value).cast(to_spark_field(f).dataType))
    return df


def raise_if_missing(err: Exception, paths: Sequence[str], what: str = "data file") -> None:
    """Spark finds a missing input file while building the DataFrame (``PATH_NOT_FOUND``, on the
    driver): raise a ``CorruptDataFileError`` naming it as the table's metadata does. Errors of
    files that exist but cannot be read come later, from the executors, as Spark's
    ``FAILED_READ_FILE`` errors, which name the file themselves."""
    if "PATH_NOT_FOUND" not in str(err):
        return

    missing = [p for p in paths if not _io().exists(p)]
    if missing:
        more = f" ({len(missing)} of its files are missing)" if len(missing) > 1 else ""
        raise CorruptDataFileError(missing[0], f"{what} referenced by the snapshot is missing{more}") from err


def _read_tasks(spark: SparkSession, tasks: list[FileScanTask], schema: Schema, where: RowFilter,
                columns: Optional[Sequence[str]], with_positions: bool, history: Sequence[Schema],
                name_mapping: NameMapping) -> DataFrame:
    spark_schema = to_spark_schema(schema)
    has_deletes = any(t.deletes for t in tasks)
    if not tasks:
        df = empty_frame(spark, spark_schema)
        if with_positions:
            from pyspark.sql import functions as F

            df = df.withColumn(FILE_COL, F.lit(None).cast("string")).withColumn(POS_COL, F.lit(None).cast("long"))
    elif not has_deletes and not with_positions:

        with_ids, without_ids = _split_by_field_ids(tasks)
        if not without_ids:
            df = read_parquet_by_field_id(spark, [t.path for t in tasks], schema, history, whole_files(tasks))
        else:
            parts = [read_parquet_by_field_id(spark, [t.path for t in with_ids], schema, history,
                                              whole_files(with_ids))] if with_ids else []
            parts += _read_without_ids(spark, without_ids, schema, history, name_mapping, False)
            df = _union(parts)
    elif has_deletes and _only_position_deletes_by_raw_path(tasks) and (
            (in_scan := _deletes_read_in_scan(spark, tasks)) is not None or _fits_a_filter(tasks)):
        # files with and without deletes in one scan, the deletes a filter on it
        df = _read_with_position_filter(spark, tasks, schema, history, with_positions, in_scan)
    elif has_deletes and any(not t.deletes for t in tasks):
        # files without deletes take the plain path; only the others go through the deletes
        clean = [t for t in tasks if not t.deletes]
        dirty = [t for t in tasks if t.deletes]
        df = _union([_read_tasks(spark, clean, schema, None, None, with_positions, history, name_mapping),
                     _read_tasks(spark, dirty, schema, None, None, with_positions, history, name_mapping)])
    elif has_deletes and _only_position_deletes_by_raw_path(tasks):
        df = _read_minus_position_deletes(spark, tasks, schema, history, with_positions)
    else:
        df = _read_with_positions(spark, tasks, schema, history, name_mapping)
        if has_deletes:
            df = _apply_deletes(spark, df, tasks, schema)
        if not with_positions:
            df = df.drop(FILE_COL, POS_COL)
    if where is not None:
        df = df.where(where) if isinstance(where, str) else df.where(where)
    if columns:
        keep = [f"`{c}`" for c in columns] + ([FILE_COL, POS_COL] if with_positions else [])
        df = df.select(*keep)
    return df


def whole_files(tasks: list[FileScanTask]) -> list[str]:
    """The paths of ``tasks``' data files that hold one row group (one split offset), which a scan
    reads each in one task (``scans.file_scan``)."""
    return [t.path for t in tasks if len(t.file.split_offsets or ()) == 1]


def table_path_of(col: Column) -> Column:
    """Spark's ``file:`` URI of a file (percent-encoded) back to the plain path the metadata holds."""
    from pyspark.sql import functions as F

    no_scheme = F.regexp_replace(col, r"^file:(//)?", "")
    return F.url_decode(F.replace(no_scheme, F.lit("+"), F.lit("%2B")))


def _read_with_positions(spark: SparkSession, tasks: list[FileScanTask], schema: Schema, history: Sequence[Schema] = (),
                         name_mapping: NameMapping = None) -> DataFrame:
    from pyspark.sql import functions as F

    with_ids, without_ids = _split_by_field_ids(tasks)
    parts: list[DataFrame] = []
    if with_ids:
        df = file_scan(spark, [t.path for t in with_ids], spark_read_schema(schema, history),
                       whole=whole_files(with_ids))
        plain = all(_PLAIN_PATH.match(t.path) for t in with_ids)
        df = (df.select("*", F.col("_metadata.file_path").alias(_RAW_PATH),
                        F.col("_metadata.row_index").alias(POS_COL))
                .withColumn(FILE_COL, _table_path(F.col(_RAW_PATH), plain)).drop(_RAW_PATH))
        parts.append(restore_column_names(df, schema))
    if without_ids:
        parts += _read_without_ids(spark, without_ids, schema, history, name_mapping, True)
    return _union(parts)


# a path Spark reports as ``file:<path>`` unchanged (no character Hadoop's URI would escape)
_PLAIN_PATH = re.compile(r"^/[A-Za-z0-9/_.=+,:@~-]+$")


def _only_position_deletes_by_raw_path(tasks: list[FileScanTask]) -> bool:
    """Whether every delete is a position delete and every data file's path is plain
    (``_PLAIN_PATH``), with field ids: then rows are matched to deletes on Spark's own
    ``_metadata.file_path``, with no per-row path decoding and no per-file join."""
    if not all(d.content == POSITION_DELETES for t in tasks for d in t.deletes):
        return False
    if not all(_PLAIN_PATH.match(t.path) for t in tasks):
        return False
    return not _split_by_field_ids(tasks)[1]


def _table_path(raw: Column, plain: bool) -> Column:
    """The table's path of a file from Spark's ``_metadata.file_path``: with plain paths
    (``_PLAIN_PATH``) Spark's form is ``file:`` + the path, so a substring is enough."""
    return raw.substr(6, 1 << 30) if plain else table_path_of(raw)


def _read_minus_position_deletes(spark: SparkSession, tasks: list[FileScanTask], schema: Schema,
                                 history: Sequence[Schema], with_positions: bool = False) -> DataFrame:
    """The rows of ``tasks`` less their position deletes, by one anti join on (Spark's path of
    the data file, position). The delete rows are narrowed, on the small side, to the data
    files their delete file is attached to (the planner applied the sequence-number rule
    there), and their target paths turned into Spark's form. ``with_positions`` keeps each
    row's FILE_COL and POS_COL."""
    from pyspark.sql import functions as F

    df = file_scan(spark, [t.path for t in tasks], spark_read_schema(schema, history), whole=whole_files(tasks))
    df = restore_column_names(df.select("*", F.col("_metadata.file_path").alias(_RAW_PATH),
                                        F.col("_metadata.file_size").alias(_SIZE),
                                        F.col("_metadata.row_index").alias(POS_COL)), schema)
    attached = {(t.path, d.delete_key): d for t in tasks for d in t.deletes}
    key = [_RAW_PATH, POS_COL]
    everything = {d.delete_key: d for d in attached.values()}
    files = {d.file_path: d for d in everything.values() if not d.is_deletion_vector}
    # a deletion vector names one data file, and is attached to it (else it is not here)
    vectors = [d for d in everything.values() if d.is_deletion_vector]
    pschema = to_spark_schema(POSITION_DELETE_SCHEMA)
    pdf = file_scan(spark, list(files), pschema) if files else None
    unattached = _unattached_pairs(tasks, files.values())
    if len(unattached) <= _MAX_FILTER_PAIRS and all(_PLAIN_PATH.match(d) for d in unattached):
        # each delete file applies to every data file of its partition read here but those in
        # ``unattached`` (the sequence-number rule kept it from them): its rows naming those are
        # dropped by a filter, and every other delete row matches exactly the rows it names
        if unattached:
            named = None
            for dfile, targets in unattached.items():
                one = (F.col("_metadata.file_path") == F.lit("file:" + dfile)) & F.col("file_path").isin(sorted(targets))
                named = one if named is None else named | one
            assert pdf is not None and named is not None      # the pairs are of delete files in ``files``
            pdf = pdf.where(~named)
        if vectors:
            vdf = vector_rows(spark, vectors)
            pdf = vdf if pdf is None else pdf.select("file_path", "pos").unionByName(vdf)
        assert pdf is not None                # position delete files, or vectors (the tasks have deletes)
        sizes = _sizes_if_distinct(tasks)
        if sizes is not None:
            # no two data files read here have the same size: the size names the file, and the
            # join matches two numbers per row instead of a path and a number
            import pyarrow as pa

            by_size = spark.createDataFrame(pa.table({"file_path": pa.array(list(sizes), pa.string()),
                                                      _SIZE: pa.array(list(sizes.values()), pa.int64())}))
            pdf = pdf.join(F.broadcast(by_size), "file_path").select(_SIZE, F.col("pos").alias(POS_COL))
            key = [_SIZE, POS_COL]
        else:
            pdf = pdf.select(F.concat(F.lit("file:"), F.col("file_path")).alias(_RAW_PATH),
                             F.col("pos").alias(POS_COL))
    else:
        assert pdf is not None                # unattached pairs: position delete files in ``files``
        att = spark.createDataFrame([(data, dfile, "file:" + data) for data, dfile in attached if dfile in files],
                                    f"_d_target string, _d_file string, {_RAW_PATH} string")
        pdf = (pdf.select(F.col("file_path").alias("_d_target"), F.col("pos").alias(POS_COL),
                          table_path_of(F.col("_metadata.file_path")).alias("_d_file"))
               .join(F.broadcast(att), ["_d_target", "_d_file"]).select(_RAW_PATH, POS_COL))
        if vectors:
            vdf = vector_rows(spark, vectors).select(F.concat(F.lit("file:"), F.col("file_path")).alias(_RAW_PATH),
                                                     F.col("pos").alias(POS_COL))
            pdf = vdf if pdf is None else pdf.unionByName(vdf)
    df = df.join(_hint(pdf, sum(d.record_count for d in everything.values())), key, "left_anti")
    if with_positions:
        return df.select(*[f"`{f.name}`" for f in schema.fields], _table_path(F.col(_RAW_PATH), True).alias(FILE_COL),
                         POS_COL)
    return df.select(*[f"`{f.name}`" for f in schema.fields])


# --------------------------------------------------------------------------- deletes as a filter
# Data files with position deletes (or deletion vectors) are read with a filter instead of an anti
# join when their deleted positions are few enough to broadcast: each file's deleted positions
# become a bitmap (64 positions per bigint); a row is kept when its bit (Spark's
# ``_metadata.row_index``) is clear in its file's bitmap, the file named by its size (a number, when
# no two files read share one) or its path. Small bitmaps are constants of the filter
# (``bitmaps.literal_filter``); larger ones one row per file of a broadcast table joined to the rows.
# Either probes per row far less than the anti join, which hashes every row into a table of every
# deleted position.
_MAX_FILTER_ROWS = 512_000_000      # rows of the files read: their bitmaps, 64 MB at most
_WORD = "_icefloe_deleted_word"
_BIT = "_icefloe_deleted_bit"
_WORDS = "_icefloe_deleted_words"
_KEY = "_icefloe_file_key"
_ROW = "_icefloe_row_index"


def _fits_a_filter(tasks: list[FileScanTask]) -> bool:
    return (sum(t.file.record_count for t in tasks if t.deletes) <= _MAX_FILTER_ROWS
            and sum(d.record_count for d in {d.delete_key: d for t in tasks for d in t.deletes}.values())
            <= BROADCAST_ROWS)


def _deletes_read_in_scan(spark: SparkSession, tasks: list[FileScanTask]) -> Optional[dict[str, str]]:
    """The options of a scan whose tasks read each data file's position deletes and deletion
    vectors themselves (``deleted_rows.source_options``), or None where they cannot (the format's
    class not loadable, a delete file not Parquet) or the driver reads them
    (``deleted_rows.DRIVER_READ_POSITIONS``). A delete file that is missing is named now, as a
    missing data file is."""
    positions = sum(d.record_count for d in {d.delete_key: d for t in tasks for d in t.deletes}.values())
    if positions <= deleted_rows.DRIVER_READ_POSITIONS:        # the common case: nothing to build
        return None
    sources: dict[str, list[tuple[str, str, int, int]]] = {}
    files: set[str] = set()
    for t in tasks:
        items = delete_sources(t.path, t.deletes)
        if items is None:
            return None
        files.update(file for _kind, file, _offset, _length in items)
        if items:
            sources[t.path] = items
    options = deleted_rows.source_options(spark, sources, positions)
    if options is not None:
        for f in sorted(files):
            if not _io().exists(f):
                raise CorruptDataFileError(f, "delete file referenced by the snapshot is missing")
    return options


def delete_sources(path: str, deletes: Sequence[DataFile]) -> Optional[list[tuple[str, str, int, int]]]:
    """``(kind, file, offset, length)`` of each position delete file and deletion vector of
    ``deletes`` that applies to data file ``path``, as ``DeleteSources`` reads them (a vector only
    deletes from the data file it names); None when one is not Parquet (it cannot read that)."""
    out: list[tuple[str, str, int, int]] = []
    for d in deletes:
        if d.is_deletion_vector:
            if d.referenced_data_file == path:
                # the blob's offset and length: a deletion vector's manifest entry has both (the spec requires them)
                out.append((deleted_rows.ICEBERG_VECTOR, d.file_path, cast(int, d.content_offset),
                            cast(int, d.content_size_in_bytes)))
        elif d.file_format.upper() == "PARQUET":
            kind = deleted_rows.POSITION_FILE_OF_ONE if names_only(d, path) else deleted_rows.POSITION_FILE
            out.append((kind, d.file_path, 0, 0))
        else:
            return None
    return out


def _read_with_position_filter(spark: SparkSession, tasks: list[FileScanTask], schema: Schema,
                               history: Sequence[Schema], with_positions: bool = False,
                               in_scan: Optional[dict[str, str]] = None) -> DataFrame:
    """The rows of ``tasks`` less their position deletes: inside the scan, its tasks reading the
    deletes (``in_scan``, from ``_deletes_read_in_scan``) or given the positions the driver read,
    else by a bitmap filter (see above); tasks without deletes are read in the same scan (no
    branch of the filter names them)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    dirty = [t for t in tasks if t.deletes]
    positions = None
    reader = _io()
    if in_scan is None:
        in_scan, positions = deleted_rows.remembered_scan_options(
            spark, {t.path: t.deletes for t in dirty}, lambda d: positions_by_data_file(reader, d), reader.exists)
    if in_scan is not None:              # the deletes applied inside the Parquet scan
        df = file_scan(spark, [t.path for t in tasks], spark_read_schema(schema, history), in_scan, deleted_rows.CLASS,
                       whole_files(tasks))
        if with_positions:
            df = df.select("*", F.col("_metadata.file_path").alias(_RAW_PATH),
                           F.col("_metadata.row_index").alias(POS_COL))
        return _with_names(restore_column_names(df, schema), schema, with_positions)
    assert positions is not None             # read just now: options not remembered
    bitmaps = {t.path: bitmap_words(positions[t.path], t.file.record_count) for t in dirty}
    sizes = _sizes_if_distinct(tasks)      # every file read: a clean file must not share a size
    if sizes is not None:
        key_list, key = [sizes[p] for p in bitmaps], F.col("_metadata.file_size")
        keys = pa.array(key_list, pa.int64())
    else:
        key_list, key = ["file:" + p for p in bitmaps], F.col("_metadata.file_path")
        keys = pa.array(key_list, pa.string())
    df = file_scan(spark, [t.path for t in tasks], spark_read_schema(schema, history), whole=whole_files(tasks))
    positions = ([F.col("_metadata.file_path").alias(_RAW_PATH), F.col("_metadata.row_index").alias(POS_COL)]
                 if with_positions else [])
    constants = literal_filter(list(zip(key_list, bitmaps.values())), _KEY, _ROW)
    if constants is None and len(dirty) < len(tasks):
        # the join would probe every row: files without deletes take the plain read
        clean = [t for t in tasks if not t.deletes]
        return _union([_read_tasks(spark, clean, schema, None, None, with_positions, history, None),
                       _read_with_position_filter(spark, dirty, schema, history, with_positions)])
    if constants is not None:            # the bitmaps as constants of the scan's filter
        df = (df.select("*", key.alias(_KEY), F.col("_metadata.row_index").alias(_ROW), *positions)
              .where(constants).drop(_KEY, _ROW))
    else:                                # one broadcast row of words per file
        words = spark.createDataFrame(pa.table({_KEY: keys, _WORDS: pa.array([b.view("int64") for b in bitmaps.values()],
                                                                             pa.list_(pa.int64()))}))
        df = df.select("*", key.alias(_KEY), F.expr(word_of("_metadata.row_index")).alias(_WORD),
                       F.expr(bit_of("_metadata.row_index")).alias(_BIT), *positions)
        df = (df.join(_hint(words, len(bitmaps)), _KEY, "left")
              .where(F.expr(bit_is_clear(_WORDS, _WORD, _BIT)))
              .drop(_KEY, _WORD, _BIT, _WORDS))
    return _with_names(restore_column_names(df, schema), schema, with_positions)


def _with_names(df: DataFrame, schema: Schema, with_positions: bool) -> DataFrame:
    from pyspark.sql import functions as F

    if with_positions:
        return df.select(*[f"`{f.name}`" for f in schema.fields], _table_path(F.col(_RAW_PATH), True).alias(FILE_COL),
                         POS_COL)
    names = [f.name for f in schema.fields]
    if df.columns == names:     # already the table's columns: no further plan to analyse
        return df
    return df.select(*[f"`{n}`" for n in names])


_MAX_FILTER_PAIRS = 4096
_SIZE = "_icefloe_file_size"
_MAX_SIZED_FILES = 100_000


def _sizes_if_distinct(tasks: list[FileScanTask]) -> Optional[dict[str, int]]:
    """Each data file's size on disk (as Spark's ``_metadata.file_size`` reports it), if no two
    of them share a size; else None."""
    if len(tasks) > _MAX_SIZED_FILES:
        return None
    sizes: dict[str, int] = {}
    for t in tasks:
        try:
            sizes[t.path] = _io().size(t.path)
        except OSError:
            return None
    return sizes if len(set(sizes.values())) == len(sizes) else None


def _unattached_pairs(tasks: list[FileScanTask], deletes: Iterable[DataFile]) -> dict[str, set[str]]:
    """For each delete file, the data files of its partition read here that it is not attached to
    (a position delete names data files of its own partition only): the sequence-number rule
    keeps a delete file from files added after it, and from a file added again after it."""
    by_part: dict[Any, list[FileScanTask]] = {}
    by_path: dict[str, FileScanTask] = {}
    for t in tasks:
        by_part.setdefault(t.partition_key, []).append(t)
        by_path[t.path] = t
    out: dict[str, set[str]] = {}
    for d in deletes:
        # a delete file scoped to one data file names no other
        scoped = d.referenced_data_file is not None
        candidates = [by_path[d.referenced_data_file]] if scoped and d.referenced_data_file in by_path else \
            [] if scoped else by_part.get((d.spec_id, d.partition), ())
        for t in candidates:
            if all(x.file_path != d.file_path for x in t.deletes):
                out.setdefault(d.file_path, set()).add(t.path)
    return out


def _union(parts: list[DataFrame]) -> DataFrame:
    df = parts[0]
    for p in parts[1:]:
        df = df.unionByName(p)
    return df


# --------------------------------------------------------------------------- files without field ids
def _footer(path: str, io: Optional[FileIO] = None) -> tuple[frozenset[int], Optional[pa.Schema]]:
    """``path``'s footer: its top-level field ids (empty when it has none) and its Arrow schema when
    it has none (else None), read once per path (files are immutable), through ``io`` (else
    ``_io()``)."""
    hit = _FOOTERS.get(path)
    if hit is not None:
        return hit
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with (io or _io()).open_read(path) as fh:
            sch = pq.read_schema(fh)
    except FileNotFoundError:
        raise CorruptDataFileError(path, "data file referenced by the snapshot is missing") from None
    except (pa.ArrowException, OSError) as e:
        raise CorruptDataFileError(path, f"not a readable Parquet file ({type(e).__name__}: {e})") from None
    ids = frozenset(int(f.metadata[b"PARQUET:field_id"]) for f in sch
                    if f.metadata and b"PARQUET:field_id" in f.metadata)
    if len(_FOOTERS) >= _FOOTERS_MAX:
        _FOOTERS.clear()
    _FOOTERS[path] = hit = (ids, None if ids else sch)
    return hit


def _footer_without_ids(path: str, io: Optional[FileIO] = None) -> Optional[pa.Schema]:
    """The Arrow schema of ``path`` if its footer has no field ids, else None."""
    return _footer(path, io)[1]


def _split_by_field_ids(
        tasks: list[FileScanTask]) -> tuple[list[FileScanTask], list[tuple[FileScanTask, pa.Schema]]]:
    """(tasks whose files have field ids, [(task, Arrow schema)] of files that have none).
    icefloe's own files are not opened; any other file's footer is read once."""
    others = [t for t in tasks if not _ICEFLOE_FILE.match(os.path.basename(t.path))]
    if not others:
        return tasks, []
    if len(others) > 8:
        from concurrent.futures import ThreadPoolExecutor

        io = _io()      # the pool's threads do not see this one's context
        with ThreadPoolExecutor(max_workers=8) as ex:
            schemas = list(ex.map(lambda t: _footer_without_ids(t.path, io), others))
    else:
        schemas = [_footer_without_ids(t.path) for t in others]
    missing = {id(t): s for t, s in zip(others, schemas) if s is not None}
    if not missing:
        return tasks, []
    return [t for t in tasks if id(t) not in missing], [(t, missing[id(t)]) for t in tasks if id(t) in missing]


def _read_without_ids(spark: SparkSession, items: list[tuple[FileScanTask, pa.Schema]], schema: Schema,
                      history: Sequence[Schema], name_mapping: NameMapping, with_positions: bool) -> list[DataFrame]:
    """DataFrames of files without field ids, read by name; files sharing a column layout share a read."""
    from pyspark.sql import functions as F

    parsed = json.loads(name_mapping) if isinstance(name_mapping, str) else name_mapping
    mapping = parsed if parsed is not None else mapping_from_history(schema, history)
    groups: dict[tuple[Any, ...], tuple[Any, list[Optional[str]], tuple[tuple[str, Any], ...], list[str]]] = {}
    for t, file_schema in items:
        read_schema, names = name_read_plan(schema, file_schema, mapping, t.path)
        # columns the file lacks that an identity partition gives (imported Hive-style files)
        constants = tuple((f.name, t.identity_values[f.field_id]) for f, n in zip(schema.fields, names)
                          if n is None and f.field_id in t.identity_values)
        key = (read_schema.json(), tuple(names), constants)
        groups.setdefault(key, (read_schema, names, constants, []))[3].append(t.path)
    out: list[DataFrame] = []
    for read_schema, names, constants, paths in groups.values():
        extra = [F.col("_metadata.file_path").alias(_RAW_PATH), F.col("_metadata.row_index").alias(POS_COL)] \
            if with_positions else []
        df = read_parquet_by_name(spark, paths, schema, read_schema, names, extra, dict(constants))
        if with_positions:
            df = df.withColumn(FILE_COL, table_path_of(F.col(_RAW_PATH))).drop(_RAW_PATH)
        out.append(df)
    return out


def _hint(df: DataFrame, rows: int) -> DataFrame:
    """Broadcast a delete side of at most BROADCAST_ROWS rows (a broadcast passes through the
    driver), unless the session turned broadcast joins off (``autoBroadcastJoinThreshold`` -1)."""
    from pyspark.sql import functions as F

    if rows > BROADCAST_ROWS or str(df.sparkSession.conf.get("spark.sql.autoBroadcastJoinThreshold", "1")).strip() == "-1":
        return df
    return F.broadcast(df)


def vector_rows(spark: SparkSession, vectors: list[DataFile], seqs: Optional[dict[Any, int]] = None) -> DataFrame:
    """A DataFrame of (file_path, pos) rows: the positions deletion ``vectors`` hold, each read by a
    Spark task from its Puffin file; with ``seqs`` (by delete key) also each vector's ``seq``."""
    import pyarrow as pa

    keys = [d.delete_key for d in vectors]
    desc = pa.table({"puffin": [d.file_path for d in vectors], "offset": [d.content_offset for d in vectors],
                     "length": [d.content_size_in_bytes for d in vectors],
                     "target": [d.referenced_data_file for d in vectors],
                     "seq": [int((seqs or {}).get(k, 0)) for k in keys]})
    schema = "file_path string, pos bigint" + (", seq bigint" if seqs is not None else "")
    with_seq = seqs is not None
    io = _io().for_tasks()

    def read(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # in the Python workers
        import numpy as np

        from icefloe.iceberg.puffin import read_vector

        for b in batches:
            for row in b.to_pylist():
                positions = np.array(read_vector(io, row["puffin"], row["offset"], row["length"]).to_array(),
                                     dtype=np.int64)
                cols = {"file_path": pa.array([row["target"]] * len(positions), pa.string()),
                        "pos": pa.array(positions, pa.int64())}
                if with_seq:
                    cols["seq"] = pa.array(np.full(len(positions), row["seq"], dtype=np.int64))
                yield pa.RecordBatch.from_pydict(cols)

    slices = max(1, min(len(vectors), connect.default_parallelism(spark)))
    return spark.createDataFrame(desc).repartition(slices).mapInArrow(read, schema)


def _apply_deletes(spark: SparkSession, df: DataFrame, tasks: list[FileScanTask], schema: Schema) -> DataFrame:
    from pyspark.sql import functions as F

    # per data file: its data sequence number and partition (as a small integer id)
    part_ids: dict = {}
    info_rows = []
    delete_files: dict = {}
    delete_seq: dict = {}
    for t in tasks:
        pid = part_ids.setdefault(t.partition_key, len(part_ids))
        info_rows.append((t.path, int(t.data_sequence_number), pid))
        for d in t.deletes:
            delete_files[d.delete_key] = d
            delete_seq[d.delete_key] = int(t.delete_sequence_numbers.get(d.delete_key, 0))
    info = local_frame(spark, {FILE_COL: ([r[0] for r in info_rows], "string"), _SEQ_COL: ([r[1] for r in info_rows], "int64"),
                                _PART_COL: ([r[2] for r in info_rows], "int32")})
    df = df.join(F.broadcast(info), FILE_COL, "inner")

    # position deletes
    everything = [d for d in delete_files.values() if d.content == POSITION_DELETES]
    pos = [d for d in everything if not d.is_deletion_vector]
    vectors = [d for d in everything if d.is_deletion_vector]
    if everything:
        parts = []
        if pos:
            pschema = to_spark_schema(POSITION_DELETE_SCHEMA)
            dinfo = local_frame(spark, {"_d_file": ([d.file_path for d in pos], "string"),
                                         "_d_seq": ([delete_seq[d.file_path] for d in pos], "int64")})
            parts.append(file_scan(spark, [d.file_path for d in pos], pschema)
                         .select(F.col("file_path").alias("_d_target"), F.col("pos").alias("_d_pos"),
                                 table_path_of(F.col("_metadata.file_path")).alias("_d_file"))
                         .join(F.broadcast(dinfo), "_d_file").drop("_d_file"))
        if vectors:
            parts.append(vector_rows(spark, vectors, {d.delete_key: delete_seq[d.delete_key] for d in vectors})
                         .select(F.col("file_path").alias("_d_target"), F.col("pos").alias("_d_pos"),
                                 F.col("seq").alias("_d_seq")))
        pdf = _union(parts)
        pos = everything
        cond = ((df[FILE_COL] == pdf["_d_target"]) & (df[POS_COL] == pdf["_d_pos"])
                & (df[_SEQ_COL] <= pdf["_d_seq"]))
        df = df.join(_hint(pdf, sum(d.record_count for d in pos)), cond, "left_anti")

    # equality deletes, one anti join per set of equality ids
    by_ids: dict = {}
    for d in delete_files.values():
        if d.content == EQUALITY_DELETES:
            by_ids.setdefault(tuple(sorted(d.equality_ids or [])), []).append(d)
    for ids, files in sorted(by_ids.items()):
        fields = [schema.find_field(i) for i in ids if schema.find_field_or_none(i) is not None]
        if not fields:
            continue
        from pyspark.sql import types as T

        eschema = T.StructType([to_spark_field(f) for f in fields])
        rows = []
        for d in files:
            # the partition id is null for unpartitioned (global) equality deletes
            key = d.spec_id, d.partition
            rows.append((d.file_path, delete_seq[d.file_path], None if not d.partition else part_ids.get(key, -1)))
        dinfo = local_frame(spark, {"_d_file": ([r[0] for r in rows], "string"), "_d_seq": ([r[1] for r in rows], "int64"),
                                     "_d_part": ([r[2] for r in rows], "int32")})
        names = {f.field_id: f"_d_eq_{f.field_id}" for f in fields}
        edf = (file_scan(spark, [d.file_path for d in files], eschema)
               .select(*[F.col(f"`{f.name}`").alias(names[f.field_id]) for f in fields],
                       table_path_of(F.col("_metadata.file_path")).alias("_d_file"))
               .join(F.broadcast(dinfo), "_d_file").drop("_d_file"))
        cond = df[_SEQ_COL] < edf["_d_seq"]
        cond = cond & (edf["_d_part"].isNull() | (df[_PART_COL] == edf["_d_part"]))
        for f in fields:
            cond = cond & df[f"`{f.name}`"].eqNullSafe(edf[names[f.field_id]])
        df = df.join(_hint(edf, sum(d.record_count for d in files)), cond, "left_anti")
    return df.select(*[f"`{f.name}`" for f in schema.fields], FILE_COL, POS_COL)
