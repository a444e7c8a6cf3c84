"""DELETE, UPDATE and MERGE INTO on Paimon append tables, copy-on-write.

The driver plans the data files a statement can touch (pruned by its condition); Spark reads
them with each row's file and position, labels every row (keep, update, delete, insert: the
``merge_clauses`` vocabulary Iceberg's row-level changes use too) and counts per file. A file
with changed rows is replaced by new files holding its surviving rows (updated ones with their
new values), written by Spark tasks per (partition, bucket) with the inserted rows
(``paimon_write.write_data_files``); in a row-tracking table the moved rows keep their ``_ROW_ID``
(and their ``_SEQUENCE_NUMBER`` unless updated), written as columns of files of their own, and the
inserted rows get new ids at commit (``icefloe.paimon.row_tracking``). A file all of whose rows go is dropped and nothing is
written for it. One OVERWRITE snapshot, as Paimon commits file deletions, removes the replaced
files and adds the new ones; a commit since the read that removed one of them makes it a
``CommitConflictError`` with nothing committed (``FileStoreTable.replace_files``).

A data-evolution table's UPDATE and MERGE write files of the updated columns beside its rows instead,
and its DELETE is refused (``paimon_data_evolution``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from icefloe.core.reports import RowChanges
from icefloe.errors import AfterCommitError
from icefloe.paimon import append_vectors as av
from icefloe.spark.merge_clauses import CLAUSE, MergeClauses, action_column
from icefloe.spark.row_changes import (
    ACTION, DELETE_ROW, INSERT, KEEP, UPDATE, check_resolvable, file_stats, predicate, replacement_rows,
    resolve_assignments, updated_columns,
)
from icefloe.paimon import row_tracking
from icefloe.spark import paimon_data_evolution as evolution
from icefloe.spark.paimon_metadata_columns import read_tracked, vectors_in_scan, without_marked
from icefloe.spark.paimon_read import read_files
from icefloe.spark.paimon_write import align_dataframe, write_data_files
from icefloe.spark.position_bitmaps import position_bitmaps

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from icefloe.paimon.commit import CommitMessage
    from icefloe.paimon.manifest import ManifestEntry
    from icefloe.paimon.snapshot import Snapshot
    from icefloe.spark.paimon_target import SparkPaimonTable, Where

FILE_COL, POS_COL = "_icefloe_file", "_icefloe_pos"
ROW_ID, SEQUENCE_NUMBER = row_tracking.NAMES


def _tracks(table: SparkPaimonTable) -> bool:
    return row_tracking.enabled(table.table_schema.options)


def _hidden(table: SparkPaimonTable) -> tuple[str, ...]:
    """The columns a condition may name besides the table's: a row-tracking table's two."""
    return row_tracking.NAMES if _tracks(table) else ()


def _tracked_after(table: SparkPaimonTable, seq_of_changed: Column, changed: Column) -> list[Column]:
    """A row-tracking table's ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` columns for rewritten rows: both
    kept, but a changed row's sequence number null (the new snapshot's, given at commit)."""
    from pyspark.sql import functions as F

    if not _tracks(table):
        return []
    seq = F.when(changed, F.lit(None).cast("long")).otherwise(seq_of_changed)
    return [F.col(ROW_ID), seq.alias(SEQUENCE_NUMBER)]


def _target(table: SparkPaimonTable, condition: Where) -> tuple[Optional[Snapshot], list[ManifestEntry]]:
    """The latest snapshot and the manifest entries of the files ``condition`` may touch."""
    table.refresh()
    table.check_writable()
    base = table.current_snapshot()
    where = condition if isinstance(condition, str) else None
    return base, (table.plan(where) if base is not None else [])


def _read(table: SparkPaimonTable, entries: Sequence[ManifestEntry], base: Optional[Snapshot] = None) -> DataFrame:
    """The rows of ``entries`` with their file and position (and a row-tracking table's ``_ROW_ID``
    and ``_SEQUENCE_NUMBER`` after its columns), less the rows ``base``'s deletion vectors mark."""
    deleted = vectors_in_scan(table, entries, base)      # dropped by the scan, else joined away
    if _tracks(table):
        df = read_tracked(table, table.table_schema, entries, FILE_COL, POS_COL, deleted=deleted or None)
    else:
        fields = table.table_schema.fields
        df = read_files(table.spark, [e.file.path for e in entries], fields,
                        file_fields=[table.schema_by_id(e.file.schema_id).fields for e in entries],
                        file_col=FILE_COL, pos_col=POS_COL, io=table.io, deleted=deleted or None)
    return without_marked(table, df, entries, base, FILE_COL, POS_COL) if deleted is None else df


def _apply(table: SparkPaimonTable, operation: str, base: Optional[Snapshot], entries: Sequence[ManifestEntry],
           changes: DataFrame, columns: Sequence[str] = ()) -> RowChanges:
    """Write and commit labelled rows (the table's columns, FILE_COL, ACTION; every row of
    each file read is there, KEEP for those no change takes); ``columns``: those an update changes."""
    from pyspark.sql import functions as F

    if evolution.enabled(table.table_schema.options):
        return evolution.apply_updates(table, operation, base, entries, changes, columns, FILE_COL)
    if POS_COL in changes.columns:
        return _apply_marking(table, operation, base, entries, changes)

    changes, by_file, counts = file_stats(changes, FILE_COL)
    touched = {f for f, r in by_file.items() if r["upd"] + r["dele"] > 0}
    whole = {f for f in touched if not by_file[f]["upd"] and by_file[f]["dele"] == by_file[f]["n"]}
    if not touched and not counts["inserted"]:
        return RowChanges.of(counts)
    rewrite = sorted(touched - whole)
    in_rewrite = F.col(FILE_COL).isin(rewrite) if rewrite else F.lit(False)
    new_rows = changes.where((F.col(ACTION) == INSERT) | (in_rewrite & F.col(ACTION).isin(KEEP, UPDATE)))
    messages: list[CommitMessage] = []
    columns = [f"`{f.name}`" for f in table.table_schema.fields]
    if _tracks(table):       # moved rows keep their ids, as columns of their new files; new rows get theirs at commit
        if counts["inserted"]:
            messages = write_data_files(changes.where(F.col(ACTION) == INSERT).select(*columns), table)
        if rewrite:
            moved = changes.where(in_rewrite & F.col(ACTION).isin(KEEP, UPDATE))
            messages += write_data_files(moved.select(*columns, ROW_ID, SEQUENCE_NUMBER), table, tracked=True)
    elif counts["inserted"] or rewrite:
        messages = write_data_files(new_rows.select(*columns), table)
    by_path = {e.file.path: e for e in entries}
    removed = [by_path[f] for f in sorted(touched)]
    if not removed:                      # a MERGE that only inserts: an append
        snap = table.commit(messages)
    else:       # the rows its vectors marked stay deleted: those vectors must be the ones read
        snap = table.replace_files(removed, messages, operation.upper(), base.id if base else None,
                                   (av.vectors_read(table.store, base, removed, f"{operation} on {table.name}"),))
    return RowChanges.of(counts, snap.id if snap else None)


def _marks(table: SparkPaimonTable) -> bool:
    """Whether row-level changes mark the old rows in deletion vectors (Paimon's DELETE, UPDATE and
    MERGE on an append table with 'deletion-vectors.enabled'), not rewrite their files; a
    row-tracking table's rows keep their ids by a rewrite."""
    schema = table.table_schema
    return (av.writes_vectors(schema.options, schema.primary_keys) and not _tracks(table)
            and not evolution.enabled(schema.options))


def _apply_marking(table: SparkPaimonTable, operation: str, base: Optional[Snapshot],
                   entries: Sequence[ManifestEntry], changes: DataFrame) -> RowChanges:
    """``_apply`` on a table whose changes mark rows (``_marks``): labelled rows with FILE_COL and
    POS_COL; the positions of deleted and updated rows are added to their files' deletion vectors
    (as bitmaps Spark tasks build, ``position_bitmaps``), updated and inserted rows written as new
    files, one APPEND snapshot (``append_vectors``)."""
    from pyspark.sql import functions as F

    changes, by_file, counts = file_stats(changes, FILE_COL)
    touched = sorted(f for f, r in by_file.items() if r["upd"] + r["dele"] > 0)
    if not touched and not counts["inserted"]:
        return RowChanges.of(counts)
    # each touched file's deleted and updated positions as one bitmap, built in tasks: the driver
    # holds no positions (only the rows of touched files are labelled so)
    positions = position_bitmaps(changes.where(F.col(ACTION).isin(DELETE_ROW, UPDATE)), FILE_COL, POS_COL,
                                 len(touched)) if touched else {}
    messages: list[CommitMessage] = []
    if counts["inserted"] or counts["updated"]:
        messages = write_data_files(changes.where(F.col(ACTION).isin(INSERT, UPDATE))
                                    .select(*[f"`{f.name}`" for f in table.table_schema.fields]), table)
    vectors: dict[Any, Any] = {}
    try:
        if not positions:                # a MERGE that only inserts: an append
            snap = table.commit(messages)
        else:
            vectors, read = av.marked_vectors(table.store, base, entries, positions)
            by_path = {e.file.path: e for e in entries}
            snap = av.commit_marks(table.store, table.commit_user, base.id if base else None,
                                   f"{operation} on {table.name}", vectors, read,
                                   [by_path[p] for p in sorted(positions)], messages)
    except AfterCommitError:
        raise
    except BaseException:
        table.abort(messages)
        for f in vectors.values():
            if f is not None and f.file_path:
                table.io.delete(f.file_path)
        raise
    return RowChanges.of(counts, snap.id if snap else None)


def delete_rows(table: SparkPaimonTable, condition: Where) -> RowChanges:
    """``DELETE FROM t WHERE condition`` (no condition: every row)."""
    from pyspark.sql import functions as F

    evolution.refuse_delete(table, "delete")
    if isinstance(condition, str) and not condition.strip():
        condition = None
    if condition is not None:
        check_resolvable(table.spark, table.schema, {}, table.name, condition, _hidden(table))
    base, entries = _target(table, condition)
    if not entries:
        return RowChanges()
    hit = F.coalesce(predicate(condition), F.lit(False))
    rows = _read(table, entries, base).withColumn(ACTION, F.when(hit, F.lit(DELETE_ROW)).otherwise(F.lit(KEEP)))
    if not _marks(table):
        rows = rows.drop(POS_COL)
    return _apply(table, "delete", base, entries, rows)


def replace_where(table: SparkPaimonTable, data: Any, where: str) -> RowChanges:
    """``overwrite(data, where=...)`` on an append table: the rows matching ``where`` replaced by
    ``data`` (every row of which must match it) in one snapshot."""
    from pyspark.sql import functions as F


    evolution.refuse_delete(table, "overwrite with where")
    fields = table.table_schema.fields
    check_resolvable(table.spark, table.schema, {}, table.name, where, _hidden(table))
    base, entries = _target(table, where)
    new = replacement_rows(table.spark, data, lambda df: align_dataframe(df, fields, table.name), where, table.name)
    new = new.select(*[F.col(f"`{f.name}`") for f in fields],
                     *[F.lit(None).cast("long").alias(n) for n in (row_tracking.NAMES if _tracks(table) else ())],
                     F.lit(None).cast("string").alias(FILE_COL), F.lit(INSERT).alias(ACTION))
    changes = new
    if entries:
        hit = F.coalesce(predicate(where), F.lit(False))
        rows = _read(table, entries, base).drop(POS_COL)
        changes = rows.withColumn(ACTION, F.when(hit, F.lit(DELETE_ROW)).otherwise(F.lit(KEEP))).unionByName(new)
    return _apply(table, "overwrite", base, entries, changes)


def update_rows(table: SparkPaimonTable, assignments: dict[str, Any], condition: Where = None) -> RowChanges:
    """``UPDATE t SET col = expr, ... WHERE condition``."""
    from pyspark.sql import functions as F

    schema = table.schema
    sets = resolve_assignments(schema, assignments)
    check_resolvable(table.spark, schema, sets, table.name, condition, _hidden(table))
    columns = evolution.update_columns(table, sets)       # a data-evolution table's, checked
    base, entries = _target(table, condition)
    if not entries:
        return RowChanges()
    rows = _read(table, entries, base)
    hit = F.coalesce(predicate(condition), F.lit(False))
    out = updated_columns(schema.fields, sets, hit, table.name)
    rows = rows.select(*out, *_tracked_after(table, F.col(SEQUENCE_NUMBER), hit), FILE_COL,
                       *([POS_COL] if _marks(table) else []),
                       F.when(hit, F.lit(UPDATE)).otherwise(F.lit(KEEP)).alias(ACTION))
    return _apply(table, "update", base, entries, rows, columns)


class AppendMerge(MergeClauses):
    """``MERGE INTO`` a Paimon append table (see the module doc): every target row is read,
    since a file with a changed row is rewritten whole."""

    def execute(self) -> RowChanges:
        """Run the MERGE as one commit.

        Returns:
            RowChanges: the rows updated, deleted and inserted, and the new ``snapshot_id``.

        Raises:
            MergeCardinalityError: a target row matched more than one source row; nothing was committed.
            NotSupportedError: a clause the table's merge engine cannot take (Paimon).
        """
        from pyspark.sql import functions as F

        table = self.table
        # a data-evolution table takes Paimon's clauses only, and its updates write the changed columns
        columns = evolution.check_merge(self, table.table_schema) if evolution.enabled(table.table_schema.options) \
            else []
        base, entries = _target(table, None)
        schema = table.schema
        def describe(row: tuple[Any, ...]) -> str:
            return f"a target row (file {row[0]}, position {row[1]})"

        # the cardinality rule checked in the job that joins and counts, where it can be
        joined, tcol, (in_t, matched, not_matched, by_source), checked = self.joined_checked(
            _read(table, entries, base), True, bool(self.join_keys(schema)), FILE_COL, POS_COL)
        if not checked:
            self.check_cardinality(joined, matched, [tcol(FILE_COL), tcol(POS_COL)], describe)
        chain, clauses = self.clause_column(matched, not_matched, by_source)
        joined = joined.withColumn(CLAUSE, chain)
        values = self.clause_values(schema.fields, F.col(CLAUSE), clauses, tcol,
                                    lambda n: schema.find_field(n).name, table.name)
        action = action_column(clauses, in_t)
        tracked = [c.alias(n) for c, n in zip(_tracked_after(table, tcol(SEQUENCE_NUMBER), action == UPDATE),
                                              row_tracking.NAMES)]
        if tracked:
            tracked[0] = tcol(ROW_ID).alias(ROW_ID)
        rows = joined.select(*values, *tracked, tcol(FILE_COL).alias(FILE_COL),
                             *([tcol(POS_COL).alias(POS_COL)] if _marks(table) else []), action.alias(ACTION))
        if not clauses:
            return RowChanges()
        try:
            return _apply(table, "merge", base, entries, rows, columns)
        except Exception as e:
            self.raise_cardinality_failure(e, describe)
            raise
