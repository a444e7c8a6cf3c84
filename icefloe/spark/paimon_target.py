"""What the Spark layer's Paimon reads and writes need of a table.

Reads, writes, compaction and row-level changes plan against a Paimon table's schemas and
manifests and commit through it. They name these protocols, not the user-facing table (the table
layer sits above this one): ``PaimonStore`` is what a bare ``paimon.table.FileStoreTable`` offers
(the data source's tasks make one from a location), ``SparkPaimonTable`` adds the Spark session,
the table's rows as a DataFrame and its refusals, which ``table.paimon.PaimonTable`` implements.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Protocol, Sequence, Union

from icefloe.paimon.kv_compact import CompactTable

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from icefloe.core.timetravel import AsOf
    from icefloe.core.types import Schema
    from icefloe.errors import NotSupportedError
    from icefloe.paimon import manifest as mf
    from icefloe.paimon.commit import CommitMessage
    from icefloe.paimon.commit_changes import Requirement
    from icefloe.paimon.schema import TableSchema
    from icefloe.paimon.snapshot import Snapshot
    from icefloe.paimon.types import DataField

#: a row filter: Spark SQL predicate text or a Spark ``Column`` (None: every row)
Where = Union[str, "Column", None]


class PaimonStore(CompactTable, Protocol):
    """A Paimon table (or branch) as Spark's reads and writes plan and commit against it."""

    def snapshot_for(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                     ref: Optional[str] = None, tag: Optional[str] = None) -> Optional[Snapshot]: ...

    def table_schema_for(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                         ref: Optional[str] = None) -> TableSchema: ...

    def buckets_of(self, entries: Iterable[mf.ManifestEntry]) -> list[tuple[list[str], list[list[DataField]]]]:
        """Planned entries grouped per (partition, bucket): the file paths, and each file's fields."""
        ...

    def static_partition_match(self, partition: Mapping[str, Any]) -> Callable[[Sequence[Any]], bool]: ...

    def commit(self, messages: Sequence[CommitMessage], overwrite: bool = False) -> Optional[Snapshot]:
        """Commit the tasks' messages as one snapshot (None when nothing was committed)."""
        ...

    def replace_files(self, removed: Sequence[mf.ManifestEntry], messages: Sequence[CommitMessage], operation: str,
                      base_id: Optional[int], also: Sequence[Requirement] = ()) -> Snapshot:
        """Commit a copy-on-write change: ``removed`` deleted, the messages' files added (``also``:
        further requirements of the commit)."""
        ...

    def commit_column_updates(self, messages: Sequence[CommitMessage], updated: Sequence[mf.ManifestEntry],
                              operation: str, base_id: Optional[int]) -> Snapshot:
        """Commit a data-evolution update: the messages' files added, the files of the row-id
        ranges it updates (``updated``) still live."""
        ...

    def abort(self, messages: Sequence[CommitMessage]) -> None:
        """Delete the data files of uncommitted messages."""
        ...


class SparkPaimonTable(PaimonStore, Protocol):
    """A Paimon table with its Spark session: what row-level changes, changelogs and ANALYZE need."""

    @property
    def spark(self) -> SparkSession: ...
    @property
    def schema(self) -> Schema: ...

    def to_spark(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, where: Where = None,
                 columns: Optional[Sequence[str]] = None, ref: Optional[str] = None,
                 tag: Optional[str] = None) -> DataFrame:
        """The table's rows (a primary-key table's merged) as a DataFrame."""
        ...

    def unsupported(self, operation: str, reason: str = "") -> NotSupportedError:
        """The error naming ``operation``, which the table cannot do, and why."""
        ...


__all__ = ["PaimonStore", "SparkPaimonTable", "Where"]
