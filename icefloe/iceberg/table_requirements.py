# pyright: strict
"""The Iceberg REST spec's ``TableRequirement`` kinds: what must still hold of a table's current
metadata for a commit to apply (checked before the updates of ``metadata_builder``); a failed one
is ``RequirementFailed`` (HTTP 409: the client reloads and tries again)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Optional

from icefloe.errors import RequirementFailed
from icefloe.iceberg.metadata_builder import BadUpdate, get_field, json_kind
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata, is_json_object


@dataclass
class TableRequirement:
    """One of the spec's ``TableRequirement`` kinds; ``type`` is its name in JSON."""
    type: ClassVar[str] = ""
    key: ClassVar[str] = ""          # the requirement's field, and the metadata field it compares
    field_name: ClassVar[str] = ""
    what: ClassVar[str] = ""         # what changed when it fails, in the words Java's catalogs use
    value: Optional[object] = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "TableRequirement":
        return cls(get_field(d, cls.key, int, cls.type))

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, self.key: self.value}

    def check(self, meta: Optional[TableMetadata]) -> None:
        if meta is None:
            raise RequirementFailed(f"requirement {self.type}: the table does not exist")
        actual = meta.to_json()[self.field_name]
        if actual != self.value:
            raise RequirementFailed(f"Requirement failed: {self.what} ({self.type}): expected {self.value!r}, "
                                    f"the table has {actual!r}")


@dataclass
class AssertCreate(TableRequirement):
    type: ClassVar[str] = "assert-create"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "AssertCreate":
        return cls()

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type}

    def check(self, meta: Optional[TableMetadata]) -> None:
        if meta is not None:
            raise RequirementFailed("Requirement failed: table already exists (assert-create)")


@dataclass
class AssertTableUUID(TableRequirement):
    type: ClassVar[str] = "assert-table-uuid"
    key: ClassVar[str] = "uuid"
    field_name: ClassVar[str] = "table-uuid"
    what: ClassVar[str] = "UUID does not match"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "AssertTableUUID":
        return cls(get_field(d, "uuid", str, cls.type))


@dataclass
class AssertRefSnapshotId(TableRequirement):
    ref: str = ""
    type: ClassVar[str] = "assert-ref-snapshot-id"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "AssertRefSnapshotId":
        return cls(get_field(d, "snapshot-id", int, cls.type, required=False), get_field(d, "ref", str, cls.type))

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "ref": self.ref, "snapshot-id": self.value}

    def check(self, meta: Optional[TableMetadata]) -> None:
        if meta is None:
            raise RequirementFailed(f"requirement {self.type}: the table does not exist")
        ref = meta.refs.get(self.ref)
        actual = None if ref is None else ref.snapshot_id
        if actual != self.value:
            raise RequirementFailed(f"Requirement failed: branch or tag {self.ref!r} has changed ({self.type}): "
                                    f"expected at {self.value!r}, it is at {actual!r}")


@dataclass
class AssertLastAssignedFieldId(TableRequirement):
    type: ClassVar[str] = "assert-last-assigned-field-id"
    key: ClassVar[str] = "last-assigned-field-id"
    field_name: ClassVar[str] = "last-column-id"
    what: ClassVar[str] = "last assigned field id changed"


@dataclass
class AssertCurrentSchemaId(TableRequirement):
    type: ClassVar[str] = "assert-current-schema-id"
    key: ClassVar[str] = "current-schema-id"
    field_name: ClassVar[str] = "current-schema-id"
    what: ClassVar[str] = "current schema changed"


@dataclass
class AssertLastAssignedPartitionId(TableRequirement):
    type: ClassVar[str] = "assert-last-assigned-partition-id"
    key: ClassVar[str] = "last-assigned-partition-id"
    field_name: ClassVar[str] = "last-partition-id"
    what: ClassVar[str] = "last assigned partition id changed"


@dataclass
class AssertDefaultSpecId(TableRequirement):
    type: ClassVar[str] = "assert-default-spec-id"
    key: ClassVar[str] = "default-spec-id"
    field_name: ClassVar[str] = "default-spec-id"
    what: ClassVar[str] = "default partition spec changed"


@dataclass
class AssertDefaultSortOrderId(TableRequirement):
    type: ClassVar[str] = "assert-default-sort-order-id"
    key: ClassVar[str] = "default-sort-order-id"
    field_name: ClassVar[str] = "default-sort-order-id"
    what: ClassVar[str] = "default sort order changed"


REQUIREMENTS = {c.type: c for c in (
    AssertCreate, AssertTableUUID, AssertRefSnapshotId, AssertLastAssignedFieldId, AssertCurrentSchemaId,
    AssertLastAssignedPartitionId, AssertDefaultSpecId, AssertDefaultSortOrderId)}


def requirement_from_json(d: object) -> TableRequirement:
    if not is_json_object(d):
        raise BadUpdate(f"a table requirement must be a JSON object, not {json_kind(d)}")
    kind = d.get("type")
    cls = REQUIREMENTS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise BadUpdate(f"unknown table requirement {str(kind)[:60]!r} (known: {', '.join(sorted(REQUIREMENTS))})")
    return cls.from_json(d)


def check_requirements(base: Optional[TableMetadata], requirements: Iterable[TableRequirement]) -> None:
    for r in requirements:
        r.check(base)


def requirements_for(base: TableMetadata, refs: Iterable[str] = ()) -> list[TableRequirement]:
    """What a change produced on ``base`` relies on: the same table (its uuid), its current schema,
    last column id, default spec and sort order, and every ref where it was (``main`` and each of
    ``refs`` absent from ``base``, still absent). Any commit in between that changes what the
    change read fails one of them, so the producer runs again on the newer metadata."""
    out: list[TableRequirement] = [AssertTableUUID(base.table_uuid), AssertCurrentSchemaId(base.current_schema_id),
                 AssertLastAssignedFieldId(base.last_column_id), AssertDefaultSpecId(base.default_spec_id),
                 AssertDefaultSortOrderId(base.default_sort_order_id)]
    for name in sorted(set(base.refs) | set(refs) | {MAIN_BRANCH}):
        ref = base.refs.get(name)
        out.append(AssertRefSnapshotId(ref.snapshot_id if ref is not None else None, name))
    return out
