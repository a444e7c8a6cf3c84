"""(f) Paimon primary-key tables: upserts and merged reads.

* upsert: 1% of the keys of a ``rows``-row table (bucket 4, deduplicate) upserted by icefloe
  (``t.append(df)``: Spark tasks per bucket) against pypaimon's batch write of the same rows
  into an identical copy of the table;
* merged read: ``sum(hash(*))`` over ``t.to_spark()`` (one Spark task merges each bucket)
  against pypaimon's read of the same table, and against plain Spark Parquet reading the
  same (already merged) rows.

* sorted runs (``bench_paimon_runs``): the merged read of a table whose buckets hold 10 sorted
  runs (a load and nine 10% upserts, ``write-only`` so none is compacted), the full compaction
  against a plain Spark rewrite of the same rows, and the read after it, each read against plain
  Spark Parquet holding the same merged rows (target: after compaction at least 0.8x).

Best of ``runs`` after a warm-up, icefloe and the baseline interleaved; every run of a pair
sees the same table state (each upsert run adds one commit to both copies). The upsert table is
``write-only`` (pypaimon's batch writes do not compact either), so the two do the same work.
pypaimon runs in its own environment (``tools/pypaimon_side.py`` in its worker); its figures are the
seconds measured there.
"""
from __future__ import annotations

import os
import shutil
import time

from bench.paimon import READ_SECONDS, _interleaved, in_worker, pypaimon_side, quiesce_worker


def bench_paimon_pk(spark, work: str, rows: int, runs: int, quiesce) -> dict:
    import pyarrow as pa

    from icefloe.catalog import Catalog

    wh = os.path.join(work, "paimon-pk-wh")
    cat = Catalog(wh, "paimon", spark)
    t = cat.create_table("bench.pk", "id bigint not null, v double, s string",
                         properties={"primary-key": "id", "bucket": "4", "file.compression": "zstd",
                                     "write-only": "true"})
    base = spark.range(0, rows, numPartitions=spark.sparkContext.defaultParallelism).selectExpr(
        "id", "cast(rand(7) * 1000000 as double) as v", "concat('name-', cast(id % 10007 as string)) as s")
    t0 = time.perf_counter()
    t.append(base)
    load_s = time.perf_counter() - t0
    n_up = max(1, rows // 100)
    updates = spark.range(0, n_up).selectExpr("id * 97 % {0} as id".format(rows), "cast(-1 as double) as v",
                                              "'updated' as s").cache()
    updates.count()
    arrow_updates = pa.Table.from_pylist([r.asDict() for r in updates.collect()],
                                         schema=pa.schema([pa.field("id", pa.int64(), nullable=False),
                                                           ("v", pa.float64()), ("s", pa.string())]))
    twin_wh = os.path.join(work, "paimon-pk-twin")
    shutil.copytree(wh, twin_wh)
    pcat = pypaimon_side.catalog(twin_wh)  # one catalog, kept in the worker; the table is loaded anew each run
    quiesce_both = quiesce_worker(quiesce)

    def theirs_upsert():
        return in_worker("append_arrow", pcat, "bench.pk", arrow_updates)

    ours_up, theirs_up, _ = _interleaved(lambda: t.append(updates), theirs_upsert, runs, quiesce_both)
    updates.unpersist()

    agg = "sum(hash(id, v, s)) as h"

    def theirs_read():
        return in_worker("merged_row_count", pcat, "bench.pk")

    ours_rd, theirs_rd, res = _interleaved(lambda: t.refresh().to_spark().count(), theirs_read, runs, quiesce_both)
    if res["ours"] != res["theirs"] or res["ours"] != rows:
        raise AssertionError(f"merged read: icefloe {res['ours']} rows, pypaimon {res['theirs']}, expected {rows}")
    plain = os.path.join(work, "paimon-pk-plain")
    t.to_spark().write.option("compression", "zstd").parquet(plain)
    schema = spark.read.parquet(plain).schema
    ours_agg, plain_agg, res2 = _interleaved(lambda: t.to_spark().selectExpr(agg).collect()[0][0],
                                             lambda: spark.read.schema(schema).parquet(plain).selectExpr(agg)
                                             .collect()[0][0], runs, quiesce, READ_SECONDS)
    if res2["ours"] != res2["theirs"]:
        raise AssertionError(f"merged read: icefloe {res2['ours']!r}, plain Spark {res2['theirs']!r}")
    return {"rows": rows, "upserted": n_up, "files": len(t.plan_files()), "load_s": load_s,
            "upsert": {"icefloe_s": ours_up, "pypaimon_s": theirs_up, "speedup": theirs_up / ours_up},
            "read_vs_pypaimon": {"icefloe_s": ours_rd, "pypaimon_s": theirs_rd, "speedup": theirs_rd / ours_rd},
            "read_vs_parquet": {"icefloe_s": ours_agg, "spark_parquet_s": plain_agg, "ratio": plain_agg / ours_agg}}


def _loaded_table(spark, wh: str, name: str, rows: int, options: dict):
    """A primary-key table of ``rows`` rows (id, a double, a string), bucket 4, zstd."""
    from icefloe.catalog import Catalog

    t = Catalog(wh, "paimon", spark).create_table(
        name, "id bigint not null, v double, s string",
        properties={"primary-key": "id", "bucket": "4", "file.compression": "zstd", **options})
    t.append(spark.range(0, rows, numPartitions=spark.sparkContext.defaultParallelism).selectExpr(
        "id", "cast(rand(7) * 1000000 as double) as v", "concat('name-', cast(id % 10007 as string)) as s"))
    return t


def bench_paimon_runs(spark, work: str, rows: int, runs: int, quiesce) -> dict:
    from icefloe.paimon.kv_compact import sorted_runs

    t = _loaded_table(spark, os.path.join(work, "paimon-runs-wh"), "bench.runs", rows, {"write-only": "true"})
    for u in range(9):
        t.append(spark.range(0, rows // 10).selectExpr(f"(id * 10 + {u}) % {rows} as id",
                                                        f"cast({u} as double) as v", "'upserted' as s"))
    by_bucket: dict = {}
    for e in t.plan():
        by_bucket.setdefault(e.bucket, []).append(e)
    sorted_run_count = max(len(sorted_runs(es)) for es in by_bucket.values())
    agg = "sum(hash(id, v, s)) as h"
    plain = os.path.join(work, "paimon-runs-plain")
    t.to_spark().write.option("compression", "zstd").parquet(plain)
    schema = spark.read.parquet(plain).schema

    def plain_read():
        return spark.read.schema(schema).parquet(plain).selectExpr(agg).collect()[0][0]

    merged_s, plain_s, res = _interleaved(lambda: t.to_spark().selectExpr(agg).collect()[0][0], plain_read, runs,
                                          quiesce, READ_SECONDS)
    if res["ours"] != res["theirs"]:
        raise AssertionError(f"merged read of {sorted_run_count} runs: {res['ours']!r} vs plain {res['theirs']!r}")
    quiesce()
    t0 = time.perf_counter()
    t.rewrite_data_files()
    compact_s = time.perf_counter() - t0
    rewrite = os.path.join(work, "paimon-runs-rewrite")
    quiesce()
    t0 = time.perf_counter()
    spark.read.schema(schema).parquet(plain).write.option("compression", "zstd").parquet(rewrite)
    rewrite_s = time.perf_counter() - t0
    compacted_s, plain2_s, res2 = _interleaved(lambda: t.to_spark().selectExpr(agg).collect()[0][0], plain_read,
                                               runs, quiesce, READ_SECONDS)
    if res2["ours"] != res2["theirs"]:
        raise AssertionError(f"read after compaction: {res2['ours']!r} vs plain {res2['theirs']!r}")
    vectors = _bench_vectors(spark, work, rows, runs, quiesce, agg)
    return {"rows": rows, "sorted_runs": sorted_run_count,
            "read_runs": {"icefloe_s": merged_s, "spark_parquet_s": plain_s, "ratio": plain_s / merged_s},
            "compaction": {"icefloe_s": compact_s, "spark_rewrite_s": rewrite_s, "ratio": rewrite_s / compact_s},
            "read_compacted": {"icefloe_s": compacted_s, "spark_parquet_s": plain2_s, "ratio": plain2_s / compacted_s},
            "vectors": vectors}


def _bench_vectors(spark, work: str, rows: int, runs: int, quiesce, agg: str) -> dict:
    """The same rows in a table with deletion vectors after three upserts of 1% of the keys (each
    compacted with its keys' old records marked): its read against plain Parquet of the same rows."""
    from icefloe.paimon import deletion_vectors as dv

    t = _loaded_table(spark, os.path.join(work, "paimon-dv-wh"), "bench.dv", rows, {"deletion-vectors.enabled": "true"})
    quiesce()
    t0 = time.perf_counter()
    for u in range(3):
        t.append(spark.range(0, rows // 100).selectExpr(f"(id * 100 + {u}) % {rows} as id",
                                                       f"cast({u} as double) as v", "'upserted' as s"))
    upsert_s = (time.perf_counter() - t0) / 3
    marked = sum(card for bv in dv.bucket_vectors(t.store, t.current_snapshot()).values()
                 for _o, _s, card in bv.ranges.values())
    plain = os.path.join(work, "paimon-dv-plain")
    t.to_spark().write.option("compression", "zstd").parquet(plain)
    schema = spark.read.parquet(plain).schema
    ours_s, plain_s, res = _interleaved(lambda: t.to_spark().selectExpr(agg).collect()[0][0],
                                        lambda: spark.read.schema(schema).parquet(plain).selectExpr(agg).collect()[0][0],
                                        runs, quiesce, READ_SECONDS)
    if res["ours"] != res["theirs"]:
        raise AssertionError(f"read with deletion vectors: {res['ours']!r} vs plain {res['theirs']!r}")
    return {"marked": marked, "files": len(t.plan()), "upsert_s": upsert_s,
            "read": {"icefloe_s": ours_s, "spark_parquet_s": plain_s, "ratio": plain_s / ours_s}}


def report_runs_lines(r: dict) -> list:
    return [
        f"  sorted runs: {r['rows']:,} rows, {r['sorted_runs']} runs per bucket "
        "(ratio = plain Spark time / icefloe time; target after compaction >= 0.8)",
        f"{'    merged read of the runs, sum(hash(*))':44s}{r['read_runs']['icefloe_s']:14.2f} s"
        f"{r['read_runs']['spark_parquet_s']:14.2f} s{r['read_runs']['ratio']:8.2f}",
        f"{'    full compaction vs a plain Spark rewrite':44s}{r['compaction']['icefloe_s']:14.2f} s"
        f"{r['compaction']['spark_rewrite_s']:14.2f} s{r['compaction']['ratio']:8.2f}",
        f"{'    read after compaction, sum(hash(*))':44s}{r['read_compacted']['icefloe_s']:14.2f} s"
        f"{r['read_compacted']['spark_parquet_s']:14.2f} s{r['read_compacted']['ratio']:8.2f}",
        f"{'    read with deletion vectors, sum(hash(*))':44s}{r['vectors']['read']['icefloe_s']:14.2f} s"
        f"{r['vectors']['read']['spark_parquet_s']:14.2f} s{r['vectors']['read']['ratio']:8.2f}   "
        f"({r['vectors']['marked']:,} rows marked in {r['vectors']['files']} files; "
        f"an upsert of 1% with its compaction {r['vectors']['upsert_s']:.1f} s)",
    ]


def report_lines(r: dict) -> list:
    return [
        f"(f) Paimon primary-key table: {r['rows']:,} rows, bucket 4, deduplicate "
        f"(loaded in {r['load_s']:.1f} s; {r['files']} files after the upserts)",
        f"{'  upsert of ' + format(r['upserted'], ',') + ' keys (1%)':44s}{r['upsert']['icefloe_s']:14.2f} s"
        f"{r['upsert']['pypaimon_s']:14.2f} s{r['upsert']['speedup']:8.1f}x  vs pypaimon",
        f"{'  merged read, count()':44s}{r['read_vs_pypaimon']['icefloe_s']:14.2f} s"
        f"{r['read_vs_pypaimon']['pypaimon_s']:14.2f} s{r['read_vs_pypaimon']['speedup']:8.1f}x  vs pypaimon",
        f"{'  merged read, sum(hash(*))':44s}{r['read_vs_parquet']['icefloe_s']:14.2f} s"
        f"{r['read_vs_parquet']['spark_parquet_s']:14.2f} s{r['read_vs_parquet']['ratio']:8.2f}   "
        "vs plain Spark Parquet (same rows)",
    ]
