"""The ``replace`` snapshots: table contents unchanged (spec "Snapshots", operation ``replace``).

Compaction (``RewriteFiles``): data files are grouped by partition; a group is
rewritten when it has more than one file, when delete files apply to any of
its files (rewriting folds them in) or when it was written with an older
partition spec. After the rewrite, a delete file that applies to no remaining
data file is removed too (spec, "Scan Planning": it can never apply again,
since files added later get higher data sequence numbers).

The rewritten files keep the read snapshot's sequence number as their data
sequence number, so equality deletes committed concurrently still apply to
them, while deletes already folded in (sequence number <= it) no longer do.
Under snapshot isolation a concurrent append does not conflict; a concurrent
delete file for the rewritten partitions, or removal of a rewritten file, does.

Manifest rewrite (``RewriteManifests``): the live entries regrouped into
manifests of ``commit.manifest.target-size-bytes``; no file is added or removed.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Iterable, Optional

from icefloe.iceberg.manifest import DATA, DELETED, DataFile, as_existing
from icefloe.iceberg.manifest_list import ManifestFile
from icefloe.iceberg.snapshot import REPLACE, Snapshot, build_summary
from icefloe.iceberg.snapshot_producer import FileChangeProducer, PendingSnapshot, SnapshotProducer, \
    target_manifest_size
from icefloe.iceberg.validate import SNAPSHOT, Validation


# --------------------------------------------------------------------------- compaction
@dataclass
class CompactionPlan:
    rewrite: list = field(default_factory=list)          # FileScanTasks whose files are rewritten
    drop_delete_files: list = field(default_factory=list)  # DataFiles of delete files that no longer apply

    @property
    def empty(self) -> bool:
        return not self.rewrite and not self.drop_delete_files


def plan_compaction(candidates: list, all_tasks: list, live_delete_files: Iterable, default_spec_id: int,
                    min_input_files: int = 2) -> CompactionPlan:
    """Choose what to rewrite among ``candidates`` (tasks matching the filter).

    ``all_tasks`` are every live data file's tasks (with deletes attached) and
    ``live_delete_files`` every live delete file of the snapshot.
    """
    groups: dict = {}
    for t in candidates:
        groups.setdefault(t.partition_key, []).append(t)
    rewrite = []
    for key in sorted(groups, key=repr):
        tasks = groups[key]
        if len(tasks) >= min_input_files or any(t.deletes for t in tasks) or key[0] != default_spec_id:
            rewrite.extend(tasks)
    rewritten = {t.path for t in rewrite}
    still_used = {d.file_path for t in all_tasks if t.path not in rewritten for d in t.deletes}
    drop = [d for d in live_delete_files if d.content != DATA and d.file_path not in still_used]
    return CompactionPlan(rewrite, drop)


class RewriteFiles(FileChangeProducer):
    """Replace ``rewritten`` data files by ``added`` ones holding the same rows, and drop the
    delete files ``dropped_deletes`` that no longer apply, as planned on ``read_snapshot``."""

    operation = REPLACE

    def __init__(self, read_snapshot: Snapshot, rewritten: Iterable[DataFile], added: Iterable[DataFile],
                 dropped_deletes: Iterable[DataFile] = (), summary_extra: Optional[dict] = None):
        rewritten = list(rewritten)
        rewritten_paths = {f.file_path for f in rewritten}
        validation = Validation(read_snapshot_id=read_snapshot.snapshot_id, isolation=SNAPSHOT,
                                operation="REWRITE_DATA_FILES", protected_files=rewritten_paths,
                                protected_partitions={(f.spec_id, f.partition) for f in rewritten})
        super().__init__(added, rewritten_paths | {d.file_path for d in dropped_deletes}, validation=validation,
                         data_sequence_number=read_snapshot.sequence_number, summary_extra=summary_extra)


# --------------------------------------------------------------------------- manifest rewrite
class RewriteManifests(SnapshotProducer):
    """Regroup every live entry by (spec, content) into manifests of about the target size;
    with ``spec_id`` only the manifests of that partition spec (the others are kept as they are)."""

    operation = REPLACE

    def __init__(self, summary_extra: Optional[dict] = None, spec_id: Optional[int] = None):
        super().__init__(summary_extra=summary_extra)
        self.spec_id = spec_id

    def apply(self, pending: PendingSnapshot) -> tuple[list[ManifestFile], dict]:
        target = target_manifest_size(pending.base.properties)
        live = [m for m in pending.parent_manifests() if m.has_added_or_existing()]
        if self.spec_id is not None:
            pending.base.spec_by_id(int(self.spec_id))       # an unknown spec id is an error
        old = [m for m in live if self.spec_id is None or m.partition_spec_id == int(self.spec_id)]
        kept = [m for m in live if m not in old]
        groups: "OrderedDict[tuple, list]" = OrderedDict()
        sizes: dict = {}
        for m in old:
            entries = [as_existing(e) for e in pending.entries(m) if e.status != DELETED]
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
                out.append(pending.write_manifest(chunk, spec_id, content))
        extra = {"manifests-created": str(len(out)), "manifests-replaced": str(len(old)),
                 "manifests-kept": str(len(kept)), "entries-processed": str(processed)}
        out += kept
        summary = build_summary(REPLACE, [], [], pending.parent_summary, extra={**self.summary_extra, **extra})
        summary.pop("changed-partition-count", None)   # no partition changes content in a manifest rewrite
        return out, summary
