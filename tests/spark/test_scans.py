"""``spark/scans.py``: a file scan built in one JVM call gives what PySpark's reader gives, with
paths that need quoting and options that carry any text; without icefloe's JVM classes the same
scan comes from PySpark's reader. The session's required settings are put back in one call."""
import pytest

from icefloe.spark import deleted_rows, scans


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
        assert deleted_rows.available(spark), "the session cannot load icefloe's JVM classes"
    else:
        monkeypatch.setattr(deleted_rows, "available", lambda spark: False)
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
