"""Scan planning: ADD minus DELETE, and pruning by partition, bucket and value statistics."""
import datetime as dt
import decimal

import pyarrow as pa
import pytest

from icefloe.paimon import predicate as pr
from icefloe.paimon.partition import java_double_string, partition_path
from icefloe.paimon.stats import truncate_max, truncate_min
from icefloe.paimon.types import parse_atomic, parse_field


def fields(*specs):
    return [parse_field({"id": i, "name": n, "type": t}) for i, (n, t) in enumerate(specs)]


F = fields(("id", "BIGINT"), ("name", "STRING"), ("d", "DATE"), ("x", "DOUBLE"), ("amount", "DECIMAL(10, 2)"))


def bound(text):
    return pr.bind(pr.parse_where(text), F)


def leaf(e):
    """(kind, column, literal or literals) of a bound leaf of the shared expression tree."""
    value = getattr(e, "literal", None) if hasattr(e, "literal") else getattr(e, "literals", None)
    return type(e).__name__, e.term.name, value


def test_parse_and_bind():
    # the expression tree, parser and binder are the ones Iceberg tables use (icefloe.core.expressions)
    p = bound("id > 5 AND d = DATE '2024-01-02' AND name IN ('a', 'b') AND amount <= 1.5")
    leaves = [leaf(e) for e in pr.conjuncts(p)]
    days = (dt.date(2024, 1, 2) - dt.date(1970, 1, 1)).days          # dates bind to days since the epoch
    assert ("GreaterThan", "id", 5) in leaves
    assert ("EqualTo", "d", days) in leaves
    assert ("In", "name", ("a", "b")) in leaves
    assert ("LessThanOrEqual", "amount", decimal.Decimal("1.5")) in leaves
    assert leaf(bound("5 < id")) == ("GreaterThan", "id", 5)
    assert leaf(bound("ID = 3")) == ("EqualTo", "id", 3)                   # case-insensitive
    assert leaf(bound("d = '2024-01-02'")) == ("EqualTo", "d", days)        # string to date
    assert [leaf(e) for e in pr.conjuncts(bound("id between 1 and 3"))] == [
        ("GreaterThanOrEqual", "id", 1), ("LessThanOrEqual", "id", 3)]
    assert leaf(bound("name like 'ab%'")) == ("StartsWith", "name", "ab")
    assert type(bound("name is not null")).__name__ == "NotNull"


def test_the_same_text_binds_to_the_same_tree_for_both_formats():
    from icefloe.core import expressions as ex
    from icefloe.paimon.types import to_core_schema

    text = "id > 5 and not (name in ('a', 'b') or d < '2024-01-01')"
    paimon = bound(text)
    iceberg = ex.rewrite_not(ex.bind(ex.parse_predicate(text), to_core_schema(F)))
    assert paimon == iceberg and "NotIn" in repr(paimon)


def test_not_prunes_by_three_valued_logic():
    # NOT is pushed to the leaves: NOT (id < 5) is id >= 5, which no row of [0, 4] satisfies
    assert not pr.may_match(bound("not (id < 5)"), {"id": pr.ColumnRange(0, 4, 0, 10)})
    assert pr.may_match(bound("not (id < 5)"), {"id": pr.ColumnRange(0, 5, 0, 10)})
    # NOT (id = 1) on a file whose ids are all 1 or null: 1 fails it, null makes it unknown, never true
    assert not pr.may_match(bound("not (id = 1)"), {"id": pr.ColumnRange(1, 1, 2, 4)})
    assert not pr.may_match(bound("not (name like 'b%')"), {"name": pr.ColumnRange("ba", "bz", 0, 4)})
    assert pr.may_match(bound("not (name like 'b%')"), {"name": pr.ColumnRange("az", "bz", 0, 4)})
    assert not pr.may_match(bound("not (id in (1, 2))"), {"id": pr.ColumnRange(2, 2, 0, 4)})


@pytest.mark.parametrize("text", [
    "x > 1.0",                     # floating point: never pruned
    "upper(name) = 'A'",           # functions
    "name like '%b'",
    "nope = 1",                    # unknown column
    "id = 'abc'",                  # literal that does not convert
    "this is not sql (",
])
def test_unsupported_conditions_prune_nothing(text):
    p = bound(text)
    assert pr.may_match(p, {c: pr.ColumnRange(None, None, 0, 10) for c in ("id", "name", "x")})
    assert pr.may_match(p, {"id": pr.ColumnRange(100, 200, 0, 10), "x": pr.ColumnRange(5.0, 6.0, 0, 1)})


def test_may_match_ranges():
    r = {"id": pr.ColumnRange(10, 20, 0, 100), "name": pr.ColumnRange("b", "d", 5, 100)}
    yes = ["id = 10", "id < 11", "id >= 20", "id in (1, 15)", "name = 'c'", "name like 'c%'",
           "name is null", "id > 100 or name = 'b'", "id != 15"]
    # no bigint equals 15.5: the shared binder knows it before any file is looked at
    no = ["id = 9", "id = 15.5", "id < 10", "id > 20", "id < 9.5", "id in (1, 2)", "name = 'a'", "name like 'e%'",
          "id is null", "id > 100 or name = 'z'", "id = 15 and name = 'a'"]
    for text in yes:
        assert pr.may_match(bound(text), r), text
    for text in no:
        assert not pr.may_match(bound(text), r), text
    all_null = {"id": pr.ColumnRange(None, None, 7, 7)}
    assert not pr.may_match(bound("id = 1"), all_null)
    assert pr.may_match(bound("id is null"), all_null)
    assert not pr.may_match(bound("id is not null"), all_null)
    assert not pr.may_match(bound("id != 3"), {"id": pr.ColumnRange(3, 3, 0, 4)})


def test_truncated_string_bounds():
    assert truncate_min("abcdefghijklmnopqrstuvwxyz", 16) == "abcdefghijklmnop"
    assert truncate_max("abcdefghijklmnopqrstuvwxyz", 16) == "abcdefghijklmnoq"
    assert truncate_max("short", 16) == "short"
    assert truncate_max("a" + "\U0010FFFF" * 16, 2) == "b"


def test_partition_directory_names():
    s, i, d, ts, b = (parse_atomic(t) for t in ("STRING", "INT", "DATE", "TIMESTAMP(6)", "BOOLEAN"))
    assert partition_path(["dt", "h"], [s, i], ["2024-01-01", 3]) == "dt=2024-01-01/h=3"
    assert partition_path(["dt"], [s], [None]) == "dt=__DEFAULT_PARTITION__"
    assert partition_path(["dt"], [s], ["  "]) == "dt=__DEFAULT_PARTITION__"
    assert partition_path(["dt"], [s], ["a/b=c:d%"]) == "dt=a%2Fb%3Dc%3Ad%25"
    assert partition_path(["d"], [d], [dt.date(2024, 1, 1)]) == "d=19723"              # legacy: day number
    assert partition_path(["d"], [d], [dt.date(2024, 1, 1)], legacy=False) == "d=2024-01-01"
    assert partition_path(["t"], [ts], [dt.datetime(2024, 1, 1, 10)]) == "t=2024-01-01T10%3A00"
    assert partition_path(["t"], [ts], [dt.datetime(2024, 1, 1, 10, 0, 5, 120000)]) == \
        "t=2024-01-01T10%3A00%3A05.120"
    assert partition_path(["b"], [b], [True]) == "b=true"
    assert java_double_string(1.0) == "1.0" and java_double_string(1e7) == "1.0E7"
    assert java_double_string(0.0001) == "1.0E-4" and java_double_string(123.25) == "123.25"


def test_pypaimon_finds_files_in_our_partition_directories(paimon_catalog, pypaimon_catalog):
    t = paimon_catalog.create_table("db.p", "id bigint, d date, s string, n int", partitioned_by=["d", "s", "n"])
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                       "d": pa.array([dt.date(2024, 1, 1), None, dt.date(2023, 5, 6)], pa.date32()),
                       "s": ["a/b", "", "x y"], "n": pa.array([1, 2, None], pa.int32())}))
    pt = pypaimon_catalog.get_table("db.p")
    rb = pt.new_read_builder()
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    assert sorted(got.column("id").to_pylist()) == [1, 2, 3]


def test_plan_prunes_with_partition_bucket_and_stats(paimon_catalog):
    t = paimon_catalog.create_table("db.t", "id bigint not null, k string, dt string", partitioned_by=["dt"],
                                    properties={"bucket": "4", "bucket-key": "k"})
    for day in ("2024-01-01", "2024-01-02", "2024-01-03"):
        t.append(pa.table({"id": pa.array(range(100), pa.int64()), "k": [f"k{i % 10}" for i in range(100)],
                           "dt": [day] * 100}))
    all_entries = t.plan()
    assert len(all_entries) == 12
    assert {e.bucket for e in all_entries} == {0, 1, 2, 3}
    one_day = t.plan(where="dt = '2024-01-02'")
    assert len(one_day) == 4 and all("/dt=2024-01-02/" in e.file.file_path for e in one_day)
    assert len(t.plan(where="dt >= '2024-01-02'")) == 8
    key = t.plan(where="k = 'k3'")
    assert len(key) == 3 and len({e.bucket for e in key}) == 1
    assert len(t.plan(where="k in ('k3', 'k4') and dt = '2024-01-01'")) <= 2
    assert t.plan(where="id > 500") == []
    assert len(t.plan(where="id > 500 or dt = '2024-01-03'")) == 4
    # unparseable text prunes nothing, and to_arrow still returns everything
    assert len(t.plan(where="foo(")) == 12


def test_plan_after_overwrite_and_deletes(paimon_catalog):
    t = paimon_catalog.create_table("db.t", "id bigint")
    t.append(pa.table({"id": pa.array([1], pa.int64())}))
    t.append(pa.table({"id": pa.array([2], pa.int64())}))
    t.overwrite(pa.table({"id": pa.array([3], pa.int64())}))
    t.append(pa.table({"id": pa.array([4], pa.int64())}))
    assert sorted(t.to_arrow().column("id").to_pylist()) == [3, 4]
    assert [len(t.plan_files(snapshot_id=i)) for i in (1, 2, 3, 4)] == [1, 2, 1, 2]
    assert all(f.file_path.startswith(t.location + "/bucket-0/data-") for f in t.plan_files())


def test_to_arrow_filters_rows_exactly(paimon_catalog):
    t = paimon_catalog.create_table("db.f", "id bigint, name string, d date, x double, amt decimal(10,2)")
    t.append(pa.table({
        "id": pa.array(range(10), pa.int64()), "name": [f"n{i}" if i else None for i in range(10)],
        "d": [dt.date(2024, 1, 1 + i) for i in range(10)], "x": [i / 2 for i in range(10)],
        "amt": [decimal.Decimal(i).scaleb(-1) for i in range(10)]}))
    cases = {
        "id > 5.5": [6, 7, 8, 9], "id = 5.0": [5], "name is null": [0], "name is not null and id < 2": [1],
        "name like 'n1%' or id = 3": [1, 3], "d >= '2024-01-08'": [7, 8, 9], "x < 1.2": [0, 1, 2],
        "amt >= 0.7": [7, 8, 9], "amt > 0.65": [7, 8, 9], "amt in (0.1, 0.25)": [1], "id != 3 and id < 5": [0, 1, 2, 4],
        "name = 'n4'": [4], "id between 2 and 3": [2, 3],
        "not (id = 1)": [0, 2, 3, 4, 5, 6, 7, 8, 9], "not (name = 'n1')": [2, 3, 4, 5, 6, 7, 8, 9],
        "not (name like 'n%')": [], "not (id in (1, 2) or x > 3.5)": [0, 3, 4, 5, 6, 7],
        # NULL literals: unknown in SQL, and so is their NOT
        "not (id = NULL)": [], "id not in (1, NULL)": [], "id in (1, NULL)": [1],
        "not (id > 7 and NULL)": [0, 1, 2, 3, 4, 5, 6, 7], "id < 2 or NULL": [0, 1],
    }
    for where, expected in cases.items():
        assert sorted(t.to_arrow(where=where).column("id").to_pylist()) == expected, where
    for unsupported in ("upper(name) = 'N1'", "id = 'x'"):
        with pytest.raises(pr.UnsupportedFilterError):
            t.to_arrow(where=unsupported)
