# pyright: strict
"""A commit as the Iceberg REST spec's ``TableUpdate`` and ``TableRequirement`` objects, and the
one builder that applies a list of updates to a ``TableMetadata`` with the checks Iceberg's Java
``TableMetadata.Builder`` and the spec make, so a table is never left in a state another client
cannot load.

Each update and requirement is a small typed object with ``from_json``/``to_json`` in the spec's
shape (``{"action": "add-snapshot", ...}``, ``{"type": "assert-create"}``). :func:`apply_changes`
applies updates in order on a working copy of the metadata document; the first one that breaks a
rule raises :class:`BadUpdate` naming the update and the rule, and nothing of the list is kept.
The rules:

- ``assign-uuid``: a UUID; ``upgrade-format-version``: never down, at most the newest version;
- ``add-schema``: a schema whose id is new (an identical schema already in the table is reused, as
  Java does; a *different* schema under a taken id is refused), unique field ids, a
  ``last-column-id`` never below the table's; ``set-current-schema``: an existing id, or -1 for the
  schema added last in this commit (the same -1 rule for specs and sort orders);
- ``add-spec``: source ids that are columns of the current schema, transforms that apply to them,
  an id that is new (or an identical spec); ``add-sort-order``: the same, order 0 is unsorted,
  directions ``asc``/``desc``, null orders ``nulls-first``/``nulls-last``;
- ``add-snapshot``: a new snapshot id; a parent that exists; a schema id that exists; from format
  version 2 a sequence number above the table's last one (unless the snapshot has no parent, as in
  Java); from format version 3 a ``first-row-id`` not below the table's ``next-row-id``;
- ``set-snapshot-ref``: type ``branch`` or ``tag`` (``main`` is a branch), an existing snapshot,
  retention settings that are positive and, for tags, only ``max-ref-age-ms``;
- ``set-statistics`` / ``set-partition-statistics``: the spec's statistics file shape for an
  existing snapshot; ``set-properties`` / ``remove-properties``: strings.

The result is parsed again by ``TableMetadata.from_json``, which checks the document as a whole.
Locations (``set-location``, manifest lists, statistics paths) are checked against the table's
location by ``icefloe.iceberg.locations.check_commit_locations``, which needs the files.
"""
from __future__ import annotations

import json
import uuid as uuid_lib
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator, Optional, Sequence

from icefloe.errors import BadUpdate, CorruptMetadataError, IcefloeError
from icefloe.iceberg.metadata_files import metadata_codec
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.core.types import Schema
from icefloe.iceberg.schema import schema_from_json
from icefloe.iceberg.snapshot import SnapshotRef
from icefloe.iceberg.table_metadata import MAIN_BRANCH, MAX_FORMAT_VERSION, TableMetadata, is_json_object, now_ms
from icefloe.iceberg.transforms import parse_transform


def json_kind(v: object) -> str:
    kinds: dict[type, str] = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
                              type(None): "null"}
    return kinds.get(type(v), "a number")


def get_field(doc: dict[str, Any], key: str, kind: type, what: str, required: bool = True,
              default: Any = None) -> Any:
    """``doc[key]`` of JSON type ``kind`` (``int`` excludes booleans); ``BadUpdate`` otherwise."""
    if key not in doc or doc[key] is None:
        if required:
            raise BadUpdate(f"{what}: missing field {key!r}")
        return default
    v = doc[key]
    ok = isinstance(v, kind) and not (kind is int and isinstance(v, bool))
    if not ok:
        names = {int: "an integer", str: "a string", dict: "a JSON object", list: "a JSON array", bool: "a boolean"}
        raise BadUpdate(f"{what}: {key!r} must be {names.get(kind, kind)}, not {json_kind(v)}")
    return v


# --------------------------------------------------------------------------- updates
@dataclass
class TableUpdate:
    """One of the spec's ``TableUpdate`` kinds; ``action`` is its name in JSON."""
    action: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def apply(self, b: MetadataBuilder) -> None:
        raise NotImplementedError


@dataclass
class AssignUUID(TableUpdate):
    uuid: str
    action: ClassVar[str] = "assign-uuid"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "AssignUUID":
        return cls(get_field(d, "uuid", str, cls.action))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "uuid": self.uuid}

    def apply(self, b: MetadataBuilder) -> None:
        try:
            b.doc["table-uuid"] = str(uuid_lib.UUID(self.uuid))
        except ValueError:
            raise BadUpdate(f"assign-uuid: {self.uuid[:60]!r} is not a UUID") from None


@dataclass
class UpgradeFormatVersion(TableUpdate):
    format_version: int
    action: ClassVar[str] = "upgrade-format-version"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "UpgradeFormatVersion":
        return cls(get_field(d, "format-version", int, cls.action))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "format-version": self.format_version}

    def apply(self, b: MetadataBuilder) -> None:
        v, cur = self.format_version, b.doc["format-version"]
        if v < cur or v > MAX_FORMAT_VERSION:
            raise BadUpdate(f"upgrade-format-version {v}: a version {cur} table can be upgraded to at most "
                            f"{MAX_FORMAT_VERSION}, never downgraded")
        if v >= 3 and cur < 3:
            b.doc["next-row-id"] = 0
        b.doc["format-version"] = v


@dataclass
class AddSchema(TableUpdate):
    schema: dict[str, Any]
    last_column_id: Optional[int] = None
    action: ClassVar[str] = "add-schema"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "AddSchema":
        return cls(get_field(d, "schema", dict, cls.action), get_field(d, "last-column-id", int, cls.action, required=False))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "schema": self.schema}
        if self.last_column_id is not None:
            out["last-column-id"] = self.last_column_id
        return out

    def apply(self, b: MetadataBuilder) -> None:
        try:
            parsed = schema_from_json(self.schema)
        except (KeyError, TypeError, ValueError, AttributeError, IcefloeError) as e:
            raise BadUpdate(f"add-schema: the schema is malformed ({type(e).__name__}: {e})") from None
        ids: list[Any] = [f.get("id") for f in _all_fields(self.schema)]
        if len(ids) != len(set(ids)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise BadUpdate("add-schema: field ids must be integers, each used once")
        highest = max(ids, default=0)
        last = b.doc["last-column-id"]
        if self.last_column_id is not None and self.last_column_id < last:
            raise BadUpdate(f"add-schema: last-column-id {self.last_column_id} is below the table's {last}")
        sid = get_field(self.schema, "schema-id", int, "add-schema schema", required=False, default=None)
        for existing in b.doc["schemas"]:
            same = schema_from_json(existing)
            if same.struct == parsed.struct and _field_notes(existing) == _field_notes(self.schema) and \
                    list(same.identifier_field_ids or []) == list(parsed.identifier_field_ids or []):
                b.last_schema = existing["schema-id"]        # reused, as Java does
                return
            if existing["schema-id"] == sid:
                raise BadUpdate(f"add-schema: schema id {sid} is taken by a different schema")
        if sid is None:
            sid = max(s["schema-id"] for s in b.doc["schemas"]) + 1
        schema = dict(self.schema, **{"schema-id": sid})
        b.doc["schemas"].append(schema)
        b.doc["last-column-id"] = max(last, self.last_column_id or 0, highest)
        b.last_schema = sid


@dataclass
class SetCurrentSchema(TableUpdate):
    schema_id: int
    action: ClassVar[str] = "set-current-schema"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SetCurrentSchema":
        return cls(get_field(d, "schema-id", int, cls.action))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "schema-id": self.schema_id}

    def apply(self, b: MetadataBuilder) -> None:
        sid = b.resolve(self.schema_id, b.last_schema, "schema")
        if sid not in {s["schema-id"] for s in b.doc["schemas"]}:
            raise BadUpdate(f"set-current-schema: no schema with id {sid}")
        b.doc["current-schema-id"] = sid


@dataclass
class AddPartitionSpec(TableUpdate):
    spec: dict[str, Any]
    action: ClassVar[str] = "add-spec"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "AddPartitionSpec":
        return cls(get_field(d, "spec", dict, cls.action))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "spec": self.spec}

    def apply(self, b: MetadataBuilder) -> None:
        fields = get_field(self.spec, "fields", list, "add-spec spec")
        try:
            spec = PartitionSpec.from_json(self.spec)
            spec.partition_type(b.current_schema())        # source columns exist; transforms apply to them
        except (KeyError, TypeError, ValueError, AttributeError, IcefloeError) as e:
            raise BadUpdate(f"add-spec: {type(e).__name__}: {e}") from None
        if len({f["field-id"] for f in fields}) != len(fields):
            raise BadUpdate("add-spec: partition field ids must each be used once")
        sid = get_field(self.spec, "spec-id", int, "add-spec spec", required=False)
        key = [(f.source_id, str(f.transform), f.name, f.field_id) for f in spec.fields]
        for existing in b.doc["partition-specs"]:
            old = PartitionSpec.from_json(existing)
            if [(f.source_id, str(f.transform), f.name, f.field_id) for f in old.fields] == key:
                b.last_spec = old.spec_id
                return
            if old.spec_id == sid:
                raise BadUpdate(f"add-spec: spec id {sid} is taken by a different spec")
        if sid is None:
            sid = max(s["spec-id"] for s in b.doc["partition-specs"]) + 1
        b.doc["partition-specs"].append(dict(self.spec, **{"spec-id": sid}))
        b.doc["last-partition-id"] = max([b.doc["last-partition-id"]] + [f.field_id for f in spec.fields])
        b.last_spec = sid


@dataclass
class SetDefaultSpec(TableUpdate):
    spec_id: int
    action: ClassVar[str] = "set-default-spec"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SetDefaultSpec":
        return cls(get_field(d, "spec-id", int, cls.action))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "spec-id": self.spec_id}

    def apply(self, b: MetadataBuilder) -> None:
        sid = b.resolve(self.spec_id, b.last_spec, "partition spec")
        if sid not in {s["spec-id"] for s in b.doc["partition-specs"]}:
            raise BadUpdate(f"set-default-spec: no partition spec with id {sid}")
        b.doc["default-spec-id"] = sid


_DIRECTIONS, _NULL_ORDERS = ("asc", "desc"), ("nulls-first", "nulls-last")


@dataclass
class AddSortOrder(TableUpdate):
    sort_order: dict[str, Any]
    action: ClassVar[str] = "add-sort-order"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "AddSortOrder":
        return cls(get_field(d, "sort-order", dict, cls.action))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "sort-order": self.sort_order}

    def apply(self, b: MetadataBuilder) -> None:
        what = "add-sort-order"
        fields = get_field(self.sort_order, "fields", list, what)
        schema = b.current_schema()
        for f in fields:
            if not is_json_object(f):
                raise BadUpdate(f"{what}: a sort field must be a JSON object, not {json_kind(f)}")
            src = get_field(f, "source-id", int, what)
            col = schema.find_field_or_none(src)
            if col is None:
                raise BadUpdate(f"{what}: source id {src} is no column of the current schema")
            if get_field(f, "direction", str, what) not in _DIRECTIONS:
                raise BadUpdate(f"{what}: direction must be one of {_DIRECTIONS}")
            if get_field(f, "null-order", str, what) not in _NULL_ORDERS:
                raise BadUpdate(f"{what}: null-order must be one of {_NULL_ORDERS}")
            try:
                parse_transform(get_field(f, "transform", str, what)).result_type(col.field_type)
            except (ValueError, TypeError, IcefloeError) as e:
                raise BadUpdate(f"{what}: {type(e).__name__}: {e}") from None
        oid = get_field(self.sort_order, "order-id", int, what, required=False)
        if oid == 0 and fields:
            raise BadUpdate(f"{what}: sort order 0 is the unsorted order")
        for existing in b.doc["sort-orders"]:
            if existing.get("fields", []) == fields:
                b.last_order = existing["order-id"]
                return
            if existing["order-id"] == oid:
                raise BadUpdate(f"{what}: sort order id {oid} is taken by a different order")
        if oid is None:
            oid = max(o["order-id"] for o in b.doc["sort-orders"]) + 1
        b.doc["sort-orders"].append(dict(self.sort_order, **{"order-id": oid}))
        b.last_order = oid


@dataclass
class SetDefaultSortOrder(TableUpdate):
    sort_order_id: int
    action: ClassVar[str] = "set-default-sort-order"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SetDefaultSortOrder":
        return cls(get_field(d, "sort-order-id", int, cls.action))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "sort-order-id": self.sort_order_id}

    def apply(self, b: MetadataBuilder) -> None:
        oid = b.resolve(self.sort_order_id, b.last_order, "sort order")
        if oid not in {o["order-id"] for o in b.doc["sort-orders"]}:
            raise BadUpdate(f"set-default-sort-order: no sort order with id {oid}")
        b.doc["default-sort-order-id"] = oid


@dataclass
class AddSnapshot(TableUpdate):
    snapshot: dict[str, Any]
    action: ClassVar[str] = "add-snapshot"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "AddSnapshot":
        return cls(get_field(d, "snapshot", dict, cls.action))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "snapshot": self.snapshot}

    def apply(self, b: MetadataBuilder) -> None:
        s, what = self.snapshot, "add-snapshot"
        sid = get_field(s, "snapshot-id", int, what)
        get_field(s, "timestamp-ms", int, what)
        if not get_field(s, "manifest-list", str, what):
            raise BadUpdate(f"{what}: snapshot {sid} has an empty manifest-list")
        summary = get_field(s, "summary", dict, what, required=False, default={})
        if summary and not isinstance(summary.get("operation"), str):
            raise BadUpdate(f"{what}: the summary of snapshot {sid} lacks its operation")
        if any(not isinstance(v, str) for v in summary.values()):
            raise BadUpdate(f"{what}: snapshot summary values must be strings")
        ids = {x["snapshot-id"] for x in b.doc["snapshots"]}
        if sid in ids:
            raise BadUpdate(f"{what}: snapshot {sid} already exists")
        parent = get_field(s, "parent-snapshot-id", int, what, required=False)
        if parent is not None and parent not in ids:
            raise BadUpdate(f"{what}: parent snapshot {parent} of snapshot {sid} does not exist")
        schema_id = get_field(s, "schema-id", int, what, required=False)
        if schema_id is not None and schema_id not in {x["schema-id"] for x in b.doc["schemas"]}:
            raise BadUpdate(f"{what}: snapshot {sid} names schema {schema_id}, which does not exist")
        seq = get_field(s, "sequence-number", int, what, required=False, default=0)
        last = b.doc["last-sequence-number"]
        fv = b.doc["format-version"]
        if fv >= 2 and seq <= last and parent is not None:
            raise BadUpdate(f"{what}: sequence number {seq} of snapshot {sid} is not above the table's last "
                            f"sequence number {last}")
        if fv >= 3:
            first = get_field(s, "first-row-id", int, what)
            added = get_field(s, "added-rows", int, what)
            nxt = b.doc.get("next-row-id") or 0
            if first < nxt or added < 0:
                raise BadUpdate(f"{what}: first-row-id {first} of snapshot {sid} is below the table's next-row-id "
                                f"{nxt} (or added-rows is negative)")
            b.doc["next-row-id"] = first + added
        b.doc["snapshots"].append(s)
        b.doc["last-sequence-number"] = max(last, seq)
        b.snapshot_ts = s["timestamp-ms"]      # the commit's time, as in Java's builder


@dataclass
class RemoveSnapshots(TableUpdate):
    snapshot_ids: list[int]
    action: ClassVar[str] = "remove-snapshots"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "RemoveSnapshots":
        ids = get_field(d, "snapshot-ids", list, cls.action)
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise BadUpdate(f"{cls.action}: snapshot-ids must be integers")
        return cls(ids)

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "snapshot-ids": list(self.snapshot_ids)}

    def apply(self, b: MetadataBuilder) -> None:
        gone = set(self.snapshot_ids)
        d = b.doc
        d["snapshots"] = [s for s in d["snapshots"] if s["snapshot-id"] not in gone]
        # the log keeps only what follows its last removed entry, as Java's builder does: history
        # must not claim a state whose snapshot is gone
        log: list[Any] = []
        for e in d["snapshot-log"]:
            log = [] if e["snapshot-id"] in gone else log + [e]
        d["snapshot-log"] = log
        # refs to a removed snapshot go with it (Java's removeSnapshots does the same)
        d["refs"] = {k: r for k, r in d["refs"].items() if r["snapshot-id"] not in gone}
        if d["current-snapshot-id"] in gone:
            d["current-snapshot-id"] = -1
        for key in ("statistics", "partition-statistics"):
            d[key] = [s for s in d.get(key, []) if s.get("snapshot-id") not in gone]


_REF_TYPES = ("branch", "tag")


@dataclass
class SetSnapshotRef(TableUpdate):
    ref_name: str
    snapshot_id: int
    type: str
    max_ref_age_ms: Optional[int] = None
    max_snapshot_age_ms: Optional[int] = None
    min_snapshots_to_keep: Optional[int] = None
    action: ClassVar[str] = "set-snapshot-ref"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SetSnapshotRef":
        w = cls.action
        return cls(get_field(d, "ref-name", str, w), get_field(d, "snapshot-id", int, w), get_field(d, "type", str, w),
                   get_field(d, "max-ref-age-ms", int, w, required=False), get_field(d, "max-snapshot-age-ms", int, w, False),
                   get_field(d, "min-snapshots-to-keep", int, w, required=False))

    def _retention(self) -> dict[str, int]:
        return {k: v for k, v in (("max-ref-age-ms", self.max_ref_age_ms),
                                  ("max-snapshot-age-ms", self.max_snapshot_age_ms),
                                  ("min-snapshots-to-keep", self.min_snapshots_to_keep)) if v is not None}

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "ref-name": self.ref_name, "snapshot-id": self.snapshot_id,
                "type": self.type, **self._retention()}

    def apply(self, b: MetadataBuilder) -> None:
        w = f"set-snapshot-ref {self.ref_name[:60]!r}"
        if not self.ref_name:
            raise BadUpdate("set-snapshot-ref: the ref name is empty")
        if self.type not in _REF_TYPES:
            raise BadUpdate(f"{w}: type must be one of {_REF_TYPES}")
        if self.ref_name == MAIN_BRANCH and self.type != "branch":
            raise BadUpdate(f"{w}: main is a branch")
        retention = self._retention()
        if any(v <= 0 for v in retention.values()):
            raise BadUpdate(f"{w}: retention settings must be positive")
        if self.type == "tag" and set(retention) - {"max-ref-age-ms"}:
            raise BadUpdate(f"{w}: a tag keeps only max-ref-age-ms")
        snap = next((s for s in b.doc["snapshots"] if s["snapshot-id"] == self.snapshot_id), None)
        if snap is None:
            raise BadUpdate(f"{w}: snapshot {self.snapshot_id} does not exist")
        b.doc["refs"][self.ref_name] = {"snapshot-id": self.snapshot_id, "type": self.type, **retention}
        if self.ref_name == MAIN_BRANCH and b.doc.get("current-snapshot-id") != self.snapshot_id:
            # logged at the commit's time (a rollback to an old snapshot is logged now, not then)
            b.doc["current-snapshot-id"] = self.snapshot_id
            b.doc["snapshot-log"].append({"timestamp-ms": b.commit_ms(), "snapshot-id": self.snapshot_id})


@dataclass
class RemoveSnapshotRef(TableUpdate):
    ref_name: str
    action: ClassVar[str] = "remove-snapshot-ref"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "RemoveSnapshotRef":
        return cls(get_field(d, "ref-name", str, cls.action))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "ref-name": self.ref_name}

    def apply(self, b: MetadataBuilder) -> None:
        b.doc["refs"].pop(self.ref_name, None)
        if self.ref_name == MAIN_BRANCH:
            b.doc["current-snapshot-id"] = -1


@dataclass
class SetLocation(TableUpdate):
    location: str
    action: ClassVar[str] = "set-location"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SetLocation":
        return cls(get_field(d, "location", str, cls.action))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "location": self.location}

    def apply(self, b: MetadataBuilder) -> None:
        if not self.location:
            raise BadUpdate("set-location: the location is empty")
        b.doc["location"] = self.location


@dataclass
class SetProperties(TableUpdate):
    updates: dict[str, str]
    action: ClassVar[str] = "set-properties"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SetProperties":
        ups = get_field(d, "updates", dict, cls.action)
        if not all(isinstance(v, str) for v in ups.values()):
            raise BadUpdate(f"{cls.action}: property values must be strings")
        return cls(ups)

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "updates": dict(self.updates)}

    def apply(self, b: MetadataBuilder) -> None:
        metadata_codec(self.updates, str(b.doc.get("location", "the table")))   # refused here, not at the write
        b.doc["properties"].update(self.updates)


@dataclass
class RemoveProperties(TableUpdate):
    removals: list[str]
    action: ClassVar[str] = "remove-properties"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "RemoveProperties":
        keys = get_field(d, "removals", list, cls.action)
        if not all(isinstance(k, str) for k in keys):
            raise BadUpdate(f"{cls.action}: removals must be strings")
        return cls(keys)

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "removals": list(self.removals)}

    def apply(self, b: MetadataBuilder) -> None:
        for k in self.removals:
            b.doc["properties"].pop(k, None)


def _check_statistics(stats: dict[str, Any], what: str, partition: bool) -> int:
    sid = get_field(stats, "snapshot-id", int, what)
    get_field(stats, "statistics-path", str, what)
    get_field(stats, "file-size-in-bytes", int, what)
    if not partition:
        get_field(stats, "file-footer-size-in-bytes", int, what)
        for blob in get_field(stats, "blob-metadata", list, what):
            if not is_json_object(blob):
                raise BadUpdate(f"{what}: blob-metadata entries must be JSON objects")
            get_field(blob, "type", str, what)
            get_field(blob, "snapshot-id", int, what)
            get_field(blob, "sequence-number", int, what)
            if not all(isinstance(f, int) and not isinstance(f, bool) for f in get_field(blob, "fields", list, what)):
                raise BadUpdate(f"{what}: blob fields must be field ids")
    return sid


@dataclass
class SetStatistics(TableUpdate):
    statistics: dict[str, Any]
    snapshot_id: Optional[int] = None
    action: ClassVar[str] = "set-statistics"
    key: ClassVar[str] = "statistics"
    partition: ClassVar[bool] = False

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SetStatistics":
        return cls(get_field(d, "statistics", dict, cls.action), get_field(d, "snapshot-id", int, cls.action, required=False))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, self.key: self.statistics}
        if self.snapshot_id is not None:
            out["snapshot-id"] = self.snapshot_id
        return out

    def apply(self, b: MetadataBuilder) -> None:
        sid = _check_statistics(self.statistics, self.action, self.partition)
        if self.snapshot_id is not None and self.snapshot_id != sid:
            raise BadUpdate(f"{self.action}: snapshot-id {self.snapshot_id} differs from the statistics' {sid}")
        if sid not in {s["snapshot-id"] for s in b.doc["snapshots"]}:
            raise BadUpdate(f"{self.action}: snapshot {sid} does not exist")
        key = "partition-statistics" if self.partition else "statistics"
        b.doc[key] = [s for s in b.doc.get(key, []) if s["snapshot-id"] != sid] + [self.statistics]


@dataclass
class SetPartitionStatistics(SetStatistics):
    action: ClassVar[str] = "set-partition-statistics"
    key: ClassVar[str] = "partition-statistics"
    partition: ClassVar[bool] = True

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "SetPartitionStatistics":
        return cls(get_field(d, "partition-statistics", dict, cls.action))


@dataclass
class RemoveStatistics(TableUpdate):
    snapshot_id: int
    action: ClassVar[str] = "remove-statistics"
    key: ClassVar[str] = "statistics"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "RemoveStatistics":
        return cls(get_field(d, "snapshot-id", int, cls.action))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "snapshot-id": self.snapshot_id}

    def apply(self, b: MetadataBuilder) -> None:
        b.doc[self.key] = [s for s in b.doc.get(self.key, []) if s.get("snapshot-id") != self.snapshot_id]


@dataclass
class RemovePartitionStatistics(RemoveStatistics):
    action: ClassVar[str] = "remove-partition-statistics"
    key: ClassVar[str] = "partition-statistics"


UPDATES = {c.action: c for c in (
    AssignUUID, UpgradeFormatVersion, AddSchema, SetCurrentSchema, AddPartitionSpec, SetDefaultSpec, AddSortOrder,
    SetDefaultSortOrder, AddSnapshot, RemoveSnapshots, SetSnapshotRef, RemoveSnapshotRef, SetLocation,
    SetProperties, RemoveProperties, SetStatistics, RemoveStatistics, SetPartitionStatistics,
    RemovePartitionStatistics)}


def update_from_json(d: object) -> TableUpdate:
    if not is_json_object(d):
        raise BadUpdate(f"a table update must be a JSON object, not {json_kind(d)}")
    action = d.get("action")
    cls = UPDATES.get(action) if isinstance(action, str) else None
    if cls is None:
        raise BadUpdate(f"unknown table update {str(action)[:60]!r} (known: {', '.join(sorted(UPDATES))})")
    return cls.from_json(d)


# --------------------------------------------------------------------------- the builder
@dataclass
class MetadataBuilder:
    """A working copy of one metadata document that updates change in order (see the module doc)."""
    doc: dict[str, Any]
    last_schema: Optional[int] = None
    last_spec: Optional[int] = None
    last_order: Optional[int] = None
    snapshot_ts: Optional[int] = None      # the timestamp of a snapshot this commit added
    _schema_cache: dict[Any, Any] = field(default_factory=dict[Any, Any])

    def commit_ms(self) -> int:
        """The commit's time: its new snapshot's, else now (never before the base's last update)."""
        if self.snapshot_ts is not None:
            return self.snapshot_ts
        return max(now_ms(), self.doc["last-updated-ms"] + 1)

    @staticmethod
    def resolve(given: int, last_added: Optional[int], what: str) -> int:
        if given != -1:
            return given
        if last_added is None:
            raise BadUpdate(f"{what} id -1 means the one added last in this commit, and none was added")
        return last_added

    def current_schema(self) -> Schema:
        sid = self.doc["current-schema-id"]
        doc = next(s for s in self.doc["schemas"] if s["schema-id"] == sid)
        return schema_from_json(doc)


def apply_changes(base: TableMetadata, updates: Sequence[object]) -> TableMetadata:
    """``base`` with ``updates`` (``TableUpdate`` objects) applied and validated, as a new
    ``TableMetadata``; ``BadUpdate`` naming the first update that breaks a rule, ``base`` untouched."""
    # a copy through JSON: the document is JSON (as written, so re-read), and json's C encoder and
    # decoder copy it several times faster than deepcopy, which grew with the table's snapshots
    b = MetadataBuilder(json.loads(json.dumps(base.to_json())))
    for i, u in enumerate(updates):
        if not isinstance(u, TableUpdate):
            raise BadUpdate(f"update {i}: not a table update ({type(u).__name__})")
        try:
            u.apply(b)
        except BadUpdate:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise BadUpdate(f"{u.action}: {type(e).__name__}: {e}") from None
    b.doc["last-updated-ms"] = b.commit_ms()
    try:
        return TableMetadata.from_json(b.doc, "the committed metadata")
    except CorruptMetadataError as e:
        raise BadUpdate(f"the updates leave invalid metadata: {e.reason}") from None


def _field_notes(schema: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What Java's field equality compares beyond the struct's types and names: each field's doc and
    defaults (a comment change is a new schema there too, not a reuse of the old one)."""
    return [(f.get("id"), f.get("doc"), f.get("initial-default"), f.get("write-default"))
            for f in _all_fields(schema)]


def _all_fields(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every field of a schema document (struct fields, list elements, map keys and values) as
    ``{"id": ...}``-carrying dicts."""
    def walk(t: Any) -> Iterator[dict[str, Any]]:
        if is_json_object(t):
            if t.get("type") == "struct":
                for f in t.get("fields", []):
                    yield f
                    yield from walk(f.get("type"))
            elif t.get("type") == "list":
                yield {"id": t.get("element-id")}
                yield from walk(t.get("element"))
            elif t.get("type") == "map":
                yield {"id": t.get("key-id")}
                yield {"id": t.get("value-id")}
                yield from walk(t.get("key"))
                yield from walk(t.get("value"))
    yield from walk({"type": "struct", "fields": schema.get("fields", [])})


def set_ref_update(name: str, ref: SnapshotRef) -> SetSnapshotRef:
    """The ``set-snapshot-ref`` update pointing ``name`` as ``ref`` (a ``SnapshotRef``) says."""
    return SetSnapshotRef(name, ref.snapshot_id, ref.type, ref.max_ref_age_ms, ref.max_snapshot_age_ms,
                          ref.min_snapshots_to_keep)
