"""Row-level bench: MERGE of 1% of the rows into a table, copy-on-write vs merge-on-read.

For each mode: the MERGE's wall time, the files and bytes it wrote, and the time of
a full read afterwards (merge-on-read trades cheap writes for reads that apply
position deletes), then a compaction and the read time after it.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time


def bench_rowlevel(spark, quick: bool) -> dict:
    """Run the bench with ``spark``; ``quick`` uses 100k rows instead of 1M."""
    from pyspark.sql import functions as F

    from icefloe.catalog import Catalog

    rows = 100_000 if quick else 1_000_000
    root = tempfile.mkdtemp(prefix="icefloe-bench-rowlevel-")
    results: dict = {"rows": rows}
    try:
        cat = Catalog(os.path.join(root, "wh"), spark=spark)
        base = (spark.range(rows).select(F.col("id"), (F.col("id") % 16).alias("part"),
                                         F.sha2(F.col("id").cast("string"), 256).alias("payload")))
        # ~1% of the table's size, spread over every partition: half updates, half new rows
        src = (spark.range(0, 2 * rows, 199).select(F.col("id"), (F.col("id") % 16).alias("part"),
                                                     F.lit("merged").alias("payload")))
        for mode in ("copy-on-write", "merge-on-read"):
            name = "db.cow" if mode == "copy-on-write" else "db.mor"
            t = cat.create_table(name, "id bigint not null, part bigint, payload string", partitioned_by=["part"],
                                 properties={"write.merge.mode": mode})
            t.append(base)
            start = time.perf_counter()
            r = (t.merge(src, "t.id = s.id").when_matched_update({"payload": "s.payload"})
                 .when_not_matched_insert_all().execute())
            merge_s = time.perf_counter() - start
            sm = t.current_snapshot().summary
            start = time.perf_counter()
            n = t.to_spark().where("payload = 'merged'").count()
            read_s = time.perf_counter() - start
            start = time.perf_counter()
            t.rewrite_data_files()
            compact_s = time.perf_counter() - start
            start = time.perf_counter()
            n2 = t.to_spark().where("payload = 'merged'").count()
            read_after_s = time.perf_counter() - start
            assert n == n2 == r["updated"] + r["inserted"]
            results["merged_rows"] = n
            results[mode] = {
                "merge_s": round(merge_s, 3), "updated": r["updated"], "inserted": r["inserted"],
                "added_data_files": int(sm.get("added-data-files", 0)),
                "added_delete_files": int(sm.get("added-delete-files", 0)),
                "added_bytes": int(sm.get("added-files-size", 0)),
                "read_s": round(read_s, 3), "compact_s": round(compact_s, 3), "read_after_compact_s": round(read_after_s, 3),
            }
        return results
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    import json
    import sys

    from icefloe.spark.session import get_spark

    print(json.dumps(bench_rowlevel(get_spark(), quick="--quick" in sys.argv), indent=2))
