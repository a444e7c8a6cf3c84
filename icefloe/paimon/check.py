# pyright: strict
"""Verify a Paimon table end to end, without Spark (``Table.check``, ``icefloe check``).

The ``EARLIEST``/``LATEST`` hints, where present, agree with the snapshot files; snapshot ids are
continuous; every snapshot's and tag's manifest lists, manifests and data files exist
at their recorded sizes; record counts add up to the snapshot totals; every schema
file a snapshot names exists; index files exist; primary-key tables' files hold what their
manifests record (``check_pk``).
"""
from __future__ import annotations

import json
import os
from typing import Callable, Optional

from icefloe.core.io import LOCAL, FileIO
from icefloe.core.progress import track
from icefloe.core.reports import Report
from icefloe.errors import IcefloeError
from icefloe.paimon import manifest as mf
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.check_pk import check_index_files, check_primary_key_files
from icefloe.paimon.schema import latest_schema, list_schema_ids
from icefloe.paimon.snapshot import Snapshot


def check_paimon(name: str, location: str, progress: Optional[Callable[[str], None]] = None,
                 io: FileIO = LOCAL) -> Report:
    report = Report(name, location)
    snap_dir = os.path.join(location, "snapshot")
    manifest_dir = os.path.join(location, "manifest")
    if not io.is_dir(snap_dir):
        report.add("snapshot", snap_dir, "missing snapshot directory")
        return report
    ids = sorted(int(n.split("-", 1)[1]) for n in io.list_dir(snap_dir)
                 if n.startswith("snapshot-") and n.split("-", 1)[1].isdigit())
    report.count("snapshots", len(ids))
    for hint, expected in (("LATEST", ids[-1] if ids else None), ("EARLIEST", ids[0] if ids else None)):
        path = os.path.join(snap_dir, hint)
        if not io.exists(path):
            continue  # hints may be absent (pypaimon never writes EARLIEST): readers list the snapshots
        text = io.read_bytes(path).decode().strip()
        if not text.isdigit() or int(text) != expected:
            report.add("hint", path, f"says {text!r} but the {hint.lower()} snapshot file is snapshot-{expected}")
    for sid in track(ids, "checking snapshots"):
        path = os.path.join(snap_dir, f"snapshot-{sid}")
        if progress:
            progress(f"snapshot {sid}")
        try:
            snap = json.loads(io.read_bytes(path))
        except ValueError as e:
            report.add("snapshot", path, f"not valid JSON: {e}")
            continue
        if snap.get("id") != sid:
            report.add("snapshot", path, f"holds id {snap.get('id')}, expected {sid}")
        for key in ("baseManifestList", "deltaManifestList", "changelogManifestList", "indexManifest"):
            ml = snap.get(key)
            if ml and not io.exists(os.path.join(manifest_dir, ml)):
                report.add("manifest-list", os.path.join(manifest_dir, ml), f"missing ({key} of snapshot {sid})")
            elif ml:
                report.count("manifest lists")
    if ids and ids != list(range(ids[0], ids[-1] + 1)):
        gaps = sorted(set(range(ids[0], ids[-1] + 1)) - set(ids))
        report.add("snapshot", snap_dir, f"snapshot ids are not continuous: missing {gaps[:10]}")
    _check_paimon_contents(report, location, ids, io)
    return report


def _check_paimon_contents(report: Report, location: str, ids: list[int], io: FileIO) -> None:
    """Manifests and data files of every snapshot and tag: present, at their recorded sizes,
    record counts adding up to each snapshot's totals, schemas present."""
    try:
        schema = latest_schema(io, location)
    except IcefloeError as e:
        report.add("schema", os.path.join(location, "schema"), str(e))
        return
    if schema is None:
        report.add("schema", os.path.join(location, "schema"), "no schema file")
        return
    schema_ids = set(list_schema_ids(io, location))
    report.count("schemas", len(schema_ids))
    store = FileStore(io, location, schema)
    snaps: list[tuple[str, str, Snapshot]] = []
    for sid in ids:
        path = store.snapshots.snapshot_path(sid)
        try:
            snaps.append((f"snapshot {sid}", path, Snapshot.from_json(io.read_bytes(path).decode(), path)))
        except (IcefloeError, OSError, ValueError):
            continue                      # reported above
    tag_dir = os.path.join(location, "tag")
    for name in sorted(io.list_dir(tag_dir)) if io.is_dir(tag_dir) else []:
        if not name.startswith("tag-"):
            continue
        path = os.path.join(tag_dir, name)
        try:
            snaps.append((f"tag {name[4:]}", path, Snapshot.from_json(io.read_bytes(path).decode(), path)))
            report.count("tags")
        except (IcefloeError, OSError, ValueError) as e:
            report.add("tag", path, f"not a readable snapshot: {e}")
    seen_manifests: set[str] = set()
    seen_files: set[str] = set()

    def add_once(kind: str, where: str, message: str) -> None:
        if not any(p.path == where for p in report.problems):
            report.add(kind, where, message)

    for what, path, snap in track(snaps, "checking manifests and data files"):
        if snap.schema_id not in schema_ids:
            report.add("schema", path, f"{what} uses schema {snap.schema_id}, which has no schema file")
        try:
            metas: dict[str, list[mf.ManifestFileMeta]] = {}
            for lst, size in ((snap.base_manifest_list, snap.base_manifest_list_size),
                              (snap.delta_manifest_list, snap.delta_manifest_list_size)):
                metas[lst] = store.read_manifest_list(lst, size)
        except IcefloeError as e:
            add_once("manifest-list", getattr(e, "path", path), f"{getattr(e, 'reason', e)} ({what})")
            continue
        entries: dict[str, list[mf.ManifestEntry]] = {}
        broken = False
        for lst, ms in metas.items():
            for m in ms:
                mpath = store.manifest_path(m.file_name)
                if m.file_name not in seen_manifests:
                    seen_manifests.add(m.file_name)
                    report.count("manifests")
                    if io.exists(mpath) and io.size(mpath) != m.file_size:
                        report.add("manifest", mpath, f"is {io.size(mpath)} bytes, its manifest list "
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
        if delta_rows != snap.delta_record_count:
            report.add("records", path, f"{what}: deltaRecordCount {snap.delta_record_count} but its delta "
                                        f"manifests add up to {delta_rows}")
        try:
            live = mf.live_files([e for lst in metas for e in entries.get(lst, [])])
        except Exception as e:
            report.add("manifest", store.manifest_dir, f"{what}: {e}")
            continue
        total = sum(e.file.row_count for e in live)
        if total != snap.total_record_count:
            report.add("records", path, f"{what}: totalRecordCount {snap.total_record_count} but its live data "
                                        f"files hold {total} rows")
        for e in live:
            fpath = store.data_file_path(e)
            if fpath in seen_files:
                continue
            seen_files.add(fpath)
            report.count("data files")
            if not io.exists(fpath):
                report.add("file", fpath, f"missing (recorded {e.file.file_size} bytes, {e.file.row_count} rows; "
                                          f"live in {what})")
            elif io.size(fpath) != e.file.file_size:
                report.add("file", fpath, f"is {io.size(fpath)} bytes, the manifest records "
                                          f"{e.file.file_size}")
        if snap.changelog_manifest_list and what.startswith("snapshot"):
            _check_changelog(report, store, io, what, path, snap)
    check_index_files(report, store, io, [snap for _what, _path, snap in snaps])
    if schema.primary_keys and ids:
        latest = next((snap for what, _path, snap in reversed(snaps) if what == f"snapshot {ids[-1]}"), None)
        check_primary_key_files(report, store, io, location, latest)


def _check_changelog(report: Report, store: FileStore, io: FileIO, what: str, path: str, snap: Snapshot) -> None:
    """A snapshot's changelog: manifests readable, files present at their sizes, the snapshot's
    changelogRecordCount their total."""
    if snap.changelog_manifest_list is None:
        return
    try:
        entries = store.entries(store.read_manifest_list(snap.changelog_manifest_list,
                                                         snap.changelog_manifest_list_size))
    except IcefloeError as e:
        report.add("manifest", getattr(e, "path", path), f"{getattr(e, 'reason', e)} (changelog of {what})")
        return
    rows = 0
    for e in entries:
        rows += e.file.row_count
        fpath = store.data_file_path(e)
        report.count("changelog files")
        if not io.exists(fpath):
            report.add("file", fpath, f"missing (changelog file of {what})")
        elif io.size(fpath) != e.file.file_size:
            report.add("file", fpath, f"is {io.size(fpath)} bytes, the changelog manifest records {e.file.file_size}")
    if snap.changelog_record_count is not None and rows != snap.changelog_record_count:
        report.add("records", path, f"{what}: changelogRecordCount {snap.changelog_record_count} but its changelog "
                                    f"files hold {rows} rows")
