"""Z-order values, as Iceberg's ``rewrite_data_files`` with ``sort_order => 'zorder(c1, c2)'`` computes them.

Each column's values become byte strings whose unsigned, big-endian comparison orders them as the
values are ordered (Iceberg's ``ZOrderByteUtils``), every value of a column the same length:

- whole numbers (tinyint to long; dates as days, timestamps as whole seconds, as Iceberg's
  Spark job casts them to long): 8 bytes, the two's complement with its sign bit flipped;
- floats and doubles: the double's IEEE 754 bits (NaN as the one canonical NaN), negatives with
  every bit flipped, the rest with the sign bit flipped;
- strings: the first ``var_length`` bytes of the UTF-8 form (a character that does not fit whole
  is left out), zero-padded; binary: the first ``var_length`` bytes, zero-padded;
- booleans: 0x81 then seven zero bytes for true, eight zero bytes for false;
- a null: all zero bytes (first).

The z-value interleaves those bytes' bits, most significant first: bit 7 of byte 0 of each column in
turn, then bit 6, ...; a column with no byte left at a position is skipped. It is cut at
``max_output`` bytes (Iceberg's ``max-output-size``).

The functions work on whole Arrow arrays (the Spark tasks call them on each batch); rows are
numpy ``uint8`` matrices, one row per value.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

Bytes = npt.NDArray[np.uint8]
Words = npt.NDArray[np.uint64]

PRIMITIVE_SIZE = 8                 # bytes of every fixed-width column (ZOrderByteUtils.PRIMITIVE_BUFFER_SIZE)
WHOLE, FLOATING, STRING, BINARY, BOOLEAN = "whole", "floating", "string", "binary", "boolean"
_SIGN = np.uint64(1 << 63)
_CANONICAL_NAN = np.uint64(0x7FF8000000000000)


def _nulls(arr: pa.Array) -> npt.NDArray[np.bool_]:
    return np.asarray(arr.is_null(), dtype=bool)


def _longs_as_bytes(values: Words) -> Bytes:
    """uint64 values -> (n, 8) big-endian bytes."""
    raw = np.frombuffer(values.astype(">u8").tobytes(), dtype=np.uint8)
    return np.array(np.reshape(raw, (len(values), PRIMITIVE_SIZE)))      # a writable copy


def as_words(arr: pa.Array, arrow_type: pa.DataType, numpy_type: type[np.generic], fill: object) -> Words:
    """An Arrow array's values, nulls as ``fill``, cast to ``arrow_type`` and read as ``numpy_type``,
    reinterpreted bit for bit as uint64 words (a new array)."""
    values = np.asarray(arr.cast(arrow_type).fill_null(fill), dtype=numpy_type)
    return np.array(np.frombuffer(values.tobytes(), dtype=np.uint64))


def whole_number_bytes(arr: pa.Array) -> Bytes:
    """Whole numbers (any integer Arrow type) -> (n, 8): sign bit flipped, big-endian."""
    values = as_words(arr, pa.int64(), np.int64, 0) ^ _SIGN
    out = _longs_as_bytes(values)
    out[_nulls(arr)] = 0
    return out


def floating_bytes(arr: pa.Array) -> Bytes:
    """Floats and doubles (as doubles) -> (n, 8): negatives' bits all flipped, others' sign bit."""
    bits = as_words(arr, pa.float64(), np.float64, 0.0)
    doubles = np.asarray(arr.cast(pa.float64()).fill_null(0.0), dtype=np.float64)
    bits[np.isnan(doubles)] = _CANONICAL_NAN
    negative = (bits & _SIGN) != 0
    out = _longs_as_bytes(np.where(negative, ~bits, bits ^ _SIGN))
    out[_nulls(arr)] = 0
    return out


def _utf8_prefix(text: str, length: int) -> bytes:
    """The UTF-8 bytes of ``text`` up to ``length``, never part of a character."""
    data = text.encode("utf-8")
    if len(data) <= length:
        return data
    cut = length
    while cut > 0 and (data[cut] & 0xC0) == 0x80:     # data[cut] continues a character: leave it out
        cut -= 1
    return data[:cut]


def _fixed(values: Sequence[bytes | None], length: int) -> Bytes:
    out = np.zeros((len(values), length), dtype=np.uint8)
    for i, v in enumerate(values):
        if v:
            out[i, :len(v)] = np.frombuffer(v, dtype=np.uint8)
    return out


def string_bytes(arr: pa.Array, length: int) -> Bytes:
    return _fixed([None if v is None else _utf8_prefix(v, length) for v in arr.to_pylist()], length)


def binary_bytes(arr: pa.Array, length: int) -> Bytes:
    return _fixed([None if v is None else bytes(v[:length]) for v in arr.to_pylist()], length)


def boolean_bytes(arr: pa.Array) -> Bytes:
    out = np.zeros((len(arr), PRIMITIVE_SIZE), dtype=np.uint8)
    out[np.asarray(arr.fill_null(False), dtype=bool), 0] = 0x81
    return out


def ordered_bytes(arr: pa.Array, kind: str, var_length: int = PRIMITIVE_SIZE) -> Bytes:
    """One column's values as (n, width) ordered bytes; ``kind`` is one of WHOLE, FLOATING,
    STRING, BINARY, BOOLEAN; ``var_length`` the width of strings and binary."""
    if kind == WHOLE:
        return whole_number_bytes(arr)
    if kind == FLOATING:
        return floating_bytes(arr)
    if kind == STRING:
        return string_bytes(arr, var_length)
    if kind == BINARY:
        return binary_bytes(arr, var_length)
    if kind == BOOLEAN:
        return boolean_bytes(arr)
    raise ValueError(f"no z-order bytes for kind {kind!r}")


def interleave_order(widths: Sequence[int], out_size: int) -> list[tuple[int, int]]:
    """Which input bit makes each output bit: ``(column, bit index within that column's bytes)``
    for the ``out_size * 8`` output bits, most significant first."""
    order: list[tuple[int, int]] = []
    for byte in range(max(widths, default=0)):
        for bit in range(8):
            for col, width in enumerate(widths):
                if byte < width:
                    order.append((col, byte * 8 + bit))
    return order[:out_size * 8]


def interleave(columns: Sequence[Bytes], max_output: int | None = None) -> Bytes:
    """(n, width_i) byte matrices -> (n, out) z-values, out = min(sum of widths, max_output)."""
    widths = [int(c.shape[1]) for c in columns]
    out_size = sum(widths) if max_output is None else min(sum(widths), max_output)
    bits = [np.unpackbits(c, axis=1) for c in columns]
    offsets = np.cumsum([0] + [b.shape[1] for b in bits])[:-1]
    index = [offsets[col] + bit for col, bit in interleave_order(widths, out_size)]
    return np.packbits(np.hstack(bits)[:, index], axis=1)


def z_values(arrays: Sequence[pa.Array], kinds: Sequence[str], var_length: int = PRIMITIVE_SIZE,
             max_output: int | None = None) -> pa.Array:
    """The z-value of each row of ``arrays`` (one per z-order column, their ``kinds``)."""
    matrix = interleave([ordered_bytes(a, k, var_length) for a, k in zip(arrays, kinds)], max_output)
    width = matrix.shape[1]
    offsets = np.arange(0, (len(matrix) + 1) * width, width, dtype=np.int32)
    return pa.BinaryArray.from_buffers(pa.binary(), len(matrix),
                                       [None, pa.py_buffer(offsets), pa.py_buffer(matrix.tobytes())])
