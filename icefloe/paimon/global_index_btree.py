# pyright: strict
"""Paimon's ``btree`` global index file (``BTreeIndexWriter``): an SST file of the indexed column's
distinct values, sorted, each with the rows holding it.

As Paimon 1.4 writes it (every integer little-endian, as Paimon's memory segments on the machines it
runs on; "varint": 7 bits a byte, low first, high bit set on all but the last):

- *Records.* Key: the value's bytes (a CHAR's or VARCHAR's UTF-8; TINYINT and BOOLEAN one byte;
  SMALLINT 2, INT, DATE and TIME 4, BIGINT 8 bytes). Value: varint count, then each row's varint
  position (row id minus the row range's start). Records ascend by value (strings by their bytes,
  unsigned).
- *Data blocks.* Records as varint key length, key, varint value length, value. A block is cut once
  its bytes plus 5 (plus 4 per record unless all records are the same size) pass
  ``btree-index.block-size`` (64 kb). It ends with, when all its records are the same size, that size
  (4) and byte 0, else each record's offset (4), the record count (4) and byte 1.
- *Block trailer* after each block: the compression (byte: 0 none, 1 zstd, 2 lz4; none by default and
  the only one written here) and the CRC-32 of the block's bytes then that byte (4).
- Then the *null bitmap* when some row is null (a 64-bit Roaring bitmap in the portable format, then
  its CRC-32), the *index block* (a block of one record per data block: its last key -> varint
  offset and varint size of the block) with its trailer, and the 52-byte *footer*: bloom filter
  offset (8), size (4), expected entries (8) (all 0: none is written), index block offset (8) and
  size (4), null bitmap offset (8) and size (4) (0 and 0: none), version (4: 1), magic (4:
  ``0x50425449``).
- *Meta* (the manifest entry's ``_INDEX_META``): first key's length (4) and bytes, last key's
  length (4) and bytes (0 and none when all rows are null), has nulls (1).

A build (``global_index``) writes one file per row range with up to ``btree-index.records-per-range``
(1,000,000) times 1.2 rows, as Paimon's builder cuts them; every file of a range carries the whole
range in its manifest entry, its meta telling which values it holds.
"""
from __future__ import annotations

import bisect
import struct
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from icefloe.core.types import IcebergType
from icefloe.errors import SchemaError
from icefloe.paimon import file_index_bitmap as bmi
from icefloe.paimon.options import parse_memory_size
from icefloe.paimon.types import root

if TYPE_CHECKING:
    from pyroaring import BitMap

MAGIC = 0x50425449
VERSION = 1
FOOTER = 52
TRAILER = 5
NONE = 0
BLOCK_SIZE = "btree-index.block-size"
RECORDS_PER_RANGE = "btree-index.records-per-range"
# current Paimon's name of the option for its sorted (btree and bitmap) builds; the btree one is its fallback
SORTED_RECORDS_PER_RANGE = "sorted-index.records-per-range"
COMPRESSION = "btree-index.compression"
DEFAULT_BLOCK_SIZE = 64 * 1024
DEFAULT_RECORDS_PER_RANGE = 1_000_000
FLOATING = 1.2                  # a file takes up to records-per-range times this
# options of Paimon's btree index that tune its Java reader alone (cache) or its Spark job
READER_OPTIONS = ("btree-index.cache-size", "btree-index.high-priority-pool-ratio",
                  "btree-index.build.max-parallelism", "btree-index.compression-level")
OPTIONS = (BLOCK_SIZE, RECORDS_PER_RANGE, SORTED_RECORDS_PER_RANGE, COMPRESSION, *READER_OPTIONS)
_FORMATS = {"TINYINT": "<b", "SMALLINT": "<h", "INT": "<i", "DATE": "<i", "TIME": "<i", "BIGINT": "<q",
            "BOOLEAN": "<?"}
ROOTS = ("CHAR", "VARCHAR", *_FORMATS)
Key = Union[bytes, int, bool]


def check(column: str, data_type: IcebergType, options: Mapping[str, str]) -> None:
    """Refuse a column this writer does not key, or an option it does not take."""
    r = root(data_type) if data_type.is_primitive else None
    if r not in ROOTS or r == "TIME":
        raise SchemaError(f"column {column!r} has type {data_type}; icefloe builds btree indexes of strings, "
                          "integers, booleans and dates (Paimon's btree also keys floats, decimals and "
                          "timestamps, which index_type => 'bitmap' covers but for decimals)")
    for key, value in options.items():
        if key not in OPTIONS:
            raise SchemaError(f"option {key!r} is not an option of the btree index (it takes {', '.join(OPTIONS)})")
        if key == COMPRESSION and str(value).strip().lower() != "none":
            raise SchemaError(f"option {COMPRESSION!r} = {value!r}: icefloe writes btree blocks uncompressed "
                              "('none', Paimon's default)")
        if key in (BLOCK_SIZE, RECORDS_PER_RANGE, SORTED_RECORDS_PER_RANGE):
            try:
                ok = (parse_memory_size(value) if key == BLOCK_SIZE else int(str(value).strip())) > 0
            except Exception:
                ok = False
            if not ok:
                raise SchemaError(f"option {key!r} must be a positive {'memory size' if key == BLOCK_SIZE else 'count'}, "
                                  f"not {value!r}")


def records_per_file(options: Mapping[str, str]) -> int:
    """The rows a file of a sorted build takes: ``sorted-index.records-per-range`` (else
    ``btree-index.records-per-range``) times 1.2."""
    text = options.get(SORTED_RECORDS_PER_RANGE, options.get(RECORDS_PER_RANGE, DEFAULT_RECORDS_PER_RANGE))
    return int(int(str(text).strip()) * FLOATING)


def check_records_per_range(value: str) -> None:
    try:
        ok = int(str(value).strip()) > 0
    except ValueError:
        ok = False
    if not ok:
        raise SchemaError(f"option {SORTED_RECORDS_PER_RANGE!r} must be a positive count, not {value!r}")


def block_size(options: Mapping[str, str]) -> int:
    return parse_memory_size(options[BLOCK_SIZE]) if BLOCK_SIZE in options else DEFAULT_BLOCK_SIZE


def files(keys: Sequence[Any], data_type: IcebergType, options: Mapping[str, str]) -> list[BTreeFile]:
    """The btree files of a row range's ``keys`` (position = row id - range start): the rows in key
    order, nulls first, cut every ``records_per_file`` rows, as Paimon's builder cuts them."""
    ordered = [(None, i) for i, k in enumerate(keys) if k is None] + \
        sorted((k, i) for i, k in enumerate(keys) if k is not None)
    per = max(1, records_per_file(options))
    size = block_size(options)
    return [write(ordered[at:at + per], data_type, size) for at in range(0, len(ordered), per)]


def _root(data_type: IcebergType) -> str:
    r = root(data_type) if data_type.is_primitive else None
    if r not in ROOTS:
        raise SchemaError(f"a btree index of type {data_type} is not read by icefloe")
    return str(r)


def key_bytes(key: Key, r: str) -> bytes:
    return key if isinstance(key, bytes) else struct.pack(_FORMATS[r], key)


def decode_key(raw: bytes, r: str) -> Key:
    if r in ("CHAR", "VARCHAR"):
        return raw
    return struct.unpack(_FORMATS[r], raw)[0]


def _varint(n: int) -> bytes:
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varint(raw: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = raw[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, pos
        shift += 7


# --------------------------------------------------------------------------- writing
class _Block:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.data = bytearray()
        self.positions: list[int] = []
        self.aligned_size = 0
        self.aligned = True

    def add(self, key: bytes, value: bytes) -> None:
        start = len(self.data)
        self.data += _varint(len(key)) + key + _varint(len(value)) + value
        self.positions.append(start)
        size = len(self.data) - start
        if self.aligned:
            if self.aligned_size == 0:
                self.aligned_size = size
            else:
                self.aligned = self.aligned_size == size

    def memory(self) -> int:
        return len(self.data) + 5 + (0 if self.aligned else 4 * len(self.positions))

    def finish(self) -> bytes:
        if not self.positions:
            self.aligned = False
        if self.aligned:
            return bytes(self.data) + struct.pack("<i", self.aligned_size) + b"\x00"
        return bytes(self.data) + b"".join(struct.pack("<i", p) for p in self.positions) \
            + struct.pack("<i", len(self.positions)) + b"\x01"


def _with_trailer(block: bytes) -> bytes:
    return block + bytes([NONE]) + struct.pack("<I", zlib.crc32(block + bytes([NONE])))


def _bitmap64(rows: Sequence[int]) -> bytes:
    """A 64-bit Roaring bitmap in the portable format (Java's ``Roaring64NavigableMap.serializePortable``):
    the count of 32-bit buckets (8), then each bucket's high 32 bits (4) and 32-bit portable bitmap."""
    from pyroaring import BitMap

    out = bytearray(struct.pack("<q", len({r >> 32 for r in rows})))
    for high in sorted({r >> 32 for r in rows}):
        bm = BitMap(r & 0xFFFFFFFF for r in rows if r >> 32 == high)
        bm.run_optimize()
        out += struct.pack("<I", high) + bm.serialize()
    return bytes(out)


def _read_bitmap64(raw: bytes) -> BitMap:
    """The rows of ``_bitmap64``'s format (rows below 2**32: one bucket, of high bits 0)."""
    from pyroaring import BitMap, BitMap64

    (count,) = struct.unpack_from("<q", raw, 0)
    if count == 0:
        return BitMap()
    if count == 1 and struct.unpack_from("<I", raw, 8)[0] == 0:
        return BitMap.deserialize(raw[12:])
    return BitMap(BitMap64.deserialize(raw))


def _handle(offset: int, size: int) -> bytes:
    return _varint(offset) + _varint(size)


@dataclass(frozen=True)
class BTreeFile:
    raw: bytes
    meta: bytes
    row_count: int


def write(rows: Sequence[tuple[Optional[Key], int]], data_type: IcebergType,
          block_size: int = DEFAULT_BLOCK_SIZE) -> BTreeFile:
    """The btree file of ``rows``: (key as ``bitmap``'s ``column_keys`` gives it, or None; the row's
    position, its row id minus the range's start)."""
    r = _root(data_type)
    pairs = sorted((k, i) for k, i in rows if k is not None)
    nulls = sorted(i for k, i in rows if k is None)
    out = bytearray()
    index = _Block()
    block = _Block()
    last: Optional[bytes] = None

    def flush() -> None:
        if not block.positions or last is None:
            return
        offset, body = len(out), block.finish()
        out.extend(_with_trailer(body))
        index.add(last, _handle(offset, len(body)))
        block.reset()

    at = 0
    while at < len(pairs):
        k = pairs[at][0]
        end = at
        while end < len(pairs) and pairs[end][0] == k:
            end += 1
        value = _varint(end - at) + b"".join(_varint(i) for _, i in pairs[at:end])
        last = key_bytes(k, r)
        block.add(last, value)
        if block.memory() > block_size:
            flush()
        at = end
    flush()
    null_handle = (0, 0)
    if nulls:
        raw = _bitmap64(nulls)
        null_handle = (len(out), len(raw))
        out.extend(raw + struct.pack("<I", zlib.crc32(raw)))
    index_offset, index_body = len(out), index.finish()
    out.extend(_with_trailer(index_body))
    out.extend(struct.pack("<qiq", 0, 0, 0) + struct.pack("<qi", index_offset, len(index_body))
               + struct.pack("<qi", *null_handle) + struct.pack("<ii", VERSION, MAGIC))
    first = key_bytes(pairs[0][0], r) if pairs else b""
    last_key = key_bytes(pairs[-1][0], r) if pairs else b""
    meta = struct.pack("<i", len(first)) + first + struct.pack("<i", len(last_key)) + last_key + bytes([bool(nulls)])
    return BTreeFile(bytes(out), meta, len(rows))


# --------------------------------------------------------------------------- reading
class BTreeIndex:
    """A btree index file, read block by block as a lookup needs."""

    def __init__(self, raw: bytes, data_type: IcebergType, meta: Optional[bytes], where: str = "btree index"):
        self.raw, self.where, self.root = raw, where, _root(data_type)
        try:
            if len(raw) < FOOTER:
                raise ValueError(f"{len(raw)} bytes, less than a footer")
            f = raw[-FOOTER:]
            version, magic = struct.unpack_from("<ii", f, 44)
            if magic != MAGIC:
                raise ValueError("not a btree index file (bad magic number)")
            if version != VERSION:
                raise ValueError(f"btree index version {version}; icefloe reads version {VERSION}")
            index_offset, index_size = struct.unpack_from("<qi", f, 20)
            self.null_handle: tuple[int, int] = struct.unpack_from("<qi", f, 32)
            self.index = [(decode_key(k, self.root), v) for k, v in self._block(index_offset, index_size)]
            self.index_keys = [k for k, _ in self.index]
            self.has_nulls = meta is None or meta[-1:] == b"\x01"
        except (struct.error, ValueError, IndexError) as e:
            raise SchemaError(f"cannot read {where}: {e}") from None

    def _block(self, offset: int, size: int) -> list[tuple[bytes, bytes]]:
        raw = self.raw
        body = raw[offset:offset + size]
        kind, crc = raw[offset + size], struct.unpack_from("<I", raw, offset + size + 1)[0]
        if kind != NONE:
            raise ValueError(f"a block compressed with codec {kind}; icefloe reads uncompressed btree blocks")
        if zlib.crc32(body + bytes([kind])) != crc:
            raise ValueError(f"the block at {offset} fails its checksum")
        if body[-1] == 0:
            (aligned,) = struct.unpack_from("<i", body, len(body) - 5)
            starts = list(range(0, len(body) - 5, aligned)) if aligned else []
        else:
            (count,) = struct.unpack_from("<i", body, len(body) - 5)
            starts = list(struct.unpack_from(f"<{count}i", body, len(body) - 5 - 4 * count))
        out: list[tuple[bytes, bytes]] = []
        for p in starts:
            n, p = _read_varint(body, p)
            key = bytes(body[p:p + n])
            m, p = _read_varint(body, p + n)
            out.append((key, bytes(body[p:p + m])))
        return out

    def rows_of(self, literal: Any, data_type: IcebergType) -> Optional[BitMap]:
        """The positions of the rows equal to ``literal``; None where the index cannot tell."""
        from pyroaring import BitMap

        k = bmi.literal_key(literal, data_type) if self.root in bmi.ROOTS else None
        if k is None or isinstance(k, float):
            return None
        try:
            at = bisect.bisect_left(self.index_keys, k)
            if at == len(self.index):
                return BitMap()
            handle = self.index[at][1]
            offset, p = _read_varint(handle, 0)
            size, _ = _read_varint(handle, p)
            for key, value in self._block(offset, size):
                if decode_key(key, self.root) == k:
                    count, p = _read_varint(value, 0)
                    rows: list[int] = []
                    for _ in range(count):
                        row, p = _read_varint(value, p)
                        rows.append(row)
                    return BitMap(rows)
            return BitMap()
        except (struct.error, ValueError, IndexError) as e:
            raise SchemaError(f"cannot read {self.where}: {e}") from None

    def rows_in(self, low: Optional[Any], low_inclusive: bool, high: Optional[Any], high_inclusive: bool
                ) -> Optional[BitMap]:
        """The positions of the rows whose value lies between ``low`` and ``high`` (keys as
        ``file_index_bitmap.literal_key`` gives them; None: unbounded): the blocks from the first
        whose last value reaches ``low`` until one passes ``high``."""
        from pyroaring import BitMap

        if isinstance(low, float) or isinstance(high, float):
            return None
        out = BitMap()
        try:
            at = 0 if low is None else bisect.bisect_left(self.index_keys, low)
            for last, handle in self.index[at:]:
                offset, p = _read_varint(handle, 0)
                size, _ = _read_varint(handle, p)
                for raw, value in self._block(offset, size):
                    k: Any = decode_key(raw, self.root)
                    if low is not None and (k < low or (k == low and not low_inclusive)):
                        continue
                    if high is not None and (k > high or (k == high and not high_inclusive)):
                        return out
                    count, p = _read_varint(value, 0)
                    for _ in range(count):
                        row, p = _read_varint(value, p)
                        out.add(row)
                if high is not None and last >= high:  # pyright: ignore[reportOperatorIssue]
                    return out
            return out
        except (struct.error, ValueError, IndexError) as e:
            raise SchemaError(f"cannot read {self.where}: {e}") from None

    def null_rows(self) -> Optional[BitMap]:
        from pyroaring import BitMap

        offset, size = self.null_handle
        if size == 0:
            return BitMap()
        raw = self.raw[offset:offset + size]
        try:
            if zlib.crc32(raw) != struct.unpack_from("<I", self.raw, offset + size)[0]:
                raise ValueError("the null bitmap fails its checksum")
            return _read_bitmap64(raw)
        except Exception as e:          # pyroaring raises ValueError (or others) on garbage
            raise SchemaError(f"cannot read {self.where}: {e}") from None


__all__ = ["BTreeFile", "BTreeIndex", "OPTIONS", "ROOTS", "block_size", "check", "decode_key", "files", "key_bytes",
           "records_per_file", "write"]
