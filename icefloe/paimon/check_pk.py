# pyright: strict
"""What ``check`` verifies on primary-key tables, beyond what every Paimon table must hold.

For each live data file of the latest snapshot (read from the file itself):

- it has ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` columns, row kinds are 0-3, and its row count
  is the manifest's;
- its sequence numbers span exactly the manifest's ``[min, max]`` sequence range;
- its keys (``_KEY_<k>`` columns, or the key columns themselves in the thinner layout) are in
  strictly ascending order (a file holds each key once) and its first and last keys are the
  manifest's ``_MIN_KEY`` / ``_MAX_KEY``;
- files of one bucket at the same level above 0 (one sorted run) do not overlap in key range.

For every snapshot, each file its index manifest names (HASH and deletion-vector indexes,
under ``index/``) exists at the recorded size, a HASH index holds ``_ROW_COUNT`` hashes, and each
deletion vector lies inside its file, framed and checksummed, with the recorded cardinality.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterable, Optional

from icefloe.core.io import FileIO
from icefloe.core.progress import track
from icefloe.core.reports import Report
from icefloe.errors import IcefloeError
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon.arrow_read import format_name, read_data_file, read_file_schema
from icefloe.paimon import dynamic_bucket as db
from icefloe.paimon.binary_row import decode_row
from icefloe.paimon.merge import KEY_PREFIX, SEQUENCE, VALUE_KIND, trimmed_primary_keys
from icefloe.paimon.schema import TableSchema, load_schema

if TYPE_CHECKING:
    from icefloe.paimon.file_store import FileStore
    from icefloe.paimon.snapshot import Snapshot

# a file's first and last keys and its path
_KeyRange = tuple[tuple[Any, ...], tuple[Any, ...], str]


def check_primary_key_files(report: Report, store: FileStore, io: FileIO, location: str,
                            snapshot: Optional[Snapshot]) -> None:
    """The per-file checks above, for ``snapshot``'s live files."""
    import pyarrow.compute as pc

    if snapshot is None:
        return
    schemas: dict[int, TableSchema] = {}
    runs: dict[tuple[bytes, int, int], list[_KeyRange]] = {}
    for e in track(store.live_entries(snapshot), "checking primary-key data files"):
        path = store.data_file_path(e)
        if not io.exists(path):
            continue                                   # reported as missing already
        f = e.file
        try:
            schema = schemas.get(f.schema_id) or load_schema(io, location, f.schema_id)
        except IcefloeError:
            continue                                   # reported as a missing schema already
        schemas[f.schema_id] = schema
        keys = trimmed_primary_keys(schema.primary_keys, schema.partition_keys)
        try:
            names = read_file_schema(path, io).names
            cols = [KEY_PREFIX + k if KEY_PREFIX + k in names else k for k in keys]
            missing = [c for c in (SEQUENCE, VALUE_KIND, *cols) if c not in names]
            if missing:
                report.add("file", path, f"data file of a primary-key table lacks {', '.join(missing)}")
                continue
            data = read_data_file(path, io, columns=[SEQUENCE, VALUE_KIND, *cols])
        except Exception as ex:  # an unreadable file: say which, go on
            report.add("file", path, f"not a readable {format_name(path)} file ({type(ex).__name__}: {ex})")
            continue
        report.count("primary-key files")
        if data.num_rows != f.row_count:
            report.add("file", path, f"holds {data.num_rows} records, the manifest records {f.row_count}")
        if not data.num_rows:
            continue
        seq = data.column(SEQUENCE)
        lo, hi = pc.min(seq).as_py(), pc.max(seq).as_py()
        if (lo, hi) != (f.min_sequence_number, f.max_sequence_number):
            report.add("sequence", path, f"sequence numbers {lo}..{hi}, the manifest records "
                                         f"{f.min_sequence_number}..{f.max_sequence_number}")
        kinds = data.column(VALUE_KIND)
        if pc.any(pc.or_(pc.less(kinds, 0), pc.greater(kinds, 3))).as_py():
            report.add("file", path, "holds a _VALUE_KIND outside 0..3")
        rows: list[tuple[Any, ...]] = list(zip(*[data.column(c).to_pylist() for c in cols]))
        if any(a >= b for a, b in zip(rows, rows[1:])):
            report.add("keys", path, "records are not in strictly ascending key order")
        types = [schema.field(k).type for k in keys]
        try:
            recorded = (decode_row(f.min_key, types), decode_row(f.max_key, types))
        except IcefloeError as ex:
            report.add("keys", path, f"manifest key range unreadable: {ex}")
            continue
        if (rows[0], rows[-1]) != recorded:
            report.add("keys", path, f"keys {rows[0]}..{rows[-1]}, the manifest records {recorded[0]}.."
                                     f"{recorded[1]}")
        if f.level > 0:
            runs.setdefault((e.partition.to_bytes(), e.bucket, f.level), []).append((rows[0], rows[-1], path))
    for (_p, bucket, level), ranges in runs.items():
        ranges.sort()
        for (_a_lo, a_hi, a_path), (b_lo, _b_hi, b_path) in zip(ranges, ranges[1:]):
            if b_lo <= a_hi:
                report.add("keys", b_path, f"overlaps {os.path.basename(a_path)} in key range at level {level} of "
                                           f"bucket {bucket} (one sorted run)")


def check_index_files(report: Report, store: FileStore, io: FileIO, snapshots: Iterable[Snapshot]) -> None:
    """Every index file each snapshot's index manifest names: present, at its size."""
    seen: set[str] = set()
    for snap in snapshots:
        if not snap.index_manifest or snap.index_manifest in seen:
            continue
        seen.add(snap.index_manifest)
        try:
            entries = db.read_index_manifest(store, snap.index_manifest)
        except IcefloeError as ex:
            report.add("index", store.manifest_path(snap.index_manifest), str(ex))
            continue
        for r in entries:
            path = r.get("_EXTERNAL_PATH") or db.index_path(store, r["_FILE_NAME"])
            if path in seen:
                continue
            seen.add(path)
            report.count("index files")
            if not io.exists(path):
                report.add("index", path, f"missing ({r['_INDEX_TYPE']} index of bucket {r['_BUCKET']}, "
                                          f"snapshot {snap.id})")
            elif io.size(path) != r["_FILE_SIZE"]:
                report.add("index", path, f"is {io.size(path)} bytes, the index manifest records {r['_FILE_SIZE']}")
            elif r["_INDEX_TYPE"] == db.HASH and r["_FILE_SIZE"] != 4 * r["_ROW_COUNT"]:
                report.add("index", path, f"HASH index of {r['_FILE_SIZE']} bytes cannot hold the "
                                          f"{r['_ROW_COUNT']} hashes recorded")
            elif r["_INDEX_TYPE"] == dv.DELETION_VECTORS:
                _check_vectors(report, io, path, r)


def _check_vectors(report: Report, io: FileIO, path: str, record: db.IndexRecord) -> None:
    """Each deletion vector of an index file: inside the file, framed and checksummed as the
    index manifest's range says, with the recorded cardinality."""
    raw = io.read_bytes(path)
    ranges: list[dict[str, Any]] = record.get("_DELETIONS_VECTORS_RANGES") or []
    for d in ranges:
        try:
            bitmap = dv.deserialize(raw, d["f1"], d["f2"], path)
        except IcefloeError as ex:
            report.add("index", path, f"vector of data file {d['f0']}: {getattr(ex, 'reason', ex)}")
            continue
        report.count("deletion vectors")
        if d.get("_CARDINALITY") is not None and len(bitmap) != d["_CARDINALITY"]:
            report.add("index", path, f"vector of data file {d['f0']} marks {len(bitmap)} rows, the index manifest "
                                      f"records {d['_CARDINALITY']}")


__all__ = ["check_primary_key_files", "check_index_files"]
