"""Row-level changes in Spark: DELETE, UPDATE, MERGE and equality deletes (compaction: ``iceberg_compaction``).

Every statement follows one flow. The driver plans the target files (pruned by
the predicate where there is one) and Spark reads them with each row's data
file and position (``iceberg_read.read_tasks(with_positions=True)``, existing
deletes applied). Spark then labels every row with what happens to it
(keep, update, delete, insert) and its new values; the labelled rows are
checkpointed so the counts and the writes see the same rows. Per data file:

* copy-on-write (default): files with changed rows are replaced by new files
  holding their surviving rows (updated ones with new values) -> ``overwrite``,
  or ``delete`` when whole files go and nothing is written;
* merge-on-read: changed rows get position deletes (sorted by path and
  position, one file per partition) and updated or inserted rows go to new
  data files -> ``delete`` when only deletes are added, else ``overwrite``.

A file all of whose live rows are deleted is removed from the table in both
modes, without writing anything. The commit validates against commits made
since the read snapshot (``icefloe.iceberg.row_delta``, ``icefloe.iceberg.validate``).
"""
from __future__ import annotations

from typing import Optional

from icefloe.core import expressions as ex
from icefloe.errors import ExpressionError
from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.manifest import DATA, POSITION_DELETES
from icefloe.iceberg.manifest_reader import live_entries
from icefloe.iceberg.schema import nanos_type_as_long
from icefloe.iceberg.row_delta import RowDelta
from icefloe.iceberg.validate import Validation, isolation_level
from icefloe.spark.align import NULL_MARKER, align_dataframe, check_partition_ranges
from icefloe.errors import MergeCardinalityError  # noqa: F401 - defined in icefloe.errors, importable here too
from icefloe.spark import iceberg_change_writer
from icefloe.spark import iceberg_lineage as lineage_mod
from icefloe.spark.iceberg_lineage import tracks_lineage, with_lineage_fields
from icefloe.spark.iceberg_evolved_read import has_nanos
from icefloe.spark.iceberg_read import FILE_COL, POS_COL, read_tasks
from icefloe.core.types import ListType, MapType, StructType, to_arrow_schema, to_spark_type
from icefloe.iceberg.arrow_writer import _split_by_partition
from icefloe.iceberg.delete_files import equality_delete_schema, write_equality_deletes
from icefloe.spark.iceberg_write import has_fixed, range_checked, write_data_files
from icefloe.spark.iceberg_delete_write import KIND_COL, write_changes_in_tasks, write_position_deletes_in_tasks
from icefloe.spark.merge_clauses import (
    ACTION, CLAUSE, DELETE_ROW, INSERT, KEEP, SOURCE_ID, UPDATE, MergeClauses, action_column, check_resolvable,
    checkpointed, file_stats, predicate, replacement_rows, resolve_assignments, updated_columns,
)

COPY_ON_WRITE, MERGE_ON_READ = "copy-on-write", "merge-on-read"


def write_mode(properties: dict, operation: str) -> str:
    """``write.<operation>.mode`` (delete, update, merge): copy-on-write unless set to merge-on-read."""
    mode = properties.get(f"write.{operation}.mode", COPY_ON_WRITE).lower()
    if mode not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise ValueError(f"write.{operation}.mode must be {COPY_ON_WRITE!r} or {MERGE_ON_READ!r}, got {mode!r}")
    return mode


# --------------------------------------------------------------------------- the shared tail
def _target(table, where):
    meta = table.refresh().metadata
    branch = meta.refs.get(table.write_branch)     # the head of the branch written (main's for a new one)
    snap = meta.snapshot_by_id(branch.snapshot_id) if branch is not None else meta.current_snapshot
    tasks = scan_mod.plan_files(table.io, meta, snap, where)
    if tasks:
        table.spark     # the session the statement's expressions are built in, started if none runs
    return meta, snap, tasks


def _target_within(table, ranges: dict):
    """``_target`` of the files whose column bounds and partitions may hold a row with every column
    of ``ranges`` within its (lowest, highest); of every file where the ranges do not bind to the
    table's current schema (changed since they were taken)."""
    within = ex.and_(*[ex.And(ex.GreaterThanOrEqual(ex.Reference(c), low), ex.LessThanOrEqual(ex.Reference(c), high))
                       for c, (low, high) in ranges.items()])
    try:
        return _target(table, within)
    except ExpressionError:
        return _target(table, None)


def _fewest_live_rows(task) -> int:
    """A lower bound of a file task's live rows: its record count less every row its position
    delete files hold (0 when an equality delete applies: one such row may delete many)."""
    if any(d.content != POSITION_DELETES for d in task.deletes):
        return 0
    return task.file.record_count - sum(d.record_count for d in task.deletes)


def _commit_changes(table, operation: str, meta, snap, tasks: list, labelled, isolation: Optional[str],
                    conflict_filter=None, scope_by_partition: bool = False, every_row: bool = True,
                    changed=None, inserts=None, inserting: bool = False) -> dict:
    """Write and commit a statement's labelled rows. ``labelled(tasks)`` gives them (table columns
    + FILE_COL, POS_COL, ACTION) with the target read from those file tasks; ``every_row``: they
    hold every live row of the files they touch (KEEP for the untouched ones); a MERGE that reads
    only matched target rows passes False.

    Merge-on-read writes the changed rows' position deletes and new rows in Spark tasks that also
    count them (``_write_changes_in_tasks``); a MERGE with a large source keeps only the changed
    rows (a checkpoint of those alone) and counts them per file first. Copy-on-write counts per
    file without keeping any row, then rewrites only the touched files, reading them again: the
    data files are immutable, so both passes see the same rows.

    ``changed``, when given, holds every changed and inserted row (a MERGE's matched rows and
    unmatched source rows): the counts come from it rather than from ``labelled(tasks)``; with
    copy-on-write it needs only FILE_COL and ACTION, and ``inserts`` gives the inserted rows.
    ``inserting``: a "delete" whose labelled rows include INSERT rows (``overwrite`` with ``where``)."""
    from pyspark.sql import functions as F

    schema = meta.schema
    cols = [f"`{f.name}`" for f in schema.fields]
    mode = write_mode(meta.properties, operation)
    task_by_path = {t.path: t for t in tasks}
    # a MERGE's changed rows come as ``changed`` (a small source); DELETE and UPDATE label them
    if mode == MERGE_ON_READ and (changed is not None if operation == "merge" else changed is None):
        done = _write_changes_in_tasks(table, meta, task_by_path, labelled, changed, cols, operation, inserting)
        if done is not None:
            added, counts, referenced = done
            if not added:
                return {**counts, "snapshot_id": None}
            return _commit_row_delta(table, operation, meta, snap, task_by_path, added, set(), referenced, counts,
                                     isolation, conflict_filter, scope_by_partition)
    if mode == MERGE_ON_READ:
        changed_rows = (labelled(tasks) if changed is None else changed).where(
            F.col(ACTION).isin(UPDATE, DELETE_ROW, INSERT))
        if operation == "delete":   # only positions are written: the scan reads the condition's columns alone
            changed_rows = changed_rows.select(FILE_COL, POS_COL, ACTION)
        changes, by_file, counts = file_stats(changed_rows, FILE_COL)
        every_row = False
    elif changed is not None:
        changes, by_file, counts = file_stats(changed, FILE_COL, checkpoint=False)
        every_row = False
    else:
        changes, by_file, counts = _counted_per_file(labelled(tasks), task_by_path)
    touched = {f for f, r in by_file.items() if r["upd"] + r["dele"] > 0}

    def every_row_deleted(f) -> bool:
        r = by_file[f]
        if r["upd"] or r["dele"] != r["n"]:
            return False
        if every_row:
            return True
        # only some rows of the file were counted: all of it goes only if the deletes cover its
        # whole record count (and no earlier delete file makes that count stale)
        task = task_by_path.get(f)
        return task is not None and not task.deletes and r["dele"] == task.file.record_count

    whole = {f for f in touched if every_row_deleted(f)}
    if not every_row:
        # files with earlier deletes whose every counted row is a delete: their live rows counted
        unsure = [task_by_path[f] for f in touched - whole
                  if f in task_by_path and task_by_path[f].deletes and not by_file[f]["upd"]
                  and by_file[f]["dele"] >= _fewest_live_rows(task_by_path[f])]
        if unsure:
            live = _read_target(table, meta, unsure).groupBy(FILE_COL).count().collect()
            whole |= {r[0] for r in live if r[1] == by_file[r[0]]["dele"]}
    if not touched and not counts["inserted"]:
        return {**counts, "snapshot_id": None}

    added: list = []
    referenced: set = set()
    try:
        if mode == COPY_ON_WRITE:
            rewrite = sorted(touched - whole)
            parts = []
            if rewrite:
                kept = labelled([task_by_path[p] for p in rewrite])
                parts.append(kept.where(F.col(ACTION).isin(KEEP, UPDATE) & F.col(FILE_COL).isNotNull()))
            if counts["inserted"]:
                parts.append(changes.where(F.col(ACTION) == INSERT) if inserts is None else inserts)
            new_rows = parts[0] if parts else None
            for more in parts[1:]:
                new_rows = new_rows.unionByName(more)
            removed = set(touched)
        else:
            new_rows = changes.where(F.col(ACTION).isin(UPDATE, INSERT))
            removed = set(whole)
            referenced = touched - whole
            if referenced:
                pos = changes.where(F.col(ACTION).isin(UPDATE, DELETE_ROW) & F.col(FILE_COL).isin(sorted(referenced)))
                partition_of = {p: task_by_path[p].partition_key for p in referenced}
                previous = {p: [d for d in task_by_path[p].deletes if d.content == POSITION_DELETES]
                            for p in referenced}
                added.extend(write_position_deletes_in_tasks(pos, meta, table.io, partition_of, previous,
                                                             rows_of=_record_counts(task_by_path, referenced)))
        if new_rows is not None and (counts["inserted"] or counts["updated"] or (mode == COPY_ON_WRITE and rewrite)):
            origins = [task_by_path[p] for p in sorted(touched) if p in task_by_path]
            in_place = mode == COPY_ON_WRITE and operation in ("delete", "update") and not inserting  # a scan's rows
            added.extend(_write_rows(new_rows, meta, table, cols, tasks, origins=origins, clustered=in_place))
    except BaseException:
        for f in added:
            table.io.delete(f.file_path)
        raise
    return _commit_row_delta(table, operation, meta, snap, task_by_path, added, removed, referenced, counts,
                             isolation, conflict_filter, scope_by_partition)


def _record_counts(task_by_path: dict, paths=None) -> dict:
    """Each data file's record count (of ``paths``, default all): how its changes are spread over tasks."""
    return {p: task_by_path[p].file.record_count for p in (task_by_path if paths is None else paths)}


def _counted_per_file(labelled, task_by_path: dict) -> tuple:
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


def _write_changes_in_tasks(table, meta, task_by_path: dict, labelled, changed, cols: list, operation: str,
                           inserting: bool):
    """A merge-on-read statement's changes written by Spark tasks that also count them, as the
    JVM runtime writes them: no separate count job. The changed rows (``labelled``'s, or a MERGE's
    ``changed``) go to the tasks writing the delete files, which report each data file's updated
    and deleted positions; updated and inserted rows are written as data files, the inserted count
    being what those hold beyond the updates. A DELETE without inserted rows is one job straight
    from the scan; an UPDATE or MERGE is one job too, the same tasks writing the rows
    (``_write_changes_in_one_job``), except on tables with ``fixed`` columns, whose changed rows are
    checkpointed once and written by a second job. Returns (files written, counts, data files referenced),
    or None, with the files written removed, when a data file lost every live row: the caller's
    path drops such a file instead."""
    from pyspark.sql import functions as F

    tasks = list(task_by_path.values())
    kinds = {"delete": (), "update": (UPDATE,), "merge": (UPDATE, INSERT)}[operation]
    if inserting:
        kinds = kinds + (INSERT,)
    changes = (labelled(tasks) if changed is None else changed).where(F.col(ACTION).isin(UPDATE, DELETE_ROW, INSERT))
    partition_of = {p: t.partition_key for p, t in task_by_path.items()}
    previous = {p: [d for d in t.deletes if d.content == POSITION_DELETES] for p, t in task_by_path.items()}
    if kinds and not has_fixed(meta.schema) and not has_nanos(meta.schema):   # one job: delete files and rows
        return _write_changes_in_one_job(table, meta, tasks, changes, cols, kinds, partition_of, previous)
    if kinds and changed is None:      # a MERGE's ``changed`` builds on its checkpointed matches
        changes = checkpointed(changes)
    by_kind: dict = {}
    added: list = []
    data: list = []
    try:
        positions = changes.where(F.col(ACTION).isin(UPDATE, DELETE_ROW)).select(
            FILE_COL, POS_COL, F.col(ACTION).alias(KIND_COL))
        added.extend(write_position_deletes_in_tasks(positions, meta, table.io, partition_of, previous,
                                                     counts=by_kind, rows_of=_record_counts(task_by_path)))
        _refuse_emptied(table, meta, task_by_path, by_kind)
        if INSERT in kinds or (kinds and any(k == UPDATE and n for (_p, k), n in by_kind.items())):
            updated = [task_by_path[p] for (p, k), n in by_kind.items() if k == UPDATE and n and p in task_by_path]
            data = _write_rows(changes.where(F.col(ACTION).isin(*kinds)), meta, table, cols, tasks, origins=updated)
            added.extend(data)
    except BaseException as e:
        for f in added:
            table.io.delete(f.file_path)
        if isinstance(e, _FileEmptied):
            return None
        raise
    return added, _change_counts(by_kind, data), {p for (p, _k), n in by_kind.items() if n}


def _write_changes_in_one_job(table, meta, tasks: list, changes, cols: list, kinds: tuple, partition_of: dict,
                              previous: dict):
    """``_write_changes_in_tasks`` in one Spark job: the tasks that write a data file's delete
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
    deletes, data = write_changes_in_tasks(
        rows, meta, table.io, partition_of, previous, by_kind, (UPDATE, DELETE_ROW), kinds, row_meta,
        prepare=lineage_mod.written_in_task(tasks, "file_path", "pos") if lineage else None,
        rows_of=_record_counts(task_by_path), jvm_rows=iceberg_change_writer.rows_for(row_meta, tasks if lineage else None,
                                                                                   FILE_COL, POS_COL, KIND_COL))
    added = deletes + data
    try:
        _refuse_emptied(table, meta, task_by_path, by_kind)
    except BaseException as e:
        for f in added:
            table.io.delete(f.file_path)
        if isinstance(e, _FileEmptied):
            return None
        raise
    return added, _change_counts(by_kind, data), {p for (p, _k), n in by_kind.items() if n}


def _fitted_for_writing(rows, meta, kinds: tuple, table_name: str):
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


def _refuse_emptied(table, meta, task_by_path: dict, by_kind: dict) -> None:
    """Raise ``_FileEmptied`` when the deletes counted (per data file and kind) may leave a data
    file without live rows; earlier delete files may name other data files too, so those files'
    live rows are counted."""
    upd = {p: n for (p, k), n in by_kind.items() if k == UPDATE}
    dele = {p: n for (p, k), n in by_kind.items() if k == DELETE_ROW}
    unsure = [task_by_path[p] for p, n in dele.items() if not upd.get(p) and n >= _fewest_live_rows(task_by_path[p])]
    if unsure:
        live = _read_target(table, meta, unsure).groupBy(FILE_COL).count().collect()
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


def _commit_row_delta(table, operation: str, meta, snap, task_by_path: dict, added: list, removed: set,
                      referenced: set, counts: dict, isolation, conflict_filter, scope_by_partition: bool) -> dict:
    """Commit a statement's new files, removed data files and referenced data files as one
    RowDelta validated against what was committed since ``snap``."""
    protected = removed | referenced
    partitions = {task_by_path[p].partition_key for p in protected}
    scope = None
    if scope_by_partition:
        scope = partitions | {(f.spec_id, f.partition) for f in added if f.content == DATA}
    validation = Validation(
        read_snapshot_id=snap.snapshot_id if snap else None,
        isolation=isolation_level(meta.properties, operation, isolation),
        operation=operation.upper(), scope_partitions=scope, conflict_filter=conflict_filter,
        protected_files=protected, protected_partitions=partitions, referenced_files=referenced)
    new = table._commit(RowDelta(added, removed, validation, summary_extra=table._app_summary()), table.write_branch)
    return {**counts, "snapshot_id": new.snapshot_id}


# --------------------------------------------------------------------------- DELETE and UPDATE
def delete_rows(table, condition, isolation: Optional[str] = None) -> dict:
    """``DELETE FROM t WHERE condition``; returns the counts and the new snapshot id."""
    from pyspark.sql import functions as F

    where = condition if not isinstance(condition, str) or condition.strip() else None
    meta, snap, tasks = _target(table, where)
    if not tasks:
        return {"updated": 0, "deleted": 0, "inserted": 0, "snapshot_id": None}
    hit = F.coalesce(predicate(condition), F.lit(False))

    def labelled(file_tasks):
        rows = _read_target(table, meta, file_tasks)
        return rows.withColumn(ACTION, F.when(hit, F.lit(DELETE_ROW)).otherwise(F.lit(KEEP)))

    return _commit_changes(table, "delete", meta, snap, tasks, labelled, isolation, conflict_filter=where)


def _read_target(table, meta, file_tasks, nanos_raw: bool = False):
    """The live rows of ``file_tasks`` with each row's data file and position (and on a format v3
    table each row's id and last sequence number, ``iceberg_lineage``); ``nanos_raw``: nanosecond
    timestamps as their raw ``long`` nanoseconds (``read_tasks``)."""
    lineage = tracks_lineage(meta)
    schema = with_lineage_fields(meta.schema) if lineage else meta.schema
    rows = read_tasks(table.spark, file_tasks, schema, with_positions=True, history=meta.schemas,
                      name_mapping=meta.properties.get("schema.name-mapping.default"), io=table.io,
                      nanos_raw=nanos_raw)
    return lineage_mod.as_stored(rows) if lineage else rows


def _lineage_cols(meta, col=None) -> list:
    """The lineage columns a labelled row carries on a v3 table (none below v3)."""
    from pyspark.sql import functions as F

    if not tracks_lineage(meta):
        return []
    col = col or F.col
    return [col(lineage_mod.ROW_ID_COL).alias(lineage_mod.ROW_ID_COL),
            col(lineage_mod.LAST_SEQ_COL).alias(lineage_mod.LAST_SEQ_COL)]


def _write_rows(rows, meta, table, cols: list, tasks: list, nanos_raw: bool = False,
                origins: Optional[list] = None, clustered: bool = False) -> list:
    """Write labelled ``rows`` (of ``tasks``' files, or inserted) as new data files (v3: with their lineage),
    ``clustered`` as ``write_data_files`` takes it. ``nanos_raw``: ``rows`` hold raw nanoseconds (``_read_target``);
    else the rows of ``origins``' files (default ``tasks``) get their nanoseconds back (``_with_raw_nanos``)."""
    if not nanos_raw and has_nanos(meta.schema):
        rows, nanos_raw = _with_raw_nanos(rows, table, meta, tasks if origins is None else origins), True
    if tracks_lineage(meta):
        out = lineage_mod.stored(table.spark, rows, tasks, cols, FILE_COL, POS_COL, ACTION, KEEP)
        return write_data_files(out, lineage_mod.writing_lineage(meta), table.io, table.name, nanos_raw, clustered)
    return write_data_files(rows.select(*cols), meta, table.io, table.name, nanos_raw, clustered)


RAW = "_icefloe_raw_nanos_"
RAW_HIT = "_icefloe_raw_hit"


def _with_raw_nanos(rows, table, meta, origins: list):
    """``rows`` (labelled: FILE_COL and POS_COL name where each came from, null for new rows) with
    every nanosecond timestamp, at any depth, as raw ``long`` nanoseconds, for the Arrow writer.

    Spark read those values floored to its microseconds. A timestamp still equal to its file's value
    floored gets the file's nanoseconds back, every digit (a join with a raw read of ``origins``'
    files on file and position; ``_ns_restored`` pairs the values inside structs, lists and maps);
    one Spark computed, or a new row's, is its microseconds exactly. Assigning a row the floored
    value of its own timestamp keeps its digits."""
    from pyspark.sql import functions as F

    ns = [f for f in meta.schema.fields if "_ns" in str(f.field_type)]
    raw_name = {f.field_id: f"{RAW}{f.field_id}" for f in ns}
    if origins:
        raw = _read_target(table, meta, origins, nanos_raw=True).select(
            FILE_COL, POS_COL, F.lit(True).alias(RAW_HIT),
            *[F.col(f"`{f.name}`").alias(raw_name[f.field_id]) for f in ns])
        rows = rows.join(raw, [FILE_COL, POS_COL], "left")
    else:
        rows = rows.select("*", F.lit(None).cast("boolean").alias(RAW_HIT),
                           *[F.lit(None).cast(to_spark_type(nanos_type_as_long(f.field_type))).alias(raw_name[f.field_id])
                             for f in ns])
    for f in ns:
        value = _ns_restored(f"`{f.name}`", f"`{raw_name[f.field_id]}`", f.field_type)
        rows = rows.withColumn(f.name, F.expr(value))
    return rows.drop(RAW_HIT, *raw_name.values())


def _ns_restored(mine: str, theirs: str, t, depth: int = 0) -> str:
    """SQL for the raw nanoseconds to write of value ``mine`` (Spark's, type ``t``) given ``theirs``
    (the file's raw value of the same row, null for a new row): leaf by leaf, struct fields by name,
    list elements by position, map values by key (a map keyed by timestamps compared whole)."""
    if not isinstance(t, (StructType, ListType, MapType)):
        if not str(t).endswith("_ns"):
            return mine
        return f"IF({RAW_HIT} AND {_micros(mine, t)} <=> {_floored(theirs, t)}, {theirs}, {_nanos(mine, t)})"
    if "_ns" not in str(t):
        return mine
    if isinstance(t, StructType):
        return _struct_sql(mine, t, lambda f, field: _ns_restored(field(mine), field(theirs), f.field_type, depth + 1))
    if isinstance(t, ListType):
        x, i = f"x{depth}", f"i{depth}"
        return (f"transform({mine}, ({x}, {i}) -> "
                f"{_ns_restored(x, f'try_element_at({theirs}, {i} + 1)', t.element_type, depth + 1)})")
    if "_ns" not in str(t.key_type):
        k, v = f"k{depth}", f"v{depth}"
        return (f"transform_values({mine}, ({k}, {v}) -> "
                f"{_ns_restored(v, f'try_element_at({theirs}, {k})', t.value_type, depth + 1)})")
    same = (f"{RAW_HIT} AND ({_ns_rebuilt(mine, t, _micros, True)} <=> {_ns_rebuilt(theirs, t, _floored, True)})")
    return f"IF({same}, {theirs}, {_ns_rebuilt(mine, t, _nanos)})"


def _struct_sql(sql: str, t, value) -> str:
    """SQL of struct ``sql`` (of type ``t``) rebuilt field by field: ``value(field, of)`` gives a
    field's SQL, ``of(struct_sql)`` naming that field of a struct; null stays null."""
    def part(f) -> str:
        def of(struct_sql: str) -> str:
            return f"{struct_sql}.`{f.name.replace('`', '``')}`"
        return f"'{f.name.replace(chr(39), chr(92) + chr(39))}', {value(f, of)}"

    return f"IF({sql} IS NULL, NULL, named_struct({', '.join(part(f) for f in t.fields)}))"


def _micros(sql: str, t) -> str:
    if str(t) == "timestamptz_ns":
        return f"unix_micros({sql})"
    return f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', {sql})"


def _nanos(sql: str, t) -> str:
    return f"({_micros(sql, t)} * 1000)"


def _floored(sql: str, _t) -> str:
    return f"(({sql} - pmod({sql}, 1000)) div 1000)"


def _ns_rebuilt(sql: str, t, leaf, comparable: bool = False, depth: int = 0) -> str:
    """SQL rebuilding the value ``sql`` of type ``t`` with each nanosecond timestamp in it replaced
    by ``leaf(sql, type)``; ``comparable``: maps as their entries (Spark cannot compare maps)."""
    if not isinstance(t, (StructType, ListType, MapType)):
        return leaf(sql, t) if str(t).endswith("_ns") else sql
    if "_ns" not in str(t) and not (comparable and "map<" in str(t)):
        return sql
    x = f"x{depth}"
    if isinstance(t, StructType):
        return _struct_sql(sql, t, lambda f, field: _ns_rebuilt(field(sql), f.field_type, leaf, comparable, depth + 1))
    if isinstance(t, ListType):
        return f"transform({sql}, {x} -> {_ns_rebuilt(x, t.element_type, leaf, comparable, depth + 1)})"
    key = _ns_rebuilt(f"{x}.key", t.key_type, leaf, comparable, depth + 1)
    value = _ns_rebuilt(f"{x}.value", t.value_type, leaf, comparable, depth + 1)
    if comparable:
        return f"transform(map_entries({sql}), {x} -> named_struct('key', {key}, 'value', {value}))"
    return f"map_from_entries(transform(map_entries({sql}), {x} -> struct({key} AS key, {value} AS value)))"


def replace_where(table, data, where: str, isolation: Optional[str] = None) -> dict:
    """``overwrite(data, where=...)``: the rows matching ``where`` replaced by ``data`` (every row
    of which must match it) in one snapshot; files with matching rows are rewritten or dropped."""
    from pyspark.sql import functions as F


    meta, snap, tasks = _target(table, where)
    new = replacement_rows(table.spark, data, lambda df: align_dataframe(df, meta.schema, table.name), where,
                           table.name)
    new = new.select(*[F.col(f"`{f.name}`") for f in meta.schema.fields],
                     F.lit(None).cast("string").alias(FILE_COL), F.lit(None).cast("long").alias(POS_COL),
                     F.lit(INSERT).alias(ACTION))
    if tracks_lineage(meta):
        new = lineage_mod.empty_lineage(new)
    hit = F.coalesce(predicate(where), F.lit(False))

    def labelled(file_tasks):
        if not file_tasks:
            return new
        rows = _read_target(table, meta, file_tasks)
        return rows.withColumn(ACTION, F.when(hit, F.lit(DELETE_ROW)).otherwise(F.lit(KEEP))).unionByName(new)

    return _commit_changes(table, "delete", meta, snap, tasks, labelled, isolation, conflict_filter=where,
                           inserting=True)


def update_rows(table, assignments: dict, condition=None, isolation: Optional[str] = None) -> dict:
    """``UPDATE t SET col = expr, ... WHERE condition``."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    meta, snap, tasks = _target(table, condition)
    if not tasks:
        return {"updated": 0, "deleted": 0, "inserted": 0, "snapshot_id": None}
    sets = resolve_assignments(meta.schema, assignments)
    try:        # a value or condition Spark cannot analyse fails before any job runs
        hit = F.coalesce(predicate(condition), F.lit(False))
        # merge-on-read writes only the updated rows: filtered first, the scan reads only the columns the
        # condition and the new values use (``SET name = 'x'`` reads no ``name``); copy-on-write keeps the rest
        only_updated = write_mode(meta.properties, "update") == MERGE_ON_READ
        out = updated_columns(meta.schema.fields, sets, None if only_updated else hit, table.name)
        action = F.lit(UPDATE) if only_updated else F.when(hit, F.lit(UPDATE)).otherwise(F.lit(KEEP))

        def labelled(file_tasks):
            rows = _read_target(table, meta, file_tasks)
            return (rows.where(hit) if only_updated else rows).select(
                *out, FILE_COL, POS_COL, action.alias(ACTION), *_lineage_cols(meta))

        return _commit_changes(table, "update", meta, snap, tasks, labelled, isolation, conflict_filter=condition)
    except AnalysisException:
        # analysed against the table's own columns, the error names what is wrong without
        # icefloe's internal columns as suggestions (this raises unless the fault lies elsewhere)
        check_resolvable(table.spark, meta.schema, sets, table.name, condition)
        raise


# --------------------------------------------------------------------------- MERGE
class MergeBuilder(MergeClauses):
    """The MERGE builder of an Iceberg table (see ``MergeClauses``); ``execute()`` commits."""
    def execute(self) -> dict:
        """Run the MERGE as one commit.

        Returns:
            dict: ``{"updated", "deleted", "inserted", "snapshot_id"}``.

        Raises:
            MergeCardinalityError: a target row matched more than one source row; nothing was committed.
        """
        from pyspark.sql import functions as F

        table = self.table
        # only target rows holding each join key within the source's range can match: with a small
        # source (and no NOT MATCHED BY SOURCE clause) the files outside it are not read
        keys = {} if self.not_matched_by_source else self.join_keys(table.metadata.schema)
        source = self.small_source(keys)
        meta, snap, tasks = _target_within(table, keys) if source is not None and keys else _target(table, None)
        schema = meta.schema
        mode = write_mode(meta.properties, "merge")
        need_target = mode == COPY_ON_WRITE or bool(self.not_matched_by_source)

        def label(joined, tcol, marks, extra=()):
            in_t, matched, not_matched, by_source = marks
            # which clause handles each row: matched i -> i, not matched j -> 1000 + j, by source k -> 2000 + k
            chain, clauses = self.clause_column(matched, not_matched, by_source)
            joined = joined.withColumn(CLAUSE, chain)
            values = self.clause_values(schema.fields, F.col(CLAUSE), clauses, tcol,
                                        lambda n: schema.find_field(n).name, table.name)
            return joined.select(*values, tcol(FILE_COL).alias(FILE_COL), tcol(POS_COL).alias(POS_COL),
                                 action_column(clauses, in_t).alias(ACTION), *_lineage_cols(meta, tcol), *extra)

        def tcol(name):
            return F.col(f"{self.ta}.`{name}`")

        if source is not None and not self.not_matched_by_source:
            labelled, changed, inserts = self._matched_plan(meta, tasks, source, mode, label, tcol)
            return _commit_changes(table, "merge", meta, snap, tasks, labelled, self.isolation,
                                   scope_by_partition=True, every_row=False, changed=changed, inserts=inserts)
        if source is not None:
            labelled = self._broadcast_plan(meta, tasks, source, need_target, label, tcol)
        else:
            # a large source: the join's own jobs check the cardinality rule where they can
            equal_keys = bool(keys or self.join_keys(schema))

            def labelled(file_tasks):
                joined, tcol_, marks, _ = self.joined_checked(_read_target(table, meta, file_tasks), need_target,
                                                              equal_keys, FILE_COL, POS_COL)
                return label(joined, tcol_, marks)

            joined, _, marks, checked = self.joined_checked(_read_target(table, meta, tasks), need_target,
                                                            equal_keys, FILE_COL, POS_COL)
            if not checked:
                self.check_cardinality(joined, marks[1], [tcol(FILE_COL), tcol(POS_COL)], self._describe_row)
        try:
            return _commit_changes(table, "merge", meta, snap, tasks, labelled, self.isolation,
                                   scope_by_partition=True, every_row=need_target)
        except Exception as e:
            self.raise_cardinality_failure(e, self._describe_row)
            raise

    @staticmethod
    def _describe_row(row) -> str:
        return f"a target row (file {row[0]}, position {row[1]})"

    def _matched_plan(self, meta, tasks, source, mode: str, label, tcol):
        """MERGE with a small source and no NOT MATCHED BY SOURCE clause: only matched target rows
        and unmatched source rows can change anything. One pass joins every target task with the
        broadcast source and keeps the matched rows (labelled; with copy-on-write only their file,
        position, source row and action, so the scan reads only the columns the ON condition and
        the clause conditions use), checkpointed: a small set, which gives the cardinality check,
        the unmatched source rows (the inserts) and the counts per file. Merge-on-read writes from
        it; copy-on-write rewrites the touched files with one more pass over them alone."""
        from pyspark.sql import functions as F

        table = self.table
        sid = F.col(f"{self.sa}.`{SOURCE_ID}`").alias(SOURCE_ID)
        matched = label(self.broadcast_join(_read_target(table, meta, tasks), source, "inner"), tcol, self.marks(),
                        extra=[sid])
        if mode == COPY_ON_WRITE:
            matched = matched.select(FILE_COL, POS_COL, SOURCE_ID, ACTION)
        # every row here is a match: SQL's cardinality rule on the (file, position) pairs
        matched = self.matches_checked(matched, FILE_COL, POS_COL, SOURCE_ID, self._describe_row)
        inserts = None
        if self.not_matched:
            unmatched = self.unmatched_source_rows(
                _read_target(table, meta, []), source.join(matched.select(SOURCE_ID), SOURCE_ID, "left_anti"))
            inserts = label(unmatched, tcol, self.marks()).where(F.col(ACTION) == INSERT)
        changed = matched.drop(SOURCE_ID)
        if inserts is not None:
            changed = changed.unionByName(inserts.select(*changed.columns))

        def labelled(file_tasks):      # copy-on-write: the touched files' rows, matched or not
            return label(self.broadcast_join(_read_target(table, meta, file_tasks), source, "left_outer"),
                         tcol, self.marks())

        return labelled, changed, inserts

    def _broadcast_plan(self, meta, tasks, source, need_target: bool, label, tcol):
        """MERGE with a small source: every join is the target's tasks against the broadcast
        source, so the target is never shuffled. One pass over the target's join columns finds
        the matched (file, position, source row) triples -- a small set, checkpointed -- which
        gives the cardinality check and the source rows no target row matches (the inserts)."""
        from pyspark.sql import functions as F

        table = self.table
        pairs = (self.broadcast_join(_read_target(table, meta, tasks), source, "inner")
                 .select(tcol(FILE_COL).alias(FILE_COL), tcol(POS_COL).alias(POS_COL),
                         F.col(f"{self.sa}.`{SOURCE_ID}`").alias(SOURCE_ID)))
        # every row here is a match: SQL's cardinality rule on the (file, position) pairs
        if self.matched or self.not_matched:
            pairs = self.matches_checked(pairs, FILE_COL, POS_COL, SOURCE_ID, self._describe_row)
        unmatched = None
        if self.not_matched:
            unmatched = self.unmatched_source_rows(
                _read_target(table, meta, []), source.join(pairs.select(SOURCE_ID), SOURCE_ID, "left_anti"))

        def labelled(file_tasks):
            joined = self.broadcast_join(_read_target(table, meta, file_tasks), source,
                                         "left_outer" if need_target else "inner")
            out = label(joined, tcol, self.marks())
            if unmatched is not None:
                out = out.unionByName(label(unmatched, tcol, self.marks()))
            return out

        return labelled


# --------------------------------------------------------------------------- equality deletes
def delete_by_key(table, keys):
    """Equality deletes for the rows whose key columns equal a row of ``keys`` (merge-on-read).

    ``keys`` is a Spark DataFrame or pyarrow Table whose columns are the key
    columns. No data file is read: if the keys hold the partition source
    columns each delete goes to its partition, else the keys are written once
    per live partition (an unpartitioned table gets one global file).
    """
    import pyarrow as pa

    meta = table.refresh().metadata
    schema = meta.schema
    arrow = keys if isinstance(keys, pa.Table) else keys.toArrow()
    fields = [schema.find_field(n) for n in arrow.column_names]
    eq_schema = equality_delete_schema(schema, [f.field_id for f in fields])
    target = to_arrow_schema(eq_schema)
    arrow = arrow.rename_columns([f.name for f in fields]).select([f.name for f in eq_schema.fields]).cast(target)
    arrow = arrow.group_by([f.name for f in eq_schema.fields], use_threads=False).aggregate([]).cast(target)
    if arrow.num_rows == 0 or meta.current_snapshot is None:
        return None
    ids = [f.field_id for f in eq_schema.fields]
    by_spec: dict = {}
    spec = meta.spec
    if spec.is_unpartitioned:
        by_spec[spec.spec_id] = {(): arrow}
    elif all(eq_schema.find_field_or_none(pf.source_id) is not None for pf in spec.fields):
        by_spec[spec.spec_id] = dict(_split_by_partition(arrow, schema, spec))
    else:
        for e in live_entries(table.io, meta, meta.current_snapshot):
            if e.data_file.content == DATA:
                by_spec.setdefault(e.data_file.spec_id, {})[e.data_file.partition] = arrow
    added: list = []
    try:
        for spec_id, parts in sorted(by_spec.items()):
            added.extend(write_equality_deletes(table.io, meta.location, schema, meta.spec_by_id(spec_id), parts,
                                                ids, meta.properties))
    except BaseException:
        for f in added:
            table.io.delete(f.file_path)
        raise
    return table._commit(RowDelta(added, summary_extra=table._app_summary()), "main")
