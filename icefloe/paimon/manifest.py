# pyright: strict
"""Manifest files and manifest lists (Avro), and the rules for merging their entries.

A manifest file (``manifest/manifest-<uuid>-<n>``) holds ``ManifestEntry`` records,
each one change to one data file::

    _VERSION 2 | _KIND 0=ADD 1=DELETE | _PARTITION (serialised BinaryRow) | _BUCKET |
    _TOTAL_BUCKETS | _FILE (DataFileMeta)

A manifest list (``manifest/manifest-list-<uuid>-<n>``) holds ``ManifestFileMeta``
records: a manifest's name and size, how many ADD and DELETE entries it has, the
min/max/null-count statistics of the partitions in it (BinaryRows), its schema id
and the bucket and level ranges.

``_VERSION`` is 2 in both, the value Java Paimon's ``ManifestEntrySerializer`` and
``ManifestFileMetaSerializer`` write and check (pypaimon writes 2 as well). Record
names follow Java's ``AvroSchemaConverter`` (``org.apache.paimon.avro.generated.record``
and ``record_<FIELD>`` for nested rows); nullable fields are ``["null", T]``.

Merging (as Paimon's commit merges manifest entries): a file is identified by partition, bucket,
level, name, extra files, embedded index and external path. An ADD of a file that
is already added is an error; a DELETE cancels an earlier ADD of the same file,
and a DELETE whose ADD is not among the merged entries is kept.
"""
from __future__ import annotations

import importlib
import io as _io
import threading
import uuid
from dataclasses import dataclass
from typing import AbstractSet, Any, Callable, Iterable, Optional, Sequence, cast

import fastavro
from fastavro import write as fastavro_write

from icefloe.core.avro import read_records
from icefloe.core.types import IcebergType
from icefloe.errors import CorruptMetadataError
from icefloe.paimon.binary_row import BinaryRow, decode_row, encode_row
from icefloe.paimon import manifest_blocks
from icefloe.paimon.data_file import EMPTY_STATS, DataFileMeta, SimpleStats
from icefloe.errors import DuplicateFileError  # noqa: F401 - defined in icefloe.errors, importable here too

ADD = 0
DELETE = 1
MANIFEST_VERSION = 2
_NS = "org.apache.paimon.avro.generated"

# One Avro record as fastavro reads and writes it (field name -> value), and one Avro schema
AvroRecord = dict[str, Any]
AvroSchema = dict[str, Any]
# What identifies one data file in merges: partition bytes, bucket, level, name, extra files,
# embedded index, external path
FileIdentifier = tuple[bytes, int, int, str, tuple[str, ...], Optional[bytes], Optional[str]]


# --------------------------------------------------------------------------- records
@dataclass(slots=True)
class ManifestEntry:
    kind: int
    partition: BinaryRow
    bucket: int
    total_buckets: int
    file: DataFileMeta

    def identifier(self) -> FileIdentifier:
        f = self.file
        return (self.partition.to_bytes(), self.bucket, f.level, f.file_name,
                tuple(f.extra_files or ()), f.embedded_index, f.external_path)


@dataclass
class ManifestFileMeta:
    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int
    min_bucket: Optional[int] = None
    max_bucket: Optional[int] = None
    min_level: Optional[int] = None
    max_level: Optional[int] = None
    min_row_id: Optional[int] = None
    max_row_id: Optional[int] = None
    total_buckets: Optional[int] = None
    extra_files: Optional[tuple[str, ...]] = None


# --------------------------------------------------------------------------- Avro schemas
def _nullable(t: object) -> list[object]:
    return ["null", t]


def _stats_schema(name: str) -> AvroSchema:
    return {"type": "record", "name": name, "namespace": _NS, "fields": [
        {"name": "_MIN_VALUES", "type": "bytes"},
        {"name": "_MAX_VALUES", "type": "bytes"},
        {"name": "_NULL_COUNTS", "type": _nullable({"type": "array", "items": ["null", "long"]}),
         "default": None},
    ]}


def _opt(name: str, t: object) -> dict[str, object]:
    return {"name": name, "type": _nullable(t), "default": None}


DATA_FILE_SCHEMA: AvroSchema = {"type": "record", "name": "record__FILE", "namespace": _NS, "fields": [
    {"name": "_FILE_NAME", "type": "string"},
    {"name": "_FILE_SIZE", "type": "long"},
    {"name": "_ROW_COUNT", "type": "long"},
    {"name": "_MIN_KEY", "type": "bytes"},
    {"name": "_MAX_KEY", "type": "bytes"},
    {"name": "_KEY_STATS", "type": _stats_schema("record__FILE__KEY_STATS")},
    {"name": "_VALUE_STATS", "type": _stats_schema("record__FILE__VALUE_STATS")},
    {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"},
    {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
    {"name": "_SCHEMA_ID", "type": "long"},
    {"name": "_LEVEL", "type": "int"},
    {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}},
    _opt("_CREATION_TIME", {"type": "long", "logicalType": "timestamp-millis"}),
    _opt("_DELETE_ROW_COUNT", "long"),
    _opt("_EMBEDDED_FILE_INDEX", "bytes"),
    _opt("_FILE_SOURCE", "int"),
    _opt("_VALUE_STATS_COLS", {"type": "array", "items": "string"}),
    _opt("_EXTERNAL_PATH", "string"),
    _opt("_FIRST_ROW_ID", "long"),
    _opt("_WRITE_COLS", {"type": "array", "items": "string"}),
    _opt("_WRITE_COLS_SEQUENCES", {"type": "array", "items": "long"}),
]}

MANIFEST_ENTRY_SCHEMA: AvroSchema = {"type": "record", "name": "record", "namespace": _NS, "fields": [
    {"name": "_VERSION", "type": "int"},
    {"name": "_KIND", "type": "int"},
    {"name": "_PARTITION", "type": "bytes"},
    {"name": "_BUCKET", "type": "int"},
    {"name": "_TOTAL_BUCKETS", "type": "int"},
    {"name": "_FILE", "type": DATA_FILE_SCHEMA},
]}

MANIFEST_FILE_META_SCHEMA: AvroSchema = {"type": "record", "name": "record", "namespace": _NS, "fields": [
    {"name": "_VERSION", "type": "int"},
    {"name": "_FILE_NAME", "type": "string"},
    {"name": "_FILE_SIZE", "type": "long"},
    {"name": "_NUM_ADDED_FILES", "type": "long"},
    {"name": "_NUM_DELETED_FILES", "type": "long"},
    {"name": "_PARTITION_STATS", "type": _stats_schema("record__PARTITION_STATS")},
    {"name": "_SCHEMA_ID", "type": "long"},
    _opt("_MIN_BUCKET", "int"),
    _opt("_MAX_BUCKET", "int"),
    _opt("_MIN_LEVEL", "int"),
    _opt("_MAX_LEVEL", "int"),
    _opt("_MIN_ROW_ID", "long"),
    _opt("_MAX_ROW_ID", "long"),
    _opt("_TOTAL_BUCKETS", "int"),
    _opt("_EXTRA_FILES", {"type": "array", "items": "string"}),
]}

_PARSED_ENTRY = fastavro.parse_schema(MANIFEST_ENTRY_SCHEMA)
_PARSED_META = fastavro.parse_schema(MANIFEST_FILE_META_SCHEMA)
MANIFEST_ENTRY_SCHEMA_PARSED = _PARSED_ENTRY      # what a writer of raw entry records (``manifest_merge``) writes


def avro_codec(compression: str) -> str:
    """Avro codec for ``manifest.compression`` (Paimon's default is zstd)."""
    c = (compression or "zstd").lower()
    return {"zstd": "zstandard", "none": "null", "uncompressed": "null"}.get(c, c)


# --------------------------------------------------------------------------- record <-> dict
def _stats_to_avro(s: SimpleStats) -> AvroRecord:
    return {"_MIN_VALUES": s.min_values.to_bytes(), "_MAX_VALUES": s.max_values.to_bytes(),
            "_NULL_COUNTS": list(s.null_counts) if s.null_counts is not None else None}


def _stats_from_avro(d: AvroRecord) -> SimpleStats:
    counts = d.get("_NULL_COUNTS")
    return SimpleStats(BinaryRow.from_bytes(d["_MIN_VALUES"]), BinaryRow.from_bytes(d["_MAX_VALUES"]),
                       tuple(counts) if counts is not None else None)


def _opt_list(v: Optional[Iterable[Any]]) -> Optional[list[Any]]:
    return list(v) if v is not None else None


def _opt_tuple(v: Optional[Iterable[Any]]) -> Optional[tuple[Any, ...]]:
    return tuple(v) if v is not None else None


def data_file_to_avro(f: DataFileMeta) -> AvroRecord:
    return {
        "_FILE_NAME": f.file_name, "_FILE_SIZE": f.file_size, "_ROW_COUNT": f.row_count,
        "_MIN_KEY": f.min_key.to_bytes(), "_MAX_KEY": f.max_key.to_bytes(),
        "_KEY_STATS": _stats_to_avro(f.key_stats), "_VALUE_STATS": _stats_to_avro(f.value_stats),
        "_MIN_SEQUENCE_NUMBER": f.min_sequence_number, "_MAX_SEQUENCE_NUMBER": f.max_sequence_number,
        "_SCHEMA_ID": f.schema_id, "_LEVEL": f.level, "_EXTRA_FILES": list(f.extra_files or ()),
        "_CREATION_TIME": f.creation_time, "_DELETE_ROW_COUNT": f.delete_row_count,
        "_EMBEDDED_FILE_INDEX": f.embedded_index, "_FILE_SOURCE": f.file_source,
        "_VALUE_STATS_COLS": _opt_list(f.value_stats_cols), "_EXTERNAL_PATH": f.external_path,
        "_FIRST_ROW_ID": f.first_row_id, "_WRITE_COLS": _opt_list(f.write_cols),
        "_WRITE_COLS_SEQUENCES": _opt_list(f.write_cols_sequences),
    }


def _millis(v: Any) -> Optional[int]:
    if v is None or isinstance(v, int):
        return v
    import datetime as _dt

    if v.tzinfo is None:
        v = v.replace(tzinfo=_dt.timezone.utc)
    return int(v.timestamp() * 1000)


# what a decoder of manifests into columns (``manifest_columns``) builds entries with, as this module does
millis = _millis
opt_tuple = _opt_tuple


def data_file_from_avro(d: AvroRecord) -> DataFileMeta:
    return DataFileMeta(
        file_name=d["_FILE_NAME"], file_size=d["_FILE_SIZE"], row_count=d["_ROW_COUNT"],
        min_key=BinaryRow.from_bytes(d["_MIN_KEY"]), max_key=BinaryRow.from_bytes(d["_MAX_KEY"]),
        key_stats=_stats_from_avro(d["_KEY_STATS"]), value_stats=_stats_from_avro(d["_VALUE_STATS"]),
        min_sequence_number=d["_MIN_SEQUENCE_NUMBER"], max_sequence_number=d["_MAX_SEQUENCE_NUMBER"],
        schema_id=d["_SCHEMA_ID"], level=d["_LEVEL"], extra_files=tuple(d.get("_EXTRA_FILES") or ()),
        creation_time=_millis(d.get("_CREATION_TIME")), delete_row_count=d.get("_DELETE_ROW_COUNT"),
        embedded_index=d.get("_EMBEDDED_FILE_INDEX"), file_source=d.get("_FILE_SOURCE"),
        value_stats_cols=_opt_tuple(d.get("_VALUE_STATS_COLS")), external_path=d.get("_EXTERNAL_PATH"),
        first_row_id=d.get("_FIRST_ROW_ID"), write_cols=_opt_tuple(d.get("_WRITE_COLS")),
        write_cols_sequences=_opt_tuple(d.get("_WRITE_COLS_SEQUENCES")),
    )


def entry_to_avro(e: ManifestEntry) -> AvroRecord:
    return {"_VERSION": MANIFEST_VERSION, "_KIND": e.kind, "_PARTITION": e.partition.to_bytes(),
            "_BUCKET": e.bucket, "_TOTAL_BUCKETS": e.total_buckets, "_FILE": data_file_to_avro(e.file)}


def entry_from_avro(d: AvroRecord) -> ManifestEntry:
    return ManifestEntry(d["_KIND"], BinaryRow.from_bytes(d["_PARTITION"]), d["_BUCKET"],
                         d["_TOTAL_BUCKETS"], data_file_from_avro(d["_FILE"]))


def file_meta_to_avro(m: ManifestFileMeta) -> AvroRecord:
    return {
        "_VERSION": MANIFEST_VERSION, "_FILE_NAME": m.file_name, "_FILE_SIZE": m.file_size,
        "_NUM_ADDED_FILES": m.num_added_files, "_NUM_DELETED_FILES": m.num_deleted_files,
        "_PARTITION_STATS": _stats_to_avro(m.partition_stats), "_SCHEMA_ID": m.schema_id,
        "_MIN_BUCKET": m.min_bucket, "_MAX_BUCKET": m.max_bucket, "_MIN_LEVEL": m.min_level,
        "_MAX_LEVEL": m.max_level, "_MIN_ROW_ID": m.min_row_id, "_MAX_ROW_ID": m.max_row_id,
        "_TOTAL_BUCKETS": m.total_buckets, "_EXTRA_FILES": _opt_list(m.extra_files),
    }


def file_meta_from_avro(d: AvroRecord) -> ManifestFileMeta:
    return ManifestFileMeta(
        d["_FILE_NAME"], d["_FILE_SIZE"], d["_NUM_ADDED_FILES"], d["_NUM_DELETED_FILES"],
        _stats_from_avro(d["_PARTITION_STATS"]), d["_SCHEMA_ID"], d.get("_MIN_BUCKET"),
        d.get("_MAX_BUCKET"), d.get("_MIN_LEVEL"), d.get("_MAX_LEVEL"), d.get("_MIN_ROW_ID"),
        d.get("_MAX_ROW_ID"), d.get("_TOTAL_BUCKETS"), _opt_tuple(d.get("_EXTRA_FILES")),
    )


# --------------------------------------------------------------------------- encode / decode
def encode_manifest_list(metas: Sequence[ManifestFileMeta], codec: str = "zstandard") -> bytes:
    buf = _io.BytesIO()
    cast(Any, fastavro).writer(buf, _PARSED_META,  # Any: one overload of fastavro's writer is partly untyped
                                [file_meta_to_avro(m) for m in metas], codec=codec)
    return buf.getvalue()


def index_types(data: bytes, path: str) -> set[str]:
    """The index types (``HASH``, ``DELETION_VECTORS``...) an index manifest adds (its
    entries are at ``_VERSION`` 1)."""
    try:
        records = read_records(data)
    except Exception as e:  # fastavro raises assorted errors on garbage
        raise CorruptMetadataError(path, f"not a readable Avro file: {e}") from None
    return {str(r.get("_INDEX_TYPE")) for r in records if r.get("_KIND", 0) == 0}


def _check_version(path: str, version: object) -> None:
    if version != MANIFEST_VERSION:
        raise CorruptMetadataError(path, f"unsupported _VERSION {version!r} (expected 2)")


def _check_partition(path: str, partition: object) -> None:
    if not isinstance(partition, bytes) or len(partition) < 4:
        raise CorruptMetadataError(path, f"bad manifest entry: _PARTITION {partition!r}")


# what a reader of records of its own (``bucket_files``) checks as this module does
check_version = _check_version
check_partition = _check_partition


def _read_avro(data: bytes, path: str) -> list[AvroRecord]:
    try:
        records = read_records(data)
    except Exception as e:  # fastavro raises assorted errors on garbage
        raise CorruptMetadataError(path, f"not a readable Avro file: {e}") from None
    for r in records:
        _check_version(path, r.get("_VERSION"))
    return records


def decode_manifest_list(data: bytes, path: str = "<manifest list>") -> list[ManifestFileMeta]:
    try:
        return [file_meta_from_avro(r) for r in _read_avro(data, path)]
    except (KeyError, TypeError, ValueError) as e:
        raise CorruptMetadataError(path, f"bad manifest list record: {e}") from None


def decode_manifest(data: bytes, path: str = "<manifest>") -> list[ManifestEntry]:
    return entries_from_records(_read_avro(data, path), path)


def read_manifest_records(data: bytes, path: str = "<manifest>") -> list[AvroRecord]:
    """The raw Avro records of a manifest (checked), for :func:`entries_from_records`."""
    records = _read_avro(data, path)
    for r in records:
        _check_partition(path, r.get("_PARTITION"))
    return records


# fastavro's own decoders of one value, as pypaimon uses them to skip entries undecoded (typed Any:
# fastavro's _read.pyi leaves them out); None where fastavro lacks them
_avro_bytes: Any
_avro_long: Any
_avro_record: Any
_avro_skip: Any
try:
    _fastavro_read: Any = importlib.import_module("fastavro._read")
    _avro_bytes, _avro_long = _fastavro_read.read_bytes, _fastavro_read.read_long
    _avro_record, _avro_skip = _fastavro_read.read_record, _fastavro_read.skip_record
except (ImportError, AttributeError):  # pragma: no cover - fastavro is pinned to a version that has them
    _avro_bytes = _avro_long = _avro_record = _avro_skip = None

_ENTRY_FIELDS = ("_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE")

# What takes the records of one block: ``(path, count, stream, _FILE schema, named types, keep_partition,
# buckets, seen)``, as ``_kept_records`` takes them into a list of records; a reader that keeps other
# things of them (``bucket_files``: columns) passes its own to the readers below
TakeRecords = Callable[[str, int, Any, Any, Any, Callable[[bytes], bool], Optional[AbstractSet[int]],
                        Optional[tuple[set[bytes], set[int]]]], None]


# The layout of indexed manifests read lately, process-wide, by path and size: the ``_FILE`` schema,
# its named types, the codec, the block index, where each block starts (its size, after its record
# count) and ends (after its sync marker), the blocks of each shared statistics object, and the sync
# marker. A manifest never changes under its name; the sync marker (16 random bytes a writer picks per
# file, ending every block) tells a file written again under the same name apart all the same. A
# manifest without an index (another writer's) gets one of its own on its first read: each block's
# partitions (row bytes) and bucket range, as found in its records.
@dataclass(frozen=True)
class _Layout:
    file_schema: Any
    named: Any
    codec: str
    index: list[manifest_blocks.Block]      # the header's index or, without one, the blocks' own (no statistics)
    starts: list[int]
    ends: list[int]
    shared: dict[int, list[int]]
    sync: bytes
    partitions: Optional[list[frozenset[bytes]]] = None     # each block's, when found by reading it


_LAYOUTS: dict[tuple[str, int], _Layout] = {}
_LAYOUTS_LIMIT = 64
_LAYOUTS_LOCK = threading.Lock()


def read_kept_records(data: bytes, path: str, keep_partition: Callable[[bytes], bool],
                      keep_stats: Optional[Callable[[SimpleStats, int], bool]] = None,
                      buckets: Optional[AbstractSet[int]] = None, rows_judged: bool = True,
                      take: Optional[TakeRecords] = None) -> Optional[list[AvroRecord]]:
    """The records of a manifest whose partitions ``keep_partition`` keeps (checked as
    ``read_manifest_records`` checks them), the others' ``_FILE`` skipped without being decoded;
    None where the file is not laid out as Paimon writes manifests (its fields in that order, the
    first five ints and bytes). ``keep_stats(stats, rows)`` judges a block of a manifest that
    indexes its blocks (``manifest_blocks``): a block it rules out is not read at all. With
    ``buckets`` only the records of those buckets are kept, and an indexed block whose bucket
    range holds none of them is not read. The header and block positions of an indexed manifest
    are kept (``_LAYOUTS``): reading it again costs the blocks it keeps, not a walk of them all
    (``read_kept_ranges`` reads only those). Without ``rows_judged`` (``keep_stats`` ignores its
    row count) the blocks that share their partition statistics (a partition's) are judged
    together, once. ``take`` takes each block's records instead (the list returned is then empty)."""
    if _avro_record is None:
        return None
    out: list[AvroRecord] = []
    put = take or _taker(out)
    try:
        with _LAYOUTS_LOCK:
            layout = _LAYOUTS.get((path, len(data))) if keep_stats is not None else None
        if layout is not None and layout.sync == data[-16:]:
            _kept_in_blocks(lambda lo, hi: data[lo:hi], path, layout, keep_partition, keep_stats, buckets,
                            rows_judged, put)
            return out
        fo = _io.BytesIO(data)
        blocks: Any = fastavro.block_reader(fo)  # Any: fastavro's Block stub omits bytes_
        writer_schema: object = blocks.writer_schema
        fields: Optional[list[dict[str, Any]]] = (cast("dict[str, Any]", writer_schema).get("fields")
                                                  if isinstance(writer_schema, dict) else None)
        if (not fields or tuple(f.get("name") for f in fields) != _ENTRY_FIELDS
                or tuple(f.get("type") for f in fields[:5]) != ("int", "int", "bytes", "int", "int")):
            return None
        file_schema, named = fields[5]["type"], getattr(blocks, "_named_schemas", {})
        index = manifest_blocks.block_index(blocks.metadata) if keep_stats is not None else None
        if index is not None:
            # the blocks located, none decompressed yet: those the index rules out never are
            located = _located_blocks(data, fo.tell(), blocks.codec)
            if located is not None and [b[0] for b in index] == [n for n, _at, _end in located]:
                shared: dict[int, list[int]] = {}     # id of a statistics object -> the blocks of it
                for b, block in enumerate(index):
                    shared.setdefault(id(block[1]), []).append(b)
                layout = _Layout(file_schema, named, blocks.codec, index, [at for _n, at, _e in located],
                                 [e for _n, _a, e in located], shared, data[-16:])
                with _LAYOUTS_LOCK:
                    if len(_LAYOUTS) >= _LAYOUTS_LIMIT:
                        _LAYOUTS.clear()
                    _LAYOUTS[(path, len(data))] = layout
                _kept_in_blocks(lambda lo, hi: data[lo:hi], path, layout, keep_partition, keep_stats,
                                buckets, rows_judged, put)
                return out
            blocks = fastavro.block_reader(_io.BytesIO(data))   # not the blocks it describes: read them all
        elif keep_stats is not None:      # no index: every block read, and what each holds kept for next time
            located = _located_blocks(data, fo.tell(), blocks.codec)
            if located is not None:
                _indexed_by_reading(data, path, file_schema, named, blocks.codec, located, keep_partition,
                                    buckets, put)
                return out
        for block in blocks:
            put(path, block.num_records, block.bytes_, file_schema, named, keep_partition, buckets, None)
        return out
    except CorruptMetadataError:
        raise
    except Exception as e:  # fastavro raises assorted errors on garbage
        raise CorruptMetadataError(path, f"not a readable Avro file: {e}") from None


def has_layout(path: str, size: int) -> bool:
    """Whether the layout of manifest ``path`` of ``size`` bytes is kept (``read_kept_ranges``)."""
    with _LAYOUTS_LOCK:
        return (path, size) in _LAYOUTS


def layout_statistics(path: str, size: int) -> Optional[list[SimpleStats]]:
    """The partition statistics of the kept layout of manifest ``path`` of ``size`` bytes, once per
    group of blocks sharing them (a partition's): the objects ``read_kept_ranges`` gives its
    ``keep_stats`` without ``rows_judged``. None when no layout with statistics is kept."""
    with _LAYOUTS_LOCK:
        layout = _LAYOUTS.get((path, size))
    if layout is None or layout.partitions is not None:
        return None
    return [layout.index[group[0]][1] for group in layout.shared.values()]


def read_kept_ranges(read_range: Callable[[int, int], bytes], path: str, size: int,
                     keep_partition: Callable[[bytes], bool], keep_stats: Callable[[SimpleStats, int], bool],
                     buckets: Optional[AbstractSet[int]] = None, rows_judged: bool = True,
                     take: Optional[TakeRecords] = None) -> Optional[list[AvroRecord]]:
    """``read_kept_records`` of the manifest ``path`` of ``size`` bytes whose layout an earlier read
    in this process kept, reading only the blocks it keeps (``read_range(start, end)``: those bytes
    of the file); None when no layout of it is kept. A range that ends short or without the file's
    sync marker is a ``CorruptMetadataError``."""
    with _LAYOUTS_LOCK:
        layout = _LAYOUTS.get((path, size))
    if layout is None or _avro_record is None:
        return None
    out: list[AvroRecord] = []
    try:
        _kept_in_blocks(read_range, path, layout, keep_partition, keep_stats, buckets, rows_judged, take or _taker(out))
        return out
    except CorruptMetadataError:
        raise
    except Exception as e:  # fastavro raises assorted errors on garbage
        raise CorruptMetadataError(path, f"not a readable Avro file: {e}") from None


def _kept_in_blocks(read_range: Callable[[int, int], bytes], path: str, layout: _Layout,
                    keep_partition: Callable[[bytes], bool], keep_stats: Optional[Callable[[SimpleStats, int], bool]],
                    buckets: Optional[AbstractSet[int]], rows_judged: bool, take: TakeRecords) -> None:
    """The kept records of the blocks of a manifest its index describes (``layout``), given to
    ``take``; runs of neighbouring blocks read as one range."""
    from fastavro.io.binary_decoder import BinaryDecoder

    index, starts, ends = layout.index, layout.starts, layout.ends
    read_block: Any = importlib.import_module("fastavro._read_py").BLOCK_READERS[layout.codec]
    if layout.partitions is not None:     # an index found by reading: a block's partitions themselves judged
        numbers = [b for b, held in enumerate(layout.partitions) if any(keep_partition(p) for p in held)]
    elif keep_stats is not None and not rows_judged:     # a partition's blocks judged together
        numbers = sorted(b for group in layout.shared.values() if keep_stats(index[group[0]][1], index[group[0]][0])
                         for b in group)
    else:
        numbers = [b for b, (count, stats, _span) in enumerate(index)
                   if keep_stats is None or keep_stats(stats, count)]
    if buckets is not None:
        numbers = [b for b in numbers if (span := index[b][2]) is None or any(span[0] <= n <= span[1] for n in buckets)]
    i = 0
    while i < len(numbers):
        j = i + 1
        while j < len(numbers) and numbers[j] == numbers[j - 1] + 1:
            j += 1
        lo, hi = starts[numbers[i]], ends[numbers[j - 1]]
        chunk = read_range(lo, hi)
        if len(chunk) != hi - lo:
            raise CorruptMetadataError(path, f"truncated: bytes {lo} to {hi} of a block are not all there")
        for b in numbers[i:j]:
            if chunk[ends[b] - lo - 16:ends[b] - lo] != layout.sync:
                raise CorruptMetadataError(path, "a block does not end with the file's sync marker: the file "
                                                 "changed since its layout was read")
            f = _io.BytesIO(chunk)
            f.seek(starts[b] - lo)
            take(path, index[b][0], read_block(BinaryDecoder(f)), layout.file_schema, layout.named,
                 keep_partition, buckets, None)
        i = j


def _indexed_by_reading(data: bytes, path: str, file_schema: Any, named: Any, codec: str,
                        located: list[tuple[int, int, int]], keep_partition: Callable[[bytes], bool],
                        buckets: Optional[AbstractSet[int]], take: TakeRecords) -> None:
    """The kept records of a manifest without an index, every block read, given to ``take``; the
    partitions and bucket range each block holds are kept as its layout (``_LAYOUTS``), for the
    reads after."""
    from fastavro.io.binary_decoder import BinaryDecoder

    read_block: Any = importlib.import_module("fastavro._read_py").BLOCK_READERS[codec]
    index: list[manifest_blocks.Block] = []
    partitions: list[frozenset[bytes]] = []
    for count, at, _end in located:
        f = _io.BytesIO(data)
        f.seek(at)
        held: set[bytes] = set()
        numbers: set[int] = set()
        take(path, count, read_block(BinaryDecoder(f)), file_schema, named, keep_partition, buckets, (held, numbers))
        partitions.append(frozenset(held))
        index.append((count, EMPTY_STATS, (min(numbers), max(numbers)) if numbers else None))
    layout = _Layout(file_schema, named, codec, index, [at for _n, at, _e in located], [e for _n, _a, e in located],
                     {}, data[-16:], partitions)
    with _LAYOUTS_LOCK:
        if len(_LAYOUTS) >= _LAYOUTS_LIMIT:
            _LAYOUTS.clear()
        _LAYOUTS[(path, len(data))] = layout


def _taker(out: list[AvroRecord]) -> TakeRecords:
    """What takes a block's kept records into ``out`` as records (``_kept_records``)."""
    def take(path: str, count: int, stream: Any, file_schema: Any, named: Any, keep_partition: Callable[[bytes], bool],
             buckets: Optional[AbstractSet[int]], seen: Optional[tuple[set[bytes], set[int]]]) -> None:
        _kept_records(path, count, stream, file_schema, named, keep_partition, buckets, out, seen)
    return take


def _kept_records(path: str, count: int, stream: Any, file_schema: Any, named: Any,
                  keep_partition: Callable[[bytes], bool], buckets: Optional[AbstractSet[int]],
                  out: list[AvroRecord], seen: Optional[tuple[set[bytes], set[int]]] = None) -> None:
    """The ``count`` records of one block's ``stream`` that ``keep_partition`` and ``buckets``
    keep, appended to ``out``; the others' ``_FILE`` skipped undecoded. ``seen`` collects the
    partitions (row bytes) and buckets of all of them."""
    for _ in range(count):
        version, kind, partition = _avro_long(stream), _avro_long(stream), _avro_bytes(stream)
        bucket, total = _avro_long(stream), _avro_long(stream)
        _check_version(path, version)
        _check_partition(path, partition)
        if seen is not None:
            seen[0].add(partition[4:])
            seen[1].add(bucket)
        if not keep_partition(partition[4:]) or (buckets is not None and bucket not in buckets):
            _avro_skip(stream, file_schema, named)
            continue
        out.append({"_VERSION": version, "_KIND": kind, "_PARTITION": partition, "_BUCKET": bucket,
                    "_TOTAL_BUCKETS": total, "_FILE": _avro_record(stream, file_schema, named)})


def _located_blocks(data: bytes, start: int, codec: str) -> Optional[list[tuple[int, int, int]]]:
    """Each Avro block of ``data`` from ``start`` (just after the header): its record count, where
    its size begins (``fastavro``'s block reader of the codec decompresses it from there) and where
    it ends (after its sync marker); None for a codec fastavro's Python reader does not name, or
    bytes that are not a sequence of blocks."""
    from fastavro.io.binary_decoder import BinaryDecoder

    readers: dict[str, Any] = importlib.import_module("fastavro._read_py").BLOCK_READERS
    if readers.get(codec) is None:
        return None
    fo = _io.BytesIO(data)
    fo.seek(start)
    decoder = BinaryDecoder(fo)
    out: list[tuple[int, int, int]] = []
    while fo.tell() < len(data):
        count = decoder.read_long()
        at = fo.tell()
        size = decoder.read_long()
        if count < 0 or size < 0 or fo.tell() + size + 16 > len(data):
            return None
        fo.seek(fo.tell() + size + 16)        # the block's bytes, then the 16-byte sync marker
        out.append((count, at, fo.tell()))
    return out


def entries_from_records(records: Sequence[AvroRecord], path: str = "<manifest>",
                         keep_partition: Optional[Callable[[bytes], bool]] = None,
                         keep_file: Optional[Callable[[AvroRecord], bool]] = None) -> list[ManifestEntry]:
    """Entries of raw manifest records; with ``keep_partition`` (a predicate on a partition's
    row bytes, without the arity prefix) only those of the partitions it keeps are built; with
    ``keep_file`` (a predicate on an ADD record's raw ``_FILE``) only the ADDs it keeps. DELETEs
    are all kept: one whose ADD was dropped has nothing to cancel, and merging skips it."""
    try:
        if keep_partition is None and keep_file is None:
            return [entry_from_avro(r) for r in records]
        return [entry_from_avro(r) for r in records
                if (keep_partition is None or keep_partition(r["_PARTITION"][4:]))
                and (keep_file is None or r["_KIND"] != ADD or keep_file(r["_FILE"]))]
    except (KeyError, TypeError, ValueError) as e:
        raise CorruptMetadataError(path, f"bad manifest entry: {e}") from None


def encode_manifests(entries: Sequence[ManifestEntry], target_size: int,
                     codec: str = "zstandard", partition_types: Sequence[IcebergType] = ()
                     ) -> list[tuple[bytes, list[ManifestEntry]]]:
    """Encode entries as one or more manifest files, rolling to a new file once a file
    has reached ``target_size`` bytes (measured on the written, compressed blocks). With
    ``partition_types`` (a partitioned table's) and more than a block's worth of entries, the
    entries are grouped by partition and each file indexes its blocks (``manifest_blocks``)."""
    out: list[tuple[bytes, list[ManifestEntry]]] = []
    sync = max(256, min(16000, target_size // 4))
    i = 0
    if partition_types and len(entries) > manifest_blocks.MIN_BLOCK_ENTRIES:
        entries = manifest_blocks.grouped_by_partition(entries, partition_types)
        encoded = [entry_to_avro(e) for e in entries]
        while i < len(entries):
            data, n = manifest_blocks.encode_file(encoded[i:], entries[i:], codec, _PARSED_ENTRY, sync, target_size,
                                                  partition_types, partition_stats)
            out.append((data, list(entries[i:i + n])))
            i += n
        return out
    while i < len(entries):
        buf = _io.BytesIO()
        w: Any = fastavro_write.Writer(buf, _PARSED_ENTRY, codec=codec, sync_interval=sync)  # its write is partly untyped
        start = i
        while i < len(entries):
            w.write(entry_to_avro(entries[i]))
            i += 1
            if buf.tell() >= target_size:
                break
        w.flush()
        out.append((buf.getvalue(), list(entries[start:i])))
    return out


# --------------------------------------------------------------------------- merge rules
def merge_entries(entries: Iterable[ManifestEntry], into: dict[FileIdentifier, ManifestEntry]
                  ) -> dict[FileIdentifier, ManifestEntry]:
    """Apply entries in order to ``into`` (identifier -> entry): the merge rules above."""
    for e in entries:
        ident = e.identifier()
        if e.kind == ADD:
            if ident in into:
                raise DuplicateFileError(f"trying to add file {e.file.file_name} which is already added")
            into[ident] = e
        elif ident in into:
            del into[ident]  # ADD then DELETE of one file cancel out
        else:
            into[ident] = e  # its ADD is in an earlier manifest: keep the DELETE
    return into


def live_files(entries: Iterable[ManifestEntry]) -> list[ManifestEntry]:
    """The ADD entries left after merging (what a snapshot's reader sees)."""
    entries = list(entries)
    if all(e.kind == ADD for e in entries) and len({e.file.file_name for e in entries}) == len(entries):
        return entries      # nothing to cancel, no file added twice: the merge would keep them all, in order
    merged = merge_entries(entries, {})
    return [e for e in merged.values() if e.kind == ADD]


# --------------------------------------------------------------------------- ManifestFileMeta of entries
def partition_stats(entries: Sequence[ManifestEntry], partition_types: Sequence[IcebergType]) -> SimpleStats:
    """Min/max/null count of each partition field over the entries."""
    n = len(partition_types)
    mins: list[Any] = [None] * n
    maxs: list[Any] = [None] * n
    nulls = [0] * n
    decoded: dict[bytes, tuple[Any, ...]] = {}
    for e in entries:
        values = decoded.get(e.partition.data)
        if values is None:
            values = decoded[e.partition.data] = decode_row(e.partition, partition_types) if n else ()
        for i, v in enumerate(values):
            if v is None:
                nulls[i] += 1
            else:
                if mins[i] is None or v < mins[i]:
                    mins[i] = v
                if maxs[i] is None or v > maxs[i]:
                    maxs[i] = v
    return SimpleStats(encode_row(mins, partition_types), encode_row(maxs, partition_types), tuple(nulls))


def file_meta_of(file_name: str, file_size: int, entries: Sequence[ManifestEntry],
                 partition_types: Sequence[IcebergType], default_schema_id: int) -> ManifestFileMeta:
    added = sum(1 for e in entries if e.kind == ADD)
    low, high = row_id_range(entries)
    totals = {e.total_buckets for e in entries}
    total = totals.pop() if len(totals) == 1 else None
    return ManifestFileMeta(
        file_name=file_name, file_size=file_size, num_added_files=added,
        num_deleted_files=len(entries) - added,
        partition_stats=partition_stats(entries, partition_types),
        schema_id=max((e.file.schema_id for e in entries), default=default_schema_id),
        min_bucket=min((e.bucket for e in entries), default=None),
        max_bucket=max((e.bucket for e in entries), default=None),
        min_level=min((e.file.level for e in entries), default=None),
        max_level=max((e.file.level for e in entries), default=None),
        min_row_id=low, max_row_id=high,
        total_buckets=total if total is not None and total > 0 else None,
    )


def row_id_range(entries: Sequence[ManifestEntry]) -> tuple[Optional[int], Optional[int]]:
    """``_MIN_ROW_ID`` / ``_MAX_ROW_ID`` of a manifest: the row ids of its entries' files (row
    tracking), when every one has a first row id."""
    firsts = [(e.file.first_row_id, e.file.row_count) for e in entries if e.file.first_row_id is not None]
    if not firsts or len(firsts) != len(entries):
        return None, None
    return min(first for first, _ in firsts), max(first + n - 1 for first, n in firsts)


def new_manifest_name() -> str:
    return f"manifest-{uuid.uuid4()}"


def new_manifest_list_name() -> str:
    return f"manifest-list-{uuid.uuid4()}"
