"""(f) Paimon primary-key tables: upserts and merged reads.

* upsert: 1% of the keys of a ``rows``-row table (bucket 4, deduplicate) upserted by icefloe
  (``t.append(df)``: Spark tasks per bucket) against pypaimon's batch write of the same rows
  into an identical copy of the table;
* merged read: ``sum(hash(*))`` over ``t.to_spark()`` (one Spark task merges each bucket)
  against pypaimon's read of the same table, and against plain Spark Parquet reading the
  same (already merged) rows.

Best of ``runs`` after a warm-up, icefloe and the baseline interleaved; every run of a pair
sees the same table state (each upsert run adds one commit to both copies).
"""
from __future__ import annotations

import os
import shutil
import time

from bench.paimon import _interleaved


def bench_paimon_pk(spark, work: str, rows: int, runs: int, quiesce) -> dict:
    import pyarrow as pa
    from pypaimon import CatalogFactory

    from icefloe.catalog import Catalog

    wh = os.path.join(work, "paimon-pk-wh")
    cat = Catalog(wh, "paimon", spark)
    t = cat.create_table("bench.pk", "id bigint not null, v double, s string",
                         properties={"primary-key": "id", "bucket": "4", "file.compression": "zstd"})
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
    pcat = CatalogFactory.create({"warehouse": twin_wh})

    def theirs_upsert():
        pt = pcat.get_table("bench.pk")
        wb = pt.new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(arrow_updates)
        c.commit(w.prepare_commit())
        w.close()
        c.close()

    ours_up, theirs_up, _ = _interleaved(lambda: t.append(updates), theirs_upsert, runs, quiesce)
    updates.unpersist()

    agg = "sum(hash(id, v, s)) as h"

    def theirs_read():
        pt = pcat.get_table("bench.pk")
        rb = pt.new_read_builder()
        return rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows

    ours_rd, theirs_rd, res = _interleaved(lambda: t.refresh().to_spark().count(), theirs_read, runs, quiesce)
    if res["ours"] != res["theirs"] or res["ours"] != rows:
        raise AssertionError(f"merged read: icefloe {res['ours']} rows, pypaimon {res['theirs']}, expected {rows}")
    plain = os.path.join(work, "paimon-pk-plain")
    t.to_spark().write.option("compression", "zstd").parquet(plain)
    schema = spark.read.parquet(plain).schema
    ours_agg, plain_agg, res2 = _interleaved(lambda: t.to_spark().selectExpr(agg).collect()[0][0],
                                             lambda: spark.read.schema(schema).parquet(plain).selectExpr(agg)
                                             .collect()[0][0], runs, quiesce)
    if res2["ours"] != res2["theirs"]:
        raise AssertionError(f"merged read: icefloe {res2['ours']!r}, plain Spark {res2['theirs']!r}")
    return {"rows": rows, "upserted": n_up, "files": len(t.plan_files()), "load_s": load_s,
            "upsert": {"icefloe_s": ours_up, "pypaimon_s": theirs_up, "speedup": theirs_up / ours_up},
            "read_vs_pypaimon": {"icefloe_s": ours_rd, "pypaimon_s": theirs_rd, "speedup": theirs_rd / ours_rd},
            "read_vs_parquet": {"icefloe_s": ours_agg, "spark_parquet_s": plain_agg, "ratio": plain_agg / ours_agg}}


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
