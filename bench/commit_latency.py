"""Commit latency: N small appends (one row each, from Arrow, no Spark) through the table API on a
Hadoop warehouse and on a SQL catalog (SQLite), best of R rounds, each round on a new table.

    python -m bench.commit_latency [--appends 200] [--rounds 3]

Prints one JSON object: per catalog, the best round's total seconds and milliseconds per append.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time


def _round(kind: str, work: str, appends: int) -> float:
    import pyarrow as pa

    import icefloe

    kw = {"type": "sql", "uri": f"sqlite:///{work}/c.db"} if kind == "sql" else {}
    cat = icefloe.Catalog(f"{work}/wh", **kw)
    cat.create_namespace("db")
    t = cat.create_table("db.t", "id bigint, s string")
    rows = [pa.table({"id": pa.array([i], pa.int64()), "s": [str(i)]}) for i in range(appends)]
    started = time.perf_counter()
    for r in rows:
        t.append(r)
    elapsed = time.perf_counter() - started
    assert len(t.snapshots()) == appends
    return elapsed


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--appends", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    out = {}
    for kind in ("hadoop", "sql"):
        times = []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix="icefloe-commit-bench-") as work:
                times.append(_round(kind, work, args.appends))
        best = min(times)
        out[kind] = {"best_s": round(best, 2), "ms_per_append": round(1000 * best / args.appends, 1),
                     "rounds_s": [round(x, 2) for x in times]}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
