# pyright: strict
"""Where a table's files may be: every location a table's metadata or a commit names (the table
location, metadata files, manifest lists, manifests, data and delete files, statistics files) is
normalised and must lie under the table's location (or one of the catalog's allowed locations),
and no two tables of a catalog share a location.

Normalising a local path makes it absolute only if it already is (a relative path would be
resolved against whatever directory the process runs in, so it is refused), removes ``.`` and
``..`` segments and resolves symbolic links of the part that exists, so ``<t>/metadata/../x``,
``file:///<t>/x`` and a link into another table all compare as the file they reach. An object
store URI keeps its scheme and bucket; ``.`` and ``..`` segments in it are refused (a store has
no directories to resolve them against).

Maintenance that deletes files (``expire``, ``remove-orphans``, ``drop(purge=True)``) deletes only
files inside the table's location, and refuses a table whose location overlaps another table's.
"""
from __future__ import annotations

import os
from typing import Iterable, Optional, Protocol

from icefloe.core.io import FileIO, is_remote, strip_scheme
from icefloe.errors import LocationError
from icefloe.iceberg.manifest import ADDED
from icefloe.iceberg.manifest_reader import (
    load_manifest_entries,
    snapshot_manifests,
)
from icefloe.iceberg.metadata_files import MAX_METADATA_BYTES
from icefloe.iceberg.table_metadata import TableMetadata

RELATIVE = "a location must be absolute (a relative path would be resolved against the server's working directory)"
DOTS = "a location on an object store must not have '.' or '..' segments"
OUTSIDE = "every file of a table must lie inside the table's location"
NOT_ALLOWED = "a table's location must lie inside the warehouse or one of the catalog's allowed locations"
OVERLAP = "two tables never share a location (one table's location may not lie inside another's)"


def normalize(location: object, what: str = "location") -> str:
    """``location`` in the form locations are compared in (see the module doc)."""
    if not isinstance(location, str) or not location:
        raise LocationError(f"{what}: a location must be a non-empty string")
    if "\x00" in location:
        raise LocationError(f"{what}: a location must not contain a NUL character")
    if is_remote(location):
        scheme, rest = location.split("://", 1)
        parts = [p for p in rest.split("/") if p]
        if any(p in (".", "..") for p in parts):
            raise LocationError(f"{what}: {DOTS}")
        return f"{scheme.lower()}://{'/'.join(parts)}"
    path = strip_scheme(location)
    if not os.path.isabs(path):
        raise LocationError(f"{what}: {RELATIVE}")
    return os.path.realpath(path)


def is_inside(path: str, root: str) -> bool:
    """Whether normalised ``path`` is ``root`` or lies below normalised ``root``."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def overlaps(a: str, b: str) -> bool:
    return is_inside(a, b) or is_inside(b, a)


def check_inside(location: str, roots: Iterable[str], what: str, rule: str = OUTSIDE) -> str:
    """``location`` normalised; ``LocationError`` naming ``what`` and ``rule`` unless it lies in a root."""
    path = normalize(location, what)
    if not any(is_inside(path, normalize(r)) for r in roots):
        raise LocationError(f"{what}: {rule}")
    return path


def check_no_overlap(location: str, others: Iterable[str], what: str = "table location") -> None:
    """``LocationError`` when ``location`` equals, contains or lies inside any of ``others``."""
    mine = normalize(location, what)
    for other in others:
        try:
            theirs = normalize(other)
        except LocationError:
            continue
        if overlaps(mine, theirs):
            raise LocationError(f"{what}: {OVERLAP}")


class Located(Protocol):
    """What these checks read of a table's operations (``operations.TableOperations``): its directory."""
    location: str


def deletion_root(ops: Located, meta: TableMetadata) -> str:
    """The one directory whose files maintenance may delete: the table's own directory in its
    catalog (normalised). A table whose metadata names a location outside that directory (one
    registered from elsewhere, or moved by a commit) is refused (``LocationError``): its files
    may belong to someone else."""
    own = normalize(ops.location, "table directory")
    if not is_inside(normalize(meta.location, "table location"), own):
        raise LocationError(f"table {ops.location}: the location its metadata names is not the table's own "
                            "directory in the catalog (a table registered from elsewhere, or moved by a commit); "
                            f"files are deleted only inside a table's own directory ({OUTSIDE})")
    return own


def check_table_alone(ops: Located, meta: TableMetadata) -> None:
    """Refuse (``LocationError``) a table whose location overlaps another table's of its catalog,
    before anything of it is deleted. ``ops.other_table_locations`` (set by the catalog) lists the
    others; without it the table is checked against nothing."""
    others = getattr(ops, "other_table_locations", None)
    if others is None:
        return
    check_no_overlap(meta.location, others(), f"table location of {ops.location}")


def inside_any(path: str, roots: list[str]) -> Optional[str]:
    """``path`` normalised when it lies in one of the (normalised) ``roots``; None otherwise
    (also for a path that cannot be normalised)."""
    try:
        p = normalize(path)
    except LocationError:
        return None
    return p if any(is_inside(p, r) for r in roots) else None


def read_regular_file(io: FileIO, location: str, max_bytes: int = MAX_METADATA_BYTES, what: str = "metadata file") -> bytes:
    """The bytes of ``location`` when it is a regular file of at most ``max_bytes``: a FIFO, a
    device (``/dev/zero``), a directory or an oversized file is refused (``LocationError``) before
    it is opened, so a read can neither block nor exhaust memory. ``FileNotFoundError`` when it
    does not exist."""
    import stat

    if is_remote(location):
        size = io.size(location)
    else:
        st = os.stat(strip_scheme(location))
        if not stat.S_ISREG(st.st_mode):
            raise LocationError(f"{what}: not a regular file")
        size = st.st_size
    if size > max_bytes:
        raise LocationError(f"{what}: larger than the limit of {max_bytes} bytes")
    return io.read_bytes(location)


def check_commit_locations(io: FileIO, base: TableMetadata, new: TableMetadata, metadata_dir: str) -> None:
    """Refuse (``LocationError``) a commit whose result names a file outside the table: a changed
    table location (a table's location is fixed by its catalog), a new snapshot's manifest list,
    its manifests and the data and delete files they add, a new statistics file. The manifest
    list and manifests of a new snapshot are read for this (they are small); one that cannot be
    read is refused too."""
    root = normalize(base.location, "table location")
    if normalize(new.location, "set-location") != root:
        raise LocationError("set-location: a table's location is fixed by its catalog; it cannot move")
    roots = [root, normalize(metadata_dir, "metadata directory")]
    old_snaps = {s.snapshot_id for s in base.snapshots}
    for snap in new.snapshots:
        if snap.snapshot_id in old_snaps:
            continue
        what = f"snapshot {snap.snapshot_id}"
        check_inside(snap.manifest_list, roots, f"manifest list of {what}")
        try:
            manifests = snapshot_manifests(io, snap)
        except Exception as e:
            raise LocationError(f"manifest list of {what}: not a readable manifest list ({type(e).__name__})") from None
        for m in manifests:
            check_inside(m.manifest_path, roots, f"a manifest of {what}")
            if m.added_snapshot_id != snap.snapshot_id:
                continue
            try:
                entries = load_manifest_entries(io, new, m)
            except Exception as e:
                raise LocationError(f"a manifest of {what}: not a readable manifest ({type(e).__name__})") from None
            for e in entries:
                if e.status == ADDED:
                    check_inside(e.data_file.file_path, roots, f"a file added by {what}")
    old_stats = {s.get("statistics-path") for s in list(base.statistics) + list(base.partition_statistics)}
    for s in list(new.statistics) + list(new.partition_statistics):
        if s.get("statistics-path") not in old_stats:
            check_inside(s["statistics-path"], roots, f"statistics file of snapshot {s.get('snapshot-id')}")
