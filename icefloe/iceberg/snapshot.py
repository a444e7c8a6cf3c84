# pyright: strict
"""Snapshots, their summaries and references (Iceberg spec, "Snapshots", "Snapshot References")."""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Callable, Optional

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


# the figures of one partition's summary (``partitions.<path>``), in the order Iceberg's Java runtime writes them
_PARTITION_FIGURES = ("added-data-files", "deleted-data-files", "added-equality-delete-files",
                      "removed-equality-delete-files", "added-position-delete-files", "removed-position-delete-files",
                      "added-delete-files", "removed-delete-files", "added-dvs", "removed-dvs", "added-records",
                      "deleted-records", "added-files-size", "removed-files-size", "added-position-deletes",
                      "removed-position-deletes", "added-equality-deletes", "removed-equality-deletes")


def _partition_figures(added: list[DataFile], removed: list[DataFile]) -> str:
    """One partition's changes as ``key=value`` pairs joined by commas (the figures that are not 0)."""
    n: dict[str, int] = dict.fromkeys(_PARTITION_FIGURES, 0)
    for files, add in ((added, True), (removed, False)):
        for f in files:
            n["added-files-size" if add else "removed-files-size"] += content_size(f)
            if f.content == DATA:
                n["added-data-files" if add else "deleted-data-files"] += 1
                n["added-records" if add else "deleted-records"] += f.record_count
                continue
            n["added-delete-files" if add else "removed-delete-files"] += 1
            if f.content == POSITION_DELETES:
                key = ("added-dvs" if add else "removed-dvs") if f.is_deletion_vector else \
                    ("added-position-delete-files" if add else "removed-position-delete-files")
                n[key] += 1
                n["added-position-deletes" if add else "removed-position-deletes"] += f.record_count
            else:
                n["added-equality-delete-files" if add else "removed-equality-delete-files"] += 1
                n["added-equality-deletes" if add else "removed-equality-deletes"] += f.record_count
    return ",".join(f"{k}={v}" for k, v in n.items() if v)


def build_summary(operation: str, added: list[DataFile], removed: list[DataFile],
                  previous: Optional[dict[str, str]], extra: Optional[dict[str, str]] = None,
                  partition_paths: Optional[Callable[[DataFile], str]] = None, partition_limit: int = 0) -> dict[str, str]:
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
    parts = {(f.spec_id, f.partition) for f in added + removed}
    s["changed-partition-count"] = str(len(parts))
    if partition_paths is not None and partition_limit > 0:
        # ``write.summary.partition-limit``: each changed partition's figures (by its path; an unpartitioned
        # table's is empty and not written), where no more partitions changed, as the Java runtime writes them
        by_path: dict[str, tuple[list[DataFile], list[DataFile]]] = {}
        for files, i in ((added, 0), (removed, 1)):
            for f in files:
                by_path.setdefault(partition_paths(f), ([], []))[i].append(f)
        if 0 < len(by_path) <= partition_limit:
            s["partition-summaries-included"] = "true"
            for path, (a, r) in by_path.items():
                if path:
                    s[f"partitions.{path}"] = _partition_figures(a, r)

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
