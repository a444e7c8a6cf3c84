"""The ``icefloe`` Spark data source (Spark's Python data source API).

``spark.read.format("icefloe").load(location)`` plans on the driver (pushed
filters prune files) and reads one file per input partition with Arrow.
``df.write.format("icefloe").mode("append"|"overwrite").save(location)``
writes data files in the Spark tasks, each returning a commit message that
lists its files; ``commit`` on the driver turns all of them into one snapshot,
and ``abort`` deletes them. A location with no table yet gets one created
from the DataFrame's schema (option ``partitioned_by``: terms separated by ';').
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

from icefloe.core import expressions as ex
from icefloe.core.config import catalog_properties, storage_properties
from icefloe.core.io import LOCAL, FileIO, normalize_location, strip_scheme
from icefloe.core.object_store import ObjectStoreIO, file_io_for
from icefloe.core.schema_input import to_schema
from icefloe.core.types import to_arrow_schema, to_spark_schema
from icefloe.errors import CorruptDataFileError, IcefloeError, InvalidNameError, NotSupportedError, StreamingSetupError
from icefloe.paimon import types as pt

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.datasource import Filter
    from pyspark.sql.types import StructType

    from icefloe.iceberg.manifest import DataFile
    from icefloe.iceberg.table import BaseTable
    from icefloe.iceberg.table_metadata import TableMetadata
    from icefloe.paimon.table import FileStoreTable

# Spark's Python workers import this module to unpickle the data source, its reader and its writer
# (each new worker once; Spark reuses its workers between micro-batches): the Iceberg side (its
# catalogs, readers and writers), Paimon's table API, catalog, readers and commit are imported
# where they are used, so a task that writes a Paimon table's files does not load them.


def paimon_table(location: str, io: FileIO = LOCAL) -> FileStoreTable:
    from icefloe.spark.paimon_read import paimon_table_at as of_location

    return of_location(location, io)


def detect_format(location: str, io: FileIO = LOCAL) -> str:
    loc = location.rstrip("/")
    if io.is_dir(f"{loc}/snapshot") or io.is_dir(f"{loc}/schema"):
        return "paimon"
    return "iceberg"


def _local(location: str) -> str:
    return normalize_location(location)


def io_for(options: Mapping[str, str], location: str = "") -> FileIO:
    """The FileIO of a table the data source reads or writes: the local file system, or the object
    store of ``location`` configured by the options' storage settings (``s3.endpoint``, ...)."""
    return file_io_for(location or "", storage_properties(dict(options)))


def _iceberg_exists(location: str, io: FileIO = LOCAL) -> bool:
    from icefloe.iceberg.hadoop import HadoopTableOperations

    return HadoopTableOperations(io, _local(location)).exists()


def _create_iceberg_table(location: str, schema: str | StructType, partitioned_by: Optional[str],
                          io: FileIO = LOCAL) -> None:
    """Create a table at ``location`` (schema: DDL text or Spark StructType; terms separated by ';')."""
    from icefloe.iceberg.hadoop import HadoopTableOperations
    from icefloe.iceberg.partitioning import build_spec
    from icefloe.iceberg.table_metadata import new_table_metadata

    ops = HadoopTableOperations(io, _local(location))
    sch = to_schema(schema)
    terms = [t for t in (partitioned_by or "").split(";") if t.strip()]
    meta = new_table_metadata(ops.location, sch, build_spec(sch, terms), {})
    try:
        ops.commit(None, None, meta)
    except Exception:
        if not ops.exists():
            raise


def _create_paimon_table(location: str, spark_schema: StructType, options: Mapping[str, str],
                         io: FileIO = LOCAL) -> None:
    """A new Paimon table at ``<warehouse>/<db>.db/<table>`` (Paimon's filesystem-catalog layout)."""
    from icefloe.paimon.catalog import PaimonCatalog

    loc = _local(location)
    db_dir, table = loc.rstrip("/").rsplit("/", 1)
    warehouse, db = db_dir.rsplit("/", 1)
    if not db.endswith(".db"):
        raise InvalidNameError(f"a new Paimon table needs a location like <warehouse>/<db>.db/<table>, got {location}")
    keys = [k.strip() for k in (options.get("partitioned_by") or "").split(";") if k.strip()]
    props = {k[len("option."):]: v for k, v in options.items() if k.startswith("option.")}
    PaimonCatalog(warehouse, io=io).create_table(f"{db[:-3]}.{table}", spark_schema, partitioned_by=keys or None,
                                          properties=props or None)


def iceberg_table_at(location: str, io: FileIO = LOCAL) -> BaseTable:
    """The Iceberg table whose directory is ``location`` (its version-hint and metadata files)."""
    from icefloe.iceberg.hadoop import HadoopTableOperations
    from icefloe.iceberg.table import BaseTable

    ops = HadoopTableOperations(io, _local(location))
    return BaseTable(os.path.basename(location.rstrip("/")), ops)


CATALOG_OPTION = "catalog"


def _uses_catalog(options: Mapping[str, str]) -> bool:
    return bool(options.get(CATALOG_OPTION)) or any(str(k).lower().startswith(CATALOG_OPTION + ".")
                                                    for k in options)


def _catalog_table(options: Mapping[str, str]) -> BaseTable:
    """The Iceberg table ``.option("catalog", <name>).load("<db>.<table>")`` names: a catalog
    configured in .icefloe.yaml / ICEFLOE_CATALOG__* (as Spark's Python workers see them), with
    ``catalog.<key>`` options (warehouse, type, uri, name) over it or instead of it."""
    from icefloe.iceberg.catalog import HadoopCatalog
    from icefloe.iceberg.rest_client import RestCatalog
    from icefloe.iceberg.sql_catalog import SqlCatalog

    name = options.get(CATALOG_OPTION)
    table = options.get("path") or options.get("table")
    props = catalog_properties(name) if name else {}
    props.update({str(k).lower()[len(CATALOG_OPTION) + 1:]: v for k, v in options.items()
                  if str(k).lower().startswith(CATALOG_OPTION + ".")})
    if str(props.get("format", "iceberg")).lower() != "iceberg":
        raise NotSupportedError("a Paimon catalog by name in the data source", table or "", "paimon",
                                "load the table by its directory (.load('<warehouse>/<db>.db/<table>'))")
    kind = str(props.get("type", "hadoop")).lower()
    storage = storage_properties(props)
    if kind == "rest":
        return RestCatalog(props["uri"], io=ObjectStoreIO(storage) if storage else None).load_table(_named(table))
    if not props.get("warehouse"):
        raise ValueError(f"catalog {name or ''!r} has no warehouse: configure it where Spark's Python workers "
                         "see it (.icefloe.yaml in the home or working directory, ICEFLOE_CATALOG__* set before "
                         "Spark starts) or give option catalog.warehouse")
    io = file_io_for(str(props["warehouse"]), storage)
    if kind == "sql":
        return SqlCatalog(str(props["warehouse"]), props.get("uri"), str(props.get("name", "default")), io=io) \
            .load_table(_named(table))
    return HadoopCatalog(str(props["warehouse"]), io=io).load_table(_named(table))


def _named(table: Optional[str]) -> str:
    """The table name a catalog read or write was given (``.load("<db>.<table>")``)."""
    if table is None:
        raise InvalidNameError("the icefloe data source with option catalog needs a table name: "
                               ".load('<db>.<table>') / .save('<db>.<table>')")
    return table


class _StaticOperations:
    """One metadata file, read-only: what Spark tasks of a catalog table read and write against
    (the driver resolved the table through its catalog; the tasks need only its metadata)."""

    def __init__(self, metadata_location: str, io: FileIO = LOCAL):
        from icefloe.iceberg.table_metadata import TableMetadata

        self.io, self._path = io, metadata_location
        self._meta = TableMetadata.loads(io.read_bytes(metadata_location), metadata_location)
        self.location = self._meta.location.rstrip("/")
        self.metadata_dir = metadata_location.rsplit("/", 1)[0]

    def load(self, version: Optional[int] = None) -> tuple[int, TableMetadata]:
        return 1, self._meta

    def current(self) -> TableMetadata:
        return self._meta

    def metadata_path(self, version: int) -> str:
        return self._path

    def exists(self) -> bool:
        return True

    def commit(self, *args: Any, **kwargs: Any) -> int:   # pragma: no cover - tasks never commit
        raise NotSupportedError("commit from a task", self.location, "iceberg", "the driver commits")

    def commit_changes(self, *args: Any, **kwargs: Any) -> Any:   # pragma: no cover - tasks never commit
        raise NotSupportedError("commit from a task", self.location, "iceberg", "the driver commits")


def _static_table(metadata_location: str, io: FileIO = LOCAL) -> BaseTable:
    from icefloe.iceberg.table import BaseTable

    return BaseTable(metadata_location.rsplit("/", 3)[-3], _StaticOperations(metadata_location, io))


LOCATION_KEY = "icefloe.location"
ROWKIND = "rowkind"   # the first column of a Paimon read with option read.changelog


def location_of(options: Mapping[str, str], schema: Optional[StructType] = None) -> str:
    """The table location: the ``path`` option, or (for tables in Spark's session catalog,
    whose options Spark does not hand to Python data sources) the location recorded in the
    table schema's field metadata when the catalog entry was created."""
    loc = options.get("path") or options.get("location")
    if not loc and schema is not None:
        for f in getattr(schema, "fields", []):
            loc = (f.metadata or {}).get(LOCATION_KEY)
            if loc:
                break
    if not loc:
        raise ValueError(
            "the icefloe data source needs a table location: .load(path) / .save(path); in SQL use "
            "CREATE TABLE name USING icefloe LOCATION 'path' without a column list (the columns come "
            "from the table, or from OPTIONS (columns '...') for a new one)")
    return loc


class BatchDataSource(DataSource):
    """The batch side of the ``icefloe`` data source (``icefloe.spark.source`` adds streaming)."""

    @classmethod
    def name(cls):
        return "icefloe"

    def schema(self) -> StructType:
        from pyspark.sql import types as T

        if _uses_catalog(self.options):
            t = _catalog_table(self.options)
            snap = t.snapshot_for(_opt_int(self.options, "snapshot-id"), self.options.get("as-of-timestamp"))
            return to_spark_schema(t.schema_for(snap))
        loc = location_of(self.options)
        io = io_for(self.options, loc)
        if detect_format(loc, io) == "paimon":
            # read.changelog (a stream of a primary-key table): each row's kind first, as Paimon's
            # Spark source gives it
            kind = [T.StructField(ROWKIND, T.StringType(), True, {LOCATION_KEY: loc})] \
                if str(self.options.get("read.changelog", "")).lower() == "true" else []
            return T.StructType(kind + [
                T.StructField(f.name, pt.to_spark_type(f.type, False), f.nullable, {LOCATION_KEY: loc})
                for f in paimon_table(loc, io).table_schema.fields])
        columns = self.options.get("columns")
        if columns and not _iceberg_exists(loc, io):
            _create_iceberg_table(loc, columns, self.options.get("partitioned_by"), io)
        t = iceberg_table_at(loc, io)
        snap = t.snapshot_for(_opt_int(self.options, "snapshot-id"), self.options.get("as-of-timestamp"))
        # Record the location in the field metadata: Spark keeps it in its catalog entry and hands it
        # back to reader() and writer(), the one channel that reaches them for SQL tables.
        fields = [T.StructField(f.name, f.dataType, f.nullable, {LOCATION_KEY: loc})
                  for f in to_spark_schema(t.schema_for(snap)).fields]
        return T.StructType(fields)

    def reader(self, schema: StructType) -> IcefloePushdownReader:
        if any(str(k).lower() in ("consumer-id", "consumer.mode", "consumer.ignore-progress") for k in self.options):
            raise StreamingSetupError("option consumer-id records a streaming read's progress (Paimon's consumers); "
                                      "a batch read has none: read with spark.readStream")
        return IcefloePushdownReader(dict(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> IcefloeWriter:
        return IcefloeWriter(dict(self.options), schema, overwrite)


def _paimon_tag_files(location: str, tag: str, io: FileIO = LOCAL) -> list:
    """The data files of a Paimon tag, as ``paimon_partitions`` names them (the tag's own copy
    of its snapshot: readable after the snapshot expired)."""
    from icefloe.spark.paimon_read import partitions_of

    table = paimon_table(location, io)
    return partitions_of(table, table.plan(ref=tag), ref=tag)


def _opt_int(options: Mapping[str, str], key: str):
    v = options.get(key)
    return int(v) if v not in (None, "") else None


@dataclass
class FilePartition(InputPartition):
    path: str
    # an Iceberg data file's delete files (merge-on-read: applied with Arrow in ``read``); and, of a
    # catalog's table, the metadata the driver planned with and its FileIO (the tasks read those)
    deletes: Optional[list[DataFile]] = None
    metadata_location: Optional[str] = None
    io: Optional[FileIO] = None


# Spark filter classes -> our predicate AST (only used for pruning; Spark re-applies every filter)
def _to_predicate(f: Filter):
    from pyspark.sql import datasource as ds

    spark_filter: Any = f       # each of Spark's filter classes has its own fields (attribute, value)

    def col(attr: Sequence[str]):
        return ".".join(attr)

    def lit(v: Any):
        # Spark hands timestamp filter values over as naive local-time datetimes; make the
        # instant explicit so binding does not read them as UTC wall-clock times.
        import datetime as _dt

        if isinstance(v, _dt.datetime) and v.tzinfo is None:
            return v.astimezone()
        return v

    pairs = [("EqualTo", ex.EqualTo), ("GreaterThan", ex.GreaterThan), ("GreaterThanOrEqual", ex.GreaterThanOrEqual),
             ("LessThan", ex.LessThan), ("LessThanOrEqual", ex.LessThanOrEqual)]
    for cls_name, node in pairs:
        cls = getattr(ds, cls_name, None)
        if cls is not None and isinstance(f, cls):
            return node(col(spark_filter.attribute), lit(spark_filter.value))
    if isinstance(f, getattr(ds, "In", ())) :
        return ex.In(col(spark_filter.attribute), [lit(v) for v in spark_filter.value])
    if isinstance(f, getattr(ds, "IsNull", ())):
        return ex.IsNull(col(spark_filter.attribute))
    if isinstance(f, getattr(ds, "IsNotNull", ())):
        return ex.NotNull(col(spark_filter.attribute))
    if isinstance(f, getattr(ds, "StringStartsWith", ())):
        return ex.StartsWith(col(spark_filter.attribute), spark_filter.value)
    return None


class IcefloeReader(DataSourceReader):
    """A batch read: one input partition per data file."""

    def __init__(self, options: dict, schema: StructType):
        self.options = options
        self.schema = schema
        self.predicates: list = []

    def _where(self):
        if not self.predicates:
            return None

        expr = self.predicates[0]
        for p in self.predicates[1:]:
            expr = ex.And(expr, p)
        return expr

    def partitions(self) -> list[FilePartition]:
        from icefloe.spark.paimon_read import paimon_partitions

        catalog_table = _catalog_table(self.options) if _uses_catalog(self.options) else None
        loc = catalog_table.location if catalog_table is not None else location_of(self.options, self.schema)
        io = catalog_table.io if catalog_table is not None else io_for(self.options, loc)
        if catalog_table is None and detect_format(loc, io) == "paimon":

            if self.options.get("branch"):
                raise ValueError(f"option branch: icefloe does not read Paimon branches ({loc})")
            if self.options.get("tag"):
                return [FilePartition(p) for p in _paimon_tag_files(loc, self.options["tag"], io)]
            return [FilePartition(p) for p in paimon_partitions(loc, self.options, self._where(), io)]
        t = catalog_table if catalog_table is not None else iceberg_table_at(loc, io)
        tasks = t.iter_tasks(self._where(), _opt_int(self.options, "snapshot-id"),       # streamed: no list of tasks
                             self.options.get("as-of-timestamp"), self.options.get("branch") or self.options.get("tag"))
        parts = []
        for task in tasks:
            part = FilePartition(task.path)
            part.deletes = list(task.deletes)  # merge-on-read: applied with Arrow in read()
            if catalog_table is not None:      # tasks read the metadata the driver planned with
                part.metadata_location = catalog_table.metadata_location
                part.io = catalog_table.io
            parts.append(part)
        return parts or [FilePartition("")]

    def read(self, partition: FilePartition) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from icefloe.spark.paimon_read import MERGE_PREFIX, paimon_read_bucket, paimon_read_file

        target = arrow_target(self.schema)
        if not partition.path:
            return
        static = getattr(partition, "metadata_location", None)
        loc = static or location_of(self.options, self.schema)
        io = getattr(partition, "io", LOCAL) if static else io_for(self.options, loc)
        if not static and detect_format(loc, io) == "paimon":
            if len(target) and target.field(0).name == ROWKIND:   # read.changelog: each row's kind first
                if partition.path.startswith(MERGE_PREFIX):         # a primary-key bucket: its merged kinds
                    yield from paimon_read_bucket(loc, partition.path, target, io, kind_col=ROWKIND)
                    return
                values = pa.schema([target.field(i) for i in range(1, len(target))])
                for b in paimon_read_file(loc, partition.path, values, io):
                    yield pa.RecordBatch.from_arrays([pa.array(["+I"] * b.num_rows, pa.string()), *b.columns],
                                                     schema=target)
                return
            yield from paimon_read_file(loc, partition.path, target, io)
            return
        from icefloe.iceberg.delete_files import apply_deletes_arrow

        t = _static_table(static, io) if static else iceberg_table_at(loc, io)
        snap = t.snapshot_for(_opt_int(self.options, "snapshot-id"), self.options.get("as-of-timestamp"))
        with_ids = to_arrow_schema(t.schema_for(snap))
        deletes = getattr(partition, "deletes", None)

        def batches():
            # errors name the file: in a Python worker pyarrow's message alone would not

            try:
                with t.io.open_read(partition.path) as fh:
                    pf = pq.ParquetFile(fh)
                    if deletes:  # positions count from the file's first row: apply deletes to the whole file

                        whole = apply_deletes_arrow(_project_batch(pf.read(), with_ids), partition.path, deletes,
                                                    t.schema_for(snap), t.io)
                        yield from whole.to_batches(max_chunksize=65536)
                    else:
                        yield from pf.iter_batches(batch_size=65536)
            except IcefloeError:
                raise
            except FileNotFoundError as e:
                missing = getattr(e, "filename", None) or partition.path
                raise CorruptDataFileError(strip_scheme(missing), "file referenced by the snapshot is missing") \
                    from None
            except (pa.ArrowException, OSError) as e:
                raise CorruptDataFileError(strip_scheme(partition.path),
                                           f"not a readable Parquet file ({type(e).__name__}: {e})") from None

        for batch in batches():
            projected = _project_batch(pa.Table.from_batches([batch]), with_ids)
            yield pa.RecordBatch.from_arrays(
                [projected.column(i).combine_chunks().cast(target.field(i).type) for i in range(len(target))],
                schema=target)


# Spark 4.3 keeps the read planned during one query's filter pushdown on the relation and reuses it
# for later queries of the same DataFrame, filtered or not (``df.where(...).count()`` then
# ``df.count()`` read only the first query's files); until Spark scopes that plan to its scan,
# pushed filters must not prune files, or a later query would silently miss rows.
_PRUNE_BY_PUSHED_FILTERS = False


class IcefloePushdownReader(IcefloeReader):
    """A read whose files are pruned by the filters Spark pushes down (sessions configured
    by icefloe enable ``spark.sql.python.filterPushdown.enabled``; Spark refuses a reader that
    takes filters in a session where it is off)."""

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        # each planning pushes its own filters: Spark may plan several queries with one reader
        # (a DataFrame read, then filtered, then read whole), so none may keep an earlier query's
        self.predicates = []
        for f in filters:
            try:
                p = _to_predicate(f)
            except Exception:
                p = None
            if p is not None and _PRUNE_BY_PUSHED_FILTERS:
                self.predicates.append(p)
            yield f  # pruning is inclusive: Spark still evaluates every filter on rows


def arrow_target(spark_schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects for ``spark_schema`` (same names, types and nullability)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(spark_schema, timezone="UTC")


def _project_batch(table: pa.Table, with_ids: pa.Schema):
    from icefloe.iceberg.arrow_read import read_by_field_id

    return read_by_field_id(table, with_ids)


@dataclass
class FilesMessage(WriterCommitMessage):
    files: list = field(default_factory=list)


class _IcebergFiles:
    """An Iceberg table's side of a batch write: each task's Arrow batches become data files, and
    the driver commits them all as one snapshot (or deletes them on abort)."""

    def __init__(self, options: dict, location: str, io: FileIO, metadata_location: Optional[str], write_id: str):
        self.options, self.location, self.io = options, location, io
        self.metadata_location, self.write_id = metadata_location, write_id

    def write(self, batches: list, task_id: int) -> list:
        import pyarrow as pa

        from icefloe.iceberg.arrow_writer import align_arrow, write_arrow

        if not batches:
            return []
        t = _static_table(self.metadata_location, self.io) if self.metadata_location \
            else iceberg_table_at(self.location, self.io)
        meta = t.metadata
        data = align_arrow(pa.Table.from_batches(batches), meta.schema, t.name)
        return write_arrow(t.io, data, meta.schema, meta.spec, meta.location, meta.properties,
                           task_id=task_id, write_id=self.write_id, meta=meta)

    def commit(self, files: list, overwrite: bool) -> None:
        t = _catalog_table(self.options) if self.metadata_location else iceberg_table_at(self.location, self.io)
        t.commit_files(files, overwrite=overwrite)

    def abort(self, files: list) -> None:
        for f in files:
            self.io.delete(f.file_path)


class _PaimonFiles:
    """A Paimon table's side of a batch write: each task's batches become data files of their
    buckets (primary-key rows numbered on from ``restored``), committed as one snapshot."""

    def __init__(self, location: str, io: FileIO, restored: Optional[dict[tuple[bytes, int], int]]):
        self.location, self.io, self.restored = location, io, restored

    def write(self, batches: list, task_id: int) -> list:
        from icefloe.spark.paimon_tasks import paimon_write_batches

        return paimon_write_batches(self.location, batches, self.restored, task_id, self.io)

    def commit(self, files: list, overwrite: bool) -> None:
        from icefloe.spark.paimon_tasks import paimon_commit

        paimon_commit(self.location, files, overwrite, self.io)

    def abort(self, files: list) -> None:
        from icefloe.spark.paimon_tasks import paimon_abort

        paimon_abort(self.location, files, self.io)


class IcefloeWriter(DataSourceArrowWriter):
    def __init__(self, options: dict, schema: StructType, overwrite: bool):
        self.options = options
        self.overwrite = overwrite
        self.write_id = uuid.uuid4().hex
        if _uses_catalog(options):            # a table of a configured catalog: it must exist
            t = _catalog_table(options)
            self.location, self.format, self.io = t.location, "iceberg", t.io
            self.files = _IcebergFiles(options, t.location, t.io, t.metadata_location, self.write_id)
            return
        self.location = location_of(options, schema)
        self.io = io = io_for(options, self.location)
        self.format = detect_format(self.location, io)
        wanted = (options.get("format") or options.get("table_format") or "").lower()
        if self.format == "iceberg" and wanted == "paimon" and not _iceberg_exists(self.location, io):
            if options.get("option.primary-key") and options.get("option.bucket", "-1").strip() == "-1":
                raise NotSupportedError("create through the data source", self.location, "paimon",
                                        "a primary-key table without a fixed bucket count is a dynamic-bucket table, "
                                        "which the data source cannot write: set option.bucket to a number of "
                                        "buckets, or create the table with Catalog.create_table (nothing was created)")
            _create_paimon_table(self.location, schema, options, io)
            self.format = "paimon"
        elif self.format == "iceberg" and not _iceberg_exists(self.location, io):
            _create_iceberg_table(self.location, schema, options.get("partitioned_by"), io)
        self.files = _PaimonFiles(self.location, io, _paimon_restored(self.location, io)) \
            if self.format == "paimon" else _IcebergFiles(options, self.location, io, None, self.write_id)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> FilesMessage:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        return FilesMessage(self.files.write(list(iterator), ctx.partitionId() if ctx else 0))

    def commit(self, messages: Sequence[Optional[FilesMessage]]) -> None:
        self.files.commit([f for m in messages if m is not None for f in m.files], self.overwrite)

    def abort(self, messages: Sequence[Optional[FilesMessage]]) -> None:
        self.files.abort([f for m in messages if m is not None for f in m.files])


def _paimon_restored(location: str, io: FileIO):
    """The sequence numbers a Paimon primary-key table's upserts number on from (read once, on the
    driver); None for an append table. A dynamic-bucket table is refused: its keys' buckets are
    assigned by one writer, and the data source cannot route rows so."""
    from icefloe.paimon.schema import latest_schema

    schema = latest_schema(io, _local(location).rstrip("/"))
    if schema is not None and not schema.primary_keys:
        return None       # an append table, told from its schema file alone (no table API imported)
    pt_ = paimon_table(location, io)
    if pt_.table_schema.primary_keys and pt_.table_schema.num_buckets == -1:
        raise NotSupportedError("write through the data source", pt_.name, "paimon",
                                "a dynamic-bucket table assigns a partition's keys in one writer, and the "
                                "data source cannot route rows so: use Table.append (or SQL INSERT)")
    if not pt_.table_schema.primary_keys:
        return None
    from icefloe.paimon.writer import restored_sequence_numbers

    return restored_sequence_numbers(pt_.store)
