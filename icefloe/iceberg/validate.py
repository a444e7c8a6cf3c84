# pyright: strict
"""Conflict validation: what a commit must check against snapshots committed since it was planned
(optimistic concurrency, spec "Commit Conflict Resolution and Retry"; the checks Java's
``RowDelta``, ``OverwriteFiles`` and ``RewriteFiles`` run before committing).

A row-level change, an overwrite by filter or a compaction is planned against one
snapshot (its *read snapshot*) and committed on top of whatever is current by then.
Before each commit attempt the snapshots committed in between are inspected, oldest
first, each by a check named for the conflict it rules out:

* ``validate_read_snapshot_is_ancestor``: the read snapshot is still in the branch's
  history (not rolled back or expired);
* ``validate_removed_files_live``: files this change removes are still live (run by the
  producer while it rewrites the manifests that hold them);
* ``validate_referenced_files_not_removed``: data files our position deletes point at
  were not removed by another writer;
* ``validate_no_conflicting_deletes``: no delete file added in between may apply to the
  files this change rewrites or deletes from (same partition, or an unpartitioned
  equality delete): the other writer deleted rows we rewrote;
* ``validate_no_conflicting_data``: under ``serializable`` isolation (the default) no
  data file added in between may fall in this change's scope (its partitions and, when
  given, its row filter judged on the new file's partition and column metrics): a row
  another writer added could have matched our predicate. ``snapshot`` isolation skips it.

Appends to partitions outside the scope do not conflict, so such a commit simply
retries on top of them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from icefloe.core.expressions import Expr
from icefloe.core.io import FileIO
from icefloe.errors import CommitConflictError
from icefloe.iceberg import evaluators as ev
from icefloe.iceberg.manifest import DATA, EQUALITY_DELETES, DataFile
from icefloe.iceberg.manifest_reader import files_changed_by
from icefloe.iceberg.scan import bind_row_filter
from icefloe.iceberg.snapshot import Snapshot
from icefloe.iceberg.table_metadata import TableMetadata

SERIALIZABLE, SNAPSHOT = "serializable", "snapshot"
ISOLATION_LEVELS = (SERIALIZABLE, SNAPSHOT)


def isolation_level(properties: Mapping[str, str], operation: str, override: Optional[str] = None) -> str:
    """``write.<operation>.isolation-level`` (delete, update, merge); serializable by default."""
    level = (override or properties.get(f"write.{operation}.isolation-level", SERIALIZABLE)).lower()
    if level not in ISOLATION_LEVELS:
        raise ValueError(f"unknown isolation level {level!r}; expected one of {ISOLATION_LEVELS}")
    return level


@dataclass
class Validation:
    """What a commit must check against commits made since ``read_snapshot_id``."""

    read_snapshot_id: Optional[int]
    isolation: str = SERIALIZABLE
    operation: str = "row-level change"        # names the change in conflict messages
    scope_partitions: Optional[set[tuple[int, tuple[Any, ...]]]] = None  # {(spec_id, partition)}; None: all
    conflict_filter: object = None             # row filter (Spark SQL text or expression) or None
    protected_files: set[str] = field(default_factory=set[str])      # data files removed or pointed at
    protected_partitions: set[tuple[int, tuple[Any, ...]]] = field(
        default_factory=set[tuple[int, tuple[Any, ...]]])          # their (spec_id, partition)
    referenced_files: set[str] = field(default_factory=set[str])      # data files our position deletes point at


class ChangeScope:
    """Whether a data file may hold rows of a change's scope: its partitions, then its row
    filter projected onto each partition spec and judged on the file's column metrics."""

    def __init__(self, meta: TableMetadata, v: Validation):
        self.meta, self.v = meta, v
        self._bound = False
        self._filter: Optional[Expr] = None
        self._partition_evals: dict[int, ev.PartitionEvaluator] = {}
        self._metrics_eval: Optional[ev.MetricsEvaluator] = None

    def may_contain(self, f: DataFile) -> bool:
        v = self.v
        if v.scope_partitions is not None and (f.spec_id, f.partition) not in v.scope_partitions:
            return False
        if v.conflict_filter is None:
            return True
        if not self._bound:   # bound once, and only when a file reaches this far
            self._filter = bind_row_filter(self.meta, v.conflict_filter)
            self._bound = True
        if self._filter is None:
            return True
        pe = self._partition_evals.get(f.spec_id)
        if pe is None:
            meta = self.meta
            spec = meta.spec_by_id(f.spec_id)
            pe = self._partition_evals[f.spec_id] = ev.PartitionEvaluator(
                spec.partition_type(meta.schema), ev.project_inclusive(self._filter, spec, meta.schema))
        if self._metrics_eval is None:
            self._metrics_eval = ev.MetricsEvaluator(self.meta.schema, self._filter)
        return pe.eval(f.partition) and self._metrics_eval.may_match(f)


def validate_read_snapshot_is_ancestor(meta: TableMetadata, head_id: Optional[int],
                                       read_snapshot_id: Optional[int]) -> list[Snapshot]:
    """The snapshots committed after ``read_snapshot_id`` up to ``head_id``, newest first; a
    conflict if the read snapshot is no longer an ancestor of the head."""
    out: list[Snapshot] = []
    sid = head_id
    while sid is not None and sid != read_snapshot_id:
        snap = meta.snapshot_by_id(sid)
        out.append(snap)
        sid = snap.parent_snapshot_id
    if sid is None and read_snapshot_id is not None:
        raise CommitConflictError(
            f"the snapshot {read_snapshot_id} this change was planned on is no longer an ancestor "
            f"of the branch (rolled back or expired concurrently)")
    return out


def validate_removed_files_live(location: str, requested: Iterable[str], found: set[str]) -> None:
    """Every file a commit removes must still be live in its parent snapshot."""
    missing = set(requested) - found
    if missing:
        raise CommitConflictError(
            f"cannot remove {len(missing)} file(s) that are no longer live in {location} "
            f"(removed by a concurrent commit?): {sorted(missing)[:3]}")


def validate_referenced_files_not_removed(v: Validation, snap: Snapshot, deleted: list[DataFile]) -> None:
    """Data files this change's position deletes point at were not removed by ``snap``."""
    gone = {f.file_path for f in deleted if f.content == DATA} & v.referenced_files
    if gone:
        raise CommitConflictError(
            f"{v.operation} conflicts with snapshot {snap.snapshot_id} ({snap.operation}): it removed "
            f"data file(s) this change deletes rows from: {sorted(gone)[:3]}")


def validate_no_conflicting_data(v: Validation, snap: Snapshot, f: DataFile, scope: ChangeScope) -> None:
    """Serializable isolation: data file ``f`` added by ``snap`` holds no row in this change's scope."""
    if v.isolation == SERIALIZABLE and scope.may_contain(f):
        raise CommitConflictError(
            f"{v.operation} conflicts with snapshot {snap.snapshot_id} ({snap.operation}): "
            f"it added data file {f.file_path} that may hold rows this change should have seen "
            f"(serializable isolation; use isolation level 'snapshot' to allow this)")


def validate_no_conflicting_deletes(meta: TableMetadata, v: Validation, snap: Snapshot, f: DataFile) -> None:
    """Delete file ``f`` added by ``snap`` applies to none of the files this change rewrites or
    deletes from: not in their partitions, and not an unpartitioned (global) equality delete."""
    global_eq = f.content == EQUALITY_DELETES and meta.specs_by_id()[f.spec_id].is_unpartitioned
    if global_eq or (f.spec_id, f.partition) in v.protected_partitions:
        raise CommitConflictError(
            f"{v.operation} conflicts with snapshot {snap.snapshot_id} ({snap.operation}): it added "
            f"delete file {f.file_path} for data files this change rewrites or deletes from")


def validate_concurrent_commits(io: FileIO, meta: TableMetadata, head_id: Optional[int], v: Validation) -> None:
    """Raise CommitConflictError if a commit after ``v.read_snapshot_id`` conflicts with this change."""
    snaps = validate_read_snapshot_is_ancestor(meta, head_id, v.read_snapshot_id)
    scope = ChangeScope(meta, v)
    for snap in reversed(snaps):
        added, deleted = files_changed_by(io, meta, snap)
        validate_referenced_files_not_removed(v, snap, deleted)
        for f in added:
            if f.content == DATA:
                validate_no_conflicting_data(v, snap, f, scope)
            else:
                validate_no_conflicting_deletes(meta, v, snap, f)
