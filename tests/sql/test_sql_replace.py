"""CREATE OR REPLACE TABLE / REPLACE TABLE [AS SELECT]: Iceberg's replace keeps the table's history."""
import pytest

from icefloe.sql.errors import NotSupportedYetError, SqlError
from tests.interop_util import pyiceberg_table


def _rows(run, q):
    return [tuple(r) for r in run(q).collect()]


def test_create_or_replace_keeps_history_and_field_ids(catalog):
    run = catalog.sql
    run("CREATE TABLE db.r (id bigint, name string, ts date) USING iceberg PARTITIONED BY (name) "
        "TBLPROPERTIES ('owner'='ann')")
    run("INSERT INTO db.r VALUES (1, 'a', DATE '2024-01-01'), (2, 'b', DATE '2024-01-02')")
    run("ALTER TABLE db.r CREATE TAG before")
    t = catalog.load_table("db.r")
    old_snap = t.current_snapshot().snapshot_id
    old_ids = {f.name: f.field_id for f in t.schema.fields}
    old_location = t.location

    run("CREATE OR REPLACE TABLE db.r (id bigint, amount double, name string) USING iceberg "
        "PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ('stage'='two')")
    t = catalog.load_table("db.r")
    meta = t.metadata
    # an empty current state; the old snapshot, its log entry and the tag stay
    assert meta.current_snapshot_id is None and "main" not in meta.refs
    assert [s.snapshot_id for s in meta.snapshots] == [old_snap]
    assert meta.refs["before"].snapshot_id == old_snap
    assert [e["snapshot-id"] for e in meta.snapshot_log] == [old_snap]
    assert _rows(run, "SELECT * FROM db.r") == []
    # surviving columns keep their ids, the new one gets the next id, the schema is added
    assert [f.name for f in t.schema.fields] == ["id", "amount", "name"]
    assert t.schema.find_field("id").field_id == old_ids["id"]
    assert t.schema.find_field("name").field_id == old_ids["name"]
    assert t.schema.find_field("amount").field_id == max(old_ids.values()) + 1
    assert len(meta.schemas) == 2 and meta.current_schema_id == 1
    # a new spec; properties updated, not dropped; same table (uuid, location)
    assert [str(f.transform) for f in t.spec.fields] == ["bucket[4]"] and meta.default_spec_id == 1
    assert t.properties["owner"] == "ann" and t.properties["stage"] == "two"
    assert t.location == old_location
    # time travel to the tag reads the old data with the old schema
    assert sorted(_rows(run, "SELECT id, name FROM db.r VERSION AS OF 'before'")) == [(1, "a"), (2, "b")]
    assert sorted(_rows(run, f"SELECT * FROM db.r VERSION AS OF {old_snap}")) == [
        (1, "a", __import__("datetime").date(2024, 1, 1)), (2, "b", __import__("datetime").date(2024, 1, 2))]

    # writes after the replace start a new lineage
    run("INSERT INTO db.r VALUES (3, 1.5, 'c')")
    t = catalog.load_table("db.r")
    assert t.current_snapshot().parent_snapshot_id is None
    assert _rows(run, "SELECT * FROM db.r") == [(3, 1.5, "c")]

    # pyiceberg reads the replaced table the same way
    py = pyiceberg_table(t.metadata_location)
    assert py.scan().to_arrow().to_pylist() == [{"id": 3, "amount": 1.5, "name": "c"}]
    assert {s.snapshot_id for s in py.snapshots()} == {old_snap, t.current_snapshot().snapshot_id}
    assert py.spec().fields[0].field_id == 1001 and len(py.specs()) == 2


def test_replace_as_select_is_one_commit_and_reuses_specs(catalog):
    run = catalog.sql
    run("CREATE TABLE db.src (k int, v string) USING iceberg")
    run("INSERT INTO db.src VALUES (1, 'x'), (2, 'y'), (3, 'z')")
    run("CREATE TABLE db.r2 (k int, v string) USING iceberg PARTITIONED BY (v)")
    run("INSERT INTO db.r2 VALUES (9, 'q')")
    t = catalog.load_table("db.r2")
    first = t.current_snapshot().snapshot_id
    versions = t.ops.current_version()

    # RTAS that reads the table it replaces: the old files are still there to read
    run("REPLACE TABLE db.r2 USING iceberg PARTITIONED BY (v) AS "
        "SELECT k, v FROM db.src UNION ALL SELECT k * 10, v FROM db.r2")
    t = catalog.load_table("db.r2")
    assert t.ops.current_version() == versions + 1          # replace + snapshot in one metadata version
    snap = t.current_snapshot()
    assert snap.parent_snapshot_id is None and snap.operation == "append"
    assert snap.summary["total-records"] == "4" and snap.summary["added-data-files"] == "4"
    assert sorted(_rows(run, "SELECT k, v FROM db.r2")) == [(1, "x"), (2, "y"), (3, "z"), (90, "q")]
    assert [s.snapshot_id for s in t.snapshots()] == [first, snap.snapshot_id]
    # identity(v) on the same source: the partition field keeps id 1000 and the spec is reused
    assert t.metadata.default_spec_id == 0 and len(t.metadata.partition_specs) == 1
    assert t.spec.fields[0].field_id == 1000
    # the query's columns are not null (literal k), schema from the query
    py = pyiceberg_table(t.metadata_location)
    assert sorted(r["k"] for r in py.scan().to_arrow().to_pylist()) == [1, 2, 3, 90]

    # CREATE OR REPLACE ... AS SELECT creates a missing table in one commit
    run("CREATE OR REPLACE TABLE local.db.fresh USING iceberg AS SELECT k FROM db.src WHERE k > 1")
    f = catalog.load_table("db.fresh")
    assert f.ops.current_version() == 1 and len(f.snapshots()) == 1
    assert sorted(_rows(run, "SELECT k FROM db.fresh")) == [(2,), (3,)]
    # ... and one without AS SELECT, an empty table
    run("CREATE OR REPLACE TABLE db.fresh2 (a int) USING iceberg")
    assert catalog.load_table("db.fresh2").current_snapshot() is None


def test_replace_errors(catalog, warehouse, spark):
    run = catalog.sql
    with pytest.raises(SqlError) as ei:
        run("REPLACE TABLE db.missing (a int) USING iceberg")
    assert "db.missing does not exist" in str(ei.value) and (ei.value.line, ei.value.column) == (1, 15)
    run("CREATE TABLE db.e (a int) USING iceberg")
    run("INSERT INTO db.e VALUES (1)")
    before = catalog.load_table("db.e").ops.current_version()
    with pytest.raises(SqlError, match="refers to unknown column .nope."):
        run("CREATE OR REPLACE TABLE db.e (a int) USING iceberg PARTITIONED BY (nope)")
    with pytest.raises(SqlError, match="IF NOT EXISTS"):
        run("CREATE OR REPLACE TABLE IF NOT EXISTS db.e (a int) USING iceberg")
    # a column whose type changes beyond a promotion is a new column (new id); time travel still
    # reads the old values with the old type
    run("CREATE TABLE db.ty (k int, v string, n int) USING iceberg")
    run("INSERT INTO db.ty VALUES (1, 'one', 5)")
    old = catalog.load_table("db.ty")
    snap, ids = old.current_snapshot().snapshot_id, {f.name: f.field_id for f in old.schema.fields}
    run("CREATE OR REPLACE TABLE db.ty (k int, v int, n bigint) USING iceberg")
    new = {f.name: f.field_id for f in catalog.load_table("db.ty").schema.fields}
    assert new["k"] == ids["k"] and new["n"] == ids["n"] and new["v"] == 4       # int -> bigint keeps its id
    assert _rows(run, f"SELECT * FROM db.ty VERSION AS OF {snap}") == [(1, "one", 5)]

    # partition source columns must survive: the history's manifests need them
    run("CREATE TABLE db.pt (id bigint, day date) USING iceberg PARTITIONED BY (day)")
    run("INSERT INTO db.pt VALUES (1, DATE '2024-01-01')")
    pt_version = catalog.load_table("db.pt").ops.current_version()
    with pytest.raises(NotSupportedYetError) as ei:
        run("CREATE OR REPLACE TABLE db.pt (id bigint) USING iceberg")
    assert "drops column 'day'" in str(ei.value) and "partition spec 0" in str(ei.value)
    with pytest.raises(NotSupportedYetError, match="drops column 'day' or changes its type"):
        run("REPLACE TABLE db.pt USING iceberg AS SELECT 1 AS id, 'x' AS day")
    assert catalog.load_table("db.pt").ops.current_version() == pt_version
    run("CREATE OR REPLACE TABLE db.pt (id bigint, day date) USING iceberg")       # kept, now unpartitioned
    run("INSERT INTO db.pt VALUES (2, DATE '2024-01-02')")
    assert catalog.load_table("db.pt").spec.is_unpartitioned
    assert _rows(run, "SELECT id FROM db.pt VERSION AS OF "
                 f"{catalog.load_table('db.pt').snapshots()[0].snapshot_id} WHERE day = DATE '2024-01-01'") == [(1,)]

    with pytest.raises(NotSupportedYetError, match="metadata table options for iceberg tables"):
        run("SELECT * FROM db.e.options")                  # a Paimon system table
    # nothing was committed by the failed statements
    assert catalog.load_table("db.e").ops.current_version() == before
    assert _rows(run, "SELECT * FROM db.e") == [(1,)]

    import icefloe

    pcat = icefloe.Catalog(warehouse + "_paimon", format="paimon", spark=spark)
    pcat.sql("CREATE TABLE db.p (a int) USING paimon")
    pcat.sql("CREATE OR REPLACE TABLE db.p (a int, b string) USING paimon")    # Paimon's replace keeps history
    assert [f.name for f in pcat.load_table("db.p").table_schema.fields] == ["a", "b"]
