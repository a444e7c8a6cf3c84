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


def test_data_source_creates_a_paimon_table(spark, tmp_path):
    loc = str(tmp_path / "pwh" / "db.db" / "fresh")
    (spark.range(4).selectExpr("id", "cast(id % 2 as string) as k").write.format("icefloe")
     .option("format", "paimon").option("partitioned_by", "k").option("option.bucket", "2")
     .option("option.bucket-key", "id").mode("append").save(loc))
    t = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon").load_table("db.fresh")
    assert t.partition_keys == ["k"] and t.properties.get("bucket") == "2"
    assert sorted(r.id for r in t.to_spark().collect()) == [0, 1, 2, 3]


def test_data_source_upserts_into_a_primary_key_table(spark, tmp_path):
    """A primary-key table created and written through the data source: rows are upserts,
    written per task with disjoint sequence ranges; pypaimon reads the same merged rows."""
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    wh = str(tmp_path / "pwh")
    loc = str(tmp_path / "pwh" / "db.db" / "pk")
    (spark.range(0, 20, numPartitions=3).selectExpr("id", "id * 10 as v", "'a' as s").write.format("icefloe")
     .option("format", "paimon").option("option.primary-key", "id").option("option.bucket", "2")
     .mode("append").save(loc))
    t = icefloe.Catalog(wh, format="paimon").load_table("db.pk")
    assert t.table_schema.primary_keys == ["id"]
    # updates of existing keys spread over several tasks: each key once, so the order is defined
    (spark.range(0, 20, 2, numPartitions=4).selectExpr("id", "-id as v", "'b' as s").write.format("icefloe")
     .mode("append").save(loc))
    expected = [(i, -i if i % 2 == 0 else i * 10, "b" if i % 2 == 0 else "a") for i in range(20)]
    assert sorted(tuple(r) for r in t.refresh().to_spark().collect()) == expected
    assert sorted(tuple(r) for r in spark.read.format("icefloe").load(loc).collect()) == expected
    pt = CatalogFactory.create({"warehouse": wh}).get_table("db.pk")
    rb = pt.new_read_builder()
    theirs = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert sorted((r["id"], r["v"], r["s"]) for r in theirs) == expected
    for e in t.plan():                                  # key-value files, numbered past what was there
        assert e.file.min_sequence_number >= 0 and e.file.level == 0
    assert t.check().ok
