# pyright: strict
"""An Iceberg table's state and its metadata operations, without a data plane.

``BaseTable`` (Iceberg's name for a table over ``TableOperations``) loads the current
metadata, chooses snapshots for reads (spec, "Snapshots" and "Snapshot References"),
plans scans, reads small tables with pyarrow, commits data files written elsewhere, and
carries out the metadata-only changes (schema and partition evolution, sort order,
properties, branches and tags, rollback, expiry). Writes through Spark, row-level
changes and Spark reads are the user-facing table's (``icefloe.table``).
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Optional, Sequence, Union

import pyarrow as pa

from icefloe.core.io import FileIO
from icefloe.core.reports import ExpireReport
from icefloe.core.timetravel import AsOf, to_epoch_ms
from icefloe.core.types import Schema
from icefloe.core.types import to_arrow_schema
from icefloe.errors import NoSuchSnapshotError
from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.manifest_reader import warm_decoder
from icefloe.iceberg.append import Append
from icefloe.iceberg.arrow_read import read_by_field_id, read_data_file
from icefloe.iceberg.delete_files import apply_deletes_arrow
from icefloe.iceberg.operations import TableOperations
from icefloe.iceberg.maintenance import expire_snapshots, remove_orphan_files, update_properties
from icefloe.iceberg.orphan_paths import PathEquivalence
from icefloe.iceberg.manifest import DataFile
from icefloe.iceberg.overwrite import Overwrite
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.refs import (
    BRANCH,
    STAGED_WAP_ID,
    TAG,
    ancestors,
    cherry_pick,
    commit_ref_change,
    create_branch,
    create_tag_change,
    drop_ref_change,
    fast_forward_change,
    rename_branch_change,
    replace_ref_change,
    rollback_to_snapshot_change,
    rollback_to_timestamp_change,
    set_current_snapshot_change,
    staged_snapshot,
)
from icefloe.iceberg.rewrite import RewriteManifests
from icefloe.iceberg.schema import default_value
from icefloe.iceberg.metadata_commit import MetadataChange
from icefloe.iceberg.scan import FileScanTask
from icefloe.iceberg.schema_update import UpdateSchema
from icefloe.iceberg.snapshot import Snapshot, SnapshotRef
from icefloe.iceberg.snapshot_producer import SnapshotProducer
from icefloe.iceberg.sort_order import default_order, replace_sort_order
from icefloe.iceberg.spec_update import UpdateSpec
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata

if TYPE_CHECKING:
    from typing_extensions import Self

    from icefloe.iceberg.transaction import Transaction


class BaseTable:
    format = "iceberg"
    # where this table object's writes go (``writing_to``): the branch, and a write-audit-publish
    # id that stages each write's snapshot instead of moving the branch
    _write_branch: str = MAIN_BRANCH
    _wap_id: Optional[str] = None

    def __init__(self, name: str, ops: TableOperations):
        self.name = name
        self.ops = ops
        self.io: FileIO = ops.io
        self._version, self._meta = ops.load()
        warm_decoder(self._meta.current_snapshot)      # a plan is likely next: its decoder loads meanwhile

    # ------------------------------------------------------------------ state
    def refresh(self) -> "BaseTable":
        self._version, self._meta = self.ops.load()
        warm_decoder(self._meta.current_snapshot)
        return self

    @property
    def metadata(self) -> TableMetadata:
        return self._meta

    @property
    def metadata_location(self) -> str:
        return self.ops.metadata_path(self._version)

    @property
    def location(self) -> str:
        return self._meta.location

    @property
    def schema(self) -> Schema:
        return self._meta.schema

    @property
    def spec(self) -> PartitionSpec:
        return self._meta.spec

    @property
    def properties(self) -> dict[str, str]:
        return dict(self._meta.properties)

    def snapshots(self) -> list[Snapshot]:
        return list(self.refresh()._meta.snapshots)

    def current_snapshot(self) -> Optional[Snapshot]:
        return self.refresh()._meta.current_snapshot

    def history(self) -> list[dict[str, Any]]:
        return list(self.refresh()._meta.snapshot_log)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.location!r})"

    # ------------------------------------------------------------------ snapshots for reads
    def snapshot_for(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                     ref: Optional[str] = None) -> Optional[Snapshot]:
        meta = self.refresh()._meta
        if snapshot_id is not None:
            return meta.snapshot_by_id(int(snapshot_id))
        if as_of is not None:
            return meta.snapshot_as_of(to_epoch_ms(as_of))
        if ref is not None:
            r = meta.refs.get(ref)
            if r is None:
                raise NoSuchSnapshotError(f"table {self.name} has no branch or tag {ref!r}")
            return meta.snapshot_by_id(r.snapshot_id)
        return meta.current_snapshot

    def plan_files(self, where: object = None, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                   ref: Optional[str] = None) -> list[DataFile]:
        """The data files a read would hand Spark, after pruning."""
        return [t.file for t in self.plan_tasks(where, snapshot_id, as_of, ref)]

    def plan_tasks(self, where: object = None, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                   ref: Optional[str] = None) -> list[FileScanTask]:
        return self.plan_snapshot(self.snapshot_for(snapshot_id, as_of, ref), where)

    def iter_tasks(self, where: object = None, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                   ref: Optional[str] = None) -> Iterator[FileScanTask]:
        """``plan_tasks``' tasks, streamed (``scan.iter_plan_files``): for a caller that goes through
        them once, without holding one per file of the table."""
        return self.iter_snapshot(self.snapshot_for(snapshot_id, as_of, ref), where)

    def iter_snapshot(self, snap: Optional[Snapshot], where: object = None) -> Iterator[FileScanTask]:
        """``plan_snapshot``'s tasks, streamed where they are planned here."""
        tasks = self.served_plan(snap, where)
        return iter(tasks) if tasks is not None else scan_mod.iter_plan_files(self.io, self._meta, snap, where)

    def plan_snapshot(self, snap: Optional[Snapshot], where: object = None) -> list[FileScanTask]:
        """Scan tasks (data files with their delete files) of ``snap`` that may match ``where``:
        planned by the catalog's server when its operations plan scans (a REST catalog with
        server-side planning on), else here."""
        tasks = self.served_plan(snap, where)
        return tasks if tasks is not None else scan_mod.plan_files(self.io, self._meta, snap, where)

    def served_plan(self, snap: Optional[Snapshot], where: object = None) -> Optional[list[FileScanTask]]:
        """The scan tasks of ``snap`` as the catalog's server plans them, when its operations plan
        scans (a REST catalog with server-side planning on); None: plan here."""
        remote = getattr(self.ops, "plan_scan", None)
        return remote(self._meta, snap, where) if remote is not None else None

    def schema_for(self, snapshot_id: Union[int, Snapshot, None] = None, as_of: Optional[AsOf] = None,
                   ref: Optional[str] = None) -> Schema:
        """The schema of a snapshot (by id, time or ref; none: the current schema). A ``Snapshot``
        passed as the first argument is taken as that snapshot."""
        if isinstance(snapshot_id, Snapshot) or (snapshot_id is None and (as_of is not None or ref is not None)):
            snap = snapshot_id if isinstance(snapshot_id, Snapshot) else self.snapshot_for(None, as_of, ref)
        elif snapshot_id is not None:
            snap = self.snapshot_for(snapshot_id)
        else:
            snap = None
        if snap is None or snap.schema_id is None:
            return self._meta.schema
        return self._meta.schema_by_id(snap.schema_id)

    def read_schema(self, snap: Optional[Snapshot], snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                    ref: Optional[str] = None) -> Schema:
        """The schema a read uses, as Iceberg chooses it: the current schema for the current state
        and branches; the snapshot's own schema for time travel by id, by time or to a tag."""
        is_tag = ref is not None and getattr(self._meta.refs.get(ref), "type", "") == "tag"
        if snapshot_id is None and as_of is None and not is_tag:
            return self._meta.schema
        return self.schema_for(snap)

    # ------------------------------------------------------------------ reads
    def to_arrow(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, where: object = None,
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
        snap = self.snapshot_for(snapshot_id, as_of, ref)
        schema = self.read_schema(snap, snapshot_id, as_of, ref)
        target = to_arrow_schema(schema)
        row_filter = None
        if isinstance(where, str) and where.strip():
            from icefloe.core import expressions as ex
            from icefloe.core.expressions.arrow import to_arrow_filter
            from icefloe.errors import IcefloeError, UnsupportedFilterError

            try:
                row_filter = to_arrow_filter(ex.bind(ex.parse_predicate(where), schema))
            except UnsupportedFilterError:
                raise
            except IcefloeError as e:
                raise UnsupportedFilterError(f"cannot filter with {where!r} without Spark: {e}") from None
        tasks = self.plan_snapshot(snap, where)
        defaults = {f.field_id: default_value(f.field_type, f.initial_default) for f in schema.fields
                    if f.initial_default is not None}
        parts: list[pa.Table] = []
        for t in tasks:
            part = read_by_field_id(read_data_file(t.file, self.io), target,
                                    self._meta.properties.get("schema.name-mapping.default"), t.path,
                                    {**defaults, **t.identity_values})
            parts.append(apply_deletes_arrow(part, t.path, t.deletes, schema, self.io))
        out = pa.concat_tables(parts) if parts else target.empty_table()
        return out.filter(row_filter) if row_filter is not None else out

    # ------------------------------------------------------------------ writes
    @property
    def write_branch(self) -> str:
        """The branch this table object's writes go to (``main`` unless ``writing_to`` said otherwise)."""
        return self._write_branch

    def writing_to(self, branch: Optional[str] = None, wap_id: Optional[str] = None) -> Self:
        """This table with its writes going to ``branch`` (created from main's head by the first
        write when missing), and with ``wap_id`` staged: each write's snapshot is added with
        summary ``wap.id`` and no branch moves (Iceberg's write-audit-publish, published later
        with ``cherry_pick`` or ``publish_changes``)."""
        out = copy.copy(self)
        out._write_branch = branch or MAIN_BRANCH
        out._wap_id = wap_id
        return out

    def _commit(self, change: SnapshotProducer, branch: str) -> Snapshot:
        if self._wap_id is not None:
            change.stage_only = True
            change.summary_extra[STAGED_WAP_ID] = self._wap_id
        try:
            meta = change.commit(self.ops, branch)
        except BaseException:
            for f in change.added:
                self.io.delete(f.file_path)
            raise
        self.refresh()
        return meta.snapshot_by_id(change.snapshot_id if change.snapshot_id is not None
                                   else meta.refs[branch].snapshot_id)

    def commit_files(self, files: Sequence[DataFile], overwrite: bool = False, branch: Optional[str] = None,
                     summary: Optional[Mapping[str, str]] = None) -> Snapshot:
        """Commit data files written elsewhere (e.g. by Spark tasks of the data source) to ``branch``
        (``main`` by default); ``summary``: properties the writer adds to the snapshot summary (the
        engine that wrote, its application id)."""
        produce = Overwrite.replace_all if overwrite else Append
        return self._commit(produce(list(files), summary_extra=dict(summary or {})),
                            MAIN_BRANCH if branch is None else branch)

    def commit_existing_files(self, files: Sequence[DataFile], summary_extra: Optional[Mapping[str, str]] = None,
                              branch: str = MAIN_BRANCH) -> Snapshot:
        """Commit, in one ``append`` snapshot, data files this table did not write (files imported
        where they are); a failed commit leaves them alone, since they are not the table's to delete."""
        change = Append(list(files), summary_extra=dict(summary_extra or {}))
        meta = change.commit(self.ops, branch)
        self.refresh()
        assert change.snapshot_id is not None       # set by the commit
        return meta.snapshot_by_id(change.snapshot_id)

    def commit_change(self, change: SnapshotProducer, branch: str) -> Snapshot:
        """Commit ``change`` (a snapshot producer: append, overwrite, row delta, rewrite) to ``branch``
        as this table object's writes go (a write-audit-publish id stages it); the files it adds are
        deleted when the commit fails. The seam the data plane commits through."""
        return self._commit(change, branch)

    def rewrite_manifests(self, branch: str = MAIN_BRANCH, spec_id: Optional[int] = None, *,
                          sort_by: Optional[Sequence[str]] = None,
                          summary: Optional[Mapping[str, str]] = None) -> Snapshot:
        """Regroup the live manifest entries into manifests of commit.manifest.target-size-bytes
        (with ``spec_id``: only the manifests of that partition spec), clustered by the partition
        fields ``sort_by`` names first (all of them, in spec order, by default)."""
        return self._commit(RewriteManifests(summary_extra=dict(summary or {}), spec_id=spec_id, sort_by=sort_by),
                            branch)


    def transaction(self) -> Transaction:
        """``with t.transaction() as tx:`` -- schema, spec, sort order, property and ref changes and
        appends staged in order and committed as ONE new metadata version when the block ends;
        nothing is committed when it raises (``icefloe.iceberg.transaction``)."""
        from icefloe.iceberg.transaction import Transaction

        return Transaction(self.ops, on_commit=self.refresh)

    # ------------------------------------------------------------------ evolution and lifecycle (issue 5)
    def update_schema(self) -> UpdateSchema:
        """``with t.update_schema() as u: u.add_column("c", "string")`` -- one metadata commit on exit."""

        return UpdateSchema(self.ops, on_commit=self.refresh)

    def update_spec(self) -> UpdateSpec:
        """``with t.update_spec() as u: u.add_field("month(ts)")`` -- a new default partition spec on exit."""

        return UpdateSpec(self.ops, on_commit=self.refresh)

    def replace_sort_order(self, *terms: str) -> dict[str, Any]:
        """Declare the table's sort order (``"id"``, ``"ts desc nulls last"``, ``"truncate(4, name)"``);
        no terms makes the table unsorted. Writers sort each data file by it. Returns the order."""

        replace_sort_order(self.ops, list(terms))
        order_id, fields = default_order(self.refresh()._meta)
        return {"order-id": order_id, "fields": fields}

    def update_properties(self, set: Optional[dict[str, Any]] = None,
                          remove: Optional[Sequence[str]] = None) -> dict[str, str]:
        """Set and remove table properties in one commit (the table comment is property ``comment``)."""

        update_properties(self.ops, set, remove)
        return self.refresh().properties

    def refs(self) -> dict[str, SnapshotRef]:
        return dict(self.refresh()._meta.refs)

    def _ref_change(self, change: MetadataChange, name: str) -> Optional[SnapshotRef]:

        meta = commit_ref_change(self.ops, change)
        self.refresh()
        return meta.refs.get(name)

    def create_tag(self, name: str, snapshot_id: Optional[int] = None,
                   max_ref_age_ms: Optional[int] = None) -> Optional[SnapshotRef]:

        return self._ref_change(create_tag_change(name, snapshot_id, max_ref_age_ms), name)

    def create_branch(self, name: str, snapshot_id: Optional[int] = None, min_snapshots_to_keep: Optional[int] = None,
                      max_snapshot_age_ms: Optional[int] = None,
                      max_ref_age_ms: Optional[int] = None) -> SnapshotRef:

        meta = create_branch(self.ops, name, snapshot_id, min_snapshots_to_keep, max_snapshot_age_ms, max_ref_age_ms)
        self.refresh()
        return meta.refs[name]

    def replace_tag(self, name: str, snapshot_id: Union[int, str, None] = None,
                    max_ref_age_ms: Optional[int] = None) -> Optional[SnapshotRef]:
        """Point tag ``name`` at ``snapshot_id`` (or at the snapshot of the ref named so; by default
        the current snapshot, main's head)."""

        target = MAIN_BRANCH if snapshot_id is None else snapshot_id
        return self._ref_change(replace_ref_change(name, TAG, target, max_ref_age_ms=max_ref_age_ms), name)

    def replace_branch(self, name: str, snapshot_id: Union[int, str, None],
                       min_snapshots_to_keep: Optional[int] = None, max_snapshot_age_ms: Optional[int] = None,
                       max_ref_age_ms: Optional[int] = None) -> Optional[SnapshotRef]:
        """Point branch ``name`` at ``snapshot_id`` (or at the snapshot of the ref named so)."""

        return self._ref_change(replace_ref_change(
            name, BRANCH, snapshot_id, min_snapshots_to_keep=min_snapshots_to_keep,
            max_snapshot_age_ms=max_snapshot_age_ms, max_ref_age_ms=max_ref_age_ms), name)

    def rename_branch(self, name: str, new_name: str) -> Optional[SnapshotRef]:

        return self._ref_change(rename_branch_change(name, new_name), new_name)

    def drop_tag(self, name: str) -> None:

        self._ref_change(drop_ref_change(name, TAG), name)

    def drop_branch(self, name: str) -> None:

        self._ref_change(drop_ref_change(name, BRANCH), name)

    def fast_forward(self, branch: str, source: str) -> Optional[SnapshotRef]:
        """Move ``branch`` to the head of ``source`` if that head descends from ``branch``'s."""

        return self._ref_change(fast_forward_change(branch, source), branch)

    def _current_after_ref_change(self) -> Snapshot:
        snap = self._meta.current_snapshot
        assert snap is not None                 # main was just pointed at a snapshot
        return snap

    def rollback_to_snapshot(self, snapshot_id: int) -> Snapshot:
        """Make ``snapshot_id``, an ancestor of the current snapshot, current again."""

        self._ref_change(rollback_to_snapshot_change(snapshot_id), MAIN_BRANCH)
        return self._current_after_ref_change()

    def rollback_to_timestamp(self, as_of: AsOf) -> Snapshot:
        """Make current the newest ancestor of the current snapshot committed before ``as_of``."""

        self._ref_change(rollback_to_timestamp_change(to_epoch_ms(as_of)), MAIN_BRANCH)
        return self._current_after_ref_change()

    def set_current_snapshot(self, snapshot_id: int) -> Snapshot:

        self._ref_change(set_current_snapshot_change(snapshot_id), MAIN_BRANCH)
        return self._current_after_ref_change()

    def cherry_pick(self, snapshot_id: int) -> Snapshot:
        """Apply an append snapshot (e.g. staged on a branch) to main: fast-forward or a new append."""

        cherry_pick(self.ops, snapshot_id)
        self.refresh()
        return self._current_after_ref_change()

    def ancestors(self, snapshot_id: Optional[int] = None) -> list[Snapshot]:
        """Snapshot ``snapshot_id`` (default: the current one) and its parents, newest first."""

        meta = self.refresh()._meta
        if snapshot_id is None:
            snapshot_id = meta.current_snapshot_id
        else:
            meta.snapshot_by_id(int(snapshot_id))       # NoSuchSnapshotError for an unknown id
        return list(ancestors(meta, snapshot_id))

    def publish_changes(self, wap_id: str) -> Snapshot:
        """Cherry-pick the snapshot staged under ``wap_id`` into main; returns the staged snapshot."""

        staged = staged_snapshot(self.refresh()._meta, wap_id)
        cherry_pick(self.ops, staged.snapshot_id)
        self.refresh()
        return staged

    def expire_snapshots(self, older_than: Optional[AsOf] = None, retain_last: Optional[int] = None,
                         now_ms: Optional[int] = None, snapshot_ids: Iterable[int] = ()) -> ExpireReport:
        """Expire snapshots by the retention policy of every ref, and ``snapshot_ids``; returns an
        ExpireReport. ``now_ms``: the time the table's age settings count back from (default the
        clock)."""

        report = expire_snapshots(self.ops, older_than, retain_last, snapshot_ids=snapshot_ids, now=now_ms)
        self.refresh()
        return report

    def remove_orphan_files(self, older_than: Optional[AsOf] = None, dry_run: bool = False,
                            location: Optional[str] = None, listing: Optional[list[tuple[str, int]]] = None,
                            equal_schemes: Optional[Mapping[str, str]] = None,
                            equal_authorities: Optional[Mapping[str, str]] = None,
                            prefix_mismatch_mode: Optional[str] = None) -> list[str]:
        """Delete files under the table location that no metadata refers to (default: older than 3 days);
        ``location``: only under that directory of the table; ``listing``: ``(path, mtime ms)`` of
        the files to consider instead of listing them. A listed file the metadata names under
        another scheme or authority: ``equal_schemes`` / ``equal_authorities`` say which are the
        same, ``prefix_mismatch_mode`` (``ERROR``, ``IGNORE``, ``DELETE``) what to do with the rest."""
        equivalence = PathEquivalence.of(equal_schemes, equal_authorities, prefix_mismatch_mode)
        return remove_orphan_files(self.ops, older_than, dry_run, location, listing, equivalence)
