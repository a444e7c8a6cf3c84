# pyright: strict
"""Server-side scan planning in the Iceberg REST protocol: the JSON of its requests and results.

The REST spec (``PlanTableScanRequest``, ``FileScanTask``, ``ContentFile``, ``Predicate``) sends a
scan's filter as an expression document and its tasks as content-file documents. This module
turns those documents into icefloe's own values and back, as pure functions:

* ``filter_from_json``: a ``Predicate`` document (``{"type": "eq", "term": "id", "value": 5}``, the
  spec's newer ``left``/``right``/``child`` forms, bare ``true``/``false``) bound against a schema,
  each literal read the way the spec's single-value JSON writes it for the column's type (a date as
  ``"2024-01-31"`` or as its day count, a timestamp as ISO text or microseconds, binary as hex);
* ``filter_to_json``: a bound icefloe expression as that document (for a client asking a server);
* ``content_file_to_json`` / ``content_file_from_json``: a data or delete file (the spec's
  ``ContentFile``: partition values as an array in the spec's field order, metrics maps as
  ``{"keys": [...], "values": [...]}``, bounds as hex of their single-value binary form);
* ``tasks_to_json`` / ``tasks_from_json``: scan tasks as ``file-scan-tasks`` with the
  ``delete-files`` they reference by index.

The protocol sends no sequence numbers, only which delete files apply to which data file.
``tasks_from_json`` gives the tasks numbers that reproduce exactly that assignment (``sequence_order``)
so a reader that re-checks the spec's sequence-number rules per row applies each delete file to the
data files the server attached it to, and to no other.
"""
from __future__ import annotations

import base64
import datetime as _dt
import decimal
import uuid as _uuid
from graphlib import CycleError, TopologicalSorter
from typing import TYPE_CHECKING, Any, Optional, cast

from icefloe.core import expressions as ex
from icefloe.core.types import BinaryType, DecimalType, FixedType, IcebergType, StructType
from icefloe.core.values import days_to_date, micros_to_datetime, to_internal
from icefloe.errors import ExpressionError, IcefloeError
from icefloe.iceberg.manifest import DATA, EQUALITY_DELETES, POSITION_DELETES, DataFile
from icefloe.iceberg.scan import FileScanTask, attach_identity_values
from icefloe.iceberg.schema import Schema

if TYPE_CHECKING:
    from icefloe.iceberg.partitioning import PartitionSpec
    from icefloe.iceberg.table_metadata import TableMetadata

# a JSON object of the protocol, read field by field
JsonObject = dict[str, Any]

CONTENT_NAMES = {DATA: "data", POSITION_DELETES: "position-deletes", EQUALITY_DELETES: "equality-deletes"}
CONTENTS = {v: k for k, v in CONTENT_NAMES.items()}
_COMPARISONS = {"eq": ex.EqualTo, "not-eq": ex.NotEqualTo, "lt": ex.LessThan, "lt-eq": ex.LessThanOrEqual,
                "gt": ex.GreaterThan, "gt-eq": ex.GreaterThanOrEqual, "starts-with": ex.StartsWith,
                "not-starts-with": ex.NotStartsWith}
_UNARY = {"is-null": ex.IsNull, "not-null": ex.NotNull, "is-nan": ex.IsNaN, "not-nan": ex.NotNaN}
_SETS = {"in": ex.In, "not-in": ex.NotIn}
_NAMES: dict[type[ex.Predicate], str] = {**{v: k for k, v in _COMPARISONS.items()}, **{v: k for k, v in _UNARY.items()},
          **{v: k for k, v in _SETS.items()}}
_METRICS = (("column-sizes", "column_sizes"), ("value-counts", "value_counts"),
            ("null-value-counts", "null_value_counts"), ("nan-value-counts", "nan_value_counts"))
_BOUNDS = (("lower-bounds", "lower_bounds"), ("upper-bounds", "upper_bounds"))


class PlanningError(IcefloeError, ValueError):
    """A scan-planning document that does not follow the REST spec; names what is wrong."""


# ---------------------------------------------------------------------------- filters
def filter_from_json(doc: Any, schema: Schema, case_sensitive: bool = True) -> ex.Expr:
    """The spec's ``Predicate`` document bound against ``schema`` (``ExpressionError`` naming an
    unknown column, ``PlanningError`` for a document the spec does not allow)."""
    return ex.bind(_expr(doc, schema, case_sensitive), schema, case_sensitive=True)


def _expr(doc: Any, schema: Schema, case_sensitive: bool) -> ex.Expr:
    if isinstance(doc, bool):
        return ex.AlwaysTrue() if doc else ex.AlwaysFalse()
    if not isinstance(doc, dict) or not isinstance(cast(JsonObject, doc).get("type"), str):
        raise PlanningError(f"a filter must be true, false or an object with a 'type', not {_short(doc)}")
    doc = cast(JsonObject, doc)
    kind: str = doc["type"].lower()
    if kind in ("true", "false"):
        return ex.AlwaysTrue() if kind == "true" else ex.AlwaysFalse()
    if kind == "literal" and isinstance(doc.get("value"), bool):
        return ex.AlwaysTrue() if doc["value"] else ex.AlwaysFalse()
    if kind in ("and", "or"):
        left, right = (_expr(_need(doc, k, kind), schema, case_sensitive) for k in ("left", "right"))
        return ex.And(left, right) if kind == "and" else ex.Or(left, right)
    if kind == "not":
        return ex.Not(_expr(_need(doc, "child", kind), schema, case_sensitive))
    if kind not in _UNARY and kind not in _COMPARISONS and kind not in _SETS:
        raise PlanningError(f"unknown filter type {doc['type'][:60]!r}")
    name = _term(doc.get("term", doc.get("left" if kind in _COMPARISONS else "child")), kind)
    ref = _resolve(name, schema, case_sensitive)
    term = ex.Reference(ref.name)
    if kind in _UNARY:
        return _UNARY[kind](term)
    if kind in _COMPARISONS:
        value = doc["value"] if "value" in doc else _need(doc, "right", kind)
        return _COMPARISONS[kind](term, _literal(_unwrap(value, kind), ref, kind))
    values = _need(doc, "values", kind)
    if isinstance(values, dict) and cast(JsonObject, values).get("type") == "literals":
        values = cast(JsonObject, values).get("values")
    if not isinstance(values, list):
        raise PlanningError(f"a {kind!r} filter's values must be an array, not {_short(values)}")
    return _SETS[kind](term, [_literal(_unwrap(v, kind), ref, kind) for v in cast(list[Any], values)])


def _need(doc: JsonObject, key: str, kind: str) -> Any:
    if key not in doc:
        raise PlanningError(f"a {kind!r} filter lacks {key!r}")
    return doc[key]


def _term(t: Any, kind: str) -> str:
    """The column a predicate names: a bare name (the spec's deprecated ``term``) or a reference."""
    if isinstance(t, str):
        return t
    if isinstance(t, dict) and cast(JsonObject, t).get("type") == "reference":
        name = cast(JsonObject, t).get("name", cast(JsonObject, t).get("term"))
        if isinstance(name, str):
            return name
        if "id" in t:
            raise PlanningError(f"a {kind!r} filter names a field by id; name it (a NamedReference)")
    if isinstance(t, dict) and cast(JsonObject, t).get("type") in ("transform", "apply"):
        raise PlanningError(f"a {kind!r} filter applies a function or transform to its column; icefloe plans "
                            "with filters on columns only")
    raise PlanningError(f"a {kind!r} filter must name a column, not {_short(t)}")


def _resolve(name: str, schema: Schema, case_sensitive: bool) -> ex.BoundReference:
    bound = ex.bind(ex.IsNull(ex.Reference(name)), schema, case_sensitive=case_sensitive)
    assert isinstance(bound, ex.IsNull) and isinstance(bound.term, ex.BoundReference)
    return bound.term


def _unwrap(v: Any, kind: str) -> Any:
    if isinstance(v, dict):
        if cast(JsonObject, v).get("type") == "literal" and "value" in v:
            return cast(JsonObject, v)["value"]
        raise PlanningError(f"a {kind!r} filter compares with {_short(v)}; icefloe plans with literal values only")
    return v


def _literal(v: Any, ref: ex.BoundReference, kind: str) -> Any:
    """A JSON literal as the Python value icefloe binds for the column's type (the spec's
    single-value JSON, and the numbers Java's engines send for dates and timestamps)."""
    t = ref.field_type
    s = str(t)
    try:
        if v is None or isinstance(v, bool):
            return v
        if s == "date" and isinstance(v, int):
            return days_to_date(v)
        if s in ("timestamp", "timestamptz") and isinstance(v, int):
            return micros_to_datetime(v, utc=s == "timestamptz")
        if s == "time" and isinstance(v, int):
            return (_dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=v)).time()
        if s == "time" and isinstance(v, str):
            return _dt.time.fromisoformat(v)
        if isinstance(t, DecimalType) and isinstance(v, (str, int)):
            return decimal.Decimal(v)
        if (t == BinaryType() or isinstance(t, FixedType)) and isinstance(v, str):
            return bytes.fromhex(v)
        if s == "uuid" and isinstance(v, str):
            return _uuid.UUID(v)
    except (ValueError, TypeError, ArithmeticError) as e:
        raise ExpressionError(f"a {kind!r} filter on column {ref.name!r} ({t}): {_short(v)} is not a {t} "
                              f"value ({e})") from None
    return v


def filter_to_json(expr: Optional[ex.Expr]) -> Any:
    """A bound icefloe expression as the spec's ``Predicate`` document. Parts icefloe cannot
    express exactly (``Unknown``) become ``true``, after negations are pushed to the leaves, so the
    server keeps every file the filter may match (the reader applies the whole filter to rows)."""
    if expr is None:
        return True
    return _to_json(ex.rewrite_not(expr))


def _to_json(e: ex.Expr) -> Any:
    if isinstance(e, (ex.AlwaysTrue, ex.Unknown)):
        return True
    if isinstance(e, (ex.AlwaysFalse, ex.AlwaysNull)):
        return False
    if isinstance(e, (ex.And, ex.Or)):
        return {"type": "and" if isinstance(e, ex.And) else "or", "left": _to_json(e.left), "right": _to_json(e.right)}
    if isinstance(e, ex.Not):
        return {"type": "not", "child": _to_json(e.child)}
    if isinstance(e, ex.Predicate) and type(e) in _NAMES and isinstance(e.term, ex.BoundReference):
        doc: JsonObject = {"type": _NAMES[type(e)], "term": e.term.name}
        t = e.term.field_type
        if isinstance(e, ex.SetPredicate):
            doc["values"] = [value_to_json(t, v) for v in e.literals]
        elif isinstance(e, ex.LiteralPredicate):
            doc["value"] = value_to_json(t, e.literal)
        return doc
    return True


# ---------------------------------------------------------------------------- single values
def value_to_json(t: IcebergType, v: Any) -> Any:
    """A value in icefloe's internal form as the spec's single-value JSON for type ``t``."""
    if v is None:
        return None
    s = str(t)
    if s == "date":
        return days_to_date(int(v)).isoformat()
    if s in ("timestamp", "timestamptz"):
        text = micros_to_datetime(int(v)).strftime("%Y-%m-%dT%H:%M:%S.%f")
        return text + "+00:00" if s == "timestamptz" else text
    if s == "time":
        return (_dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=int(v))).strftime("%H:%M:%S.%f")
    if isinstance(t, DecimalType):
        return str(v)
    if s == "uuid":
        return str(v if isinstance(v, _uuid.UUID) else _uuid.UUID(bytes=bytes(v)))
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(cast("bytes | bytearray | memoryview[int]", v)).hex().upper()
    if isinstance(v, float) and v != v:
        return "NaN"
    return v


def value_from_json(t: IcebergType, v: Any) -> Any:
    """The spec's single-value JSON for type ``t`` in icefloe's internal form."""
    if v is None:
        return None
    s = str(t)
    if (t == BinaryType() or isinstance(t, FixedType)) and isinstance(v, str):
        return bytes.fromhex(v)
    if s in ("timestamp", "timestamptz") and isinstance(v, str):
        return to_internal(t, ex.parse_datetime(v))
    if s in ("float", "double") and isinstance(v, str):
        return float(v)
    return to_internal(t, v)


# ---------------------------------------------------------------------------- content files
def content_file_to_json(f: DataFile, partition_type: StructType) -> JsonObject:
    """A data or delete file as the spec's ``ContentFile`` document."""
    doc: JsonObject = {"spec-id": f.spec_id, "content": CONTENT_NAMES[f.content], "file-path": f.file_path,
                 "file-format": f.file_format.lower(),
                 "partition": [value_to_json(pf.field_type, v)
                               for pf, v in zip(partition_type.fields, f.partition)],
                 "file-size-in-bytes": f.file_size_in_bytes, "record-count": f.record_count}
    for key, attr in _METRICS:
        m = getattr(f, attr)
        if m is not None:
            doc[key] = {"keys": list(m), "values": list(m.values())}
    for key, attr in _BOUNDS:
        m = getattr(f, attr)
        if m is not None:
            doc[key] = {"keys": list(m), "values": [bytes(v).hex().upper() for v in m.values()]}
    if f.key_metadata is not None:
        doc["key-metadata"] = bytes(f.key_metadata).hex().upper()
    for key, value in (("split-offsets", f.split_offsets), ("equality-ids", f.equality_ids),
                       ("sort-order-id", f.sort_order_id), ("first-row-id", f.first_row_id)):
        if value is not None:
            doc[key] = list(value) if isinstance(value, (list, tuple)) else value
    if f.content != DATA:
        for key, value in (("referenced-data-file", f.referenced_data_file), ("content-offset", f.content_offset),
                           ("content-size-in-bytes", f.content_size_in_bytes)):
            if value is not None:
                doc[key] = value
    return doc


def content_file_from_json(doc: Any, partition_types: dict[int, StructType]) -> DataFile:
    """The spec's ``ContentFile`` document as a ``DataFile`` (``partition_types``: each spec id's
    partition struct)."""
    if not isinstance(doc, dict):
        raise PlanningError(f"a content file must be an object, not {_short(doc)}")
    doc = cast(JsonObject, doc)
    try:
        spec_id = doc["spec-id"]
        if spec_id not in partition_types:
            raise PlanningError(f"a content file names partition spec {spec_id!r}, which the table does not have")
        ptype = partition_types[spec_id]
        raw: Any = doc.get("partition") or []
        if isinstance(raw, dict):        # Java's parser also reads the partition as an object by field name
            raw = [cast(JsonObject, raw).get(pf.name) for pf in ptype.fields]
        if len(raw) != len(ptype.fields):
            raise PlanningError(f"{doc['file-path']}: {len(raw)} partition values for spec {spec_id}'s "
                                f"{len(ptype.fields)} fields")
        content = CONTENTS.get(str(doc["content"]).lower())
        if content is None:
            raise PlanningError(f"{doc['file-path']}: unknown content {doc['content']!r}")

        def counts(key: str) -> Optional[dict[int, int]]:
            m = doc.get(key)
            return None if m is None else dict(zip(m["keys"], m["values"]))

        def bounds(key: str) -> Optional[dict[int, bytes]]:
            m = doc.get(key)
            return None if m is None else {k: bytes.fromhex(v) for k, v in zip(m["keys"], m["values"])}
        key_metadata = doc.get("key-metadata")
        return DataFile(
            file_path=doc["file-path"], file_format=str(doc["file-format"]).upper(),
            partition=tuple(value_from_json(pf.field_type, v) for pf, v in zip(ptype.fields, raw)),
            record_count=int(doc["record-count"]), file_size_in_bytes=int(doc["file-size-in-bytes"]), content=content,
            column_sizes=counts("column-sizes"), value_counts=counts("value-counts"),
            null_value_counts=counts("null-value-counts"), nan_value_counts=counts("nan-value-counts"),
            lower_bounds=bounds("lower-bounds"), upper_bounds=bounds("upper-bounds"),
            key_metadata=None if key_metadata is None else _key_metadata(key_metadata),
            split_offsets=doc.get("split-offsets"), equality_ids=doc.get("equality-ids"),
            sort_order_id=doc.get("sort-order-id"), spec_id=spec_id,
            referenced_data_file=doc.get("referenced-data-file"), first_row_id=doc.get("first-row-id"),
            content_offset=doc.get("content-offset"), content_size_in_bytes=doc.get("content-size-in-bytes"))
    except PlanningError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise PlanningError(f"a content file is malformed ({type(e).__name__}: {e}): {_short(doc)}") from None


def _key_metadata(v: str) -> bytes:
    try:
        return bytes.fromhex(v)
    except ValueError:
        return base64.b64decode(v)


# ---------------------------------------------------------------------------- scan tasks
def partition_types(meta: TableMetadata) -> dict[int, StructType]:
    """Each partition spec's partition struct, by spec id (bound to the newest schema that holds
    its source columns)."""
    out: dict[int, StructType] = {}
    for spec_id, spec in meta.specs_by_id().items():
        for schema in [meta.schema, *reversed(meta.schemas)]:
            try:
                out[spec_id] = spec.partition_type(schema)
                break
            except IcefloeError:
                continue
    return out


def tasks_to_json(tasks: list[FileScanTask], partition_types: dict[int, StructType], residual: Any = True) -> JsonObject:
    """Scan tasks as the spec's ``file-scan-tasks`` and the ``delete-files`` they reference by
    index (each delete file listed once); ``residual``: the filter document each task carries."""
    deletes: list[JsonObject] = []
    index: dict[str, int] = {}
    out: list[JsonObject] = []
    for t in tasks:
        refs: list[int] = []
        for d in t.deletes:
            if d.delete_key not in index:
                index[d.delete_key] = len(deletes)
                deletes.append(content_file_to_json(d, partition_types[d.spec_id]))
            refs.append(index[d.delete_key])
        doc: JsonObject = {"data-file": content_file_to_json(t.file, partition_types[t.file.spec_id]), "residual-filter": residual}
        if refs:
            doc["delete-file-references"] = refs
        out.append(doc)
    return {"file-scan-tasks": out, "delete-files": deletes}


def tasks_from_json(docs: list[Any], partition_types: dict[int, StructType],
                    specs: dict[int, PartitionSpec]) -> list[FileScanTask]:
    """The ``file-scan-tasks`` of a planning result's answers (each ``ScanTasks`` document with its
    own ``delete-files``) as ``FileScanTask``s with their delete files, numbered so the spec's
    sequence-number rules attach exactly these deletes (module doc)."""
    tasks: list[FileScanTask] = []
    for doc in docs:
        tasks.extend(_tasks(doc, partition_types))
    sequence_order(tasks, specs)
    attach_identity_values(tasks, specs)
    return tasks


def _tasks(doc: JsonObject, partition_types: dict[int, StructType]) -> list[FileScanTask]:
    raw_deletes: Any = doc.get("delete-files") or []
    raw_tasks: Any = doc.get("file-scan-tasks") or []
    if not isinstance(raw_deletes, list) or not isinstance(raw_tasks, list):
        raise PlanningError("file-scan-tasks and delete-files must be arrays")
    deletes = [content_file_from_json(d, partition_types) for d in cast(list[Any], raw_deletes)]
    tasks: list[FileScanTask] = []
    for i, t in enumerate(cast(list[Any], raw_tasks)):
        if not isinstance(t, dict) or "data-file" not in t:
            raise PlanningError(f"file-scan-tasks[{i}] lacks its data-file")
        t = cast(JsonObject, t)
        f = content_file_from_json(t["data-file"], partition_types)
        refs: Any = t.get("delete-file-references") or []
        if not isinstance(refs, list) or \
                not all(isinstance(r, int) and 0 <= r < len(deletes) for r in cast(list[Any], refs)):
            raise PlanningError(f"file-scan-tasks[{i}]: delete-file-references {_short(refs)} are not indexes of "
                                f"the {len(deletes)} delete files")
        tasks.append(FileScanTask(f, 0, [deletes[r] for r in cast(list[int], refs)]))
    return tasks


def sequence_order(tasks: list[FileScanTask], specs: dict[int, PartitionSpec]) -> None:
    """Give ``tasks`` data and delete sequence numbers under which the spec's rules (an equality
    delete applies to the data files of its partition, or of every partition when unpartitioned,
    with a smaller data sequence number; a position delete to those with a smaller or equal one)
    attach exactly the delete files each task lists. An equality delete that some file of its
    scope lacks is newer than that file; the deletes are ordered so every file's attached deletes
    come after its unattached ones, and each file numbered between them."""
    equality: dict[str, DataFile] = {}
    for t in tasks:
        for d in t.deletes:
            if d.content == EQUALITY_DELETES:
                equality[d.delete_key] = d

    def in_scope(d: DataFile, t: FileScanTask) -> bool:
        return specs[d.spec_id].is_unpartitioned or (d.spec_id, d.partition) == t.partition_key
    order: TopologicalSorter[str] = TopologicalSorter({k: () for k in equality})
    attached: list[set[str]] = []
    for t in tasks:
        mine = {d.delete_key for d in t.deletes if d.content == EQUALITY_DELETES}
        attached.append(mine)
        if not mine:
            continue
        for k, d in equality.items():
            if k not in mine and in_scope(d, t):
                for m in mine:
                    order.add(m, k)          # k is older than every delete of t
    try:
        ranks = {k: i for i, k in enumerate(order.static_order())}
    except CycleError:
        raise PlanningError("the server's plan attaches equality deletes to data files in an order no sequence "
                            "numbers can give") from None
    top = 2 * len(ranks) + 2
    for t, mine in zip(tasks, attached):
        t.data_sequence_number = 2 * min(ranks[k] for k in mine) + 1 if mine else top - 1
        for d in t.deletes:
            t.delete_sequence_numbers[d.delete_key] = 2 * ranks[d.delete_key] + 2 if d.delete_key in ranks else top
        for k, d in equality.items():      # a delete in scope but not attached must not reach this file
            if k not in mine and in_scope(d, t) and 2 * ranks[k] + 2 > t.data_sequence_number:
                raise PlanningError(f"the server's plan leaves equality delete {d.file_path} off data file "
                                    f"{t.path} but attaches it to an older one")


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 120 else text[:117] + "..."
