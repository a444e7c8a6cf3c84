"""icefloe on a Spark Connect session: a client with no JVM of its own (no py4j gateway, no RDDs)
talking to a Connect server, as managed Spark services hand sessions out. The server is a second
Spark (its own JVM and Python workers) and the client switches PySpark into Connect mode for its
whole process, so each runs in a subprocess of its own, apart from the test session's classic
SparkSession. The client runs the main paths of both formats once (the table API, SQL
INSERT/UPDATE/DELETE/MERGE, the ``icefloe`` data source, a streaming query, compaction, expiry)
and the refusals of what needs the gateway; each test checks one part of what it reported."""
import json
import os
import socket
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.long

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# the server: a Spark with the Connect plugin on a port of its own, until its stdin closes
SERVER = r"""
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2]").appName("icefloe-connect-server")
         .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
         .config("spark.connect.grpc.binding.address", "127.0.0.1")
         .config("spark.connect.grpc.binding.port", sys.argv[1])
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.pyspark.python", sys.executable).getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
print("SERVER READY", flush=True)
sys.stdin.read()
spark.stop()
"""

CLIENT = r"""
import json, sys, tempfile, time
from pyspark.sql import SparkSession, functions as F
url, wh = sys.argv[1], sys.argv[2]
started = time.monotonic()
import icefloe
from icefloe.spark import connect
from icefloe.spark.session import REQUIRED_CONF
spark = icefloe.configure_spark(SparkSession.builder.remote(url)).getOrCreate()
out = {"is_connect": connect.is_connect(spark), "parallelism": connect.default_parallelism(spark),
       "settings": all(spark.conf.get(k) == v for k, v in REQUIRED_CONF.items())}

def rows(df):
    return sorted(tuple(r) for r in df.collect())

times = out["seconds"] = {"session": round(time.monotonic() - started, 1)}

def step(key, f):
    t0 = time.monotonic()
    try:
        out[key] = f()
    except Exception as e:
        out[key] = {"error": type(e).__name__, "message": (str(e).splitlines() or [""])[0]}
    times[key] = round(time.monotonic() - t0, 1)

cats, tables = {}, {}
for fmt in ("iceberg", "paimon"):
    props = {"primary-key": "id", "bucket": "2"} if fmt == "paimon" else {"write.delete.mode": "merge-on-read"}
    cat = cats[fmt] = icefloe.Catalog(f"{wh}/{fmt}", format=fmt, spark=spark)
    t = tables[fmt] = cat.create_table("db.t", "id bigint not null, v string", properties=props)

    def append():
        t.append(spark.range(10).selectExpr("id", "cast(id as string) as v"))
        return rows(t.to_spark())

    def bad_append():       # a null in the required column: icefloe's error, the table as it was
        before = (rows(t.to_spark()), t.current_snapshot())
        try:
            t.append(spark.createDataFrame([(None, "x")], "id bigint, v string"))
        except Exception as e:
            return {"error": type(e).__name__, "names_column": "'id'" in str(e),
                    "unchanged": (rows(t.to_spark()), t.current_snapshot()) == before}
        return "accepted"

    def sql():
        cat.sql("INSERT INTO db.t VALUES (10, 'ten')")
        cat.sql("UPDATE db.t SET v = 'u' WHERE id < 2")
        cat.sql("DELETE FROM db.t WHERE id BETWEEN 3 AND 8")
        spark.createDataFrame([(0, "m"), (20, "n")], "id bigint, v string").createOrReplaceTempView("src")
        cat.sql("MERGE INTO db.t t USING src s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")
        return rows(cat.sql("SELECT id, v FROM db.t"))

    def api():
        t.delete(F.col("id") == 20)
        t.update({"v": "'w'"}, where="id = 9")
        return rows(t.to_spark(where=F.col("id") > 1))

    def source():
        spark.range(30, 32).selectExpr("id", "'ds' as v").write.format("icefloe").mode("append").save(t.location)
        return rows(spark.read.format("icefloe").load(t.location).where("id >= 30"))

    def compact():
        before, snap = rows(t.to_spark()), t.current_snapshot()
        t.compact()
        return {"same_rows": rows(t.to_spark()) == before, "new_snapshot": t.current_snapshot() != snap}

    def expire():
        before = rows(t.to_spark())
        t.expire_snapshots(older_than=int(time.time() * 1000) + 1000, retain_last=1)
        return {"snapshots": len(t.snapshots()), "same_rows": rows(t.to_spark()) == before}

    for name, f in (("append", append), ("bad_append", bad_append), ("sql", sql), ("api", api), ("source", source), ("compact", compact),
                    ("expire", expire)):
        step(f"{fmt}.{name}", f)

def stream():       # an Iceberg table read as a stream into a Paimon table, by the data source
    dst = cats["paimon"].create_table("db.stream", "id bigint not null, v string")
    query = (spark.readStream.format("icefloe").load(tables["iceberg"].location)
             .writeStream.format("icefloe").option("checkpointLocation", tempfile.mkdtemp())
             .trigger(availableNow=True).start(dst.location))
    query.awaitTermination()
    return rows(dst.to_spark()) == rows(tables["iceberg"].to_spark())

step("stream", stream)

def foreach_batch():    # a Paimon table read as a stream, each batch committed by foreach_batch
    dst = cats["iceberg"].create_table("db.batches", "id bigint not null, v string")
    query = (spark.readStream.format("icefloe").load(tables["paimon"].location)
             .writeStream.foreachBatch(dst.foreach_batch(query_id="paimon-to-iceberg"))
             .option("checkpointLocation", tempfile.mkdtemp()).trigger(availableNow=True).start())
    query.awaitTermination()
    return rows(dst.to_spark()) == rows(tables["paimon"].to_spark())

step("foreach_batch", foreach_batch)

def paimon_dv():    # a Paimon append table with deletion vectors: changes mark positions, bitmaps built in tasks
    cat = cats["paimon"]
    t = cat.create_table("db.dv", "id bigint not null, v string",
                         properties={"deletion-vectors.enabled": "true", "bucket": "-1"})
    t.append(spark.range(20).selectExpr("id", "cast(id as string) as v"))
    cat.sql("DELETE FROM db.dv WHERE id % 3 = 0")
    cat.sql("UPDATE db.dv SET v = 'u' WHERE id = 4")
    spark.createDataFrame([(5, "m"), (40, "n")], "id bigint, v string").createOrReplaceTempView("dv_src")
    cat.sql("MERGE INTO db.dv t USING dv_src s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")
    return {"rows": rows(t.to_spark())}

step("paimon_dv", paimon_dv)
# what needs the gateway: the id Spark gives a streaming query, which a Connect foreachBatch cannot see
step("foreach_batch_unnamed", lambda: tables["iceberg"].foreach_batch()(spark.range(1), 0))
print("RESULT " + json.dumps(out, default=str), flush=True)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYSPARK_PYTHON"] = sys.executable
    for k in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE", "SPARK_API_MODE"):
        env.pop(k, None)
    return env


@pytest.fixture(scope="module")
def connect_run(tmp_path_factory):
    """What the client reported, key by key."""
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env(), text=True)
    try:
        deadline = time.monotonic() + 300
        line = ""
        while time.monotonic() < deadline and "SERVER READY" not in line:
            line = server.stdout.readline()
            if not line and server.poll() is not None:
                pytest.fail(f"the Connect server exited with {server.returncode}")
        wh = str(tmp_path_factory.mktemp("connect-warehouse"))
        proc = subprocess.run([sys.executable, "-c", CLIENT, f"sc://127.0.0.1:{port}", wh], capture_output=True,
                              text=True, env=_env(), timeout=900)
        found = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        assert found, f"the client reported nothing (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
        out = json.loads(found[-1][len("RESULT "):])
        print("seconds per step on Connect:", out["seconds"], file=sys.stderr)
        return out
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()


def _ok(value):
    assert not (isinstance(value, dict) and "error" in value), value
    return value


def test_the_client_is_a_connect_session_with_the_servers_parallelism(connect_run):
    assert connect_run["is_connect"] is True
    assert connect_run["settings"] is True            # icefloe.configure_spark(builder.remote(...))
    assert connect_run["parallelism"] == 2            # the server's local[2]


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_append_of_a_dataframe(connect_run, fmt):
    # t.append(spark.range(10)...) failed inside the writer: [UNSUPPORTED_OPERATION] errorifexists
    assert _ok(connect_run[f"{fmt}.append"]) == [[i, str(i)] for i in range(10)]


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_bad_input_is_refused_by_name_and_leaves_the_table(connect_run, fmt):
    assert connect_run[f"{fmt}.bad_append"] == {"error": "RequiredFieldNullError", "names_column": True,
                                                  "unchanged": True}


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_sql_insert_update_delete_merge(connect_run, fmt):
    assert _ok(connect_run[f"{fmt}.sql"]) == [[0, "m"], [1, "u"], [2, "2"], [9, "9"], [10, "ten"], [20, "n"]]


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_table_api_with_connect_columns(connect_run, fmt):
    assert _ok(connect_run[f"{fmt}.api"]) == [[2, "2"], [9, "w"], [10, "ten"]]


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_data_source_write_and_read(connect_run, fmt):
    assert _ok(connect_run[f"{fmt}.source"]) == [[30, "ds"], [31, "ds"]]


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_compaction_and_expiry(connect_run, fmt):
    assert _ok(connect_run[f"{fmt}.compact"]) == {"same_rows": True, "new_snapshot": True}
    assert _ok(connect_run[f"{fmt}.expire"]) == {"snapshots": 1, "same_rows": True}


def test_streaming_query_between_formats(connect_run):
    assert _ok(connect_run["stream"]) is True
    assert _ok(connect_run["foreach_batch"]) is True


def test_what_needs_the_gateway_says_so_and_names_the_alternative(connect_run):
    unnamed = connect_run["foreach_batch_unnamed"]
    assert unnamed["error"] == "GatewayRequiredError", unnamed
    assert "foreach_batch(query_id=" in unnamed["message"] and "writeStream.format('icefloe')" in unnamed["message"]


def test_paimon_append_table_with_deletion_vectors(connect_run):
    """DELETE, UPDATE and MERGE on a Paimon append table with deletion vectors over Connect: the
    deleted positions are gathered into bitmaps by Spark tasks, with no gateway."""
    got = _ok(connect_run["paimon_dv"])
    kept = [i for i in range(20) if i % 3]
    expected = sorted([[i, {4: "u", 5: "m"}.get(i, str(i))] for i in kept] + [[40, "n"]])
    assert got["rows"] == expected
