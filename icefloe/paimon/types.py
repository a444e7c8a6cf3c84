"""Paimon data types: the type strings and JSON of schema files, and their mappings.

Atomic types are written as Paimon's SQL strings (``BIGINT NOT NULL``,
``DECIMAL(10, 2)``, ``TIMESTAMP(6)``, ``TIMESTAMP(6) WITH LOCAL TIME ZONE``,
``STRING`` for ``VARCHAR(2147483647)``); ROW, ARRAY, MAP and MULTISET are JSON
objects (``{"type": "ROW", "fields": [...]}``). Only ROW fields carry field ids.

Timestamps: Spark's ``TIMESTAMP`` is an instant (session time zone on display),
which is Paimon's ``TIMESTAMP_LTZ`` (``TIMESTAMP(6) WITH LOCAL TIME ZONE``), and
Spark's ``TIMESTAMP_NTZ`` is Paimon's ``TIMESTAMP(6)`` -- the mapping Paimon's own
Spark connector uses for Spark 3.4+. In Parquet both are INT64 microseconds,
``isAdjustedToUTC`` true for LTZ and false for TIMESTAMP.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional, Union

from icefloe.core import types as core
from icefloe.errors import SchemaError

MAX_LENGTH = 2**31 - 1

_ATOMIC_ROOTS = {
    "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "CHAR", "VARCHAR",
    "BINARY", "VARBINARY", "DECIMAL", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ",
}
_ALIASES = {
    "INTEGER": "INT", "STRING": "VARCHAR", "BYTES": "VARBINARY", "DEC": "DECIMAL",
    "NUMERIC": "DECIMAL", "BOOL": "BOOLEAN", "REAL": "FLOAT", "DOUBLE PRECISION": "DOUBLE",
}


@dataclass(frozen=True)
class AtomicType:
    root: str
    nullable: bool = True
    length: Optional[int] = None      # CHAR, VARCHAR, BINARY, VARBINARY
    precision: Optional[int] = None   # DECIMAL, TIME, TIMESTAMP, TIMESTAMP_LTZ
    scale: Optional[int] = None       # DECIMAL

    def __str__(self) -> str:
        r = self.root
        if r == "VARCHAR" and self.length == MAX_LENGTH:
            s = "STRING"
        elif r == "VARBINARY" and self.length == MAX_LENGTH:
            s = "BYTES"
        elif r in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            s = f"{r}({self.length})"
        elif r == "DECIMAL":
            s = f"DECIMAL({self.precision}, {self.scale})"
        elif r in ("TIME", "TIMESTAMP"):
            s = f"{r}({self.precision})"
        elif r == "TIMESTAMP_LTZ":
            s = f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"
        else:
            s = r
        return s if self.nullable else s + " NOT NULL"

    def copy(self, nullable: bool) -> "AtomicType":
        return replace(self, nullable=nullable)


@dataclass(frozen=True)
class DataField:
    id: int
    name: str
    type: "DataType"
    description: Optional[str] = None


@dataclass(frozen=True)
class RowType:
    fields: tuple
    nullable: bool = True

    def __str__(self) -> str:
        inner = ", ".join(f"`{f.name}` {f.type}" for f in self.fields)
        return f"ROW<{inner}>" + ("" if self.nullable else " NOT NULL")

    def copy(self, nullable: bool) -> "RowType":
        return replace(self, nullable=nullable)


@dataclass(frozen=True)
class ArrayType:
    element: "DataType"
    nullable: bool = True

    def __str__(self) -> str:
        return f"ARRAY<{self.element}>" + ("" if self.nullable else " NOT NULL")

    def copy(self, nullable: bool) -> "ArrayType":
        return replace(self, nullable=nullable)


@dataclass(frozen=True)
class MultisetType:
    element: "DataType"
    nullable: bool = True

    def __str__(self) -> str:
        return f"MULTISET<{self.element}>" + ("" if self.nullable else " NOT NULL")

    def copy(self, nullable: bool) -> "MultisetType":
        return replace(self, nullable=nullable)


@dataclass(frozen=True)
class MapType:
    key: "DataType"
    value: "DataType"
    nullable: bool = True

    def __str__(self) -> str:
        return f"MAP<{self.key}, {self.value}>" + ("" if self.nullable else " NOT NULL")

    def copy(self, nullable: bool) -> "MapType":
        return replace(self, nullable=nullable)


DataType = Union[AtomicType, RowType, ArrayType, MapType, MultisetType]


def is_atomic(t: DataType) -> bool:
    return isinstance(t, AtomicType)


def is_compact_decimal(precision: int) -> bool:
    """A DECIMAL whose unscaled value fits a long lives in the fixed part of a BinaryRow."""
    return precision <= 18


def is_compact_timestamp(precision: int) -> bool:
    """A TIMESTAMP of millisecond precision is one long (epoch millis) in a BinaryRow."""
    return precision <= 3


# --------------------------------------------------------------------------- parsing
_ATOMIC_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z_]+(?: PRECISION)?)\s*"
    r"(?:\(\s*(?P<p>\d+)\s*(?:,\s*(?P<s>\d+)\s*)?\))?\s*"
    r"(?P<ltz>WITH LOCAL TIME ZONE)?\s*(?P<nn>NOT NULL|NULL)?\s*$",
    re.IGNORECASE,
)

_DEFAULT_LENGTH = {"CHAR": 1, "VARCHAR": 1, "BINARY": 1, "VARBINARY": 1}
_DEFAULT_PRECISION = {"TIME": 0, "TIMESTAMP": 6, "TIMESTAMP_LTZ": 6, "DECIMAL": 10}


def parse_atomic(text: str) -> AtomicType:
    """Parse a Paimon SQL type string such as ``DECIMAL(10, 2) NOT NULL``."""
    m = _ATOMIC_RE.match(text)
    if not m:
        raise SchemaError(f"cannot parse Paimon type {text!r}")
    name = m.group("name").upper()
    nullable = (m.group("nn") or "").upper() != "NOT NULL"
    p = int(m.group("p")) if m.group("p") is not None else None
    s = int(m.group("s")) if m.group("s") is not None else None
    max_len = name in ("STRING", "BYTES")
    root = _ALIASES.get(name, name)
    if m.group("ltz"):
        if root != "TIMESTAMP":
            raise SchemaError(f"cannot parse Paimon type {text!r}")
        root = "TIMESTAMP_LTZ"
    if root not in _ATOMIC_ROOTS:
        raise SchemaError(f"unsupported Paimon type {text!r}")
    if root in _DEFAULT_LENGTH:
        length = MAX_LENGTH if max_len else (p if p is not None else _DEFAULT_LENGTH[root])
        return AtomicType(root, nullable, length=length)
    if root == "DECIMAL":
        return AtomicType(root, nullable, precision=p if p is not None else 10, scale=s or 0)
    if root in _DEFAULT_PRECISION:
        return AtomicType(root, nullable, precision=p if p is not None else _DEFAULT_PRECISION[root])
    return AtomicType(root, nullable)


def _nullable_of(type_text: str) -> bool:
    return not type_text.strip().upper().endswith("NOT NULL")


def parse_type(js) -> DataType:
    """A type from schema-file JSON: a string for atomic types, an object otherwise."""
    if isinstance(js, str):
        return parse_atomic(js)
    if not isinstance(js, dict) or "type" not in js:
        raise SchemaError(f"cannot parse Paimon type {js!r}")
    kind = str(js["type"]).strip().upper()
    nullable = _nullable_of(kind)
    if kind.startswith("ROW"):
        return RowType(tuple(parse_field(f) for f in js.get("fields", [])), nullable)
    if kind.startswith("ARRAY"):
        return ArrayType(parse_type(js["element"]), nullable)
    if kind.startswith("MULTISET"):
        return MultisetType(parse_type(js["element"]), nullable)
    if kind.startswith("MAP"):
        return MapType(parse_type(js["key"]), parse_type(js["value"]), nullable)
    return parse_atomic(kind)


def parse_field(js: dict) -> DataField:
    try:
        return DataField(int(js["id"]), str(js["name"]), parse_type(js["type"]), js.get("description"))
    except KeyError as e:
        raise SchemaError(f"schema field {js!r} has no {e.args[0]!r}") from None


def type_to_json(t: DataType):
    if isinstance(t, AtomicType):
        return str(t)
    suffix = "" if t.nullable else " NOT NULL"
    if isinstance(t, RowType):
        return {"type": "ROW" + suffix, "fields": [field_to_json(f) for f in t.fields]}
    if isinstance(t, ArrayType):
        return {"type": "ARRAY" + suffix, "element": type_to_json(t.element)}
    if isinstance(t, MultisetType):
        return {"type": "MULTISET" + suffix, "element": type_to_json(t.element)}
    return {"type": "MAP" + suffix, "key": type_to_json(t.key), "value": type_to_json(t.value)}


def field_to_json(f: DataField) -> dict:
    out = {"id": f.id, "name": f.name, "type": type_to_json(f.type)}
    if f.description is not None:
        out["description"] = f.description
    return out


def highest_field_id(fields) -> int:
    """The largest field id, nested ROW fields included (-1 for no fields)."""
    best = -1
    for f in fields:
        best = max(best, f.id, _highest_in(f.type))
    return best


def _highest_in(t: DataType) -> int:
    if isinstance(t, RowType):
        return highest_field_id(t.fields)
    if isinstance(t, (ArrayType, MultisetType)):
        return _highest_in(t.element)
    if isinstance(t, MapType):
        return max(_highest_in(t.key), _highest_in(t.value))
    return -1


# --------------------------------------------------------------------------- icefloe schema <-> Paimon
def from_core_type(t: core.IcebergType, required: bool, next_id) -> DataType:
    """Paimon type for an icefloe type; ``next_id()`` hands out ids for nested ROW fields."""
    nullable = not required
    if isinstance(t, core.StructType):
        fields = []
        for f in t.fields:
            ft = from_core_type(f.field_type, f.required, next_id)  # children first, like pypaimon
            fields.append(DataField(next_id(), f.name, ft, f.doc))
        return RowType(tuple(fields), nullable)
    if isinstance(t, core.ListType):
        return ArrayType(from_core_type(t.element_type, t.element_required, next_id), nullable)
    if isinstance(t, core.MapType):
        return MapType(from_core_type(t.key_type, True, next_id),
                       from_core_type(t.value_type, t.value_required, next_id), nullable)
    if isinstance(t, core.DecimalType):
        return AtomicType("DECIMAL", nullable, precision=t.precision, scale=t.scale)
    if isinstance(t, core.FixedType):
        return AtomicType("BINARY", nullable, length=t.length)
    s = str(t)
    simple = {"boolean": "BOOLEAN", "tinyint": "TINYINT", "smallint": "SMALLINT", "int": "INT", "long": "BIGINT",
              "float": "FLOAT", "double": "DOUBLE", "date": "DATE"}
    if s in simple:
        return AtomicType(simple[s], nullable)
    if s == "string":
        return AtomicType("VARCHAR", nullable, length=MAX_LENGTH)
    if s == "binary":
        return AtomicType("VARBINARY", nullable, length=MAX_LENGTH)
    if s == "timestamp":
        return AtomicType("TIMESTAMP", nullable, precision=6)
    if s == "timestamptz":
        return AtomicType("TIMESTAMP_LTZ", nullable, precision=6)
    raise SchemaError(f"type {s} has no Paimon equivalent that icefloe's Spark data plane can write")


def fields_from_core_schema(schema: core.Schema) -> list[DataField]:
    """Top-level Paimon fields with fresh ids (0, 1, ...; nested ROW fields interleaved)."""
    counter = [-1]

    def next_id() -> int:
        counter[0] += 1
        return counter[0]

    out = []
    for f in schema.fields:
        fid = next_id()
        out.append(DataField(fid, f.name, from_core_type(f.field_type, f.required, next_id), f.doc))
    return out


def to_core_schema(fields, schema_id: int = 0) -> core.Schema:
    """The icefloe Schema of Paimon fields. Field ids are Paimon's; ARRAY elements and
    MAP keys/values, which have no id in Paimon, get ids above the highest Paimon id."""
    counter = [highest_field_id(fields)]

    def extra_id() -> int:
        counter[0] += 1
        return counter[0]

    def conv(t: DataType) -> core.IcebergType:
        if isinstance(t, RowType):
            return core.StructType([core.NestedField(f.id, f.name, conv(f.type), not f.type.nullable,
                                                     f.description) for f in t.fields])
        if isinstance(t, ArrayType):
            return core.ListType(extra_id(), conv(t.element), not t.element.nullable)
        if isinstance(t, MultisetType):
            return core.MapType(extra_id(), conv(t.element), extra_id(), core.IntegerType(), True)
        if isinstance(t, MapType):
            kid, vid = extra_id(), extra_id()
            return core.MapType(kid, conv(t.key), vid, conv(t.value), not t.value.nullable)
        r = t.root
        if r == "DECIMAL":
            return core.DecimalType(t.precision, t.scale)
        if r == "BINARY":
            return core.FixedType(t.length)
        return core.DDL_PRIMITIVES[{
            "BOOLEAN": "boolean", "TINYINT": "tinyint", "SMALLINT": "smallint", "INT": "int",
            "BIGINT": "long", "FLOAT": "float", "DOUBLE": "double", "CHAR": "string",
            "VARCHAR": "string", "VARBINARY": "binary", "DATE": "date", "TIME": "time",
            "TIMESTAMP": "timestamp", "TIMESTAMP_LTZ": "timestamptz",
        }[r]]

    return core.Schema([core.NestedField(f.id, f.name, conv(f.type), not f.type.nullable, f.description)
                        for f in fields], schema_id=schema_id)


# --------------------------------------------------------------------------- Arrow
def to_arrow_type(t: DataType):
    import pyarrow as pa

    if isinstance(t, RowType):
        return pa.struct([to_arrow_field(f) for f in t.fields])
    if isinstance(t, ArrayType):
        return pa.list_(pa.field("element", to_arrow_type(t.element), nullable=t.element.nullable))
    if isinstance(t, MultisetType):
        return pa.map_(pa.field("key", to_arrow_type(t.element), nullable=False),
                       pa.field("value", pa.int32(), nullable=False))
    if isinstance(t, MapType):
        return pa.map_(pa.field("key", to_arrow_type(t.key), nullable=False),
                       pa.field("value", to_arrow_type(t.value), nullable=t.value.nullable))
    r = t.root
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        p = t.precision
        unit = "s" if p == 0 else "ms" if p <= 3 else "us" if p <= 6 else "ns"
        return pa.timestamp(unit, tz="UTC" if r == "TIMESTAMP_LTZ" else None)
    if r == "DECIMAL":
        return pa.decimal128(t.precision, t.scale)
    if r == "TIME":
        return pa.time32("ms") if t.precision <= 3 else pa.time64("us")
    return {
        "BOOLEAN": pa.bool_(), "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(),
        "BIGINT": pa.int64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "CHAR": pa.string(),
        "VARCHAR": pa.string(), "BINARY": pa.binary(), "VARBINARY": pa.binary(), "DATE": pa.date32(),
    }[r]


def to_arrow_field(f: DataField, with_ids: bool = True):
    import pyarrow as pa

    md = {b"PARQUET:field_id": str(f.id).encode()} if with_ids else None
    return pa.field(f.name, to_arrow_type(f.type), nullable=f.type.nullable, metadata=md)


def to_arrow_schema(fields, with_ids: bool = True):
    import pyarrow as pa

    return pa.schema([to_arrow_field(f, with_ids) for f in fields])


def from_arrow_type(at, nullable: bool, next_id) -> DataType:
    import pyarrow as pa
    import pyarrow.types as pt

    if pt.is_struct(at):
        fields = []
        for i in range(at.num_fields):
            c = at.field(i)
            ft = from_arrow_type(c.type, c.nullable, next_id)
            fields.append(DataField(next_id(), c.name, ft))
        return RowType(tuple(fields), nullable)
    if pt.is_map(at):
        return MapType(from_arrow_type(at.key_type, False, next_id),
                       from_arrow_type(at.item_type, at.item_field.nullable, next_id), nullable)
    if pt.is_list(at) or pt.is_large_list(at):
        return ArrayType(from_arrow_type(at.value_type, at.value_field.nullable, next_id), nullable)
    if pt.is_timestamp(at):
        p = {"s": 0, "ms": 3, "us": 6, "ns": 9}[at.unit]
        return AtomicType("TIMESTAMP_LTZ" if at.tz else "TIMESTAMP", nullable, precision=p)
    if pt.is_decimal(at):
        return AtomicType("DECIMAL", nullable, precision=at.precision, scale=at.scale)
    if pt.is_fixed_size_binary(at):
        return AtomicType("BINARY", nullable, length=at.byte_width)
    if pt.is_string(at) or pt.is_large_string(at) or pa.types.is_string_view(at):
        return AtomicType("VARCHAR", nullable, length=MAX_LENGTH)
    if pt.is_binary(at) or pt.is_large_binary(at):
        return AtomicType("VARBINARY", nullable, length=MAX_LENGTH)
    simple = [(pt.is_boolean, "BOOLEAN"), (pt.is_int8, "TINYINT"), (pt.is_int16, "SMALLINT"),
              (pt.is_int32, "INT"), (pt.is_int64, "BIGINT"), (pt.is_float32, "FLOAT"),
              (pt.is_float64, "DOUBLE"), (pt.is_date32, "DATE")]
    for pred, root in simple:
        if pred(at):
            return AtomicType(root, nullable)
    raise SchemaError(f"Arrow type {at} has no Paimon type icefloe supports")


def fields_from_arrow_schema(arrow_schema) -> list[DataField]:
    counter = [-1]

    def next_id() -> int:
        counter[0] += 1
        return counter[0]

    out = []
    for f in arrow_schema:
        fid = next_id()
        desc = (f.metadata or {}).get(b"description")
        out.append(DataField(fid, f.name, from_arrow_type(f.type, f.nullable, next_id),
                             desc.decode() if desc else None))
    return out


# --------------------------------------------------------------------------- Spark
def to_spark_type(t: DataType, with_ids: bool = True):
    from pyspark.sql import types as T

    if isinstance(t, RowType):
        return T.StructType([to_spark_field(f, with_ids) for f in t.fields])
    if isinstance(t, ArrayType):
        return T.ArrayType(to_spark_type(t.element, with_ids), containsNull=t.element.nullable)
    if isinstance(t, MultisetType):
        return T.MapType(to_spark_type(t.element, with_ids), T.IntegerType(), valueContainsNull=False)
    if isinstance(t, MapType):
        return T.MapType(to_spark_type(t.key, with_ids), to_spark_type(t.value, with_ids),
                         valueContainsNull=t.value.nullable)
    r = t.root
    if r == "DECIMAL":
        return T.DecimalType(t.precision, t.scale)
    if r == "TIME":
        raise SchemaError("Paimon TIME columns cannot be read or written with Spark")
    return {
        "BOOLEAN": T.BooleanType(), "TINYINT": T.ByteType(), "SMALLINT": T.ShortType(),
        "INT": T.IntegerType(), "BIGINT": T.LongType(), "FLOAT": T.FloatType(),
        "DOUBLE": T.DoubleType(), "CHAR": T.StringType(), "VARCHAR": T.StringType(),
        "BINARY": T.BinaryType(), "VARBINARY": T.BinaryType(), "DATE": T.DateType(),
        "TIMESTAMP": T.TimestampNTZType(), "TIMESTAMP_LTZ": T.TimestampType(),
    }[r]


def from_spark_type(st, nullable: bool, next_id) -> DataType:
    """Paimon type of a Spark type (Spark TIMESTAMP -> TIMESTAMP_LTZ, TIMESTAMP_NTZ -> TIMESTAMP)."""
    from pyspark.sql import types as T

    if isinstance(st, T.StructType):
        fields = []
        for c in st.fields:
            ft = from_spark_type(c.dataType, c.nullable, next_id)
            fields.append(DataField(next_id(), c.name, ft, c.metadata.get("comment") if c.metadata else None))
        return RowType(tuple(fields), nullable)
    if isinstance(st, T.ArrayType):
        return ArrayType(from_spark_type(st.elementType, st.containsNull, next_id), nullable)
    if isinstance(st, T.MapType):
        return MapType(from_spark_type(st.keyType, False, next_id),
                       from_spark_type(st.valueType, st.valueContainsNull, next_id), nullable)
    if isinstance(st, T.DecimalType):
        return AtomicType("DECIMAL", nullable, precision=st.precision, scale=st.scale)
    if isinstance(st, (T.StringType, T.VarcharType, T.CharType)):
        return AtomicType("VARCHAR", nullable, length=MAX_LENGTH)
    if isinstance(st, T.BinaryType):
        return AtomicType("VARBINARY", nullable, length=MAX_LENGTH)
    if isinstance(st, T.TimestampNTZType):
        return AtomicType("TIMESTAMP", nullable, precision=6)
    if isinstance(st, T.TimestampType):
        return AtomicType("TIMESTAMP_LTZ", nullable, precision=6)
    simple = [(T.BooleanType, "BOOLEAN"), (T.ByteType, "TINYINT"), (T.ShortType, "SMALLINT"),
              (T.IntegerType, "INT"), (T.LongType, "BIGINT"), (T.FloatType, "FLOAT"),
              (T.DoubleType, "DOUBLE"), (T.DateType, "DATE")]
    for cls, root in simple:
        if isinstance(st, cls):
            return AtomicType(root, nullable)
    raise SchemaError(f"Spark type {st.simpleString()} has no Paimon type icefloe supports")


def fields_from_spark_schema(spark_schema) -> list[DataField]:
    counter = [-1]

    def next_id() -> int:
        counter[0] += 1
        return counter[0]

    out = []
    for c in spark_schema.fields:
        fid = next_id()
        out.append(DataField(fid, c.name, from_spark_type(c.dataType, c.nullable, next_id),
                             c.metadata.get("comment") if c.metadata else None))
    return out


def to_spark_field(f: DataField, with_ids: bool = True):
    """A Spark field. ``with_ids`` adds ``parquet.field.id`` so Spark's writer records
    Paimon's field ids in the Parquet schema, as Paimon's own writer does; reads match
    columns by name (like Paimon), so they must use ``with_ids=False``."""
    from pyspark.sql import types as T

    md = {"parquet.field.id": f.id} if with_ids else {}
    if f.description:
        md["comment"] = f.description
    return T.StructField(f.name, to_spark_type(f.type, with_ids), nullable=f.type.nullable, metadata=md)


def to_spark_schema(fields, with_ids: bool = True):
    from pyspark.sql import types as T

    return T.StructType([to_spark_field(f, with_ids) for f in fields])


def field_by_name(fields, name: str) -> DataField:
    for f in fields:
        if f.name == name:
            return f
    lowered = [f for f in fields if f.name.lower() == name.lower()]
    if len(lowered) == 1:
        return lowered[0]
    raise SchemaError(f"no column {name!r}; columns are {', '.join(f.name for f in fields)}")


__all__ = [
    "AtomicType", "RowType", "ArrayType", "MapType", "MultisetType", "DataField", "DataType",
    "parse_type", "parse_atomic", "parse_field", "type_to_json", "field_to_json", "highest_field_id",
    "to_arrow_type", "to_arrow_schema", "to_spark_type", "to_spark_schema", "to_core_schema",
    "fields_from_core_schema", "fields_from_arrow_schema", "is_compact_decimal", "is_compact_timestamp",
]
