# pyright: strict
"""Snapshot expiration: keep a window of snapshots, delete what only older ones used.

Retention (Paimon's options): the newest ``snapshot.num-retained.min`` snapshots
are always kept; beyond the newest ``snapshot.num-retained.max`` all are
expired; in between, snapshots older than ``snapshot.time-retained`` are expired.
Expiring the snapshots before ``end`` (the new earliest) deletes

* data files that a snapshot in ``(earliest, end]`` marked DELETE in its delta
  manifests -- they are live in no retained snapshot;
* manifests and manifest lists of expired snapshots that ``end`` does not use
  (a manifest a later snapshot uses is carried through ``end``'s lists);
* the changelog of each expired snapshot: its changelog manifest list, manifests and files --
  unless the table keeps changelogs longer (``changelog.num-retained.*``, ``changelog.time-retained``):
  then the snapshot's JSON goes to ``changelog/changelog-<id>`` and the changelogs past their own
  retention are expired after the snapshots;
* index manifests of expired snapshots and the index files (HASH, deletion vectors) that neither
  ``end`` nor a tag still names;
* statistics files (``ANALYZE TABLE``) that only expired snapshots name;
* never a snapshot a consumer (``consumer.py``) is still to read: from the smallest next
  snapshot of the consumers on, every snapshot stays;
* the snapshot files, then the ``EARLIEST`` hint is moved to ``end``.

Tags (``tag.py``) keep their snapshot's files: a data file live in a tag, and the manifests
and manifest lists a tag uses, are never deleted here. Only a tag before ``end`` can hold a
file that a snapshot in ``(earliest, end]`` deleted. The tags are listed again after the
snapshot files are gone, so a tag created meanwhile keeps its files too.

The snapshot files are deleted first (after everything to delete has been listed), so
an expiration that fails or crashes part-way leaves only unreferenced files behind.
"""
from __future__ import annotations

import time
from typing import Optional, Sequence

from icefloe.core.progress import track
from icefloe.errors import NoSuchSnapshotError
from icefloe.paimon import changelog as cl
from icefloe.paimon import dynamic_bucket as db
from icefloe.paimon import manifest as mf
from icefloe.paimon.consumer import min_next_snapshot
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.ownership import check_owns_files
from icefloe.paimon.snapshot import Snapshot
from icefloe.paimon.statistics import statistics_path
from icefloe.paimon.tag import Reach, TagManager, data_paths, tags_reach


def expiration_end(store: FileStore, now_ms: Optional[int] = None, older_than_ms: Optional[int] = None,
                   retain_min: Optional[int] = None, retain_max: Optional[int] = None,
                   max_deletes: Optional[int] = None) -> Optional[int]:
    """The id of the first snapshot to keep, or None if nothing expires. ``older_than_ms``,
    ``retain_min`` and ``retain_max`` override the time retention and the retained minimum and
    maximum; ``max_deletes`` caps the snapshots expired at once (``snapshot.expire.limit``)."""
    snaps = store.snapshots
    latest, earliest = snaps.latest_id(), snaps.earliest_id()
    if latest is None or earliest is None:
        return None
    co = store.options
    retain_min = max(1, co.snapshot_num_retained_min if retain_min is None else int(retain_min))
    retain_max = max(retain_min, co.snapshot_num_retained_max if retain_max is None else int(retain_max))
    older_than = older_than_ms if older_than_ms is not None else \
        (now_ms if now_ms is not None else int(time.time() * 1000)) - co.snapshot_time_retained_ms
    low = max(latest - retain_max + 1, earliest)
    high = latest - retain_min + 1   # exclusive: the newest retain_min are never expired
    end = high
    for sid in range(low, high):
        try:
            if snaps.snapshot(sid).time_millis > older_than:
                end = sid
                break
        except NoSuchSnapshotError:
            continue
    end = max(end, low)
    # a consumer still reads from its next snapshot on (Paimon's ConsumerManager.minNextSnapshot)
    needed = min_next_snapshot(store.io, store.meta_path)
    if needed is not None:
        end = min(end, needed)
    if max_deletes is not None:
        end = min(end, earliest + max(0, int(max_deletes)))
    return end if end > earliest else None


def index_paths(store: FileStore, name: Optional[str]) -> list[str]:
    """The index files an index manifest names (none if it cannot be read)."""
    if not name:
        return []
    try:
        return [r.get("_EXTERNAL_PATH") or db.index_path(store, r["_FILE_NAME"])
                for r in db.read_index_manifest(store, name)]
    except Exception:
        return []


def unused_index_files(store: FileStore, going: Sequence[Snapshot],
                       kept: Sequence[Snapshot]) -> tuple[list[str], list[str]]:
    """(index file paths, index manifest names) that the snapshots ``going`` name and none of
    ``kept`` does."""
    kept_names = {s.index_manifest for s in kept}
    kept_files = {p for name in kept_names for p in index_paths(store, name)}
    files: dict[str, None] = {}      # insertion-ordered, each file once
    manifests: list[str] = []
    for name in dict.fromkeys(s.index_manifest for s in going):
        if name and name not in kept_names:
            files.update((p, None) for p in index_paths(store, name) if p not in kept_files)
            manifests.append(name)
    return list(files), manifests


def expire_snapshots(store: FileStore, now_ms: Optional[int] = None, older_than_ms: Optional[int] = None,
                     retain_min: Optional[int] = None, retain_max: Optional[int] = None,
                     max_deletes: Optional[int] = None) -> list[int]:
    """Expire per the table's retention options (the arguments override them, as in
    ``expiration_end``); returns the expired snapshot ids."""
    check_owns_files(store.schema.options, store.table_path, "expire snapshots")
    end = expiration_end(store, now_ms, older_than_ms, retain_min, retain_max, max_deletes)
    if end is None:
        return []
    snaps = store.snapshots
    begin = snaps.earliest_id()
    if begin is None:              # no snapshot left (another expiry removed them): nothing to do
        return []
    keep = snaps.snapshot(end)
    tag_manager = TagManager(store.io, store.meta_path)
    tags = tag_manager.tags()
    # Everything to delete is found before anything is deleted, and the snapshot files go
    # first: an expiration cut short leaves unreferenced files, never a snapshot that
    # references deleted ones.
    # 1. data files deleted by snapshots (begin, end]
    # (with their extra files, e.g. file indexes; a file a snapshot deletes and adds again, as
    # rewrite_file_index does with a new index, stays, and so do the extra files it keeps)
    data_files: list[str] = []
    for sid in track(range(begin + 1, end + 1), "reading expired snapshots"):
        try:
            s = snaps.snapshot(sid)
        except NoSuchSnapshotError:
            continue
        deleted: list[str] = []
        added: set[str] = set()
        delta = store.read_manifest_list(s.delta_manifest_list, s.delta_manifest_list_size)
        if not any(m.num_deleted_files for m in delta):
            continue        # a delta of additions only (every append): no file of it to delete, none read
        for m in delta:
            for e in store.read_manifest(m.file_name, m.file_size):
                if e.kind == mf.DELETE:
                    deleted.extend(data_paths(store, e))
                else:
                    added.update(data_paths(store, e))
        data_files.extend(p for p in deleted if p not in added)
    # ... except those a tag still reads, and the manifests and lists tags use
    protected = tags_reach(store, tags, data_below=end if data_files else 0)
    data_files = [p for p in data_files if p not in protected.data]
    # 2. manifests and lists only the expired snapshots use
    kept_lists = {keep.base_manifest_list, keep.delta_manifest_list} | protected.lists
    kept_manifests = {m.file_name for m in store.data_manifests(keep)} | protected.manifests
    metadata_files: list[str] = []
    expired: list[int] = []
    expired_snaps: list[Snapshot] = []
    keep_changelogs = cl.decoupled(store)
    kept_changelog: list[Snapshot] = []
    for sid in range(begin, end):
        try:
            s = snaps.snapshot(sid)
        except NoSuchSnapshotError:
            continue
        for lst in (s.base_manifest_list, s.delta_manifest_list):
            if lst in kept_lists:
                continue
            try:
                metas = store.read_manifest_list(lst)
            except Exception:
                metas = []
            metadata_files.extend(m.file_name for m in metas if m.file_name not in kept_manifests)
            metadata_files.append(lst)
        if s.changelog_manifest_list:      # a snapshot's changelog is its own: it goes with it
            if keep_changelogs:             # ... unless changelogs outlive snapshots: kept as changelog-<id>
                kept_changelog.append(s)
            else:
                files, lists = cl.changelog_files_of(store, s)
                data_files.extend(files)
                metadata_files.extend(lists)
        expired.append(sid)
        expired_snaps.append(s)
    # ... and the index manifests and index files (HASH, deletion vectors) only expired ones use
    files, manifests = unused_index_files(store, expired_snaps, [keep] + [t.snapshot for t in tags])
    data_files.extend(files)
    metadata_files.extend(manifests)
    # ... and the statistics files only expired snapshots name (later ones inherit them)
    stats = {s.statistics for s in expired_snaps if s.statistics}
    if stats:
        stats -= {t.snapshot.statistics for t in tags}
        for sid in range(end, (snaps.latest_id() or end) + 1):
            try:
                stats.discard(snaps.snapshot(sid).statistics)
            except NoSuchSnapshotError:
                continue
    data_files.extend(statistics_path(store.table_path, name) for name in sorted(stats))
    # 3. the snapshot files, oldest first, and the hint; then the files only they used
    for snap in kept_changelog:        # written before its snapshot goes: never a gap in the changes
        store.io.write_bytes(cl.changelog_path(store, snap.id), snap.to_json().encode("utf-8"), overwrite=True)
    for sid in expired:
        snaps.delete_snapshot(sid)
    snaps.commit_earliest_hint(end)
    # a tag written meanwhile saw its snapshot still there; it is listed here
    seen = {(t.name, t.raw) for t in tags}
    late = [t for t in tag_manager.tags() if (t.name, t.raw) not in seen]
    if late:
        more: Reach = tags_reach(store, late)
        data_files = [p for p in data_files if p not in more.data]
        metadata_files = [n for n in metadata_files if n not in more.lists and n not in more.manifests]
        late_index = {t.snapshot.index_manifest for t in late}
        late_files = {p for name in late_index for p in index_paths(store, name)}
        data_files = [p for p in data_files if p not in late_files]
        metadata_files = [n for n in metadata_files if n not in late_index]
    for path in track(data_files, "deleting data files"):
        store.io.delete(path)
    for name in track(list(dict.fromkeys(metadata_files)), "deleting manifests"):
        store.delete_manifest_file(name)
    if keep_changelogs:
        latest = snaps.latest_id()
        if latest is not None:
            cl.expire_changelogs(store, latest, now_ms if now_ms is not None else int(time.time() * 1000))
    return expired
