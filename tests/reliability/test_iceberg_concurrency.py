"""Several OS processes commit to one Iceberg table at once: nothing lost, nothing doubled."""
import os
import subprocess
import sys
import textwrap

import pytest

from icefloe.catalog import Catalog
from tests.reliability.rel_util import make_table, read_ids

WRITER = textwrap.dedent("""
    import sys
    import pyarrow as pa
    from icefloe.core.faults import FaultInjectingFileIO
    from icefloe.catalog import Catalog
    wh, w, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    io = FaultInjectingFileIO()          # injects nothing: records every write
    t = Catalog(wh, io=io).load_table("db.t")
    for j in range(n):
        base = w * 10000 + j * 10
        t.append(pa.table({"id": pa.array(range(base, base + 3), pa.int64()), "name": [f"w{w}"] * 3}))
        print("ok", flush=True)
    data = sum(1 for op, p in io.log if op == "write" and p.endswith(".parquet"))
    attempts = sum(1 for op, p in io.log if op == "write" and p.endswith(".metadata.json"))
    print("writes", data, attempts, flush=True)
""")


def run_writers(wh, processes, commits):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, wh, str(w), str(commits)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(processes)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
    attempts = 0
    for out, _ in outs:
        _, data, tries = next(line for line in out.splitlines() if line.startswith("writes")).split()
        assert int(data) == commits      # a lost race re-does metadata only: one data file per commit
        attempts += int(tries)
    print(f"{processes} processes x {commits} commits: {attempts - processes * commits} lost races retried")
    return sum(o.count("ok") for o, _ in outs)


def check(wh, processes, commits):
    expected = sorted(w * 10000 + j * 10 + i for w in range(processes) for j in range(commits) for i in range(3))
    assert read_ids(wh) == expected
    t = Catalog(wh).load_table("db.t")
    snaps = t.snapshots()
    assert len(snaps) == processes * commits
    assert [s.sequence_number for s in snaps] == list(range(1, processes * commits + 1))
    assert len({s.snapshot_id for s in snaps}) == len(snaps)
    versions = sorted(int(f[1:].split(".")[0]) for f in os.listdir(f"{t.location}/metadata")
                      if f.startswith("v") and f.endswith(".metadata.json"))
    assert versions == list(range(1, processes * commits + 2))


PROPS = {"commit.retry.num-retries": "1000", "commit.retry.min-wait-ms": "5", "commit.retry.max-wait-ms": "100"}


def test_concurrent_processes_fast(tmp_path):
    wh = str(tmp_path / "wh")
    make_table(wh, PROPS)
    assert run_writers(wh, 3, 5) == 15
    check(wh, 3, 5)


@pytest.mark.stress
def test_concurrent_processes_stress(tmp_path):
    wh = str(tmp_path / "wh")
    make_table(wh, PROPS)
    assert run_writers(wh, 8, 40) == 320
    check(wh, 8, 40)


MIXED_WRITER = textwrap.dedent("""
    import sys
    import pyarrow as pa
    from icefloe.catalog import Catalog
    wh, w, n, op = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    t = Catalog(wh).load_table("db.t")
    for j in range(n):
        base = w * 10000 + j * 10
        getattr(t, op)(pa.table({"id": pa.array(range(base, base + 3), pa.int64()), "name": [f"w{w}"] * 3}))
        print("ok", base, flush=True)
""")


def test_concurrent_appends_and_overwrites(tmp_path):
    """Every snapshot is exactly one writer's whole batch: appended to, or replacing, its parent."""
    wh = str(tmp_path / "wh")
    make_table(wh, PROPS)
    plan = [(0, 5, "append"), (1, 5, "append"), (2, 3, "overwrite")]
    procs = [subprocess.Popen([sys.executable, "-c", MIXED_WRITER, wh, str(w), str(n), op],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w, n, op in plan]
    committed = {}
    for (w, n, op), p in zip(plan, procs):
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-2000:]
        for line in out.splitlines():
            committed[int(line.split()[1])] = op
    assert len(committed) == 13
    t = Catalog(wh).load_table("db.t")
    snaps = t.snapshots()
    assert [s.sequence_number for s in snaps] == list(range(1, 14))
    seen = set()
    previous: list = []
    for s in snaps:
        state = sorted(t.to_arrow(snapshot_id=s.snapshot_id)["id"].to_pylist())
        if s.operation == "append":
            batch = sorted(set(state) - set(previous))
            assert sorted(previous + batch) == state
        else:
            batch = state
        assert len(batch) == 3 and batch == list(range(batch[0], batch[0] + 3))
        assert committed[batch[0]] == s.operation and batch[0] not in seen
        seen.add(batch[0])
        previous = state
    assert seen == set(committed)
