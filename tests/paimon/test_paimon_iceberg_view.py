"""Paimon tables that are Iceberg tables too (Paimon's ``metadata.iceberg.storage``).

Every commit icefloe makes to such a table writes Iceberg metadata over the same data files; the
Iceberg view is read by icefloe's Iceberg reader, pyiceberg and DuckDB's iceberg extension, every
retained snapshot, and held to what the Paimon side reads at that snapshot (icefloe, and pypaimon
through the Paimon metadata). A crash between the Paimon commit and its Iceberg metadata is
repaired by the next commit. The Java engines (Iceberg's runtime reading the view, Paimon 0.9
writing ``metadata.iceberg-compatible`` tables) are the long tests at the end.
"""
from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

from icefloe.catalog import Catalog
from icefloe.core.faults import FaultInjectingFileIO
from icefloe.errors import IcebergViewWarning, SchemaError
from icefloe.paimon import kv_compact
from tests.interop_util import duckdb_connection, pyiceberg_table

VIEW = {"metadata.iceberg.storage": "table-location"}
SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string()), ("p", pa.string())])


def rows(data: pa.Table, cols=None) -> list[tuple]:
    cols = cols or data.column_names
    return sorted((tuple(r.get(c) for c in cols) for r in data.to_pylist()), key=repr)


@pytest.fixture(scope="module")
def duck():
    con = duckdb_connection()
    yield con
    con.close()


def iceberg_sides(it, duck, snapshot_id: int, cols) -> list[list[tuple]]:
    """The rows of Iceberg snapshot ``snapshot_id`` as icefloe, pyiceberg and DuckDB read them."""
    ours = rows(it.to_arrow(snapshot_id=snapshot_id), cols)
    py = rows(pyiceberg_table(it.metadata_location).scan(snapshot_id=snapshot_id).to_arrow(), cols)
    dk = rows(duck.execute(f"SELECT * FROM iceberg_scan('{it.metadata_location}', "
                           f"snapshot_from_id => {snapshot_id})").fetch_arrow_table(), cols)
    return [ours, py, dk]


def assert_views_agree(t, duck, cols=None, current_only=False):
    """Every snapshot the Iceberg view keeps (or the current one: a primary-key table's view
    lags until a full compaction) reads as the Paimon snapshot of the same id."""
    it = t.iceberg()
    assert it.metadata.current_snapshot_id == t.refresh().current_snapshot().id
    assert not it.check().problems
    for s in it.snapshots()[-1:] if current_only else it.snapshots():
        paimon = rows(t.to_arrow(snapshot_id=s.snapshot_id), cols)
        use = cols or list(t.to_arrow(snapshot_id=s.snapshot_id).column_names)
        for side in iceberg_sides(it, duck, s.snapshot_id, use):
            assert side == paimon, f"snapshot {s.snapshot_id}"
    return it


def test_append_table_every_commit_kind_reads_the_same_through_iceberg(paimon_catalog, paimon_warehouse, duck):
    t = paimon_catalog.create_table("db.a", SCHEMA, partitioned_by=["p"],
                                    properties={**VIEW, "snapshot.num-retained.min": "3", "snapshot.num-retained.max": "3"})
    t.append(pa.table({"id": [1, 2], "s": ["a", "b"], "p": ["x", "y"]}, schema=SCHEMA))
    t.append(pa.table({"id": [3], "s": ["c"], "p": ["x"]}, schema=SCHEMA))
    assert_views_agree(t, duck)
    t.overwrite(pa.table({"id": [4], "s": ["d"], "p": ["y"]}, schema=SCHEMA), partition={"p": "y"})
    it = assert_views_agree(t, duck)
    assert it.current_snapshot().summary["operation"] == "overwrite"
    # schema evolution: the new column has Paimon's field id in the Iceberg schema too
    with t.update_schema() as u:
        u.add_column("n", "bigint")
    t.refresh().append(pa.table({"id": [5], "s": ["e"], "p": ["x"], "n": [50]}))
    it = assert_views_agree(t, duck, ["id", "s", "p", "n"])
    assert {f.name: f.field_id for f in it.schema.fields} == {f.name: f.field_id for f in t.table_schema.fields}
    assert [s.schema_id for s in it.metadata.schemas] == [0, 1]
    # the retention (3 snapshots) drops old snapshots from both sides
    assert [s.snapshot_id for s in it.snapshots()] == [s.id for s in t.snapshots()] == [2, 3, 4]
    # only the current metadata version stays (delete-after-commit, previous-versions-max 0),
    # and no manifest list of a dropped snapshot
    mdir = os.path.join(t.location, "metadata")
    assert sorted(n for n in os.listdir(mdir) if n.endswith(".metadata.json")) == ["v4.metadata.json"]
    assert open(os.path.join(mdir, "version-hint.text")).read().strip() == "4"
    assert not [n for n in os.listdir(mdir) if n.startswith("snap-1-")]
    # pypaimon and pypaimon-rust, through the Paimon metadata, read what the Iceberg readers read
    from tools.pypaimon_env import remote_module
    pp = remote_module("pypaimon").CatalogFactory.create({"warehouse": paimon_warehouse}).get_table("db.a")
    rb = pp.new_read_builder()
    expected = rows(rb.new_read().to_arrow(rb.new_scan().plan().splits()), ["id", "s", "p", "n"])
    for side in iceberg_sides(it, duck, 4, ["id", "s", "p", "n"]):
        assert side == expected
    assert rust_rows(paimon_warehouse, "db.a", ["id", "s", "p", "n"]) == expected


def test_primary_key_table_shows_the_fully_compacted_rows(paimon_catalog, duck):
    t = paimon_catalog.create_table("db.k", "id bigint, a string, dt string", partitioned_by=["dt"],
                                    properties={**VIEW, "primary-key": "id,dt", "bucket": "2"})
    schema = t.to_arrow().schema
    t.append(pa.Table.from_pylist([{"id": i, "a": "v1", "dt": "d1"} for i in range(6)], schema=schema))
    t.append(pa.Table.from_pylist([{"id": 1, "a": "v2", "dt": "d1"}], schema=schema))
    it = t.iceberg()
    assert it.to_arrow().num_rows == 0               # level-0 files only: nothing an Iceberg reader can read alone
    kv_compact.compact_table(t.refresh())            # full compaction: one sorted run at the top level
    it = assert_views_agree(t, duck, current_only=True)
    assert rows(it.to_arrow(), ["id", "a"]) == [(i, "v2" if i == 1 else "v1") for i in range(6)]
    t.append(pa.Table.from_pylist([{"id": 2, "a": "v3", "dt": "d1"}], schema=schema))
    # the upsert is not compacted yet: the view keeps the compacted rows
    assert rows(t.iceberg().to_arrow(), ["id", "a"])[2] == (2, "v1")
    t.append(pa.Table.from_pylist([{"id": 3, "a": "v4", "dt": "d2"}], schema=schema))   # a new partition
    kv_compact.compact_table(t.refresh())
    it = assert_views_agree(t, duck, current_only=True)
    assert rows(it.to_arrow(), ["id", "a", "dt"]) == [(0, "v1", "d1"), (1, "v2", "d1"), (2, "v3", "d1"), (3, "v1", "d1"),
                                                       (3, "v4", "d2"), (4, "v1", "d1"), (5, "v1", "d1")]
    assert it.current_snapshot().summary["operation"] == "overwrite"


def rust_rows(warehouse: str, name: str, cols) -> list[tuple]:
    """The table's rows as pypaimon-rust (DataFusion over Paimon's Rust reader) reads them."""
    from pypaimon_rust.datafusion import SQLContext

    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": warehouse})
    return rows(pa.Table.from_batches(ctx.sql(f"SELECT * FROM paimon.{name}")), cols)


def test_deletion_vectors_become_iceberg_v3_deletion_vectors(paimon_catalog, paimon_warehouse, duck):
    t = paimon_catalog.create_table("db.dv", "id bigint, a string", properties={
        **VIEW, "primary-key": "id", "bucket": "1", "deletion-vectors.enabled": "true",
        "metadata.iceberg.format-version": "3"})
    schema = t.to_arrow().schema
    t.append(pa.Table.from_pylist([{"id": i, "a": "v1"} for i in range(5)], schema=schema))
    t.append(pa.Table.from_pylist([{"id": 1, "a": "v2"}, {"id": 3, "a": "v2"}], schema=schema))
    t.append(pa.Table.from_pylist([{"id": 3, "a": "v3"}, {"id": 7, "a": "v1"}], schema=schema))
    # with vectors the Iceberg view is in step after every commit, not only after a full compaction
    it = assert_views_agree(t, duck)
    assert it.metadata.format_version == 3
    assert rows(it.to_arrow(), ["id", "a"]) == [(0, "v1"), (1, "v2"), (2, "v1"), (3, "v3"), (4, "v1"), (7, "v1")]
    # pypaimon-rust, through the Paimon metadata and its deletion vectors, reads the same rows
    assert rust_rows(paimon_warehouse, "db.dv", ["id", "a"]) == rows(it.to_arrow(), ["id", "a"])
    deletes = [f for task in it.plan() for f in task.deletes] if hasattr(it, "plan") else []
    assert it.current_snapshot().summary.get("total-delete-files", "0") != "0" or deletes
    puffins = lambda: sorted(n for n in os.listdir(os.path.join(t.location, "metadata"))  # noqa: E731
                             if n.endswith(".puffin"))
    assert puffins()
    kv_compact.compact_table(t.refresh())                    # a full compaction leaves no vector behind
    it = assert_views_agree(t, duck, current_only=True)
    assert it.current_snapshot().summary["total-delete-files"] == "0"
    assert it.check().ok
    # once the snapshots that had vectors expire, their Puffin files go with them
    import datetime as dt
    t.expire_snapshots(older_than=dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=1), retain_last=1)
    assert [s.snapshot_id for s in t.iceberg().snapshots()] == [t.current_snapshot().id]
    assert puffins() == []


def test_hadoop_catalog_storage_and_the_legacy_option(paimon_warehouse, duck):
    cat = Catalog(paimon_warehouse, "paimon")
    t = cat.create_table("db.h", SCHEMA, properties={"metadata.iceberg.storage": "hadoop-catalog"})
    t.append(pa.table({"id": [1], "s": ["a"], "p": ["x"]}, schema=SCHEMA))
    assert not os.path.exists(os.path.join(t.location, "metadata"))
    ice = Catalog(os.path.join(paimon_warehouse, "iceberg"), "iceberg").load_table("db.h")
    assert rows(ice.to_arrow()) == [(1, "a", "x")]
    assert ice.location == t.location               # the data stays where Paimon wrote it
    t.append(pa.table({"id": [2], "s": ["b"], "p": ["x"]}, schema=SCHEMA))
    # a table dropped and made again under the same name: the old Iceberg metadata (which the
    # drop leaves under <warehouse>/iceberg, as Paimon's does) is replaced, not continued
    cat.drop_table("db.h")
    t = cat.create_table("db.h", SCHEMA, properties={"metadata.iceberg.storage": "hadoop-catalog"})
    t.append(pa.table({"id": [9], "s": ["z"], "p": ["x"]}, schema=SCHEMA))
    ice = Catalog(os.path.join(paimon_warehouse, "iceberg"), "iceberg").load_table("db.h")
    assert rows(ice.to_arrow()) == [(9, "z", "x")]
    assert [s.snapshot_id for s in ice.snapshots()] == [1]
    legacy = cat.create_table("db.l", SCHEMA, properties={"metadata.iceberg-compatible": "true"})
    legacy.append(pa.table({"id": [2], "s": ["b"], "p": ["y"]}, schema=SCHEMA))
    assert rows(legacy.iceberg().to_arrow()) == [(2, "b", "y")]
    assert os.path.exists(os.path.join(legacy.location, "metadata", "v1.metadata.json"))


@pytest.mark.parametrize("props, match", [
    ({"metadata.iceberg.storage": "hive-catalog"}, "registers the table in a Hive metastore"),
    ({"metadata.iceberg.storage": "rest-catalog"}, "needs metadata.iceberg.rest.uri"),
    ({"metadata.iceberg.storage": "rest-catalog", "metadata.iceberg.rest.uri": "http://h",
      "metadata.iceberg.rest.warehouse": "w"}, "'metadata.iceberg.rest.warehouse' is not honoured by icefloe's REST"),
    ({"metadata.iceberg.storage": "rest-catalog", "metadata.iceberg.rest.uri": "http://h",
      "metadata.iceberg.database": "a;b"}, "must be one name"),
    ({**VIEW, "metadata.iceberg.table": "x"}, "only metadata.iceberg.storage = 'rest-catalog' registers"),
    ({"metadata.iceberg.storage": "glue"}, "unknown metadata.iceberg.storage"),
    ({**VIEW, "metadata.iceberg.uri": "thrift://h:9083"}, "'metadata.iceberg.uri' is not honoured"),
    ({**VIEW, "metadata.iceberg.format-version": "4"}, "must be 2 or 3"),
    ({**VIEW, "metadata.iceberg.manifest-compression": "zstd"}, "manifest-compression"),
    ({**VIEW, "primary-key": "id", "bucket": "1", "deletion-vectors.enabled": "true"},
     "deletion vectors needs metadata.iceberg.format-version = 3"),
])
def test_options_icefloe_cannot_honour_are_refused(paimon_catalog, props, match):
    with pytest.raises(SchemaError, match=match):
        paimon_catalog.create_table("db.bad", "id bigint, s string", properties=props)
    assert not paimon_catalog.table_exists("db.bad")


def test_types_without_an_iceberg_mapping_are_refused_at_create_and_alter(paimon_catalog):
    with pytest.raises(SchemaError, match="column 'b' of type .* has no Iceberg type"):
        paimon_catalog.create_table("db.t", "id bigint, b tinyint", properties=VIEW)
    t = paimon_catalog.create_table("db.t2", "id bigint, b tinyint")
    with pytest.raises(SchemaError, match="has no Iceberg type"):
        t.update_properties(set=VIEW)
    assert "metadata.iceberg.storage" not in t.refresh().table_schema.options


def _ops_of_a_commit(tmp_path) -> list:
    """The file operations of a second append to a table with the Iceberg view."""
    io = FaultInjectingFileIO()
    t = Catalog(str(tmp_path / "probe"), "paimon", io=io).create_table("db.f", SCHEMA, properties=VIEW)
    t.append(pa.table({"id": [1], "s": ["a"], "p": ["x"]}, schema=SCHEMA))
    start = io.count
    t.append(pa.table({"id": [2], "s": ["b"], "p": ["x"]}, schema=SCHEMA))
    return io.log[start:]


@pytest.mark.parametrize("victim", ["v2.metadata.json", "snap-2-", "version-hint.text"])
def test_a_crash_between_the_two_metadata_writes_is_repaired_by_the_next_commit(tmp_path, victim, duck):
    ops = _ops_of_a_commit(tmp_path)
    index = next(i for i, (_, path) in enumerate(ops) if os.path.basename(path).startswith(victim))
    assert any(path.endswith("/snapshot/snapshot-2") for _, path in ops[:index])   # Paimon's commit came first
    io = FaultInjectingFileIO()
    t = Catalog(str(tmp_path / "wh"), "paimon", io=io).create_table("db.f", SCHEMA, properties=VIEW)
    t.append(pa.table({"id": [1], "s": ["a"], "p": ["x"]}, schema=SCHEMA))
    io.fail_at = io.count + index + 1
    with pytest.warns(IcebergViewWarning, match="Paimon snapshot 2 .* is committed"):
        t.append(pa.table({"id": [2], "s": ["b"], "p": ["x"]}, schema=SCHEMA))
    io.fail_at = None
    assert t.refresh().current_snapshot().id == 2                       # the Paimon commit stands
    assert rows(t.to_arrow(), ["id"]) == [(1,), (2,)]
    report = t.check()                                                  # and check says the view lags
    if victim != "version-hint.text":
        assert any("Iceberg" in p.message for p in report.problems), report
    t.append(pa.table({"id": [3], "s": ["c"], "p": ["x"]}, schema=SCHEMA))
    it = assert_views_agree(t, duck)
    assert rows(it.to_arrow(), ["id"]) == [(1,), (2,), (3,)]


def test_sync_repairs_without_a_commit_and_rollback_moves_the_view_back(paimon_catalog, duck):
    t = paimon_catalog.create_table("db.r", SCHEMA, properties=VIEW)
    for i in range(3):
        t.append(pa.table({"id": [i], "s": ["a"], "p": ["x"]}, schema=SCHEMA))
    mdir = os.path.join(t.location, "metadata")
    os.remove(os.path.join(mdir, "v3.metadata.json"))            # as if the last sync had crashed
    assert t.sync_iceberg() == 3
    assert rows(t.iceberg().to_arrow(), ["id"]) == [(0,), (1,), (2,)]
    t.rollback_to_snapshot(2)
    it = assert_views_agree(t, duck)
    assert it.current_snapshot().snapshot_id == 2 and rows(it.to_arrow(), ["id"]) == [(0,), (1,)]
    t.append(pa.table({"id": [9], "s": ["z"], "p": ["x"]}, schema=SCHEMA))    # a new snapshot 3
    it = assert_views_agree(t, duck)
    assert rows(it.to_arrow(), ["id"]) == [(0,), (1,), (9,)]
    doc = json.load(open(os.path.join(mdir, "v3.metadata.json")))
    assert doc["current-snapshot-id"] == 3 and doc["snapshots"][-1]["summary"]["paimon-snapshot-id"] == "3"


def test_types_and_bounds_read_alike_with_filters(paimon_catalog, duck):
    import datetime as dt
    import decimal

    ddl = ("i int, l bigint, f float, d double, m decimal(10,2), day date, ts timestamp_ntz, tz timestamp, "
           "s string, b boolean, bin binary, arr array<int>, st struct<x: int, y: string>")
    t = paimon_catalog.create_table("db.types", ddl, partitioned_by=["day"], properties=VIEW)
    schema = t.to_arrow().schema
    utc = dt.timezone.utc
    base = [
        dict(i=1, l=10, f=1.5, d=2.5, m=decimal.Decimal("1.25"), day=dt.date(2024, 1, 1),
             ts=dt.datetime(2024, 1, 1, 10), tz=dt.datetime(2024, 1, 1, 10, tzinfo=utc), s="apple", b=True,
             bin=b"\x01", arr=[1, 2], st={"x": 1, "y": "a"}),
        dict(i=2, l=20, f=-1.0, d=None, m=decimal.Decimal("-3.50"), day=dt.date(2024, 1, 2),
             ts=dt.datetime(2024, 1, 2, 11, 30), tz=dt.datetime(2024, 1, 2, 0, 0, 1, tzinfo=utc),
             s="a very long string value past sixteen chars", b=False, bin=None, arr=None, st=None),
    ]
    t.append(pa.Table.from_pylist(base, schema=schema))
    t.append(pa.Table.from_pylist([dict(base[0], i=3, s="zebra", day=dt.date(2024, 1, 2))], schema=schema))
    it = t.iceberg()
    assert not it.check().problems
    cols = ["i", "l", "m", "day", "s", "b"]
    for where_ice, where_duck, where_py in [
        ("l >= 20", "l >= 20", "l >= 20"),
        ("s = 'zebra'", "s = 'zebra'", "s == 'zebra'"),
        ("day = DATE '2024-01-02'", "day = DATE '2024-01-02'", "day == '2024-01-02'"),
        ("m < 0", "m < 0", "m < 0"),
        ("s > 'a very'", "s > 'a very'", "s > 'a very'"),
    ]:
        paimon = rows(t.to_arrow(where=where_ice), cols)
        assert paimon, where_ice
        assert rows(it.to_arrow(where=where_ice), cols) == paimon, where_ice
        assert rows(pyiceberg_table(it.metadata_location).scan(row_filter=where_py).to_arrow(), cols) == paimon
        got = duck.execute(f"SELECT * FROM iceberg_scan('{it.metadata_location}') WHERE {where_duck}")
        assert rows(got.fetch_arrow_table(), cols) == paimon, where_duck
    # every column, nested ones too, as all three readers see them
    every = rows(t.to_arrow(), ["i", "f", "d", "ts", "bin", "arr", "st"])
    assert rows(it.to_arrow(), ["i", "f", "d", "ts", "bin", "arr", "st"]) == every
    assert rows(pyiceberg_table(it.metadata_location).scan().to_arrow(), ["i", "f", "d", "ts", "bin", "arr", "st"]) \
        == every
    # the bounds are Iceberg's single-value serialization of the Paimon statistics
    f = next(f for f in it.plan_files() if f.record_count == 2 or f.partition == (19723,))
    assert f.lower_bounds and f.upper_bounds


def test_an_expiry_without_a_commit_drops_the_snapshots_from_the_view(paimon_catalog, duck):
    t = paimon_catalog.create_table("db.e", SCHEMA, properties=VIEW)
    for i in range(4):
        t.append(pa.table({"id": [i], "s": ["a"], "p": ["x"]}, schema=SCHEMA))
    assert [s.snapshot_id for s in t.iceberg().snapshots()] == [1, 2, 3, 4]
    lists = {s.snapshot_id: s.manifest_list for s in t.iceberg().snapshots()}
    import datetime as dt
    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=1)
    assert t.expire_snapshots(older_than=later, retain_last=2).expired_snapshot_ids == [1, 2]
    it = assert_views_agree(t, duck)                   # check: no snapshot of the view lost its files
    assert [s.snapshot_id for s in it.snapshots()] == [3, 4]
    assert not os.path.exists(lists[1]) and not os.path.exists(lists[2]) and os.path.exists(lists[3])
    assert [e["snapshot-id"] for e in it.metadata.snapshot_log] == [3, 4]


@pytest.mark.long       # Spark jobs: a minute on a cold session
def test_spark_upserts_and_deletes_move_the_view(spark_catalog, duck):
    t = spark_catalog.create_table("db.sp", "id bigint, a string", properties={
        **VIEW, "primary-key": "id", "bucket": "1", "deletion-vectors.enabled": "true",
        "metadata.iceberg.format-version": "3"})
    t.append(pa.Table.from_pylist([{"id": i, "a": "v1"} for i in range(4)], schema=t.to_arrow().schema))
    t.update({"a": "'v2'"}, where="id = 1")            # a Spark job's upsert
    t.delete("id = 2")                                  # a DELETE record, then the vectors mark the row
    it = assert_views_agree(t, duck, current_only=True)
    assert rows(it.to_arrow(), ["id", "a"]) == [(0, "v1"), (1, "v2"), (3, "v1")]
