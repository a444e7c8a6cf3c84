"""Conflict validation of row-level commits (optimistic concurrency, spec "Table Metadata" /
"Snapshots"; the checks Java's ``RowDelta`` / ``OverwriteFiles`` run before committing).

A row-level change is planned against one snapshot (its *read snapshot*) and
committed on top of whatever is current by then. Before each commit attempt
the snapshots committed in between are inspected:

* files this change removes, or points position deletes at, must not have been
  removed by another writer (checked in ``commit``: a file to remove must still
  be live; here: referenced data files must not appear as DELETED);
* no delete file added in between may apply to those files (same partition, or
  an unpartitioned equality delete): the other writer deleted rows we rewrote;
* under ``serializable`` isolation (the default) no data file added in between
  may fall in this change's scope (its partitions and, when given, its row
  filter judged on the new file's partition and column metrics): a row another
  writer added could have matched our predicate. ``snapshot`` isolation skips
  this check.

Appends to partitions outside the scope do not conflict, so such a commit simply
retries on top of them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from icefloe.core.io import FileIO
from icefloe.errors import CommitConflictError
from icefloe.iceberg.manifest import ADDED, DATA, DELETED, EQUALITY_DELETES, DataFile
from icefloe.iceberg.table_metadata import TableMetadata

SERIALIZABLE, SNAPSHOT = "serializable", "snapshot"
ISOLATION_LEVELS = (SERIALIZABLE, SNAPSHOT)


def isolation_level(properties: dict, operation: str, override: Optional[str] = None) -> str:
    """``write.<operation>.isolation-level`` (delete, update, merge); serializable by default."""
    level = (override or properties.get(f"write.{operation}.isolation-level", SERIALIZABLE)).lower()
    if level not in ISOLATION_LEVELS:
        raise ValueError(f"unknown isolation level {level!r}; expected one of {ISOLATION_LEVELS}")
    return level


@dataclass
class Validation:
    """What a row-level commit must check against commits made since ``read_snapshot_id``."""

    read_snapshot_id: Optional[int]
    isolation: str = SERIALIZABLE
    operation: str = "row-level change"
    scope_partitions: Optional[set] = None     # {(spec_id, partition)}; None: the whole table
    conflict_filter: object = None             # row filter (Spark SQL text or expression) or None
    protected_files: set = field(default_factory=set)      # data files removed or pointed at
    protected_partitions: set = field(default_factory=set)  # their (spec_id, partition)
    referenced_files: set = field(default_factory=set)      # data files our position deletes point at


def _concurrent_snapshots(meta: TableMetadata, head_id: Optional[int], read_snapshot_id: Optional[int]) -> list:
    out = []
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


def _changes_of(io: FileIO, meta: TableMetadata, snap) -> tuple[list, list]:
    """(added entries, deleted entries) written by ``snap`` itself."""
    from icefloe.iceberg.commit import load_manifest_entries, snapshot_manifests

    added, deleted = [], []
    for m in snapshot_manifests(io, snap):
        if m.added_snapshot_id != snap.snapshot_id:
            continue
        for e in load_manifest_entries(io, meta, m):
            if e.snapshot_id != snap.snapshot_id:
                continue
            if e.status == ADDED:
                added.append(e.data_file)
            elif e.status == DELETED:
                deleted.append(e.data_file)
    return added, deleted


def _in_scope(meta: TableMetadata, f: DataFile, v: Validation, evaluators: dict) -> bool:
    if v.scope_partitions is not None and (f.spec_id, f.partition) not in v.scope_partitions:
        return False
    if v.conflict_filter is None:
        return True
    if "bound" not in evaluators:
        from icefloe.iceberg.scan import _filters

        evaluators["bound"] = _filters(meta, v.conflict_filter)
    bound = evaluators["bound"]
    if bound is None:
        return True
    from icefloe.iceberg import evaluators as ev

    spec = meta.spec_by_id(f.spec_id)
    key = ("part", f.spec_id)
    if key not in evaluators:
        evaluators[key] = ev.PartitionEvaluator(spec.partition_type(meta.schema),
                                                ev.project_inclusive(bound, spec, meta.schema))
        evaluators.setdefault("metrics", ev.MetricsEvaluator(meta.schema, bound))
    return evaluators[key].eval(f.partition) and evaluators["metrics"].may_match(f)


def validate(io: FileIO, meta: TableMetadata, head_id: Optional[int], v: Validation) -> None:
    """Raise CommitConflictError if a commit after ``v.read_snapshot_id`` conflicts with this change."""
    snaps = _concurrent_snapshots(meta, head_id, v.read_snapshot_id)
    evaluators: dict = {}
    specs = meta.specs_by_id()
    for snap in reversed(snaps):
        added, deleted = _changes_of(io, meta, snap)
        gone = {f.file_path for f in deleted if f.content == DATA} & v.referenced_files
        if gone:
            raise CommitConflictError(
                f"{v.operation} conflicts with snapshot {snap.snapshot_id} ({snap.operation}): it removed "
                f"data file(s) this change deletes rows from: {sorted(gone)[:3]}")
        for f in added:
            if f.content == DATA:
                if v.isolation == SERIALIZABLE and _in_scope(meta, f, v, evaluators):
                    raise CommitConflictError(
                        f"{v.operation} conflicts with snapshot {snap.snapshot_id} ({snap.operation}): "
                        f"it added data file {f.file_path} that may hold rows this change should have seen "
                        f"(serializable isolation; use isolation level 'snapshot' to allow this)")
                continue
            global_eq = f.content == EQUALITY_DELETES and specs[f.spec_id].is_unpartitioned
            if global_eq or (f.spec_id, f.partition) in v.protected_partitions:
                raise CommitConflictError(
                    f"{v.operation} conflicts with snapshot {snap.snapshot_id} ({snap.operation}): it added "
                    f"delete file {f.file_path} for data files this change rewrites or deletes from")
