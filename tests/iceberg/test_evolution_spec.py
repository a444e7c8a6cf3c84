"""Partition evolution (spec: "Partition Evolution"): new specs for new data, old files keep theirs.

After each step the files' specs, partition paths and field ids are checked,
scan planning must prune every manifest with its own spec, and Spark (icefloe),
pyiceberg and DuckDB must read the same rows now and at every earlier snapshot.
"""
from __future__ import annotations

import dataclasses
import datetime as dt

import pyarrow as pa
import pytest

from icefloe.errors import SchemaError
from icefloe.iceberg.spec_update import SpecBuilder
from icefloe.iceberg.table_metadata import new_table_metadata
from icefloe.iceberg.partitioning import build_spec
from icefloe.core.types import parse_schema
from tests.interop_util import duckdb_connection, pyiceberg_table

UTC = dt.timezone.utc
DDL = "id bigint not null, ts timestamp, cat string"


def _rows(ids, month):
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "ts": pa.array([dt.datetime(2024, month, 1 + i % 27, i % 24, tzinfo=UTC) for i in ids],
                                    pa.timestamp("us", tz="UTC")),
                     "cat": [f"c{i % 3}" for i in ids]})


@pytest.fixture(scope="module")
def duck():
    con = duckdb_connection()
    con.execute("SET TimeZone = 'UTC'")
    yield con
    con.close()


def _ids(rows):
    return sorted(r["id"] for r in rows)


def readers_agree(t, duck, snapshot_id, where=None, duck_where=None):
    """The ids each reader returns for a snapshot (and optional filter) -- all equal."""
    loc = t.metadata_location
    ours = _ids(t.to_spark(snapshot_id=snapshot_id, where=where).toArrow().to_pylist())
    sql = f"SELECT id FROM iceberg_scan('{loc}', snapshot_from_id => {snapshot_id})"
    if duck_where:
        sql += f" WHERE {duck_where}"
    quack = _ids(duck.execute(sql).fetch_arrow_table().to_pylist())
    scan = pyiceberg_table(loc).scan(snapshot_id=snapshot_id, **({"row_filter": where} if where else {}))
    theirs = _ids(scan.to_arrow().to_pylist())
    assert ours == theirs == quack
    return ours


APRIL = "ts >= '2024-04-01T00:00:00+00:00'"
APRIL_DUCK = "ts >= TIMESTAMPTZ '2024-04-01 00:00:00+00'"


def test_evolving_partitions_step_by_step(catalog, duck):
    t = catalog.create_table("db.parts", DDL)
    history = []   # (snapshot id, ids)
    s = t.append(_rows(range(0, 6), 1))
    history.append((s.snapshot_id, list(range(0, 6))))
    assert t.metadata.last_partition_id == 999

    # 1. unpartitioned -> month(ts)
    with t.update_spec() as u:
        u.add_field("month(ts)")
    meta = t.metadata
    assert meta.default_spec_id == 1 and meta.last_partition_id == 1000
    assert [(f.name, f.field_id, str(f.transform)) for f in t.spec.fields] == [("ts_month", 1000, "month")]
    s = t.append(_rows(range(6, 12), 4))
    history.append((s.snapshot_id, list(range(0, 12))))
    files = t.plan_files()
    assert sorted(f.spec_id for f in files) == [0, 1]
    assert all("/data/ts_month=2024-04/" in f.file_path for f in files if f.spec_id == 1)
    # pruning: the spec-1 manifest by partition, the spec-0 file by its column bounds
    assert [f.spec_id for f in t.plan_files(where=APRIL)] == [1]
    assert readers_agree(t, duck, s.snapshot_id, APRIL, APRIL_DUCK) == list(range(6, 12))

    # 2. add bucket(4, id), rename ts_month -> m: a new spec, field ids kept
    with t.update_spec() as u:
        u.add_field("bucket(4, id)")
        u.rename_field("ts_month", "m")
    assert t.metadata.default_spec_id == 2
    assert [(f.name, f.field_id) for f in t.spec.fields] == [("m", 1000), ("id_bucket", 1001)]
    s = t.append(_rows(range(12, 20), 5))
    history.append((s.snapshot_id, list(range(0, 20))))
    assert sorted({f.spec_id for f in t.plan_files()}) == [0, 1, 2]
    assert any("/data/m=2024-05/id_bucket=" in f.file_path for f in t.plan_files())

    # 3. drop the month field, add day(ts): v2 removes the field from the new spec
    with t.update_spec() as u:
        u.remove_field("m")
        u.add_field("day(ts)")
    assert [(f.name, f.field_id) for f in t.spec.fields] == [("id_bucket", 1001), ("ts_day", 1002)]
    s = t.append(_rows(range(20, 24), 6))
    history.append((s.snapshot_id, list(range(0, 24))))

    # 4. month(ts) again: it takes back field id 1000 (and its last name), as Java recycles it
    with t.update_spec() as u:
        u.remove_field("day(ts)")          # removal by term works too
        u.add_field("month(ts)")
    assert [(f.name, f.field_id) for f in t.spec.fields] == [("id_bucket", 1001), ("m", 1000)]
    assert t.metadata.last_partition_id == 1002
    s = t.append(_rows(range(24, 30), 7))
    history.append((s.snapshot_id, list(range(0, 30))))

    for sid, ids in history:
        assert readers_agree(t, duck, sid) == ids
    june_on = "ts >= '2024-06-01T00:00:00+00:00'"
    assert readers_agree(t, duck, s.snapshot_id, june_on, "ts >= TIMESTAMPTZ '2024-06-01 00:00:00+00'") == \
        list(range(20, 30))
    assert sorted({f.spec_id for f in t.plan_files(where=june_on)}) == [3, 4]
    # pyiceberg sees the same specs
    py = pyiceberg_table(t.metadata_location)
    assert sorted(py.specs()) == [0, 1, 2, 3, 4] and py.spec().spec_id == 4


def test_an_identical_spec_is_reused_and_no_change_writes_nothing(catalog):
    t = catalog.create_table("db.reuse", DDL, partitioned_by=["cat"])
    with t.update_spec() as u:
        u.add_field("bucket(8, id)")
    assert t.metadata.default_spec_id == 1
    with t.update_spec() as u:
        u.remove_field("id_bucket")
    assert t.metadata.default_spec_id == 0 and len(t.metadata.partition_specs) == 2
    version = t.ops.current_version()
    with t.update_spec():
        pass
    assert t.refresh().ops.current_version() == version


def test_removing_every_field_makes_new_data_unpartitioned(catalog, duck):
    t = catalog.create_table("db.unpart", DDL, partitioned_by=["day(ts)"])
    t.append(_rows([1, 2], 3))
    with t.update_spec() as u:
        u.remove_field("ts_day")
    assert t.spec.is_unpartitioned and t.metadata.default_spec_id == 1
    s = t.append(_rows([3], 3))
    new = [f for f in t.plan_files() if f.spec_id == 1]
    assert len(new) == 1 and new[0].partition == () and "/data/00" in new[0].file_path
    assert readers_agree(t, duck, s.snapshot_id) == [1, 2, 3]


@pytest.mark.parametrize("change, message", [
    (lambda u: u.add_field("month(ts)"), "already has it"),
    (lambda u: u.add_field("bucket(4, nope)"), "unknown column"),
    (lambda u: u.add_field("bucket(4, id)", name="cat"), "is a column name"),
    (lambda u: u.add_field("truncate(2, cat)", name="ts_month"), "already used"),
    (lambda u: u.remove_field("nope"), "no partition field"),
    (lambda u: u.rename_field("ts_month", "id"), "is a column name"),
    (lambda u: (u.add_field("day(ts)"), u.add_field("hour(ts)")), "redundant"),
    (lambda u: (u.add_field("bucket(2, id)"), u.remove_field("id_bucket")), "added in the same update"),
])
def test_illegal_spec_changes_are_rejected(catalog, change, message):
    t = catalog.create_table("db.bad", DDL, partitioned_by=["month(ts)"])
    version = t.ops.current_version()
    with pytest.raises(SchemaError, match=message):
        with t.update_spec() as u:
            change(u)
    assert t.refresh().ops.current_version() == version


def test_v1_tables_keep_removed_fields_as_void():
    schema = parse_schema(DDL)
    meta = new_table_metadata("/tmp/nowhere", schema, build_spec(schema, ["cat", "day(ts)"]), {})
    meta = dataclasses.replace(meta, format_version=1)
    b = SpecBuilder(meta)
    b.remove_field("cat")
    b.add_field("cat")   # v1 never recycles: a new id, and the void field gives up its name
    new = b.build()
    assert [(f.name, f.field_id, str(f.transform)) for f in new.spec.fields] == \
        [("cat_1000", 1000, "void"), ("ts_day", 1001, "day"), ("cat", 1002, "identity")]


def test_a_partition_field_is_renamed_by_its_term_too():
    schema = parse_schema(DDL)
    b = SpecBuilder(new_table_metadata("/tmp/nowhere", schema, build_spec(schema, ["month(ts)"]), {}))
    b.rename_field("month(ts)", "m")
    assert [f.name for f in b.fields] == ["m"]
    with pytest.raises(SchemaError, match="no partition field"):
        b.rename_field("day(ts)", "d")
