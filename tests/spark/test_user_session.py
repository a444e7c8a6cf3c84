"""The data source in a SparkSession the user built, without icefloe having touched it."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

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


@pytest.mark.long
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


WORKER_SCRIPT = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession

    import icefloe

    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    cat = icefloe.Catalog(sys.argv[1], spark=spark)
    try:
        cat.spark
    except icefloe.IcefloeError as e:
        print("REFUSED " + type(e).__name__ + ": " + str(e), flush=True)
        sys.exit(3)
    print("ACCEPTED", flush=True)
""")


@pytest.mark.long
def test_a_worker_interpreter_without_icefloe_is_named_with_the_fix(tmp_path):
    """A script run with the virtualenv's python, the virtualenv not activated: Spark would
    start ``python3`` from the PATH for its workers, which has no icefloe."""
    import shutil

    java = os.path.dirname(os.path.realpath(shutil.which("java")))
    system_python = shutil.which("python3", path="/usr/bin:/bin")
    # what icefloe's own check imports, from outside the repository (``import icefloe`` alone is light)
    if system_python is None or subprocess.run([system_python, "-c", "import icefloe, pandas, pyarrow, pyspark"],
                                               capture_output=True, cwd=str(tmp_path)).returncode == 0:
        import pytest

        pytest.skip("no python3 without icefloe on this machine's system PATH")
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON",
                                                             "VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{java}:/usr/bin:/bin"
    proc = subprocess.run([sys.executable, "-c", WORKER_SCRIPT, str(tmp_path / "wh")], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("REFUSED")][0]
    assert "WorkerPythonError" in line and system_python in line
    assert f"PYSPARK_PYTHON={sys.executable}" in line and "spark.pyspark.python" in line
    # with the fix the message gives, the same script is accepted
    env["PYSPARK_PYTHON"] = sys.executable
    ok = subprocess.run([sys.executable, "-c", WORKER_SCRIPT, str(tmp_path / "wh")], cwd=str(tmp_path), env=env,
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and "ACCEPTED" in ok.stdout, ok.stdout[-2000:] + ok.stderr[-2000:]


FIRST_USE_SCRIPT = textwrap.dedent("""
    import sys
    import pyarrow as pa
    import icefloe

    # no SparkSession in this process: the table is made and filled without one
    t = icefloe.Catalog(sys.argv[1]).create_table("db.t", "id bigint, name string")
    t.append(pa.table({"id": pa.array(range(10), pa.int64()), "name": [f"n{i}" for i in range(10)]}))
    first = t.delete("id < 3")          # the first statement that needs Spark starts it
    second = t.update({"name": "'u'"}, where="id = 9")
    rows = sorted((r["id"], r["name"]) for r in t.to_arrow().to_pylist())
    print("RESULT", first["deleted"], second["updated"], rows, flush=True)
""")


@pytest.mark.long
def test_a_row_level_change_is_the_first_spark_statement_of_a_process(tmp_path):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-c", FIRST_USE_SCRIPT, str(tmp_path / "wh")], cwd=str(tmp_path),
                          env=env, capture_output=True, text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    expected = [(i, "u" if i == 9 else f"n{i}") for i in range(3, 10)]
    assert lines[0] == f"RESULT 3 1 {expected}"
