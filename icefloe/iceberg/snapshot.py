# pyright: strict
"""Snapshots, their summaries and references (Iceberg spec, "Snapshots", "Snapshot References")."""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Optional

from icefloe.iceberg.manifest import DATA, EQUALITY_DELETES, POSITION_DELETES, DataFile

APPEND, REPLACE, OVERWRITE, DELETE = "append", "replace", "overwrite", "delete"


@dataclass
class Snapshot:
    snapshot_id: int
    sequence_number: int
    timestamp_ms: int
    manifest_list: str
    summary: dict[str, str]
    parent_snapshot_id: Optional[int] = None
    schema_id: Optional[int] = None
    # format v3 row lineage: the first row id this snapshot assigned, and how many it assigned
    first_row_id: Optional[int] = None
    added_rows: Optional[int] = None

    @property
    def operation(self) -> str:
        return self.summary.get("operation", "")

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"sequence-number": self.sequence_number, "snapshot-id": self.snapshot_id}
        if self.parent_snapshot_id is not None:
            d["parent-snapshot-id"] = self.parent_snapshot_id
        d["timestamp-ms"] = self.timestamp_ms
        d["summary"] = dict(self.summary)
        d["manifest-list"] = self.manifest_list
        if self.schema_id is not None:
            d["schema-id"] = self.schema_id
        if self.first_row_id is not None:
            d["first-row-id"] = self.first_row_id
            d["added-rows"] = self.added_rows or 0
        return d

    @staticmethod
    def from_json(obj: dict[str, Any]) -> "Snapshot":
        return Snapshot(
            snapshot_id=obj["snapshot-id"], sequence_number=obj.get("sequence-number", 0),
            timestamp_ms=obj["timestamp-ms"], manifest_list=obj.get("manifest-list", ""),
            summary=dict(obj.get("summary") or {"operation": APPEND}),
            parent_snapshot_id=obj.get("parent-snapshot-id"), schema_id=obj.get("schema-id"),
            first_row_id=obj.get("first-row-id"), added_rows=obj.get("added-rows"),
        )


@dataclass
class SnapshotRef:
    snapshot_id: int
    type: str = "branch"
    min_snapshots_to_keep: Optional[int] = None
    max_snapshot_age_ms: Optional[int] = None
    max_ref_age_ms: Optional[int] = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"snapshot-id": self.snapshot_id, "type": self.type}
        if self.min_snapshots_to_keep is not None:
            d["min-snapshots-to-keep"] = self.min_snapshots_to_keep
        if self.max_snapshot_age_ms is not None:
            d["max-snapshot-age-ms"] = self.max_snapshot_age_ms
        if self.max_ref_age_ms is not None:
            d["max-ref-age-ms"] = self.max_ref_age_ms
        return d

    @staticmethod
    def from_json(obj: dict[str, Any]) -> "SnapshotRef":
        return SnapshotRef(obj["snapshot-id"], obj.get("type", "branch"), obj.get("min-snapshots-to-keep"),
                           obj.get("max-snapshot-age-ms"), obj.get("max-ref-age-ms"))


def new_snapshot_id() -> int:
    """A positive random 63-bit id, as Java derives from a UUID's bits."""
    u = uuid.uuid4()
    v = (u.int >> 64) ^ (u.int & ((1 << 64) - 1))
    return v & ((1 << 63) - 1) or 1


# Summary keys (spec: "Snapshot Summary" / metrics written by Java's SnapshotProducer)
TOTAL_KEYS = ("total-records", "total-files-size", "total-data-files", "total-delete-files",
              "total-position-deletes", "total-equality-deletes")


def icefloe_version() -> str:
    """icefloe's installed version (``unknown`` when run from a tree that is not installed)."""
    return _icefloe_version()


def _icefloe_version() -> str:
    try:
        from importlib.metadata import version

        return version("icefloe")
    except Exception:  # pragma: no cover - running from a tree that is not installed
        return "unknown"


def content_size(f: DataFile) -> int:
    """The bytes a file contributes to a summary's sizes: a deletion vector counts its blob, not
    the whole Puffin file it shares with others."""
    if f.is_deletion_vector and f.content_size_in_bytes is not None:
        return f.content_size_in_bytes
    return f.file_size_in_bytes


def build_summary(operation: str, added: list[DataFile], removed: list[DataFile],
                  previous: Optional[dict[str, str]], extra: Optional[dict[str, str]] = None) -> dict[str, str]:
    """Summary map with the spec's optional summary figures ("Snapshot Summary"), derived from added and removed DataFiles
    and the parent snapshot's summary (``previous``; None where there is no parent),
    and the engine that wrote the snapshot (``engine-name``/``engine-version``: Spark's when a
    Spark job wrote it, as Iceberg's Spark runtime records, else icefloe's; ``icefloe-version``)."""
    s: dict[str, str] = {"operation": operation}
    if extra:
        s.update(extra)
    s.setdefault("engine-name", "icefloe")
    s.setdefault("engine-version", _icefloe_version())
    s["icefloe-version"] = _icefloe_version()
    add_data = [f for f in added if f.content == DATA]
    add_del = [f for f in added if f.content != DATA]
    rm_data = [f for f in removed if f.content == DATA]
    rm_del = [f for f in removed if f.content != DATA]

    def put(key: str, value: int) -> None:
        if value:
            s[key] = str(value)

    put("added-data-files", len(add_data))
    put("deleted-data-files", len(rm_data))
    put("added-delete-files", len(add_del))
    put("removed-delete-files", len(rm_del))
    put("added-records", sum(f.record_count for f in add_data))
    put("deleted-records", sum(f.record_count for f in rm_data))
    put("added-dvs", sum(1 for f in add_del if f.is_deletion_vector))
    put("removed-dvs", sum(1 for f in rm_del if f.is_deletion_vector))
    put("added-files-size", sum(content_size(f) for f in added))
    put("removed-files-size", sum(content_size(f) for f in removed))
    put("added-position-deletes", sum(f.record_count for f in add_del if f.content == POSITION_DELETES))
    put("removed-position-deletes", sum(f.record_count for f in rm_del if f.content == POSITION_DELETES))
    put("added-equality-deletes", sum(f.record_count for f in add_del if f.content == EQUALITY_DELETES))
    put("removed-equality-deletes", sum(f.record_count for f in rm_del if f.content == EQUALITY_DELETES))
    # DataFile.partition is declared a bare tuple in manifest.py
    parts: set[tuple[int, tuple[Any, ...]]] = {
        (f.spec_id, f.partition) for f in added + removed}  # pyright: ignore[reportUnknownMemberType]
    s["changed-partition-count"] = str(len(parts))

    def total(key: str, delta: int) -> None:
        # a total continues the parent's; where the parent has a snapshot without it (a writer that
        # records only the operation, as Paimon's Iceberg compatibility does) it is left out, as
        # Iceberg's Java writer does, rather than counted from zero
        if previous is None:
            s[key] = str(delta)
        elif key in previous:
            s[key] = str(int(previous[key]) + delta)

    total("total-records", sum(f.record_count for f in add_data) - sum(f.record_count for f in rm_data))
    total("total-files-size", sum(content_size(f) for f in added) - sum(content_size(f) for f in removed))
    total("total-data-files", len(add_data) - len(rm_data))
    total("total-delete-files", len(add_del) - len(rm_del))
    total("total-position-deletes",
          sum(f.record_count for f in add_del if f.content == POSITION_DELETES)
          - sum(f.record_count for f in rm_del if f.content == POSITION_DELETES))
    total("total-equality-deletes",
          sum(f.record_count for f in add_del if f.content == EQUALITY_DELETES)
          - sum(f.record_count for f in rm_del if f.content == EQUALITY_DELETES))
    return s
