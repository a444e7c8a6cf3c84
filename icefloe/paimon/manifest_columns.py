# pyright: strict
"""Paimon manifests held as Arrow columns: what a plan judges at scale.

A plan of a large table reads every entry of every manifest it opens, but needs objects only for the
files it keeps. Here a data manifest's Avro is decoded into columns by a compiled decoder
(``core.avro_columns``) and kept in a process-wide cache by the manifest's path (a manifest is never
rewritten under its name). A plan then judges the columns: a partition filter once per distinct
partition of the manifest, value statistics of whole-number columns (``id = 7``, ``id < 10``...)
compared as numpy arrays for the files written with the read schema; only the entries it keeps
become ``ManifestEntry`` objects. The answer is the one the entry-by-entry read gives
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
from typing import Any, Callable, Optional, Sequence, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from icefloe.core import avro_columns
from icefloe.core import expressions as ex
from icefloe.errors import CorruptMetadataError
from icefloe.paimon import manifest as mf
from icefloe.paimon import predicate as pr
from icefloe.paimon.binary_row import HEADER_BITS, BinaryRow, null_bits_size
from icefloe.paimon.data_file import DataFileMeta, SimpleStats
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
# entries kept built at most, over every cached manifest (a plan of every file then builds none)
MAX_BUILT_ENTRIES = 300_000
# entries held at most, over every cached manifest (the oldest manifests leave first)
MAX_CACHED_ENTRIES = 4_000_000
# whole-number types whose statistic is the slot's little-endian integer of this many bytes
_INT_BYTES = {"TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8}
_REQUIRED = ("_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE")
_FILE_REQUIRED = ("_FILE_NAME", "_FILE_SIZE", "_ROW_COUNT", "_MIN_KEY", "_MAX_KEY", "_KEY_STATS", "_VALUE_STATS",
                  "_MIN_SEQUENCE_NUMBER", "_MAX_SEQUENCE_NUMBER", "_SCHEMA_ID", "_LEVEL")


def _ints(arr: pa.Array) -> Ints:
    if arr.null_count:
        raise ValueError("a required integer column has nulls")
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.int64)


def _binary(arr: pa.Array) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """A binary column's value offsets (n + 1) and data bytes, as numpy arrays."""
    arr = arr.cast(pa.large_binary())
    bufs = arr.buffers()
    offsets_buf, data_buf = bufs[1], bufs[2]
    assert offsets_buf is not None
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    return offsets, data


class ManifestColumns:
    """The entries of one Paimon manifest as columns."""

    def __init__(self, table: pa.Table):
        for name in _REQUIRED:
            if name not in table.column_names:
                raise ValueError(f"no {name} column")
        self.table = table
        self.n: int = len(table)
        files = table.column("_FILE").combine_chunks()
        if not isinstance(files, pa.StructArray):
            raise ValueError("_FILE is not a record")
        self.files: pa.StructArray = files
        self.file_fields = {files.type.field(i).name for i in range(files.type.num_fields)}
        if not set(_FILE_REQUIRED) <= self.file_fields:
            raise ValueError("a required _FILE field is missing")
        self.kind = _ints(table.column("_KIND").combine_chunks())
        if len(self.kind) and (int(self.kind.min()) < mf.ADD or int(self.kind.max()) > mf.DELETE):
            raise ValueError("an entry kind that is neither ADD nor DELETE")
        parts = table.column("_PARTITION").combine_chunks()
        if parts.null_count:
            raise ValueError("an entry without a partition")
        encoded = parts.dictionary_encode()
        self.partitions: list[bytes] = encoded.dictionary.to_pylist()   # distinct partition rows (with arity)
        if any(len(p) < 4 for p in self.partitions):
            raise ValueError("a partition row shorter than its arity")
        self.partition_index = _ints(encoded.indices)
        self.schema_id = _ints(files.field("_SCHEMA_ID"))
        self.row_count = _ints(files.field("_ROW_COUNT"))
        cols = files.field("_VALUE_STATS_COLS") if "_VALUE_STATS_COLS" in self.file_fields else None
        self.all_columns: Mask = (np.ones(self.n, dtype=bool) if cols is None else
                                  np.asarray(cols.is_null().to_numpy(zero_copy_only=False), dtype=bool))
        self._bounds: dict[tuple[int, int, int], tuple[Mask, Ints, Ints]] = {}
        self._built: Optional[list[mf.ManifestEntry]] = None
        self._arity: Optional[tuple[Ints, Ints]] = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ value statistics
    def _stats_arity(self) -> tuple[Ints, Ints]:
        """Each file's value-statistics min and max row arity (-1: too short to hold one)."""
        if self._arity is None:
            stats = self.files.field("_VALUE_STATS")
            out: list[Ints] = []
            for name in ("_MIN_VALUES", "_MAX_VALUES"):
                offsets, data = _binary(stats.field(name))
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
        stats = self.files.field("_VALUE_STATS")
        ok: Mask = (lo_arity == arity) & (hi_arity == arity)
        values: list[Ints] = []
        for name in ("_MIN_VALUES", "_MAX_VALUES"):
            offsets, data = _binary(stats.field(name))
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
            v = np.zeros(self.n, dtype=np.uint64)
            for k in range(width):
                v |= data[np.minimum(slot + k, len(data) - 1)].astype(np.uint64) << np.uint64(8 * k)
            signed = v.astype(np.int64)
            if width < 8:      # sign-extend
                shift = 64 - 8 * width
                signed = (signed << shift) >> shift
            values.append(signed)
        out = (ok, values[0], values[1])
        with self._lock:
            self._bounds[key] = out
        return out

    # ------------------------------------------------------------------ entries
    @property
    def built(self) -> bool:
        return self._built is not None

    def entries(self, rows: Sequence[int]) -> list[mf.ManifestEntry]:
        """The entries of ``rows`` (in that order), as ``manifest.entry_from_avro`` builds them.
        Every entry of the manifest, once built, is kept while the process keeps fewer than
        ``MAX_BUILT_ENTRIES`` so (the entries are never changed: a plan copies what it returns)."""
        global _built_entries
        if len(rows) == 0:
            return []
        built = self._built
        if built is not None:
            return [built[i] for i in rows]
        out = self._build(rows)
        if len(rows) == self.n:
            with _cache_lock:
                if _built_entries + self.n <= MAX_BUILT_ENTRIES and self._built is None:
                    self._built = out
                    _built_entries += self.n
        return out

    def _build(self, rows: Sequence[int]) -> list[mf.ManifestEntry]:
        idx = pa.array(rows, pa.int64())
        files = self.files.take(idx)
        names = set(self.file_fields)

        def col(name: str) -> list[Any]:
            if name not in names:
                return [None] * len(rows)
            arr = files.field(name)
            return [None] * len(rows) if arr.null_count == len(arr) else arr.to_pylist()

        def millis() -> list[Optional[int]]:
            """``manifest.millis`` of each creation time, vectorised (the same float steps)."""
            if "_CREATION_TIME" not in names:
                return [None] * len(rows)
            arr = files.field("_CREATION_TIME")
            if not pa.types.is_timestamp(arr.type) or arr.type.tz is not None:
                return [mf.millis(v) for v in arr.to_pylist()]
            micros = np.asarray(arr.cast(pa.timestamp("us")).cast(pa.int64()).fill_null(0).to_numpy(
                zero_copy_only=False), dtype=np.int64)
            ms: list[Optional[int]] = np.trunc(micros / 1e6 * 1000).astype(np.int64).tolist()
            if arr.null_count:
                valid = arr.is_valid().to_pylist()
                ms = [m if ok else None for m, ok in zip(ms, valid)]
            return ms

        def stats(name: str, row: Callable[[bytes], BinaryRow]) -> list[SimpleStats]:
            s = files.field(name)
            counts = s.field("_NULL_COUNTS").to_pylist()
            return [SimpleStats(row(lo), row(hi), tuple(c) if c is not None else None)
                    for lo, hi, c in zip(s.field("_MIN_VALUES").to_pylist(), s.field("_MAX_VALUES").to_pylist(),
                                         counts)]

        _row = BinaryRow.from_bytes     # rows that repeat (keys, partitions): shared objects

        part_rows: list[BinaryRow] = [_row(p) for p in self.partitions]
        pidx: list[int] = self.partition_index[np.asarray(rows, dtype=np.int64)].tolist()
        kind: list[int] = self.kind[np.asarray(rows, dtype=np.int64)].tolist()
        bucket = self.table.column("_BUCKET").combine_chunks().take(idx).to_pylist()
        total = self.table.column("_TOTAL_BUCKETS").combine_chunks().take(idx).to_pylist()
        created = millis()
        extra = col("_EXTRA_FILES")
        opt_tuple = mf.opt_tuple
        out: list[mf.ManifestEntry] = []
        for (k, p, b, tb, name, size, count, min_key, max_key, key_stats, value_stats, min_seq, max_seq, schema_id,
             level, ex_files, ct, deleted, index, source, stats_cols, ext, first_row, wcols, wseq) in zip(
                kind, pidx, bucket, total, col("_FILE_NAME"), col("_FILE_SIZE"), col("_ROW_COUNT"),
                [_row(x) for x in col("_MIN_KEY")], [_row(x) for x in col("_MAX_KEY")], stats("_KEY_STATS", _row),
                stats("_VALUE_STATS", _stats_row), col("_MIN_SEQUENCE_NUMBER"), col("_MAX_SEQUENCE_NUMBER"), col("_SCHEMA_ID"),
                col("_LEVEL"), extra, created, col("_DELETE_ROW_COUNT"), col("_EMBEDDED_FILE_INDEX"),
                col("_FILE_SOURCE"), col("_VALUE_STATS_COLS"), col("_EXTERNAL_PATH"), col("_FIRST_ROW_ID"),
                col("_WRITE_COLS"), col("_WRITE_COLS_SEQUENCES")):
            out.append(mf.ManifestEntry(cast(int, k), part_rows[cast(int, p)], b, tb, DataFileMeta(
                file_name=name, file_size=size, row_count=count, min_key=min_key, max_key=max_key,
                key_stats=key_stats, value_stats=value_stats, min_sequence_number=min_seq,
                max_sequence_number=max_seq, schema_id=schema_id, level=level, extra_files=tuple(ex_files or ()),
                creation_time=ct, delete_row_count=deleted, embedded_index=index, file_source=source,
                value_stats_cols=opt_tuple(stats_cols), external_path=ext, first_row_id=first_row,
                write_cols=opt_tuple(wcols), write_cols_sequences=opt_tuple(wseq))))
        return out


def _stats_row(raw: bytes) -> BinaryRow:
    """A statistics row (most are each file's own: not interned as ``BinaryRow.from_bytes`` does)."""
    if len(raw) < 4:
        raise CorruptMetadataError("<manifest>", f"serialised BinaryRow too short ({len(raw)} bytes)")
    return BinaryRow(int.from_bytes(raw[:4], "big", signed=True), raw[4:])


# --------------------------------------------------------------------------- the process-wide cache
_cache: "OrderedDict[str, Optional[ManifestColumns]]" = OrderedDict()
_cached_entries = 0
_built_entries = 0
_cache_lock = threading.Lock()


def clear_cache() -> None:
    """Forget every manifest's columns (a cold plan follows)."""
    global _cached_entries, _built_entries
    with _cache_lock:
        _cache.clear()
        _cached_entries = _built_entries = 0


def available() -> bool:
    return avro_columns.available()


def columns_of(store: FileStore, m: mf.ManifestFileMeta) -> Optional[ManifestColumns]:
    """The columns of manifest ``m`` (cached by its path); None where the decoder cannot give them."""
    global _cached_entries, _built_entries
    path = store.manifest_path(m.file_name)
    with _cache_lock:
        if path in _cache:
            _cache.move_to_end(path)
            return _cache[path]
    try:
        data = store.io.read_bytes(path)
    except FileNotFoundError:
        raise CorruptMetadataError(path, "manifest referenced by a manifest list is missing") from None
    if len(data) < m.file_size:
        return None          # truncated: the entry-by-entry read names it
    table = avro_columns.decode(data)
    cols: Optional[ManifestColumns] = None
    if table is not None:
        try:
            cols = ManifestColumns(table)
        except (ValueError, TypeError, KeyError, pa.ArrowException):
            cols = None
    with _cache_lock:
        if path not in _cache:
            _cache[path] = cols
            _cached_entries += cols.n if cols is not None else 0
            while _cached_entries > MAX_CACHED_ENTRIES and len(_cache) > 1:
                _, old = _cache.popitem(last=False)
                _cached_entries -= old.n if old is not None else 0
                _built_entries -= old.n if old is not None and old.built else 0
    return cols


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
    def of(m: mf.ManifestFileMeta) -> Optional[ManifestColumns]:
        if m.num_added_files + m.num_deleted_files < COLUMNS_MIN_ENTRIES or not available():
            return None
        return columns_of(store, m)

    workers = min(max(store.io.parallel_reads, DECODE_THREADS), len(manifests))
    if workers > 1:       # the decoder runs outside the interpreter's lock: manifests at once
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            found = list(pool.map(of, manifests))
    else:
        found = [of(m) for m in manifests]
    out: list[mf.ManifestEntry] = []
    for m, cols in zip(manifests, found):
        if cols is None:
            out.extend(store.read_manifest(m.file_name, m.file_size, keep_partition, keep_file, keep_stats))
            continue
        if keep_partition is None and stats_mask is None:
            out.extend(cols.entries(range(cols.n)))
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
        kept: list[int] = np.flatnonzero(keep).tolist()
        out.extend(cols.entries(kept))
    return out


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
