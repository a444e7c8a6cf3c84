# pyright: strict
"""What a statement may ask of a table beyond the common contract, by name rather than by format.

Some SQL statements and options exist for one format only (Paimon's ``CALL sys.<procedure>``
arguments, its ``spark.paimon.*`` read options, its ``audit_log``, ``DELETE TAG `a,b```). The SQL
front-end asks ``Table.supports(capability)`` before taking such a path, never ``table.format``,
so a third format (or a Paimon feature Iceberg gains) changes the table, not the callers. Where
the path needs a method of its own (``row_table``, ``analyze``), the capability is a small
protocol the table implements.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol, Sequence, runtime_checkable

from icefloe.core.timetravel import AsOf

#: ``CALL sys.<procedure>(...)`` with Paimon's procedures and their arguments
PAIMON_PROCEDURES = "paimon-procedures"
#: reads take the session's ``spark.paimon.<option>`` settings (``scan.snapshot-id``, ``scan.tag-name``...)
PAIMON_DYNAMIC_OPTIONS = "paimon-dynamic-options"
#: the ``audit_log`` metadata table: every row with its row kind, read in Spark
AUDIT_LOG = "audit-log"
#: ``ALTER TABLE ... DELETE TAG `a,b``` drops several tags in one statement
TAG_LISTS = "tag-lists"
#: branches are tables of their own (``db.`t$branch_b```), made and dropped by procedures, not by
#: ``ALTER TABLE ... CREATE BRANCH``
BRANCH_TABLES = "branch-tables"
#: ``paimon_incremental_query`` and its relatives: the changes between two snapshots or times
INCREMENTAL_QUERIES = "incremental-queries"
#: SHOW PARTITIONS lists the table's partitions (as its engine's Spark catalog answers it)
SHOW_PARTITIONS = "show-partitions"
#: ``VERSION AS OF 'watermark-<ms>'`` reads the first snapshot whose watermark is at or after it
WATERMARK_TIME_TRAVEL = "watermark-time-travel"
#: its engine registers a partition ahead of its rows only in a metastore (Paimon's ``ADD PARTITION``
#: in a Hive or REST catalog; a no-op in a filesystem catalog)
METASTORE_PARTITIONS = "metastore-partitions"


@runtime_checkable
class RowSystemTables(Protocol):
    """A table with system tables of rows, read in Spark (Paimon's ``ro`` and ``binlog``)."""

    def row_table_names(self) -> tuple[str, ...]: ...

    def row_table(self, name: str, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                  ref: Optional[str] = None) -> Any: ...


def row_tables(table: object) -> Optional[RowSystemTables]:
    """``table`` when it has system tables of rows, else None."""
    return table if isinstance(table, RowSystemTables) else None


@runtime_checkable
class TableStatistics(Protocol):
    """A table whose format keeps table statistics that ``ANALYZE TABLE`` computes (Paimon's
    statistics file); ``analyze`` returns the new snapshot, None when there is nothing to analyze."""

    def analyze(self, columns: Optional[Sequence[str]] = None, all_columns: bool = False) -> Any: ...


@dataclass(frozen=True)
class FileRow:
    """A data file as the command line lists it: its path, its partition with each value as people
    read it (``{"ts_day": "2024-01-01", "bucket": 3}``), its rows, bytes and content (0 data)."""
    path: str
    partition: dict[str, Any]
    records: int
    size: int
    content: int = 0


@runtime_checkable
class MetadataColumnReads(Protocol):
    """A table whose rows can be read with hidden metadata columns (Paimon's ``__paimon_file_path``,
    ``__paimon_row_index``, ``__paimon_partition``, ``__paimon_bucket``): ``SELECT *`` leaves them
    out, naming one reads it."""

    def metadata_column_names(self) -> tuple[str, ...]: ...

    def to_spark_with_metadata(self, names: Sequence[str], snapshot_id: Optional[int] = None,
                               as_of: Optional[AsOf] = None,
                               ref: Optional[str] = None) -> Any: ...


def metadata_column_reads(table: object) -> Optional[MetadataColumnReads]:
    """``table`` when it reads metadata columns, else None."""
    return table if isinstance(table, MetadataColumnReads) else None
