# pyright: strict
"""Producing a snapshot: new manifests, a manifest list and the next metadata version
(Iceberg spec, "Snapshots", "Manifest Lists", "Commit Conflict Resolution and Retry").

A producer describes one commit (the files it adds and removes, what it must
validate); ``commit`` turns it into a snapshot of a branch. Each attempt
re-reads the latest metadata and produces the snapshot on top of it, so a writer
that lost a race only re-does metadata work: data files written by Spark are
reused as they are. Files written by a failed attempt are deleted before the next.

``SnapshotProducer`` is the shared part (snapshot id and sequence number,
manifest and manifest-list files, the retried commit); ``FileChangeProducer``
adds the work common to every producer that adds or removes files: carrying the
parent's manifests over (rewriting those that lose files), writing manifests for
the new files, merging small manifests and the summary. The producers
themselves are ``append.Append``, ``overwrite.Overwrite``, ``row_delta.RowDelta``
and ``rewrite.RewriteFiles`` / ``rewrite.RewriteManifests``.
"""
from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Optional

from icefloe.core.io import FileIO
from icefloe.core.retry import RetryPolicy
from icefloe.errors import CorruptMetadataError
from icefloe.iceberg.manifest import (
    ADDED, DATA, DELETED, POSITION_DELETES, DataFile, ManifestEntry, as_deleted, as_existing,
)
from icefloe.iceberg import manifest_merge
from icefloe.iceberg import unhonoured
from icefloe.iceberg.manifest_codec import DEFAULT as DEFAULT_CODEC
from icefloe.iceberg.manifest_codec import ManifestCodec
from icefloe.iceberg.manifest_avro import write_manifest
from icefloe.iceberg.manifest_list import (
    DATA_MANIFEST,
    DELETE_MANIFEST,
    ManifestFile,
    assign_first_row_ids,
    manifest_file_for,
    write_manifest_list,
)
from icefloe.iceberg.manifest_reader import (
    load_manifest_entries,
    snapshot_manifests,
    with_counts,
)
from icefloe.iceberg.metadata_builder import AddSnapshot, TableUpdate, set_ref_update
from icefloe.iceberg.operations import Changes, TableOperations, commit_with_retry
from icefloe.iceberg.property_values import integer
from icefloe.iceberg.snapshot import Snapshot, SnapshotRef, build_summary, new_snapshot_id
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata, now_ms
from icefloe.iceberg.table_requirements import requirements_for
from icefloe.iceberg.validate import Validation, validate_concurrent_commits, validate_removed_files_live

# Table properties (spec "Table Properties", write properties) and their defaults.
MERGE_ENABLED = "commit.manifest-merge.enabled"
MIN_COUNT_TO_MERGE = "commit.manifest.min-count-to-merge"
TARGET_SIZE = "commit.manifest.target-size-bytes"


def merge_enabled(props: Mapping[str, str]) -> bool:
    return str(props.get(MERGE_ENABLED, "true")).lower() == "true"


def min_count_to_merge(props: Mapping[str, str]) -> int:
    return int(props.get(MIN_COUNT_TO_MERGE, 100))


PARTITION_SUMMARY_LIMIT = "write.summary.partition-limit"


def partition_summary_limit(props: Mapping[str, str]) -> int:
    """``write.summary.partition-limit``: a commit changing at most this many partitions lists each in its
    snapshot summary (0, the default: none); an ``IcefloeError`` naming it for a value that is no count."""
    return max(integer(PARTITION_SUMMARY_LIMIT, props.get(PARTITION_SUMMARY_LIMIT, "0")), 0)


def target_manifest_size(props: Mapping[str, str]) -> int:
    return int(props.get(TARGET_SIZE, 8 * 1024 * 1024))


# --------------------------------------------------------------------------- one attempt
@dataclass
class PendingSnapshot:
    """One commit attempt's snapshot in the making: its ids, its parent and the files written.

    Manifests are named ``<commit uuid>-m<N>.avro`` and the manifest list
    ``snap-<snapshot id>-<attempt>-<commit uuid>.avro``, as Java names them.
    """

    io: FileIO
    ops: TableOperations
    base: TableMetadata
    branch: str
    parent: Optional[Snapshot]
    snapshot_id: int
    sequence_number: int
    commit_uuid: str
    attempt: int
    written: list[str] = field(default_factory=list[str])   # paths, deleted if the attempt fails
    manifest_count: int = 0
    codec: ManifestCodec = DEFAULT_CODEC       # the table's manifest codec (``write.manifest.compression-*``)

    @classmethod
    def start(cls, ops: TableOperations, base: TableMetadata, branch: str, commit_uuid: str,
              attempt: int, written: list[str]) -> "PendingSnapshot":
        unhonoured.check(base.properties, ops.location, base.location)      # before anything is written
        # a write to a branch that does not exist yet starts from main's head, as Iceberg does
        ref = base.refs.get(branch) or base.refs.get(MAIN_BRANCH)
        parent = base.snapshot_by_id(ref.snapshot_id) if ref is not None else None
        snapshot_id = new_snapshot_id()
        existing_ids = {s.snapshot_id for s in base.snapshots}
        while snapshot_id in existing_ids:
            snapshot_id = new_snapshot_id()
        return cls(ops.io, ops, base, branch, parent, snapshot_id, base.last_sequence_number + 1,
                   commit_uuid, attempt, written, codec=ManifestCodec.of(base.properties))

    @property
    def parent_id(self) -> Optional[int]:
        return self.parent.snapshot_id if self.parent else None

    @property
    def parent_summary(self) -> Optional[dict[str, str]]:
        return (self.parent.summary or {}) if self.parent else None

    def parent_manifests(self) -> list[ManifestFile]:
        return snapshot_manifests(self.io, self.parent)

    def entries(self, m: ManifestFile) -> list[ManifestEntry]:
        return load_manifest_entries(self.io, self.base, m)

    def new_manifest_path(self) -> str:
        """The path of this snapshot's next manifest (deleted if the attempt fails)."""
        path = f"{self.ops.metadata_dir}/{self.commit_uuid}-m{self.manifest_count}.avro"
        self.manifest_count += 1
        self.written.append(path)
        return path

    def write_manifest(self, entries: list[ManifestEntry], spec_id: int, content: int) -> ManifestFile:
        """A manifest of this snapshot holding ``entries``; ``content`` is the manifest-list kind."""
        schema = self.base.schema
        spec = self.base.spec_by_id(spec_id)
        path = self.new_manifest_path()
        length = write_manifest(self.io, path, schema, spec, entries,
                                content=DATA if content == DATA_MANIFEST else POSITION_DELETES,
                                format_version=self.base.format_version, codec=self.codec)
        return manifest_file_for(path, length, spec_id, content, self.snapshot_id, self.sequence_number,
                                 entries, spec.partition_type(schema))

    def finish(self, manifests: list[ManifestFile], summary: dict[str, str], staged: bool = False) -> Changes:
        """Write the manifest list; the changes that add the snapshot and move the branch to it
        (``staged``: the snapshot is added, no ref moves), on the condition that nothing moved since
        ``base`` was read."""
        list_path = f"{self.ops.metadata_dir}/snap-{self.snapshot_id}-{self.attempt}-{self.commit_uuid}.avro"
        self.written.append(list_path)
        base = self.base
        first_row_id = added_rows = None
        manifests = [with_counts(self.io, base, m) for m in manifests]     # a v1 list's may be missing
        if base.format_version >= 3:        # row lineage: data manifests without a first row id get one
            first_row_id = base.next_row_id or 0
            manifests, added_rows = assign_first_row_ids(manifests, first_row_id)
        write_manifest_list(self.io, list_path, manifests, self.snapshot_id, self.parent_id, self.sequence_number,
                            base.format_version, first_row_id)
        snap = Snapshot(snapshot_id=self.snapshot_id, sequence_number=self.sequence_number,
                        timestamp_ms=max(now_ms(), base.last_updated_ms), manifest_list=list_path,
                        summary=summary, parent_snapshot_id=self.parent_id, schema_id=base.schema.schema_id,
                        first_row_id=first_row_id, added_rows=added_rows)
        updates: list[TableUpdate] = [AddSnapshot(snap.to_json())]
        if not staged:
            ref = base.refs.get(self.branch)
            updates.append(set_ref_update(self.branch, SnapshotRef(snap.snapshot_id) if ref is None
                                          else replace(ref, snapshot_id=snap.snapshot_id)))
        return Changes(updates, requirements_for(base, [self.branch]), self.written)


# --------------------------------------------------------------------------- the producer
class SnapshotProducer:
    """One commit that produces a snapshot. Subclasses say what its manifests and summary are."""

    operation: str = ""

    def __init__(self, added: Iterable[DataFile] = (), summary_extra: Optional[dict[str, str]] = None):
        self.added: list[DataFile] = list(added)     # new data or delete files (the caller wrote them)
        self.summary_extra: dict[str, str] = dict(summary_extra or {})
        # stage only (write-audit-publish, spec "Snapshots": a snapshot no ref points to yet): the
        # snapshot is added to the metadata, its parent the branch's head, and no ref moves
        self.stage_only = False
        self.snapshot_id: Optional[int] = None       # the snapshot committed, once committed
        self.pending_id: Optional[int] = None        # the snapshot of the latest attempt

    def apply(self, pending: PendingSnapshot) -> tuple[list[ManifestFile], dict[str, str]]:
        """This snapshot's manifests and summary on top of ``pending.base``."""
        raise NotImplementedError

    def changes(self, ops: TableOperations, base: TableMetadata, branch: str, commit_uuid: str,
                attempt: int) -> Changes:
        """This snapshot produced on ``base``: its manifests and manifest list written, and the
        updates that add it (the files written are deleted if producing fails)."""
        written: list[str] = []
        try:
            pending = PendingSnapshot.start(ops, base, branch, commit_uuid, attempt, written)
            changes = pending.finish(*self.apply(pending), staged=self.stage_only)
        except BaseException:
            for p in written:
                ops.io.delete(p)
            raise
        self.pending_id = pending.snapshot_id
        return changes

    def committed(self, io: FileIO, meta: TableMetadata, changes: Changes) -> None:
        """The commit holding this snapshot is durable: note its id, drop manifests merged away."""
        self.snapshot_id = self.pending_id
        _drop_merged_away(io, meta, self.snapshot_id, changes.written)

    def commit(self, ops: TableOperations, branch: str = MAIN_BRANCH,
               policy: Optional[RetryPolicy] = None) -> TableMetadata:
        """Commit as one new snapshot of ``branch``, retrying lost races; returns the committed metadata."""
        commit_uuid = str(uuid.uuid4())
        out = commit_with_retry(ops, lambda base, n: self.changes(ops, base, branch, commit_uuid, n), policy)
        assert out.changes is not None    # self.changes always returns them
        self.committed(ops.io, out.new, out.changes)
        return out.new


def _drop_merged_away(io: FileIO, meta: TableMetadata, snapshot_id: Optional[int], written: list[str]) -> None:
    """Delete the manifests this commit wrote but its manifest list does not hold (new manifests
    that ``merge_manifests`` folded into a merged one), now that the commit is durable. Best
    effort: whatever is left is an orphan, and the commit stands either way."""
    if snapshot_id is None:
        return
    try:
        snap = meta.snapshot_by_id(snapshot_id)
        listed = {m.manifest_path for m in snapshot_manifests(io, snap)} | {snap.manifest_list}
        for p in written:
            if p not in listed:
                io.delete(p)
    except Exception:  # noqa: BLE001 - never fail a commit that has happened
        pass


class FileChangeProducer(SnapshotProducer):
    """A snapshot that adds files and removes live ones (Java's merging snapshot producer).

    ``removed_paths`` are exact files to remove, which must still be live;
    ``remove_all`` removes every live file. Added data files take
    ``data_sequence_number`` when given (compaction keeps the read snapshot's),
    else inherit the snapshot's. ``validation`` is checked against the snapshots
    committed since its read snapshot before each attempt.
    """

    def __init__(self, added: Iterable[DataFile] = (), removed_paths: Iterable[str] = (), *,
                 remove_all: bool = False, validation: Optional[Validation] = None,
                 data_sequence_number: Optional[int] = None, summary_extra: Optional[dict[str, str]] = None):
        super().__init__(added, summary_extra)
        self.removed_paths: set[str] = set(removed_paths)
        self.remove_all = remove_all
        self.validation = validation
        self.data_sequence_number = data_sequence_number
        # data files that get a new deletion vector here: their earlier vector gives way to it
        self.vector_targets: set[Optional[str]] = {f.referenced_data_file for f in self.added if f.is_deletion_vector}

    def apply(self, pending: PendingSnapshot) -> tuple[list[ManifestFile], dict[str, str]]:
        limit = partition_summary_limit(pending.base.properties)      # a bad value refused before anything is written
        if self.validation is not None:
            validate_concurrent_commits(pending.io, pending.base, pending.parent_id, self.validation)
        kept, removed = self.carry_over(pending)
        manifests = self.new_manifests(pending) + kept
        base = pending.base
        if merge_enabled(base.properties):
            manifests = merge_manifests(pending, manifests, min_count_to_merge(base.properties),
                                        target_manifest_size(base.properties))
        summary = build_summary(self.operation, list(self.added), removed, pending.parent_summary,
                                extra=self.summary_extra, partition_limit=limit,
                                partition_paths=(lambda f: base.spec_by_id(f.spec_id).partition_path(base.schema, f.partition))
                                if limit > 0 else None)
        return manifests, summary

    def removes(self, f: DataFile) -> bool:
        if self.remove_all or f.file_path in self.removed_paths:
            return True
        # a deletion vector goes with its data file, and gives way to a new vector for that file
        # (which holds its positions: at most one vector per data file); so does a v2 position
        # delete file scoped to that one file, once a vector holds its positions
        target = f.referenced_data_file
        if target is None or f.content != POSITION_DELETES:
            return False
        return target in self.vector_targets or (f.is_deletion_vector and target in self.removed_paths)

    def carry_over(self, pending: PendingSnapshot) -> tuple[list[ManifestFile], list[DataFile]]:
        """The parent's manifests that stay live, those losing files rewritten with the removed
        entries DELETED and the others EXISTING; and the files removed."""
        removed: list[DataFile] = []
        kept: list[ManifestFile] = []
        found_paths: set[str] = set()
        removing = self.remove_all or bool(self.removed_paths) or bool(self.vector_targets)
        specs = pending.base.specs_by_id()
        for m in pending.parent_manifests():
            if m.partition_spec_id not in specs:   # carried over unopened: check what can be checked
                raise CorruptMetadataError(pending.parent.manifest_list if pending.parent else "", f"the entry for manifest {m.manifest_path} "
                                           f"names partition spec {m.partition_spec_id!r}, which the table metadata "
                                           "does not have")
            if not m.has_added_or_existing():
                # only deleted entries: nothing live, so later snapshots need not carry it
                continue
            if not removing:
                kept.append(m)
                continue
            live = [e for e in pending.entries(m) if e.status != DELETED]
            if not any(self.removes(e.data_file) for e in live):
                if live:
                    kept.append(m)
                continue
            rewritten: list[ManifestEntry] = []
            for e in live:
                if self.removes(e.data_file):
                    rewritten.append(as_deleted(e, pending.snapshot_id))
                    removed.append(e.data_file)
                    if e.data_file.content == DATA or e.data_file.file_path in self.removed_paths:
                        found_paths.add(e.data_file.file_path)
                else:
                    rewritten.append(as_existing(e))
            kept.append(pending.write_manifest(rewritten, m.partition_spec_id, m.content))
        validate_removed_files_live(pending.ops.location, self.removed_paths, found_paths)
        return kept, removed

    def new_manifests(self, pending: PendingSnapshot) -> list[ManifestFile]:
        """The added files as ADDED entries, one manifest per (partition spec, content kind)."""
        groups: dict[tuple[int, int], list[DataFile]] = {}
        for f in self.added:
            kind = DATA_MANIFEST if f.content == DATA else DELETE_MANIFEST
            groups.setdefault((f.spec_id, kind), []).append(f)
        out: list[ManifestFile] = []
        for (spec_id, kind), files in sorted(groups.items()):
            data_seq = self.data_sequence_number if kind == DATA_MANIFEST else None
            entries = [ManifestEntry(ADDED, pending.snapshot_id, data_seq, None, f) for f in files]
            out.append(pending.write_manifest(entries, spec_id, kind))
        return out


# --------------------------------------------------------------------------- manifest merging
# merge by copying each kept entry's encoded data file (``manifest_merge``) where it can; tests turn
# it off to compare with the entry-by-entry merge
FAST_MERGE = True


def _merge_copying(pending: PendingSnapshot, bin_: list[ManifestFile], spec_id: int,
                   content: int) -> Optional[ManifestFile]:
    """``bin_`` merged by ``manifest_merge.merge``; None (nothing left written) where it cannot."""
    path = pending.new_manifest_path()     # listed as written first: deleted if the attempt fails
    base = pending.base
    got = manifest_merge.merge(pending.io, bin_, path, base.schema, base.spec_by_id(spec_id), content,
                               base.format_version, pending.snapshot_id, pending.sequence_number, pending.codec)
    if got is None:            # not written: the path goes to the entry-by-entry merge
        pending.written.remove(path)
        pending.manifest_count -= 1
    return got


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


def merge_manifests(pending: PendingSnapshot, manifests: list[ManifestFile], min_count: int,
                    target: int) -> list[ManifestFile]:
    """Merge small manifests on commit, as Java's merging snapshot producer does.

    Manifests are grouped by (spec, content) and packed into bins of ``target``
    bytes. A bin of one manifest is kept; the bin holding the newest manifest is
    merged only once it has ``min_count`` manifests (so small tables keep one
    manifest per commit until then); other bins are merged. In a merged manifest
    this snapshot's ADDED and DELETED entries keep their status, older live
    entries become EXISTING and older DELETED entries are dropped.
    """
    groups: "OrderedDict[tuple[int, int], list[ManifestFile]]" = OrderedDict()
    for m in manifests:
        groups.setdefault((m.partition_spec_id, m.content), []).append(m)
    out: list[ManifestFile] = []
    for (spec_id, content), group in groups.items():
        first = group[0]
        for bin_ in _pack(group, target):
            if len(bin_) == 1 or (first in bin_ and len(bin_) < min_count):
                out.extend(bin_)
                continue
            merged = _merge_copying(pending, bin_, spec_id, content) if FAST_MERGE else None
            if merged is not None:
                out.append(merged)
                continue
            entries: list[ManifestEntry] = []
            for m in bin_:
                for e in pending.entries(m):
                    if e.snapshot_id == pending.snapshot_id and e.status in (ADDED, DELETED):
                        entries.append(e)
                    elif e.status != DELETED:
                        entries.append(as_existing(e))
            out.append(pending.write_manifest(entries, spec_id, content))
    return out
