"""A copy-on-write DELETE or UPDATE on a partitioned table rewrites each touched file from the
scan task that reads it: every file's rows are of one partition, so the rows are written where
they are read, sorted by partition within the task, with no shuffle (``write.distribution-mode``
shuffles appends and MERGE's rows, which arrive from anywhere). When the rows did pass through a
shuffle (a delete set too large to broadcast joined to the scan), they are distributed by
partition as before. The table ends as its merge-on-read twin does either way."""
import pyarrow.parquet as pq
import pytest

from icefloe.spark.iceberg_write import without_shuffle
from tests.iceberg.twin_tables import in_group, jobs, sorted_rows, twins


def _files_hold_their_partition(t) -> dict:
    """Data files per partition value, each file's rows checked to be of its partition."""
    per: dict = {}
    for task in t.refresh().plan_files():
        values = set(pq.read_table(task.file_path.replace("file://", ""), columns=["p"]).column("p").to_pylist())
        assert values == {task.partition[0]}, (task.file_path, values, task.partition)
        per[task.partition[0]] = per.get(task.partition[0], 0) + 1
    return per


def test_delete_and_update_rewrite_each_file_where_it_is_read(catalog, spark):
    mor, cow = twins(catalog, spark, "_inplace", 600)
    files_before = len(cow.plan_files())

    got = in_group(spark, "cow-delete", lambda: cow.delete("id % 7 = 3"))
    assert got["deleted"] == mor.delete("id % 7 = 3")["deleted"] == 86
    writes = [j for j in jobs(spark, "cow-delete") if any(n.startswith("save at") for n in j)]
    # the rewrite is one job of one stage: the scan's tasks write (a shuffle would add a stage)
    assert len(writes) == 1 and len(writes[0]) == 1, jobs(spark, "cow-delete")
    assert sorted_rows(cow) == sorted_rows(mor)
    assert sum(_files_hold_their_partition(cow).values()) == files_before   # each file replaced by one

    # rows moved to other partitions are written by the tasks that read them, into their new partitions
    change = {"name": "concat(name, '!')", "p": "p + 10"}
    got = in_group(spark, "cow-update", lambda: cow.update(change, where="id % 9 = 4"))
    assert got["updated"] == mor.update(change, where="id % 9 = 4")["updated"] == 57
    writes = [j for j in jobs(spark, "cow-update") if any(n.startswith("save at") for n in j)]
    assert len(writes) == 1 and len(writes[0]) == 1, jobs(spark, "cow-update")
    assert sorted_rows(cow) == sorted_rows(mor)
    per = _files_hold_their_partition(cow)
    assert set(per) == {0, 1, 2, 3, 10, 11, 12, 13}


def test_rows_a_shuffle_spread_are_distributed_by_partition(catalog, spark):
    mor, cow = twins(catalog, spark, "_spread", 600)
    keys = spark.range(0, 600, 3).selectExpr("id")
    for t in (mor, cow):     # equality deletes: the scan joins them to the rows
        t.delete_by_key(keys)
    # that join shuffles the rows, over tasks kept apart (not coalesced into one for so few rows)
    settings = {"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.sql.adaptive.coalescePartitions.enabled": "false"}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        rows = cow.refresh().to_spark()
        assert not without_shuffle(rows)
        assert rows.rdd.getNumPartitions() > 1
        assert cow.delete("id % 7 = 3")["deleted"] == mor.delete("id % 7 = 3")["deleted"]
    finally:
        for k in settings:
            spark.conf.unset(k)
    assert sorted_rows(cow) == sorted_rows(mor)
    # distributed by partition: one new file per partition, however the shuffle spread the rows
    assert _files_hold_their_partition(cow) == {0: 1, 1: 1, 2: 1, 3: 1}


@pytest.mark.parametrize("shape,expected", [
    ("scan", True), ("filtered", True), ("broadcast join", True), ("repartition", False), ("shuffled join", False),
])
def test_without_shuffle_reads_the_physical_plan(catalog, spark, shape, expected):
    from pyspark.sql import functions as F

    t = catalog.create_table(f"db.plan_{shape.replace(' ', '_')}", "id bigint, p int")
    t.append(spark.range(0, 50, 1, 2).selectExpr("id", "cast(id % 3 as int) as p"))
    small = spark.range(0, 3).selectExpr("cast(id as int) as p", "id * 10 as w")
    df = t.to_spark()
    if shape == "filtered":
        df = df.where("id > 3").select("id")
    elif shape == "broadcast join":
        df = df.join(F.broadcast(small), "p")
    elif shape == "repartition":
        df = df.repartition(3, "p")
    elif shape == "shuffled join":
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
        try:
            df = df.join(small, "p")
            assert without_shuffle(df) is expected
        finally:
            spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
        return
    assert without_shuffle(df) is expected
