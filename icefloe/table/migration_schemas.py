# pyright: strict
"""How a file moved into a Paimon table is read: the names its columns have in it, matched to the
table's columns by the field ids in its footer (an Iceberg source's, or through its name mapping),
and the Paimon schema of those names it gets (Paimon reads a data file by the names of the schema
it was written with, matched to the table's columns by field id)."""
from __future__ import annotations

from typing import Any, Optional, Protocol, Sequence

from icefloe.core.io import FileIO
from icefloe.core.types import IcebergType, from_arrow_schema
from icefloe.errors import MigrationError
from icefloe.paimon.schema import TableSchema
from icefloe.paimon.types import DataField

#: an Iceberg source's columns matched to a Paimon table's fields: ({field id: index in the
#: fields}, {name in its name mapping: index}, {field id: name now} of the fields inside structs)
SourceMatch = tuple[dict[int, int], dict[str, int], dict[int, str]]


class MigratedTable(Protocol):
    """What choosing schema ids needs of the Paimon table files move into (``PaimonTable``)."""

    @property
    def name(self) -> str: ...

    @property
    def io(self) -> FileIO: ...

    @property
    def location(self) -> str: ...

    @property
    def table_schema(self) -> TableSchema: ...

    def schema_by_id(self, schema_id: int) -> TableSchema: ...


def file_columns(footer: Any) -> list[tuple[str, IcebergType]]:
    """(name, type) of a Parquet file's top-level columns, from its footer."""
    return [(f.name, f.field_type) for f in from_arrow_schema(footer.schema.to_arrow_schema()).fields]


def footer_ids(footer: Any) -> dict[str, int]:
    """{top-level column name: its Parquet field id} of the columns that have one."""
    out: dict[str, int] = {}
    for f in footer.schema.to_arrow_schema():
        metadata: dict[bytes, bytes] = f.metadata or {}
        fid = metadata.get(b"PARQUET:field_id")
        if fid is not None:
            out[f.name] = int(fid)
    return out


def file_names(fields: Sequence[DataField], match: Optional[SourceMatch], path: str,
               footer: Any) -> tuple[Optional[str], ...]:
    """The name each of ``fields`` has in the file. ``match`` (an Iceberg source's ({field id:
    index in ``fields``}, {name in its name mapping: index})) matches the columns that carry a
    field id by it, so a column renamed since the file was written keeps its values, and the
    others through the source's name mapping (as Iceberg's readers do); a directory's files
    (``match`` None) match by name."""
    cols = [n for n, _t in file_columns(footer)]
    by_id: dict[int, int]
    by_name: dict[str, int]
    by_id, by_name = match[:2] if match is not None else ({}, {f.name: k for k, f in enumerate(fields)})
    ids = footer_ids(footer) if match is not None else {}
    names: list[Optional[str]] = [None] * len(fields)
    extra: list[str] = []
    for n in [c for c in cols if c in ids] + [c for c in cols if c not in ids]:
        i = by_id.get(ids[n]) if n in ids else by_name.get(n)
        if i is not None and names[i] is not None:
            raise MigrationError(f"{path}: its column {n!r} has no field id and its name is the one the table's "
                                 f"column {fields[i].name!r} has now, which the file's column {names[i]!r} is by "
                                 "its field id; which is which cannot be told (rewrite the file first)")
        if i is None:
            extra.append(n)
        else:
            names[i] = n
    if extra or (match is None and None in names):
        raise MigrationError(f"{path}: its columns {cols} are not the table's {[f.name for f in fields]} (Paimon "
                             "reads a file's columns by name; columns that carry field ids match by id)")
    inner: dict[int, str] = match[2] if match is not None and len(match) > 2 else {}
    for f in footer.schema.to_arrow_schema() if inner else ():
        renamed = _renamed_inside(f.type, inner)
        if renamed is not None:
            raise MigrationError(f"{path}: the field {renamed[0]!r} inside its column {f.name!r} is named "
                                 f"{renamed[1]!r} in the source table now (renamed since the file was written); "
                                 "migration maps renamed top-level columns only, not fields inside one (rewrite the file first)")
    return tuple(names)


def _renamed_inside(arrow_type: Any, inner: dict[int, str]) -> Optional[tuple[str, str]]:
    """(name in the file, name now) of a struct field within ``arrow_type`` whose field id
    ``inner`` ({field id: name now} of the source's fields inside structs) names otherwise."""
    import pyarrow as pa

    if pa.types.is_struct(arrow_type):
        for k in range(arrow_type.num_fields):
            f = arrow_type.field(k)
            metadata: dict[bytes, bytes] = f.metadata or {}
            fid = metadata.get(b"PARQUET:field_id")
            if fid is not None and inner.get(int(fid), f.name) != f.name:
                return f.name, inner[int(fid)]
            found = _renamed_inside(f.type, inner)
            if found is not None:
                return found
    elif pa.types.is_map(arrow_type):
        return _renamed_inside(arrow_type.key_type, inner) or _renamed_inside(arrow_type.item_type, inner)
    elif pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _renamed_inside(arrow_type.value_type, inner)
    return None


def inner_names(t: IcebergType, out: dict[int, str]) -> dict[int, str]:
    """{field id: name} of the fields inside the structs of the type ``t`` (a core type)."""
    from icefloe.core.types import ListType, MapType, StructType

    if isinstance(t, StructType):
        for f in t.fields:
            out[f.field_id] = f.name
            inner_names(f.field_type, out)
    elif isinstance(t, ListType):
        inner_names(t.element_field.field_type, out)
    elif isinstance(t, MapType):
        inner_names(t.key_field.field_type, out)
        inner_names(t.value_field.field_type, out)
    return out


def schema_ids(table: MigratedTable, names: Sequence[tuple[Optional[str], ...]], created: bool,
               paths: Sequence[str]) -> list[int]:
    """The Paimon schema id of each file, by the names its columns have (``names``). A new
    table gets a schema for each set of older names (the table's fields under those names: field
    ids never change), written as ``schema-0``, ``schema-1``, ... before its current schema, which
    comes last; an existing table must have a schema with the file's names already."""
    import dataclasses

    from icefloe.paimon.schema import list_schema_ids, schema_path, validate

    ts = table.table_schema
    current = tuple(f.name for f in ts.fields)
    keys = set(ts.partition_keys)
    for n, path in zip(names, paths):
        missing = [f.name for f, x in zip(ts.fields, n) if x is None]
        if missing and (not created or keys & set(missing)):
            raise MigrationError(f"{path}: it has no column {missing} (added to the source since it was written); "
                                 + ("a partition column must be in every file" if created else
                                    "migrate_table into a new table keeps such files, each under a schema of its "
                                    "own columns"))
    if not created:
        known: dict[tuple[Optional[str], ...], int] = {}
        for sid in [ts.id] + list_schema_ids(table.io, table.location):
            s = table.schema_by_id(sid)
            if [(f.id, f.type) for f in s.fields] == [(f.id, f.type) for f in ts.fields]:
                known.setdefault(tuple(f.name for f in s.fields), sid)
        for n, path in zip(names, paths):
            if n not in known:
                raise MigrationError(f"{path}: its columns are named {list(n)} (renamed since it was written), and "
                                     f"{table.name} has no schema with those names for its columns; migrate_table "
                                     "into a new table keeps them, or rewrite the source's files first")
        return [known[n] for n in names]
    older = list(dict.fromkeys(n for n in names if n != current))
    if not older:
        return [ts.id] * len(names)
    schemas: list[TableSchema] = []
    for sid, n in enumerate(older + [current]):
        renamed = [(f.name, x) for f, x in zip(ts.fields, n) if x is not None and f.name != x]
        if any(a in keys for a, _b in renamed):
            raise MigrationError(f"a partition column was renamed ({renamed}) since some files were written; a "
                                 "Paimon table's partition keys keep their names (rewrite those files first)")
        # a column added since the file was written is not in its schema: Paimon reads it as null
        s = dataclasses.replace(ts, id=sid, fields=[f.copy(name=x) for f, x in zip(ts.fields, n) if x is not None])
        validate(s)
        schemas.append(s)
    for s in schemas:                 # the table is new and empty: its schema-0 is replaced
        table.io.write_bytes(schema_path(table.location, s.id), s.to_json().encode("utf-8"), overwrite=s.id == 0)
    by_names = {n: i for i, n in enumerate(older + [current])}
    return [by_names[n] for n in names]


__all__ = ["file_columns", "footer_ids", "file_names", "inner_names", "schema_ids"]
