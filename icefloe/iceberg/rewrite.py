# pyright: strict
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
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Mapping, Optional, Sequence

from icefloe.iceberg.manifest import DATA, DELETED, DataFile, ManifestEntry, as_existing
from icefloe.iceberg.manifest_list import ManifestFile
from icefloe.iceberg.snapshot import REPLACE, Snapshot, build_summary
from icefloe.iceberg.snapshot_producer import FileChangeProducer, PendingSnapshot, SnapshotProducer, \
    target_manifest_size
from icefloe.iceberg.validate import SNAPSHOT, Validation

if TYPE_CHECKING:
    from icefloe.iceberg.partitioning import PartitionSpec
    from icefloe.iceberg.scan import FileScanTask


# --------------------------------------------------------------------------- compaction
@dataclass
class CompactionPlan:
    rewrite: list[FileScanTask] = field(default_factory=list["FileScanTask"])  # FileScanTasks whose files are rewritten
    drop_delete_files: list[DataFile] = field(default_factory=list[DataFile])  # DataFiles of delete files that no longer apply

    @property
    def empty(self) -> bool:
        return not self.rewrite and not self.drop_delete_files


TARGET_FILE_SIZE = "write.target-file-size-bytes"
_MAX_INT = 2 ** 31 - 1
# options of Iceberg's rewrite procedures about how the job runs, not what it writes, each to the one
# value icefloe carries out (None: any value): every file group is rewritten by one job, committed once
RUN_OPTIONS: dict[str, Optional[str]] = {"max-concurrent-file-group-rewrites": None, "partial-progress.max-commits": None,
               "rewrite-job-order": None, "partial-progress.enabled": "false"}


def check_run_option(procedure: str, key: str, value: object, run_options: dict[str, Optional[str]],
                     known: Iterable[str]) -> None:
    """Raise ValueError unless ``key`` is one of ``procedure``'s run options with a value icefloe
    carries out (``known``: every option name of the procedure, for the message)."""
    if key not in run_options:
        raise ValueError(f"unknown {procedure} option {key!r}; known: {', '.join(sorted(known))}")
    needed = run_options[key]
    if needed is not None and str(value).strip().lower() != needed:
        raise ValueError(f"{procedure} option {key}={value} is not supported: icefloe rewrites every file "
                         f"group in one commit with {key}={needed}")


@dataclass(frozen=True)
class BinPack:
    """Which files a bin-pack rewrite takes, with the defaults of Iceberg's rewrite_data_files:
    a file is a candidate when its size is outside [min, max] file size (75% and 180% of the
    target), when ``delete_file_threshold`` delete files apply to it, or when its file-scoped
    deletes hold ``delete_ratio_threshold`` of its rows; a partition's candidates are rewritten
    when there are ``min_input_files`` of them, when together they exceed the target size or the
    group size, or when one has too many deletes. ``rewrite_all`` takes every file."""

    target_file_size: int
    min_file_size: int
    max_file_size: int
    min_input_files: int = 5
    rewrite_all: bool = False
    max_file_group_size: int = 100 * 1024 ** 3
    delete_file_threshold: int = _MAX_INT
    delete_ratio_threshold: float = 0.3

    # the option names of Iceberg's procedure, each to its field and type
    OPTIONS: ClassVar[dict[str, tuple[str, type]]] = {"target-file-size-bytes": ("target_file_size", int), "min-file-size-bytes": ("min_file_size", int),
               "max-file-size-bytes": ("max_file_size", int), "min-input-files": ("min_input_files", int),
               "rewrite-all": ("rewrite_all", bool), "max-file-group-size-bytes": ("max_file_group_size", int),
               "delete-file-threshold": ("delete_file_threshold", int),
               "delete-ratio-threshold": ("delete_ratio_threshold", float)}

    @classmethod
    def from_options(cls, options: Mapping[str, Any], properties: Mapping[str, Any]) -> "BinPack":
        """Iceberg's option names (already checked to be known) over the table's target size."""
        values: dict[str, Any] = {}
        for key, raw in options.items():
            name, kind = cls.OPTIONS[key]
            values[name] = str(raw).strip().lower() == "true" if kind is bool else kind(raw)
        target = values.get("target_file_size", int(properties.get(TARGET_FILE_SIZE, 512 * 1024 * 1024)))
        values["target_file_size"] = target
        values.setdefault("min_file_size", int(target * 0.75))
        values.setdefault("max_file_size", int(target * 1.8))
        plan = cls(**values)
        if not 0 <= plan.min_file_size <= plan.target_file_size <= plan.max_file_size:
            raise ValueError(f"rewrite options need min-file-size-bytes <= target-file-size-bytes <= "
                             f"max-file-size-bytes, got {plan.min_file_size}, {plan.target_file_size}, "
                             f"{plan.max_file_size}")
        if plan.min_input_files < 1 or plan.delete_file_threshold < 1:
            raise ValueError("min-input-files and delete-file-threshold must be at least 1")
        return plan

    def too_many_deletes(self, task: FileScanTask) -> bool:
        deletes = task.deletes
        if not deletes:
            return False
        if len(deletes) >= self.delete_file_threshold:
            return True
        scoped = sum(d.record_count for d in deletes if d.referenced_data_file == task.path)
        return min(scoped, task.file.record_count) >= self.delete_ratio_threshold * max(task.file.record_count, 1)

    def candidate(self, task: FileScanTask) -> bool:
        size = task.file.file_size_in_bytes
        return self.rewrite_all or not (self.min_file_size <= size <= self.max_file_size) or \
            self.too_many_deletes(task)

    def worth_rewriting(self, group: list[FileScanTask]) -> bool:
        size = sum(t.file.file_size_in_bytes for t in group)
        return self.rewrite_all or (len(group) > 1 and (len(group) >= self.min_input_files or
                                                        size > self.target_file_size)) or \
            size > self.max_file_group_size or any(self.too_many_deletes(t) for t in group)


def plan_compaction(candidates: list[FileScanTask], all_tasks: list[FileScanTask], live_delete_files: Iterable[DataFile],
                    default_spec_id: int,
                    binpack: Optional[BinPack] = None) -> CompactionPlan:
    """Choose what to rewrite among ``candidates`` (tasks matching the filter): per partition, the
    files ``binpack`` selects (default: every partition with two files or more, or with deletes);
    files written under an older partition spec are always rewritten into the current one.

    ``all_tasks`` are every live data file's tasks (with deletes attached) and
    ``live_delete_files`` every live delete file of the snapshot.
    """
    groups: dict[tuple[int, tuple[Any, ...]], list[FileScanTask]] = {}
    for t in candidates:
        if binpack is None or binpack.candidate(t) or t.partition_key[0] != default_spec_id:
            groups.setdefault(t.partition_key, []).append(t)
    rewrite: list[FileScanTask] = []
    for key in sorted(groups, key=repr):
        tasks = groups[key]
        wanted = binpack.worth_rewriting(tasks) if binpack is not None else \
            len(tasks) >= 2 or any(t.deletes for t in tasks)
        if wanted or key[0] != default_spec_id:
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
                 dropped_deletes: Iterable[DataFile] = (), summary_extra: Optional[dict[str, str]] = None):
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

    def __init__(self, summary_extra: Optional[dict[str, str]] = None, spec_id: Optional[int] = None,
                 sort_by: Optional[Sequence[str]] = None):
        super().__init__(summary_extra=summary_extra)
        self.spec_id = spec_id
        self.sort_by: list[str] = list(sort_by) if sort_by else []

    def _order(self, spec: PartitionSpec) -> list[int]:
        """Positions in ``spec``'s partition tuple of the fields ``sort_by`` names (Iceberg's
        ``sortBy``: the rewritten manifests are clustered by them first)."""
        names = [f.name for f in spec.fields]
        unknown = [n for n in self.sort_by if n not in names]
        if unknown:
            raise ValueError(f"rewrite_manifests sort_by: partition spec {spec.spec_id} has no field "
                             f"{', '.join(unknown)}; its fields are {', '.join(names) or 'none'}")
        return [names.index(n) for n in self.sort_by]

    def apply(self, pending: PendingSnapshot) -> tuple[list[ManifestFile], dict[str, str]]:
        target = target_manifest_size(pending.base.properties)
        live = [m for m in pending.parent_manifests() if m.has_added_or_existing()]
        if self.spec_id is not None:
            pending.base.spec_by_id(int(self.spec_id))       # an unknown spec id is an error
        old = [m for m in live if self.spec_id is None or m.partition_spec_id == int(self.spec_id)]
        kept = [m for m in live if m not in old]
        groups: OrderedDict[tuple[int, int], list[ManifestEntry]] = OrderedDict()
        sizes: dict[tuple[int, int], float] = {}
        for m in old:
            entries = [as_existing(e) for e in pending.entries(m) if e.status != DELETED]
            key = (m.partition_spec_id, m.content)
            groups.setdefault(key, []).extend(entries)
            # the counts are optional in format v1's manifest lists
            per_entry = m.manifest_length / max(1, (m.added_files_count or 0) + (m.existing_files_count or 0)
                                                + (m.deleted_files_count or 0))
            sizes[key] = max(sizes.get(key, 0), per_entry)
        out: list[ManifestFile] = []
        processed = 0
        orders = {key: self._order(pending.base.spec_by_id(key[0])) for key in groups}   # checked before writing
        for (spec_id, content), entries in sorted(groups.items()):
            first = orders[(spec_id, content)]
            entries.sort(key=lambda e: (repr(tuple(e.data_file.partition[i] for i in first)),
                                        repr(e.data_file.partition), e.data_file.file_path))
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
