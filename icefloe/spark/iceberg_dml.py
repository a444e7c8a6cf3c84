"""Row-level changes in Spark: DELETE, UPDATE, MERGE and equality deletes (compaction: ``iceberg_compaction``).

Every statement follows one flow. The driver plans the target files (pruned by
the predicate where there is one; ``iceberg_dml_plan``) and Spark reads them with
each row's data file and position (existing deletes applied). Spark then labels
every row with what happens to it (keep, update, delete, insert) and its new
values; the labelled rows are checkpointed so the counts and the writes see the
same rows. Per data file:

* copy-on-write (default, ``iceberg_cow``): files with changed rows are replaced
  by new files holding their surviving rows (updated ones with new values) ->
  ``overwrite``, or ``delete`` when whole files go and nothing is written;
* merge-on-read (``iceberg_mor``): changed rows get position deletes (sorted by
  path and position, one file per partition) and updated or inserted rows go to
  new data files -> ``delete`` when only deletes are added, else ``overwrite``.

A file all of whose live rows are deleted is removed from the table in both
modes, without writing anything. The commit goes to the target's write branch,
validated against commits made since the read snapshot (``icefloe.iceberg.row_delta``,
``icefloe.iceberg.validate``). Nanosecond timestamps keep every digit (``iceberg_nanos``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

from icefloe.core.io import staged_files
from icefloe.core.reports import RowChanges
from icefloe.core.types import to_arrow_schema
from icefloe.iceberg.arrow_writer import split_by_partition
from icefloe.iceberg.delete_files import equality_delete_schema, write_equality_deletes
from icefloe.iceberg.manifest import DATA
from icefloe.iceberg.manifest_reader import live_entries
from icefloe.iceberg.row_delta import RowDelta
from icefloe.errors import MergeCardinalityError  # noqa: F401 - defined in icefloe.errors, importable here too
from icefloe.spark import iceberg_cow, iceberg_mor
from icefloe.spark import iceberg_lineage as lineage_mod
from icefloe.spark.align import align_dataframe
from icefloe.spark.iceberg_dml_plan import (
    COPY_ON_WRITE, MERGE_ON_READ, ChangeRequest, commit_row_delta, counted_per_file, fewest_live_rows,
    lineage_cols, plan_target, plan_target_within, read_target, write_mode,
)
from icefloe.spark.iceberg_lineage import tracks_lineage
from icefloe.spark.iceberg_read import FILE_COL, POS_COL
from icefloe.spark.merge_clauses import CLAUSE, SOURCE_ID, MergeClauses, action_column
from icefloe.spark.row_changes import (
    ACTION, DELETE_ROW, INSERT, KEEP, UPDATE, check_resolvable, file_stats, predicate, replacement_rows,
    resolve_assignments, updated_columns,
)
from icefloe.spark.target import RowFilter, WriteTarget, branch_head

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame

    from icefloe.iceberg.scan import FileScanTask
    from icefloe.iceberg.snapshot import Snapshot
    from icefloe.iceberg.table_metadata import TableMetadata

    #: a statement's rows of some file tasks of the table, labelled (``ChangeRequest.labelled``)
    Labelled = Callable[[list[FileScanTask]], DataFrame]

__all__ = ["COPY_ON_WRITE", "MERGE_ON_READ", "ChangeRequest", "MergeBuilder", "commit_changes", "delete_by_key",
           "delete_rows", "replace_where", "update_rows", "write_mode"]


def commit_changes(table: WriteTarget, req: ChangeRequest) -> RowChanges:
    """Write and commit a statement's labelled rows (see ``ChangeRequest``); returns the counts
    (``updated``, ``deleted``, ``inserted``) and the new ``snapshot_id`` (None: nothing changed).

    Merge-on-read writes the changed rows' position deletes and new rows in Spark tasks that also
    count them (``iceberg_mor.write_in_tasks``); a MERGE with a large source keeps only the changed
    rows (a checkpoint of those alone) and counts them per file first. Copy-on-write counts per
    file without keeping any row, then rewrites only the touched files, reading them again: the
    data files are immutable, so both passes see the same rows."""
    from pyspark.sql import functions as F

    mode, read, changed = req.mode, req.read, req.changed
    task_by_path = read.task_by_path
    # a MERGE's changed rows come as ``changed`` (a small source); DELETE and UPDATE label them
    if mode == MERGE_ON_READ and (changed is not None if req.operation == "merge" else changed is None):
        done = iceberg_mor.write_in_tasks(table, req)
        if done is not None:
            written, counts = done
            if not written.added:
                return RowChanges.of(counts)
            return commit_row_delta(table, req, written, counts)
    every_row = req.every_row
    if mode == MERGE_ON_READ:
        changed_rows = (req.labelled(read.tasks) if changed is None else changed).where(
            F.col(ACTION).isin(UPDATE, DELETE_ROW, INSERT))
        if req.operation == "delete":   # only positions are written: the scan reads the condition's columns alone
            changed_rows = changed_rows.select(FILE_COL, POS_COL, ACTION)
        changes, by_file, counts = file_stats(changed_rows, FILE_COL)
        every_row = False
    elif changed is not None:
        changes, by_file, counts = file_stats(changed, FILE_COL, checkpoint=False)
        every_row = False
    else:
        changes, by_file, counts = counted_per_file(req.labelled(read.tasks), task_by_path)
    touched = {f for f, r in by_file.items() if r["upd"] + r["dele"] > 0}

    def every_row_deleted(f: str) -> bool:
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
                  and by_file[f]["dele"] >= fewest_live_rows(task_by_path[f])]
        if unsure:
            live = read_target(table, req.meta, unsure).groupBy(FILE_COL).count().collect()
            whole |= {r[0] for r in live if r[1] == by_file[r[0]]["dele"]}
    if not touched and not counts["inserted"]:
        return RowChanges.of(counts)
    writer = iceberg_cow if mode == COPY_ON_WRITE else iceberg_mor
    written = writer.write_counted(table, req, changes, counts, touched, whole)
    return commit_row_delta(table, req, written, counts)


def delete_rows(table: WriteTarget, condition: RowFilter, isolation: Optional[str] = None) -> RowChanges:
    """``DELETE FROM t WHERE condition``; returns the counts and the new snapshot id."""
    from pyspark.sql import functions as F

    where = condition if not isinstance(condition, str) or condition.strip() else None
    read = plan_target(table, where)
    meta, tasks = read.meta, read.tasks
    if not tasks:
        return RowChanges()
    hit = F.coalesce(predicate(condition), F.lit(False))

    def labelled(file_tasks: list[FileScanTask]) -> DataFrame:
        rows = read_target(table, meta, file_tasks)
        return rows.withColumn(ACTION, F.when(hit, F.lit(DELETE_ROW)).otherwise(F.lit(KEEP)))

    return commit_changes(table, ChangeRequest("delete", read, labelled, isolation, conflict_filter=where))


def replace_where(table: WriteTarget, data: Any, where: str, isolation: Optional[str] = None) -> RowChanges:
    """``overwrite(data, where=...)``: the rows matching ``where`` replaced by ``data`` (every row
    of which must match it) in one snapshot; files with matching rows are rewritten or dropped."""
    from pyspark.sql import functions as F


    read = plan_target(table, where)
    meta = read.meta
    new = replacement_rows(table.spark, data, lambda df: align_dataframe(df, meta.schema, table.name), where,
                           table.name)
    new = new.select(*[F.col(f"`{f.name}`") for f in meta.schema.fields],
                     F.lit(None).cast("string").alias(FILE_COL), F.lit(None).cast("long").alias(POS_COL),
                     F.lit(INSERT).alias(ACTION))
    if tracks_lineage(meta):
        new = lineage_mod.empty_lineage(new)
    hit = F.coalesce(predicate(where), F.lit(False))

    def labelled(file_tasks: list[FileScanTask]) -> DataFrame:
        if not file_tasks:
            return new
        rows = read_target(table, meta, file_tasks)
        return rows.withColumn(ACTION, F.when(hit, F.lit(DELETE_ROW)).otherwise(F.lit(KEEP))).unionByName(new)

    return commit_changes(table, ChangeRequest("delete", read, labelled, isolation, conflict_filter=where,
                                                inserting=True))


def update_rows(table: WriteTarget, assignments: dict[str, Any], condition: RowFilter = None,
                isolation: Optional[str] = None) -> RowChanges:
    """``UPDATE t SET col = expr, ... WHERE condition``."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    read = plan_target(table, condition)
    meta, tasks = read.meta, read.tasks
    if not tasks:
        return RowChanges()
    sets = resolve_assignments(meta.schema, assignments)
    try:        # a value or condition Spark cannot analyse fails before any job runs
        hit = F.coalesce(predicate(condition), F.lit(False))
        # merge-on-read writes only the updated rows: filtered first, the scan reads only the columns the
        # condition and the new values use (``SET name = 'x'`` reads no ``name``); copy-on-write keeps the rest
        only_updated = write_mode(meta.properties, "update") == MERGE_ON_READ
        out = updated_columns(meta.schema.fields, sets, None if only_updated else hit, table.name)
        action = F.lit(UPDATE) if only_updated else F.when(hit, F.lit(UPDATE)).otherwise(F.lit(KEEP))

        def labelled(file_tasks: list[FileScanTask]) -> DataFrame:
            rows = read_target(table, meta, file_tasks)
            return (rows.where(hit) if only_updated else rows).select(
                *out, FILE_COL, POS_COL, action.alias(ACTION), *lineage_cols(meta))

        return commit_changes(table, ChangeRequest("update", read, labelled, isolation, conflict_filter=condition))
    except AnalysisException:
        # analysed against the table's own columns, the error names what is wrong without
        # icefloe's internal columns as suggestions (this raises unless the fault lies elsewhere)
        check_resolvable(table.spark, meta.schema, sets, table.name, condition)
        raise


# --------------------------------------------------------------------------- MERGE
class MergeBuilder(MergeClauses):
    """The MERGE builder of an Iceberg table (see ``MergeClauses``); ``execute()`` commits."""
    def execute(self) -> RowChanges:
        """Run the MERGE as one commit.

        Returns:
            RowChanges: the rows updated, deleted and inserted, and the new ``snapshot_id``.

        Raises:
            MergeCardinalityError: a target row matched more than one source row; nothing was committed.
        """
        from pyspark.sql import functions as F

        table = self.table
        # only target rows holding each join key within the source's range can match: with a small
        # source (and no NOT MATCHED BY SOURCE clause) the files outside it are not read
        keys = {} if self.not_matched_by_source else self.join_keys(table.metadata.schema)
        source = self.small_source(keys)
        read = plan_target_within(table, keys) if source is not None and keys else plan_target(table, None)
        meta, tasks = read.meta, read.tasks
        schema = meta.schema
        mode = write_mode(meta.properties, "merge")
        need_target = mode == COPY_ON_WRITE or bool(self.not_matched_by_source)

        def label(joined: DataFrame, tcol: Callable[[str], Column], marks: Sequence[Column],
                  extra: Sequence[Column] = ()) -> DataFrame:
            in_t, matched, not_matched, by_source = marks
            # which clause handles each row (its number), and the clauses by number
            chain, clauses = self.clause_column(matched, not_matched, by_source)
            joined = joined.withColumn(CLAUSE, chain)
            values = self.clause_values(schema.fields, F.col(CLAUSE), clauses, tcol,
                                        lambda n: schema.find_field(n).name, table.name)
            return joined.select(*values, tcol(FILE_COL).alias(FILE_COL), tcol(POS_COL).alias(POS_COL),
                                 action_column(clauses, in_t).alias(ACTION), *lineage_cols(meta, tcol), *extra)

        def tcol(name: str) -> Column:
            return F.col(f"{self.ta}.`{name}`")

        if source is not None and not self.not_matched_by_source:
            labelled, changed, inserts = self._matched_plan(meta, tasks, source, mode, label, tcol)
            return commit_changes(table, ChangeRequest("merge", read, labelled, self.isolation, scope_by_partition=True,
                                                        every_row=False, changed=changed, inserts=inserts))
        if source is not None:
            labelled = self._broadcast_plan(meta, tasks, source, need_target, label, tcol)
        else:
            # a large source: the join's own jobs check the cardinality rule where they can
            equal_keys = bool(keys or self.join_keys(schema))

            def joined_labelled(file_tasks: list[FileScanTask]) -> DataFrame:
                joined, tcol_, marks, _ = self.joined_checked(read_target(table, meta, file_tasks), need_target,
                                                              equal_keys, FILE_COL, POS_COL)
                return label(joined, tcol_, marks)

            labelled = joined_labelled

            joined, _, marks, checked = self.joined_checked(read_target(table, meta, tasks), need_target,
                                                            equal_keys, FILE_COL, POS_COL)
            if not checked:
                self.check_cardinality(joined, marks[1], [tcol(FILE_COL), tcol(POS_COL)], self._describe_row)
        try:
            return commit_changes(table, ChangeRequest("merge", read, labelled, self.isolation, scope_by_partition=True,
                                                        every_row=need_target))
        except Exception as e:
            self.raise_cardinality_failure(e, self._describe_row)
            raise

    @staticmethod
    def _describe_row(row: tuple[Any, ...]) -> str:
        return f"a target row (file {row[0]}, position {row[1]})"

    def _matched_plan(self, meta: TableMetadata, tasks: list[FileScanTask], source: DataFrame, mode: str,
                      label: Callable[..., DataFrame], tcol: Callable[[str], Column]
                      ) -> tuple[Labelled, DataFrame, Optional[DataFrame]]:
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
        matched = label(self.broadcast_join(read_target(table, meta, tasks), source, "inner"), tcol, self.marks(),
                        extra=[sid])
        if mode == COPY_ON_WRITE:
            matched = matched.select(FILE_COL, POS_COL, SOURCE_ID, ACTION)
        # every row here is a match: SQL's cardinality rule on the (file, position) pairs
        matched = self.matches_checked(matched, FILE_COL, POS_COL, SOURCE_ID, self._describe_row)
        inserts = None
        if self.not_matched:
            unmatched = self.unmatched_source_rows(
                read_target(table, meta, []), source.join(matched.select(SOURCE_ID), SOURCE_ID, "left_anti"))
            inserts = label(unmatched, tcol, self.marks()).where(F.col(ACTION) == INSERT)
        changed = matched.drop(SOURCE_ID)
        if inserts is not None:
            changed = changed.unionByName(inserts.select(*changed.columns))

        def labelled(file_tasks: list[FileScanTask]) -> DataFrame:      # copy-on-write: the touched files' rows, matched or not
            return label(self.broadcast_join(read_target(table, meta, file_tasks), source, "left_outer"),
                         tcol, self.marks())

        return labelled, changed, inserts

    def _broadcast_plan(self, meta: TableMetadata, tasks: list[FileScanTask], source: DataFrame, need_target: bool,
                        label: Callable[..., DataFrame], tcol: Callable[[str], Column]) -> Labelled:
        """MERGE with a small source: every join is the target's tasks against the broadcast
        source, so the target is never shuffled. One pass over the target's join columns finds
        the matched (file, position, source row) triples -- a small set, checkpointed -- which
        gives the cardinality check and the source rows no target row matches (the inserts)."""
        from pyspark.sql import functions as F

        table = self.table
        pairs = (self.broadcast_join(read_target(table, meta, tasks), source, "inner")
                 .select(tcol(FILE_COL).alias(FILE_COL), tcol(POS_COL).alias(POS_COL),
                         F.col(f"{self.sa}.`{SOURCE_ID}`").alias(SOURCE_ID)))
        # every row here is a match: SQL's cardinality rule on the (file, position) pairs
        if self.matched or self.not_matched:
            pairs = self.matches_checked(pairs, FILE_COL, POS_COL, SOURCE_ID, self._describe_row)
        unmatched = None
        if self.not_matched:
            unmatched = self.unmatched_source_rows(
                read_target(table, meta, []), source.join(pairs.select(SOURCE_ID), SOURCE_ID, "left_anti"))

        def labelled(file_tasks: list[FileScanTask]) -> DataFrame:
            joined = self.broadcast_join(read_target(table, meta, file_tasks), source,
                                         "left_outer" if need_target else "inner")
            out = label(joined, tcol, self.marks())
            if unmatched is not None:
                out = out.unionByName(label(unmatched, tcol, self.marks()))
            return out

        return labelled


# --------------------------------------------------------------------------- equality deletes
def delete_by_key(table: WriteTarget, keys: Union[DataFrame, pa.Table]) -> Optional[Snapshot]:
    """Equality deletes for the rows whose key columns equal a row of ``keys`` (merge-on-read).

    ``keys`` is a Spark DataFrame or pyarrow Table whose columns are the key
    columns. No data file is read: if the keys hold the partition source
    columns each delete goes to its partition, else the keys are written once
    per live partition (an unpartitioned table gets one global file).
    """
    import pyarrow as pa

    meta = table.refresh().metadata
    schema = meta.schema
    arrow: pa.Table = keys if isinstance(keys, pa.Table) else keys.toArrow()
    fields = [schema.find_field(n) for n in arrow.column_names]
    eq_schema = equality_delete_schema(schema, [f.field_id for f in fields])
    target = to_arrow_schema(eq_schema)
    arrow = arrow.rename_columns([f.name for f in fields]).select([f.name for f in eq_schema.fields]).cast(target)
    arrow = arrow.group_by([f.name for f in eq_schema.fields], use_threads=False).aggregate([]).cast(target)
    snap = branch_head(meta, table.branch)
    if arrow.num_rows == 0 or snap is None:
        return None
    ids = [f.field_id for f in eq_schema.fields]
    by_spec: dict[int, dict[Any, pa.Table]] = {}
    spec = meta.spec
    if spec.is_unpartitioned:
        by_spec[spec.spec_id] = {(): arrow}
    elif all(eq_schema.find_field_or_none(pf.source_id) is not None for pf in spec.fields):
        by_spec[spec.spec_id] = dict(split_by_partition(arrow, schema, spec))
    else:
        for e in live_entries(table.io, meta, snap):
            if e.data_file.content == DATA:
                by_spec.setdefault(e.data_file.spec_id, {})[e.data_file.partition] = arrow
    with staged_files(table.io) as added:
        for spec_id, parts in sorted(by_spec.items()):
            added.extend(write_equality_deletes(table.io, meta.location, schema, meta.spec_by_id(spec_id), parts,
                                                ids, meta.properties))
    return table.commit(RowDelta(added), table.branch)
