"""Killing the Spark driver (SIGKILL) in the middle of writing data files leaves the table as it was."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from icefloe.catalog import Catalog
from tests.reliability.rel_util import make_table, read_ids, referenced_files, rows

WRITER = textwrap.dedent("""
    import os, sys
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from icefloe.catalog import Catalog
    from icefloe.spark.session import get_spark
    spark = get_spark()
    t = Catalog(sys.argv[1], spark=spark).load_table("db.t")
    df = spark.range(0, 40_000_000, numPartitions=16).selectExpr("id + 1000 as id", "concat('n', id) as name")
    print("writing", flush=True)
    t.append(df)
    print("committed", flush=True)
""")


def _wait_for_staged_files(location, proc, timeout=180):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        data = os.path.join(location, "data")
        if os.path.isdir(data):
            for d in os.listdir(data):
                if d.startswith(".staging-") and any(f.endswith(".parquet") for f in _files(os.path.join(data, d))):
                    return True
        time.sleep(0.05)
    return False


def _files(root):
    return [f for _, _, fs in os.walk(root) for f in fs]


@pytest.mark.long
def test_sigkill_driver_mid_write(tmp_path):
    wh = str(tmp_path / "wh")
    t = make_table(wh)
    t.append(rows(0, 5))
    before_meta = sorted(os.listdir(f"{t.location}/metadata"))
    proc = subprocess.Popen([sys.executable, "-c", WRITER, wh], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, text=True)
    try:
        staged = _wait_for_staged_files(t.location, proc)
        if not staged:
            out, err = proc.communicate(timeout=60)
            pytest.fail(f"the writer never reached the data-file stage: {out[-500:]} {err[-2000:]}")
        os.killpg(proc.pid, signal.SIGKILL)  # the Python driver and its JVM
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "committed" not in (proc.stdout.read() or "")
    # the table is exactly at its previous snapshot
    assert sorted(os.listdir(f"{t.location}/metadata")) == before_meta
    assert read_ids(wh) == list(range(5))
    clean = Catalog(wh).load_table("db.t")
    assert len(clean.snapshots()) == 1
    # what the killed job left is never referenced, and the next write works
    refs = referenced_files(clean)
    assert not any(".staging-" in p for p in refs)
    clean.append(rows(100, 3))
    assert read_ids(wh) == list(range(5)) + [100, 101, 102]


PAIMON_WRITER = textwrap.dedent("""
    import os, sys
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from icefloe.catalog import Catalog
    from icefloe.spark.session import get_spark
    spark = get_spark()
    t = Catalog(sys.argv[1], "paimon", spark=spark).load_table("db.t")
    df = spark.range(0, 40_000_000, numPartitions=16).selectExpr("id + 1000 as id", "concat('n', id) as name")
    print("writing", flush=True)
    t.append(df)
    print("committed", flush=True)
""")


def _wait_for_paimon_staging(location, proc, timeout=180):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        for d in os.listdir(location):
            if d.startswith(".staging-") and any(f.endswith(".parquet") for f in _files(os.path.join(location, d))):
                return True
        time.sleep(0.05)
    return False


@pytest.mark.long
def test_sigkill_driver_mid_write_paimon(tmp_path):
    from icefloe.catalog import Catalog

    wh = str(tmp_path / "pwh")
    t = Catalog(wh, "paimon").create_table("db.t", "id bigint not null, name string")
    t.append(rows(0, 5))
    snap_dir = os.path.join(t.location, "snapshot")
    before = sorted(os.listdir(snap_dir))
    proc = subprocess.Popen([sys.executable, "-c", PAIMON_WRITER, wh], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, text=True)
    try:
        if not _wait_for_paimon_staging(t.location, proc):
            out, err = proc.communicate(timeout=60)
            pytest.fail(f"the writer never reached the data-file stage: {out[-500:]} {err[-2000:]}")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert sorted(os.listdir(snap_dir)) == before
    clean = Catalog(wh, "paimon").load_table("db.t")
    assert [s.snapshot_id for s in clean.snapshots()] == [1]
    assert sorted(clean.to_arrow()["id"].to_pylist()) == list(range(5))
    clean.append(rows(100, 3))
    assert [s.snapshot_id for s in clean.refresh().snapshots()] == [1, 2]
