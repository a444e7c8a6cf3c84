# pyright: strict
"""Changes to nested fields of a Paimon schema, by dotted path as Paimon's Spark ALTER TABLE names
them: ``s.f`` (field ``f`` of struct column ``s``), ``points.element.z`` (a field of an array's
element row), ``pm.value.b`` (a field of a map's value row). Every change rebuilds the column's type
with the changed row; field ids are kept, a new field takes the next id above the schema's
highest, so files written before read the field as null (readers match row fields by id).
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence, TypeVar

from icefloe.core import types as core
from icefloe.errors import SchemaError
from icefloe.paimon.types import DataField

F = TypeVar("F", bound=core.NestedField)
# what ``change`` does to the row a path leads to: (its fields, the path's last part) -> new fields
RowEdit = Callable[[list[DataField], str], list[DataField]]


def _find(fields: Sequence[F], name: str) -> Optional[F]:
    exact = [f for f in fields if f.name == name]
    if exact:
        return exact[0]
    lowered = [f for f in fields if f.name.lower() == name.lower()]
    return lowered[0] if len(lowered) == 1 else None


def as_data_field(f: core.NestedField) -> DataField:
    return f if isinstance(f, DataField) else DataField(f.field_id, f.name, f.field_type, f.doc, not f.required)


def path_of(fields: Sequence[core.NestedField], name: object) -> Optional[list[str]]:
    """The parts of a dotted name whose first part is a nested column (None: a top-level name)."""
    if not isinstance(name, str) or "." not in name or any(f.name == name for f in fields):
        return None
    parts = name.split(".")
    top = _find(fields, parts[0])
    if top is None or top.field_type.is_primitive:
        return None
    return parts


def change(fields: list[DataField], parts: list[str], table: str, edit: RowEdit) -> list[DataField]:
    """``fields`` with the row ``parts[:-1]`` leads to replaced by ``edit(its fields, parts[-1])``."""
    shown = ".".join(parts)

    def walk(t: core.IcebergType, rest: list[str], at: list[str]) -> core.IcebergType:
        if not rest:
            if not isinstance(t, core.StructType):
                raise SchemaError(f"table {table}: {'.'.join(at)} is not a row type, so it has no field "
                                  f"{parts[-1]!r} ({shown})")
            return core.StructType(list(edit([as_data_field(f) for f in t.fields], parts[-1])))
        step = rest[0]
        if isinstance(t, core.StructType):
            f = _find(t.fields, step)
            if f is None:
                raise SchemaError(f"table {table}: {'.'.join(at)} has no field {step!r} ({shown}); its fields are "
                                  f"{', '.join(x.name for x in t.fields)}")
            new = walk(f.field_type, rest[1:], at + [f.name])
            return core.StructType([as_data_field(x).copy(type=new) if x is f else as_data_field(x)
                                    for x in t.fields])
        if isinstance(t, core.ListType) and step.lower() == "element":
            return core.ListType(t.element_id, walk(t.element_type, rest[1:], at + ["element"]), t.element_required)
        if isinstance(t, core.MapType) and step.lower() == "value":
            return core.MapType(t.key_id, t.key_type, t.value_id, walk(t.value_type, rest[1:], at + ["value"]),
                                t.value_required, t.key_required)
        kind = "an array (its rows are 'element')" if isinstance(t, core.ListType) else \
            "a map (its value rows are 'value'; map keys cannot change)" if isinstance(t, core.MapType) else \
            f"of type {t}"
        raise SchemaError(f"table {table}: {'.'.join(at)} is {kind}, not {step!r} ({shown})")

    top = _find(fields, parts[0])
    return [f.copy(type=walk(f.type, parts[1:-1], [f.name])) if f is top else f for f in fields]


def field_at(fields: list[DataField], parts: list[str], table: str) -> DataField:
    """The nested field a path names (its row's field ``parts[-1]``)."""
    found: list[DataField] = []

    def look(row: list[DataField], last: str) -> list[DataField]:
        f = _find(row, last)
        if f is None:
            raise SchemaError(f"table {table} has no nested field {'.'.join(parts)!r}; the row has "
                              f"{', '.join(x.name for x in row)}")
        found.append(f)
        return row
    change(fields, parts, table, look)
    return found[0]


def place(row: list[DataField], f: DataField, first: bool, after: Optional[str], before: Optional[str],
          table: str) -> list[DataField]:
    """``row`` with field ``f`` inserted: at the end, first, after or before a sibling."""
    out = list(row)
    sibling = after if after is not None else before
    if first:
        out.insert(0, f)
    elif sibling is not None:
        other = _find(out, sibling.rsplit(".", 1)[-1])
        if other is None:
            raise SchemaError(f"table {table}: no field {sibling!r} beside {f.name!r} (fields: "
                              f"{', '.join(x.name for x in out)})")
        out.insert(out.index(other) + (1 if after is not None else 0), f)
    else:
        out.append(f)
    return out


def check_new_name(row: Sequence[core.NestedField], name: str, table: str, ignore_id: Optional[int] = None) -> None:
    if not name or not name.strip():
        raise SchemaError(f"table {table}: a field name must be a non-empty string")
    for f in row:
        if f.field_id != ignore_id and f.name.lower() == name.lower():
            raise SchemaError(f"table {table}: the row already has a field {f.name!r}")
