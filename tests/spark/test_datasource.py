"""The `icefloe` Spark data source: df.write.format("icefloe") and spark.read.format("icefloe")."""

import icefloe
from tests.interop_util import pyiceberg_table


def test_write_then_read_through_the_data_source(spark, warehouse):
    loc = f"{warehouse}/db/events"
    df = spark.sql("select id, concat('n', id) as name, timestamp'2023-01-01 00:00:00' + make_interval(0, 0, 0, "
                   "cast(id as int)) as ts from range(40)")
    df.write.format("icefloe").mode("append").option("partitioned_by", "month(ts)").save(loc)
    read = spark.read.format("icefloe").load(loc)
    assert read.count() == 40
    assert sorted(r.id for r in read.where("id < 5").collect()) == [0, 1, 2, 3, 4]
    assert sorted(r.id for r in read.where("ts >= timestamp'2023-02-01 00:00:00'").collect()) == list(range(31, 40))
    # the same DataFrame read whole after filtered reads: no earlier query's filters prune its files
    assert read.count() == 40 and sorted(r.id for r in read.collect()) == list(range(40))

    t = icefloe.Catalog(warehouse).load_table("db.events")
    assert [f.transform.name for f in t.spec.fields] == ["month"]
    assert len(t.snapshots()) == 1 and t.current_snapshot().summary["added-records"] == "40"
    # the Spark tasks' files are one snapshot that pyiceberg reads too
    assert pyiceberg_table(t.metadata_location).scan().to_arrow().num_rows == 40

    df.limit(3).write.format("icefloe").mode("overwrite").save(loc)
    assert spark.read.format("icefloe").load(loc).count() == 3
    t.refresh()
    assert [s.operation for s in t.snapshots()] == ["append", "overwrite"]
    old = spark.read.format("icefloe").option("snapshot-id", str(t.snapshots()[0].snapshot_id)).load(loc)
    assert old.count() == 40


def test_data_source_append_to_api_table(spark, catalog):
    t = catalog.create_table("db.x", "id bigint not null, v double", partitioned_by=["bucket(4, id)"])
    spark.range(10).selectExpr("id", "cast(id * 1.5 as double) as v").write.format("icefloe").mode("append").save(t.location)
    assert sorted(r.id for r in t.to_spark().collect()) == list(range(10))
    assert {f.partition[0] for f in t.plan_files()} <= set(range(4))


def test_sql_through_the_session_catalog(spark, catalog):
    t = catalog.create_table("db.sq", "id bigint not null, name string", partitioned_by=["bucket(2, id)"])
    spark.sql(f"CREATE TABLE icefloe_sq USING icefloe LOCATION '{t.location}'")
    try:
        spark.sql("INSERT INTO icefloe_sq VALUES (1, 'a'), (2, 'b')")
        spark.sql("INSERT INTO icefloe_sq SELECT id + 10, name FROM icefloe_sq")
        got = sorted(tuple(r) for r in spark.sql("SELECT id, name FROM icefloe_sq").collect())
        assert got == [(1, "a"), (2, "b"), (11, "a"), (12, "b")]
        assert spark.sql("SELECT count(*) FROM icefloe_sq WHERE id > 10").first()[0] == 2
        t.refresh()
        assert len(t.snapshots()) == 2 and t.current_snapshot().summary["total-records"] == "4"
    finally:
        spark.sql("DROP TABLE IF EXISTS icefloe_sq")


def test_sql_create_new_table(spark, warehouse):
    loc = f"{warehouse}/db/fresh"
    spark.sql(f"CREATE TABLE icefloe_fresh USING icefloe LOCATION '{loc}' "
              "OPTIONS (columns 'id bigint not null, ts timestamp', partitioned_by 'days(ts)')")
    try:
        spark.sql("INSERT INTO icefloe_fresh VALUES (1, timestamp'2024-01-01 10:00:00')")
        assert spark.sql("SELECT id FROM icefloe_fresh").first()[0] == 1
        t = icefloe.Catalog(warehouse).load_table("db.fresh")
        assert [f.transform.name for f in t.spec.fields] == ["day"]
        assert pyiceberg_table(t.metadata_location).scan().to_arrow().num_rows == 1
    finally:
        spark.sql("DROP TABLE IF EXISTS icefloe_fresh")
