"""``spark/scans.py``: a file scan built in one JVM call gives what PySpark's reader gives, with
paths that need quoting and options that carry any text; without icefloe's JVM classes the same
scan comes from PySpark's reader. The session's required settings are put back in one call."""
import pytest

from icefloe.spark import deleted_rows, scans
from icefloe.spark import jvm as extension


def _files(tmp_path, spark):
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = []
    for i, name in enumerate(["plain.parquet", "with space %20 #x.parquet", "ünïcode,=+.parquet"]):
        (tmp_path / f"d{i}").mkdir()
        path = str(tmp_path / f"d{i}" / name)
        pq.write_table(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()),
                                 "s": [str(v) for v in range(i * 10, i * 10 + 10)]}), path)
        paths.append(path)
    return paths


@pytest.mark.parametrize("jvm", [True, False])
def test_file_scan_reads_what_pysparks_reader_reads(tmp_path, spark, monkeypatch, jvm):
    paths = _files(tmp_path, spark)
    if jvm:
        assert extension.available(spark), "the session cannot load icefloe's JVM classes"
    else:
        monkeypatch.setattr(extension, "available", lambda spark: False)
    schema = spark.read.parquet(*paths).schema
    expected = sorted(tuple(r) for r in spark.read.schema(schema).parquet(*paths).collect())
    df = scans.file_scan(spark, paths, schema)
    assert sorted(tuple(r) for r in df.collect()) == expected == [(i, str(i)) for i in range(30)]
    assert df.sparkSession is spark
    # an option's value may hold tabs, newlines and anything else but NUL: here one Spark rejects
    with pytest.raises(Exception, match="mergeSchema|boolean|bad\tvalue"):
        scans.file_scan(spark, paths, schema, {"mergeSchema": "bad\tvalue\nmore"}).collect()


def test_file_scan_never_skips_a_missing_file(tmp_path, spark):
    paths = _files(tmp_path, spark)
    schema = spark.read.parquet(*paths).schema
    key = "spark.sql.files.ignoreMissingFiles"
    old = spark.conf.get(key, None)
    spark.conf.set(key, "true")
    try:
        df = scans.file_scan(spark, paths, schema)
        import os
        os.remove(paths[1])
        with pytest.raises(Exception, match="does not exist|FileNotFound|not found|PATH_NOT_FOUND"):
            df.collect()
    finally:
        spark.conf.set(key, old) if old is not None else spark.conf.unset(key)


def test_ensure_conf_sets_what_differs_and_leaves_static_settings(spark):
    key = "spark.sql.parquet.fieldId.read.enabled"
    spark.conf.set(key, "false")
    scans.ensure_conf(spark, {key: "true", "spark.sql.extensions": "not.a.Class"})   # the second is static
    assert spark.conf.get(key) == "true"
    assert spark.conf.get("spark.sql.extensions", None) != "not.a.Class"


def test_an_empty_frame_is_built_in_the_jvm_and_starts_no_python_worker(spark):
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from icefloe.spark.scans import empty_frame

    schema = StructType([StructField("id", LongType(), False), StructField("name", StringType())])
    df = empty_frame(spark, schema)
    assert df.schema == schema and df.count() == 0 and df.collect() == []
    plan = df._jdf.queryExecution().executedPlan().toString()
    # a local relation: no Python RDD (PySpark's createDataFrame([]) is one, read by Python workers)
    assert "LocalTableScan" in plan and "PythonRDD" not in plan and "ExistingRDD" not in plan, plan
    assert "ExistingRDD" in spark.createDataFrame([], schema)._jdf.queryExecution().executedPlan().toString()


def _row_groups(path, rows: int, per_group: int, start: int = 0):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": pa.array(range(start, start + rows), pa.int64()),
                             "s": [f"value-{v:08d}" for v in range(start, start + rows)]}),
                   path, row_group_size=per_group, use_dictionary=False)
    assert pq.ParquetFile(path).num_row_groups == -(-rows // per_group)
    return path


def test_files_named_whole_are_each_one_task_and_others_still_split(tmp_path, spark, small_splits):
    (tmp_path / "a b").mkdir()
    one = _row_groups(str(tmp_path / "a b" / "one group %20 ü.parquet"), 4000, 4000)
    many = _row_groups(str(tmp_path / "many groups.parquet"), 4000, 500, start=4000)
    schema = spark.read.parquet(one).schema
    split = scans.file_scan(spark, [one, many], schema)
    kept = scans.file_scan(spark, [one, many], schema, whole=[one])
    assert split.rdd.getNumPartitions() > kept.rdd.getNumPartitions()
    # each task's rows: the one-group file's all in one task; the other's spread over several
    per_task = kept.select("id").rdd.glom().map(lambda rows: sorted(r.id for r in rows)).collect()
    holding_one = [t for t in per_task if t and t[0] < 4000]
    assert holding_one == [list(range(4000))]
    assert len([t for t in per_task if t and t[-1] >= 4000]) > 1
    assert sorted(r.id for r in kept.select("id").collect()) == list(range(8000))
    # Spark alone cuts the one-group file too: all its rows land in one range, the rest read nothing
    assert len([t for t in split.select("id").rdd.glom().map(len).collect() if t == 0]) > 0


def test_whole_files_with_deleted_rows(tmp_path, spark, small_splits):
    one = _row_groups(str(tmp_path / "one.parquet"), 4000, 4000)
    schema = spark.read.parquet(one).schema
    options = deleted_rows.scan_options(spark, {one: list(range(0, 4000, 7))})
    df = scans.file_scan(spark, [one], schema, options, deleted_rows.CLASS, whole=[one])
    assert df.rdd.getNumPartitions() == 1
    assert sorted(r.id for r in df.select("id").collect()) == [i for i in range(4000) if i % 7]


def test_a_tables_one_group_files_are_read_one_task_each(tmp_path, spark, small_splits):
    import icefloe

    cat = icefloe.Catalog(str(tmp_path / "wh"), spark=spark)
    t = cat.create_table("db.t", "id bigint, s string", properties={"write.delete.mode": "merge-on-read"})
    t.append(spark.range(0, 6000, 1, 2).selectExpr("id", "concat('value-', id) AS s"))
    files = t.plan_files()
    assert len(files) == 2 and all(len(f.split_offsets) == 1 for f in files)
    df = t.to_spark()
    assert df.rdd.getNumPartitions() == 2
    assert sorted(r.id for r in df.select("id").collect()) == list(range(6000))
    t.delete("id % 5 = 0")           # the read applying position deletes: still one task a file
    assert 1 in {f["content"] for f in t.inspect.files().collect()}       # position deletes
    assert t.to_spark().rdd.getNumPartitions() == len(t.plan_files())
    assert sorted(r.id for r in t.to_spark().select("id").collect()) == [i for i in range(6000) if i % 5]
