"""Iceberg's metrics modes (``write.metadata.metrics.*``) decide each data file's column statistics:
none, counts, truncate(N) (strings by code points, upper bounds incremented, dropped when they
cannot be) and full, per column and by default, on the Arrow and the Spark write paths and for
added files; values icefloe cannot honour are refused naming the property before anything is
written."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.errors import IcefloeError
from icefloe.iceberg.metrics_modes import MetricsMode, metrics_config, parse_mode

SCHEMA = "id bigint, name string, b binary, s struct<x: string, y: int>"
TOP = "\U0010ffff"          # the last code point: it cannot be incremented
NAMES = ["abcdefgh", "abc" + TOP + TOP + "zz", "ab"]
BINS = [b"\x01\xff\xff\xff\xff", b"\x00", None]
IDS = {"id": 1, "name": 2, "b": 3, "s.x": 5, "s.y": 6}


def _rows() -> pa.Table:
    return pa.table({"id": pa.array([3, 1, 2], pa.int64()), "name": NAMES, "b": pa.array(BINS, pa.binary()),
                     "s": [{"x": "y" * 20, "y": 7}, {"x": "xy", "y": None}, None]})


def _spark_rows(spark):
    return spark.createDataFrame([(3, NAMES[0], bytearray(BINS[0]), ("y" * 20, 7)),
                                  (1, NAMES[1], bytearray(BINS[1]), ("xy", None)),
                                  (2, NAMES[2], None, None)], "id bigint, name string, b binary, "
                                 "s struct<x: string, y: int>").coalesce(1)


def _file(catalog, spark, props, via, name="db.m"):
    t = catalog.create_table(name, SCHEMA, properties=props)
    t.append(_rows() if via == "arrow" else _spark_rows(spark))
    (f,) = list(t.plan_files())
    return t, f


def _bounds(f, col):
    fid = IDS[col]
    lo = None if f.lower_bounds is None else f.lower_bounds.get(fid)
    hi = None if f.upper_bounds is None else f.upper_bounds.get(fid)
    return (None if lo is None else bytes(lo)), (None if hi is None else bytes(hi))


def _has(stats, col):
    return bool(stats) and IDS[col] in stats


@pytest.mark.parametrize("via", ["arrow", "spark"])
def test_each_mode_decides_counts_and_bounds(catalog, spark, via):
    # the default truncate(16): strings shorter than 16 whole, the struct's 20 y's cut and incremented
    _t, f = _file(catalog, spark, {}, via, "db.dflt")
    assert _bounds(f, "name") == (b"ab", NAMES[1].encode())
    assert _bounds(f, "s.x") == (b"xy", b"y" * 15 + b"z")
    assert _bounds(f, "id") == ((1).to_bytes(8, "little"), (3).to_bytes(8, "little"))
    # truncate(4): lower bounds cut; "abc" + U+10FFFF cannot take its last code point up: "abd"
    _t, f = _file(catalog, spark, {"write.metadata.metrics.default": "truncate(4)"}, via, "db.t4")
    assert _bounds(f, "name") == (b"ab", b"abd")
    assert _bounds(f, "b") == (b"\x00", b"\x02")                      # 01 ff ff ff: the 01 taken up
    assert _bounds(f, "s.x") == (b"xy", b"yyyz")
    assert _bounds(f, "id") == ((1).to_bytes(8, "little"), (3).to_bytes(8, "little"))   # numbers whole
    assert f.value_counts[IDS["name"]] == 3 and f.null_value_counts[IDS["b"]] == 1
    # full: whole bounds
    _t, f = _file(catalog, spark, {"write.metadata.metrics.default": "FULL"}, via, "db.full")
    assert _bounds(f, "s.x") == (b"xy", b"y" * 20)
    assert _bounds(f, "b") == (b"\x00", BINS[0])
    # counts: counts and sizes, no bounds
    _t, f = _file(catalog, spark, {"write.metadata.metrics.default": "counts"}, via, "db.counts")
    assert not f.lower_bounds and not f.upper_bounds
    assert f.value_counts[IDS["id"]] == 3 and f.null_value_counts[IDS["s.y"]] == 2
    assert _has(f.column_sizes, "name")
    # none by default, one column's own mode and a nested one's by its dotted name
    _t, f = _file(catalog, spark, {"write.metadata.metrics.default": "none",
                                   "write.metadata.metrics.column.name": "truncate(2)",
                                   "write.metadata.metrics.column.s.y": "counts"}, via, "db.none")
    assert _bounds(f, "name") == (b"ab", b"ac")
    assert not _has(f.value_counts, "id") and not _has(f.column_sizes, "id") and not _has(f.null_value_counts, "b")
    assert f.value_counts[IDS["s.y"]] == 3 and _bounds(f, "s.y") == (None, None)
    assert set(f.lower_bounds) == {IDS["name"]}


def test_an_upper_bound_that_cannot_be_incremented_is_dropped(catalog):
    t = catalog.create_table("db.top", "name string", properties={"write.metadata.metrics.default": "truncate(2)"})
    t.append(pa.table({"name": [TOP * 3, TOP + "a"]}))
    (f,) = list(t.plan_files())
    assert bytes(f.lower_bounds[1]) == (TOP + "a").encode() and not f.upper_bounds
    # planning stays right: the file is kept for the values its bounds cannot rule out
    assert [r.name for r in t.to_spark(where=f"name = '{TOP * 3}'").collect()] == [TOP * 3]


def test_planning_finds_rows_of_a_truncated_column(catalog):
    t = catalog.create_table("db.plan", "id bigint, name string",
                             properties={"write.metadata.metrics.default": "truncate(3)"})
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["apple-pie", "apricot"]}))
    t.append(pa.table({"id": pa.array([3], pa.int64()), "name": ["banana-split"]}))
    for name, ids in (("apricot", [2]), ("apple-pie", [1]), ("banana-split", [3]), ("apz", [])):
        assert sorted(r.id for r in t.to_spark(where=f"name = '{name}'").collect()) == ids, name
        assert len(list(t.plan_files(where=f"name = '{name}'"))) == (1 if ids else 0), name
    assert sorted(r.id for r in t.to_spark(where="name > 'apricot'").collect()) == [3]


def test_sort_columns_keep_bounds_and_the_inferred_limit(catalog):
    t = catalog.create_table("db.sorted", "a string, b string, c string",
                             properties={"write.metadata.metrics.default": "counts"})
    t.replace_sort_order("b")
    t.append(pa.table({"a": ["x"], "b": ["y" * 20], "c": ["z"]}))
    (f,) = list(t.plan_files())
    assert set(f.lower_bounds) == {2} and bytes(f.upper_bounds[2]) == b"y" * 15 + b"z"      # truncate(16)
    # no default set and more columns than the limit: the first ones truncate(16), the rest none
    t = catalog.create_table("db.wide", "a bigint, s struct<b: bigint, c: bigint>, d bigint",
                             properties={"write.metadata.metrics.max-inferred-column-defaults": "2"})
    t.append(pa.table({"a": pa.array([1], pa.int64()), "s": [{"b": 2, "c": 3}], "d": pa.array([4], pa.int64())}))
    (f,) = list(t.plan_files())
    first = {t.schema.find_field(n).field_id for n in ("a", "d")}               # before s's own columns
    assert set(f.value_counts) == first and set(f.lower_bounds) == first


def test_unusable_values_are_refused_naming_the_property(catalog, spark):
    for bad in ("truncate(0)", "truncate(x)", "bogus", "truncate(-1)", " full"):
        with pytest.raises(IcefloeError, match=r"write\.metadata\.metrics\.default"):
            catalog.create_table("db.bad", "id bigint", properties={"write.metadata.metrics.default": bad})
    for key in ("write.metadata.metrics.column.nope", "write.metadata.metrics.column.ID",
                "write.metadata.metrics.column.s.z"):
        with pytest.raises(IcefloeError, match=key.replace(".", r"\.")):
            catalog.create_table("db.bad", "id bigint, s struct<x: int>", properties={key: "full"})
    with pytest.raises(IcefloeError, match="max-inferred-column-defaults"):
        catalog.create_table("db.bad", "id bigint",
                             properties={"write.metadata.metrics.max-inferred-column-defaults": "-1"})
    assert not catalog.table_exists("db.bad")
    t = catalog.create_table("db.ok", "id bigint")
    with pytest.raises(IcefloeError, match=r"write\.metadata\.metrics\.column\.id"):
        t.update_properties(set={"write.metadata.metrics.column.id": "truncate()"})
    with pytest.raises(IcefloeError, match=r"write\.metadata\.metrics\.column\.nope"):
        t.update_properties(set={"write.metadata.metrics.column.nope": "full"})
    with pytest.raises(Exception, match=r"write\.metadata\.metrics\.default"):
        catalog.sql("ALTER TABLE db.ok SET TBLPROPERTIES ('write.metadata.metrics.default' = 'truncate(0)')")
    with pytest.raises(Exception, match=r"write\.metadata\.metrics\.default"):
        catalog.sql("CREATE TABLE db.bad (id bigint) TBLPROPERTIES ('write.metadata.metrics.default' = 'bogus')")
    assert not [k for k in t.refresh().properties if k.startswith("write.metadata.metrics.")]
    # a value another engine stored is refused by every write before it writes anything
    meta = t.ops.current()
    from dataclasses import replace

    bad = replace(meta, properties={**meta.properties, "write.metadata.metrics.default": "truncate(0)"})
    from icefloe.iceberg.arrow_writer import write_arrow
    from icefloe.spark.iceberg_write import write_data_files

    data_dir = os.path.join(t.location.replace("file:", ""), "data")
    with pytest.raises(IcefloeError, match=r"write\.metadata\.metrics\.default"):
        write_arrow(t.io, pa.table({"id": pa.array([1], pa.int64())}), meta.schema, meta.spec, meta.location,
                    dict(bad.properties), meta=bad)
    with pytest.raises(IcefloeError, match=r"write\.metadata\.metrics\.default"):
        write_data_files(spark.range(3), bad, t.io, "db.ok")
    assert not os.path.exists(data_dir) or not [f for _d, _s, fs in os.walk(data_dir) for f in fs]


def test_modes_parse_as_iceberg_names_them():
    assert parse_mode("Truncate(7)", "p") == MetricsMode("truncate", 7)
    assert str(parse_mode("COUNTS", "p")) == "counts"
    from icefloe.core.types.ddl import parse_schema

    schema = parse_schema("m map<string, string>, l array<int>")
    cfg = metrics_config({"write.metadata.metrics.column.m.value": "full",
                          "write.metadata.metrics.column.l.element": "counts"}, schema)
    assert str(cfg.mode(schema.find_field("m.value").field_id)) == "full"
    assert str(cfg.mode(schema.find_field("m.key").field_id)) == "truncate(16)"
    assert str(cfg.mode(schema.find_field("l.element").field_id)) == "counts"


def test_added_files_take_the_tables_modes(catalog, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["abcdefgh", "b"]}), src / "f.parquet")
    t = catalog.create_table("db.added", "id bigint, name string",
                             properties={"write.metadata.metrics.default": "counts",
                                         "write.metadata.metrics.column.name": "truncate(3)"})
    t.add_files(str(src))
    (f,) = list(t.plan_files())
    assert f.value_counts == {1: 2, 2: 2}
    assert set(f.lower_bounds) == {2} and bytes(f.lower_bounds[2]) == b"abc" and bytes(f.upper_bounds[2]) == b"b"


def test_column_modes_follow_renamed_and_dropped_columns(catalog):
    t = catalog.create_table("db.evolve", "id bigint, name string, s struct<x: string>, gone string",
                             properties={"write.metadata.metrics.default": "counts",
                                         "write.metadata.metrics.column.name": "truncate(2)",
                                         "write.metadata.metrics.column.s.x": "full",
                                         "write.metadata.metrics.column.gone": "full"})
    t.update_schema().rename_column("name", "title").rename_column("s", "t").delete_column("gone").commit()
    props = t.refresh().properties
    assert {k: v for k, v in props.items() if k.startswith("write.metadata.metrics.column.")} == {
        "write.metadata.metrics.column.title": "truncate(2)", "write.metadata.metrics.column.t.x": "full"}
    t.append(pa.table({"id": pa.array([1], pa.int64()), "title": ["abcd"], "t": [{"x": "y" * 20}]}))
    (f,) = list(t.plan_files())
    fid = {n: t.schema.find_field(n).field_id for n in ("title", "t.x")}
    assert bytes(f.upper_bounds[fid["title"]]) == b"ac" and bytes(f.upper_bounds[fid["t.x"]]) == b"y" * 20
    assert set(f.lower_bounds) == set(fid.values())
