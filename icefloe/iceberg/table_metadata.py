# pyright: strict
"""Table metadata, the ``vN.metadata.json`` document (Iceberg spec, "Table Metadata").

``TableMetadata`` is immutable in spirit: every change builds a new instance
with :func:`dataclasses.replace`, and a commit writes it as the next version.
"""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional, TypeGuard

from icefloe.core.types import Schema, StructType, widen_schema_small_ints
from icefloe.core.types.model import UnknownType, VariantType
from icefloe.core.types.model import V3_TYPE_NAMES, nested_fields, type_names
from icefloe.errors import CorruptMetadataError, NoSuchSnapshotError, SchemaError, UnsupportedFormatVersionError
from icefloe.iceberg.metadata_files import inflate_metadata, metadata_codec
from icefloe.iceberg.metrics_modes import check_metrics_properties
from icefloe.iceberg import parquet_props
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
    schemas: list[Schema]
    current_schema_id: int
    partition_specs: list[PartitionSpec]
    default_spec_id: int
    last_partition_id: int
    properties: dict[str, str]
    current_snapshot_id: Optional[int]
    snapshots: list[Snapshot]
    snapshot_log: list[dict[str, Any]]
    metadata_log: list[dict[str, Any]]
    sort_orders: list[dict[str, Any]]
    default_sort_order_id: int
    refs: dict[str, SnapshotRef]
    statistics: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    partition_statistics: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    format_version: int = 2
    # format v3 row lineage: the next row id to assign (null below v3)
    next_row_id: Optional[int] = None

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

    def specs_by_id(self) -> dict[int, PartitionSpec]:
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
    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
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
        if self.format_version >= 3:
            d["next-row-id"] = self.next_row_id or 0
        return d

    def dumps(self) -> bytes:
        # compact, as Iceberg's Java writer writes it: json's C encoder (an indented dump is Python's
        # own, and a commit of a table of a few hundred snapshots spent most of its time there)
        return json.dumps(self.to_json(), separators=(",", ":")).encode("utf-8")

    @staticmethod
    def from_json(obj: dict[str, Any], path: str = "<memory>") -> "TableMetadata":
        """Parse and validate a metadata document; anything malformed is a
        ``CorruptMetadataError`` naming ``path``, the field and what is wrong."""
        where = ["table metadata"]   # the field being read, for error messages

        def bad(reason: str) -> CorruptMetadataError:
            return CorruptMetadataError(path, reason)

        def need(key: str) -> Any:
            where[0] = key
            if key not in obj:
                raise bad(f"missing required field {key!r}")
            return obj[key]

        def section(key: str, default: Any = None, kind: type = list) -> Any:   # a JSON value of that kind
            where[0] = key
            v = obj.get(key)
            if v is None:
                return default
            if not isinstance(v, kind):
                raise bad(f"{key!r} must be a JSON {'array' if kind is list else 'object'}, "
                          f"not {type(v).__name__}")
            return v

        try:
            fv = need("format-version")
            if type(fv) is int and fv > MAX_FORMAT_VERSION:
                raise UnsupportedFormatVersionError(
                    f"{path}: format-version {fv}: the table is Iceberg format version {fv}, which icefloe does not read "
                    f"(it reads versions 1 to {MAX_FORMAT_VERSION})")
            if type(fv) is not int or fv < 1:
                raise bad(f"unsupported format-version {fv!r} (icefloe reads versions 1 to {MAX_FORMAT_VERSION})")
            v2 = fv >= 2
            location = need("location")
            if not isinstance(location, str):
                raise bad(f"'location' must be a string, not {type(location).__name__}")
            if "schemas" in obj or v2:
                raw = section("schemas")
                if not raw:
                    raise bad("missing required field 'schemas'" if raw is None else "'schemas' is empty")
                schemas = [schema_from_json(s) for s in raw]
                if v2:
                    current_schema_id = need("current-schema-id")
                else:
                    current_schema_id = obj.get("current-schema-id", schemas[-1].schema_id)
            else:  # v1 tables may carry a single schema
                schemas = [schema_from_json(need("schema"))]
                current_schema_id = schemas[0].schema_id
            where[0] = "current-schema-id"
            if current_schema_id not in {s.schema_id for s in schemas}:
                raise bad(f"current-schema-id {current_schema_id!r} names no schema in 'schemas'")
            schema = next(s for s in schemas if s.schema_id == current_schema_id)
            if "partition-specs" in obj or v2:
                raw = section("partition-specs")
                if not raw:
                    raise bad("missing required field 'partition-specs'" if raw is None
                              else "'partition-specs' is empty")
                specs = [PartitionSpec.from_json(s) for s in raw]
                default_spec_id = need("default-spec-id") if v2 else obj.get("default-spec-id", specs[-1].spec_id)
            else:
                where[0] = "partition-spec"
                specs = [PartitionSpec.from_json({"spec-id": 0, "fields": obj.get("partition-spec", [])})]
                default_spec_id = 0
            where[0] = "default-spec-id"
            default_spec = next((s for s in specs if s.spec_id == default_spec_id), None)
            if default_spec is None:
                raise bad(f"default-spec-id {default_spec_id!r} names no spec in 'partition-specs'")
            where[0] = "partition-specs"
            default_spec.partition_type(schema)   # its source columns exist in the current schema
            raw_snapshots = section("snapshots", [])
            for s in raw_snapshots:
                if not is_json_object(s):
                    raise bad(f"a snapshot must be a JSON object, not {type(s).__name__}")
                for key in ("snapshot-id", "timestamp-ms", "manifest-list"):
                    if key not in s:
                        raise bad(f"snapshot {s.get('snapshot-id', '?')} lacks required field {key!r}")
                if not isinstance(s["manifest-list"], str) or not s["manifest-list"]:
                    raise bad(f"snapshot {s['snapshot-id']} has no manifest-list path")
            snapshots = [Snapshot.from_json(s) for s in raw_snapshots]
            ids = {s.snapshot_id for s in snapshots}
            where[0] = "current-snapshot-id"
            cur = obj.get("current-snapshot-id")
            if cur == -1:
                cur = None
            if cur is not None and (type(cur) is not int or cur not in ids):
                raise bad(f"current-snapshot-id {cur!r} names no snapshot in 'snapshots'")
            refs = {k: SnapshotRef.from_json(v) for k, v in section("refs", {}, dict).items()}
            for k, r in refs.items():
                if r.snapshot_id not in ids:
                    raise bad(f"ref {k!r} points to snapshot {r.snapshot_id!r}, which is not in 'snapshots'")
            if cur is not None and MAIN_BRANCH not in refs:
                refs[MAIN_BRANCH] = SnapshotRef(cur, "branch")
            where[0] = "last-partition-id"
            last_pid = obj.get("last-partition-id")
            if last_pid is None:
                last_pid = max([s.last_field_id for s in specs] + [PARTITION_DATA_ID_START - 1])
            where[0] = "table metadata"
            return TableMetadata(
                location=location,
                table_uuid=obj.get("table-uuid") or str(uuid.uuid4()),
                last_sequence_number=obj.get("last-sequence-number", 0),
                last_updated_ms=need("last-updated-ms"),
                last_column_id=need("last-column-id"),
                schemas=schemas, current_schema_id=current_schema_id,
                partition_specs=specs, default_spec_id=default_spec_id,
                last_partition_id=last_pid,
                properties=dict(section("properties", {}, dict)),
                current_snapshot_id=cur,
                snapshots=snapshots,
                snapshot_log=list(section("snapshot-log", [])),
                metadata_log=list(section("metadata-log", [])),
                sort_orders=list(section("sort-orders", None) or [{"order-id": 0, "fields": []}]),
                default_sort_order_id=obj.get("default-sort-order-id", 0),
                refs=refs,
                statistics=list(section("statistics", [])),
                partition_statistics=list(section("partition-statistics", [])),
                format_version=fv,
                next_row_id=_next_row_id(obj, fv, bad),
            )
        except CorruptMetadataError:
            raise
        except KeyError as e:
            raise bad(f"invalid {where[0]!r}: missing field {e}") from e
        except (TypeError, ValueError, AttributeError, IndexError) as e:
            raise bad(f"invalid {where[0]!r}: {type(e).__name__}: {e}") from e

    @staticmethod
    def loads(data: bytes, path: str) -> "TableMetadata":
        return TableMetadata.from_json(metadata_json(data, path, "table"), path)


def is_json_object(value: object) -> TypeGuard[dict[str, Any]]:
    """``value`` is a JSON object (parsed JSON objects are dicts keyed by strings)."""
    return isinstance(value, dict)


def metadata_json(data: bytes, path: str, kind: str) -> dict[str, Any]:
    """The JSON object of a metadata file (``kind``: "table" or "view"), gzip-compressed or not
    (``metadata_files.inflate_metadata``); ``CorruptMetadataError`` naming ``path`` when it is not
    JSON or not an object."""
    data = inflate_metadata(data, path)
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise CorruptMetadataError(path, f"not valid JSON ({type(e).__name__}: {e})") from e
    if not is_json_object(obj):
        raise CorruptMetadataError(path, f"{kind} metadata must be a JSON object, not {type(obj).__name__}")
    return obj


def _next_row_id(obj: dict[str, Any], fv: int, bad: Callable[[str], Exception]) -> Optional[int]:
    if fv < 3:
        return None
    v = obj.get("next-row-id")
    if type(v) is not int or v < 0:
        raise bad(f"format-version {fv} needs 'next-row-id', a non-negative integer, not {v!r}")
    return v


FORMAT_VERSION = "format-version"   # a reserved property: it sets the table's version, it is not stored
MAX_FORMAT_VERSION = 3            # the highest version icefloe reads and writes
DEFAULT_FORMAT_VERSION = 2        # what a new table is unless ``format-version`` says otherwise


def check_format_version_property(value: object, table: str = "the table", current: Optional[int] = None) -> int:
    """``format-version`` given as a property (as Iceberg's catalogs take it): the version asked for,
    2 or 3; never lower than ``current`` (tables are upgraded, not downgraded)."""
    text = str(value).strip()
    if text not in ("2", "3"):
        raise UnsupportedFormatVersionError(
            f"{table}: format-version {value!r} cannot be set; icefloe writes Iceberg format versions 2 and 3")
    v = int(text)
    if current is not None and v < current:
        raise UnsupportedFormatVersionError(
            f"{table}: format-version {v} cannot be set on a version {current} table: versions are upgraded, "
            "never downgraded")
    return v


def upgraded(meta: TableMetadata, version: int) -> TableMetadata:
    """``meta`` at format ``version`` (>= its own): a v3 table starts assigning row ids at 0."""
    if version <= meta.format_version:
        return meta
    return replace(meta, format_version=version,
                   next_row_id=meta.next_row_id if meta.next_row_id is not None else 0)


def check_types_for_version(struct: StructType, version: int, what: str) -> None:
    """Refuse format v3's types (``unknown``, nanosecond timestamps, ``variant``) in an older table,
    an ``unknown`` column that is required and a default value for either of the two: the spec's
    rules, which other readers rely on."""
    newer = sorted({n for n in type_names(struct) if n in V3_TYPE_NAMES})
    if newer and version < 3:
        raise SchemaError(f"{what}: type(s) {', '.join(newer)} need format version 3 (the table is version "
                          f"{version}); create it with properties={{'format-version': '3'}}")
    for f in nested_fields(struct):
        if version < 3 and (f.initial_default is not None or f.write_default is not None):
            raise SchemaError(f"{what}: column {f.name!r} has a default value; default values (initial-default, "
                              f"write-default) need format version 3 (the table is version {version}); create it "
                              "with properties={'format-version': '3'}")
        if isinstance(f.field_type, UnknownType) and (f.required or f.initial_default is not None
                                               or f.write_default is not None):
            raise SchemaError(f"{what}: column {f.name!r} of type unknown must be optional with no default")
        if isinstance(f.field_type, VariantType) and (f.initial_default is not None or f.write_default is not None):
            raise SchemaError(f"{what}: column {f.name!r} of type variant cannot have a default value")


def new_table_metadata(location: str, schema: Schema, spec: PartitionSpec, properties: Optional[dict[str, str]]) -> TableMetadata:
    schema = widen_schema_small_ints(schema)      # Iceberg has no TINYINT/SMALLINT: they are int
    props = {"write.parquet.compression-codec": "zstd"}
    props.update(properties or {})
    metadata_codec(props, location)       # an unknown metadata codec is refused before anything is written
    version = DEFAULT_FORMAT_VERSION
    if FORMAT_VERSION in props:
        version = check_format_version_property(props.pop(FORMAT_VERSION), location)
    check_types_for_version(schema.struct, version, location)
    check_metrics_properties(props, schema)     # metrics modes icefloe cannot honour are refused now
    parquet_props.check(props)     # so are Parquet write settings
    props.setdefault("schema.name-mapping.default", json.dumps(name_mapping(schema)))
    ts = now_ms()
    return TableMetadata(
        location=location, table_uuid=str(uuid.uuid4()), last_sequence_number=0, last_updated_ms=ts,
        last_column_id=schema.highest_field_id, schemas=[schema], current_schema_id=schema.schema_id,
        partition_specs=[spec], default_spec_id=spec.spec_id,
        last_partition_id=max(spec.last_field_id, PARTITION_DATA_ID_START - 1),
        properties=props, current_snapshot_id=None, snapshots=[], snapshot_log=[], metadata_log=[],
        sort_orders=[{"order-id": 0, "fields": []}], default_sort_order_id=0, refs={},
        format_version=version, next_row_id=0 if version >= 3 else None,
    )


def with_metadata_log(meta: TableMetadata, previous_file: Optional[str], previous_ts: Optional[int],
                      max_entries: int) -> TableMetadata:
    log = list(meta.metadata_log)
    if previous_file is not None:
        log.append({"timestamp-ms": previous_ts, "metadata-file": previous_file})
    if max_entries >= 0 and len(log) > max_entries:
        log = log[len(log) - max_entries:]
    return replace(meta, metadata_log=log)
