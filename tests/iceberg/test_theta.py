"""Theta sketches of statistics files: the hashing and serialization checked against Apache
DataSketches' own library."""
import struct
from decimal import Decimal

import datasketches
import pyarrow as pa

from icefloe.iceberg import theta


def _library_hash(value) -> int:
    sketch = datasketches.update_theta_sketch()
    sketch.update(value)
    return struct.unpack("<q", sketch.compact().serialize()[-8:])[0]


def test_hashes_are_the_librarys_for_the_same_bytes():
    texts = ["a", "short", "exactly sixteen!", "longer than one sixteen-byte block, with ü"]
    assert list(theta.theta_hashes([t.encode() for t in texts])) == [_library_hash(t) for t in texts]
    longs = [0, 1, -1, 2 ** 62, -(2 ** 40)]
    assert list(theta.theta_hashes([struct.pack("<q", v) for v in longs])) == [_library_hash(v) for v in longs]
    assert list(theta.theta_hashes([struct.pack("<d", 2.5)])) == [_library_hash(2.5)]


def test_single_value_serialization():
    assert theta.single_value_bytes(pa.array([1, None, -2], pa.int32()), "int") == [b"\1\0\0\0", b"\xfe\xff\xff\xff"]
    assert theta.single_value_bytes(pa.array([True, False]), "boolean") == [b"\1", b"\0"]
    decimals = pa.array([Decimal("1.00"), Decimal("-1.28"), Decimal("0.00")], pa.decimal128(10, 2))
    assert theta.single_value_bytes(decimals, "decimal(10, 2)") == [b"\x64", b"\x80", b"\x00"]


def test_sketches_beyond_k_estimate_and_union():
    hashes = theta.theta_hashes([struct.pack("<q", i) for i in range(20_000)])
    seed = theta.seed_hash()
    halves = [theta.kmv_sketch(hashes[:12_000], seed), theta.kmv_sketch(hashes[8_000:], seed)]
    data, estimate = theta.union(halves)
    assert abs(estimate - 20_000) < 20_000 * 0.05          # K = 4096: about 1.6% standard error
    assert datasketches.compact_theta_sketch.deserialize(data).get_estimate() == estimate
    assert theta.kmv_sketch(theta.theta_hashes([b""]), seed) == b""
