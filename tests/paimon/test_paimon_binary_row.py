"""BinaryRow layout: worked examples, and byte equality with pypaimon's serializer."""
import datetime as dt
import decimal
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icefloe.paimon.binary_row import (
    EMPTY_ROW, BinaryRow, decode_row, encode_row, java_big_integer_bytes, null_bits_size,
)
from icefloe.paimon.types import parse_atomic


def types(*names):
    return [parse_atomic(n) for n in names]


def pypaimon_bytes(values, type_names):
    from tools.pypaimon_env import remote_module
    AtomicType = remote_module("pypaimon.schema.data_types").AtomicType
    DataField = remote_module("pypaimon.schema.data_types").DataField
    from tools.pypaimon_env import remote_module
    GenericRow = remote_module("pypaimon.table.row.generic_row").GenericRow
    GenericRowSerializer = remote_module("pypaimon.table.row.generic_row").GenericRowSerializer

    fields = [DataField(i, f"f{i}", AtomicType(t)) for i, t in enumerate(type_names)]
    return GenericRowSerializer.to_bytes(GenericRow(list(values), fields))


def test_worked_example_layout():
    # (INT 7, STRING 'abc', BIGINT null, STRING 'hello world!')
    row = encode_row([7, "abc", None, "hello world!"], types("INT", "STRING", "BIGINT", "STRING"))
    expected = (
        bytes([0x00, 0x04, 0, 0, 0, 0, 0, 0])                 # row kind INSERT, null bit of field 2 (bit 10)
        + struct.pack("<q", 7)                                 # INT in its 8-byte slot
        + b"abc" + bytes(4) + bytes([0x80 | 3])                # short string inlined, high-bit mark + length
        + bytes(8)                                             # null slot
        + struct.pack("<q", (40 << 32) | 12)                   # offset 40 (after the fixed part), length 12
        + b"hello world!" + bytes(4)                           # variable part, padded to 8 bytes
    )
    assert row.data == expected
    assert row.to_bytes() == b"\x00\x00\x00\x04" + expected    # serialised: big-endian arity first
    assert BinaryRow.from_bytes(row.to_bytes()) == row
    assert decode_row(row, types("INT", "STRING", "BIGINT", "STRING")) == (7, "abc", None, "hello world!")


def test_null_bits_grow_with_arity():
    assert null_bits_size(0) == 8 and null_bits_size(56) == 8 and null_bits_size(57) == 16
    assert EMPTY_ROW.to_bytes() == b"\x00\x00\x00\x00" + bytes(8)


def test_seven_bytes_inline_eight_bytes_variable():
    seven = encode_row(["abcdefg"], types("STRING"))
    assert len(seven.data) == 16 and seven.data[15] == 0x87
    eight = encode_row(["abcdefgh"], types("STRING"))
    assert len(eight.data) == 24 and struct.unpack_from("<q", eight.data, 8)[0] == (16 << 32) | 8


CASES = [
    ("INT", [0, 1, -1, 2**31 - 1, -(2**31), None]),
    ("BIGINT", [0, 7, -5, 2**63 - 1, -(2**63), None]),
    ("SMALLINT", [3, -300, None]),
    ("TINYINT", [-2, 127, None]),
    ("BOOLEAN", [True, False, None]),
    ("DOUBLE", [1.5, -0.0, 1e300, None]),
    ("FLOAT", [2.5, -3.25, None]),
    ("STRING", ["", "a", "abcdefg", "abcdefgh", "a much longer string with ünïcödé", None]),
    ("BYTES", [b"", b"\x00\x01", b"0123456789", None]),
    ("DATE", [dt.date(1970, 1, 1), dt.date(2024, 5, 6), dt.date(1900, 1, 1), None]),
    ("DECIMAL(10, 2)", [decimal.Decimal("12.34"), decimal.Decimal("-0.01"), decimal.Decimal("0"), None]),
    ("DECIMAL(38, 5)", [decimal.Decimal("-123456789012345678901.12345"), decimal.Decimal("7.5"),
                        decimal.Decimal("0")]),
    ("TIMESTAMP(3)", [dt.datetime(2024, 1, 2, 3, 4, 5, 678000), dt.datetime(1969, 12, 31, 23, 59, 59), None]),
    ("TIMESTAMP(6)", [dt.datetime(2024, 1, 2, 3, 4, 5, 678901), dt.datetime(1960, 1, 1, 0, 0, 0, 1)]),
    ("TIMESTAMP(6) WITH LOCAL TIME ZONE", [dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc)]),
]


@pytest.mark.parametrize("type_name,values", CASES, ids=[c[0] for c in CASES])
def test_same_bytes_as_pypaimon_per_type(type_name, values):
    for v in values:
        ours = encode_row([v], types(type_name)).to_bytes()
        assert ours == pypaimon_bytes([v], [type_name]), (type_name, v)
        assert decode_row(BinaryRow.from_bytes(ours), types(type_name)) == (v,)


def test_same_bytes_as_pypaimon_mixed_row():
    names = ["INT", "BIGINT", "STRING", "STRING", "DECIMAL(10, 2)", "DECIMAL(38, 5)", "TIMESTAMP(6)",
             "DATE", "BOOLEAN", "DOUBLE", "BYTES"]
    values = [7, None, "abc", "a longer string", decimal.Decimal("12.34"), decimal.Decimal("99.5"),
              dt.datetime(2024, 1, 2, 3, 4, 5, 678901), dt.date(2024, 5, 6), True, 1.5, b"0123456789ab"]
    assert encode_row(values, types(*names)).to_bytes() == pypaimon_bytes(values, names)


def test_java_rules_where_pypaimon_differs():
    # Java's RowHelper writes a null non-compact DECIMAL/TIMESTAMP through writeDecimal/
    # writeTimestamp(pos, null), which reserve (and zero) their variable-length space.
    row = encode_row([None], types("DECIMAL(38, 2)"))
    assert len(row.data) == 8 + 8 + 16
    assert struct.unpack_from("<q", row.data, 8)[0] == 16 << 32
    row = encode_row([None], types("TIMESTAMP(6)"))
    assert len(row.data) == 8 + 8 + 8 and struct.unpack_from("<q", row.data, 8)[0] == 16 << 32
    # BigInteger.toByteArray is minimal two's complement: -128 is one byte 0x80.
    assert java_big_integer_bytes(-128) == b"\x80"
    assert java_big_integer_bytes(128) == b"\x00\x80"
    assert java_big_integer_bytes(0) == b"\x00"
    assert java_big_integer_bytes(-129) == b"\xff\x7f"


def test_decimal_overflow_is_null_and_rounding_is_half_up():
    t = types("DECIMAL(4, 1)")
    assert decode_row(encode_row([decimal.Decimal("123.45")], t), t) == (decimal.Decimal("123.5"),)
    assert decode_row(encode_row([decimal.Decimal("12345.6")], t), t) == (None,)


def test_hash_code_is_murmur_of_row_bytes():
    row = encode_row([5], types("INT"))
    from tools.pypaimon_env import remote_module
    _hash_bytes_by_words = remote_module("pypaimon.write.row_key_extractor")._hash_bytes_by_words

    assert row.hash_code() & 0xFFFFFFFF == _hash_bytes_by_words(row.data)


atoms = st.one_of(
    st.tuples(st.just("INT"), st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1))),
    st.tuples(st.just("BIGINT"), st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))),
    st.tuples(st.just("STRING"), st.one_of(st.none(), st.text(max_size=20))),
    st.tuples(st.just("BOOLEAN"), st.one_of(st.none(), st.booleans())),
    st.tuples(st.just("DOUBLE"), st.one_of(st.none(), st.floats(allow_nan=False))),
    st.tuples(st.just("DATE"), st.one_of(st.none(), st.dates())),
    st.tuples(st.just("DECIMAL(18, 4)"), st.one_of(st.none(), st.decimals(
        min_value=-(10**13), max_value=10**13, places=4, allow_nan=False, allow_infinity=False))),
    st.tuples(st.just("TIMESTAMP(6)"), st.datetimes(min_value=dt.datetime(1900, 1, 1))),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(atoms, min_size=0, max_size=12))
def test_random_rows_match_pypaimon_and_round_trip(cells):
    names = [c[0] for c in cells]
    values = [c[1] for c in cells]
    ours = encode_row(values, types(*names))
    assert ours.to_bytes() == pypaimon_bytes(values, names)
    decoded = decode_row(ours, types(*names))
    for got, want in zip(decoded, values):
        assert got == want
