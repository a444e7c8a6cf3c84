"""Verify a table end to end, without Spark: what ``icefloe check TABLE`` runs.

Iceberg (spec sections in brackets):

* ``version-hint.text`` names the latest ``vN.metadata.json`` [Hadoop tables];
* the current snapshot, every ref and snapshot-log entry name a known snapshot;
  snapshot ids are unique, sequence numbers grow from parent to child and
  never pass ``last-sequence-number`` [Snapshots, Sequence Numbers];
* every manifest list, manifest and data/delete file exists with the recorded
  size; Parquet footers hold the recorded row counts [Manifests];
* manifest-list counts match the manifest entries; entries' sequence numbers
  are not newer than their manifest's [Manifest Lists];
* each snapshot's live files add up to its summary totals [Snapshot Summary].

Paimon: the ``EARLIEST``/``LATEST`` hints agree with the snapshot files and
each snapshot's manifest lists exist.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Callable, Optional

from icefloe.core.progress import track


@dataclass
class Problem:
    kind: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.path}: {self.message}"


@dataclass
class Report:
    table: str
    location: str
    problems: list = field(default_factory=list)
    checked: dict = field(default_factory=dict)     # what was looked at: counts per kind

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, kind: str, path: str, message: str) -> None:
        self.problems.append(Problem(kind, path, message))

    def count(self, kind: str, n: int = 1) -> None:
        self.checked[kind] = self.checked.get(kind, 0) + n

    def to_json(self) -> dict:
        return {"table": self.table, "location": self.location, "ok": self.ok, "checked": self.checked,
                "problems": [{"kind": p.kind, "path": p.path, "message": p.message} for p in self.problems]}


def check_table(table, progress: Optional[Callable[[str], None]] = None) -> Report:
    if getattr(table, "format", "iceberg") == "paimon":
        return check_paimon(table.name, table.location, progress)
    return check_iceberg(table, progress)


# --------------------------------------------------------------------------- Iceberg
def check_iceberg(table, progress: Optional[Callable[[str], None]] = None) -> Report:
    from icefloe.errors import IcefloeError
    from icefloe.iceberg.hadoop import HINT_FILE
    from icefloe.iceberg.manifest import ADDED, DATA, DELETED, POSITION_DELETES
    from icefloe.iceberg.manifest_avro import entries_from_records, read_manifest_raw
    from icefloe.iceberg.manifest_list import read_manifest_list

    ops = table.ops
    io = table.io
    report = Report(table.name, table.location)
    say = progress or (lambda msg: None)

    # -- version hint and metadata files
    versions = ops._list_versions()
    latest = versions[-1] if versions else None
    hint_path = f"{ops.metadata_dir}/{HINT_FILE}"
    try:
        hint_text = io.read_bytes(hint_path).decode("utf-8", "replace").strip()
    except FileNotFoundError:
        hint_text = None
    if hint_text is None:
        report.add("hint", hint_path, f"missing; the latest metadata version is {latest}")
    elif not hint_text.isdigit():
        report.add("hint", hint_path, f"holds {hint_text!r}, not a version number (latest is {latest})")
    elif int(hint_text) != latest:
        report.add("hint", hint_path, f"says version {hint_text} but the latest metadata file is "
                                      f"v{latest}.metadata.json")
    report.count("metadata files", len(versions))
    try:
        table.refresh()
    except IcefloeError as e:
        report.add("metadata", ops.metadata_path(latest or 0), str(e))
        return report
    meta = table.metadata
    meta_path = table.metadata_location

    # -- snapshots, refs, sequence numbers
    by_id = {}
    for s in meta.snapshots:
        if s.snapshot_id in by_id:
            report.add("snapshot", meta_path, f"snapshot id {s.snapshot_id} appears twice")
        by_id[s.snapshot_id] = s
    seqs = {}
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
    seen_files: dict = {}
    seen_manifests: dict = {}
    footer_checked: set = set()
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
                entries = _read_manifest(report, io, meta, m, specs, entries_from_records, read_manifest_raw)
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
                live["size"] += f.file_size_in_bytes
                _check_file(report, io, f, seen_files, footer_checked)
            expected = {"added": (m.added_files_count, m.added_rows_count, counts[1]),
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


def _read_manifest(report, io, meta, m, specs, entries_from_records, read_manifest_raw):
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


def _check_file(report, io, f, seen: dict, footer_checked: set) -> None:
    path = f.file_path
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


def _check_summary(report, meta_path, s, live) -> None:
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


# --------------------------------------------------------------------------- Paimon
def check_paimon(name: str, location: str, progress: Optional[Callable[[str], None]] = None) -> Report:
    report = Report(name, location)
    snap_dir = os.path.join(location, "snapshot")
    manifest_dir = os.path.join(location, "manifest")
    if not os.path.isdir(snap_dir):
        report.add("snapshot", snap_dir, "missing snapshot directory")
        return report
    ids = sorted(int(n.split("-", 1)[1]) for n in os.listdir(snap_dir)
                 if n.startswith("snapshot-") and n.split("-", 1)[1].isdigit())
    report.count("snapshots", len(ids))
    for hint, expected in (("LATEST", ids[-1] if ids else None), ("EARLIEST", ids[0] if ids else None)):
        path = os.path.join(snap_dir, hint)
        if not os.path.exists(path):
            if expected is not None:
                report.add("hint", path, f"missing; expected {expected}")
            continue
        text = open(path).read().strip()
        if not text.isdigit() or int(text) != expected:
            report.add("hint", path, f"says {text!r} but the {hint.lower()} snapshot file is snapshot-{expected}")
    for sid in track(ids, "checking snapshots"):
        path = os.path.join(snap_dir, f"snapshot-{sid}")
        if progress:
            progress(f"snapshot {sid}")
        try:
            snap = json.load(open(path))
        except ValueError as e:
            report.add("snapshot", path, f"not valid JSON: {e}")
            continue
        if snap.get("id") != sid:
            report.add("snapshot", path, f"holds id {snap.get('id')}, expected {sid}")
        for key in ("baseManifestList", "deltaManifestList", "changelogManifestList", "indexManifest"):
            ml = snap.get(key)
            if ml and not os.path.exists(os.path.join(manifest_dir, ml)):
                report.add("manifest-list", os.path.join(manifest_dir, ml), f"missing ({key} of snapshot {sid})")
            elif ml:
                report.count("manifest lists")
    if ids and ids != list(range(ids[0], ids[-1] + 1)):
        gaps = sorted(set(range(ids[0], ids[-1] + 1)) - set(ids))
        report.add("snapshot", snap_dir, f"snapshot ids are not continuous: missing {gaps[:10]}")
    _check_paimon_contents(report, location, ids)
    return report


def _check_paimon_contents(report: Report, location: str, ids: list) -> None:
    """Manifests and data files of every snapshot and tag: present, at their recorded sizes,
    record counts adding up to each snapshot's totals, schemas present."""
    from icefloe.core.io import LOCAL
    from icefloe.errors import IcefloeError
    from icefloe.paimon import manifest as mf
    from icefloe.paimon.file_store import FileStore
    from icefloe.paimon.schema import latest_schema, list_schema_ids
    from icefloe.paimon.snapshot import Snapshot

    try:
        schema = latest_schema(LOCAL, location)
    except IcefloeError as e:
        report.add("schema", os.path.join(location, "schema"), str(e))
        return
    if schema is None:
        report.add("schema", os.path.join(location, "schema"), "no schema file")
        return
    schema_ids = set(list_schema_ids(LOCAL, location))
    report.count("schemas", len(schema_ids))
    store = FileStore(LOCAL, location, schema)
    snaps = []
    for sid in ids:
        path = store.snapshots.snapshot_path(sid)
        try:
            snaps.append((f"snapshot {sid}", path, Snapshot.from_json(open(path).read(), path)))
        except (IcefloeError, OSError, ValueError):
            continue                      # reported above
    tag_dir = os.path.join(location, "tag")
    for name in sorted(os.listdir(tag_dir)) if os.path.isdir(tag_dir) else []:
        if not name.startswith("tag-"):
            continue
        path = os.path.join(tag_dir, name)
        try:
            snaps.append((f"tag {name[4:]}", path, Snapshot.from_json(open(path).read(), path)))
            report.count("tags")
        except (IcefloeError, OSError, ValueError) as e:
            report.add("tag", path, f"not a readable snapshot: {e}")
    seen_manifests: set = set()
    seen_files: set = set()

    def add_once(kind: str, where: str, message: str) -> None:
        if not any(p.path == where for p in report.problems):
            report.add(kind, where, message)

    for what, path, snap in track(snaps, "checking manifests and data files"):
        if snap.schema_id not in schema_ids:
            report.add("schema", path, f"{what} uses schema {snap.schema_id}, which has no schema file")
        try:
            metas = {}
            for lst, size in ((snap.base_manifest_list, snap.base_manifest_list_size),
                              (snap.delta_manifest_list, snap.delta_manifest_list_size)):
                metas[lst] = store.read_manifest_list(lst, size)
        except IcefloeError as e:
            add_once("manifest-list", getattr(e, "path", path), f"{getattr(e, 'reason', e)} ({what})")
            continue
        entries = {}
        broken = False
        for lst, ms in metas.items():
            for m in ms:
                mpath = store.manifest_path(m.file_name)
                if m.file_name not in seen_manifests:
                    seen_manifests.add(m.file_name)
                    report.count("manifests")
                    if os.path.exists(mpath) and os.path.getsize(mpath) != m.file_size:
                        report.add("manifest", mpath, f"is {os.path.getsize(mpath)} bytes, its manifest list "
                                                      f"records {m.file_size}")
                try:
                    entries.setdefault(lst, []).extend(store.read_manifest(m.file_name, m.file_size))
                except IcefloeError as e:
                    add_once("manifest", mpath, f"{getattr(e, 'reason', e)} ({what})")
                    broken = True
        if broken:
            continue
        delta = entries.get(snap.delta_manifest_list, [])
        delta_rows = sum(e.file.row_count if e.kind == mf.ADD else -e.file.row_count for e in delta)
        if snap.delta_record_count is not None and delta_rows != snap.delta_record_count:
            report.add("records", path, f"{what}: deltaRecordCount {snap.delta_record_count} but its delta "
                                        f"manifests add up to {delta_rows}")
        try:
            live = mf.live_files([e for lst in metas for e in entries.get(lst, [])])
        except Exception as e:
            report.add("manifest", store.manifest_dir, f"{what}: {e}")
            continue
        total = sum(e.file.row_count for e in live)
        if snap.total_record_count is not None and total != snap.total_record_count:
            report.add("records", path, f"{what}: totalRecordCount {snap.total_record_count} but its live data "
                                        f"files hold {total} rows")
        for e in live:
            fpath = store.data_file_path(e)
            if fpath in seen_files:
                continue
            seen_files.add(fpath)
            report.count("data files")
            if not os.path.exists(fpath):
                report.add("file", fpath, f"missing (recorded {e.file.file_size} bytes, {e.file.row_count} rows; "
                                          f"live in {what})")
            elif os.path.getsize(fpath) != e.file.file_size:
                report.add("file", fpath, f"is {os.path.getsize(fpath)} bytes, the manifest records "
                                          f"{e.file.file_size}")
