"""icefloe benchmark: side by side with plain Spark Parquet and pyiceberg, on the same data.

    python -m bench.run            # full sizes (5M rows; 300 commits / 3,000 files)
    python -m bench.run --quick    # smaller sizes, for a smoke run

(a) write: ``t.append(df)`` vs ``df.write.parquet(path)`` (both zstd), same cached DataFrame;
(b) read: ``t.to_spark()`` vs ``spark.read.parquet(<the table's data files>)``: count(),
    an aggregate over every column (``sum(hash(*))``) and a one-column aggregate;
(c) scan planning: ``t.plan_files()`` vs pyiceberg ``StaticTable.scan().plan_files()`` on a
    table of many small commits, without a filter, with ``id = <n>`` (column metrics) and
    with a partition-column filter; cold (fresh objects, in-process caches cleared, table
    load included) and warm (same objects, repeated);
(e) the same for Paimon tables (``bench/paimon.py``): write and read against plain Spark
    Parquet, planning against pypaimon.
(f) Paimon primary-key tables (``bench/paimon_pk.py``): upsert of 1% of the keys and the merged
    read, against pypaimon on the same table and against plain Spark Parquet.
(g) streaming (``bench/streaming.py``): sustained rows/s of the icefloe sink (Iceberg and Paimon)
    against Spark's Parquet file sink on the same input stream, and the latency of a new file.
(i) object stores (``bench/s3.py``): append and scan with the warehouse on an S3 server against the
    local disk, and planning on the S3 table against pyiceberg.
(k) Paimon's own Java engine side by side (``bench/paimon_jvm.py``): append, scan, primary-key upserts
    of 1% and 10% of the keys, merged reads, full compaction, deletion vectors, the streaming sink.
(j) the REST catalog (``bench/rest.py``): commits per second through ``icefloe serve`` with and
    without authentication, 4 concurrent clients, nothing lost.
(l) add_files (``bench/add_files.py``): 10,000 tiny Parquet files added where they are, icefloe
    against Apache Iceberg's Java runtime's ``add_files`` on the same files
    (``python -m bench.run --only-add-files`` runs it alone).

Each figure is the best of ``--runs`` timed runs after one warm-up run; icefloe and its
baseline run interleaved, in alternating order, with garbage collected and dirty pages flushed
(untimed) before every timed run. Results are printed as a table and written as JSON to
bench/out/results.json. On a busy machine the figures are noisy: the load average is reported.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Callable

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")

TARGETS = {"write": 0.8, "read": 0.9, "plan": 1.0}
_SPARK = None  # set by main(); lets quiesce() ask the JVM for a GC between timed runs


# --------------------------------------------------------------------------- helpers
def best_of(fn: Callable[[], object], runs: int, warmup: int = 1, before: Callable[[], None] = None,
            after: Callable[[], None] = None) -> tuple[float, object]:
    """Smallest wall time of ``runs`` calls (after ``warmup`` untimed calls) and the last result."""
    result = None
    times = []
    for i in range(warmup + runs):
        if before:
            before()
        t0 = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t0
        if after:
            after()
        if i >= warmup:
            times.append(dt)
    return min(times), result


def quiesce() -> None:
    """Flush dirty pages and collect garbage (untimed) so one run's leftovers do not slow the next."""
    import gc

    gc.collect()
    if _SPARK is not None:
        try:
            _SPARK._jvm.java.lang.System.gc()
        except Exception:  # pragma: no cover - e.g. Spark Connect has no JVM handle
            pass
    try:
        os.sync()
    except (AttributeError, OSError):  # pragma: no cover - not POSIX
        pass


def dir_bytes(path: str) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            if f.endswith(".parquet"):
                total += os.path.getsize(os.path.join(root, f))
    return total


def java_version() -> str:
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java") or "java"
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
        return out.splitlines()[0].strip() if out else "unknown"
    except Exception as e:  # pragma: no cover
        return f"unknown ({e})"


def environment(spark) -> dict:
    import duckdb
    import pyarrow
    import pyiceberg
    import pyspark

    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        affinity = os.cpu_count()
    try:
        load = os.getloadavg()
    except OSError:  # pragma: no cover
        load = None
    return {
        "cpu_count": os.cpu_count(),
        "usable_cores": affinity,
        "load_average_at_start": load,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "java": java_version(),
        "pyspark": pyspark.__version__,
        "pyarrow": pyarrow.__version__,
        "pyiceberg": pyiceberg.__version__,
        "duckdb": duckdb.__version__,
        "spark_master": spark.sparkContext.master,
        "spark_default_parallelism": spark.sparkContext.defaultParallelism,
        "spark_shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
        "spark_driver_memory": spark.sparkContext.getConf().get("spark.driver.memory", "default"),
    }


def fmt_rate(rows_per_s: float) -> str:
    return f"{rows_per_s / 1e6:8.2f} Mrows/s"


def fmt_ms(s: float) -> str:
    return f"{s * 1000:9.1f} ms"


def verdict(ratio: float, target: float) -> str:
    return "ok" if ratio >= target else "BELOW TARGET"


# --------------------------------------------------------------------------- (a) write
def bench_write(spark, cat, work: str, rows: int, runs: int) -> dict:
    df = spark.range(0, rows, numPartitions=spark.sparkContext.defaultParallelism).selectExpr(
        "id",
        "cast(rand(7) * 1000000 as double) as v",
        "concat('name-', cast(id % 10007 as string)) as s",
        "timestamp_seconds(1600000000 + id) as ts",
    ).cache()
    df.count()  # materialise: both writers read the same cached rows

    t = cat.create_table("bench.write", "id bigint not null, v double, s string, ts timestamp",
                         properties={"write.parquet.compression-codec": "zstd"})
    plain_dirs = []

    def plain():
        path = os.path.join(work, f"plain-write-{len(os.listdir(work))}-{time.time_ns()}")
        plain_dirs.append(path)
        df.write.mode("errorifexists").option("compression", "zstd").parquet(path)
        return path

    def cleanup_plain():
        while len(plain_dirs) > 1:
            shutil.rmtree(plain_dirs.pop(0), ignore_errors=True)

    # Interleaved, in alternating order, with dirty pages flushed before each timed write, so
    # that drifting machine load and the write-back of the previous run hit both sides alike.
    ours_times, plain_times = [], []
    snap = None

    def run_ours():
        nonlocal snap
        snap = t.append(df)

    for i in range(1 + runs):
        order = [("ours", run_ours), ("plain", plain)]
        if i % 2:
            order.reverse()
        for name, fn in order:
            quiesce()
            t0 = time.perf_counter()
            fn()
            d = time.perf_counter() - t0
            if i > 0:
                (ours_times if name == "ours" else plain_times).append(d)
        cleanup_plain()
    ours_s, plain_s = min(ours_times), min(plain_times)
    added_bytes = int(snap.summary.get("added-files-size", "0"))
    plain_bytes = dir_bytes(plain_dirs[-1])
    files_ours = int(snap.summary.get("added-data-files", "0"))
    df.unpersist()
    for p in plain_dirs:
        shutil.rmtree(p, ignore_errors=True)
    return {
        "rows": rows, "columns": 4, "codec": "zstd",
        "icefloe_s": ours_s, "spark_parquet_s": plain_s,
        "icefloe_rows_per_s": rows / ours_s, "spark_parquet_rows_per_s": rows / plain_s,
        "icefloe_bytes": added_bytes, "spark_parquet_bytes": plain_bytes,
        "icefloe_files": files_ours,
        "ratio": plain_s / ours_s,
        "all_runs_icefloe_s": ours_times, "all_runs_spark_parquet_s": plain_times,
    }


# --------------------------------------------------------------------------- (b) read
def bench_read(spark, cat, rows: int, runs: int) -> dict:
    df = spark.range(0, rows, numPartitions=spark.sparkContext.defaultParallelism).selectExpr(
        "id",
        "cast(rand(11) * 1000000 as double) as v",
        "concat('name-', cast(id % 10007 as string)) as s",
        "timestamp_seconds(1600000000 + id) as ts",
    )
    t = cat.create_table("bench.read", "id bigint not null, v double, s string, ts timestamp",
                         properties={"write.parquet.compression-codec": "zstd"})
    t.append(df)
    files = [f.file_path for f in t.plan_files()]
    size = sum(f.file_size_in_bytes for f in t.plan_files())

    queries = {
        "count": lambda d: d.count(),
        "all_columns_agg": lambda d: d.selectExpr("sum(hash(*)) as h").collect()[0][0],
        "one_column_agg": lambda d: d.selectExpr("sum(v) as s").collect()[0][0],
    }
    # The baseline is given its schema up front (inferred once, untimed), as icefloe gives Spark
    # the table schema: without it plain Spark also reads footers to infer one, which would
    # flatter our ratio.
    plain_schema = spark.read.parquet(*files).schema
    out = {"rows": rows, "files": len(files), "bytes": size, "queries": {},
           "baseline": "spark.read.schema(<inferred once>).parquet(*table_data_files)"}
    for name, q in queries.items():
        ours_times, plain_times = [], []
        ours_res = plain_res = None
        for i in range(1 + runs):
            for side in (("ours", "plain") if i % 2 == 0 else ("plain", "ours")):
                quiesce()
                t0 = time.perf_counter()
                if side == "ours":
                    ours_res = q(t.to_spark())
                else:
                    plain_res = q(spark.read.schema(plain_schema).parquet(*files))
                d = time.perf_counter() - t0
                if i > 0:
                    (ours_times if side == "ours" else plain_times).append(d)
        same = (abs(ours_res - plain_res) <= 1e-9 * max(1.0, abs(plain_res))
                if isinstance(plain_res, float) else ours_res == plain_res)
        if not same:
            raise AssertionError(f"read {name}: icefloe gave {ours_res!r}, plain Spark {plain_res!r}")
        ours_s, plain_s = min(ours_times), min(plain_times)
        out["queries"][name] = {
            "icefloe_s": ours_s, "spark_parquet_s": plain_s,
            "icefloe_rows_per_s": rows / ours_s, "spark_parquet_rows_per_s": rows / plain_s,
            "ratio": plain_s / ours_s,
            "all_runs_icefloe_s": ours_times, "all_runs_spark_parquet_s": plain_times,
        }
    return out


# --------------------------------------------------------------------------- (c) planning
def build_planning_table(cat, commits: int, rows_per_commit: int, partitions_per_commit: int):
    """``commits`` pyarrow appends, each of ``partitions_per_commit`` partitions (one file each).

    Partition values: commit c writes p = (c // 30) * partitions + j, so thirty consecutive
    commits share a set of partitions and a partition filter can skip most manifests.
    """
    import numpy as np
    import pyarrow as pa

    t = cat.create_table("bench.plan", "id bigint not null, p int not null, v double, ts timestamp",
                         partitioned_by=["p"])
    k = partitions_per_commit
    t0 = time.perf_counter()
    for c in range(commits):
        r = np.arange(rows_per_commit, dtype=np.int64)
        ids = c * rows_per_commit + r
        data = pa.table({
            "id": pa.array(ids, pa.int64()),
            "p": pa.array((c // 30) * k + (r % k), pa.int32()),
            "v": pa.array(np.sin(ids.astype(np.float64)), pa.float64()),
            "ts": pa.array(1_600_000_000_000_000 + ids * 1_000_000, pa.timestamp("us", tz="UTC")),
        })
        t.append(data)
    build_s = time.perf_counter() - t0
    return t, build_s


def bench_planning(cat, commits: int, rows_per_commit: int, runs: int, warm_runs: int) -> dict:
    from pyiceberg.manifest import clear_manifest_cache
    from pyiceberg.table import StaticTable

    from icefloe.iceberg import manifest_reader

    partitions = 10
    t, build_s = build_planning_table(cat, commits, rows_per_commit, partitions)
    loc = t.metadata_location
    n_files = len(t.plan_files())
    target_id = rows_per_commit * (commits // 2) + 23
    target_p = (commits // 2 // 30) * partitions + 3
    filters = {
        "none": (None, None),
        f"id = {target_id}": (f"id = {target_id}", f"id = {target_id}"),
        f"p = {target_p}": (f"p = {target_p}", f"p = {target_p}"),
    }

    def icefloe_cold(where):
        def run():
            tbl = cat.load_table("bench.plan")
            return [f.file_path for f in tbl.plan_files(where=where)]

        # compiled per-schema decoders count as cold too
        return best_of(run, runs, warmup=0, before=manifest_reader.clear_manifest_cache)

    def pyiceberg_cold(row_filter):
        def run():
            tbl = StaticTable.from_metadata(loc)
            scan = tbl.scan(row_filter=row_filter) if row_filter else tbl.scan()
            return [task.file.file_path for task in scan.plan_files()]

        return best_of(run, runs, warmup=0, before=clear_manifest_cache)

    results = {"commits": commits, "rows_per_commit": rows_per_commit, "partitions_per_commit": partitions,
               "data_files": n_files, "manifests": len(manifest_reader.snapshot_manifests(t.io, t.current_snapshot())),
               "build_s": build_s, "filters": {}}
    for name, (where, row_filter) in filters.items():
        ours_cold, ours_files = icefloe_cold(where)
        theirs_cold, their_files = pyiceberg_cold(row_filter)
        tbl_ours = cat.load_table("bench.plan")
        ours_warm, ours_files_w = best_of(lambda: [f.file_path for f in tbl_ours.plan_files(where=where)],
                                          warm_runs, warmup=1)
        tbl_theirs = StaticTable.from_metadata(loc)
        scan_fn = (lambda: tbl_theirs.scan(row_filter=row_filter)) if row_filter else tbl_theirs.scan
        theirs_warm, their_files_w = best_of(lambda: [task.file.file_path for task in scan_fn().plan_files()],
                                             warm_runs, warmup=1)
        norm = lambda paths: sorted(p.replace("file://", "") for p in paths)  # noqa: E731
        if name == "none" and norm(ours_files) != norm(their_files):
            raise AssertionError("icefloe and pyiceberg plan different files for the full scan")
        results["filters"][name] = {
            "icefloe_files": len(ours_files), "pyiceberg_files": len(their_files),
            "icefloe_cold_s": ours_cold, "pyiceberg_cold_s": theirs_cold,
            "icefloe_warm_s": ours_warm, "pyiceberg_warm_s": theirs_warm,
            "speedup_cold": theirs_cold / ours_cold, "speedup_warm": theirs_warm / ours_warm,
            "consistent": len(ours_files_w) == len(ours_files) and len(their_files_w) == len(their_files),
        }
    return results


# --------------------------------------------------------------------------- report
def planning_lines(filters: dict, baseline: str) -> list:
    """Cold and warm planning times per filter against ``baseline`` (pyiceberg or pypaimon)."""
    lines = [f"{'':44s}{'icefloe':>14s}{baseline:>14s}{'speedup':>9s}  files (ours/theirs)"]
    for name, f in filters.items():
        for mode in ("cold", "warm"):
            sp = f[f"speedup_{mode}"]
            label = f"  {('no filter' if name == 'none' else name)}, {mode}"
            lines.append(f"{label:44s}{fmt_ms(f[f'icefloe_{mode}_s']):>14s}{fmt_ms(f[f'{baseline}_{mode}_s']):>14s}"
                         f"{sp:8.1f}x  {f['icefloe_files']}/{f[f'{baseline}_files']}"
                         f"{'' if sp > TARGETS['plan'] else f'  SLOWER THAN {baseline.upper()}'}")
    return lines


def report(res: dict) -> str:
    lines = []
    env = res["environment"]
    lines.append("icefloe benchmark" + (" (--quick)" if res["params"]["quick"] else ""))
    lines.append(f"  cores: {env['cpu_count']} (usable {env['usable_cores']}), load avg at start: "
                 f"{', '.join(f'{x:.2f}' for x in env['load_average_at_start'] or [])}")
    if env.get("load_average_at_end"):
        lines.append(f"  load avg at end: {', '.join(f'{x:.2f}' for x in env['load_average_at_end'])}"
                     + ("  (busy machine: figures are noisy)" if env["load_average_at_end"][0] > env["usable_cores"]
                        else ""))
    lines.append(f"  {env['platform']}, python {env['python']}, {env['java']}")
    lines.append(f"  pyspark {env['pyspark']} ({env['spark_master']}, parallelism "
                 f"{env['spark_default_parallelism']}), pyarrow {env['pyarrow']}, pyiceberg {env['pyiceberg']}, "
                 f"duckdb {env['duckdb']}")
    lines.append(f"  best of {res['params']['runs']} runs after 1 warm-up; "
                 f"planning warm: best of {res['params']['warm_runs']}")
    lines.append("")
    w = res["write"]
    head = f"{'':44s}{'icefloe':>18s}{'baseline':>18s}{'ratio':>8s}  target"
    lines.append(f"(a) write {w['rows']:,} rows x {w['columns']} columns, {w['codec']}  "
                 f"[baseline: df.write.parquet]")
    lines.append(head)
    lines.append(f"{'  append throughput':44s}{fmt_rate(w['icefloe_rows_per_s']):>18s}"
                 f"{fmt_rate(w['spark_parquet_rows_per_s']):>18s}{w['ratio']:8.2f}  >= {TARGETS['write']} "
                 f"{verdict(w['ratio'], TARGETS['write'])}")
    lines.append(f"{'  wall time':44s}{w['icefloe_s']:16.2f} s{w['spark_parquet_s']:16.2f} s")
    lines.append(f"{'  bytes written':44s}{w['icefloe_bytes'] / 1e6:15.1f} MB{w['spark_parquet_bytes'] / 1e6:15.1f} MB")
    lines.append("")
    r = res["read"]
    lines.append(f"(b) read {r['rows']:,} rows, {r['files']} files, {r['bytes'] / 1e6:.1f} MB  "
                 f"[baseline: spark.read.schema(s).parquet on the same files]")
    lines.append(head)
    labels = {"count": "  full scan: count()", "all_columns_agg": "  all columns: sum(hash(*))",
              "one_column_agg": "  one column: sum(v)"}
    for name, q in r["queries"].items():
        lines.append(f"{labels[name]:44s}{fmt_rate(q['icefloe_rows_per_s']):>18s}"
                     f"{fmt_rate(q['spark_parquet_rows_per_s']):>18s}{q['ratio']:8.2f}  >= {TARGETS['read']} "
                     f"{verdict(q['ratio'], TARGETS['read'])}")
    lines.append("")
    p = res["planning"]
    lines.append(f"(c) scan planning: {p['data_files']:,} data files, {p['manifests']} manifests from "
                 f"{p['commits']} commits (built in {p['build_s']:.1f} s)  [baseline: pyiceberg plan_files]")
    lines.extend(planning_lines(p["filters"], "pyiceberg"))
    lines.append("")
    s = res["summary"]
    lines.append("targets: write >= 0.8x: {}; read >= 0.9x: {}; planning faster than pyiceberg: {}".format(
        "met" if s["write_target_met"] else "NOT met", "met" if s["read_target_met"] else "NOT met",
        "met" if s["planning_target_met"] else "NOT met"))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes for a smoke run")
    ap.add_argument("--rows", type=int, help="rows for the write and read benchmarks (default 5M, quick 500k)")
    ap.add_argument("--commits", type=int, help="commits of the planning table (default 300, quick 100)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per figure (best is reported)")
    ap.add_argument("--out", default=os.path.join(OUT_DIR, "results.json"), help="JSON results file")
    ap.add_argument("--keep", action="store_true", help="keep the benchmark warehouse")
    ap.add_argument("--no-paimon", action="store_true", help="leave out (e), the Paimon figures")
    ap.add_argument("--no-jvm", action="store_true", help="leave out (h), the side-by-side with Iceberg's JVM runtime")
    ap.add_argument("--jvm-rows", type=int, help="rows for (h) (default 4M, quick 500k)")
    ap.add_argument("--only-jvm", action="store_true", help="run only (h)")
    ap.add_argument("--no-paimon-jvm", action="store_true",
                    help="leave out (k), the side-by-side with Paimon's Java runtime")
    ap.add_argument("--paimon-jvm-rows", type=int, help="rows for (k) (default 4M, quick 500k)")
    ap.add_argument("--only-paimon-jvm", action="store_true", help="run only (k)")
    ap.add_argument("--paimon-jvm-streams", action="store_true",
                    help="(k): only the streaming-sink rows (stream_sink, stream_foreach_batch)")
    ap.add_argument("--no-s3", action="store_true", help="leave out (i), the object-store figures")
    ap.add_argument("--only-s3", action="store_true", help="run only (i)")
    ap.add_argument("--only-runs", action="store_true", help="run only the sorted-runs part of (f)")
    ap.add_argument("--s3-rows", type=int, help="rows for (i) (default 2M, quick 200k)")
    ap.add_argument("--no-rest", action="store_true", help="leave out (j), the REST catalog's commits")
    ap.add_argument("--only-rest", action="store_true", help="run only (j)")
    ap.add_argument("--no-add-files", action="store_true", help="leave out (l), add_files of many Parquet files")
    ap.add_argument("--only-add-files", action="store_true", help="run only (l)")
    ap.add_argument("--add-files", type=int, help="Parquet files for (l) (default 10,000, quick 1,000)")
    ap.add_argument("--rowlevel", action="store_true",
                    help="also run (d): MERGE of 1%% copy-on-write vs merge-on-read, reads with delete files")
    args = ap.parse_args(argv)

    rows = args.rows or (500_000 if args.quick else 5_000_000)
    commits = args.commits or (100 if args.quick else 300)
    rows_per_commit = 100
    warm_runs = 5

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import icefloe
    from icefloe.spark.session import get_spark

    os.makedirs(OUT_DIR, exist_ok=True)
    work = tempfile.mkdtemp(prefix="bench-", dir=OUT_DIR)
    t_start = time.perf_counter()
    try:
        global _SPARK
        spark = _SPARK = get_spark()
        env = environment(spark)
        cat = icefloe.Catalog(os.path.join(work, "warehouse"), spark=spark)
        print(f"running on {env['cpu_count']} cores; rows={rows:,}, planning commits={commits}", flush=True)
        if args.only_runs:
            from bench.paimon_pk import bench_paimon_runs, report_runs_lines

            res_runs = bench_paimon_runs(spark, work, args.rows or 2_000_000, args.runs, quiesce)
            print("\n".join(report_runs_lines(res_runs)), flush=True)
            with open(args.out, "w") as f:
                json.dump({"environment": env, "paimon_runs": res_runs}, f, indent=2)
            return 0
        add_files = None
        if not args.no_add_files:
            from bench.add_files import bench_add_files, report_lines as add_files_lines

            print("(l) add_files ...", flush=True)
            add_files = bench_add_files(spark, args.runs, args.add_files or (1_000 if args.quick else 10_000), OUT_DIR)
            print("\n".join(add_files_lines(add_files)), flush=True)
            if args.only_add_files:
                with open(args.out, "w") as f:
                    json.dump({"environment": env, "add_files": add_files}, f, indent=2)
                return 0
        rest = None
        if not args.no_rest and not args.only_paimon_jvm:
            from bench.rest import bench_rest, report_lines as rest_lines

            print("(j) REST catalog commits ...", flush=True)
            rest = bench_rest(25 if args.quick else 100, work)
            print("\n".join(rest_lines(rest)), flush=True)
            if args.only_rest:
                with open(args.out, "w") as f:
                    json.dump({"environment": env, "rest": rest}, f, indent=2)
                return 0
        s3 = None
        if not args.no_s3 and not args.only_rest and not args.only_paimon_jvm:
            from bench.s3 import bench_s3, report_lines as s3_lines

            print("(i) object stores ...", flush=True)
            s3 = bench_s3(spark, args.s3_rows or (200_000 if args.quick else 2_000_000), commits, args.runs,
                          quiesce, work)
            print("\n".join(s3_lines(s3)), flush=True)
            if args.only_s3:
                with open(args.out, "w") as f:
                    json.dump({"environment": env, "s3": s3}, f, indent=2)
                return 0
        paimon_jvm = None
        if not args.no_paimon_jvm and not (args.only_s3 or args.only_jvm):
            from bench.paimon_jvm import bench_paimon_jvm, report_lines as paimon_jvm_lines

            print("(k) side by side with Paimon's Java runtime ...", flush=True)
            paimon_jvm = bench_paimon_jvm(spark, args.paimon_jvm_rows or (500_000 if args.quick else 4_000_000),
                                          args.runs, quiesce, streams_only=args.paimon_jvm_streams)
            print("\n".join(paimon_jvm_lines(paimon_jvm)), flush=True)
            if args.only_paimon_jvm:
                with open(args.out, "w") as f:
                    json.dump({"environment": env, "paimon_jvm": paimon_jvm}, f, indent=2)
                return 0
        jvm = None
        if not args.no_jvm and not args.only_s3:
            from bench.jvm import bench_jvm, report_lines as jvm_lines

            print("(h) side by side with Iceberg's JVM runtime ...", flush=True)
            jvm = bench_jvm(spark, args.jvm_rows or (500_000 if args.quick else 4_000_000), args.runs, quiesce)
            print("\n".join(jvm_lines(jvm)), flush=True)
            if args.only_jvm:
                with open(args.out, "w") as f:
                    json.dump({"environment": env, "jvm": jvm}, f, indent=2)
                return 0
        print("(a) write ...", flush=True)
        write = bench_write(spark, cat, work, rows, args.runs)
        print("(b) read ...", flush=True)
        read = bench_read(spark, cat, rows, args.runs)
        print("(c) planning ...", flush=True)
        planning = bench_planning(cat, commits, rows_per_commit, args.runs, warm_runs)
        paimon = None
        if not args.no_paimon:
            from bench.paimon import bench_paimon_data, bench_paimon_planning

            print("(e) paimon ...", flush=True)
            paimon = {"data": bench_paimon_data(spark, work, rows, args.runs, quiesce),
                      "planning": bench_paimon_planning(work, commits, rows_per_commit, args.runs, warm_runs,
                                                        best_of)}
            from bench.paimon_pk import bench_paimon_pk

            print("(f) paimon primary-key ...", flush=True)
            paimon["pk"] = bench_paimon_pk(spark, work, rows, args.runs, quiesce)
            from bench.paimon_pk import bench_paimon_runs

            paimon["runs"] = bench_paimon_runs(spark, work, rows, args.runs, quiesce)
        from bench.streaming import bench_streaming

        print("(g) streaming ...", flush=True)
        streaming = bench_streaming(spark, work, min(rows, 2_000_000), args.runs, quiesce)
        rowlevel = None
        if args.rowlevel:
            print("(d) row-level ...", flush=True)
            from bench.rowlevel import bench_rowlevel

            rowlevel = bench_rowlevel(spark, args.quick)
        summary = {
            "write_ratio": write["ratio"],
            "read_ratios": {k: v["ratio"] for k, v in read["queries"].items()},
            "planning_speedups": {k: {"cold": v["speedup_cold"], "warm": v["speedup_warm"]}
                                  for k, v in planning["filters"].items()},
        }
        summary["write_target_met"] = write["ratio"] >= TARGETS["write"]
        summary["read_target_met"] = all(r >= TARGETS["read"] for r in summary["read_ratios"].values())
        summary["planning_target_met"] = all(min(v.values()) > TARGETS["plan"]
                                             for v in summary["planning_speedups"].values())
        if paimon is not None:
            summary["paimon_write_ratio"] = paimon["data"]["write"]["ratio"]
            summary["paimon_read_ratios"] = {k: v["ratio"] for k, v in paimon["data"]["read"].items()}
            summary["paimon_planning_speedups"] = {k: {"cold": v["speedup_cold"], "warm": v["speedup_warm"]}
                                                   for k, v in paimon["planning"]["filters"].items()}
        res = {
            "environment": env,
            "params": {"quick": args.quick, "rows": rows, "commits": commits, "rows_per_commit": rows_per_commit,
                       "runs": args.runs, "warm_runs": warm_runs},
            "targets": TARGETS,
            "write": write, "read": read, "planning": planning, "paimon": paimon, "rowlevel": rowlevel,
            "streaming": streaming, "jvm": jvm, "paimon_jvm": paimon_jvm, "s3": s3, "rest": rest,
            "add_files": add_files,
            "summary": summary,
            "total_s": time.perf_counter() - t_start,
        }
        try:
            env["load_average_at_end"] = os.getloadavg()
        except OSError:  # pragma: no cover
            pass
        print()
        print(report(res))
        if paimon is not None:
            from bench.paimon import report_lines

            from bench.paimon_pk import report_lines as pk_lines

            print()
            print("\n".join(report_lines(paimon, planning_lines)))
            print("\n".join(pk_lines(paimon["pk"])))
            from bench.paimon_pk import report_runs_lines

            print("\n".join(report_runs_lines(paimon["runs"])))
        from bench.streaming import report_lines as streaming_lines

        print("\n".join(streaming_lines(streaming)))
        if rowlevel is not None:
            print("\n(d) row-level:", json.dumps(rowlevel, indent=2, default=str))
        if jvm is not None:
            print("\n".join(jvm_lines(jvm)))
        if paimon_jvm is not None:
            print("\n".join(paimon_jvm_lines(paimon_jvm)))
        if s3 is not None:
            print("\n".join(s3_lines(s3)))
        if rest is not None:
            print("\n".join(rest_lines(rest)))
        if add_files is not None:
            print("\n".join(add_files_lines(add_files)))
        print(f"\ntotal {res['total_s']:.0f} s; results written to {os.path.relpath(args.out)}")
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(res, f, indent=2)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
