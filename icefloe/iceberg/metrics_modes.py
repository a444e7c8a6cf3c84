"""Which column statistics a data file's manifest entry carries: Iceberg's metrics modes.

A table's properties choose, per column, one of four modes (any case):

* ``none``: nothing for the column (no size, no counts, no bounds);
* ``counts``: its size and its value, null and NaN counts, no bounds;
* ``truncate(N)``: counts plus bounds, string bounds cut to ``N`` code points and binary ones to
  ``N`` bytes (a cut upper bound has its last unit that can be incremented so, and is dropped
  when none can: it must stay an upper bound); other types' bounds whole;
* ``full``: counts plus whole bounds.

``write.metadata.metrics.default`` is every column's mode (``truncate(16)`` when unset);
``write.metadata.metrics.column.<name>`` one column's, by its full dotted name (``s.a``,
``l.element``, ``m.key``, ``m.value``). With no default set, a schema of more than
``write.metadata.metrics.max-inferred-column-defaults`` (100) primitive columns keeps
``truncate(16)`` for that many of them (each struct's own columns before its nested ones) and
``none`` for the rest. The source columns of the table's sort order by order-keeping transforms
get at least ``truncate(16)`` when the default is ``none`` or ``counts``. As Iceberg's Java
runtime chooses them.

Unlike that runtime, which logs and falls back to the default for a mode it cannot parse,
icefloe refuses one: ``check_metrics_properties`` raises an ``IcefloeError`` naming the
property when a table is created or its properties change, and every write checks again before
it writes anything (a property another engine set).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Protocol, Sequence

from icefloe.core.parquet import FileMetrics, truncate_lower_bound, truncate_upper_bound
from icefloe.core.types import ListType, MapType, NestedField, Schema, StructType
from icefloe.errors import IcefloeError
from icefloe.iceberg.transforms import parse_transform


class TableMetadata(Protocol):
    """What ``for_table`` reads of a table's metadata (``table_metadata.TableMetadata``)."""

    @property
    def properties(self) -> Mapping[str, str]: ...

    @property
    def schema(self) -> Schema: ...

    @property
    def sort_orders(self) -> Sequence[Mapping[str, Any]]: ...

    @property
    def default_sort_order_id(self) -> int: ...

METRICS_PREFIX = "write.metadata.metrics."
DEFAULT_PROPERTY = "write.metadata.metrics.default"
COLUMN_PREFIX = "write.metadata.metrics.column."
MAX_INFERRED_PROPERTY = "write.metadata.metrics.max-inferred-column-defaults"
MAX_INFERRED_DEFAULT = 100
_TRUNCATE_RE = re.compile(r"truncate\((\d+)\)")
_INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class MetricsMode:
    """``none``, ``counts``, ``truncate`` (with ``length``) or ``full``."""
    kind: str
    length: int = 0

    @property
    def counts(self) -> bool:
        return self.kind != "none"

    @property
    def bounds(self) -> bool:
        return self.kind in ("truncate", "full")

    def __str__(self) -> str:
        return f"truncate({self.length})" if self.kind == "truncate" else self.kind


NONE = MetricsMode("none")
COUNTS = MetricsMode("counts")
FULL = MetricsMode("full")
TRUNCATE_16 = MetricsMode("truncate", 16)


def parse_mode(text: Any, prop: str) -> MetricsMode:
    """The mode ``text`` names (table property ``prop``), or an ``IcefloeError`` naming it."""
    s = str(text).lower()
    if s in ("none", "counts", "full"):
        return MetricsMode(s)
    m = _TRUNCATE_RE.fullmatch(s)
    if m is not None and 0 < int(m.group(1)) <= _INT_MAX:
        return MetricsMode("truncate", int(m.group(1)))
    raise IcefloeError(f"table property {prop}={text!r} is not a metrics mode: use none, counts, full or "
                       f"truncate(N) with N a positive length")


def _max_inferred(properties: Mapping[str, str]) -> int:
    raw = properties.get(MAX_INFERRED_PROPERTY)
    if raw is None:
        return MAX_INFERRED_DEFAULT
    try:
        n = int(str(raw))
    except ValueError:
        n = -1
    if n < 0:
        raise IcefloeError(f"table property {MAX_INFERRED_PROPERTY}={raw!r} is not a count of columns "
                           "(a non-negative integer)")
    return n


def _eligible(f: NestedField) -> bool:
    return f.field_type.is_primitive          # a variant is one too


def _counted_ids(schema: Schema) -> int:
    """How many columns Iceberg counts against the inferred-defaults limit: primitive fields at any
    depth, a list's element and a map's key and value when the element (the value) is primitive."""
    n = 0

    def visit(t: Any) -> bool:          # whether ``t`` was a primitive
        nonlocal n
        if isinstance(t, StructType):
            for f in t.fields:
                if visit(f.field_type):
                    n += 1
            return False
        if isinstance(t, ListType):
            if visit(t.element_type):
                n += 1
            return False
        if isinstance(t, MapType):
            visit(t.key_field.field_type)
            if visit(t.value_field.field_type):
                n += 2
            return False
        return bool(t.is_primitive)

    visit(schema.struct)
    return n


def _limited_ids(schema: Schema, limit: int) -> list[int]:
    """The first ``limit`` columns in Iceberg's order: each struct's primitive fields, then the
    insides of its fields in turn; a list's element, a map's key and value before their insides."""
    ids: list[int] = []

    def more() -> bool:
        return len(ids) < limit

    def visit(t: Any) -> None:
        if isinstance(t, StructType):
            for f in t.fields:
                if not more():
                    break
                if _eligible(f):
                    ids.append(f.field_id)
            for f in t.fields:
                if not more():
                    break
                visit(f.field_type)
        elif isinstance(t, ListType):
            if more() and _eligible(t.element_field):
                ids.append(t.element_id)
            visit(t.element_type)
        elif isinstance(t, MapType):
            for f in (t.key_field, t.value_field):
                if more() and _eligible(f):
                    ids.append(f.field_id)
            visit(t.key_field.field_type)
            visit(t.value_field.field_type)

    visit(schema.struct)
    return ids


@dataclass(frozen=True)
class MetricsConfig:
    """Each column's mode (by field id); ``default`` for the columns not named."""
    default: MetricsMode = TRUNCATE_16
    by_id: Mapping[int, MetricsMode] = field(default_factory=dict[int, MetricsMode])

    def mode(self, field_id: int) -> MetricsMode:
        return self.by_id.get(field_id, self.default)


def _column(schema: Schema, prop: str) -> NestedField:
    name = prop[len(COLUMN_PREFIX):]
    f = schema.find_field_or_none(name)
    if f is None or schema.name_of(f.field_id) != name:           # names match exactly, as in Iceberg
        raise IcefloeError(f"table property {prop} names no column of the table (columns are named by their "
                           f"full dotted path, exactly: {', '.join(schema.column_names)})")
    return f


def metrics_config(properties: Mapping[str, str], schema: Schema,
                   sort_fields: Sequence[Mapping[str, Any]] = ()) -> MetricsConfig:
    """The modes ``properties`` give ``schema``'s columns, the table's sort order's ``sort_fields``
    (its metadata's field objects) taken into account; an ``IcefloeError`` naming the property for
    a value that cannot be honoured."""
    by_id: dict[int, MetricsMode] = {}
    limit = _max_inferred(properties)
    raw_default = properties.get(DEFAULT_PROPERTY)
    if raw_default is not None:
        default = parse_mode(raw_default, DEFAULT_PROPERTY)
    elif _counted_ids(schema) <= limit:
        default = TRUNCATE_16
    else:
        by_id.update((fid, TRUNCATE_16) for fid in _limited_ids(schema, limit))
        default = NONE
    sorted_mode = TRUNCATE_16 if default in (NONE, COUNTS) else default
    for sf in sort_fields:
        if parse_transform(str(sf.get("transform", "identity"))).preserves_order:
            src = schema.find_field_or_none(int(sf["source-id"]))
            if src is not None:
                by_id[src.field_id] = sorted_mode
    for key in sorted(properties):
        if key.startswith(COLUMN_PREFIX):
            by_id[_column(schema, key).field_id] = parse_mode(properties[key], key)
    return MetricsConfig(default, by_id)


def for_table(meta: TableMetadata, properties: Optional[Mapping[str, str]] = None) -> MetricsConfig:
    """The modes of the table whose metadata is ``meta`` (its properties, or ``properties``)."""
    fields: list[Mapping[str, Any]] = []
    for order in meta.sort_orders:
        if order.get("order-id") == meta.default_sort_order_id:
            fields = list(order.get("fields") or [])
    return metrics_config(meta.properties if properties is None else properties, meta.schema, fields)


def check_metrics_properties(properties: Mapping[str, str], schema: Schema) -> None:
    """Refuse (``IcefloeError`` naming the property) metrics properties that cannot be honoured."""
    if any(k.startswith(METRICS_PREFIX) for k in properties):
        metrics_config(properties, schema)


def apply_modes(m: FileMetrics, config: MetricsConfig, schema: Schema) -> FileMetrics:
    """``m`` (a data file's metrics with whole bounds) cut down to what ``config`` keeps, in place."""
    for fid in {*m.column_sizes, *m.value_counts, *m.null_value_counts, *m.nan_value_counts,
                *m.lower_bounds, *m.upper_bounds}:
        mode = config.mode(fid)
        if mode.bounds and mode.kind == "truncate":
            t = schema.find_field(fid).field_type
            if fid in m.lower_bounds:
                m.lower_bounds[fid] = truncate_lower_bound(t, m.lower_bounds[fid], mode.length)
            if fid in m.upper_bounds:
                hi = truncate_upper_bound(t, m.upper_bounds[fid], mode.length)
                if hi is None:
                    del m.upper_bounds[fid]
                else:
                    m.upper_bounds[fid] = hi
        elif not mode.bounds:
            m.lower_bounds.pop(fid, None)
            m.upper_bounds.pop(fid, None)
            if not mode.counts:
                for stats in (m.column_sizes, m.value_counts, m.null_value_counts, m.nan_value_counts):
                    stats.pop(fid, None)
    return m


def follow_schema_change(properties: Mapping[str, str], old: Schema, new: Schema) -> dict[str, str]:
    """``properties`` with each column's metrics mode following its column from ``old`` to ``new``:
    renamed with it, removed with it (as Iceberg's schema updates carry them)."""
    out = dict(properties)
    for key in [k for k in properties if k.startswith(COLUMN_PREFIX)]:
        f = old.find_field_or_none(key[len(COLUMN_PREFIX):])
        if f is None or old.name_of(f.field_id) != key[len(COLUMN_PREFIX):]:
            continue                            # named no column before either: left as it was
        now = new.name_of(f.field_id)
        value = out.pop(key)
        if now is not None:
            out[COLUMN_PREFIX + now] = value
    return out
