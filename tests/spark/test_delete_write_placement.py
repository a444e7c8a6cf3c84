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
