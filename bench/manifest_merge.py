"""The commit that merges manifests, timed at scale (issue 51): an append to ``bench.commit_scale``'s
Iceberg table of N files with ``commit.manifest.min-count-to-merge`` set low, so that the append's
manifest, the small ones after the last merge and the large merged manifest (~500k entries at 1M
files) are merged into one.

``python -m bench.manifest_merge SOURCE_WAREHOUSE [--runs 3] [--java] [--entry-merge]``: each run
copies the warehouse (its ``bench/scale`` table) afresh and times one append from loading the table
(icefloe, in this process; with ``--java`` Apache Iceberg's Java runtime the same merge,
``newAppend()``; with ``--entry-merge`` icefloe merges entry by entry, as before the copying merge).
The machine may be shared: compare ratios of one run (the load average is reported).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

from bench import scale

MIN_COUNT = "2"


def _copy(src: str) -> str:
    dst = tempfile.mkdtemp(prefix="imerge-")
    shutil.copytree(src, os.path.join(dst, "wh"))
    return os.path.join(dst, "wh")


def _prepare(wh: str) -> None:
    import icefloe

    icefloe.Catalog(wh).load_table("bench.scale").update_properties(
        set={"commit.manifest.min-count-to-merge": MIN_COUNT})


def icefloe_merge(wh: str, n: int) -> dict:
    import icefloe

    cat = icefloe.Catalog(wh)
    t0 = time.perf_counter()
    t = cat.load_table("bench.scale")
    t.commit_files([scale._one_file(t.location.rstrip("/"), n, 999)])
    return {"seconds": time.perf_counter() - t0}


def java_merge(wh: str, n: int) -> dict:
    times = scale.commits_java(wh, n, 1)
    return {"seconds": times[0]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--java", action="store_true")
    ap.add_argument("--entry-merge", action="store_true")
    a = ap.parse_args(argv)
    if a.entry_merge:
        from icefloe.iceberg import snapshot_producer

        snapshot_producer.FAST_MERGE = False
    out: dict = {"load": os.getloadavg()[0], "icefloe": [], "java": []}
    for _ in range(a.runs):
        for engine in (["icefloe", "java"] if a.java else ["icefloe"]):
            wh = _copy(a.source)
            try:
                _prepare(wh)
                r = (icefloe_merge if engine == "icefloe" else java_merge)(wh, a.files)
                out[engine].append(round(r["seconds"], 3))
            finally:
                shutil.rmtree(os.path.dirname(wh), ignore_errors=True)
            print(engine, out[engine][-1], file=sys.stderr, flush=True)
    out["load_end"] = os.getloadavg()[0]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
