# pyright: strict
"""Streaming commits and streaming reads of a Paimon table.

A streaming write is one ``commitUser`` (stable for the life of the query, across
restarts) whose snapshots carry the micro-batch id as ``commitIdentifier``. Before a
batch is committed, the latest snapshot of that user is looked up (walking back from
the latest snapshot): a batch id at or below its identifier was committed before a
crash and is not committed again, which is how Paimon filters the committables a
restarted job replays.

A streaming read follows snapshot ids in order and takes each ``APPEND`` snapshot's
delta: the files it added. ``COMPACT`` snapshots only rewrite files and are skipped;
``OVERWRITE`` snapshots are skipped unless ``streaming-read-overwrite`` is set, when
their added files are read.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

from icefloe.errors import BatchAlreadyCommitted, NoSuchSnapshotError
from icefloe.paimon import manifest as mf
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.snapshot import APPEND, COMPACT, OVERWRITE, Snapshot


def latest_of_user(store: FileStore, user: str, latest: Optional[Snapshot]) -> Optional[Snapshot]:
    """The newest snapshot ``user`` committed, looking back from ``latest``."""
    if latest is None:
        return None
    earliest = store.snapshots.earliest_id() or 1
    sid = latest.id
    while sid >= earliest:
        try:
            snap = latest if sid == latest.id else store.snapshots.snapshot(sid)
        except NoSuchSnapshotError:  # expired while we looked: nothing older to find
            return None
        if snap.commit_user == user:
            return snap
        sid -= 1
    return None


def not_committed_check(store: FileStore, user: Optional[str],
                        identifier: int) -> Callable[[Optional[Snapshot]], None]:
    """A commit validation: refuse (``BatchAlreadyCommitted``) when ``user`` committed
    ``identifier`` or a later batch already."""
    if not user:
        raise ValueError("a streaming commit needs its commit user")

    def check(latest: Optional[Snapshot]) -> None:
        mine = latest_of_user(store, user, latest)
        if mine is not None and identifier <= mine.commit_identifier:
            raise BatchAlreadyCommitted(f"commit user {user} committed batch {mine.commit_identifier} "
                                        f"(snapshot {mine.id}); batch {identifier} is a replay")
    return check


def delta_entries(store: FileStore, snap: Snapshot, read_overwrite: bool = False) -> list[mf.ManifestEntry]:
    """The ADD entries of ``snap``'s delta that a stream reads (none for a compaction, or
    for an overwrite unless ``read_overwrite``), in manifest order."""
    if snap.commit_kind == COMPACT or (snap.commit_kind == OVERWRITE and not read_overwrite):
        return []
    if snap.commit_kind not in (APPEND, OVERWRITE):
        return []
    manifests = store.read_manifest_list(snap.delta_manifest_list, snap.delta_manifest_list_size)
    return [mf.ManifestEntry(e.kind, e.partition, e.bucket, e.total_buckets,
                             replace(e.file, file_path=store.data_file_path(e)))
            for e in store.entries(manifests) if e.kind == mf.ADD]
