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
from icefloe.errors import CommitConflictError, CorruptMetadataError, IcefloeError
from icefloe.iceberg import manifest as mf
from icefloe.iceberg.hadoop import HadoopTableOperations, VersionConflict
from icefloe.iceberg.manifest import ADDED, DELETED, EXISTING, DataFile, ManifestEntry
from icefloe.iceberg.manifest_list import (
    DATA_MANIFEST, DELETE_MANIFEST, ManifestFile, manifest_file_for, read_manifest_list, write_manifest_list,
)
from icefloe.iceberg.row_delta import Validation
from icefloe.iceberg.snapshot import APPEND, OVERWRITE, REPLACE, Snapshot, build_summary, new_snapshot_id
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
        spec = meta.specs_by_id().get(m.partition_spec_id)
        if spec is None:
            raise CorruptMetadataError(m.manifest_path, f"{_listed_in(m)}names partition spec "
                                       f"{m.partition_spec_id!r}, which the table metadata does not have")
        try:
            ptype = spec.partition_type(meta.schema)
        except IcefloeError as e:
            raise CorruptMetadataError(m.manifest_path, f"{_listed_in(m)}cannot use its partition spec "
                                       f"{m.partition_spec_id}: {e}") from e
        # metrics maps are decoded on first access (see ``mf.read_manifest_entries``)
        try:
            hit = mf.read_manifest_entries(io, m.manifest_path, ptype, m.partition_spec_id, m.added_snapshot_id,
                                           m.sequence_number)
        except CorruptMetadataError as e:
            if not m.manifest_list or e.path != m.manifest_path:
                raise
            raise CorruptMetadataError(e.path, f"{e.reason} (listed in manifest list {m.manifest_list})") from e
        _check_entry_count(m, hit)
        _cache_put(_MANIFEST_CACHE, key, hit)
    return hit


def _listed_in(m: ManifestFile) -> str:
    return f"the entry in manifest list {m.manifest_list} " if m.manifest_list else ""


def _check_entry_count(m: ManifestFile, entries: list) -> None:
    """A manifest holds exactly the entries its manifest-list entry counts: fewer means a
    manifest cut at an Avro block boundary (which decodes without error) or a wrong file."""
    counts = (m.added_files_count, m.existing_files_count, m.deleted_files_count)
    if any(c is None for c in counts):   # optional in v1 manifest lists
        return
    if len(entries) != sum(counts):
        where = f"manifest list {m.manifest_list}" if m.manifest_list else "the manifest list"
        raise CorruptMetadataError(m.manifest_path, f"holds {len(entries)} entries, but {where} "
                                   f"counts {sum(counts)} (truncated, or not the manifest it lists)")


def snapshot_manifests(io: FileIO, snap: Optional[Snapshot]) -> list[ManifestFile]:
    if snap is None or not snap.manifest_list:
        return []
    manifests = load_manifest_list(io, snap.manifest_list)
    _check_data_file_total(snap, manifests)
    return manifests


def _check_data_file_total(snap: Snapshot, manifests: list[ManifestFile]) -> None:
    """A manifest list that counts fewer live data files than its snapshot's summary
    (``total-data-files``) lost manifests: e.g. it was cut at an Avro block boundary, which
    decodes without error. Only "fewer" is an error: a summary can understate the total
    (a writer that started counting on a parent without totals), never overstate it."""
    total = snap.summary.get("total-data-files") if snap.summary else None
    if total is None:
        return
    try:
        expected = int(total)
    except (TypeError, ValueError):
        return
    live = 0
    for m in manifests:
        if m.content != DATA_MANIFEST:
            continue
        if m.added_files_count is None or m.existing_files_count is None:
            return
        live += m.added_files_count + m.existing_files_count
    if live < expected:
        raise CorruptMetadataError(snap.manifest_list, f"lists manifests with {live} live data files, but "
                                   f"snapshot {snap.snapshot_id} has {expected} (truncated, or not its manifest list)")


# --------------------------------------------------------------------------- the producer
@dataclass
class Change:
    """What one commit does: files added, and which live files it removes."""

    added: list = field(default_factory=list)          # DataFiles (data or delete files)
    remove_paths: set = field(default_factory=set)     # exact files to remove (must still be live)
    remove_all: bool = False                           # remove every live file (full overwrite)
    operation: Optional[str] = None
    summary_extra: dict = field(default_factory=dict)
    # row-level changes (issue 4)
    validation: Optional[Validation] = None            # conflict checks against concurrent commits
    added_data_sequence_number: Optional[int] = None   # compaction: new files keep the read snapshot's
    rewrite_manifests: bool = False                    # only regroup the live entries into fewer manifests


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
        except BaseException:
            for p in written:
                io.delete(p)
            raise
        _drop_merged_away(io, new_meta, branch, written)
        return new_meta

    if policy is None:
        policy = RetryPolicy.from_iceberg_properties(ops.load()[1].properties)
    committed = policy.run(attempt, retry_on=(VersionConflict,))
    _, latest = ops.load()
    return latest


def _drop_merged_away(io: FileIO, meta: TableMetadata, branch: str, written: list) -> None:
    """Delete the manifests this commit wrote but its manifest list does not hold (new manifests
    that ``merge_manifests`` folded into a merged one), now that the commit is durable. Best
    effort: whatever is left is an orphan, and the commit stands either way."""
    try:
        snap = meta.snapshot_by_id(meta.refs[branch].snapshot_id)
        listed = {m.manifest_path for m in snapshot_manifests(io, snap)} | {snap.manifest_list}
        for p in written:
            if p not in listed:
                io.delete(p)
    except Exception:  # noqa: BLE001 - never fail a commit that has happened
        pass


class _ManifestWriter:
    """Writes this attempt's manifests as ``<commit uuid>-m<N>.avro`` and remembers them for cleanup."""

    def __init__(self, io: FileIO, ops: HadoopTableOperations, base: TableMetadata, commit_uuid: str,
                 snapshot_id: int, seq: int, written: list):
        self.io, self.ops, self.base = io, ops, base
        self.commit_uuid, self.snapshot_id, self.seq = commit_uuid, snapshot_id, seq
        self.written = written
        self.count = 0

    def write(self, entries: list[ManifestEntry], spec_id: int, content: int) -> ManifestFile:
        schema = self.base.schema
        spec = self.base.spec_by_id(spec_id)
        path = f"{self.ops.metadata_dir}/{self.commit_uuid}-m{self.count}.avro"
        self.count += 1
        self.written.append(path)
        length = mf.write_manifest(self.io, path, schema, spec, entries,
                                   content=mf.DATA if content == DATA_MANIFEST else mf.POSITION_DELETES)
        return manifest_file_for(path, length, spec_id, content, self.snapshot_id, self.seq, entries,
                                 spec.partition_type(schema))


def _produce(io: FileIO, ops: HadoopTableOperations, base: TableMetadata, change: Change, branch: str,
             commit_uuid: str, attempt: int, written: list) -> TableMetadata:
    # a write to a branch that does not exist yet starts from main's head, as Iceberg does
    ref = base.refs.get(branch) or base.refs.get(MAIN_BRANCH)
    parent = base.snapshot_by_id(ref.snapshot_id) if ref is not None else None
    snapshot_id = new_snapshot_id()
    existing_ids = {s.snapshot_id for s in base.snapshots}
    while snapshot_id in existing_ids:
        snapshot_id = new_snapshot_id()
    seq = base.last_sequence_number + 1
    schema = base.schema
    writer = _ManifestWriter(io, ops, base, commit_uuid, snapshot_id, seq, written)

    if change.validation is not None:
        from icefloe.iceberg.row_delta import validate

        validate(io, base, parent.snapshot_id if parent else None, change.validation)

    if change.rewrite_manifests:
        manifests, extra = _rewrite_all_manifests(io, base, parent, writer)
        summary = build_summary(REPLACE, [], [], parent.summary if parent else None,
                                extra={**change.summary_extra, **extra})
        summary.pop("changed-partition-count", None)
        return _finish(io, ops, base, branch, parent, snapshot_id, seq, commit_uuid, attempt, written,
                       manifests, summary, schema)

    # 1. carry the parent's manifests over, rewriting those that lose files (EXISTING / DELETED)
    removed: list[DataFile] = []
    kept: list[ManifestFile] = []
    found_paths: set = set()
    removing = change.remove_all or bool(change.remove_paths)
    specs = base.specs_by_id()
    for m in snapshot_manifests(io, parent):
        if m.partition_spec_id not in specs:   # carried over unopened: check what can be checked
            raise CorruptMetadataError(parent.manifest_list, f"the entry for manifest {m.manifest_path} names "
                                       f"partition spec {m.partition_spec_id!r}, which the table metadata does not have")
        if not m.has_added_or_existing():
            # only deleted entries: nothing live, so later snapshots need not carry it
            continue
        if not removing:
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
        kept.append(writer.write(rewritten, m.partition_spec_id, m.content))

    missing = set(change.remove_paths) - found_paths
    if missing:
        raise CommitConflictError(
            f"cannot remove {len(missing)} file(s) that are no longer live in {ops.location} "
            f"(removed by a concurrent commit?): {sorted(missing)[:3]}")

    # 2. new files, one manifest per (spec, content kind)
    new_manifests: list[ManifestFile] = []
    groups: dict = {}
    for f in change.added:
        kind = DATA_MANIFEST if f.content == mf.DATA else DELETE_MANIFEST
        groups.setdefault((f.spec_id, kind), []).append(f)
    for (spec_id, kind), files in sorted(groups.items()):
        data_seq = change.added_data_sequence_number if kind == DATA_MANIFEST else None
        entries = [ManifestEntry(ADDED, snapshot_id, data_seq, None, f) for f in files]
        new_manifests.append(writer.write(entries, spec_id, kind))

    # 3. manifest list and snapshot
    manifests = new_manifests + kept
    if _merge_enabled(base.properties):
        manifests = merge_manifests(io, base, manifests, writer, _min_count_to_merge(base.properties),
                                    _target_manifest_size(base.properties))
    operation = change.operation or (OVERWRITE if removed else APPEND)
    summary = build_summary(operation, list(change.added), removed, parent.summary if parent else None,
                            extra=change.summary_extra)
    return _finish(io, ops, base, branch, parent, snapshot_id, seq, commit_uuid, attempt, written,
                   manifests, summary, schema)


def _finish(io, ops, base, branch, parent, snapshot_id, seq, commit_uuid, attempt, written, manifests,
            summary, schema) -> TableMetadata:
    list_path = f"{ops.metadata_dir}/snap-{snapshot_id}-{attempt}-{commit_uuid}.avro"
    written.append(list_path)
    write_manifest_list(io, list_path, manifests, snapshot_id, parent.snapshot_id if parent else None, seq)
    snap = Snapshot(snapshot_id=snapshot_id, sequence_number=seq, timestamp_ms=max(now_ms(), base.last_updated_ms),
                    manifest_list=list_path, summary=summary,
                    parent_snapshot_id=parent.snapshot_id if parent else None, schema_id=schema.schema_id)
    return with_snapshot(base, snap, branch)


# --------------------------------------------------------------------------- manifest merging
# Table properties (Iceberg "Table Properties" / write properties) and their defaults.
MERGE_ENABLED = "commit.manifest-merge.enabled"
MIN_COUNT_TO_MERGE = "commit.manifest.min-count-to-merge"
TARGET_SIZE = "commit.manifest.target-size-bytes"


def _merge_enabled(props: dict) -> bool:
    return str(props.get(MERGE_ENABLED, "true")).lower() == "true"


def _min_count_to_merge(props: dict) -> int:
    return int(props.get(MIN_COUNT_TO_MERGE, 100))


def _target_manifest_size(props: dict) -> int:
    return int(props.get(TARGET_SIZE, 8 * 1024 * 1024))


def _pack(manifests: list[ManifestFile], target: int) -> list[list[ManifestFile]]:
    """Bins of consecutive manifests (newest first) up to ``target`` bytes each."""
    bins: list[list[ManifestFile]] = []
    size = 0
    for m in manifests:
        if bins and size + m.manifest_length <= target:
            bins[-1].append(m)
            size += m.manifest_length
        else:
            bins.append([m])
            size = m.manifest_length
    return bins


def merge_manifests(io: FileIO, base: TableMetadata, manifests: list[ManifestFile], writer: "_ManifestWriter",
                    min_count: int, target: int) -> list[ManifestFile]:
    """Merge small manifests on commit, as Java's merging snapshot producer does.

    Manifests are grouped by (spec, content) and packed into bins of ``target``
    bytes. A bin of one manifest is kept; the bin holding the newest manifest is
    merged only once it has ``min_count`` manifests (so small tables keep one
    manifest per commit until then); other bins are merged. In a merged manifest
    this snapshot's ADDED and DELETED entries keep their status, older live
    entries become EXISTING and older DELETED entries are dropped.
    """
    groups: "OrderedDict[tuple, list]" = OrderedDict()
    for m in manifests:
        groups.setdefault((m.partition_spec_id, m.content), []).append(m)
    out: list[ManifestFile] = []
    for (spec_id, content), group in groups.items():
        first = group[0]
        for bin_ in _pack(group, target):
            if len(bin_) == 1 or (first in bin_ and len(bin_) < min_count):
                out.extend(bin_)
                continue
            entries: list[ManifestEntry] = []
            for m in bin_:
                for e in load_manifest_entries(io, base, m):
                    if e.snapshot_id == writer.snapshot_id and e.status in (ADDED, DELETED):
                        entries.append(e)
                    elif e.status != DELETED:
                        entries.append(mf.as_existing(e))
            out.append(writer.write(entries, spec_id, content))
    return out


def _rewrite_all_manifests(io: FileIO, base: TableMetadata, parent: Optional[Snapshot],
                           writer: "_ManifestWriter") -> tuple[list, dict]:
    """All live entries regrouped by (spec, content) into manifests of about the target size."""
    target = _target_manifest_size(base.properties)
    old = [m for m in snapshot_manifests(io, parent) if m.has_added_or_existing()]
    groups: "OrderedDict[tuple, list]" = OrderedDict()
    sizes: dict = {}
    for m in old:
        entries = [mf.as_existing(e) for e in load_manifest_entries(io, base, m) if e.status != DELETED]
        key = (m.partition_spec_id, m.content)
        groups.setdefault(key, []).extend(entries)
        per_entry = m.manifest_length / max(1, m.added_files_count + m.existing_files_count
                                            + (m.deleted_files_count or 0))
        sizes[key] = max(sizes.get(key, 0), per_entry)
    out: list[ManifestFile] = []
    processed = 0
    for (spec_id, content), entries in sorted(groups.items()):
        entries.sort(key=lambda e: (repr(e.data_file.partition), e.data_file.file_path))
        per_file = max(1, int(target / max(sizes[(spec_id, content)], 1.0)))
        for i in range(0, len(entries), per_file):
            chunk = entries[i:i + per_file]
            processed += len(chunk)
            out.append(writer.write(chunk, spec_id, content))
    extra = {"manifests-created": str(len(out)), "manifests-replaced": str(len(old)),
             "manifests-kept": "0", "entries-processed": str(processed)}
    return out, extra


def live_entries(io: FileIO, meta: TableMetadata, snap: Optional[Snapshot]) -> Iterable[ManifestEntry]:
    for m in snapshot_manifests(io, snap):
        for e in load_manifest_entries(io, meta, m):
            if e.status != DELETED:
                yield e
