"""(g) Structured Streaming: the icefloe sink against Spark's own file sink (plain Parquet).

* sustained throughput: the same folder of Parquet input files streamed with
  ``Trigger.AvailableNow`` and ``maxFilesPerTrigger`` (several micro-batches) into an Iceberg
  table, a Paimon table and Spark's Parquet file sink; rows per second over the whole run,
  query start to end (each run a fresh checkpoint and target);
* latency: a running query with a 0.5 s processing-time trigger; a new input file is dropped
  in and the time until its rows are readable in the target is measured (the table's latest
  snapshot / the file sink's log), median of several files.
"""
from __future__ import annotations

import os
import shutil
import statistics
import time

SCHEMA = "id long, name string, v double, ts timestamp"


def _write_inputs(spark, folder: str, rows: int, files: int) -> None:
    (spark.range(0, rows, numPartitions=files)
     .selectExpr("id", "concat('name-', cast(id % 1000 as string)) AS name", "cast(rand(3) * 1000 as double) AS v",
                 "timestamp_seconds(1700000000 + id) AS ts")
     .write.mode("overwrite").option("compression", "zstd").parquet(folder))


def _sink(df, kind: str, target: str, checkpoint: str):
    w = df.writeStream.option("checkpointLocation", checkpoint)
    if kind == "parquet":
        return w.format("parquet").option("compression", "zstd").option("path", target)
    return w.format("icefloe").option("format", kind).option("path", target)


def _throughput(spark, src: str, kind: str, work: str, rows: int, per_batch: int, runs: int, quiesce) -> float:
    best = None
    for i in range(runs + 1):
        target = os.path.join(work, f"{kind}-tp", "db.db" if kind == "paimon" else "db", f"t{i}")
        cp = os.path.join(work, f"{kind}-tp-cp{i}")
        quiesce()
        t0 = time.perf_counter()
        src_df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", per_batch).parquet(src)
        q = _sink(src_df, kind, target, cp).trigger(availableNow=True).start()
        q.awaitTermination()
        dt = time.perf_counter() - t0
        if i > 0:       # the first run warms up
            best = dt if best is None else min(best, dt)
    return rows / best


_FOOTER_ROWS: dict = {}


def _visible_rows(spark, kind: str, target: str) -> int:
    if kind == "parquet":
        return _file_sink_rows(target)
    return _latest_count(kind, target)


def _file_sink_rows(target: str) -> int:
    """Rows of the files the Parquet file sink's log lists as committed (footers, cached)."""
    import json

    import pyarrow.parquet as pq

    log = os.path.join(target, "_spark_metadata")
    if not os.path.isdir(log):
        return 0
    total = 0
    for name in os.listdir(log):
        if not name.isdigit():
            continue
        with open(os.path.join(log, name)) as f:
            for line in f.read().splitlines()[1:]:
                path = json.loads(line)["path"]
                if path not in _FOOTER_ROWS:
                    _FOOTER_ROWS[path] = pq.ParquetFile(path.replace("file://", "").replace("file:", "")) \
                        .metadata.num_rows
                total += _FOOTER_ROWS[path]
    return total


def _latest_count(kind: str, target: str) -> int:
    """Rows in the table's latest snapshot, from its metadata (no data read)."""
    import json

    if kind == "paimon":
        hint = os.path.join(target, "snapshot", "LATEST")
        if not os.path.exists(hint):
            return 0
        with open(hint) as f:
            sid = int(f.read().strip())
        with open(os.path.join(target, "snapshot", f"snapshot-{sid}")) as f:
            return int(json.load(f).get("totalRecordCount") or 0)
    hint = os.path.join(target, "metadata", "version-hint.text")
    if not os.path.exists(hint):
        return 0
    with open(hint) as f:
        version = f.read().strip()
    with open(os.path.join(target, "metadata", f"v{version}.metadata.json")) as f:
        meta = json.load(f)
    snaps = {s["snapshot-id"]: s for s in meta.get("snapshots", [])}
    cur = snaps.get(meta.get("current-snapshot-id"))
    return int(cur["summary"].get("total-records", 0)) if cur else 0


def _latency(spark, kind: str, work: str, samples: int, rows_per_file: int) -> float:
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = os.path.join(work, f"{kind}-lat-in")
    os.makedirs(src, exist_ok=True)
    target = os.path.join(work, f"{kind}-lat", "db.db" if kind == "paimon" else "db", "t")

    def drop(n: int) -> None:
        ids = pa.array(range(n * rows_per_file, (n + 1) * rows_per_file), pa.int64())
        data = pa.table({"id": ids, "name": pa.array(["x"] * len(ids)), "v": pa.array([1.0] * len(ids)),
                         "ts": pa.array([0] * len(ids), pa.timestamp("us", tz="UTC"))})
        tmp = os.path.join(work, f"{kind}-lat-tmp.parquet")
        pq.write_table(data, tmp)
        os.rename(tmp, os.path.join(src, f"in-{n:04d}.parquet"))   # appears whole

    drop(0)
    src_df = spark.readStream.schema(SCHEMA).parquet(src)
    q = _sink(src_df, kind, target, os.path.join(work, f"{kind}-lat-cp")).trigger(processingTime="500 milliseconds") \
        .start()
    try:
        deadline = time.time() + 120
        while _visible_rows(spark, kind, target) < rows_per_file and time.time() < deadline:
            time.sleep(0.05)
        out = []
        for n in range(1, samples + 1):
            t0 = time.perf_counter()
            drop(n)
            want = (n + 1) * rows_per_file
            deadline = time.time() + 120
            while _visible_rows(spark, kind, target) < want and time.time() < deadline:
                time.sleep(0.02)
            out.append(time.perf_counter() - t0)
        return statistics.median(out)
    finally:
        q.stop()


def bench_streaming(spark, work: str, rows: int, runs: int, quiesce) -> dict:
    src = os.path.join(work, "stream-in")
    files = 40
    _write_inputs(spark, src, rows, files)
    per_batch = 4
    out: dict = {"rows": rows, "files": files, "files_per_batch": per_batch, "throughput_rows_s": {},
                 "latency_s": {}}
    for kind in ("parquet", "iceberg", "paimon"):
        out["throughput_rows_s"][kind] = _throughput(spark, src, kind, work, rows, per_batch, runs, quiesce)
    for kind in ("parquet", "iceberg", "paimon"):
        out["latency_s"][kind] = _latency(spark, kind, work, samples=5, rows_per_file=1000)
    tp = out["throughput_rows_s"]
    out["ratios"] = {k: tp[k] / tp["parquet"] for k in ("iceberg", "paimon")}
    shutil.rmtree(src, ignore_errors=True)
    return out


def report_lines(r: dict) -> list:
    tp, lat = r["throughput_rows_s"], r["latency_s"]
    lines = [f"(g) streaming sink: {r['rows']:,} rows in {r['files']} files, {r['files_per_batch']} files per "
             "micro-batch (rows/s, higher is better; ratio against Spark's Parquet file sink)"]
    for k in ("parquet", "iceberg", "paimon"):
        ratio = "" if k == "parquet" else f"{tp[k] / tp['parquet']:8.2f}x"
        lines.append(f"  {k:10s} {tp[k]:14,.0f} rows/s{ratio}   latency of a new file "
                     f"(0.5 s trigger): {lat[k]:.2f} s")
    return lines
