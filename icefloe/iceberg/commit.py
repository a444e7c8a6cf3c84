"""Producing snapshots: new manifests, a manifest list and the next metadata version.

Each attempt re-reads the latest metadata, so a writer that lost a race only
re-does metadata work: data files written by Spark are reused as they are.
Files written by a failed attempt are deleted before the next one.
"""
from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Iterable, Optional

from icefloe.core.io import FileIO
from icefloe.core.retry import RetryPolicy
from icefloe.errors import CommitConflictError
from icefloe.iceberg import manifest as mf
from icefloe.iceberg.hadoop import HadoopTableOperations, VersionConflict
from icefloe.iceberg.manifest import ADDED, DELETED, EXISTING, DataFile, ManifestEntry
from icefloe.iceberg.manifest_list import (
    DATA_MANIFEST, DELETE_MANIFEST, ManifestFile, manifest_file_for, read_manifest_list, write_manifest_list,
)
from icefloe.iceberg.snapshot import APPEND, OVERWRITE, Snapshot, build_summary, new_snapshot_id
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata, now_ms, with_snapshot

# --------------------------------------------------------------------------- manifest cache
# Manifests and manifest lists are immutable once written, so caching them by path is safe.
_MANIFEST_CACHE: "OrderedDict[str, tuple]" = OrderedDict()
_LIST_CACHE: "OrderedDict[str, list]" = OrderedDict()
_CACHE_MAX = 4096


def _cache_put(cache: OrderedDict, key, value):
    cache[key] = value
    if len(cache) > _CACHE_MAX:
        cache.popitem(last=False)


def load_manifest_list(io: FileIO, path: str) -> list[ManifestFile]:
    hit = _LIST_CACHE.get(path)
    if hit is None:
        hit = read_manifest_list(io, path)
        _cache_put(_LIST_CACHE, path, hit)
    return hit


def load_manifest_entries(io: FileIO, meta: TableMetadata, m: ManifestFile) -> list[ManifestEntry]:
    """Entries of manifest ``m`` with inherited snapshot ids and sequence numbers applied."""
    key = (m.manifest_path, m.added_snapshot_id, m.sequence_number)
    hit = _MANIFEST_CACHE.get(key)
    if hit is None:
        _meta, records = mf.read_manifest_raw(io, m.manifest_path)
        spec = meta.spec_by_id(m.partition_spec_id)
        ptype = spec.partition_type(meta.schema)
        hit = mf.entries_from_records(records, ptype, m.partition_spec_id, m.added_snapshot_id,
                                      m.sequence_number)
        _cache_put(_MANIFEST_CACHE, key, hit)
    return hit


def snapshot_manifests(io: FileIO, snap: Optional[Snapshot]) -> list[ManifestFile]:
    if snap is None or not snap.manifest_list:
        return []
    return load_manifest_list(io, snap.manifest_list)


# --------------------------------------------------------------------------- the producer
@dataclass
class Change:
    """What one commit does: files added, and which live files it removes."""

    added: list = field(default_factory=list)          # DataFiles (data or delete files)
    remove_paths: set = field(default_factory=set)     # exact files to remove (must still be live)
    remove_all: bool = False                           # remove every live file (full overwrite)
    operation: Optional[str] = None
    summary_extra: dict = field(default_factory=dict)


def commit_change(ops: HadoopTableOperations, change: Change, branch: str = MAIN_BRANCH,
                  policy: Optional[RetryPolicy] = None) -> TableMetadata:
    """Commit ``change`` as one new snapshot of ``branch``, retrying lost races."""
    io = ops.io
    commit_uuid = str(uuid.uuid4())

    def attempt(n: int) -> TableMetadata:
        version, base = ops.load()
        written: list[str] = []
        try:
            new_meta = _produce(io, ops, base, change, branch, commit_uuid, n, written)
            ops.commit(version, base, new_meta)
            return new_meta
        except BaseException:
            for p in written:
                io.delete(p)
            raise

    if policy is None:
        policy = RetryPolicy.from_iceberg_properties(ops.load()[1].properties)
    committed = policy.run(attempt, retry_on=(VersionConflict,))
    _, latest = ops.load()
    return latest


def _produce(io: FileIO, ops: HadoopTableOperations, base: TableMetadata, change: Change, branch: str,
             commit_uuid: str, attempt: int, written: list) -> TableMetadata:
    ref = base.refs.get(branch)
    parent = base.snapshot_by_id(ref.snapshot_id) if ref is not None else None
    snapshot_id = new_snapshot_id()
    existing_ids = {s.snapshot_id for s in base.snapshots}
    while snapshot_id in existing_ids:
        snapshot_id = new_snapshot_id()
    seq = base.last_sequence_number + 1
    schema = base.schema
    manifest_count = 0

    def next_manifest_path() -> str:
        nonlocal manifest_count
        p = f"{ops.metadata_dir}/{commit_uuid}-m{manifest_count}.avro"
        manifest_count += 1
        return p

    def write(entries: list[ManifestEntry], spec_id: int, content: int) -> ManifestFile:
        spec = base.spec_by_id(spec_id)
        path = next_manifest_path()
        written.append(path)
        length = mf.write_manifest(io, path, schema, spec, entries,
                                   content=mf.DATA if content == DATA_MANIFEST else mf.POSITION_DELETES)
        return manifest_file_for(path, length, spec_id, content, snapshot_id, seq, entries,
                                 spec.partition_type(schema))

    # 1. new files, one manifest per (spec, content kind)
    new_manifests: list[ManifestFile] = []
    groups: dict = {}
    for f in change.added:
        kind = DATA_MANIFEST if f.content == mf.DATA else DELETE_MANIFEST
        groups.setdefault((f.spec_id, kind), []).append(f)
    for (spec_id, kind), files in sorted(groups.items()):
        entries = [ManifestEntry(ADDED, snapshot_id, None, None, f) for f in files]
        new_manifests.append(write(entries, spec_id, kind))

    # 2. carry the parent's manifests over, rewriting those that lose files
    removed: list[DataFile] = []
    kept: list[ManifestFile] = []
    found_paths: set = set()
    removing = change.remove_all or bool(change.remove_paths)
    for m in snapshot_manifests(io, parent):
        if not m.has_added_or_existing():
            # only deleted entries: nothing live, so later snapshots need not carry it
            continue
        if not removing:
            if m.has_added_or_existing():
                kept.append(m)
            continue
        entries = load_manifest_entries(io, base, m)
        live = [e for e in entries if e.status != DELETED]
        hit = [e for e in live if change.remove_all or e.data_file.file_path in change.remove_paths]
        if not hit:
            if live:
                kept.append(m)
            continue
        rewritten: list[ManifestEntry] = []
        for e in live:
            if change.remove_all or e.data_file.file_path in change.remove_paths:
                rewritten.append(mf.as_deleted(e, snapshot_id))
                removed.append(e.data_file)
                found_paths.add(e.data_file.file_path)
            else:
                rewritten.append(mf.as_existing(e))
        kept.append(write(rewritten, m.partition_spec_id, m.content))

    missing = set(change.remove_paths) - found_paths
    if missing:
        raise CommitConflictError(
            f"cannot remove {len(missing)} file(s) that are no longer live in {ops.location} "
            f"(removed by a concurrent commit?): {sorted(missing)[:3]}")

    # 3. manifest list and snapshot
    operation = change.operation or (OVERWRITE if removed else APPEND)
    summary = build_summary(operation, list(change.added), removed, parent.summary if parent else None,
                            extra=change.summary_extra)
    list_path = f"{ops.metadata_dir}/snap-{snapshot_id}-{attempt}-{commit_uuid}.avro"
    manifests = new_manifests + kept
    written.append(list_path)
    write_manifest_list(io, list_path, manifests, snapshot_id, parent.snapshot_id if parent else None, seq)
    snap = Snapshot(snapshot_id=snapshot_id, sequence_number=seq, timestamp_ms=max(now_ms(), base.last_updated_ms),
                    manifest_list=list_path, summary=summary,
                    parent_snapshot_id=parent.snapshot_id if parent else None, schema_id=schema.schema_id)
    return with_snapshot(base, snap, branch)


def live_entries(io: FileIO, meta: TableMetadata, snap: Optional[Snapshot]) -> Iterable[ManifestEntry]:
    for m in snapshot_manifests(io, snap):
        for e in load_manifest_entries(io, meta, m):
            if e.status != DELETED:
                yield e
