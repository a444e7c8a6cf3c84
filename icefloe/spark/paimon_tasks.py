"""The Python data source's writes to a Paimon table (``df.write.format("icefloe")`` and the
streaming sink): each Spark task's Arrow batches written as data files, and the driver's commit
(or abort) of the tasks' commit messages.

Kept apart from ``icefloe.spark.paimon_write`` (Spark's own writer, the DataFrame fitting, the JVM
helpers) because a fresh Python worker imports this module to write its first batch: an append
table's task needs the table's schema and Paimon's file writer, not the table API or the commit.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable, Optional

from icefloe.core.io import FileIO, normalize_location

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.paimon.commit import CommitMessage
    from icefloe.paimon.snapshot import Snapshot

# the sequence numbers of the data source's task ``i`` start ``i << TASK_SEQUENCE_BITS`` past the
# bucket's highest committed number: tasks write disjoint ranges, in the order of their partitions
TASK_SEQUENCE_BITS = 33


def _name(location: str) -> str:
    return os.path.basename(location.rstrip("/"))


def paimon_write_batches(location: str, batches: Iterable[Optional[pa.RecordBatch]],
                         restored: Optional[dict[tuple[bytes, int], int]] = None, task: int = 0,
                         io: Optional[FileIO] = None) -> list[CommitMessage]:
    """Task side of ``df.write.format("icefloe")`` for a Paimon table: the batches as
    data files, returned as commit messages (nothing committed). A primary-key table's rows
    are upserts: key-value files numbered on from ``restored`` (the highest committed
    sequence number per bucket, read once on the driver) in this task's own range."""
    import pyarrow as pa

    from icefloe.core.io import LOCAL
    from icefloe.errors import NoSuchTableError
    from icefloe.paimon.file_store import FileStore
    from icefloe.paimon.schema import latest_schema

    io = io or LOCAL
    path = normalize_location(location).rstrip("/")
    schema = latest_schema(io, path)
    if schema is None:
        raise NoSuchTableError(f"no Paimon table at {path}")
    if schema.primary_keys:
        return _write_upserts(path, batches, restored, task, io)
    from icefloe.paimon.writer import write_arrow_table

    parts = [b for b in batches if b is not None and b.num_rows > 0]
    if not parts:
        return []
    return write_arrow_table(FileStore(io, path, schema, path), schema, pa.Table.from_batches(parts), _name(path))


def _write_upserts(path: str, batches: Iterable[Optional[pa.RecordBatch]],
                   restored: Optional[dict[tuple[bytes, int], int]], task: int, io: FileIO) -> list[CommitMessage]:
    import pyarrow as pa

    from icefloe.paimon.kv_writer import write_kv_table
    from icefloe.paimon.table import FileStoreTable

    table = FileStoreTable(_name(path), path, io)
    table.check_writable()
    parts = [b for b in batches if b is not None and b.num_rows]
    if not parts:
        return []
    return write_kv_table(table.store, table.table_schema, pa.Table.from_batches(parts), table.name, restored or {},
                          seq_offset=task << TASK_SEQUENCE_BITS)


def paimon_commit(location: str, messages: Iterable[Optional[CommitMessage]], overwrite: bool = False,
                  io: Optional[FileIO] = None) -> Optional[Snapshot]:
    """Driver side: commit the tasks' messages as one snapshot (their files are deleted
    if the commit fails)."""
    from icefloe.paimon.table import FileStoreTable

    table = FileStoreTable(_name(location), normalize_location(location), io)
    return table.commit([m for m in messages if m is not None], overwrite=overwrite)


def paimon_abort(location: str, messages: Iterable[Optional[CommitMessage]], io: Optional[FileIO] = None) -> None:
    """Driver side of a failed write: delete the data files the tasks wrote."""
    from icefloe.paimon.table import FileStoreTable

    FileStoreTable(_name(location), normalize_location(location), io).abort([m for m in messages if m is not None])
