# pyright: strict
"""Reading Iceberg data files with pyarrow (no Spark): columns matched by field id.

Spec, "Column Projection": columns are matched to the read schema by field id, missing
optional columns read as nulls, and a file written without ids gets them from the table's
default name mapping (``schema.name-mapping.default``).
"""
from __future__ import annotations

import json
import uuid
from typing import Any, Optional, Protocol, Union

import pyarrow as pa
import pyarrow.parquet as pq
import pyarrow.types as pt

from icefloe.core.io import LOCAL, FileIO
from icefloe.core.types.arrow import is_variant_arrow_type
from icefloe.errors import CorruptDataFileError, IcefloeError, UnsupportedFeatureError

# The table's default name mapping (spec, "Column Projection"): its JSON text or the parsed list
NameMapping = Union[str, list[dict[str, Any]]]


class DataFileRef(Protocol):
    """What reading a data file needs of its manifest entry's ``DataFile``."""

    @property
    def file_path(self) -> str: ...

    @property
    def record_count(self) -> Optional[int]: ...


def read_data_file(data_file: DataFileRef, io: FileIO = LOCAL) -> pa.Table:
    """A data file (a ``DataFile``) as a pyarrow.Table, without Hive-partition guessing.
    A missing or unreadable file, or one whose row count is not the manifest's, is a
    ``CorruptDataFileError`` naming it."""
    path = data_file.file_path
    try:
        # page checksums, where the writer stored them (parquet-mr does by default), catch flipped bits
        with io.open_read(path) as fh:
            table = pq.ParquetFile(fh, page_checksum_verification=True).read()
    except FileNotFoundError:
        raise CorruptDataFileError(path, "data file referenced by the table's manifests is missing") from None
    except (pa.ArrowException, OSError, ValueError) as e:
        raise CorruptDataFileError(path, f"not a readable Parquet file ({type(e).__name__}: {e})") from None
    expected = data_file.record_count
    if expected is not None and expected >= 0 and table.num_rows != expected:
        raise CorruptDataFileError(path, f"has {table.num_rows} rows, but its manifest entry says {expected} "
                                         "(replaced or rewritten after the commit?)")
    return table


def read_by_field_id(table: pa.Table, target: pa.Schema, name_mapping: Optional[NameMapping] = None,
                     path: Optional[str] = None, defaults: Optional[dict[int, Any]] = None) -> pa.Table:
    """Project a file's Arrow table onto ``target`` by ``PARQUET:field_id``, recursively through
    structs, list elements and map values (a missing optional id reads as nulls).

    A file without field ids (e.g. added with pyiceberg's ``add_files``) gets them from
    ``name_mapping`` (spec, "Column Projection": JSON text or the parsed list), by name.
    A required field the file does not have is an error naming the file (``path``).
    ``defaults`` (field id -> value) are what a top-level field the file lacks reads as (format
    v3 ``initial-default``) instead of null."""
    if name_mapping is not None and table.num_columns and all(_fid(f) is None for f in table.schema):
        mapping: list[dict[str, Any]] = json.loads(name_mapping) if isinstance(name_mapping, str) else name_mapping
        table = table.cast(pa.schema([_map_field(f, mapping) for f in table.schema],
                                     metadata=table.schema.metadata))
    where = path or "a data file"
    cols = [_chunked(table.column(i)) for i in range(table.num_columns)]
    by_id = {_fid(f): (f, c) for f, c in zip(table.schema, cols) if _fid(f) is not None}
    out: list[pa.Array] = []
    for f in target:
        fid = _fid(f)
        hit = by_id.get(fid)
        if hit is None and defaults and fid is not None and fid in defaults:
            out.append(_repeated(defaults[fid], f.type, table.num_rows))
            continue
        if hit is None:
            _check_optional(f, where, f.name)
        out.append(_conform(hit[1], hit[0], f, table.num_rows, where, f.name) if hit
                   else pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(out, schema=target)


def _repeated(value: Any, type_: pa.DataType, n: int) -> pa.Array:
    if isinstance(value, uuid.UUID):
        value = value.bytes if pa.types.is_binary(type_) or pa.types.is_fixed_size_binary(type_) else str(value)
    return pa.array([value] * n, type_)


def _check_optional(field: pa.Field, where: str, path: str) -> None:
    if not field.nullable:
        raise IcefloeError(f"data file {where} has no column for required field {path!r} "
                           f"(id {_fid(field)}); it has no matching field id and no name-mapped column")


def _map_field(field: pa.Field, entries: Optional[list[dict[str, Any]]]) -> pa.Field:
    """``field`` (of a file without ids) with the id the name mapping gives its name, recursively."""
    entry = next((e for e in entries or [] if field.name in e.get("names", [])), None)
    sub: list[dict[str, Any]] = (entry or {}).get("fields") or []
    t = field.type
    if pt.is_struct(t):
        t = pa.struct([_map_field(t.field(i), sub) for i in range(t.num_fields)])
    elif pt.is_list(t) or pt.is_large_list(t):
        vf = _map_field(t.value_field, [dict(e, names=list(e.get("names", [])) + [t.value_field.name])
                                        for e in sub[:1]])
        t = pa.large_list(vf) if pt.is_large_list(t) else pa.list_(vf)
    elif pt.is_map(t):
        key_entry = [dict(e, names=list(e.get("names", [])) + [t.key_field.name]) for e in sub[:1]]
        item_entry = [dict(e, names=list(e.get("names", [])) + [t.item_field.name]) for e in sub[1:2]]
        t = pa.map_(_map_field(t.key_field, key_entry), _map_field(t.item_field, item_entry))
    md: dict[bytes, bytes] = dict(field.metadata or {})
    md.pop(b"PARQUET:field_id", None)
    if entry is not None and entry.get("field-id") is not None:
        md[b"PARQUET:field_id"] = str(entry["field-id"]).encode()
    return pa.field(field.name, t, nullable=field.nullable, metadata=md or None)


def _fid(field: pa.Field) -> Optional[int]:
    md: dict[bytes, bytes] = field.metadata or {}
    v = md.get(b"PARQUET:field_id")
    return int(v) if v is not None else None


def _chunked(col: Any) -> Any:
    return col.combine_chunks() if hasattr(col, "combine_chunks") else col


def _is_variant(field: pa.Field) -> bool:
    """A ``variant`` column's Arrow field: its storage struct, whose two parts carry no field ids."""
    return is_variant_arrow_type(field.type) and all(_fid(field.type.field(i)) is None for i in range(2))


def _variant(arr: pa.StructArray, st: pa.StructType, dt: pa.StructType, where: str, path: str) -> pa.StructArray:
    """A stored ``variant`` group as the two byte strings, by name (Spark stores ``value`` first).
    A shredded one (a ``typed_value`` beside them) would need its values re-encoded: refused."""
    names: list[str] = [st.field(i).name for i in range(st.num_fields)]
    if "typed_value" in names:
        raise UnsupportedFeatureError(f"column {path!r} of {where} holds shredded variant values (typed_value), "
                                      "which the Arrow read does not rebuild; read the table with Spark")
    if "metadata" not in names or "value" not in names:
        raise CorruptDataFileError(where, f"variant column {path!r} lacks metadata or value (it has {names})")
    parts = [arr.field(names.index(n)).cast(dt.field(n).type) for n in ("metadata", "value")]
    return pa.StructArray.from_arrays(parts, fields=list(dt), mask=arr.is_null())


def _conform(arr: pa.Array, src_field: pa.Field, dst_field: pa.Field, n: int, where: str = "a data file",
             path: str = "") -> pa.Array:
    """``arr`` (of ``src_field``) as ``dst_field``'s type, matching nested fields by id."""
    st, dt = src_field.type, dst_field.type
    if _is_variant(dst_field) and pt.is_struct(st):
        return _variant(arr, st, dt, where, path)
    if pt.is_struct(dt) and pt.is_struct(st):
        children: dict[Optional[int], tuple[pa.Field, pa.Array]] = {}
        for i in range(st.num_fields):
            fid = _fid(st.field(i))
            if fid is not None:
                children[fid] = (st.field(i), arr.field(i))
        parts: list[pa.Array] = []
        for j in range(dt.num_fields):
            df_ = dt.field(j)
            hit = children.get(_fid(df_))
            if hit is None and arr.null_count < len(arr):
                _check_optional(df_, where, f"{path}.{df_.name}")
            parts.append(_conform(hit[1], hit[0], df_, len(arr), where, f"{path}.{df_.name}") if hit
                         else pa.nulls(len(arr), df_.type))
        return pa.StructArray.from_arrays(parts, fields=list(dt), mask=arr.is_null())
    if (pt.is_list(dt) or pt.is_large_list(dt)) and (pt.is_list(st) or pt.is_large_list(st)):
        values = _conform(arr.values, st.value_field, dt.value_field, len(arr.values), where, f"{path}.element")
        return pa.ListArray.from_arrays(arr.offsets, values, type=dt, mask=arr.is_null())
    if pt.is_map(dt) and pt.is_map(st):
        keys = _conform(arr.keys, st.key_field, dt.key_field, len(arr.keys), where, f"{path}.key")
        items = _conform(arr.items, st.item_field, dt.item_field, len(arr.items), where, f"{path}.value")
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=dt, mask=arr.is_null())
    return arr.cast(dt) if st != dt else arr
