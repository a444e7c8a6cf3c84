"""The merge-on-read writer of row-level changes: position deletes (or deletion vectors on format
v3) for the changed rows of each data file, and new data files for the updated and inserted rows.

``write_in_tasks`` writes them as the JVM runtime does, in Spark tasks that also count them (no
separate count job); ``write_counted`` writes them from rows already counted per file
(``iceberg_dml.commit_changes``' path when a data file may lose every live row: that file is
removed whole instead of referenced).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from icefloe.core.io import staged_files
from icefloe.iceberg.manifest import POSITION_DELETES
from icefloe.spark import iceberg_change_writer
from icefloe.spark import iceberg_lineage as lineage_mod
from icefloe.spark.align import NULL_MARKER, align_dataframe, check_partition_ranges
from icefloe.spark.iceberg_delete_write import KIND_COL, write_changes_in_tasks, write_position_deletes_in_tasks
from icefloe.spark.iceberg_dml_plan import (
    ChangeRequest, Written, fewest_live_rows, read_target, record_counts, write_rows,
)
from icefloe.spark.iceberg_evolved_read import has_nanos
from icefloe.spark.iceberg_lineage import tracks_lineage
from icefloe.spark.iceberg_read import FILE_COL, POS_COL
from icefloe.core.types import to_spark_type
from icefloe.spark.iceberg_write import has_fixed, range_checked
from icefloe.spark.row_changes import ACTION, DELETE_ROW, INSERT, UPDATE, checkpointed
from icefloe.spark.target import WriteTarget

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.iceberg.table_metadata import TableMetadata


def write_in_tasks(table: WriteTarget, req: ChangeRequest) -> Optional[tuple[Written, dict]]:
    """A merge-on-read statement's changes written by Spark tasks that also count them, as the
    JVM runtime writes them: no separate count job. The changed rows (``req.labelled``'s, or a
    MERGE's ``req.changed``) go to the tasks writing the delete files, which report each data
    file's updated and deleted positions; updated and inserted rows are written as data files, the
    inserted count being what those hold beyond the updates. A DELETE without inserted rows is one
    job straight from the scan; an UPDATE or MERGE is one job too, the same tasks writing the rows
    (``_write_in_one_job``), except on tables with ``fixed`` or nanosecond columns, whose changed
    rows are checkpointed once and written by a second job. Returns what was written and the
    counts, or None, with the files written removed, when a data file lost every live row: the
    caller's path drops such a file instead."""
    from pyspark.sql import functions as F

    meta, task_by_path, changed = req.meta, req.read.task_by_path, req.changed
    tasks = list(task_by_path.values())
    kinds = {"delete": (), "update": (UPDATE,), "merge": (UPDATE, INSERT)}[req.operation]
    if req.inserting:
        kinds = kinds + (INSERT,)
    changes = (req.labelled(tasks) if changed is None else changed).where(
        F.col(ACTION).isin(UPDATE, DELETE_ROW, INSERT))
    partition_of = {p: t.partition_key for p, t in task_by_path.items()}
    previous = {p: [d for d in t.deletes if d.content == POSITION_DELETES] for p, t in task_by_path.items()}
    try:
        if kinds and not has_fixed(meta.schema) and not has_nanos(meta.schema):   # one job: delete files and rows
            return _write_in_one_job(table, meta, tasks, changes, req.cols, kinds, partition_of, previous)
        if kinds and changed is None:      # a MERGE's ``changed`` builds on its checkpointed matches
            changes = checkpointed(changes)
        by_kind: dict = {}
        data: list = []
        with staged_files(table.io) as added:
            positions = changes.where(F.col(ACTION).isin(UPDATE, DELETE_ROW)).select(
                FILE_COL, POS_COL, F.col(ACTION).alias(KIND_COL))
            added.extend(write_position_deletes_in_tasks(positions, meta, table.io, partition_of, previous,
                                                         counts=by_kind, rows_of=record_counts(task_by_path)))
            _refuse_emptied(table, meta, task_by_path, by_kind)
            if INSERT in kinds or (kinds and any(k == UPDATE and n for (_p, k), n in by_kind.items())):
                updated = [task_by_path[p] for (p, k), n in by_kind.items() if k == UPDATE and n and p in task_by_path]
                data = write_rows(changes.where(F.col(ACTION).isin(*kinds)), meta, table, req.cols, tasks,
                                  origins=updated)
                added.extend(data)
    except _FileEmptied:
        return None
    return _written(added, by_kind), _change_counts(by_kind, data)


def _write_in_one_job(table: WriteTarget, meta: TableMetadata, tasks: list, changes: DataFrame, cols: list, kinds: tuple,
                      partition_of: dict, previous: dict) -> tuple[Written, dict]:
    """``write_in_tasks`` in one Spark job: the tasks that write a data file's delete
    file (or vector) also write the updated and inserted rows they receive (with Arrow), so the
    changed rows are neither checkpointed nor read twice. The rows are fitted to the table here
    (a type that does not fit is refused before any job runs; a null in a required column or a
    value out of a partition's range fails the job with its typed error)."""
    from pyspark.sql import functions as F

    task_by_path = {t.path: t for t in tasks}
    lineage = tracks_lineage(meta)
    row_meta = lineage_mod.writing_lineage(meta) if lineage else meta
    stored = [lineage_mod.ROW_ID_COL, lineage_mod.LAST_SEQ_COL] if lineage else []
    rows = changes.select(*cols, *stored, FILE_COL, POS_COL, F.col(ACTION).alias(KIND_COL))
    rows = _fitted_for_writing(rows, meta, kinds, table.name)
    by_kind: dict = {}
    with staged_files(table.io) as added:
        deletes, data = write_changes_in_tasks(
            rows, meta, table.io, partition_of, previous, by_kind, (UPDATE, DELETE_ROW), kinds, row_meta,
            prepare=lineage_mod.written_in_task(tasks, "file_path", "pos") if lineage else None,
            rows_of=record_counts(task_by_path), jvm_rows=iceberg_change_writer.rows_for(
                row_meta, tasks if lineage else None, FILE_COL, POS_COL, KIND_COL))
        added.extend(deletes + data)
        _refuse_emptied(table, meta, task_by_path, by_kind)
    return _written(added, by_kind), _change_counts(by_kind, data)


def _written(added: list, by_kind: dict) -> Written:
    """Files written by the tasks: no data file removed, every one with a counted position referenced."""
    return Written(added, set(), {p for (p, _k), n in by_kind.items() if n})


def _fitted_for_writing(rows: DataFrame, meta: TableMetadata, kinds: tuple, table_name: str) -> DataFrame:
    """``rows`` (the table's columns, then others: FILE_COL, POS_COL, KIND_COL...) with the table's columns
    fitted as ``align_dataframe`` fits a write: its type rules applied now, its casts taken, and a
    null in a required column of a row to write (its kind in ``kinds``) failing the job; partition
    sources checked for range."""
    from pyspark.sql import functions as F

    schema = meta.schema
    have = {f.name: f.dataType for f in rows.schema.fields}
    targets = {f.name: to_spark_type(f.field_type) for f in schema.fields}
    if any(have[name] != t for name, t in targets.items()):     # align's rules say what fits, and as what
        fitted = align_dataframe(rows.select(*[f"`{f.name}`" for f in schema.fields]), schema, table_name).schema
        targets = {name: fitted[name].dataType for name in targets}
    ranged = range_checked(meta.spec, schema)
    if all(have[name] == t for name, t in targets.items()) and not any(f.required for f in schema.fields):
        return check_partition_ranges(rows, ranged, table_name)     # nothing to cast or check for nulls
    writing = F.col(KIND_COL).isin(*kinds)
    out = []
    for f in schema.fields:
        target = targets[f.name]
        c = F.col(f"`{f.name}`")
        if have[f.name] != target:
            c = c.cast(target)
        if f.required:
            msg = f"{NULL_MARKER}: null value in required column '{f.name}' of table {table_name}"
            c = F.when(c.isNull() & writing, F.raise_error(F.lit(msg)).cast(target)).otherwise(c)
        out.append(c.alias(f.name))
    known = {f.name for f in schema.fields}
    rows = rows.select(*out, *[c for c in rows.columns if c not in known])
    return check_partition_ranges(rows, ranged, table_name)


def _refuse_emptied(table: WriteTarget, meta: TableMetadata, task_by_path: dict, by_kind: dict) -> None:
    """Raise ``_FileEmptied`` when the deletes counted (per data file and kind) may leave a data
    file without live rows; earlier delete files may name other data files too, so those files'
    live rows are counted."""
    upd = {p: n for (p, k), n in by_kind.items() if k == UPDATE}
    dele = {p: n for (p, k), n in by_kind.items() if k == DELETE_ROW}
    unsure = [task_by_path[p] for p, n in dele.items() if not upd.get(p) and n >= fewest_live_rows(task_by_path[p])]
    if unsure:
        live = read_target(table, meta, unsure).groupBy(FILE_COL).count().collect()
        if any(r[1] == dele[r[0]] for r in live):
            raise _FileEmptied()


def _change_counts(by_kind: dict, data: list) -> dict:
    """A statement's counts from its tasks' positions per (data file, kind) and the data files it
    wrote (which hold the updated rows, then the inserted ones)."""
    updated = sum(n for (_p, k), n in by_kind.items() if k == UPDATE)
    deleted = sum(n for (_p, k), n in by_kind.items() if k == DELETE_ROW)
    return {"updated": updated, "deleted": deleted, "inserted": sum(f.record_count for f in data) - updated}


class _FileEmptied(Exception):
    """A statement deletes every live row of a data file (the file is dropped, not referenced)."""


def write_counted(table: WriteTarget, req: ChangeRequest, changes: DataFrame, counts: dict, touched: set,
                  whole: set) -> Written:
    """Merge-on-read from rows counted per data file (``changes``, labelled): the data files that
    lose every live row (``whole``) are removed, the other ``touched`` ones get position deletes
    of their updated and deleted rows, and the updated and inserted rows go to new data files."""
    from pyspark.sql import functions as F

    meta, task_by_path = req.meta, req.read.task_by_path
    referenced = touched - whole
    with staged_files(table.io) as added:
        if referenced:
            pos = changes.where(F.col(ACTION).isin(UPDATE, DELETE_ROW) & F.col(FILE_COL).isin(sorted(referenced)))
            partition_of = {p: task_by_path[p].partition_key for p in referenced}
            previous = {p: [d for d in task_by_path[p].deletes if d.content == POSITION_DELETES]
                        for p in referenced}
            added.extend(write_position_deletes_in_tasks(pos, meta, table.io, partition_of, previous,
                                                         rows_of=record_counts(task_by_path, referenced)))
        if counts["inserted"] or counts["updated"]:
            origins = [task_by_path[p] for p in sorted(touched) if p in task_by_path]
            added.extend(write_rows(changes.where(F.col(ACTION).isin(UPDATE, INSERT)), meta, table, req.cols,
                                    req.read.tasks, origins=origins))
    return Written(added, set(whole), referenced)
