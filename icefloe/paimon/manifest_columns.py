# pyright: strict
"""Paimon manifests held as Arrow columns: what a plan judges at scale.

A plan of a large table reads every entry of every manifest it opens, but needs objects only for the
files it keeps. Here a data manifest's Avro is decoded into columns by a compiled decoder
(``core.avro_columns``) and kept in a process-wide cache by the manifest's path (a manifest is never
rewritten under its name). A plan then judges the columns: a partition filter once per distinct
partition of the manifest, value statistics of whole-number columns (``id = 7``, ``id < 10``...)
compared as numpy arrays for the files written with the read schema; only the entries it keeps
become ``ManifestEntry`` objects, and their files (``columnar_file.ColumnarFileMeta``) make each
field from the columns when it is first read. The answer is the one the entry-by-entry read gives
(``FileStore.entries`` with the same ``keep_partition`` and ``keep_file``): the vectorised bounds only
ever keep more than ``keep_file`` would (the scan still checks every entry it gets), an ADD they
cannot judge (another schema, a statistics column list, an unexpected layout) is judged by
``keep_file`` on its record, and DELETE entries are kept as that read keeps them.

A manifest the decoder cannot decode (not installed, or a file it refuses) is read entry by entry as
before, whose decoder names a corrupt file.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.core.arrow import arrow_of, numpy_of
from icefloe.core import avro_columns
from icefloe.core import expressions as ex
from icefloe.errors import CorruptMetadataError
from icefloe.paimon import manifest as mf
from icefloe.paimon import manifest_parts
from icefloe.paimon import predicate as pr
from icefloe.paimon.binary_row import HEADER_BITS, BinaryRow, null_bits_size
from icefloe.paimon.columnar_file import ColumnarFileMeta
from icefloe.paimon.data_file import SimpleStats
from icefloe.paimon.file_store import FileStore, KeepFile, KeepPartition, KeepStats
from icefloe.paimon.schema import TableSchema
from icefloe.paimon.types import root as root_of

Mask = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]
# a vectorised verdict on a manifest's ADDs: (rows it can judge, rows of those that may match)
StatsMask = Callable[["ManifestColumns"], tuple[Mask, Mask]]

# a manifest of fewer entries is read entry by entry (decoding into columns has a fixed cost)
COLUMNS_MIN_ENTRIES = 500
# manifests decoded at once (each on a thread of its own) on a local file system (an object store: its
# parallel_reads); on two busy cores two threads were slower than one
DECODE_THREADS = 1
# entries held at most, over every cached manifest (the oldest manifests leave first)
MAX_CACHED_ENTRIES = 4_000_000
# whole-number types whose statistic is the slot's little-endian integer of this many bytes
_INT_BYTES = {"TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8}
# the allocator of the live check's hash table: the system's gives its memory back when freed
# (``core.native_memory``); Arrow's default pool kept ~150 MB after checking 1M file names
_SYSTEM_POOL = pa.system_memory_pool()
_REQUIRED = ("_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE")
_FILE_REQUIRED = ("_FILE_NAME", "_FILE_SIZE", "_ROW_COUNT", "_MIN_KEY", "_MAX_KEY", "_KEY_STATS", "_VALUE_STATS",
                  "_MIN_SEQUENCE_NUMBER", "_MAX_SEQUENCE_NUMBER", "_SCHEMA_ID", "_LEVEL")


def _ints(arr: Union[pa.Array, pa.ChunkedArray]) -> Ints:
    if arr.null_count:
        raise ValueError("a required integer column has nulls")
    return np.asarray(numpy_of(arr), dtype=np.int64)      # (a view where it is int64 already)


def _child(column: pa.ChunkedArray, name: str) -> pa.ChunkedArray:
    """Field ``name`` of a column of records, chunk by chunk (the decoder's chunks are kept as
    they are: a copy of them as one array, beside them, doubled a cached manifest)."""
    chunks = [c.field(name) for c in column.chunks]     # pyright: ignore[reportAttributeAccessIssue]
    return pa.chunked_array(chunks, type=column.type.field(name).type)


def _one(column: pa.ChunkedArray) -> pa.Array:
    """A column as one array (a copy when it has several chunks), for a computation over it."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _binary(arr: pa.Array) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """A binary column's value offsets (n + 1) and data bytes, as numpy arrays."""
    if not (pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)):
        arr = arr.cast(pa.large_binary())
    bufs = arr.buffers()
    offsets_buf, data_buf = bufs[1], bufs[2]
    assert offsets_buf is not None
    width = np.int64 if pa.types.is_large_binary(arr.type) else np.int32       # binary: 32-bit offsets
    offsets = np.frombuffer(offsets_buf, dtype=width)[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    return offsets, data


def _slot_ints(data: npt.NDArray[np.uint8], slot: Ints, offsets: Ints, lengths: Ints, at: int, width: int) -> Ints:
    """The signed little-endian integer of ``width`` bytes at each ``slot`` of ``data``. Rows all of
    one length (statistics of fixed-width values) are read as one strided view, ``at`` bytes into
    each; else byte by byte."""
    n = len(slot)
    if n and int(lengths.min()) == int(lengths.max()) and int(lengths[0]) >= at + width \
            and int(offsets[0]) + at + (n - 1) * int(lengths[0]) + width <= len(data):
        view: Ints = np.ndarray((n,), dtype=f"<i{width}", buffer=data, offset=int(offsets[0]) + at,
                                strides=(int(lengths[0]),))
        return view.astype(np.int64)
    v = np.zeros(n, dtype=np.uint64)
    for k in range(width):
        v |= data[np.minimum(slot + k, len(data) - 1)].astype(np.uint64) << np.uint64(8 * k)
    signed = v.astype(np.int64)
    if width < 8:      # sign-extend
        shift = 64 - 8 * width
        signed = (signed << shift) >> shift
    return signed


class ManifestColumns:
    """The entries of one Paimon manifest as columns."""

    def __init__(self, table: pa.Table):
        for name in _REQUIRED:
            if name not in table.column_names:
                raise ValueError(f"no {name} column")
        self.table = table
        self.n: int = len(table)
        files = table.column("_FILE")
        if not pa.types.is_struct(files.type):
            raise ValueError("_FILE is not a record")
        self.files: pa.ChunkedArray = files
        self.file_fields = {files.type.field(i).name for i in range(files.type.num_fields)}
        if not set(_FILE_REQUIRED) <= self.file_fields:
            raise ValueError("a required _FILE field is missing")
        self.kind = _ints(table.column("_KIND"))
        if len(self.kind) and (int(self.kind.min()) < mf.ADD or int(self.kind.max()) > mf.DELETE):
            raise ValueError("an entry kind that is neither ADD nor DELETE")
        parts = table.column("_PARTITION")
        if parts.null_count:
            raise ValueError("an entry without a partition")
        distinct = pc.unique(parts)        # pyright: ignore[reportUnknownMemberType]
        self.partitions: list[bytes] = distinct.to_pylist()   # distinct partition rows (with arity), in order seen
        if any(len(p) < 4 for p in self.partitions):
            raise ValueError("a partition row shorter than its arity")
        self.partition_index = _ints(pc.index_in(parts, value_set=distinct))   # pyright: ignore[reportUnknownMemberType]
        self.schema_id = _ints(self.file_column("_SCHEMA_ID"))
        self.row_count = _ints(self.file_column("_ROW_COUNT"))
        cols = self.file_column("_VALUE_STATS_COLS") if "_VALUE_STATS_COLS" in self.file_fields else None
        self.all_columns: Mask = (np.ones(self.n, dtype=bool) if cols is None else
                                  numpy_of(cols.is_null()))
        self._bounds: dict[tuple[int, int, int], tuple[Mask, Ints, Ints]] = {}
        self._parts: Optional[list[BinaryRow]] = None
        self._entry_ints: dict[str, Ints] = {}
        self._getters: dict[str, Callable[[int], Any]] = {}
        self._arity: Optional[tuple[Ints, Ints]] = None
        self._lock = threading.Lock()

    def file_column(self, name: str) -> pa.ChunkedArray:
        """Field ``name`` of the entries' ``_FILE`` records."""
        return _child(self.files, name)

    # ------------------------------------------------------------------ value statistics
    def _stats_arity(self) -> tuple[Ints, Ints]:
        """Each file's value-statistics min and max row arity (-1: too short to hold one)."""
        if self._arity is None:
            stats = self.file_column("_VALUE_STATS")
            out: list[Ints] = []
            for name in ("_MIN_VALUES", "_MAX_VALUES"):
                offsets, data = _binary(_one(_child(stats, name)))
                starts, lengths = offsets[:-1], np.diff(offsets)
                arity = np.full(self.n, -1, dtype=np.int64)
                ok = lengths >= 4
                if ok.any():
                    s = starts[ok]
                    arity[ok] = ((data[s].astype(np.int64) << 24) | (data[s + 1].astype(np.int64) << 16)
                                 | (data[s + 2].astype(np.int64) << 8) | data[s + 3].astype(np.int64))
                out.append(arity)
            self._arity = (out[0], out[1])
        return self._arity

    def int_bounds(self, position: int, arity: int, width: int) -> tuple[Mask, Ints, Ints]:
        """Field ``position`` of files whose statistics rows have ``arity`` fields, a whole number of
        ``width`` bytes: (rows whose min and max are both set and read, mins, maxs)."""
        key = (position, arity, width)
        with self._lock:
            found = self._bounds.get(key)
        if found is not None:
            return found
        lo_arity, hi_arity = self._stats_arity()
        nb = null_bits_size(arity)
        bit = position + HEADER_BITS
        stats = self.file_column("_VALUE_STATS")
        ok: Mask = (lo_arity == arity) & (hi_arity == arity)
        values: list[Ints] = []
        for name in ("_MIN_VALUES", "_MAX_VALUES"):
            offsets, data = _binary(_one(_child(stats, name)))
            lengths = np.diff(offsets)
            ok &= lengths >= 4 + nb + 8 * arity
            base = offsets[:-1] + 4
            safe = np.where(ok, base, 0)
            if len(data) == 0:
                empty: Ints = np.zeros(self.n, dtype=np.int64)
                out0 = (np.zeros(self.n, dtype=bool), empty, empty)
                with self._lock:
                    self._bounds[key] = out0
                return out0
            null = (data[np.minimum(safe + bit // 8, len(data) - 1)] >> (bit % 8)) & 1
            ok &= null == 0
            slot = safe + nb + 8 * position
            values.append(_slot_ints(data, slot, offsets, lengths, nb + 8 * position + 4, width))
        out = (ok, values[0], values[1])
        with self._lock:
            self._bounds[key] = out
        return out

    # ------------------------------------------------------------------ entries
    def entries(self, rows: Sequence[int]) -> list[mf.ManifestEntry]:
        """The entries of ``rows`` (in that order), equal to those ``manifest.entry_from_avro``
        builds; each file a ``ColumnarFileMeta`` whose fields are made from these columns when first
        read. Built afresh on each call (a plan places its files in their directories in place)."""
        if len(rows) == 0:
            return []
        at = np.asarray(rows, dtype=np.int64)
        parts = self._partition_rows()
        entry = mf.ManifestEntry
        kinds: list[int] = self.kind[at].tolist()
        pidx: list[int] = self.partition_index[at].tolist()
        buckets: list[int] = self._ints_of("_BUCKET")[at].tolist()
        totals: list[int] = self._ints_of("_TOTAL_BUCKETS")[at].tolist()
        return [entry(k, parts[p], b, tb, f) for k, p, b, tb, f in zip(
            kinds, pidx, buckets, totals, ColumnarFileMeta.of(self, at.tolist()))]

    def _partition_rows(self) -> list[BinaryRow]:
        rows = self._parts
        if rows is None:
            rows = self._parts = [BinaryRow.from_bytes(p) for p in self.partitions]   # shared by the entries
        return rows

    def _ints_of(self, name: str) -> Ints:
        """An entry column of whole numbers without nulls (``_BUCKET``, ``_TOTAL_BUCKETS``)."""
        got = self._entry_ints.get(name)
        if got is None:
            got = self._entry_ints[name] = _ints(self.table.column(name))
        return got

    def file_field(self, name: str, row: int) -> Any:
        """The value of ``DataFileMeta`` field ``name`` of the file at ``row``, as
        ``manifest.data_file_from_avro`` makes it (``ColumnarFileMeta``'s source)."""
        get = self._getters.get(name)
        if get is None:
            with self._lock:
                get = self._getters.get(name)
                if get is None:
                    get = self._getters[name] = self._getter(name)
        return get(row)

    def _getter(self, name: str) -> Callable[[int], Any]:
        column = _FILE_COLUMNS[name]
        if column not in self.file_fields:
            empty = () if name == "extra_files" else None
            return lambda _row: empty
        arr = self.file_column(column)
        if name in ("min_key", "max_key"):
            return lambda row: BinaryRow.from_bytes(arr[row].as_py())
        if name in ("key_stats", "value_stats"):
            lo, hi, counts = (_child(arr, n) for n in ("_MIN_VALUES", "_MAX_VALUES", "_NULL_COUNTS"))
            make = BinaryRow.from_bytes if name == "key_stats" else _stats_row     # key rows repeat

            def stats(row: int) -> SimpleStats:
                c = counts[row].as_py()
                return SimpleStats(make(lo[row].as_py()), make(hi[row].as_py()), tuple(c) if c is not None else None)
            return stats
        if arr.null_count == len(arr):
            empty = () if name == "extra_files" else None
            return lambda _row: empty
        if name == "creation_time":
            ms, valid = self._millis(arr)
            return lambda row: int(ms[row]) if valid is None or valid[row] else None
        if name == "extra_files":
            return lambda row: tuple(arr[row].as_py() or ())
        if name in ("value_stats_cols", "write_cols", "write_cols_sequences"):
            return lambda row: mf.opt_tuple(arr[row].as_py())
        if pa.types.is_integer(arr.type) and not arr.null_count:
            ints = _ints(arr)
            return lambda row: int(ints[row])
        return lambda row: arr[row].as_py()

    @staticmethod
    def _millis(arr: pa.ChunkedArray) -> tuple[Ints, Optional[Mask]]:
        """``manifest.millis`` of each creation time, vectorised (the same float steps), and which are set."""
        valid: Optional[Mask] = None if not arr.null_count else \
            numpy_of(arr.is_valid())
        if not pa.types.is_timestamp(arr.type) or arr.type.tz is not None:
            ms_list = [mf.millis(v) for v in arr.to_pylist()]
            return np.asarray([0 if m is None else m for m in ms_list], dtype=np.int64), valid
        micros = numpy_of(arr.cast(pa.timestamp("us")).cast(pa.int64()).fill_null(0)).astype(np.int64)
        return np.trunc(micros / 1e6 * 1000).astype(np.int64), valid


# the manifest column of each DataFileMeta field
_FILE_COLUMNS = {
    "file_name": "_FILE_NAME", "file_size": "_FILE_SIZE", "row_count": "_ROW_COUNT", "min_key": "_MIN_KEY",
    "max_key": "_MAX_KEY", "key_stats": "_KEY_STATS", "value_stats": "_VALUE_STATS",
    "min_sequence_number": "_MIN_SEQUENCE_NUMBER", "max_sequence_number": "_MAX_SEQUENCE_NUMBER",
    "schema_id": "_SCHEMA_ID", "level": "_LEVEL", "extra_files": "_EXTRA_FILES", "creation_time": "_CREATION_TIME",
    "delete_row_count": "_DELETE_ROW_COUNT", "embedded_index": "_EMBEDDED_FILE_INDEX", "file_source": "_FILE_SOURCE",
    "value_stats_cols": "_VALUE_STATS_COLS", "external_path": "_EXTERNAL_PATH", "first_row_id": "_FIRST_ROW_ID",
    "write_cols": "_WRITE_COLS", "write_cols_sequences": "_WRITE_COLS_SEQUENCES",
}

def _stats_row(raw: bytes) -> BinaryRow:
    """A statistics row (most are each file's own: not interned as ``BinaryRow.from_bytes`` does)."""
    if len(raw) < 4:
        raise CorruptMetadataError("<manifest>", f"serialised BinaryRow too short ({len(raw)} bytes)")
    return BinaryRow(int.from_bytes(raw[:4], "big", signed=True), raw[4:])


# --------------------------------------------------------------------------- the process-wide cache
_cache: "OrderedDict[str, Optional[ManifestColumns]]" = OrderedDict()
_cached_entries = 0
_cache_lock = threading.Lock()


def clear_cache() -> None:
    """Forget every manifest's columns (a cold plan follows)."""
    global _cached_entries
    with _cache_lock:
        _cache.clear()
        _cached_entries = 0


def available() -> bool:
    return avro_columns.available()


def columns_of(store: FileStore, m: mf.ManifestFileMeta,
               keep_stats: Optional[KeepStats] = None) -> Optional[ManifestColumns]:
    """The columns of manifest ``m`` (cached by its path); None where the decoder cannot give them.
    With ``keep_stats`` (a partition filter's verdict on a block's statistics) and a manifest whose
    header indexes its blocks (``manifest_parts``): the columns of the blocks it keeps, cached by
    the path and those blocks (None when it keeps none: the entry-by-entry read skips them all)."""
    path = store.manifest_path(m.file_name)
    with _cache_lock:
        if path in _cache:
            _cache.move_to_end(path)
            return _cache[path]
    key, data = path, None
    if keep_stats is not None:
        known, lay = manifest_parts.known_layout(path, m.file_size)
        if not known:
            data = _read(store, path, m)
            lay = manifest_parts.layout(path, data) if data is not None else None
        kept = lay.kept(keep_stats) if lay is not None else None
        if lay is not None and kept is not None:
            if not kept:
                return None
            key = f"{path}#blocks={','.join(map(str, kept))}"
            with _cache_lock:
                if key in _cache:
                    _cache.move_to_end(key)
                    return _cache[key]
            data = data if data is not None else _read(store, path, m)
            data = lay.container(data, kept) if data is not None else None
    data = data if data is not None else _read(store, path, m)
    if data is None:
        return None          # truncated: the entry-by-entry read names it
    table = avro_columns.decode(data)
    cols: Optional[ManifestColumns] = None
    if table is not None:
        try:
            cols = ManifestColumns(table)
        except (ValueError, TypeError, KeyError, pa.ArrowException):
            cols = None
    _keep(key, cols)
    return cols


def _no_block_kept(store: FileStore, m: mf.ManifestFileMeta, keep_stats: KeepStats) -> bool:
    """Whether ``m``'s block index (read by ``columns_of``) rules out each of its blocks."""
    known, lay = manifest_parts.known_layout(store.manifest_path(m.file_name), m.file_size)
    return known and lay is not None and lay.kept(keep_stats) == ()


def _read(store: FileStore, path: str, m: mf.ManifestFileMeta) -> Optional[bytes]:
    """The manifest's bytes; None when shorter than the manifest list says."""
    try:
        data = store.io.read_bytes(path)
    except FileNotFoundError:
        raise CorruptMetadataError(path, "manifest referenced by a manifest list is missing") from None
    return None if len(data) < m.file_size else data


def _keep(key: str, cols: Optional[ManifestColumns]) -> None:
    global _cached_entries
    with _cache_lock:
        if key not in _cache:
            _cache[key] = cols
            _cached_entries += cols.n if cols is not None else 0
            while _cached_entries > MAX_CACHED_ENTRIES and len(_cache) > 1:
                _, old = _cache.popitem(last=False)
                _cached_entries -= old.n if old is not None else 0


def entries(store: FileStore, manifests: Sequence[mf.ManifestFileMeta], keep_partition: Optional[KeepPartition],
            keep_file: Optional[KeepFile], keep_stats: Optional[KeepStats],
            stats_mask: Optional[StatsMask]) -> list[mf.ManifestEntry]:
    """The entries of ``manifests`` whose partitions ``keep_partition`` keeps (judged once per
    distinct partition of a manifest), less the ADDs ``stats_mask`` rules out; only kept entries
    are built. Where ``keep_file`` (``FileStore.entries``' early verdict on an ADD's record) drops
    an ADD, the scan's exact check of every entry it gets drops it too, and ``stats_mask`` keeps at
    least what that check keeps: after it, the plan is the one ``FileStore.entries`` gives. A
    manifest of fewer than ``COLUMNS_MIN_ENTRIES`` entries, or without columns, is read by
    ``store.read_manifest`` with ``keep_partition``, ``keep_file`` and ``keep_stats``."""
    return list(live_entries(store, manifests, keep_partition, keep_file, keep_stats, stats_mask)[0])


# entries built at once from a manifest's columns by ``live_entries``' iterator
BUILD_BATCH = 4096


def live_entries(store: FileStore, manifests: Sequence[mf.ManifestFileMeta], keep_partition: Optional[KeepPartition],
                 keep_file: Optional[KeepFile], keep_stats: Optional[KeepStats],
                 stats_mask: Optional[StatsMask]) -> tuple[Iterable[mf.ManifestEntry], bool]:
    """``entries``' entries, and whether they are already live: every entry read from columns,
    each an ADD, no file name twice (``manifest.live_files`` then keeps them all, in order), judged
    on the columns without reading a field of each file. Every manifest is read and judged before
    this returns; the entries of manifests held as columns are built as the iterable is read, a
    batch at a time (a plan that keeps files, not entries, holds no entry per file)."""
    def of(m: mf.ManifestFileMeta) -> Optional[ManifestColumns]:
        if m.num_added_files + m.num_deleted_files < COLUMNS_MIN_ENTRIES or not available():
            return None
        return columns_of(store, m, keep_stats)

    workers = min(max(store.io.parallel_reads, DECODE_THREADS), len(manifests))
    if workers > 1:       # the decoder runs outside the interpreter's lock: manifests at once
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            found = list(pool.map(of, manifests))
    else:
        found = [of(m) for m in manifests]
    parts: list[Union[list[mf.ManifestEntry], tuple[ManifestColumns, Ints]]] = []
    live = True
    names: list[pa.Array] = []
    for m, cols in zip(manifests, found):
        if cols is None:
            if keep_stats is not None and _no_block_kept(store, m, keep_stats):
                continue        # its index rules out every block: no entry (as the entry-by-entry read gives)
            parts.append(store.read_manifest(m.file_name, m.file_size, keep_partition, keep_file, keep_stats))
            live = False
            continue
        keep: Mask = np.ones(cols.n, dtype=bool)
        if keep_partition is not None:
            verdicts: Mask = np.array([keep_partition(p[4:]) for p in cols.partitions], dtype=bool)
            if len(verdicts):
                keep &= verdicts[cols.partition_index]
        if stats_mask is not None:
            judged, may = stats_mask(cols)
            adds: Mask = cols.kind == mf.ADD
            keep &= ~(adds & judged & ~may)
        rows: Ints = np.flatnonzero(keep)
        parts.append((cols, rows))
        if live and len(rows):
            live = bool((cols.kind[rows] == mf.ADD).all())
            every_row = len(rows) == cols.n
            file_names = cols.file_column("_FILE_NAME")
            names.extend((file_names if every_row else file_names.take(arrow_of(rows))).chunks)
    if live and names:
        every = pa.chunked_array(names, pa.string()) if all(a.type == pa.string() for a in names) else None
        live = every is not None and every.null_count == 0 and \
            pc.count_distinct(every, memory_pool=_SYSTEM_POOL).as_py() == len(every)   # pyright: ignore[reportUnknownMemberType]

    def built() -> Iterator[mf.ManifestEntry]:
        for part in parts:
            if isinstance(part, list):
                yield from part
                continue
            cols, rows = part
            for i in range(0, len(rows), BUILD_BATCH):
                yield from cols.entries(rows[i:i + BUILD_BATCH].tolist())
    return built(), live


# --------------------------------------------------------------------------- vectorised value statistics
def stats_mask(pred: ex.Expr, schema: TableSchema) -> Optional[StatsMask]:
    """For an append table's filter naming whole-number columns: a vectorised verdict over the
    files written with ``schema`` whose statistics cover every column; None when ``pred`` names
    no such column. It never rules out a file the exact check would keep."""
    names = pr.referenced_columns(pred) - set(schema.partition_keys)
    positions = {f.name: (i, _INT_BYTES.get(root_of(f.type) or "", 0)) for i, f in enumerate(schema.fields)
                 if f.name in names}
    positions = {k: v for k, v in positions.items() if v[1]}
    if not positions:
        return None
    arity = len(schema.fields)

    def judge(cols: ManifestColumns) -> tuple[Mask, Mask]:
        judged: Mask = (cols.schema_id == schema.id) & cols.all_columns
        bounds: dict[str, tuple[Mask, Ints, Ints]] = {}

        def bound(name: str) -> Optional[tuple[Mask, Ints, Ints]]:
            if name not in positions:
                return None
            if name not in bounds:
                bounds[name] = cols.int_bounds(positions[name][0], arity, positions[name][1])
            return bounds[name]

        may = _may_match(pred, bound, cols.n)
        everywhere: Mask = np.ones(cols.n, dtype=bool)
        return judged, (everywhere if may is None else may)

    return judge


def _may_match(node: ex.Expr, bound: Callable[[str], Optional[tuple[Mask, Ints, Ints]]], n: int) -> Optional[Mask]:
    """Rows whose bounds allow a match of ``node`` (None: every row); a row whose bounds are
    unknown, or a condition not judged here, allows one."""
    if isinstance(node, ex.And):
        a, b = _may_match(node.left, bound, n), _may_match(node.right, bound, n)
        return b if a is None else a if b is None else a & b
    if isinstance(node, ex.Or):
        a, b = _may_match(node.left, bound, n), _may_match(node.right, bound, n)
        return None if a is None or b is None else a | b
    if not isinstance(node, (ex.EqualTo, ex.In, ex.LessThan, ex.LessThanOrEqual, ex.GreaterThan,
                             ex.GreaterThanOrEqual)) or not isinstance(node.term, ex.BoundReference):
        return None
    if isinstance(node, ex.LikeEqualTo):
        return None
    b = bound(node.term.name)
    if b is None:
        return None
    known, lo, hi = b
    values = list(node.literals) if isinstance(node, ex.In) else [pr.literal_of(node)]
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or not -(1 << 63) <= v < (1 << 63)
                         for v in values):
        return None
    if isinstance(node, (ex.EqualTo, ex.In)):
        hit: Mask = np.zeros(n, dtype=bool)
        for v in values:
            hit |= (lo <= v) & (v <= hi)
    else:
        v = values[0]
        hit = (lo < v if isinstance(node, ex.LessThan) else lo <= v if isinstance(node, ex.LessThanOrEqual)
               else hi > v if isinstance(node, ex.GreaterThan) else hi >= v)
    out: Mask = hit | ~known
    return out
