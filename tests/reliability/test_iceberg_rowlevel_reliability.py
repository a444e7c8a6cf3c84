"""Reliability of row-level changes (DELETE / UPDATE / MERGE), orphan cleanup after crashes, bad writes.

1. Several OS processes change one Iceberg table at once: Spark processes run deletes, merges
   and updates on their own partitions while another process keeps appending. Every
   successful commit is in the history exactly once, sequence numbers and metadata versions
   are continuous, every snapshot of a row-level change holds exactly what a model of the
   successful operations predicts, and a lost race only re-does metadata work: each
   operation writes its data and delete files once, and its snapshot adds exactly those.
   Two processes updating the same partition from the same snapshot (serializable): one
   wins, the other fails with ``CommitConflictError`` and leaves no file behind.
2. A fault at every mutating file operation of a DELETE (copy-on-write and merge-on-read)
   and a MERGE: the table shows the old or the new state in full, nothing is left behind,
   and a retry succeeds.
3. A process killed at every point of an append (Iceberg and Paimon) leaves only files that
   orphan cleanup reports -- exactly those, none referenced -- and after removing them the
   table reads in full and takes new commits.
4. Writes that do not fit the table -- partition values out of range, types that cannot be
   stored, nulls in required columns -- are rejected before any file is committed.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
import time

import pyarrow as pa
import pytest

from icefloe.core.faults import FaultInjectingFileIO, InjectedFault
from icefloe.errors import CommitConflictError, SchemaMismatchError
from icefloe.catalog import Catalog
from tests.reliability.rel_util import all_files, referenced_files

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "db.t"
SCHEMA = "id bigint not null, name string, cat string"
RETRY = {"commit.retry.num-retries": "1000", "commit.retry.min-wait-ms": "5", "commit.retry.max-wait-ms": "100"}
# the processes' table: position deletes for DELETE, rewritten files for MERGE and UPDATE
MP_PROPS = {**RETRY, "write.delete.mode": "merge-on-read", "write.merge.mode": "copy-on-write",
            "write.update.mode": "copy-on-write"}


def batch(ids, cat, prefix="n"):
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"{prefix}{i}" for i in ids], "cat": [cat] * len(ids)})


def create(wh, props):
    from icefloe import Catalog

    return Catalog(wh).create_table(NAME, SCHEMA, partitioned_by=["cat"], properties=props)


def load(wh, io=None, spark=None):
    t = Catalog(wh, io=io).load_table(NAME)
    t._spark = spark
    return t


def rows_of(t, snapshot_id=None) -> dict:
    data = t.to_arrow(snapshot_id=snapshot_id).to_pylist()
    return {r["id"]: (r["name"], r["cat"]) for r in data}


# --------------------------------------------------------------------------- operations and their model
def run_op(t, op: dict, spark) -> dict:
    """Run one row-level operation described by plain data; returns its result dict."""
    kind, cat = op["kind"], op["cat"]
    if kind == "delete":
        return t.delete(f"cat = '{cat}' and id >= {op['lo']} and id < {op['hi']}")
    if kind == "update":
        return t.update({"name": f"'{op['tag']}'"}, where=f"cat = '{cat}'")
    if kind == "merge":
        src = spark.createDataFrame([(i, f"{op['tag']}{i}", cat) for i in op["ids"]],
                                    "id bigint, name string, cat string")
        return (t.merge(src, "t.id = s.id").when_matched_update({"name": "s.name"})
                .when_not_matched_insert_all().execute())
    raise ValueError(kind)


def apply_model(state: dict, op: dict) -> None:
    kind, cat = op["kind"], op["cat"]
    if kind == "append":
        state.update({i: (f"{op.get('prefix', 'n')}{i}", cat) for i in op["ids"]})
    elif kind == "delete":
        for i in [i for i, (_, c) in state.items() if c == cat and op["lo"] <= i < op["hi"]]:
            del state[i]
    elif kind == "update":
        for i, (_, c) in list(state.items()):
            if c == cat:
                state[i] = (op["tag"], c)
    elif kind == "merge":
        for i in op["ids"]:
            state[i] = (f"{op['tag']}{i}", state[i][1] if i in state else cat)


# --------------------------------------------------------------------------- 1. several processes
class _Probe:
    """Instruments one process's row-level commits.

    Records the data and delete files each operation writes and how many commit attempts
    it makes. Before an operation's first attempt it waits until another process has
    committed (so the attempt is certain to lose the race and retry), or -- for operations
    marked ``contested`` -- until every contender has reached its commit (so all of them
    planned on a snapshot none of the others' changes is in).
    """

    def __init__(self, sync_dir: str, name: str):
        self.sync_dir, self.name = sync_dir, name
        self.op: dict = {}
        self.reset()

    def reset(self):
        self.written: list = []
        self.write_calls = {"data": 0, "deletes": 0}
        self.attempts = 0
        self.lost_races = 0
        self.first_commit_at = None

    def install(self):
        from icefloe.iceberg.hadoop import HadoopTableOperations, VersionConflict
        from icefloe.spark import iceberg_dml_plan, iceberg_mor, iceberg_write

        probe = self
        # row-level changes write data files through the planning module's binding of the writer,
        # position deletes through the merge-on-read writer's
        self._saved = [(iceberg_write, "write_data_files", iceberg_write.write_data_files),
                       (iceberg_dml_plan, "write_data_files", iceberg_dml_plan.write_data_files),
                       (iceberg_mor, "write_position_deletes_in_tasks", iceberg_mor.write_position_deletes_in_tasks),
                       (HadoopTableOperations, "commit", HadoopTableOperations.commit)]
        real_write, _, real_deletes, real_commit = (s[2] for s in self._saved)

        def write_data_files(*a, **kw):
            probe.write_calls["data"] += 1
            files = real_write(*a, **kw)
            probe.written.extend(f.file_path for f in files)
            return files

        def write_position_deletes(*a, **kw):
            probe.write_calls["deletes"] += 1
            files = real_deletes(*a, **kw)
            probe.written.extend(f.file_path for f in files)
            return files

        def commit(ops, base_version, base, new):
            probe.attempts += 1
            if probe.attempts == 1:
                probe.first_commit_at = time.time()
                probe.before_first_attempt(ops, base_version)
            try:
                return real_commit(ops, base_version, base, new)
            except VersionConflict:
                probe.lost_races += 1
                raise

        iceberg_write.write_data_files = write_data_files
        iceberg_dml_plan.write_data_files = write_data_files
        iceberg_mor.write_position_deletes_in_tasks = write_position_deletes
        HadoopTableOperations.commit = commit

    def uninstall(self):
        for owner, attr, value in self._saved:
            setattr(owner, attr, value)

    def before_first_attempt(self, ops, base_version):
        deadline = time.monotonic() + 180
        if self.op.get("contested"):
            d = os.path.join(self.sync_dir, f"contest-{self.op['round']}")
            os.makedirs(d, exist_ok=True)
            open(os.path.join(d, self.name), "w").close()
            while len(os.listdir(d)) < self.op["contested"] and time.monotonic() < deadline:
                time.sleep(0.02)
            return
        deadline = time.monotonic() + 10
        while ops.current_version() <= base_version and time.monotonic() < deadline:
            time.sleep(0.01)


def run_worker(wh: str, name: str, plan_json: str, log_path: str, sync_dir: str, spark=None) -> None:
    """Run a plan of row-level operations, logging each outcome as a JSON line."""
    from icefloe.spark.session import get_spark

    spark = get_spark(spark)
    t = load(wh, spark=spark)
    probe = _Probe(sync_dir, name)
    probe.install()
    try:
        for op in json.loads(plan_json):
            probe.op = op
            probe.reset()
            record = {"worker": name, "op": op, "start": time.time()}
            try:
                result = run_op(t, op, spark)
                record.update(status="ok", snapshot_id=result["snapshot_id"])
            except CommitConflictError as e:
                record.update(status="conflict", error=str(e)[:300])
            record.update(written=probe.written, write_calls=probe.write_calls, attempts=probe.attempts,
                          lost_races=probe.lost_races, at=time.time(),
                          commit_at=probe.first_commit_at)
            with open(log_path, "a") as f:
                f.write(json.dumps(record) + "\n")
    finally:
        probe.uninstall()


WORKER = textwrap.dedent("""
    import sys
    from tests.reliability.test_iceberg_rowlevel_reliability import run_worker
    run_worker(*sys.argv[1:])
""")

APPENDER = textwrap.dedent("""
    import json, os, sys, time
    import pyarrow as pa
    from icefloe.catalog import Catalog
    wh, cat, base, stop, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
    t = Catalog(wh).load_table("db.t")
    n = 0
    while not os.path.exists(stop) and n < 5000:
        ids = list(range(base + 3 * n, base + 3 * n + 3))
        s = t.append(pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids], "cat": [cat] * 3}))
        print(json.dumps({"op": {"kind": "append", "cat": cat, "ids": ids}, "status": "ok",
                          "snapshot_id": s.snapshot_id, "worker": "appender-" + cat}), flush=True)
        n += 1
        time.sleep(pause)
""")


def _env():
    env = dict(os.environ, ICEFLOE_SPARK_MASTER="local[1]", ICEFLOE_SHUFFLE_PARTITIONS="1",
               ICEFLOE_DRIVER_MEMORY="768m", PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return env


def run_processes(tmp_path, wh, spark_plans: dict, appenders: list, in_process: tuple = None, spark=None) -> list:
    """Start the Spark workers and appenders, optionally run one worker here; return every record."""
    sync, stop = str(tmp_path / "sync"), str(tmp_path / "stop")
    os.makedirs(sync, exist_ok=True)
    apps = [subprocess.Popen([sys.executable, "-c", APPENDER, wh, cat, str(base), stop, "0.5"], cwd=REPO,
                             env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for cat, base in appenders]
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, wh, name, json.dumps(plan),
                                 str(tmp_path / f"log-{name}.jsonl"), sync], cwd=REPO, env=_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for name, plan in spark_plans.items()]
    try:
        if in_process is not None:
            name, plan = in_process
            run_worker(wh, name, json.dumps(plan), str(tmp_path / f"log-{name}.jsonl"), sync, spark=spark)
        for p in workers:
            _, err = p.communicate(timeout=900)
            assert p.returncode == 0, err[-3000:]
    finally:
        open(stop, "w").close()
        for p in workers:
            if p.poll() is None:
                p.kill()
    records = []
    for p in apps:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-3000:]
        records.extend(json.loads(line) for line in out.splitlines())
    names = list(spark_plans) + ([in_process[0]] if in_process else [])
    for name in names:
        with open(tmp_path / f"log-{name}.jsonl") as f:
            records.extend(json.loads(line) for line in f)
    return records


def _added_by(t, snap) -> set:
    from icefloe.iceberg.manifest_reader import files_changed_by

    added, _ = files_changed_by(t.io, t.metadata, snap)
    return {f.file_path for f in added}


def check_history(wh, seeds: list, records: list) -> dict:
    """Everything the processes report against the table's history; returns figures."""
    t = load(wh)
    snaps = t.snapshots()
    ok = [r for r in records if r["status"] == "ok"]
    assert all(r["status"] in ("ok", "conflict") for r in records)
    # every successful commit exactly once; no snapshot nobody reported
    ids = [s.snapshot_id for s in snaps]
    assert len(ids) == len(set(ids)) == len(seeds) + len(ok)
    assert sorted(r["snapshot_id"] for r in ok) == sorted(ids[len(seeds):])
    # sequence numbers strictly increase, one metadata version per commit
    assert [s.sequence_number for s in snaps] == list(range(1, len(snaps) + 1))
    versions = sorted(int(f[1:].split(".")[0]) for f in os.listdir(f"{t.location}/metadata")
                      if f.startswith("v") and f.endswith(".metadata.json"))
    assert versions == list(range(1, len(snaps) + 2))
    # replay the successful operations in commit order against a model
    by_id = {r["snapshot_id"]: r for r in ok}
    state: dict = {}
    for op in seeds:
        apply_model(state, op)
    for s in snaps[len(seeds):]:
        r = by_id[s.snapshot_id]
        apply_model(state, r["op"])
        if r["op"]["kind"] != "append":
            assert rows_of(t, s.snapshot_id) == state, (r["worker"], r["op"])
            # a lost race re-does metadata only: the files were written once, the snapshot adds exactly them
            assert max(r["write_calls"].values()) == 1 and len(r["written"]) == len(set(r["written"]))
            assert _added_by(t, s) == set(r["written"]), r
    assert rows_of(t) == state
    # losers leave nothing: their files are gone and nothing refers to them
    refs = referenced_files(t)
    assert all(os.path.exists(p) for p in refs)
    losers = [r for r in records if r["status"] == "conflict"]
    for r in losers:
        assert r["written"] and not any(os.path.exists(p) or p in refs for p in r["written"]), r
    # whatever is unreferenced is an old metadata version beyond the metadata log, nothing else
    orphans = t.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000, dry_run=True)
    assert all(os.path.basename(p).endswith(".metadata.json") for p in orphans), orphans[:5]
    dml = [r for r in records if r["op"]["kind"] != "append"]
    return {"snapshots": len(snaps), "dml_ok": sum(r["status"] == "ok" for r in dml), "conflicts": len(losers),
            "appends": sum(r["op"]["kind"] == "append" for r in ok), "lost_races": sum(r["lost_races"] for r in dml)}


def _seed(wh, cats: list) -> list:
    t = create(wh, MP_PROPS)
    seeds = []
    for k, cat in enumerate(cats):
        op = {"kind": "append", "cat": cat, "ids": list(range(100 * k, 100 * k + 10))}
        t.append(batch(op["ids"], cat))
        seeds.append(op)
    return seeds


def _own_plan(k: int, cat: str, tag: str) -> list:
    base = 100 * k
    return [{"kind": "delete", "cat": cat, "lo": base, "hi": base + 3},
            {"kind": "merge", "cat": cat, "tag": tag, "ids": [base + 5, base + 6, 10_000 + base, 10_001 + base]}]


@pytest.mark.long
def test_row_level_changes_from_several_processes(tmp_path, spark):
    """This process (a delete and a merge) and one Spark subprocess (a delete) change their own
    partitions while a third process appends; then both update one shared partition at once
    from the same snapshot: one must lose."""
    wh = str(tmp_path / "wh")
    seeds = _seed(wh, ["a", "b", "d"])
    contest = {"kind": "update", "cat": "d", "contested": 2, "round": 0}
    plans = {"B": _own_plan(1, "b", "B")[:1] + [{**contest, "tag": "B"}]}   # its Spark starts meanwhile
    here = ("A", _own_plan(0, "a", "A") + [{**contest, "tag": "A"}])
    t0 = time.time()
    records = run_processes(tmp_path, wh, plans, appenders=[("c", 50_000)], in_process=here, spark=spark)
    t1 = time.time()
    figures = check_history(wh, seeds, records)
    print("timeline:", [(r["worker"], r["op"]["kind"], round(r["start"] - t0, 1), round(r["commit_at"] - t0, 1),
                         round(r["at"] - t0, 1)) for r in records if "at" in r],
          "processes", round(t1 - t0, 1), "checks", round(time.time() - t1, 1))
    contested = [r for r in records if r["op"].get("contested")]
    assert sorted(r["status"] for r in contested) == ["conflict", "ok"]
    # every uncontested change lost its first race (another process committed first) and retried
    own = [r for r in records if r["op"]["kind"] != "append" and not r["op"].get("contested")]
    assert len(own) == 3 and all(r["status"] == "ok" and r["attempts"] >= 2 for r in own), own
    assert figures["appends"] >= 3
    print("row-level processes:", figures)


@pytest.mark.stress
def test_row_level_changes_from_several_processes_stress(tmp_path):
    """Four Spark processes (five changes each on their own partition, then three contested
    updates of a shared one) and two appending processes."""
    wh = str(tmp_path / "wh")
    cats = ["a", "b", "e", "f", "d"]
    seeds = _seed(wh, cats)
    plans = {}
    for k, cat in enumerate(cats[:4]):
        tag = cat.upper()
        own = _own_plan(k, cat, tag) + [
            {"kind": "merge", "cat": cat, "tag": tag + "x", "ids": [100 * k + 7, 20_000 + 100 * k]},
            {"kind": "delete", "cat": cat, "lo": 100 * k + 8, "hi": 100 * k + 10},
            {"kind": "update", "cat": cat, "tag": tag + "u"}]
        contests = [{"kind": "update", "cat": "d", "contested": 4, "round": r, "tag": f"{tag}{r}"} for r in range(3)]
        plans[tag] = own[:2] + [contests[0]] + own[2:4] + [contests[1]] + own[4:] + [contests[2]]
    records = run_processes(tmp_path, wh, plans, appenders=[("c", 50_000), ("g", 70_000)])
    figures = check_history(wh, seeds, records)
    for r in range(3):
        contested = [x for x in records if x["op"].get("contested") and x["op"]["round"] == r]
        assert sorted(x["status"] for x in contested) == ["conflict"] * 3 + ["ok"], contested
    print("row-level processes (stress):", figures)


# --------------------------------------------------------------------------- 2. faults in row-level commits
FAULT_CASES = [("delete", "copy-on-write"), ("delete", "merge-on-read"), ("merge", "merge-on-read")]


def _seeded(wh: str, props: dict):
    """A table with ``props`` holding two appends (ids 0-9 in "a", 10-19 in "b"), and its model."""
    t = create(wh, props)
    state: dict = {}
    for seed in ({"kind": "append", "cat": "a", "ids": list(range(10))},
                 {"kind": "append", "cat": "b", "ids": list(range(10, 20))}):
        t.append(batch(seed["ids"], seed["cat"]))
        apply_model(state, seed)
    return t, state


def _fault_op(op: str) -> dict:
    if op == "delete":
        return {"kind": "delete", "cat": "a", "lo": 3, "hi": 5}
    return {"kind": "merge", "cat": "a", "tag": "m", "ids": [3, 4, 500, 501]}


@pytest.mark.parametrize("op,mode", FAULT_CASES)
def test_fault_at_every_point_of_a_row_level_commit(tmp_path, spark, op, mode):
    """Fail the k-th write/rename/delete of one change, for k = 1, 2, ... until it gets
    through. Each failed attempt leaves the old state in full and the table directory exactly
    as it was (not one file more, the version hint unchanged), so every attempt is a retry of
    the one before from the same state -- and the last one, whose fault only the version hint
    can take (the commit is durable by then), commits the new state."""
    wh = str(tmp_path / "wh")
    t, state = _seeded(wh, {"write.delete.mode": mode, "write.merge.mode": mode})
    change = _fault_op(op)
    new = dict(state)
    apply_model(new, change)
    hint = f"{t.location}/metadata/version-hint.text"

    def hint_text():
        with open(hint) as f:
            return f.read()

    before, hint_before = all_files(wh), hint_text()
    points, k = [], 0
    while True:
        k += 1
        io = FaultInjectingFileIO(fail_at=k)
        try:
            run_op(load(wh, io=io, spark=spark), change, spark)
            failed = False
        except InjectedFault:
            failed = True
        fired = io.count >= k
        if fired:
            points.append(io.log[k - 1][0] + " " + os.path.basename(io.log[k - 1][1]))
        if not failed:
            break
        assert rows_of(load(wh)) == state, (k, points[-1])
        assert all_files(wh) == before, (k, points[-1], sorted(all_files(wh) - before))
        assert hint_text() == hint_before
        assert k < 30
    # got through: only a fault at the version hint (or none) lets a commit succeed
    assert not fired or points[-1].endswith("version-hint.text"), points
    assert rows_of(load(wh)) == new
    assert all(os.path.exists(p) for p in referenced_files(load(wh)))
    # merge-on-read DELETE writes only delete files, and Spark tasks write those: the driver's
    # points are the manifest, manifest list, metadata and hint (task faults: the test below)
    least = 4 if (op, mode) == ("delete", "merge-on-read") else 5
    assert len(points) >= least and len({p.split()[1] for p in points}) == len(points), points
    # the failed attempts left nothing behind for orphan cleanup either
    assert load(wh).remove_orphan_files(older_than=int(time.time() * 1000) + 60_000, dry_run=True) == []
    print(f"{op} {mode}: {len(points)} fault points: {points}")


@pytest.mark.parametrize("op", ["delete", "update", "merge"])
def test_a_task_failing_to_write_a_delete_file_leaves_the_table_as_it_was(tmp_path, spark, op):
    """Merge-on-read delete files are written by Spark tasks: one failing there fails the
    statement with the table and its directory exactly as they were."""
    wh = str(tmp_path / "wh")
    t, state = _seeded(wh, {"write.delete.mode": "merge-on-read", "write.merge.mode": "merge-on-read",
                    "write.update.mode": "merge-on-read"})
    before = all_files(wh)
    io = FaultInjectingFileIO(task_fault="pos-deletes")
    with pytest.raises(Exception, match="injected fault in a task"):
        change = {"kind": "update", "cat": "a", "tag": "u"} if op == "update" else _fault_op(op)
        run_op(load(wh, io=io, spark=spark), change, spark)
    assert rows_of(load(wh)) == state
    assert all_files(wh) == before, sorted(all_files(wh) - before)


DML_KILL = textwrap.dedent("""
    import json, sys
    from icefloe.core.faults import FaultInjectingFileIO
    from icefloe.spark.session import get_spark
    from tests.reliability.test_iceberg_rowlevel_reliability import load, run_op
    wh, k, op = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    spark = get_spark()
    io = FaultInjectingFileIO(fail_at=k, mode="kill")
    run_op(load(wh, io=io, spark=spark), op, spark)
    print(io.count, flush=True)
""")


@pytest.mark.stress
@pytest.mark.parametrize("op,mode", [("delete", "merge-on-read"), ("merge", "copy-on-write")])
def test_kill_at_every_point_of_a_row_level_commit_stress(tmp_path, spark, op, mode):
    """The Spark driver process dies (no cleanup at all) at the k-th write/rename/delete of a
    change: the table shows the old or the new state, what the process left behind is
    exactly what orphan cleanup reports, and after cleanup a retry commits the change."""
    import signal

    change = _fault_op(op)
    points = []
    for k in range(1, 30):
        wh = str(tmp_path / f"wh-{k}")
        t, state = _seeded(wh, {"write.delete.mode": mode, "write.merge.mode": mode})
        new = dict(state)
        apply_model(new, change)
        before = all_files(wh)
        proc = subprocess.Popen([sys.executable, "-c", DML_KILL, wh, str(k), json.dumps(change)], cwd=REPO,
                                env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        out, err = proc.communicate(timeout=600)
        try:
            os.killpg(proc.pid, signal.SIGKILL)   # the JVM this driver started, if it outlived it
        except ProcessLookupError:
            pass
        if proc.returncode == 0:
            if int(out.split()[-1]) < k:
                break
            continue   # the fault hit the version hint: a durable commit, and nothing to clean
        assert proc.returncode == 137, err[-3000:]
        t = load(wh, spark=spark)
        current = rows_of(t)
        assert current in (state, new), k
        refs = _iceberg_refs(t)
        assert all(os.path.exists(p) for p in refs)
        leftovers = {p for p in all_files(wh) - before if p not in refs}
        reported = set(t.remove_orphan_files(older_than=_future_ms()))
        assert reported == leftovers, (k, sorted(reported ^ leftovers))
        if current == state:
            run_op(load(wh, spark=spark), change, spark)
        assert rows_of(load(wh)) == new
        points.append((k, len(leftovers)))
    assert len(points) >= 4, points
    print(f"kills during {op} {mode} (k, orphans):", points)


# --------------------------------------------------------------------------- 3. orphan cleanup after crashes
class CrashingIO(FaultInjectingFileIO):
    """A process that dies at the k-th mutating operation: that one and every later one
    (the failed attempt's own cleanup included) never happen, so what was written stays."""

    def _tick(self, op, path):
        if self.fail_at is not None and self.count >= self.fail_at:
            self.count += 1
            raise InjectedFault(f"the process is gone: {op} {path}")
        super()._tick(op, path)


def _future_ms():
    return int(time.time() * 1000) + 60_000


def _crash_runs(wh_for, make, load_with, read, referenced, max_points=20):
    """Crash an append at k = 1, 2, ... (each in a fresh table) until one runs through.
    Checks what orphan cleanup reports against what the crash left; returns figures."""
    out = []
    for k in range(1, max_points + 1):
        wh = wh_for(k)
        old = read(make(wh))
        before = all_files(wh)
        io = CrashingIO(fail_at=k)
        try:
            load_with(wh, io).append(batch(range(100, 105), "a", "x"))
            if io.count < k:
                return out
            # only a hint can fail without failing the commit: it is durable by then
            assert os.path.basename(io.log[k - 1][1]) in ("version-hint.text", "LATEST", "EARLIEST"), io.log[k - 1]
        except InjectedFault:
            pass
        t = load_with(wh, None)
        state = read(t)
        assert state in (old, {**old, **{i: (f"x{i}", "a") for i in range(100, 105)}}), k
        refs = referenced(t)
        assert all(os.path.exists(p) for p in refs)
        leftovers = {p for p in all_files(wh) - before if p not in refs}
        # the default cutoff (3 days) protects files a commit in progress may still need
        assert t.remove_orphan_files(dry_run=True) == []
        reported = set(t.remove_orphan_files(older_than=_future_ms(), dry_run=True))
        assert reported == leftovers, (k, io.log[k - 1], sorted(reported ^ leftovers))
        assert not reported & refs
        assert set(t.remove_orphan_files(older_than=_future_ms())) == leftovers
        assert not any(os.path.exists(p) for p in leftovers)
        t = load_with(wh, None)
        assert read(t) == state
        t.append(batch(range(200, 202), "b", "y"))  # the table takes new commits
        assert read(load_with(wh, None)) == {**state, 200: ("y200", "b"), 201: ("y201", "b")}
        out.append((k, io.log[k - 1][0] + " " + os.path.basename(io.log[k - 1][1]), len(leftovers)))
    raise AssertionError("the append never ran through")


def _iceberg_refs(t) -> set:
    from icefloe.iceberg.maintenance import referenced_files as metadata_refs

    version, meta = t.ops.load()
    return metadata_refs(t.ops, version, meta)


def test_orphans_after_crashed_iceberg_appends(tmp_path):
    def make(wh):
        t = create(wh, {})
        t.append(batch(range(5), "a"))
        return t

    runs = _crash_runs(lambda k: str(tmp_path / f"ice-{k}"), make, lambda wh, io: load(wh, io=io), rows_of,
                       _iceberg_refs)
    # crashed at the data file, the manifest, the manifest list, the metadata file: what was written
    # before is an orphan (the data file, then the manifest, then the list); at the hint nothing is
    assert [n for _, _, n in runs] == [0, 1, 2, 3, 0], runs
    print("iceberg crashes (k, point, orphans):", runs)


def test_commits_that_merge_manifests_leave_no_orphans(tmp_path):
    """A commit that folds its new manifest into a merged one deletes the new one after
    committing (it is in no manifest list): normal commits leave nothing for orphan cleanup."""
    t = create(str(tmp_path / "wh"), {"commit.manifest.min-count-to-merge": "2"})
    for k in range(6):
        t.append(batch(range(10 * k, 10 * k + 3), "a"))
    t.delete_by_key(pa.table({"id": pa.array([0, 10], pa.int64())}))
    from icefloe.iceberg.manifest_reader import snapshot_manifests

    t = t.refresh()
    assert len(snapshot_manifests(t.io, t.current_snapshot())) <= 3   # seven commits, merged
    assert t.remove_orphan_files(older_than=_future_ms(), dry_run=True) == []
    assert sorted(rows_of(load(str(tmp_path / "wh")))) == [i for k in range(6) for i in range(10 * k, 10 * k + 3)
                                                          if i not in (0, 10)]


def _paimon_make(wh):
    from icefloe.catalog import Catalog

    t = Catalog(wh, "paimon").create_table(NAME, SCHEMA, partitioned_by=["cat"])
    t.append(batch(range(5), "a"))
    return t


def _paimon_load(wh, io):
    from icefloe.catalog import Catalog

    return Catalog(wh, "paimon", io=io).load_table(NAME)


def _paimon_refs(t) -> set:
    from icefloe.paimon.orphans import referenced_files as paimon_refs

    loc = t.location
    meta = {os.path.normpath(os.path.join(loc, sub, f)) for sub in ("schema", "snapshot")
            for f in os.listdir(os.path.join(loc, sub)) if not f.startswith(".")}
    return paimon_refs(t.refresh().store) | meta


def test_orphans_after_crashed_paimon_appends(tmp_path):
    runs = _crash_runs(lambda k: str(tmp_path / f"pai-{k}"), _paimon_make, _paimon_load, rows_of, _paimon_refs)
    # data file, manifest list, manifest, manifest list, snapshot: each crash leaves what came before
    assert [n for _, _, n in runs] == [0, 1, 2, 3, 4, 0], runs
    print("paimon crashes (k, point, orphans):", runs)


def test_paimon_orphan_cleanup_keeps_what_tags_and_snapshots_need(tmp_path):
    """A tag keeps its snapshot's files after the snapshot itself is gone; temporary files,
    stray files and Spark staging leftovers are orphans once old enough."""
    t = _paimon_make(str(tmp_path / "wh"))
    loc = t.location
    first = t.snapshots()[0]
    os.makedirs(f"{loc}/tag", exist_ok=True)
    with open(f"{loc}/snapshot/snapshot-{first.id}") as src, open(f"{loc}/tag/tag-keep", "w") as dst:
        dst.write(src.read())
    t.overwrite(batch(range(10, 12), "b"))
    old_files = {os.path.normpath(f.file_path) for f in t.plan_files(snapshot_id=first.id)}
    os.remove(f"{loc}/snapshot/snapshot-{first.id}")   # as an expiry would (the tag still needs its files)
    with open(f"{loc}/snapshot/EARLIEST", "w") as f:
        f.write("2")
    junk = [f"{loc}/cat=a/bucket-0/data-junk-0.parquet", f"{loc}/manifest/manifest-junk-0",
            f"{loc}/snapshot/.snapshot-3.1234.tmp", f"{loc}/.staging-x/part-0.parquet"]
    # files of features icefloe does not manage, and unknown places, are never judged
    foreign = [f"{loc}/consumer/consumer-reader", f"{loc}/index/index-0", f"{loc}/statistics/stats-0",
               f"{loc}/README"]
    for p in junk + foreign:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "wb").close()
    assert t.remove_orphan_files(dry_run=True) == []       # all of it is younger than 3 days
    removed = t.remove_orphan_files(older_than=_future_ms())
    assert removed == sorted(os.path.normpath(p) for p in junk)
    assert all(os.path.exists(p) for p in old_files)       # the tag's data files stay
    assert all(os.path.exists(p) for p in foreign)
    assert rows_of(t.refresh()) == {10: ("n10", "b"), 11: ("n11", "b")}
    assert os.path.exists(f"{loc}/tag/tag-keep") and os.path.exists(f"{loc}/schema/schema-0")
    # a table with branches: their snapshots are followed too, and nothing under branch/ is judged
    os.makedirs(f"{loc}/branch/branch-x/snapshot")
    open(f"{loc}/manifest/manifest-junk-1", "wb").close()
    open(f"{loc}/branch/branch-x/snapshot/.snapshot-1.5678.tmp", "wb").close()
    assert t.remove_orphan_files(older_than=_future_ms()) == [os.path.normpath(f"{loc}/manifest/manifest-junk-1")]
    assert os.path.exists(f"{loc}/branch/branch-x/snapshot/.snapshot-1.5678.tmp")
    assert rows_of(t.refresh()) == {10: ("n10", "b"), 11: ("n11", "b")}


# --------------------------------------------------------------------------- 4. bad writes
def _unchanged(t, check):
    before, snaps = all_files(t.location), [s.snapshot_id for s in t.snapshots()]
    check()
    t = t.refresh()
    assert all_files(t.location) == before
    assert [s.snapshot_id for s in t.snapshots()] == snaps


FAR_DAYS = 3_000_000   # year 10183
FAR_MICROS = 2 ** 62   # year 148108; its hour still fits an int, its day path does not exist


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_partition_values_out_of_range_rejected_arrow(tmp_path, fmt):
    from icefloe import Catalog

    cat = Catalog(str(tmp_path / "wh"), format=fmt)
    t = cat.create_table("db.d", "id bigint, d date", partitioned_by=["d"])
    t.append(pa.table({"id": pa.array([1], pa.int64()), "d": pa.array([dt.date(2024, 1, 1)])}))
    for days in (FAR_DAYS, -800_000):
        bad = pa.table({"id": pa.array([2, 3], pa.int64()), "d": pa.array([19_000, days], pa.date32())})

        def write(bad=bad):
            with pytest.raises(SchemaMismatchError, match="out of range.*'d'"):
                t.append(bad)
        _unchanged(t, write)
    # the extremes of the range itself are fine
    t.append(pa.table({"id": pa.array([4, 5], pa.int64()), "d": [dt.date(1, 1, 1), dt.date(9999, 12, 31)]}))
    assert sorted(t.refresh().to_arrow()["id"].to_pylist()) == [1, 4, 5]
    # an int partition column given bigint values: not a safe widening
    ti = cat.create_table("db.i", "id bigint, p int", partitioned_by=["p"])

    def narrow():
        with pytest.raises(SchemaMismatchError, match="'p'"):
            ti.append(pa.table({"id": pa.array([1], pa.int64()), "p": pa.array([2 ** 40], pa.int64())}))
    _unchanged(ti, narrow)
    if fmt == "iceberg":
        th = cat.create_table("db.h", "id bigint, ts timestamp", partitioned_by=["hour(ts)"])
        for micros in (FAR_MICROS, 2 ** 63 - 1):   # the latter's hour would wrap to a negative int
            def far(micros=micros):
                with pytest.raises(SchemaMismatchError, match="out of range.*'ts'"):
                    th.append(pa.table({"id": pa.array([1], pa.int64()),
                                        "ts": pa.array([micros], pa.timestamp("us", tz="UTC"))}))
            _unchanged(th, far)
        assert th.snapshots() == []


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_partition_values_out_of_range_rejected_spark(tmp_path, spark, fmt):
    from icefloe import Catalog

    cat = Catalog(str(tmp_path / "wh"), format=fmt, spark=spark)
    t = cat.create_table("db.d", "id bigint, d date", partitioned_by=["d"])
    t.append(spark.sql("select 1L as id, date'2024-01-01' as d"))

    def write():
        with pytest.raises(SchemaMismatchError, match="out of range.*'d'"):
            t.append(spark.sql(f"select id, date_from_unix_date(if(id = 2, {FAR_DAYS}, 19000)) as d from range(4)"))
    _unchanged(t, write)
    assert t.refresh().to_arrow()["id"].to_pylist() == [1]


def test_paimon_partition_values_with_path_characters_stay_one_directory(tmp_path):
    """'/' and '=' in a partition value are escaped in the path (Hive style, as Paimon does),
    so the value neither nests directories nor escapes the table; it reads back as written."""
    from icefloe.catalog import Catalog

    t = Catalog(str(tmp_path / "wh"), "paimon").create_table(NAME, SCHEMA, partitioned_by=["cat"])
    values = ["a/../../b=c", "..", "x=y"]
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["p", "q", "r"], "cat": values}))
    for f in t.plan_files():
        rel = os.path.relpath(f.file_path, t.location).split(os.sep)
        assert len(rel) == 3 and rel[0].startswith("cat=") and rel[1] == "bucket-0", rel
    assert sorted(t.to_arrow()["cat"].to_pylist()) == sorted(values)
    assert all(p.startswith(t.location) for p in all_files(str(tmp_path / "wh")))


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_row_level_values_that_do_not_fit_are_rejected(tmp_path, spark, mode):
    """UPDATE and MERGE values are held to the column types, whether or not ANSI mode is on:
    no silent wrap-around of an int partition value, no text turned into numbers, no nulls
    in required columns, no dates outside the partition range. Merge-on-read writes the rows in
    the tasks that write the delete files: the same typed errors, nothing left behind."""
    from icefloe import Catalog
    from icefloe.errors import RequiredFieldNullError

    t = Catalog(str(tmp_path / "wh"), spark=spark).create_table(
        NAME, "id bigint not null, name string, p int, d date", partitioned_by=["p", "year(d)"],
        properties={f"write.{op}.mode": mode for op in ("delete", "update", "merge")})
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"], "p": pa.array([1, 2], pa.int32()),
                       "d": [dt.date(2024, 1, 1)] * 2}))
    expected = rows_of_full(t)
    day = dt.date(2024, 1, 1)
    src_big = spark.createDataFrame([(1, "x", 2 ** 40, day), (9, "y", 2 ** 40, day)], "id bigint, name string, p bigint, d date")
    src_text = spark.createDataFrame([(9, "y", "13", day)], "id bigint, name string, p string, d date")
    src_missing = spark.createDataFrame([("w", 3)], "name string, p int")
    overflow = [
        (lambda: t.update({"p": "p + 3000000000"}, where="id = 1"), SchemaMismatchError, "'p'"),
        (lambda: t.merge(src_big, "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute(),
         SchemaMismatchError, "'p'"),
    ]
    others = [
        (lambda: t.update({"d": f"date_from_unix_date({FAR_DAYS})"}, where="id = 1"), SchemaMismatchError,
         "out of range.*'d'"),
        (lambda: t.update({"id": "null"}, where="id = 2"), RequiredFieldNullError, "'id'"),
        (lambda: t.merge(src_text, "t.id = s.id").when_not_matched_insert_all().execute(), SchemaMismatchError,
         "'p' has type string"),
        (lambda: t.merge(src_missing, "t.name = s.name").when_not_matched_insert_all().execute(),
         SchemaMismatchError, "'id'"),
    ]

    def rejected(cases):
        for run, error, match in cases:
            def attempt(run=run, error=error, match=match):
                with pytest.raises(error, match=match):
                    run()
            _unchanged(t, attempt)

    rejected(overflow + others)
    previous = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "false")   # casts would wrap around silently here
    try:
        rejected(overflow)
    finally:
        spark.conf.set("spark.sql.ansi.enabled", previous)
    assert rows_of_full(t.refresh()) == expected
    # values that do fit still go through: a bigint source column whose values fit the int column
    fits = spark.createDataFrame([(2, "B", 7, dt.date(2025, 6, 1))], "id bigint, name string, p bigint, d date")
    t.merge(fits, "t.id = s.id").when_matched_update_all().execute()
    assert rows_of_full(t.refresh())[2] == ("B", 7, dt.date(2025, 6, 1))


def rows_of_full(t) -> dict:
    return {r["id"]: (r["name"], r["p"], r["d"]) for r in t.to_arrow().to_pylist()}
