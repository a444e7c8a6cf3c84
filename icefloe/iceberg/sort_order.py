# pyright: strict
"""Sort orders (Iceberg spec, "Sorting"): declared in metadata, used by writers.

A sort order is a list of fields, each a transform of a source column with a
direction and a null order. Order id 0 is reserved for "unsorted"; a new order
gets the next id unless an identical one exists. Writers sort the rows of each
data file by the table's default order and record its id in the file's
``sort_order_id``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Sequence

from icefloe.core.types import Schema
from icefloe.errors import SchemaError
from icefloe.iceberg.metadata_builder import AddSortOrder, SetDefaultSortOrder, TableUpdate
from icefloe.iceberg.metadata_commit import MetadataChange, commit_metadata
from icefloe.iceberg.operations import TableOperations
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.iceberg.transforms import parse_partition_expr, parse_transform

UNSORTED_ORDER_ID = 0
_TERM_RE = re.compile(r"^(?P<expr>.+?)(?:\s+(?P<dir>asc|desc))?(?:\s+nulls\s+(?P<nulls>first|last))?\s*$",
                      re.IGNORECASE)


@dataclass(frozen=True)
class SortField:
    source_id: int
    transform: str = "identity"
    direction: str = "asc"
    null_order: str = "nulls-first"

    def to_json(self) -> dict[str, Any]:
        return {"transform": self.transform, "source-id": self.source_id, "direction": self.direction,
                "null-order": self.null_order}


def parse_sort_terms(schema: Schema, terms: Sequence[str]) -> list[SortField]:
    """``["id", "ts desc nulls last", "bucket(16, id)"]`` -> sort fields.

    Default null order follows the direction as in Spark and Iceberg: ascending
    sorts put nulls first, descending sorts put them last.
    """
    fields: list[SortField] = []
    for term in terms:
        m = _TERM_RE.match(term.strip())
        if not m:
            raise SchemaError(f"cannot parse sort term {term!r}")
        transform, col = parse_partition_expr(m.group("expr"))
        src = schema.find_field(col)
        if not src.field_type.is_primitive:
            raise SchemaError(f"cannot sort by non-primitive column {col!r}")
        direction = (m.group("dir") or "asc").lower()
        nulls = m.group("nulls")
        null_order = f"nulls-{nulls.lower()}" if nulls else ("nulls-first" if direction == "asc" else "nulls-last")
        fields.append(SortField(src.field_id, str(transform), direction, null_order))
    return fields


def with_sort_order(base: TableMetadata, fields: list[SortField]) -> TableMetadata:
    """``base`` with ``fields`` as the default sort order (reusing an identical order's id)."""
    wanted = [f.to_json() for f in fields]
    if not wanted:
        return replace(base, default_sort_order_id=UNSORTED_ORDER_ID,
                       sort_orders=base.sort_orders if any(o["order-id"] == 0 for o in base.sort_orders)
                       else [{"order-id": 0, "fields": []}] + list(base.sort_orders))
    for order in base.sort_orders:
        if order.get("fields") == wanted:
            return replace(base, default_sort_order_id=order["order-id"])
    new_id = max([o["order-id"] for o in base.sort_orders] + [0]) + 1
    return replace(base, sort_orders=list(base.sort_orders) + [{"order-id": new_id, "fields": wanted}],
                   default_sort_order_id=new_id)


def sort_order_change(terms: Sequence[str]) -> MetadataChange:
    """The change making the order of ``terms`` the default: its order added (unless the table has
    it already) and made the default."""
    def change(base: TableMetadata) -> list[TableUpdate]:
        new = with_sort_order(base, parse_sort_terms(base.schema, terms))
        oid = new.default_sort_order_id
        order = next(o for o in new.sort_orders if o["order-id"] == oid)
        added: list[TableUpdate] = [] if any(o["order-id"] == oid for o in base.sort_orders) else [AddSortOrder(order)]
        return added + [SetDefaultSortOrder(oid)]
    return change


def replace_sort_order(ops: TableOperations, terms: Sequence[str]) -> None:
    commit_metadata(ops, sort_order_change(terms))


def default_order(meta: TableMetadata) -> tuple[int, list[dict[str, Any]]]:
    """The default sort order's id and fields (fields empty when unsorted)."""
    for order in meta.sort_orders:
        if order.get("order-id") == meta.default_sort_order_id:
            return meta.default_sort_order_id, list(order.get("fields") or [])
    return UNSORTED_ORDER_ID, []


def writer_sort_columns(meta: TableMetadata) -> tuple[int, list[tuple[str, bool, bool]]]:
    """What writers sort by: (order id, [(column name, ascending, nulls first)]).

    Writers sort by each field's source column. That is the field's own order for
    identity and the order-preserving transforms (truncate, year/month/day/hour);
    for any other transform (bucket) the files are not in the declared order, so
    they are recorded as unsorted (order id 0).
    """
    order_id, fields = default_order(meta)
    if any(not parse_transform(f.get("transform", "identity")).preserves_order for f in fields):
        order_id = UNSORTED_ORDER_ID
    schema = meta.schema
    out: list[tuple[str, bool, bool]] = []
    for f in fields:
        src = schema.find_field_or_none(f["source-id"])
        if src is None:
            continue
        out.append((src.name, f.get("direction", "asc") == "asc", f.get("null-order", "nulls-first") == "nulls-first"))
    return order_id, out

