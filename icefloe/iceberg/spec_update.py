# pyright: strict
"""Partition evolution (Iceberg spec, "Partition Evolution").

A table's partitioning changes by adding a new partition spec and making it the
default; files keep the spec they were written with (``partition_spec_id`` in
the manifest list), so nothing is rewritten and scan planning judges each
manifest with its own spec. Partition field ids are table-wide: new fields
continue after ``last-partition-id``, and (in v2) a field re-added with the same
source and transform takes back the id it had, as Java does. In v1 a removed
field stays in the spec as a ``void`` transform, because v1 readers locate
partition values by position.
"""
from __future__ import annotations

from dataclasses import replace
from types import TracebackType
from typing import Callable, Optional

from icefloe.core.types import NestedField
from icefloe.errors import SchemaError, UnknownTransformError
from icefloe.iceberg.metadata_builder import AddPartitionSpec, SetDefaultSpec, TableUpdate
from icefloe.iceberg.partitioning import PartitionField, PartitionSpec
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.iceberg.transforms import (
    DayTransform, HourTransform, IdentityTransform, MonthTransform, Transform, VoidTransform, YearTransform,
    default_field_name, parse_partition_expr,
)
from icefloe.iceberg.metadata_commit import ChangeStager, commit_metadata
from icefloe.iceberg.operations import TableOperations

_TIME = (YearTransform, MonthTransform, DayTransform, HourTransform)


class SpecBuilder:
    """Applies partition-field changes, in order, to a working copy of the default spec."""
    def __init__(self, meta: TableMetadata):
        self.meta = meta
        self.schema = meta.schema
        self.fields: list[PartitionField] = list(meta.spec.fields)
        self.last_partition_id = meta.last_partition_id
        self._added: set[int] = set()

    # ------------------------------------------------------------------ lookups
    def _source(self, term: str) -> tuple[Transform, NestedField, str]:
        transform, col = parse_partition_expr(term)
        src = self.schema.find_field_or_none(col)
        if src is None:
            raise SchemaError(f"partition term {term!r} refers to unknown column {col!r}; "
                              f"columns are {', '.join(self.schema.column_names)}")
        if not src.field_type.is_primitive:
            raise SchemaError(f"cannot partition by non-primitive column {col!r} ({src.field_type})")
        if not transform.can_transform(src.field_type):
            raise UnknownTransformError(
                f"transform {transform} cannot be applied to column {col!r} of type {src.field_type}")
        return transform, src, self.schema.name_of(src.field_id) or col

    def _by_name(self, name: str) -> Optional[PartitionField]:
        for f in self.fields:
            if f.name == name:
                return f
        lowered = [f for f in self.fields if f.name.lower() == str(name).lower()]
        return lowered[0] if len(lowered) == 1 else None

    def _find(self, name_or_term: str) -> PartitionField:
        f = self._by_name(name_or_term)
        if f is not None:
            return f
        try:
            transform, src, _ = self._source(name_or_term)
        except (SchemaError, UnknownTransformError):
            transform = src = None
        if src is not None:
            for f in self.fields:
                if f.source_id == src.field_id and f.transform == transform:
                    return f
        names = ", ".join(f"{f.name} ({f.transform}({self.schema.name_of(f.source_id)}))" for f in self.fields)
        raise SchemaError(f"no partition field {name_or_term!r} in the current spec; fields are {names or 'none'}")

    def _check_name(self, name: str, source_id: int, transform: Transform, ignore: Optional[int] = None) -> None:
        if not name:
            raise SchemaError("partition field names cannot be empty")
        for f in self.fields:
            if f.field_id != ignore and f.name.lower() == name.lower() and not isinstance(f.transform, VoidTransform):
                raise SchemaError(f"partition field name {name!r} is already used by {f.transform} "
                                  f"of {self.schema.name_of(f.source_id)!r}")
        col = self.schema.find_field_or_none(name)
        if col is not None and not (isinstance(transform, IdentityTransform) and col.field_id == source_id):
            raise SchemaError(f"partition field name {name!r} is a column name; only an identity partition "
                              "of that column may use it")

    def _free_void_name(self, name: str) -> None:
        """v1: a void field keeping a name a new field wants is renamed ``<name>_<field id>``."""
        for i, f in enumerate(self.fields):
            if isinstance(f.transform, VoidTransform) and f.name.lower() == name.lower():
                self.fields[i] = replace(f, name=f"{f.name}_{f.field_id}")

    # ------------------------------------------------------------------ changes
    def add_field(self, term: str, name: Optional[str] = None) -> None:
        transform, src, col_name = self._source(term)
        for f in self.fields:
            if f.source_id == src.field_id and f.transform == transform:
                raise SchemaError(f"cannot add partition field {term!r}: the spec already has it as {f.name!r}")
            if isinstance(transform, _TIME) and isinstance(f.transform, _TIME) and \
                    f.source_id == src.field_id and f.field_id in self._added:
                raise SchemaError(f"cannot add {term!r}: {f.transform} of {col_name!r} is added in the same "
                                  "update, and two time partitions of one column are redundant")
        field = self._recycled(src.field_id, transform, name)
        if field is None:
            self.last_partition_id += 1
            field = PartitionField(src.field_id, self.last_partition_id, transform,
                                   name or default_field_name(transform, col_name))
        if self.meta.format_version == 1:
            self._free_void_name(field.name)
        self._check_name(field.name, src.field_id, transform)
        self._added.add(field.field_id)
        self.fields.append(field)

    def _recycled(self, source_id: int, transform: Transform, name: Optional[str]) -> Optional[PartitionField]:
        """v2: an earlier spec's field with this source and transform (and name, if given) is reused."""
        if self.meta.format_version < 2:
            return None
        for spec in sorted(self.meta.partition_specs, key=lambda s: s.spec_id, reverse=True):
            for f in spec.fields:
                if f.source_id == source_id and f.transform == transform and (name is None or f.name == name):
                    if all(x.field_id != f.field_id for x in self.fields):
                        return f
        return None

    def remove_field(self, name_or_term: str) -> None:
        f = self._find(name_or_term)
        if f.field_id in self._added:
            raise SchemaError(f"cannot remove partition field {f.name!r}: it is added in the same update")
        if isinstance(f.transform, VoidTransform):
            raise SchemaError(f"partition field {f.name!r} is already removed (void)")
        i = self.fields.index(f)
        if self.meta.format_version == 1:
            self.fields[i] = replace(f, transform=VoidTransform())
        else:
            del self.fields[i]

    def rename_field(self, name: str, new_name: str) -> None:
        f = self._by_name(name)
        if f is None:
            f = self._find(name)  # raises with the list of fields
        self._check_name(new_name, f.source_id, f.transform, ignore=f.field_id)
        self.fields[self.fields.index(f)] = replace(f, name=new_name)

    # ------------------------------------------------------------------ result
    def build(self) -> Optional[TableMetadata]:
        """The new table metadata, or None when the default spec did not change."""
        return with_spec(self.meta, self.fields, self.last_partition_id)


def _same(a: PartitionSpec, fields: list[PartitionField]) -> bool:
    return [(f.source_id, f.field_id, str(f.transform), f.name) for f in a.fields] == \
        [(f.source_id, f.field_id, str(f.transform), f.name) for f in fields]


def with_spec(meta: TableMetadata, fields: list[PartitionField], last_partition_id: int) -> Optional[TableMetadata]:
    """``meta`` with a spec of ``fields`` as default, reusing the id of an identical existing spec."""
    if _same(meta.spec, fields):
        return None
    existing = next((s for s in meta.partition_specs if _same(s, fields)), None)
    specs = list(meta.partition_specs)
    if existing is None:
        existing = PartitionSpec(fields, max(s.spec_id for s in specs) + 1)
        existing.partition_type(meta.schema)  # every source column must exist
        specs.append(existing)
    last_id = max([meta.last_partition_id, last_partition_id] + [f.field_id for f in fields])
    return replace(meta, partition_specs=specs, default_spec_id=existing.spec_id, last_partition_id=last_id)


def spec_updates(base: TableMetadata, new: Optional[TableMetadata]) -> Optional[list[TableUpdate]]:
    """The updates that make ``new``'s default spec (``with_spec`` of ``base``) the default."""
    if new is None:
        return None
    out: list[TableUpdate] = []
    if new.default_spec_id not in {s.spec_id for s in base.partition_specs}:
        out.append(AddPartitionSpec(new.spec.to_json()))
    return out + [SetDefaultSpec(new.default_spec_id)]


class UpdateSpec:
    """``with table.update_spec() as u:`` -- partition changes committed as one metadata version on exit."""
    def __init__(self, ops: TableOperations, on_commit: Optional[Callable[[], object]] = None,
                 transaction: Optional[ChangeStager] = None):
        self._ops = ops
        self._on_commit = on_commit
        self._transaction = transaction     # a ``Transaction``: staged there, committed with it
        self._calls: list[tuple[str, tuple[Optional[str], ...]]] = []
        self._preview = SpecBuilder(transaction.staged if transaction is not None else ops.load()[1])
        self.committed: Optional[PartitionSpec] = None

    def _record(self, method: str, *args: Optional[str]) -> "UpdateSpec":
        getattr(self._preview, method)(*args)
        self._calls.append((method, args))
        return self

    def add_field(self, term: str, name: Optional[str] = None) -> "UpdateSpec":
        """Add a partition field from a term: ``"month(ts)"``, ``"bucket(16, id)"``, ``"name"``."""
        return self._record("add_field", term, name)

    def remove_field(self, name_or_term: str) -> "UpdateSpec":
        """Remove a partition field, named by its partition name (``ts_month``) or its term."""
        return self._record("remove_field", name_or_term)

    def rename_field(self, name: str, new_name: str) -> "UpdateSpec":
        return self._record("rename_field", name, new_name)

    def apply(self) -> PartitionSpec:
        return PartitionSpec(self._preview.fields, -1)

    def change(self, base: TableMetadata) -> Optional[list[TableUpdate]]:
        """The updates this partition change makes of ``base`` (None: the spec stays as it is)."""
        builder = SpecBuilder(base)
        for method, args in self._calls:
            getattr(builder, method)(*args)
        return spec_updates(base, builder.build())

    def commit(self) -> PartitionSpec:
        if self._transaction is not None:             # staged: committed with the transaction
            self._transaction.stage_change(self.change)
            return self.apply()
        result = commit_metadata(self._ops, self.change)
        self.committed = result.new.spec
        if self._on_commit is not None:
            self._on_commit()
        return self.committed

    def __enter__(self) -> "UpdateSpec":
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool:
        if exc_type is None:
            self.commit()
        return False
