"""Table metadata, the ``vN.metadata.json`` document (Iceberg spec, "Table Metadata").

``TableMetadata`` is immutable in spirit: every change builds a new instance
with :func:`dataclasses.replace`, and a commit writes it as the next version.
"""
from __future__ import annotations

import copy
import json
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Optional

from icefloe.core.types import Schema
from icefloe.errors import CorruptMetadataError, NoSuchSnapshotError
from icefloe.iceberg.partitioning import PARTITION_DATA_ID_START, PartitionSpec
from icefloe.iceberg.schema import name_mapping, schema_from_json, schema_to_json
from icefloe.iceberg.snapshot import Snapshot, SnapshotRef

MAIN_BRANCH = "main"


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class TableMetadata:
    location: str
    table_uuid: str
    last_sequence_number: int
    last_updated_ms: int
    last_column_id: int
    schemas: list
    current_schema_id: int
    partition_specs: list
    default_spec_id: int
    last_partition_id: int
    properties: dict
    current_snapshot_id: Optional[int]
    snapshots: list
    snapshot_log: list
    metadata_log: list
    sort_orders: list
    default_sort_order_id: int
    refs: dict
    statistics: list = field(default_factory=list)
    partition_statistics: list = field(default_factory=list)
    format_version: int = 2

    # ------------------------------------------------------------------ lookups
    @property
    def schema(self) -> Schema:
        return self.schema_by_id(self.current_schema_id)

    def schema_by_id(self, schema_id: Optional[int]) -> Schema:
        for s in self.schemas:
            if s.schema_id == schema_id:
                return s
        return self.schemas[-1]

    @property
    def spec(self) -> PartitionSpec:
        return self.spec_by_id(self.default_spec_id)

    def spec_by_id(self, spec_id: int) -> PartitionSpec:
        for s in self.partition_specs:
            if s.spec_id == spec_id:
                return s
        raise CorruptMetadataError(self.location, f"no partition spec with id {spec_id}")

    def specs_by_id(self) -> dict:
        return {s.spec_id: s for s in self.partition_specs}

    @property
    def current_snapshot(self) -> Optional[Snapshot]:
        if self.current_snapshot_id is None:
            return None
        return self.snapshot_by_id(self.current_snapshot_id)

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot:
        for s in self.snapshots:
            if s.snapshot_id == snapshot_id:
                return s
        raise NoSuchSnapshotError(f"no snapshot with id {snapshot_id} in table {self.location}")

    def snapshot_as_of(self, timestamp_ms: int) -> Snapshot:
        """The snapshot that was current at ``timestamp_ms``, from the snapshot log."""
        found = None
        for entry in self.snapshot_log:
            if entry["timestamp-ms"] <= timestamp_ms:
                found = entry["snapshot-id"]
        if found is None:
            raise NoSuchSnapshotError(
                f"table {self.location} has no snapshot at or before timestamp {timestamp_ms}")
        return self.snapshot_by_id(found)

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict:
        d = {
            "format-version": self.format_version,
            "table-uuid": self.table_uuid,
            "location": self.location,
            "last-sequence-number": self.last_sequence_number,
            "last-updated-ms": self.last_updated_ms,
            "last-column-id": self.last_column_id,
            "current-schema-id": self.current_schema_id,
            "schemas": [schema_to_json(s) for s in self.schemas],
            "default-spec-id": self.default_spec_id,
            "partition-specs": [s.to_json() for s in self.partition_specs],
            "last-partition-id": self.last_partition_id,
            "default-sort-order-id": self.default_sort_order_id,
            "sort-orders": self.sort_orders,
            "properties": self.properties,
            "current-snapshot-id": -1 if self.current_snapshot_id is None else self.current_snapshot_id,
            "refs": {k: v.to_json() for k, v in self.refs.items()},
            "snapshots": [s.to_json() for s in self.snapshots],
            "statistics": self.statistics,
            "partition-statistics": self.partition_statistics,
            "snapshot-log": self.snapshot_log,
            "metadata-log": self.metadata_log,
        }
        return d

    def dumps(self) -> bytes:
        return json.dumps(self.to_json(), indent=2).encode("utf-8")

    @staticmethod
    def from_json(obj: dict, path: str = "<memory>") -> "TableMetadata":
        try:
            fv = obj["format-version"]
            if fv not in (1, 2):
                raise CorruptMetadataError(path, f"unsupported format-version {fv}")
            if "schemas" in obj:
                schemas = [schema_from_json(s) for s in obj["schemas"]]
                current_schema_id = obj.get("current-schema-id", schemas[-1].schema_id)
            else:  # v1 tables carry a single schema
                schemas = [schema_from_json(obj["schema"])]
                current_schema_id = schemas[0].schema_id
            if "partition-specs" in obj:
                specs = [PartitionSpec.from_json(s) for s in obj["partition-specs"]]
                default_spec_id = obj.get("default-spec-id", specs[-1].spec_id)
            else:
                specs = [PartitionSpec.from_json({"spec-id": 0, "fields": obj.get("partition-spec", [])})]
                default_spec_id = 0
            snapshots = [Snapshot.from_json(s) for s in obj.get("snapshots") or []]
            cur = obj.get("current-snapshot-id")
            if cur == -1:
                cur = None
            refs = {k: SnapshotRef.from_json(v) for k, v in (obj.get("refs") or {}).items()}
            if cur is not None and MAIN_BRANCH not in refs:
                refs[MAIN_BRANCH] = SnapshotRef(cur, "branch")
            last_pid = obj.get("last-partition-id")
            if last_pid is None:
                last_pid = max([s.last_field_id for s in specs] + [PARTITION_DATA_ID_START - 1])
            return TableMetadata(
                location=obj["location"],
                table_uuid=obj.get("table-uuid") or str(uuid.uuid4()),
                last_sequence_number=obj.get("last-sequence-number", 0),
                last_updated_ms=obj["last-updated-ms"],
                last_column_id=obj["last-column-id"],
                schemas=schemas, current_schema_id=current_schema_id,
                partition_specs=specs, default_spec_id=default_spec_id,
                last_partition_id=last_pid,
                properties=dict(obj.get("properties") or {}),
                current_snapshot_id=cur,
                snapshots=snapshots,
                snapshot_log=list(obj.get("snapshot-log") or []),
                metadata_log=list(obj.get("metadata-log") or []),
                sort_orders=list(obj.get("sort-orders") or [{"order-id": 0, "fields": []}]),
                default_sort_order_id=obj.get("default-sort-order-id", 0),
                refs=refs,
                statistics=list(obj.get("statistics") or []),
                partition_statistics=list(obj.get("partition-statistics") or []),
                format_version=fv,
            )
        except CorruptMetadataError:
            raise
        except (KeyError, TypeError, ValueError) as e:
            raise CorruptMetadataError(path, f"invalid table metadata: {type(e).__name__}: {e}") from e

    @staticmethod
    def loads(data: bytes, path: str) -> "TableMetadata":
        try:
            obj = json.loads(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise CorruptMetadataError(path, f"not valid JSON ({e})") from e
        if not isinstance(obj, dict):
            raise CorruptMetadataError(path, "table metadata must be a JSON object")
        return TableMetadata.from_json(obj, path)


def new_table_metadata(location: str, schema: Schema, spec: PartitionSpec, properties: dict) -> TableMetadata:
    props = {"write.parquet.compression-codec": "zstd"}
    props.update(properties or {})
    props.setdefault("schema.name-mapping.default", json.dumps(name_mapping(schema)))
    ts = now_ms()
    return TableMetadata(
        location=location, table_uuid=str(uuid.uuid4()), last_sequence_number=0, last_updated_ms=ts,
        last_column_id=schema.highest_field_id, schemas=[schema], current_schema_id=schema.schema_id,
        partition_specs=[spec], default_spec_id=spec.spec_id,
        last_partition_id=max(spec.last_field_id, PARTITION_DATA_ID_START - 1),
        properties=props, current_snapshot_id=None, snapshots=[], snapshot_log=[], metadata_log=[],
        sort_orders=[{"order-id": 0, "fields": []}], default_sort_order_id=0, refs={},
    )


def with_snapshot(base: TableMetadata, snap: Snapshot, branch: str = MAIN_BRANCH) -> TableMetadata:
    refs = dict(base.refs)
    refs[branch] = SnapshotRef(snap.snapshot_id, "branch") if branch not in refs else \
        replace(refs[branch], snapshot_id=snap.snapshot_id)
    is_main = branch == MAIN_BRANCH
    return replace(
        base,
        last_sequence_number=snap.sequence_number,
        last_updated_ms=snap.timestamp_ms,
        snapshots=base.snapshots + [snap],
        current_snapshot_id=snap.snapshot_id if is_main else base.current_snapshot_id,
        snapshot_log=base.snapshot_log + ([{"timestamp-ms": snap.timestamp_ms, "snapshot-id": snap.snapshot_id}]
                                          if is_main else []),
        refs=refs,
    )


def with_metadata_log(meta: TableMetadata, previous_file: Optional[str], previous_ts: Optional[int],
                      max_entries: int) -> TableMetadata:
    log = list(meta.metadata_log)
    if previous_file is not None:
        log.append({"timestamp-ms": previous_ts, "metadata-file": previous_file})
    if max_entries >= 0 and len(log) > max_entries:
        log = log[len(log) - max_entries:]
    return replace(meta, metadata_log=log)
