"""Metrics, partition and manifest evaluators and inclusive projection (icefloe.iceberg.evaluators)."""
import datetime as dt
import decimal
import math
import random
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from icefloe.core import expressions as ex
from icefloe.core.expressions import (
    AlwaysFalse, AlwaysTrue, And, BoundReference, EqualTo, GreaterThan, GreaterThanOrEqual, In, IsNaN,
    IsNull, LessThan, LessThanOrEqual, Not, NotEqualTo, NotIn, NotNaN, NotNull, NotStartsWith, Or,
    StartsWith, Unknown, bind, parse_predicate,
)
from icefloe.core.types import parse_schema
from icefloe.iceberg import conversions
from icefloe.iceberg.evaluators import (
    ManifestEvaluator, MetricsEvaluator, PartitionEvaluator, project_inclusive,
)
from icefloe.iceberg.manifest import DataFile
from icefloe.iceberg.manifest_list import FieldSummary, summarize_partitions
from icefloe.iceberg.partitioning import PartitionField, PartitionSpec, build_spec
from icefloe.iceberg.transforms import parse_transform

SCHEMA = parse_schema(
    "id bigint, i int, name string, x double, f float, d date, ts timestamp, tn timestamp_ntz, "
    "dec decimal(9,2), flag boolean, b binary, s struct<a:int>")
F = {n: SCHEMA.find_field(n) for n in ["id", "i", "name", "x", "f", "d", "ts", "tn", "dec", "flag", "b", "s.a"]}


def B(text, schema=SCHEMA):
    return bind(parse_predicate(text), schema)


def enc(name, v):
    return conversions.to_bytes(F[name].field_type, v)


def data_file(record_count=10, values=None, nulls=None, nans=None, lower=None, upper=None, partition=()):
    """A DataFile whose stats are given by column name (bounds as internal values)."""
    def ids(d, conv=lambda n, v: v):
        if d is None:
            return None
        return {F[n].field_id: conv(n, v) for n, v in d.items()}

    return DataFile(
        file_path="f.parquet", file_format="PARQUET", partition=partition, record_count=record_count,
        file_size_in_bytes=100, value_counts=ids(values), null_value_counts=ids(nulls),
        nan_value_counts=ids(nans), lower_bounds=ids(lower, enc), upper_bounds=ids(upper, enc))


def may(text, f):
    return MetricsEvaluator(SCHEMA, B(text)).may_match(f)


# =========================================================================== metrics
class TestMetrics:
    ints = data_file(values={"id": 10}, nulls={"id": 0}, lower={"id": 5}, upper={"id": 15})

    @pytest.mark.parametrize("text,expected", [
        ("id = 5", True), ("id = 15", True), ("id = 10", True), ("id = 4", False), ("id = 16", False),
        ("id < 5", False), ("id < 6", True), ("id <= 5", True), ("id <= 4", False),
        ("id > 15", False), ("id > 14", True), ("id >= 15", True), ("id >= 16", False),
        ("id != 10", True), ("id in (1, 2, 20)", False), ("id in (1, 7)", True),
        ("id not in (5, 15)", True), ("id is null", False), ("id is not null", True),
        ("id between 16 and 20", False), ("id between 1 and 5", True),
        ("id < 5 or id > 15", False), ("id < 5 or id = 9", True), ("id > 1 and id < 5", False),
        ("not (id >= 5)", False), ("not (id between 5 and 15)", False), ("not (id between 6 and 15)", True),
        ("id = 4.5", False), ("id > 14.5", True), ("id > 15.5", False),
    ])
    def test_integer_bounds(self, text, expected):
        assert may(text, self.ints) is expected

    def test_not_equal_and_not_in_prune_a_constant_file(self):
        const = data_file(values={"id": 10}, nulls={"id": 3}, lower={"id": 7}, upper={"id": 7})
        assert not may("id != 7", const)
        assert not may("id not in (7, 8)", const)
        assert not may("not (id = 7)", const)
        assert may("id != 8", const)
        assert may("id not in (8)", const)
        assert may("id is null", const)

    def test_missing_stats_may_match(self):
        bare = data_file()
        for text in ["id = 1", "id < 0", "name like 'x%'", "id is null", "id is not null", "isnan(x)",
                     "not isnan(x)", "x > 1", "name not like 'a%'", "id != 1", "id not in (1)"]:
            assert may(text, bare), text
        only_lower = data_file(lower={"id": 5})
        assert not may("id < 5", only_lower)
        assert may("id > 100", only_lower)
        only_upper = data_file(upper={"id": 5})
        assert not may("id > 5", only_upper)
        assert may("id < -100", only_upper)

    def test_empty_file_never_matches(self):
        assert not may("id is null", data_file(record_count=0))
        assert not MetricsEvaluator(SCHEMA, AlwaysTrue()).may_match(data_file(record_count=0))

    def test_all_null_column(self):
        f = data_file(values={"id": 10, "name": 10}, nulls={"id": 10, "name": 10})
        for text in ["id = 1", "id < 1", "id >= 1", "id != 1", "id in (1, 2)", "id not in (1)",
                     "id is not null", "name like 'a%'", "name not like 'a%'"]:
            assert not may(text, f), text
        assert may("id is null", f)
        assert may("not (id is not null)", f)

    def test_null_counts(self):
        f = data_file(values={"id": 10}, nulls={"id": 0})
        assert not may("id is null", f)
        assert may("id is not null", f)
        g = data_file(values={"id": 10}, nulls={"id": 4}, lower={"id": 1}, upper={"id": 2})
        assert may("id is null", g)
        assert not may("id > 2", g)

    def test_truncated_string_bounds(self):
        # real values "abc..." to "abzzz...": lower truncated to a prefix, upper truncated and incremented
        f = data_file(values={"name": 5}, nulls={"name": 0}, lower={"name": "ab"}, upper={"name": "ac"})
        cases = {
            "name = 'abc'": True, "name = 'abzzzz'": True, "name = 'ab'": True, "name = 'ac'": True,
            "name = 'aa'": False, "name = 'ad'": False, "name = 'acb'": False, "name = 'a'": False,
            "name < 'ab'": False, "name < 'abc'": True, "name <= 'ab'": True, "name <= 'aaz'": False,
            "name > 'ac'": False, "name > 'abzzz'": True, "name >= 'ac'": True, "name >= 'acb'": False,
            "name like 'ab%'": True, "name like 'abq%'": True, "name like 'a%'": True, "name like '%'": True,
            "name like 'ac%'": True, "name like 'ad%'": False, "name like 'aa%'": False,
            "name like 'b%'": False, "name like 'abc'": True,
            "name not like 'a%'": False, "name not like 'ab%'": True,
            "name in ('aa', 'ad')": False, "name in ('aa', 'abq')": True,
        }
        for text, expected in cases.items():
            assert may(text, f) is expected, text

    def test_not_starts_with(self):
        f = data_file(values={"name": 5}, nulls={"name": 0}, lower={"name": "abc"}, upper={"name": "abz"})
        assert not may("name not like 'ab%'", f)
        assert may("name not like 'abc%'", f)
        g = data_file(values={"name": 5}, nulls={"name": 0}, lower={"name": "ab"}, upper={"name": "ab"})
        assert not may("name not like 'ab%'", g)
        assert may("name not like 'abc%'", g)

    def test_float_nan_handling(self):
        # bounds ignore NaN; Spark sorts NaN above every number
        f = data_file(values={"x": 10}, nulls={"x": 0}, nans={"x": 2}, lower={"x": 1.0}, upper={"x": 5.0})
        assert may("x > 100", f)            # the NaN rows match in Spark
        assert may("x >= 100", f)
        assert not may("x < 0", f)
        assert not may("x = 100", f)
        assert may("x != 3", f)
        assert may("isnan(x)", f)
        assert may("not isnan(x)", f)
        assert may("x = cast('NaN' as double)", f)
        no_nan = data_file(values={"x": 10}, nulls={"x": 0}, nans={"x": 0}, lower={"x": 1.0}, upper={"x": 5.0})
        assert not may("x > 100", no_nan)
        assert not may("isnan(x)", no_nan)
        assert not may("x = cast('NaN' as double)", no_nan)
        unknown_nan = data_file(values={"x": 10}, nulls={"x": 0}, lower={"x": 1.0}, upper={"x": 5.0})
        assert may("x > 100", unknown_nan)
        assert not may("x < 0", unknown_nan)
        all_nan = data_file(values={"x": 10}, nulls={"x": 0}, nans={"x": 10})
        assert not may("not isnan(x)", all_nan)
        assert not may("x < 100", all_nan)
        assert not may("x is null", all_nan)
        assert may("x > 100", all_nan)
        nulls_and_nans = data_file(values={"x": 10}, nulls={"x": 6}, nans={"x": 4})
        assert not may("x = 1", nulls_and_nans)
        assert not may("x <= 1", nulls_and_nans)
        assert may("x is null", nulls_and_nans)

    def test_nan_bounds_are_ignored(self):
        f = data_file(values={"x": 10}, nulls={"x": 0}, nans={"x": 0},
                      lower={"x": math.nan}, upper={"x": math.nan})
        assert may("x = 3", f)
        assert may("x < -1e300", f)

    def test_float_column_with_double_literal(self):
        f = data_file(values={"f": 3}, nulls={"f": 0}, nans={"f": 0}, lower={"f": 0.5}, upper={"f": 1.5})
        assert may("f = 1.5", f)
        assert not may("f > 1.5", f)

    def test_other_types(self):
        day = (dt.date(2023, 6, 1) - dt.date(1970, 1, 1)).days
        f = data_file(values={"d": 5, "ts": 5, "dec": 5, "flag": 5, "b": 5},
                      nulls={"d": 0, "ts": 0, "dec": 0, "flag": 0, "b": 0},
                      lower={"d": day, "ts": -3_600_000_000, "dec": decimal.Decimal("1.00"),
                             "flag": False, "b": b"\x01"},
                      upper={"d": day + 10, "ts": 0, "dec": decimal.Decimal("2.50"), "flag": False, "b": b"\x05"})
        assert may("d = '2023-06-05'", f)
        assert not may("d < '2023-06-01'", f)
        assert not may("d > timestamp'2023-06-11 00:00:00'", f)
        assert may("d >= timestamp'2023-06-11 00:00:00'", f)
        assert not may("d >= timestamp'2023-06-11 00:00:01'", f)
        assert may("ts >= '1969-12-31 23:00:00'", f)
        assert not may("ts < '1969-12-31 23:00:00'", f)
        assert not may("ts > '1970-01-01 00:00:00'", f)
        assert not may("dec > 2.5", f)
        assert may("dec >= 2.5", f)
        assert not may("dec < 1", f)
        assert not may("flag", f)
        assert may("not flag", f)
        assert not may("b > X'05'", f)
        assert may("b = X'03'", f)

    def test_promoted_int_bounds(self):
        # a long column whose old files were written as int (4-byte bounds)
        f = DataFile("f", "PARQUET", (), 3, 1, value_counts={F["id"].field_id: 3},
                     null_value_counts={F["id"].field_id: 0},
                     lower_bounds={F["id"].field_id: conversions.to_bytes(F["i"].field_type, 3)},
                     upper_bounds={F["id"].field_id: conversions.to_bytes(F["i"].field_type, 9)})
        assert not may("id > 9", f)
        assert may("id = 4", f)

    def test_nested_field(self):
        f = data_file(values={"s.a": 3}, nulls={"s.a": 0}, lower={"s.a": 1}, upper={"s.a": 2})
        assert not may("s.a = 3", f)
        assert may("s.a = 2", f)

    def test_unknown_terms_may_match_in_both_polarities(self):
        f = data_file(values={"id": 10}, nulls={"id": 0}, lower={"id": 5}, upper={"id": 15})
        assert may("abs(id) = 100", f)
        assert may("not (abs(id) = 100)", f)
        assert may("not (id = 1 or abs(id) = 1)", f)
        assert not may("id = 1 and abs(id) = 1", f)
        assert not may("not (id >= 5 or abs(id) = 1)", f)

    def test_unbound_expression_is_rejected(self):
        with pytest.raises(ex.ExpressionError):
            MetricsEvaluator(SCHEMA, EqualTo("id", 1)).may_match(data_file())


# =========================================================================== projection
PSCHEMA = parse_schema("id bigint, i int, name string, d date, ts timestamp, tn timestamp_ntz, "
                       "dec decimal(9,2), b binary, x double")


def spec_of(*terms):
    return build_spec(PSCHEMA, list(terms))


def proj(text, *terms):
    spec = spec_of(*terms)
    return project_inclusive(bind(parse_predicate(text), PSCHEMA), spec, PSCHEMA), spec


def pref(spec, i=0):
    pf = spec.fields[i]
    return BoundReference(pf.field_id, pf.name, spec.partition_type(PSCHEMA).fields[i].field_type)


def days(s):
    return (dt.date.fromisoformat(s) - dt.date(1970, 1, 1)).days


class TestProjection:
    def test_identity_keeps_the_predicate(self):
        for text in ["id = 3", "id < 3", "id != 3", "id in (1, 2)", "id not in (1)", "id is null",
                     "id is not null"]:
            e, spec = proj(text, "id")
            bound = bind(parse_predicate(text), PSCHEMA)
            assert e == bound.with_term(pref(spec)), text
        e, spec = proj("name like 'ab%'", "name")
        assert e == StartsWith(pref(spec), "ab")
        e, spec = proj("isnan(x)", "x")
        assert e == IsNaN(pref(spec))

    def test_columns_without_partition_field_project_to_true(self):
        e, spec = proj("name = 'x' and id = 3", "id")
        assert e == EqualTo(pref(spec), 3)
        e, spec = proj("name = 'x' or id = 3", "id")
        assert e == AlwaysTrue()
        e, spec = proj("name = 'x'")
        assert e == AlwaysTrue()

    def test_not_is_pushed_down_before_projecting(self):
        e, spec = proj("not (id != 3)", "id")
        assert e == EqualTo(pref(spec), 3)
        e, spec = proj("not (id = 3 and abs(i) = 1)", "id")
        assert e == AlwaysTrue()  # the unknown term keeps everything
        e, spec = proj("not (id < 3 or name is null)", "id")
        assert e == GreaterThanOrEqual(pref(spec), 3)

    def test_bucket(self):
        t = parse_transform("bucket[16]")
        src = PSCHEMA.find_field("id").field_type
        e, spec = proj("id = 34", "bucket(16, id)")
        assert e == EqualTo(pref(spec), t.apply(src, 34))
        e, spec = proj("id in (1, 2, 3)", "bucket(16, id)")
        assert e == In(pref(spec), [t.apply(src, v) for v in (1, 2, 3)])
        for text in ["id < 3", "id > 3", "id != 3", "id not in (3)", "id <= 3", "id >= 3"]:
            assert proj(text, "bucket(16, id)")[0] == AlwaysTrue(), text
        e, spec = proj("id is null", "bucket(16, id)")
        assert e == IsNull(pref(spec))
        e, spec = proj("name = 'abc'", "bucket(4, name)")
        assert e == EqualTo(pref(spec), parse_transform("bucket[4]").apply(PSCHEMA.find_field("name").field_type, "abc"))

    def test_truncate_integers(self):
        e, spec = proj("id = 15", "truncate(10, id)")
        assert e == EqualTo(pref(spec), 10)
        assert proj("id < 20", "truncate(10, id)")[0] == LessThanOrEqual(pref(spec), 10)   # x <= 19
        assert proj("id < 21", "truncate(10, id)")[0] == LessThanOrEqual(pref(spec), 20)
        assert proj("id <= 20", "truncate(10, id)")[0] == LessThanOrEqual(pref(spec), 20)
        assert proj("id > 19", "truncate(10, id)")[0] == GreaterThanOrEqual(pref(spec), 20)  # x >= 20
        assert proj("id > 18", "truncate(10, id)")[0] == GreaterThanOrEqual(pref(spec), 10)
        assert proj("id >= 15", "truncate(10, id)")[0] == GreaterThanOrEqual(pref(spec), 10)
        assert proj("id = -1", "truncate(10, id)")[0] == EqualTo(pref(spec), -10)
        assert proj("id in (1, 15, -3)", "truncate(10, id)")[0] == In(pref(spec), [0, 10, -10])
        assert proj("id != 15", "truncate(10, id)")[0] == AlwaysTrue()
        assert proj("id not in (15)", "truncate(10, id)")[0] == AlwaysTrue()

    def test_truncate_decimal(self):
        D = decimal.Decimal
        e, spec = proj("dec = 1.37", "truncate(10, dec)")
        assert e == EqualTo(pref(spec), D("1.30"))
        assert proj("dec < 1.40", "truncate(10, dec)")[0] == LessThanOrEqual(pref(spec), D("1.30"))
        assert proj("dec > 1.39", "truncate(10, dec)")[0] == GreaterThanOrEqual(pref(spec), D("1.40"))

    def test_truncate_strings(self):
        e, spec = proj("name = 'abcdef'", "truncate(3, name)")
        r = pref(spec)
        assert e == EqualTo(r, "abc")
        assert proj("name < 'abcdef'", "truncate(3, name)")[0] == LessThanOrEqual(r, "abc")
        assert proj("name > 'abcdef'", "truncate(3, name)")[0] == GreaterThanOrEqual(r, "abc")
        assert proj("name in ('abcd', 'xy')", "truncate(3, name)")[0] == In(r, ["abc", "xy"])
        # StartsWith: a prefix at least as long as the width fixes the partition value
        assert proj("name like 'abcd%'", "truncate(3, name)")[0] == EqualTo(r, "abc")
        assert proj("name like 'abc%'", "truncate(3, name)")[0] == EqualTo(r, "abc")
        assert proj("name like 'ab%'", "truncate(3, name)")[0] == StartsWith(r, "ab")
        assert proj("name not like 'ab%'", "truncate(3, name)")[0] == NotStartsWith(r, "ab")
        assert proj("name not like 'abc%'", "truncate(3, name)")[0] == NotStartsWith(r, "abc")
        assert proj("name not like 'abcd%'", "truncate(3, name)")[0] == AlwaysTrue()

    def test_truncate_binary(self):
        e, spec = proj("b = X'010203'", "truncate(2, b)")
        assert e == EqualTo(pref(spec), b"\x01\x02")
        assert proj("b < X'010203'", "truncate(2, b)")[0] == LessThanOrEqual(pref(spec), b"\x01\x02")

    @pytest.mark.parametrize("term,text,expected", [
        # year
        ("years(ts)", "ts < '2023-01-01 00:00:00'", ("<=", 52)),
        ("years(ts)", "ts <= '2023-01-01 00:00:00'", ("<=", 53)),
        ("years(ts)", "ts > '2022-12-31 23:59:59.999999'", (">=", 53)),
        ("years(ts)", "ts >= '2022-12-31 23:59:59.999999'", (">=", 52)),
        ("years(ts)", "ts = '2023-06-01 10:00:00'", ("=", 53)),
        ("years(ts)", "ts < '1970-01-01 00:00:00'", ("<=", -1)),
        ("years(ts)", "ts < '1969-01-01 00:00:00'", ("<=", -2)),
        ("years(ts)", "ts >= '1969-12-31 23:59:59'", (">=", -1)),
        ("years(ts)", "ts > '1969-12-31 23:59:59.999999'", (">=", 0)),
        ("years(d)", "d < '2023-01-01'", ("<=", 52)),
        ("years(d)", "d > '2022-12-31'", (">=", 53)),
        ("years(d)", "d = '1969-07-20'", ("=", -1)),
        # month
        ("months(ts)", "ts < '2023-02-01 00:00:00'", ("<=", 636)),
        ("months(ts)", "ts >= '2023-02-01 00:00:00'", (">=", 637)),
        ("months(ts)", "ts < '1970-01-01 00:00:00'", ("<=", -1)),
        ("months(ts)", "ts = '1969-12-15 00:00:00'", ("=", -1)),
        ("months(ts)", "ts > '1969-11-30 23:59:59.999999'", (">=", -1)),
        ("months(d)", "d <= '1969-12-31'", ("<=", -1)),
        ("months(d)", "d < '1969-12-01'", ("<=", -2)),
        # day
        ("days(ts)", "ts < '2023-01-02 00:00:00'", ("<=", days("2023-01-01"))),
        ("days(ts)", "ts < '2023-01-02 00:00:01'", ("<=", days("2023-01-02"))),
        ("days(ts)", "ts > '1969-12-31 23:59:59.999999'", (">=", 0)),
        ("days(ts)", "ts >= '1969-12-31 00:00:01'", (">=", -1)),
        ("days(ts)", "ts < '1969-12-31 00:00:00'", ("<=", -2)),
        ("days(ts)", "ts = '1969-12-31 12:00:00'", ("=", -1)),
        ("days(tn)", "tn < '1970-01-01 00:00:00'", ("<=", -1)),
        ("days(d)", "d < '2023-01-02'", ("<=", days("2023-01-01"))),
        ("days(d)", "d > '1969-12-30'", (">=", -1)),
        # hour
        ("hours(ts)", "ts < '1970-01-01 00:00:00'", ("<=", -1)),
        ("hours(ts)", "ts <= '1970-01-01 00:00:00'", ("<=", 0)),
        ("hours(ts)", "ts >= '1969-12-31 23:00:00'", (">=", -1)),
        ("hours(ts)", "ts > '1969-12-31 22:59:59.999999'", (">=", -1)),
        ("hours(ts)", "ts = '1969-12-31 23:30:00'", ("=", -1)),
        ("hours(ts)", "ts < '1969-12-31 22:00:00.000001'", ("<=", -2)),
        ("hours(tn)", "tn > '2023-01-01 05:30:00'", (">=", 19358 * 24 + 5)),
        ("hours(tn)", "tn > '2023-01-01 05:59:59.999999'", (">=", 19358 * 24 + 6)),
    ])
    def test_time_transforms(self, term, text, expected):
        e, spec = proj(text, term)
        op, v = expected
        cls = {"<=": LessThanOrEqual, ">=": GreaterThanOrEqual, "=": EqualTo}[op]
        assert e == cls(pref(spec), v), (str(e), expected)

    def test_time_transform_in_and_unsupported_ops(self):
        e, spec = proj("d in ('2023-01-05', '2023-01-20', '2022-12-31')", "months(d)")
        assert e == In(pref(spec), [636, 635])
        for text in ["ts != '2023-01-01'", "ts not in ('2023-01-01')"]:
            assert proj(text, "days(ts)")[0] == AlwaysTrue()
        assert proj("ts is not null", "days(ts)")[0] == NotNull(pref(proj("ts is null", "days(ts)")[1]))

    def test_void(self):
        spec = PartitionSpec([PartitionField(PSCHEMA.find_field("id").field_id, 1000,
                                             parse_transform("void"), "id_null")])
        for text in ["id = 1", "id is null", "id is not null", "id in (1, 2)"]:
            assert project_inclusive(bind(parse_predicate(text), PSCHEMA), spec, PSCHEMA) == AlwaysTrue()

    def test_several_partition_fields_on_one_column_are_anded(self):
        e, spec = proj("ts = '2023-03-04 05:06:07'", "years(ts)", "days(ts)", "bucket(8, ts)")
        t = parse_transform("bucket[8]")
        us = conversions.to_internal(PSCHEMA.find_field("ts").field_type, "2023-03-04T05:06:07")
        assert e == And(And(EqualTo(pref(spec, 0), 53), EqualTo(pref(spec, 1), days("2023-03-04"))),
                        EqualTo(pref(spec, 2), t.apply(PSCHEMA.find_field("ts").field_type, us)))
        e, spec = proj("ts < '2023-03-04 00:00:00'", "years(ts)", "bucket(8, ts)", "days(ts)")
        assert e == And(LessThanOrEqual(pref(spec, 0), 53), LessThanOrEqual(pref(spec, 2), days("2023-03-03")))

    def test_boolean_structure_and_constants(self):
        e, spec = proj("id = 1 or (id > 5 and name = 'x')", "id")
        r = pref(spec)
        assert e == Or(EqualTo(r, 1), GreaterThan(r, 5))
        assert proj("id = 1.5", "id")[0] == AlwaysFalse()
        assert proj("abs(id) = 1", "id")[0] == AlwaysTrue()


# =========================================================================== partition evaluator
class TestPartitionEvaluator:
    def test_exact_on_partition_values(self):
        spec = spec_of("days(ts)", "name")
        ptype = spec.partition_type(PSCHEMA)
        pe = PartitionEvaluator(ptype, project_inclusive(
            B("ts >= '2023-01-02 10:00:00' and name like 'ab%'", PSCHEMA), spec, PSCHEMA))
        assert pe.eval((days("2023-01-02"), "abc"))
        assert pe.eval((days("2023-01-05"), "ab"))
        assert not pe.eval((days("2023-01-01"), "abc"))
        assert not pe.eval((days("2023-01-03"), "b"))
        assert not pe.eval((days("2023-01-03"), None))
        assert not pe.eval((None, "abc"))

    def test_null_and_nan_partition_values(self):
        spec = spec_of("x")
        ptype = spec.partition_type(PSCHEMA)

        def ev(text, value):
            return PartitionEvaluator(ptype, project_inclusive(B(text, PSCHEMA), spec, PSCHEMA)).eval((value,))

        assert ev("x is null", None)
        assert not ev("x is not null", None)
        assert ev("x > 1e300", math.nan)
        assert not ev("x < 0", math.nan)
        assert ev("isnan(x)", math.nan)
        assert not ev("not isnan(x)", math.nan)
        assert ev("not isnan(x)", None)

    def test_always_true_and_false(self):
        ptype = spec_of("id").partition_type(PSCHEMA)
        assert PartitionEvaluator(ptype, AlwaysTrue()).eval((1,))
        assert not PartitionEvaluator(ptype, AlwaysFalse()).eval((1,))


# =========================================================================== manifest evaluator
def summary(t, lo=None, hi=None, contains_null=False, contains_nan=False):
    return FieldSummary(contains_null, contains_nan,
                        None if lo is None else conversions.to_bytes(t, lo),
                        None if hi is None else conversions.to_bytes(t, hi))


class TestManifestEvaluator:
    spec = spec_of("id", "days(ts)", "x", "name")
    ptype = spec.partition_type(PSCHEMA)
    types = [f.field_type for f in ptype.fields]

    def me(self, text):
        return ManifestEvaluator(self.ptype, project_inclusive(B(text, PSCHEMA), self.spec, PSCHEMA))

    def sums(self, **kw):
        base = [summary(self.types[0], 10, 20), summary(self.types[1], 100, 200),
                summary(self.types[2], 1.0, 2.0), summary(self.types[3], "b", "d")]
        for i, name in enumerate(["id", "day", "x", "name"]):
            if name in kw:
                base[i] = kw[name]
        return base

    @pytest.mark.parametrize("text,expected", [
        ("id = 10", True), ("id = 9", False), ("id = 21", False), ("id < 10", False), ("id <= 10", True),
        ("id > 20", False), ("id >= 20", True), ("id in (1, 2, 30)", False), ("id in (1, 15)", True),
        ("id != 10", True), ("id is null", False), ("id is not null", True),
        ("ts < '1970-04-11 00:00:01'", True), ("ts < '1970-04-11 00:00:00'", False),
        ("ts > '1970-07-20 00:00:00'", True), ("ts >= '1970-07-21 00:00:00'", False),
        ("x > 2", False), ("x < 1", False), ("x = 1.5", True),
        ("name like 'c%'", True), ("name like 'e%'", False), ("name like 'a%'", False),
        ("name = 'a' or id = 15", True), ("name = 'a' or id = 25", False),
        ("abs(id) = 3", True), ("not (abs(id) = 3)", True),
    ])
    def test_bounds(self, text, expected):
        assert self.me(text).may_match(self.sums()) is expected

    def test_nulls_and_nans(self):
        t = self.types
        only_nulls = self.sums(id=summary(t[0], contains_null=True))
        assert self.me("id is null").may_match(only_nulls)
        assert not self.me("id is not null").may_match(only_nulls)
        assert not self.me("id = 1").may_match(only_nulls)
        assert not self.me("id != 1").may_match(only_nulls)
        nan_too = self.sums(x=summary(t[2], 1.0, 2.0, contains_nan=True))
        assert self.me("x > 2").may_match(nan_too)           # NaN is above every number
        assert not self.me("x < 1").may_match(nan_too)
        assert self.me("isnan(x)").may_match(nan_too)
        assert not self.me("isnan(x)").may_match(self.sums())
        unknown_nan = self.sums(x=summary(t[2], 1.0, 2.0, contains_nan=None))
        assert self.me("x > 2").may_match(unknown_nan)
        all_nan = self.sums(x=summary(t[2], contains_nan=True))
        assert not self.me("x = 1").may_match(all_nan)
        assert not self.me("not isnan(x)").may_match(all_nan)
        assert self.me("x > 1").may_match(all_nan)

    def test_missing_summaries_may_match(self):
        assert self.me("id = 999").may_match(None)
        assert self.me("id = 999").may_match([])
        assert self.me("name = 'zzz'").may_match(self.sums()[:2])
        no_bounds = self.sums(id=FieldSummary(False, None, None, None))
        assert self.me("id = 999").may_match(no_bounds)

    def test_matches_summaries_written_by_the_manifest_list(self):
        parts = [(12, 150, 1.5, "c"), (None, 120, math.nan, "b")]
        entries = [SimpleNamespace(data_file=SimpleNamespace(partition=p)) for p in parts]
        sums = summarize_partitions(self.ptype, entries)
        assert self.me("id is null").may_match(sums)
        assert self.me("id = 12").may_match(sums)
        assert not self.me("id = 13").may_match(sums)
        assert self.me("isnan(x)").may_match(sums)


# =========================================================================== properties
# Random rows and random predicates: whenever a row matches (under SQL's three-valued
# logic, evaluated by the independent oracle below on the original, un-rewritten
# expression), the file and partition evaluators must say "may match".
PROP_SCHEMA = parse_schema("i bigint, s string, x double, d date, ts timestamp, dec decimal(5,2)")
PF = {n: PROP_SCHEMA.find_field(n) for n in ["i", "s", "x", "d", "ts", "dec"]}
US_H = 3_600_000_000
TS_POINTS = [-366 * 24 * US_H - 1, -24 * US_H - 1, -24 * US_H, -US_H - 1, -US_H, -1, 0, 1, US_H - 1, US_H,
             24 * US_H, 31 * 24 * US_H, 365 * 24 * US_H, 365 * 24 * US_H - 1]

VALUES = {
    "i": st.one_of(st.none(), st.integers(-25, 25)),
    "s": st.one_of(st.none(), st.text(alphabet="ab\u00e9\U0001f600", max_size=4)),
    "x": st.one_of(st.none(), st.sampled_from([-2.5, -0.0, 0.0, 1.0, 3.5, math.nan, math.inf, -math.inf])),
    "d": st.one_of(st.none(), st.integers(-400, 400)),
    "ts": st.one_of(st.none(), st.sampled_from(TS_POINTS),
                    st.integers(-400 * 24 * US_H, 400 * 24 * US_H)),
    "dec": st.one_of(st.none(), st.integers(-300, 300).map(lambda u: decimal.Decimal(u).scaleb(-2))),
}
ROWS = st.lists(st.fixed_dictionaries({n: VALUES[n] for n in PF}), min_size=1, max_size=6)
_STEP = {"i": 1, "d": 1, "ts": 1, "dec": decimal.Decimal("0.01")}
_CMP = [EqualTo, NotEqualTo, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual]


def _random_value(rnd, name):
    if name == "i":
        return rnd.randint(-25, 25)
    if name == "s":
        return "".join(rnd.choice("ab\u00e9\U0001f600") for _ in range(rnd.randint(0, 4)))
    if name == "x":
        return rnd.choice([-2.5, -0.0, 0.0, 1.0, 3.5, math.inf, -math.inf])
    if name == "d":
        return rnd.randint(-400, 400)
    if name == "ts":
        return rnd.choice(TS_POINTS) if rnd.random() < 0.5 else rnd.randint(-400 * 24 * US_H, 400 * 24 * US_H)
    return decimal.Decimal(rnd.randint(-300, 300)).scaleb(-2)


def _candidates(name, rows):
    """The rows' values and their neighbours: boundaries (literal == bound, prefixes)."""
    out = []
    for r in rows:
        v = r[name]
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        if name in _STEP:
            out += [v, v - _STEP[name], v + _STEP[name]]
            if name == "ts":
                out += [v - v % US_H, v - v % (24 * US_H), v - v % US_H + US_H]
        elif name == "s":
            out += [v[:k] for k in range(len(v) + 1)] + [v + "a"]
        else:
            out.append(v)
    return out


def random_expr(seed, rows, max_depth=3):
    """A random bound expression over PROP_SCHEMA whose literals are often the rows' values."""
    rnd = random.Random(seed)
    cands = {n: _candidates(n, rows) for n in PF}

    def lit(name):
        c = cands[name]
        return rnd.choice(c) if c and rnd.random() < 0.7 else _random_value(rnd, name)

    def leaf():
        name = rnd.choices(list(PF), weights=[2, 4, 2, 1, 2, 1])[0]
        r = BoundReference(PF[name].field_id, name, PF[name].field_type)
        kinds = ["cmp"] * 5 + ["set"] * 2 + ["null", "unknown"]
        if name == "x":
            kinds += ["nan"] * 2
        if name == "s":
            kinds += ["prefix"] * 7
        k = rnd.choice(kinds)
        if k == "cmp":
            return rnd.choice(_CMP)(r, lit(name))
        if k == "set":
            return rnd.choice([In, NotIn])(r, [lit(name) for _ in range(rnd.randint(1, 3))])
        if k == "null":
            return rnd.choice([IsNull, NotNull])(r)
        if k == "nan":
            return rnd.choice([IsNaN, NotNaN])(r)
        if k == "prefix":
            return rnd.choice([StartsWith, NotStartsWith])(r, lit(name))
        return Unknown(f"f({name})")

    def node(depth):
        roll = rnd.random()
        if depth >= max_depth or roll < 0.3:
            return leaf() if rnd.random() < 0.97 else rnd.choice([AlwaysTrue(), AlwaysFalse()])
        if roll < 0.6:
            return And(node(depth + 1), node(depth + 1))
        if roll < 0.85:
            return Or(node(depth + 1), node(depth + 1))
        return Not(node(depth + 1))

    return node(0)


def _k_and(a, b):
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _k_or(a, b):
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def _cmp_key(v):
    if isinstance(v, float):
        return (1, 0.0) if math.isnan(v) else (0, v)
    return (0, v)


def oracle(e, row, unknown):
    """SQL three-valued logic (True/False/None) with Spark's NaN ordering."""
    if isinstance(e, And):
        return _k_and(oracle(e.left, row, unknown), oracle(e.right, row, unknown))
    if isinstance(e, Or):
        return _k_or(oracle(e.left, row, unknown), oracle(e.right, row, unknown))
    if isinstance(e, Not):
        v = oracle(e.child, row, unknown)
        return None if v is None else not v
    if isinstance(e, AlwaysTrue):
        return True
    if isinstance(e, AlwaysFalse):
        return False
    if isinstance(e, Unknown):
        return unknown(e)
    v = row[e.term.name]
    is_nan = isinstance(v, float) and math.isnan(v)
    if isinstance(e, IsNull):
        return v is None
    if isinstance(e, NotNull):
        return v is not None
    if isinstance(e, IsNaN):
        return is_nan
    if isinstance(e, NotNaN):
        return not is_nan
    if v is None:
        return None
    if isinstance(e, (In, NotIn)):
        hit = any(_cmp_key(v) == _cmp_key(x) for x in e.literals)
        return hit if isinstance(e, In) else not hit
    if isinstance(e, StartsWith):
        return v.startswith(e.literal)
    if isinstance(e, NotStartsWith):
        return not v.startswith(e.literal)
    a, b = _cmp_key(v), _cmp_key(e.literal)
    return {EqualTo: a == b, NotEqualTo: a != b, LessThan: a < b, LessThanOrEqual: a <= b,
            GreaterThan: a > b, GreaterThanOrEqual: a >= b}[type(e)]


def _unknown_chooser(seed):
    rnd = random.Random(seed ^ 0x5EED)
    memo = {}

    def choose(key):
        if key not in memo:
            memo[key] = rnd.choice([True, False, None])
        return memo[key]

    return choose


def _truncate_upper(s, n):
    """Iceberg's truncated upper bound: the first n code points with the last one incremented."""
    if len(s) <= n:
        return s
    chars = list(s[:n])
    while chars:
        c = ord(chars[-1]) + 1
        if c == 0xD800:
            c = 0xE000
        if c <= 0x10FFFF:
            chars[-1] = chr(c)
            return "".join(chars)
        chars.pop()
    return None


def file_for(rows, drop, trunc=2):
    """A DataFile with the metrics a writer would record for ``rows`` (some dropped)."""
    vc, nc, nanc, lo, hi = {}, {}, {}, {}, {}
    for name, f in PF.items():
        vals = [r[name] for r in rows]
        fid = f.field_id
        vc[fid] = len(vals)
        nc[fid] = sum(v is None for v in vals)
        if name == "x":
            nanc[fid] = sum(isinstance(v, float) and math.isnan(v) for v in vals)
        real = [v for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if real:
            mn, mx = min(real), max(real)
            if name == "s":
                mn = mn[:trunc]
                mx = _truncate_upper(mx, trunc)
            lo[fid] = conversions.to_bytes(f.field_type, mn)
            if mx is not None:
                hi[fid] = conversions.to_bytes(f.field_type, mx)
    for i, d in enumerate([vc, nc, nanc, lo, hi]):
        for fid in list(d):
            if (fid * 7 + i) % 5 in drop:
                del d[fid]
    return DataFile("f", "PARQUET", (), len(rows), 1, value_counts=vc, null_value_counts=nc,
                    nan_value_counts=nanc, lower_bounds=lo, upper_bounds=hi)


SPECS = [
    ["i", "s", "x", "d", "ts", "dec"],
    ["bucket(4, i)", "truncate(2, s)", "years(ts)", "months(d)", "truncate(10, dec)"],
    ["truncate(10, i)", "truncate(1, s)", "days(ts)", "days(d)", "bucket(3, dec)"],
    ["hours(ts)", "years(d)", "bucket(5, s)", "truncate(3, i)"],
    ["months(ts)", "days(ts)", "hours(ts)", "years(ts)", "bucket(2, ts)"],
]


EXPRS_PER_EXAMPLE = 5


@settings(max_examples=150, deadline=None, database=None)
@given(rows=ROWS, seed=st.integers(0, 2 ** 32), drop=st.sets(st.integers(0, 4), max_size=2),
       trunc=st.integers(1, 3))
def test_metrics_evaluator_has_no_false_negatives(rows, seed, drop, trunc):
    f = file_for(rows, drop, trunc)
    for sub in range(EXPRS_PER_EXAMPLE):
        expr = random_expr(seed * EXPRS_PER_EXAMPLE + sub, rows)
        unknown = _unknown_chooser(seed * EXPRS_PER_EXAMPLE + sub)
        matching = [r for k, r in enumerate(rows) if oracle(expr, r, lambda u: unknown((u, k))) is True]
        bound = bind(expr, PROP_SCHEMA)  # already bound: a no-op that checks the ids
        if matching:
            assert MetricsEvaluator(PROP_SCHEMA, bound).may_match(f), (str(expr), rows)


@settings(max_examples=150, deadline=None, database=None)
@given(rows=ROWS, seed=st.integers(0, 2 ** 32), spec_terms=st.sampled_from(SPECS))
def test_partition_projection_has_no_false_negatives(rows, seed, spec_terms):
    spec = build_spec(PROP_SCHEMA, spec_terms)
    ptype = spec.partition_type(PROP_SCHEMA)
    parts = [spec.partition_for_row(PROP_SCHEMA, {PF[n].field_id: r[n] for n in PF}) for r in rows]
    summaries = summarize_partitions(
        ptype, [SimpleNamespace(data_file=SimpleNamespace(partition=p)) for p in parts])
    for sub in range(EXPRS_PER_EXAMPLE):
        expr = random_expr(seed * EXPRS_PER_EXAMPLE + sub, rows)
        projected = project_inclusive(expr, spec, PROP_SCHEMA)
        pe = PartitionEvaluator(ptype, projected)
        unknown = _unknown_chooser(seed * EXPRS_PER_EXAMPLE + sub)
        any_match = False
        for k, (r, part) in enumerate(zip(rows, parts)):
            if oracle(expr, r, lambda u: unknown((u, k))) is True:
                any_match = True
                assert pe.eval(part), (str(expr), r, part, str(projected))
        if any_match:
            assert ManifestEvaluator(ptype, projected).may_match(summaries), (str(expr), rows, str(projected))


@settings(max_examples=80, deadline=None, database=None)
@given(rows=ROWS, seed=st.integers(0, 2 ** 32))
def test_evaluate_agrees_with_three_valued_logic(rows, seed):
    """Without unknown terms, ``evaluate`` (after NOT rewriting) is exactly SQL's TRUE."""
    for sub in range(EXPRS_PER_EXAMPLE):
        expr = random_expr(seed * EXPRS_PER_EXAMPLE + sub, rows)
        has_unknown = "UNKNOWN(" in str(expr)
        for r in rows:
            row = {PF[n].field_id: r[n] for n in PF}
            want = oracle(expr, r, lambda u: True) is True
            got = ex.evaluate(expr, row)
            if has_unknown:
                assert got or not want
            else:
                assert got == want, (str(expr), r)
