"""Single-value serialization (Iceberg spec, "Appendix D: Single-value serialization").

Bounds in manifests and partition summaries in manifest lists use these bytes.
Expected bytes are written out by hand from the spec's table; pyiceberg's own
encoder is used as an independent second opinion for random values.
"""
import datetime as dt
import decimal
import math
import struct
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icefloe.core.types import PRIMITIVES_BY_NAME as P, DecimalType, FixedType
from icefloe.iceberg import conversions as C

BOOL, INT, LONG, FLOAT, DOUBLE = P["boolean"], P["int"], P["long"], P["float"], P["double"]
DATE, TIME, TS, TSTZ = P["date"], P["time"], P["timestamp"], P["timestamptz"]
STRING, UUID, BINARY = P["string"], P["uuid"], P["binary"]


# ------------------------------------------------------------------ the spec's table, by hand
@pytest.mark.parametrize("t,value,hexbytes", [
    (BOOL, False, "00"),
    (BOOL, True, "01"),
    (INT, 34, "22000000"),
    (INT, -2, "feffffff"),
    (INT, 52, "34000000"),
    (LONG, 34, "2200000000000000"),
    (LONG, 1, "0100000000000000"),
    (LONG, -1, "ffffffffffffffff"),
    (FLOAT, 1.5, "0000c03f"),
    (DOUBLE, -2.25, "00000000000002c0"),
    (DATE, 17486, "4e440000"),  # 2017-11-16
    (DATE, -1, "ffffffff"),  # 1969-12-31
    (TIME, 81068000000, "008307e012000000"),  # 22:31:08
    (TS, 1510871468000000, "00c3262d215e0500"),  # 2017-11-16T22:31:08
    (TSTZ, 1703981520000000, "0014341dc30d0600"),  # 2023-12-31T00:12:00Z
    (STRING, "iceberg", "69636562657267"),
    (STRING, "é日", "c3a9e697a5"),  # UTF-8, no length prefix
    (STRING, "", ""),
    (UUID, uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), "f79c3e09677c4bbda4793f349cb785e7"),
    (FixedType(4), b"\x00\x01\x02\x03", "00010203"),
    (BINARY, b"\x00\x01\x02\xff", "000102ff"),
    (DecimalType(9, 2), decimal.Decimal("14.20"), "058c"),
    (DecimalType(9, 2), decimal.Decimal("-14.20"), "fa74"),
])
def test_spec_single_value_serialization(t, value, hexbytes):
    data = C.to_bytes(t, value)
    assert data == bytes.fromhex(hexbytes)
    back = C.from_bytes(t, data)
    assert back == value
    assert type(back) is type(value)


def test_hand_written_bytes_match_struct_layout():
    # the numbers above are little-endian fixed-width values
    assert struct.unpack("<q", bytes.fromhex("008307e012000000"))[0] == ((22 * 60 + 31) * 60 + 8) * 10**6
    assert struct.unpack("<q", bytes.fromhex("00c3262d215e0500"))[0] == 1510871468 * 10**6
    assert struct.unpack("<i", bytes.fromhex("4e440000"))[0] == (dt.date(2017, 11, 16) - dt.date(1970, 1, 1)).days


def test_seed_values():
    # partition summary lower bound of year(ts) = 52 (2022)
    assert C.to_bytes(INT, 52) == b"4\x00\x00\x00"
    # lower bound of a long column whose minimum is 1
    assert C.to_bytes(LONG, 1) == b"\x01" + b"\x00" * 7
    # a timestamptz bound of 2023-12-31T00:12:00 UTC: 8 little-endian bytes of the microseconds
    us = C.to_internal(TSTZ, dt.datetime(2023, 12, 31, 0, 12, tzinfo=dt.timezone.utc))
    assert us == 1703981520000000
    assert C.to_bytes(TSTZ, us) == struct.pack("<q", 1703981520000000) == bytes.fromhex("0014341dc30d0600")
    assert C.to_internal(TSTZ, "2023-12-30T16:12:00-08:00") == us


# ------------------------------------------------------------------ decimals
@pytest.mark.parametrize("unscaled,hexbytes", [
    (0, "00"), (-1, "ff"), (1, "01"), (127, "7f"), (128, "0080"), (-128, "80"), (-129, "ff7f"),
    (255, "00ff"), (256, "0100"), (32767, "7fff"), (32768, "008000"), (-32768, "8000"),
    (-32769, "ff7fff"), (1420, "058c"), (2**63, "008000000000000000"), (-2**63, "8000000000000000"),
])
@pytest.mark.parametrize("scale", [0, 2, 10])
def test_decimal_minimal_twos_complement_big_endian(unscaled, hexbytes, scale):
    t = DecimalType(38, scale)
    v = C.from_unscaled(unscaled, scale)
    assert C.unscaled(v, scale) == unscaled
    assert C.min_bytes_signed(unscaled) == bytes.fromhex(hexbytes)
    assert C.to_bytes(t, v) == bytes.fromhex(hexbytes)
    back = C.from_bytes(t, bytes.fromhex(hexbytes))
    assert back == v
    assert back.as_tuple().exponent == -scale  # keeps the column's scale


@pytest.mark.parametrize("value,scale,unscaled", [
    ("14.20", 2, 1420), ("14.2", 2, 1420), ("-0.01", 2, -1), ("0", 3, 0), ("1E+2", 0, 100),
    ("99999999999999999999999999999999999999", 0, 10**38 - 1),
    ("-9999999999999999999999999999.9999999999", 10, -(10**38 - 1)),
])
def test_unscaled_is_exact(value, scale, unscaled):
    assert C.unscaled(decimal.Decimal(value), scale) == unscaled


def test_decimal_38_digits_round_trip_exactly():
    t = DecimalType(38, 8)
    v = decimal.Decimal("123456789012345678901234567890.12345678")
    assert C.from_bytes(t, C.to_bytes(t, v)) == v
    assert str(C.from_bytes(t, C.to_bytes(t, v))) == "123456789012345678901234567890.12345678"


def test_from_unscaled_keeps_scale():
    assert str(C.from_unscaled(0, 2)) == "0.00"
    assert str(C.from_unscaled(-5, 2)) == "-0.05"
    assert str(C.from_unscaled(1050, 2)) == "10.50"


def test_decimal_rejects_non_finite():
    with pytest.raises(ValueError):
        C.to_bytes(DecimalType(9, 2), decimal.Decimal("NaN"))


# ------------------------------------------------------------------ reading promoted bounds
def test_long_bound_written_as_int_reads_back():
    # spec (schema evolution): an int column promoted to long keeps its 4-byte bounds
    assert C.from_bytes(LONG, C.to_bytes(INT, -5)) == -5
    assert C.from_bytes(LONG, C.to_bytes(INT, 2**31 - 1)) == 2**31 - 1


def test_double_bound_written_as_float_reads_back():
    assert C.from_bytes(DOUBLE, C.to_bytes(FLOAT, 1.5)) == 1.5


def test_boolean_any_non_zero_byte_is_true():
    assert C.from_bytes(BOOL, b"\x02") is True
    assert C.from_bytes(BOOL, b"\x00") is False


def test_float_special_values():
    assert C.to_bytes(FLOAT, float("inf")) == bytes.fromhex("0000807f")
    assert math.isnan(C.from_bytes(DOUBLE, C.to_bytes(DOUBLE, float("nan"))))
    assert C.to_bytes(DOUBLE, -0.0) == bytes.fromhex("0000000000000080")


# ------------------------------------------------------------------ round trips
SETTINGS = settings(max_examples=150, deadline=None)


@SETTINGS
@given(st.booleans())
def test_roundtrip_boolean(v):
    assert C.from_bytes(BOOL, C.to_bytes(BOOL, v)) is v


@SETTINGS
@given(st.integers(-2**31, 2**31 - 1))
def test_roundtrip_int_and_date(v):
    for t in (INT, DATE):
        data = C.to_bytes(t, v)
        assert len(data) == 4 and data == struct.pack("<i", v)
        assert C.from_bytes(t, data) == v


@SETTINGS
@given(st.integers(-2**63, 2**63 - 1))
def test_roundtrip_long_time_timestamp(v):
    for t in (LONG, TIME, TS, TSTZ):
        data = C.to_bytes(t, v)
        assert len(data) == 8 and data == struct.pack("<q", v)
        assert C.from_bytes(t, data) == v


@SETTINGS
@given(st.floats(width=32, allow_nan=False))
def test_roundtrip_float(v):
    assert C.from_bytes(FLOAT, C.to_bytes(FLOAT, v)) == v


@SETTINGS
@given(st.floats(allow_nan=False))
def test_roundtrip_double(v):
    assert C.from_bytes(DOUBLE, C.to_bytes(DOUBLE, v)) == v


@SETTINGS
@given(st.text())
def test_roundtrip_string(v):
    assert C.to_bytes(STRING, v) == v.encode("utf-8")
    assert C.from_bytes(STRING, C.to_bytes(STRING, v)) == v


@SETTINGS
@given(st.uuids())
def test_roundtrip_uuid(v):
    data = C.to_bytes(UUID, v)
    assert len(data) == 16 and data == int(v).to_bytes(16, "big")
    assert C.to_bytes(UUID, str(v)) == data
    assert C.from_bytes(UUID, data) == v


@SETTINGS
@given(st.binary())
def test_roundtrip_binary(v):
    assert C.to_bytes(BINARY, v) == v
    assert C.from_bytes(BINARY, v) == v


@SETTINGS
@given(st.integers(-(10**38 - 1), 10**38 - 1), st.integers(0, 38))
def test_roundtrip_decimal(n, scale):
    t = DecimalType(38, scale)
    v = C.from_unscaled(n, scale)
    data = C.to_bytes(t, v)
    assert len(data) <= 16
    assert int.from_bytes(data, "big", signed=True) == n
    # minimal: one byte fewer would not hold the value
    if len(data) > 1:
        assert not (-(1 << (8 * len(data) - 9)) <= n < (1 << (8 * len(data) - 9)))
    back = C.from_bytes(t, data)
    assert back == v and back.as_tuple().exponent == -scale


# ------------------------------------------------------------------ pyiceberg as a second opinion
def _pyiceberg_types():
    from pyiceberg import types as pt

    return {
        "boolean": pt.BooleanType(), "int": pt.IntegerType(), "long": pt.LongType(),
        "float": pt.FloatType(), "double": pt.DoubleType(), "date": pt.DateType(), "time": pt.TimeType(),
        "timestamp": pt.TimestampType(), "timestamptz": pt.TimestamptzType(), "string": pt.StringType(),
        "uuid": pt.UUIDType(), "binary": pt.BinaryType(),
    }


PY_TYPES = _pyiceberg_types()
VALUES = {
    "boolean": st.booleans(), "int": st.integers(-2**31, 2**31 - 1), "long": st.integers(-2**63, 2**63 - 1),
    "float": st.floats(width=32, allow_nan=False), "double": st.floats(allow_nan=False),
    "date": st.integers(-2**31, 2**31 - 1), "time": st.integers(0, 86_400_000_000 - 1),
    "timestamp": st.integers(-2**63, 2**63 - 1), "timestamptz": st.integers(-2**63, 2**63 - 1),
    "string": st.text(), "uuid": st.uuids(), "binary": st.binary(),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_same_bytes_as_pyiceberg(name):
    from pyiceberg import conversions as pc

    t, pt_ = P[name], PY_TYPES[name]

    @settings(max_examples=60, deadline=None)
    @given(VALUES[name])
    def run(v):
        ours = C.to_bytes(t, v)
        assert ours == pc.to_bytes(pt_, v)
        theirs = pc.from_bytes(pt_, ours)
        assert C.from_bytes(t, ours) == (theirs if name != "uuid" else uuid.UUID(bytes=ours))
    run()


@settings(max_examples=100, deadline=None)
@given(st.integers(-(10**38 - 1), 10**38 - 1), st.integers(0, 38))
def test_decimal_same_bytes_as_pyiceberg(n, scale):
    from pyiceberg import conversions as pc
    from pyiceberg.types import DecimalType as PyDecimal

    v = C.from_unscaled(n, scale)
    assert C.to_bytes(DecimalType(38, scale), v) == pc.to_bytes(PyDecimal(38, scale), v)
    assert C.from_bytes(DecimalType(38, scale), C.to_bytes(DecimalType(38, scale), v)) == \
        pc.from_bytes(PyDecimal(38, scale), pc.to_bytes(PyDecimal(38, scale), v))


# ------------------------------------------------------------------ Python values -> internal values
@pytest.mark.parametrize("t,value,expected", [
    (DATE, dt.date(2017, 11, 16), 17486),
    (DATE, "2017-11-16", 17486),
    (DATE, dt.datetime(2017, 11, 16, 23, 59), 17486),
    (DATE, dt.date(1969, 12, 31), -1),
    (DATE, dt.date(1, 1, 1), -719162),
    (DATE, 5, 5),
    (TS, dt.datetime(1969, 12, 31, 23, 59, 59, 999999), -1),
    (TS, "1969-12-31T23:59:59.999999", -1),
    (TS, dt.datetime(2017, 11, 16, 22, 31, 8), 1510871468000000),
    (TS, dt.date(1970, 1, 2), 86_400_000_000),
    (TSTZ, "2017-11-16T14:31:08-08:00", 1510871468000000),
    (TSTZ, dt.datetime(2017, 11, 16, 22, 31, 8, tzinfo=dt.timezone.utc), 1510871468000000),
    (TSTZ, dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc), -1),
    (TIME, dt.time(22, 31, 8), 81068000000),
    (TIME, "22:31:08.000001", 81068000001),
    (TIME, dt.time(0, 0), 0),
    (UUID, "f79c3e09-677c-4bbd-a479-3f349cb785e7", uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")),
    (UUID, bytes.fromhex("f79c3e09677c4bbda4793f349cb785e7"), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")),
    (DecimalType(9, 2), "14.20", decimal.Decimal("14.20")),
    (DecimalType(9, 2), 3, decimal.Decimal(3)),
    (INT, "7", 7),
    (DOUBLE, 1, 1.0),
    (STRING, "x", "x"),
    (BINARY, b"\x00", b"\x00"),
    (LONG, None, None),
    (TS, None, None),
])
def test_to_internal(t, value, expected):
    got = C.to_internal(t, value)
    assert got == expected
    assert type(got) is type(expected)


def test_to_internal_of_pandas_nanosecond_timestamps_floors_to_micros():
    import pandas as pd

    assert C.to_internal(TS, pd.Timestamp("1969-12-31 23:59:59.999999999")) == -1
    assert C.to_internal(TS, pd.Timestamp("1970-01-01 00:00:00.000001999")) == 1


@given(st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)))
def test_to_internal_timestamp_matches_timedelta(d):
    expected = (d - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
    assert C.to_internal(TS, d) == expected
    assert C.to_internal(TSTZ, d.replace(tzinfo=dt.timezone.utc)) == expected
    assert C.to_internal(TS, d.isoformat()) == expected
    assert C.micros_to_datetime(expected) == d
    assert C.micros_to_datetime(expected, utc=True) == d.replace(tzinfo=dt.timezone.utc)


# ------------------------------------------------------------------ human strings
@pytest.mark.parametrize("t,value,expected", [
    (DATE, 17486, "2017-11-16"),
    (DATE, -1, "1969-12-31"),
    (TIME, 81068000000, "22:31:08"),
    (TS, -1, "1969-12-31T23:59:59.999999"),
    (TSTZ, 0, "1970-01-01T00:00:00.000000+00:00"),
    (BOOL, False, "false"),
    (LONG, -5, "-5"),
    (STRING, "a/b", "a/b"),
    (DecimalType(9, 2), decimal.Decimal("14.20"), "14.20"),
    (DOUBLE, float("nan"), "NaN"),
    (BINARY, b"\xff", "/w=="),
    (INT, None, "null"),
])
def test_human_string(t, value, expected):
    assert C.human_string(t, value) == expected
