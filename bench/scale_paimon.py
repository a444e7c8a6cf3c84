"""Planning at scale, Paimon: a metadata-only append table of N data files, planned by icefloe,
Apache Paimon's Java engine and pypaimon.

``python -m bench.scale --format paimon --files 100000`` (``make bench-scale`` runs both formats). The
table has the shape of ``bench.scale``'s Iceberg table: N files of 1,000 rows, ``id`` bounds that name
one file per value, 200 days of data, here partitioned by a ``dt`` date column (Paimon has no partition
transforms), bucket-unaware (``bucket = -1``). It is written through icefloe's own commit API with no
data files behind its metadata (``generate``), in appends of ``--per-commit`` files. Each engine plans
in a process of its own, timing the planning call alone, for three filters: all files, ``id = <v>`` (one
file by its value statistics) and ``dt = <day>`` (one partition). Cold: the first plan of that filter in
the process after its caches are cleared (icefloe: the table loaded anew and its manifest caches
emptied; Java and pypaimon: the table loaded anew, their caches off); warm: the best of the next two.
The process's peak RSS is reported too (the JVM's for the Java engine). The machine may be shared:
compare the ratios of one run, not figures across runs.

This module imports nothing outside the standard library at its top: pypaimon's side runs it in
pypaimon's own environment (``.venv-paimon``).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import resource
import sys
import time

from bench.scale import check_plans, child_result, report

ROWS_PER_FILE = 1000
DAYS = 200
FIRST_DAY = dt.date(2024, 1, 1)
START = dt.datetime(2024, 1, 1)
TABLE = "bench.scale"
SCHEMA = "id bigint not null, ts timestamp not null, v string, dt date not null"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def files_per_day(n: int) -> int:
    return max(1, n // DAYS)


def generate(warehouse: str, n: int, per_commit: int = 5000) -> None:
    """The table ``bench.scale`` of ``n`` data files (metadata only) in the Paimon warehouse
    ``warehouse``. File ``i`` holds ids ``[i*1000, i*1000+999]`` and timestamps of day
    ``i // files_per_day(n)``, in that day's partition."""
    from icefloe.catalog import Catalog
    from icefloe.paimon.binary_row import encode_row
    from icefloe.paimon.data_file import CommitMessage, DataFileMeta, SimpleStats

    cat = Catalog(warehouse, "paimon")
    t = cat.create_table(TABLE, SCHEMA, partitioned_by=["dt"], properties={"bucket": "-1", "write-only": "true"})
    types = [f.type for f in t.store.schema.fields]
    fpd = files_per_day(n)
    created = int(time.time() * 1000)
    for start in range(0, n, per_commit):
        by_day: dict[int, list[DataFileMeta]] = {}
        for i in range(start, min(n, start + per_commit)):
            day = min(i // fpd, DAYS - 1) if n >= DAYS else i // fpd
            date = FIRST_DAY + dt.timedelta(days=day)
            lo_ts = START + dt.timedelta(days=day)
            hi_ts = lo_ts + dt.timedelta(days=1) - dt.timedelta(microseconds=1)
            stats = SimpleStats(encode_row([i * ROWS_PER_FILE, lo_ts, "a", date], types),
                                encode_row([i * ROWS_PER_FILE + ROWS_PER_FILE - 1, hi_ts, "z", date], types),
                                (0, 0, 0, 0))
            by_day.setdefault(day, []).append(DataFileMeta(
                file_name=f"data-{i:08d}-0.parquet", file_size=40_000, row_count=ROWS_PER_FILE, value_stats=stats,
                min_sequence_number=0, max_sequence_number=ROWS_PER_FILE - 1, schema_id=t.store.schema.id,
                creation_time=created))
        t.commit([CommitMessage((FIRST_DAY + dt.timedelta(days=d),), 0, -1, files) for d, files in by_day.items()])
        t = cat.load_table(TABLE)


def _day(n: int) -> dt.date:
    return FIRST_DAY + dt.timedelta(days=min(100, DAYS - 1) if n >= DAYS else n // 2 // files_per_day(n))


def _id_value(n: int) -> int:
    return (n // 2) * ROWS_PER_FILE + 7


def expected(n: int) -> dict:
    fpd = files_per_day(n)
    day = (_day(n) - FIRST_DAY).days
    in_day = sum(1 for i in range(n) if (min(i // fpd, DAYS - 1) if n >= DAYS else i // fpd) == day)
    return {"all": n, "id": 1, "day": in_day}


def _time(plan) -> tuple:
    t0 = time.perf_counter()
    got = plan()
    return time.perf_counter() - t0, got


def run_icefloe(warehouse: str, n: int) -> dict:
    from icefloe.catalog import Catalog
    from icefloe.paimon import manifest_columns

    where = {"all": None, "id": f"id = {_id_value(n)}", "day": f"dt = DATE '{_day(n).isoformat()}'"}
    out = {}
    for name, w in where.items():
        manifest_columns.clear_cache()
        t = Catalog(warehouse, "paimon").load_table(TABLE)
        cold, got = _time(lambda: len(t.plan_files(where=w)))
        warm = min(_time(lambda: len(t.plan_files(where=w)))[0] for _ in range(2))
        out[name] = {"cold": cold, "warm": warm, "files": got}
    return out


def run_java(warehouse: str, n: int) -> dict:
    """Paimon's Java engine (``tools/paimon_java.py``, paimon-bundle in a JVM of its own): the seconds of
    ``newScan().plan()`` measured in the JVM, the table loaded anew for each plan (its catalog caches off)."""
    from tools.paimon_java import PaimonJava

    conditions = {"all": (), "id": (("id", "=", _id_value(n)),), "day": (("dt", "=", (_day(n) - dt.date(1970, 1, 1)).days),)}
    out: dict = {}
    with PaimonJava(warehouse, heap=os.environ.get("SCALE_JAVA_HEAP", "4g")) as java:
        for name, cond in conditions.items():
            first = java.plan(TABLE, cond)
            warm = min(java.plan(TABLE, cond)["seconds"] for _ in range(2))
            out[name] = {"cold": first["seconds"], "warm": warm, "files": first["files"]}
        out["peak_rss_mb"] = java.plan(TABLE, conditions["id"])["peak_rss_mb"]
    return out


def run_pypaimon(warehouse: str, n: int) -> dict:
    """pypaimon (run in ``.venv-paimon``): ``new_read_builder().new_scan().plan()`` of a table loaded anew."""
    from pypaimon import CatalogFactory

    def plan(name: str) -> int:
        table = CatalogFactory.create({"warehouse": warehouse}).get_table(TABLE)
        rb = table.new_read_builder()
        if name != "all":
            pb = rb.new_predicate_builder()
            rb = rb.with_filter(pb.equal("id", _id_value(n)) if name == "id" else pb.equal("dt", _day(n)))
        t0 = time.perf_counter()
        files = sum(len(s.files) for s in rb.new_scan().plan().splits())
        return time.perf_counter() - t0, files

    out = {}
    for name in ("all", "id", "day"):
        cold, got = plan(name)
        warm = min(plan(name)[0] for _ in range(2))
        out[name] = {"cold": cold, "warm": warm, "files": got}
    return out


ENGINES = {"icefloe": run_icefloe, "java": run_java, "pypaimon": run_pypaimon}


def child(engine: str, warehouse: str, n: int) -> None:
    out = ENGINES[engine](warehouse, n)
    out.setdefault("peak_rss_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print("RESULT " + json.dumps(out), flush=True)


def _command(engine: str, warehouse: str, n: int) -> tuple[list[str], dict]:
    env = dict(os.environ)
    python = sys.executable
    if engine == "pypaimon":
        from tools.pypaimon_env import ensure_env, env_python

        ensure_env()
        python = str(env_python())
        env.pop("PYTHONPATH", None)
    return [python, "-m", "bench.scale_paimon", "--child", engine, warehouse, str(n)], env


def measure(warehouse: str, n: int, engines=("icefloe", "java", "pypaimon")) -> dict:
    """Each engine's figures, each in a process of its own; a plan of the wrong size is an error."""
    results = {}
    for engine in engines:
        cmd, env = _command(engine, warehouse, n)
        results[engine] = child_result(cmd, engine, timeout=7200, cwd=ROOT, env=env)
        check_plans(engine, results[engine], expected(n))
    return results


def run(files: list[int], warehouse: str, per_commit: int, engines: tuple[str, ...]) -> dict:
    """Generate (once per size) and measure each table; the results by size, printed as they come."""
    all_results = {}
    for n in files:
        wh = os.path.abspath(os.path.join(warehouse, f"paimon-n{n}"))
        marker = os.path.join(wh, "generated")
        if not os.path.exists(marker):
            t0 = time.perf_counter()
            generate(wh, n, per_commit)
            with open(marker, "w") as f:
                f.write(str(n))
            print(f"generated a Paimon table of {n} files in {time.perf_counter() - t0:.1f} s", flush=True)
        results = measure(wh, n, engines)
        print("Paimon " + report(n, results), flush=True)
        all_results[n] = results
    return all_results


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit("run through python -m bench.scale --format paimon")
