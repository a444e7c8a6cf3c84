"""The data source in a SparkSession the user built, without icefloe having touched it."""
import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent("""
    import json, os, sys
    from pyspark.sql import SparkSession

    loc, cp = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    out = {"icefloe_imported_before": "icefloe" in sys.modules}
    # 1. no import at all: Spark finds the data source in the installed packages
    spark.range(10).selectExpr("id", "cast(id as string) AS s").write.format("icefloe").mode("append").save(loc)
    out["read"] = spark.read.format("icefloe").load(loc).where("id >= 4").count()
    q = (spark.readStream.format("icefloe").load(loc).writeStream.format("memory").queryName("m")
         .option("checkpointLocation", cp).trigger(availableNow=True).start())
    q.awaitTermination()
    out["streamed"] = spark.table("m").count()
    out["pushdown_before_import"] = spark.conf.get("spark.sql.python.filterPushdown.enabled")
    # 2. import icefloe into the running session: the pruning reader is registered
    import icefloe  # noqa: F401
    out["pushdown_after_import"] = spark.conf.get("spark.sql.python.filterPushdown.enabled")
    out["read_after_import"] = spark.read.format("icefloe").load(loc).where("id >= 4").count()
    print("RESULT " + json.dumps(out), flush=True)
""")


def test_format_icefloe_works_in_a_session_icefloe_never_touched(tmp_path):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "t"), str(tmp_path / "cp")],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    out = json.loads(lines[0][len("RESULT "):])
    assert out == {"icefloe_imported_before": False, "read": 6, "streamed": 10,
                   "pushdown_before_import": "false", "pushdown_after_import": "true", "read_after_import": 6}
