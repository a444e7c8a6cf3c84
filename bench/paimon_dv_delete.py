"""DELETE on a Paimon append table with deletion vectors, at scale: the driver's peak RSS and time.

``python -m bench.paimon_dv_delete make DIR --rows 10000000`` writes the table ``db.t`` (``id``, ``v``;
'deletion-vectors.enabled', ``bucket = -1``) in the Paimon warehouse DIR; ``python -m
bench.paimon_dv_delete delete DIR --percent 1`` copies that warehouse, deletes ``id % (100 / percent) =
0`` from the copy (scattered rows in every file: one mark per deleted row), and prints, as JSON, the
statement's time, the rows it reports, the marks its vectors hold after it, and the peak RSS of the
driver's Python process and of the JVM (``VmHWM``) before and after. Run each side in a fresh process;
compare ratios of one run on a shared machine.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time

TABLE = "db.t"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _jvm_hwm_mb(spark) -> float:
    """The JVM's peak resident size (``VmHWM``, Linux), in MB."""
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()  # noqa: SLF001
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def make(warehouse: str, rows: int) -> None:
    from icefloe.catalog import Catalog
    from icefloe.spark.session import get_spark

    spark = get_spark()
    t = Catalog(warehouse, "paimon", spark).create_table(
        TABLE, "id bigint not null, v string", properties={"deletion-vectors.enabled": "true", "bucket": "-1"})
    t.append(spark.range(rows, numPartitions=8).selectExpr("id", "concat('v', cast(id as string)) AS v"))
    print(json.dumps({"rows": rows, "files": len(t.refresh().plan())}))


def delete(warehouse: str, percent: float) -> None:
    from icefloe.catalog import Catalog
    from icefloe.paimon import deletion_vectors as dv
    from icefloe.spark.session import get_spark

    every = round(100 / percent)
    with tempfile.TemporaryDirectory(prefix="pdv-") as tmp:
        copy = os.path.join(tmp, "wh")
        shutil.copytree(warehouse, copy)
        spark = get_spark()
        t = Catalog(copy, "paimon", spark).load_table(TABLE)
        spark.range(1).collect()             # the session up before the figures start
        rss0, jvm0 = _rss_mb(), _jvm_hwm_mb(spark)
        start = time.perf_counter()
        r = t.delete(f"id % {every} = 0")
        took = time.perf_counter() - start
        rss1, jvm1 = _rss_mb(), _jvm_hwm_mb(spark)
        marks = sum(len(b) for bv in dv.bucket_vectors(t.store, t.refresh().current_snapshot()).values()
                    for b in bv.load(t.io).values())
        print(json.dumps({"percent": percent, "seconds": round(took, 2), "deleted": r.deleted, "marks": marks,
                          "driver_py_peak_mb": [round(rss0), round(rss1)],
                          "driver_jvm_peak_mb": [round(jvm0), round(jvm1)], "load": os.getloadavg()[0]}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["make", "delete"])
    p.add_argument("warehouse")
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--percent", type=float, default=1.0)
    a = p.parse_args()
    if a.action == "make":
        make(a.warehouse, a.rows)
    else:
        delete(a.warehouse, a.percent)


if __name__ == "__main__":
    main()
