"""Reading a snapshot's manifests (Iceberg spec, "Manifest Lists", "Manifests").

Entries come back with inherited snapshot ids and sequence numbers applied
("Sequence Number Inheritance"), and are checked against what the manifest
list counts: a file cut at an Avro block boundary decodes without error, so
counts are the only way to notice it. Manifests and manifest lists are
immutable once written, so both are cached by path.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Iterable, Optional

from icefloe.core.first_reads import FirstReads
from icefloe.core.io import FileIO
from icefloe.errors import CorruptMetadataError, IcefloeError
from icefloe.iceberg import manifest_avro, manifest_codegen
from icefloe.iceberg.manifest import ADDED, DELETED, DataFile, ManifestEntry
from icefloe.iceberg.manifest_list import DATA_MANIFEST, ManifestFile, read_manifest_list
from icefloe.iceberg.snapshot import Snapshot
from icefloe.iceberg.table_metadata import TableMetadata

_MANIFEST_CACHE: "OrderedDict[tuple, list]" = OrderedDict()
_LIST_CACHE: "OrderedDict[str, list]" = OrderedDict()
_CACHE_MAX = 4096
_FILTERED_ONCE = FirstReads(_CACHE_MAX)    # manifests a filtered scan has read once (and not kept)


def _cache_put(cache: OrderedDict, key, value):
    cache[key] = value
    if len(cache) > _CACHE_MAX:
        cache.popitem(last=False)


def clear_manifest_cache() -> None:
    """Forget cached manifest lists, manifests and generated decoders (a cold start)."""
    _MANIFEST_CACHE.clear()
    _FILTERED_ONCE.clear()
    _LIST_CACHE.clear()
    manifest_codegen.clear_decoders()


def load_manifest_list(io: FileIO, path: str) -> list[ManifestFile]:
    hit = _LIST_CACHE.get(path)
    if hit is None:
        hit = read_manifest_list(io, path)
        _cache_put(_LIST_CACHE, path, hit)
    return hit


def load_manifest_entries(io: FileIO, meta: TableMetadata, m: ManifestFile, keep=None) -> list[ManifestEntry]:
    """Entries of manifest ``m`` with inherited snapshot ids and sequence numbers applied.

    ``keep`` (a scan's filter, a predicate on a ``manifest_avro.EncodedFile``) may drop entries:
    the first time a filtered scan reads a manifest, only the live entries whose file it keeps are
    built, and nothing is cached; read again, the manifest is decoded whole and cached, and every
    entry comes back (the caller still checks each). A one-off filtered plan builds objects only
    for what it keeps; a repeated one finds the manifest decoded."""
    key = (m.manifest_path, m.added_snapshot_id, m.sequence_number, m.first_row_id)
    hit = _MANIFEST_CACHE.get(key)
    if hit is None and keep is not None and (m.first_row_id is None or m.content != DATA_MANIFEST) \
            and _FILTERED_ONCE.first(key):   # (v3 row ids count every entry: read whole)
        return _read(io, meta, m, keep)
    if hit is None:
        hit = _read(io, meta, m)
        if m.first_row_id is not None and m.content == DATA_MANIFEST:
            _inherit_first_row_ids(hit, m.first_row_id)
        _cache_put(_MANIFEST_CACHE, key, hit)
    return hit


def _read(io: FileIO, meta: TableMetadata, m: ManifestFile, keep=None) -> list:
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
        got, n = manifest_avro.read_kept_entries(io, m.manifest_path, ptype, m.partition_spec_id,
                                                 m.added_snapshot_id, m.sequence_number, keep)
    except CorruptMetadataError as e:
        if not m.manifest_list or e.path != m.manifest_path:
            raise
        raise CorruptMetadataError(e.path, f"{e.reason} (listed in manifest list {m.manifest_list})") from e
    _check_entry_count(m, n)
    return got


def _inherit_first_row_ids(entries: list, next_row_id: int) -> None:
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
    counts = (m.added_files_count, m.existing_files_count, m.deleted_files_count)
    if any(c is None for c in counts):   # optional in v1 manifest lists
        return
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
    added, deleted = [], []
    for e in entries_written_by(io, meta, snap):
        if e.status == ADDED:
            added.append(e.data_file)
        elif e.status == DELETED:
            deleted.append(e.data_file)
    return added, deleted
