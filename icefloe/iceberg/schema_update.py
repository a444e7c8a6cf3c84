# pyright: strict
"""Schema evolution (Iceberg spec, "Schema Evolution").

Columns are identified by field id, never by name or position, so every change
here keeps the ids of the fields it touches and gives new fields ids that were
never used before (after ``last-column-id``):

- add: a new optional column (v2 has no default values, so a required column
  could not be filled for existing rows); nested fields of its type get fresh ids;
- rename: same id, new name (old files keep their data);
- delete: the id leaves the schema and is never reused, so re-adding a column
  with the same name does not bring the old values back;
- update: only the spec's type promotions (int -> long, float -> double,
  decimal(P, S) -> decimal(P2, S) with P2 > P), required -> optional, docs;
- reorder: within one struct.

Nested fields are named by dotted paths (``info.a``); a list's element and a
map's key and value are ``col.element``, ``col.key`` and ``col.value``.

The changes of one ``with t.update_schema() as u:`` block are recorded and
replayed against the latest metadata on each commit attempt, so a lost race is
retried on the winner's schema (and fails clearly if it no longer applies).
"""
from __future__ import annotations

import json
from dataclasses import replace
from types import TracebackType
from typing import Any, Callable, Iterator, Optional, Sequence, Union, overload

from icefloe.core.types import (
    DecimalType, IcebergType, ListType, MapType, NestedField, Schema, StructType, parse_type, reassign_ids, widen_small_ints,
)
from icefloe.core.types.model import DoubleType, FloatType, PrimitiveType, VariantType
from icefloe.errors import SchemaError
from icefloe.iceberg.metadata_builder import AddSchema, RemoveProperties, SetCurrentSchema, SetProperties, TableUpdate
from icefloe.iceberg.metrics_modes import follow_schema_change
from icefloe.iceberg.schema import default_json, schema_to_json
from icefloe.iceberg.table_metadata import TableMetadata, check_types_for_version
from icefloe.iceberg.metadata_commit import ChangeStager, commit_metadata
from icefloe.iceberg.operations import TableOperations

NAME_MAPPING_PROPERTY = "schema.name-mapping.default"

ColumnPath = Union[str, Sequence[str]]


# --------------------------------------------------------------------------- rules
def can_promote(old: IcebergType, new: IcebergType) -> bool:
    """The spec's allowed type promotions (v1/v2): int->long, float->double, wider decimals."""
    if str(old) == str(new):
        return True
    if (str(old), str(new)) in (("int", "long"), ("float", "double")):
        return True
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        return new.scale == old.scale and new.precision > old.precision
    return False


def _as_type(t: object) -> IcebergType:
    """A column type as Iceberg stores it (TINYINT and SMALLINT are int, as in Iceberg's Spark)."""
    if isinstance(t, IcebergType):
        return widen_small_ints(t)
    if isinstance(t, str):
        return widen_small_ints(parse_type(t))
    raise SchemaError(f"expected a type string such as 'bigint' or an icefloe type, got {t!r}")


# --------------------------------------------------------------------------- the working schema
class SchemaBuilder:
    """Applies changes, in order, to a working copy of one table's current schema."""
    def __init__(self, meta: TableMetadata):
        self.meta = meta
        self.struct: StructType = meta.schema.struct
        self.last_column_id = meta.last_column_id
        self.identifier_ids = list(meta.schema.identifier_field_ids)
        self._partition_sources = {f.source_id: (spec.spec_id, f.name)
                                   for spec in meta.partition_specs for f in spec.fields}

    # ------------------------------------------------------------------ paths
    def _parts(self, name: ColumnPath) -> list[str]:
        parts: list[Any]      # checked below: a caller's sequence may hold anything
        if not isinstance(name, str):
            parts = list(name)
        elif _child_or_none(self.struct, name) is not None:
            parts = [name]  # a top-level column whose name contains dots
        else:
            parts = name.split(".")
        if not parts or any(not isinstance(p, str) or not p for p in parts):
            raise SchemaError(f"invalid column name {name!r}")
        return parts

    def _resolve(self, name: ColumnPath) -> tuple[list[str], NestedField, str]:
        """(canonical path, field, kind) where kind is field, element, key or value."""
        parts = self._parts(name)
        t: IcebergType = self.struct
        canonical: list[str] = []
        found: Optional[NestedField] = None
        kind = "field"
        for i, part in enumerate(parts):
            found, kind = _child(t, part, ".".join(parts[:i]) or None, name)
            canonical.append(found.name)
            t = found.field_type
        if found is None:
            raise SchemaError(f"{name!r} names no column")
        return canonical, found, kind

    def _rebuild(self, path: list[str], fn: Callable[[NestedField], Optional[NestedField]]) -> None:
        self.struct = _rebuild(self.struct, path, fn)

    def _struct_at(self, parent: list[str], what: str) -> tuple[list[str], StructType]:
        """The struct that ``parent`` names (a list's element or map's value struct included)."""
        if not parent:
            return [], self.struct
        path, f, _kind = self._resolve(parent)
        t = f.field_type
        if isinstance(t, ListType):
            path, t = path + ["element"], t.element_type
        elif isinstance(t, MapType):
            path, t = path + ["value"], t.value_type
        if not isinstance(t, StructType):
            raise SchemaError(f"cannot {what}: {'.'.join(parent)!r} is a {f.field_type}, not a struct")
        return path, t

    def _replace_struct(self, path: list[str], struct: StructType) -> None:
        if not path:
            self.struct = struct
        else:
            self._rebuild(path, lambda f: replace(f, field_type=struct))

    def _next_id(self) -> int:
        self.last_column_id += 1
        return self.last_column_id

    # ------------------------------------------------------------------ changes
    def add_column(self, name: ColumnPath, field_type: Union[IcebergType, str], doc: Optional[str] = None,
                   required: bool = False, default: Any = None) -> None:
        parts = self._parts(name)
        parent, leaf = parts[:-1], parts[-1]
        full = ".".join(parts)
        if required and self.meta.format_version < 3:
            raise SchemaError(
                f"cannot add required column {full!r}: format version {self.meta.format_version} tables have no "
                "default values, so rows already written would have no value for it; add it as optional")
        if default is not None and self.meta.format_version < 3:
            raise SchemaError(f"cannot add column {full!r} with a default value: default values need format "
                              f"version 3 (this table is version {self.meta.format_version})")
        if required and default is None:
            raise SchemaError(f"cannot add required column {full!r} without a default value: rows already "
                              "written would have no value for it")
        t = _as_type(field_type)
        path, struct = self._struct_at(parent, f"add column {full!r}")
        if _child_or_none(struct, leaf) is not None:
            raise SchemaError(f"cannot add column {full!r}: a column with that name already exists")
        _check_new_name(leaf, full)
        fid = self._next_id()
        js = None if default is None else default_json(t, default, full)
        new = NestedField(fid, leaf, reassign_ids(t, self._next_id), required, doc, js, js)
        self._replace_struct(path, StructType(list(struct.fields) + [new]))

    def rename_column(self, name: ColumnPath, new_name: str) -> None:
        path, f, kind = self._resolve(name)
        full = ".".join(path)
        if kind != "field":
            raise SchemaError(f"cannot rename {full!r}: a list element or map key/value has no name of its own")
        _check_new_name(new_name, new_name)
        _parent, struct = self._struct_at(path[:-1], f"rename {full!r}")
        clash = _child_or_none(struct, new_name)
        if clash is not None and clash.field_id != f.field_id:
            raise SchemaError(f"cannot rename {full!r} to {new_name!r}: that name is already used by another column")
        self._rebuild(path, lambda old: replace(old, name=new_name))

    def delete_column(self, name: ColumnPath) -> None:
        path, f, kind = self._resolve(name)
        full = ".".join(path)
        if kind != "field":
            raise SchemaError(f"cannot delete {full!r}: a list element or map key/value cannot be deleted")
        ids = {f.field_id} | {sub.field_id for _, sub in Schema([f]).all_fields()}
        if ids & set(self.identifier_ids):
            raise SchemaError(f"cannot delete {full!r}: it is (or contains) an identifier field")
        for fid in sorted(ids & set(self._partition_sources)):
            spec_id, pname = self._partition_sources[fid]
            raise SchemaError(
                f"cannot delete {full!r}: it is the source of partition field {pname!r} of partition spec "
                f"{spec_id}; files written with that spec need the column to read their partition values")
        self._rebuild(path, lambda _old: None)

    def update_column(self, name: ColumnPath, field_type: Union[IcebergType, str, None] = None,
                      required: Optional[bool] = None, doc: Optional[str] = None) -> None:
        path, f, kind = self._resolve(name)
        full = ".".join(path)
        new = f
        if field_type is not None:
            t = _as_type(field_type)
            if not f.field_type.is_primitive or not t.is_primitive:
                raise SchemaError(f"cannot change the type of {full!r} to {t}: only primitive types can be "
                                  "promoted; change nested fields one by one")
            if kind == "key" and t != f.field_type:
                raise SchemaError(f"cannot change the type of map key {full!r}: map keys cannot be promoted")
            if not can_promote(f.field_type, t):
                raise SchemaError(
                    f"cannot change column {full!r} from {f.field_type} to {t}: Iceberg only allows int -> long, "
                    "float -> double and decimal(P,S) -> decimal(P2,S) with P2 > P")
            new = replace(new, field_type=t)
        if required is not None and bool(required) != f.required:
            if required:
                raise SchemaError(
                    f"cannot make optional column {full!r} required: rows already written may hold nulls, "
                    "and Iceberg allows only required -> optional")
            if kind == "key":
                raise SchemaError(f"cannot make map key {full!r} optional: map keys are always required")
            new = replace(new, required=False)
        if doc is not None:
            if kind != "field":
                raise SchemaError(f"cannot set a doc on {full!r}: list elements and map keys/values carry no doc")
            new = replace(new, doc=doc)
        if new != f:
            self._rebuild(path, lambda _old: new)

    def update_column_default(self, name: ColumnPath, default: Any) -> None:
        """The column's ``write-default`` (None: no default). Its ``initial-default``, what rows
        written before the column existed read, never changes (spec, "Default values")."""
        path, f, kind = self._resolve(name)
        full = ".".join(path)
        if self.meta.format_version < 3:
            raise SchemaError(f"cannot set the default value of {full!r}: default values need format version 3 "
                              f"(this table is version {self.meta.format_version})")
        if kind != "field":
            raise SchemaError(f"cannot set a default on {full!r}: list elements and map keys/values have none")
        js = None if default is None else default_json(f.field_type, default, full)
        if js != f.write_default:
            self._rebuild(path, lambda old: replace(old, write_default=js))

    def move(self, name: ColumnPath, where: str, other: Optional[ColumnPath] = None) -> None:
        path, f, kind = self._resolve(name)
        full = ".".join(path)
        if kind != "field":
            raise SchemaError(f"cannot move {full!r}: only struct fields can be reordered")
        parent_path, struct = self._struct_at(path[:-1], f"move {full!r}")
        fields = [x for x in struct.fields if x.field_id != f.field_id]
        if where == "first":
            fields.insert(0, f)
        else:
            if other is None:
                raise SchemaError(f"moving {name!r} {where} names no column to move it next to")
            opath, other_field, okind = self._resolve(other)
            if okind != "field" or opath[:-1] != path[:-1]:
                raise SchemaError(f"cannot move {full!r} next to {'.'.join(opath)!r}: "
                                  "columns can only be moved within the same struct")
            if other_field.field_id == f.field_id:
                raise SchemaError(f"cannot move {full!r} relative to itself")
            i = next(k for k, x in enumerate(fields) if x.field_id == other_field.field_id)
            fields.insert(i if where == "before" else i + 1, f)
        self._replace_struct(parent_path, StructType(fields))

    def set_identifier_fields(self, names: Sequence[ColumnPath]) -> None:
        """The schema's identifier fields (the spec's row identity): required primitive fields,
        not float or double, not inside a list, a map or an optional struct. None clears them."""
        ids: list[int] = []
        for name in names:
            parts = self._parts(name)
            t: IcebergType = self.struct
            for i, part in enumerate(parts):
                f, kind = _child(t, part, ".".join(parts[:i]) or None, name)
                full = ".".join(parts[:i + 1])
                if kind != "field":
                    raise SchemaError(f"identifier field {name!r} cannot be inside a list or a map")
                if not f.required:
                    what = "an optional struct" if i < len(parts) - 1 else "an optional column"
                    raise SchemaError(f"identifier field {name!r}: {full!r} is {what}; identifier fields "
                                      "must be required (SET NOT NULL first)")
                t = f.field_type
            if not isinstance(t, PrimitiveType) or isinstance(t, VariantType):
                raise SchemaError(f"identifier field {name!r} must be a primitive column, not {t}")
            if isinstance(t, (FloatType, DoubleType)):
                raise SchemaError(f"identifier field {name!r} cannot be {t} (floating point values do not "
                                  "identify rows)")
            # ``_parts`` never returns an empty path, so the loop above bound ``f``
            if f.field_id not in ids:  # pyright: ignore[reportPossiblyUnboundVariable]
                ids.append(f.field_id)  # pyright: ignore[reportPossiblyUnboundVariable]
        self.identifier_ids = ids

    # ------------------------------------------------------------------ result
    def build(self) -> Optional[TableMetadata]:
        """The new table metadata, or None when the schema did not change."""
        return with_schema(self.meta, self.struct, self.last_column_id, self.identifier_ids)


def with_schema(meta: TableMetadata, struct: StructType, last_column_id: int,
                identifier_ids: list[int]) -> Optional[TableMetadata]:
    """``meta`` with ``struct`` as the current schema, reusing the id of an identical older schema."""
    check_types_for_version(struct, meta.format_version, meta.location)
    candidate = Schema(struct.fields, schema_id=-1, identifier_field_ids=identifier_ids)
    existing = next((s for s in meta.schemas if s.same_fields(candidate) and _docs(s) == _docs(candidate)
                     and _defaults(s) == _defaults(candidate)
                     and s.identifier_field_ids == candidate.identifier_field_ids), None)
    if existing is not None and existing.schema_id == meta.current_schema_id:
        return None
    schemas = list(meta.schemas)
    if existing is not None:
        schema = existing
    else:
        schema = Schema(struct.fields, schema_id=max(s.schema_id for s in schemas) + 1,
                        identifier_field_ids=identifier_ids)
        schemas.append(schema)
    props = follow_schema_change(meta.properties, meta.schema, schema)     # metrics modes follow their columns
    if NAME_MAPPING_PROPERTY in props:
        props[NAME_MAPPING_PROPERTY] = json.dumps(update_name_mapping(
            json.loads(props[NAME_MAPPING_PROPERTY]), schema))
    return replace(meta, schemas=schemas, current_schema_id=schema.schema_id,
                   last_column_id=max(meta.last_column_id, last_column_id, schema.highest_field_id),
                   properties=props)


def schema_updates(base: TableMetadata, new: Optional[TableMetadata]) -> Optional[list[TableUpdate]]:
    """The updates that make ``new`` (``with_schema`` of ``base``) current: the schema (unless an
    older identical one is reused), and the name mapping that follows it."""
    if new is None:
        return None
    out: list[TableUpdate] = []
    if new.current_schema_id not in {s.schema_id for s in base.schemas}:
        out.append(AddSchema(schema_to_json(new.schema), new.last_column_id))
    out.append(SetCurrentSchema(new.current_schema_id))
    changed = {k: v for k, v in new.properties.items() if base.properties.get(k) != v}
    if changed:
        out.append(SetProperties(changed))
    gone = [k for k in base.properties if k not in new.properties]
    if gone:
        out.append(RemoveProperties(gone))
    return out


def _docs(schema: Schema) -> dict[int, str]:
    """Each field's doc by field id, nested fields included: a schema whose only change is a
    column comment (``ALTER COLUMN c COMMENT ...``) is a new schema."""
    return {f.field_id: f.doc for _path, f in schema.all_fields() if f.doc is not None}


def _defaults(schema: Schema) -> dict[int, tuple[Any, Any]]:
    """Each field's default values by field id: a schema whose only change is a column's
    ``write-default`` (``ALTER COLUMN c SET DEFAULT ...``) is a new schema."""
    return {f.field_id: (f.initial_default, f.write_default) for _path, f in schema.all_fields()
            if f.initial_default is not None or f.write_default is not None}


def assign_fresh_ids(schema: Schema, base: Schema, next_id: Callable[[], int]) -> Schema:
    """``schema`` with ids for a table whose current schema is ``base``: a field at a path that
    ``base`` has (``info.a``, ``tags.element``) keeps ``base``'s id, any other field gets
    ``next_id()`` (ids after ``last-column-id``, never reused). Replacing a table (``CREATE OR
    REPLACE TABLE``) assigns ids this way, as Java's ``TypeUtil.assignFreshIds`` does, so columns
    that survive a replace keep their ids. Unlike Java, a field whose type changed beyond the
    spec's promotions (``string`` -> ``int``, a struct that became a list) is a new column with a
    new id, so metadata written for the old column is never read with the new type."""
    exact = dict(_id_paths(base.struct, ()))
    base_types = {fid: t for fid, t in _id_types(base.struct)}
    lowered: dict[tuple[str, ...], list[int]] = {}
    for path, fid in exact.items():
        lowered.setdefault(tuple(x.lower() for x in path), []).append(fid)
    used: set[int] = set()

    def reuse(path: tuple[str, ...], new_type: IcebergType) -> int:
        fid = exact.get(path)
        if fid is None:
            hits = lowered.get(tuple(x.lower() for x in path), [])
            fid = hits[0] if len(hits) == 1 else None
        if fid is None or fid in used or not _same_kind(base_types[fid], new_type):
            fid = next_id()
        used.add(fid)
        return fid

    def fresh(t: IcebergType, path: tuple[str, ...]) -> IcebergType:
        if isinstance(t, StructType):
            ids = [reuse(path + (f.name,), f.field_type) for f in t.fields]
            return StructType([replace(f, field_id=i, field_type=fresh(f.field_type, path + (f.name,)))
                               for i, f in zip(ids, t.fields)])
        if isinstance(t, ListType):
            e = reuse(path + ("element",), t.element_type)
            return ListType(e, fresh(t.element_type, path + ("element",)), t.element_required)
        if isinstance(t, MapType):
            k, v = reuse(path + ("key",), t.key_type), reuse(path + ("value",), t.value_type)
            return MapType(k, fresh(t.key_type, path + ("key",)), v, fresh(t.value_type, path + ("value",)),
                           t.value_required)
        return t

    struct = fresh(schema.struct, ())
    assert isinstance(struct, StructType)     # a struct is renumbered into a struct
    ids = _renumbering(schema.struct, struct)
    return Schema(struct.fields, schema_id=schema.schema_id,
                  identifier_field_ids=[ids[i] for i in schema.identifier_field_ids])


def _renumbering(old: StructType, new: StructType) -> dict[int, int]:
    """Old field id -> new field id of two structs with the same paths."""
    by_path = dict(_id_paths(new, ()))
    return {fid: by_path[path] for path, fid in _id_paths(old, ())}


def renumber_new_table(schema: Schema) -> tuple[Schema, dict[int, int]]:
    """The schema of a table being created, its field ids assigned afresh from 1 (a struct's fields
    first, then what they hold, level by level, the order of Java's ``TypeUtil.assignFreshIds``,
    which Java's catalogs apply to every new table), and the old id -> new id map that the
    partition spec's and sort order's source ids go through."""
    counter = iter(range(1, 1 << 31))
    fresh = assign_fresh_ids(schema, Schema([]), lambda: next(counter))
    return fresh, _renumbering(schema.struct, fresh.struct)


def _same_kind(old: IcebergType, new: IcebergType) -> bool:
    """Whether a field of type ``old`` may keep its id as type ``new`` (same or promoted primitive,
    or the same kind of nested type)."""
    if old.is_primitive or new.is_primitive:
        return old.is_primitive and new.is_primitive and can_promote(old, new)
    return type(old) is type(new)


def _id_types(t: IcebergType) -> Iterator[tuple[int, IcebergType]]:
    for f in _children(t):
        yield f.field_id, f.field_type
        yield from _id_types(f.field_type)


def _id_paths(t: IcebergType, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], int]]:
    """(path tuple, field id) of every field under ``t``; list elements and map keys/values by
    the names ``element``, ``key``, ``value``."""
    for f in _children(t):
        p = path + (f.name,)
        yield p, f.field_id
        yield from _id_paths(f.field_type, p)


# --------------------------------------------------------------------------- name mapping
def update_name_mapping(old: Optional[list[dict[str, Any]]], schema: Schema) -> list[dict[str, Any]]:
    """Merge ``schema`` into a name mapping (spec: "Column Projection", name mapping).

    Every current field gets its current name; a renamed field keeps its old names
    as aliases, so files written without ids under the old name still map. Entries
    of deleted fields stay, minus any name a current field now uses (a re-added
    column must not pick up the dropped column's values).
    """
    return _merge_level(old or [], _children(schema.struct))


def _children(t: IcebergType) -> list[NestedField]:
    if isinstance(t, StructType):
        return list(t.fields)
    if isinstance(t, ListType):
        return [t.element_field]
    if isinstance(t, MapType):
        return [t.key_field, t.value_field]
    return []


def _merge_level(old_entries: list[dict[str, Any]], fields: list[NestedField]) -> list[dict[str, Any]]:
    by_id = {e.get("field-id"): e for e in old_entries if e.get("field-id") is not None}
    taken = {f.name for f in fields}
    out: list[dict[str, Any]] = []
    for f in fields:
        prev = by_id.get(f.field_id, {})
        names = [n for n in prev.get("names", []) if n == f.name or n not in taken]
        if f.name not in names:
            names.append(f.name)
        entry: dict[str, Any] = {"field-id": f.field_id, "names": names}
        sub = _merge_level(prev.get("fields") or [], _children(f.field_type))
        if sub:
            entry["fields"] = sub
        out.append(entry)
    current = {f.field_id for f in fields}
    for e in old_entries:
        if e.get("field-id") in current:
            continue
        names = [n for n in e.get("names", []) if n not in taken]
        if names:
            kept = dict(e)
            kept["names"] = names
            out.append(kept)
    return out


# --------------------------------------------------------------------------- tree helpers
def _check_new_name(name: object, full: str) -> None:
    if not isinstance(name, str) or not name:
        raise SchemaError(f"invalid column name {full!r}")
    if "." in name:
        raise SchemaError(f"invalid column name {name!r}: names with dots would be ambiguous in dotted paths; "
                          "give the path as a tuple of names to reach nested fields")


def _child_or_none(struct: StructType, name: str) -> Optional[NestedField]:
    for f in struct.fields:
        if f.name == name:
            return f
    lowered = [f for f in struct.fields if f.name.lower() == name.lower()]
    return lowered[0] if len(lowered) == 1 else None


def _child(t: IcebergType, part: str, parent: Optional[str], full: ColumnPath) -> tuple[NestedField, str]:
    if isinstance(t, StructType):
        f = _child_or_none(t, part)
        if f is None:
            where = f"struct {parent!r}" if parent else "the schema"
            raise SchemaError(f"no column {part!r} in {where} (looking up {full!r}); "
                              f"fields are {', '.join(x.name for x in t.fields)}")
        return f, "field"
    if isinstance(t, ListType) and part.lower() == "element":
        return t.element_field, "element"
    if isinstance(t, MapType) and part.lower() in ("key", "value"):
        return (t.key_field, "key") if part.lower() == "key" else (t.value_field, "value")
    hints: dict[type, str] = {ListType: "use 'element'", MapType: "use 'key' or 'value'"}
    hint = hints.get(type(t), "it has no fields")
    raise SchemaError(f"cannot find {part!r} inside {parent!r} of type {t} ({hint}) in {full!r}")


@overload
def _rebuild(t: StructType, path: list[str], fn: Callable[[NestedField], Optional[NestedField]]) -> StructType: ...
@overload
def _rebuild(t: IcebergType, path: list[str], fn: Callable[[NestedField], Optional[NestedField]]) -> IcebergType: ...
def _rebuild(t: IcebergType, path: list[str], fn: Callable[[NestedField], Optional[NestedField]]) -> IcebergType:
    """``t`` with the field at ``path`` replaced by ``fn(field)`` (None removes it)."""
    head, rest = path[0], path[1:]

    def apply(f: NestedField) -> Optional[NestedField]:
        return replace(f, field_type=_rebuild(f.field_type, rest, fn)) if rest else fn(f)

    if isinstance(t, StructType):
        fields: list[NestedField] = []
        for f in t.fields:
            if f.name == head:
                f = apply(f)
                if f is None:
                    continue
            fields.append(f)
        return StructType(fields)
    if isinstance(t, ListType):
        e = _kept(apply(t.element_field), "a list's element")
        return ListType(t.element_id, e.field_type, e.required)
    if isinstance(t, MapType):
        if head == "key":
            k = _kept(apply(t.key_field), "a map's key")
            return MapType(t.key_id, k.field_type, t.value_id, t.value_type, t.value_required)
        v = _kept(apply(t.value_field), "a map's value")
        return MapType(t.key_id, t.key_type, t.value_id, v.field_type, v.required)
    raise SchemaError(f"cannot descend into {t}")  # pragma: no cover - paths are resolved first


# --------------------------------------------------------------------------- the user-facing update
class UpdateSchema:
    """``with table.update_schema() as u:`` -- changes committed as one metadata version on exit.

    Nothing is committed when the block raises. Each method checks its change at
    once against the table as it was loaded; the commit replays all of them on
    the latest metadata.
    """
    def __init__(self, ops: TableOperations, on_commit: Optional[Callable[[], object]] = None,
                 transaction: Optional[ChangeStager] = None):
        self._ops = ops
        self._on_commit = on_commit
        self._transaction = transaction     # a ``Transaction``: staged there, committed with it
        self._calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self._preview = SchemaBuilder(transaction.staged if transaction is not None else ops.load()[1])
        self.committed: Optional[Schema] = None

    def _record(self, method: str, *args: Any, **kwargs: Any) -> "UpdateSchema":
        getattr(self._preview, method)(*args, **kwargs)
        self._calls.append((method, args, kwargs))
        return self

    def add_column(self, name: ColumnPath, field_type: Union[IcebergType, str], doc: Optional[str] = None,
                   required: bool = False, default: Any = None) -> "UpdateSchema":
        """Add a column; on a format v3 table ``default`` is the value rows written before it read
        (``initial-default``) and rows written without it get (``write-default``)."""
        return self._record("add_column", name, field_type, doc=doc, required=required, default=default)

    def rename_column(self, name: ColumnPath, new_name: str) -> "UpdateSchema":
        return self._record("rename_column", name, new_name)

    def delete_column(self, name: ColumnPath) -> "UpdateSchema":
        return self._record("delete_column", name)

    def update_column(self, name: ColumnPath, field_type: Union[IcebergType, str, None] = None,
                      required: Optional[bool] = None, doc: Optional[str] = None) -> "UpdateSchema":
        return self._record("update_column", name, field_type=field_type, required=required, doc=doc)

    def update_column_default(self, name: ColumnPath, default: Any) -> "UpdateSchema":
        """Set (None: remove) the value rows written without the column get (format v3
        ``write-default``); rows already written keep what they read."""
        return self._record("update_column_default", name, default)

    def move_first(self, name: ColumnPath) -> "UpdateSchema":
        return self._record("move", name, "first")

    def move_before(self, name: ColumnPath, other: ColumnPath) -> "UpdateSchema":
        return self._record("move", name, "before", other)

    def move_after(self, name: ColumnPath, other: ColumnPath) -> "UpdateSchema":
        return self._record("move", name, "after", other)

    def set_identifier_fields(self, *names: ColumnPath) -> "UpdateSchema":
        """Make ``names`` the identifier fields (replacing any); no names clears them."""
        return self._record("set_identifier_fields", list(names))

    def apply(self) -> Schema:
        """The schema these changes would produce (ids as they would be assigned now)."""
        return Schema(self._preview.struct.fields, identifier_field_ids=self._preview.identifier_ids)

    def change(self, base: TableMetadata) -> Optional[list[TableUpdate]]:
        """The updates this schema change makes of ``base`` (None: the schema stays as it is)."""
        builder = SchemaBuilder(base)
        for method, args, kwargs in self._calls:
            getattr(builder, method)(*args, **kwargs)
        return schema_updates(base, builder.build())

    def commit(self) -> Schema:
        if self._transaction is not None:             # staged: committed with the transaction
            self._transaction.stage_change(self.change)
            return self.apply()
        result = commit_metadata(self._ops, self.change)
        self.committed = result.new.schema
        if self._on_commit is not None:
            self._on_commit()
        return self.committed

    def __enter__(self) -> "UpdateSchema":
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool:
        if exc_type is None:
            self.commit()
        return False


def _kept(f: Optional[NestedField], what: str) -> NestedField:
    if f is None:
        raise SchemaError(f"{what} cannot be dropped; drop or change the column that holds it")
    return f
