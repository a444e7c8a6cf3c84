# pyright: strict
"""A Paimon commit as typed changes plus the requirements that must still hold.

Every producer of a Paimon snapshot (a write's commit messages, an overwrite, a copy-on-write
rewrite, compaction of an append or a primary-key table, manifest compaction, ANALYZE statistics,
forgetting missing files) describes what it does as a :class:`PaimonCommit`:

* **changes**, in Paimon's vocabulary: data files added (``AddFiles``) and deleted
  (``DeleteFiles``), every live file of some partitions deleted (``OverwritePartitions``, resolved
  on the snapshot the commit follows), changelog files (``AddChangelog``), dynamic-bucket HASH index
  files (``SetIndexFiles``), deletion vectors (``SetDeletionVectors``) and a statistics file
  (``SetStatistics``);
* **requirements**, Paimon's commit conflict checks, each checked against the latest snapshot of
  every attempt: the files a change deletes are still live (``FilesLive``: no conflicting
  deletion), a primary-key write's sequence numbers follow the bucket's (``SequenceAfter``), the
  HASH index the bucket assignment read is unchanged (``IndexBase``), the deletion vectors a
  compaction read are unchanged (``VectorsUnchanged``), a streaming batch is not a replay
  (``NotCommitted``).

``FileStoreCommit.apply`` (``paimon/commit.py``) is the one commit path: per attempt it checks the
requirements, resolves the changes into manifest entries in the order given, and writes the
manifests, lists and the snapshot. A requirement that fails raises before anything of that attempt
is written, so the table is as it was.

Expiry, rollback, tags, branches and schema changes write no snapshot, so they are not commits
here: each is its own file operation (``expire.py``, ``maintenance.py``, ``tag.py``,
``branches.py``, ``schema_update.py``) with its own atomic step.

A Paimon snapshot has one commit kind and a schema change is not part of any snapshot (it is the
atomic creation of its own ``schema/schema-N`` file, visible at once), so a schema change and a
data change cannot be one atomic Paimon commit: there is no multi-change transaction here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol, Sequence

from icefloe.errors import CommitConflictError, CommitFailedError
from icefloe.paimon import manifest as mf
from icefloe.core.types import IcebergType
from icefloe.paimon.binary_row import encode_row
from icefloe.paimon.data_file import DataFileMeta
from icefloe.paimon.deletion_vectors import bucket_vectors
from icefloe.paimon.dynamic_bucket import IndexFile, IndexRecord, check_index_base, read_index_manifest
from icefloe.paimon.manifest_sort import ManifestSort
from icefloe.paimon.snapshot import Snapshot
from icefloe.paimon.streaming import not_committed_check

if TYPE_CHECKING:
    from icefloe.paimon.file_store import FileStore

# (partition bytes, bucket): one bucket of a table
BucketKey = tuple[bytes, int]

NO_TRANSACTION = ("a Paimon snapshot has one commit kind, and a schema or option change is not part of any "
                  "snapshot but the atomic creation of its own schema/schema-N file, visible at once; so "
                  "several changes cannot become one atomic Paimon commit (commit each on its own)")


@dataclass
class Resolved:
    """What a commit's changes come to on one snapshot: the data manifest entries (in order),
    the changelog entries, the index files and deletion vectors swapped in, a statistics file."""
    entries: list[mf.ManifestEntry] = field(default_factory=list[mf.ManifestEntry])
    changelog: list[mf.ManifestEntry] = field(default_factory=list[mf.ManifestEntry])
    index_files: dict[BucketKey, IndexFile] = field(default_factory=dict[BucketKey, IndexFile])
    vectors: dict[BucketKey, Optional[IndexFile]] = field(default_factory=dict[BucketKey, Optional[IndexFile]])
    statistics: Optional[str] = None
    global_added: list[IndexRecord] = field(default_factory=list[IndexRecord])
    global_removed: set[str] = field(default_factory=set[str])
    # row ids renumbered: the snapshot's next row id at least ``next_row_id``; ``rewrite`` gives each entry of
    # the data manifests its new form (the manifests whose entries it changes are written again in their place)
    next_row_id: Optional[int] = None
    rewrite: Optional[Callable[[mf.ManifestEntry], mf.ManifestEntry]] = None


class Change(Protocol):
    def resolve(self, store: FileStore, latest: Optional[Snapshot], into: Resolved) -> None: ...


class Requirement(Protocol):
    def check(self, store: FileStore, latest: Optional[Snapshot]) -> None: ...


# --------------------------------------------------------------------------- changes
@dataclass(frozen=True)
class AddFiles:
    """New data files: their ADD entries."""
    entries: tuple[mf.ManifestEntry, ...]

    def resolve(self, store: FileStore, latest: Optional[Snapshot], into: Resolved) -> None:
        into.entries.extend(self.entries)


@dataclass(frozen=True)
class DeleteFiles:
    """Data files no longer read: DELETE entries of the given entries. With ``only_live`` those no
    longer live at the commit are skipped (forgetting missing files); else pair it with
    ``FilesLive`` so that a file deleted by another commit is a conflict."""
    entries: tuple[mf.ManifestEntry, ...]
    only_live: bool = False

    def resolve(self, store: FileStore, latest: Optional[Snapshot], into: Resolved) -> None:
        entries = self.entries
        if self.only_live:
            live = {e.identifier() for e in store.live_entries(latest)}
            entries = tuple(e for e in entries if e.identifier() in live)
        into.entries.extend(as_deletes(entries))


@dataclass(frozen=True)
class OverwritePartitions:
    """Every live file of the snapshot the commit follows deleted; with ``accept`` (a predicate on
    a partition's values) only the files of the partitions it accepts."""
    accept: Optional[Callable[[tuple[Any, ...]], bool]] = None

    def resolve(self, store: FileStore, latest: Optional[Snapshot], into: Resolved) -> None:
        if latest is None:
            return
        live = store.live_entries(latest)
        if self.accept is not None:
            live = [e for e in live if self.accept(store.partition_values(e.partition))]
        into.entries.extend(as_deletes(live))


@dataclass(frozen=True)
class AddChangelog:
    """Changelog files (ADD entries): the snapshot's changelog manifest list."""
    entries: tuple[mf.ManifestEntry, ...]

    def resolve(self, store: FileStore, latest: Optional[Snapshot], into: Resolved) -> None:
        into.changelog.extend(self.entries)


@dataclass(frozen=True)
class SetIndexFiles:
    """Dynamic-bucket HASH index files replacing their buckets' ((partition bytes, bucket) -> IndexFile)."""
    files: dict[BucketKey, IndexFile]

    def resolve(self, store: FileStore, latest: Optional[Snapshot], into: Resolved) -> None:
        into.index_files.update(self.files)


@dataclass(frozen=True)
class SetDeletionVectors:
    """Deletion-vector index files replacing their buckets' ((partition bytes, bucket) -> IndexFile, or
    None to drop a bucket's)."""
    vectors: dict[BucketKey, Optional[IndexFile]]

    def resolve(self, store: FileStore, latest: Optional[Snapshot], into: Resolved) -> None:
        into.vectors.update(self.vectors)


@dataclass(frozen=True)
class SetGlobalIndexes:
    """Global index files (``global_index``): new index manifest entries, and the file names of
    live ones to drop."""
    added: tuple[IndexRecord, ...] = ()
    removed: frozenset[str] = frozenset()

    def resolve(self, store: FileStore, latest: Optional[Snapshot], into: Resolved) -> None:
        into.global_added.extend(self.added)
        into.global_removed.update(self.removed)


@dataclass(frozen=True)
class SetStatistics:
    """A statistics file (``statistics/stat-<uuid>``) the snapshot names."""
    name: str

    def resolve(self, store: FileStore, latest: Optional[Snapshot], into: Resolved) -> None:
        into.statistics = self.name


# --------------------------------------------------------------------------- requirements
@dataclass(frozen=True)
class FilesLive:
    """The files a change deletes are all live in the latest snapshot (Paimon's file deletion
    conflict check): a commit since ``base_id`` that removed one makes this commit a conflict."""
    entries: tuple[mf.ManifestEntry, ...]
    operation: str
    base_id: Optional[int]
    verb: str = "rewrites"

    def check(self, store: FileStore, latest: Optional[Snapshot]) -> None:
        if not self.entries:
            return
        # only the manifests that may hold the buckets of the files are read
        live = {e.identifier() for e in store.partition_entries(
            latest, {e.partition.data for e in self.entries}, {e.bucket for e in self.entries})}
        for e in self.entries:
            if e.identifier() not in live:
                raise CommitConflictError(
                    f"{self.operation} conflicts with a commit after snapshot {self.base_id}: data file "
                    f"{e.file.file_name} it {self.verb} is no longer live; nothing was committed")


@dataclass(frozen=True)
class SequenceAfter:
    """A primary-key write's records are numbered after everything committed in their buckets:
    ``firsts`` maps (partition bytes, bucket) to the first sequence number the write used."""
    firsts: dict[BucketKey, int]
    table_name: str

    def check(self, store: FileStore, latest: Optional[Snapshot]) -> None:
        if latest is None or not self.firsts:
            return
        # the buckets' largest sequence numbers, from their files' columns (what the write restored)
        for (partition, bucket), files in store.bucket_files(latest, self.firsts).items():
            first, newest = self.firsts[(partition, bucket)], files.max_sequence_number()
            if newest >= first:
                raise CommitConflictError(
                    f"table {self.table_name}: bucket {bucket} got records numbered up to "
                    f"{newest} from another commit (snapshot {latest.id}) while this "
                    f"write numbered its records from {first}; write the data again")


@dataclass(frozen=True)
class IndexBase:
    """The dynamic-bucket index of ``partitions`` is as it was at snapshot ``base_id`` (the one the
    bucket assignment read)."""
    base_id: Optional[int]
    partitions: frozenset[bytes]

    def check(self, store: FileStore, latest: Optional[Snapshot]) -> None:
        check_index_base(store, latest, self.base_id, set(self.partitions))


@dataclass(frozen=True)
class VectorsUnchanged:
    """The deletion vectors of some buckets are those a compaction read ((partition bytes, bucket) ->
    index file name (names: ``BucketVectors.signature``), or None)."""
    before: dict[BucketKey, Optional[str]]
    operation: str
    base_id: Optional[int]

    def check(self, store: FileStore, latest: Optional[Snapshot]) -> None:
        if not self.before:
            return
        now = bucket_vectors(store, latest)
        for key, name in self.before.items():
            if (now[key].signature if key in now else None) != name:
                raise CommitConflictError(f"{self.operation} conflicts with a commit after snapshot "
                                          f"{self.base_id}: the deletion vectors of a bucket it compacts changed")


@dataclass(frozen=True)
class BucketsKeepSame:
    """Without an overwrite, a partition's files keep one total bucket number (Paimon's writers and
    commits refuse another): ``written`` maps each partition (bytes) a write adds fixed-bucket files
    to to their total bucket number. After ``'bucket'`` changed, an old partition takes rows again
    once INSERT OVERWRITE or ``CALL sys.rescale`` rewrote it."""
    written: dict[bytes, int]
    partition_keys: tuple[str, ...]

    def check(self, store: FileStore, latest: Optional[Snapshot]) -> None:
        if latest is None or not self.written or store.schema.id == 0:    # schema 0: 'bucket' never changed
            return
        wanted = set(self.written)
        for e in store.partition_entries(latest, wanted):
            new = self.written.get(e.partition.data)
            if new is None or e.total_buckets <= 0 or e.total_buckets == new:
                continue
            where = ("table" if not self.partition_keys else "partition {" + ", ".join(
                f"{k}={v}" for k, v in zip(self.partition_keys, store.partition_values(e.partition))) + "}")
            raise CommitFailedError(
                f"Try to write {where} with a new bucket num {new}, but the previous bucket num is "
                f"{e.total_buckets}: its files were written with {e.total_buckets} buckets before 'bucket' "
                f"changed; rewrite it with INSERT OVERWRITE or CALL sys.rescale first; nothing was written")


@dataclass(frozen=True)
class GlobalIndexesFree:
    """No live global index file of the same column overlaps the row range of one of ``added`` (Paimon
    refuses to add one: the old index is dropped first)."""
    added: tuple[IndexRecord, ...]
    table_name: str

    def check(self, store: FileStore, latest: Optional[Snapshot]) -> None:
        live = read_index_manifest(store, latest.index_manifest if latest is not None else None)
        for new in self.added:
            g = new["_GLOBAL_INDEX"]
            for r in live:
                old = r.get("_GLOBAL_INDEX")
                if old is not None and old["_INDEX_FIELD_ID"] == g["_INDEX_FIELD_ID"] \
                        and r["_PARTITION"] == new["_PARTITION"] \
                        and old["_ROW_RANGE_START"] <= g["_ROW_RANGE_END"] \
                        and g["_ROW_RANGE_START"] <= old["_ROW_RANGE_END"]:
                    raise CommitConflictError(
                        f"table {self.table_name}: global index file {r['_FILE_NAME']} ({r['_INDEX_TYPE']}) of "
                        f"field id {g['_INDEX_FIELD_ID']} already covers row ids {old['_ROW_RANGE_START']} to "
                        f"{old['_ROW_RANGE_END']}; drop it first (CALL sys.drop_global_index); nothing was committed")


@dataclass(frozen=True)
class NotCommitted:
    """A streaming batch: ``commit_user`` has not committed batch ``identifier`` or a later one."""
    commit_user: Optional[str]
    identifier: int

    def check(self, store: FileStore, latest: Optional[Snapshot]) -> None:
        not_committed_check(store, self.commit_user, self.identifier)(latest)


# --------------------------------------------------------------------------- the commit
@dataclass(frozen=True)
class PaimonCommit:
    """One snapshot to commit: its kind, its changes (applied in order), the requirements checked
    on every attempt, the snapshot's properties, and whether every manifest is merged."""
    kind: str
    changes: tuple[Change, ...] = ()
    requirements: tuple[Requirement, ...] = ()
    properties: Optional[dict[str, str]] = None
    full_manifest_compaction: bool | ManifestSort = False     # a ManifestSort: merged sorted by a field

    def check(self, store: FileStore, latest: Optional[Snapshot]) -> None:
        for r in self.requirements:
            r.check(store, latest)

    def resolve(self, store: FileStore, latest: Optional[Snapshot]) -> Resolved:
        out = Resolved()
        for c in self.changes:
            c.resolve(store, latest, out)
        return out


def as_deletes(entries: Sequence[mf.ManifestEntry]) -> list[mf.ManifestEntry]:
    """DELETE entries of the given entries' files."""
    return [mf.ManifestEntry(mf.DELETE, e.partition, e.bucket, e.total_buckets, e.file) for e in entries]


class WrittenBucket(Protocol):
    """What a commit reads of one commit message (``commit.CommitMessage``): one bucket's new files."""
    @property
    def partition(self) -> Sequence[Any]: ...
    @property
    def bucket(self) -> int: ...
    @property
    def total_buckets(self) -> int: ...
    @property
    def new_files(self) -> Sequence[DataFileMeta]: ...
    @property
    def index_files(self) -> Sequence[IndexFile]: ...
    @property
    def index_base(self) -> Optional[int]: ...


def message_changes(messages: Sequence[WrittenBucket], partition_types: Sequence[IcebergType]
                    ) -> tuple[list[Change], list[Requirement]]:
    """The changes and requirements of commit messages: their files' ADD entries (the same file twice
    is an error), changelog files, HASH index files and the index each bucket assignment read."""
    adds: list[mf.ManifestEntry] = []
    changelog: list[mf.ManifestEntry] = []
    index_files: dict[BucketKey, IndexFile] = {}
    bases: dict[Optional[int], set[bytes]] = {}
    for m in messages:
        part = encode_row(list(m.partition), partition_types)
        adds.extend(mf.ManifestEntry(mf.ADD, part, m.bucket, m.total_buckets, f) for f in m.new_files)
        changelog.extend(mf.ManifestEntry(mf.ADD, part, m.bucket, m.total_buckets, f)
                         for f in getattr(m, "changelog_files", None) or ())
        for f in m.index_files:
            index_files[(part.to_bytes(), m.bucket)] = f
            bases.setdefault(m.index_base, set()).add(part.to_bytes())
    mf.merge_entries(adds, {})  # raises DuplicateFileError on a repeated ADD
    changes: list[Change] = []
    if adds:
        changes.append(AddFiles(tuple(adds)))
    if changelog:
        changes.append(AddChangelog(tuple(changelog)))
    if index_files:
        changes.append(SetIndexFiles(index_files))
    requirements: list[Requirement] = [IndexBase(base, frozenset(bases[base])) for base in bases]
    return changes, requirements


def written_totals(messages: Sequence[WrittenBucket], partition_types: Sequence[IcebergType]) -> dict[bytes, int]:
    """Partition bytes -> the total bucket number of the fixed-bucket files the messages add there."""
    out: dict[bytes, int] = {}
    for m in messages:
        if m.total_buckets > 0 and m.new_files:
            out[encode_row(list(m.partition), partition_types).data] = m.total_buckets
    return out


def sequence_firsts(messages: Sequence[WrittenBucket], partition_types: Sequence[IcebergType]) -> dict[BucketKey, int]:
    """(partition bytes, bucket) -> the first sequence number the messages' files use there."""
    firsts: dict[BucketKey, int] = {}
    for m in messages:
        part = encode_row(list(m.partition), partition_types).data
        for f in m.new_files:
            key = (part, m.bucket)
            firsts[key] = min(firsts.get(key, f.min_sequence_number), f.min_sequence_number)
    return firsts


__all__ = ["AddChangelog", "AddFiles", "BucketsKeepSame", "Change", "DeleteFiles", "FilesLive", "GlobalIndexesFree",
           "IndexBase", "SetGlobalIndexes", "NO_TRANSACTION", "NotCommitted",
           "OverwritePartitions", "PaimonCommit", "Requirement", "Resolved", "SequenceAfter", "SetDeletionVectors",
           "SetIndexFiles", "SetStatistics", "VectorsUnchanged", "as_deletes", "message_changes", "sequence_firsts", "written_totals"]
