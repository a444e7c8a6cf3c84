# pyright: strict
"""Planning a changelog scan: the row changes of a range of snapshots.

The range is the ancestors of the end snapshot (default: the current one) after the
start snapshot (exclusive; default: from the oldest ancestor), oldest first. Each
snapshot that changed data gets an ordinal (0, 1, ...): the rows of the data files it
added are inserts, the rows of the data files it removed are deletes. Snapshots that
only rewrite files (``replace``) change no rows and are left out, as Iceberg's
changelog scan does. Position deletes, being rows removed from a file that stays,
are deletes too; equality deletes cannot be turned into rows and are refused, as is
a range whose start is not an ancestor of its end.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from icefloe.core.io import FileIO

from icefloe.errors import NoSuchSnapshotError, NotSupportedError
from icefloe.iceberg.manifest import ADDED, DATA, DELETED, EQUALITY_DELETES, POSITION_DELETES, DataFile
from icefloe.iceberg.manifest_reader import entries_written_by
from icefloe.iceberg.snapshot import REPLACE, Snapshot
from icefloe.iceberg.streaming import branch_history
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata


@dataclass
class SnapshotChanges:
    snapshot: Snapshot
    ordinal: int
    # (DataFile, data sequence number) of the data files the snapshot added, and removed
    added: list[tuple[DataFile, int]] = field(default_factory=list[tuple[DataFile, int]])
    removed: list[tuple[DataFile, int]] = field(default_factory=list[tuple[DataFile, int]])
    # delete files whose rows this snapshot removed
    position_deletes: list[DataFile] = field(default_factory=list[DataFile])


def snapshot_range(meta: TableMetadata, start_exclusive: Optional[int], end_inclusive: Optional[int],
                   branch: str = MAIN_BRANCH) -> list[Snapshot]:
    """The snapshots after ``start_exclusive`` up to ``end_inclusive``, oldest first."""
    if end_inclusive is None:
        history = branch_history(meta, branch)
    else:
        meta.snapshot_by_id(end_inclusive)       # a clear error for an unknown id
        history: list[Snapshot] = []
        snapshots: list[Snapshot] = meta.snapshots
        by_id = {s.snapshot_id: s for s in snapshots}
        sid: Optional[int] = end_inclusive
        while sid is not None and sid in by_id:
            history.append(by_id[sid])
            sid = by_id[sid].parent_snapshot_id
    if start_exclusive is None:
        return list(reversed(history))
    ids = [s.snapshot_id for s in history]
    if start_exclusive not in ids:
        meta.snapshot_by_id(start_exclusive)
        raise NoSuchSnapshotError(f"snapshot {start_exclusive} is not an ancestor of snapshot "
                                  f"{ids[0] if ids else end_inclusive}: no changelog between them")
    return list(reversed(history[:ids.index(start_exclusive)]))


def plan_changelog(io: FileIO, meta: TableMetadata, start_exclusive: Optional[int] = None,
                   end_inclusive: Optional[int] = None, table_name: str = "") -> list[SnapshotChanges]:
    out: list[SnapshotChanges] = []
    for snap in snapshot_range(meta, start_exclusive, end_inclusive):
        if snap.operation == REPLACE:
            continue
        ch = SnapshotChanges(snap, len(out))
        for e in entries_written_by(io, meta, snap):
            f = e.data_file
            if f.content == DATA:
                if e.status == ADDED:
                    ch.added.append((f, e.sequence_number or 0))
                elif e.status == DELETED:
                    ch.removed.append((f, e.sequence_number or 0))
            elif f.content == POSITION_DELETES and e.status == ADDED:
                ch.position_deletes.append(f)
            elif f.content == EQUALITY_DELETES and e.status == ADDED:
                raise NotSupportedError("changelog", table_name, "iceberg",
                                        f"snapshot {snap.snapshot_id} has equality delete file {f.file_path}, "
                                        "whose deleted rows a changelog cannot list")
        out.append(ch)   # every snapshot of the range takes an ordinal, even one that changed nothing
    return out
