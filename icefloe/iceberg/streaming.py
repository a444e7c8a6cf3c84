# pyright: strict
"""Streaming commits and streaming reads of an Iceberg table.

A streaming write commits each micro-batch as one snapshot whose summary records
the query's id and the batch (epoch) id, under the keys Iceberg's Spark runtime
uses. A batch that is replayed after a crash (its files committed, the engine's own
record of it lost) is recognised by walking the branch's history back to the
query's latest snapshot: an epoch at or below the one recorded there is not
committed again. The check runs inside every commit attempt, against the metadata
the snapshot would follow.

A streaming read follows the branch's snapshots in order and takes, from each
``append`` snapshot, the data files it added. Snapshots that only rewrite files
(``replace``) are skipped; one that deletes or overwrites rows stops the stream with
an error, unless the reader asked to skip such snapshots.
"""
from __future__ import annotations

from typing import Iterable, Optional

from icefloe.core.io import FileIO
from icefloe.iceberg.append import Append
from icefloe.iceberg.manifest import ADDED, DATA, DataFile
from icefloe.iceberg.manifest_list import ManifestFile
from icefloe.iceberg.manifest_reader import entries_written_by
from icefloe.iceberg.overwrite import Overwrite
from icefloe.iceberg.snapshot_producer import PendingSnapshot, SnapshotProducer
from icefloe.iceberg.snapshot import APPEND, DELETE, OVERWRITE, REPLACE, Snapshot
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata
from icefloe.errors import BatchAlreadyCommitted, StreamStopped

QUERY_ID = "spark.sql.streaming.queryId"
EPOCH_ID = "spark.sql.streaming.epochId"


def branch_history(meta: TableMetadata, branch: str = MAIN_BRANCH) -> list[Snapshot]:
    """The branch's snapshots, newest first (the head, its parent, ...)."""
    ref = meta.refs.get(branch)
    out: list[Snapshot] = []
    sid = ref.snapshot_id if ref is not None else None
    by_id = {s.snapshot_id: s for s in meta.snapshots}
    while sid is not None and sid in by_id:
        s = by_id[sid]
        out.append(s)
        sid = s.parent_snapshot_id
    return out


def last_committed_epoch(meta: TableMetadata, query_id: str, branch: str = MAIN_BRANCH) -> Optional[int]:
    """The highest epoch the query ``query_id`` committed to ``branch`` (its latest snapshot)."""
    for s in branch_history(meta, branch):
        summary = s.summary or {}
        if summary.get(QUERY_ID) == query_id:
            try:
                return int(summary[EPOCH_ID])
            except (KeyError, ValueError):
                return None
    return None


class _Once(SnapshotProducer):
    """Mixin: refuse the commit when the query committed this epoch (or a later one) already."""

    query_id: str
    epoch: int

    def apply(self, pending: PendingSnapshot) -> tuple[list[ManifestFile], dict[str, str]]:
        last = last_committed_epoch(pending.base, self.query_id, pending.branch)
        if last is not None and self.epoch <= last:
            raise BatchAlreadyCommitted(f"query {self.query_id} committed epoch {last}; epoch {self.epoch} is a replay")
        return super().apply(pending)     # the producer after this mixin in the MRO


class StreamingAppend(_Once, Append):
    def __init__(self, files: Iterable[DataFile], query_id: str, epoch: int,
                 summary_extra: Optional[dict[str, str]] = None):
        super().__init__(files, summary_extra={**(summary_extra or {}), QUERY_ID: query_id, EPOCH_ID: str(epoch)})
        self.query_id, self.epoch = query_id, epoch


class StreamingOverwrite(_Once, Overwrite):
    """``complete`` output mode: each batch replaces the whole table."""

    def __init__(self, files: Iterable[DataFile], query_id: str, epoch: int,
                 summary_extra: Optional[dict[str, str]] = None):
        super().__init__(files, remove_all=True,
                         summary_extra={**(summary_extra or {}), QUERY_ID: query_id, EPOCH_ID: str(epoch)})
        self.query_id, self.epoch = query_id, epoch


# --------------------------------------------------------------------------- reading a stream
def snapshots_after(meta: TableMetadata, after: Optional[int], branch: str = MAIN_BRANCH) -> list[Snapshot]:
    """The branch's snapshots committed after ``after`` (None: all of them), oldest first.
    Raises ValueError when ``after`` is not an ancestor of the branch head any more."""
    history = branch_history(meta, branch)
    if after is None:
        return list(reversed(history))
    ids = [s.snapshot_id for s in history]
    if after not in ids:
        raise ValueError(f"snapshot {after} is no longer in the history of {branch}")
    return list(reversed(history[:ids.index(after)]))


def added_data_files(io: FileIO, meta: TableMetadata, snap: Snapshot) -> list[tuple[DataFile, int]]:
    """(data file, data sequence number) for each data file ``snap`` added, in manifest order."""
    return [(e.data_file, e.sequence_number or 0) for e in entries_written_by(io, meta, snap, data_only=True)
            if e.status == ADDED and e.data_file.content == DATA]


def stream_files(io: FileIO, meta: TableMetadata, snap: Snapshot, skip_deletes: bool = False,
                 skip_overwrites: bool = False) -> list[tuple[DataFile, int]]:
    """The data files a stream takes from ``snap``: what an append added; nothing from a
    rewrite; a delete or overwrite stops the stream unless the matching skip is asked."""
    op = snap.operation
    if op == APPEND:
        return added_data_files(io, meta, snap)
    if op == REPLACE:
        return []
    if op == DELETE and skip_deletes:
        return []
    if op == OVERWRITE and skip_overwrites:
        return []
    if op in (DELETE, OVERWRITE):
        option = "streaming-skip-delete-snapshots" if op == DELETE else "streaming-skip-overwrite-snapshots"
        raise StreamStopped(f"snapshot {snap.snapshot_id} is a {op}, which a stream of appended rows cannot "
                            f"pass; set option {option}=true to skip such snapshots")
    return added_data_files(io, meta, snap)
