"""A user's own SparkSession at full speed: ``icefloe.configure_spark(builder)`` puts icefloe's JVM
extension on the session's ``spark.jars``; a running session created without it gets it added to its
class loaders; where neither is possible, one warning names the fix."""
import json
import os
import subprocess
import sys
import textwrap
import types
import warnings

import pytest

import icefloe
from icefloe.spark import jvm
from icefloe.spark.session import REQUIRED_CONF


def test_configure_spark_adds_the_jar_after_the_users_own_and_the_settings():
    from pyspark.sql import SparkSession

    jar = jvm.jar_path()
    assert jar and os.path.exists(jar)
    builder = SparkSession.Builder().master("local[1]").config("spark.jars", "/opt/mine.jar")
    assert icefloe.configure_spark(builder) is builder
    icefloe.configure_spark(builder)                        # twice: the jar is listed once
    assert builder._options["spark.jars"] == f"/opt/mine.jar,{jar}"
    assert {k: builder._options[k] for k in REQUIRED_CONF} == REQUIRED_CONF
    # a Spark Connect builder: the settings alone (the client cannot reach the extension's classes)
    remote = icefloe.configure_spark(SparkSession.Builder().remote("sc://localhost"))
    assert "spark.jars" not in remote._options
    assert {k: remote._options[k] for k in REQUIRED_CONF} == REQUIRED_CONF
    with pytest.raises(TypeError, match="SparkSession.builder"):
        icefloe.configure_spark("local[1]")


def test_a_session_that_cannot_get_the_extension_warns_once_with_the_fix(spark, monkeypatch):
    """No jar (no javac, none in the package): the session's JVM is asked for the class, and one
    warning in the process names why and the fix; later sessions take the slower paths quietly."""
    monkeypatch.setattr(jvm, "jar_path", lambda: None)
    monkeypatch.setattr(jvm, "_loadable", lambda jvm: False)
    monkeypatch.setattr(jvm, "_warned", [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):          # two sessions (SparkContexts) without the class
            session = types.SimpleNamespace(_jsc=object(), _jvm=spark._jvm)
            assert jvm.available(session) is False
    (w,) = [w for w in caught if "JVM extension" in str(w.message)]
    assert "no javac" in str(w.message) and "icefloe.configure_spark(SparkSession.builder" in str(w.message)


SCRIPT = textwrap.dedent("""
    import json, sys, warnings
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    import icefloe
    from icefloe.spark import jvm as extension

    wh = sys.argv[1]
    warnings.simplefilter("always")
    out = {}

    def loadable(spark):        # asked of the session's JVM directly, not through icefloe
        jvm = spark._jvm
        try:
            jvm.java.lang.Class.forName(extension.PROBE_CLASS, False,
                                        jvm.java.lang.Thread.currentThread().getContextClassLoader())
            return True
        except Exception:
            return False

    def read(spark, name):
        with warnings.catch_warnings(record=True) as caught:
            t = icefloe.Catalog(wh, spark=spark).load_table(name)
            df = t.to_spark()
            plan = df._jdf.queryExecution().executedPlan().toString()
            return {"rows": sorted(r.id for r in df.collect()), "in_scan": "Format: Parquet (icefloe deleted rows)" in plan,
                    "warnings": [str(w.message) for w in caught if "JVM extension" in str(w.message)],
                    "plan": plan[:300]}

    def new_session(builder):
        return builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()

    # 1. a session built with the one-liner: the class is there before icefloe sees the session
    spark = new_session(icefloe.configure_spark(SparkSession.builder))
    spark.sparkContext.setLogLevel("ERROR")
    out["one_liner_loadable_at_start"] = loadable(spark)
    t = icefloe.Catalog(wh, spark=spark).create_table(
        "db.t", "id bigint not null", properties={"write.delete.mode": "merge-on-read"})
    t.append(spark.range(20))
    t.delete("id % 5 = 0")
    out["one_liner"] = read(spark, "db.t")
    spark.stop()
    SparkContext._gateway.shutdown()            # the next session in a JVM of its own
    SparkContext._gateway = SparkContext._jvm = None

    # 2. a session built without it: icefloe adds the jar when it is handed the session
    spark = new_session(SparkSession.builder)
    spark.sparkContext.setLogLevel("ERROR")
    out["plain_loadable_at_start"] = loadable(spark)
    out["plain"] = read(spark, "db.t")
    out["plain_loadable_after"] = loadable(spark)
    print("RESULT " + json.dumps(out), flush=True)
""")


@pytest.mark.long
def test_a_users_session_scans_with_the_extension_built_with_the_one_liner_or_not(tmp_path):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "wh")], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    out = json.loads(lines[0][len("RESULT "):])
    kept = [i for i in range(20) if i % 5]
    for kind in ("one_liner", "plain"):
        assert out[kind]["rows"] == kept and out[kind]["warnings"] == [], out[kind]
        assert out[kind]["in_scan"], out[kind]["plan"]          # deletes applied inside the Parquet scan
    assert out["one_liner_loadable_at_start"] and not out["plain_loadable_at_start"] and out["plain_loadable_after"]
