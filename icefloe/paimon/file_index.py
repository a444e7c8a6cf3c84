# pyright: strict
"""Paimon's file indexes (spec: "File Index"): per data file, an index container of column indexes.

A table asks for them with ``file-index.<type>.columns``; the writer builds one container per data
file from the rows it writes. A container no larger than ``file-index.in-manifest-threshold``
(default 500 bytes) is embedded in the file's manifest entry (``_EMBEDDED_FILE_INDEX``); a larger one
is written beside the data file as ``<data file>.index`` and named in its ``_EXTRA_FILES``.

The container (all integers big-endian, names in Java's modified UTF-8 with a 2-byte length)::

    magic (8: 1493475289347502) | version (4: 1) | head length (4, from the file's start)
    column count (4), then per column: name | index count (4) | per index: type name | start | length
    redundant length (4: 0) | body: the indexes' bytes one after another

An index's start is its offset from the container's start; -1 (length 0) marks an index of a column
with no values written (Paimon writes those for map keys only).

Index ``bloom-filter`` (Paimon's ``BloomFilter64``): ``items`` (default 1,000,000) and ``fpp``
(default 0.1) give ``bits = int(-items * ln(fpp) / ln(2)^2)`` rounded up past a byte boundary and
``k = max(1, round(bits / items * ln 2))`` hash functions. The bytes are ``k`` (4) then the bit set
(bit ``i`` is bit ``i % 8`` of byte ``i / 8``). A value's 64-bit hash is XXH64 (seed 0) of its bytes
for strings (UTF-8) and binaries, else Thomas Wang's 64-bit integer hash of its number: the integer
itself, a DATE's days, a TIME's milliseconds, a FLOAT's or DOUBLE's IEEE bits (Java's
``floatToIntBits``: NaN canonical, sign-extended), a TIMESTAMP's milliseconds (precision up to 3)
or microseconds. Hash ``h`` sets, for ``i`` in ``1..k``, the bit ``c % bits`` with ``c = int32(h) +
i * int32(h >>> 32)`` in 32-bit arithmetic, ``~c`` when negative. Nulls are not added.

Index ``bsi`` (bit-sliced, for numbers, dates, times, timestamps and decimals): see ``bsi_bytes``.

A reader keeps a file unless a bloom filter proves that no value of an ``=`` / ``IN`` condition is
in it, or a bsi index that no value satisfies an ``=``, ``IN``, ``<``, ``<=``, ``>`` or ``>=``
(``may_match``), or a bitmap index (``file_index_bitmap``) that no row has an ``=`` / ``IN``
value or is (not) null. Paimon's range-bitmap index is not written here; ``check_options`` refuses
asking for it, and a read ignores one (an index only ever skips).
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence, cast

from icefloe.core import expressions as ex
from icefloe.core.expressions.tree import literal_of
from icefloe.core.types import DecimalType, IcebergType, precision_of
from icefloe.errors import SchemaError
from icefloe.paimon import file_index_bitmap as bmi
from icefloe.paimon.options import parse_memory_size
from icefloe.paimon.types import DataField, root

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Longs = npt.NDArray[np.int64]

MAGIC = 1493475289347502
VERSION = 1
EMPTY_INDEX = -1
INDEX_SUFFIX = ".index"
PREFIX = "file-index."
READ_ENABLED = "file-index.read.enabled"
IN_MANIFEST_THRESHOLD = "file-index.in-manifest-threshold"
DEFAULT_THRESHOLD = "500 B"
BLOOM_FILTER = "bloom-filter"
BLOOM_DEFAULT_ITEMS = 1_000_000
BLOOM_DEFAULT_FPP = 0.1
# the index types Paimon defines that icefloe does not write (a table asking for one is refused)
NOT_WRITTEN = {
    "range-bitmap": "range bitmap indexes",
}
BITMAP = bmi.BITMAP
BSI = "bsi"
_BSI_ROOTS = ("TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "DECIMAL")
_BLOOM_ROOTS = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DATE", "TIME", "TIMESTAMP",
                "TIMESTAMP_LTZ", "CHAR", "VARCHAR", "BINARY", "VARBINARY")
_MASK64 = (1 << 64) - 1


# --------------------------------------------------------------------------- the table's options
@dataclass
class IndexOptions:
    """What ``file-index.*`` options ask a writer for: column -> index type -> its options."""

    columns: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict[str, dict[str, dict[str, str]]])
    threshold: int = 500

    @property
    def empty(self) -> bool:
        return not self.columns


def index_options(options: Mapping[str, str], strict: bool = False) -> IndexOptions:
    """The file indexes ``options`` declare (``file-index.<type>.columns`` and
    ``file-index.<type>.<column>.<option>``), as Paimon's ``FileIndexOptions`` reads them: a key of
    another shape is skipped, as Paimon skips it, unless ``strict`` (a user setting it here)."""
    out = IndexOptions(threshold=parse_memory_size(options.get(IN_MANIFEST_THRESHOLD, DEFAULT_THRESHOLD)))
    per_column: list[tuple[str, str, str]] = []
    for key, value in options.items():
        if not key.startswith(PREFIX) or key in (READ_ENABLED, IN_MANIFEST_THRESHOLD):
            continue
        rest = key[len(PREFIX):]
        if rest.endswith(".columns"):
            kind = rest[:-len(".columns")]
            for name in str(value).split(","):
                if not name.strip():
                    raise SchemaError(f"option {key!r} = {value!r} names an empty column")
                out.columns.setdefault(name.strip(), {}).setdefault(kind, {})
        else:
            per_column.append((key, rest, value))
    for key, rest, value in per_column:
        parts = rest.split(".")
        if len(parts) != 3 and not strict:
            continue
        if len(parts) != 3:
            raise SchemaError(f"option {key!r} is not a file index option: use 'file-index.<type>.columns' "
                              "or 'file-index.<type>.<column>.<option>'")
        kind, column, name = parts
        if kind not in out.columns.get(column, {}):
            raise SchemaError(f"option {key!r}: column {column!r} is not declared in 'file-index.{kind}.columns'")
        out.columns[column][kind][name] = value
    return out


def check_options(options: Mapping[str, str], fields: Sequence[DataField], table: str = "") -> None:
    """Refuse ``file-index.*`` options a writer cannot honour, naming the option and why: an index
    type icefloe does not write, a column the table lacks or whose type the index cannot hold, an
    option of the index it does not know."""
    where = f"table {table}: " if table else ""
    if READ_ENABLED in options and str(options[READ_ENABLED]).strip().lower() not in ("true", "false"):
        raise SchemaError(f"{where}option {READ_ENABLED!r} must be 'true' or 'false', not {options[READ_ENABLED]!r}")
    try:
        wanted = index_options(options, strict=True)
    except SchemaError as e:
        raise SchemaError(f"{where}{e}") from None
    by_name = {f.name: f for f in fields}
    for column, kinds in wanted.columns.items():
        for kind, opts in kinds.items():
            key = f"file-index.{kind}.columns"
            if kind in NOT_WRITTEN:
                raise SchemaError(f"{where}option {key!r} is not honoured: icefloe's writers do not write "
                                  f"{NOT_WRITTEN[kind]}; 'file-index.bloom-filter.columns' indexes values for "
                                  "equality and IN filters")
            if kind not in (BLOOM_FILTER, BSI, BITMAP):
                raise SchemaError(f"{where}option {key!r}: Paimon has no file index type {kind!r} "
                                  "(it has bloom-filter, bitmap, bsi and range-bitmap)")
            if "[" in column:
                raise SchemaError(f"{where}option {key!r} names {column!r}, an index of map values by key, "
                                  "which icefloe's writers do not build; index a top-level column")
            f = by_name.get(column)
            if f is None:
                raise SchemaError(f"{where}option {key!r} names column {column!r}, which the table does not "
                                  f"have; its columns are {list(by_name)}")
            r = root(f.type) if f.type.is_primitive else None
            if kind == BITMAP:
                bmi.check(column, f.type, opts, where)
                continue
            if kind == BSI:
                if r not in _BSI_ROOTS or (r == "DECIMAL" and _precision(f.type) > 18):
                    raise SchemaError(f"{where}option {key!r}: column {column!r} has type {f.type}, which "
                                      "Paimon's bit-sliced index cannot hold (it takes integers, dates, times, "
                                      "timestamps and decimals of up to 18 digits)")
                if opts:
                    raise SchemaError(f"{where}option 'file-index.bsi.{column}.{next(iter(opts))}' is not an "
                                      "option of the bsi index (it has none)")
                continue
            if r not in _BLOOM_ROOTS:
                raise SchemaError(f"{where}option {key!r}: column {column!r} has type {f.type}, which Paimon's "
                                  "bloom filter cannot hash (it takes numbers, dates, times, timestamps, "
                                  "strings and binaries)")
            for name, value in opts.items():
                if name == "items":
                    if not str(value).strip().isdigit() or int(value) <= 0:
                        raise SchemaError(f"{where}option 'file-index.{kind}.{column}.items' must be a "
                                          f"positive integer, not {value!r}")
                elif name == "fpp":
                    try:
                        ok = 0.0 < float(value) < 1.0
                    except ValueError:
                        ok = False
                    if not ok:
                        raise SchemaError(f"{where}option 'file-index.{kind}.{column}.fpp' must be a "
                                          f"probability between 0 and 1, not {value!r}")
                else:
                    raise SchemaError(f"{where}option 'file-index.{kind}.{column}.{name}' is not an option of "
                                      "the bloom-filter index (it has 'items' and 'fpp')")


def read_enabled(options: Mapping[str, str]) -> bool:
    return str(options.get(READ_ENABLED, "true")).strip().lower() != "false"


# --------------------------------------------------------------------------- the container
def _utf(text: str) -> bytes:
    """Java's ``DataOutput.writeUTF``: a 2-byte length, then modified UTF-8 (UTF-16 units; NUL as 2 bytes)."""
    out = bytearray()
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        c = (units[i] << 8) | units[i + 1]
        if 1 <= c <= 0x7F:
            out.append(c)
        elif c <= 0x7FF:
            out += bytes((0xC0 | (c >> 6), 0x80 | (c & 0x3F)))
        else:
            out += bytes((0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)))
    if len(out) > 0xFFFF:
        raise SchemaError(f"name {text[:40]!r}... is too long for a file index")
    return struct.pack(">H", len(out)) + bytes(out)


def _read_utf(raw: bytes, pos: int) -> tuple[str, int]:
    n: int = struct.unpack_from(">H", raw, pos)[0]
    data = raw[pos + 2:pos + 2 + n]
    units = bytearray()
    i = 0
    while i < len(data):
        b = data[i]
        if b < 0x80:
            c, i = b, i + 1
        elif b >> 5 == 0b110:
            c, i = ((b & 0x1F) << 6) | (data[i + 1] & 0x3F), i + 2
        else:
            c, i = ((b & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F), i + 3
        units += struct.pack(">H", c)
    return units.decode("utf-16-be", errors="surrogatepass"), pos + 2 + n


def write_container(indexes: Mapping[str, Mapping[str, Optional[bytes]]]) -> bytes:
    """The container of ``indexes`` (column -> index type -> bytes, None for an empty index); columns
    and each column's index types in the order Paimon's Java writer iterates its hash maps of them."""
    ordered = {c: {k: indexes[c][k] for k in kinds} for c, kinds in bmi.java_container_order(indexes)}
    names = b"".join(_utf(c) + b"".join(_utf(k) for k in kinds) for c, kinds in ordered.items())
    head_length = 8 + 4 + 4 + 4 + 8 * sum(len(k) for k in ordered.values()) + 4 * len(ordered) + 4 + len(names)
    head = bytearray(struct.pack(">qiii", MAGIC, VERSION, head_length, len(ordered)))
    body = bytearray()
    for column, kinds in ordered.items():
        head += _utf(column) + struct.pack(">i", len(kinds))
        for kind, raw in kinds.items():
            head += _utf(kind)
            if raw is None:
                head += struct.pack(">ii", EMPTY_INDEX, 0)
            else:
                head += struct.pack(">ii", head_length + len(body), len(raw))
                body += raw
    head += struct.pack(">i", 0)
    return bytes(head + body)


@dataclass(frozen=True)
class IndexMeta:
    column: str
    index_type: str
    start: int
    length: int

    @property
    def empty(self) -> bool:
        return self.start == EMPTY_INDEX


def read_header(raw: bytes, where: str = "file index") -> list[IndexMeta]:
    """The indexes a container holds, from its head (their bytes are ``raw[start:start + length]``)."""
    try:
        magic, version, _head_length, columns = struct.unpack_from(">qiii", raw, 0)
        if magic != MAGIC:
            raise ValueError("it is not a Paimon file index (wrong magic number)")
        if version != VERSION:
            raise ValueError(f"it is file index version {version}; icefloe reads version {VERSION}")
        pos = 20
        out: list[IndexMeta] = []
        for _ in range(columns):
            column, pos = _read_utf(raw, pos)
            (count,) = struct.unpack_from(">i", raw, pos)
            pos += 4
            for _ in range(count):
                kind, pos = _read_utf(raw, pos)
                start, length = struct.unpack_from(">ii", raw, pos)
                pos += 8
                out.append(IndexMeta(column, kind, start, length))
        return out
    except (struct.error, ValueError, UnicodeDecodeError, IndexError) as e:
        raise SchemaError(f"cannot read {where}: {e}") from None


# --------------------------------------------------------------------------- hashing (Paimon's FastHash)
def _thomas_wang(keys: Longs) -> Longs:
    """Thomas Wang's 64-bit integer hash over an int64 numpy array (Java's long arithmetic)."""
    import numpy as np

    k = keys.astype(np.int64)
    with np.errstate(over="ignore"):
        k = (~k) + (k << np.int64(21))
        k = k ^ (k >> np.int64(24))
        k = (k + (k << np.int64(3))) + (k << np.int64(8))
        k = k ^ (k >> np.int64(14))
        k = (k + (k << np.int64(2))) + (k << np.int64(4))
        k = k ^ (k >> np.int64(28))
        k = k + (k << np.int64(31))
    return k


def _xxh64(values: Iterable[str | bytes | bytearray]) -> list[int]:
    import xxhash

    out: list[int] = []
    for v in values:
        h = xxhash.xxh64_intdigest(v.encode("utf-8") if isinstance(v, str) else bytes(v))
        out.append(h - (1 << 64) if h >> 63 else h)
    return out


def _float_bits(values: Any, double: bool) -> Longs:
    import numpy as np

    if double:
        arr: Any = np.asarray(values, dtype=np.float64)
        bits = arr.view(np.int64).copy()
        bits[np.isnan(arr)] = 0x7FF8000000000000
        return bits
    arr32: Any = np.asarray(values, dtype=np.float32)
    bits = arr32.view(np.int32).astype(np.int64)
    bits[np.isnan(arr32)] = 0x7FC00000
    return bits


def column_hashes(column: Any, data_type: IcebergType) -> Longs:
    """The 64-bit hashes (int64 numpy array) of an Arrow column's non-null values, as Paimon's
    bloom filter hashes values of ``data_type``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    values = pc.unique(pc.drop_null(column))
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    r = root(data_type)
    if r in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
        return np.asarray(_xxh64(values.to_pylist()), dtype=np.int64)
    if r in ("FLOAT", "DOUBLE"):
        return _thomas_wang(_float_bits(values.to_numpy(zero_copy_only=False), r == "DOUBLE"))
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        micros = values.cast(pa.timestamp("us", tz=values.type.tz)).cast(pa.int64()).to_numpy()
        return _thomas_wang(micros // 1000 if _precision(data_type) <= 3 else micros)
    if r == "TIME":
        micros = values.cast(pa.time64("us")).cast(pa.int64()).to_numpy()
        return _thomas_wang(micros // 1000)
    if r == "DATE":
        return _thomas_wang(values.cast(pa.int32()).to_numpy().astype(np.int64))
    return _thomas_wang(values.cast(pa.int64()).to_numpy())


def _precision(data_type: IcebergType) -> int:
    try:
        return precision_of(data_type)
    except SchemaError:
        return 6


def literal_hash(value: Any, data_type: IcebergType) -> Optional[int]:
    """The hash of a filter literal (in icefloe's internal form: days, microseconds, str, bytes)
    as the bloom filter hashed the column's values; None where an equal value may hash otherwise
    (a FLOAT/DOUBLE zero or NaN, sub-millisecond timestamps of a millisecond column, CHAR padding)."""
    import numpy as np

    r = root(data_type)
    if value is None or r in ("CHAR", "TIMESTAMP_LTZ"):
        return None
    if r in ("VARCHAR", "BINARY", "VARBINARY"):
        if not isinstance(value, (str, bytes, bytearray)):
            return None
        return _xxh64([value])[0]
    try:
        if r in ("FLOAT", "DOUBLE"):
            v = float(value)
            if v == 0.0 or math.isnan(v) or (r == "FLOAT" and float(np.float32(v)) != v):
                return None
            return int(_thomas_wang(_float_bits([v], r == "DOUBLE"))[0])
        if isinstance(value, bool) or int(value) != value:
            return None
        v = int(value)
        if r == "TIMESTAMP":
            if _precision(data_type) <= 3:
                if v % 1000:
                    return None
                v //= 1000
        elif r == "TIME":
            if v % 1000:
                return None
            v //= 1000
        if not -(1 << 63) <= v < (1 << 63):
            return None
        return int(_thomas_wang(np.asarray([v], dtype=np.int64))[0])
    except (TypeError, ValueError, OverflowError):
        return None


# --------------------------------------------------------------------------- the bloom filter
def bloom_size(items: int, fpp: float) -> tuple[int, int]:
    """(bits, hash functions) of Paimon's ``BloomFilter64(items, fpp)``."""
    nb = int(-items * math.log(fpp) / (math.log(2) * math.log(2)))
    bits = nb + (8 - nb % 8)
    return bits, max(1, math.floor(bits / items * math.log(2) + 0.5))


def _positions(hashes: Any, k: int, bits: int) -> Longs:
    import numpy as np

    h = np.asarray(hashes, dtype=np.int64)
    h1 = h.astype(np.int32).astype(np.int64)
    h2 = (h >> np.int64(32)).astype(np.int32).astype(np.int64)
    out: list[Longs] = []
    for i in range(1, k + 1):
        c = (h1 + i * h2).astype(np.int32)     # Java int arithmetic wraps
        c = np.where(c < 0, ~c, c).astype(np.int64)
        out.append(c % bits)
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def bloom_filter_bytes(hashes: Any, items: int = BLOOM_DEFAULT_ITEMS, fpp: float = BLOOM_DEFAULT_FPP) -> bytes:
    import numpy as np

    bits, k = bloom_size(items, fpp)
    marks = np.zeros(bits, dtype=bool)
    marks[_positions(hashes, k, bits)] = True
    return struct.pack(">i", k) + np.packbits(marks, bitorder="little").tobytes()


def bloom_may_contain(index: bytes, value_hash: int) -> bool:
    (k,) = struct.unpack_from(">i", index, 0)
    bits = (len(index) - 4) * 8
    if bits <= 0:
        return True
    for p in _positions([value_hash], k, bits).tolist():
        if not index[4 + (p >> 3)] >> (p & 7) & 1:
            return False
    return True


# --------------------------------------------------------------------------- building and using
def build_container(data: Any, fields: Sequence[DataField], wanted: IndexOptions) -> Optional[bytes]:
    """The container of the indexes ``wanted`` asks for over ``data`` (an Arrow table holding the
    columns of ``fields``); None when no index is asked for."""
    if wanted.empty:
        return None
    by_name = {f.name: f for f in fields}
    indexes: dict[str, dict[str, Optional[bytes]]] = {}
    for column, kinds in wanted.columns.items():
        f = by_name.get(column)
        if f is None:
            continue        # a column dropped since (or a map key's): no index
        for kind, opts in kinds.items():
            if kind == BSI:
                indexes.setdefault(column, {})[kind] = bsi_bytes(column_longs(data.column(column), f.type))
                continue
            if kind == BITMAP:
                indexes.setdefault(column, {})[kind] = bmi.bitmap_bytes(
                    bmi.column_keys(data.column(column), f.type), f.type, opts)[0]
                continue
            if kind != BLOOM_FILTER:
                continue    # a table another engine made with one (refused at CREATE/ALTER here)
            items = int(opts.get("items", BLOOM_DEFAULT_ITEMS))
            fpp = float(opts.get("fpp", BLOOM_DEFAULT_FPP))
            indexes.setdefault(column, {})[kind] = bloom_filter_bytes(
                column_hashes(data.column(column), f.type), items, fpp)
    return write_container(indexes) if indexes else None


def index_file_name(data_file: str) -> str:
    """The index file written beside a data file (Paimon's ``dataFileToFileIndexPath``)."""
    return data_file + INDEX_SUFFIX


def index_files(extra_files: Optional[Iterable[str]]) -> list[str]:
    return [x for x in extra_files or () if x.endswith(INDEX_SUFFIX)]


_RANGES = (ex.LessThan, ex.LessThanOrEqual, ex.GreaterThan, ex.GreaterThanOrEqual)


def point_lookups(pred: ex.Expr, ranges: bool = True, nulls: bool = False) -> set[str]:
    """Columns ``pred`` compares by ``=``, ``IN`` (with ``ranges`` by ``<``, ``<=``, ``>``, ``>=``,
    with ``nulls`` tests by ``IS [NOT] NULL``) anywhere: where an index could skip a file."""
    if isinstance(pred, (ex.And, ex.Or)):
        return point_lookups(pred.left, ranges, nulls) | point_lookups(pred.right, ranges, nulls)
    kinds = (ex.EqualTo, ex.In) + (_RANGES if ranges else ()) + ((ex.IsNull, ex.NotNull) if nulls else ())
    if isinstance(pred, kinds) and isinstance(pred.term, ex.BoundReference) and not isinstance(pred, ex.LikeEqualTo):
        return {pred.term.name}
    return set()


def may_match(pred: ex.Expr, raw: bytes, columns: Mapping[str, DataField], where: str = "file index") -> bool:
    """False only if the container ``raw`` proves no row satisfies ``pred``: an ``=`` / ``IN`` on
    a column with a bloom filter none of whose values may be in it (AND / OR followed; anything
    else may match). ``columns`` maps a column name of ``pred`` to its field as the file has it."""
    metas = read_header(raw, where)
    blooms: dict[str, bytes] = {}
    bsis: dict[str, bytes] = {}
    bitmaps: dict[str, bytes] = {}
    for m in metas:
        if m.index_type == BLOOM_FILTER and not m.empty:
            blooms[m.column] = raw[m.start:m.start + m.length]
        elif m.index_type == BSI and not m.empty:
            bsis[m.column] = raw[m.start:m.start + m.length]
        elif m.index_type == BITMAP and not m.empty:
            bitmaps[m.column] = raw[m.start:m.start + m.length]
    bitmap_indexes: dict[str, bmi.BitmapIndex] = {}
    bsi_sets: dict[str, set[int]] = {}

    def test(node: ex.Expr) -> bool:
        if isinstance(node, ex.And):
            return test(node.left) and test(node.right)
        if isinstance(node, ex.Or):
            return test(node.left) or test(node.right)
        if not isinstance(node, (ex.EqualTo, ex.In, ex.IsNull, ex.NotNull) + _RANGES) \
                or isinstance(node, ex.LikeEqualTo) or not isinstance(node.term, ex.BoundReference):
            return True
        f = columns.get(node.term.name)
        if f is not None and f.name in bitmaps and not isinstance(node, _RANGES):
            if f.name not in bitmap_indexes:
                bitmap_indexes[f.name] = bmi.BitmapIndex(bitmaps[f.name], f.type, where)
            bitmap = bitmap_indexes[f.name]
            if isinstance(node, ex.IsNull):
                return bitmap.has_nulls
            if isinstance(node, ex.NotNull):
                return bitmap.has_values
            values = list(node.literals) if isinstance(node, ex.In) else [literal_of(node)]
            if not any(bitmap.may_hold(v, f.type) for v in values):
                return False
        if isinstance(node, (ex.IsNull, ex.NotNull)):
            return True
        if f is not None and f.name in bsis:
            if f.name not in bsi_sets:
                bsi_sets[f.name] = bsi_values(bsis[f.name], where)
            if not bsi_may_match(node, bsi_sets[f.name], f.type):
                return False
        index = blooms.get(f.name) if f is not None else None
        if f is None or index is None or isinstance(node, _RANGES):
            return True
        values = list(node.literals) if isinstance(node, ex.In) else [literal_of(node)]
        for v in values:
            h = literal_hash(v, f.type)
            if h is None or bloom_may_contain(index, h):
                return True
        return False

    return test(pred)


# --------------------------------------------------------------------------- the bit-sliced index (bsi)
# Paimon's ``BitSliceIndexBitmapFileIndex``: version (1 byte: 1), row count (4), then the
# non-negative values and the absolute values of the negative ones, each (when it has any) as a
# flag byte 1 and a bit-sliced index: version (1), min (8: always 0), max (8), the Roaring bitmap
# of the rows it holds, the slice count (4: bit length of max) and one Roaring bitmap per bit (the
# rows whose value has that bit set). Bitmaps are in the portable Roaring format, run-optimised.
# A row's value: integers, a DATE's days, a TIME's milliseconds, a TIMESTAMP's milliseconds
# (precision up to 3) or microseconds, a DECIMAL's unscaled number. Nulls are in no bitmap.
def column_longs(column: Any, data_type: IcebergType) -> list[Optional[int]]:
    """The values of an Arrow column as the bsi index numbers them (None for null), in row order."""
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    r = root(data_type)
    if r == "DECIMAL":
        scale = cast(DecimalType, data_type).scale
        return [None if v is None else int(v.scaleb(scale)) for v in column.to_pylist()]
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        micros = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64())
        values = micros.to_pylist()
        return [None if v is None else (v // 1000 if _precision(data_type) <= 3 else v) for v in values]
    if r == "TIME":
        return [None if v is None else v // 1000 for v in column.cast(pa.time64("us")).cast(pa.int64()).to_pylist()]
    if r == "DATE":
        return column.cast(pa.int32()).to_pylist()
    return column.cast(pa.int64()).to_pylist()


def _roaring(rows: list[int]) -> bytes:
    from pyroaring import BitMap

    bm = BitMap(rows)
    bm.run_optimize()
    return bm.serialize()


def _slices(pairs: list[tuple[int, int]]) -> bytes:
    """One sign's bit-sliced index of (row, non-negative value) pairs."""
    top = max(v for _, v in pairs)
    out = bytearray(struct.pack(">bqq", 1, 0, top))
    out += _roaring([r for r, _ in pairs])
    width = top.bit_length()
    out += struct.pack(">i", width)
    for bit in range(width):
        out += _roaring([r for r, v in pairs if v >> bit & 1])
    return bytes(out)


def bsi_bytes(values: Sequence[Optional[int]]) -> bytes:
    positive = [(i, v) for i, v in enumerate(values) if v is not None and v >= 0]
    negative = [(i, -v) for i, v in enumerate(values) if v is not None and v < 0]
    if any(v >= 1 << 63 for _, v in negative):
        raise SchemaError("a bsi index cannot hold -9223372036854775808")
    out = bytearray(struct.pack(">bi", 1, len(values)))
    for pairs in (positive, negative):
        out += struct.pack(">?", bool(pairs))
        if pairs:
            out += _slices(pairs)
    return bytes(out)


def bsi_values(index: bytes, where: str = "bsi index") -> set[int]:
    """The distinct values a bsi index holds (the numbers of its non-null rows)."""
    from pyroaring import BitMap

    try:
        version, _rows = struct.unpack_from(">bi", index, 0)
        if version > 1:
            raise ValueError(f"it is bsi version {version}; icefloe reads version 1")
        pos = 5
        found: set[int] = set()
        for sign in (1, -1):
            (has,) = struct.unpack_from(">?", index, pos)
            pos += 1
            if not has:
                continue
            _v, low, _high = struct.unpack_from(">bqq", index, pos)
            pos += 17
            ebm = BitMap.deserialize(index[pos:])
            pos += len(ebm.serialize())
            (width,) = struct.unpack_from(">i", index, pos)
            pos += 4
            value = {row: 0 for row in ebm}
            for bit in range(width):
                bm = BitMap.deserialize(index[pos:])
                pos += len(bm.serialize())
                for row in bm:
                    value[row] |= 1 << bit
            found.update(sign * (low + v) for v in value.values())
        return found
    except (struct.error, ValueError) as e:
        raise SchemaError(f"cannot read {where}: {e}") from None


def _bsi_literal(value: Any, data_type: IcebergType) -> Optional[int]:
    """A literal as the bsi index numbers values, None where it may number it otherwise."""
    import decimal

    r = root(data_type)
    if value is None or isinstance(value, bool) or r == "TIMESTAMP_LTZ":
        return None
    try:
        if r == "DECIMAL":
            d = decimal.Decimal(value).scaleb(cast(DecimalType, data_type).scale)
            return int(d) if d == d.to_integral_value() else None
        if int(value) != value:
            return None
        v = int(value)
        if (r == "TIMESTAMP" and _precision(data_type) <= 3) or r == "TIME":
            return v // 1000 if v % 1000 == 0 else None
        return v
    except (TypeError, ValueError, ArithmeticError):
        return None


def bsi_may_match(node: ex.Predicate, values: set[int], data_type: IcebergType) -> bool:
    """Whether a comparison may hold for some value of ``values`` (an index's values)."""
    if not values:
        return False
    literals = list(node.literals) if isinstance(node, ex.In) else [literal_of(node)]
    maybe = [_bsi_literal(v, data_type) for v in literals]
    keys = [k for k in maybe if k is not None]
    if len(keys) != len(maybe):
        return True
    if isinstance(node, (ex.EqualTo, ex.In)):
        return any(k in values for k in keys)
    (k,) = keys
    lo, hi = min(values), max(values)
    if isinstance(node, ex.LessThan):
        return lo < k
    if isinstance(node, ex.LessThanOrEqual):
        return lo <= k
    if isinstance(node, ex.GreaterThan):
        return hi > k
    return hi >= k
