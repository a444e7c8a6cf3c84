# pyright: strict
"""Paimon's ``copy`` procedure: a table's files copied into another table, as Paimon's Spark
``CopyFilesProcedure`` copies them.

The data files live in the source's latest snapshot (of the partitions a partition filter selects)
are copied byte for byte, under new data file names, into the same partition and bucket directories
of the target; their metadata is the source's (statistics, levels, sequence numbers, row counts),
with the target's schema id. They are committed to the target as an OVERWRITE: of the partitions they
are in when the target is partitioned (Paimon's dynamic partition overwrite), of the whole table
otherwise. A target that does not exist is created with the source's schema (columns with their ids,
partition and primary keys, options, comment); one that exists must have the same columns and keys.

Index files (deletion vectors, a dynamic-bucket table's hash index), data files' extra files and
files at external paths are not copied: a source with them is refused. A failure deletes the files copied so far.
"""
from __future__ import annotations

import dataclasses
import shutil
from typing import Any, Callable, Optional, Sequence

from icefloe.core.io import FileIO
from icefloe.errors import IcefloeError, SchemaError
from icefloe.paimon import predicate as pr
from icefloe.paimon.commit import CommitMessage, FileStoreCommit
from icefloe.paimon.data_file import DataFileMeta, DataFileNamer
from icefloe.paimon.scan import bind_filter
from icefloe.paimon.schema import TableSchema, create_schema
from icefloe.paimon.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from icefloe.paimon.table import FileStoreTable


def check_compatible(source_schema: TableSchema, target_schema: TableSchema, target: str) -> None:
    """A target that exists takes the source's files only with the same columns and keys."""
    def shape(s: TableSchema) -> tuple[list[tuple[int, str, str]], list[str], list[str]]:
        return ([(f.id, f.name, str(f.type)) for f in s.fields], list(s.partition_keys), list(s.primary_keys))

    if shape(source_schema) != shape(target_schema):
        raise SchemaError(f"copy: table {target} exists with other columns or keys than the source "
                          f"(source: {shape(source_schema)}, target: {shape(target_schema)}); nothing was copied")


def create_like(io: FileIO, location: str, source_schema: TableSchema) -> None:
    """A new table at ``location`` with ``source_schema`` as its ``schema-0`` (field ids kept)."""
    create_schema(io, location, dataclasses.replace(source_schema, id=0))


def copy_files(source: FileStoreTable, target: FileStoreTable, where: Any = None) -> Optional[Snapshot]:
    """Copy ``source``'s live data files (those ``where`` selects, a filter on partition columns)
    into ``target`` and commit them there; the new snapshot (None when nothing was committed)."""
    snap = source.current_snapshot()
    if snap is None:
        raise IcefloeError(f"copy: table {source.name} has no snapshot, so there is nothing to copy")
    if snap.index_manifest:
        raise IcefloeError(f"copy: table {source.name} has index files (deletion vectors or a dynamic-bucket "
                           "index), which icefloe's copy does not carry over yet; nothing was copied")
    if where is not None:
        columns = pr.referenced_columns(bind_filter(where, source.table_schema.fields))
        others = sorted(columns - set(source.partition_keys))
        if others:
            raise IcefloeError(f"copy: where names {', '.join(others)}, which are not partition columns of "
                               f"{source.name} (partition columns: {', '.join(source.partition_keys) or 'none'}); "
                               "Paimon's copy selects whole partitions; nothing was copied")
    entries = source.plan(where, snapshot_id=snap.id)
    if any(e.file.external_path for e in entries):
        raise IcefloeError(f"copy: table {source.name} has data files at external paths, which icefloe's copy "
                           "does not carry over; nothing was copied")
    if any(e.file.extra_files for e in entries):
        raise IcefloeError(f"copy: table {source.name} has data files with extra files (embedded indexes), which "
                           "icefloe's copy does not carry over; nothing was copied")
    tstore, sstore = target.store, source.store
    co = target.table_schema.core_options
    namer = DataFileNamer(co.data_file_prefix, co.file_format)
    schema_id = target.table_schema.id
    copied: list[str] = []
    groups: dict[tuple[tuple[Any, ...], int, int], list[DataFileMeta]] = {}
    try:
        for e in entries:
            values = sstore.partition_values(e.partition)
            directory = tstore.bucket_dir(values, e.bucket)
            name = namer.next()           # a new name in the target, as Paimon's copy names its files
            if "." in e.file.file_name:   # ... with the suffix of the file's own format (bytes copied as they are)
                name = f"{name.rsplit('.', 1)[0]}.{e.file.file_name.rsplit('.', 1)[1]}"
            dst = f"{directory}/{name}"
            with source.io.open_read(e.file.path) as fin, target.io.open_write(dst) as fout:
                shutil.copyfileobj(fin, fout)
            copied.append(dst)
            meta = dataclasses.replace(e.file, file_name=name, schema_id=schema_id, file_path=dst)
            groups.setdefault((tuple(values), e.bucket, e.total_buckets), []).append(meta)
    except BaseException:
        for path in copied:
            if target.io.exists(path):
                target.io.delete(path)
        raise
    messages = [CommitMessage(p, b, total, files) for (p, b, total), files in groups.items()]
    present = {m.partition for m in messages}
    if target.partition_keys and not messages:
        return None                   # dynamic overwrite of no partition: nothing to commit
    overwrite: Optional[Callable[[Sequence[Any]], bool]] = \
        (lambda values: tuple(values) in present) if target.partition_keys else None
    before = target.refresh().current_snapshot()
    try:
        # the files keep the source's sequence numbers (as Paimon's copy): committed as they are
        target.check_writable()
        return FileStoreCommit(target.store, target.commit_user, BATCH_COMMIT_IDENTIFIER).commit(
            messages, overwrite=True, overwrite_partitions=overwrite)
    except BaseException:
        latest = target.refresh().current_snapshot()
        if latest is None or (before is not None and latest.id == before.id):     # not committed
            for path in copied:
                target.io.delete(path)
        raise


__all__ = ["copy_files", "check_compatible", "create_like"]
