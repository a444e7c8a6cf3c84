# pyright: strict
"""Partition specs (Iceberg spec, "Partitioning") and partition paths.

Partition field ids start at 1000; a partition tuple is a plain Python tuple of
internal values, one per spec field.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence
from urllib.parse import quote_plus

from icefloe.core.types import IcebergType, NestedField, Schema, StructType
from icefloe.errors import SchemaError, UnknownTransformError
from icefloe.iceberg.transforms import (
    Transform, default_field_name, parse_partition_expr, parse_transform,
)

PARTITION_DATA_ID_START = 1000


@dataclass(frozen=True)
class PartitionField:
    source_id: int
    field_id: int
    transform: Transform
    name: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "transform": str(self.transform), "source-id": self.source_id,
                "field-id": self.field_id}

    @staticmethod
    def from_json(obj: dict[str, Any]) -> "PartitionField":
        return PartitionField(obj["source-id"], obj["field-id"], parse_transform(obj["transform"]), obj["name"])


class PartitionSpec:
    def __init__(self, fields: Sequence[PartitionField], spec_id: int = 0):
        self.fields = tuple(fields)
        self.spec_id = spec_id

    @property
    def is_unpartitioned(self) -> bool:
        return len(self.fields) == 0

    def to_json(self) -> dict[str, Any]:
        return {"spec-id": self.spec_id, "fields": [f.to_json() for f in self.fields]}

    def fields_json(self) -> list[dict[str, Any]]:
        return [f.to_json() for f in self.fields]

    @staticmethod
    def from_json(obj: dict[str, Any]) -> "PartitionSpec":
        fields: list[dict[str, Any]] = obj.get("fields", [])
        return PartitionSpec([PartitionField.from_json(f) for f in fields], obj.get("spec-id", 0))

    def same_fields(self, other: "PartitionSpec") -> bool:
        return [(f.source_id, str(f.transform), f.name) for f in self.fields] == \
            [(f.source_id, str(f.transform), f.name) for f in other.fields]

    def __repr__(self) -> str:
        inner = ", ".join(f"{f.name}={f.transform}({f.source_id})" for f in self.fields)
        return f"PartitionSpec(id={self.spec_id}, [{inner}])"

    @property
    def last_field_id(self) -> int:
        return max((f.field_id for f in self.fields), default=PARTITION_DATA_ID_START - 1)

    def partition_type(self, schema: Schema) -> StructType:
        """The struct of partition values: one optional field per partition field."""
        out: list[NestedField] = []
        for f in self.fields:
            src = schema.find_field_or_none(f.source_id)
            if src is None:
                raise SchemaError(f"partition field {f.name} refers to missing column id {f.source_id}")
            out.append(NestedField(f.field_id, f.name, f.transform.result_type(src.field_type), False))
        return StructType(out)

    def result_types(self, schema: Schema) -> list[IcebergType]:
        return [nf.field_type for nf in self.partition_type(schema).fields]

    def partition_path(self, schema: Schema, values: Sequence[Any]) -> str:
        """``ts_year=2022/...``: the spec's human strings, URL-encoded like Java does."""
        parts: list[str] = []
        for f, v in zip(self.fields, values):
            src = schema.find_field(f.source_id)
            human = f.transform.human(src.field_type, v)
            parts.append(f"{quote_plus(f.name)}={quote_plus(human)}")
        return "/".join(parts)

    def partition_for_row(self, schema: Schema, row_values: dict[int, Any]) -> tuple[Any, ...]:
        out: list[Any] = []
        for f in self.fields:
            src = schema.find_field(f.source_id)
            out.append(f.transform.apply(src.field_type, row_values.get(f.source_id)))
        return tuple(out)


UNPARTITIONED = PartitionSpec([], 0)


def build_spec(schema: Schema, terms: Optional[Sequence[str]], spec_id: int = 0,
               last_partition_id: int = PARTITION_DATA_ID_START - 1) -> PartitionSpec:
    """Build a spec from ``PARTITIONED BY`` terms such as ``year(ts)`` or ``bucket(16, id)``."""
    if not terms:
        return PartitionSpec([], spec_id)
    fields: list[PartitionField] = []
    names: set[str] = set()
    next_id = last_partition_id
    for term in terms:
        transform, col = parse_partition_expr(term)
        src = schema.find_field_or_none(col)
        if src is None:
            raise SchemaError(f"partition term {term!r} refers to unknown column {col!r}; "
                              f"columns are {', '.join(schema.column_names)}")
        if not src.field_type.is_primitive:
            raise SchemaError(f"cannot partition by non-primitive column {col!r}")
        if not transform.can_transform(src.field_type):
            raise UnknownTransformError(
                f"transform {transform} cannot be applied to column {col!r} of type {src.field_type}")
        name = default_field_name(transform, col)
        if name in names:
            raise SchemaError(f"duplicate partition field {name!r}")
        names.add(name)
        next_id += 1
        fields.append(PartitionField(src.field_id, next_id, transform, name))
    return PartitionSpec(fields, spec_id)
