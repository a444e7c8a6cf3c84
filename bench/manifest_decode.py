"""Manifest decoding, seconds per 10,000 entries, by each decoder at hand: icefloe's generated
decoder (entries as objects), its compiled decoder into Arrow columns (``core.avro_decode``, what
planning at scale uses), fastavro's full decode, and DuckDB's ``read_avro`` (the
``duckdb-extension-avro`` package, loaded from its wheel) into Arrow, whole and with only the
columns a filtered plan judges by.

``python -m bench.manifest_decode --files 50000`` builds (once) the metadata-only table of
``bench.scale`` and decodes its manifests, best of ``--rounds``. Not part of ``make bench``.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import time

from bench.scale import generate


def _best(rounds: int, work) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(location: str, rounds: int) -> dict:
    from icefloe.catalog import load_table
    from icefloe.core.gc_pause import collection_paused
    from icefloe.iceberg import manifest_avro
    from icefloe.iceberg.manifest_reader import snapshot_manifests

    t = load_table(os.path.dirname(os.path.dirname(location)))
    meta = t.metadata
    manifests = snapshot_manifests(t.io, t.current_snapshot())
    ptype = meta.specs_by_id()[0].partition_type(meta.schema)
    entries = sum(m.added_files_count + m.existing_files_count + m.deleted_files_count for m in manifests)

    def generated():
        with collection_paused():
            for m in manifests:
                manifest_avro.read_manifest_entries(t.io, m.manifest_path, ptype, 0, m.added_snapshot_id,
                                                    m.sequence_number)

    def full():
        with collection_paused():
            for m in manifests:
                manifest_avro.read_manifest_raw(t.io, m.manifest_path)

    def compiled():
        from icefloe.core import avro_decode

        for m in manifests:
            avro_decode.decode(t.io.read_bytes(m.manifest_path))

    compiled()      # the first call loads the compiled loop (or compiles it, on a first run ever)
    out = {"generated decoder": _best(rounds, generated), "fastavro": _best(rounds, full),
           "compiled decoder into Arrow (what planning uses)": _best(rounds, compiled)}
    try:
        import duckdb
        import duckdb_extension_avro
    except ImportError:
        return {k: v * 10_000 / entries for k, v in out.items()}
    ext = glob.glob(os.path.join(os.path.dirname(duckdb_extension_avro.__file__), "extensions", "*",
                                 "avro.duckdb_extension"))[0]
    con = duckdb.connect()
    con.execute(f"LOAD '{ext}'")
    paths = [m.manifest_path.replace("file:", "") for m in manifests]
    queries = {"duckdb read_avro, all columns": "SELECT * FROM read_avro(?)",
               "duckdb read_avro, judged columns": "SELECT status, data_file.content, data_file.partition, "
               "data_file.record_count, data_file.lower_bounds, data_file.upper_bounds FROM read_avro(?)",
               "duckdb read_avro, count only": "SELECT count(*) FROM read_avro(?)"}
    for name, q in queries.items():
        out[name] = _best(rounds, lambda q=q: [con.execute(q, [p]).to_arrow_table() for p in paths])
    rows = con.execute("SELECT * FROM read_avro(?)", [paths[0]]).to_arrow_table()
    out["arrow rows to Python (to_pylist)"] = _best(1, rows.to_pylist) * len(paths)
    return {k: v * 10_000 / entries for k, v in out.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.manifest_decode", description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warehouse", default=os.path.join("bench", "out", "decode"))
    args = ap.parse_args(argv)
    wh = os.path.abspath(os.path.join(args.warehouse, f"n{args.files}"))
    marker = os.path.join(wh, "metadata-location")
    if os.path.exists(marker):
        location = open(marker).read().strip()
    else:
        location = generate(wh, args.files)
        with open(marker, "w") as f:
            f.write(location)
    print(f"load average {os.getloadavg()[0]:.1f}; seconds per 10,000 manifest entries (best of {args.rounds}):")
    for name, secs in measure(location, args.rounds).items():
        print(f"  {name:40s} {secs:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
