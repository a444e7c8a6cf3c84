"""Position delete files (format v2) and deletion vectors (v3) written by Spark tasks, never on
the driver.

The (data file, position) rows of a merge-on-read change are clustered by data file, so every
position of one data file reaches one task; each task sorts its rows, splits them by the data
file's partition and writes one position delete file per partition. The task sends back the
DataFiles describing what it wrote (a few hundred bytes each); the driver sees no positions.
A failed job leaves files whose names carry the job's id: the driver writes an abort marker,
waits for the job's tasks to stop and removes them; a task still running when the marker appears
removes its own files after its last write.

On a format v3 table each task writes one Puffin file instead, holding a deletion vector per
data file: the new positions merged with those the file's earlier vector (or v2 position
deletes) held, as the spec allows at most one vector per data file; the commit then removes
the earlier vector.

An UPDATE or MERGE sends its whole changed rows instead (``write_changes_in_tasks``): the same
tasks write the positions' delete files and the updated and inserted rows' data files, in one job.
"""
from __future__ import annotations

import os
import pickle
import uuid
from typing import TYPE_CHECKING, Callable, Iterator, Optional, TypeVar

from icefloe.core.io import FileIO, staged_files
from icefloe.iceberg.delete_files import delete_granularity, positions_by_data_file, write_position_deletes
from icefloe.iceberg.manifest import DATA, POSITION_DELETES, DataFile
from icefloe.iceberg.parquet_props import ParquetSettings
from icefloe.iceberg.puffin import write_vectors
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.spark import connect, iceberg_change_writer
from icefloe.spark.align import explain_spark_error
from icefloe.spark.iceberg_read import FILE_COL, POS_COL
from icefloe.spark.iceberg_write import arrow_rows_to_files, task_input
from icefloe.spark.jobs import clean_up_failed_job

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

_R = TypeVar("_R")


def write_position_deletes_in_tasks(positions: DataFrame, meta: TableMetadata, io: FileIO, partition_of: dict,
                                    previous: Optional[dict] = None, counts: Optional[dict] = None,
                                    rows_of: Optional[dict] = None) -> list:
    """Position delete files for ``positions`` (a DataFrame of FILE_COL, POS_COL), written by tasks.

    ``partition_of`` maps each data file path to its ``(spec_id, partition)``: a file list the
    driver already holds from planning. ``previous`` maps a data file to the position delete files
    (and vectors) already applying to it, merged into its new vector on a v3 table. ``counts``,
    when given, receives each data file's number of new positions (as the tasks report them); with a
    ``KIND_COL`` column in ``positions``, keyed by (data file, kind) instead. ``rows_of`` (a data
    file's record count) spreads the data files' positions over the tasks (``_clustered``)."""
    from pyspark.sql import functions as F

    if not partition_of:
        return []
    job_id = uuid.uuid4().hex
    spark = positions.sparkSession
    parallelism = _task_count(spark, len(partition_of))
    kind = [F.col(KIND_COL).alias(KIND_COL)] if KIND_COL in positions.columns else []
    named = positions.select(F.col(FILE_COL).alias("file_path"), F.col(POS_COL).alias("pos"), *kind)
    rows_of = rows_of or dict.fromkeys(partition_of, 1)
    marker = f"{meta.location.rstrip('/')}/data/.staging-{job_id}/aborted"
    if iceberg_change_writer.usable(spark, meta, io, previous=previous):     # written by the JVM, no Python worker
        rows = _clustered_for_jvm(named.select("file_path", "pos", (F.col(KIND_COL) if kind else F.lit(0))
                                               .cast("int").alias(KIND_COL)), parallelism, rows_of, False)
        files, by_kind = _guarded(lambda: iceberg_change_writer.write(
            rows, meta, io, partition_of, previous or {}, job_id, marker, _ANY_KIND, ()), spark, io, meta, job_id, marker,
            python_workers=False)
        if counts is not None:
            for (path, k), n in by_kind.items():
                key = (path, k) if kind else path
                counts[key] = counts.get(key, 0) + n
        return files
    if meta.format_version < 3:     # the tasks' Arrow writer: a delete codec it lacks refused here, not in them
        ParquetSettings.of(meta.properties, delete=True).arrow_options()
    run = _task(io.for_tasks(), meta, partition_of, previous or {}, job_id, marker)
    out = []
    for written, task_counts in _run_job(_clustered(named, parallelism, rows_of, False), run, io, meta, job_id, marker):
        out.extend(written)
        if counts is not None:
            for path, n in task_counts.items():
                counts[path] = counts.get(path, 0) + n
    return out


def write_changes_in_tasks(changes: DataFrame, meta: TableMetadata, io: FileIO, partition_of: dict, previous: dict,
                           counts: dict, deleting: tuple, writing: tuple, row_meta: TableMetadata,
                           prepare: Optional[Callable[[pa.Table], pa.Table]] = None, rows_of: Optional[dict] = None,
                           jvm_rows: Optional[Callable[[DataFrame], DataFrame]] = None) -> tuple:
    """A merge-on-read change written by one Spark job, as the JVM runtime writes it: ``changes``
    holds FILE_COL, POS_COL, KIND_COL and ``row_meta``'s columns. A row whose kind is in
    ``deleting`` names a position to delete; one whose kind is in ``writing`` is a row to write.
    The rows are clustered by data file as for ``write_position_deletes_in_tasks``; each task
    writes its positions' delete files (or vectors) and its rows' data files (with Arrow, at most
    ``ROWS_PER_FLUSH`` rows held at once; ``prepare``, if given, turns the rows with the data file
    and position columns into ``row_meta``'s columns first) and reports both, with its count of positions per
    (data file, kind) added to ``counts``. Returns (delete files, data files); a failed job leaves
    none of either. ``jvm_rows`` (``iceberg_change_writer.rows_for``), if given, does what ``prepare``
    does in Spark SQL, for the JVM's writer, which takes the job where it can
    (``iceberg_change_writer.usable``)."""

    job_id = uuid.uuid4().hex
    spark = changes.sparkSession
    parallelism = _task_count(spark, len(partition_of))
    marker = f"{meta.location.rstrip('/')}/data/.staging-{job_id}/aborted"
    if jvm_rows is not None and iceberg_change_writer.usable(spark, meta, io, row_meta, previous):
        rows = _clustered_for_jvm(jvm_rows(changes), parallelism, rows_of or dict.fromkeys(partition_of, 1), True)
        files, by_kind = _guarded(lambda: iceberg_change_writer.write(
            rows, meta, io, partition_of, previous, job_id, marker, deleting, writing, row_meta), spark, io, meta, job_id,
            marker, python_workers=False)
        for key, n in by_kind.items():
            counts[key] = counts.get(key, 0) + n
        return [f for f in files if f.content != DATA], [f for f in files if f.content == DATA]
    ParquetSettings.of(meta.properties).arrow_options()     # as above, for the rows and (v2) the deletes
    if meta.format_version < 3:
        ParquetSettings.of(meta.properties, delete=True).arrow_options()
    renamed = changes.withColumnsRenamed({FILE_COL: "file_path", POS_COL: "pos"})
    clustered = _clustered(renamed, parallelism, rows_of or dict.fromkeys(partition_of, 1), True)
    write_deletes = _deletes_writer(io.for_tasks(), meta, partition_of, previous, job_id)
    task_io = io.for_tasks()
    columns = [f.name for f in row_meta.schema.fields]

    def run(batches: Iterator[pa.RecordBatch]):  # in the Python workers
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyspark import TaskContext

        ctx = TaskContext.get()
        task = ctx.partitionId() if ctx is not None else 0
        positions, pending, written = [], [], []
        held = 0
        with staged_files(task_io) as data_files:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                table = pa.Table.from_batches([batch])
                kinds = table.column(KIND_COL)
                deletes = pc.and_(pc.is_in(kinds, pa.array(deleting, kinds.type)), pc.is_valid(table.column("file_path")))
                positions.append(table.filter(deletes).select(["file_path", "pos", KIND_COL]))
                rows = table.filter(pc.is_in(kinds, pa.array(writing, kinds.type)))
                if rows.num_rows:
                    pending.append((prepare(rows) if prepare is not None else rows).select(columns))
                    held += rows.num_rows
                if held >= ROWS_PER_FLUSH:
                    data_files.extend(arrow_rows_to_files(task_io, row_meta, job_id, pa.concat_tables(pending), task,
                                                          first_counter=len(data_files)))
                    pending, held = [], 0
            if pending:
                data_files.extend(arrow_rows_to_files(task_io, row_meta, job_id, pa.concat_tables(pending), task,
                                                      first_counter=len(data_files)))
            written.extend(data_files)
            named = pa.concat_tables(positions) if positions else None
            if named is not None and named.num_rows:
                written.extend(write_deletes(named, task))
        if written:
            yield from _report(task_io, marker, written, _counts(named) if named is not None and named.num_rows else {})

    deletes, data = [], []
    for written, task_counts in _run_job(clustered, run, io, meta, job_id, marker):
        for f in written:
            (data if f.content == DATA else deletes).append(f)
        for key, n in task_counts.items():
            counts[key] = counts.get(key, 0) + n
    return deletes, data


ROWS_PER_FLUSH = 1_000_000      # rows a task writing changes holds before it writes them out


def _run_job(clustered: DataFrame, run: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]], io: FileIO,
             meta: TableMetadata, job_id: str, marker: str) -> list:
    """Run the writing tasks (``run`` over ``clustered``): each task's (files written, counts)."""
    rows = _guarded(lambda: clustered.mapInArrow(run, "files binary").collect(), clustered.sparkSession, io, meta,
                    job_id, marker)
    return [pickle.loads(r["files"]) for r in rows]


def _guarded(job: Callable[[], _R], spark: SparkSession, io: FileIO, meta: TableMetadata, job_id: str, marker: str,
             python_workers: bool = True) -> _R:
    """``job()``, a Spark job writing files named with ``job_id`` (in Python workers, or, with
    ``python_workers`` False, in the JVM alone: ``ChangeWriter``). A failed job leaves nothing: the
    abort marker stops tasks still running, and the job's files go."""
    try:
        return job()
    except Exception as e:
        io.write_bytes(marker, b"", overwrite=True)
        clean_up_failed_job(spark, lambda: _remove_job_files(io, meta.location, job_id), python_workers)
        io.delete_tree(os.path.dirname(marker))
        raise explain_spark_error(e) from None


_ANY_KIND = tuple(range(16))     # the kinds a job writing positions alone deletes: all


_MAX_PLACED_FILES = 64       # data files placed on tasks one by one (a lookup per row), beyond that hashed


def _clustered(rows: DataFrame, parallelism: int, rows_of: dict, inserts: bool):
    """``rows`` (``file_path``, ``pos``...) in ``parallelism`` partitions, each data file's in one,
    sorted by file and position. The data files are placed by their record counts, the largest
    first on the least loaded task (a hash of the path may put the two large files of a table on
    one task, and the job waits for it); beyond ``_MAX_PLACED_FILES`` files, or where Spark
    cannot place rows by id, the path is hashed. ``inserts``: rows without a data file (inserted
    rows) stay spread over the tasks they come from."""
    from pyspark.sql import functions as F

    files = sorted(rows_of, key=lambda p: (-rows_of[p], p))
    if parallelism > 1 and 0 < len(files) <= _MAX_PLACED_FILES and hasattr(rows, "repartitionById"):
        load = [0] * parallelism
        place = {}
        for p in files:
            task = min(range(parallelism), key=load.__getitem__)
            place[p] = task
            load[task] += max(int(rows_of[p]), 1)
        task_of = F.create_map(*[c for p in files for c in (F.lit(p), F.lit(place[p]))])[F.col("file_path")]
        if inserts:
            task_of = F.coalesce(task_of, F.spark_partition_id())
        placed = rows.repartitionById(parallelism, task_of)
    else:
        # inserted rows name no data file: they stay spread over the tasks they come from
        key = (F.coalesce(F.col("file_path"), F.concat(F.lit("+"), F.spark_partition_id().cast("string")))
               if inserts else F.col("file_path"))
        placed = rows.repartition(parallelism, key)
    return placed.sortWithinPartitions("file_path", "pos")


def _clustered_for_jvm(rows: DataFrame, parallelism: int, rows_of: dict, inserts: bool):
    """``rows`` as the JVM writer takes them: as they are where they come as one scan reads them,
    no data file cut across tasks (``iceberg_change_writer.in_scan_order``), else ``_clustered``."""
    if iceberg_change_writer.in_scan_order(rows):
        return rows
    return _clustered(rows, parallelism, rows_of, inserts)


def _task_count(spark: SparkSession, files: int) -> int:
    """How many tasks write the delete files of ``files`` data files."""
    return max(1, min(files, connect.default_parallelism(spark)))


def _task(io: FileIO, meta: TableMetadata, partition_of: dict, previous: dict, job_id: str, marker: str):
    write = _deletes_writer(io, meta, partition_of, previous, job_id)

    def run(batches: Iterator[pa.RecordBatch]):  # in the Python workers
        got = task_input(batches)
        if got is None:
            return
        table, task = got
        yield from _report(io, marker, write(table, task), _counts(table))

    return run



def _deletes_writer(io: FileIO, meta: TableMetadata, partition_of: dict, previous: dict, job_id: str):
    """What a task calls to write its (file_path, pos) rows as delete files: below format v3,
    position delete files, one per data file (``referenced_data_file`` set), or one per partition
    with ``write.delete.granularity=partition``; else one Puffin file of deletion vectors. Returns
    the DataFiles written (none are left behind when it fails)."""
    if meta.format_version >= 3:
        return _vector_writer(io, meta, partition_of, previous, job_id)
    schema, location, props = meta.schema, meta.location, dict(meta.properties)
    specs = {spec_id: meta.spec_by_id(spec_id) for spec_id, _ in set(partition_of.values())}
    by_file = delete_granularity(props) == "file"

    def write(table: pa.Table, task: int) -> list:
        import pyarrow as pa
        import pyarrow.compute as pc

        paths = table.column("file_path").combine_chunks()
        groups: dict = {}
        for path in pc.unique(paths).to_pylist():
            groups.setdefault(path if by_file else partition_of[path], []).append(path)
        with staged_files(io) as written:
            for n, (key, members) in enumerate(sorted(groups.items(), key=repr)):
                spec_id, partition = partition_of[members[0]]
                rows = table.filter(pc.is_in(paths, pa.array(members, pa.string())))
                files = write_position_deletes(io, location, schema, specs[spec_id], {partition: rows}, props,
                                               write_id=f"{job_id}-{task:05d}-{n:05d}")
                for f in files:
                    if by_file:
                        f.referenced_data_file = key
                written.extend(files)
        return written

    return write


def _vector_writer(io: FileIO, meta: TableMetadata, partition_of: dict, previous: dict, job_id: str):
    location = meta.location.rstrip("/")

    def write(table: pa.Table, task: int) -> list:
        import pyarrow.compute as pc
        from pyroaring import BitMap64

        paths = table.column("file_path").combine_chunks()
        targets = sorted(pc.unique(paths).to_pylist())
        earlier = positions_by_data_file(io, {p: previous[p] for p in targets if previous.get(p)})
        vectors = []
        for path in targets:
            rows = table.filter(pc.equal(paths, path)).column("pos").combine_chunks()
            positions = BitMap64(rows.to_numpy(zero_copy_only=False).astype("uint64"))
            if path in earlier:
                positions |= BitMap64(earlier[path].astype("uint64"))
            vectors.append((path, positions))
        puffin = f"{location}/data/{task:05d}-0-{job_id}-{uuid.uuid4().hex[:8]}-deletes.puffin"
        blobs = write_vectors(io, puffin, vectors)
        try:
            size = io.size(puffin)
            return [DataFile(puffin, "PUFFIN", partition_of[path][1], len(positions), size,
                             content=POSITION_DELETES, spec_id=partition_of[path][0], referenced_data_file=path,
                             content_offset=b.offset, content_size_in_bytes=b.length)
                    for (path, positions), b in zip(vectors, blobs)]
        except BaseException:
            io.delete(puffin)
            raise

    return write


KIND_COL = "_icefloe_kind"      # an optional column of the positions: counted per (data file, kind)


def _counts(table: pa.Table) -> dict:
    """A task's count of positions per data file, or per (data file, kind) with a kind column."""
    keys = ["file_path"] + ([KIND_COL] if KIND_COL in table.column_names else [])
    grouped = table.group_by(keys).aggregate([("pos", "count")])
    columns = [grouped.column(k).to_pylist() for k in keys]
    found = zip(*columns) if len(keys) > 1 else columns[0]
    return dict(zip(found, grouped.column("pos_count").to_pylist()))


def _report(io: FileIO, marker: str, written: list, counts: dict):
    """A task's answer: the DataFiles it wrote and each data file's count of new positions
    (pickled, one row), unless the job failed elsewhere (``marker`` exists), when it removes its
    files instead and answers nothing."""
    import pyarrow as pa

    if io.exists(marker):
        for path in {f.file_path for f in written}:
            io.delete(path)
        return
    if written:
        yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps((written, counts))], pa.binary())], names=["files"])


def _remove_job_files(io: FileIO, location: str, job_id: str) -> None:
    data = f"{location.rstrip('/')}/data"
    try:
        paths = [p for p in io.walk_files(data) if job_id in os.path.basename(p) and not p.endswith("aborted")]
    except (FileNotFoundError, OSError):
        return
    for p in paths:
        io.delete(p)
