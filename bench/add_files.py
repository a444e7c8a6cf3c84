"""(l) ``add_files`` of many small Parquet files: icefloe against Apache Iceberg's Spark runtime (Java).

``FILES`` tiny Parquet files (``ROWS_PER_FILE`` rows each: id, a string, a double) in Hive-style
directories ``p=0`` .. ``p=<PARTITIONS - 1>`` are generated once (kept under ``bench/out``) and
added, where they are, to a new table partitioned by ``p`` of each engine: icefloe's
``CALL local.system.add_files`` (footers read by Spark tasks, the driver commits one snapshot) and
the runtime's ``CALL jvm.system.add_files`` on Spark 3.5, with its default ``parallelism`` (1 thread
reading footers) and with ``parallelism`` 2 (the cores of ``local[2]``). Each figure is the best of
``runs``, each run on a fresh table; the time is the call alone, measured inside each process.
Both tables are checked to hold every row afterwards.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time

FILES = 10_000
ROWS_PER_FILE = 10
PARTITIONS = 10


def source_files(out_dir: str, files: int = FILES) -> str:
    """The directory of ``files`` tiny Parquet files, written on the first call only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = os.path.join(out_dir, f"add_files_source_{files}")
    done = os.path.join(root, "_DONE")
    if os.path.exists(done):
        return root
    shutil.rmtree(root, ignore_errors=True)
    for i in range(files):
        part = os.path.join(root, f"p={i % PARTITIONS}")
        os.makedirs(part, exist_ok=True)
        ids = pa.array(range(i * ROWS_PER_FILE, (i + 1) * ROWS_PER_FILE), pa.int64())
        pq.write_table(pa.table({"id": ids, "name": [f"n{j}" for j in range(ROWS_PER_FILE)],
                                 "v": pa.array([float(j) for j in range(ROWS_PER_FILE)], pa.float64())}),
                       os.path.join(part, f"part-{i:05d}.parquet"))
    open(done, "w").close()
    return root


def _icefloe_run(spark, work: str, src: str, run: int, files: int) -> float:
    import icefloe

    cat = icefloe.Catalog(os.path.join(work, f"icefloe-{run}"), spark=spark)
    cat.create_table("db.t", "id bigint, name string, v double, p int", partitioned_by=["p"])
    start = time.perf_counter()
    out = cat.sql(f"CALL local.system.add_files(table => 'db.t', source_table => '`parquet`.`{src}`')").collect()
    elapsed = time.perf_counter() - start
    assert out[0][0] == files, out
    total = cat.load_table("db.t").to_spark().count()
    assert total == files * ROWS_PER_FILE, total
    return elapsed


JVM_SNIPPET = """
import time
spark.sql("CREATE TABLE jvm.db.t{run}_{par} (id bigint, name string, v double, p int) USING iceberg PARTITIONED BY (p)")
start = time.perf_counter()
out = spark.sql("CALL jvm.system.add_files(table => 'db.t{run}_{par}', source_table => '`parquet`.`{src}`'"
                + ({par} > 0 and ", parallelism => {par}" or "") + ")").collect()
elapsed = time.perf_counter() - start
total = spark.sql("SELECT count(*) FROM jvm.db.t{run}_{par}").collect()[0][0]
result = [elapsed, out[0][0], total]
"""


def bench_add_files(spark, runs: int, files: int, out_dir: str) -> dict:
    from tools.jvm_runtime import JvmRuntime, JvmRuntimeUnavailable

    t0 = time.perf_counter()
    src = source_files(out_dir, files)
    generate_s = time.perf_counter() - t0
    work = tempfile.mkdtemp(prefix="add-files-", dir=out_dir)
    try:
        ours = [_icefloe_run(spark, work, src, r, files) for r in range(runs)]
        res = {"files": files, "rows_per_file": ROWS_PER_FILE, "partitions": PARTITIONS, "runs": runs,
               "generate_s": round(generate_s, 2), "icefloe_s": round(min(ours), 3), "icefloe_runs": ours}
        try:
            with JvmRuntime(os.path.join(work, "jvm")) as jvm:
                jvm.sql("CREATE DATABASE IF NOT EXISTS jvm.db")
                for par in (0, 2):
                    times = []
                    for r in range(runs):
                        elapsed, added, total = jvm.run(JVM_SNIPPET.format(run=r, par=par, src=src))
                        assert added == files and total == files * ROWS_PER_FILE, (added, total)
                        times.append(elapsed)
                    res[f"jvm_parallelism_{par or 1}_s"] = round(min(times), 3)
                res["iceberg"] = jvm.version
        except JvmRuntimeUnavailable as e:
            res["jvm_skipped"] = str(e)
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report_lines(res: dict) -> list[str]:
    lines = ["", f"(l) add_files of {res['files']:,} Parquet files ({res['rows_per_file']} rows each, "
                 f"{res['partitions']} Hive partitions), best of {res['runs']}",
             f"  icefloe (footers in Spark tasks)            {res['icefloe_s']:8.2f}s"]
    if "jvm_skipped" in res:
        return lines + [f"  Iceberg Java: skipped ({res['jvm_skipped']})"]
    for par in (1, 2):
        jvm = res[f"jvm_parallelism_{par}_s"]
        lines.append(f"  Iceberg {res['iceberg']} Java, parallelism {par}         {jvm:8.2f}s   "
                     f"icefloe / Java {res['icefloe_s'] / jvm:5.2f}")
    return lines
