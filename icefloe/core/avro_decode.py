# pyright: strict
"""Avro object container files decoded into Arrow columns by a compiled loop (``core.avro_kernel``).

The writer's schema (Avro spec, "Schema Declaration") is flattened into a ``Program``: one node per
schema node in preorder, each with the index after its subtree, so a record's fields follow it and
an array's (or a map's) items are the nodes up to its end. The kernel runs the program once per
record over the file's decompressed blocks (codecs ``null``, ``deflate``, ``snappy``, ``zstandard``,
``bzip2``, ``xz``; decompressed here, block by block) and writes each kept node's values into
flat integer pools: whole numbers and a float's bits as they are, a string or bytes value as its
start and length in the decompressed buffer, an array or map as its item count. The pools become
Arrow arrays without a pass in Python per value: numbers are copies or casts of a pool's column,
strings are gathered into one data buffer by the kernel, lists and maps take their offsets from
the counts. A file is decoded in runs of blocks of about ``CHUNK_RECORDS`` records, each a chunk of
the table's columns, through one set of pools. A field named in ``decode``'s ``drop`` is read past
but not kept (a projection).

Types: ``null`` unions of two branches (``["null", T]``, ``[T, "null"]``) are nullable ``T``;
records are structs; arrays are lists, and an array of ``key``/``value`` records with the logical
type ``map`` (Iceberg's maps of non-string keys) is a map, as an Avro ``map`` is (string keys);
logical types ``date``, ``time-*``, ``timestamp-*`` and ``local-timestamp-*`` give Arrow's date,
time and timestamp types (no zone); others keep their Avro type. A schema this cannot decode
(other unions, enums, recursive types, an array of items that may be written in no bytes) gives
``Unsupported``; a file that does not frame gives ``Corrupt``.
"""
from __future__ import annotations

import bz2
import importlib
import json
import lzma
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from icefloe.core import numba_cache
from icefloe.core.arrow import arrow_of

_MAGIC = b"Obj\x01"
Ints = npt.NDArray[np.int64]
Bytes = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.bool_]


class Unsupported(ValueError):
    """A schema or codec this decoder does not read."""


class Corrupt(ValueError):
    """A container file whose frame or records do not decode."""


# node kinds, as ``avro_kernel`` numbers them (kept here so a schema is judged before numba loads)
NULL, BOOLEAN, INT, LONG, FLOAT, DOUBLE, BYTES, STRING, FIXED, RECORD, ARRAY, MAP = range(12)
_PRIMITIVES = {"null": NULL, "boolean": BOOLEAN, "int": INT, "long": LONG, "float": FLOAT, "double": DOUBLE,
               "bytes": BYTES, "string": STRING}
_INT_LOGICAL = {"date": pa.date32(), "time-millis": pa.time32("ms")}
_LONG_LOGICAL = {"time-micros": pa.time64("us"), "timestamp-millis": pa.timestamp("ms"),
                 "timestamp-micros": pa.timestamp("us"), "timestamp-nanos": pa.timestamp("ns"),
                 "local-timestamp-millis": pa.timestamp("ms"), "local-timestamp-micros": pa.timestamp("us"),
                 "local-timestamp-nanos": pa.timestamp("ns")}


@dataclass
class Node:
    kind: int
    name: str = ""
    children: list["Node"] = field(default_factory=lambda: list[Node]())
    nullable: int = -1          # the branch index of ``null`` in a two-branch union; -1: not nullable
    size: int = 0               # a fixed's
    arrow: Optional[pa.DataType] = None     # a logical type's Arrow type
    iceberg_map: bool = False   # an array of key/value records with the logical type map
    kept: bool = True
    index: int = 0              # its place in the program
    end: int = 0                # the index after its subtree
    slot: int = -1
    top_level: bool = True      # one value per record (not inside an array or map)


class Program:
    """The nodes of a writer's schema in preorder, and their slots (``avro_kernel``'s arrays)."""

    def __init__(self, schema: Any, drop: Sequence[str] = ()):
        self.named: dict[str, Any] = {}
        self.root = self._node(schema, "", "", set())
        if self.root.kind != RECORD or self.root.nullable >= 0:
            raise Unsupported("the file's schema is not a record")
        for name in drop:
            self._drop(name)
        self.nodes: list[Node] = []
        self._flatten(self.root, True)
        self.slots: list[Node] = [n for n in self.nodes if n.slot >= 0]
        def arr(attr: str) -> Ints:
            return np.array([getattr(n, attr) for n in self.nodes], np.int64)

        self.kind, self.end, self.nullbr, self.slot, self.fsize = (
            arr("kind"), arr("end"), arr("nullable"), arr("slot"), arr("size"))
        self.top_level: Mask = np.array([n.top_level for n in self.slots], np.bool_)
        self.has_lens = np.array([n.kind in (STRING, BYTES) for n in self.slots], np.bool_)

    def _drop(self, path: str) -> None:
        """Field ``path`` (dotted) read past, not kept; nothing where the schema has no such field."""
        node = self.root
        for part in path.split("."):
            found = [c for c in node.children if c.name == part] if node.kind == RECORD else []
            if not found:
                return
            node = found[0]
        node.kept = False

    def _node(self, s: Any, name: str, namespace: str, seen: set[str]) -> Node:
        if isinstance(s, list):
            branches = cast(list[Any], s)
            nulls = [i for i, b in enumerate(branches) if b == "null"]
            if len(branches) != 2 or len(nulls) != 1:
                raise Unsupported(f"union {json.dumps(s)}")
            node = self._node(branches[1 - nulls[0]], name, namespace, seen)
            if node.nullable >= 0:
                raise Unsupported("a union in a union")
            node.nullable = nulls[0]
            return node
        if isinstance(s, str):
            if s in _PRIMITIVES:
                return Node(_PRIMITIVES[s], name)
            full = s if "." in s or not namespace else f"{namespace}.{s}"
            target = self.named.get(full, self.named.get(s))
            if target is None:
                raise Unsupported(f"unknown type {s}")
            if full in seen or s in seen:
                raise Unsupported(f"recursive type {s}")
            return self._node(target, name, namespace, seen)
        if not isinstance(s, dict):
            raise Unsupported(f"schema {s!r}")
        s = cast(dict[str, Any], s)
        t = s.get("type")
        logical = s.get("logicalType")
        if t in _PRIMITIVES:
            node = Node(_PRIMITIVES[t], name)
            if t == "int":
                node.arrow = _INT_LOGICAL.get(str(logical))
            elif t == "long":
                node.arrow = _LONG_LOGICAL.get(str(logical))
            return node
        if t in ("record", "error", "fixed", "enum"):
            ns = str(s.get("namespace", namespace))
            own = str(s["name"])
            full = own if "." in own or not ns else f"{ns}.{own}"
            self.named[full] = s
            if t == "enum":
                raise Unsupported("enum")
            if t == "fixed":
                return Node(FIXED, name, size=int(s["size"]))
            inner = seen | {full}
            fields = cast(list[dict[str, Any]], s["fields"])
            kids = [self._node(f["type"], str(f["name"]), ns, inner) for f in fields]
            return Node(RECORD, name, kids)
        if t == "array":
            item = self._node(s["items"], "item", namespace, seen)
            if _min_bytes(item) == 0:
                raise Unsupported("an array of items written in no bytes")
            node = Node(ARRAY, name, [item])
            node.iceberg_map = (logical == "map" and item.kind == RECORD and item.nullable < 0
                                and [c.name for c in item.children] == ["key", "value"]
                                and item.children[0].nullable < 0)
            return node
        if t == "map":
            return Node(MAP, name, [Node(STRING, "key"), self._node(s["values"], "value", namespace, seen)])
        if isinstance(t, (dict, list)) or (isinstance(t, str) and t not in _PRIMITIVES):
            return self._node(t, name, namespace, seen)
        raise Unsupported(f"schema {json.dumps(s)}")

    def _flatten(self, node: Node, top_level: bool) -> None:
        node.index = len(self.nodes)
        node.top_level = top_level
        self.nodes.append(node)
        if node.kept and node is not self.root:
            node.slot = sum(1 for n in self.nodes if n.slot >= 0)
        nested = top_level and node.kind not in (ARRAY, MAP)
        for c in node.children:
            if not node.kept:
                c.kept = False
            self._flatten(c, nested)
        node.end = len(self.nodes)


def _min_bytes(node: Node) -> int:
    """The fewest bytes a value of ``node`` is written in."""
    if node.nullable >= 0 or node.kind in (INT, LONG, BOOLEAN, BYTES, STRING, ARRAY, MAP):
        return 1
    if node.kind in (FLOAT, DOUBLE):
        return 4 if node.kind == FLOAT else 8
    if node.kind == FIXED:
        return node.size
    if node.kind == RECORD:
        return sum(_min_bytes(c) for c in node.children)
    return 0


# ---------------------------------------------------------------------- container frame

def _varint(data: bytes, p: int) -> tuple[int, int]:
    shift = acc = 0
    while True:
        b = data[p]
        p += 1
        acc |= (b & 0x7F) << shift
        if b < 0x80:
            return (acc >> 1) ^ -(acc & 1), p
        shift += 7
        if shift > 63:
            raise Corrupt("a varint longer than ten bytes")


def encode_long(n: int) -> bytes:
    """Avro's zig-zag varint of ``n``."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def encode_header(meta: dict[str, bytes], sync: bytes) -> bytes:
    """A container file's header: the magic, the metadata ``meta`` and the sync marker."""
    out = bytearray(_MAGIC + encode_long(len(meta)))
    for k, v in meta.items():
        key = k.encode()
        out += encode_long(len(key)) + key + encode_long(len(v)) + v
    return bytes(out + encode_long(0) + sync)


def header(data: bytes) -> tuple[dict[str, bytes], bytes, int]:
    """The metadata, sync marker and first block's position of a container file."""
    if data[:4] != _MAGIC:
        raise Corrupt("not an Avro object container file")
    meta: dict[str, bytes] = {}
    p, end = 4, len(data)
    try:
        while True:
            n, p = _varint(data, p)
            if n == 0:
                break
            if n < 0:
                n = -n
                _, p = _varint(data, p)
            for _ in range(n):
                k, p = _varint(data, p)
                if k < 0 or p + k > end:        # a damaged length must not walk backwards (or loop)
                    raise Corrupt("a bad length in the file's metadata")
                key = data[p:p + k].decode()
                p += k
                v, p = _varint(data, p)
                if v < 0 or p + v > end:
                    raise Corrupt("a bad length in the file's metadata")
                meta[key] = data[p:p + v]
                p += v
    except IndexError:
        raise Corrupt("the header ends early") from None
    sync = data[p:p + 16]
    if len(sync) != 16:
        raise Corrupt("the header ends early")
    return meta, sync, p + 16


def _zstd() -> Callable[[bytes], bytes]:
    for name in ("compression.zstd", "backports.zstd"):
        try:
            return importlib.import_module(name).decompress
        except ImportError:
            continue
    raise Unsupported("codec zstandard: no zstd module")


def _snappy(raw: bytes) -> bytes:
    try:
        cramjam = importlib.import_module("cramjam")
    except ImportError:
        raise Unsupported("codec snappy: no cramjam module") from None
    out = bytes(cramjam.snappy.decompress_raw(raw[:-4]))
    if zlib.crc32(out).to_bytes(4, "big") != raw[-4:]:
        raise Corrupt("a snappy block's checksum does not match")
    return out


def decompressor(name: str) -> Optional[Callable[[bytes], bytes]]:
    """The function inflating a block of Avro codec ``name`` (None: ``null``, blocks as they are);
    ``Unsupported`` for a codec this cannot read."""
    return _codec(name)


def _codec(name: str) -> Optional[Callable[[bytes], bytes]]:
    if name == "null":
        return None
    if name == "deflate":
        return lambda raw: zlib.decompress(raw, -15)
    if name == "snappy":
        return _snappy
    if name == "zstandard":
        return _zstd()
    if name == "bzip2":
        return bz2.decompress
    if name == "xz":
        return lzma.decompress
    raise Unsupported(f"codec {name}")


def frames(data: bytes) -> tuple[dict[str, bytes], Optional[Callable[[Any], bytes]], Ints, Ints, Ints]:
    """The blocks of a container file: (metadata, the codec's decompress, None for ``null``, each
    block's start and end in ``data``, each block's record count)."""
    meta, sync, p = header(data)
    decompress = _codec(meta.get("avro.codec", b"null").decode() or "null")
    starts: list[int] = []
    ends: list[int] = []
    counts: list[int] = []
    end = len(data)
    try:
        while p < end:
            count, p = _varint(data, p)
            size, p = _varint(data, p)
            if count < 0 or size < 0 or p + size + 16 > end or data[p + size:p + size + 16] != sync:
                raise Corrupt("a block does not end at the sync marker")
            starts.append(p)
            ends.append(p + size)
            counts.append(count)
            p += size + 16
    except IndexError:
        raise Corrupt("the file ends inside a block's frame") from None
    return meta, decompress, np.array(starts, np.int64), np.array(ends, np.int64), np.array(counts, np.int64)


class _Inflated:
    """Runs of a file's blocks decompressed into one buffer, reused from run to run (fresh memory
    for each would cost the system's page faults again)."""

    def __init__(self, data: bytes, decompress: Callable[[Any], bytes]):
        self.view = memoryview(data)
        self.decompress = decompress
        self.buf: Bytes = np.empty(0, np.uint8)

    def run(self, starts: Ints, ends: Ints) -> tuple[Bytes, Ints, Ints]:
        """Blocks ``starts``/``ends`` decompressed: (buffer, each block's start and end in it)."""
        try:
            raws = [self.decompress(self.view[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]
        except Unsupported:
            raise
        except Exception as e:      # noqa: BLE001 -- each codec's own error: the file is damaged
            raise Corrupt(f"a block does not decompress: {e}") from None
        sizes = np.array([len(r) for r in raws], np.int64)
        out_ends = np.cumsum(sizes)
        out_starts = out_ends - sizes
        total = int(out_ends[-1]) if len(raws) else 0
        if len(self.buf) < total:
            self.buf = np.empty(max(total, 2 * len(self.buf)), np.uint8)
        for raw, at in zip(raws, out_starts.tolist()):
            self.buf[at:at + len(raw)] = np.frombuffer(raw, np.uint8)
        out = self.buf[:total]
        out.flags.writeable = False     # read-only, as a file's own buffer: one compiled signature
        return out, out_starts, out_ends


# ---------------------------------------------------------------------- decode

# records decoded into one chunk of the table's columns (one set of pools and one buffer, reused): a
# whole manifest at once was slower (pools as large as its columns, fresh memory; a cold plan of
# bench.scale's 1M files: 0.5-0.6 s CPU at 8,192 records, 0.7-0.8 s at 32,768, more for the whole)
CHUNK_RECORDS = 8_192


class _Pools:
    """Each slot's columns of values, lengths (strings and bytes) and validity."""

    def __init__(self, prog: Program, records: int, nested: int):
        self.prog = prog
        self.vbase: Ints
        self.lbase: Ints
        self.cap: Ints = np.array([records if t else nested for t in prog.top_level], np.int64)
        self.cnt: Ints = np.zeros(len(prog.slots), np.int64)
        self._layout()
        self.vals: Ints = np.empty(int(self.cap.sum()), np.int64)
        self.valid: Bytes = np.ones(int(self.cap.sum()), np.uint8)
        self.lens: Ints = np.empty(int(self.cap[prog.has_lens].sum()), np.int64)

    def reset(self) -> None:
        """Empty columns, for the next run of blocks (what was decoded has been copied out)."""
        self.cnt[:] = 0
        self.valid[:] = 1

    def _layout(self) -> None:
        self.vbase = np.concatenate([[0], np.cumsum(self.cap)[:-1]]).astype(np.int64)
        lcap = np.where(self.prog.has_lens, self.cap, 0)
        self.lbase = np.where(self.prog.has_lens, np.concatenate([[0], np.cumsum(lcap)[:-1]]), -1).astype(np.int64)

    def grow(self, room: int, done: int, records: int) -> None:
        """Room for ``room`` more values in each nested slot short of it, and for as many values
        per record in the rest of the file as in the ``done`` records decoded so far."""
        old_vals, old_valid, old_lens = self.vals, self.valid, self.lens
        old_vbase, old_lbase = np.array(self.vbase, np.int64), np.array(self.lbase, np.int64)
        short = ~self.prog.top_level & (self.cnt + room > self.cap)
        expect = (self.cnt * records) // max(done, 1) + room
        self.cap[short] = np.maximum(np.maximum(self.cap[short] * 2, self.cnt[short] + room), expect[short])
        self._layout()
        vals = np.empty(int(self.cap.sum()), np.int64)
        valid = np.ones(int(self.cap.sum()), np.uint8)
        lens = np.empty(int(self.cap[self.prog.has_lens].sum()), np.int64)
        for s in range(len(self.cap)):
            n, a, b = int(self.cnt[s]), int(old_vbase[s]), int(self.vbase[s])
            vals[b:b + n] = old_vals[a:a + n]
            valid[b:b + n] = old_valid[a:a + n]
            if self.lbase[s] >= 0:
                la, lb = int(old_lbase[s]), int(self.lbase[s])
                lens[lb:lb + n] = old_lens[la:la + n]
        self.vals, self.valid, self.lens = vals, valid, lens

    def column(self, slot: int) -> tuple[Ints, Mask, Optional[Ints]]:
        n, b = int(self.cnt[slot]), int(self.vbase[slot])
        lb = int(self.lbase[slot])
        return (self.vals[b:b + n], self.valid[b:b + n] != 0,
                self.lens[lb:lb + n] if lb >= 0 else None)


def decode(data: bytes, drop: Sequence[str] = (), blocks: Optional[Ints] = None) -> pa.Table:
    """The records of the container file ``data`` as an Arrow table, one row per record, its
    columns the top-level fields of the writer's schema less those ``drop`` names (dotted paths
    of fields read past, not kept: a projection, so one the schema does not have is no error).
    ``blocks`` (indexes into the file's blocks, ``frames``' order, ascending) decodes the records
    of those blocks only, in order; None: every block."""
    meta, decompress, starts, ends, counts = frames(data)
    if blocks is not None:
        if len(blocks) and (int(blocks.min()) < 0 or int(blocks.max()) >= len(starts)):
            raise ValueError(f"blocks {blocks.tolist()} are not all among the file's {len(starts)}")
        starts, ends, counts = starts[blocks], ends[blocks], counts[blocks]
    try:
        schema = json.loads(meta["avro.schema"])
    except (KeyError, ValueError):
        raise Corrupt("no readable avro.schema in the header") from None
    prog = Program(schema, drop)
    kernel = numba_cache.kernel()
    groups = _groups(counts)
    most = max(n for _, _, n in groups)
    biggest = int((ends - starts).max()) if len(starts) else 0
    # room for four items a record in each array or map (Iceberg's metrics maps hold one per column);
    # more grows the pools
    pools = _Pools(prog, most, 4 * most + biggest + 1)
    inflated = None if decompress is None else _Inflated(data, decompress)
    whole: Bytes = np.frombuffer(data, np.uint8)
    kept = [c for c in prog.root.children if c.kept]
    batches: list[pa.RecordBatch] = []
    for first, last, records in groups:
        buf, run_starts, run_ends = ((whole, starts[first:last], ends[first:last]) if inflated is None
                                     else inflated.run(starts[first:last], ends[first:last]))
        run_counts = counts[first:last]
        pools.reset()
        b = 0
        while True:
            b = kernel.decode_blocks(buf, run_starts, run_ends, run_counts, b, len(run_counts), prog.kind, prog.end,
                                     prog.nullbr, prog.slot, prog.fsize, prog.top_level, pools.cap, pools.cnt,
                                     pools.vbase, pools.lbase, pools.vbase, pools.vals, pools.lens, pools.valid)
            if b == kernel.CORRUPT:
                raise Corrupt("a block's records do not decode with the file's schema")
            if b >= len(run_counts):
                break
            pools.grow(int(run_ends[b] - run_starts[b]) + 1, int(run_counts[:b].sum()), records)
        batches.append(pa.RecordBatch.from_arrays([_array(c, pools, buf, kernel) for c in kept],
                                                  names=[c.name for c in kept]))
    return pa.Table.from_batches(batches)


def _groups(counts: Ints) -> list[tuple[int, int, int]]:
    """The file's blocks in runs of about ``CHUNK_RECORDS`` records: (first block, block after the
    last, records); one run of no blocks for a file of none."""
    out: list[tuple[int, int, int]] = []
    first = held = 0
    for b, n in enumerate(counts.tolist()):
        held += n
        if held >= CHUNK_RECORDS:
            out.append((first, b + 1, held))
            first, held = b + 1, 0
    if held or not out:
        out.append((first, len(counts), held))
    return out


def _bitmap(valid: np.ndarray) -> tuple[Optional[pa.Buffer], int]:
    nulls = len(valid) - int(np.count_nonzero(valid))
    if nulls == 0:
        return None, 0
    return pa.py_buffer(np.packbits(valid, bitorder="little")), nulls


def _mask(valid: np.ndarray) -> Optional[pa.Array]:
    return None if bool(valid.all()) else arrow_of(~valid.astype(np.bool_))


def _offsets(sizes: np.ndarray) -> tuple[np.ndarray, bool]:
    """Offsets of values of ``sizes``, and whether they need 64 bits."""
    out = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=out[1:])
    large = bool(out[-1] >= 2**31)
    return (out if large else out.astype(np.int32)), large


def _array(node: Node, pools: _Pools, buf: np.ndarray, kernel: Any) -> pa.Array:
    vals, valid, lens = pools.column(node.slot)
    n = len(vals)
    bitmap, nulls = _bitmap(valid)
    k = node.kind
    if k in (INT, LONG, FLOAT, DOUBLE):
        # copies, never views of the pools (an array holds its buffer: a view would hold them all)
        data: npt.NDArray[Any]
        if k == INT:
            data = vals.astype(np.int32)
        elif k == LONG:
            data = np.array(vals, np.int64)
        elif k == FLOAT:
            data = np.frombuffer(vals.astype(np.uint32).tobytes(), np.float32)
        else:
            data = np.frombuffer(vals.tobytes(), np.float64)
        typ = node.arrow or {INT: pa.int32(), LONG: pa.int64(), FLOAT: pa.float32(), DOUBLE: pa.float64()}[k]
        return pa.Array.from_buffers(typ, n, [bitmap, pa.py_buffer(np.ascontiguousarray(data))], nulls)
    if k == BOOLEAN:
        bits = pa.py_buffer(np.packbits(vals.astype(np.bool_), bitorder="little"))
        return pa.Array.from_buffers(pa.bool_(), n, [bitmap, bits], nulls)
    if k == NULL:
        return pa.nulls(n)
    if k in (STRING, BYTES, FIXED):
        sizes = lens if lens is not None else np.full(n, node.size, np.int64)
        offsets, large = _offsets(sizes)
        out = np.empty(int(offsets[-1]), np.uint8)
        kernel.gather(buf, vals, sizes, offsets.astype(np.int64), out)
        if k == FIXED:
            return pa.Array.from_buffers(pa.binary(node.size), n, [bitmap, pa.py_buffer(out)], nulls)
        typ = (pa.large_string() if large else pa.string()) if k == STRING else (
            pa.large_binary() if large else pa.binary())
        arr = pa.Array.from_buffers(typ, n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(out)], nulls)
        if k == STRING:
            try:
                arr.validate(full=True)
            except pa.ArrowInvalid as e:
                raise Corrupt(f"field {node.name}: {e}") from None
        return arr
    if k == RECORD:
        kids = [c for c in node.children if c.kept]
        arrays = [_array(c, pools, buf, kernel) for c in kids]
        if not arrays:      # a record of no fields (an unpartitioned table's partition), or none kept
            return pa.Array.from_buffers(pa.struct([]), n, [bitmap], nulls, children=[])
        return pa.StructArray.from_arrays(arrays, names=[c.name for c in kids], mask=_mask(valid))
    offsets, large = _offsets(vals)
    if large:
        raise Unsupported("more than 2**31 items in one array column")
    if k == MAP or node.iceberg_map:
        kv = node.children if k == MAP else node.children[0].children
        keys, items = (_array(c, pools, buf, kernel) for c in kv)
        return pa.MapArray.from_arrays(arrow_of(offsets), keys, items, mask=_mask(valid))
    item = _array(node.children[0], pools, buf, kernel)
    return pa.ListArray.from_arrays(arrow_of(offsets), item, mask=_mask(valid))
