# pyright: strict
"""Theta sketches of column values: the ``apache-datasketches-theta-v1`` blobs of Iceberg's
statistics files (Puffin spec, "Blob types").

The spec: a sketch is Apache DataSketches' compact theta sketch, serialized, built from the
column's non-null values in their single-value serialization (table spec, Appendix D: ints and
dates 4 bytes little-endian, longs, times and timestamps 8, floats and doubles their IEEE 754 bits,
booleans one byte, strings their UTF-8 bytes, binary and fixed as they are, uuids their 16 bytes,
decimals the unscaled value's two's complement, big-endian, in as few bytes as it takes), with
DataSketches' default seed (9001); the blob's ``ndv`` property holds the estimate.

Each value's hash is DataSketches' ``MurmurHash3_x64_128(bytes, seed)``, its first 64 bits shifted
right by one. Spark tasks hash their rows (vectorised over values of equal length) and keep the
``K`` smallest distinct hashes (a KMV sketch, theta the next one: a valid theta sketch); the
driver unions the tasks' sketches with the DataSketches library, whose compact serialization is
what Iceberg's Java runtime reads.
"""
from __future__ import annotations

import struct
import uuid

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

# a vector of 64-bit words, as the hash's arithmetic wraps them
Words = NDArray[np.uint64]

SEED = 9001
LG_K = 12                        # DataSketches' default nominal entries: 4096
K = 1 << LG_K
_C1 = np.uint64(0x87C37B91114253D5)
_C2 = np.uint64(0x4CF5AD432745937F)
_MAX_THETA = (1 << 63) - 1
BLOB_TYPE = "apache-datasketches-theta-v1"


def _rotl(x: Words, r: int) -> Words:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _fmix(k: Words) -> Words:
    k = k ^ (k >> np.uint64(33))
    k = k * np.uint64(0xFF51AFD7ED558CCD)
    k = k ^ (k >> np.uint64(33))
    k = k * np.uint64(0xC4CEB9FE1A85EC53)
    return k ^ (k >> np.uint64(33))


def _words(matrix: NDArray[np.uint8], start: int, width: int) -> Words:
    """Little-endian uint64 of ``width`` (<= 8) bytes from column ``start`` of each row."""
    out = np.zeros(len(matrix), dtype=np.uint64)
    for i in range(width):
        out |= matrix[:, start + i].astype(np.uint64) << np.uint64(8 * i)
    return out


def murmur3_first64(matrix: NDArray[np.uint8], seed: int = SEED) -> Words:
    """MurmurHash3_x64_128 of each row of a (n, length) uint8 matrix: its first 64 bits."""
    n, length = matrix.shape
    h1 = np.full(n, seed, dtype=np.uint64)
    h2 = np.full(n, seed, dtype=np.uint64)
    with np.errstate(over="ignore"):
        blocks = length // 16
        for b in range(blocks):
            k1 = _words(matrix, 16 * b, 8)
            k2 = _words(matrix, 16 * b + 8, 8)
            k1 = _rotl(k1 * _C1, 31) * _C2
            h1 = h1 ^ k1
            h1 = _rotl(h1, 27) + h2
            h1 = h1 * np.uint64(5) + np.uint64(0x52DCE729)
            k2 = _rotl(k2 * _C2, 33) * _C1
            h2 = h2 ^ k2
            h2 = _rotl(h2, 31) + h1
            h2 = h2 * np.uint64(5) + np.uint64(0x38495AB5)
        rest = length - 16 * blocks
        if rest > 8:
            k2 = _words(matrix, 16 * blocks + 8, rest - 8)
            h2 = h2 ^ (_rotl(k2 * _C2, 33) * _C1)
        if rest > 0:
            k1 = _words(matrix, 16 * blocks, min(rest, 8))
            h1 = h1 ^ (_rotl(k1 * _C1, 31) * _C2)
        h1 = h1 ^ np.uint64(length)
        h2 = h2 ^ np.uint64(length)
        h1 = h1 + h2
        h2 = h2 + h1
        h1 = _fmix(h1)
        h2 = _fmix(h2)
        return h1 + h2


def theta_hashes(values: list[bytes]) -> Words:
    """The theta hashes (63 bits) of byte strings, vectorised over equal lengths; the empty
    string is skipped, as DataSketches skips empty input."""
    by_length: dict[int, list[bytes]] = {}
    for v in values:
        if v:
            by_length.setdefault(len(v), []).append(v)
    out: list[Words] = [np.zeros(0, dtype=np.uint64)]
    for length, group in by_length.items():
        matrix = np.reshape(np.frombuffer(b"".join(group), dtype=np.uint8), (len(group), length))
        out.append(murmur3_first64(matrix) >> np.uint64(1))
    return np.concatenate(out)


def _decimal_bytes(unscaled: int) -> bytes:
    size = ((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8) // 8
    return unscaled.to_bytes(size, "big", signed=True)


def single_value_bytes(arr: pa.Array, type_name: str) -> list[bytes]:
    """The non-null values of ``arr`` (an Iceberg column of ``type_name`` as Spark gives it)
    in the spec's single-value serialization."""
    arr = arr.drop_null()
    fixed = {"int": ("<i4", pa.int32()), "date": ("<i4", pa.int32()), "long": ("<i8", pa.int64()), "time": ("<i8", pa.int64()), "timestamp": ("<i8", pa.int64()),
             "timestamptz": ("<i8", pa.int64()), "float": ("<f4", pa.float32()), "double": ("<f8", pa.float64())}
    if type_name in fixed:
        dtype, arrow_type = fixed[type_name]
        data = np.asarray(arr.cast(arrow_type), dtype=dtype).tobytes()
        width = np.dtype(dtype).itemsize
        return [data[i:i + width] for i in range(0, len(data), width)]
    if type_name == "boolean":
        return [b"\x01" if v else b"\x00" for v in arr.to_pylist()]
    if type_name == "string":
        return [v.encode("utf-8") for v in arr.to_pylist()]
    if type_name == "uuid":
        return [v if isinstance(v, bytes) else uuid.UUID(str(v)).bytes for v in arr.to_pylist()]
    if type_name == "binary" or type_name.startswith("fixed"):
        return [bytes(v) for v in arr.to_pylist()]
    if type_name.startswith("decimal"):
        scale = arr.type.scale
        return [_decimal_bytes(int(v.scaleb(scale))) for v in arr.to_pylist()]
    raise ValueError(f"no single-value serialization for type {type_name}")


def kmv_sketch(hashes: Words, seed_hash: int) -> bytes:
    """The ``K`` smallest distinct hashes as a serialized compact, ordered theta sketch (format
    3); with more than ``K``, theta is the next smallest hash. Empty input: b''."""
    distinct = np.unique(hashes[hashes != 0])
    if len(distinct) == 0:
        return b""
    theta = _MAX_THETA
    if len(distinct) > K:
        theta = int(distinct[K])
        distinct = distinct[:K]
    pre_longs = 2 if theta == _MAX_THETA else 3
    flags = 2 | 8 | 16                  # read-only, compact, ordered
    head = struct.pack("<BBBBBBH", pre_longs, 3, 3, LG_K, 0, flags, seed_hash)
    head += struct.pack("<if", len(distinct), 1.0)
    if pre_longs == 3:
        head += struct.pack("<q", theta)
    return head + distinct.astype("<u8").tobytes()


def seed_hash() -> int:
    """The 16-bit hash of the default seed every serialized sketch carries."""
    import datasketches

    sketch = datasketches.update_theta_sketch(lg_k=LG_K, seed=SEED)
    sketch.update(1)
    return struct.unpack("<H", sketch.compact().serialize()[6:8])[0]


def union(serialized: list[bytes]) -> tuple[bytes, float]:
    """The union of serialized sketches: (its compact serialization, its estimate)."""
    import datasketches

    u = datasketches.theta_union(lg_k=LG_K, seed=SEED)
    for blob in serialized:
        if blob:
            u.update(datasketches.compact_theta_sketch.deserialize(blob, SEED))
    result = u.get_result()
    return result.serialize(), result.get_estimate()
