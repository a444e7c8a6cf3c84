# pyright: strict
"""Orphan-file removal for a Paimon table directory.

A crash (or a failed cleanup) can leave files no snapshot refers to: data files of a
write that never committed, manifests and manifest lists of a commit attempt that
never became visible, temporary files of an interrupted create-if-absent, a Spark
staging directory, and the files an interrupted expiration had yet to delete.

An orphan is a file under the table directory that is

* a manifest or manifest list (``manifest/``), a file under a partition (``k=v/``) or
  bucket (``bucket-N/``) directory, a Spark staging leftover (``.staging-*/``), or a
  file in ``schema/``, ``snapshot/``, ``tag/`` or ``changelog/`` that is not a schema,
  snapshot, tag, changelog or hint (``EARLIEST``, ``LATEST``) -- the temporary file of an
  interrupted create-if-absent (``.snapshot-7.<uuid>.tmp``); nothing else is judged;
* not reachable from any snapshot, tag or changelog: manifest lists (base, delta,
  changelog), their manifests, the index manifest and statistics file, and every data
  file (with its extra files) named by an ADD *or* DELETE entry -- a DELETE entry of
  a retained snapshot may still describe a file an older retained snapshot reads;
* last modified before ``older_than`` (default: three days ago, as icefloe's Iceberg
  tables; Java Paimon's procedure defaults to one day): a commit in progress writes its
  files before the snapshot that refers to them.

Whatever cannot be read aborts the cleanup before anything is deleted. Directories are
left in place, empty or not (a concurrent writer may be about to write into one). Tables
with branches are cleaned as one: their snapshots, tags and changelogs live under
``branch/branch-<name>/`` and name manifests and data files in the table's own directories,
so a file any branch reaches is kept; nothing under ``branch/`` is judged.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Optional

import os
import re
import time

from icefloe.core.io import is_remote, strip_scheme
from icefloe.core.progress import track
from icefloe.paimon.branches import branch_names, branch_path
from icefloe.paimon.file_store import MANIFEST_DIR, FileStore
from icefloe.paimon.ownership import check_owns_files
from icefloe.paimon.snapshot import EARLIEST, LATEST, Snapshot
from icefloe.errors import OrphanCleanupError  # noqa: F401 - defined in icefloe.errors, importable here too
from icefloe.core.timetravel import AsOf, to_epoch_ms

ORPHAN_MIN_AGE_MS = 3 * 24 * 3600 * 1000

_METADATA_FILES = {
    "schema": re.compile(r"^schema-\d+$"),
    "snapshot": re.compile(rf"^(snapshot-\d+|{EARLIEST}|{LATEST})$"),
    "tag": re.compile(r"^tag-.+$"),
    "changelog": re.compile(rf"^(changelog-\d+|{EARLIEST}|{LATEST})$"),
}
_PARTITION_DIR = re.compile(r"^[^=/]+=.*$")
_BUCKET_DIR = re.compile(r"^bucket-\d+$")


def _norm(path: str) -> str:
    return path.rstrip("/") if is_remote(path) else os.path.normpath(strip_scheme(path))


def _metadata_snapshots(store: FileStore) -> list[Snapshot]:
    """Every snapshot, tag and changelog the table (or branch) keeps (each holds manifest lists)."""
    io, root = store.io, store.meta_path
    out = list(store.snapshots.iter_snapshots())
    for sub, pattern in (("tag", _METADATA_FILES["tag"]), ("changelog", re.compile(r"^changelog-\d+$"))):
        for name in io.list_dir(f"{root}/{sub}"):
            if pattern.match(name):
                path = f"{root}/{sub}/{name}"
                snap = Snapshot.from_json(io.read_bytes(path).decode("utf-8"), path)
                if sub == "changelog":     # a kept changelog holds only its changelog (its data lists are gone)
                    snap = replace(snap, base_manifest_list=None, delta_manifest_list=None, index_manifest=None,
                                   statistics=None)
                out.append(snap)
    return out


def _every_branch(store: FileStore) -> list[FileStore]:
    """The stores of the table's main branch and of each of its branches (all share its manifests
    and data files; each keeps its own snapshots, tags and changelogs)."""
    root = store.table_path
    return [FileStore(store.io, root, store.schema),
            *(FileStore(store.io, root, store.schema, branch_path(root, b)) for b in branch_names(store.io, root))]


def referenced_files(store: FileStore) -> set[str]:
    """Normalized paths of every manifest list, manifest and data file some snapshot,
    tag or changelog of any branch of the table reaches."""
    out: set[str] = set()
    seen_manifests: set[str] = set()
    snaps = [snap for branch in _every_branch(store) for snap in _metadata_snapshots(branch)]
    for snap in track(snaps, "reading snapshots"):
        lists = [snap.base_manifest_list, snap.delta_manifest_list, snap.changelog_manifest_list]
        for lst in filter(None, lists):
            out.add(_norm(store.manifest_path(lst)))
            for m in store.read_manifest_list(lst):
                out.add(_norm(store.manifest_path(m.file_name)))
                if m.file_name in seen_manifests:
                    continue
                seen_manifests.add(m.file_name)
                for e in store.read_manifest(m.file_name, m.file_size):
                    path = store.data_file_path(e)
                    out.add(_norm(path))
                    for extra in e.file.extra_files or ():
                        out.add(_norm(f"{os.path.dirname(path)}/{extra}"))
        if snap.index_manifest:
            out.add(_norm(store.manifest_path(snap.index_manifest)))
        if snap.statistics:
            out.add(_norm(f"{store.table_path}/statistics/{snap.statistics}"))
    return out


def _may_be_orphan(rel: str) -> bool:
    """Whether a file (path relative to the table) is one cleanup may judge: manifests, data
    files (under partition or bucket directories), Spark staging leftovers, and files in the
    metadata directories that are not metadata (temporary files of interrupted writes).
    Anything else -- index, statistics, consumer, service or unknown directories, files in the
    table directory itself -- is never touched."""
    parts = rel.split(os.sep)
    top = parts[0]
    if len(parts) == 1 or parts[-1] == "_SUCCESS":     # _SUCCESS: a partition's mark-done file, not data
        return False
    if top in _METADATA_FILES:
        return len(parts) > 2 or not _METADATA_FILES[top].match(parts[1])
    return (top == MANIFEST_DIR or top.startswith(".staging-") or bool(_PARTITION_DIR.match(top))
            or bool(_BUCKET_DIR.match(top)))


def _cutoff(older_than: Optional[AsOf]) -> int:
    if older_than is None:
        return int(time.time() * 1000) - ORPHAN_MIN_AGE_MS

    return to_epoch_ms(older_than)


def remove_orphan_files(store: FileStore, older_than: Optional[AsOf] = None, dry_run: bool = False,
                        parallelism: Optional[int] = None, sizes: Optional[dict[str, int]] = None) -> list[str]:
    """Delete the table's orphan files older than ``older_than`` (``parallelism`` deletes at
    once, default one after another); returns them sorted. ``sizes``, if given, gets each
    orphan's size in bytes (read before it is deleted)."""
    io, root = store.io, _norm(store.table_path)
    check_owns_files(store.schema.options, store.table_path, "remove orphan files")
    cutoff = _cutoff(older_than)
    candidates: list[str] = []
    for path in io.walk_files(root):
        path = _norm(path)
        rel = os.path.relpath(path, root)
        if _may_be_orphan(rel) and io.mtime_ms(path) < cutoff:
            candidates.append(path)
    if not candidates:
        return []
    # read after listing: a commit that landed meanwhile is seen, so its files are kept
    referenced = referenced_files(store)
    orphans = sorted(p for p in candidates if p not in referenced)
    if sizes is not None:
        sizes.update((p, io.size(p)) for p in orphans)
    if not dry_run:
        if parallelism is not None and parallelism > 1:
            with ThreadPoolExecutor(max_workers=parallelism) as pool:
                list(track(pool.map(io.delete, orphans), "deleting orphan files", total=len(orphans)))
        else:
            for p in track(orphans, "deleting orphan files"):
                io.delete(p)
    return orphans


__all__ = ["remove_orphan_files", "referenced_files", "OrphanCleanupError", "ORPHAN_MIN_AGE_MS"]
