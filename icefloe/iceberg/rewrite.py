"""Compaction planning (the ``replace`` operation: table contents unchanged).

Data files are grouped by partition; a group is rewritten when it has more than
one file, when delete files apply to any of its files (rewriting folds them in)
or when it was written with an older partition spec. After the rewrite, a delete
file that applies to no remaining data file is removed too (spec, "Scan
Planning": it can never apply again, since files added later get higher data
sequence numbers).

The rewritten files keep the read snapshot's sequence number as their data
sequence number, so equality deletes committed concurrently still apply to
them, while deletes already folded in (sequence number <= it) no longer do.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from icefloe.iceberg.manifest import DATA


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
