# pyright: strict
"""The table contract: one set of operations, signatures and return types for every format.

``Catalog``, SQL, the command line and ``check`` call tables only through this contract, never
asking a table which format it is (a statement only one format has asks ``Table.supports``). Each
format implements what it can; an operation it does not offer raises
:class:`~icefloe.errors.NotSupportedError` naming the operation, the table and the format
(``Table.unsupported``), never a silent partial result. The conventions both formats share are in
``Table``'s docstring; writes return the new snapshot (None when nothing was committed), row-level
changes a :class:`~icefloe.core.reports.RowChanges`, ``expire_snapshots`` an ``ExpireReport``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, Sequence, Union

import pyarrow as pa
from pyspark.sql import SparkSession

from icefloe.core.reports import ExpireReport, Report, RowChanges
from icefloe.core.timetravel import AsOf
from icefloe.core.tree import Node
from icefloe.core.types import IcebergType, Schema
from icefloe.errors import NotSupportedError
from icefloe.table.capabilities import FileRow
from icefloe.table.inspect import Inspect
from icefloe.table.refs import RefOperations
from icefloe.table.scan import TableScan

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

#: a row filter: Spark SQL predicate text or a Spark ``Column`` (None: every row)
Where = Union[str, "Column", None]
#: rows to write: a Spark DataFrame, a pyarrow Table or RecordBatch, or a pandas DataFrame (untyped)
WriteData = Any


class Table(RefOperations):
    """A table of either format: ``IcebergTable`` or ``PaimonTable``, from ``Catalog.load_table``,
    ``Catalog.create_table`` or ``icefloe.load_table``.

    Both formats answer the same calls. Time travel is ``snapshot_id=``, ``as_of=`` or ``ref=``, at
    most one of them; ``where`` is Spark SQL predicate text (or a Spark ``Column``); writes take a
    Spark DataFrame, a pyarrow Table or RecordBatch, or a pandas DataFrame. An operation a format
    does not offer raises ``NotSupportedError`` naming it, and changes nothing.
    """

    #: the table format's name, for display only ("iceberg" or "paimon")
    format: str = ""
    name: str
    #: the named capabilities beyond the contract this table has (``table.capabilities``)
    capabilities: frozenset[str] = frozenset()

    def supports(self, capability: str) -> bool:
        """Whether the table has a capability beyond the common contract.

        Args:
            capability: A name of ``icefloe.table.capabilities`` (``PAIMON_PROCEDURES``...).
        """
        return capability in self.capabilities

    # ------------------------------------------------------------------ refusal
    def unsupported(self, operation: str, reason: str = "") -> NotSupportedError:
        """The error for ``operation``, which this table's format does not offer."""
        return NotSupportedError(operation, getattr(self, "name", ""), self.format, reason)

    # ------------------------------------------------------------------ state
    @property
    def spark(self) -> SparkSession:
        """The SparkSession this table's Spark reads and writes run in."""
        raise self.unsupported("spark")

    @property
    def location(self) -> str:
        """The table's directory."""
        raise self.unsupported("location")

    @property
    def schema(self) -> Schema:
        """The current schema (icefloe's type system; Paimon field ids are Paimon's)."""
        raise self.unsupported("schema")

    @property
    def properties(self) -> dict[str, str]:
        """Table properties (Iceberg) or options (Paimon), as a dict."""
        raise self.unsupported("properties")

    def refresh(self) -> "Table":
        """Reload the table's metadata from storage, to see other writers' commits.

        Returns:
            Table: this table.
        """
        raise self.unsupported("refresh")

    def snapshots(self) -> list[Any]:
        """Every snapshot still in the table's metadata, oldest first.

        Returns:
            list: the format's snapshot objects (``snapshot_id``/``id``, ``timestamp_ms``, summary).
        """
        raise self.unsupported("snapshots")

    def current_snapshot(self) -> Any:
        """The snapshot reads see by default.

        Returns:
            The current snapshot, or None for a table never written.
        """
        raise self.unsupported("current_snapshot")

    def history(self) -> list[dict[str, Any]]:
        """The snapshot log: which snapshot became current when, oldest first.

        Returns:
            list[dict]: one dict per entry (``made_current_at``, ``snapshot_id``, ...).
        """
        raise self.unsupported("history")

    def refs(self) -> dict[str, Any]:
        """Named references: Iceberg branches and tags, Paimon tags.

        Returns:
            dict: ``{name: ref}``.
        """
        raise self.unsupported("refs")

    def snapshot_for(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                     ref: Optional[str] = None) -> Any:
        """The snapshot a read with these arguments sees (the current one without arguments).

        Args:
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.

        Returns:
            The snapshot, or None for a table never written.

        Raises:
            NoSuchSnapshotError: no snapshot matches.
        """
        raise self.unsupported("time travel")

    def schema_for(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                   ref: Optional[str] = None) -> Schema:
        """The schema a read with these arguments uses (time travel reads the snapshot's schema).

        Args:
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.

        Returns:
            Schema: icefloe's schema of the table.
        """
        raise self.unsupported("schema_for")

    # ------------------------------------------------------------------ reads
    def plan_files(self, where: Where = None, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                   ref: Optional[str] = None) -> list[Any]:
        """The data files a read would use, pruned by partition values and column statistics.

        Args:
            where: Spark SQL predicate text; files that cannot hold a matching row are left out.
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.

        Returns:
            list: one entry per data file (``file_path``, ``record_count``, ``file_size_in_bytes``, ...).
        """
        raise self.unsupported("plan_files")

    def iter_tasks(self, where: Where = None, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                   ref: Optional[str] = None) -> Iterator[Any]:
        """The scan tasks a read would use (each data file with the delete files that apply to it),
        streamed as they are planned: for going through a large table's files once without holding
        an object per file (``plan_files`` returns them all in a list).

        Args:
            where: Spark SQL predicate text; files that cannot hold a matching row are left out.
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.

        Returns:
            Iterator: one task per data file (``file``, ``deletes``, ``data_sequence_number``, ...).
            The filter and settings are checked when it is returned, not when it is first read.
        """
        raise self.unsupported("iter_tasks")

    def to_spark(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, where: Where = None,
                 columns: Optional[Sequence[str]] = None, ref: Optional[str] = None) -> DataFrame:
        """The rows as a Spark DataFrame, read by Spark tasks.

        Args:
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.
            where: Spark SQL predicate text or a ``Column``; files are pruned by it, rows filtered.
            columns: The columns to read (all by default).

        Returns:
            pyspark.sql.DataFrame: the rows, lazily read.

        Example:
            ```python
            t.to_spark(where="kind = 'click'", columns=["id", "ts"]).show()
            ```
        """
        raise self.unsupported("to_spark")

    def to_arrow(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, where: Where = None,
                 ref: Optional[str] = None) -> pa.Table:
        """The rows as a pyarrow Table, read in this process without Spark (small tables, tests).

        Args:
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.
            where: Spark SQL predicate text: comparisons, ``IN``, ``IS [NOT] NULL``, prefix ``LIKE``,
                ``AND``, ``OR``; anything else raises ``UnsupportedFilterError`` (use ``to_spark``).

        Returns:
            pyarrow.Table: the rows.
        """
        raise self.unsupported("to_arrow")

    def scan(self, row_filter: Optional[str] = None, selected_fields: Optional[Sequence[str]] = None,
             snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, ref: Optional[str] = None) -> TableScan:
        """A read described now and run later, as pyiceberg's ``scan``.

        Args:
            row_filter: Spark SQL predicate text.
            selected_fields: The columns to read (all by default).
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.

        Returns:
            TableScan: run it with ``.to_arrow()``, ``.to_pandas()``, ``.to_spark()`` or ``.plan_files()``.

        Raises:
            ValueError: a selected field is not a column of the table.
        """
        return TableScan(self, row_filter, selected_fields, snapshot_id, as_of, ref)

    def changelog(self, start_snapshot_id: Optional[int] = None, end_snapshot_id: Optional[int] = None,
                  identifier_columns: Optional[Sequence[str]] = None, compute_updates: Optional[bool] = None,
                  net_changes: bool = False) -> DataFrame:
        """The row changes between two snapshots, as Iceberg's ``create_changelog_view`` shows them.

        Args:
            start_snapshot_id: Changes after this snapshot (from the first snapshot by default).
            end_snapshot_id: Changes up to and including this snapshot (the current one by default).
            identifier_columns: Columns identifying a row, to pair deletes and inserts into updates
                (the table's identifier fields by default).
            compute_updates: Pair a delete and an insert of the same identifier into
                ``UPDATE_BEFORE``/``UPDATE_AFTER`` (default: when identifier columns are known).
            net_changes: Collapse the changes of several snapshots into their net effect (Iceberg).

        Returns:
            pyspark.sql.DataFrame: the table's columns, then ``_change_type`` (``INSERT``,
            ``DELETE``, ``UPDATE_BEFORE``, ``UPDATE_AFTER``), ``_change_ordinal`` and
            ``_commit_snapshot_id``.
        """
        raise self.unsupported("changelog")

    def changes(self, start_snapshot_id: Optional[int] = None, end_snapshot_id: Optional[int] = None) -> DataFrame:
        """The row changes between two snapshots, as a stream of Paimon's ``audit_log`` shows them.

        Args:
            start_snapshot_id: Changes after this snapshot.
            end_snapshot_id: Changes up to and including this snapshot (the current one by default).

        Returns:
            pyspark.sql.DataFrame: ``rowkind`` (``+I``, ``-U``, ``+U``, ``-D``), then the table's columns.
        """
        from pyspark.sql import functions as F

        df = self.changelog(start_snapshot_id, end_snapshot_id)
        kind = F.expr("CASE _change_type WHEN 'INSERT' THEN '+I' WHEN 'DELETE' THEN '-D' "
                      "WHEN 'UPDATE_BEFORE' THEN '-U' ELSE '+U' END")
        names = [c for c in df.columns if c not in ("_change_type", "_change_ordinal", "_commit_snapshot_id")]
        return df.orderBy("_change_ordinal").select(kind.alias("rowkind"), *[F.col(f"`{c}`") for c in names])

    def audit_log(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                  ref: Optional[str] = None) -> DataFrame:
        """The table's rows with each row's kind first, as Paimon's ``audit_log`` system table.

        Args:
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.

        Returns:
            pyspark.sql.DataFrame: ``rowkind`` (``+I``, ``-U``, ``+U``, ``-D``), then the table's columns.
        """
        raise self.unsupported("audit_log")

    # ------------------------------------------------------------------ writes
    def append(self, data: WriteData, branch: Optional[str] = None) -> Any:
        """Append rows as one new snapshot.

        Args:
            data: A Spark DataFrame (written by Spark tasks), a pyarrow Table or RecordBatch, or a
                pandas DataFrame (written in this process).
            branch: Append to this branch instead of ``main`` (Iceberg).

        Returns:
            The new snapshot (None when nothing was committed).

        Raises:
            SchemaMismatchError: the data's columns or types do not fit the table.
            RequiredFieldNullError: a null in a ``not null`` column.
        """
        raise self.unsupported("append")

    def overwrite(self, data: WriteData, partition: Optional[dict[str, Any]] = None, dynamic: bool = False,
                  branch: Optional[str] = None, where: Optional[str] = None) -> Any:
        """Replace rows with ``data`` in one snapshot.

        Without ``partition``, ``dynamic`` or ``where`` every row is replaced.

        Args:
            data: The new rows (Spark DataFrame, pyarrow Table or pandas DataFrame).
            partition: ``{column: value}`` for some or all partition columns: replace the rows of the
                matching partitions; every row of ``data`` must be in them.
            dynamic: Replace the partitions ``data`` has rows in.
            branch: Write to this branch instead of ``main`` (Iceberg).
            where: Spark SQL predicate text, like Delta's ``replaceWhere``: replace the rows matching
                it; every row of ``data`` must match it.

        Returns:
            The new snapshot; with ``where``, the ``RowChanges``, as ``delete``.
        """
        raise self.unsupported("overwrite")

    def truncate(self, branch: Optional[str] = None) -> Any:
        """Remove every row in one snapshot, reading no data file (SQL ``TRUNCATE TABLE``).

        Args:
            branch: Truncate this branch instead of ``main`` (Iceberg).

        Returns:
            The new snapshot, or None for a table without rows.
        """
        raise self.unsupported("truncate")

    def write_files(self, data: WriteData) -> list[Any]:
        """Write data files without committing them; ``commit`` commits them.

        Args:
            data: A Spark DataFrame, a pyarrow Table or a pandas DataFrame.

        Returns:
            list: the commit messages ``commit`` takes (Iceberg ``DataFile``s, Paimon ``CommitMessage``s).
        """
        raise self.unsupported("write_files")

    def commit(self, messages: Sequence[Any], overwrite: bool = False, branch: Optional[str] = None) -> Any:
        """Commit files written elsewhere (by ``write_files``/``write`` or Spark tasks) as one snapshot.

        Use ``append``/``overwrite`` unless you write the files yourself; ``commit_files`` is the same call.

        Args:
            messages: The format's commit messages: Iceberg ``DataFile``s, Paimon ``CommitMessage``s.
            overwrite: Replace every row with the committed files.
            branch: Commit to this branch instead of ``main`` (Iceberg).

        Returns:
            The new snapshot.
        """
        raise self.unsupported("commit")

    def commit_files(self, files: Sequence[Any], overwrite: bool = False, branch: Optional[str] = None) -> Any:
        """The same call as ``commit`` (pyiceberg's name); prefer ``commit``.

        Args:
            files: The format's commit messages: Iceberg ``DataFile``s, Paimon ``CommitMessage``s.
            overwrite: Replace every row with the committed files.
            branch: Commit to this branch instead of ``main`` (Iceberg).

        Returns:
            The new snapshot.
        """
        return self.commit(files, overwrite=overwrite, branch=branch)

    def foreach_batch(self, overwrite: bool = False,
                      query_id: Optional[str] = None) -> Callable[[DataFrame, int], None]:
        """A function for ``df.writeStream.foreachBatch(...)``: each micro-batch is one snapshot, exactly once.

        A batch replayed after a restart is recognised and skipped. With the ``update`` output mode, a
        primary-key table takes each batch's changed rows as upserts.

        Args:
            overwrite: Each batch replaces the table's rows.
            query_id: The name the table knows the query's batches by (the same across restarts; by
                default Spark's id of the query, which a Spark Connect ``foreachBatch`` cannot see).

        Returns:
            Callable[[DataFrame, int], None]: pass it to ``foreachBatch``.
        """
        from icefloe.spark.streaming import foreach_batch_writer

        return foreach_batch_writer(self, overwrite, query_id)

    # ------------------------------------------------------------------ row-level changes
    def delete(self, where: Where, isolation_level: Optional[str] = None) -> RowChanges:
        """``DELETE FROM t WHERE where`` in one snapshot.

        Args:
            where: Spark SQL predicate text or a ``Column``.
            isolation_level: ``serializable`` or ``snapshot`` (Iceberg): which concurrent commits
                conflict with this one (default: the table's ``write.delete.isolation-level``).

        Returns:
            RowChanges: the rows updated, deleted and inserted, and the new ``snapshot_id``.

        Raises:
            CommitConflictError: a concurrent commit conflicts; nothing was committed.
        """
        raise self.unsupported("delete")

    def update(self, set: dict[str, Any], where: Where = None, isolation_level: Optional[str] = None) -> RowChanges:
        """``UPDATE t SET col = value, ... WHERE where`` in one snapshot.

        Args:
            set: ``{column: value}``; a value is Spark SQL text (``"amount * 10"``), a ``Column`` or a
                literal.
            where: Spark SQL predicate text or a ``Column`` (every row by default).
            isolation_level: ``serializable`` or ``snapshot`` (Iceberg).

        Returns:
            RowChanges: the rows updated, deleted and inserted, and the new ``snapshot_id``.
        """
        raise self.unsupported("update")

    def merge(self, source: WriteData, on: Union[str, Column], target_alias: str = "t", source_alias: str = "s",
              isolation_level: Optional[str] = None) -> Any:
        """``MERGE INTO t USING source s ON on``: a builder; add clauses, then call ``execute()``.

        Args:
            source: The source rows: a Spark DataFrame (or Arrow/pandas data).
            on: The join condition, Spark SQL text over the two aliases (``"t.id = s.id"``).
            target_alias: The table's alias in ``on`` and the clauses.
            source_alias: The source's alias.
            isolation_level: ``serializable`` or ``snapshot`` (Iceberg).

        Returns:
            The MERGE builder (see [MERGE](#merge)).

        Example:
            ```python
            (t.merge(changes, "t.id = s.id")
               .when_matched_update({"amount": "s.amount"})
               .when_not_matched_insert_all()
               .execute())
            ```
        """
        raise self.unsupported("merge")

    def writing_to(self, branch: Optional[str] = None, wap_id: Optional[str] = None) -> "Table":
        """This table with its writes going to a branch, or staged (Iceberg's write-audit-publish).

        Args:
            branch: The branch that append, overwrite, truncate, delete, update and merge commit to.
            wap_id: Stage each write instead: the snapshot is added with summary ``wap.id`` and no
                branch moves, until ``publish_changes(wap_id)``.

        Returns:
            Table: a view of this table whose writes go there.
        """
        raise self.unsupported("writes to a branch or staged (write-audit-publish)")

    def delete_by_key(self, keys: WriteData) -> Any:
        """Delete the rows whose key columns equal a row of ``keys``, reading no data file.

        Args:
            keys: A Spark DataFrame or pyarrow Table of key columns (Iceberg: equality delete files).

        Returns:
            The new snapshot.
        """
        raise self.unsupported("delete_by_key")

    # ------------------------------------------------------------------ evolution
    def update_schema(self) -> Any:
        """A schema change, committed when the ``with`` block ends.

        Returns:
            The schema update: ``add_column``, ``rename_column``, ``update_column``,
            ``delete_column``, ``move_first``/``move_before``/``move_after``.

        Example:
            ```python
            with t.update_schema() as u:
                u.add_column("note", "string")
            ```
        """
        raise self.unsupported("update_schema")

    def update_spec(self) -> Any:
        """A partition spec change (Iceberg), committed when the ``with`` block ends.

        Returns:
            The spec update: ``add_field("bucket(4, id)")``, ``remove_field``, ``rename_field``.

        Raises:
            NotSupportedError: on a Paimon table.
        """
        raise self.unsupported("partition evolution (update_spec)")

    def replace_sort_order(self, *terms: str) -> dict[str, Any]:
        """Declare the table's sort order; no terms: unsorted.

        Args:
            *terms: Sort terms as text: ``"id"``, ``"ts desc nulls last"``.

        Returns:
            dict: the new sort order.
        """
        raise self.unsupported("replace_sort_order")

    def update_properties(self, set: Optional[dict[str, Any]] = None,
                          remove: Optional[Sequence[str]] = None) -> dict[str, Any]:
        """Set and remove table properties (Iceberg) or options (Paimon) in one commit.

        Args:
            set: ``{name: value}`` to set.
            remove: Names to remove.

        Returns:
            dict: the table's properties after the change.
        """
        raise self.unsupported("update_properties")

    # ------------------------------------------------------------------ history changes
    def rollback_to_snapshot(self, snapshot_id: int) -> Any:
        """Make an ancestor of the current snapshot current again.

        Args:
            snapshot_id: The snapshot.
        """
        raise self.unsupported("rollback_to_snapshot")

    def rollback_to_timestamp(self, as_of: AsOf) -> Any:
        """Make the snapshot that was current at a time current again.

        Args:
            as_of: A ``datetime`` or epoch milliseconds.
        """
        raise self.unsupported("rollback_to_timestamp")

    def rollback_to_tag(self, name: str) -> Any:
        """Make the snapshot a tag names current again.

        Args:
            name: The tag's name.
        """
        raise self.unsupported("rollback_to_tag")

    def set_current_snapshot(self, snapshot_id: int) -> Any:
        """Make any snapshot of the table current (Iceberg).

        Args:
            snapshot_id: The snapshot.
        """
        raise self.unsupported("set_current_snapshot")

    def cherry_pick(self, snapshot_id: int) -> Any:
        """Apply the changes of one snapshot (for example on a branch) to the current state, as a new snapshot (Iceberg).

        Args:
            snapshot_id: An append or overwrite snapshot.
        """
        raise self.unsupported("cherry_pick")

    def ancestors(self, snapshot_id: Optional[int] = None) -> list[Any]:
        """A snapshot and its parents, newest first (Iceberg's ``ancestors_of``).

        Args:
            snapshot_id: The snapshot to start from (default: the current one).

        Returns:
            list: the snapshots.
        """
        raise self.unsupported("ancestors")

    def publish_changes(self, wap_id: str) -> Any:
        """Publish the snapshot staged under a write-audit-publish id into the current state.

        Fast-forwards when main has not moved since the write; otherwise cherry-picks it.

        Args:
            wap_id: The ``spark.wap.id`` / ``writing_to(wap_id=...)`` the write was staged under.

        Returns:
            The staged snapshot.
        """
        raise self.unsupported("publish_changes")

    # ------------------------------------------------------------------ maintenance
    def expire_snapshots(self, older_than: Optional[AsOf] = None, retain_last: Optional[int] = None,
                         now_ms: Optional[int] = None, snapshot_ids: Iterable[int] = ()) -> ExpireReport:
        """Remove old snapshots and delete the files only they used.

        Args:
            older_than: Expire snapshots older than this ``datetime`` or epoch milliseconds (default:
                the table's retention settings).
            retain_last: Keep at least this many snapshots.
            now_ms: The current time in epoch milliseconds, for retention by age.
            snapshot_ids: Also expire these snapshots by id (Iceberg; a ref's head is refused).

        Returns:
            ExpireReport: the snapshot ids expired and the files deleted.
        """
        raise self.unsupported("expire_snapshots")

    def remove_orphan_files(self, older_than: Optional[AsOf] = None, dry_run: bool = False) -> list[str]:
        """Delete files under the table's directory that no metadata references.

        Args:
            older_than: Only files older than this ``datetime`` or epoch milliseconds (default: three
                days ago, so that files of commits in progress stay).
            dry_run: Only list them.

        Returns:
            list[str]: the paths removed (or, with ``dry_run``, that would be).
        """
        raise self.unsupported("remove_orphan_files")

    def rewrite_data_files(self, where: Where = None, target_file_size: Optional[int] = None,
                           options: Optional[dict[str, Any]] = None,
                           strategy: Optional[str] = None, sort_order: Optional[str] = None) -> Any:
        """Compaction: rewrite small files (and fold Iceberg delete files in) in one snapshot that changes no row.

        ``compact`` is the same call under Paimon's name.

        Args:
            where: Spark SQL predicate text: only the files a read with it would use.
            target_file_size: The size of the files written, in bytes (default: the table's setting).
            options: The options of Iceberg's ``rewrite_data_files`` procedure (``min-input-files``,
                ``target-file-size-bytes``, ...); an unknown key is an error naming it.
            strategy: ``"binpack"`` (the default) or ``"sort"`` (Iceberg).
            sort_order: With ``strategy="sort"``: ``"c1 ASC NULLS FIRST, c2 DESC"``, or ``"zorder(c1, c2)"``.

        Returns:
            The new snapshot, or None when there was nothing to rewrite.
        """
        raise self.unsupported("rewrite_data_files")

    def compact(self, where: Where = None, target_file_size: Optional[int] = None) -> Any:
        """The same call as ``rewrite_data_files`` (Paimon's name).

        Args:
            where: Spark SQL predicate text: only the files a read with it would use.
            target_file_size: The size of the files written, in bytes.

        Returns:
            The new snapshot, or None when there was nothing to rewrite.
        """
        return self.rewrite_data_files(where, target_file_size)

    def rewrite_manifests(self, branch: Optional[str] = None, spec_id: Optional[int] = None) -> Any:
        """Regroup the current snapshot's manifests to the target manifest size.

        Args:
            branch: The branch whose head is rewritten (Iceberg; ``main`` by default).
            spec_id: Only the manifests of this partition spec (Iceberg).

        Returns:
            The new snapshot.
        """
        raise self.unsupported("rewrite_manifests")

    # ------------------------------------------------------------------ description (SQL, CLI, check)
    def data_files(self, where: Where = None) -> list[FileRow]:
        """The data files a read (with ``where``) would use, as the command line lists them."""
        raise self.unsupported("data_files")

    def shown_properties(self) -> dict[str, Any]:
        """The properties ``SHOW TBLPROPERTIES`` and ``SHOW CREATE TABLE`` show (Paimon: with its primary key)."""
        return dict(self.properties)

    def partition_columns(self) -> list[str]:
        """Columns a ``PARTITION (col = value)`` clause may name: identity-partitioned columns."""
        return []

    def partitioning(self) -> list[str]:
        """The partitioning as terms people read (``years(ts)``, ``bucket(16, id)``, ``dt``)."""
        return []

    def describe_columns(self) -> list[tuple[str, str, Optional[str]]]:
        """(name, Spark type as stored, comment) per top-level column, as DESCRIBE shows them."""
        raise self.unsupported("describe")

    def narrow_column_types(self) -> dict[str, str]:
        """Columns stored in a narrower Spark type than the shared schema's (``{name: "tinyint"}``):
        values written to them are range-checked and narrowed."""
        return {}

    def parse_column_type(self, text: str) -> IcebergType:
        """A column type of DDL text (``ALTER TABLE ... ADD COLUMNS``) as this table stores it."""
        raise self.unsupported("parse_column_type")

    def metadata_tree(self, all_snapshots: bool = True) -> Node:
        """Snapshots -> manifest lists -> manifests -> files, for people to read."""
        raise self.unsupported("metadata_tree")

    def check(self, progress: Optional[Callable[[str], None]] = None) -> Report:
        """Verify the table end to end without Spark (``icefloe check``).

        Args:
            progress: Called with a line of text as each step starts.

        Returns:
            Report: every problem found (empty when the table is sound).
        """
        raise self.unsupported("check")

    # ------------------------------------------------------------------ metadata tables
    def metadata_table_names(self) -> tuple[str, ...]:
        """The metadata (system) tables of this table's format, by name.

        Returns:
            tuple[str, ...]: ``snapshots``, ``files``, ``manifests``, ...
        """
        return ()

    def metadata_table(self, name: str, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                       ref: Optional[str] = None) -> pa.Table:
        """A metadata table (Iceberg) or system table (Paimon) as Arrow.

        Args:
            name: One of ``metadata_table_names()``.
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.

        Returns:
            pyarrow.Table: its rows.
        """
        raise self.unsupported(f"metadata table {name}")

    def manifest_files(self) -> list[dict[str, Any]]:
        """The manifests of the current snapshot, one dict each, in the format's own terms.

        Returns:
            list[dict]: one dict per manifest.
        """
        return self.metadata_table("manifests").to_pylist()

    @property
    def inspect(self) -> Inspect:
        """The metadata tables as Spark DataFrames: ``t.inspect.snapshots()``, ``t.inspect.files()``..."""
        return Inspect(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({getattr(self, 'name', '')!r})"
