"""Z-order byte forms and bit interleaving (Iceberg's ZOrderByteUtils), worked by hand."""
import pyarrow as pa

from icefloe.core import zorder


def test_whole_numbers_order_as_unsigned_bytes_and_nulls_come_first():
    got = zorder.whole_number_bytes(pa.array([-2, -1, 0, 1, None], pa.int32())).tolist()
    assert got == [[0x7F] + [0xFF] * 6 + [0xFE], [0x7F] + [0xFF] * 7, [0x80] + [0] * 7,
                   [0x80] + [0] * 6 + [1], [0] * 8]
    assert [bytes(r) for r in got[:4]] == sorted(bytes(r) for r in got[:4])


def test_floating_point_bytes_keep_the_numeric_order():
    values = [float("-inf"), -2.5, -0.0, 0.0, 1e-300, 3.0, float("inf"), float("nan")]
    got = [bytes(r) for r in zorder.floating_bytes(pa.array(values)).tolist()]
    assert got == sorted(got)
    assert got[3] == bytes([0x80] + [0] * 7)           # +0.0: the sign bit flipped
    assert got[2] == bytes([0x7F] + [0xFF] * 7)        # -0.0: every bit flipped
    assert got[-1] == bytes([0xFF, 0xF8] + [0] * 6)    # the canonical NaN
    # a float is ordered as the double it widens to
    assert zorder.floating_bytes(pa.array([1.5], pa.float32())).tolist() == \
        zorder.floating_bytes(pa.array([1.5])).tolist()


def test_strings_take_whole_utf8_characters_up_to_the_width():
    got = zorder.string_bytes(pa.array(["ab", "aéé", None, "abcdefgh"]), 4).tolist()
    assert got == [[0x61, 0x62, 0, 0], [0x61, 0xC3, 0xA9, 0], [0, 0, 0, 0], [0x61, 0x62, 0x63, 0x64]]
    assert zorder.binary_bytes(pa.array([b"\x01\x02\x03", None]), 2).tolist() == [[1, 2], [0, 0]]
    assert zorder.boolean_bytes(pa.array([True, False, None])).tolist() == [[0x81] + [0] * 7, [0] * 8, [0] * 8]


def test_interleave_takes_one_bit_of_each_column_in_turn_and_skips_short_columns():
    import numpy as np

    left = np.array([[0b1111_0000, 0b1010_1010]], dtype=np.uint8)
    right = np.array([[0b0000_1111]], dtype=np.uint8)
    # byte 0: l7 r7 l6 r6 ... = 10101010 01010101; byte 1 (right has none): left's bits alone
    assert zorder.interleave([left, right]).tolist() == [[0b1010_1010, 0b0101_0101, 0b1010_1010]]
    assert zorder.interleave([left, right], max_output=1).tolist() == [[0b1010_1010]]
    z = zorder.z_values([pa.array([1, 2]), pa.array(["a", None])], [zorder.WHOLE, zorder.STRING], 8, 4)
    assert z.type == pa.binary() and [len(v) for v in z.to_pylist()] == [4, 4]
    # the first byte: a7 b7 a6 b6 a5 b5 a4 b4 of 0x80 (the numbers) and 0x61 or 0 (the
    # strings)
    assert z.to_pylist()[1][0] == 0b1000_0000 and z.to_pylist()[0][0] == 0b1001_0100
