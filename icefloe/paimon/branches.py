# pyright: strict
"""Paimon branches: ``<table>/branch/branch-<name>/`` with the branch's own ``snapshot/``,
``schema/`` and ``tag/`` directories, as Paimon's filesystem branch manager keeps them.

A branch shares the table's manifests and data files (``<table>/manifest``, the bucket
directories): only its snapshots, schemas and tags are its own. A branch made from a tag starts
with copies of that tag's file, the tag's snapshot file and the schemas up to the snapshot's;
an empty branch starts with copies of the schemas up to the latest and no snapshot. Fast-forward
makes the branch the main history: main's snapshots, schemas and tags from the branch's first
snapshot (and its schema) on are deleted, and the branch's are copied in.
"""
from __future__ import annotations

from typing import Optional

from icefloe.core.io import FileIO
from icefloe.errors import IcefloeError, NoSuchTableError
from icefloe.paimon.ownership import check_owns_files
from icefloe.paimon.schema import SCHEMA_DIR, latest_schema, list_schema_ids, schema_path
from icefloe.paimon.snapshot import LATEST, SnapshotManager
from icefloe.paimon.tag import TagManager

MAIN = "main"
BRANCH_DIR = "branch"
BRANCH_PREFIX = "branch-"


class BranchError(IcefloeError):
    """A branch that cannot be created, read or fast-forwarded as asked."""


def check_branch_name(name: object) -> str:
    """Paimon's rules: not ``main``, not blank, not all digits (a snapshot id)."""
    if not isinstance(name, str) or not name.strip():
        raise BranchError(f"branch name {name!r} is blank")
    if name == MAIN:
        raise BranchError("'main' is the default branch; it cannot be created, deleted or fast-forwarded")
    if name.isdigit():
        raise BranchError(f"branch name {name!r} is all digits (it would read as a snapshot id)")
    if "/" in name or name in (".", ".."):
        raise BranchError(f"branch name {name!r} cannot be a directory name")
    return name


def branch_path(table_path: str, name: str) -> str:
    return f"{table_path.rstrip('/')}/{BRANCH_DIR}/{BRANCH_PREFIX}{name}"


def branch_names(io: FileIO, table_path: str) -> list[str]:
    """The table's branches, by their directories."""
    root = f"{table_path.rstrip('/')}/{BRANCH_DIR}"
    return sorted(n[len(BRANCH_PREFIX):] for n in io.list_dir(root)
                  if n.startswith(BRANCH_PREFIX) and len(n) > len(BRANCH_PREFIX) and io.is_dir(f"{root}/{n}"))


def branch_exists(io: FileIO, table_path: str, name: str) -> bool:
    return io.is_dir(branch_path(table_path, name))


def branches_from_tag(io: FileIO, table_path: str, tag: str) -> list[str]:
    """The branches holding a copy of tag ``tag`` (made from it): its files are theirs too."""
    return [b for b in branch_names(io, table_path) if TagManager(io, branch_path(table_path, b)).exists(tag)]


def _copy(io: FileIO, src: str, dst: str) -> None:
    io.write_bytes(dst, io.read_bytes(src), overwrite=True)


def _copy_schemas(io: FileIO, table_path: str, target: str, up_to: int) -> None:
    for sid in list_schema_ids(io, table_path):
        if sid <= up_to:
            _copy(io, schema_path(table_path, sid), schema_path(target, sid))


def create_branch(io: FileIO, table_path: str, name: str, tag: Optional[str] = None, source: Optional[str] = None) -> str:
    """Create branch ``name``: from tag ``tag`` (its snapshot is the branch's first), or empty
    (the latest schema, no snapshot). The tag, snapshot and schemas are main's, or those of the
    branch directory ``source``. Returns the new branch's directory."""
    check_branch_name(name)
    if branch_exists(io, table_path, name):
        raise BranchError(f"branch {name!r} already exists in {table_path}")
    target = branch_path(table_path, name)
    table_path = source or table_path          # where the tag, snapshot and schemas are copied from
    schemas = list_schema_ids(io, table_path)
    if not schemas:
        raise NoSuchTableError(f"no Paimon table at {table_path}")
    try:
        if tag is None:
            _copy_schemas(io, table_path, target, schemas[-1])
            return target
        tags = TagManager(io, table_path)
        snap = tags.tag(tag).snapshot                       # NoSuchTagError
        _copy(io, tags.tag_path(tag), TagManager(io, target).tag_path(tag))
        main_snapshot = SnapshotManager(io, table_path).snapshot_path(snap.id)
        into = SnapshotManager(io, target).snapshot_path(snap.id)
        if io.exists(main_snapshot):
            _copy(io, main_snapshot, into)
        else:        # the snapshot expired: the tag's copy of it, without the tag's own fields
            io.write_bytes(into, snap.to_json().encode("utf-8"), overwrite=True)
        _copy_schemas(io, table_path, target, snap.schema_id)
    except BaseException:
        io.delete_tree(target)
        raise
    return target


def delete_branch(io: FileIO, table_path: str, name: str) -> None:
    """Delete the branch's directory: its snapshots, schemas and tags (as Paimon, the data files it
    wrote stay until orphan cleanup)."""
    check_branch_name(name)
    if not branch_exists(io, table_path, name):
        raise BranchError(f"table {table_path} has no branch {name!r}; branches are "
                          f"{branch_names(io, table_path) or 'none'}")
    io.delete_tree(branch_path(table_path, name))


def rename_branch(io: FileIO, table_path: str, name: str, new_name: str) -> None:
    """Paimon's rename: the branch's directory moved to the new name (main cannot be renamed, the
    new name must be free and valid)."""
    check_branch_name(name)
    check_branch_name(new_name)
    if not branch_exists(io, table_path, name):
        raise BranchError(f"table {table_path} has no branch {name!r}; branches are "
                          f"{branch_names(io, table_path) or 'none'}")
    if branch_exists(io, table_path, new_name):
        raise BranchError(f"branch {new_name!r} already exists in {table_path}")
    io.rename(branch_path(table_path, name), branch_path(table_path, new_name))


def fast_forward(io: FileIO, table_path: str, name: str) -> int:
    """Make branch ``name`` main's history; returns main's new latest snapshot id."""
    check_branch_name(name)
    if not branch_exists(io, table_path, name):
        raise BranchError(f"table {table_path} has no branch {name!r}; branches are "
                          f"{branch_names(io, table_path) or 'none'}")
    current = latest_schema(io, table_path)
    check_owns_files(current.options if current else {}, table_path, f"fast-forward main to branch {name!r}")
    source = branch_path(table_path, name)
    branch_snaps = SnapshotManager(io, source)
    first = branch_snaps.earliest_id()
    if first is None:
        raise BranchError(f"cannot fast-forward branch {name!r} of {table_path}: it has no snapshot")
    first_schema = branch_snaps.snapshot(first).schema_id
    main_snaps, main_tags = SnapshotManager(io, table_path), TagManager(io, table_path)
    # main's snapshots, schemas and tags from the branch's start on give way to the branch's
    for tag in main_tags.tags():
        if tag.snapshot.id >= first:
            main_tags.delete_file(tag.name)
    for sid in list_schema_ids(io, table_path):
        if sid >= first_schema:
            io.delete(schema_path(table_path, sid))
    for n in io.list_dir(main_snaps.snapshot_dir):
        if n == LATEST or (n.startswith("snapshot-") and n[len("snapshot-"):].isdigit()
                           and int(n[len("snapshot-"):]) >= first):
            io.delete(f"{main_snaps.snapshot_dir}/{n}")
    for sid in list_schema_ids(io, source):
        _copy(io, schema_path(source, sid), schema_path(table_path, sid))
    ids = branch_snaps.ids()
    for sid in ids:
        _copy(io, branch_snaps.snapshot_path(sid), main_snaps.snapshot_path(sid))
    branch_tags = TagManager(io, source)
    for tag in branch_tags.tags():
        _copy(io, branch_tags.tag_path(tag.name), main_tags.tag_path(tag.name))
    latest = max(ids)
    main_snaps.commit_latest_hint(latest)
    return latest



__all__ = ["MAIN", "BranchError", "check_branch_name", "branch_path", "branch_names", "branch_exists",
           "branches_from_tag", "create_branch", "delete_branch", "fast_forward", "SCHEMA_DIR"]
