# pyright: strict
"""Branches, tags and moving ``main`` (Iceberg spec, "Snapshot References").

A ref names a snapshot: a tag is fixed, a branch moves with each commit to it.
``main`` is the branch whose head is the table's current snapshot, so every
change of ``main`` also sets ``current-snapshot-id`` and appends to the
snapshot log (which time travel by timestamp follows). Each operation here is
a pure change: the ``set-snapshot-ref`` / ``remove-snapshot-ref`` updates it makes of
the latest metadata, committed with :func:`commit_metadata` and checked again
against the latest metadata on every attempt.

Writes to a branch name that does not exist yet start from ``main``'s current
snapshot, as Java's ``SnapshotUtil.latestSnapshot`` does (see ``snapshot_producer.py``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterator, Optional, Union

from icefloe.errors import RefError  # noqa: F401 - defined in icefloe.errors, importable here too
from icefloe.iceberg.append import Append
from icefloe.iceberg.operations import TableOperations
from icefloe.core.io import FileIO
from icefloe.iceberg.manifest import DATA, DataFile
from icefloe.iceberg.manifest_reader import files_changed_by
from icefloe.iceberg.metadata_builder import RemoveSnapshotRef, TableUpdate, set_ref_update
from icefloe.iceberg.metadata_commit import MetadataChange, commit_metadata
from icefloe.iceberg.snapshot import APPEND, Snapshot, SnapshotRef
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata

BRANCH, TAG = "branch", "tag"
SOURCE_SNAPSHOT_ID = "source-snapshot-id"
# write-audit-publish (Java's SnapshotSummary): the id a staged snapshot was written under, and
# the id a cherry-pick published into main
STAGED_WAP_ID = "wap.id"
PUBLISHED_WAP_ID = "published-wap-id"


# --------------------------------------------------------------------------- lineage
def ancestors(meta: TableMetadata, snapshot_id: Optional[int]) -> Iterator[Snapshot]:
    """``snapshot_id`` and its parents, newest first, while they are still in the metadata."""
    by_id = {s.snapshot_id: s for s in meta.snapshots}
    seen: set[int] = set()
    while snapshot_id is not None and snapshot_id in by_id and snapshot_id not in seen:
        seen.add(snapshot_id)
        snap = by_id[snapshot_id]
        yield snap
        snapshot_id = snap.parent_snapshot_id


def is_ancestor(meta: TableMetadata, ancestor_id: int, of_id: Optional[int]) -> bool:
    return any(s.snapshot_id == ancestor_id for s in ancestors(meta, of_id))


# --------------------------------------------------------------------------- pure changes
def _snapshot(meta: TableMetadata, snapshot_id: Optional[int]) -> int:
    if snapshot_id is None:
        if meta.current_snapshot_id is None:
            raise RefError(f"table {meta.location} has no current snapshot to point a ref at")
        return meta.current_snapshot_id
    meta.snapshot_by_id(int(snapshot_id))  # raises NoSuchSnapshotError
    return int(snapshot_id)


def _ref(meta: TableMetadata, name: str, kind: Optional[str] = None) -> SnapshotRef:
    ref = meta.refs.get(name)
    if ref is None:
        raise RefError(f"table {meta.location} has no {kind or 'branch or tag'} named {name!r}; "
                       f"refs are {sorted(meta.refs) or 'none'}")
    if kind is not None and ref.type != kind:
        raise RefError(f"{name!r} is a {ref.type}, not a {kind}")
    return ref


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name.strip():
        raise RefError(f"invalid ref name {name!r}")


def _check_retention(min_snapshots_to_keep: Optional[int], max_snapshot_age_ms: Optional[int],
                     max_ref_age_ms: Optional[int]) -> None:
    for label, v in (("min_snapshots_to_keep", min_snapshots_to_keep), ("max_snapshot_age_ms", max_snapshot_age_ms),
                     ("max_ref_age_ms", max_ref_age_ms)):
        if v is not None and int(v) <= 0:
            raise RefError(f"{label} must be positive, got {v}")


def set_ref(meta: TableMetadata, name: str, ref: SnapshotRef) -> list[TableUpdate]:
    """The update setting ref ``name``; moving ``main`` also sets the current snapshot and logs it
    (the builder does that)."""
    return [set_ref_update(name, ref)]


def remove_ref(meta: TableMetadata, name: str) -> list[TableUpdate]:
    return [RemoveSnapshotRef(name)]


def create_tag_change(name: str, snapshot_id: Optional[int] = None,
                      max_ref_age_ms: Optional[int] = None) -> MetadataChange:
    _check_name(name)
    _check_retention(None, None, max_ref_age_ms)
    if name == MAIN_BRANCH:
        raise RefError("'main' is the main branch; a tag cannot take its name")

    def change(meta: TableMetadata) -> list[TableUpdate]:
        if name in meta.refs:
            raise RefError(f"ref {name!r} already exists ({meta.refs[name].type})")
        return set_ref(meta, name, SnapshotRef(_snapshot(meta, snapshot_id), TAG, max_ref_age_ms=max_ref_age_ms))
    return change


def create_branch_change(name: str, snapshot_id: Optional[int] = None, min_snapshots_to_keep: Optional[int] = None,
                         max_snapshot_age_ms: Optional[int] = None,
                         max_ref_age_ms: Optional[int] = None) -> MetadataChange:
    _check_name(name)
    _check_retention(min_snapshots_to_keep, max_snapshot_age_ms, max_ref_age_ms)

    def change(meta: TableMetadata) -> list[TableUpdate]:
        if name in meta.refs:
            raise RefError(f"ref {name!r} already exists ({meta.refs[name].type})")
        return set_ref(meta, name, SnapshotRef(_snapshot(meta, snapshot_id), BRANCH, min_snapshots_to_keep,
                                               max_snapshot_age_ms, max_ref_age_ms))
    return change


def replace_ref_change(name: str, kind: str, snapshot_id: Union[int, str, None],
                       **retention: Optional[int]) -> MetadataChange:
    """Point an existing tag or branch at another snapshot (an id, or the name of a ref whose
    snapshot to take), keeping its retention settings unless new ones are given."""
    _check_retention(retention.get("min_snapshots_to_keep"), retention.get("max_snapshot_age_ms"),
                     retention.get("max_ref_age_ms"))

    def change(meta: TableMetadata) -> list[TableUpdate]:
        ref = _ref(meta, name, kind)
        target = _ref(meta, snapshot_id).snapshot_id if isinstance(snapshot_id, str) else snapshot_id
        if target is None:
            raise RefError(f"replacing {kind} {name!r} needs a snapshot id or a ref name")
        updates = {k: v for k, v in retention.items() if v is not None}
        return set_ref(meta, name, replace(ref, snapshot_id=_snapshot(meta, target), **updates))
    return change


def rename_branch_change(name: str, new_name: str) -> MetadataChange:
    _check_name(new_name)
    if name == MAIN_BRANCH:
        raise RefError("cannot rename the main branch")
    if new_name == MAIN_BRANCH:
        raise RefError("cannot rename a branch to 'main'")

    def change(meta: TableMetadata) -> list[TableUpdate]:
        ref = _ref(meta, name, BRANCH)
        if new_name in meta.refs:
            raise RefError(f"ref {new_name!r} already exists ({meta.refs[new_name].type})")
        return remove_ref(meta, name) + set_ref(meta, new_name, ref)
    return change


def drop_ref_change(name: str, kind: str) -> MetadataChange:
    if name == MAIN_BRANCH:
        raise RefError("cannot drop the main branch")

    def change(meta: TableMetadata) -> list[TableUpdate]:
        _ref(meta, name, kind)
        return remove_ref(meta, name)
    return change


def fast_forward_change(branch: str, source: str) -> MetadataChange:
    """Move ``branch`` to ``source``'s snapshot, which must descend from the branch's head."""

    def change(meta: TableMetadata) -> Optional[list[TableUpdate]]:
        target = _ref(meta, source)
        ref = meta.refs.get(branch)
        if ref is None:
            return set_ref(meta, branch, SnapshotRef(target.snapshot_id, BRANCH))
        if ref.type != BRANCH:
            raise RefError(f"{branch!r} is a tag; only branches can be fast-forwarded")
        if is_ancestor(meta, target.snapshot_id, ref.snapshot_id):
            return None  # already contains the source's head
        if not is_ancestor(meta, ref.snapshot_id, target.snapshot_id):
            raise RefError(f"cannot fast-forward {branch!r} to {source!r}: the head of {branch!r} "
                           f"({ref.snapshot_id}) is not an ancestor of {source!r} ({target.snapshot_id})")
        return set_ref(meta, branch, replace(ref, snapshot_id=target.snapshot_id))
    return change


def rollback_to_snapshot_change(snapshot_id: int) -> MetadataChange:
    def change(meta: TableMetadata) -> list[TableUpdate]:
        meta.snapshot_by_id(int(snapshot_id))
        if not is_ancestor(meta, int(snapshot_id), meta.current_snapshot_id):
            raise RefError(f"cannot roll back to snapshot {snapshot_id}: it is not an ancestor of the "
                           f"current snapshot {meta.current_snapshot_id}; use set_current_snapshot instead")
        return set_ref(meta, MAIN_BRANCH, _main_at(meta, int(snapshot_id)))
    return change


def rollback_to_timestamp_change(timestamp_ms: int) -> MetadataChange:
    def change(meta: TableMetadata) -> list[TableUpdate]:
        older = [s for s in ancestors(meta, meta.current_snapshot_id) if s.timestamp_ms < timestamp_ms]
        if not older:
            raise RefError(f"cannot roll back: no ancestor of the current snapshot is older than {timestamp_ms}")
        target = max(older, key=lambda s: s.timestamp_ms)
        return set_ref(meta, MAIN_BRANCH, _main_at(meta, target.snapshot_id))
    return change


def set_current_snapshot_change(snapshot_id: int) -> MetadataChange:
    def change(meta: TableMetadata) -> list[TableUpdate]:
        meta.snapshot_by_id(int(snapshot_id))
        return set_ref(meta, MAIN_BRANCH, _main_at(meta, int(snapshot_id)))
    return change


def _main_at(meta: TableMetadata, snapshot_id: int) -> SnapshotRef:
    main = meta.refs.get(MAIN_BRANCH)
    return replace(main, snapshot_id=snapshot_id) if main is not None else SnapshotRef(snapshot_id, BRANCH)


# --------------------------------------------------------------------------- operations
def commit_ref_change(ops: TableOperations, change: MetadataChange) -> TableMetadata:
    return commit_metadata(ops, change).new


def create_branch(ops: TableOperations, name: str, snapshot_id: Optional[int] = None,
                  min_snapshots_to_keep: Optional[int] = None, max_snapshot_age_ms: Optional[int] = None,
                  max_ref_age_ms: Optional[int] = None) -> TableMetadata:
    """Create a branch at ``snapshot_id`` (default: the current snapshot).

    On a table without snapshots the branch starts at a new empty snapshot, as Java does.
    """
    _, meta = ops.load()
    if snapshot_id is None and meta.current_snapshot_id is None and name not in meta.refs:
        _check_name(name)
        _check_retention(min_snapshots_to_keep, max_snapshot_age_ms, max_ref_age_ms)
        meta = Append().commit(ops, branch=name)
        if min_snapshots_to_keep is None and max_snapshot_age_ms is None and max_ref_age_ms is None:
            return meta
        return commit_ref_change(ops, replace_ref_change(
            name, BRANCH, meta.refs[name].snapshot_id, min_snapshots_to_keep=min_snapshots_to_keep,
            max_snapshot_age_ms=max_snapshot_age_ms, max_ref_age_ms=max_ref_age_ms))
    return commit_ref_change(ops, create_branch_change(name, snapshot_id, min_snapshots_to_keep,
                                                       max_snapshot_age_ms, max_ref_age_ms))


def added_data_files(io: FileIO, meta: TableMetadata, snap: Snapshot) -> list[DataFile]:
    """Data files that ``snap`` itself added (ADDED entries carrying its snapshot id)."""
    added, _deleted = files_changed_by(io, meta, snap)
    return [f for f in added if f.content == DATA]


def cherry_pick(ops: TableOperations, snapshot_id: int) -> TableMetadata:
    """Apply an append snapshot (typically staged on a branch) to ``main``.

    As Java's ``CherryPickOperation``: when the snapshot's parent is main's current
    snapshot, main is fast-forwarded to it; otherwise a new ``append`` snapshot adds
    the same data files, with ``source-snapshot-id`` in its summary. A snapshot that
    is already an ancestor of main, or was already picked into it, is refused.
    """
    _, meta = ops.load()
    snap = meta.snapshot_by_id(int(snapshot_id))

    def fast_forward(m: TableMetadata) -> bool:
        return snap.parent_snapshot_id == m.current_snapshot_id

    if snap.operation != APPEND:
        if fast_forward(meta):
            return commit_ref_change(ops, _fast_forward_to(snap, fast_forward))
        raise RefError(f"cannot cherry-pick snapshot {snapshot_id}: only append snapshots (or a fast-forward "
                       f"of main) can be picked, and this one is {snap.operation!r}")
    _check_not_picked(meta, snap.snapshot_id)
    wap_id = snap.summary.get(STAGED_WAP_ID) or None
    if wap_id is not None and wap_published(meta, wap_id) is not None:
        raise RefError(f"cannot cherry-pick snapshot {snapshot_id}: its wap id {wap_id!r} was published "
                       f"already (snapshot {wap_published(meta, wap_id)})")
    if fast_forward(meta):
        return commit_ref_change(ops, _fast_forward_to(snap, fast_forward))
    files = added_data_files(ops.io, meta, snap)
    summary = {SOURCE_SNAPSHOT_ID: str(snap.snapshot_id), **({PUBLISHED_WAP_ID: wap_id} if wap_id else {})}
    return Append(files, summary_extra=summary).commit(ops)


def wap_published(meta: TableMetadata, wap_id: str) -> Optional[int]:
    """The ancestor of main that published ``wap_id`` (a cherry-pick, or the staged snapshot itself
    fast-forwarded), or None."""
    for s in ancestors(meta, meta.current_snapshot_id):
        if wap_id in (s.summary.get(PUBLISHED_WAP_ID), s.summary.get(STAGED_WAP_ID)):
            return s.snapshot_id
    return None


def staged_snapshot(meta: TableMetadata, wap_id: str) -> Snapshot:
    """The snapshot staged under ``wap_id`` (the first in the metadata should there be several, as
    Java's ``publish_changes`` finds it)."""
    staged = next((s for s in meta.snapshots if s.summary.get(STAGED_WAP_ID) == wap_id), None)
    if staged is None:
        raise RefError(f"cannot publish wap id {wap_id!r}: table {meta.location} has no snapshot staged "
                       "under it")
    return staged


def _fast_forward_to(snap: Snapshot, allowed: Callable[[TableMetadata], bool]) -> MetadataChange:
    def change(meta: TableMetadata) -> list[TableUpdate]:
        if not allowed(meta):
            raise RefError(f"cannot cherry-pick snapshot {snap.snapshot_id}: main moved concurrently")
        return set_ref(meta, MAIN_BRANCH, _main_at(meta, snap.snapshot_id))
    return change


def _check_not_picked(meta: TableMetadata, snapshot_id: int) -> None:
    for s in ancestors(meta, meta.current_snapshot_id):
        if s.snapshot_id == snapshot_id:
            raise RefError(f"cannot cherry-pick snapshot {snapshot_id}: it is already an ancestor of main")
        if s.summary.get(SOURCE_SNAPSHOT_ID) == str(snapshot_id):
            raise RefError(f"cannot cherry-pick snapshot {snapshot_id}: it was already picked as snapshot "
                           f"{s.snapshot_id}")

