"""Data files roll at write.target-file-size-bytes, in the Spark and the Arrow write paths."""
import pyarrow as pa


def test_spark_write_rolls_files(catalog, spark):
    t = catalog.create_table("db.roll", "id bigint not null, name string",
                             properties={"write.target-file-size-bytes": "20000"})
    t.append(spark.range(0, 12000, numPartitions=1).selectExpr("id", "concat('name-', id) as name"))
    files = t.plan_files()
    assert len(files) > 1
    assert sum(f.record_count for f in files) == 12000
    assert t.to_spark().count() == 12000


def test_arrow_write_rolls_files(catalog):
    t = catalog.create_table("db.roll2", "id bigint not null, name string",
                             properties={"write.target-file-size-bytes": "20000"})
    n = 5000
    t.append(pa.table({"id": pa.array(range(n), pa.int64()), "name": [f"name-{i}" for i in range(n)]}))
    files = t.plan_files()
    assert len(files) > 1 and sum(f.record_count for f in files) == n
    assert sorted(t.to_arrow()["id"].to_pylist()) == list(range(n))
