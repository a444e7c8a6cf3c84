# pyright: strict
"""Paimon's ``bitmap`` file index (``BitmapFileIndex``, format version 2): per distinct value of a
column, the rows holding it.

A value's key: the integer of TINYINT / SMALLINT / INT / BIGINT, a DATE's days, a TIME's
milliseconds, a TIMESTAMP's milliseconds (precision up to 3) or microseconds, a FLOAT's or DOUBLE's
number, a BOOLEAN, a CHAR's or VARCHAR's UTF-8 bytes. All integers big-endian; a key is written as
its Java primitive (1, 2, 4 or 8 bytes; a boolean 1 byte) or, for strings, a 4-byte length then the bytes::

    version (1: 2) | row count (4) | distinct non-null values (4) | has nulls (1)
    [null offset (4) | null bitmap length (4)]            when it has nulls
    block count (4), per block: its first key | its offset (4, from the blocks' start)
    blocks' length (4) | blocks: entry count (4), per entry: key | offset (4) | length (4)
    body: the null bitmap (when more than one row is null), then the other bitmaps

Entries are sorted by key (numbers by value, strings by their bytes unsigned, false before true) and
cut into blocks of at most ``index-block-size`` bytes (default 16 kb; a block's bytes are 4 plus,
per entry, 8 and its key's). A value held by exactly one row has no bitmap: its offset is
``-1 - row`` and its length -1 (likewise the null offset for one null row; else 0); other offsets
are from the body's start and lengths are the bitmap's bytes (the portable Roaring format,
run-optimised). The body holds the bitmaps in the order Paimon's Java writer iterates its
``HashMap`` of values (filled by ``computeIfAbsent`` row by row; ``java_order``), which is what
makes the bytes equal Paimon's.

The same Java map orders decide where Paimon's writer puts each column's indexes in a file index
container (``java_container_order``).

A reader needs no bitmap to skip a file: an ``=`` / ``IN`` value with no entry and ``IS NULL``
without nulls (``IS NOT NULL`` without non-null values) select no row.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, Union, cast

from icefloe.core.types import IcebergType, precision_of
from icefloe.errors import SchemaError
from icefloe.paimon.options import parse_memory_size
from icefloe.paimon.types import root

if TYPE_CHECKING:
    from pyroaring import BitMap

BITMAP = "bitmap"
VERSION_1 = 1
VERSION_2 = 2
OPTIONS = ("version", "index-block-size")
DEFAULT_BLOCK_SIZE = "16kb"
ROOTS = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "BOOLEAN", "DATE", "TIME",
         "TIMESTAMP", "TIMESTAMP_LTZ", "CHAR", "VARCHAR")
_STRINGS = ("CHAR", "VARCHAR")
_FORMATS = {"TINYINT": ">b", "SMALLINT": ">h", "INT": ">i", "DATE": ">i", "TIME": ">i", "BIGINT": ">q",
            "TIMESTAMP": ">q", "TIMESTAMP_LTZ": ">q", "FLOAT": ">f", "DOUBLE": ">d", "BOOLEAN": ">?"}
_M32 = 0xFFFFFFFF
# a value's key: bytes for CHAR/VARCHAR, else the number (a bool for BOOLEAN, a float for FLOAT/DOUBLE)
Key = Union[bytes, int, float]
# an entry of the index: the key, its bitmap's offset and its length
_Entry = tuple[Key, int, int]


def check(column: str, data_type: IcebergType, opts: Mapping[str, str], where: str = "") -> None:
    """Refuse a bitmap index ``column`` of ``data_type`` cannot have, or an option it does not know."""
    r = root(data_type) if data_type.is_primitive else None
    if r not in ROOTS:
        raise SchemaError(f"{where}option 'file-index.bitmap.columns': column {column!r} has type {data_type}, "
                          "which Paimon's bitmap index cannot hold (it takes numbers other than decimals, "
                          "booleans, dates, times, timestamps and strings)")
    for name, value in opts.items():
        key = f"file-index.bitmap.{column}.{name}"
        if name not in ("version", "index-block-size"):
            raise SchemaError(f"{where}option {key!r} is not an option of the bitmap index "
                              "(it has 'version' and 'index-block-size')")
        if (why := bad_option_value(name, value)) is not None:
            raise SchemaError(f"{where}option {key!r} {why}")


def bad_option_value(name: str, value: object) -> Optional[str]:
    """Why ``value`` cannot be the bitmap index's option ``name`` (``version``: 1 or 2;
    ``index-block-size``: a positive memory size), or None where it can."""
    if name == "version":
        return None if str(value).strip() in ("1", "2") else f"must be 1 or 2, not {value!r}"
    if name == "index-block-size":
        try:
            ok = parse_memory_size(cast(str, value)) > 0
        except Exception:
            ok = False
        return None if ok else f"must be a positive memory size, not {value!r}"
    return None


def _root(data_type: IcebergType) -> str:
    r = root(data_type) if data_type.is_primitive else None
    if r is None or r not in ROOTS:
        raise SchemaError(f"a bitmap index cannot hold values of type {data_type}")
    return r


def _precision(data_type: IcebergType) -> int:
    try:
        return precision_of(data_type)
    except SchemaError:
        return 6


def column_keys(column: Any, data_type: IcebergType) -> list[Optional[Key]]:
    """The keys of an Arrow column's values as the bitmap index has them (None for null), in row order."""
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    r = root(data_type)
    if r in _STRINGS:
        return [None if v is None else v.encode("utf-8") for v in column.to_pylist()]
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        micros = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64()).to_pylist()
        return [None if v is None else (v // 1000 if _precision(data_type) <= 3 else v) for v in micros]
    if r == "TIME":
        return [None if v is None else v // 1000 for v in column.cast(pa.time64("us")).cast(pa.int64()).to_pylist()]
    if r == "DATE":
        return column.cast(pa.int32()).to_pylist()
    if r == "FLOAT":
        return [None if v is None else struct.unpack(">f", struct.pack(">f", v))[0] for v in column.to_pylist()]
    return column.to_pylist()


# --------------------------------------------------------------------------- Java's hashing and ordering
def _int32(v: int) -> int:
    v &= _M32
    return v - (1 << 32) if v >> 31 else v


def _rotl(v: int, n: int) -> int:
    v &= _M32
    return ((v << n) | (v >> (32 - n))) & _M32


def _mix(h1: int, k1: int) -> int:
    k1 = (_rotl(k1 * 0xCC9E2D51, 15) * 0x1B873593) & _M32
    h1 = _rotl(h1 ^ k1, 13)
    return (h1 * 5 + 0xE6546B64) & _M32


def _murmur(data: bytes) -> int:
    """Paimon's ``MurmurHashUtils.hashBytes`` (seed 42; words little-endian, tail bytes signed)."""
    h1 = 42
    aligned = len(data) - len(data) % 4
    for i in range(0, aligned, 4):
        h1 = _mix(h1, int.from_bytes(data[i:i + 4], "little"))
    for b in data[aligned:]:
        h1 = _mix(h1, b - 256 if b > 127 else b)
    h1 ^= len(data)
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _M32
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _M32
    h1 ^= h1 >> 16
    return _int32(h1)


def _float_bits(v: float, double: bool) -> int:
    if v != v:
        return 0x7FF8000000000000 if double else 0x7FC00000
    return struct.unpack(">q", struct.pack(">d", v))[0] if double else struct.unpack(">i", struct.pack(">f", v))[0]


def java_hash(key: Key, r: str) -> int:
    """``hashCode()`` of the Java object Paimon keys the value by."""
    if r in _STRINGS:
        return _murmur(cast(bytes, key))
    if r == "BOOLEAN":
        return 1231 if key else 1237
    if r in ("FLOAT", "DOUBLE"):
        bits = _float_bits(cast(float, key), r == "DOUBLE")
        return _int32(bits ^ ((bits & ((1 << 64) - 1)) >> 32)) if r == "DOUBLE" else bits
    if r in ("BIGINT", "TIMESTAMP", "TIMESTAMP_LTZ"):
        n = cast(int, key)
        return _int32(n ^ ((n & ((1 << 64) - 1)) >> 32))
    return cast(int, key)


def java_order(rows: Sequence[Optional[Key]], r: str) -> tuple[list[Key], bool]:
    """The distinct non-null keys of ``rows`` in the order Java's ``HashMap`` iterates them after
    ``computeIfAbsent`` was called once per non-null row (a new key goes to the head of its bin, the
    table doubles from 16 bins when more than 3/4 full at a call, or when a bin of fewer than 64
    reaches 8 keys), and whether that order is certain (False if a bin would become a tree)."""
    cap, certain = 0, True
    first: dict[Key, tuple[int, Key]] = {}          # canonical key -> (call number, key)
    spread: dict[Key, int] = {}
    per_bin: dict[int, int] = {}

    def rebin() -> None:
        per_bin.clear()
        for c in first:
            per_bin[spread[c] & (cap - 1)] = per_bin.get(spread[c] & (cap - 1), 0) + 1

    n = 0
    for key in rows:
        if key is None:
            continue
        n += 1
        if cap == 0 or len(first) > cap * 3 // 4:
            cap = 16 if cap == 0 else cap * 2
            rebin()
        c = _canon(key, r)
        if c in first:
            continue
        h = java_hash(key, r) & _M32
        spread[c] = h ^ (h >> 16)
        first[c] = (n, key)
        b = spread[c] & (cap - 1)
        per_bin[b] = per_bin.get(b, 0) + 1
        if per_bin[b] >= 8:        # the bin held 7 or more before: Java treeifies (or grows a small table)
            if cap < 64:
                cap *= 2
                rebin()
            else:
                certain = False
    # within a bin, the newest key first; bins in index order
    order = sorted(first, key=lambda c: (spread[c] & (cap - 1), -first[c][0]))
    return [first[c][1] for c in order], certain


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 units)."""
    units = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & _M32
    return _int32(h)


class _JavaHashMap:
    """The iteration order of a Java ``HashMap`` (keys only): 16 bins at first, doubled when more
    than 3/4 full, or when a bin of a table under 64 bins reaches 8 keys (a larger one would become
    a tree, whose order this does not model); ``put`` appends to a bin, ``computeIfAbsent`` puts
    the new key at its head and grows the table before, not after, adding."""

    def __init__(self, hash_of: Callable[[str], int]):
        self.hash_of, self.cap, self.size = hash_of, 0, 0
        self.bins: dict[int, list[str]] = {}

    def _spread(self, key: str) -> int:
        h = self.hash_of(key) & _M32
        return h ^ (h >> 16)

    def _grow(self) -> None:
        old = self.keys()
        self.cap = 16 if self.cap == 0 else self.cap * 2
        self.bins = {}
        for k in old:
            self.bins.setdefault(self._spread(k) & (self.cap - 1), []).append(k)

    def keys(self) -> list[str]:
        return [k for b in sorted(self.bins) for k in self.bins[b]]

    def _find(self, key: str) -> tuple[Optional[list[str]], Optional[bool]]:
        if self.cap == 0:
            return None, None
        b = self.bins.setdefault(self._spread(key) & (self.cap - 1), [])
        return b, key in b

    def compute_if_absent(self, key: str) -> None:
        if self.cap == 0 or self.size > self.cap * 3 // 4:
            self._grow()
        b, found = self._find(key)
        if found or b is None:
            return
        b.insert(0, key)
        self.size += 1
        if len(b) >= 8 and self.cap < 64:
            self._grow()

    def put(self, key: str) -> None:
        if self.cap == 0:
            self._grow()
        b, found = self._find(key)
        if found or b is None:
            return
        b.append(key)
        self.size += 1
        if len(b) > 8 and self.cap < 64:
            self._grow()
        if self.size > self.cap * 3 // 4:
            self._grow()


def _column_hash(name: str) -> int:
    """``FileIndexOptions.Column.hashCode``: ``Arrays.hashCode`` of (name, null, false)."""
    return _int32(31 * (31 * (31 + java_string_hash(name))) + 1237)


def java_container_order(columns: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """(column, [index types]) in the order Paimon's Java writer puts them in a file index container:
    ``columns`` (column -> index types, in the order the table's options declare them) go through
    ``FileIndexOptions``' map of columns, the writer's maps of maintainers by type and by column,
    and the map of serialised indexes by column, all ``HashMap``s."""
    options = _JavaHashMap(_column_hash)
    types_of: dict[str, _JavaHashMap] = {}
    for column, kinds in columns.items():
        options.compute_if_absent(column)
        types = types_of.setdefault(column, _JavaHashMap(java_string_hash))
        for kind in kinds:
            types.compute_if_absent(kind)
    by_type = _JavaHashMap(java_string_hash)
    maintainers: dict[str, _JavaHashMap] = {}
    for column in options.keys():
        for kind in types_of[column].keys():
            by_type.compute_if_absent(kind)
            maintainers.setdefault(kind, _JavaHashMap(java_string_hash)).put(column)
    out = _JavaHashMap(java_string_hash)
    inner: dict[str, _JavaHashMap] = {}
    for kind in by_type.keys():
        for column in maintainers[kind].keys():
            out.compute_if_absent(column)
            inner.setdefault(column, _JavaHashMap(java_string_hash)).put(kind)
    return [(column, inner[column].keys()) for column in out.keys()]


def _sort_key(key: Key, r: str) -> Key:
    if r in ("FLOAT", "DOUBLE"):      # Java's Float/Double.compare: -0.0 before 0.0, NaN last
        bits = _float_bits(cast(float, key), r == "DOUBLE")
        width = 64 if r == "DOUBLE" else 32
        return bits ^ ((1 << (width - 1)) - 1) if bits < 0 else bits
    return key


def _key_bytes(key: Key, r: str) -> bytes:
    if r in _STRINGS:
        raw = cast(bytes, key)
        return struct.pack(">i", len(raw)) + raw
    return struct.pack(_FORMATS[r], key)


# --------------------------------------------------------------------------- writing
@dataclass
class _Block:
    """A block of entries: its first key, its offset from the blocks' start, its bytes, its entries."""
    first: Key
    start: int
    size: int
    entries: list[_Entry]


def _roaring(rows: list[int]) -> bytes:
    from pyroaring import BitMap

    bm = BitMap(rows)
    bm.run_optimize()
    return bm.serialize()


def bitmap_bytes(keys: list[Optional[Key]], data_type: IcebergType,
                 opts: Optional[Mapping[str, str]] = None) -> tuple[bytes, bool]:
    """The bitmap index of ``keys`` (``column_keys``), and whether its bytes are certainly Paimon's."""
    opts = opts or {}
    r = _root(data_type)
    version = int(str(opts.get("version", VERSION_2)).strip())
    limit = parse_memory_size(opts.get("index-block-size", DEFAULT_BLOCK_SIZE))
    if r in ("FLOAT", "DOUBLE"):
        # Java keys floats by their bits: -0.0 and 0.0 (and each NaN) are one key each
        keys = [None if k is None else (float("nan") if k != k else k) for k in keys]
    order, certain = java_order(keys, r)
    rows: dict[Key, list[int]] = {}
    nulls: list[int] = []
    for i, k in enumerate(keys):
        if k is None:
            nulls.append(i)
        else:
            rows.setdefault(_canon(k, r), []).append(i)
    null_bytes = _roaring(nulls)
    null_offset = -1 - nulls[0] if len(nulls) == 1 else 0
    offset = len(null_bytes) if len(nulls) > 1 else 0
    entries: list[_Entry] = []
    body = [null_bytes] if len(nulls) > 1 else []
    for k in order:
        found = rows[_canon(k, r)]
        if len(found) == 1:
            entries.append((k, -1 - found[0], -1))
        else:
            raw = _roaring(found)
            body.append(raw)
            entries.append((k, offset, len(raw)))
            offset += len(raw)
    out = bytearray(struct.pack(">bii?", version, len(keys), len(order), bool(nulls)))
    if version == VERSION_1:
        if nulls:
            out += struct.pack(">i", null_offset)
        for k, off, _n in entries:
            out += _key_bytes(k, r) + struct.pack(">i", off)
        return bytes(out) + b"".join(body), certain
    if nulls:
        out += struct.pack(">ii", null_offset, len(null_bytes))
    entries.sort(key=lambda e: _sort_key(e[0], r))
    blocks: list[_Block] = []
    for e in entries:
        size = 8 + len(_key_bytes(e[0], r))
        if not blocks or blocks[-1].size + size > limit:
            start = blocks[-1].start + blocks[-1].size if blocks else 0
            if blocks and 4 + size > limit:
                raise SchemaError(f"a bitmap index entry of {size} bytes does not fit 'index-block-size' {limit}")
            blocks.append(_Block(e[0], start, 4, []))
        blocks[-1].size += size
        blocks[-1].entries.append(e)
    out += struct.pack(">i", len(blocks))
    for block in blocks:
        out += _key_bytes(block.first, r) + struct.pack(">i", block.start)
    out += struct.pack(">i", sum(b.size for b in blocks))
    for block in blocks:
        out += struct.pack(">i", len(block.entries))
        for k, off, n in block.entries:
            out += _key_bytes(k, r) + struct.pack(">ii", off, n)
    return bytes(out) + b"".join(body), certain


def _canon(key: Key, r: str) -> Key:
    return _float_bits(cast(float, key), r == "DOUBLE") if r in ("FLOAT", "DOUBLE") else key


# --------------------------------------------------------------------------- reading
class BitmapIndex:
    """What a file's bitmap index says without its bitmaps: its rows, whether it has nulls and
    non-null values, and its keys."""

    def __init__(self, raw: bytes, data_type: IcebergType, where: str = "bitmap index"):
        r = self.root = _root(data_type)
        try:
            pos = 0
            version, self.rows, distinct, self.has_nulls = struct.unpack_from(">bii?", raw, 0)
            pos = 10
            if version not in (VERSION_1, VERSION_2):
                raise ValueError(f"it is bitmap index version {version}; icefloe reads versions 1 and 2")
            self.version, self._raw = version, raw
            self.has_values = distinct > 0
            self._null: tuple[int, int] = (0, 0)
            if self.has_nulls:
                if version == VERSION_2:
                    self._null = struct.unpack_from(">ii", raw, pos)
                pos += 4 if version == VERSION_1 else 8
            keys: set[Key] = set()
            self._entries: dict[Key, tuple[int, int]] = {}     # version 2: key -> (offset, length)

            def key_at(p: int) -> tuple[Key, int]:
                if r in _STRINGS:
                    (n,) = struct.unpack_from(">i", raw, p)
                    return bytes(raw[p + 4:p + 4 + n]), p + 4 + n
                fmt = _FORMATS[r]
                return struct.unpack_from(fmt, raw, p)[0], p + struct.calcsize(fmt)

            if version == VERSION_1:
                for _ in range(distinct):
                    k, pos = key_at(pos)
                    keys.add(_canon(k, r))
                    pos += 4
            else:
                (nblocks,) = struct.unpack_from(">i", raw, pos)
                pos += 4
                for _ in range(nblocks):
                    _k, pos = key_at(pos)
                    pos += 4
                pos += 4
                for _ in range(nblocks):
                    (count,) = struct.unpack_from(">i", raw, pos)
                    pos += 4
                    for _ in range(count):
                        k, pos = key_at(pos)
                        keys.add(_canon(k, r))
                        self._entries[_canon(k, r)] = struct.unpack_from(">ii", raw, pos)
                        pos += 8
            if len(keys) != distinct:
                raise ValueError(f"it names {distinct} values but holds {len(keys)}")
            self.keys = keys
            self._body = pos
        except (struct.error, ValueError) as e:
            raise SchemaError(f"cannot read {where}: {e}") from None

    def may_hold(self, literal: Any, data_type: IcebergType) -> bool:
        """Whether some row may equal ``literal`` (icefloe's internal form of a filter value)."""
        k = literal_key(literal, data_type)
        return k is None or _canon(k, self.root) in self.keys

    def _bitmap(self, offset: int, length: int) -> BitMap:
        from pyroaring import BitMap

        if offset < 0:                      # a value of one row: -1 - row
            return BitMap([-1 - offset])
        start = self._body + offset
        if length <= 0 or start + length > len(self._raw):
            raise SchemaError(f"bitmap index: a bitmap at {offset} of {length} bytes is outside the index")
        try:
            return BitMap.deserialize(self._raw[start:start + length])
        except Exception as e:      # pyroaring raises ValueError (or others) on garbage
            raise SchemaError(f"bitmap index: unreadable bitmap at {offset}: {e}") from None

    def rows_of(self, literal: Any, data_type: IcebergType) -> Optional[BitMap]:
        """The rows equal to ``literal``; None where the index cannot tell (a key it may hold
        otherwise, or a version 1 index, whose bitmaps have no lengths)."""
        from pyroaring import BitMap

        k = literal_key(literal, data_type)
        if k is None or self.version != VERSION_2:
            return None
        entry = self._entries.get(_canon(k, self.root))
        return BitMap() if entry is None else self._bitmap(*entry)

    def rows_in(self, low: Optional[Key], low_inclusive: bool, high: Optional[Key], high_inclusive: bool
                ) -> Optional[BitMap]:
        """The rows whose value lies between ``low`` and ``high`` (keys as ``literal_key`` gives them;
        None: unbounded); None where the index cannot tell (floats, whose keys are their bits here, or
        a version 1 index)."""
        from pyroaring import BitMap

        if self.version != VERSION_2 or self.root in ("FLOAT", "DOUBLE"):
            return None
        out = BitMap()
        for key, entry in self._entries.items():
            k = cast(Any, key)
            if low is not None and (k < low or (k == low and not low_inclusive)):
                continue
            if high is not None and (k > high or (k == high and not high_inclusive)):
                continue
            out |= self._bitmap(*entry)
        return out

    def null_rows(self) -> Optional[BitMap]:
        """The rows holding null (None for a version 1 index)."""
        from pyroaring import BitMap

        if self.version != VERSION_2:
            return None
        return self._bitmap(*self._null) if self.has_nulls else BitMap()


def literal_key(value: Any, data_type: IcebergType) -> Optional[Key]:
    """A filter literal as the index keys values, None where an equal value may be keyed otherwise
    (CHAR padding, a local-zone timestamp, a float zero or NaN, a sub-millisecond value)."""
    r = _root(data_type)
    if value is None or r in ("CHAR", "TIMESTAMP_LTZ"):
        return None
    try:
        if r == "VARCHAR":
            return value.encode("utf-8") if isinstance(value, str) else None
        if r == "BOOLEAN":
            return value if isinstance(value, bool) else None
        if r in ("FLOAT", "DOUBLE"):
            v = float(value)
            if v == 0.0 or v != v or (r == "FLOAT" and struct.unpack(">f", struct.pack(">f", v))[0] != v):
                return None
            return v
        if isinstance(value, bool) or int(value) != value:
            return None
        v = int(value)
        if (r == "TIMESTAMP" and _precision(data_type) <= 3) or r == "TIME":
            return v // 1000 if v % 1000 == 0 else None
        return v
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None
