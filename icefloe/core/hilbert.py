"""Hilbert-curve values, as Paimon's ``order_strategy => 'hilbert'`` sort compaction orders rows.

Every column's value becomes one 64-bit word (Paimon's ``SparkHilbertUDF`` / ``HilbertIndexer``):

- whole numbers: the value as a long (two's complement); tinyint: its one byte, unsigned;
- floats and doubles: the double's IEEE 754 bits;
- strings and binary: the first 8 bytes (UTF-8 for strings), right-aligned in the word;
- booleans: all ones but the sign bit for true, 0 for false;
- dates: days since the epoch; timestamps: whole seconds; decimals: the whole part;
- a null: all ones but the sign bit (``Long.MAX_VALUE``).

The row's position on an n-dimensional Hilbert curve of 63 bits per dimension (Skilling's
transform of the coordinates into the curve's "transposed" form, then their bits interleaved, most
significant first, as the z-order interleave does) orders the rows; only the low 63 bits of each
word take part. The values are compared as unsigned big-endian byte strings of equal length, so a
binary column of them sorts rows along the curve.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from icefloe.core.zorder import Bytes, Words, as_words, interleave

BITS = 63                                  # bits of each coordinate (Paimon's HilbertIndexer)
EMPTY = np.uint64(0x7FFFFFFFFFFFFFFF)      # a null's coordinate
WHOLE, TINY, FLOATING, BYTES, BOOLEAN = "whole", "tiny", "floating", "bytes", "boolean"


def _prefix_word(data: bytes) -> int:
    """The first 8 bytes of ``data`` as a big-endian word, shorter data right-aligned."""
    return int.from_bytes(data[:8], "big")


def coordinates(arr: pa.Array, kind: str) -> Words:
    """One column's values as uint64 coordinates (see the module docstring); ``kind`` is one of
    WHOLE (any integer type, dates and timestamps already as numbers), TINY, FLOATING, BYTES,
    BOOLEAN."""
    nulls = np.asarray(arr.is_null(), dtype=bool)
    if kind in (WHOLE, TINY):
        values = as_words(arr, pa.int64(), np.int64, 0)
        out = values & np.uint64(0xFF) if kind == TINY else values
    elif kind == FLOATING:
        out = as_words(arr, pa.float64(), np.float64, 0.0)
    elif kind == BYTES:
        items = arr.to_pylist()
        out = np.array([0 if v is None else _prefix_word(v.encode("utf-8") if isinstance(v, str) else bytes(v))
                        for v in items], dtype=np.uint64)
    elif kind == BOOLEAN:
        out = np.where(np.asarray(arr.fill_null(False), dtype=bool), EMPTY, np.uint64(0)).astype(np.uint64)
    else:
        raise ValueError(f"no Hilbert coordinate for kind {kind!r}")
    out[nulls] = EMPTY
    return out


def transposed(points: Sequence[Words], bits: int = BITS) -> list[Words]:
    """Skilling's transform: the coordinates (one uint64 array per dimension, ``bits`` bits used)
    into the curve's transposed form, whose interleaved bits are the position on the curve."""
    x: list[Words] = [np.array(p) for p in points]
    n = len(x)
    zero = np.uint64(0)
    q = 1 << (bits - 1)
    while q > 1:                            # undo excess work, from the top bit down
        qw, p = np.uint64(q), np.uint64(q - 1)
        for i in range(n):
            high = np.not_equal(np.bitwise_and(x[i], qw), zero)
            t: Words = np.bitwise_and(np.bitwise_xor(x[0], x[i]), p)
            x0: Words = np.where(high, np.bitwise_xor(x[0], p), np.bitwise_xor(x[0], t))
            if i != 0:
                x[i] = np.where(high, x[i], np.bitwise_xor(x[i], t))
            x[0] = x0
        q >>= 1
    for i in range(1, n):                   # Gray encode
        x[i] = np.bitwise_xor(x[i], x[i - 1])
    t = np.zeros_like(x[0])
    q = 1 << (bits - 1)
    while q > 1:
        t = np.where(np.not_equal(np.bitwise_and(x[n - 1], np.uint64(q)), zero),
                     np.bitwise_xor(t, np.uint64(q - 1)), t)
        q >>= 1
    mask = np.uint64((1 << bits) - 1)
    return [np.bitwise_and(np.bitwise_xor(xi, t), mask) for xi in x]


def hilbert_values(arrays: Sequence[pa.Array], kinds: Sequence[str], bits: int = BITS) -> pa.Array:
    """The Hilbert value of each row of ``arrays`` (one per sort column, their ``kinds``), as
    binary strings of equal length that sort as the positions on the curve."""
    coords = transposed([coordinates(a, k) for a, k in zip(arrays, kinds)], bits)
    # each coordinate's 64-bit big-endian form: its top bit is 0, so the interleave puts n zero
    # bits first and then the 63 bits of every coordinate, most significant first
    columns: list[Bytes] = [np.reshape(np.frombuffer(c.astype(">u8").tobytes(), dtype=np.uint8), (len(c), 8))
               for c in coords]
    matrix = interleave(columns)
    width = matrix.shape[1]
    offsets = np.arange(0, (len(matrix) + 1) * width, width, dtype=np.int32)
    return pa.BinaryArray.from_buffers(pa.binary(), len(matrix),
                                       [None, pa.py_buffer(offsets), pa.py_buffer(matrix.tobytes())])
