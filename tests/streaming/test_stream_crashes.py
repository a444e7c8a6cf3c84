"""Exactly once across crashes: the streaming driver is killed (SIGKILL) at random moments
and restarted from its checkpoint until the input is read; the table then holds every
input row exactly once, no micro-batch is committed twice, and the independent readers agree."""
import json
import os
import random
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.interop_util import pyiceberg_table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _inputs(folder, files, rows):
    os.makedirs(folder)
    for b in range(files):
        ids = list(range(b * rows, (b + 1) * rows))
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids]}),
                       os.path.join(folder, f"in-{b:04d}.parquet"))
    return files * rows


def _committed(checkpoint):
    folder = os.path.join(checkpoint, "commits")
    return len([f for f in os.listdir(folder) if f.isdigit()]) if os.path.isdir(folder) else 0


def _run_until_done(args, kills, rng, log):
    """Start the job; kill it ``kills`` times after a random while; then let it finish."""
    env = dict(os.environ, PYTHONPATH=ROOT, ICEFLOE_SPARK_MASTER="local[2]")
    killed = 0
    for attempt in range(kills + 6):
        out_path = os.path.join(os.path.dirname(args[2]), f"job-{attempt}.log")
        with open(out_path, "wb") as sink:
            proc = subprocess.Popen([sys.executable, "-m", "tests.streaming.stream_job", *args], cwd=ROOT, env=env,
                                    stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        if killed < kills:
            # wait for the stream to get going (one more batch recorded), then kill it at a
            # random moment of the batches that follow: in a task, a commit, or between them
            start, deadline = _committed(args[2]), time.time() + 300
            while proc.poll() is None and _committed(args[2]) <= start and time.time() < deadline:
                time.sleep(0.05)
            if proc.poll() is None:
                delay = rng.uniform(0, 2.5)
                time.sleep(delay)
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                killed += 1
                log.append(f"attempt {attempt}: killed {delay:.2f}s after batch {start + 1} was recorded, "
                           f"{_committed(args[2])} batches recorded")
                continue
        proc.wait(timeout=600)
        out = open(out_path, "rb").read()
        log.append(f"attempt {attempt}: exit {proc.returncode}")
        if proc.returncode == 0 and b"stream done" in out:
            return
        if proc.returncode != 0:
            raise AssertionError(f"the job failed on its own:\n{out.decode(errors='replace')[-3000:]}")
    raise AssertionError(f"the job never finished: {log}")


def _crash_run(tmp_path, fmt, kills, files, rows, seed):
    rng = random.Random(seed)
    total = _inputs(str(tmp_path / "in"), files, rows)
    wh = str(tmp_path / "wh")
    loc = os.path.join(wh, "db.db" if fmt == "paimon" else "db", "events")
    cp = str(tmp_path / "cp")
    log: list = []
    _run_until_done([str(tmp_path / "in"), loc, cp, fmt], kills, rng, log)
    return total, wh, loc, cp, log


def _check_iceberg(wh, loc, cp, total, log):
    import icefloe

    t = icefloe.Catalog(wh).load_table("db.events")
    epochs = [s.summary.get("spark.sql.streaming.epochId") for s in t.snapshots()]
    assert len(epochs) == len(set(epochs)), f"a batch was committed twice: {epochs} ({log})"
    ids = pyiceberg_table(t.metadata_location).scan().to_arrow().column("id").to_pylist()
    assert len(ids) == total and sorted(ids) == list(range(total)), log


def _check_paimon(wh, loc, cp, total, log):
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    snapdir = os.path.join(loc, "snapshot")
    idents = [json.load(open(os.path.join(snapdir, f)))["commitIdentifier"]
              for f in os.listdir(snapdir) if f.startswith("snapshot-")]
    assert len(idents) == len(set(idents)), f"a batch was committed twice: {sorted(idents)} ({log})"
    t = CatalogFactory.create({"warehouse": wh}).get_table("db.events")
    rb = t.new_read_builder()
    ids = rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("id").to_pylist()
    assert len(ids) == total and sorted(ids) == list(range(total)), log


@pytest.mark.long
@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_killed_stream_restarts_with_nothing_lost_and_nothing_doubled(tmp_path, fmt):
    seed = int(os.environ.get("ICEFLOE_CRASH_SEED", time.time()))
    total, wh, loc, cp, log = _crash_run(tmp_path, fmt, kills=2, files=10, rows=20, seed=seed)
    (_check_paimon if fmt == "paimon" else _check_iceberg)(wh, loc, cp, total, [f"seed {seed}"] + log)
    print("\n".join(log))


@pytest.mark.stress
@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_killed_stream_many_times(tmp_path, fmt):
    seed = int(os.environ.get("ICEFLOE_CRASH_SEED", time.time()))
    total, wh, loc, cp, log = _crash_run(tmp_path, fmt, kills=8, files=40, rows=50, seed=seed)
    (_check_paimon if fmt == "paimon" else _check_iceberg)(wh, loc, cp, total, [f"seed {seed}"] + log)
