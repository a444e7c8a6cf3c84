# pyright: strict
"""Table statistics (Paimon's ``Statistics``): ``<table>/statistics/stat-<uuid>-<n>`` JSON files.

``ANALYZE TABLE`` writes one and commits a snapshot of kind ``ANALYZE`` (no file changes) whose
``statistics`` field names it. Later commits inherit the name while the table's schema is the
one the statistics were taken with; ``$statistics`` shows the latest snapshot's.

The file: ``snapshotId``, ``schemaId``, ``mergedRecordCount`` (rows after merging by key),
``mergedRecordSize`` (the live files' bytes scaled to those rows) and ``colStats``, keyed by
column name: ``colId`` (the field id), ``distinctCount``, ``min``/``max`` (as text, only for
numbers, booleans, dates and timestamps), ``nullCount``, ``avgLen``, ``maxLen``; absent values
are left out, as Jackson's NON_NULL writes them.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

from icefloe.core.io import FileIO
from icefloe.errors import CorruptMetadataError

STATISTICS_DIR = "statistics"
STATISTICS_PREFIX = "stat-"
_COL_FIELDS = (("colId", "col_id"), ("distinctCount", "distinct_count"), ("min", "min"), ("max", "max"),
               ("nullCount", "null_count"), ("avgLen", "avg_len"), ("maxLen", "max_len"))


@dataclass
class ColStats:
    col_id: int
    distinct_count: Optional[int] = None
    min: Optional[str] = None
    max: Optional[str] = None
    null_count: Optional[int] = None
    avg_len: Optional[int] = None
    max_len: Optional[int] = None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, a) for k, a in _COL_FIELDS if getattr(self, a) is not None}


@dataclass
class Statistics:
    snapshot_id: int
    schema_id: int
    merged_record_count: Optional[int] = None
    merged_record_size: Optional[int] = None
    col_stats: dict[str, ColStats] = field(default_factory=dict[str, ColStats])      # column name -> ColStats

    def to_json(self) -> str:
        doc: dict[str, Any] = {"snapshotId": self.snapshot_id, "schemaId": self.schema_id}
        if self.merged_record_count is not None:
            doc["mergedRecordCount"] = self.merged_record_count
        if self.merged_record_size is not None:
            doc["mergedRecordSize"] = self.merged_record_size
        doc["colStats"] = {name: c.to_dict() for name, c in self.col_stats.items()}
        return json.dumps(doc, indent=2, separators=(",", " : "), ensure_ascii=False)

    def col_stats_json(self) -> str:
        """``colStats`` as the ``$statistics`` table shows it (compact JSON)."""
        return json.dumps({name: c.to_dict() for name, c in self.col_stats.items()}, separators=(",", ":"))

    @staticmethod
    def from_json(text: str, path: str = "<statistics>") -> "Statistics":
        try:
            d = json.loads(text)
            col_docs: dict[str, dict[str, Any]] = d.get("colStats") or {}
            cols = {name: ColStats(**_col_args(c)) for name, c in col_docs.items()}
            return Statistics(int(d["snapshotId"]), int(d["schemaId"]), d.get("mergedRecordCount"),
                              d.get("mergedRecordSize"), cols)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise CorruptMetadataError(path, f"not a Paimon statistics file ({e})") from None


def _col_args(doc: dict[str, Any]) -> dict[str, Any]:
    """``ColStats`` keyword arguments of one ``colStats`` entry (absent keys as None)."""
    return {a: doc.get(k) for k, a in _COL_FIELDS}


def statistics_path(table_path: str, name: str) -> str:
    return f"{table_path.rstrip('/')}/{STATISTICS_DIR}/{name}"


def write_statistics(io: FileIO, table_path: str, stats: Statistics) -> str:
    """Write ``stats`` to a new file; returns its name (what a snapshot's ``statistics`` holds)."""
    name = f"{STATISTICS_PREFIX}{uuid.uuid4()}-0"
    io.write_bytes(statistics_path(table_path, name), stats.to_json().encode("utf-8"), overwrite=False)
    return name


def read_statistics(io: FileIO, table_path: str, name: str) -> Statistics:
    path = statistics_path(table_path, name)
    try:
        data = io.read_bytes(path)
    except FileNotFoundError:
        raise CorruptMetadataError(path, "statistics file referenced by a snapshot is missing") from None
    return Statistics.from_json(data.decode("utf-8"), path)


__all__ = ["ColStats", "Statistics", "STATISTICS_DIR", "statistics_path", "write_statistics", "read_statistics"]
