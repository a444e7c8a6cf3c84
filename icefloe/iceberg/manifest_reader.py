# pyright: strict
"""Reading a snapshot's manifests (Iceberg spec, "Manifest Lists", "Manifests").

Entries come back with inherited snapshot ids and sequence numbers applied
("Sequence Number Inheritance"), and are checked against what the manifest
list counts: a file cut at an Avro block boundary decodes without error, so
counts are the only way to notice it. Manifests and manifest lists are
immutable once written, so both are cached: manifest lists by path, manifests in one
process-wide cache keyed by path and length (and the values they inherit from their
manifest-list entry), bounded by the bytes of the manifests it holds and set by the
table's ``io.manifest.cache-*`` properties (Iceberg's names, see ``CacheSettings``).
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, cast

import numpy as np
import pyarrow as pa

from icefloe.core import avro_columns
from icefloe.core.arrow import arrow_of, numpy_of
from icefloe.core.io import FileIO
from icefloe.errors import CorruptMetadataError, IcefloeError
from icefloe.iceberg import manifest_avro, manifest_codegen
from icefloe.iceberg.manifest_arrow import (
    WITHOUT_METRICS, ManifestColumns, PartitionPass, decode as decode_columns, decode_blocks,
)
from icefloe.iceberg.manifest import ADDED, DELETED, EXISTING, DataFile, ManifestEntry
from icefloe.iceberg.manifest_list import DATA_MANIFEST, ManifestFile, read_manifest_list
from icefloe.iceberg.snapshot import Snapshot
from icefloe.iceberg.table_metadata import TableMetadata

if TYPE_CHECKING:
    from icefloe.iceberg.file_columns import FileColumns

# a scan's filter on an entry's file before the entry is built (``manifest_avro.read_kept_entries``)
FileFilter = Callable[[manifest_avro.EncodedFile], bool]

_LIST_CACHE: "OrderedDict[str, list[ManifestFile]]" = OrderedDict()
_CACHE_MAX = 4096

# Iceberg's manifest cache properties (CatalogProperties in the Java runtime, where they set up a
# FileIO's cache of manifest bytes); icefloe reads them from the table's properties
CACHE_ENABLED = "io.manifest.cache-enabled"
CACHE_EXPIRATION_MS = "io.manifest.cache.expiration-interval-ms"
CACHE_MAX_TOTAL_BYTES = "io.manifest.cache.max-total-bytes"
CACHE_MAX_CONTENT_LENGTH = "io.manifest.cache.max-content-length"


@dataclass(frozen=True)
class CacheSettings:
    """The manifest cache as a table's properties set it. ``enabled`` defaults to on (the Java
    runtime's to off: icefloe plans in the driver's process, where a repeated plan is the common
    case); the others take the Java runtime's defaults. A manifest is held until it has not been
    used for ``expiration_ms`` (0: no expiry), while the manifests held total at most
    ``max_total_bytes`` of file length (the least recently used go first), and only if it is at
    most ``max_content_length`` bytes long."""

    enabled: bool = True
    expiration_ms: int = 60_000
    max_total_bytes: int = 100 * 1024 * 1024
    max_content_length: int = 8 * 1024 * 1024

    @classmethod
    def of(cls, properties: dict[str, str]) -> "CacheSettings":
        def number(key: str, default: int, least: int) -> int:
            raw = properties.get(key)
            if raw is None:
                return default
            try:
                value = int(str(raw).strip())
            except ValueError:
                value = least - 1
            if value < least:
                raise IcefloeError(f"table property {key} must be a whole number of at least {least}, not {raw!r}")
            return value

        raw = properties.get(CACHE_ENABLED)
        if raw is not None and str(raw).strip().lower() not in ("true", "false"):
            raise IcefloeError(f"table property {CACHE_ENABLED} must be true or false, not {raw!r}")
        return cls(enabled=raw is None or str(raw).strip().lower() == "true",
                   expiration_ms=number(CACHE_EXPIRATION_MS, cls.expiration_ms, 0),
                   max_total_bytes=number(CACHE_MAX_TOTAL_BYTES, cls.max_total_bytes, 1),
                   max_content_length=number(CACHE_MAX_CONTENT_LENGTH, cls.max_content_length, 1))


class ManifestCache:
    """Decoded manifests by (path, length, inherited values), process-wide and thread-safe. A
    manifest's weight is its file's length, as the Java runtime's content cache counts it."""

    def __init__(self) -> None:
        # key -> (value, weight, last used)
        self._items: "OrderedDict[tuple[Any, ...], tuple[object, int, float]]" = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...], settings: CacheSettings) -> object:
        if not settings.enabled:
            return None
        now = time.monotonic()
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            value, weight, used = hit
            if settings.expiration_ms and (now - used) * 1000 > settings.expiration_ms:
                del self._items[key]
                self._total -= weight
                return None
            self._items[key] = (value, weight, now)
            self._items.move_to_end(key)
            return value

    @staticmethod
    def would_hold(weight: int, settings: CacheSettings) -> bool:
        return settings.enabled and weight <= settings.max_content_length and weight <= settings.max_total_bytes

    def put(self, key: tuple[Any, ...], value: object, weight: int, settings: CacheSettings) -> bool:
        if not self.would_hold(weight, settings):
            return False
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._total -= old[1]
            self._items[key] = (value, weight, time.monotonic())
            self._total += weight
            while self._total > settings.max_total_bytes:
                _k, (_v, w, _u) = self._items.popitem(last=False)
                self._total -= w
        return True

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._total = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def total_bytes(self) -> int:
        return self._total


MANIFESTS = ManifestCache()


def _cache_put(cache: "OrderedDict[str, list[ManifestFile]]", key: str, value: list[ManifestFile]) -> None:
    cache[key] = value
    if len(cache) > _CACHE_MAX:
        cache.popitem(last=False)


def clear_manifest_cache() -> None:
    """Forget cached manifest lists, manifests and generated decoders (a cold start)."""
    MANIFESTS.clear()
    _LIST_CACHE.clear()
    manifest_codegen.clear_decoders()


def cache_key(m: ManifestFile) -> tuple[Any, ...]:
    """What names a manifest's decoded entries: its path and length (a file rewritten in place has
    another length), and what its entries inherit from the manifest list (a retried commit lists
    the same manifest with a new sequence number)."""
    return (m.manifest_path, m.manifest_length, m.added_snapshot_id, m.sequence_number, m.first_row_id)


def load_manifest_list(io: FileIO, path: str) -> list[ManifestFile]:
    hit = _LIST_CACHE.get(path)
    if hit is None:
        hit = read_manifest_list(io, path)
        _cache_put(_LIST_CACHE, path, hit)
    return hit


def load_manifest_entries(io: FileIO, meta: TableMetadata, m: ManifestFile, keep: Optional[FileFilter] = None) -> list[ManifestEntry]:
    """Entries of manifest ``m`` with inherited snapshot ids and sequence numbers applied.

    ``keep`` (a scan's filter, a predicate on a ``manifest_avro.EncodedFile``) may drop entries,
    where the manifest is not to be cached (the cache is off for the table, or the manifest is
    longer than it holds): then only the live entries whose file it keeps are built, and a plan
    pays for nothing it drops. A manifest the cache holds is decoded whole and kept, so the next
    plan, whatever its filter, finds it decoded; every entry comes back (the caller still checks
    each)."""
    return load_manifest(io, meta, m, keep).entries


def load_manifest(io: FileIO, meta: TableMetadata, m: ManifestFile, keep: Optional[FileFilter] = None) -> "ManifestContent":
    """``load_manifest_entries``' entries as a ``ManifestContent``: ``cached`` when they are the
    cache's (every entry, with its columnar view for a plan's filter), else a filtered read's."""
    key = cache_key(m)
    settings = CacheSettings.of(meta.properties)
    hit = cast(Optional[ManifestContent], MANIFESTS.get(key, settings))
    if hit is None and keep is not None and (m.first_row_id is None or m.content != DATA_MANIFEST) \
            and not MANIFESTS.would_hold(m.manifest_length or 0, settings):   # (v3 row ids count every entry)
        return ManifestContent(_read(io, meta, m, keep), cached=False)
    if hit is None:
        entries = _read(io, meta, m)
        if m.first_row_id is not None and m.content == DATA_MANIFEST:
            _inherit_first_row_ids(entries, m.first_row_id)
        hit = ManifestContent(entries, cached=True)
        MANIFESTS.put(key, hit, m.manifest_length or 0, settings)
    return hit


_NOT_COLUMNAR = "not held as columns"


# A data manifest of fewer entries than this is decoded entry by entry: decoding as columns has a fixed
# cost per file (the Arrow columns' set-up) that the entries decoder only reaches at some entries.
# With DuckDB's query (5-15 ms a file) that was ~1,000 entries; with the compiled decoder
# (``core.avro_decode``, ~1-1.5 ms a file) a cold plan of one manifest of bench.scale's files takes
# as long either way at 150-200 entries (100: entries 0.9 ms, columns 1.1-1.7; 300: 6.8 against 3.7;
# 1,000: 23 against 9). Tests lower it to judge small manifests as columns.
COLUMNS_MIN_ENTRIES = 200


def warm_decoder(snap: Optional[Snapshot]) -> None:
    """Start loading the columns' decoder in the background (``avro_columns.warm_up``) where a plan
    of ``snap`` would decode manifests as columns: its summary counts at least
    ``COLUMNS_MIN_ENTRIES`` data files (a table loaded, or a plan begun)."""
    total = (snap.summary or {}).get("total-data-files") if snap is not None else None
    try:
        many = total is not None and int(total) >= COLUMNS_MIN_ENTRIES
    except (TypeError, ValueError):
        many = False
    if many:
        avro_columns.warm_up()


def _entry_count(m: ManifestFile) -> int:
    """The entries of manifest ``m`` by its list's counts; a count the list leaves out (format v1)
    counts as many, so such a manifest is tried as columns."""
    counts = (m.added_files_count, m.existing_files_count, m.deleted_files_count)
    if any(c is None for c in counts):
        return COLUMNS_MIN_ENTRIES
    return sum(c or 0 for c in counts)


def load_manifest_columns(io: FileIO, meta: TableMetadata, m: ManifestFile,
                          partition_keeps: Optional[Callable[[tuple[Any, ...]], bool]] = None,
                          metrics: bool = True, split: bool = True) -> Optional[ManifestColumns]:
    """Data manifest ``m`` as columns (``manifest_arrow``), held in the manifest cache beside its
    entries (the same key, tagged); None where it is not held as columns (then its entries are
    read with ``load_manifest``, which names a corrupt file). With ``partition_keeps`` (a plan's
    partition filter, a judge of a partition tuple), a large manifest not cached as columns may
    give the entries of only the blocks holding those it keeps (``_partition_first``). A plan that
    judges no column metrics (``metrics`` false) decodes a manifest not cached as columns without
    its metrics maps, which the columns decode when something first reads them. ``split``: as
    ``manifest_arrow.decode``'s (false where the caller decodes other manifests beside this one)."""
    if partition_keeps is not None:
        return _partition_first(io, meta, m, partition_keeps, metrics, split)
    return _whole_columns(io, meta, m, metrics, split)


def _whole_columns(io: FileIO, meta: TableMetadata, m: ManifestFile, metrics: bool = True,
                   split: bool = True) -> Optional[ManifestColumns]:
    if _entry_count(m) < COLUMNS_MIN_ENTRIES:
        return None
    key = ("columns",) + cache_key(m)
    settings = CacheSettings.of(meta.properties)
    hit = MANIFESTS.get(key, settings)
    if hit is not None:
        return None if hit is _NOT_COLUMNAR else cast(ManifestColumns, hit)
    cols = _read_columns(io, meta, m, metrics, split)
    if cols is not None:
        _check_entry_count(m, len(cols))
    MANIFESTS.put(key, _NOT_COLUMNAR if cols is None else cols,
                  0 if cols is None else (m.manifest_length or 0), settings)
    return cols


# A data manifest of at least this many entries, planned with a partition filter and not already
# held as columns, is judged by partition first (``_partition_first``). Tests lower it.
PARTITION_FIRST_MIN_ENTRIES = 20_000
# ... and decoded whole instead where the blocks holding kept entries hold more than this share of them
PARTITION_FIRST_MAX_SHARE = 0.5


def _partition_first(io: FileIO, meta: TableMetadata, m: ManifestFile,
                     keeps: Callable[[tuple[Any, ...]], bool], metrics: bool = True,
                     split: bool = True) -> Optional[ManifestColumns]:
    """Data manifest ``m`` as columns for a plan whose partition filter is ``keeps`` (a judge of a
    partition tuple): every entry (``_whole_columns``) where the cache holds them or the
    manifest is small; else the entries of only the Avro blocks that hold a live entry of a kept
    partition (at least one block), found by a pass that decodes each entry's status and partition
    alone (``manifest_arrow.PartitionPass``, held in the manifest cache; the partial columns are
    not). The caller judges what it gets as it judges whole columns: the entries it keeps are the
    same, in the same order. None as ``load_manifest_columns``."""
    settings = CacheSettings.of(meta.properties)
    key = cache_key(m)
    if _entry_count(m) < max(COLUMNS_MIN_ENTRIES, PARTITION_FIRST_MIN_ENTRIES) or m.first_row_id is not None \
            or m.content != DATA_MANIFEST or MANIFESTS.get(("columns",) + key, settings) is not None:
        return _whole_columns(io, meta, m, metrics, split)       # (v3 row ids are inherited over every entry)
    spec = meta.specs_by_id().get(m.partition_spec_id)
    if spec is None:
        return None
    data: Optional[bytes] = None
    found = MANIFESTS.get(("partitions",) + key, settings)
    if found is None:
        try:
            ptype = spec.partition_type(meta.schema)
            data = io.read_bytes(m.manifest_path)
        except Exception:       # noqa: BLE001 -- the entries reader reads it again and names what is wrong
            return None
        found = PartitionPass.of(data, ptype) or _NOT_COLUMNAR
        if isinstance(found, PartitionPass):
            _check_entry_count(m, found.n)
        MANIFESTS.put(("partitions",) + key, found,
                      found.nbytes if isinstance(found, PartitionPass) else 0, settings)
    if not isinstance(found, PartitionPass):
        return _whole_columns(io, meta, m, metrics, split)
    verdicts = np.fromiter((keeps(p) for p in found.partitions), bool, len(found.partitions))
    keep = verdicts[found.partition_index] & (found.status != DELETED)
    blocks = found.blocks_keeping(keep)
    if int(found.block_counts[blocks].sum()) > PARTITION_FIRST_MAX_SHARE * found.n:
        return _whole_columns(io, meta, m, metrics, split)
    if not len(blocks):         # none kept: the first block with entries, for columns to judge
        blocks = np.flatnonzero(found.block_counts)[:1]
    try:
        data = data if data is not None else io.read_bytes(m.manifest_path)
    except Exception:       # noqa: BLE001
        return None
    table = decode_blocks(data, blocks)
    if table is None or table.num_rows != int(found.block_counts[blocks].sum()):
        return _whole_columns(io, meta, m, metrics, split)
    return ManifestColumns.of(table, spec.partition_type(meta.schema), m.partition_spec_id, m.added_snapshot_id,
                              m.sequence_number, None)


def live_files(io: FileIO, meta: TableMetadata, m: ManifestFile) -> tuple[pa.Array, "np.ndarray[Any, np.dtype[np.int64]]"]:
    """The paths and contents of the files manifest ``m`` lists live (ADDED or EXISTING), decoded
    as columns (each entry's status, path and content only; no object per entry), else read
    entry by entry (``load_manifest_entries``, which names a damaged manifest)."""
    data = io.read_bytes(m.manifest_path)
    fields = avro_columns.record_fields(data, "data_file")
    table = None
    if fields is not None and "file_path" in fields:
        drop = ("snapshot_id", "sequence_number", "file_sequence_number") + tuple(
            f"data_file.{f}" for f in fields if f not in ("file_path", "content"))
        table = decode_columns(data, drop=drop)
    try:
        framed = manifest_avro.container_record_count(data)
    except (ValueError, IndexError):
        framed = -1
    if table is None or table.num_rows != framed or not {"status", "data_file"} <= set(table.column_names):
        entries = [e for e in load_manifest_entries(io, meta, m) if e.status != DELETED]
        return (pa.array([e.data_file.file_path for e in entries], pa.string()),
                np.array([e.data_file.content for e in entries], np.int64))
    files = table.column("data_file")
    chunks = [c for c in files.chunks if len(c)]
    if not chunks:
        return pa.array([], pa.string()), np.zeros(0, np.int64)
    live = numpy_of(table.column("status").fill_null(ADDED)) != DELETED
    paths = pa.concat_arrays([c.field("file_path") for c in chunks]).filter(arrow_of(live))
    names = {files.type.field(i).name for i in range(files.type.num_fields)}
    content = numpy_of(pa.concat_arrays([c.field("content") for c in chunks]).fill_null(0)).astype(np.int64)[live] \
        if "content" in names else np.zeros(len(paths), np.int64)
    return paths, content


def _read_columns(io: FileIO, meta: TableMetadata, m: ManifestFile, metrics: bool,
                  split: bool = True) -> Optional[ManifestColumns]:
    spec = meta.specs_by_id().get(m.partition_spec_id)
    if spec is None or m.content != DATA_MANIFEST:
        return None
    try:
        ptype = spec.partition_type(meta.schema)
        data = io.read_bytes(m.manifest_path)
    except Exception:       # noqa: BLE001 -- the entries reader reads it again and names what is wrong
        return None
    try:       # the columns are to hold every entry the container frames
        framed = manifest_avro.container_record_count(data)
    except (ValueError, IndexError):
        return None
    table = decode_columns(data, split=split) if metrics else decode_columns(data, drop=WITHOUT_METRICS, split=split)
    if table is None or table.num_rows != framed:
        return None
    return ManifestColumns.of(table, ptype, m.partition_spec_id, m.added_snapshot_id, m.sequence_number,
                              m.first_row_id, None if metrics else data)


class ManifestContent:
    """A manifest's decoded entries, and (built on first use, kept with them in the cache) their
    columns for a plan's vectorised filter (``evaluators.FileColumns``)."""

    __slots__ = ("entries", "cached", "columns")

    def __init__(self, entries: list[ManifestEntry], cached: bool) -> None:
        self.entries = entries
        self.cached = cached
        self.columns: Optional[FileColumns] = None


def _read(io: FileIO, meta: TableMetadata, m: ManifestFile,
          keep: Optional[FileFilter] = None) -> list[ManifestEntry]:
    """The entries of ``m`` (those ``keep`` keeps), their number checked against its manifest-list
    entry's counts."""
    spec = meta.specs_by_id().get(m.partition_spec_id)
    if spec is None:
        raise CorruptMetadataError(m.manifest_path, f"{_listed_in(m)}names partition spec "
                                   f"{m.partition_spec_id!r}, which the table metadata does not have")
    try:
        ptype = spec.partition_type(meta.schema)
    except IcefloeError as e:
        raise CorruptMetadataError(m.manifest_path, f"{_listed_in(m)}cannot use its partition spec "
                                   f"{m.partition_spec_id}: {e}") from e
    # metrics maps are decoded on first access (see ``manifest_avro.read_manifest_entries``)
    try:
        got, n = manifest_avro.read_kept_entries(
            io, m.manifest_path, ptype, m.partition_spec_id, m.added_snapshot_id, m.sequence_number, keep)
    except CorruptMetadataError as e:
        if not m.manifest_list or e.path != m.manifest_path:
            raise
        raise CorruptMetadataError(e.path, f"{e.reason} (listed in manifest list {m.manifest_list})") from e
    _check_entry_count(m, n)
    return got


def with_counts(io: FileIO, meta: TableMetadata, m: ManifestFile) -> ManifestFile:
    """``m`` with the entry and row counts a format v1 manifest list may leave out counted from its
    entries: a manifest list written here is v2-shaped, where they are required [Manifest Lists]."""
    if None not in (m.added_files_count, m.existing_files_count, m.deleted_files_count,
                    m.added_rows_count, m.existing_rows_count, m.deleted_rows_count):
        return m
    files = {ADDED: 0, EXISTING: 0, DELETED: 0}
    rows = {ADDED: 0, EXISTING: 0, DELETED: 0}
    for e in load_manifest_entries(io, meta, m):
        files[e.status] += 1
        rows[e.status] += e.data_file.record_count
    return replace(m, added_files_count=files[ADDED], existing_files_count=files[EXISTING],
                   deleted_files_count=files[DELETED], added_rows_count=rows[ADDED],
                   existing_rows_count=rows[EXISTING], deleted_rows_count=rows[DELETED])


def _inherit_first_row_ids(entries: list[ManifestEntry], next_row_id: int) -> None:
    """Format v3 ("First Row ID Inheritance"): a live data file without a first row id takes the
    manifest's, moved on by the rows of the files before it that had none."""
    for e in entries:
        f = e.data_file
        if f.first_row_id is None and e.status != DELETED:
            f.first_row_id = next_row_id
            next_row_id += f.record_count


def _listed_in(m: ManifestFile) -> str:
    return f"the entry in manifest list {m.manifest_list} " if m.manifest_list else ""


def _check_entry_count(m: ManifestFile, n: int) -> None:
    """A manifest holds exactly the ``n`` entries its manifest-list entry counts: fewer means a
    manifest cut at an Avro block boundary (which decodes without error) or a wrong file."""
    added, existing, deleted = m.added_files_count, m.existing_files_count, m.deleted_files_count
    if added is None or existing is None or deleted is None:   # optional in v1 manifest lists
        return
    counts = (added, existing, deleted)
    if n != sum(counts):
        where = f"manifest list {m.manifest_list}" if m.manifest_list else "the manifest list"
        raise CorruptMetadataError(m.manifest_path, f"holds {n} entries, but {where} "
                                   f"counts {sum(counts)} (truncated, or not the manifest it lists)")


def snapshot_manifests(io: FileIO, snap: Optional[Snapshot]) -> list[ManifestFile]:
    if snap is None or not snap.manifest_list:
        return []
    manifests = load_manifest_list(io, snap.manifest_list)
    _check_data_file_total(snap, manifests)
    return manifests


def _check_data_file_total(snap: Snapshot, manifests: list[ManifestFile]) -> None:
    """A manifest list that counts fewer live data files than its snapshot's summary
    (``total-data-files``) lost manifests: e.g. it was cut at an Avro block boundary, which
    decodes without error. Only "fewer" is an error: a summary can understate the total
    (a writer that started counting on a parent without totals), never overstate it."""
    total = snap.summary.get("total-data-files") if snap.summary else None
    if total is None:
        return
    try:
        expected = int(total)
    except (TypeError, ValueError):
        return
    live = 0
    for m in manifests:
        if m.content != DATA_MANIFEST:
            continue
        if m.added_files_count is None or m.existing_files_count is None:
            return
        live += m.added_files_count + m.existing_files_count
    if live < expected:
        raise CorruptMetadataError(snap.manifest_list, f"lists manifests with {live} live data files, but "
                                   f"snapshot {snap.snapshot_id} has {expected} (truncated, or not its manifest list)")


def live_entries(io: FileIO, meta: TableMetadata, snap: Optional[Snapshot]) -> Iterable[ManifestEntry]:
    """Every ADDED or EXISTING entry of the snapshot: the files its table state consists of."""
    for m in snapshot_manifests(io, snap):
        for e in load_manifest_entries(io, meta, m):
            if e.status != DELETED:
                yield e


def entries_written_by(io: FileIO, meta: TableMetadata, snap: Snapshot,
                       data_only: bool = False) -> Iterable[ManifestEntry]:
    """The manifest entries ``snap`` itself wrote: those carrying its snapshot id in the manifests
    it added (older manifests it carried over hold nothing it changed). ``data_only`` leaves delete
    manifests, and manifests that added no file, unopened."""
    for m in snapshot_manifests(io, snap):
        if m.added_snapshot_id != snap.snapshot_id:
            continue
        if data_only and (m.content != DATA_MANIFEST or m.added_files_count == 0):
            continue
        for e in load_manifest_entries(io, meta, m):
            if e.snapshot_id == snap.snapshot_id:
                yield e


def files_changed_by(io: FileIO, meta: TableMetadata, snap: Snapshot) -> tuple[list[DataFile], list[DataFile]]:
    """(files added, files deleted) by ``snap`` itself (see ``entries_written_by``)."""
    added: list[DataFile] = []
    deleted: list[DataFile] = []
    for e in entries_written_by(io, meta, snap):
        if e.status == ADDED:
            added.append(e.data_file)
        elif e.status == DELETED:
            deleted.append(e.data_file)
    return added, deleted
