"""Column statistics of written Parquet files, read from their footers.

Both write paths (Spark's own Parquet writer and the Arrow writer) end here:
the footer gives, per leaf column, the compressed size, value count, null
count and min/max, which become the file's metrics keyed by field id. String
and binary bounds are truncated to 16 units like Iceberg's default metrics
mode ``truncate(16)``, or kept whole (``truncate=None``) for a table's own
metrics modes to cut (``icefloe.iceberg.metrics_modes``): the lower bound is a
prefix, the upper bound a prefix whose last unit is incremented, so both stay
valid bounds.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Optional

from icefloe.core.types import (
    BinaryType,
    DecimalType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    Schema,
    StringType,
    StructType,
    VariantType,
)
from icefloe.core.types.model import is_floating
from icefloe.core.values import to_internal

if TYPE_CHECKING:
    import pyarrow.parquet as pq

DEFAULT_TRUNCATE = 16


@dataclass
class FileMetrics:
    record_count: int
    column_sizes: dict[int, int] = field(default_factory=dict[int, int])       # field id -> bytes
    value_counts: dict[int, int] = field(default_factory=dict[int, int])
    null_value_counts: dict[int, int] = field(default_factory=dict[int, int])
    nan_value_counts: dict[int, int] = field(default_factory=dict[int, int])
    lower_bounds: dict[int, Any] = field(default_factory=dict[int, Any])       # field id -> internal value
    upper_bounds: dict[int, Any] = field(default_factory=dict[int, Any])
    split_offsets: list[int] = field(default_factory=list[int])


ParquetPath = tuple[str, ...]
# a Parquet leaf column's field, and whether it repeats (inside a list or a map)
LeafInfo = tuple[NestedField, bool]


def parquet_columns(schema: Schema) -> Iterator[tuple[ParquetPath, NestedField, bool]]:
    """(Parquet path as a tuple of names, field, repeated) of each of ``schema``'s primitive columns
    as Parquet lays them out: struct fields by name, list elements under ``list.element``, map keys
    and values under ``key_value``. A ``variant`` is one of them (its group, not its leaves)."""

    def visit(f: NestedField, path: ParquetPath, repeated: bool) -> Iterator[tuple[ParquetPath, NestedField, bool]]:
        t = f.field_type
        if isinstance(t, StructType):
            for c in t.fields:
                yield from visit(c, path + (c.name,), repeated)
        elif isinstance(t, ListType):
            element = NestedField(t.element_id, "element", t.element_type, t.element_required)
            yield from visit(element, path + ("list", "element"), True)
        elif isinstance(t, MapType):
            yield from visit(t.key_field, path + ("key_value", "key"), True)
            value = NestedField(t.value_id, "value", t.value_type, t.value_required)
            yield from visit(value, path + ("key_value", "value"), True)
        else:
            yield path, f, repeated

    for f in schema.fields:
        yield from visit(f, (f.name,), False)


def variant_paths(schema: Schema) -> list[ParquetPath]:
    """The Parquet paths of ``schema``'s ``variant`` groups, at any depth."""
    return [path for path, f, _ in parquet_columns(schema) if isinstance(f.field_type, VariantType)]


def parquet_leaf_paths(schema: Schema) -> tuple[dict[str, LeafInfo], dict[str, NestedField]]:
    """Map Parquet column paths ("s.a", "l.list.element", "m.key_value.key") to (field, repeated).
    A ``variant`` column ``v`` maps ``v.metadata`` (repeated, so it gets no bounds). Also returns
    the prefixes (``v.``) of the variant groups, whose other leaves (``value``, a shredding's
    ``typed_value``) count towards the column's size only."""
    out: dict[str, LeafInfo] = {}
    variants: dict[str, NestedField] = {}
    for path, f, repeated in parquet_columns(schema):
        name = ".".join(path)
        if isinstance(f.field_type, VariantType):
            # a variant is a group: its required ``metadata`` counts its values and nulls; no bounds
            out[name + ".metadata"] = (f, True)
            variants[name + "."] = f
        else:
            out[name] = (f, repeated)
    return out, variants


def _variant_part(variants: dict[str, NestedField], path: str) -> Optional[NestedField]:
    """The variant field whose group holds leaf ``path`` (not its ``metadata``), else None."""
    for prefix, f in variants.items():
        if path.startswith(prefix):
            return f
    return None


def truncate_lower_bound(t: IcebergType, v: Any, n: int) -> Any:
    """A lower bound of ``t`` cut to ``n`` code points (string) or bytes (binary); others whole."""
    if t == StringType() and isinstance(v, str):
        return v[:n]
    if t == BinaryType() and isinstance(v, (bytes, bytearray)):
        return bytes(v[:n])
    return v


def string_upper_bound(v: str, n: int) -> Optional[str]:
    """``v`` itself if at most ``n`` characters long, else the shortest string of at most ``n``
    characters above every string that starts with ``v[:n]`` (its last character that can be,
    incremented; surrogates skipped), or None when there is none."""
    if len(v) <= n:
        return v
    chars = list(v[:n])
    for i in range(len(chars) - 1, -1, -1):
        cp = ord(chars[i]) + 1
        if 0xD800 <= cp <= 0xDFFF:
            cp = 0xE000
        if cp <= 0x10FFFF:
            return "".join(chars[:i]) + chr(cp)
    return None


def truncate_upper_bound(t: IcebergType, v: Any, n: int) -> Optional[Any]:
    """An upper bound of ``t`` cut to ``n`` code points (string) or bytes (binary), its last unit
    that can be incremented so (None when none can); other types' bounds whole."""
    s = str(t)
    if s == "string" and isinstance(v, str):
        return string_upper_bound(v, n)
    if s == "binary" and isinstance(v, (bytes, bytearray)) and len(v) > n:
        b = bytearray(v[:n])
        for i in range(len(b) - 1, -1, -1):
            if b[i] < 0xFF:
                b[i] += 1
                return bytes(b[: i + 1])
        return None
    return v


def _stat_value(t: IcebergType, v: Any) -> Any:
    """A footer statistic (as pyarrow reports it) as an internal value."""
    s = str(t)
    if v is None:
        return None
    if s == "string" and isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "surrogateescape")
    if s in ("timestamp_ns", "timestamptz_ns"):
        return to_internal(t, v)                  # nanoseconds, also from pandas' Timestamp
    if s in ("timestamp", "timestamptz") and isinstance(v, _dt.datetime):
        if v.tzinfo is not None and s == "timestamp":
            v = v.replace(tzinfo=None)
        return to_internal(t, v)
    if isinstance(t, DecimalType) and not isinstance(v, decimal.Decimal):
        if isinstance(v, int):
            return decimal.Decimal(v).scaleb(-t.scale)
        if isinstance(v, (bytes, bytearray)):
            return decimal.Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-t.scale)
    if s == "uuid" and isinstance(v, (bytes, bytearray)):
        import uuid

        return uuid.UUID(bytes=bytes(v))
    return to_internal(t, v)


def metrics_from_footer(parquet_metadata: pq.FileMetaData, schema: Schema, truncate: Optional[int] = DEFAULT_TRUNCATE,
                        skip_float_bounds: bool = False) -> FileMetrics:
    """Metrics of one Parquet file from its footer (``pyarrow.parquet.FileMetaData``).

    ``truncate``: string and binary bounds cut to that many units; None keeps them whole (a
    table's metrics modes then choose: ``icefloe.iceberg.metrics_modes``).

    ``skip_float_bounds``: writers that may have seen NaN without recording it in
    the footer statistics cannot give trustworthy float bounds.
    """
    md = parquet_metadata
    leaves, variants = parquet_leaf_paths(schema)
    m = FileMetrics(record_count=md.num_rows)
    lows: dict[int, Any] = {}
    highs: dict[int, Any] = {}
    bounds_ok: dict[int, bool] = {}
    for rg_i in range(md.num_row_groups):
        rg = md.row_group(rg_i)
        first_offset: Optional[int] = None
        for ci in range(rg.num_columns):
            col = rg.column(ci)
            if first_offset is None or (col.dictionary_page_offset or col.data_page_offset) < first_offset:
                off = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
                first_offset = off if first_offset is None else min(first_offset, off)
            info = leaves.get(col.path_in_schema)
            if info is None:
                part = _variant_part(variants, col.path_in_schema)
                if part is not None:         # the rest of a variant's group: its size only
                    m.column_sizes[part.field_id] = m.column_sizes.get(part.field_id, 0) + col.total_compressed_size
                continue
            f, repeated = info
            fid = f.field_id
            m.column_sizes[fid] = m.column_sizes.get(fid, 0) + col.total_compressed_size
            m.value_counts[fid] = m.value_counts.get(fid, 0) + col.num_values
            st = col.statistics
            if st is not None and st.has_null_count:
                m.null_value_counts[fid] = m.null_value_counts.get(fid, 0) + st.null_count
            if repeated:
                continue
            ok = bounds_ok.get(fid, True)
            is_float = is_floating(f.field_type)
            if st is None or not st.has_min_max or (is_float and skip_float_bounds):
                # A row group with values but no min/max makes file bounds unknown.
                if st is None or st.null_count != col.num_values:
                    bounds_ok[fid] = False
                continue
            try:
                lo = _stat_value(f.field_type, st.min)
                hi = _stat_value(f.field_type, st.max)
            except Exception:
                bounds_ok[fid] = False
                continue
            if is_float and (math.isnan(lo) or math.isnan(hi)):
                bounds_ok[fid] = False
                continue
            bounds_ok[fid] = ok
            if fid not in lows or lo < lows[fid]:
                lows[fid] = lo
            if fid not in highs or hi > highs[fid]:
                highs[fid] = hi
        if first_offset is not None:
            m.split_offsets.append(first_offset)
    for fid, lo in lows.items():
        if not bounds_ok.get(fid, True):
            continue
        if truncate is None:
            m.lower_bounds[fid], m.upper_bounds[fid] = lo, highs[fid]
            continue
        t = _field_type(leaves, fid)
        m.lower_bounds[fid] = truncate_lower_bound(t, lo, truncate)
        hi = truncate_upper_bound(t, highs[fid], truncate)
        if hi is not None:
            m.upper_bounds[fid] = hi
    m.split_offsets.sort()
    return m


def _field_type(leaves: dict[str, LeafInfo], fid: int) -> IcebergType:
    for f, _rep in leaves.values():
        if f.field_id == fid:
            return f.field_type
    raise KeyError(fid)
