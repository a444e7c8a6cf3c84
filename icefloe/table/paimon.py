# pyright: strict
"""The user-facing Paimon table: the format's ``FileStoreTable`` with Spark as its data plane.

Writes go tasks -> commit messages -> one commit (``paimon/commit.py``); reads plan on the driver and
hand the files to Spark's Parquet reader (or pyarrow for ``to_arrow``).
"""
from __future__ import annotations

import datetime as _dt
import os
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, NoReturn, Optional, Sequence

import pyarrow as pa

from icefloe.core.arrow import as_arrow_table, is_arrow_data
from icefloe.core.io import FileIO
from icefloe.core.timetravel import AsOf
from icefloe.core.reports import ExpireReport, Report, RowChanges
from icefloe.core.tree import Node
from icefloe.core.types import IcebergType
from icefloe.errors import CommitConflictError, CommitFailedError, IcefloeError, UnsupportedFilterError
from icefloe.paimon import chain
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon import kv_compact
from icefloe.paimon import row_tracking
from icefloe.paimon import system_tables
from icefloe.paimon import types as pt
from icefloe.paimon.check import check_paimon
from icefloe.paimon.commit import CommitMessage
from icefloe.paimon.commit_changes import NO_TRANSACTION
from icefloe.paimon.manifest import ManifestEntry
from icefloe.paimon.layout import manifest_lists, metadata_tree
from icefloe.paimon.schema_update import spark_sql_type
from icefloe.paimon.snapshot import Snapshot
from icefloe.paimon.tag import Tag
from icefloe.paimon.tag_period import period_handler
from icefloe.paimon.table import FileStoreTable
from icefloe.paimon.kv_writer import write_kv_table
from icefloe.paimon.merge import DELETE, UPDATE_AFTER, row_level_refusal
from icefloe.paimon.writer import restored_sequence_numbers, write_arrow_table
from icefloe.spark import paimon_analyze
from icefloe.spark import paimon_metadata_columns as metadata_columns
from icefloe.spark import paimon_append_dml as append_dml
from icefloe.spark import paimon_data_evolution as evolution
from icefloe.spark.merge_clauses import MergeClauses
from icefloe.spark.paimon_dml import PrimaryKeyMerge
from icefloe.spark.paimon_changes import audit_log_df, changes_df
from icefloe.spark.paimon_chain_read import read_chain
from icefloe.spark.paimon_read import read_append, read_merged, read_with_vectors
from icefloe.spark.paimon_compact import compact as paimon_compact
from icefloe.spark.paimon_compact import compact_append_table, compact_primary_key_table
from icefloe.spark.paimon_rescale import rescale as paimon_rescale
from icefloe.spark.paimon_write import write_data_files, write_kv_files
from icefloe.spark.session import get_spark
from icefloe.table import iceberg_view, migration
from icefloe.table.base import Table, Where, WriteData
from icefloe.table.capabilities import (
    AUDIT_LOG, BRANCH_TABLES, INCREMENTAL_QUERIES, METASTORE_PARTITIONS, PAIMON_DYNAMIC_OPTIONS, PAIMON_PROCEDURES,
    SHOW_PARTITIONS, TAG_LISTS, WATERMARK_TIME_TRAVEL,
    FileRow,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.table.iceberg import IcebergTable

MAIN = "main"


def _retention(max_ref_age_ms: Optional[int],
               time_retained: Optional[_dt.timedelta]) -> Optional[_dt.timedelta]:
    if max_ref_age_ms is not None and time_retained is not None:
        raise ValueError("give max_ref_age_ms or time_retained, not both")
    return _dt.timedelta(milliseconds=int(max_ref_age_ms)) if max_ref_age_ms is not None else time_retained


class PaimonTable(FileStoreTable, Table):
    """A Paimon table, append or primary-key: every operation of ``Table``, plus ``tag=`` on reads."""

    format = "paimon"
    capabilities = frozenset({PAIMON_PROCEDURES, PAIMON_DYNAMIC_OPTIONS, AUDIT_LOG, TAG_LISTS, BRANCH_TABLES,
                              INCREMENTAL_QUERIES, SHOW_PARTITIONS, WATERMARK_TIME_TRAVEL, METASTORE_PARTITIONS})

    def __init__(self, name: str, location: str, io: Optional[FileIO] = None, spark: Optional[SparkSession] = None,
                 branch: Optional[str] = None):
        """A Paimon table in its directory (``Catalog.load_table`` makes it).

        Args:
            name: ``"db.table"``.
            location: The table's directory.
            io: The file I/O reaching it (local files by default).
            spark: The SparkSession its Spark reads and writes run in (the active or embedded one by default).
            branch: A Paimon branch of the table to read and write (``branch_table`` makes it); main by default.
        """
        self._spark: Optional[SparkSession] = spark      # the data plane's session, started on first use (``spark``)
        super().__init__(name, location, io, branch=branch)

    def _with_branch(self, branch: Optional[str]) -> "PaimonTable":
        return PaimonTable(self.name, self.location, self.io, self._spark, branch=branch)

    def __getstate__(self):  # picklable for Spark tasks: no session
        state = super().__getstate__()
        state["_spark"] = None
        return state

    def refresh(self) -> PaimonTable:
        """Read the table's current schema again; returns this table."""
        FileStoreTable.refresh(self)
        return self

    @property
    def spark(self) -> SparkSession:
        self._spark = get_spark(self._spark)
        return self._spark

    # ------------------------------------------------------------------ the Iceberg view
    def iceberg(self) -> IcebergTable:
        """The table as Iceberg readers see it, through the Iceberg metadata Paimon's
        ``metadata.iceberg.storage`` option has every commit write (``<table>/metadata`` or
        ``<warehouse>/iceberg/<db>/<table>/metadata``).

        Returns:
            IcebergTable: the Iceberg view, to read (its snapshots are the Paimon snapshot ids).

        Raises:
            NotSupportedError: the option is not set on this table.
        """
        from icefloe.iceberg.hadoop import HadoopTableOperations
        from icefloe.table.iceberg import IcebergTable

        root = iceberg_view.iceberg_root_of(self.refresh())
        if root is None:
            raise self.unsupported("reading the Iceberg view", "the table has no 'metadata.iceberg.storage' option")
        return IcebergTable(self.name, HadoopTableOperations(self.io, root), self._spark)

    def sync_iceberg(self) -> Optional[int]:
        """Write the Iceberg view of the latest snapshot now: every commit does, this repairs a view
        a failed write left behind (``IcebergViewWarning``), or drops what an expiry removed.

        Returns:
            int | None: the Iceberg metadata version now current (the Paimon snapshot id), None if
            the table has no ``metadata.iceberg.storage`` option or no snapshot.

        Raises:
            IcebergViewError: the Iceberg metadata could not be written.
        """
        return iceberg_view.sync(self.refresh()._store)

    def _on_branch(self, branch: Optional[str]) -> Optional["PaimonTable"]:
        """The table a ``branch=`` argument names: this one, or its Paimon branch (a table of its own)."""
        if branch in (None, MAIN) or branch == self.branch:
            return None
        other = self.branch_table(branch)
        assert isinstance(other, PaimonTable)       # _with_branch keeps the class
        return other

    # ------------------------------------------------------------------ reads
    def to_arrow(  # pyright: ignore[reportIncompatibleMethodOverride] - Table's signature, not FileStoreTable's
            self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, where: Where = None,
            ref: Optional[str] = None, *, columns: Optional[Sequence[str]] = None,
            tag: Optional[str] = None) -> pa.Table:
        """The rows as a pyarrow Table, read in this process without Spark (a primary-key table's rows
        merged by key).

        Args:
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            where: Spark SQL predicate text: comparisons, ``IN``, ``IS [NOT] NULL``, prefix ``LIKE``,
                ``AND``, ``OR``; anything else (a Spark ``Column`` too) raises ``UnsupportedFilterError``
                (use ``to_spark``).
            ref: Read the head of this branch or tag.
            columns: The columns to read (all by default).
            tag: Read the snapshot this tag names (the same as ``ref``).

        Returns:
            pyarrow.Table: the rows.
        """
        if where is not None and not isinstance(where, str):
            raise UnsupportedFilterError(f"cannot filter table {self.name} with a Spark Column without Spark: give "
                                         "the condition as Spark SQL text, or read with to_spark")
        return FileStoreTable.to_arrow(self, snapshot_id, as_of, where, columns, ref, tag)

    def to_spark(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, where: Where = None,
                 columns: Optional[Sequence[str]] = None, ref: Optional[str] = None,
                 tag: Optional[str] = None) -> DataFrame:
        """The rows as a Spark DataFrame, read by Spark tasks (a primary-key table's rows merged by key).

        Args:
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.
            where: Spark SQL predicate text or a ``Column``; files are pruned by it, rows filtered.
            columns: The columns to read (all by default).
            tag: Read the snapshot this tag names (the same as ``ref``).

        Returns:
            pyspark.sql.DataFrame: the rows, lazily read.
        """
        ref = self.one_ref(ref, tag)
        if chain.active(self):      # main merged with the snapshot and delta branches
            return read_chain(self.spark, self, chain.plan(self, where, (snapshot_id, as_of, ref) != (None, None, None)),
                              where, columns)
        schema = self.table_schema_for(snapshot_id, as_of, ref)
        if schema.primary_keys and dv.enabled(schema.options):
            return read_with_vectors(self.spark, self, schema, self.snapshot_for(snapshot_id, as_of, ref),
                                     self.plan(where, snapshot_id, as_of, ref), where, columns)
        if schema.primary_keys:
            self.check_mergeable(schema)
            entries = self.plan(where, snapshot_id, as_of, ref)
            if dv.skips_level0(schema.options):         # first-row: level 0 waits for its compaction
                entries = dv.readable(entries)
            return read_merged(self.spark, self, schema, entries, where, columns)
        if evolution.enabled(schema.options):      # a row-id range's files merged column by column
            return evolution.read_evolved(self, schema, self.plan(where, snapshot_id, as_of, ref), where, columns)
        return read_append(self.spark, self, schema, self.snapshot_for(snapshot_id, as_of, ref),
                           self.plan(where, snapshot_id, as_of, ref), where, columns)

    def metadata_column_names(self) -> tuple[str, ...]:
        """Paimon's hidden columns (``SELECT *`` leaves them out): ``__paimon_file_path``,
        ``__paimon_row_index``, ``__paimon_partition``, ``__paimon_bucket``."""
        if row_tracking.enabled(self.table_schema.options):
            return metadata_columns.NAMES + row_tracking.NAMES
        return metadata_columns.NAMES

    def to_spark_with_metadata(self, names: Sequence[str], snapshot_id: Optional[int] = None,
                               as_of: Optional[AsOf] = None, ref: Optional[str] = None) -> DataFrame:
        """``to_spark`` with the metadata columns ``names`` after the table's columns (a row's data
        file, its position there, its partition as a struct, its bucket)."""
        self._one_branch_read("reading metadata columns")
        if set(names) <= {metadata_columns.PARTITION}:      # the partition comes with every row
            from pyspark.sql import functions as F

            keys = self.table_schema_for(snapshot_id, as_of, ref).partition_keys
            df = self.to_spark(snapshot_id, as_of, ref=ref)
            return df.withColumn(metadata_columns.PARTITION, F.struct(*[F.col(f"`{k}`") for k in keys]))
        schema = self.table_schema_for(snapshot_id, as_of, ref)
        entries = self.plan(None, snapshot_id, as_of, ref)
        if schema.primary_keys and dv.skips_level0(schema.options):     # an append table's files are all level 0
            entries = dv.readable(entries)
        return metadata_columns.read_with_metadata(self, schema, self.snapshot_for(snapshot_id, as_of, ref),
                                                   entries, names)

    def changes(self, start_snapshot_id: Optional[int] = None, end_snapshot_id: Optional[int] = None) -> DataFrame:
        """The table's changelog between the snapshots (after ``start_snapshot_id``, up to
        ``end_snapshot_id``): ``rowkind`` then the table's columns, from the changelog files its
        ``changelog-producer`` writes (the records written, without one)."""
        return changes_df(self.spark, self, start_snapshot_id, end_snapshot_id)

    def changelog(self, start_snapshot_id: Optional[int] = None, end_snapshot_id: Optional[int] = None,
                  identifier_columns: Optional[Sequence[str]] = None, compute_updates: Optional[bool] = None,
                  net_changes: bool = False) -> DataFrame:
        """``changes`` in the shape of Iceberg's changelog view: the table's columns, then
        ``_change_type`` (INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE), ``_change_ordinal`` and
        ``_commit_snapshot_id``. Updates are what the changelog producer wrote; ``net_changes``
        is not offered."""
        if net_changes:
            raise self.unsupported("changelog with net_changes", "Paimon's changelog lists every change")
        return changes_df(self.spark, self, start_snapshot_id, end_snapshot_id, iceberg_shape=True)

    def row_table_names(self) -> tuple[str, ...]:
        return ("ro", "binlog", "row_tracking")

    def row_table(self, name: str, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                  ref: Optional[str] = None) -> DataFrame:
        """Paimon's system tables of rows: ``ro`` (``read_optimized``), ``binlog`` and ``row_tracking``."""
        if name == "binlog":
            return self.binlog(snapshot_id, as_of, ref)
        if name == "ro":
            return self.read_optimized(snapshot_id, as_of, ref)
        if name == "row_tracking":
            return self.row_tracking(snapshot_id, as_of, ref)
        raise self.unsupported(f"system table {name}", f"Paimon's tables of rows: {', '.join(self.row_table_names())}")

    def row_tracking(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                     ref: Optional[str] = None) -> DataFrame:
        """Paimon's ``row_tracking`` system table: a row-tracking table's rows with ``_ROW_ID`` and
        ``_SEQUENCE_NUMBER`` after its columns."""
        schema = self.table_schema_for(snapshot_id, as_of, ref)
        if not row_tracking.enabled(schema.options):
            raise self.unsupported("system table row_tracking",
                                   f"the table does not track rows ({row_tracking.ENABLED} is set only at CREATE)")
        return self.to_spark_with_metadata(row_tracking.NAMES, snapshot_id, as_of, ref)

    def binlog(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
               ref: Optional[str] = None) -> DataFrame:
        """Paimon's ``binlog`` system table read in batch: ``audit_log``'s rows with each column a
        one-element array (a stream pairs an update's before and after in two-element arrays)."""
        from pyspark.sql import functions as F

        df = self.audit_log(snapshot_id, as_of, ref)
        return df.select(F.col("rowkind"), *[F.array(F.col(f"`{c}`")).alias(c) for c in df.columns if c != "rowkind"])

    def read_optimized(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                       ref: Optional[str] = None) -> DataFrame:
        """Paimon's ``ro`` system table: a primary-key table's rows in its highest LSM level only
        (``num-levels`` - 1, what full compaction writes: keys unique, no merging needed), an append
        table's rows as they are."""
        self._one_branch_read("system table ro")
        schema = self.table_schema_for(snapshot_id, as_of, ref)
        if not schema.primary_keys:
            return self.to_spark(snapshot_id=snapshot_id, as_of=as_of, ref=ref)
        top = kv_compact.max_level(schema.options)
        entries = [e for e in self.plan(None, snapshot_id, as_of, ref) if e.file.level == top]
        if dv.enabled(schema.options):
            return read_with_vectors(self.spark, self, schema, self.snapshot_for(snapshot_id, as_of, ref),
                                     entries, None, None)
        self.check_mergeable(schema)
        return read_merged(self.spark, self, schema, entries, None, None)

    def analyze(self, columns: Optional[Sequence[str]] = None, all_columns: bool = False) -> Optional[Snapshot]:
        """``ANALYZE TABLE``: the merged row count and size, and column statistics of ``columns``
        (every column with ``all_columns``), written to a statistics file that a new ANALYZE snapshot
        names; None (nothing written) when the table has no snapshot."""
        stats = paimon_analyze.analyze(self.refresh(), columns, all_columns)
        return None if stats is None else self.commit_statistics(stats)

    def audit_log(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                  ref: Optional[str] = None) -> DataFrame:
        """The rows with ``rowkind`` first, as Paimon's ``audit_log`` reads a snapshot: a
        primary-key table's merged rows with each key's row kind (+I, +U, -D for a retraction a
        compaction has not yet dropped), an append table's rows as +I."""
        self._one_branch_read("system table audit_log")
        return audit_log_df(self.spark, self, snapshot_id, as_of, ref)

    def diff_between_tags(self, start_tag: str, end_tag: str) -> DataFrame:
        """The rows Paimon's incremental query between two tags returns: in each bucket, the files
        only ``end_tag`` has and the files only ``start_tag`` has (the files both have are left out),
        each side's rows merged by key; a key's row on the end side is returned unless the start side
        has the same row. An append table: the rows of the files only ``end_tag`` has. Rows gone by
        ``end_tag`` are not returned (Paimon's batch reads drop ``-D``)."""
        if chain.active(self):
            raise self.unsupported("an incremental query", chain.INCREMENTAL)
        start, end = self.tag(start_tag), self.tag(end_tag)
        if end.snapshot.id < start.snapshot.id:
            raise IcefloeError(f"tag {end_tag!r} (snapshot {end.snapshot.id}) is older than tag {start_tag!r} "
                               f"(snapshot {start.snapshot.id}): give the earlier tag first")
        schema = self.table_schema_for(ref=end_tag)
        if start.snapshot.id == end.snapshot.id:
            return self.to_spark(ref=end_tag).limit(0)

        def ident(e: ManifestEntry) -> tuple[bytes, int, str]:
            return e.partition.to_bytes(), e.bucket, e.file.file_name

        before, after = self.plan(ref=start_tag), self.plan(ref=end_tag)
        common = {ident(e) for e in before} & {ident(e) for e in after}
        before = [e for e in before if ident(e) not in common]
        after = [e for e in after if ident(e) not in common]
        if evolution.enabled(schema.options):
            raise self.unsupported("an incremental query of a data-evolution table", evolution.NO_INCREMENTAL)
        if not schema.primary_keys:         # less the rows the end's deletion vectors mark
            return read_append(self.spark, self, schema, end.snapshot, after)
        if dv.enabled(schema.options):
            raise self.unsupported("an incremental query between tags of a table with deletion vectors",
                                   "icefloe reads a deletion-vector table's merged rows per snapshot only")
        self.check_mergeable(schema)
        if dv.skips_level0(schema.options):
            before, after = dv.readable(before), dv.readable(after)
        new = read_merged(self.spark, self, schema, after, None, None)
        old = read_merged(self.spark, self, schema, before, None, None)
        return new.exceptAll(old.select(*[f"`{c}`" for c in new.columns]))

    def diff_to_auto_tag(self, end_tag: str) -> Optional[DataFrame]:
        """``incremental-to-auto-tag``: ``diff_between_tags`` from the newest earlier automatic tag; None: no rows."""
        handler = period_handler(self.options)
        end_time = handler.tag_to_time(end_tag)
        if end_time is None:
            raise IcefloeError(f"tag {end_tag!r} is not an automatic tag of table {self.name} (its tags are named "
                               f"like {handler.time_to_tag(_dt.datetime(2024, 12, 4))!r})")
        tags = self.tags()
        if end_tag not in tags:
            return None
        earlier = [(t, n) for n, t in ((n, handler.tag_to_time(n)) for n in tags) if t is not None and t < end_time]
        return self.diff_between_tags(max(earlier)[1], end_tag) if earlier else None

    # ------------------------------------------------------------------ writes
    def transaction(self) -> NoReturn:
        """Refused: Paimon has no commit of several changes (``NO_TRANSACTION`` says why)."""
        raise self.unsupported("transaction", NO_TRANSACTION)

    def write_files(self, data: WriteData) -> list[CommitMessage]:
        return self.write(data)

    def write(self, data: WriteData) -> list[CommitMessage]:
        """Write data files without committing them; ``commit`` commits their messages.

        Args:
            data: A Spark DataFrame, a pyarrow Table or a pandas DataFrame.

        Returns:
            list[CommitMessage]: one per partition and bucket written.
        """
        self.refresh()
        self.check_writable()
        if self._schema.primary_keys:     # upserts: key-value records numbered on from their buckets' own
            if is_arrow_data(data):
                return write_kv_table(self._store, self._schema, as_arrow_table(data), self.name, None)
            self.spark  # noqa: B018
            return write_kv_files(data, self, restored_sequence_numbers(self._store))
        if is_arrow_data(data):
            return write_arrow_table(self._store, self._schema, as_arrow_table(data), self.name)
        self.spark  # noqa: B018 - make sure the session has the settings the write relies on
        return write_data_files(data, self)

    def commit(  # pyright: ignore[reportIncompatibleMethodOverride] - Table's signature, not FileStoreTable's
            self, messages: Sequence[CommitMessage], overwrite: bool = False, branch: Optional[str] = None, *,
            overwrite_partitions: Optional[Callable[[Sequence[Any]], bool]] = None) -> Optional[Snapshot]:
        """Commit files written elsewhere (``write``, Spark tasks) as one snapshot; ``overwrite_partitions``
        (a predicate on partition values) limits an overwrite to those partitions."""
        if (other := self._on_branch(branch)) is not None:
            return other.commit(messages, overwrite, overwrite_partitions=overwrite_partitions)
        buckets = kv_compact.written_buckets(messages, self._schema.partition_types)
        if not overwrite:
            self._wait_for_compaction(messages, buckets)
        snap = FileStoreTable.commit(self, messages, overwrite=overwrite, overwrite_partitions=overwrite_partitions)
        if snap is not None and self._schema.primary_keys:
            self._compact_after(snap, buckets)
        return snap

    def _compact_after(self, snap: Snapshot, buckets: Collection[tuple[bytes, int]]) -> None:
        """What Paimon's writers do after a commit (unless the table is ``write-only``): universal
        compaction of the buckets just written (the commit messages name them: only their manifests
        are read), as its own COMPACT snapshot (Spark tasks when the table has a Spark session,
        else here). A conflict with a concurrent commit, or any failure of the compaction (whose
        files are then deleted), leaves the runs for the next write to compact: the write stands."""

        if self._schema.core_options.write_only:
            return
        if not buckets or not kv_compact.plan_universal(self, buckets):
            return
        try:
            self._compact_buckets(buckets)
        except CommitConflictError:
            pass
        except Exception as e:      # the write is committed; the runs wait for the next compaction
            import warnings

            warnings.warn(f"{self.name}: compaction after snapshot {snap.id} failed and was rolled back, the "
                          f"write stands ({type(e).__name__}: {e})", RuntimeWarning, stacklevel=3)

    def _compact_buckets(self, buckets: Collection[tuple[bytes, int]]) -> None:

        if self._spark is not None:
            compact_primary_key_table(self._spark, self, buckets=buckets)
        else:
            kv_compact.compact_universal(self, buckets)

    def _wait_for_compaction(self, messages: Sequence[CommitMessage], buckets: Collection[tuple[bytes, int]]) -> None:
        """Before a commit, as Paimon's writers wait at ``num-sorted-run.stop-trigger``: the written
        buckets whose runs piled up past it (their compactions failed) are compacted first; if that
        fails the written files are deleted, nothing is committed and the table stays as it was."""

        if not self._schema.primary_keys or self._schema.core_options.write_only:
            return
        stalled = kv_compact.stalled_buckets(self, buckets)
        if not stalled:
            return
        try:
            self._compact_buckets(stalled)
        except Exception as e:
            self._store.delete_uncommitted(messages)
            raise CommitFailedError(
                f"{self.name}: {len(stalled)} bucket(s) hold more sorted runs than num-sorted-run.stop-trigger and "
                f"their compaction failed ({type(e).__name__}: {e}); nothing was written") from e
        self.refresh()

    def append(self, data: WriteData, branch: Optional[str] = None) -> Optional[Snapshot]:
        """Append a Spark DataFrame or pyarrow.Table as one APPEND snapshot (None if empty)."""
        if (other := self._on_branch(branch)) is not None:
            return other.append(data)
        return self.commit(self.write(data))

    def overwrite(self, data: WriteData, partition: Optional[dict[str, Any]] = None, dynamic: bool = False,
                  branch: Optional[str] = None, where: Optional[str] = None) -> Any:
        """Replace the table's rows with ``data`` in one OVERWRITE snapshot: all of them;
        with ``partition={key: value, ...}`` (some or all partition keys) those of the
        matching partitions, and every row of ``data`` must match; with ``dynamic=True``
        those of the partitions ``data`` has rows in (no rows: nothing is committed); with
        ``where`` (append tables) the rows matching it, every row of ``data`` matching it."""
        if (other := self._on_branch(branch)) is not None:
            return other.overwrite(data, partition, dynamic, where=where)
        if where is not None:
            if partition or dynamic:
                raise ValueError("overwrite(where=...) takes no partition or dynamic")
            if not self._is_append_table("overwrite"):
                raise self.unsupported("overwrite with where on a primary-key table",
                                       "delete the matching keys, then append: writes are upserts there")
            return append_dml.replace_where(self, data, where)
        if partition and dynamic:
            raise ValueError("give partition or dynamic=True, not both")
        return self.commit_overwrite(self.write_checked(data, partition), partition, dynamic)

    def migrate_files(self, source: Any, source_catalog: Optional[migration.TableCatalog] = None,
                      delete_origin: bool = True, parallelism: Optional[int] = None) -> bool:
        """Move another table's data files into this append table without rewriting them
        (Paimon's ``migrate_file``). See [Migration](migration.md).

        Args:
            source: A Parquet directory, or the ``"db.table"`` of an Iceberg table of ``source_catalog``.
            source_catalog: The Iceberg table's catalog.
            delete_origin: Drop the source afterwards (an Iceberg table's metadata; an emptied directory).
            parallelism: Spark tasks that read the footers.

        Returns:
            bool: True.

        Raises:
            MigrationError: the table is not an append table with ``bucket = -1``, the source has
                row-level deletes, or its files' columns are not the table's; nothing was moved.
        """
        name = source if source_catalog is not None else None
        src = source_catalog.load_table(source) if source_catalog is not None else source
        return migration.migrate_files_to_paimon(self, src, delete_origin, source_catalog, name, parallelism)

    def truncate(self, branch: Optional[str] = None) -> Optional[Snapshot]:
        """Remove every row in one OVERWRITE snapshot that deletes every live file (None for a
        table without snapshots)."""
        if (other := self._on_branch(branch)) is not None:
            return other.truncate()
        self.refresh()
        if self.current_snapshot() is None:
            return None
        return self.commit([], overwrite=True)

    def write_checked(self, data: WriteData, partition: Optional[dict[str, Any]]) -> list[CommitMessage]:
        match = self.static_partition_match(partition) if partition else None  # bad keys fail before writing
        messages = self.write(data)
        if match is not None and partition is not None:
            self.check_in_partition(messages, partition, match)
        return messages

    # ------------------------------------------------------------------ row-level changes
    def _one_branch_read(self, operation: str) -> None:
        """Refuse on a chain table's merged read what icefloe does from one branch's files only."""
        if chain.active(self):
            raise self.unsupported(operation, chain.ONE_BRANCH)

    def _is_append_table(self, operation: str) -> bool:
        """True for an append table (row-level changes rewrite its files); a primary-key table
        whose merge engine cannot take ``operation`` is refused."""
        self.refresh()
        schema = self.table_schema
        self._one_branch_read(operation)
        if not schema.primary_keys:
            return True
        reason = row_level_refusal(operation, schema.options)
        if reason:
            raise self.unsupported(operation, reason)
        return False

    def delete(self, where: Where, isolation_level: Optional[str] = None) -> RowChanges:
        """``DELETE FROM t WHERE where``. A primary-key table gets a DELETE record for each
        current row that matches, in its bucket, and no data file is rewritten; an append
        table's files holding matching rows are rewritten without them (copy-on-write), in
        one OVERWRITE snapshot. Paimon has no isolation levels: ``isolation_level`` is
        accepted for the common contract, and the commit is refused if a file it rewrites
        was removed by a concurrent commit."""
        if self._is_append_table("delete"):
            return append_dml.delete_rows(self, where)
        self.refresh()
        restored = restored_sequence_numbers(self._store)
        messages = write_kv_files(self.to_spark(where=where), self, restored, kind=DELETE)
        snap = self.commit(messages)
        n = sum(f.row_count for m in messages for f in m.new_files)
        return RowChanges(deleted=n, snapshot_id=snap.id if snap else None)

    def update(self, set: dict[str, Any], where: Where = None, isolation_level: Optional[str] = None) -> RowChanges:
        """``UPDATE t SET col = expr, ... WHERE where``. A primary-key table upserts the new
        rows of the keys that match (key columns cannot change); an append table's files
        holding matching rows are rewritten with the new values (copy-on-write)."""
        from pyspark.sql import functions as F

        if self._is_append_table("update"):
            return append_dml.update_rows(self, set, where)
        keys = {k.lower() for k in self.table_schema.primary_keys}
        for col in set:
            if col.lower() in keys:
                raise self.unsupported(f"update of primary-key column {col!r}",
                                       "a new key is a new row: delete the old key and insert the new one")
        self.refresh()
        restored = restored_sequence_numbers(self._store)
        rows = self.to_spark(where=where)
        for col, value in set.items():
            rows = rows.withColumn(col, F.expr(value) if isinstance(value, str) else value)
        messages = write_kv_files(rows, self, restored, kind=UPDATE_AFTER)
        snap = self.commit(messages)
        n = sum(f.row_count for m in messages for f in m.new_files)
        return RowChanges(updated=n, snapshot_id=snap.id if snap else None)

    def merge(self, source: WriteData, on: Any, target_alias: str = "t", source_alias: str = "s",
              isolation_level: Optional[str] = None) -> MergeClauses:
        """``MERGE INTO t USING source s ON on``: add when_* clauses, then ``execute()``. A
        primary-key table's changed keys are written as upserts and DELETE records; an append
        table's files with matched rows are rewritten (copy-on-write), inserts appended."""
        if self._is_append_table("merge"):
            return append_dml.AppendMerge(self, source, on, target_alias, source_alias, isolation_level)
        return PrimaryKeyMerge(self, source, on, target_alias, source_alias, isolation_level)

    # ------------------------------------------------------------------ maintenance
    def rewrite_data_files(self, where: Where = None, target_file_size: Optional[int] = None, options: Optional[dict[str, Any]] = None,
                           strategy: Optional[str] = None, sort_order: Optional[str] = None) -> Optional[Snapshot]:
        """Compaction. Primary-key tables: a full compaction, each (partition, bucket) merged
        into the highest LSM level by one Spark task. Append tables: each (partition, bucket)'s small
        files rewritten together by one Spark task."""
        if options or strategy or sort_order:
            raise self.unsupported("rewrite_data_files with Iceberg's options, strategy or sort_order")
        if self.table_schema.primary_keys:
            return compact_primary_key_table(self.spark, self, where, target_file_size)
        return compact_append_table(self.spark, self, where, target_file_size)

    def compact(self, where: Where = None, target_file_size: Optional[int] = None, partitions: Optional[Sequence[dict[str, Any]]] = None,
                strategy: Optional[str] = None, partition_idle_ms: Optional[int] = None,
                order_strategy: Optional[str] = None, order_by: Sequence[str] = ()) -> Optional[Snapshot]:
        """Paimon's compaction (``CALL sys.compact``) of the partitions ``where`` reads and
        ``partitions`` (dicts of key -> value) name, and with ``partition_idle_ms`` only those
        not written for that long. ``order_strategy`` (``'order'``, ``'zorder'``, ``'hilbert'``):
        an append table's partitions rewritten with their rows sorted by ``order_by`` (one
        OVERWRITE snapshot). Else ``strategy``: ``'full'`` (default) or ``'minor'`` (only what the
        writers' own compaction picks). Returns the new snapshot, or None when nothing was to do."""
        return paimon_compact(self.spark, self, where, partitions, strategy, partition_idle_ms, order_strategy,
                              order_by, target_file_size)

    def rescale(self, bucket_num: Optional[int] = None, where: Optional[str] = None,
                partitions: Optional[Sequence[dict[str, Any]]] = None) -> Optional[Snapshot]:
        """Paimon's rescale (``CALL sys.rescale``): partitions of a fixed-bucket table rewritten into
        another number of buckets as one OVERWRITE snapshot, every row (a primary-key table's merged
        rows) kept. The 'bucket' option is not changed: set it first with ``ALTER TABLE ... SET
        TBLPROPERTIES ('bucket' = 'N')`` (``update_properties``), as Paimon's rescale goes.

        Args:
            bucket_num: The new number of buckets (the 'bucket' option's number by default).
            where: A predicate on partition columns choosing the partitions.
            partitions: Dicts of partition key -> value choosing the partitions (not with ``where``).
                All partitions (the whole table when unpartitioned) by default.

        Returns:
            The OVERWRITE snapshot, or None when the table has no data file to rewrite.

        Raises:
            MaintenanceError: a table with bucket -1, ``bucket_num`` <= 0, a choice of no partition with
                data files, or no snapshot; nothing is changed.
        """
        return paimon_rescale(self, bucket_num, where, partitions)

    def expire_snapshots(  # pyright: ignore[reportIncompatibleMethodOverride] - Table's signature, not FileStoreTable's
            self, older_than: Optional[AsOf] = None, retain_last: Optional[int] = None,
            now_ms: Optional[int] = None, snapshot_ids: Iterable[int] = (), retain_max: Optional[int] = None,
            max_deletes: Optional[int] = None) -> ExpireReport:
        """Expire snapshots per the retention options (``older_than`` replaces
        ``snapshot.time-retained``, ``retain_last`` the retained minimum, ``retain_max`` the
        maximum; ``max_deletes`` caps the snapshots expired at once)."""
        if snapshot_ids:
            raise self.unsupported("expire_snapshots by snapshot id", "Paimon expires the oldest snapshots "
                                   "by age and count (older_than, retain_last)")
        expired = FileStoreTable.expire_snapshots(self, now_ms, older_than, retain_last, retain_max, max_deletes)
        return ExpireReport(expired_snapshot_ids=expired, files_reported=False)

    def rewrite_manifests(  # pyright: ignore[reportIncompatibleMethodOverride] - Table's signature, not FileStoreTable's
            self, branch: Optional[str] = None, spec_id: Optional[int] = None,
            sort_field: Optional[str] = None, sort_max_size: Optional[int] = None,
            sort: bool = False) -> Optional[Snapshot]:
        """Merge the latest snapshot's manifests; ``sort``: Paimon's manifest sort (entries ordered
        by partition field ``sort_field``, default the first, up to ``sort_max_size`` bytes)."""
        if (other := self._on_branch(branch)) is not None:
            return other.rewrite_manifests(spec_id=spec_id, sort_field=sort_field, sort_max_size=sort_max_size,
                                           sort=sort)
        if spec_id is not None:
            raise self.unsupported("rewrite_manifests with spec_id", "Paimon tables have no partition specs")
        return FileStoreTable.rewrite_manifests(self, sort_field, sort_max_size, sort)

    def create_tag(  # pyright: ignore[reportIncompatibleMethodOverride] - Table's signature, not FileStoreTable's
            self, name: str, snapshot_id: Optional[int] = None, max_ref_age_ms: Optional[int] = None,
            time_retained: Optional[_dt.timedelta] = None) -> Tag:
        """Tag a snapshot; a retention (``max_ref_age_ms`` or ``time_retained``, a ``timedelta``) is
        written into the tag file as Paimon's ``tagTimeRetained``."""
        return FileStoreTable.create_tag(self, name, snapshot_id, _retention(max_ref_age_ms, time_retained))

    def replace_tag(  # pyright: ignore[reportIncompatibleMethodOverride] - Table's signature, not FileStoreTable's
            self, name: str, snapshot_id: Optional[int] = None, max_ref_age_ms: Optional[int] = None,
            time_retained: Optional[_dt.timedelta] = None) -> Tag:
        return FileStoreTable.replace_tag(self, name, snapshot_id, _retention(max_ref_age_ms, time_retained))

    # ------------------------------------------------------------------ branches (Paimon's)
    def create_branch(  # pyright: ignore[reportIncompatibleMethodOverride] - Table's signature, not FileStoreTable's
            self, name: str, snapshot_id: Optional[int] = None, min_snapshots_to_keep: Optional[int] = None,
            max_snapshot_age_ms: Optional[int] = None, max_ref_age_ms: Optional[int] = None,
            tag: Optional[str] = None) -> FileStoreTable:
        """Create Paimon branch ``name`` from tag ``tag`` (its snapshot is the branch's first), or an
        empty branch with the table's latest schema; returns the branch as a table. Paimon branches
        start from a tag: a ``snapshot_id`` or Iceberg's retention arguments are refused."""
        given = [k for k, v in (("snapshot_id", snapshot_id), ("min_snapshots_to_keep", min_snapshots_to_keep),
                                ("max_snapshot_age_ms", max_snapshot_age_ms), ("max_ref_age_ms", max_ref_age_ms))
                 if v is not None]
        if given:
            raise self.unsupported(f"create_branch with {', '.join(given)}",
                                   "a Paimon branch starts from a tag (tag=...) or empty; tag the snapshot first")
        return FileStoreTable.create_branch(self, name, tag)

    def drop_branch(self, name: str) -> None:
        """``delete_branch`` under the Iceberg table API's name."""
        self.delete_branch(name)

    def fast_forward(  # pyright: ignore[reportIncompatibleMethodOverride] - Table's signature, not FileStoreTable's
            self, branch: str, source: Optional[str] = None) -> Optional[Snapshot]:
        """Paimon's fast-forward of main to ``branch`` (``fast_forward('b')``); Iceberg's form
        ``fast_forward('main', 'b')`` does the same. Main's snapshots, schemas and tags from the
        branch's first snapshot on are replaced by the branch's."""
        if source is not None:
            if branch != MAIN:
                raise self.unsupported(f"fast_forward of branch {branch!r}", "Paimon fast-forwards main only")
            branch = source
        return FileStoreTable.fast_forward(self, branch)

    # ------------------------------------------------------------------ description (SQL, CLI, check)
    def partition_columns(self) -> list[str]:
        return list(self.partition_keys)

    def partitioning(self) -> list[str]:
        return list(self.partition_keys)

    def data_files(self, where: Where = None) -> list[FileRow]:
        rows: list[FileRow] = []
        for f in self.plan_files(where=where):   # partition and bucket are the file's directory, <k>=<v>/bucket-<N>
            rel = os.path.relpath(os.path.dirname(f.path), self.location)
            part: dict[str, Any] = dict(p.split("=", 1) for p in rel.split(os.sep) if "=" in p)
            part["bucket"] = int(rel.rsplit("bucket-", 1)[-1]) if "bucket-" in rel else None
            rows.append(FileRow(f.path, part, f.row_count, f.file_size))
        return rows

    def shown_properties(self) -> dict[str, Any]:
        props = dict(self.properties)
        if self.table_schema.primary_keys:
            props["primary-key"] = ",".join(self.table_schema.primary_keys)
        return props

    def describe_columns(self) -> list[tuple[str, str, Optional[str]]]:
        """Paimon's own types (SMALLINT, TINYINT, CHAR(n), ...) as Spark names them."""
        spark_fields = pt.to_spark_schema(self.table_schema.fields, with_ids=False).fields
        return [(sf.name, sf.dataType.simpleString() + ("" if sf.nullable else " not null"), f.description or "")
                for sf, f in zip(spark_fields, self.table_schema.fields)]

    def narrow_column_types(self) -> dict[str, str]:
        kinds = {"TINYINT": "tinyint", "SMALLINT": "smallint"}
        return {f.name: kind for f in self.table_schema.fields if (kind := kinds.get(pt.root(f.type) or ""))}

    def parse_column_type(self, text: str) -> IcebergType:
        return spark_sql_type(text)

    def metadata_tree(self, all_snapshots: bool = True) -> Node:
        return metadata_tree(self, all_snapshots)

    def check(self, progress: Optional[Callable[[str], None]] = None) -> Report:
        """Paimon's metadata, and the Iceberg view (``metadata.iceberg.storage``) if it has one."""
        report = check_paimon(self.name, self.location, progress, self.io)
        iceberg_view.check_view(self.refresh(), report, self._check_iceberg_root)
        return report

    def _check_iceberg_root(self, root: str) -> Report:
        from icefloe.iceberg.check import check_iceberg
        from icefloe.iceberg.hadoop import HadoopTableOperations
        from icefloe.iceberg.table import BaseTable

        return check_iceberg(BaseTable(self.name, HadoopTableOperations(self.io, root)))

    def describe_extra(self) -> list[tuple[str, str]]:
        """``describe``'s lines on the Iceberg view (Paimon's ``metadata.iceberg.storage``)."""
        return iceberg_view.view_info(self.refresh())

    # ------------------------------------------------------------------ metadata tables
    def metadata_table_names(self) -> tuple[str, ...]:
        return system_tables.NAMES

    def metadata_table(self, name: str, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                       ref: Optional[str] = None) -> pa.Table:
        build = system_tables.BUILDERS.get(name)
        if build is None:
            raise self.unsupported(f"metadata table {name}",
                                   f"Paimon's system tables: {', '.join(system_tables.NAMES)}")
        travel = snapshot_id is not None or as_of is not None or ref is not None
        if name in system_tables.TABLE_LEVEL:
            if travel:
                raise IcefloeError(f"metadata table {name} describes the whole table; it takes no time travel")
            return build(self)
        return build(self, self.snapshot_for(snapshot_id, as_of, ref))

    def manifest_files(self) -> list[dict[str, Any]]:
        """The manifests of the latest snapshot by manifest list (base, delta, changelog), with their
        paths: what a commit wrote and compacted (``paimon/commit.py``), where the system table merges them."""
        snap = self.current_snapshot()
        store = self.store
        rows: list[dict[str, Any]] = []
        for kind, lst in (manifest_lists(snap) if snap is not None else []):
            for m in store.read_manifest_list(lst):
                rows.append({"manifest_list": lst, "list_kind": kind, "file_name": m.file_name,
                             "path": store.manifest_path(m.file_name), "file_size": m.file_size,
                             "num_added_files": m.num_added_files, "num_deleted_files": m.num_deleted_files,
                             "schema_id": m.schema_id})
        return rows
