# pyright: strict
"""Dynamic-bucket primary-key tables (``bucket = -1``): the HASH index and bucket assignment.

A dynamic-bucket table has no fixed bucket count. Each (partition, bucket) has one HASH index
file under ``<table>/index/`` (``index-<uuid>-0``): the BinaryRow hash codes (the same hash
fixed buckets use) of every key stored in that bucket, as big-endian int32s. The snapshot's
``indexManifest`` (an Avro file ``index-manifest-<uuid>-0`` in ``manifest/``) lists the
current index files of the whole table, one entry per (partition, bucket) and index type.

A write assigns each key of a partition a bucket: the bucket its hash is already indexed in,
else the first bucket holding fewer than ``dynamic-bucket.target-row-num`` keys (default
2,000,000), else a new bucket (the smallest free id, up to ``dynamic-bucket.max-buckets``;
past that, an existing bucket chosen by the hash). A key never moves bucket, so a bucket
still merges every record of its keys. Every bucket that gains keys gets a new, complete
index file; the commit writes a new index manifest that replaces those buckets' entries.
The index of a partition is read by one writer (one Spark task per partition); a commit
whose partitions' index changed since the writer read it is refused, as Paimon allows one
writer per partition.
"""
from __future__ import annotations

import io as _io
import uuid
from typing import TYPE_CHECKING, Any, Collection, Iterable, Mapping, Optional, Sequence

import fastavro

from icefloe.core.avro import read_records
from icefloe.errors import CommitConflictError, CorruptMetadataError, SchemaError
from icefloe.paimon import manifest as mf
from icefloe.paimon.binary_row import encode_row
from icefloe.paimon.bucket import hashes_of_columns
from icefloe.paimon.data_file import IndexFile  # noqa: F401 (its home is beside the commit message that carries it)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

    from icefloe.core.io import FileIO
    from icefloe.paimon.file_store import FileStore
    from icefloe.paimon.schema import TableSchema
    from icefloe.paimon.snapshot import Snapshot

# An index manifest entry (an Avro record, ``IndexManifestEntry``) as fastavro reads and writes it
IndexRecord = dict[str, Any]
# A key of the index: (partition BinaryRow bytes, bucket)
PartBucket = tuple[bytes, int]

HASH = "HASH"
INDEX_DIR = "index"
DEFAULT_TARGET_ROWS = 2_000_000
MAX_BUCKETS = 32768                      # bucket ids are Java shorts

_DV_RANGE = {"type": "record", "name": "DeletionVectorMeta", "fields": [
    {"name": "f0", "type": "string"}, {"name": "f1", "type": "int"}, {"name": "f2", "type": "int"},
    {"name": "_CARDINALITY", "type": ["null", "long"], "default": None}]}
_GLOBAL = {"type": "record", "name": "GlobalIndexMeta", "fields": [
    {"name": "_ROW_RANGE_START", "type": "long"}, {"name": "_ROW_RANGE_END", "type": "long"},
    {"name": "_INDEX_FIELD_ID", "type": "int"},
    {"name": "_EXTRA_FIELD_IDS", "type": ["null", {"type": "array", "items": "int"}], "default": None},
    {"name": "_INDEX_META", "type": ["null", "bytes"], "default": None},
    {"name": "_SOURCE_META", "type": ["null", "bytes"], "default": None}]}
INDEX_MANIFEST_SCHEMA = fastavro.parse_schema({
    "type": "record", "name": "IndexManifestEntry", "fields": [
        {"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"},
        {"name": "_PARTITION", "type": "bytes"}, {"name": "_BUCKET", "type": "int"},
        {"name": "_INDEX_TYPE", "type": "string"}, {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"}, {"name": "_ROW_COUNT", "type": "long"},
        {"name": "_DELETIONS_VECTORS_RANGES", "type": ["null", {"type": "array", "items": _DV_RANGE}],
         "default": None},
        {"name": "_EXTERNAL_PATH", "type": ["null", "string"], "default": None},
        {"name": "_GLOBAL_INDEX", "type": ["null", _GLOBAL], "default": None}]})


def target_rows(options: Mapping[str, str]) -> int:
    return int(options.get("dynamic-bucket.target-row-num", DEFAULT_TARGET_ROWS))


def max_buckets(options: Mapping[str, str]) -> int:
    n = int(options.get("dynamic-bucket.max-buckets", -1))
    if n != -1 and not 1 <= n <= MAX_BUCKETS:
        raise SchemaError(f"'dynamic-bucket.max-buckets' must be -1 or between 1 and {MAX_BUCKETS}, got {n}")
    return n


# --------------------------------------------------------------------------- the index manifest
def read_index_manifest(store: FileStore, name: Optional[str]) -> list[IndexRecord]:
    """The raw entries (Avro records) of an index manifest; [] for none."""
    if not name:
        return []
    path = store.manifest_path(name)
    try:
        records = read_records(store.io.read_bytes(path))
    except FileNotFoundError:
        raise CorruptMetadataError(path, "index manifest named by the snapshot is missing") from None
    except Exception as e:  # fastavro raises assorted errors on garbage
        raise CorruptMetadataError(path, f"not a readable Avro file: {e}") from None
    return [r for r in records if r.get("_KIND", 0) == 0]


def hash_entries(store: FileStore, snapshot: Optional[Snapshot]) -> dict[PartBucket, IndexRecord]:
    """(partition bytes, bucket) -> HASH entry of ``snapshot``'s index manifest."""
    name = snapshot.index_manifest if snapshot is not None else None
    return {(r["_PARTITION"], r["_BUCKET"]): r for r in read_index_manifest(store, name) if r["_INDEX_TYPE"] == HASH}


def index_path(store: FileStore, file_name: str) -> str:
    return f"{store.table_path}/{INDEX_DIR}/{file_name}"


def write_index_manifest(store: FileStore, base_name: Optional[str], replaced: Mapping[PartBucket, IndexFile],
                         vectors: Optional[Mapping[PartBucket, Optional[IndexFile]]] = None,
                         global_added: Sequence[IndexRecord] = (), global_removed: Collection[str] = ()
                         ) -> Optional[str]:
    """A new index manifest: ``base_name``'s entries with the HASH entries of the
    (partition bytes, bucket)s in ``replaced`` (-> IndexFile) swapped for the new files, and the
    DELETION_VECTORS entries of those in ``vectors`` (-> IndexFile, or None: the bucket has no
    vectors any more) likewise; global index entries (``_GLOBAL_INDEX`` set) named in
    ``global_removed`` dropped and those of ``global_added`` added."""
    vectors = vectors or {}
    kept = [r for r in read_index_manifest(store, base_name)
            if not (r["_INDEX_TYPE"] == HASH and (r["_PARTITION"], r["_BUCKET"]) in replaced)
            and not (r["_INDEX_TYPE"] != HASH and r.get("_GLOBAL_INDEX") is None
                     and (r["_PARTITION"], r["_BUCKET"]) in vectors)
            and not (r.get("_GLOBAL_INDEX") is not None and r["_FILE_NAME"] in global_removed)]
    new = [_index_record(part, bucket, f) for (part, bucket), f in sorted(replaced.items())]
    new += [_index_record(part, bucket, f) for (part, bucket), f in sorted(vectors.items(), key=lambda kv: kv[0])
            if f is not None]
    new += list(global_added)
    records = [{**r, "_VERSION": r.get("_VERSION", 1), "_KIND": 0} for r in kept] + new
    buf = _io.BytesIO()
    # fastavro's stub leaves the file parameter of its writer as IO[Unknown]
    fastavro.writer(buf, INDEX_MANIFEST_SCHEMA, records,  # pyright: ignore[reportUnknownMemberType]
                    codec=mf.avro_codec(store.options.manifest_compression))
    name = f"index-manifest-{uuid.uuid4()}-0"
    store.io.write_bytes(store.manifest_path(name), buf.getvalue(), overwrite=False)
    return name


def _index_record(part: bytes, bucket: int, f: IndexFile) -> IndexRecord:
    ranges = None
    if f.dv_ranges is not None:
        ranges = [{"f0": n, "f1": off, "f2": size, "_CARDINALITY": card} for n, off, size, card in f.dv_ranges]
    return {"_VERSION": 1, "_KIND": 0, "_PARTITION": part, "_BUCKET": bucket, "_INDEX_TYPE": f.index_type,
            "_FILE_NAME": f.file_name, "_FILE_SIZE": f.file_size, "_ROW_COUNT": f.row_count,
            "_DELETIONS_VECTORS_RANGES": ranges, "_EXTERNAL_PATH": None, "_GLOBAL_INDEX": None}


def check_index_base(store: FileStore, latest: Optional[Snapshot], base_id: Optional[int],
                     partitions: Iterable[bytes]) -> None:
    """Refuse a commit if the HASH index of one of ``partitions`` changed after snapshot
    ``base_id`` (the one its writers assigned buckets from)."""
    base = store.snapshots.snapshot(base_id) if base_id else None
    if (latest.id if latest is not None else None) == (base.id if base is not None else None):
        return
    before, now = hash_entries(store, base), hash_entries(store, latest)
    for key in set(before) | set(now):
        if key[0] in partitions and (before.get(key) or {}).get("_FILE_NAME") != (now.get(key) or {}).get("_FILE_NAME"):
            raise CommitConflictError(
                f"commit to {store.table_path} conflicts with a commit after snapshot {base_id}: another writer "
                "changed the dynamic-bucket index of a partition this commit writes (one writer per partition)")


# --------------------------------------------------------------------------- index files
def read_hashes(io: FileIO, path: str) -> npt.NDArray[np.int32]:
    import numpy as np

    raw = io.read_bytes(path)
    if len(raw) % 4:
        raise CorruptMetadataError(path, f"HASH index of {len(raw)} bytes, not a multiple of 4")
    return np.frombuffer(raw, dtype=">i4").astype(np.int32)


def write_index_file(store: FileStore, hashes: npt.ArrayLike, name: Optional[str] = None) -> IndexFile:
    import numpy as np

    data = np.sort(np.asarray(hashes, dtype=np.int32)).astype(">i4").tobytes()
    name = name or f"index-{uuid.uuid4()}-0"
    path = index_path(store, name)
    store.io.write_bytes(path, data, overwrite=False)
    return IndexFile(HASH, name, len(data), len(data) // 4, path)


class PartitionIndex:
    """The buckets of one partition's keys, restored from its HASH index files."""

    def __init__(self, store: FileStore, entries: Mapping[int, IndexRecord], target: int, max_buckets_num: int):
        import numpy as np

        self.target, self.max_buckets = target, max_buckets_num
        self.known: dict[int, int] = {}                  # hash -> bucket
        self.counts: dict[int, int] = {}                 # bucket -> keys
        self.hashes: dict[int, npt.NDArray[np.int32]] = {}                 # bucket -> int32 array of its indexed hashes
        for bucket, entry in sorted(entries.items()):
            hs = read_hashes(store.io, index_path(store, entry["_FILE_NAME"]))
            self.hashes[bucket] = hs
            self.counts[bucket] = len(hs)
            self.known.update(dict.fromkeys(hs.tolist(), bucket))
        self.added: dict[int, list[int]] = {}                  # bucket -> list of new hashes
        self._np = np

    def assign(self, hashes: Iterable[int]) -> list[int]:
        out: list[int] = []
        for h in hashes:
            b = self.known.get(h)
            if b is None:
                b = self._new_bucket_for(h)
                self.known[h] = b
                self.counts[b] = self.counts.get(b, 0) + 1
                self.added.setdefault(b, []).append(h)
            out.append(b)
        return out

    def _new_bucket_for(self, h: int) -> int:
        for b in sorted(self.counts):
            if self.counts[b] < self.target:
                return b
        limit = MAX_BUCKETS if self.max_buckets == -1 else self.max_buckets
        for b in range(limit):
            if b not in self.counts:
                return b
        if self.max_buckets == -1:
            raise SchemaError("no dynamic bucket id is left below 32768; raise 'dynamic-bucket.target-row-num'")
        buckets = sorted(self.counts)
        return buckets[abs(h) % len(buckets)]

    def changed(self) -> dict[int, npt.NDArray[np.int32]]:
        """bucket -> every hash of the bucket, for the buckets that gained keys."""
        np = self._np
        return {b: np.concatenate([self.hashes.get(b, np.zeros(0, np.int32)), np.asarray(new, np.int32)])
                for b, new in self.added.items()}


def assign_buckets(store: FileStore, schema: TableSchema, data: pa.Table, snapshot: Optional[Snapshot]
                   ) -> tuple[dict[tuple[tuple[Any, ...], int], npt.NDArray[np.int64]],
                              dict[tuple[tuple[Any, ...], int], npt.NDArray[np.int32]]]:
    """Buckets for the rows of ``data`` (a pyarrow Table of the table's columns): returns
    ((partition tuple, bucket) -> row indices, and (partition tuple, bucket) -> the
    bucket's complete new hash array, for the buckets that gained keys)."""
    import numpy as np

    keys = schema.bucket_key_fields
    hashes = hashes_of_columns([data.column(k.name) for k in keys], [k.type for k in keys]).tolist()
    if schema.partition_keys:
        parts = list(zip(*[data.column(k).to_pylist() for k in schema.partition_keys]))
    else:
        parts = [()] * data.num_rows
    by_part: dict[tuple[Any, ...], list[int]] = {}
    for i, p in enumerate(parts):
        by_part.setdefault(p, []).append(i)
    entries = hash_entries(store, snapshot)
    target, limit = target_rows(schema.options), max_buckets(schema.options)
    groups: dict[tuple[tuple[Any, ...], int], list[int]] = {}
    changed: dict[tuple[tuple[Any, ...], int], npt.NDArray[np.int32]] = {}
    for p, rows in by_part.items():
        pbytes = encode_row(list(p), schema.partition_types).to_bytes()
        index = PartitionIndex(store, {b: e for (pb, b), e in entries.items() if pb == pbytes}, target, limit)
        buckets = index.assign([hashes[i] for i in rows])
        for i, b in zip(rows, buckets):
            groups.setdefault((p, b), []).append(i)
        for b, hs in index.changed().items():
            changed[(p, b)] = hs
    return {k: np.asarray(v, dtype=np.int64) for k, v in groups.items()}, changed


__all__ = ["HASH", "IndexFile", "assign_buckets", "write_index_file", "write_index_manifest", "hash_entries",
           "check_index_base", "read_hashes"]
