"""icefloe on a Spark standalone cluster (tools/spark_cluster.py): a master and two workers started by
PySpark's own launch script as processes of their own, each worker with its own /tmp in a mount
namespace of its own, so the executors share no disk with the driver; the warehouse is on the S3
server. The driver (cluster_job.py, a process of its own) ships icefloe to the executors as a zip
in ``spark.submit.pyFiles`` and runs, for both formats, appends, a stream, a MERGE, reads, a
compaction and an expiry, checking each by its rows and by the table's metadata; pyiceberg and
pypaimon then read what it left. Twice: as a pip-installed PySpark session is (data through Python
tasks and obstore), and with ``spark.native-io`` and Hadoop's S3A connector on the cluster's class
path (Spark's own Parquet reader and writer on s3://), the path a production cluster takes."""
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import icefloe

JOB = Path(__file__).with_name("cluster_job.py")
EXPECTED = sorted((i, "new" if 1190 <= i < 1210 else str(i)) for i in range(1210))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from tools.spark_cluster import SparkStandalone

    with SparkStandalone(tmp_path_factory.mktemp("standalone")) as c:
        yield c


@pytest.fixture(scope="module")
def icefloe_zip(tmp_path_factory) -> str:
    """The icefloe package the driver imports, zipped as the docs show (compiled, so that each
    executor's Python workers import it without compiling it again)."""
    out = tmp_path_factory.mktemp("ship") / "icefloe.zip"
    with zipfile.PyZipFile(out, "w") as z:
        z.writepy(str(Path(icefloe.__file__).parent))
    return str(out)


def s3a_settings(s3_server) -> dict:
    """Hadoop's S3A connector on the cluster's class path (as a cluster's installation has it) and
    pointed at the S3 server; ``s3://`` paths go to it too."""
    from tools import maven_jars

    jars = os.pathsep.join(str(maven_jars.path(a)) for a in ("hadoop-aws", "bundle", "analyticsaccelerator-s3"))
    props = s3_server.properties
    return {"spark.driver.extraClassPath": jars, "spark.executor.extraClassPath": jars,
            "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
            "spark.hadoop.fs.s3a.endpoint": props["s3.endpoint"],
            "spark.hadoop.fs.s3a.endpoint.region": props["s3.region"],
            "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.access.key": props["s3.access-key-id"],
            "spark.hadoop.fs.s3a.secret.key": props["s3.secret-access-key"]}


def run_job(cluster, s3_server, tmp_path, icefloe_zip, native: bool) -> tuple[dict, str]:
    from tools.spark_cluster import java_home_wrapper

    warehouse = f"s3://{s3_server.new_bucket()}/wh"
    marker = tmp_path / "driver-only"
    marker.write_text("only the driver's disk has this file")
    props = dict(s3_server.properties, **({"spark.native-io": "true"} if native else {}))
    settings = {"warehouse": warehouse, "properties": props, "py_files": icefloe_zip, "marker": str(marker),
                "checkpoints": str(tmp_path / "checkpoints"), "spark": s3a_settings(s3_server) if native else {}}
    (tmp_path / "settings.json").write_text(json.dumps(settings))
    env = dict(os.environ, JAVA_HOME=str(java_home_wrapper(tmp_path / "java")), PYSPARK_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1")
    env["PYTHONPATH"] = str(Path(icefloe.__file__).parent.parent)       # the driver's icefloe is the zip's
    with open(tmp_path / "driver.log", "w") as log:
        proc = subprocess.run([sys.executable, str(JOB), cluster.master_url, str(tmp_path / "settings.json")],
                              stdout=subprocess.PIPE, stderr=log, text=True, timeout=900, env=env, cwd=tmp_path)
    result = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and result, (f"the driver failed; its log is {tmp_path / 'driver.log'}:\n"
                                             + (tmp_path / "driver.log").read_text()[-6000:]
                                             + "\n" + cluster.executor_logs(3000))
    return json.loads(result[0][len("RESULT "):]), warehouse


def referee_rows(s3_server, warehouse: str) -> None:
    """pyiceberg and pypaimon, each with its own S3 client, read the tables the cluster left."""
    from pyiceberg.table import StaticTable

    from tools.pypaimon_env import remote_module

    def arrow_rows(table):
        d = table.select(["id", "v"]).to_pydict()
        return sorted(zip(d["id"], d["v"]))

    props = s3_server.properties
    t = icefloe.Catalog(f"{warehouse}/iceberg", **props).load_table("db.t")
    ice = StaticTable.from_metadata(t.metadata_location, properties=props)
    assert arrow_rows(ice.scan().to_arrow()) == EXPECTED
    assert len(ice.metadata.snapshots) == 1                     # expired down to the compaction's
    current = ice.current_snapshot()
    assert current is not None and current.summary is not None
    assert current.summary.operation.value == "replace"
    assert int(current.summary["total-records"]) == len(EXPECTED)

    catalog = remote_module("pypaimon").CatalogFactory.create({"warehouse": f"{warehouse}/paimon",
                                                                **s3_server.paimon_options})
    pt = catalog.get_table("db.t")
    rb = pt.new_read_builder()
    assert arrow_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())) == EXPECTED
    p = icefloe.Catalog(f"{warehouse}/paimon", format="paimon", **props).load_table("db.t")
    kinds = [s.commit_kind for s in p.snapshots()]
    assert kinds == ["COMPACT"], kinds


def check_job(out: dict) -> None:
    assert len({pid for pid, *_ in out["executors"]}) == 2
    for fmt, got in out["formats"].items():
        assert got["rows"] == len(EXPECTED) and got["new"] == list(range(1190, 1210)), fmt
        assert got["files_after"] < got["files_before_compaction"], (fmt, got)


@pytest.mark.long
def test_both_formats_on_a_standalone_cluster_through_python_tasks(cluster, s3_server, tmp_path, icefloe_zip):
    out, warehouse = run_job(cluster, s3_server, tmp_path, icefloe_zip, native=False)
    check_job(out)
    referee_rows(s3_server, warehouse)


@pytest.mark.long
def test_both_formats_on_a_standalone_cluster_with_native_io_and_s3a(cluster, s3_server, tmp_path, icefloe_zip):
    out, warehouse = run_job(cluster, s3_server, tmp_path, icefloe_zip, native=True)
    check_job(out)
    referee_rows(s3_server, warehouse)
