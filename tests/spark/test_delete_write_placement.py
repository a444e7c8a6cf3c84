"""How a merge-on-read change's rows are spread over the tasks writing delete files
(``iceberg_delete_write._clustered``): each data file's rows in one task, sorted by position, the
largest files on different tasks, inserted rows left where they were."""
from pyspark.sql import functions as F

from icefloe.spark import iceberg_delete_write as dw


def _placement(df) -> dict:
    """file -> the partitions holding its rows; and each partition's rows in order."""
    rows = df.select(F.spark_partition_id().alias("task"), "file_path", "pos").collect()
    where: dict = {}
    for r in rows:
        where.setdefault(r.file_path, set()).add(r.task)
    return where


def test_each_file_in_one_task_the_largest_apart(spark):
    # a hash of the path puts a and b in one of two tasks (pmod(hash(path), 2) is 0 for both)
    weights = {"/t/a.parquet": 1_000_000, "/t/b.parquet": 900_000, "/t/c.parquet": 10, "/t/d.parquet": 5}
    rows = spark.createDataFrame([(f, p) for f in weights for p in range(50)], "file_path string, pos long")
    rows = rows.repartition(3)
    placed = dw._clustered(rows, 2, weights, False)
    where = _placement(placed)
    assert all(len(tasks) == 1 for tasks in where.values()), where
    assert where["/t/a.parquet"] != where["/t/b.parquet"], where
    # within a task, rows come sorted by file and position
    for part in placed.rdd.glom().collect():
        keys = [(r.file_path, r.pos) for r in part]
        assert keys == sorted(keys)
    # many files: hashed, still one task per file
    many = {f"/t/f{i}.parquet": 100 + i for i in range(dw._MAX_PLACED_FILES + 1)}
    rows = spark.createDataFrame([(f, p) for f in many for p in range(3)], "file_path string, pos long")
    where = _placement(dw._clustered(rows, 2, many, False))
    assert all(len(tasks) == 1 for tasks in where.values())


def test_inserted_rows_stay_spread(spark):
    weights = {"/t/a.parquet": 10}
    rows = spark.createDataFrame([("/t/a.parquet", p) for p in range(20)] + [(None, None)] * 200,
                                 "file_path string, pos long").repartition(4)
    placed = dw._clustered(rows, 4, weights, True)
    where = _placement(placed)
    assert len(where["/t/a.parquet"]) == 1
    assert len(where[None]) > 1          # the inserted rows are not all sent to one task


def _delete_files(t):
    from icefloe.iceberg.manifest import POSITION_DELETES
    from icefloe.spark.iceberg_dml_plan import plan_target

    return {d.delete_key: d for task in plan_target(t.write_target(), None).tasks for d in task.deletes
            if d.content == POSITION_DELETES}.values()


def test_position_deletes_are_written_per_data_file_unless_asked_per_partition(spark, tmp_path):
    import pytest

    from icefloe.catalog import Catalog

    cat = Catalog(str(tmp_path / "wh"), spark=spark)
    for granularity in ("file", "partition"):
        t = cat.create_table(f"db.{granularity}", "id bigint", properties={
            "write.delete.mode": "merge-on-read", "write.delete.granularity": granularity})
        for k in range(3):        # three data files, one task's worth of deletes
            t.append(spark.range(k * 100, k * 100 + 100, 1, 1))
        t.delete("id % 10 = 0")
        deletes = list(_delete_files(t.refresh()))
        if granularity == "file":
            assert len(deletes) == 3
            targets = {d.referenced_data_file for d in deletes}
            assert len(targets) == 3 and None not in targets
            assert all(d.record_count == 10 for d in deletes)
        else:
            assert 1 <= len(deletes) <= 2          # one per task (one or two tasks here)
            # a file of one task holds the deletes of several data files (it names none of them)
            assert any(d.referenced_data_file is None for d in deletes)
            assert sum(d.record_count for d in deletes) == 30
        assert sorted(r.id for r in t.to_spark().collect()) == [i for i in range(300) if i % 10]
    t = cat.create_table("db.bad", "id bigint", properties={
        "write.delete.mode": "merge-on-read", "write.delete.granularity": "row"})
    t.append(spark.range(0, 10, 1, 1))
    with pytest.raises(ValueError, match="write.delete.granularity"):
        t.delete("id = 1")
    assert t.refresh().to_spark().count() == 10
