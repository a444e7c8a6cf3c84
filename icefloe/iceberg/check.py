# pyright: strict
"""Verify an Iceberg table end to end, without Spark (``Table.check``, ``icefloe check``).

Spec sections in brackets:

* ``version-hint.text`` names the latest ``vN.metadata.json`` [Hadoop tables];
* the current snapshot, every ref and snapshot-log entry name a known snapshot;
  snapshot ids are unique, sequence numbers grow from parent to child and
  never pass ``last-sequence-number`` [Snapshots, Sequence Numbers];
* every manifest list, manifest and data/delete file exists with the recorded
  size; Parquet footers hold the recorded row counts [Manifests];
* manifest-list counts match the manifest entries; entries' sequence numbers
  are not newer than their manifest's [Manifest Lists];
* each snapshot's live files add up to its summary totals [Snapshot Summary].
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Optional

from icefloe.core.io import FileIO
from icefloe.core.progress import track
from icefloe.core.reports import Report
from icefloe.errors import CorruptDataFileError, IcefloeError
from icefloe.iceberg.hadoop import HINT_FILE
from icefloe.iceberg.manifest import ADDED, DATA, DELETED, POSITION_DELETES, DataFile, ManifestEntry
# manifest_avro's record dicts are not parameterised yet
from icefloe.iceberg.manifest_avro import (
    entries_from_records,
    read_manifest_raw,
)
from icefloe.iceberg.manifest_list import ManifestFile, read_manifest_list
from icefloe.iceberg.snapshot import Snapshot, content_size
from icefloe.iceberg.puffin import DV_BLOB_TYPE, BlobMetadata, read_footer, vector_positions
from icefloe.iceberg.table_metadata import TableMetadata

if TYPE_CHECKING:
    from icefloe.iceberg.operations import TableOperations
    from icefloe.iceberg.partitioning import PartitionSpec
    from icefloe.iceberg.table import BaseTable


def check_iceberg(table: BaseTable, progress: Optional[Callable[[str], None]] = None) -> Report:
    ops = table.ops
    io = table.io
    report = Report(table.name, table.location)
    say: Callable[[str], None] = progress or (lambda msg: None)

    # -- version hint and metadata files
    versions = _versions(ops)
    latest = versions[-1] if versions else None
    hint_path = f"{ops.metadata_dir}/{HINT_FILE}"
    try:
        hint_text = io.read_bytes(hint_path).decode("utf-8", "replace").strip()
    except FileNotFoundError:
        hint_text = None
    if not getattr(ops, "uses_version_hint", True):
        pass                                    # a catalog table: the catalog row names the version
    elif hint_text is None:
        report.add("hint", hint_path, f"missing; the latest metadata version is {latest}")
    elif not hint_text.isdigit():
        report.add("hint", hint_path, f"holds {hint_text!r}, not a version number (latest is {latest})")
    elif int(hint_text) != latest:
        latest_file = ops.metadata_path(latest).rsplit("/", 1)[-1] if latest is not None else "none"
        report.add("hint", hint_path, f"says version {hint_text} but the latest metadata file is {latest_file}")
    report.count("metadata files", len(versions))
    try:
        table.refresh()
    except IcefloeError as e:
        report.add("metadata", ops.metadata_path(latest or 0), str(e))
        return report
    meta = table.metadata
    meta_path = table.metadata_location

    # -- snapshots, refs, sequence numbers
    by_id: dict[int, Snapshot] = {}
    for s in meta.snapshots:
        if s.snapshot_id in by_id:
            report.add("snapshot", meta_path, f"snapshot id {s.snapshot_id} appears twice")
        by_id[s.snapshot_id] = s
    seqs: dict[int, int] = {}
    for s in meta.snapshots:
        if s.sequence_number > meta.last_sequence_number:
            report.add("sequence", meta_path, f"snapshot {s.snapshot_id} has sequence number {s.sequence_number} "
                                              f"> last-sequence-number {meta.last_sequence_number}")
        if s.sequence_number in seqs and meta.format_version >= 2:
            report.add("sequence", meta_path, f"snapshots {seqs[s.sequence_number]} and {s.snapshot_id} share "
                                              f"sequence number {s.sequence_number}")
        seqs[s.sequence_number] = s.snapshot_id
        parent = by_id.get(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
        if parent is not None and parent.sequence_number >= s.sequence_number and meta.format_version >= 2:
            report.add("sequence", meta_path, f"snapshot {s.snapshot_id} (sequence {s.sequence_number}) is not "
                                              f"newer than its parent {parent.snapshot_id} "
                                              f"(sequence {parent.sequence_number})")
    if meta.current_snapshot_id is not None and meta.current_snapshot_id not in by_id:
        report.add("snapshot", meta_path, f"current-snapshot-id {meta.current_snapshot_id} is not a snapshot")
    for name, ref in meta.refs.items():
        if ref.snapshot_id not in by_id:
            report.add("ref", meta_path, f"{ref.type} {name!r} points to unknown snapshot {ref.snapshot_id}")
    main = meta.refs.get("main")
    if main is not None and main.snapshot_id != meta.current_snapshot_id:
        report.add("ref", meta_path, f"branch main ({main.snapshot_id}) differs from current-snapshot-id "
                                     f"({meta.current_snapshot_id})")
    for entry in meta.snapshot_log:
        if entry.get("snapshot-id") not in by_id:
            report.add("snapshot", meta_path, f"snapshot-log names unknown snapshot {entry.get('snapshot-id')}")
    report.count("snapshots", len(meta.snapshots))

    # -- manifests and files, per snapshot
    seen_files: dict[str, bool] = {}
    seen_manifests: dict[str, Optional[list[ManifestEntry]]] = {}
    footer_checked: set[str] = set()
    vectors: dict[Any, Any] = {}
    specs = meta.specs_by_id()
    for s in track(meta.snapshots, "checking snapshots"):
        say(f"snapshot {s.snapshot_id}")
        if not s.manifest_list:
            continue
        if not io.exists(s.manifest_list):
            report.add("manifest-list", s.manifest_list, f"missing (snapshot {s.snapshot_id})")
            continue
        try:
            manifests = read_manifest_list(io, s.manifest_list)
        except IcefloeError as e:
            report.add("manifest-list", s.manifest_list, str(e))
            continue
        report.count("manifest lists")
        live = {"records": 0, "data": 0, "delete": 0, "size": 0, "pos": 0, "eq": 0}
        for m in manifests:
            if m.sequence_number > s.sequence_number:
                report.add("sequence", m.manifest_path, f"manifest sequence number {m.sequence_number} is newer "
                                                        f"than snapshot {s.snapshot_id} ({s.sequence_number})")
            entries = seen_manifests.get(m.manifest_path)
            if entries is None:
                entries = _read_manifest(report, io, meta, m, specs,
                                         entries_from_records,
                                         read_manifest_raw)
                seen_manifests[m.manifest_path] = entries
            if entries is None:
                continue
            counts = {0: [0, 0], 1: [0, 0], 2: [0, 0]}
            for e in entries:
                counts[e.status][0] += 1
                counts[e.status][1] += e.data_file.record_count
                if e.status == ADDED and e.snapshot_id != m.added_snapshot_id:
                    report.add("snapshot", m.manifest_path, f"entry {e.data_file.file_path} was added by snapshot "
                                                            f"{e.snapshot_id}, the manifest by {m.added_snapshot_id}")
                if e.sequence_number is not None and e.sequence_number > m.sequence_number:
                    report.add("sequence", m.manifest_path, f"entry {e.data_file.file_path} has data sequence "
                                                            f"number {e.sequence_number} > manifest's "
                                                            f"{m.sequence_number}")
                if e.status == DELETED:
                    continue
                f = e.data_file
                if f.content == DATA:
                    live["records"] += f.record_count
                    live["data"] += 1
                else:
                    live["delete"] += 1
                    live["pos" if f.content == POSITION_DELETES else "eq"] += f.record_count
                live["size"] += content_size(f)
                _check_file(report, io, f, seen_files, footer_checked, vectors)
            expected: dict[str, tuple[Optional[int], Optional[int], list[int]]] = {"added": (m.added_files_count, m.added_rows_count, counts[1]),
                        "existing": (m.existing_files_count, m.existing_rows_count, counts[0]),
                        "deleted": (m.deleted_files_count, m.deleted_rows_count, counts[2])}
            for label, (nfiles, nrows, (afiles, arows)) in expected.items():
                if nfiles is not None and nfiles != afiles:
                    report.add("count", s.manifest_list, f"manifest {os.path.basename(m.manifest_path)}: "
                                                         f"{label}_files_count is {nfiles}, the manifest has {afiles}")
                if nrows is not None and nrows != arows:
                    report.add("count", s.manifest_list, f"manifest {os.path.basename(m.manifest_path)}: "
                                                         f"{label}_rows_count is {nrows}, the manifest has {arows}")
        _check_summary(report, meta_path, s, live)
    report.count("manifests", len(seen_manifests))
    report.count("files", len(seen_files))
    return report


def _read_manifest(report: Report, io: FileIO, meta: TableMetadata, m: ManifestFile, specs: dict[int, PartitionSpec],
                   entries_from_records: Callable[..., list[ManifestEntry]],
                   read_manifest_raw: Callable[[FileIO, str], tuple[dict[str, Any], list[dict[str, Any]]]]
                   ) -> Optional[list[ManifestEntry]]:
    if not io.exists(m.manifest_path):
        report.add("manifest", m.manifest_path, "missing")
        return None
    actual = io.size(m.manifest_path)
    if actual != m.manifest_length:
        report.add("manifest", m.manifest_path, f"is {actual} bytes, the manifest list records {m.manifest_length}")
    try:
        _kv, records = read_manifest_raw(io, m.manifest_path)
        spec = specs.get(m.partition_spec_id)
        if spec is None:
            report.add("manifest", m.manifest_path, f"unknown partition spec id {m.partition_spec_id}")
            return None
        ptype = spec.partition_type(meta.schema)
        return entries_from_records(records, ptype, m.partition_spec_id, m.added_snapshot_id, m.sequence_number)
    except Exception as e:   # a damaged manifest is a finding, not a crash
        report.add("manifest", m.manifest_path, f"unreadable: {e}")
        return None


def _check_file(report: Report, io: FileIO, f: DataFile, seen: dict[str, bool], footer_checked: set[str],
                vectors: Optional[dict[Any, Any]] = None) -> None:
    path = f.file_path
    if f.is_deletion_vector and vectors is not None and io.exists(path):
        _check_vector(report, io, f, vectors)
    if path in seen:
        return
    seen[path] = True
    if not io.exists(path):
        report.add("file", path, f"missing (recorded {f.file_size_in_bytes} bytes, {f.record_count} records)")
        return
    size = io.size(path)
    if size != f.file_size_in_bytes:
        report.add("file", path, f"is {size} bytes, the manifest records {f.file_size_in_bytes}")
        return
    if f.file_format.upper() == "PARQUET" and f.content == 0 and path not in footer_checked:
        footer_checked.add(path)
        try:
            import pyarrow.parquet as pq

            with io.open_read(path) as fh:
                rows = pq.ParquetFile(fh).metadata.num_rows
            if rows != f.record_count:
                report.add("file", path, f"holds {rows} rows, the manifest records {f.record_count}")
        except Exception as e:
            report.add("file", path, f"unreadable Parquet footer: {e}")


def _check_vector(report: Report, io: FileIO, f: DataFile, vectors: dict[Any, Any]) -> None:
    """A deletion vector's offset and length name a blob of its Puffin file's footer, for its data
    file, holding as many positions as the manifest records [Deletion Vectors]. ``vectors`` holds
    what was checked and the footers read."""
    key = (f.file_path, f.content_offset)
    if key in vectors:
        return
    vectors[key] = True
    footers: dict[str, dict[tuple[Optional[int], Optional[int]], BlobMetadata]] = vectors.setdefault("footers", {})
    where = f"{f.file_path} (deletion vector at offset {f.content_offset})"
    try:
        if f.file_path not in footers:
            footers[f.file_path] = {(b.offset, b.length): b for b in read_footer(io, f.file_path)}
        blob = footers[f.file_path].get((f.content_offset, f.content_size_in_bytes))
        if blob is None:
            report.add("file", where, f"no blob of {f.content_size_in_bytes} bytes at that offset in the Puffin footer")
            return
        target = blob.properties.get("referenced-data-file")
        if blob.type != DV_BLOB_TYPE or target != f.referenced_data_file:
            report.add("file", where, f"the footer describes a {blob.type} blob for {target}, the manifest a "
                                      f"deletion vector for {f.referenced_data_file}")
        n = len(vector_positions(io, f))
        if n != f.record_count:
            report.add("file", where, f"holds {n} positions, the manifest records {f.record_count}")
    except CorruptDataFileError as e:
        report.add("file", where, e.reason)


def _check_summary(report: Report, meta_path: str, s: Snapshot, live: dict[str, int]) -> None:
    sm = s.summary or {}
    checks = (("total-records", live["records"]), ("total-data-files", live["data"]),
              ("total-delete-files", live["delete"]), ("total-files-size", live["size"]),
              ("total-position-deletes", live["pos"]), ("total-equality-deletes", live["eq"]))
    for key, actual in checks:
        if key in sm:
            try:
                recorded = int(sm[key])
            except ValueError:
                report.add("summary", meta_path, f"snapshot {s.snapshot_id}: {key} is {sm[key]!r}")
                continue
            if recorded != actual:
                report.add("summary", meta_path, f"snapshot {s.snapshot_id}: {key} is {recorded} but its live "
                                                  f"files add up to {actual}")


def _versions(ops: TableOperations) -> list[int]:
    """The table's metadata versions, oldest first: every catalog's operations list them, outside
    the ``TableOperations`` protocol."""
    return ops._list_versions()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
