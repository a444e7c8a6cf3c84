"""Partition transforms against the Iceberg spec's worked examples.

Sources of the expected values: the table spec's "Bucket Transform Details",
"Appendix B: 32-bit Hash Requirements" (hash test vectors), "Truncate Transform
Details" and "Partition Transforms". The Arrow-vectorised ``apply_arrow`` is
checked value by value against the scalar ``apply`` with hypothesis.
"""
import datetime as dt
import decimal
import uuid

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icefloe.core.types import PRIMITIVES_BY_NAME as P, DecimalType, FixedType
from icefloe.errors import UnknownTransformError
from icefloe.iceberg import conversions as C
from icefloe.iceberg.transforms import (
    BucketTransform, DayTransform, HourTransform, IdentityTransform, MonthTransform,
    TruncateTransform, VoidTransform, YearTransform, apply_arrow, default_field_name,
    murmur3_hash, parse_partition_expr, parse_transform,
)

INT, LONG, DATE, TIME = P["int"], P["long"], P["date"], P["time"]
TS, TSTZ, STRING, UUID, BINARY = P["timestamp"], P["timestamptz"], P["string"], P["uuid"], P["binary"]
INT_MAX = 2**31 - 1


def _ts(text, t=TS):
    return C.to_internal(t, text)


# ------------------------------------------------------------------ Appendix B hash vectors
SPEC_HASHES = [
    (INT, 34, 2017239379),
    (LONG, 34, 2017239379),
    (DecimalType(9, 2), decimal.Decimal("14.20"), -500754589),
    (DATE, C.to_internal(DATE, "2017-11-16"), -653330422),
    (TIME, C.to_internal(TIME, dt.time(22, 31, 8)), -662762989),
    (TS, _ts("2017-11-16T22:31:08"), -2047944441),
    (TSTZ, _ts("2017-11-16T14:31:08-08:00", TSTZ), -2047944441),
    (STRING, "iceberg", 1210000089),
    (UUID, uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), 1488055340),
    (FixedType(4), bytes([0, 1, 2, 3]), -188683207),
    (BINARY, bytes([0, 1, 2, 3]), -188683207),
]


@pytest.mark.parametrize("t,value,expected", SPEC_HASHES, ids=[str(x[0]) for x in SPEC_HASHES])
def test_spec_hash_vectors(t, value, expected):
    assert murmur3_hash(t, value) == expected


def test_internal_values_behind_the_hash_vectors():
    # the spec's inputs, spelled out as the internal values they hash
    assert C.to_internal(DATE, "2017-11-16") == 17486
    assert C.to_internal(TIME, dt.time(22, 31, 8)) == 81068000000
    assert _ts("2017-11-16T22:31:08") == 1510871468000000
    assert _ts("2017-11-16T14:31:08-08:00", TSTZ) == 1510871468000000


def test_uuid_hash_accepts_bytes_and_string_forms():
    u = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
    # spec note 3: the uuid's big-endian bytes
    assert u.bytes == bytes.fromhex("F79C3E09677C4BBDA4793F349CB785E7")
    assert murmur3_hash(UUID, u.bytes) == 1488055340
    assert murmur3_hash(UUID, str(u)) == 1488055340


@pytest.mark.parametrize("t,value,expected", [
    (P["boolean"], True, 1392991556),
    (P["float"], 1.0, -142385009),
    (P["float"], 0.0, 1669671676),
    (P["float"], -0.0, 1669671676),
    (P["double"], 1.0, -142385009),
    (P["double"], 0.0, 1669671676),
    (P["double"], -0.0, 1669671676),
])
def test_spec_hash_vectors_of_non_bucketable_types(t, value, expected):
    assert murmur3_hash(t, value) == expected


def test_nan_hashes_canonically():
    import struct

    other_nan = struct.unpack("<d", struct.pack("<q", 0x7FF0000000000001))[0]
    assert murmur3_hash(P["double"], float("nan")) == murmur3_hash(P["double"], other_nan)


@given(st.integers(-2**31, 2**31 - 1))
def test_int_and_long_hash_identically(v):
    assert murmur3_hash(INT, v) == murmur3_hash(LONG, v)
    assert BucketTransform(7).apply(INT, v) == BucketTransform(7).apply(LONG, v)


@pytest.mark.parametrize("scale", [0, 2, 5])
def test_decimal_hash_ignores_scale(scale):
    # "Hash results are not dependent on decimal scale": only the unscaled value is hashed
    v = C.from_unscaled(1420, scale)
    assert murmur3_hash(DecimalType(20, scale), v) == -500754589


# ------------------------------------------------------------------ bucket[N]
@pytest.mark.parametrize("t,value,h", SPEC_HASHES, ids=[str(x[0]) for x in SPEC_HASHES])
@pytest.mark.parametrize("n", [1, 2, 16, 100, 1024, INT_MAX])
def test_bucket_is_hash_masked_mod_n(t, value, h, n):
    b = BucketTransform(n).apply(t, value)
    assert b == (h & INT_MAX) % n
    assert 0 <= b < n


def test_bucket_examples():
    # negative hash: the sign bit is discarded before the modulo
    assert BucketTransform(100).apply(DecimalType(9, 2), decimal.Decimal("14.20")) == \
        (-500754589 & 0x7FFFFFFF) % 100 == 59
    assert BucketTransform(16).apply(INT, 34) == 2017239379 % 16 == 3
    assert BucketTransform(16).apply(STRING, "iceberg") == 1210000089 % 16
    assert BucketTransform(16).apply(INT, None) is None


def test_bucket_types():
    b = BucketTransform(4)
    assert str(b) == "bucket[4]" and b.result_type(STRING) == INT
    for t in (INT, LONG, DATE, TIME, TS, TSTZ, STRING, UUID, BINARY, FixedType(3), DecimalType(5, 2)):
        assert b.can_transform(t)
    for t in (P["boolean"], P["float"], P["double"]):
        assert not b.can_transform(t)
    with pytest.raises(UnknownTransformError):
        BucketTransform(0)


# ------------------------------------------------------------------ truncate[W]
@pytest.mark.parametrize("t", [INT, LONG])
@pytest.mark.parametrize("v,expected", [(1, 0), (-1, -10), (0, 0), (9, 0), (10, 10), (-10, -10),
                                        (-11, -20), (19, 10), (123456789, 123456780)])
def test_truncate_integers(t, v, expected):
    assert TruncateTransform(10).apply(t, v) == expected


def test_truncate_integer_width_one_and_null():
    assert TruncateTransform(1).apply(LONG, -7) == -7
    assert TruncateTransform(10).apply(INT, None) is None


def test_truncate_integers_wrap_like_java_at_the_minimum():
    # v - (v % W) leaves the type's range only at its very bottom; the Java reference
    # implementation's int/long arithmetic wraps there, and so do we.
    assert TruncateTransform(10).apply(INT, -2**31) == 2**31 - 2
    assert TruncateTransform(10).apply(LONG, -2**63) == 2**63 - 2
    assert TruncateTransform(10).apply(INT, -2**31 + 8) == -2**31 + 8 - 0  # -2147483640 % 10 == 0
    assert TruncateTransform(10).apply(INT, 2**31 - 1) == 2**31 - 8


@pytest.mark.parametrize("v,w,scale,expected", [
    ("10.65", 50, 2, "10.50"),  # the spec's example
    ("10.50", 50, 2, "10.50"),
    ("0.00", 50, 2, "0.00"),
    ("-0.05", 10, 2, "-0.10"),
    ("12.345", 10, 3, "12.340"),
    ("-12.345", 10, 3, "-12.350"),
    ("1234", 100, 0, "1200"),
])
def test_truncate_decimal(v, w, scale, expected):
    out = TruncateTransform(w).apply(DecimalType(38, scale), decimal.Decimal(v))
    assert out == decimal.Decimal(expected)
    assert str(out) == expected  # keeps the column's scale


def test_truncate_decimal_keeps_all_38_digits():
    # 38 significant digits: more than Python's default 28-digit decimal context
    v = decimal.Decimal("1234567890123456789012345678901234.5678")
    out = TruncateTransform(100).apply(DecimalType(38, 4), v)
    assert out == decimal.Decimal("1234567890123456789012345678901234.5600")


@pytest.mark.parametrize("v,w,expected", [
    ("iceberg", 3, "ice"),  # the spec's example
    ("ice", 3, "ice"),
    ("ic", 3, "ic"),
    ("", 3, ""),
    ("épée", 2, "ép"),
    ("日本語テキスト", 3, "日本語"),
    ("😀😁😂🤣", 2, "😀😁"),  # astral-plane code points count once each
    ("e\u0301x", 2, "e\u0301"),  # a combining mark is its own code point
])
def test_truncate_string_by_code_points(v, w, expected):
    out = TruncateTransform(w).apply(STRING, v)
    assert out == expected
    assert len(out.encode("utf-8")) <= len(v.encode("utf-8"))
    out.encode("utf-8")  # valid UTF-8


def test_truncate_binary():
    assert TruncateTransform(2).apply(BINARY, bytes([0, 1, 2, 3])) == bytes([0, 1])
    assert TruncateTransform(10).apply(BINARY, b"ab") == b"ab"


def test_truncate_types():
    tr = TruncateTransform(4)
    assert str(tr) == "truncate[4]"
    assert tr.result_type(STRING) == STRING and tr.result_type(LONG) == LONG
    for t in (INT, LONG, STRING, BINARY, DecimalType(9, 2)):
        assert tr.can_transform(t)
    for t in (DATE, TS, P["double"], UUID, P["boolean"]):
        assert not tr.can_transform(t)
    with pytest.raises(UnknownTransformError):
        TruncateTransform(0)


# ------------------------------------------------------------------ year / month / day / hour
@pytest.mark.parametrize("t", [TS, TSTZ])
def test_time_transforms_just_before_1970_round_down(t):
    v = _ts("1969-12-31T23:59:59.999999", t)
    assert v == -1
    assert YearTransform().apply(t, v) == -1
    assert MonthTransform().apply(t, v) == -1
    assert DayTransform().apply(t, v) == -1
    assert HourTransform().apply(t, v) == -1


@pytest.mark.parametrize("t", [TS, TSTZ])
def test_time_transforms_at_the_epoch(t):
    for tr in (YearTransform(), MonthTransform(), DayTransform(), HourTransform()):
        assert tr.apply(t, 0) == 0


@pytest.mark.parametrize("text,year,month,day,hour", [
    ("2023-12-31T00:12:00", 53, 647, 19722, 473328),
    ("2017-11-16T22:31:08", 47, 574, 17486, 419686),
    ("1969-01-01T00:00:00", -1, -12, -365, -8760),
    ("1968-12-31T23:00:00", -2, -13, -366, -8761),
    ("1900-03-01T05:00:00", -70, -838, -25508, -612187),
    ("0001-01-01T00:00:00", -1969, -23628, -719162, -17259888),
])
def test_time_transforms_examples(text, year, month, day, hour):
    v = _ts(text)
    assert YearTransform().apply(TS, v) == year
    assert MonthTransform().apply(TS, v) == month
    assert DayTransform().apply(TS, v) == day
    assert HourTransform().apply(TS, v) == hour


def test_timestamptz_transforms_use_utc():
    # 2023-12-31T20:00-08:00 is already 2024-01-01 in UTC
    v = _ts("2023-12-31T20:00:00-08:00", TSTZ)
    assert YearTransform().apply(TSTZ, v) == 54
    assert MonthTransform().apply(TSTZ, v) == 648
    assert DayTransform().apply(TSTZ, v) == C.to_internal(DATE, "2024-01-01")


@pytest.mark.parametrize("text,year,month", [
    ("1969-12-31", -1, -1), ("1970-01-01", 0, 0), ("1970-02-01", 0, 1), ("2023-12-31", 53, 647),
    ("2000-02-29", 30, 361), ("1600-02-29", -370, -4439),
])
def test_date_transforms(text, year, month):
    d = C.to_internal(DATE, text)
    assert YearTransform().apply(DATE, d) == year
    assert MonthTransform().apply(DATE, d) == month
    assert DayTransform().apply(DATE, d) == d


@given(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59)))
def test_time_transforms_match_calendar_arithmetic(d):
    v = C.to_internal(TS, d)
    assert YearTransform().apply(TS, v) == d.year - 1970
    assert MonthTransform().apply(TS, v) == (d.year - 1970) * 12 + d.month - 1
    assert DayTransform().apply(TS, v) == (d.date() - dt.date(1970, 1, 1)).days
    hours = (d - dt.datetime(1970, 1, 1)) // dt.timedelta(hours=1)
    assert HourTransform().apply(TS, v) == hours


@given(st.integers(-2**31, 2**31 - 1))
def test_civil_from_days_matches_datetime(days):
    y, m, d = C.civil_from_days(days)
    assert 1 <= m <= 12 and 1 <= d <= 31
    try:
        ref = dt.date(1970, 1, 1) + dt.timedelta(days=days)
    except OverflowError:
        # outside datetime's years 1..9999: the next day is still the next calendar day
        y2, m2, d2 = C.civil_from_days(days + 1)
        assert (y2, m2, d2) > (y, m, d)
        return
    assert (y, m, d) == (ref.year, ref.month, ref.day)


def test_time_transforms_beyond_year_9999():
    v = (C.to_internal(DATE, "9999-12-31") + 1) * 86_400_000_000  # 10000-01-01
    assert YearTransform().apply(TS, v) == 10000 - 1970
    assert MonthTransform().apply(TS, v) == (10000 - 1970) * 12
    assert YearTransform().apply(DATE, -10**7) == C.civil_from_days(-10**7)[0] - 1970


def test_time_transform_types():
    for tr in (YearTransform(), MonthTransform(), HourTransform()):
        assert tr.result_type(TSTZ) == INT
    assert DayTransform().result_type(TS) == DATE
    for tr in (YearTransform(), MonthTransform(), DayTransform()):
        assert all(tr.can_transform(t) for t in (DATE, TS, TSTZ))
        assert not tr.can_transform(STRING) and not tr.can_transform(TIME)
    assert HourTransform().can_transform(TS) and not HourTransform().can_transform(DATE)
    for tr in (YearTransform(), MonthTransform(), DayTransform(), HourTransform()):
        assert tr.apply(TS, None) is None


def test_identity_and_void():
    assert IdentityTransform().apply(STRING, "x") == "x"
    assert IdentityTransform().result_type(DATE) == DATE
    assert VoidTransform().apply(LONG, 5) is None
    assert VoidTransform().apply(LONG, None) is None


# ------------------------------------------------------------------ human strings (partition paths)
@pytest.mark.parametrize("tr,source,value,expected", [
    (YearTransform(), TSTZ, 53, "2023"),
    (YearTransform(), DATE, 0, "1970"),
    (YearTransform(), TS, -1, "1969"),
    (YearTransform(), TS, -1000, "0970"),
    (MonthTransform(), TSTZ, 647, "2023-12"),
    (MonthTransform(), TS, 0, "1970-01"),
    (MonthTransform(), TS, -1, "1969-12"),
    (MonthTransform(), TS, -12, "1969-01"),
    (MonthTransform(), TS, -13, "1968-12"),
    (DayTransform(), TSTZ, 19722, "2023-12-31"),
    (DayTransform(), DATE, -1, "1969-12-31"),
    (DayTransform(), DATE, -719162, "0001-01-01"),
    (HourTransform(), TSTZ, 473328, "2023-12-31-00"),
    (HourTransform(), TS, 0, "1970-01-01-00"),
    (HourTransform(), TS, -1, "1969-12-31-23"),
    (HourTransform(), TS, -17259888 + 5, "0001-01-01-05"),  # zero-padded year (strftime would not)
    (BucketTransform(16), STRING, 7, "7"),
    (TruncateTransform(3), STRING, "ice", "ice"),
    (TruncateTransform(10), INT, -10, "-10"),
    (TruncateTransform(50), DecimalType(9, 2), decimal.Decimal("10.50"), "10.50"),
    (IdentityTransform(), DATE, 19722, "2023-12-31"),
    (IdentityTransform(), LONG, 12, "12"),
    (IdentityTransform(), P["boolean"], True, "true"),
    (IdentityTransform(), UUID, uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
     "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    (IdentityTransform(), BINARY, b"\x00\x01\x02\x03", "AAECAw=="),
    (YearTransform(), TS, None, "null"),
    (HourTransform(), TS, None, "null"),
    (IdentityTransform(), STRING, None, "null"),
])
def test_human_strings(tr, source, value, expected):
    assert tr.human(source, value) == expected


def test_human_strings_of_transformed_values():
    ts = _ts("2023-12-31T00:12:00+00:00", TSTZ)
    got = [tr.human(TSTZ, tr.apply(TSTZ, ts))
           for tr in (YearTransform(), MonthTransform(), DayTransform(), HourTransform())]
    assert got == ["2023", "2023-12", "2023-12-31", "2023-12-31-00"]
    before = _ts("1969-12-31T23:59:59.999999")
    got = [tr.human(TS, tr.apply(TS, before))
           for tr in (YearTransform(), MonthTransform(), DayTransform(), HourTransform())]
    assert got == ["1969", "1969-12", "1969-12-31", "1969-12-31-23"]


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize("text,expected", [
    ("identity", IdentityTransform()), ("void", VoidTransform()), ("year", YearTransform()),
    ("month", MonthTransform()), ("day", DayTransform()), ("hour", HourTransform()),
    ("bucket[16]", BucketTransform(16)), ("truncate[10]", TruncateTransform(10)),
    (" Year ", YearTransform()), ("BUCKET[3]", BucketTransform(3)),
])
def test_parse_transform(text, expected):
    t = parse_transform(text)
    assert t == expected and type(t) is type(expected)
    assert parse_transform(str(t)) == t


def test_parse_transform_keeps_parameters():
    assert parse_transform("bucket[16]").num_buckets == 16
    assert parse_transform("truncate[10]").width == 10


@pytest.mark.parametrize("text", ["", "years", "bucket", "bucket[]", "bucket[x]", "bucket[0]",
                                  "bucket[-1]", "truncate[0]", "truncate(10)", "bucket(16, id)",
                                  "zorder", "identity[1]"])
def test_parse_transform_rejects(text):
    with pytest.raises(UnknownTransformError):
        parse_transform(text)


@pytest.mark.parametrize("expr,transform,col", [
    ("ts", IdentityTransform(), "ts"),
    ("  category ", IdentityTransform(), "category"),
    ("`my col`", IdentityTransform(), "my col"),
    ("a.b", IdentityTransform(), "a.b"),
    ("years(ts)", YearTransform(), "ts"),
    ("year(ts)", YearTransform(), "ts"),
    ("YEARS( ts )", YearTransform(), "ts"),
    ("months(ts)", MonthTransform(), "ts"),
    ("month(ts)", MonthTransform(), "ts"),
    ("days(ts)", DayTransform(), "ts"),
    ("day(ts)", DayTransform(), "ts"),
    ("date(ts)", DayTransform(), "ts"),
    ("hours(ts)", HourTransform(), "ts"),
    ("hour(ts)", HourTransform(), "ts"),
    ("date_hour(ts)", HourTransform(), "ts"),
    ("identity(id)", IdentityTransform(), "id"),
    ("void(id)", VoidTransform(), "id"),
    ("bucket(16, id)", BucketTransform(16), "id"),
    ("bucket(16,id)", BucketTransform(16), "id"),
    ("Bucket( 16 , `id` )", BucketTransform(16), "id"),
    ("bucket(id, 16)", BucketTransform(16), "id"),
    ("truncate(10, name)", TruncateTransform(10), "name"),
    ("truncate(name, 10)", TruncateTransform(10), "name"),
    ("days(`event time`)", DayTransform(), "event time"),
])
def test_parse_partition_expr(expr, transform, col):
    t, c = parse_partition_expr(expr)
    assert (t, c) == (transform, col)
    assert type(t) is type(transform)


@pytest.mark.parametrize("expr", [
    "", "   ", "foo(ts)", "years()", "years(a, b)", "bucket(16)", "bucket(x, id)", "bucket(0, id)",
    "bucket(-1, id)", "bucket(16, id, x)", "truncate(ten, name)", "truncate(0, name)", "years(ts",
    "1col", "a b", "bucket(16, )", "years(1)", "``",
])
def test_parse_partition_expr_rejects_with_a_clear_error(expr):
    with pytest.raises(UnknownTransformError) as ei:
        parse_partition_expr(expr)
    assert str(ei.value)  # a message naming the problem
    if expr.strip():
        assert expr.strip() in str(ei.value) or repr(expr) in str(ei.value)


def test_unknown_transform_error_is_a_value_error():
    with pytest.raises(ValueError):
        parse_partition_expr("foo(ts)")


def test_default_field_names():
    assert default_field_name(IdentityTransform(), "id") == "id"
    assert default_field_name(BucketTransform(16), "id") == "id_bucket"
    assert default_field_name(TruncateTransform(3), "name") == "name_trunc"
    assert default_field_name(YearTransform(), "ts") == "ts_year"
    assert default_field_name(MonthTransform(), "ts") == "ts_month"
    assert default_field_name(DayTransform(), "ts") == "ts_day"
    assert default_field_name(HourTransform(), "ts") == "ts_hour"
    assert default_field_name(VoidTransform(), "x") == "x_null"


# ------------------------------------------------------------------ apply_arrow == apply
_HOURS_LIMIT = (2**31 - 1) * 3_600_000_000  # hour ordinals stay ints, like the spec's int result

TEMPORAL_ARROW = {
    DATE: pa.date32(), TS: pa.timestamp("us"), TSTZ: pa.timestamp("us", tz="UTC"), TIME: pa.time64("us"),
}


def _internal_from_arrow(rt, arr):
    """Internal values of an Arrow result array, without going through Python datetimes."""
    if pa.types.is_date32(arr.type):
        return arr.cast(pa.int32()).to_pylist()
    if pa.types.is_timestamp(arr.type) or pa.types.is_time(arr.type):
        return arr.cast(pa.int64()).to_pylist()
    return [C.to_internal(rt, x) for x in arr.to_pylist()]


def _check(tr, source, ints_or_values, arrow_type):
    """apply_arrow over an array built from internal values equals scalar apply."""
    if source in TEMPORAL_ARROW and arrow_type != pa.date64():
        arr = pa.array(ints_or_values, pa.int64() if arrow_type != pa.date32() else pa.int32())
        arr = arr.cast(arrow_type)
    else:
        arr = pa.array(ints_or_values, arrow_type)
    out = apply_arrow(tr, source, arr)
    assert len(out) == len(arr)
    expected = [tr.apply(source, v) for v in ints_or_values]
    assert _internal_from_arrow(tr.result_type(source), out) == expected
    return out


def _nullable(strategy):
    return st.lists(st.none() | strategy, max_size=40)


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

INT_TRANSFORMS = [IdentityTransform(), VoidTransform(), BucketTransform(1), BucketTransform(16),
                  BucketTransform(1000), TruncateTransform(1), TruncateTransform(10), TruncateTransform(7)]


@FAST
@given(_nullable(st.integers(-2**31, 2**31 - 1)))
def test_apply_arrow_int(values):
    for tr in INT_TRANSFORMS:
        out = _check(tr, INT, values, pa.int32())
        if isinstance(tr, TruncateTransform):
            assert out.type == pa.int32()


@FAST
@given(_nullable(st.integers(-2**63, 2**63 - 1)))
def test_apply_arrow_long(values):
    for tr in INT_TRANSFORMS:
        out = _check(tr, LONG, values, pa.int64())
        if isinstance(tr, TruncateTransform):
            assert out.type == pa.int64()


def test_apply_arrow_integer_extremes():
    ints = [-2**31, -2**31 + 1, -1, 0, 1, 2**31 - 1, None]
    longs = [-2**63, -2**63 + 5, -1, 0, 2**63 - 1, None]
    for tr in INT_TRANSFORMS:
        _check(tr, INT, ints, pa.int32())
        _check(tr, LONG, longs, pa.int64())


DATE_TRANSFORMS = [IdentityTransform(), YearTransform(), MonthTransform(), DayTransform(), BucketTransform(16),
                   VoidTransform()]
TS_TRANSFORMS = DATE_TRANSFORMS + [HourTransform()]


@FAST
@given(_nullable(st.integers(-2**31, 2**31 - 1)))
def test_apply_arrow_date(days):
    for tr in DATE_TRANSFORMS:
        _check(tr, DATE, days, pa.date32())


@FAST
@given(_nullable(st.integers(-_HOURS_LIMIT, _HOURS_LIMIT)))
def test_apply_arrow_timestamps(micros):
    for tr in TS_TRANSFORMS:
        _check(tr, TS, micros, pa.timestamp("us"))
        _check(tr, TSTZ, micros, pa.timestamp("us", tz="UTC"))
        # the zone of a tz-aware array is display only: values are UTC microseconds
        _check(tr, TSTZ, micros, pa.timestamp("us", tz="America/Los_Angeles"))


@FAST
@given(_nullable(st.integers(-5 * 86_400_000_000, 5 * 86_400_000_000)))
def test_apply_arrow_timestamps_near_the_epoch(micros):
    # dense around 1970, where rounding toward negative infinity matters
    for tr in TS_TRANSFORMS:
        _check(tr, TS, micros, pa.timestamp("us"))


@FAST
@given(_nullable(st.integers(0, 86_400_000_000 - 1)))
def test_apply_arrow_time(micros):
    for tr in (IdentityTransform(), BucketTransform(16), VoidTransform()):
        _check(tr, TIME, micros, pa.time64("us"))


def test_apply_arrow_pre_1970_examples():
    micros = [-1, 0, -86_400_000_000, -86_400_000_001, -3_600_000_000, -3_600_000_001, None]
    expected = {YearTransform(): [-1, 0, -1, -1, -1, -1, None],
                MonthTransform(): [-1, 0, -1, -1, -1, -1, None],
                DayTransform(): [-1, 0, -1, -2, -1, -1, None],
                HourTransform(): [-1, 0, -24, -25, -1, -2, None]}
    for tr, exp in expected.items():
        for t, at in ((TS, pa.timestamp("us")), (TSTZ, pa.timestamp("us", tz="UTC"))):
            out = apply_arrow(tr, t, pa.array(micros, pa.int64()).cast(at))
            assert _internal_from_arrow(tr.result_type(t), out) == exp
    days = pa.array([-1, -365, -366, 0, None], pa.int32()).cast(pa.date32())
    assert apply_arrow(YearTransform(), DATE, days).to_pylist() == [-1, -1, -2, 0, None]
    assert apply_arrow(MonthTransform(), DATE, days).to_pylist() == [-1, -12, -13, 0, None]


def test_apply_arrow_other_timestamp_units_floor_to_micros():
    ns = pa.array([-1, -1000, -1001, 999, None], pa.timestamp("ns"))
    assert apply_arrow(DayTransform(), TS, ns).cast(pa.int32()).to_pylist() == [-1, -1, -1, 0, None]
    assert apply_arrow(HourTransform(), TS, ns).to_pylist() == [-1, -1, -1, 0, None]
    ms = pa.array([-1, 3_600_000, None], pa.timestamp("ms", tz="UTC"))
    assert apply_arrow(HourTransform(), TSTZ, ms).to_pylist() == [-1, 1, None]
    s = pa.array([-1, 86_400], pa.timestamp("s"))
    assert apply_arrow(DayTransform(), TS, s).cast(pa.int32()).to_pylist() == [-1, 1]
    d64 = pa.array([-86_400_000, 0, None], pa.date64())
    assert apply_arrow(YearTransform(), DATE, d64).to_pylist() == [-1, 0, None]
    # the bucket of a nanosecond timestamp is the bucket of its (floored) microseconds
    b = BucketTransform(16)
    assert apply_arrow(b, TS, ns).to_pylist() == [b.apply(TS, v) for v in (-1, -1, -2, 0)] + [None]


def _as_writer_reads(tr, source, arr):
    """What arrow_writer does: apply_arrow, then to_internal of each Python value."""
    rt = tr.result_type(source)
    return [C.to_internal(rt, x) for x in apply_arrow(tr, source, arr).to_pylist()]


def _scalar(tr, source, arr):
    return [tr.apply(source, C.to_internal(source, x)) for x in arr.to_pylist()]


@FAST
@given(_nullable(st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30))))
def test_apply_arrow_via_python_values(values):
    ts = pa.array(values, pa.timestamp("us"))
    tstz = pa.array([None if v is None else v.replace(tzinfo=dt.timezone.utc) for v in values],
                    pa.timestamp("us", tz="UTC"))
    dates = pa.array([None if v is None else v.date() for v in values], pa.date32())
    for tr in TS_TRANSFORMS:
        assert _as_writer_reads(tr, TS, ts) == _scalar(tr, TS, ts)
        assert _as_writer_reads(tr, TSTZ, tstz) == _scalar(tr, TSTZ, tstz)
    for tr in DATE_TRANSFORMS:
        assert _as_writer_reads(tr, DATE, dates) == _scalar(tr, DATE, dates)


STRING_TRANSFORMS = [IdentityTransform(), BucketTransform(16), BucketTransform(7), TruncateTransform(1),
                     TruncateTransform(3), TruncateTransform(50), VoidTransform()]


@FAST
@given(_nullable(st.text(max_size=12)))
def test_apply_arrow_strings(values):
    for tr in STRING_TRANSFORMS:
        _check(tr, STRING, values, pa.string())
        _check(tr, STRING, values, pa.large_string())


def test_apply_arrow_string_examples():
    arr = pa.array(["iceberg", "日本語テキスト", "😀😁😂🤣", "e\u0301x", "", None])
    assert apply_arrow(TruncateTransform(3), STRING, arr).to_pylist() == \
        ["ice", "日本語", "😀😁😂", "e\u0301x", "", None]
    assert apply_arrow(BucketTransform(2**31 - 1), STRING, pa.array(["iceberg"])).to_pylist() == [1210000089]


@FAST
@given(_nullable(st.binary(max_size=20)))
def test_apply_arrow_binary(values):
    for tr in (IdentityTransform(), BucketTransform(16), TruncateTransform(2), TruncateTransform(8)):
        _check(tr, BINARY, values, pa.binary())


@FAST
@given(_nullable(st.binary(min_size=4, max_size=4)))
def test_apply_arrow_fixed(values):
    for tr in (IdentityTransform(), BucketTransform(16)):
        _check(tr, FixedType(4), values, pa.binary(4))


@FAST
@given(_nullable(st.uuids()))
def test_apply_arrow_uuid(values):
    arr = pa.array([None if u is None else u.bytes for u in values], pa.binary(16))
    for tr in (IdentityTransform(), BucketTransform(16), BucketTransform(1000)):
        out = apply_arrow(tr, UUID, arr)
        got = [C.to_internal(tr.result_type(UUID), x) for x in out.to_pylist()]
        assert got == [tr.apply(UUID, u) for u in values]


@pytest.mark.parametrize("precision,scale", [(9, 2), (18, 0), (38, 10), (38, 0)])
def test_apply_arrow_decimal(precision, scale):
    t = DecimalType(precision, scale)
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        bound = decimal.Decimal(10) ** (precision - scale) - decimal.Decimal(1).scaleb(-scale)
        lowest = -bound  # negated inside the wide context: outside it would round to 28 digits

    @FAST
    @given(_nullable(st.decimals(min_value=lowest, max_value=bound, places=scale,
                                 allow_nan=False, allow_infinity=False)))
    def run(values):
        arr = pa.array(values, pa.decimal128(precision, scale))
        for tr in (IdentityTransform(), BucketTransform(16), TruncateTransform(10), TruncateTransform(3)):
            out = apply_arrow(tr, t, arr)
            got = [C.to_internal(tr.result_type(t), x) for x in out.to_pylist()]
            assert got == _scalar(tr, t, arr)
    run()


def test_apply_arrow_accepts_chunked_arrays():
    chunked = pa.chunked_array([pa.array([1, -1], pa.int64()), pa.array([None, 25], pa.int64())])
    assert apply_arrow(TruncateTransform(10), LONG, chunked).to_pylist() == [0, -10, None, 20]
    ts = pa.chunked_array([pa.array([-1], pa.timestamp("us")), pa.array([None], pa.timestamp("us"))])
    assert apply_arrow(YearTransform(), TS, ts).to_pylist() == [-1, None]


def test_apply_arrow_all_null_and_empty():
    for tr, t, at in ((YearTransform(), TS, pa.timestamp("us")), (TruncateTransform(3), STRING, pa.string()),
                      (BucketTransform(4), LONG, pa.int64()), (TruncateTransform(3), INT, pa.int32())):
        assert apply_arrow(tr, t, pa.array([None, None], at)).to_pylist() == [None, None]
        assert apply_arrow(tr, t, pa.array([], at)).to_pylist() == []


# ------------------------------------------------------------------ pyiceberg as a second opinion
def _pyi(t):
    from pyiceberg import types as pt

    s = str(t)
    if isinstance(t, DecimalType):
        return pt.DecimalType(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pt.FixedType(t.length)
    return {"int": pt.IntegerType(), "long": pt.LongType(), "date": pt.DateType(), "time": pt.TimeType(),
            "timestamp": pt.TimestampType(), "timestamptz": pt.TimestamptzType(), "string": pt.StringType(),
            "uuid": pt.UUIDType(), "binary": pt.BinaryType()}[s]


_DAYS = st.integers(-719162 + 1, 2932896 - 1)  # years 1..9999: pyiceberg goes through datetime
_MICROS = st.integers(-62135596800000000 + 86_400_000_000, 253402300799999999 - 86_400_000_000)
CROSS = [
    (INT, st.integers(-2**31 + 1000, 2**31 - 1), ["bucket[16]", "bucket[3]", "truncate[10]", "truncate[7]"]),
    (LONG, st.integers(-2**63 + 1000, 2**63 - 1), ["bucket[16]", "bucket[1000]", "truncate[10]", "truncate[3]"]),
    (DATE, _DAYS, ["bucket[16]", "year", "month", "day"]),
    (TIME, st.integers(0, 86_400_000_000 - 1), ["bucket[16]"]),
    (TS, _MICROS, ["bucket[16]", "year", "month", "day", "hour"]),
    (TSTZ, _MICROS, ["bucket[16]", "year", "month", "day", "hour"]),
    (STRING, st.text(max_size=10), ["bucket[16]", "bucket[5]", "truncate[1]", "truncate[3]"]),
    (UUID, st.uuids(), ["bucket[16]", "bucket[1000]"]),
    (BINARY, st.binary(max_size=10), ["bucket[16]", "truncate[2]"]),
    (FixedType(3), st.binary(min_size=3, max_size=3), ["bucket[16]"]),
    (DecimalType(38, 4), st.integers(-(10**38 - 1) + 100, 10**38 - 1 - 100).map(lambda n: C.from_unscaled(n, 4)),
     ["bucket[16]", "truncate[10]", "truncate[333]"]),
]


@pytest.mark.parametrize("source,values,transforms", CROSS, ids=[str(c[0]) for c in CROSS])
def test_same_values_as_pyiceberg(source, values, transforms):
    from pyiceberg.transforms import parse_transform as pyi_parse

    @settings(max_examples=60, deadline=None)
    @given(values)
    def run(v):
        for text in transforms:
            ours = parse_transform(text).apply(source, v)
            theirs = pyi_parse(text).transform(_pyi(source))(v)
            assert ours == theirs, text
    run()


@pytest.mark.parametrize("text", ["year", "month", "day", "hour"])
def test_same_human_strings_as_pyiceberg(text):
    from pyiceberg.transforms import parse_transform as pyi_parse

    @settings(max_examples=60, deadline=None)
    @given(_MICROS)
    def run(v):
        ours_t = parse_transform(text)
        r = ours_t.apply(TS, v)
        theirs = pyi_parse(text).to_human_string(_pyi(ours_t.result_type(TS)), r)
        assert ours_t.human(TS, r) == theirs
    run()
