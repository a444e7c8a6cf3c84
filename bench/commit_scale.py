"""Commit latency at scale, both formats: metadata-only tables of N data files, then K one-file appends
timed at each size, icefloe against the Java runtimes.

``python -m bench.commit_scale --files 10000 100000 1000000`` (``make bench-scale`` runs it after
``bench.scale``). Three tables per size, their metadata written through icefloe's commit API with no
data files behind it:

- ``iceberg``: ``bench.scale``'s table (N files partitioned by ``day(ts)``); a commit is one file
  appended through ``commit_files`` (icefloe) or ``newAppend().appendFile().commit()`` (Apache
  Iceberg's Java runtime through ``.venv-jvm``), each timed from loading the table.
- ``paimon-append``: a Paimon append table partitioned by ``p`` (200 partitions); a commit is one
  data file's commit message committed by the table (icefloe), or a one-row batch write and commit
  (Apache Paimon's Java engine, ``tools/paimon_java.py``: its request round trip included).
- ``paimon-pk``: a Paimon primary-key table partitioned by ``p``, 4 buckets, every bucket's files one
  sorted run at the top level with disjoint key ranges; a commit is a one-row write and commit to
  the next partition (so that no bucket piles up enough runs to be compacted), the compaction
  check after it included. Its buckets grow with the table (1,250 files each at 1M files): a
  writer restores the files of the bucket it writes (Paimon's Java writer as icefloe's), so this
  commit cannot stay flat.
- ``paimon-pk-wide``: the same with as many buckets as keep each at about 25 files
  (``BUCKET_FILES``; 4 buckets at 10k files, 200 at 1M), as a table whose bucket count was sized
  for its data: the files a commit must restore stay the same, the table around them grows.

A commit whose time grows with N reads or rewrites metadata in proportion to the table; the target is
latency at the largest size within 1.5x of the smallest. Each engine runs in a process of its own.
The machine may be shared: compare the ratios of one run (the load average is reported).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import uuid

from bench import scale

PARTITIONS = 200
PK_BUCKETS = 4
BUCKET_FILES = 25
PER_COMMIT = 50_000
TABLES = ("iceberg", "paimon-append", "paimon-pk", "paimon-pk-wide")
DDL = "id bigint not null, p int not null, v string"


# --------------------------------------------------------------------------- Paimon tables
def generate_paimon(warehouse: str, n: int, kind: str) -> None:
    """Table ``bench.<kind>`` of ``n`` data files (metadata only) in a Paimon warehouse: file ``i``
    in partition ``i % 200`` (and bucket ``(i // 200) % buckets`` for the primary-key tables), ids
    ``[i*1000, i*1000+999]``; the primary-key tables' files at the top level, numbered like their ids."""
    import icefloe
    from icefloe.core.types import LongType
    from icefloe.paimon.binary_row import encode_row
    from icefloe.paimon.commit import FileStoreCommit
    from icefloe.paimon.data_file import CommitMessage, DataFileMeta

    pk = kind.startswith("paimon-pk")
    buckets = pk_buckets(kind, n)
    props = {"primary-key": "id,p", "bucket": str(buckets)} if pk else {}
    t = icefloe.Catalog(warehouse, format="paimon").create_table(f"bench.{kind.replace('-', '_')}", DDL,
                                                                  partitioned_by=["p"], properties=props)
    top = 5                                   # num-sorted-run.compaction-trigger's default: the top level
    for start in range(0, n, PER_COMMIT):
        groups: dict[tuple[int, int], list] = {}
        for i in range(start, min(n, start + PER_COMMIT)):
            p, bucket = i % PARTITIONS, ((i // PARTITIONS) % buckets if pk else 0)
            lo, hi = i * 1000, i * 1000 + 999
            meta = DataFileMeta(file_name=f"data-bench-{i:08d}.parquet", file_size=40_000, row_count=1000)
            if pk:
                meta = DataFileMeta(
                    file_name=meta.file_name, file_size=40_000, row_count=1000,
                    min_key=encode_row([lo], [LongType()]), max_key=encode_row([hi], [LongType()]),
                    min_sequence_number=lo, max_sequence_number=hi, level=top)
            groups.setdefault((p, bucket), []).append(meta)
        FileStoreCommit(t.store, t.commit_user).commit(
            [CommitMessage((p,), b, buckets if pk else -1, files) for (p, b), files in groups.items()])


def pk_buckets(kind: str, n: int) -> int:
    """Buckets of table ``kind`` at ``n`` files: ``paimon-pk``'s 4, or as many as keep
    ``paimon-pk-wide``'s buckets at ``BUCKET_FILES`` files (at least 4)."""
    return max(PK_BUCKETS, n // (PARTITIONS * BUCKET_FILES)) if kind == "paimon-pk-wide" else PK_BUCKETS


def _paimon_table(warehouse: str, kind: str):
    import icefloe
    return icefloe.Catalog(warehouse, format="paimon").load_table(f"bench.{kind.replace('-', '_')}")


def _targets(k: int) -> list:
    """``k`` (partition, key) pairs of new keys in random partitions: every run of the bench adds
    level-0 runs to other buckets, so that none piles up enough runs to be compacted (a compaction
    would read the files the metadata only names)."""
    rng = random.Random()
    return [(rng.randrange(PARTITIONS), 10**12 + rng.randrange(10**12)) for _ in range(k)]


def commits_icefloe_paimon(warehouse: str, n: int, k: int, kind: str) -> list:
    """Seconds of each of ``k`` one-file appends by icefloe (load included)."""
    import pyarrow as pa

    from icefloe.paimon.data_file import CommitMessage, DataFileMeta

    run = uuid.uuid4().hex[:8]              # the table keeps the files of earlier runs
    times = []
    for j, (p, key) in enumerate(_targets(k)):
        t0 = time.perf_counter()
        t = _paimon_table(warehouse, kind)
        if kind.startswith("paimon-pk"):
            t.append(pa.table({"id": pa.array([key], pa.int64()), "p": pa.array([p], pa.int32()), "v": ["x"]}))
        else:
            meta = DataFileMeta(file_name=f"data-extra-{run}-{j}.parquet", file_size=40_000, row_count=1000)
            t.commit([CommitMessage((p,), 0, -1, [meta])])
        times.append(time.perf_counter() - t0)
    return times


def commits_java_paimon(warehouse: str, n: int, k: int, kind: str) -> list:
    """Seconds of each of ``k`` one-row batch writes and commits by Apache Paimon's Java engine."""
    from tools.paimon_java import PaimonJava

    name = f"bench.{kind.replace('-', '_')}"
    times = []
    with PaimonJava(warehouse, heap="4g") as java:
        for p, key in _targets(k):
            t0 = time.perf_counter()
            java.write(name, [(key, p, "j")])
            times.append(time.perf_counter() - t0)
    return times


# --------------------------------------------------------------------------- runs
def _warehouse(root: str, table: str, n: int) -> str:
    return os.path.abspath(os.path.join(root, f"{table}-n{n}"))


def ensure(root: str, table: str, n: int) -> str:
    """The warehouse of ``table`` at ``n`` files, generated once (a marker file says it is complete)."""
    wh = _warehouse(root, table, n)
    marker = os.path.join(wh, "generated")
    if not os.path.exists(marker):
        t0 = time.perf_counter()
        if table == "iceberg":
            scale.generate(wh, n, 5000)
        else:
            generate_paimon(wh, n, table)
        with open(marker, "w") as f:
            f.write(str(n))
        print(f"generated {table} of {n} files in {time.perf_counter() - t0:.1f} s", flush=True)
    return wh


def _commits(table: str, engine: str, wh: str, n: int, k: int) -> list:
    if table == "iceberg":
        return scale.COMMITTERS[engine](wh, n, k)
    return (commits_icefloe_paimon if engine == "icefloe" else commits_java_paimon)(wh, n, k, table)


def measure(table: str, engine: str, wh: str, n: int, k: int) -> list:
    """``k`` commits by ``engine`` in a process of its own; the seconds of each."""
    return scale.child_result([sys.executable, "-m", "bench.commit_scale", "--child", table, engine, wh, str(n),
                               str(k)], f"{table} {engine} commits")


def summary(times: list) -> dict:
    """Best, median and worst of the commits after the first (the first of a process pays for its
    imports, class loading and cold caches: reported as ``first``)."""
    s = sorted(times[1:] or times)
    return {"best": s[0], "median": s[len(s) // 2], "worst": s[-1], "first": times[0], "times": times}


def report(results: dict) -> list:
    """One line per table and engine: best / median (spread) at each size, then the ratio of the
    largest size's best and median to the smallest's."""
    lines = []
    for table, by_engine in results.items():
        for engine, by_n in by_engine.items():
            sizes = sorted(by_n, key=int)
            cells = [f"{int(n):>8}: {by_n[n]['best']:.3f} / {by_n[n]['median']:.3f} ({by_n[n]['worst']:.3f})"
                     for n in sizes]
            ratio = ""
            if len(sizes) > 1:
                lo, hi = by_n[sizes[0]], by_n[sizes[-1]]
                ratio = (f"  {sizes[-1]}/{sizes[0]}: best x{hi['best'] / lo['best']:.2f}, "
                         f"median x{hi['median'] / lo['median']:.2f}")
            lines.append(f"{table:13} {engine:7} " + "; ".join(cells) + ratio)
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        table, engine, wh, n, k = argv[1:6]
        print("RESULT " + json.dumps(_commits(table, engine, wh, int(n), int(k))), flush=True)
        return 0
    ap = argparse.ArgumentParser(prog="python -m bench.commit_scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, nargs="+", default=[10_000, 100_000], help="data files of each table")
    ap.add_argument("--commits", type=int, default=5, help="one-file appends timed per size and engine (after a first one)")
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--engines", default="icefloe,java")
    ap.add_argument("--warehouse", default=os.path.join("bench", "out", "commit_scale"))
    ap.add_argument("--out", default=os.path.join("bench", "out", "commit_scale.json"))
    args = ap.parse_args(argv)
    tables = args.tables.split(",")
    for t in tables:
        if t not in TABLES:
            raise SystemExit(f"unknown table {t!r} (tables: {', '.join(TABLES)})")
    results: dict = {}
    loads = [os.getloadavg()[0]]
    for n in args.files:
        for table in tables:
            wh = ensure(args.warehouse, table, n)
            for engine in args.engines.split(","):
                # each run appends to the table: a fresh copy of the generated metadata is not
                # needed, K extra files do not change N's order of magnitude
                results.setdefault(table, {}).setdefault(engine, {})[str(n)] = summary(
                    measure(table, engine, wh, n, args.commits + 1))
                loads.append(os.getloadavg()[0])
                print(f"{table} {engine} {n}: " + json.dumps(
                    {k: round(v, 3) for k, v in results[table][engine][str(n)].items() if k != "times"}), flush=True)
    print("commit latency (s): best / median (worst) at each size; ratio of the largest size to the smallest")
    for line in report(results):
        print(line)
    print(f"load average (1 min) during the run: {min(loads):.1f} to {max(loads):.1f}")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"results": results, "load": loads}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
