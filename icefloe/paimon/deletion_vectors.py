# pyright: strict
"""Deletion vectors of primary-key tables (``deletion-vectors.enabled``), as Paimon stores them.

A deletion vector marks rows of one data file as deleted, by position: a 32-bit Roaring bitmap.
A bucket's vectors live together in one index file under ``<table>/index/``
(``index-<uuid>-<n>``): a version byte (1), then per data file ``size`` (big-endian int32: the
bytes that follow up to the checksum), the magic number 1581511376 (big-endian int32), the
bitmap in Roaring's portable serialization, and a CRC-32 of magic and bitmap (big-endian). The
snapshot's index manifest lists the file as a ``DELETION_VECTORS`` entry of its (partition,
bucket) with, per data file, the vector's offset (of its ``size``), ``size`` and cardinality.

In a table with vectors the rows of the files above level 0 are the table: a compaction merges
the new level-0 runs with the current record of each of their keys (looked up in the levels
above, where each key has at most one live record) and marks that record deleted, so every key
keeps one live record and a read takes the files as they are, minus the vectors' rows, with no
merge. Level-0 files, not yet compacted, are not read (as Paimon's batch reads do unless
``deletion-vectors.merge-on-read``).

An append table (no primary key) with ``deletion-vectors.enabled`` keeps its files at level 0 and
deletes rows by marking them: every file is read, minus its vector. Its vectors are keyed by
(partition, bucket) too; a bucket-unaware table's (``bucket`` -1) are those of bucket 0, possibly
in several index files of one partition. A commit that removes a data file drops its vector.
"""
from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Mapping, Optional, Sequence

from icefloe.errors import CorruptMetadataError
from icefloe.paimon import dynamic_bucket as db
from icefloe.paimon import manifest as mf
from icefloe.paimon.arrow_read import read_data_file
from icefloe.paimon import merge as mg
from icefloe.paimon.options import CoreOptions
from icefloe.paimon.schema import evolve_arrow

if TYPE_CHECKING:
    import pyarrow as pa
    from pyroaring import BitMap

    from icefloe.core.io import FileIO
    from icefloe.paimon.file_store import FileStore
    from icefloe.paimon.manifest import ManifestEntry
    from icefloe.paimon.snapshot import Snapshot
    from icefloe.paimon.types import DataField

DELETION_VECTORS = "DELETION_VECTORS"
MAGIC = 1581511376
VERSION = 1


def enabled(options: Mapping[str, str]) -> bool:
    return CoreOptions(options).deletion_vectors_enabled


def serialize(bitmap: BitMap) -> bytes:
    """One vector as the index file holds it: size, magic, bitmap, checksum."""
    data = struct.pack(">i", MAGIC) + bitmap.serialize()
    return struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data) & 0xFFFFFFFF)


def deserialize(raw: bytes, offset: int, length: Optional[int], path: str) -> BitMap:
    """The vector at ``offset`` of index file bytes ``raw`` (checked: size, magic, checksum)."""
    from pyroaring import BitMap

    if offset + 8 > len(raw):
        raise CorruptMetadataError(path, f"deletion vector at offset {offset} lies past the file's end")
    size, magic = struct.unpack_from(">ii", raw, offset)
    if magic != MAGIC:
        raise CorruptMetadataError(path, f"deletion vector at offset {offset} has magic {magic}, not {MAGIC}")
    if length is not None and size != length:
        raise CorruptMetadataError(path, f"deletion vector at offset {offset} is {size} bytes, the index "
                                         f"manifest records {length}")
    end = offset + 4 + size
    if end + 4 > len(raw):
        raise CorruptMetadataError(path, f"deletion vector at offset {offset} lies past the file's end")
    data = raw[offset + 4:end]
    (crc,) = struct.unpack_from(">I", raw, end)
    if zlib.crc32(data) & 0xFFFFFFFF != crc:
        raise CorruptMetadataError(path, f"deletion vector at offset {offset} fails its checksum")
    try:
        return BitMap.deserialize(bytes(data[4:]))
    except Exception as e:  # noqa: BLE001 - pyroaring raises plain exceptions for bad input
        raise CorruptMetadataError(path, f"deletion vector at offset {offset} is not a Roaring bitmap: {e}") from None


@dataclass
class BucketVectors:
    """A bucket's vector index file and where each data file's vector sits in it. A bucket may have
    several index files (an append table's bucket-unaware partition: Paimon adds a file per commit
    that deletes, and rewrites only those whose vectors change): ``paths`` names, per data file, the
    index file holding its vector where that is not ``path``."""
    file_name: str
    path: str
    file_size: int
    ranges: dict[str, tuple[int, int, Optional[int]]]   # data file name -> (offset, size, cardinality)
    paths: dict[str, str] = field(default_factory=dict[str, str])   # data file name -> its index file's path
    others: list[str] = field(default_factory=list[str])            # the bucket's other index files' names

    @property
    def signature(self) -> str:
        """The bucket's index file names (one: its name), which any change of its vectors changes."""
        return self.file_name if not self.others else "|".join(sorted([self.file_name, *self.others]))

    def index_path(self, data_file: str) -> str:
        """The index file holding ``data_file``'s vector."""
        return self.paths.get(data_file, self.path)

    def load(self, io: FileIO) -> dict[str, BitMap]:
        """data file name -> BitMap."""
        raws: dict[str, bytes] = {}
        out: dict[str, BitMap] = {}
        for name, (off, size, _card) in self.ranges.items():
            path = self.index_path(name)
            if path not in raws:
                raws[path] = io.read_bytes(path)
            out[name] = deserialize(raws[path], off, size, path)
        return out


def bucket_vectors(store: FileStore, snapshot: Optional[Snapshot]) -> dict[db.PartBucket, BucketVectors]:
    """(partition bytes, bucket) -> BucketVectors of ``snapshot``'s index manifest (a bucket's
    several index files, if any, as one)."""
    name = snapshot.index_manifest if snapshot is not None else None
    out: dict[db.PartBucket, BucketVectors] = {}
    for r in db.read_index_manifest(store, name):
        if r["_INDEX_TYPE"] != DELETION_VECTORS:
            continue
        ranges = {d["f0"]: (d["f1"], d["f2"], d.get("_CARDINALITY")) for d in r.get("_DELETIONS_VECTORS_RANGES") or ()}
        path = r.get("_EXTERNAL_PATH") or db.index_path(store, r["_FILE_NAME"])
        key = (r["_PARTITION"], r["_BUCKET"])
        seen = out.get(key)
        if seen is None:
            out[key] = BucketVectors(r["_FILE_NAME"], path, r["_FILE_SIZE"], ranges)
            continue
        seen.others.append(r["_FILE_NAME"])
        for data_file, where in ranges.items():
            seen.ranges[data_file] = where
            seen.paths[data_file] = path
    return out


def file_vectors(store: FileStore, snapshot: Optional[Snapshot]) -> dict[str, tuple[str, int, int]]:
    """Data file name -> (index file path, offset, size) of its vector in ``snapshot`` (a data
    file's name is unique in its table)."""
    out: dict[str, tuple[str, int, int]] = {}
    for bv in bucket_vectors(store, snapshot).values():
        for data_file, (off, size, _card) in bv.ranges.items():
            out[data_file] = (bv.index_path(data_file), off, size)
    return out


def has_vectors(store: FileStore, snapshot: Optional[Snapshot]) -> bool:
    """Whether ``snapshot``'s index manifest lists deletion vectors."""
    name = snapshot.index_manifest if snapshot is not None else None
    return any(r["_INDEX_TYPE"] == DELETION_VECTORS for r in db.read_index_manifest(store, name))


def read_rows(io: FileIO, path: str, file_fields: Sequence[DataField], read_fields: Sequence[DataField],
              deleted: Optional[BitMap] = None, kv: bool = True) -> pa.Table:
    """A primary-key data file's rows (the value columns of ``read_fields``; with ``kv`` False an
    append table's file, its columns matched by field id) minus those the vector ``deleted`` marks."""
    if not kv:
        return without_positions(evolve_arrow(read_data_file(path, io), file_fields, list(read_fields)), deleted)
    data = mg.read_kv_file(path, io, file_fields, read_fields).drop_columns(list(mg.SYSTEM_COLUMNS))
    return without_positions(data, deleted)


def without_positions(data: pa.Table, deleted: Optional[BitMap]) -> pa.Table:
    """``data`` (a file's rows in file order) minus the positions the vector ``deleted`` marks."""
    import numpy as np
    import pyarrow as pa

    if deleted is None or not len(deleted):
        return data
    keep = np.ones(data.num_rows, dtype=bool)
    keep[np.fromiter(deleted, dtype=np.int64)] = False
    return data.filter(pa.array(keep))


def read_vector(io: FileIO, index_path: str, offset: int, size: int) -> BitMap:
    """One vector of an index file, read by its range alone."""
    with io.open_read(index_path) as fh:
        fh.seek(offset)
        raw = fh.read(size + 8)
    return deserialize(raw, 0, size, index_path)


def readable(entries: Iterable[ManifestEntry]) -> list[ManifestEntry]:
    """What a read of a primary-key table with vectors takes: the files above level 0 (an append
    table's files are all at level 0, all read, each minus its vector)."""
    return [e for e in entries if e.file.level > 0]


def skips_level0(options: Mapping[str, str]) -> bool:
    """Whether batch reads leave level-0 files out, as Paimon's do: tables with deletion vectors
    (unless ``deletion-vectors.merge-on-read``) and first-row tables, whose writers compact every
    new run up."""
    if enabled(options):
        return True
    return str(options.get("merge-engine", "deduplicate")).strip().lower() == "first-row"


def write_index(store: FileStore, vectors: Mapping[str, BitMap], name: Optional[str] = None) -> Optional[db.IndexFile]:
    """A bucket's vectors (data file name -> BitMap; empty ones left out) as one index file:
    its ``IndexFile`` (with the ranges), or None when no vector deletes anything."""
    chunks = [bytes([VERSION])]
    ranges: list[tuple[str, int, int, int]] = []
    position = 1
    for file_name in sorted(vectors):
        bitmap = vectors[file_name]
        if not len(bitmap):
            continue
        blob = serialize(bitmap)
        ranges.append((file_name, position, len(blob) - 8, len(bitmap)))
        chunks.append(blob)
        position += len(blob)
    if not ranges:
        return None
    data = b"".join(chunks)
    name = name or f"index-{uuid.uuid4()}-0"
    path = db.index_path(store, name)
    store.io.write_bytes(path, data, overwrite=False)
    return db.IndexFile(DELETION_VECTORS, name, len(data), len(ranges), path, dv_ranges=ranges)


def dropped_with_files(store: FileStore, latest: Optional[Snapshot], entries: Iterable[ManifestEntry],
                       vectors: Mapping[db.PartBucket, object]) -> dict[db.PartBucket, Optional[db.IndexFile]]:
    """The buckets whose vectors must change because a commit of ``entries`` (following ``latest``)
    removes data files they mark, each -> its new index file without those files' vectors (None:
    none left). A file removed and added again (moved to another level) keeps its vector; buckets
    the commit already gives vectors (``vectors``) are left to it."""
    removed: dict[db.PartBucket, set[str]] = {}
    added: set[tuple[db.PartBucket, str]] = set()
    for e in entries:
        key = (e.partition.to_bytes(), e.bucket)
        if e.kind == mf.DELETE:
            removed.setdefault(key, set()).add(e.file.file_name)
        else:
            added.add((key, e.file.file_name))
    if not removed or latest is None or not latest.index_manifest:
        return {}
    current = bucket_vectors(store, latest)
    out: dict[db.PartBucket, Optional[db.IndexFile]] = {}
    for key, names in removed.items():
        bv = current.get(key)
        gone = {n for n in names if (key, n) not in added}
        if key in vectors or bv is None or not gone & bv.ranges.keys():
            continue
        out[key] = write_index(store, {n: b for n, b in bv.load(store.io).items() if n not in gone})
    return out


__all__ = ["dropped_with_files", "enabled", "serialize", "deserialize", "bucket_vectors", "file_vectors", "has_vectors", "write_index", "BucketVectors", "read_rows",
           "read_vector", "without_positions",
           "readable", "skips_level0",
           "DELETION_VECTORS"]
