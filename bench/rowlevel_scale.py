"""Row-level changes at scale: section (h)'s statements (``bench/jvm.py``) at up to 100M rows, icefloe
against Apache Iceberg's Java runtime, with each side's peak memory.

``python -m bench.rowlevel_scale --rows 100000000`` (or ``make bench-scale ROWLEVEL_ROWS=...``; not
part of ``make bench``). For each size and each of copy-on-write, merge-on-read (format v2) and
merge-on-read on a format v3 table (deletion vectors), on a fresh table of N rows (its append timed
too): MERGE (1% matched updates + 0.1% inserts), DELETE of 1%, UPDATE of 1%, then the full-scan
aggregate; both engines must give the same answers. Each figure is one run (best of 1: at 100M
rows a run takes most of an hour on 2 cores); each table is dropped after its mode's work.

Each engine runs in a process of its own, one after the other (for each mode, the Java runtime's
worker, then an icefloe child process), both ``local[2]`` with the same driver memory (``--memory``: in local mode
the driver's JVM is the executor too, so that is all the heap Spark has). While one runs, the bench
samples every second each process of its tree: the driver (Python), its JVM and the Python workers
Spark starts, and reports each role's peak resident set (the kernel's ``VmHWM``) and the peak of the
tree's summed RSS, so that a bounded memory is shown rather than claimed; and the machine's load
average over the run. The machine may be shared: compare the ratios of one run, not figures across
runs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

MODES = ("copy-on-write", "merge-on-read", "merge-on-read-v3")
WORK = ("append", "merge", "delete", "update", "scan_after")
ONE_READ = (1, 0.0, 1)          # (READ_MIN, READ_SECONDS, READ_RUNS): each read once


def _status_kb(pid: int, field: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


class TreeSampler:
    """Samples a process tree every ``every`` seconds, in a thread: each process's peak RSS (its
    ``VmHWM``) by role (``driver``: the root, ``jvm``: Java processes, ``workers``: the others), the
    peak of the tree's summed RSS, and the 1-minute load average."""

    def __init__(self, root: int, every: float = 1.0):
        self.root, self.every = root, every
        self.peaks: dict[int, tuple[str, int]] = {}
        self.tree_peak_kb = 0
        self.loads: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "TreeSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.every)

    def sample(self) -> None:
        pids, todo = [], [self.root]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            todo.extend(_children(pid))
        total = 0
        for pid in pids:
            role = "driver" if pid == self.root else ("jvm" if _comm(pid) == "java" else "workers")
            hwm = _status_kb(pid, "VmHWM")
            if hwm:
                self.peaks[pid] = (role, max(hwm, self.peaks.get(pid, (role, 0))[1]))
            total += _status_kb(pid, "VmRSS")
        self.tree_peak_kb = max(self.tree_peak_kb, total)
        with open("/proc/loadavg") as f:
            self.loads.append(float(f.read().split()[0]))

    def result(self) -> dict:
        by_role: dict[str, int] = {}
        for role, kb in self.peaks.values():
            by_role[role] = max(by_role.get(role, 0), kb)
        return {"peak_rss_mb": {r: round(kb / 1024) for r, kb in sorted(by_role.items())},
                "peak_tree_rss_mb": round(self.tree_peak_kb / 1024),
                "load_1min": {"mean": round(sum(self.loads) / max(1, len(self.loads)), 2),
                              "max": max(self.loads, default=0.0)}}


def run_java(rows: int, root: str, memory: str, modes) -> dict:
    """The Java runtime's figures (in its worker process) and its tree's memory."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tools.jvm_runtime import JvmRuntime

    from bench.jvm import JVM_DATA, JVM_MODES, jvm_params
    from bench.timing import JVM_PRELUDE

    start = time.perf_counter()
    jvm = JvmRuntime(os.path.join(root, "jvm-wh"),
                     conf={"spark.driver.memory": memory, "spark.driver.extraJavaOptions": f"-Xms{memory}"})
    with jvm, TreeSampler(jvm.pid) as sampler:
        # a statement that fails (a JVM out of memory) ends the mode's work, its figures so far kept
        t = jvm.run(JVM_PRELUDE + JVM_DATA + "try:\n" + textwrap.indent(JVM_MODES, "    ") +
                    "\nexcept Exception as e:\n    t['error'] = (type(e).__name__ + ': ' + str(e)).splitlines()[:3]\n"
                    "result = t\n",
                    **jvm_params(rows, os.path.join(root, "jvm-pq"), modes=modes, read=ONE_READ,
                                 time_mode_append=True, drop_after=True))
        sampler.sample()
    return {"t": t, "version": jvm.version, "spark": jvm.spark_version,
            "wall_s": round(time.perf_counter() - start, 1), **sampler.result()}


def run_icefloe(rows: int, root: str, memory: str, modes) -> dict:
    """icefloe's figures, from a child process of its own (``--child``), and its tree's memory."""
    cmd = [sys.executable, "-m", "bench.rowlevel_scale", "--child", "--rows", str(rows), "--memory", memory,
           "--root", root, "--modes", *modes]
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True,
                                env={**os.environ, "ICEFLOE_DRIVER_MEMORY": memory})
        with TreeSampler(proc.pid) as sampler:
            proc.wait()
        out.seek(0)
        err.seek(0)
        lines = [ln for ln in out.read().splitlines() if ln.startswith("RESULT ")]
        if proc.returncode != 0 or not lines:
            raise RuntimeError(f"icefloe's run failed: {err.read()[-3000:]}")
    got = json.loads(lines[0][len("RESULT "):])
    return {**got, "wall_s": round(time.perf_counter() - start, 1), **sampler.result()}


def child(rows: int, root: str, modes) -> None:
    """icefloe's side (``--child``): ``bench.jvm.icefloe_modes``, each read once, each table dropped after."""
    import gc

    from bench.jvm import icefloe_modes
    from bench.timing import Timer
    from icefloe.catalog import Catalog
    from icefloe.spark.session import get_spark

    spark = get_spark()

    def quiesce() -> None:
        gc.collect()
        spark._jvm.java.lang.System.gc()        # noqa: SLF001 - as bench.run's quiesce
        os.sync()

    cat = Catalog(os.path.join(root, "icefloe-wh"), spark=spark)
    clock = Timer(quiesce, *ONE_READ)
    try:        # a statement that fails ends the mode's work, its figures so far kept
        icefloe_modes(spark, cat, rows, clock, modes=modes, time_mode_append=True, compare_compacted=False,
                      drop_after=True)
    except Exception as e:  # noqa: BLE001 - reported beside the figures
        clock.t["error"] = (type(e).__name__ + ": " + str(e)).splitlines()[:3]
    t = clock.t
    print("RESULT " + json.dumps({"t": t, "spark": spark.version}), flush=True)


def measure(rows: int, memory: str, modes, base_dir: str | None = None, progress=None) -> dict:
    """Each mode's figures: the Java runtime's process, then icefloe's, one pair per mode (so that a
    change of the machine's load between the two sides is as short as one mode's work)."""
    figures, sides, versions = {}, {}, {}
    for mode in modes:
        root = tempfile.mkdtemp(prefix="icefloe-bench-rowlevel-scale-", dir=base_dir)
        try:
            java = run_java(rows, root, memory, [mode])
            print(f"  {mode}: Java runtime done in {java['wall_s']} s", flush=True)
            ours = run_icefloe(rows, root, memory, [mode])
            print(f"  {mode}: icefloe done in {ours['wall_s']} s", flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        # both engines must have computed the same answers, or the timings compare different work
        a, b = ours["t"].get(f"{mode}:result"), java["t"].get(f"{mode}:result")
        if a is not None and b is not None and a != b:
            raise AssertionError(f"icefloe and the Java runtime disagree on {mode}'s read after: {a} vs {b}")
        for w in WORK:
            key = f"{mode}:{w}"
            x, y = ours["t"].get(key), java["t"].get(key)
            figures[key] = {"icefloe_s": None if x is None else round(x, 2), "jvm_s": None if y is None else round(y, 2),
                            "ratio": None if x is None or y is None else round(x / y, 2)}
        errors = {side: r["t"]["error"] for side, r in (("icefloe", ours), ("java", java)) if "error" in r["t"]}
        versions = {"iceberg": java["version"], "jvm_spark": java["spark"], "icefloe_spark": ours["spark"]}
        sides[mode] = {"icefloe": {k: v for k, v in ours.items() if k not in ("t", "spark")},
                       "java": {k: v for k, v in java.items() if k not in ("t", "version", "spark")}}
        for side, error in errors.items():
            sides[mode][side]["error"] = error
        if progress is not None:        # each mode's figures as soon as it is done (a run of hours may be cut short)
            progress({"rows": rows, "memory": memory, "runs": 1, **versions, "figures": figures, "sides": sides,
                      "java_tool_options": os.environ.get("JAVA_TOOL_OPTIONS", ""), "partial": mode != modes[-1]})
    return {"rows": rows, "memory": memory, "runs": 1, **versions, "figures": figures, "sides": sides,
            "java_tool_options": os.environ.get("JAVA_TOOL_OPTIONS", "")}


def report_lines(res: dict) -> list[str]:
    lines = [f"row-level changes at {res['rows']:,} rows: icefloe on Spark {res['icefloe_spark']} vs Apache "
             f"Iceberg {res['iceberg']} (Java) on Spark {res['jvm_spark']}, both local[2] with a {res['memory']} "
             f"driver{' (' + res['java_tool_options'] + ')' if res.get('java_tool_options') else ''}, best of 1",
             f"{'work':34s}{'icefloe':>10s}{'Iceberg Java':>14s}{'ratio':>8s}"]
    def secs(v, width):
        return f"{v:{width - 1}.2f}s" if v is not None else f"{'failed':>{width}s}"

    for key, f in res["figures"].items():
        ratio = f"{f['ratio']:8.2f}  <= 1.0 {'met' if f['ratio'] <= 1.0 else 'NOT met'}" if f["ratio"] is not None else ""
        lines.append(f"  {key:32s}{secs(f['icefloe_s'], 10)}{secs(f['jvm_s'], 14)}{ratio}")
    for mode, sides in res["sides"].items():
        for side in ("icefloe", "java"):
            s = sides[side]
            roles = ", ".join(f"{r} {mb:,} MB" for r, mb in s["peak_rss_mb"].items())
            lines.append(f"  {mode}, {side}: peak RSS {roles}; tree {s['peak_tree_rss_mb']:,} MB; wall {s['wall_s']} s; "
                         f"load (1 min) mean {s['load_1min']['mean']}, max {s['load_1min']['max']}")
            if "error" in s:
                lines.append(f"    {side} failed: {' '.join(s['error'])[:300]}")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.rowlevel_scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[100_000_000], help="table sizes (rows)")
    ap.add_argument("--memory", default="2g", help="driver memory of both engines (default 2g)")
    ap.add_argument("--direct-memory", help="both JVMs' limit of direct (off-heap) buffers, e.g. 6g (default: "
                                             "the JVM's, the heap's size); set through JAVA_TOOL_OPTIONS")
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    ap.add_argument("--dir", help="where the warehouses go (default: the temporary directory)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out",
                                                  "rowlevel_scale.json"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--root", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.rows[0], args.root, args.modes)
        return 0
    if args.direct_memory:     # every JVM started from here on, both engines' alike
        os.environ["JAVA_TOOL_OPTIONS"] = (os.environ.get("JAVA_TOOL_OPTIONS", "") +
                                           f" -XX:MaxDirectMemorySize={args.direct_memory}").strip()
    results: list[dict] = []

    def save(res: dict) -> None:
        print("\n".join(report_lines(res)), flush=True)
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(results + [res], f, indent=2)

    for rows in args.rows:
        print(f"rows={rows:,}", flush=True)
        res = measure(rows, args.memory, args.modes, args.dir, progress=save)
        results.append(res)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
