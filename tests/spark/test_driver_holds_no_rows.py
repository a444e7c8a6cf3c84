"""Row-level changes keep rows and positions in Spark tasks: the driver only sees file lists.

Spark refuses any job whose results sent to the driver exceed ``spark.driver.maxResultSize``.
With that cap at 1 MB, collecting the (file, position) pairs or the rows these statements change
(hundreds of thousands of them, several MB) fails the statement; planning metadata, per-file counts
and the descriptions of written files fit easily. Broadcast joins, which Spark builds by collecting
the small side on the driver (bounded by ``spark.sql.autoBroadcastJoinThreshold``), are turned off
for the statements, so nothing of the data reaches the driver that way either.
"""
import contextlib

import pytest
from pyspark.sql import functions as F

ROWS = 300_000


@contextlib.contextmanager
def driver_result_cap(spark, size: str):
    conf = spark.sparkContext._jsc.sc().conf()   # the live SparkConf each new stage reads its limit from
    before = conf.get("spark.driver.maxResultSize", "1g")
    broadcast = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    conf.set("spark.driver.maxResultSize", size)
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        yield
    finally:
        conf.set("spark.driver.maxResultSize", before)
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", broadcast)


def _table(catalog, spark, name, mode):
    t = catalog.create_table(name, "id bigint, grp int, payload string", properties={
        "write.delete.mode": mode, "write.update.mode": mode, "write.merge.mode": mode})
    t.append(spark.range(ROWS).select("id", (F.col("id") % 7).cast("int").alias("grp"),
                                      F.sha2(F.col("id").cast("string"), 256).alias("payload")))
    return t


def test_the_cap_refuses_collecting_rows(spark):
    """The premise: collecting the rows one of these statements changes exceeds the cap."""
    rows = spark.range(ROWS).select(F.lit("/warehouse/db/t/data/00000-0-0123456789abcdef0123456789abcdef-00001.parquet")
                                    .alias("file"), F.col("id").alias("pos"))
    with driver_result_cap(spark, "1m"), pytest.raises(Exception, match="maxResultSize"):
        rows.toArrow()


@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_delete_update_and_merge_under_a_one_megabyte_result_cap(catalog, spark, mode):
    t = _table(catalog, spark, f"db.capped_{mode.replace('-', '_')}", mode)
    src = spark.range(0, ROWS + 20_000, 2).select("id", F.lit(-1).alias("grp"), F.lit("merged").alias("payload"))
    with driver_result_cap(spark, "1m"):
        deleted = t.delete("grp < 3")             # 3/7 of the rows
        updated = t.update({"payload": "'updated'"}, where="grp = 4")
        merged = (t.merge(src, "t.id = s.id").when_matched_update({"payload": "s.payload"})
                  .when_not_matched_insert_all().execute())
    assert deleted["deleted"] == sum(1 for i in range(ROWS) if i % 7 < 3)
    assert updated["updated"] == sum(1 for i in range(ROWS) if i % 7 == 4)
    live = {i for i in range(ROWS) if i % 7 >= 3}
    assert merged["updated"] == sum(1 for i in live if i % 2 == 0)
    gone_even = sum(1 for i in range(ROWS) if i % 7 < 3 and i % 2 == 0)    # deleted first, so inserted again
    assert merged["inserted"] == 10_000 + gone_even
    summary = t.current_snapshot().summary
    if mode == "merge-on-read":
        assert int(summary["added-position-deletes"]) == merged["updated"]
    label = F.when(F.col("payload").isin("merged", "updated"), F.col("payload")).otherwise("other")
    counts = {r[0]: r[1] for r in t.to_spark().groupBy(label).count().collect()}
    assert counts["merged"] == merged["updated"] + merged["inserted"]
    assert counts["updated"] == sum(1 for i in live if i % 7 == 4 and i % 2 == 1)
    assert sum(counts.values()) == len(live) + merged["inserted"]
    assert t.to_spark().select("id").distinct().count() == len(live) + merged["inserted"]
