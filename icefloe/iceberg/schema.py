# pyright: strict
"""Schemas in table metadata (Iceberg spec, "Schemas" and Appendix C JSON serialization)."""
from __future__ import annotations

import dataclasses
import datetime
import decimal
import uuid
from typing import Any, Optional, Union, cast, overload

from icefloe.core.types import (
    BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType, IcebergType, IntegerType,
    ListType, LongType, MapType, NestedField, Schema, StringType, StructType, TimestampType, TimestamptzType,
    UUIDType, primitive_from_string,
)
from icefloe.core.types.model import contains_nanos, is_nanos, scale_of
from icefloe.core.types.model import UnknownType
from icefloe.errors import SchemaError, UnsupportedFeatureError


def type_to_json(t: IcebergType) -> Any:
    if isinstance(t, StructType):
        return {"type": "struct", "fields": [field_to_json(f) for f in t.fields]}
    if isinstance(t, ListType):
        return {"type": "list", "element-id": t.element_id, "element": type_to_json(t.element_type),
                "element-required": t.element_required}
    if isinstance(t, MapType):
        return {"type": "map", "key-id": t.key_id, "key": type_to_json(t.key_type),
                "value-id": t.value_id, "value": type_to_json(t.value_type),
                "value-required": t.value_required}
    if isinstance(t, DecimalType):
        return f"decimal({t.precision}, {t.scale})"
    return str(t)


def field_to_json(f: NestedField) -> dict[str, Any]:
    d: dict[str, Any] = {"id": f.field_id, "name": f.name, "required": f.required, "type": type_to_json(f.field_type)}
    if f.doc:
        d["doc"] = f.doc
    if f.initial_default is not None:
        d["initial-default"] = f.initial_default
    if f.write_default is not None:
        d["write-default"] = f.write_default
    return d


def schema_to_json(schema: Schema) -> dict[str, Any]:
    d: dict[str, Any] = {"type": "struct", "schema-id": schema.schema_id}
    if schema.identifier_field_ids:
        d["identifier-field-ids"] = list(schema.identifier_field_ids)
    d["fields"] = [field_to_json(f) for f in schema.fields]
    return d


def type_from_json(obj: Any) -> IcebergType:
    if isinstance(obj, str):
        return primitive_from_string(obj)
    if not isinstance(obj, dict):
        raise SchemaError(f"cannot read type from {obj!r}")
    obj = cast("dict[str, Any]", obj)          # a JSON object
    kind = obj.get("type")
    if kind == "struct":
        fields: list[dict[str, Any]] = obj["fields"]
        return StructType([field_from_json(f) for f in fields])
    if kind == "list":
        return ListType(obj["element-id"], type_from_json(obj["element"]), obj.get("element-required", False))
    if kind == "map":
        return MapType(obj["key-id"], type_from_json(obj["key"]), obj["value-id"],
                       type_from_json(obj["value"]), obj.get("value-required", False))
    raise SchemaError(f"unknown type {kind!r}")


def field_from_json(obj: dict[str, Any]) -> NestedField:
    return NestedField(obj["id"], obj["name"], type_from_json(obj["type"]), bool(obj.get("required", False)),
                       obj.get("doc"), obj.get("initial-default"), obj.get("write-default"))


def schema_from_json(obj: dict[str, Any]) -> Schema:
    fields: list[dict[str, Any]] = obj["fields"]
    return Schema([field_from_json(f) for f in fields], schema_id=obj.get("schema-id", 0),
                  identifier_field_ids=obj.get("identifier-field-ids"))


def name_mapping(schema: Schema) -> list[dict[str, Any]]:
    """The default name mapping (spec: "Column Projection"), for files written without ids."""

    def fields(t: IcebergType) -> list[dict[str, Any]]:
        if isinstance(t, StructType):
            return [entry(f) for f in t.fields]
        if isinstance(t, ListType):
            return [entry(t.element_field)]
        if isinstance(t, MapType):
            return [entry(t.key_field), entry(t.value_field)]
        return []

    def entry(f: NestedField) -> dict[str, Any]:
        d: dict[str, Any] = {"field-id": f.field_id, "names": [f.name]}
        sub = fields(f.field_type)
        if sub:
            d["fields"] = sub
        return d

    return fields(schema.struct)


def stored_type(t: IcebergType, path: str = "column") -> Optional[IcebergType]:
    """``t`` as data files hold it: format v3's ``unknown`` is never stored (the spec), so a struct
    field of that type, at any depth, is left out, and an ``unknown`` column is None. A list element,
    map key or map value of type ``unknown``, or a struct holding nothing else, has no stored form
    (Parquet has no empty group), as in Iceberg's Java writer: ``UnsupportedFeatureError`` naming
    ``path``."""
    if isinstance(t, UnknownType):
        return None
    if isinstance(t, StructType):
        kept: list[NestedField] = []
        for f in t.fields:
            st = stored_type(f.field_type, f"{path}.{f.name}")
            if st is not None:
                kept.append(f if st is f.field_type else dataclasses.replace(f, field_type=st))
        if not kept:
            raise UnsupportedFeatureError(f"struct {path!r} holds only fields of type unknown, which data files "
                                          "never store: it has no stored form")
        return t if len(kept) == len(t.fields) and all(k is f for k, f in zip(kept, t.fields)) else StructType(kept)
    if isinstance(t, ListType):
        element = _stored_part(t.element_type, f"{path}.element")
        return t if element is t.element_type else ListType(t.element_id, element, t.element_required)
    if isinstance(t, MapType):
        key, value = _stored_part(t.key_type, f"{path}.key"), _stored_part(t.value_type, f"{path}.value")
        if key is t.key_type and value is t.value_type:
            return t
        return MapType(t.key_id, key, t.value_id, value, t.value_required)
    return t


def _stored_part(t: IcebergType, path: str) -> IcebergType:
    out = stored_type(t, path)
    if out is None:
        raise UnsupportedFeatureError(f"{path!r} is of type unknown, which data files never store; a list "
                                      "element or map key or value of that type has no stored form")
    return out


def stored_schema(schema: Schema) -> Schema:
    """``schema`` as data files hold it (``stored_type``): no ``unknown`` field at any depth."""
    fields: list[NestedField] = []
    for f in schema.fields:
        st = stored_type(f.field_type, f.name)
        if st is None:
            continue
        fields.append(f if st is f.field_type else dataclasses.replace(f, field_type=st))
    kept = {f.field_id for f in fields}
    return Schema(fields, schema.schema_id, [i for i in schema.identifier_field_ids or [] if i in kept])


def nanos_as_long(schema: Schema) -> Schema:
    """``schema`` with each nanosecond timestamp (format v3's ``_ns`` types), at any depth, as
    ``long``, without defaults: its raw nanoseconds since the epoch, as a rewrite carries them
    through an engine that holds microseconds (Spark) unchanged."""
    return Schema(nanos_type_as_long(schema.struct).fields, schema.schema_id, schema.identifier_field_ids)


@overload
def nanos_type_as_long(t: StructType) -> StructType: ...
@overload
def nanos_type_as_long(t: IcebergType) -> IcebergType: ...
def nanos_type_as_long(t: IcebergType) -> IcebergType:
    """Type ``t`` with each nanosecond timestamp in it as ``long`` (``nanos_as_long``)."""
    if isinstance(t, StructType):
        return StructType([dataclasses.replace(f, field_type=nanos_type_as_long(f.field_type), initial_default=None,
                                               write_default=None) if contains_nanos(f.field_type) else f
                           for f in t.fields])
    if isinstance(t, ListType):
        return ListType(t.element_id, nanos_type_as_long(t.element_type), t.element_required)
    if isinstance(t, MapType):
        return MapType(t.key_id, nanos_type_as_long(t.key_type), t.value_id, nanos_type_as_long(t.value_type),
                       t.value_required, t.key_required)
    return primitive_from_string("long") if is_nanos(t) else t


# JSON single values that stand as they are, each for the types it serves
_PLAIN_DEFAULTS = ((BooleanType, (bool,), "a boolean"), ((IntegerType, LongType), (int,), "an integer"),
                   (StringType, (str,), "a string"), ((FloatType, DoubleType), (int, float), "a number"))


def default_value(t: IcebergType, value: Any) -> Any:
    """A field default in the spec's JSON single-value form ("Appendix C") as the value icefloe
    holds for type ``t`` (dates, timestamps, decimals, UUIDs and bytes as Python objects)."""
    if value is None:
        return None
    for types, kinds, what in _PLAIN_DEFAULTS:
        if isinstance(t, types):
            if type(value) not in kinds:          # exact types: a JSON true is not an integer
                raise ValueError(f"{value!r} is not {what}")
            return float(value) if isinstance(t, (FloatType, DoubleType)) else value
    if isinstance(t, DecimalType):
        return decimal.Decimal(str(value))
    if isinstance(t, DateType):
        return datetime.date.fromisoformat(value)
    if isinstance(t, (TimestampType, TimestamptzType)):
        text = str(value)
        if "." in text:                           # at most microseconds: Python's datetime holds no more
            head, frac = text.split(".", 1)
            digits = "".join(ch for ch in frac if ch.isdigit())
            zone = frac[len(digits):]
            text = f"{head}.{digits[:6].ljust(6, '0')}{zone}"
        return _as_timestamp(t, datetime.datetime.fromisoformat(text))
    if isinstance(t, UUIDType):
        return uuid.UUID(str(value))
    if isinstance(t, (BinaryType, FixedType)):
        return bytes.fromhex(value)
    if isinstance(t, (StructType, ListType, MapType)):
        raise SchemaError(f"default values of nested type {t} are not supported")
    return value


def _as_timestamp(t: IcebergType, ts: datetime.datetime) -> datetime.datetime:
    """``ts`` as a value of ``t``: an instant in UTC (a naive one taken as UTC), or naive."""
    if isinstance(t, TimestamptzType):
        return ts.astimezone(datetime.timezone.utc) if ts.tzinfo else ts.replace(tzinfo=datetime.timezone.utc)
    return ts.replace(tzinfo=None)


def default_json(t: IcebergType, value: Any, column: str = "the column") -> Union[int, float, str]:
    """``value`` (a Python value, or its JSON single-value text) as a default of type ``t`` in the
    spec's JSON form; a value that does not fit the type is a ``SchemaError`` naming the column."""
    try:
        if isinstance(value, datetime.datetime) and isinstance(t, (TimestampType, TimestamptzType)):
            v = _as_timestamp(t, value)
        elif isinstance(value, (datetime.date, decimal.Decimal, uuid.UUID)):
            v = value
        elif isinstance(value, (bytes, bytearray)) and isinstance(t, (BinaryType, FixedType)):
            v = bytes(value)
        else:
            v = default_value(t, value)
    except (ValueError, TypeError, decimal.InvalidOperation) as e:
        raise SchemaError(f"default value {value!r} of {column} does not fit its type {t}: {e}") from None
    if isinstance(v, (int, float, str)):
        return v
    if isinstance(v, decimal.Decimal):
        return str(v.quantize(decimal.Decimal(1).scaleb(-scale_of(t))))
    if isinstance(v, datetime.datetime):
        return v.isoformat(timespec="microseconds")
    if isinstance(v, (datetime.date, uuid.UUID)):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex().upper()
    raise SchemaError(f"default value {value!r} of {column} cannot be stored")
