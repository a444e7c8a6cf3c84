"""Planning and committing at scale: a metadata-only Iceberg table of N data files, planned by icefloe,
Apache Iceberg's Java runtime and pyiceberg, then appended to by icefloe and the Java runtime.

``python -m bench.scale --files 100000`` (or ``make bench-scale``; not part of ``make bench``'s
default run). The table is written through icefloe's own commit API with no data files behind its
metadata (``generate``): N files of 1,000 rows, partitioned by ``day(ts)``, ``id`` bounds that
name one file per value, committed in appends of ``--per-commit`` files. Each engine plans in a
process of its own, timing the planning call alone, for three filters: all files, ``id = <v>``
(one file by its column bounds) and one day of the partition; each counts its planned tasks as
they stream by (icefloe's ``iter_tasks``, the Java runtime's ``planFiles()`` iterable; pyiceberg's
``plan_files()`` is a list). Cold: the first plan of that filter in
the process after its caches are cleared; warm: the best of the next two. The process's peak RSS
is reported too (the JVM's for the Java runtime). Then ``--commits`` one-file appends by icefloe and
by the Java runtime, each timed from loading the table to the committed metadata: whether a
commit's cost grows with the table. The machine may be shared: compare the ratios of one run, not
figures across runs.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import struct
import subprocess
import sys
import time

DAY_US = 86_400_000_000
START_US = int(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1_000_000)
ROWS_PER_FILE = 1000


def files_per_day(n: int) -> int:
    return max(1, n // 200)         # 200 days, whatever N


def generate(warehouse: str, n: int, per_commit: int = 5000) -> str:
    """A table ``bench.scale`` of ``n`` data files (metadata only) in ``warehouse``; its metadata
    location. File ``i`` holds ids ``[i*1000, i*1000+999]`` and timestamps in day ``i // files_per_day``."""
    import icefloe
    from icefloe.iceberg.manifest import DataFile

    cat = icefloe.Catalog(warehouse)
    t = cat.create_table("bench.scale", "id bigint not null, ts timestamp not null, v string",
                         partitioned_by=["day(ts)"])
    fpd = files_per_day(n)
    loc = t.location.rstrip("/")
    for start in range(0, n, per_commit):
        files = []
        for i in range(start, min(n, start + per_commit)):
            day = i // fpd
            lo_ts, hi_ts = START_US + day * DAY_US, START_US + day * DAY_US + DAY_US - 1
            files.append(DataFile(
                file_path=f"{loc}/data/ts_day={day}/{i:08d}.parquet", file_format="PARQUET",
                partition=((START_US // DAY_US) + day,), record_count=ROWS_PER_FILE, file_size_in_bytes=40_000,
                value_counts={1: ROWS_PER_FILE, 2: ROWS_PER_FILE, 3: ROWS_PER_FILE},
                null_value_counts={1: 0, 2: 0, 3: 0},
                lower_bounds={1: struct.pack("<q", i * ROWS_PER_FILE), 2: struct.pack("<q", lo_ts), 3: b"a"},
                upper_bounds={1: struct.pack("<q", i * ROWS_PER_FILE + ROWS_PER_FILE - 1),
                              2: struct.pack("<q", hi_ts), 3: b"z"}))
        t.commit_files(files)
    return cat.load_table("bench.scale").metadata_location


def filters(n: int, pyiceberg: bool = False) -> dict:
    """The three filters, in Spark SQL (icefloe) or pyiceberg's expression text (ISO timestamps)."""
    v = (n // 2) * ROWS_PER_FILE + 7
    day = dt.datetime.fromtimestamp((START_US + 100 * DAY_US) / 1e6, dt.timezone.utc)
    nxt = day + dt.timedelta(days=1)
    if pyiceberg:
        return {"all": "True", "id": f"id = {v}", "day": f"ts >= '{day.isoformat()}' AND ts < '{nxt.isoformat()}'"}
    fmt = "%Y-%m-%d %H:%M:%S"
    return {"all": None, "id": f"id = {v}",
            "day": f"ts >= TIMESTAMP '{day.strftime(fmt)}' AND ts < TIMESTAMP '{nxt.strftime(fmt)}'"}


def expected(n: int) -> dict:
    return {"all": n, "id": 1, "day": files_per_day(n)}


def _time(plan) -> tuple:
    t0 = time.perf_counter()
    got = plan()
    return time.perf_counter() - t0, got


def _count(tasks) -> int:
    n = 0
    for _ in tasks:
        n += 1
    return n


def run_icefloe(metadata_location: str, n: int) -> dict:
    from icefloe.catalog import load_table
    from icefloe.iceberg import manifest_reader

    t = load_table(os.path.dirname(os.path.dirname(metadata_location)))
    out = {}
    for name, where in filters(n).items():
        manifest_reader.clear_manifest_cache()
        cold, got = _time(lambda: _count(t.iter_tasks(where=where)))
        warm = min(_time(lambda: _count(t.iter_tasks(where=where)))[0] for _ in range(2))
        out[name] = {"cold": cold, "warm": warm, "files": got}
    return out


def run_pyiceberg(metadata_location: str, n: int) -> dict:
    from pyiceberg.table import StaticTable

    out = {}
    for name, pyi_where in filters(n, pyiceberg=True).items():
        t = StaticTable.from_metadata(metadata_location)
        cold, got = _time(lambda: len(list(t.scan(row_filter=pyi_where).plan_files())))
        warm = min(_time(lambda: len(list(t.scan(row_filter=pyi_where).plan_files())))[0] for _ in range(2))
        out[name] = {"cold": cold, "warm": warm, "files": got}
    return out


JAVA_PLAN = """
import time
jvm = spark._jvm
E = jvm.org.apache.iceberg.expressions.Expressions
io = jvm.org.apache.iceberg.hadoop.HadoopFileIO(spark._jsc.hadoopConfiguration())
table = jvm.org.apache.iceberg.BaseTable(jvm.org.apache.iceberg.StaticTableOperations(location, io), "bench.scale")
size = jvm.org.apache.iceberg.relocated.com.google.common.collect.Iterables.size
def plan(f):
    scan = table.newScan()
    if f is not None:
        scan = scan.filter(f)
    t0 = time.perf_counter()
    files = scan.planFiles()
    try:
        n = size(files)
    finally:
        files.close()
    return time.perf_counter() - t0, n
day_lo, day_hi = day
exprs = {"all": None, "id": E.equal("id", jvm.java.lang.Long(v)),
         "day": getattr(E, "and")(E.greaterThanOrEqual("ts", day_lo), E.lessThan("ts", day_hi))}
result = {}
for name, f in exprs.items():
    cold, got = plan(f)
    warm = min(plan(f)[0] for _ in range(2))
    result[name] = {"cold": cold, "warm": warm, "files": got}
pid = jvm.java.lang.ProcessHandle.current().pid()
with open(f"/proc/{pid}/status") as fh:
    hwm = [ln for ln in fh if ln.startswith("VmHWM:")][0].split()[1]
result["peak_rss_mb"] = int(hwm) / 1024
"""


def run_java(metadata_location: str, n: int) -> dict:
    """Apache Iceberg's Java runtime (``make jvm``'s Spark 3.5 environment): ``planFiles()`` of a
    ``StaticTableOperations`` table over the same metadata file, counted in the JVM. The peak RSS is
    the JVM's."""
    from tools.jvm_runtime import JvmRuntime

    day = dt.datetime.fromtimestamp((START_US + 100 * DAY_US) / 1e6, dt.timezone.utc)
    nxt = day + dt.timedelta(days=1)
    iso = "%Y-%m-%dT%H:%M:%S+00:00"     # the column is a timestamptz (Spark's timestamp)
    with JvmRuntime(os.path.dirname(metadata_location), conf={"spark.driver.memory": "4g"}) as jvm:
        return jvm.run(JAVA_PLAN, location=metadata_location, v=(n // 2) * ROWS_PER_FILE + 7,
                       day=[day.strftime(iso), nxt.strftime(iso)])


ENGINES = {"icefloe": run_icefloe, "pyiceberg": run_pyiceberg, "java": run_java}


def _one_file(loc: str, n: int, k: int):
    """The ``k``-th extra file appended to the table of ``n`` files: one more file of the last day."""
    from icefloe.iceberg.manifest import DataFile

    day = (n - 1) // files_per_day(n)
    i = n + k
    return DataFile(
        file_path=f"{loc}/data/ts_day={day}/extra-{i:08d}.parquet", file_format="PARQUET",
        partition=((START_US // DAY_US) + day,), record_count=ROWS_PER_FILE, file_size_in_bytes=40_000,
        value_counts={1: ROWS_PER_FILE}, null_value_counts={1: 0},
        lower_bounds={1: struct.pack("<q", i * ROWS_PER_FILE)},
        upper_bounds={1: struct.pack("<q", i * ROWS_PER_FILE + ROWS_PER_FILE - 1)})


def commits_icefloe(warehouse: str, n: int, k: int) -> list:
    """Seconds of each of ``k`` appends of one file through icefloe's commit API (load included)."""
    import icefloe

    cat = icefloe.Catalog(warehouse)
    times = []
    for j in range(k):
        t0 = time.perf_counter()
        t = cat.load_table("bench.scale")
        t.commit_files([_one_file(t.location.rstrip("/"), n, 1000 + j)])
        times.append(time.perf_counter() - t0)
    return times


JAVA_COMMITS = """
import time
jvm = spark._jvm
tables = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
result = []
for j in range(k):
    t0 = time.perf_counter()
    t = tables.load(location)
    f = (jvm.org.apache.iceberg.DataFiles.builder(t.spec()).withPath(f"{location}/data/ts_day={day}/java-{j:08d}.parquet")
         .withFormat("PARQUET").withFileSizeInBytes(40000).withRecordCount(1000).withPartitionPath(f"ts_day={day}")
         .build())
    t.newAppend().appendFile(f).commit()
    result.append(time.perf_counter() - t0)
"""


def commits_java(warehouse: str, n: int, k: int) -> list:
    """The same appends through the Java runtime's ``HadoopTables`` (``newAppend().appendFile().commit()``)."""
    from tools.jvm_runtime import JvmRuntime

    day = dt.datetime.fromtimestamp((START_US + ((n - 1) // files_per_day(n)) * DAY_US) / 1e6, dt.timezone.utc)
    with JvmRuntime(warehouse, conf={"spark.driver.memory": "4g"}) as jvm:
        return jvm.run(JAVA_COMMITS, location=os.path.join(warehouse, "bench", "scale"), k=k,
                       day=day.strftime("%Y-%m-%d"))


COMMITTERS = {"icefloe": commits_icefloe, "java": commits_java}


def _child(engine: str, metadata_location: str, n: int) -> None:
    if engine.startswith("commits:"):
        _, name, k = engine.split(":")
        print("RESULT " + json.dumps(COMMITTERS[name](metadata_location, n, int(k))), flush=True)
        return
    out = ENGINES[engine](metadata_location, n)
    out.setdefault("peak_rss_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print("RESULT " + json.dumps(out), flush=True)


def child_result(cmd: list, what: str, timeout: int = 3600, **run_kw):
    """Run one of the bench's child processes; the JSON of its ``RESULT`` line (an error naming
    ``what``, with the end of its stderr, if it failed or printed none)."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **run_kw)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{what} failed: {proc.stderr[-3000:]}")
    return json.loads(lines[0][len("RESULT "):])


def check_plans(engine: str, result: dict, want_files: dict) -> None:
    """A plan of the wrong size is an error: ``want_files`` is each filter's file count."""
    for name, want in want_files.items():
        if result[name]["files"] != want:
            raise RuntimeError(f"{engine} planned {result[name]['files']} files for {name}, not {want}")


def measure(metadata_location: str, n: int, engines=("icefloe", "pyiceberg")) -> dict:
    """Each engine's figures, each in a process of its own."""
    results = {}
    for engine in engines:
        results[engine] = child_result([sys.executable, "-m", "bench.scale", "--child", engine, metadata_location,
                                        str(n)], engine)
        check_plans(engine, results[engine], expected(n))
    return results


def measure_commits(warehouse: str, n: int, k: int, engines=("icefloe", "java")) -> dict:
    """Each engine's ``k`` one-file appends to the table (after the planning runs), in a process of its own."""
    results = {}
    for engine in engines:
        if engine not in COMMITTERS:
            continue
        results[engine] = child_result([sys.executable, "-m", "bench.scale", "--child", f"commits:{engine}:{k}",
                                        warehouse, str(n)], f"{engine} commits")
    return results


def report_commits(n: int, results: dict) -> str:
    parts = []
    for engine, times in results.items():
        ordered = sorted(times)
        parts.append(f"{engine} median {ordered[len(ordered) // 2]:.3f} (best {ordered[0]:.3f}, worst {ordered[-1]:.3f})")
    return f"  one-file append, {n} files (s): " + "; ".join(parts)


def report(n: int, results: dict) -> str:
    lines = [f"planning, {n} files (s, cold / warm; ratio to icefloe's)"]
    for name in expected(n):
        ice = results["icefloe"][name]
        row = [f"  {name:4}  icefloe {ice['cold']:.2f} / {ice['warm']:.2f}"]
        for engine, r in results.items():
            if engine != "icefloe":
                row.append(f"{engine} {r[name]['cold']:.2f} / {r[name]['warm']:.2f} "
                           f"(icefloe x{ice['cold'] / r[name]['cold']:.2f} / x{ice['warm'] / r[name]['warm']:.2f})")
        lines.append("  ".join(row))
    lines.append("  peak RSS (MB): " + ", ".join(f"{e} {r['peak_rss_mb']:.0f}" for e, r in results.items()))
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        _child(argv[1], argv[2], int(argv[3]))
        return 0
    ap = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, nargs="+", default=[100_000], help="data files of each table")
    ap.add_argument("--per-commit", type=int, default=5000, help="files per append")
    ap.add_argument("--warehouse", default=os.path.join("bench", "out", "scale"), help="where the tables go")
    ap.add_argument("--engines", default="icefloe,java,pyiceberg")
    ap.add_argument("--commits", type=int, default=5, help="one-file appends timed after planning (0: none)")
    ap.add_argument("--out", default=os.path.join("bench", "out", "scale.json"))
    ap.add_argument("--format", choices=("iceberg", "paimon", "both"), default="both",
                    help="the table format(s) planned (Paimon: bench/scale_paimon.py)")
    ap.add_argument("--paimon-engines", default="icefloe,java,pypaimon")
    args = ap.parse_args(argv)
    all_results: dict = {}
    if args.format in ("paimon", "both"):
        from bench import scale_paimon

        all_results["paimon"] = scale_paimon.run(args.files, args.warehouse, args.per_commit,
                                                 tuple(args.paimon_engines.split(",")))
    for n in args.files if args.format != "paimon" else ():
        wh = os.path.abspath(os.path.join(args.warehouse, f"n{n}"))
        marker = os.path.join(wh, "metadata-location")
        if os.path.exists(marker):
            location = open(marker).read().strip()
        else:
            t0 = time.perf_counter()
            location = generate(wh, n, args.per_commit)
            with open(marker, "w") as f:
                f.write(location)
            print(f"generated {n} files in {time.perf_counter() - t0:.1f} s", flush=True)
        results = measure(location, n, tuple(args.engines.split(",")))
        print(report(n, results), flush=True)
        if args.commits:
            results["commits"] = measure_commits(wh, n, args.commits, tuple(args.engines.split(",")))
            print(report_commits(n, results["commits"]), flush=True)
        all_results[n] = results
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(all_results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
