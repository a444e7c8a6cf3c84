"""Each format's side of a Structured Streaming query, behind one interface (``StreamFormat``).

The stream source and sink (``icefloe.spark.streaming``) never ask which format a table is: they
get a ``StreamFormat`` for the table's location (``stream_format``, the one place the format is
chosen) and ask it for the table's snapshots, the files each snapshot adds (its units) and the
batch commits. Iceberg's rules are ``icefloe.iceberg.streaming``'s (snapshot ancestry, the files a
snapshot adds, the query id and epoch in the snapshot summary); Paimon's are
``icefloe.paimon.streaming``'s and ``icefloe.paimon.changelog``'s (snapshot ids in sequence, kept
changelogs, ``commitUser`` and ``commitIdentifier``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Optional, Protocol

from icefloe.core.io import LOCAL, FileIO, normalize_location
from icefloe.errors import NoSuchSnapshotError, StreamingSetupError, UnsupportedTableError
from icefloe.iceberg import streaming as ice_stream
from icefloe.iceberg.table_metadata import MAIN_BRANCH
from icefloe.paimon import chain
from icefloe.paimon import changelog as paimon_changelog
from icefloe.paimon import consumer as paimon_consumer
from icefloe.paimon import streaming as paimon_stream

if TYPE_CHECKING:
    from icefloe.iceberg.manifest import DataFile

PAIMON, ICEBERG = "paimon", "iceberg"


class Unit:
    """One file of the stream: what a task reads, and its row count for rate limits. ``kind``:
    "file", a data file; "delta", a Paimon key-value file's records."""

    __slots__ = ("path", "rows", "deletes", "kind")

    def __init__(self, path: str, rows: int, deletes: Iterable[DataFile] = (), kind: str = "file"):
        self.path, self.rows, self.deletes, self.kind = path, rows, list(deletes), kind


class StreamFormat(Protocol):
    """A table's snapshots as a stream sees them, and its micro-batch commits."""

    #: whether a stream of this table may carry each row's kind (+I, -U, +U, -D) and change records
    changelog_rows: bool

    def latest_id(self) -> int:
        """The newest snapshot's id (-1: none yet)."""
        ...

    def following(self, sid: int) -> list:
        """Snapshot ids committed after ``sid`` (-1: all), oldest first."""
        ...

    def before(self, sid: int) -> int:
        """The snapshot just before ``sid`` (-1 when ``sid`` is the first)."""
        ...

    def last_before_time(self, millis: int) -> int:
        """The newest snapshot committed before ``millis`` (-1: none)."""
        ...

    def units(self, sid: int, full: bool, options: dict) -> list:
        """The units a stream reads of snapshot ``sid``: the whole table as of it (``full``) or
        what it added."""
        ...

    def commit_batch(self, files: list, query_id: str, batch_id: int, overwrite: bool) -> bool:
        """Commit one micro-batch's files as one snapshot unless the query committed this batch
        already (then the files are deleted). Returns whether a snapshot was committed."""
        ...

    def last_committed_batch(self, query_id: str) -> Optional[int]:
        """The highest batch id the query committed to the table (None: none)."""
        ...

    def consumer(self, consumer_id: str) -> Optional[int]:
        """The next snapshot consumer ``consumer_id`` recorded (None: no such consumer)."""
        ...

    def record_consumer(self, consumer_id: str, next_snapshot: int) -> None:
        """Record that consumer ``consumer_id`` reads ``next_snapshot`` next."""
        ...


def stream_format(location: str, io: Optional[FileIO] = None, fmt: Optional[str] = None) -> StreamFormat:
    """The stream side of the table at ``location`` (its format read from its files unless ``fmt``)."""
    from icefloe.spark.datasource import detect_format

    loc = normalize_location(location)
    io = io or LOCAL
    fmt = fmt or detect_format(loc, io)
    return PaimonStream(loc, io) if fmt == PAIMON else IcebergStream(loc, io)


def _name(loc: str) -> str:
    return loc.rstrip("/").rsplit("/", 1)[-1]


def _opt(options: Mapping[str, str], key: str, default: Optional[str] = None) -> Optional[str]:
    for k, v in options.items():
        if k.lower() == key.lower():
            return v
    return default


def flag(options: Mapping[str, str], key: str) -> bool:
    """A boolean option of the stream (``true``, ``1``, ``yes``), case-insensitive in its key."""
    return str(_opt(options, key, "false")).strip().lower() in ("true", "1", "yes")


class IcebergStream:
    """An Iceberg table as a stream: snapshots by ancestry of the current one, units the data files
    a snapshot adds (``icefloe.iceberg.streaming``), batches committed with the query id and epoch
    in the snapshot summary."""

    changelog_rows = False

    def __init__(self, location: str, io: FileIO):
        self.location, self.io = location, io

    def _table(self):
        from icefloe.spark.datasource import iceberg_table_at

        return iceberg_table_at(self.location, self.io)

    def latest_id(self) -> int:
        snap = self._table().current_snapshot()
        return snap.snapshot_id if snap is not None else -1

    def following(self, sid: int) -> list:
        meta = self._table().metadata
        try:
            return [s.snapshot_id for s in ice_stream.snapshots_after(meta, sid if sid >= 0 else None)]
        except ValueError:
            raise NoSuchSnapshotError(
                f"the stream needs what followed snapshot {sid} of {self.location}, which is no longer in the "
                "table's history (expired or rolled back); restart the query from a new checkpoint") from None

    def before(self, sid: int) -> int:
        snap = self._table().metadata.snapshot_by_id(sid)
        return snap.parent_snapshot_id if snap.parent_snapshot_id is not None else -1

    def last_before_time(self, millis: int) -> int:
        best = -1
        for s in reversed(ice_stream.branch_history(self._table().metadata)):
            if s.timestamp_ms < millis:
                best = s.snapshot_id
        return best

    def units(self, sid: int, full: bool, options: dict) -> list:
        t = self._table()
        meta = t.metadata
        snap = meta.snapshot_by_id(sid)
        if full:
            return [Unit(task.path, task.file.record_count, task.deletes) for task in t.plan_snapshot(snap)]
        try:
            added = ice_stream.stream_files(t.io, meta, snap, flag(options, "streaming-skip-delete-snapshots"),
                                            flag(options, "streaming-skip-overwrite-snapshots"))
        except ice_stream.StreamStopped as e:
            raise StreamingSetupError(f"{self.location}: {e}") from None
        return [Unit(f.file_path, f.record_count) for f, _ in added]

    def commit_batch(self, files: list, query_id: str, batch_id: int, overwrite: bool) -> bool:
        if not files and not overwrite:
            return False
        from icefloe.iceberg.hadoop import HadoopTableOperations
        from icefloe.iceberg.table import BaseTable

        t = BaseTable(_name(self.location), HadoopTableOperations(self.io, self.location))
        produce = ice_stream.StreamingOverwrite if overwrite else ice_stream.StreamingAppend
        try:
            t.commit_change(produce(files, query_id, batch_id), MAIN_BRANCH)
        except ice_stream.BatchAlreadyCommitted:
            return False  # the table has this batch; its files were deleted
        return True

    def last_committed_batch(self, query_id: str) -> Optional[int]:
        from icefloe.iceberg.hadoop import HadoopTableOperations

        return ice_stream.last_committed_epoch(HadoopTableOperations(self.io, self.location).load()[1], query_id)

    def consumer(self, consumer_id: str) -> Optional[int]:
        raise StreamingSetupError(f"option consumer-id: {self.location} is an Iceberg table, and consumers (a "
                                  "reader's progress kept in the table) are Paimon's; Spark's checkpoint keeps an "
                                  "Iceberg stream's progress")

    def record_consumer(self, consumer_id: str, next_snapshot: int) -> None:
        self.consumer(consumer_id)


class PaimonStream:
    """A Paimon table as a stream: snapshot ids in sequence (kept changelogs of expired ones
    included), units its data files or, on a primary-key table, its changelog's key-value files;
    batches committed with ``commitUser`` and ``commitIdentifier``."""

    changelog_rows = True

    def __init__(self, location: str, io: FileIO):
        self.location, self.io = location, io

    def _table(self):
        from icefloe.spark.paimon_read import paimon_table_at

        return paimon_table_at(self.location, self.io)

    def latest_id(self) -> int:
        latest = self._table().store.snapshots.latest_id()
        return latest if latest is not None else -1

    def following(self, sid: int) -> list:
        store = self._table().store
        latest = store.snapshots.latest_id()
        if latest is None or latest <= sid:
            return []
        first = sid + 1 if sid >= 0 else (store.snapshots.earliest_id() or 1)
        earliest = paimon_changelog.earliest_changes(store) or 1      # kept changelogs included
        if first < earliest:
            raise NoSuchSnapshotError(
                f"the stream needs snapshot {first} of {self.location}, which has expired (the earliest is "
                f"{earliest}); restart the query from a new checkpoint or keep snapshots longer")
        return list(range(first, latest + 1))

    def before(self, sid: int) -> int:
        return sid - 1 if sid > 1 else -1

    def last_before_time(self, millis: int) -> int:
        best = -1
        for s in self._table().store.snapshots.iter_snapshots():
            if s.time_millis < millis:
                best = s.id
        return best

    def units(self, sid: int, full: bool, options: dict) -> list:
        from icefloe.spark.paimon_read import partitions_of

        table = self._table()
        if chain.active(table):
            raise UnsupportedTableError(f"Paimon table at {self.location} is a chain table: icefloe reads its merged "
                                        "rows in batch reads only (Paimon streams chain tables with Flink)")
        store = table.store
        if not full:             # an expired snapshot's kept changelog still streams
            snap = paimon_changelog.changes_of(store, sid)
            if snap is None:
                return []
        else:
            snap = store.snapshots.snapshot(sid)
        if full:
            entries = table.plan(None, sid)
            rows = sum(e.file.row_count for e in entries)
            parts = partitions_of(table, entries, sid)
            if table.table_schema.primary_keys:
                return [Unit(p, max(rows // max(len(parts), 1), 1)) for p in parts]
            return [Unit(p, e.file.row_count) for p, e in zip(parts, entries)]
        # a primary-key table with a changelog producer streams its changelog files
        entries = paimon_changelog.snapshot_changes(store, snap, paimon_changelog.producer(table.table_schema),
                                                    flag(options, "streaming-read-overwrite"))
        if not table.table_schema.primary_keys:     # minus the deletion vectors of this snapshot (if kept)
            at = sid if full or (entries and sid in store.snapshots.ids()) else None
            return [Unit(p, e.file.row_count) for p, e in zip(partitions_of(table, entries, at), entries)]
        return [Unit(f"{e.file.file_path}#schema={e.file.schema_id},{table.table_schema.id}",
                     e.file.row_count, kind="delta") for e in entries]

    def commit_batch(self, files: list, query_id: str, batch_id: int, overwrite: bool) -> bool:
        from icefloe.paimon.table import FileStoreTable

        try:
            snap = FileStoreTable(_name(self.location), self.location, io=self.io).commit(
                files, overwrite=overwrite, commit_user=query_id, commit_identifier=batch_id)
        except paimon_stream.BatchAlreadyCommitted:
            return False  # the table has this batch; its files were deleted
        return snap is not None

    def last_committed_batch(self, query_id: str) -> Optional[int]:
        from icefloe.paimon.table import FileStoreTable

        store = FileStoreTable(_name(self.location), self.location, io=self.io).store
        mine = paimon_stream.latest_of_user(store, query_id, store.snapshots.latest())
        return mine.commit_identifier if mine is not None else None

    def consumer(self, consumer_id: str) -> Optional[int]:
        return paimon_consumer.consumer(self.io, self._table().meta_location, consumer_id)

    def record_consumer(self, consumer_id: str, next_snapshot: int) -> None:
        paimon_consumer.reset_consumer(self.io, self._table().meta_location, consumer_id, next_snapshot)
