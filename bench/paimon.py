"""(e) Paimon tables: Spark write and read against plain Spark Parquet, planning against pypaimon.

* write: ``PaimonTable.append(df)`` vs ``df.write.parquet(path)`` on the same cached DataFrame;
* read: ``t.to_spark()`` vs ``spark.read.schema(s).parquet(<the table's data files>)``, count()
  and an aggregate over every column;
* commit: one more small append of 10 partitions to that table, pyarrow through icefloe vs
  pypaimon's batch write and commit (table loaded anew each time);
* planning: ``plan_files()`` vs pypaimon ``new_read_builder().new_scan().plan()`` on a table of
  many small pyarrow commits, without a filter, with a partition filter and with ``id = n``
  (file statistics); cold (new catalog and table objects each run) and warm (same objects).

Figures are best-of-``runs`` after a warm-up, icefloe and the baseline interleaved in
alternating order, as in the rest of the benchmark.

pypaimon runs in its own environment (``.venv-paimon``): its work is the functions of
``tools/pypaimon_side.py``, called in the worker process through ``tools/pypaimon_env.py``, and its
figures are the seconds measured there (:func:`in_worker`), so the pipe is not charged to it.
"""
from __future__ import annotations

import os
import shutil
import time
from typing import NamedTuple

from tools.pypaimon_env import remote_module, timed

# pypaimon's side of the benchmark, in the worker; imported there on first use
pypaimon_side = remote_module("tools.pypaimon_side")


class Measured(NamedTuple):
    """A result and the seconds its call took where it ran (pypaimon's worker): the timing helpers
    take these seconds instead of their own wall clock."""

    result: object
    seconds: float


def in_worker(name: str, *args, **kwargs) -> Measured:
    """``tools.pypaimon_side.<name>(*args, **kwargs)`` run in pypaimon's worker, with its time there."""
    return Measured(*timed(getattr(pypaimon_side, name), *args, **kwargs))


def quiesce_worker(quiesce):
    """``quiesce`` here and a garbage collection in pypaimon's worker."""
    def both():
        quiesce()
        pypaimon_side.collect_garbage()
    return both


READ_SECONDS = 3.0      # a read figure's timed runs go on until each side has run this long ...
READ_RUNS_CAP = 15      # ... or this many times: one sub-second run swings by a third on 2 cores


def _interleaved(ours, theirs, runs, quiesce, min_seconds: float = 0.0):
    """The best of ``runs`` timed runs of each side after one untimed run, alternating which goes
    first. With ``min_seconds`` (for reads, which change nothing and so may repeat), more runs
    follow until each side's timed runs add up to that, at most ``READ_RUNS_CAP``: best of three
    of a 0.3 s read says more about the machine's noise than about the read."""
    times = {"ours": [], "theirs": []}
    results = {}
    i = 0
    while i < 1 + runs or (i < 1 + READ_RUNS_CAP
                           and min(sum(times["ours"]), sum(times["theirs"])) < min_seconds):
        order = [("ours", ours), ("theirs", theirs)]
        if i % 2:
            order.reverse()
        for name, fn in order:
            quiesce()
            t0 = time.perf_counter()
            results[name] = fn()
            d = time.perf_counter() - t0
            if isinstance(results[name], Measured):
                results[name], d = results[name]
            if i > 0:
                times[name].append(d)
        i += 1
    return min(times["ours"]), min(times["theirs"]), results


def _best_of_in_worker(fn, runs: int, warmup: int = 1) -> tuple[float, object]:
    """``best_of`` (bench/run.py) for ``fn`` returning :class:`Measured`: the smallest of the
    seconds measured in the worker over ``runs`` calls after ``warmup``, and the last result."""
    times, result = [], None
    for i in range(warmup + runs):
        result, dt = fn()
        if i >= warmup:
            times.append(dt)
    return min(times), result


def bench_paimon_data(spark, work: str, rows: int, runs: int, quiesce) -> dict:
    from icefloe.catalog import Catalog

    cat = Catalog(os.path.join(work, "paimon-wh"), "paimon", spark)
    df = spark.range(0, rows, numPartitions=spark.sparkContext.defaultParallelism).selectExpr(
        "id", "cast(rand(7) * 1000000 as double) as v",
        "concat('name-', cast(id % 10007 as string)) as s", "timestamp_seconds(1600000000 + id) as ts",
    ).cache()
    df.count()
    t = cat.create_table("bench.write", "id bigint not null, v double, s string, ts timestamp",
                         properties={"file.compression": "zstd", "write-only": "true"})
    plain_dirs = []

    def plain_write():
        path = os.path.join(work, f"paimon-plain-{time.time_ns()}")
        plain_dirs.append(path)
        df.write.option("compression", "zstd").parquet(path)
        while len(plain_dirs) > 1:
            shutil.rmtree(plain_dirs.pop(0), ignore_errors=True)

    ours_w, plain_w, _ = _interleaved(lambda: t.overwrite(df), plain_write, runs, quiesce)
    df.unpersist()
    for p in plain_dirs:
        shutil.rmtree(p, ignore_errors=True)

    files = [f.file_path for f in t.plan_files()]
    schema = spark.read.parquet(*files).schema
    out = {"rows": rows, "files": len(files), "write": {"icefloe_s": ours_w, "spark_parquet_s": plain_w,
                                                         "ratio": plain_w / ours_w}, "read": {}}
    queries = {"count": lambda d: d.count(),
               "all_columns_agg": lambda d: d.selectExpr("sum(hash(id, v, s, ts)) as h").collect()[0][0]}
    for name, q in queries.items():
        ours_r, plain_r, res = _interleaved(lambda: q(t.to_spark()),
                                            lambda: q(spark.read.schema(schema).parquet(*files)), runs, quiesce,
                                            READ_SECONDS)
        if res["ours"] != res["theirs"]:
            raise AssertionError(f"paimon read {name}: icefloe {res['ours']!r}, plain Spark {res['theirs']!r}")
        out["read"][name] = {"icefloe_s": ours_r, "spark_parquet_s": plain_r, "ratio": plain_r / ours_r}
    return out


def bench_paimon_planning(work: str, commits: int, rows_per_commit: int, runs: int, warm_runs: int,
                          best_of) -> dict:
    import numpy as np
    import pyarrow as pa

    from icefloe.catalog import Catalog
    from icefloe.paimon import binary_row

    wh = os.path.join(work, "paimon-plan-wh")
    t = Catalog(wh, "paimon").create_table("bench.plan", "id bigint not null, p int not null, v double",
                                       partitioned_by=["p"])
    k = 10
    t0 = time.perf_counter()
    for c in range(commits):
        r = np.arange(rows_per_commit, dtype=np.int64)
        ids = c * rows_per_commit + r
        t.append(pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array((c // 30) * k + (r % k), pa.int32()),
                           "v": pa.array(np.sin(ids.astype(np.float64)), pa.float64())}))
    build_s = time.perf_counter() - t0
    target_id = rows_per_commit * (commits // 2) + 23
    target_p = (commits // 2 // 30) * k + 3
    filters = {"none": None, f"p = {target_p}": ("p", target_p), f"id = {target_id}": ("id", target_id)}

    def ours(tbl, f):
        return [x.file_path for x in tbl.plan_files(where=None if f is None else f"{f[0]} = {f[1]}")]

    # commit time: one more small append of 10 partitions, icefloe against pypaimon, on the same table
    def batch(c):
        r = np.arange(rows_per_commit, dtype=np.int64)
        ids = (commits + c) * rows_per_commit + r
        return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array(r % k, pa.int32()),
                         "v": pa.array(np.cos(ids.astype(np.float64)), pa.float64())})

    counter = iter(range(10_000))

    def ours_commit():
        Catalog(wh, "paimon").load_table("bench.plan").append(batch(next(counter)))

    def theirs_commit():  # a new catalog and table in the worker each time, as icefloe's
        return in_worker("append_arrow", wh, "bench.plan", batch(next(counter)))

    ours_c, theirs_c, _ = _interleaved(ours_commit, theirs_commit, runs, lambda: None)
    out = {"commits": commits, "data_files": len(t.plan_files()), "build_s": build_s, "filters": {},
           "commit": {"icefloe_s": ours_c, "pypaimon_s": theirs_c, "speedup": theirs_c / ours_c}}
    for name, f in filters.items():
        ours_cold, ours_files = best_of(lambda: ours(Catalog(wh, "paimon").load_table("bench.plan"), f), runs, warmup=0,
                                        before=binary_row._INTERNED.clear)  # cold: no decoded rows kept
        # cold: a new catalog and table object in the worker each run
        theirs_cold, their_files = _best_of_in_worker(
            lambda: in_worker("plan_file_names_cold", wh, "bench.plan", f), runs, warmup=0)
        mine = Catalog(wh, "paimon").load_table("bench.plan")
        ours_warm, _ = best_of(lambda: ours(mine, f), warm_runs, warmup=1)
        other = pypaimon_side.load_table(wh, "bench.plan")  # a proxy: the table stays in the worker
        theirs_warm, _ = _best_of_in_worker(lambda: in_worker("plan_file_names", other, f), warm_runs, warmup=1)
        if name == "none" and sorted(os.path.basename(p) for p in ours_files) != sorted(their_files):
            raise AssertionError("icefloe and pypaimon plan different files for the full scan")
        out["filters"][name] = {
            "icefloe_files": len(ours_files), "pypaimon_files": len(their_files),
            "icefloe_cold_s": ours_cold, "pypaimon_cold_s": theirs_cold,
            "icefloe_warm_s": ours_warm, "pypaimon_warm_s": theirs_warm,
            "speedup_cold": theirs_cold / ours_cold, "speedup_warm": theirs_warm / ours_warm,
        }
    return out


def report_lines(res: dict, planning_lines) -> list:
    d, p = res["data"], res["planning"]
    lines = [f"(e) Paimon: {d['rows']:,} rows in {d['files']} files  [baselines: plain Spark Parquet, pypaimon]"]
    lines.append(f"{'  write (append via Spark)':44s}{d['write']['icefloe_s']:16.2f} s"
                 f"{d['write']['spark_parquet_s']:16.2f} s{d['write']['ratio']:8.2f}")
    for name, q in d["read"].items():
        lines.append(f"{'  read ' + name:44s}{q['icefloe_s']:16.2f} s{q['spark_parquet_s']:16.2f} s"
                     f"{q['ratio']:8.2f}")
    lines.append(f"  planning: {p['data_files']:,} data files from {p['commits']} commits "
                 f"(built in {p['build_s']:.1f} s)")
    c = p["commit"]
    lines.append(f"{'  commit of one append (10 partitions)':44s}{fmt_s(c['icefloe_s']):>14s}"
                 f"{fmt_s(c['pypaimon_s']):>14s}{c['speedup']:8.1f}x")
    lines.extend(planning_lines(p["filters"], "pypaimon"))
    return lines


def fmt_s(s: float) -> str:
    return f"{s * 1000:.1f} ms"
