"""Planning a row-level change in Spark: which files a DELETE, UPDATE or MERGE reads, how its
labelled rows are counted per data file, and the one ``RowDelta`` it commits.

A statement plans its target (``plan_target``: the write branch's head, files pruned by the
condition), reads those files with each row's data file and position (``read_target``), labels
every row (keep, update, delete, insert) and hands a ``ChangeRequest`` to ``iceberg_dml.
commit_changes``, which writes through the copy-on-write (``iceberg_cow``) or merge-on-read
(``iceberg_mor``) writer and commits here (``commit_row_delta``), validated against what was
committed since the read snapshot (``icefloe.iceberg.validate``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from icefloe.core import expressions as ex
from icefloe.core.reports import RowChanges
from icefloe.errors import ExpressionError
from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.manifest import DATA, POSITION_DELETES
from icefloe.iceberg.row_delta import RowDelta
from icefloe.iceberg.snapshot import Snapshot
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.iceberg.validate import Validation, isolation_level
from icefloe.spark import iceberg_lineage as lineage_mod
from icefloe.spark.iceberg_evolved_read import has_nanos
from icefloe.spark.iceberg_lineage import tracks_lineage, with_lineage_fields
from icefloe.spark.iceberg_nanos import with_raw_nanos
from icefloe.spark.iceberg_read import FILE_COL, POS_COL, read_tasks
from icefloe.spark.iceberg_write import write_data_files
from icefloe.spark.row_changes import ACTION, KEEP, file_stats
from icefloe.spark.target import WriteTarget, branch_head

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from icefloe.iceberg.scan import FileScanTask

COPY_ON_WRITE, MERGE_ON_READ = "copy-on-write", "merge-on-read"


def write_mode(properties: dict, operation: str) -> str:
    """``write.<operation>.mode`` (delete, update, merge): copy-on-write unless set to merge-on-read."""
    mode = properties.get(f"write.{operation}.mode", COPY_ON_WRITE).lower()
    if mode not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise ValueError(f"write.{operation}.mode must be {COPY_ON_WRITE!r} or {MERGE_ON_READ!r}, got {mode!r}")
    return mode


@dataclass
class TargetRead:
    """What a statement reads of its table: the metadata, the snapshot read (the head of the write
    branch) and the file tasks planned from it (pruned by the statement's condition)."""
    meta: TableMetadata
    snapshot: Optional[Snapshot]
    tasks: list
    task_by_path: dict = field(init=False, repr=False)

    def __post_init__(self):
        self.task_by_path = {t.path: t for t in self.tasks}


@dataclass
class ChangeRequest:
    """A row-level statement, planned and labelled: everything ``commit_changes`` needs to write
    and commit it.

    ``labelled(tasks)`` gives the rows of those file tasks, labelled (the table's columns, then
    FILE_COL, POS_COL and ACTION). The statement's own shape is said by name:
    ``every_row``: the labelled rows hold every live row of the files they touch (KEEP for the
    untouched ones; a MERGE that reads only matched target rows says False);
    ``changed``: a MERGE with a small source gives every changed and inserted row here, and the
    counts come from it (with copy-on-write it needs only FILE_COL and ACTION, ``inserts`` holding
    the inserted rows); ``inserting``: a "delete" whose labelled rows include INSERT rows
    (``overwrite`` with ``where``); ``scope_by_partition``: conflicts are checked in the partitions
    the statement touches (MERGE), else by ``conflict_filter`` (the statement's condition)."""
    operation: str                                   # "delete", "update" or "merge"
    read: TargetRead
    labelled: Callable[[list], Any]
    isolation: Optional[str] = None
    conflict_filter: Any = None
    scope_by_partition: bool = False
    every_row: bool = True
    changed: Any = None
    inserts: Any = None
    inserting: bool = False

    @property
    def meta(self) -> TableMetadata:
        return self.read.meta

    @property
    def mode(self) -> str:
        """The table's write mode for this operation (copy-on-write or merge-on-read)."""
        return write_mode(self.meta.properties, self.operation)

    @property
    def cols(self) -> list:
        """The table's columns, quoted for ``select``."""
        return [f"`{f.name}`" for f in self.meta.schema.fields]


@dataclass
class Written:
    """What a writer wrote for a statement: the new files, the data files removed whole, and the
    data files its new delete files reference (merge-on-read)."""
    added: list
    removed: set
    referenced: set


def plan_target(table: WriteTarget, where: Any) -> TargetRead:
    """The files of the table's write branch a statement with condition ``where`` reads."""
    meta = table.refresh().metadata
    snap = branch_head(meta, table.branch)
    tasks = scan_mod.plan_files(table.io, meta, snap, where)
    if tasks:
        table.spark     # the session the statement's expressions are built in, started if none runs
    return TargetRead(meta, snap, tasks)


def plan_target_within(table: WriteTarget, ranges: dict) -> TargetRead:
    """``plan_target`` of the files whose column bounds and partitions may hold a row with every column
    of ``ranges`` within its (lowest, highest); of every file where the ranges do not bind to the
    table's current schema (changed since they were taken)."""
    within = ex.and_(*[ex.And(ex.GreaterThanOrEqual(ex.Reference(c), low), ex.LessThanOrEqual(ex.Reference(c), high))
                       for c, (low, high) in ranges.items()])
    try:
        return plan_target(table, within)
    except ExpressionError:
        return plan_target(table, None)


def read_target(table: WriteTarget, meta: TableMetadata, file_tasks: list[FileScanTask],
                nanos_raw: bool = False) -> DataFrame:
    """The live rows of ``file_tasks`` with each row's data file and position (and on a format v3
    table each row's id and last sequence number, ``iceberg_lineage``); ``nanos_raw``: nanosecond
    timestamps as their raw ``long`` nanoseconds (``read_tasks``)."""
    lineage = tracks_lineage(meta)
    schema = with_lineage_fields(meta.schema) if lineage else meta.schema
    rows = read_tasks(table.spark, file_tasks, schema, with_positions=True, history=meta.schemas,
                      name_mapping=meta.properties.get("schema.name-mapping.default"), io=table.io,
                      nanos_raw=nanos_raw)
    return lineage_mod.as_stored(rows) if lineage else rows


def lineage_cols(meta: TableMetadata, col: Optional[Callable[[str], Column]] = None) -> list:
    """The lineage columns a labelled row carries on a v3 table (none below v3)."""
    from pyspark.sql import functions as F

    if not tracks_lineage(meta):
        return []
    col = col or F.col
    return [col(lineage_mod.ROW_ID_COL).alias(lineage_mod.ROW_ID_COL),
            col(lineage_mod.LAST_SEQ_COL).alias(lineage_mod.LAST_SEQ_COL)]


def fewest_live_rows(task: FileScanTask) -> int:
    """A lower bound of a file task's live rows: its record count less every row its position
    delete files hold (0 when an equality delete applies: one such row may delete many)."""
    if any(d.content != POSITION_DELETES for d in task.deletes):
        return 0
    return task.file.record_count - sum(d.record_count for d in task.deletes)


def record_counts(task_by_path: dict, paths: Optional[Iterable[str]] = None) -> dict:
    """Each data file's record count (of ``paths``, default all): how its changes are spread over tasks."""
    return {p: task_by_path[p].file.record_count for p in (task_by_path if paths is None else paths)}


def counted_per_file(labelled: DataFrame, task_by_path: dict) -> tuple:
    """``file_stats`` of every live row of the files read (``labelled``), counting only the rows
    that change, and the kept ones of files with earlier deletes: a file without deletes has as
    many live rows as its record count, so its ``n`` comes from the metadata. Grouping every row by
    its file's path cost more than the rest of the scan (a string per row)."""
    from pyspark.sql import functions as F

    with_deletes = sorted(p for p, t in task_by_path.items() if t.deletes)
    counted = F.col(ACTION) != KEEP
    if with_deletes:
        counted = counted | F.col(FILE_COL).isin(with_deletes)
    changes, stats, counts = file_stats(labelled.where(counted), FILE_COL, checkpoint=False)
    by_file = {}
    for path, r in stats.items():
        row = r.asDict()
        task = task_by_path.get(path)
        if task is not None and not task.deletes:
            row["n"] = task.file.record_count
        by_file[path] = row
    return changes, by_file, counts


def write_rows(rows: DataFrame, meta: TableMetadata, table: WriteTarget, cols: list, tasks: list,
               nanos_raw: bool = False, origins: Optional[list] = None, clustered: bool = False) -> list:
    """Write labelled ``rows`` (of ``tasks``' files, or inserted) as new data files (v3: with their lineage),
    ``clustered`` as ``write_data_files`` takes it. ``nanos_raw``: ``rows`` hold raw nanoseconds (``read_target``);
    else the rows of ``origins``' files (default ``tasks``) get their nanoseconds back (``with_raw_nanos``)."""
    if not nanos_raw and has_nanos(meta.schema):
        origins = tasks if origins is None else origins
        raw = read_target(table, meta, origins, nanos_raw=True) if origins else None
        rows, nanos_raw = with_raw_nanos(rows, meta, raw), True
    if tracks_lineage(meta):
        out = lineage_mod.stored(table.spark, rows, tasks, cols, FILE_COL, POS_COL, ACTION, KEEP)
        return write_data_files(out, lineage_mod.writing_lineage(meta), table.io, table.name, nanos_raw, clustered)
    return write_data_files(rows.select(*cols), meta, table.io, table.name, nanos_raw, clustered)


def commit_row_delta(table: WriteTarget, req: ChangeRequest, written: Written, counts: dict) -> RowChanges:
    """Commit a statement's new files, removed data files and referenced data files as one
    RowDelta on the write branch, validated against what was committed since the read snapshot."""
    task_by_path = req.read.task_by_path
    protected = written.removed | written.referenced
    partitions = {task_by_path[p].partition_key for p in protected}
    scope = None
    if req.scope_by_partition:
        scope = partitions | {(f.spec_id, f.partition) for f in written.added if f.content == DATA}
    snap = req.read.snapshot
    validation = Validation(
        read_snapshot_id=snap.snapshot_id if snap else None,
        isolation=isolation_level(req.meta.properties, req.operation, req.isolation),
        operation=req.operation.upper(), scope_partitions=scope, conflict_filter=req.conflict_filter,
        protected_files=protected, protected_partitions=partitions, referenced_files=written.referenced)
    new = table.commit(RowDelta(written.added, written.removed, validation), table.branch)
    return RowChanges.of(counts, new.snapshot_id)
