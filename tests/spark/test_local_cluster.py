"""icefloe on a Spark cluster simulated on this machine: ``local-cluster[2,1,1024]`` starts a
master, two workers and two executor JVMs with their own Python workers and working directories,
so nothing a task needs may live only in the driver. An append, a MERGE and a read of each format
give the right rows there, with the warehouse on the shared disk and on an S3 server; a merge-on-read
delete is applied inside the executors' scans by the Parquet extension the session's jars ship."""
import json
import os
import shutil
import stat
import subprocess
import sys
import pytest

from tools.spark_cluster import JAVA_WRAPPER   # drops a Java 24 option Spark 4.3 adds, which Java 17 refuses

JOB = r"""
import json, sys
from pyspark.sql import SparkSession
from icefloe.spark import deleted_rows, jvm
spark = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("icefloe-cluster")
         .config("spark.pyspark.python", sys.executable)
         .config("spark.jars", deleted_rows.jar_path()).getOrCreate())   # the in-scan deletes, as documented
assert spark.sparkContext.master.startswith("local-cluster")
import icefloe
local_wh, s3_wh, s3_props = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for wh, props, fmt in [(w, p, f) for w, p in ((local_wh, {}), (s3_wh, s3_props)) for f in ("iceberg", "paimon")]:
    cat = icefloe.Catalog(f"{wh}/{fmt}", format=fmt, spark=spark, **props)
    t = cat.create_table("db.t", "id bigint not null, v string")
    t.append(spark.range(1000).selectExpr("id", "cast(id as string) as v").repartition(4))
    src = spark.range(990, 1010).selectExpr("id", "'new' as v")
    r = t.merge(src, "t.id = s.id").when_matched_update({"v": "s.v"}).when_not_matched_insert_all().execute()
    assert (r["updated"], r["inserted"]) == (10, 10), r
    assert t.to_spark().count() == 1010
    assert sorted(x.id for x in t.to_spark(where="v = 'new'").collect()) == list(range(990, 1010))
    hosts = spark.sparkContext.parallelize(range(4), 4).map(lambda _: __import__("os").getpid()).distinct().count()
    assert hosts >= 2, hosts                       # tasks ran in more than one executor process
# deletes applied inside the scan by the executors (the extension's jar shipped to them)
assert jvm.available(spark)
t = icefloe.Catalog(f"{local_wh}/mor", spark=spark).create_table(
    "db.m", "id bigint not null, v string", properties={"write.delete.mode": "merge-on-read", "format-version": "3"})
t.append(spark.range(1000).selectExpr("id", "cast(id as string) as v").repartition(4))
t.delete("id % 10 = 0")
df = t.to_spark()
assert "icefloe-parquet" in df._jdf.queryExecution().executedPlan().toString()
assert df.count() == 900 and df.where("id % 10 = 0").count() == 0
print("CLUSTER OK")
"""


@pytest.mark.long
def test_append_merge_and_read_on_a_local_cluster(tmp_path, s3_server, s3_warehouse):
    java = os.path.realpath(os.path.join(os.environ["JAVA_HOME"], "bin", "java")) if os.environ.get("JAVA_HOME") \
        else os.path.realpath(shutil.which("java"))
    home = tmp_path / "java"
    (home / "bin").mkdir(parents=True)
    wrapper = home / "bin" / "java"
    wrapper.write_text(JAVA_WRAPPER.format(java=java))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, JAVA_HOME=str(home), PYSPARK_PYTHON=sys.executable)
    import pyspark

    # the local cluster's workers keep their application directories under Spark's home
    work = os.path.join(os.path.dirname(pyspark.__file__), "work")
    existed = os.path.exists(work)
    try:
        proc = subprocess.run([sys.executable, "-c", JOB, str(tmp_path / "wh"), s3_warehouse,
                               json.dumps(s3_server.properties)], capture_output=True, text=True,
                              timeout=600, env=env, cwd=tmp_path)
    finally:
        if not existed:
            shutil.rmtree(work, ignore_errors=True)
    assert proc.returncode == 0 and "CLUSTER OK" in proc.stdout, proc.stderr[-3000:]
