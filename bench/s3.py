"""(i) Object stores: the same work with the warehouse on an S3 server (moto, on the loopback
address, started here) and on the local disk, and scan planning on the S3 table against pyiceberg
(its own S3 FileIO) on the same table.

* append: ``t.append(df)`` of a cached DataFrame, Iceberg and Paimon, S3 time / local time;
* scan: ``count()`` and ``sum(hash(*))`` over ``t.to_spark()``, S3 / local;
* planning: ``t.plan_files()`` vs pyiceberg ``StaticTable.scan().plan_files()`` on an S3 table of
  many small commits, cold (table loaded, caches cleared) and warm; speedups are pyiceberg / icefloe.

The S3 server is a Python process on this machine, so the S3 figures measure the protocol path
(requests, no rename, Python tasks doing the data I/O), not a network.
"""
from __future__ import annotations

import uuid

import pyarrow as pa


def _best(fn, runs: int, quiesce, before=None):
    import time

    times, out = [], None
    for i in range(runs + 1):
        if before:
            before()
        quiesce()
        t0 = time.perf_counter()
        out = fn()
        if i:
            times.append(time.perf_counter() - t0)
    return min(times), out


def bench_s3(spark, rows: int, commits: int, runs: int, quiesce, work: str) -> dict:
    import icefloe
    from icefloe.iceberg import manifest_reader
    from tools.s3_server import S3Server

    server = S3Server()
    try:
        props = server.properties
        df = spark.range(rows).selectExpr("id", "cast(id % 1000 as string) as name", "rand(7) as score",
                                          "timestamp'2024-01-01' + make_interval(0, 0, 0, 0, 0, 0, id % 86400) as ts")
        df = df.cache()
        df.count()
        out: dict = {"rows": rows, "append": {}, "scan": {}}
        for fmt in ("iceberg", "paimon"):
            cats = {"local": icefloe.Catalog(f"{work}/s3-local-{fmt}", format=fmt, spark=spark),
                    "s3": icefloe.Catalog(f"s3://{server.new_bucket()}/wh", format=fmt, spark=spark, **props)}
            times = {}
            for where, cat in cats.items():
                def append(cat=cat):
                    t = cat.create_table(f"db.t{uuid.uuid4().hex[:8]}", "id bigint, name string, score double, ts timestamp")
                    t.append(df)
                    return t

                times[where], table = _best(append, runs, quiesce)
                scan_s, counted = _best(lambda: (table.to_spark().count(),
                                                 table.to_spark().selectExpr("sum(hash(*))").collect()), runs, quiesce)
                assert counted[0] == rows, (fmt, where, counted)
                out["scan"].setdefault(fmt, {})[f"{where}_s"] = scan_s
            out["append"][fmt] = {"local_s": times["local"], "s3_s": times["s3"], "ratio": times["s3"] / times["local"]}
            sc = out["scan"][fmt]
            sc["ratio"] = sc["s3_s"] / sc["local_s"]
        df.unpersist()

        # planning on the S3 table, icefloe against pyiceberg
        from pyiceberg.manifest import clear_manifest_cache
        from pyiceberg.table import StaticTable

        cat = icefloe.Catalog(f"s3://{server.new_bucket()}/wh", spark=spark, **props)
        t = cat.create_table("db.plan", "id bigint, p int")
        for c in range(commits):
            t.append(pa.table({"id": pa.array(range(c * 10, c * 10 + 10), pa.int64()),
                               "p": pa.array([c % 10] * 10, pa.int32())}))
        loc = t.metadata_location

        def ours():
            return len(cat.load_table("db.plan").plan_files())

        def theirs():
            return len(list(StaticTable.from_metadata(loc, properties=props).scan().plan_files()))

        ours_cold, n_ours = _best(ours, runs, quiesce, before=manifest_reader.clear_manifest_cache)
        theirs_cold, n_theirs = _best(theirs, runs, quiesce, before=clear_manifest_cache)
        assert n_ours == n_theirs == commits, (n_ours, n_theirs)
        warm_t = cat.load_table("db.plan")
        warm_p = StaticTable.from_metadata(loc, properties=props)
        ours_warm, _ = _best(lambda: len(warm_t.plan_files()), runs, quiesce)
        theirs_warm, _ = _best(lambda: len(list(warm_p.scan().plan_files())), runs, quiesce)
        out["planning"] = {"commits": commits, "icefloe_cold_s": ours_cold, "pyiceberg_cold_s": theirs_cold,
                           "icefloe_warm_s": ours_warm, "pyiceberg_warm_s": theirs_warm,
                           "speedup_cold": theirs_cold / ours_cold, "speedup_warm": theirs_warm / ours_warm}
        return out
    finally:
        server.stop()


def report_lines(res: dict) -> list[str]:
    lines = [f"(i) object stores (S3 server on this machine), {res['rows']:,} rows",
             "  work                 local      S3       S3 / local"]
    for fmt in ("iceberg", "paimon"):
        a, s = res["append"][fmt], res["scan"][fmt]
        lines.append(f"  {fmt:8s} append     {a['local_s']:7.2f}s {a['s3_s']:7.2f}s   {a['ratio']:.2f}")
        lines.append(f"  {fmt:8s} scan       {s['local_s']:7.2f}s {s['s3_s']:7.2f}s   {s['ratio']:.2f}")
    p = res["planning"]
    lines.append(f"  planning on S3, {p['commits']} commits: icefloe {p['icefloe_cold_s'] * 1000:.0f} ms cold / "
                 f"{p['icefloe_warm_s'] * 1000:.1f} ms warm, pyiceberg {p['pyiceberg_cold_s'] * 1000:.0f} ms / "
                 f"{p['pyiceberg_warm_s'] * 1000:.1f} ms: {p['speedup_cold']:.1f}x / {p['speedup_warm']:.1f}x faster")
    return lines
