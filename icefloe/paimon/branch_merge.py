# pyright: strict
"""Paimon's ``merge_branch``: the data files of one branch that another lacks, appended to it
(Paimon 1.x ``FileSystemBranchManager.mergeBranch``).

Branches share the table's data directory, so a merge moves no file: it commits, to the target
branch, one APPEND snapshot of the files live in the source branch's latest snapshot that are not
live in the target's (a file is its partition, bucket, level and name). What Paimon checks first,
each an error naming the branch, with nothing changed:

* both branches exist and have snapshots; source and target differ;
* both are append tables (no primary key), neither has ``data-evolution.enabled``, and
  ``row-tracking.enabled`` is the same on both;
* both histories are complete and pure append: snapshots 1 to the latest all present, each an
  APPEND (or ANALYZE) -- without a recorded fork point this is what makes a file-level merge safe;
* the latest schemas have the same fields, and each schema id the merged files were written with
  exists in the target with the same definition.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional, Protocol, Sequence

from icefloe.errors import IcefloeError
from icefloe.paimon import row_tracking
from icefloe.paimon.commit import CommitMessage
from icefloe.paimon.data_file import DataFileMeta
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.manifest import ManifestEntry
from icefloe.paimon.schema import TableSchema
from icefloe.paimon.snapshot import Snapshot


class BranchTable(Protocol):
    """What a merge reads and writes of a branch (a ``FileStoreTable``)."""
    @property
    def store(self) -> FileStore: ...
    @property
    def table_schema(self) -> TableSchema: ...
    def current_snapshot(self) -> Optional[Snapshot]: ...
    def schema_by_id(self, schema_id: int) -> TableSchema: ...
    def commit_existing_files(self, messages: Sequence[CommitMessage]) -> Optional[Snapshot]: ...

_KINDS = ("APPEND", "ANALYZE")


def _check_history(table: BranchTable, branch: str) -> None:
    snaps = table.store.snapshots
    earliest, latest = snaps.earliest_id(), snaps.latest_id()
    if latest is None:
        raise IcefloeError(f"cannot merge: branch {branch!r} has no snapshot")
    if earliest != 1:
        raise IcefloeError(f"cannot merge: branch {branch!r} does not start at snapshot 1 (earliest is {earliest}); "
                           "a branch merge needs the complete append-only history")
    for sid in range(1, latest + 1):
        try:
            snap = snaps.snapshot(sid)
        except IcefloeError:
            raise IcefloeError(f"cannot merge: snapshot {sid} is missing on branch {branch!r}; a branch merge needs "
                               "the complete append-only history") from None
        if snap.commit_kind not in _KINDS:
            raise IcefloeError(f"cannot merge: snapshot {sid} on branch {branch!r} is a {snap.commit_kind}; a branch "
                               "merge needs an append-only history (no compaction, overwrite or delete)")


def _check_tables(source: BranchTable, target: BranchTable, names: tuple[str, str]) -> None:
    for table, name in ((source, names[0]), (target, names[1])):
        schema = table.table_schema
        if schema.primary_keys:
            raise IcefloeError(f"cannot merge: branch merge is for append tables, and branch {name!r} has the "
                               f"primary key {', '.join(schema.primary_keys)}")
        if str(schema.options.get("data-evolution.enabled", "false")).lower() == "true":
            raise IcefloeError(f"cannot merge: branch {name!r} is a data-evolution table")
    tracking = [row_tracking.enabled(t.table_schema.options) for t in (source, target)]
    if tracking[0] != tracking[1]:
        raise IcefloeError(f"cannot merge branch {names[0]!r} into {names[1]!r}: row-tracking settings differ "
                           f"(source={tracking[0]}, target={tracking[1]})")
    if list(source.table_schema.fields) != list(target.table_schema.fields):
        raise IcefloeError(f"cannot merge branch {names[0]!r} into {names[1]!r}: their schemas differ")


def _ident(e: ManifestEntry) -> tuple[bytes, int, int, str]:
    return e.partition.to_bytes(), e.bucket, e.file.level, e.file.file_name


def merge_branch(source: BranchTable, target: BranchTable, names: tuple[str, str]) -> Optional[Snapshot]:
    """Append to ``target`` (a branch as a table) the files of ``source`` it lacks; the new
    snapshot, or None when there is nothing to merge. ``names``: (source, target) branch names."""
    if names[0] == names[1]:
        raise IcefloeError(f"cannot merge branch {names[0]!r} into itself")
    _check_history(source, names[0])
    _check_history(target, names[1])
    _check_tables(source, target, names)
    have = {_ident(e) for e in target.store.live_entries(target.current_snapshot())}
    missing = [e for e in source.store.live_entries(source.current_snapshot()) if _ident(e) not in have]
    if not missing:
        return None
    for schema_id in sorted({e.file.schema_id for e in missing}):
        try:
            theirs, ours = source.schema_by_id(schema_id), target.schema_by_id(schema_id)
        except IcefloeError:
            raise IcefloeError(f"cannot merge branch {names[0]!r} into {names[1]!r}: the target has no schema "
                               f"{schema_id}, which the source's files were written with") from None
        if (theirs.fields, theirs.partition_keys, theirs.options) != (ours.fields, ours.partition_keys, ours.options):
            raise IcefloeError(f"cannot merge branch {names[0]!r} into {names[1]!r}: schema {schema_id} differs "
                               "between them")
    # row tracking: the source gave its files row ids from its own range, which the target's may
    # overlap; the merge clears them so the target's commit gives out fresh ones (as Paimon's does)
    fresh_ids = row_tracking.enabled(target.table_schema.options)
    groups: dict[tuple[tuple[Any, ...], int, int], list[DataFileMeta]] = {}
    for e in missing:
        key = (tuple(source.store.partition_values(e.partition)), e.bucket, e.total_buckets)
        f = replace(e.file, first_row_id=None) if fresh_ids and e.file.first_row_id is not None else e.file
        groups.setdefault(key, []).append(f)
    messages = [CommitMessage(p, b, total, files) for (p, b, total), files in groups.items()]
    return target.commit_existing_files(messages)     # the files are the source's too: never deleted here


__all__ = ["merge_branch"]
