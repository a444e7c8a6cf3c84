"""Seed 001's Spark SQL session, statement by statement, through ``Catalog.sql``.

Statements whose capability the table API does not have yet must fail with
the not-supported error; once the capability lands the same test checks the
real result (each step branches on the table having the method).
"""
import pytest

from icefloe.sql.errors import NotSupportedYetError, SqlError
from tests.interop_util import pyiceberg_table

CREATE = ("CREATE TABLE local.db.tb01 (id bigint not null, name string, ts timestamp not null) "
          "USING iceberg PARTITIONED BY (year(ts))")
MERGE_1 = ("MERGE INTO local.db.tb01 t USING (select id, name from values (1, 'update_name1'), "
           "(50,'update_name50') TAB (id, name)) u on t.id = u.id WHEN MATCHED THEN UPDATE SET t.name = u.name;")
ALTER = """ALTER TABLE local.db.tb01
ADD COLUMNS (
new_col string comment 'new added col for test'
);"""
# Verbatim from the seed: the source column is `ew_col`, and so is the SET target (`t.ew_col`),
# which the table does not have (the column added is `new_col`).
MERGE_2 = """MERGE INTO local.db.tb01 t USING (select id, name, ew_col from values (2, 'schema_update2', 'new added'), (99,'update_name50', 'new added') TAB (id, name, ew_col)) u on t.id = u.id WHEN MATCHED THEN UPDATE SET t.name = u.name , t.ew_col = u.ew_col
;"""
MERGE_2_FIXED = MERGE_2.replace("t.ew_col =", "t.new_col =")


def insert_statement() -> str:
    rows = []
    for i in range(1, 101):
        year = 2023 if i <= 50 else 2022
        rows.append(f"( {i}, 'name{i}', to_timestamp('{year}-12-31 00:12:00'))")
    return "insert into local.db.tb01 values \n" + ",\n".join(rows) + "\n;"


def names(catalog, sql):
    return {r["id"]: r["name"] for r in catalog.sql(sql).collect()}


def test_seed_001_session(catalog):
    # CREATE TABLE ... PARTITIONED BY (year(ts))
    assert catalog.sql(CREATE).columns == []
    t = catalog.load_table("db.tb01")
    assert [(f.name, str(f.field_type), f.required) for f in t.schema.fields] == [
        ("id", "long", True), ("name", "string", False), ("ts", "timestamptz", True)]
    assert [(f.name, str(f.transform)) for f in t.spec.fields] == [("ts_year", "year")]

    # INSERT of the 100 rows: one append snapshot, two files (one per year)
    catalog.sql(insert_statement())
    first = t.current_snapshot()
    assert first.operation == "append"
    assert first.summary["added-records"] == "100" and first.summary["added-data-files"] == "2"
    per_year = {r[0]: r[1] for r in catalog.sql(
        "select year(ts), count(*) from local.db.tb01 group by 1").collect()}
    assert per_year == {2022: 50, 2023: 50}

    # MERGE INTO ... USING (select ... from values ... TAB (id, name)) ... UPDATE SET t.name = u.name
    if hasattr(t, "merge"):
        catalog.sql(MERGE_1)
        after = names(catalog, "select id, name from local.db.tb01")
        assert len(after) == 100
        assert after[1] == "update_name1" and after[50] == "update_name50" and after[2] == "name2"
        merged = t.current_snapshot()
        assert merged.parent_snapshot_id == first.snapshot_id and merged.summary["total-records"] == "100"
    else:
        with pytest.raises(NotSupportedYetError, match="MERGE INTO"):
            catalog.sql(MERGE_1)

    # select * from local.db.tb01.snapshots: Iceberg's columns, one row per snapshot
    snaps = catalog.sql("select * from local.db.tb01.snapshots")
    assert snaps.columns == ["committed_at", "snapshot_id", "parent_id", "operation", "manifest_list", "summary"]
    rows = snaps.orderBy("committed_at").collect()
    assert [r.snapshot_id for r in rows] == [s.snapshot_id for s in t.snapshots()]
    assert rows[0].operation == "append" and rows[0].summary["total-records"] == "100"
    # the seed's own spelling (time travel on the snapshots table lists the same snapshots)
    assert catalog.sql(f"select * from local.db.tb01.snapshots VERSION AS OF {first.snapshot_id}").count() \
        == len(rows)

    # time travel: the first snapshot still has the original names
    before = names(catalog, f"select id, name from local.db.tb01 VERSION AS OF {first.snapshot_id}")
    assert len(before) == 100 and before[1] == "name1" and before[50] == "name50"

    # ALTER TABLE ... ADD COLUMNS (new_col string comment '...')
    if hasattr(t, "update_schema"):
        catalog.sql(ALTER)
        t.refresh()
        col = t.schema.find_field("new_col")
        assert col.doc == "new added col for test" and not col.required
    else:
        with pytest.raises(NotSupportedYetError, match="ADD COLUMNS"):
            catalog.sql(ALTER)

    # The seed's second MERGE names t.ew_col, a column the table does not have: a precise error.
    with pytest.raises(SqlError) as ei:
        catalog.sql(MERGE_2)
    err = ei.value
    assert "unknown column t.ew_col" in str(err)
    assert (err.line, err.column) == (1, MERGE_2.index("t.ew_col") + 1)

    # With the column the seed meant, the MERGE updates rows 2 and 99 in both years' files.
    if hasattr(t, "merge") and hasattr(t, "update_schema"):
        catalog.sql(MERGE_2_FIXED)
        rows = {r["id"]: r for r in catalog.sql("select * from local.db.tb01").collect()}
        assert rows[2]["name"] == "schema_update2" and rows[2]["new_col"] == "new added"
        assert rows[99]["new_col"] == "new added" and rows[3]["new_col"] is None
    elif hasattr(t, "merge"):
        with pytest.raises(SqlError, match="unknown column t.new_col"):
            catalog.sql(MERGE_2_FIXED)

    # Another reader sees the same table: pyiceberg reads the files the session left.
    t.refresh()
    arrow = pyiceberg_table(t.metadata_location).scan().to_arrow()
    ours = {r["id"]: r["name"] for r in catalog.sql("select id, name from local.db.tb01").collect()}
    assert arrow.num_rows == 100
    assert dict(zip(arrow.column("id").to_pylist(), arrow.column("name").to_pylist())) == ours
