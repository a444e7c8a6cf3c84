# pyright: strict
"""Paimon's ``MurmurHashUtils.hashBytesByWords``: MurmurHash3 x86_32 over 4-byte words.

This is the hash code of a BinaryRow (seed 42, little-endian words, the byte
length mixed in at the end). A BinaryRow is always a multiple of 8 bytes long,
so there is never a tail. ``hash_words`` computes the same hash for many rows
at once, one row per matrix line, with numpy's wrapping uint32 arithmetic.
"""
from __future__ import annotations

import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

DEFAULT_SEED = 42
_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_M32 = 0xFFFFFFFF


def _to_signed(h: int) -> int:
    return h - (1 << 32) if h & 0x80000000 else h


def hash_bytes_by_words(data: bytes, seed: int = DEFAULT_SEED) -> int:
    """The signed 32-bit hash Java computes for ``data`` (length a multiple of 4)."""
    if len(data) % 4:
        raise ValueError("hashBytesByWords needs a length that is a multiple of 4")
    h = seed & _M32
    for (k,) in struct.iter_unpack("<I", data):
        k = (k * _C1) & _M32
        k = ((k << 15) | (k >> 17)) & _M32
        k = (k * _C2) & _M32
        h ^= k
        h = ((h << 13) | (h >> 19)) & _M32
        h = (h * 5 + 0xE6546B64) & _M32
    return _to_signed(_fmix(h ^ len(data)))


def _fmix(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h


def hash_words(words: npt.ArrayLike, seed: int = DEFAULT_SEED) -> npt.NDArray[np.int32]:
    """Hash each line of a (rows x n) uint32 matrix; returns int32 hashes."""
    import numpy as np

    words = np.ascontiguousarray(words, dtype=np.uint32)
    rows, n = words.shape
    h = np.full(rows, seed, dtype=np.uint32)
    c1, c2 = np.uint32(_C1), np.uint32(_C2)
    for j in range(n):
        k = words[:, j] * c1
        k = (k << np.uint32(15)) | (k >> np.uint32(17))
        k = k * c2
        h = h ^ k
        h = (h << np.uint32(13)) | (h >> np.uint32(19))
        h = h * np.uint32(5) + np.uint32(0xE6546B64)
    h = h ^ np.uint32(n * 4)
    h ^= h >> np.uint32(16)
    h = h * np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h = h * np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    # the same bits as signed ints; numpy's stub leaves one overload of view partly untyped
    return h.view(np.int32)  # pyright: ignore[reportUnknownMemberType]
