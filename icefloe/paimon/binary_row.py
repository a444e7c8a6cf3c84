# pyright: strict
"""Paimon's BinaryRow: the byte layout of partitions, bucket keys and statistics rows.

Layout of a row of ``n`` fields (all little-endian)::

    +--------------------------+---------------------+------------------------+
    | header + null bits       | n fixed 8-byte slots| variable-length part   |
    | ceil((n + 8) / 64) words | one per field       | 8-byte aligned chunks  |
    +--------------------------+---------------------+------------------------+

* byte 0 is the row kind (0 = INSERT); the null bit of field ``i`` is bit ``i + 8``.
* Fixed-size values sit in their slot: BOOLEAN/TINYINT 1 byte, SMALLINT 2, INT, DATE
  (days), TIME (millis) and FLOAT 4, BIGINT and DOUBLE 8; a compact DECIMAL
  (precision <= 18) is its unscaled long; a compact TIMESTAMP (precision <= 3) is
  epoch milliseconds.
* Strings and binaries of at most 7 bytes live in the slot itself: the bytes
  first, and the slot's last byte is ``0x80 | length`` (the high bit marks it).
  Longer ones go to the variable part and the slot holds ``offset << 32 | length``
  (offset from the start of the row), the bytes zero-padded to a multiple of 8.
* A non-compact DECIMAL reserves 16 bytes in the variable part for its unscaled
  value (Java ``BigInteger.toByteArray``: minimal two's complement, big-endian),
  slot ``offset << 32 | byte length``. A non-compact TIMESTAMP reserves 8 bytes
  for epoch millis, slot ``offset << 32 | nano-of-millisecond``. Both reserve
  their space even when null (Java's ``RowHelper`` writes them with a null value).
* A null field has its null bit set and a zero slot.

Serialised (``SerializationUtils.serializeBinaryRow``) a row is a 4-byte
big-endian field count followed by these bytes; that is what manifests store.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import struct
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from icefloe.errors import CorruptMetadataError
from icefloe.paimon.murmur import hash_bytes_by_words
from icefloe.core.types import IcebergType as DataType
from icefloe.core.types import precision_of, scale_of
from icefloe.paimon.types import is_compact_decimal, is_compact_timestamp, root as root_of

HEADER_BITS = 8
MAX_FIX_PART_DATA_SIZE = 7
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_DATE = _dt.date(1970, 1, 1)
_DEC_CTX = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)


def null_bits_size(arity: int) -> int:
    """Bytes of the header word(s): row kind byte plus one null bit per field."""
    return ((arity + 63 + HEADER_BITS) // 64) * 8


def _round_to_word(n: int) -> int:
    return (n + 7) & ~7


@dataclass(frozen=True)
class BinaryRow:
    """An immutable BinaryRow: its field count and its bytes (without the count prefix)."""

    arity: int
    data: bytes

    def to_bytes(self) -> bytes:
        """The serialised form: 4-byte big-endian arity, then the row bytes."""
        return struct.pack(">i", self.arity) + self.data

    @staticmethod
    def from_bytes(raw: bytes) -> "BinaryRow":
        # Manifests repeat the same rows over and over (partitions, the empty keys of append
        # tables): equal bytes share one immutable object, decoded once.
        row = _INTERNED.get(raw)
        if row is not None:
            return row
        if len(raw) < 4:
            raise ValueError(f"serialised BinaryRow too short ({len(raw)} bytes)")
        row = BinaryRow(int.from_bytes(raw[:4], "big", signed=True), bytes(raw[4:]))
        if len(_INTERNED) >= _INTERN_LIMIT:
            _INTERNED.clear()
        _INTERNED[bytes(raw)] = row
        return row

    def hash_code(self) -> int:
        """Java's ``BinaryRow.hashCode()``: MurmurHash3 of the row bytes by words."""
        return hash_bytes_by_words(self.data)

    def is_null_at(self, pos: int) -> bool:
        i = pos + HEADER_BITS
        return bool(self.data[i // 8] & (1 << (i % 8)))

    def __repr__(self) -> str:
        return f"BinaryRow(arity={self.arity}, {self.data.hex()})"


EMPTY_ROW = BinaryRow(0, bytes(null_bits_size(0)))
_INTERNED: dict[bytes, BinaryRow] = {}
_INTERN_LIMIT = 1 << 16


# --------------------------------------------------------------------------- value conversions
def decimal_unscaled(value: Any, precision: int, scale: int) -> Optional[int]:
    """The unscaled integer of ``value`` at ``scale`` (HALF_UP), or None when it
    exceeds ``precision`` digits (Java's ``Decimal.fromBigDecimal`` returns null)."""
    d = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
    q = d.quantize(decimal.Decimal(1).scaleb(-scale), context=_DEC_CTX)
    unscaled = int(q.scaleb(scale, context=_DEC_CTX))
    if unscaled != 0 and len(str(abs(unscaled))) > precision:
        return None
    return unscaled


def java_big_integer_bytes(n: int) -> bytes:
    """``BigInteger.toByteArray()``: the minimal big-endian two's complement bytes."""
    bits = n.bit_length() if n >= 0 else (~n).bit_length()
    return n.to_bytes(bits // 8 + 1, "big", signed=True)


def timestamp_parts(value: _dt.datetime | tuple[int, int], ltz: bool) -> tuple[int, int]:
    """(epoch millis, nano of millisecond) of a datetime. For TIMESTAMP_LTZ an aware
    datetime is converted to UTC (a naive one is taken as UTC); for TIMESTAMP the
    wall-clock fields are used as they are."""
    if isinstance(value, tuple):
        return value
    if value.tzinfo is not None:
        value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None) if ltz else value.replace(tzinfo=None)
    micros = (value - _EPOCH) // _dt.timedelta(microseconds=1)
    millis, rem_us = divmod(micros, 1000)
    return millis, rem_us * 1000


def datetime_from_parts(millis: int, nanos: int, ltz: bool) -> _dt.datetime:
    v = _EPOCH + _dt.timedelta(milliseconds=millis, microseconds=nanos // 1000)
    return v.replace(tzinfo=_dt.timezone.utc) if ltz else v


def _date_days(v: int | _dt.date) -> int:
    if isinstance(v, int):
        return v
    if isinstance(v, _dt.datetime):
        v = v.date()
    return (v - _EPOCH_DATE).days


def _time_millis(v: int | _dt.time) -> int:
    if isinstance(v, int):
        return v
    return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000


# --------------------------------------------------------------------------- encode
def encode_row(values: Sequence[Any], types: Sequence[DataType]) -> BinaryRow:
    """Encode python values (None for null) of the given Paimon types as a BinaryRow."""
    if len(values) != len(types):
        raise ValueError(f"{len(values)} values for {len(types)} types")
    arity = len(types)
    nb = null_bits_size(arity)
    fixed = bytearray(nb + 8 * arity)  # row kind INSERT = 0 in byte 0
    var = bytearray()
    base = len(fixed)

    def put_slot(i: int, raw: bytes) -> None:
        off = nb + 8 * i
        fixed[off:off + len(raw)] = raw

    def var_append(raw: bytes, reserve: int) -> int:
        offset = base + len(var)
        var.extend(raw)
        var.extend(bytes(reserve - len(raw)))
        return offset

    for i, (v, t) in enumerate(zip(values, types)):
        root = root_of(t)
        if v is None:
            bit = i + HEADER_BITS
            fixed[bit // 8] |= 1 << (bit % 8)
            # Java reserves the variable-length space of non-compact decimals and
            # timestamps even for a null, so the row can be updated in place.
            if root == "DECIMAL" and not is_compact_decimal(precision_of(t)):
                put_slot(i, struct.pack("<q", var_append(b"", 16) << 32))
            elif root in ("TIMESTAMP", "TIMESTAMP_LTZ") and not is_compact_timestamp(precision_of(t)):
                put_slot(i, struct.pack("<q", var_append(b"", 8) << 32))
            continue
        if root is None:
            raise ValueError(f"a BinaryRow can only hold atomic values, not {t}")
        if root == "BOOLEAN":
            put_slot(i, b"\x01" if v else b"\x00")
        elif root == "TINYINT":
            put_slot(i, struct.pack("<b", v))
        elif root == "SMALLINT":
            put_slot(i, struct.pack("<h", v))
        elif root == "INT":
            put_slot(i, struct.pack("<i", v))
        elif root == "DATE":
            put_slot(i, struct.pack("<i", _date_days(v)))
        elif root == "TIME":
            put_slot(i, struct.pack("<i", _time_millis(v)))
        elif root == "BIGINT":
            put_slot(i, struct.pack("<q", v))
        elif root == "FLOAT":
            put_slot(i, struct.pack("<f", v))
        elif root == "DOUBLE":
            put_slot(i, struct.pack("<d", v))
        elif root in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            raw = v.encode("utf-8") if isinstance(v, str) else bytes(v)
            if len(raw) <= MAX_FIX_PART_DATA_SIZE:
                put_slot(i, raw.ljust(7, b"\x00") + bytes([0x80 | len(raw)]))
            else:
                offset = var_append(raw, _round_to_word(len(raw)))
                put_slot(i, struct.pack("<q", (offset << 32) | len(raw)))
        elif root == "DECIMAL":
            unscaled = decimal_unscaled(v, precision_of(t), scale_of(t))
            if unscaled is None:  # overflow is stored as null, as Java does
                return encode_row([None if j == i else x for j, x in enumerate(values)], types)
            if is_compact_decimal(precision_of(t)):
                put_slot(i, struct.pack("<q", unscaled))
            else:
                raw = java_big_integer_bytes(unscaled)
                offset = var_append(raw, 16)
                put_slot(i, struct.pack("<q", (offset << 32) | len(raw)))
        elif root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            millis, nanos = timestamp_parts(v, root == "TIMESTAMP_LTZ")
            if is_compact_timestamp(precision_of(t)):
                put_slot(i, struct.pack("<q", millis))
            else:
                offset = var_append(struct.pack("<q", millis), 8)
                put_slot(i, struct.pack("<q", (offset << 32) | nanos))
        else:  # pragma: no cover - every atomic root is handled above
            raise ValueError(f"cannot encode {t} in a BinaryRow")
    return BinaryRow(arity, bytes(fixed) + bytes(var))


# --------------------------------------------------------------------------- decode
def decode_row(row: BinaryRow, types: Sequence[DataType]) -> tuple[Any, ...]:
    """The python values of a BinaryRow (nested-type fields decode as None)."""
    if row.arity != len(types):
        raise CorruptMetadataError("<BinaryRow>", f"row has {row.arity} fields, expected {len(types)}")
    data = row.data
    nb = null_bits_size(row.arity)
    return tuple(decode_field(data, nb, i, t) for i, t in enumerate(types))


def decode_field(data: bytes, nb: int, i: int, t: DataType) -> Any:
    """Field ``i`` (of type ``t``) of a BinaryRow's bytes whose null bits take ``nb`` bytes:
    one column's statistic without decoding the others."""
    bit = i + HEADER_BITS
    if data[bit // 8] & (1 << (bit % 8)) or not t.is_primitive:
        return None
    off = nb + 8 * i
    root = root_of(t)
    if root == "BIGINT":
        return struct.unpack_from("<q", data, off)[0]
    if root == "INT":
        return struct.unpack_from("<i", data, off)[0]
    if root == "DOUBLE":
        return struct.unpack_from("<d", data, off)[0]
    (slot,) = struct.unpack_from("<q", data, off)
    if root == "BOOLEAN":
        return data[off] != 0
    if root == "TINYINT":
        return struct.unpack_from("<b", data, off)[0]
    if root == "SMALLINT":
        return struct.unpack_from("<h", data, off)[0]
    if root == "DATE":
        return _EPOCH_DATE + _dt.timedelta(days=struct.unpack_from("<i", data, off)[0])
    if root == "TIME":
        ms = struct.unpack_from("<i", data, off)[0]
        return (_dt.datetime.min + _dt.timedelta(milliseconds=ms)).time()
    if root == "FLOAT":
        return struct.unpack_from("<f", data, off)[0]
    if root in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
        raw = _var_bytes(data, off, slot)
        return raw.decode("utf-8") if root in ("CHAR", "VARCHAR") else raw
    if root == "DECIMAL":
        if is_compact_decimal(precision_of(t)):
            unscaled = slot
        else:
            start, length = (slot >> 32) & 0xFFFFFFFF, slot & 0xFFFFFFFF
            unscaled = int.from_bytes(data[start:start + length], "big", signed=True)
        return decimal.Decimal(unscaled).scaleb(-scale_of(t))
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        ltz = root == "TIMESTAMP_LTZ"
        if is_compact_timestamp(precision_of(t)):
            return datetime_from_parts(slot, 0, ltz)
        start = (slot >> 32) & 0xFFFFFFFF
        (millis,) = struct.unpack_from("<q", data, start)
        return datetime_from_parts(millis, slot & 0xFFFFFFFF, ltz)
    return None  # pragma: no cover - every atomic root is handled above


def _var_bytes(data: bytes, off: int, slot: int) -> bytes:
    if data[off + 7] & 0x80:  # inlined: length in the low 7 bits of the last slot byte
        length = data[off + 7] & 0x7F
        return bytes(data[off:off + length])
    start, length = (slot >> 32) & 0xFFFFFFFF, slot & 0xFFFFFFFF
    return bytes(data[start:start + length])
