"""The `icefloe` Spark data source on Paimon tables: reads, appends, overwrites and SQL."""
import icefloe


def test_data_source_on_paimon_table(spark, tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=spark)
    t = cat.create_table("db.p", "id bigint not null, name string", partitioned_by=["name"],
                         properties={"bucket": "2", "bucket-key": "id"})
    spark.range(6).selectExpr("id", "concat('n', cast(id % 2 as string)) as name") \
        .write.format("icefloe").mode("append").save(t.location)
    read = spark.read.format("icefloe").load(t.location)
    assert sorted(r.id for r in read.collect()) == list(range(6))
    assert sorted(r.id for r in read.where("name = 'n1'").collect()) == [1, 3, 5]
    t.refresh()
    assert [s.snapshot_id for s in t.snapshots()] == [1]
    spark.range(2).selectExpr("id", "'z' as name").write.format("icefloe").mode("overwrite").save(t.location)
    assert sorted(r.id for r in spark.read.format("icefloe").load(t.location).collect()) == [0, 1]
    spark.sql(f"CREATE TABLE paimon_sq USING icefloe LOCATION '{t.location}'")
    try:
        spark.sql("INSERT INTO paimon_sq VALUES (7, 'q')")
        assert spark.sql("SELECT count(*) FROM paimon_sq").first()[0] == 3
    finally:
        spark.sql("DROP TABLE IF EXISTS paimon_sq")
    t.refresh()
    assert [s.snapshot_id for s in t.snapshots()] == [1, 2, 3]
