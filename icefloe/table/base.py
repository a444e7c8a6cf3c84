"""The table contract: one set of operations, signatures and return types for every format.

``Catalog``, SQL, the command line and ``check`` call tables only through this contract,
never asking a table which format it is. Each format implements what it can; an operation
it does not offer raises :class:`~icefloe.errors.NotSupportedError` naming the operation,
the table and the format (``Table.unsupported``), never a silent partial result.

Conventions shared by both formats:

- time travel is ``snapshot_id=``, ``as_of=`` (a datetime or epoch milliseconds) or
  ``ref=`` (a branch or tag name), at most one of them;
- ``where`` is Spark SQL predicate text (or a Spark Column where Spark evaluates it);
- writes take a Spark DataFrame, a pyarrow Table/RecordBatch or a pandas DataFrame
  and return the new snapshot (None when nothing was committed);
- ``expire_snapshots`` returns an :class:`~icefloe.core.reports.ExpireReport`,
  ``remove_orphan_files`` the paths removed (or, with ``dry_run``, that would be).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import pyarrow as pa

from icefloe.core.reports import Report
from icefloe.core.tree import Node
from icefloe.core.types import Schema
from icefloe.errors import NotSupportedError
from icefloe.table.inspect import Inspect
from icefloe.table.scan import TableScan


class Table:
    """A table of either format. Subclasses: ``IcebergTable``, ``PaimonTable``."""

    #: the table format's name, for display only ("iceberg" or "paimon")
    format: str = ""
    name: str

    # ------------------------------------------------------------------ refusal
    def unsupported(self, operation: str, reason: str = "") -> NotSupportedError:
        """The error for ``operation``, which this table's format does not offer."""
        return NotSupportedError(operation, getattr(self, "name", ""), self.format, reason)

    # ------------------------------------------------------------------ state
    @property
    def location(self) -> str:
        """The table's directory."""
        raise self.unsupported("location")

    @property
    def schema(self) -> Schema:
        """The current schema (icefloe's type system; Paimon field ids are Paimon's)."""
        raise self.unsupported("schema")

    @property
    def properties(self) -> dict:
        """Table properties (Iceberg) or options (Paimon), as a dict."""
        raise self.unsupported("properties")

    def refresh(self) -> "Table":
        """Reload the table's metadata from storage; returns the table."""
        raise self.unsupported("refresh")

    def snapshots(self) -> list:
        """Every snapshot still in the table's metadata, oldest first."""
        raise self.unsupported("snapshots")

    def current_snapshot(self):
        """The snapshot reads see by default, or None for a table never written."""
        raise self.unsupported("current_snapshot")

    def history(self) -> list[dict]:
        """The snapshot log: which snapshot became current when, oldest first (one dict each)."""
        raise self.unsupported("history")

    def refs(self) -> dict:
        """Named references: Iceberg branches and tags, Paimon tags (``{name: ref}``)."""
        raise self.unsupported("refs")

    def snapshot_for(self, snapshot_id: Optional[int] = None, as_of=None, ref: Optional[str] = None):
        """The snapshot a read with these arguments sees: by id, as of a time (datetime or epoch ms)
        or by branch or tag name; the current one without arguments."""
        raise self.unsupported("time travel")

    def schema_for(self, snapshot_id=None, as_of=None, ref: Optional[str] = None) -> Schema:
        """The schema a read with these arguments uses (time travel reads the snapshot's schema)."""
        raise self.unsupported("schema_for")

    # ------------------------------------------------------------------ reads
    def plan_files(self, where=None, snapshot_id: Optional[int] = None, as_of=None,
                   ref: Optional[str] = None) -> list:
        """The data files a read with ``where`` (Spark SQL text) would use, pruned by partition
        values and column statistics."""
        raise self.unsupported("plan_files")

    def to_spark(self, snapshot_id: Optional[int] = None, as_of=None, where=None,
                 columns: Optional[Sequence[str]] = None, ref: Optional[str] = None):
        """The rows as a Spark DataFrame (read by Spark tasks): at the current snapshot or the one
        ``snapshot_id``/``as_of``/``ref`` names, filtered by ``where`` (Spark SQL text or a
        Column; files pruned by it) and limited to ``columns``."""
        raise self.unsupported("to_spark")

    def to_arrow(self, snapshot_id: Optional[int] = None, as_of=None, where=None, ref: Optional[str] = None):
        """The rows as a pyarrow.Table, read on the caller without Spark (small tables and tests)."""
        raise self.unsupported("to_arrow")

    def scan(self, row_filter: Optional[str] = None, selected_fields: Optional[Sequence[str]] = None,
             snapshot_id: Optional[int] = None, as_of=None, ref: Optional[str] = None):
        """A read to run later, as pyiceberg's ``scan``: ``.to_arrow()``, ``.to_pandas()``,
        ``.to_spark()``, ``.plan_files()``. ``row_filter`` is Spark SQL text, ``selected_fields``
        the columns."""
        return TableScan(self, row_filter, selected_fields, snapshot_id, as_of, ref)

    def changelog(self, start_snapshot_id: Optional[int] = None, end_snapshot_id: Optional[int] = None,
                  identifier_columns: Optional[Sequence[str]] = None, compute_updates: Optional[bool] = None,
                  net_changes: bool = False):
        """The row changes of the snapshots after ``start_snapshot_id`` up to ``end_snapshot_id``
        as a Spark DataFrame: the table's columns, ``_change_type`` (INSERT, DELETE,
        UPDATE_BEFORE, UPDATE_AFTER), ``_change_ordinal`` and ``_commit_snapshot_id``, as
        Iceberg's ``create_changelog_view`` shows them."""
        raise self.unsupported("changelog")

    def changes(self, start_snapshot_id: Optional[int] = None, end_snapshot_id: Optional[int] = None):
        """The row changes of the snapshots after ``start_snapshot_id`` up to ``end_snapshot_id``
        as a Spark DataFrame with each row's kind first (``rowkind``: +I, -U, +U, -D), as a stream
        of Paimon's ``audit_log`` shows them; by default from ``changelog`` (updates computed
        where the table has identifier fields)."""
        from pyspark.sql import functions as F

        df = self.changelog(start_snapshot_id, end_snapshot_id)
        kind = F.expr("CASE _change_type WHEN 'INSERT' THEN '+I' WHEN 'DELETE' THEN '-D' "
                      "WHEN 'UPDATE_BEFORE' THEN '-U' ELSE '+U' END")
        names = [c for c in df.columns if c not in ("_change_type", "_change_ordinal", "_commit_snapshot_id")]
        return df.orderBy("_change_ordinal").select(kind.alias("rowkind"), *[F.col(f"`{c}`") for c in names])

    def audit_log(self, snapshot_id: Optional[int] = None, as_of=None, ref: Optional[str] = None):
        """The table's rows with each row's kind first (``rowkind``: +I, -U, +U, -D), as Paimon's
        ``audit_log`` system table shows them."""
        raise self.unsupported("audit_log")

    # ------------------------------------------------------------------ writes
    def append(self, data, branch: Optional[str] = None):
        """Append a Spark DataFrame or pyarrow.Table as one snapshot; with ``branch``, to that branch."""
        raise self.unsupported("append")

    def overwrite(self, data, partition: Optional[dict] = None, dynamic: bool = False,
                  branch: Optional[str] = None, where: Optional[str] = None):
        """Replace rows with ``data`` in one snapshot: all of them; with ``partition``
        (``{column: value}``, some or all partition columns) those of the matching
        partitions; with ``dynamic=True`` those of the partitions ``data`` has rows in; with
        ``where`` (Spark SQL text, like Delta's ``replaceWhere``) the rows matching it, and
        every row of ``data`` must match it. Returns the snapshot (``where``: the counts
        and the snapshot id, as ``delete`` does)."""
        raise self.unsupported("overwrite")

    def truncate(self, branch: Optional[str] = None):
        """Remove every row in one snapshot, reading no data file (SQL ``TRUNCATE TABLE``)."""
        raise self.unsupported("truncate")

    def commit(self, messages: Sequence[Any], overwrite: bool = False, branch: Optional[str] = None):
        """Commit what Spark tasks or the Arrow writer wrote elsewhere, as one snapshot: the
        format's commit messages (Iceberg ``DataFile``s, Paimon ``CommitMessage``s)."""
        raise self.unsupported("commit")

    def commit_files(self, files: Sequence[Any], overwrite: bool = False, branch: Optional[str] = None):
        """Same as :meth:`commit`."""
        return self.commit(files, overwrite=overwrite, branch=branch)

    def foreach_batch(self, overwrite: bool = False):
        """A function for ``df.writeStream.foreachBatch(...)``: each micro-batch written in Spark
        tasks and committed as one snapshot, exactly once per query and batch id (a batch
        replayed after a restart is recognised and skipped). Any output mode works: with
        ``update`` a primary-key table takes each batch's changed rows as upserts; with
        ``overwrite=True`` each batch replaces the table."""
        from icefloe.spark.streaming import foreach_batch_writer

        return foreach_batch_writer(self, overwrite)

    # ------------------------------------------------------------------ row-level changes
    def delete(self, where, isolation_level: Optional[str] = None) -> dict:
        """``DELETE FROM t WHERE where`` (Spark SQL text or a Column) in one snapshot; returns
        ``{updated, deleted, inserted, snapshot_id}``. ``isolation_level`` (Iceberg:
        ``serializable`` or ``snapshot``) decides which concurrent commits conflict."""
        raise self.unsupported("delete")

    def update(self, set: dict, where=None, isolation_level: Optional[str] = None) -> dict:
        """``UPDATE t SET col = value, ... WHERE where``: ``set`` maps column names to Spark SQL
        expressions (text), Columns or literals; returns the counts and the snapshot id."""
        raise self.unsupported("update")

    def merge(self, source, on, target_alias: str = "t", source_alias: str = "s",
              isolation_level: Optional[str] = None):
        """``MERGE INTO t USING source s ON on``: returns a builder; add ``when_matched_update``,
        ``when_matched_delete``, ``when_not_matched_insert[_all]``,
        ``when_not_matched_by_source_update/delete`` clauses, then ``execute()``."""
        raise self.unsupported("merge")

    def writing_to(self, branch: Optional[str] = None, wap_id: Optional[str] = None) -> "Table":
        """This table with its writes (append, overwrite, truncate, delete, update, merge) going to
        ``branch``; with ``wap_id`` staged, as Iceberg's write-audit-publish does: each snapshot is
        added with summary ``wap.id`` and no branch moves, until ``publish_changes``."""
        raise self.unsupported("writes to a branch or staged (write-audit-publish)")

    def delete_by_key(self, keys):
        """Delete the rows whose key columns equal a row of ``keys`` (Iceberg: equality delete
        files, no data file read)."""
        raise self.unsupported("delete_by_key")

    # ------------------------------------------------------------------ evolution
    def update_schema(self):
        """A schema change, committed when the ``with`` block ends: ``add_column``,
        ``rename_column``, ``update_column``, ``delete_column``, ``move_*``."""
        raise self.unsupported("update_schema")

    def update_spec(self):
        """A partition spec change (Iceberg), committed when the ``with`` block ends:
        ``add_field("bucket(4, id)")``, ``remove_field``, ``rename_field``."""
        raise self.unsupported("partition evolution (update_spec)")

    def replace_sort_order(self, *terms: str) -> dict:
        """Declare the table's sort order (``"id"``, ``"ts desc nulls last"``); no terms: unsorted."""
        raise self.unsupported("replace_sort_order")

    def update_properties(self, set: Optional[dict] = None, remove: Optional[Sequence[str]] = None) -> dict:
        """Set and remove table properties in one commit; returns the properties."""
        raise self.unsupported("update_properties")

    # ------------------------------------------------------------------ refs
    def create_tag(self, name: str, snapshot_id: Optional[int] = None, max_ref_age_ms: Optional[int] = None):
        """Name snapshot ``snapshot_id`` (default: the current one) ``name``."""
        raise self.unsupported("create_tag")

    def replace_tag(self, name: str, snapshot_id=None, max_ref_age_ms: Optional[int] = None):
        """Point tag ``name`` at another snapshot."""
        raise self.unsupported("replace_tag")

    def drop_tag(self, name: str):
        """Remove tag ``name`` (the snapshot stays until expired)."""
        raise self.unsupported("drop_tag")

    def create_branch(self, name: str, snapshot_id: Optional[int] = None, min_snapshots_to_keep: Optional[int] = None,
                      max_snapshot_age_ms: Optional[int] = None, max_ref_age_ms: Optional[int] = None):
        """Create branch ``name`` at ``snapshot_id`` (default: the current one), with its
        retention settings."""
        raise self.unsupported("create_branch")

    def replace_branch(self, name: str, snapshot_id, min_snapshots_to_keep: Optional[int] = None,
                       max_snapshot_age_ms: Optional[int] = None, max_ref_age_ms: Optional[int] = None):
        """Point branch ``name`` at ``snapshot_id``."""
        raise self.unsupported("replace_branch")

    def rename_branch(self, name: str, new_name: str):
        """Rename branch ``name`` to ``new_name``."""
        raise self.unsupported("rename_branch")

    def drop_branch(self, name: str):
        """Remove branch ``name``."""
        raise self.unsupported("drop_branch")

    def fast_forward(self, branch: str, source: str):
        """Move ``branch`` to the head of ``source`` when ``branch`` is its ancestor."""
        raise self.unsupported("fast_forward")

    # ------------------------------------------------------------------ history changes
    def rollback_to_snapshot(self, snapshot_id: int):
        """Make snapshot ``snapshot_id`` (an ancestor of the current one) current again."""
        raise self.unsupported("rollback_to_snapshot")

    def rollback_to_timestamp(self, as_of):
        """Make the snapshot that was current at ``as_of`` current again."""
        raise self.unsupported("rollback_to_timestamp")

    def rollback_to_tag(self, name: str):
        """Make the snapshot tag ``name`` names current again."""
        raise self.unsupported("rollback_to_tag")

    def set_current_snapshot(self, snapshot_id: int):
        """Make any snapshot of the table current."""
        raise self.unsupported("set_current_snapshot")

    def cherry_pick(self, snapshot_id: int):
        """Apply the changes of snapshot ``snapshot_id`` (an append or overwrite, for example on
        a branch) to the current state as a new snapshot."""
        raise self.unsupported("cherry_pick")

    def ancestors(self, snapshot_id: Optional[int] = None) -> list:
        """Snapshot ``snapshot_id`` (default: the current one) and its parents, newest first."""
        raise self.unsupported("ancestors")

    def publish_changes(self, wap_id: str):
        """Cherry-pick the snapshot staged under write-audit-publish id ``wap_id`` into the current
        state; returns the staged snapshot."""
        raise self.unsupported("publish_changes")

    # ------------------------------------------------------------------ maintenance
    def expire_snapshots(self, older_than=None, retain_last: Optional[int] = None, now_ms: Optional[int] = None,
                         snapshot_ids=()):
        """Remove snapshots older than ``older_than`` (datetime or epoch ms), keeping at least
        ``retain_last``, and those of ``snapshot_ids`` (Iceberg), and delete the files only they
        used; returns an ``ExpireReport``."""
        raise self.unsupported("expire_snapshots")

    def remove_orphan_files(self, older_than=None, dry_run: bool = False) -> list:
        """Delete files under the table directory that no metadata references and that are
        older than ``older_than`` (default: three days); returns their paths. ``dry_run``
        only lists them."""
        raise self.unsupported("remove_orphan_files")

    def rewrite_data_files(self, where=None, target_file_size: Optional[int] = None, options: Optional[dict] = None,
                           strategy: Optional[str] = None, sort_order: Optional[str] = None):
        """Compaction: rewrite small files (and fold Iceberg delete files in) of the files a
        read with ``where`` would use, in one snapshot that changes no row. ``options``,
        ``strategy`` and ``sort_order`` are those of Iceberg's rewrite_data_files procedure."""
        raise self.unsupported("rewrite_data_files")

    def compact(self, where=None, target_file_size: Optional[int] = None):
        """Dedicated compaction, as Paimon names it: ``rewrite_data_files``."""
        return self.rewrite_data_files(where, target_file_size)

    def rewrite_manifests(self, branch: Optional[str] = None, spec_id: Optional[int] = None):
        """Regroup the manifests of the current snapshot to the target manifest size (Iceberg's
        ``spec_id``: only those of that partition spec)."""
        raise self.unsupported("rewrite_manifests")

    # ------------------------------------------------------------------ description (SQL, CLI, check)
    def partition_columns(self) -> list[str]:
        """Columns a ``PARTITION (col = value)`` clause may name: identity-partitioned columns."""
        return []

    def partitioning(self) -> list[str]:
        """The partitioning as terms people read (``years(ts)``, ``bucket(16, id)``, ``dt``)."""
        return []

    def describe_columns(self) -> list[tuple]:
        """(name, Spark type as stored, comment) per top-level column, as DESCRIBE shows them."""
        raise self.unsupported("describe")

    def narrow_column_types(self) -> dict:
        """Columns stored in a narrower Spark type than the shared schema's (``{name: "tinyint"}``):
        values written to them are range-checked and narrowed."""
        return {}

    def parse_column_type(self, text: str):
        """A column type of DDL text (``ALTER TABLE ... ADD COLUMNS``) as this table stores it."""
        raise self.unsupported("parse_column_type")

    def metadata_tree(self, all_snapshots: bool = True) -> Node:
        """Snapshots -> manifest lists -> manifests -> files, for people to read."""
        raise self.unsupported("metadata_tree")

    def check(self, progress: Optional[Callable[[str], None]] = None) -> Report:
        """Verify the table end to end without Spark (``icefloe check``): every problem found."""
        raise self.unsupported("check")

    # ------------------------------------------------------------------ metadata tables
    def metadata_table_names(self) -> tuple:
        """The metadata (system) tables of this table's format, by name."""
        return ()

    def metadata_table(self, name: str, snapshot_id: Optional[int] = None, as_of=None,
                       ref: Optional[str] = None) -> pa.Table:
        """Metadata table ``name`` (``snapshots``, ``files``, ``manifests``...) as Arrow, of the current
        snapshot or the one time travel chooses (tables describing the whole table ignore it)."""
        raise self.unsupported(f"metadata table {name}")

    def manifest_files(self) -> list[dict]:
        """The manifests of the current snapshot, one dict each, in the format's own terms."""
        return self.metadata_table("manifests").to_pylist()

    @property
    def inspect(self) -> Inspect:
        """The metadata tables as Spark DataFrames: ``t.inspect.snapshots()``, ``t.inspect.files()``..."""
        return Inspect(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({getattr(self, 'name', '')!r})"
