# pyright: strict
"""Building and dropping Paimon global indexes (``global_index``): what ``CALL
sys.create_global_index`` and ``CALL sys.drop_global_index`` do, as Paimon 1.4's Spark procedures.

- *Create* checks the table (row tracking on, not a Data Evolution table), the column and the index
  type, cuts the live data files of the latest snapshot (of the chosen partitions) into row ranges,
  writes one index file per range (``build``: on the driver, or in Spark tasks the caller runs) and
  commits them as one APPEND snapshot without data files. As current Paimon's incremental build, the
  row ids a live index file of the same type on the column already covers are left out: a build again
  indexes only rows added since (none left: no snapshot). A range that overlaps a live index file of
  another type on the same column is refused before anything is written, and any overlap again at the
  commit (a concurrent build);
  a failed commit deletes the files it wrote. A table without rows to index gets no snapshot.
- *Drop* deletes the index manifest entries of the column's index of that type (in the chosen
  partitions) by one such snapshot; their files go when no snapshot uses them any more (snapshot
  expiry, ``expire``). Nothing to drop: no snapshot.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping, Optional, Sequence

from icefloe.errors import IcefloeError, SchemaError
from icefloe.paimon import global_index as gi
from icefloe.paimon import row_tracking
from icefloe.paimon.binary_row import BinaryRow
from icefloe.paimon.commit import FileStoreCommit
from icefloe.paimon.commit_changes import GlobalIndexesFree, PaimonCommit, SetGlobalIndexes
from icefloe.paimon.dynamic_bucket import INDEX_DIR, IndexRecord
from icefloe.paimon.snapshot import APPEND, Snapshot
from icefloe.paimon.store_table import StoreTable
from icefloe.paimon.types import DataField
from icefloe.core.io import FileIO

# builds the index files of some row ranges: (file IO, the ranges) -> their index manifest entries
Build = Callable[[FileIO, Sequence[gi.ShardSpec]], list[IndexRecord]]
# a predicate on a partition's values: the partitions a procedure acts on
Accept = Callable[[tuple[Any, ...]], bool]


def on_driver(io: FileIO, specs: Sequence[gi.ShardSpec]) -> list[IndexRecord]:
    """Each range's index file written here, one after the other (a failure deletes those written)."""
    done: list[IndexRecord] = []
    try:
        for spec in specs:
            done.extend(gi.build_shard(io, spec))
    except BaseException:
        delete_files(io, specs[0].index_dir if specs else "", done)
        raise
    return done


def delete_files(io: FileIO, index_dir: str, records: Sequence[IndexRecord]) -> None:
    for r in records:
        try:
            io.delete(f"{index_dir}/{r['_FILE_NAME']}")
        except Exception:  # pragma: no cover - best effort: the files are referenced by no snapshot
            pass


def _field(table: StoreTable, column: str) -> DataField:
    fields = table.table_schema.fields
    found = next((f for f in fields if f.name == column), None) or \
        next((f for f in fields if f.name.lower() == column.lower()), None)
    if found is None:
        raise SchemaError(f"column {column!r} does not exist in table {table.name} (columns: "
                          f"{', '.join(f.name for f in fields)})")
    return found


def _check_table(table: StoreTable) -> None:
    o = table.table_schema.options
    if not row_tracking.enabled(o):
        raise SchemaError(f"table {table.name} must enable 'row-tracking.enabled' = 'true' (when it is created) "
                          "before a global index is created: the index is keyed by row id")
    if str(o.get(gi.DATA_EVOLUTION, "false")).strip().lower() == "true":
        raise SchemaError(f"table {table.name} is a Data Evolution table (data-evolution.enabled), whose files of "
                          "some columns share row ids; icefloe builds global indexes of row-tracking tables without "
                          "it")


def create_global_index(table: StoreTable, column: str, index_type: str, options: Mapping[str, str],
                        accept: Optional[Accept] = None, build: Optional[Build] = None) -> Optional[Snapshot]:
    """Build a global index of ``column`` (see the module doc); the new snapshot, or None."""
    table.refresh()
    table.check_writable()
    _check_table(table)
    field = _field(table, column)
    index_type = index_type.strip().lower()
    gi.check_build(index_type, field, options)
    store = table.store
    per_shard = gi.rows_per_shard(table.table_schema.options)
    latest = table.current_snapshot()
    if latest is None:
        return None
    entries = table.plan(snapshot_id=latest.id)
    if accept is not None:
        entries = [e for e in entries if accept(store.partition_values(e.partition))]
    index_dir = f"{store.table_path}/{INDEX_DIR}"
    specs = gi.shards(entries, per_shard, lambda sid: table.schema_by_id(sid).fields, field, index_type, options,
                      index_dir)
    if not specs:
        return None
    olds = gi.global_files(store, latest)
    # Paimon builds only the row ranges its index of this type on this column does not cover yet
    specs = unindexed(specs, [(o.range_start, o.range_end) for o in olds
                              if o.field_id == field.id and o.index_type == index_type])
    if not specs:
        return None
    for old in olds:        # another type's index of the column: refused before any file is written
        for spec in specs:
            if old.field_id == field.id and old.partition == spec.partition \
                    and old.covers(spec.range_start, spec.range_end):
                raise SchemaError(f"column {field.name!r} of table {table.name} already has a global index "
                                  f"({old.index_type}, file {old.file_name}) over row ids {old.range_start} to "
                                  f"{old.range_end}; drop it first with CALL sys.drop_global_index")
    records = (build or on_driver)(store.io, specs)
    added = tuple(records)
    try:
        return FileStoreCommit(store, table.commit_user).apply(
            PaimonCommit(APPEND, (SetGlobalIndexes(added),), (GlobalIndexesFree(added, table.name),)))
    except IcefloeError:
        delete_files(store.io, index_dir, records)
        raise


def unindexed(specs: Sequence[gi.ShardSpec], indexed: Sequence[tuple[int, int]]) -> list[gi.ShardSpec]:
    """The parts of ``specs``' row ranges outside the ``indexed`` ones (row ids are unique across
    partitions), each with the data files it reads."""
    taken = sorted(indexed)
    out: list[gi.ShardSpec] = []
    for spec in specs:
        parts: list[tuple[int, int]] = []
        at = spec.range_start
        for lo, hi in taken:
            if hi < at or lo > spec.range_end:
                continue
            if lo > at:
                parts.append((at, lo - 1))
            at = max(at, hi + 1)
        if at <= spec.range_end:
            parts.append((at, spec.range_end))
        for lo, hi in parts:
            files = tuple(f for f in spec.files if f[2] <= hi and lo <= f[2] + f[3] - 1)
            out.append(replace(spec, range_start=lo, range_end=hi, files=files))
    return out


def global_index_files_to_drop(table: StoreTable, column: str, index_type: str,
                               accept: Optional[Accept] = None) -> list[str]:
    """The names of the index files ``drop_global_index`` would drop (a dry run's count)."""
    table.refresh()
    field = _field(table, column)
    index_type = index_type.strip().lower()
    latest = table.current_snapshot()
    if latest is None:
        raise SchemaError(f"table {table.name} has no snapshot")
    store = table.store
    return [f.file_name for f in gi.global_files(store, latest) if f.index_type == index_type and f.field_id == field.id
            and (accept is None or accept(store.partition_values(BinaryRow.from_bytes(f.partition))))]


def drop_global_index(table: StoreTable, column: str, index_type: str,
                      accept: Optional[Accept] = None) -> Optional[Snapshot]:
    """Drop the global index of ``column`` of ``index_type`` (see the module doc); the new snapshot, or None."""
    table.refresh()
    table.check_writable()
    going = global_index_files_to_drop(table, column, index_type, accept)
    if not going:
        return None
    store = table.store
    return FileStoreCommit(store, table.commit_user).apply(
        PaimonCommit(APPEND, (SetGlobalIndexes(removed=frozenset(going)),)))


__all__ = ["create_global_index", "drop_global_index", "global_index_files_to_drop", "on_driver", "delete_files",
           "unindexed"]
