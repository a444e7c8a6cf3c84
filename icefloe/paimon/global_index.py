# pyright: strict
"""Paimon's global indexes (``CALL sys.create_global_index``): an index of one column of a
row-tracking table (``row-tracking.enabled``), keyed by row id rather than by data file.

As Paimon 1.4 lays them out:

- *Shards.* The rows a build reads are cut by row id into shards of
  ``global-index.row-count-per-shard`` ids (100,000 by default; shard ``k`` is ids
  ``[k * n, (k + 1) * n - 1]``), per partition. Only data files with a first row id take part; in
  a shard, the files are sorted by first row id and each run of contiguous files is one row range,
  clamped to the shard. Each row range gets one index file.
- *Index files.* Under ``<table>/index/``, named ``<index type>-global-index-<uuid>.index``. A
  ``bitmap`` file holds exactly Paimon's ``bitmap`` file index (``file_index_bitmap``, version 2,
  options ``version`` and ``index-block-size``) of the range's values in row-id order, so a row's
  position in it is its row id minus the range's start. A ``btree`` index (``global_index_btree``)
  is not cut into shards: each run of contiguous files of a partition is one row range, whose rows
  in value order make one SST file per ``btree-index.records-per-range`` (times 1.2) rows, each
  entry carrying the whole range and, as its meta bytes, the first and last value it holds.
  ``sorted-index.records-per-range`` (current Paimon's name of that option; the btree one is its
  fallback) sets it too, and given to a ``bitmap`` build it takes each run of contiguous files as one
  range, as current Paimon's sorted build does, cut into one file per that many (times 1.2) row ids,
  each file its own row range. (Current Paimon regroups a bitmap range's rows in value order into
  files of a newer bitmap format, several a range; Paimon 1.4's bitmap reader, which reads the bytes
  written here, takes one file a range.)
- *Metadata.* Each index file is an entry of the snapshot's index manifest (bucket 0 of its
  partition, ``_INDEX_TYPE`` the index type, ``_ROW_COUNT`` the rows it holds) whose
  ``_GLOBAL_INDEX`` record gives the row range (``_ROW_RANGE_START`` / ``_ROW_RANGE_END``,
  inclusive), the indexed column's field id and the index's own meta bytes (none for bitmap).
  The commit that adds them is an APPEND snapshot without data files. A build again (as current
  Paimon's incremental build) writes only the row ranges the column's index of that type does not
  cover yet; a new index file may not overlap a live one of another type on the same column (that
  one is dropped first, ``drop_global_index``).
- *Reads.* Rows with ids in an indexed range holding no value an ``=``, ``IN``, ``<``, ``<=``, ``>``,
  ``>=`` or ``IS NULL`` condition asks for (AND / OR followed) are not read. Here that skips whole data files: a file with
  a first row id and rows at their positional ids (no ``_ROW_ID`` column), written with the
  column's current type, whose ids the indexed ranges cover. Such a file never changes; rows that
  later writes move (compaction, UPDATE, DELETE, MERGE) go to files without a first row id, which
  are always read, and rows appended later are outside every range. So the index never goes stale
  and a read with it returns what a full read returns. Reads of Data Evolution tables
  (``data-evolution.enabled``, whose files of some columns share row ids) do not use it, nor reads
  with ``global-index.enabled`` = false.
- *Types.* ``bitmap`` and ``btree`` (of strings, integers, booleans and dates, uncompressed) are
  built and read here; the vector indexes (``lumina-vector-ann``, a native library) are read past --
  a read of a table holding one does not skip by it -- and not built.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from icefloe.core import expressions as ex
from icefloe.core.expressions.tree import literal_of
from icefloe.errors import SchemaError
from icefloe.paimon import file_index_bitmap as bmi
from icefloe.paimon import global_index_btree as bt
from icefloe.paimon import manifest as mf
from icefloe.paimon import row_tracking
from icefloe.paimon.arrow_read import read_data_file
from icefloe.paimon.dynamic_bucket import INDEX_DIR, IndexRecord, read_index_manifest
from icefloe.paimon.schema import evolve_arrow
from icefloe.paimon.types import DataField, root

if TYPE_CHECKING:
    from pyroaring import BitMap

    from icefloe.core.io import FileIO
    from icefloe.paimon.file_store import FileStore
    from icefloe.paimon.schema import TableSchema
    from icefloe.paimon.snapshot import Snapshot

BITMAP = "bitmap"
BTREE = "btree"
ENABLED = "global-index.enabled"
ROWS_PER_SHARD = "global-index.row-count-per-shard"
DEFAULT_ROWS_PER_SHARD = 100_000
DATA_EVOLUTION = "data-evolution.enabled"
# the options a bitmap global index takes (those of Paimon's bitmap file index)
BITMAP_OPTIONS = bmi.OPTIONS
# Paimon's other index types (1.4's and later ones), and why icefloe does not build them
NOT_BUILT = {
    "lumina-vector-ann": "it is a vector index built by Paimon's native Lumina (DiskANN) library, which has "
                         "no implementation outside Java and native code",
    "full-text": "it is a full-text index written and searched by Paimon's standalone native full-text index "
                 "library (its paimon-full-text module), whose file format has no implementation outside that "
                 "native code",
}
TYPES = (BITMAP, BTREE, *NOT_BUILT)


def _flag(options: Mapping[str, str], key: str, default: bool) -> bool:
    return str(options.get(key, str(default))).strip().lower() == "true"


def rows_per_shard(options: Mapping[str, str]) -> int:
    text = options.get(ROWS_PER_SHARD, str(DEFAULT_ROWS_PER_SHARD))
    try:
        n = int(str(text).strip())
    except ValueError:
        n = 0
    if n <= 0:
        raise SchemaError(f"option {ROWS_PER_SHARD!r} must be greater than 0, not {text!r}")
    return n


# --------------------------------------------------------------------------- index manifest entries
@dataclass(frozen=True)
class GlobalIndexFile:
    """One global index file of a snapshot's index manifest."""
    partition: bytes
    index_type: str
    file_name: str
    file_size: int
    row_count: int
    range_start: int
    range_end: int          # inclusive
    field_id: int
    path: str
    index_meta: Optional[bytes] = None

    def covers(self, start: int, end: int) -> bool:
        return self.range_start <= end and start <= self.range_end


def is_global(record: IndexRecord) -> bool:
    return record.get("_GLOBAL_INDEX") is not None


def files_of(store: FileStore, records: Iterable[IndexRecord]) -> list[GlobalIndexFile]:
    out: list[GlobalIndexFile] = []
    for r in records:
        g = r.get("_GLOBAL_INDEX")
        if g is None:
            continue
        path = r.get("_EXTERNAL_PATH") or f"{store.table_path}/{INDEX_DIR}/{r['_FILE_NAME']}"
        out.append(GlobalIndexFile(r["_PARTITION"], r["_INDEX_TYPE"], r["_FILE_NAME"], r["_FILE_SIZE"],
                                   r["_ROW_COUNT"], g["_ROW_RANGE_START"], g["_ROW_RANGE_END"],
                                   g["_INDEX_FIELD_ID"], path, g.get("_INDEX_META")))
    return out


def global_files(store: FileStore, snapshot: Optional[Snapshot]) -> list[GlobalIndexFile]:
    """The global index files of ``snapshot``'s index manifest."""
    return files_of(store, read_index_manifest(store, snapshot.index_manifest if snapshot is not None else None))


def index_record(partition: bytes, index_type: str, file_name: str, file_size: int, row_count: int,
                 range_start: int, range_end: int, field_id: int, index_meta: Optional[bytes] = None) -> IndexRecord:
    """An index manifest entry (ADD) of a new global index file."""
    return {"_VERSION": 1, "_KIND": 0, "_PARTITION": partition, "_BUCKET": 0, "_INDEX_TYPE": index_type,
            "_FILE_NAME": file_name, "_FILE_SIZE": file_size, "_ROW_COUNT": row_count,
            "_DELETIONS_VECTORS_RANGES": None, "_EXTERNAL_PATH": None,
            "_GLOBAL_INDEX": {"_ROW_RANGE_START": range_start, "_ROW_RANGE_END": range_end,
                              "_INDEX_FIELD_ID": field_id, "_EXTRA_FIELD_IDS": None, "_INDEX_META": index_meta,
                              "_SOURCE_META": None}}


# --------------------------------------------------------------------------- building
def check_build(index_type: str, field: DataField, options: Mapping[str, str]) -> None:
    """Refuse an index type icefloe does not build, a column it cannot hold, or an option it does not take."""
    if index_type in NOT_BUILT:
        raise SchemaError(f"index type {index_type!r} is not built by icefloe: {NOT_BUILT[index_type]}")
    if index_type == BTREE:
        bt.check(field.name, field.type, options)
        return
    if index_type != BITMAP:
        raise SchemaError(f"{index_type!r} is not a global index type of Paimon 1.4 or later (types: {', '.join(TYPES)})")
    r = root(field.type) if field.type.is_primitive else None
    if r not in bmi.ROOTS:
        raise SchemaError(f"column {field.name!r} has type {field.type}, which a bitmap index cannot hold (it takes "
                          "numbers other than decimals, booleans, dates, times, timestamps and strings)")
    for key, value in options.items():
        if key == bt.SORTED_RECORDS_PER_RANGE:
            bt.check_records_per_range(value)
            continue
        if key not in BITMAP_OPTIONS:
            raise SchemaError(f"option {key!r} is not an option of the bitmap index (it takes "
                              f"{', '.join((*BITMAP_OPTIONS, bt.SORTED_RECORDS_PER_RANGE))})")
        if (why := bmi.bad_option_value(key, value)) is not None:
            raise SchemaError(f"option {key!r} {why}")


def sorted_build(index_type: str, options: Mapping[str, str]) -> bool:
    """Whether a build takes each run of contiguous files as one range, as current Paimon's sorted
    build does (a btree index; a bitmap index given ``sorted-index.records-per-range``), rather than
    cutting it into shards of row ids."""
    return index_type == BTREE or (index_type == BITMAP and bt.SORTED_RECORDS_PER_RANGE in options)


def positional(e: mf.ManifestEntry) -> bool:
    """Whether a data file's rows sit at ids first row id + position (no ``_ROW_ID`` column)."""
    f = e.file
    return f.first_row_id is not None and not (f.write_cols and row_tracking.ROW_ID in f.write_cols)


@dataclass(frozen=True)
class ShardSpec:
    """The index files of one row range to build (picklable, for a Spark task): the range of a partition and its
    data files (path, the fields of the file's schema, first row id, row count) in row-id order."""
    partition: bytes
    range_start: int
    range_end: int
    files: tuple[tuple[str, tuple[DataField, ...], int, int], ...]
    field: DataField
    index_type: str
    options: tuple[tuple[str, str], ...]
    index_dir: str


def shards(entries: Sequence[mf.ManifestEntry], per_shard: int, fields_of: Callable[[int], Sequence[DataField]],
           field: DataField, index_type: str, options: Mapping[str, str], index_dir: str) -> list[ShardSpec]:
    """The row ranges of ``entries`` (live data files with paths) as Paimon's build cuts them (a sorted
    build's ranges are not cut into shards)."""
    if sorted_build(index_type, options):
        per_shard = 2**62
    by_part: dict[bytes, dict[int, list[mf.ManifestEntry]]] = {}
    for e in entries:
        if not positional(e):
            continue
        first = e.file.first_row_id
        assert first is not None
        last = first + e.file.row_count - 1
        for shard in range(first // per_shard, last // per_shard + 1):
            by_part.setdefault(e.partition.to_bytes(), {}).setdefault(shard * per_shard, []).append(e)
    out: list[ShardSpec] = []
    opts = tuple(sorted(options.items()))
    for part, per in by_part.items():
        for start, files in per.items():
            files.sort(key=lambda e: e.file.first_row_id or 0)
            groups: list[list[mf.ManifestEntry]] = []
            end = -1
            for e in files:
                first = e.file.first_row_id or 0
                last = first + e.file.row_count - 1
                if groups and first <= end + 1:        # contiguous with the run
                    groups[-1].append(e)
                    end = max(end, last)
                else:
                    groups.append([e])
                    end = last
            for g in groups:
                lo = max(g[0].file.first_row_id or 0, start)
                hi = min(max((e.file.first_row_id or 0) + e.file.row_count - 1 for e in g), start + per_shard - 1)
                out.append(ShardSpec(part, lo, hi, tuple((e.file.file_path or "", tuple(fields_of(e.file.schema_id)),
                                                          e.file.first_row_id or 0, e.file.row_count) for e in g),
                                     field, index_type, opts, index_dir))
    return out


def shard_keys(io: FileIO, spec: ShardSpec) -> list[Optional[bmi.Key]]:
    """The indexed column's keys of the shard's rows, position = row id - range start."""
    import pyarrow as pa

    parts: list[pa.Array] = []
    expected = spec.range_start
    for path, file_fields, first, count in spec.files:
        lo, hi = max(first, spec.range_start), min(first + count - 1, spec.range_end)
        if lo > hi:
            continue
        if lo != expected:
            raise SchemaError(f"data file {path} holds row ids from {first}, but the row range of the global index "
                              f"goes on from {expected}: the files' row ids overlap or have a gap")
        data = evolve_arrow(read_data_file(path, io, [f.name for f in file_fields if f.id == spec.field.id] or None),
                            file_fields, [spec.field])
        if data.num_rows != count:
            raise SchemaError(f"data file {path} has {data.num_rows} rows, its manifest entry {count}")
        parts.append(data.column(0).combine_chunks().slice(lo - first, hi - lo + 1))
        expected = hi + 1
    if expected != spec.range_end + 1:
        raise SchemaError(f"the data files end at row id {expected - 1}, the global index range at {spec.range_end}")
    column = pa.chunked_array(parts, parts[0].type) if parts else pa.chunked_array([], pa.null())
    return bmi.column_keys(column, spec.field.type)


def build_shard(io: FileIO, spec: ShardSpec) -> list[IndexRecord]:
    """Write the row range's index files; their index manifest entries."""
    keys = shard_keys(io, spec)
    options = dict(spec.options)
    if spec.index_type == BTREE:
        built = [(f.raw, f.row_count, f.meta) for f in bt.files(keys, spec.field.type, options)]
    elif sorted_build(spec.index_type, options):
        # one file per records-per-range times 1.2 row ids, each its own row range: Paimon 1.4's bitmap
        # reader takes one file a range, so the rows are not regrouped in value order (see the module doc)
        per = max(1, bt.records_per_file(options))
        bitmap_options = {k: v for k, v in options.items() if k != bt.SORTED_RECORDS_PER_RANGE}
        out: list[IndexRecord] = []
        for at in range(0, len(keys), per):
            chunk = keys[at:at + per]
            out.extend(_write(io, spec, bmi.bitmap_bytes(chunk, spec.field.type, bitmap_options)[0], len(chunk),
                              None, spec.range_start + at, spec.range_start + at + len(chunk) - 1))
        return out
    else:
        built = [(bmi.bitmap_bytes(keys, spec.field.type, options)[0], len(keys), None)]
    return [r for raw, count, meta in built
            for r in _write(io, spec, raw, count, meta, spec.range_start, spec.range_end)]


def _write(io: FileIO, spec: ShardSpec, raw: bytes, count: int, meta: Optional[bytes], start: int,
           end: int) -> list[IndexRecord]:
    """Write one index file of rows ``start`` to ``end``; its index manifest entry."""
    name = f"{spec.index_type}-global-index-{uuid.uuid4()}.index"
    io.write_bytes(f"{spec.index_dir}/{name}", raw, overwrite=False)
    return [index_record(spec.partition, spec.index_type, name, len(raw), count, start, end, spec.field.id, meta)]


# --------------------------------------------------------------------------- reading
def usable(schema: TableSchema) -> bool:
    """Whether reads of a table of ``schema`` may skip files by its global indexes."""
    o = schema.options
    return row_tracking.enabled(o) and not schema.primary_keys and _flag(o, ENABLED, True) \
        and not _flag(o, DATA_EVOLUTION, False)


# the comparisons an index answers besides = and IN
_RANGES = (ex.LessThan, ex.LessThanOrEqual, ex.GreaterThan, ex.GreaterThanOrEqual)
_ANSWERED = (ex.EqualTo, ex.In, ex.IsNull) + _RANGES


def _indexed_fields(pred: ex.Expr) -> set[int]:
    if isinstance(pred, (ex.And, ex.Or)):
        return _indexed_fields(pred.left) | _indexed_fields(pred.right)
    if isinstance(pred, _ANSWERED) and not isinstance(pred, ex.LikeEqualTo) \
            and isinstance(pred.term, ex.BoundReference):
        return {pred.term.field_id}
    return set()


class _Loaded:
    """The index files of a read, opened once each."""

    def __init__(self, io: FileIO):
        self.io = io
        self.cache: dict[str, Union[bmi.BitmapIndex, bt.BTreeIndex]] = {}

    def index(self, f: GlobalIndexFile, field: DataField) -> Union[bmi.BitmapIndex, bt.BTreeIndex]:
        got = self.cache.get(f.path)
        if got is None:
            where = f"global index file {f.path}"
            raw = self.io.read_bytes(f.path)
            got = self.cache[f.path] = bmi.BitmapIndex(raw, field.type, where) if f.index_type == BITMAP \
                else bt.BTreeIndex(raw, field.type, f.index_meta, where)
        return got


# a row range of an index: (first row id, last row id) -> its index files
Ranges = dict[tuple[int, int], list[GlobalIndexFile]]


def _ranges(files: Sequence[GlobalIndexFile]) -> Ranges:
    """The files of one partition's index of one column, by row range; the ``bitmap`` index's files
    where it has one, else the ``btree`` index's."""
    kind = BITMAP if any(f.index_type == BITMAP for f in files) else BTREE
    out: Ranges = {}
    for f in sorted(files, key=lambda f: (f.range_start, f.range_end)):
        if f.index_type == kind:
            out.setdefault((f.range_start, f.range_end), []).append(f)
    return out


def _may_hold(f: GlobalIndexFile, key: Optional[bmi.Key], r: str) -> bool:
    """Whether a btree file's meta (first and last value) admits ``key`` (None: any)."""
    meta = f.index_meta
    if f.index_type != BTREE or meta is None or key is None or r not in bt.ROOTS:
        return True
    try:
        n = int.from_bytes(meta[0:4], "little")
        first = meta[4:4 + n]
        m = int.from_bytes(meta[4 + n:8 + n], "little")
        last = meta[8 + n:8 + n + m]
        if not first and not last:
            return False                        # nulls only
        k = bt.key_bytes(key, r) if not isinstance(key, float) else None
        if k is None:
            return True
        lo: Any = bt.decode_key(first, r)
        hi: Any = bt.decode_key(last, r)
        got: Any = bt.decode_key(k, r)
        return bool(lo <= got <= hi)
    except Exception:
        return True


def _shared_ids(live: Sequence[mf.ManifestEntry]) -> set[str]:
    """The data files (by name) whose row ids another live file has too (a branch merged in after
    both wrote rows): an index built from one says nothing of the other, so neither is skipped."""
    spans = sorted(((e.file.first_row_id or 0), (e.file.first_row_id or 0) + e.file.row_count - 1, e.file.file_name)
                   for e in live if positional(e))
    out: set[str] = set()
    reach, owner = -1, ""
    for first, last, name in spans:
        if first <= reach:
            out.update((name, owner))
        if last > reach:
            reach, owner = last, name
    return out


def file_filter(store: FileStore, records: Sequence[IndexRecord], pred: ex.Expr, schema: TableSchema,
                file_type: Callable[[int, int], Optional[Any]], live: Callable[[], Sequence[mf.ManifestEntry]]
                ) -> Optional[Callable[[mf.ManifestEntry], bool]]:
    """A test of a live data file: False only where the global indexes (bitmap, else btree) prove
    none of its rows satisfies ``pred`` (bound to ``schema``). ``file_type(schema id, field id)`` is the
    type a field had in the schema a file was written with; ``live()`` every live file of the
    snapshot. None when no index applies."""
    if not usable(schema):
        return None
    wanted = _indexed_fields(pred)
    fields = {f.id: f for f in schema.fields if f.id in wanted}
    found_files: dict[tuple[bytes, int], list[GlobalIndexFile]] = {}
    for f in files_of(store, records):
        if f.index_type in (BITMAP, BTREE) and f.field_id in fields:
            found_files.setdefault((f.partition, f.field_id), []).append(f)
    if not found_files:
        return None
    by_key = {key: _ranges(files) for key, files in found_files.items()}
    loaded = _Loaded(store.io)
    shared = _shared_ids(live())

    def leaf(node: ex.Expr, f: GlobalIndexFile, field: DataField) -> Optional[BitMap]:
        from pyroaring import BitMap

        if isinstance(node, ex.IsNull):
            if f.index_type == BTREE and f.index_meta is not None and f.index_meta[-1:] == b"\x00":
                return BitMap()
            return loaded.index(f, field).null_rows()
        r = root(field.type) or ""
        if isinstance(node, _RANGES):
            key = bmi.literal_key(literal_of(node), field.type) if r in bmi.ROOTS else None
            if key is None:
                return None
            if isinstance(node, (ex.LessThan, ex.LessThanOrEqual)):
                return loaded.index(f, field).rows_in(None, False, key, isinstance(node, ex.LessThanOrEqual))
            return loaded.index(f, field).rows_in(key, isinstance(node, ex.GreaterThanOrEqual), None, False)
        assert isinstance(node, (ex.EqualTo, ex.In))
        values = list(node.literals) if isinstance(node, ex.In) else [literal_of(node)]
        found = BitMap()
        for v in values:
            key = bmi.literal_key(v, field.type) if r in bmi.ROOTS else None
            if not _may_hold(f, key, r):
                continue
            got = loaded.index(f, field).rows_of(v, field.type)
            if got is None:
                return None
            found |= got
        return found

    def rows(node: ex.Expr, e: mf.ManifestEntry, start: int, end: int) -> Optional[BitMap]:
        """Positions (from ``start``) of the file's rows that may satisfy ``node``; None: any may."""
        if isinstance(node, ex.And):
            left, right = rows(node.left, e, start, end), rows(node.right, e, start, end)
            return right if left is None else left if right is None else left & right
        if isinstance(node, ex.Or):
            left, right = rows(node.left, e, start, end), rows(node.right, e, start, end)
            return None if left is None or right is None else left | right
        if not isinstance(node, _ANSWERED) or isinstance(node, ex.LikeEqualTo) \
                or not isinstance(node.term, ex.BoundReference):
            return None
        field = fields.get(node.term.field_id)
        if field is None or file_type(e.file.schema_id, field.id) != field.type:
            return None
        ranges = by_key.get((e.partition.to_bytes(), field.id), {})
        covering = [rng for rng in ranges if rng[0] <= end and start <= rng[1]]
        at = start
        for lo, hi in covering:             # the ranges must cover the file's ids without a gap
            if lo > at:
                return None
            at = max(at, hi + 1)
        if at <= end:
            return None
        from pyroaring import BitMap

        out = BitMap()
        for rng in covering:
            for f in ranges[rng]:
                found = leaf(node, f, field)
                if found is None:
                    return None
                lo, hi = max(start, f.range_start) - f.range_start, min(end, f.range_end) - f.range_start
                part = found[found.rank(lo - 1) if lo > 0 else 0:found.rank(hi)]
                out |= part.shift(f.range_start - start)
        return out

    def keep(e: mf.ManifestEntry) -> bool:
        if not positional(e) or e.file.file_name in shared:
            return True
        start = e.file.first_row_id or 0
        end = start + e.file.row_count - 1
        try:
            found = rows(pred, e, start, end)
        except SchemaError:         # an index file this reader cannot parse: the file is read
            return True
        return found is None or len(found) > 0

    return keep


__all__ = ["BITMAP", "BTREE", "GlobalIndexFile", "NOT_BUILT", "ShardSpec", "build_shard", "check_build",
           "file_filter", "files_of", "global_files", "index_record", "is_global", "rows_per_shard", "shards",
           "usable"]
