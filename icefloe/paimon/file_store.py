# pyright: strict
"""The I/O edge of one Paimon table directory: manifests, manifest lists, data file paths.

The spec modules (``manifest``, ``snapshot``, ``binary_row``...) encode and decode
plain data; this class reads and writes their files under ``<table>/manifest``,
resolves where a data file lives and lists the live files of a snapshot. Commit,
scan and snapshot expiration all go through it.
"""
from __future__ import annotations

import copy
import threading
from typing import AbstractSet, Any, Callable, Iterable, Optional, Protocol, Sequence

from icefloe.core.first_reads import FirstReads
from icefloe.core.io import FileIO, strip_scheme
from icefloe.errors import CorruptMetadataError
from icefloe.paimon import bucket_files as bf
from icefloe.paimon import manifest as mf
from icefloe.paimon.binary_row import BinaryRow, decode_row
from icefloe.paimon.data_file import DataFileMeta, SimpleStats
from icefloe.paimon.partition import bucket_path, partition_path
from icefloe.paimon.schema import TableSchema
from icefloe.paimon.snapshot import Snapshot, SnapshotManager

MANIFEST_DIR = "manifest"

# A predicate on a partition's row bytes (without the arity prefix), on an ADD's raw Avro file
# record, and on a manifest block's partition statistics and row count
KeepPartition = Callable[[bytes], bool]
KeepFile = Callable[[mf.AvroRecord], bool]
KeepStats = Callable[[SimpleStats, int], bool]


class WrittenFiles(Protocol):
    """What ``delete_uncommitted`` reads of a commit message: where its new files went."""
    @property
    def partition(self) -> Sequence[Any]: ...
    @property
    def bucket(self) -> int: ...
    @property
    def new_files(self) -> Sequence[DataFileMeta]: ...


# partition statistics (partition types, min row bytes, max row bytes, null counts) -> their values
# (``FileStore._admits``), process-wide: statistics decode the same for every table of those types
_DECODED: dict[tuple[Any, bytes, bytes, Any], tuple[tuple[Any, ...], tuple[Any, ...], tuple[Optional[int], ...]]] = {}
_DECODED_LOCK = threading.Lock()
# (manifest path, size, partition types) -> the statistics of its kept layout's block groups
# (``manifest.layout_statistics``), the ids of those of one partition each by its values, and the others
_BY_VALUE: dict[tuple[str, int, Any], tuple[list[SimpleStats], dict[tuple[Any, ...], list[int]], list[SimpleStats]]] = {}


class FileStore:
    def __init__(self, io: FileIO, table_path: str, schema: TableSchema, meta_path: Optional[str] = None):
        self.io = io
        self.table_path = table_path.rstrip("/")
        # where snapshots, schemas and tags live: the table directory, or a branch's directory
        # (``<table>/branch/branch-<name>``); manifests and data files are the table's for every branch
        self.meta_path = (meta_path or table_path).rstrip("/")
        self.schema = schema
        self.options = schema.core_options
        self.snapshots = SnapshotManager(io, self.meta_path)
        self.manifest_dir = f"{self.table_path}/{MANIFEST_DIR}"
        self.partition_types = schema.partition_types
        self._cache: dict[str, list[mf.ManifestEntry]] = {}       # manifest name -> its entries
        self._raw_cache: dict[str, list[mf.AvroRecord]] = {}   # manifest name -> its Avro records (read by pruned scans only)
        self._pruned_once = FirstReads()   # manifests a pruned scan read once, without keeping them
        # (manifest name, partitions) -> the entries of those partitions (``partition_entries``)
        self._kept: dict[tuple[str, Any], list[mf.ManifestEntry]] = {}
        # (snapshot's manifest lists, (partition bytes, bucket) pairs) -> their live entries (``bucket_entries``)
        self._buckets: dict[tuple[Optional[tuple[str, str]], frozenset[tuple[bytes, int]]], list[mf.ManifestEntry]] = {}
        # the same as columns (``bucket_files``): (manifest name, partitions, buckets) -> its kept entries, and
        # (snapshot's manifest lists, (partition bytes, bucket) pairs) -> their live files
        self._light: dict[tuple[str, Any], bf.Rows] = {}
        self._light_buckets: dict[tuple[Optional[tuple[str, str]], frozenset[tuple[bytes, int]]],
                                  dict[tuple[bytes, int], bf.BucketFiles]] = {}
        self._types_key = tuple(self.partition_types)     # what decodes partition statistics (``_admits``)
        self._lock = threading.Lock()

    @classmethod
    def renewed(cls, store: Optional["FileStore"], io: FileIO, table_path: str, schema: TableSchema,
                meta_path: Optional[str] = None) -> "FileStore":
        """A new store; one of the same table, branch and schema as ``store`` takes over the entries (and columns)
        ``store`` read for commits (``partition_entries``, ``bucket_entries``): manifests never change
        under their names, so a table's write and its commit (each refreshing the table) read the
        manifests of the buckets they touch once. What scans read is not taken over: a scan after a
        refresh reads as a first scan does."""
        out = cls(io, table_path, schema, meta_path)
        if store is not None and store.io is io and store.schema == schema and \
                store.table_path == out.table_path and store.meta_path == out.meta_path:
            out._lock, out._kept, out._buckets = store._lock, store._kept, store._buckets
            out._light, out._light_buckets = store._light, store._light_buckets
        return out

    # ------------------------------------------------------------------ manifest lists
    def manifest_path(self, name: str) -> str:
        return f"{self.manifest_dir}/{name}"

    def read_manifest_list(self, name: str, expected_size: Optional[int] = None) -> list[mf.ManifestFileMeta]:
        """The manifest list ``name``; ``expected_size`` (the size the snapshot recorded), if
        known, catches a truncation that still decodes."""
        path = self.manifest_path(name)
        try:
            data = self.io.read_bytes(path)
        except FileNotFoundError:
            raise CorruptMetadataError(path, "manifest list referenced by a snapshot is missing") from None
        metas = mf.decode_manifest_list(data, path)
        _check_size(path, data, expected_size, "the snapshot")
        return metas

    def write_manifest_list(self, metas: Sequence[mf.ManifestFileMeta]) -> tuple[str, int]:
        name = f"{mf.new_manifest_list_name()}-0"
        data = mf.encode_manifest_list(metas, mf.avro_codec(self.options.manifest_compression))
        self.io.write_bytes(self.manifest_path(name), data, overwrite=False)
        return name, len(data)

    def data_manifests(self, snapshot: Optional[Snapshot]) -> list[mf.ManifestFileMeta]:
        """Base then delta manifests of a snapshot: together, every change up to it."""
        if snapshot is None:
            return []
        return (self.read_manifest_list(snapshot.base_manifest_list, snapshot.base_manifest_list_size)
                + self.read_manifest_list(snapshot.delta_manifest_list, snapshot.delta_manifest_list_size))

    # ------------------------------------------------------------------ manifests
    def read_manifest(self, name: str, expected_size: Optional[int] = None,
                      keep_partition: Optional[KeepPartition] = None, keep_file: Optional[KeepFile] = None,
                      keep_stats: Optional[KeepStats] = None) -> list[mf.ManifestEntry]:
        """The entries of manifest ``name``; ``expected_size`` as in ``read_manifest_list``
        (the size its manifest list recorded). With ``keep_partition`` (a predicate on a
        partition's row bytes) only the entries of the partitions it keeps: a pruned scan
        builds no objects for the rest. ``keep_file`` (a predicate on an ADD's raw file record,
        see ``manifest.entries_from_records``) drops more ADDs where the manifest's entries are
        not already built; the caller still checks every entry it gets. ``keep_stats`` (a
        predicate on partition statistics and a row count) skips whole blocks of a manifest
        that indexes them, on a pruned first read."""
        with self._lock:
            cached = self._cache.get(name)
            raw = self._raw_cache.get(name) if cached is None else None
        if cached is not None:
            return cached if keep_partition is None else [e for e in cached if keep_partition(e.partition.data)]
        path = self.manifest_path(name)
        pruned = keep_partition is not None or keep_file is not None
        if raw is None:
            try:
                data = self.io.read_bytes(path)
            except FileNotFoundError:
                raise CorruptMetadataError(path, "manifest referenced by a manifest list is missing") from None
            # a partition-pruned scan's first read decodes only the entries it keeps; read again,
            # the manifest is decoded whole and kept, for every later scan whatever it prunes
            again = not self._pruned_once.first(name)
            kept = None if keep_partition is None or again else mf.read_kept_records(data, path, keep_partition, keep_stats)
            raw = mf.read_manifest_records(data, path) if kept is None else None
            _check_size(path, data, expected_size, "its manifest list")
            if kept is not None:
                return mf.entries_from_records(kept, path, keep_file=keep_file)
        assert raw is not None        # read above when it was neither cached nor returned pruned
        if pruned:    # the records are kept: the next pruned scan builds only what it keeps, too
            with self._lock:
                if len(self._raw_cache) > 256:
                    self._raw_cache.clear()
                self._raw_cache[name] = raw
            return mf.entries_from_records(raw, path, keep_partition, keep_file)
        entries = mf.entries_from_records(raw, path)
        with self._lock:
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[name] = entries
            self._raw_cache.pop(name, None)
        return entries

    def write_manifests(self, entries: Sequence[mf.ManifestEntry],
                        created: Optional[list[str]] = None) -> list[mf.ManifestFileMeta]:
        """Write entries as manifest files rolled at ``manifest.target-file-size``.
        Names of written files are appended to ``created`` as they are written."""
        if not entries:
            return []
        base = mf.new_manifest_name()
        metas: list[mf.ManifestFileMeta] = []
        codec = mf.avro_codec(self.options.manifest_compression)
        for i, (data, chunk) in enumerate(mf.encode_manifests(entries, self.options.manifest_target_file_size,
                                                                codec, self.partition_types)):
            name = f"{base}-{i}"
            self.io.write_bytes(self.manifest_path(name), data, overwrite=False)
            if created is not None:
                created.append(name)
            metas.append(mf.file_meta_of(name, len(data), chunk, self.partition_types, self.schema.id))
        return metas

    def delete_manifest_file(self, name: str) -> None:
        self.io.delete(self.manifest_path(name))
        with self._lock:
            self._cache.pop(name, None)
            self._raw_cache.pop(name, None)
            for key in [k for k in self._kept if k[0] == name]:
                del self._kept[key]
            for key in [k for k in self._light if k[0] == name]:
                del self._light[key]

    # ------------------------------------------------------------------ live files
    def entries(self, manifests: Sequence[mf.ManifestFileMeta], keep_partition: Optional[KeepPartition] = None,
                keep_file: Optional[KeepFile] = None, keep_stats: Optional[KeepStats] = None) -> list[mf.ManifestEntry]:
        """The entries of ``manifests``, in their order; on an object store the manifests are read
        concurrently (each read is a request with its own latency)."""
        if self.io.parallel_reads > 1 and len(manifests) > 1:
            from concurrent.futures import ThreadPoolExecutor

            def read(m: mf.ManifestFileMeta) -> list[mf.ManifestEntry]:
                return self.read_manifest(m.file_name, m.file_size, keep_partition, keep_file, keep_stats)

            with ThreadPoolExecutor(max_workers=min(self.io.parallel_reads, len(manifests))) as pool:
                parts = list(pool.map(read, manifests))
            return [e for part in parts for e in part]
        out: list[mf.ManifestEntry] = []
        for m in manifests:
            out.extend(self.read_manifest(m.file_name, m.file_size, keep_partition, keep_file, keep_stats))
        return out

    def live_entries(self, snapshot: Optional[Snapshot]) -> list[mf.ManifestEntry]:
        """ADD entries of a snapshot minus its DELETEs: the data files a reader uses."""
        return self.merge_live(self.entries(self.data_manifests(snapshot)))

    def bucket_entries(self, snapshot: Optional[Snapshot], buckets: Iterable[tuple[bytes, int]]) -> list[mf.ManifestEntry]:
        """The live entries of some (partition row bytes, bucket) pairs of ``snapshot``, with
        ``file.file_path`` set: only the manifests whose partition statistics and bucket range
        admit one of them are read, and of those only the entries of their partitions are built.
        A commit's reads of the buckets it writes grow with those buckets, not with the table."""
        wanted = frozenset(buckets)
        # a write, its commit and the compaction check after it ask for the same buckets of a snapshot
        # (named by its manifest lists: an id is taken again after a rollback, a list's name never is)
        key = ((snapshot.base_manifest_list, snapshot.delta_manifest_list) if snapshot is not None else None, wanted)
        with self._lock:
            got = self._buckets.get(key)
        if got is not None:
            return list(got)
        out: list[mf.ManifestEntry] = []
        dirs: dict[tuple[bytes, int], str] = {}       # a bucket's directory, worked out once
        for e in self.partition_entries(snapshot, {p for p, _b in wanted}, {b for _p, b in wanted}):
            if (e.partition.data, e.bucket) in wanted:
                f = copy.copy(e.file)        # a copy of what was read and checked: nothing to check again
                if f.external_path:
                    f.file_path = strip_scheme(f.external_path)
                else:
                    where = dirs.get((e.partition.data, e.bucket))
                    if where is None:
                        where = dirs[(e.partition.data, e.bucket)] = self.bucket_dir(
                            self.partition_values(e.partition), e.bucket)
                    f.file_path = f"{where}/{f.file_name}"
                out.append(mf.ManifestEntry(e.kind, e.partition, e.bucket, e.total_buckets, f))
        with self._lock:
            if len(self._buckets) > 64:
                self._buckets.clear()
            self._buckets[key] = out
        return list(out)

    def partition_entries(self, snapshot: Optional[Snapshot], partitions: Iterable[bytes],
                          buckets: Optional[Iterable[int]] = None) -> list[mf.ManifestEntry]:
        """The live entries of some partitions (row bytes) of ``snapshot``, reading only the
        manifests whose partition statistics (and bucket range, given ``buckets``) admit one of
        them; entries of other buckets of those partitions may be among them."""
        parts = set(partitions)
        if snapshot is None or not parts:
            return []
        numbers = None if buckets is None else frozenset(buckets)
        key = (frozenset(parts), numbers)
        out: list[mf.ManifestEntry] = []
        for m, block_kept in self._holding(snapshot, parts, numbers):
            # the write, its checks and the compaction after it ask for the same buckets: one read
            got = self._kept.get((m.file_name, key))
            if got is None:
                got = self._read_buckets(m, parts, numbers, block_kept)
                with self._lock:
                    if len(self._kept) > 256:
                        self._kept.clear()
                    self._kept[(m.file_name, key)] = got
            out.extend(got)
        return self.merge_live(out)

    def _holding(self, snapshot: Snapshot, parts: set[bytes], numbers: Optional[frozenset[int]]
                 ) -> list[tuple[mf.ManifestFileMeta, Optional[KeepStats]]]:
        """The data manifests of ``snapshot`` whose partition statistics (and bucket range, given
        ``numbers``) admit one of ``parts``, each with its judge of a block's partition statistics
        (None for an unpartitioned table)."""
        values = [decode_row(BinaryRow(len(self.partition_types), p), self.partition_types) for p in parts] \
            if self.partition_types else []
        judged: dict[int, bool] = {}      # the blocks of one partition share their statistics: judged once

        def block_kept(stats: SimpleStats, _rows: int) -> bool:    # a block of a partition-grouped manifest
            kept = judged.get(id(stats))
            if kept is None:
                kept = judged[id(stats)] = self._admits(stats, values)
            return kept
        return [(m, block_kept if self.partition_types else None) for m in self.data_manifests(snapshot)
                if self._may_hold(m, values, numbers)]

    def bucket_files(self, snapshot: Optional[Snapshot], buckets: Iterable[tuple[bytes, int]]
                     ) -> dict[tuple[bytes, int], bf.BucketFiles]:
        """The live files of some (partition row bytes, bucket) pairs of ``snapshot`` as columns
        (``bucket_files``: names, levels, sizes, sequence ranges), read from the manifests
        ``bucket_entries`` reads, without making an entry of each file; buckets without a file are
        left out. What a primary-key write restores, its commit checks and the compaction trigger
        after it reads."""
        wanted = frozenset(buckets)
        key = ((snapshot.base_manifest_list, snapshot.delta_manifest_list) if snapshot is not None else None, wanted)
        with self._lock:
            got = self._light_buckets.get(key)
        if got is not None:
            return dict(got)
        parts = {p for p, _b in wanted}
        numbers = frozenset(b for _p, b in wanted)
        mkey = (frozenset(parts), numbers)
        found: list[bf.Rows] = []
        for m, block_kept in (self._holding(snapshot, parts, numbers) if snapshot is not None and parts else []):
            rows = self._light.get((m.file_name, mkey))
            if rows is None:
                kept = self._kept.get((m.file_name, mkey))
                rows = bf.Rows.of_entries(kept) if kept is not None else self._read_rows(m, parts, numbers, block_kept)
                with self._lock:
                    if len(self._light) > 256:
                        self._light.clear()
                    self._light[(m.file_name, mkey)] = rows
            found.append(rows)
        try:
            out = bf.live(found, wanted)
        except mf.DuplicateFileError as e:  # as ``merge_live``: a broken table
            raise CorruptMetadataError(self.manifest_dir, str(e)) from None
        with self._lock:
            if len(self._light_buckets) > 64:
                self._light_buckets.clear()
            self._light_buckets[key] = out
        return dict(out)

    def _read_rows(self, m: mf.ManifestFileMeta, parts: set[bytes], buckets: frozenset[int],
                   keep_stats: Optional[KeepStats]) -> bf.Rows:
        """``_read_buckets`` of manifest ``m`` as columns (``bucket_files.Rows``)."""
        rows = bf.Rows()
        path = self.manifest_path(m.file_name)
        try:
            if keep_stats is not None and mf.has_layout(path, m.file_size):
                keep_stats = self._blocks_by_value(path, m.file_size, parts) or keep_stats
                with self.io.open_read(path) as f:
                    def read_range(lo: int, hi: int) -> bytes:
                        f.seek(lo)
                        return f.read(hi - lo)
                    if mf.read_kept_ranges(read_range, path, m.file_size, parts.__contains__, keep_stats, buckets,
                                           rows_judged=False, take=rows.take) is not None:
                        return rows.finish()
                    rows = bf.Rows()
            data = self.io.read_bytes(path)
        except FileNotFoundError:
            raise CorruptMetadataError(path, "manifest referenced by a manifest list is missing") from None
        kept = mf.read_kept_records(data, path, parts.__contains__, keep_stats, buckets, rows_judged=False,
                                    take=rows.take)
        _check_size(path, data, m.file_size, "its manifest list")
        if kept is None:      # not laid out as Paimon writes manifests: decoded whole
            return bf.Rows.of_entries(e for e in mf.entries_from_records(mf.read_manifest_records(data, path), path,
                                                                         parts.__contains__) if e.bucket in buckets)
        return rows.finish()

    def _read_buckets(self, m: mf.ManifestFileMeta, parts: set[bytes], buckets: Optional[frozenset[int]],
                      keep_stats: Optional[KeepStats]) -> list[mf.ManifestEntry]:
        """The entries of manifest ``m`` in ``parts`` (and ``buckets``, None: any), for a commit: always
        a pruned read of the blocks that may hold them (a scan's second read of a manifest decodes and
        keeps it whole; a table's commits ask for other buckets each time, and would pay for all)."""
        with self._lock:
            cached = self._cache.get(m.file_name)
        if cached is not None:
            return [e for e in cached if e.partition.data in parts and (buckets is None or e.bucket in buckets)]
        path = self.manifest_path(m.file_name)
        try:
            if keep_stats is not None and mf.has_layout(path, m.file_size):
                # read before in this process: only the blocks of the buckets asked for are read
                with self.io.open_read(path) as f:
                    def read_range(lo: int, hi: int) -> bytes:
                        f.seek(lo)
                        return f.read(hi - lo)
                    ranged = mf.read_kept_ranges(read_range, path, m.file_size, parts.__contains__, keep_stats,
                                                 buckets, rows_judged=False)
                if ranged is not None:
                    return mf.entries_from_records(ranged, path)
            data = self.io.read_bytes(path)
        except FileNotFoundError:
            raise CorruptMetadataError(path, "manifest referenced by a manifest list is missing") from None
        kept = mf.read_kept_records(data, path, parts.__contains__, keep_stats, buckets, rows_judged=False)
        _check_size(path, data, m.file_size, "its manifest list")
        if kept is None:      # not laid out as Paimon writes manifests: decoded whole
            return [e for e in mf.entries_from_records(mf.read_manifest_records(data, path), path, parts.__contains__)
                    if buckets is None or e.bucket in buckets]
        return mf.entries_from_records(kept, path)

    def _may_hold(self, m: mf.ManifestFileMeta, partitions: Sequence[tuple[Any, ...]],
                  buckets: Optional[AbstractSet[int]]) -> bool:
        """Whether manifest ``m`` may hold an entry of one of ``partitions`` (values) and ``buckets``
        (None: any), by its bucket range and partition statistics (a manifest without them may)."""
        if buckets is not None and m.min_bucket is not None and m.max_bucket is not None and \
                not any(m.min_bucket <= b <= m.max_bucket for b in buckets):
            return False
        return self._admits(m.partition_stats, partitions)

    def _blocks_by_value(self, path: str, size: int, parts: set[bytes]) -> Optional[KeepStats]:
        """``_admits`` of the block groups of manifest ``path``'s kept layout, for partitions ``parts``
        (row bytes), as a judge of a group's statistics: the groups of one partition each (every
        field's minimum its maximum, no nulls: they admit exactly the partition of those values) found
        by its values, the others judged one by one. None without a kept layout."""
        groups = mf.layout_statistics(path, size)
        if not groups or not self.partition_types:
            return None
        key = (path, size, self._types_key)
        got = _BY_VALUE.get(key)
        if got is None or got[0][0] is not groups[0]:       # a layout read again has new statistics
            single: dict[tuple[Any, ...], list[int]] = {}
            others: list[SimpleStats] = []
            try:
                for stats in groups:
                    mins, maxs, nulls = self._decoded_stats(stats)
                    if len(nulls) == len(mins) and all(n == 0 for n in nulls) and \
                            all(lo is not None and lo == hi for lo, hi in zip(mins, maxs)):
                        single.setdefault(tuple(mins), []).append(id(stats))
                    else:
                        others.append(stats)
            except TypeError:       # values that do not hash: every group judged by ``_admits``
                return None
            got = (groups, single, others)
            with _DECODED_LOCK:
                if len(_BY_VALUE) > 256:
                    _BY_VALUE.clear()
                _BY_VALUE[key] = got
        _groups, single, others = got
        values = [decode_row(BinaryRow(len(self.partition_types), p), self.partition_types) for p in parts]
        admitted: set[int] = set()
        for v in values:
            admitted.update(single.get(tuple(v), ()))
        admitted.update(id(stats) for stats in others if self._admits(stats, values))
        return lambda stats, _rows: id(stats) in admitted

    def _decoded_stats(self, stats: SimpleStats) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[Optional[int], ...]]:
        """Partition statistics' minimums, maximums and null counts, decoded."""
        # a table's blocks and manifests share few statistics (a partition's): each decoded once, for every
        # load of the table in this process (a commit's table is loaded afresh, its manifests are not)
        key = (self._types_key, stats.min_values.data, stats.max_values.data, stats.null_counts)
        decoded = _DECODED.get(key)
        if decoded is None:
            decoded = stats.decode(self.partition_types)
            with _DECODED_LOCK:
                if len(_DECODED) > 65536:
                    _DECODED.clear()
                _DECODED[key] = decoded
        return decoded

    def _admits(self, stats: SimpleStats, partitions: Sequence[tuple[Any, ...]]) -> bool:
        """Whether partition statistics admit one of ``partitions`` (values)."""
        if not self.partition_types:
            return True
        mins, maxs, nulls = self._decoded_stats(stats)
        for values in partitions:
            if all((n is None or n > 0) if v is None else (lo is None or hi is None or lo <= v <= hi)
                   for v, lo, hi, n in zip(values, mins, maxs, nulls)):
                return True
        return False

    def merge_live(self, entries: Iterable[mf.ManifestEntry]) -> list[mf.ManifestEntry]:
        try:
            return mf.live_files(entries)
        except mf.DuplicateFileError as e:  # on a read this is a broken table, not a failed commit
            raise CorruptMetadataError(self.manifest_dir, str(e)) from None

    # ------------------------------------------------------------------ data file paths
    def partition_values(self, partition: BinaryRow) -> tuple[Any, ...]:
        return decode_row(partition, self.partition_types) if self.partition_types else ()

    def partition_dir(self, values: Sequence[Any]) -> str:
        return partition_path(self.schema.partition_keys, self.partition_types, values,
                              self.options.partition_default_name, self.options.partition_legacy_name)

    def bucket_dir(self, values: Sequence[Any], bucket: int) -> str:
        return bucket_path(self.table_path, self.partition_dir(values), bucket)

    def delete_uncommitted(self, messages: Iterable[WrittenFiles]) -> None:
        """Delete the data and changelog files (and dynamic-bucket index files) of uncommitted commit
        messages. Messages whose files the latest snapshot reads were committed after all (a failure
        after the snapshot became visible): nothing of them is deleted."""
        messages = list(messages)
        names = {f.file_name for m in messages for f in m.new_files}
        latest = self.snapshots.latest() if names else None
        if latest is not None and any(e.file.file_name in names for e in self.live_entries(latest)):
            return
        for m in messages:
            for f in list(m.new_files) + list(getattr(m, "changelog_files", None) or ()):
                self.io.delete(f.file_path or f"{self.bucket_dir(m.partition, m.bucket)}/{f.file_name}")
            for f in getattr(m, "index_files", None) or ():
                if f.file_path:
                    self.io.delete(f.file_path)

    def data_file_path(self, entry: mf.ManifestEntry) -> str:
        f = entry.file
        if f.external_path:
            return strip_scheme(f.external_path)
        return f"{self.bucket_dir(self.partition_values(entry.partition), entry.bucket)}/{f.file_name}"


def _check_size(path: str, data: bytes, expected: Optional[int], recorder: str) -> None:
    """A file shorter than its recorded size was truncated -- even if what is left decodes
    (an Avro file cut after a whole block reads as fewer records, or none)."""
    if expected is not None and len(data) < expected:
        raise CorruptMetadataError(path, f"truncated: file is {len(data)} bytes but {recorder} "
                                         f"recorded {expected}")
