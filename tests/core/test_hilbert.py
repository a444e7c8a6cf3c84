"""Hilbert-curve values (``core/hilbert.py``): the curve's defining property on small grids, and
the coordinates Paimon's Hilbert sort takes from each kind of value."""
import itertools

import pyarrow as pa
import pytest

from icefloe.core import hilbert


@pytest.mark.parametrize("dims, bits", [(2, 3), (3, 2), (2, 4), (4, 1)])
def test_consecutive_points_on_the_curve_are_neighbours(dims, bits):
    side = 1 << bits
    points = list(itertools.product(range(side), repeat=dims))
    arrays = [pa.array([p[d] for p in points], pa.int64()) for d in range(dims)]
    values = hilbert.hilbert_values(arrays, [hilbert.WHOLE] * dims, bits).to_pylist()
    assert len(set(values)) == len(points) and len({len(v) for v in values}) == 1
    walk = [p for _, p in sorted(zip(values, points))]
    assert walk[0] == (0,) * dims
    for a, b in zip(walk, walk[1:]):              # one step along one axis
        assert sum(abs(x - y) for x, y in zip(a, b)) == 1, (a, b)


def test_two_by_two_visits_the_quadrants_in_hilbert_order():
    values = hilbert.hilbert_values([pa.array([0, 0, 1, 1]), pa.array([0, 1, 1, 0])], [hilbert.WHOLE] * 2, 1)
    assert values.to_pylist() == sorted(values.to_pylist())          # (0,0) (0,1) (1,1) (1,0)


def test_coordinates_of_each_kind():
    c = hilbert.coordinates
    assert c(pa.array([1, None, -1], pa.int32()), hilbert.WHOLE).tolist() == [1, 2**63 - 1, 2**64 - 1]
    assert c(pa.array([-1, 5], pa.int8()), hilbert.TINY).tolist() == [255, 5]        # the byte, unsigned
    assert c(pa.array([1.0]), hilbert.FLOATING).tolist() == [0x3FF0000000000000]
    # the first 8 bytes, shorter values right-aligned
    assert c(pa.array(["ab", "abcdefghij"]), hilbert.BYTES).tolist() == [0x6162, 0x6162636465666768]
    assert c(pa.array([b"\x01\x02"]), hilbert.BYTES).tolist() == [0x0102]
    assert c(pa.array([True, False, None]), hilbert.BOOLEAN).tolist() == [2**63 - 1, 0, 2**63 - 1]
