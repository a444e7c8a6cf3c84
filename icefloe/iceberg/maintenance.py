# pyright: strict
"""Table maintenance: snapshot expiry and orphan-file removal, plus property updates.

Expiry follows the spec's "Snapshot Retention Policy" for every ref:

1. refs other than ``main`` whose snapshot is older than their ``max-ref-age-ms``
   (default: table property ``history.expire.max-ref-age-ms``, unlimited) are dropped;
2. every remaining ref's snapshot is kept;
3. each remaining branch keeps its ancestors while the chain is shorter than
   ``min-snapshots-to-keep`` or the snapshot is younger than ``max-snapshot-age-ms``
   (defaults: ``history.expire.min-snapshots-to-keep`` = 1,
   ``history.expire.max-snapshot-age-ms`` = 5 days, overridden by the call's
   ``retain_last`` and ``older_than``);
4. snapshots on no branch are kept while younger than the expiry time;
5. everything else expires.

The new metadata is committed first; only then are files deleted that no retained
snapshot reaches: manifest lists of expired snapshots, their manifests that no
retained snapshot lists, and the data and delete files live in those manifests but
live in no retained manifest (Java's ``ReachableFileCleanup``). A crash after the
commit leaves orphans, never a dangling reference; ``remove_orphan_files`` collects them.
"""
from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.core.arrow import arrow_of, numpy_of
from icefloe.core.io import FileIO, is_remote, prune_empty_dirs, strip_scheme
from icefloe.core.progress import track
from icefloe.core.reports import ExpireReport
from icefloe.core.timetravel import AsOf, to_epoch_ms
from icefloe.errors import MaintenanceError  # noqa: F401 - defined in icefloe.errors, importable here too
from icefloe.iceberg.hadoop import HINT_FILE
from icefloe.iceberg.locations import OUTSIDE, check_table_alone, deletion_root, inside_any
from icefloe.iceberg.manifest import DATA
from icefloe.iceberg import unhonoured
from icefloe.iceberg import parquet_props
from icefloe.iceberg.manifest_codec import CODEC_PROPERTY, LEVEL_PROPERTY, ManifestCodec
from icefloe.iceberg.manifest_list import ManifestFile
from icefloe.iceberg.metrics_modes import METRICS_PREFIX, check_metrics_properties
from icefloe.iceberg.manifest_reader import (
    live_files,
    load_manifest_entries,
    snapshot_manifests,
)
from icefloe.iceberg.metadata_builder import (
    RemoveProperties, RemoveSnapshotRef, RemoveSnapshots, SetProperties, TableUpdate, UpgradeFormatVersion,
)
from icefloe.iceberg.metadata_files import is_metadata_file_name, metadata_codec
from icefloe.iceberg.metadata_commit import MetadataChange, commit_metadata
from icefloe.iceberg.operations import TableOperations
from icefloe.iceberg.orphan_paths import PathEquivalence, find_orphans
from icefloe.iceberg.refs import BRANCH, ancestors
from icefloe.iceberg.snapshot import Snapshot, SnapshotRef
from icefloe.iceberg.table_metadata import (
    MAIN_BRANCH,
    TableMetadata,
    check_format_version_property,
    now_ms,
)

MAX_SNAPSHOT_AGE_MS = "history.expire.max-snapshot-age-ms"
MIN_SNAPSHOTS_TO_KEEP = "history.expire.min-snapshots-to-keep"
MAX_REF_AGE_MS = "history.expire.max-ref-age-ms"
GC_ENABLED = "gc.enabled"
DEFAULT_MAX_SNAPSHOT_AGE_MS = 5 * 24 * 3600 * 1000
DEFAULT_MIN_SNAPSHOTS_TO_KEEP = 1
DEFAULT_MAX_REF_AGE_MS = 2 ** 63 - 1
ORPHAN_MIN_AGE_MS = 3 * 24 * 3600 * 1000


def _check_gc(meta: TableMetadata, what: str) -> None:
    if meta.properties.get(GC_ENABLED, "true").strip().lower() == "false":
        raise MaintenanceError(f"cannot {what}: gc.enabled is false for table {meta.location} "
                               "(its files may be shared with other tables)")


# --------------------------------------------------------------------------- retention
def retained(meta: TableMetadata, now: int, expire_older_than: int, min_snapshots: int,
             max_ref_age_ms: int) -> tuple[set[int], dict[str, SnapshotRef]]:
    """(snapshot ids to keep, refs to keep) under the retention policy."""
    refs: dict[str, SnapshotRef] = {}
    for name, ref in meta.refs.items():
        if name == MAIN_BRANCH:
            refs[name] = ref
            continue
        snap = next((s for s in meta.snapshots if s.snapshot_id == ref.snapshot_id), None)
        limit = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else max_ref_age_ms
        if snap is not None and now - snap.timestamp_ms <= limit:
            refs[name] = ref
    keep = {ref.snapshot_id for ref in refs.values()}
    on_branches: set[int] = set()
    for ref in refs.values():
        if ref.type != BRANCH:
            on_branches.add(ref.snapshot_id)
            continue
        older_than = now - ref.max_snapshot_age_ms if ref.max_snapshot_age_ms is not None else expire_older_than
        min_keep = ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else min_snapshots
        kept_here = 0
        walking = True
        for snap in ancestors(meta, ref.snapshot_id):
            on_branches.add(snap.snapshot_id)
            if walking and (kept_here < min_keep or snap.timestamp_ms >= older_than):
                keep.add(snap.snapshot_id)
                kept_here += 1
            else:
                walking = False
    for snap in meta.snapshots:
        if snap.snapshot_id not in on_branches and snap.timestamp_ms >= expire_older_than:
            keep.add(snap.snapshot_id)
    return keep, refs


def _ms(value: AsOf) -> int:
    return to_epoch_ms(value)


def expire_snapshots(ops: TableOperations, older_than: Optional[AsOf] = None, retain_last: Optional[int] = None,
                     clean_files: bool = True, snapshot_ids: Optional[Iterable[int]] = (),
                     now: Optional[int] = None) -> ExpireReport:
    """Expire snapshots under the retention policy, and ``snapshot_ids`` whatever their age (none
    may be the head of a branch or tag); commit, then delete unreachable files. ``now`` (epoch ms,
    default the clock) is the time the table's age settings (``history.expire.max-snapshot-age-ms``,
    ``max-ref-age-ms``) count back from."""
    snapshot_ids = {int(i) for i in snapshot_ids or ()}
    if retain_last is not None and int(retain_last) < 1:
        raise MaintenanceError(f"retain_last must be at least 1, got {retain_last}")
    current = ops.load()[1]
    _check_gc(current, "expire snapshots")
    if clean_files:                     # refused before anything is committed
        deletion_root(ops, current)
        check_table_alone(ops, current)

    def change(base: TableMetadata) -> Optional[list[TableUpdate]]:
        _check_gc(base, "expire snapshots")
        if not base.snapshots:
            return None
        props = base.properties
        clock = now_ms() if now is None else int(now)
        expire_before = _ms(older_than) if older_than is not None else \
            clock - int(props.get(MAX_SNAPSHOT_AGE_MS, DEFAULT_MAX_SNAPSHOT_AGE_MS))
        min_keep = int(retain_last) if retain_last is not None else \
            int(props.get(MIN_SNAPSHOTS_TO_KEEP, DEFAULT_MIN_SNAPSHOTS_TO_KEEP))
        max_ref_age = int(props.get(MAX_REF_AGE_MS, DEFAULT_MAX_REF_AGE_MS))
        keep, refs = retained(base, clock, expire_before, min_keep, max_ref_age)
        heads = {r.snapshot_id: name for name, r in refs.items()}
        for i in sorted(snapshot_ids):
            base.snapshot_by_id(i)                         # NoSuchSnapshotError for an unknown id
            if i in heads:
                raise MaintenanceError(f"cannot expire snapshot {i}: {heads[i]!r} still refers to it")
        keep = keep - snapshot_ids
        gone = sorted({s.snapshot_id for s in base.snapshots} - keep)
        out: list[TableUpdate] = [RemoveSnapshotRef(n) for n in sorted(base.refs) if n not in refs]
        return out + ([RemoveSnapshots(gone)] if gone else []) or None

    result = commit_metadata(ops, change)
    before, after = result.base, result.new
    kept_ids = {s.snapshot_id for s in after.snapshots}
    expired = [s for s in before.snapshots if s.snapshot_id not in kept_ids]
    report = ExpireReport(expired_snapshot_ids=[s.snapshot_id for s in expired],
                          removed_refs=sorted(set(before.refs) - set(after.refs)))
    if clean_files and expired:
        _clean_expired(ops, before, expired, report)
    return report


def _clean_expired(ops: TableOperations, before: TableMetadata, expired: list[Snapshot],
                   report: ExpireReport) -> None:
    """Delete what only the expired snapshots reached, all or nothing: if any manifest list or
    manifest cannot be read, or a file to delete lies outside the table's location, nothing is
    deleted and ``MaintenanceError`` says why (the expiry itself is committed; the files stay as
    orphans, for ``remove_orphan_files`` once the table is readable)."""
    io = ops.io
    try:
        # what is reachable now: a commit may have landed since ours (Java re-reads, too)
        latest = ops.load()[1]
        retained_manifests: dict[str, ManifestFile] = {}
        for snap in latest.snapshots:
            for m in snapshot_manifests(io, snap):
                retained_manifests[m.manifest_path] = m
        candidates: dict[str, ManifestFile] = {}
        for snap in track(expired, "reading expired snapshots"):
            for m in snapshot_manifests(io, snap):
                if m.manifest_path not in retained_manifests:
                    candidates[m.manifest_path] = m
        doomed = _unreachable(io, before, list(candidates.values()), list(retained_manifests.values()))
    except Exception as e:
        raise MaintenanceError(
            f"expired {len(expired)} snapshot(s) of {ops.location} but deleted no file: a manifest list or manifest "
            f"could not be read ({type(e).__name__}), so what is still reachable is unknown") from None
    roots = [deletion_root(ops, before)]
    lists = [s.manifest_list for s in expired if s.manifest_list]
    outside = [p for p in list(doomed) + list(candidates) + lists if inside_any(p, roots) is None]
    if outside:
        raise MaintenanceError(
            f"expired {len(expired)} snapshot(s) of {ops.location} but deleted no file: {len(outside)} file(s) "
            f"the expired snapshots name lie outside the table's location ({OUTSIDE})")
    for path, content in track(sorted(doomed.items()), "deleting data and delete files"):
        io.delete(path)
        (report.deleted_data_files if content == DATA else report.deleted_delete_files).append(path)
    for path in track(sorted(candidates), "deleting manifests"):
        io.delete(path)
        report.deleted_manifests.append(path)
    for path in lists:
        io.delete(path)
        report.deleted_manifest_lists.append(path)


def _unreachable(io: FileIO, meta: TableMetadata, candidates: list[ManifestFile],
                 retained: list[ManifestFile]) -> dict[str, int]:
    """The files the ``candidates`` manifests list live that no ``retained`` manifest lists live,
    with their content: read as columns of paths (``live_files``), a million in seconds."""
    found = [live_files(io, meta, m) for m in candidates]
    if not any(len(paths) for paths, _ in found):
        return {}
    paths = pa.concat_arrays([p.cast(pa.large_string()) for p, _ in found])
    contents = np.concatenate([c for _, c in found])
    for m in retained:
        kept, _ = live_files(io, meta, m)
        if len(kept):
            gone = numpy_of(pc.is_in(paths, value_set=kept.cast(pa.large_string())))
            paths, contents = paths.filter(arrow_of(~gone)), contents[~gone]
        if not len(paths):
            return {}
    return dict(zip(paths.to_pylist(), contents.tolist()))


# --------------------------------------------------------------------------- orphan files
def _norm(path: str) -> str:
    if is_remote(path):
        return path.rstrip("/")
    p = strip_scheme(path)
    return os.path.realpath(p) if os.path.isabs(p) else os.path.normpath(p)


def referenced_files(ops: TableOperations, version: int, meta: TableMetadata, with_data: bool = True) -> set[str]:
    """Every file the table's metadata refers to (normalized paths).

    The current and all logged metadata versions, the version hint, every snapshot's
    manifest list and manifests, every file in those manifests (deleted entries too,
    to stay on the safe side; left out without ``with_data``), and statistics files.
    """
    io = ops.io
    out = {_norm(ops.metadata_path(version)), _norm(f"{ops.metadata_dir}/{HINT_FILE}")}
    out.update(_norm(e["metadata-file"]) for e in meta.metadata_log if e.get("metadata-file"))
    for s in list(meta.statistics) + list(meta.partition_statistics):
        if s.get("statistics-path"):
            out.add(_norm(s["statistics-path"]))
    for snap in track(meta.snapshots, "reading snapshots"):
        if not snap.manifest_list:
            continue
        out.add(_norm(snap.manifest_list))
        for m in snapshot_manifests(io, snap):
            out.add(_norm(m.manifest_path))
            for e in load_manifest_entries(io, meta, m) if with_data else ():
                out.add(_norm(e.data_file.file_path))
    return out


def _newer_versions(ops: TableOperations, version: int) -> set[str]:
    import re

    # v<N>.metadata.json (Hadoop tables) or <NNNNN>-<uuid>.metadata.json (catalog tables), or either
    # gzip-compressed: .gz.metadata.json (and .metadata.json.gz, an older Java runtime's name)
    pattern = re.compile(r"^(?:v(\d+)|(\d+)-[0-9a-fA-F-]+)(?:\.gz)?\.metadata\.json(?:\.gz)?$")
    out: set[str] = set()
    for name in ops.io.list_dir(ops.metadata_dir):
        m = pattern.match(name)
        if m and int(m.group(1) or m.group(2)) >= version:
            out.add(_norm(f"{ops.metadata_dir}/{name}"))
    return out


def _hidden(path: str, roots: list[str]) -> bool:
    root = next((r for r in roots if path.startswith(r + os.sep)), None)
    parts = os.path.relpath(path, root).split(os.sep) if root else [os.path.basename(path)]
    if any(p.startswith(".staging-") for p in parts[:-1]):
        return False
    return any(p.startswith((".", "_")) and "=" not in p for p in parts)


def remove_orphan_files(ops: TableOperations, older_than: Optional[AsOf] = None, dry_run: bool = False,
                        location: Optional[str] = None, listing: Optional[list[tuple[str, int]]] = None,
                        equivalence: Optional[PathEquivalence] = None) -> list[str]:
    """Delete files under the table location that no metadata refers to; returns them sorted.

    ``location``: only the files under this directory of the table's location. ``listing``: the
    files to consider, ``(path, modification time in epoch ms)`` each, in place of listing the
    directories (Iceberg's ``file_list_view``); a path outside the table's location is refused.

    Files modified after ``older_than`` (default: 3 days ago) are never touched: a
    commit in progress writes its files before the metadata that refers to them.
    Metadata JSON files outside this table's metadata directory are left alone (a
    registered table may share its location with the catalog that wrote it), and so are
    hidden names (``.x``, ``_x``: Hadoop's checksum sidecars ``.<file>.crc``, ``_SUCCESS``),
    as Iceberg's own orphan cleanup skips them, except inside icefloe's ``.staging-*``
    directories, which only a failed write leaves behind.

    ``equivalence``: how a listed file whose path the metadata names under another scheme or
    authority counts (``icefloe.iceberg.orphan_paths``; by default ``s3a``/``s3n`` are ``s3`` and
    any other mismatch refuses the cleanup before anything is deleted).
    """
    io = ops.io
    equivalence = equivalence or PathEquivalence()
    version, meta = ops.load()
    _check_gc(meta, "remove orphan files")
    cutoff = _ms(older_than) if older_than is not None else now_ms() - ORPHAN_MIN_AGE_MS
    roots = [deletion_root(ops, meta)]
    check_table_alone(ops, meta)        # another table's files would all look like orphans
    if location is not None:
        if _norm(location) not in roots and inside_any(_norm(location), roots) is None:
            raise ValueError(f"location {location} is not inside the table's location {roots[0]}")
        roots = [_norm(location)]
    listed: list[str] = []
    mtimes: dict[str, int] = {}
    if listing is not None:
        for path, mtime in listing:
            if inside_any(_norm(path), roots) is None:
                raise ValueError(f"listed file {path} is not inside {roots[0]}: only the table's files are "
                                 f"considered")
            mtimes[_norm(path)] = int(mtime)
        listed = list(mtimes)
    for root in roots if listing is None else ():
        if any(root != r and root.startswith(r + os.sep) for r in roots):
            continue  # nested in another root: listed with it
        listed.extend(_norm(p) for p in io.walk_files(root))
    own_metadata = _norm(ops.metadata_dir) + os.sep
    candidates = sorted({p for p in listed if not _hidden(p, roots)
                         and (mtimes[p] if p in mtimes else io.mtime_ms(p)) < cutoff
                         # another catalog's metadata files (a registered table) are its business
                         and (p.startswith(own_metadata) or not is_metadata_file_name(p))})
    if not candidates:
        return []
    referenced = referenced_files(ops, version, meta)
    # A commit may have landed while we listed: what it refers to is not an orphan either.
    latest_version, latest = ops.load()
    if latest_version != version:
        referenced |= referenced_files(ops, latest_version, latest)
    referenced |= _newer_versions(ops, version)
    orphans = [p for p in find_orphans(candidates, referenced, equivalence) if inside_any(p, roots) is not None]
    if not dry_run:
        for p in track(orphans, "deleting orphan files"):
            io.delete(p)
    return orphans


# --------------------------------------------------------------------------- properties
def update_properties(ops: TableOperations, set: Optional[Mapping[str, Any]] = None,
                      remove: Optional[Iterable[str]] = None) -> TableMetadata:
    """Set and remove table properties in one metadata commit (``comment`` is the table comment)."""
    updates = {str(k): str(v) for k, v in (set or {}).items()}
    removals = [str(k) for k in (remove or [])]
    version: Optional[str] = None
    if "format-version" in updates:             # reserved: the version, not a stored property
        version = updates.pop("format-version")
        check_format_version_property(version, ops.location)
    if "format-version" in removals:
        raise MaintenanceError("format-version is the table's format version, not a property that can be removed")
    both = sorted(frozenset(updates) & frozenset(removals))
    if both:
        raise MaintenanceError(f"properties {both} are both set and removed in one update")

    return commit_metadata(ops, properties_change(ops.location, updates, removals, version)).new


def properties_change(location: str, updates: dict[str, str], removals: list[str],
                      version: Optional[str] = None) -> MetadataChange:
    """The change setting and removing properties (and upgrading to format ``version``); a
    metadata codec no writer knows is refused at once."""
    metadata_codec(updates, location)
    def change(base: TableMetadata) -> Optional[list[TableUpdate]]:
        out: list[TableUpdate] = []
        if version is not None:
            v = check_format_version_property(version, location, base.format_version)
            if v > base.format_version:
                out.append(UpgradeFormatVersion(v))
        changed = {k: v for k, v in updates.items() if base.properties.get(k) != v}
        if changed:
            out.append(SetProperties(changed))
        gone = [k for k in removals if k in base.properties]
        after = {k: v for k, v in {**base.properties, **changed}.items() if k not in gone}
        if {CODEC_PROPERTY, LEVEL_PROPERTY} & (set(changed) | set(gone)):     # refused before it is stored
            ManifestCodec.of(after)
        if set(unhonoured.KEYS) & set(changed):
            unhonoured.check(after, location, base.location)
        _check_metrics_change(base, changed, gone)
        parquet_props.check(after, set(changed) | set(gone))       # Parquet write settings, likewise
        if gone:
            out.append(RemoveProperties(gone))
        return out or None
    return change


def _check_metrics_change(base: TableMetadata, changed: dict[str, str], gone: list[str]) -> None:
    """Metrics modes set that icefloe cannot honour (``metrics_modes``) refused before they are stored."""
    if any(k.startswith(METRICS_PREFIX) for k in changed):
        check_metrics_properties({k: v for k, v in {**base.properties, **changed}.items() if k not in gone},
                                 base.schema)



# --------------------------------------------------------------------------- purge
def version_files(ops: TableOperations) -> list[str]:
    """The catalog's own metadata versions of the table (``v<N>.metadata.json`` or
    ``<NNNNN>-<uuid>.metadata.json`` in its metadata directory) and its version hint."""
    return sorted(_newer_versions(ops, 0) | ({_norm(f"{ops.metadata_dir}/{HINT_FILE}")}
                                             if ops.io.exists(f"{ops.metadata_dir}/{HINT_FILE}") else set()))


def purge_table_files(ops: TableOperations, version: int, meta: TableMetadata) -> list[str]:
    """Delete the files the table's metadata refers to (every metadata version, manifest list,
    manifest, data and delete file, statistics file) that lie inside the table's location, then
    the directories this leaves empty; never a directory tree, never a file it does not name.
    A table with ``gc.enabled=false`` (a ``snapshot`` table: its data files are another table's)
    loses its metadata files only, no data or delete file, as Iceberg's catalogs drop such a table.
    All or nothing: a table whose location overlaps another's, or whose manifests cannot be read,
    or whose metadata names a file outside its location, is refused before anything is deleted."""
    roots = [deletion_root(ops, meta)]
    check_table_alone(ops, meta)
    gc = meta.properties.get(GC_ENABLED, "true").strip().lower() != "false"
    try:
        referenced = referenced_files(ops, version, meta, with_data=gc) | set(version_files(ops))
    except Exception as e:
        raise MaintenanceError(f"cannot purge {ops.location}: a manifest list or manifest could not be read "
                               f"({type(e).__name__}), so the files it names are unknown; nothing was deleted "
                               "(drop the table without purge to keep its files)") from None
    doomed = sorted(referenced)
    outside = [p for p in doomed if inside_any(p, roots) is None]
    if outside:
        raise MaintenanceError(f"cannot purge {ops.location}: {len(outside)} file(s) its metadata names lie "
                               f"outside the table's location ({OUTSIDE}); nothing was deleted")
    for p in track(doomed, "deleting the table's files"):
        ops.io.delete(p)
    for r in roots:
        prune_empty_dirs(ops.io, r)
    return doomed


def drop_versions(ops: TableOperations) -> None:
    """Forget a directory-catalog table without purging: only its metadata versions and hint go
    (the table is gone, its data, manifests and statistics stay)."""
    for p in version_files(ops):
        ops.io.delete(p)
    prune_empty_dirs(ops.io, ops.metadata_dir)
