"""What the Spark layer's Iceberg writes need of a table: the write target.

Row-level changes, compaction and partition overwrites plan against the table's metadata, write
files through its ``FileIO`` in its Spark session, and commit one snapshot producer to a branch.
They receive this small protocol, not the user-facing table: the table layer implements it
(``IcebergTable.write_target``), and the commit adds what the table knows of its writer (the Spark
application) to the snapshot summary, so nothing here reaches into a table's private state.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Protocol, Union, runtime_checkable

from icefloe.core.io import FileIO
from icefloe.iceberg.snapshot import Snapshot
from icefloe.iceberg.snapshot_producer import SnapshotProducer
from icefloe.iceberg.table_metadata import TableMetadata

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession

#: a statement's row filter: Spark SQL predicate text or a Spark ``Column`` (None: every row)
RowFilter = Union[str, "Column", None]


@runtime_checkable
class WriteTarget(Protocol):
    """An Iceberg table as a destination of Spark writes."""

    #: the table's name, for errors and the files' names
    name: str
    #: the table's file I/O: data and delete files are written (and, on failure, removed) through it
    io: FileIO
    #: the branch the writes go to (``main`` unless the table object writes elsewhere)
    branch: str

    @property
    def metadata(self) -> TableMetadata:
        """The table's metadata as last loaded (``refresh`` loads it again)."""
        ...

    @property
    def spark(self) -> SparkSession:
        """The Spark session the writes run in (started when none runs)."""
        ...

    def refresh(self) -> "WriteTarget":
        """Load the table's current metadata; returns this target."""
        ...

    def commit(self, change: SnapshotProducer, branch: str) -> Snapshot:
        """Commit ``change`` to ``branch`` as one snapshot (its added files removed when it fails)."""
        ...


def branch_head(meta: TableMetadata, branch: str) -> Optional[Snapshot]:
    """The snapshot at the head of ``branch``; main's current one for a branch not made yet (its
    first write creates it from there)."""
    ref = meta.refs.get(branch)
    return meta.snapshot_by_id(ref.snapshot_id) if ref is not None else meta.current_snapshot
