"""Paimon manifest compaction at scale: the merge from columns and record bytes (``paimon.manifest_merge``)
against the entry-by-entry merge, on one table in one process.

``python -m bench.paimon_manifest_merge [--table DIR]`` (default: ``bench.commit_scale``'s 1M-file
``paimon-pk`` warehouse, ``/tmp/cs/paimon-pk-n1000000``; copied, never changed). Thirty one-file
delta manifests are added beside the table's manifests (every third deleting a file of the first
manifest), then three compactions run each way, each on a freshly loaded table (no cached entries):
minor (the table's target size, ``merge-min-count`` 30), full (threshold 0: every DELETE applied)
and a merge of every manifest into new ones. CPU seconds are the figure to compare; the machine may
be shared (the load average is printed).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from typing import Any, Callable


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--table", default="/tmp/cs/paimon-pk-n1000000", help="a warehouse holding one table in bench.*")
    args = ap.parse_args()

    import icefloe
    from icefloe.paimon import commit as pc
    from icefloe.paimon import manifest as mf
    from icefloe.paimon import manifest_merge
    from icefloe.paimon.data_file import DataFileMeta

    work = tempfile.mkdtemp(prefix="imerge-")
    dst = os.path.join(work, "wh")
    shutil.copytree(args.table, dst)
    name = os.listdir(os.path.join(dst, "bench.db"))[0]

    def store() -> Any:
        return icefloe.Catalog(dst, format="paimon").load_table(f"bench.{name}").store

    s = store()
    base = s.data_manifests(s.snapshots.latest())
    first = s.read_manifest(base[0].file_name, base[0].file_size)
    rnd = random.Random(1)
    deltas: list[mf.ManifestFileMeta] = []
    for k in range(30):
        e = first[rnd.randrange(len(first))]
        entries = [mf.ManifestEntry(mf.ADD, e.partition, e.bucket, e.total_buckets,
                                    DataFileMeta(file_name=f"data-new-{k}.parquet", file_size=1000, row_count=10))]
        if k % 3 == 0:
            entries.append(mf.ManifestEntry(mf.DELETE, e.partition, e.bucket, e.total_buckets, e.file))
        deltas += s.write_manifests(entries, [])
    manifests = base + deltas
    target = s.options.manifest_target_file_size
    print(f"{len(base)} manifests of {sum(m.num_added_files for m in base):,} entries + {len(deltas)} deltas")
    cases: dict[str, Callable[[Any], list[mf.ManifestFileMeta]]] = {
        "minor": lambda st: pc.compact_manifests(st, manifests, [], target, 30, 1 << 40),
        "full": lambda st: pc.compact_manifests(st, manifests, [], target, 30, 0),
        "merge all": lambda st: pc.compact_manifests(st, manifests, [], 1 << 40, 2, 1 << 40),
    }
    real = (manifest_merge.merge_run, manifest_merge.full_compaction, manifest_merge.deleted_partitions)
    try:
        for label, run in cases.items():
            for mode in ("bytes", "entries"):
                if mode == "entries":
                    manifest_merge.merge_run = lambda *a: None
                    manifest_merge.full_compaction = lambda *a: None
                    manifest_merge.deleted_partitions = lambda *a: None
                else:
                    (manifest_merge.merge_run, manifest_merge.full_compaction,
                     manifest_merge.deleted_partitions) = real
                st = store()
                w0, c0 = time.perf_counter(), time.process_time()
                out = run(st)
                print(f"{label:10s} {mode:8s} cpu {time.process_time() - c0:7.2f}s  wall {time.perf_counter() - w0:7.2f}s"
                      f"  -> {len(out)} manifests, {sum(m.num_added_files for m in out):,} adds"
                      f"  load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        (manifest_merge.merge_run, manifest_merge.full_compaction, manifest_merge.deleted_partitions) = real
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
