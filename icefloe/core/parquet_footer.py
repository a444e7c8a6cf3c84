"""Patching a Parquet file's footer: the ``VARIANT`` logical type that pyarrow cannot write.

A Parquet footer is the Thrift ``FileMetaData`` struct in the compact protocol, followed by its
4-byte little-endian length and ``PAR1``. This module has

* a small, exact codec for the Thrift compact protocol: :func:`decode_struct` turns bytes into a
  generic tree (:class:`Struct`, :class:`Field`, :class:`List`, :class:`Map`, ``bytes``, ``bool``,
  ``int``, ``float``) that keeps every field, known or not, and :func:`encode_struct` turns it back
  into the same bytes;
* :func:`annotate_variants`, which sets ``LogicalType.VARIANT`` (spec version 1) on the schema
  groups of variant columns. Only the footer's ``schema`` list is decoded and re-encoded; the
  bytes before and after it (row groups, statistics, key-value metadata) are kept verbatim;
* :class:`FooterPatchingSink`, a file-like object for ``pq.ParquetWriter`` that passes the data
  through to the real output and holds back only what the writer writes at close (page indexes,
  bloom filters, the footer), so the footer can be patched before it is written;
* :func:`check_footer_patch`, which runs a patch on the footer of an empty file of the same Arrow
  schema, so a bad patch fails before any data is written.

Facts from parquet-format's ``parquet.thrift``: ``FileMetaData.schema`` is field 2, a depth-first
list of ``SchemaElement`` (1 type, 3 repetition_type, 4 name, 5 num_children, 6 converted_type,
9 field_id, 10 logicalType); ``LogicalType`` is a union whose member 16 is ``VariantType VARIANT``;
``VariantType`` has ``1: optional i8 specification_version``.
"""
from __future__ import annotations

import struct as _struct
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Protocol, Sequence

# Compact protocol type codes. A decoded boolean field has type BOOL (the code of "true").
STOP, BOOL, FALSE, I8, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT, UUID = range(14)
_BOOL_TYPES = (BOOL, FALSE)
_MAX_DEPTH = 64

MAGIC = b"PAR1"

# parquet.thrift field ids used here
_FMD_SCHEMA = 2
_SE_TYPE, _SE_REPETITION, _SE_NAME, _SE_NUM_CHILDREN, _SE_CONVERTED = 1, 3, 4, 5, 6
_SE_LOGICAL = 10
_LT_VARIANT = 16
_VARIANT_SPEC_VERSION = 1
_BYTE_ARRAY = 6
_REQUIRED = 0


@dataclass
class Field:
    """One field of a struct: its id, compact type code and value."""
    id: int
    type: int
    value: Any


@dataclass
class Struct:
    """A Thrift struct (or union) as its fields in wire order."""
    fields: list[Field] = field(default_factory=list[Field])

    def get(self, fid: int, default: Any = None) -> Any:
        for f in self.fields:
            if f.id == fid:
                return f.value
        return default

    def set(self, fid: int, ftype: int, value: Any) -> None:
        """Replace field ``fid``, or insert it before the first field with a larger id."""
        for i, f in enumerate(self.fields):
            if f.id == fid:
                self.fields[i] = Field(fid, ftype, value)
                return
            if f.id > fid:
                self.fields.insert(i, Field(fid, ftype, value))
                return
        self.fields.append(Field(fid, ftype, value))


@dataclass
class List:
    """A list or set (which one is given by the enclosing type code) and its element type."""
    elem_type: int
    items: list[Any] = field(default_factory=list[Any])


@dataclass
class Map:
    """A map; an empty map has no key and value types on the wire (they are 0 here)."""
    key_type: int
    value_type: int
    items: list[tuple[Any, Any]] = field(default_factory=list[tuple[Any, Any]])


# ---------------------------------------------------------------------------------------------
# decoding

class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes, pos: int = 0):
        self.data = data
        self.pos = pos

    def byte(self) -> int:
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        data, pos, shift, out = self.data, self.pos, 0, 0
        while True:
            b = data[pos]
            pos += 1
            out |= (b & 0x7F) << shift
            if b < 0x80:
                self.pos = pos
                return out
            shift += 7
            if shift > 63:
                raise ValueError("Thrift varint longer than 10 bytes")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise ValueError("Thrift data ends inside a value")
        out = bytes(self.data[self.pos:end])
        self.pos = end
        return out

    def value(self, ttype: int, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise ValueError("Thrift values nested too deeply")
        if ttype == STRUCT:
            return self.struct(depth + 1)
        if ttype in (I16, I32, I64):
            return self.zigzag()
        if ttype == BINARY:
            return self.take(self.varint())
        if ttype in (LIST, SET):
            head = self.byte()
            size, etype = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            return List(etype, [self.value(etype, depth + 1) for _ in range(size)])
        if ttype in _BOOL_TYPES:           # an element of a container: one byte
            return self.byte() == 1
        if ttype == I8:
            b = self.byte()
            return b - 256 if b > 127 else b
        if ttype == DOUBLE:
            return _struct.unpack("<d", self.take(8))[0]
        if ttype == MAP:
            size = self.varint()
            if size == 0:
                return Map(0, 0, [])
            head = self.byte()
            kt, vt = head >> 4, head & 0x0F
            return Map(kt, vt, [(self.value(kt, depth + 1), self.value(vt, depth + 1)) for _ in range(size)])
        if ttype == UUID:
            return self.take(16)
        raise ValueError(f"unknown Thrift compact type {ttype} at byte {self.pos}")

    def field_header(self, last: int) -> Optional[tuple[int, int]]:
        """(field id, type) of the next field, or None at the struct's end."""
        head = self.byte()
        if head == STOP:
            return None
        delta, ttype = head >> 4, head & 0x0F
        fid = last + delta if delta else self.zigzag()
        return fid, ttype

    def struct(self, depth: int = 0) -> Struct:
        out: list[Field] = []
        last = 0
        while True:
            h = self.field_header(last)
            if h is None:
                return Struct(out)
            fid, ttype = h
            if ttype in _BOOL_TYPES:
                out.append(Field(fid, BOOL, ttype == BOOL))
            else:
                out.append(Field(fid, ttype, self.value(ttype, depth)))
            last = fid


def decode_struct(data: bytes, pos: int = 0) -> tuple[Struct, int]:
    """Decode one compact-protocol struct at ``data[pos:]``; return (struct, end position)."""
    r = _Reader(data, pos)
    try:
        s = r.struct()
    except IndexError:
        raise ValueError("Thrift data ends inside a struct") from None
    return s, r.pos


# ---------------------------------------------------------------------------------------------
# encoding

def _varint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _zigzag(out: bytearray, n: int, bits: int) -> None:
    if not -(1 << (bits - 1)) <= n < (1 << (bits - 1)):
        raise ValueError(f"{n} does not fit a {bits}-bit Thrift integer")
    _varint(out, (n << 1) ^ (n >> (bits - 1)))


def _encode_value(out: bytearray, ttype: int, v: Any) -> None:
    if ttype == STRUCT:
        _encode_struct(out, v)
    elif ttype == I16:
        _zigzag(out, v, 16)
    elif ttype == I32:
        _zigzag(out, v, 32)
    elif ttype == I64:
        _zigzag(out, v, 64)
    elif ttype == BINARY:
        _varint(out, len(v))
        out += v
    elif ttype in (LIST, SET):
        n = len(v.items)
        if n < 15:
            out.append((n << 4) | v.elem_type)
        else:
            out.append(0xF0 | v.elem_type)
            _varint(out, n)
        for item in v.items:
            _encode_value(out, v.elem_type, item)
    elif ttype in _BOOL_TYPES:
        out.append(BOOL if v else FALSE)   # like the C++ and Java Thrift libraries
    elif ttype == I8:
        if not -128 <= v <= 127:
            raise ValueError(f"{v} does not fit a Thrift i8")
        out.append(v & 0xFF)
    elif ttype == DOUBLE:
        out += _struct.pack("<d", v)
    elif ttype == MAP:
        _varint(out, len(v.items))
        if v.items:
            out.append((v.key_type << 4) | v.value_type)
            for k, x in v.items:
                _encode_value(out, v.key_type, k)
                _encode_value(out, v.value_type, x)
    elif ttype == UUID:
        if len(v) != 16:
            raise ValueError("a Thrift uuid is 16 bytes")
        out += v
    else:
        raise ValueError(f"unknown Thrift compact type {ttype}")


def _field_header(out: bytearray, fid: int, ttype: int, last: int) -> None:
    delta = fid - last
    if 0 < delta <= 15:
        out.append((delta << 4) | ttype)
    else:
        out.append(ttype)
        _zigzag(out, fid, 16)


def _encode_struct(out: bytearray, s: Struct) -> None:
    last = 0
    for f in s.fields:
        if f.type in _BOOL_TYPES:
            _field_header(out, f.id, BOOL if f.value else FALSE, last)
        else:
            _field_header(out, f.id, f.type, last)
            _encode_value(out, f.type, f.value)
        last = f.id
    out.append(STOP)


def encode_struct(s: Struct) -> bytes:
    """The compact-protocol bytes of ``s``."""
    out = bytearray()
    _encode_struct(out, s)
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# the VARIANT annotation

def _schema_span(footer: bytes) -> tuple[int, int, List]:
    """(start, end, decoded list) of the value of ``FileMetaData.schema`` in ``footer``."""
    r, last = _Reader(footer), 0
    try:
        while True:
            h = r.field_header(last)
            if h is None:
                raise ValueError("Parquet footer has no schema")
            fid, ttype = h
            start = r.pos
            value = r.value(ttype, 0) if ttype not in _BOOL_TYPES else None
            if fid == _FMD_SCHEMA:
                if ttype != LIST or not isinstance(value, List):      # (a LIST field's value is a List)
                    raise ValueError("Parquet footer's schema is not a list")
                return start, r.pos, value
            last = fid
    except IndexError:
        raise ValueError("Parquet footer ends inside its schema") from None


def _children(elements: list[Any]) -> list[list[int]]:
    """For each schema element, the indexes of its children (the list is depth-first)."""
    kids: list[list[int]] = [[] for _ in elements]
    stack: list[list[int]] = []     # [index, children still to come]
    for i, e in enumerate(elements):
        if not isinstance(e, Struct):
            raise ValueError("Parquet schema element is not a struct")
        if stack:
            top = stack[-1]
            kids[top[0]].append(i)
            top[1] -= 1
            if top[1] == 0:
                stack.pop()
        elif i:
            raise ValueError("Parquet schema has elements after its root's subtree")
        n = e.get(_SE_NUM_CHILDREN) or 0
        if n > 0:
            stack.append([i, n])
    if stack:
        raise ValueError("Parquet schema ends before all of its groups' children")
    return kids


def _name(e: Struct) -> str:
    return e.get(_SE_NAME, b"").decode("utf-8", "replace")


def _annotate(elements: list[Struct], kids: list[list[int]], path: tuple[str, ...]) -> None:
    if not path:
        raise ValueError("variant path is empty")
    where = ".".join(path)
    node = 0
    for name in path:
        hits = [c for c in kids[node] if _name(elements[c]) == name]
        if len(hits) != 1:
            raise ValueError(f"variant path {where!r}: {'no' if not hits else 'more than one'} field {name!r}")
        node = hits[0]
    g = elements[node]
    if g.get(_SE_TYPE) is not None or g.get(_SE_NUM_CHILDREN) is None:
        raise ValueError(f"variant path {where!r} names a primitive column, not a group")
    parts = {_name(elements[c]): elements[c] for c in kids[node]}
    if len(kids[node]) != 2 or set(parts) != {"metadata", "value"}:
        raise ValueError(f"variant path {where!r}: the group has fields {sorted(parts)}, not metadata and value")
    for pname, p in parts.items():
        if p.get(_SE_TYPE) != _BYTE_ARRAY or p.get(_SE_LOGICAL) is not None or p.get(_SE_CONVERTED) is not None:
            raise ValueError(f"variant path {where!r}: {pname} is not a plain binary column")
        if p.get(_SE_REPETITION) != _REQUIRED:
            raise ValueError(f"variant path {where!r}: {pname} is not required")
    if g.get(_SE_CONVERTED) is not None:
        raise ValueError(f"variant path {where!r}: the group has a converted type")
    lt = g.get(_SE_LOGICAL)
    if lt is not None and [f.id for f in lt.fields] != [_LT_VARIANT]:
        raise ValueError(f"variant path {where!r}: the group has another logical type")
    version = Struct([Field(1, I8, _VARIANT_SPEC_VERSION)])
    g.set(_SE_LOGICAL, STRUCT, Struct([Field(_LT_VARIANT, STRUCT, version)]))


def annotate_variants(footer: bytes, paths: Iterable[Sequence[str]]) -> bytes:
    """``footer`` (the Thrift ``FileMetaData`` bytes) with the ``VARIANT`` logical type (spec
    version 1) on the groups at ``paths``.

    A path is the Parquet names from a child of the root down, e.g. ``("v",)``, ``("st", "v")``,
    or through a list's or map's own groups, ``("l", "list", "element")``. Each must name a group
    whose only fields are the required binary columns ``metadata`` and ``value``, else ValueError
    (and nothing is changed). Only the schema list is re-encoded; every other byte is kept.
    """
    start, end, schema = _schema_span(footer)
    elements = schema.items
    if not elements:
        raise ValueError("Parquet footer's schema is empty")
    kids = _children(elements)
    for path in paths:
        if isinstance(path, str):
            raise ValueError(f"variant path {path!r} is a string, not a tuple of names")
        _annotate(elements, kids, tuple(path))
    out = bytearray(footer[:start])
    _encode_value(out, LIST, schema)
    out += footer[end:]
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# whole files and streams

Patch = Callable[[bytes], bytes]


class RawSink(Protocol):
    """A binary output stream; a raw (unbuffered) one may write a part of the data, or return None."""

    def write(self, data: Any, /) -> Optional[int]: ...


def split_tail(data: bytes) -> tuple[bytes, bytes]:
    """(bytes before the footer, footer) of the end of a Parquet file: ``data`` must end with the
    footer, its 4-byte little-endian length and ``PAR1``."""
    if len(data) < 8 or data[-4:] != MAGIC:
        raise ValueError("not the end of a Parquet file: it does not end with PAR1 "
                         "(an encrypted footer, PARE, cannot be patched)")
    n = int.from_bytes(data[-8:-4], "little")
    if n > len(data) - 8:
        raise ValueError(f"Parquet footer length {n} is more than the {len(data) - 8} bytes before it")
    return data[:len(data) - 8 - n], data[len(data) - 8 - n:-8]


def _patched_tail(data: bytes, patch: Patch) -> bytes:
    before, footer = split_tail(data)
    new = bytes(patch(footer))
    return b"".join((before, new, len(new).to_bytes(4, "little"), MAGIC))


def patch_file_footer(data: bytes, patch: Patch) -> bytes:
    """A whole Parquet file's bytes with its footer replaced by ``patch(footer)``."""
    if data[:4] != MAGIC:
        raise ValueError("not a Parquet file: it does not start with PAR1")
    return _patched_tail(data, patch)


def check_footer_patch(arrow_schema: Any, patch: Patch, **writer_options: Any) -> None:
    """Run ``patch`` on the footer of an empty Parquet file of ``arrow_schema`` written by
    pyarrow with ``writer_options``: raises (ValueError) as the real write would, before any data
    is written. The Parquet schema depends only on the Arrow schema and these options."""
    import io

    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.ParquetWriter(buf, arrow_schema, **writer_options).close()
    patch_file_footer(buf.getvalue(), patch)


class FooterPatchingSink:
    """A writable file-like object for ``pq.ParquetWriter`` that patches the footer on its way to
    ``raw``.

    Until :meth:`hold`, writes go straight to ``raw``. After it, they are kept in memory: call it
    after the last ``write_table``/``write_batch`` (which write whole row groups) and before the
    writer's ``close``, which writes the page indexes, bloom filters and the footer. :meth:`finish`
    then writes the held bytes with the footer replaced by ``patch(footer)``, a new length and
    ``PAR1``, and returns the file's size (also :attr:`size`).

    If the held bytes are no Parquet file end, or ``patch`` raises, :meth:`finish` writes none of
    them and raises: ``raw`` then holds the data but no footer, which no reader takes for a
    Parquet file, and the caller discards it as after any failed write. Use
    :func:`check_footer_patch` to fail before writing anything.

    pyarrow (``PythonFile``) calls only ``write``; it keeps its own position and neither seeks nor
    flushes nor closes a Python sink. ``tell``, ``flush`` and ``close`` are here all the same;
    ``close`` does not close ``raw``, which stays the caller's.
    """

    def __init__(self, raw: RawSink, patch: Patch):
        self._raw = raw
        self._patch = patch
        self._passed = 0
        self._held: Optional[list[bytes]] = None
        self._held_len = 0
        self._closed = False
        self.size: Optional[int] = None

    def _write_raw(self, data: Any) -> None:
        n = self._raw.write(data)
        if n is not None and n < len(data):     # a raw (unbuffered) stream may write a part
            view = memoryview(data)[n:]
            while view.nbytes:
                k = self._raw.write(view)
                if not k:
                    raise OSError("the output stream accepted no bytes")
                view = view[k:]

    def write(self, data: Any) -> int:
        if self.size is not None:
            raise ValueError("write to a FooterPatchingSink after finish()")
        n = memoryview(data).nbytes
        if self._held is None:
            self._write_raw(data)
            self._passed += n
        else:
            self._held.append(bytes(data))
            self._held_len += n
        return n

    def hold(self) -> None:
        """Keep what is written from now on (the end of the file) for :meth:`finish`."""
        if self._held is None:
            self._held = []

    def finish(self) -> int:
        """Write the held end of the file with its footer patched; return the file's size."""
        if self._held is None:
            raise ValueError("FooterPatchingSink.finish() without hold()")
        if self.size is not None:
            return self.size
        tail = _patched_tail(b"".join(self._held), self._patch)
        self._held = []
        self._write_raw(tail)
        flush = getattr(self._raw, "flush", None)
        if flush is not None:
            flush()
        self.size = self._passed + len(tail)
        return self.size

    def tell(self) -> int:
        """Bytes written by the writer so far; after :meth:`finish`, the file's size."""
        if self.size is not None:
            return self.size
        return self._passed + self._held_len

    def flush(self) -> None:
        if self._held is None:
            flush = getattr(self._raw, "flush", None)
            if flush is not None:
                flush()

    def close(self) -> None:
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readable(self) -> bool:
        return False
