# pyright: strict
"""Paimon's data types: the type strings and JSON of schema files, in Paimon's words, over
the shared type system of ``icefloe.core.types``.

Atomic types are written as Paimon's SQL strings (``BIGINT NOT NULL``,
``DECIMAL(10, 2)``, ``TIMESTAMP(6)``, ``TIMESTAMP(6) WITH LOCAL TIME ZONE``,
``STRING`` for ``VARCHAR(2147483647)``); ROW, ARRAY, MAP and MULTISET are JSON
objects (``{"type": "ROW", "fields": [...]}``). Only ROW fields carry field ids:
ARRAY elements, MAP keys and values and MULTISET elements hold ``core.NO_ID`` until
``to_core_schema`` numbers them above the highest field id.

Paimon puts nullability on the type (``INT NOT NULL``); the shared types put it on the
field or container (``required``, ``element_required``...). A Paimon field is a
``DataField``: a shared ``NestedField`` that also answers in Paimon's words (``id``,
``type``, ``description``, ``nullable``).

Each Paimon type is one shared type: CHAR(n) ``CharType``, VARCHAR(n) ``VarCharType``
(STRING ``StringType``), BINARY(n) ``FixedType``, VARBINARY(n) ``VarBinaryType`` (BYTES
``BinaryType``), TINYINT ``ByteType``, SMALLINT ``ShortType``, TIME(p) ``TimeType(p)``,
TIMESTAMP(p) ``TimestampType(p)``, TIMESTAMP(p) WITH LOCAL TIME ZONE
``TimestamptzType(p)``, MULTISET ``MultisetType``.

Timestamps: Spark's ``TIMESTAMP`` is an instant (session time zone on display),
which is Paimon's ``TIMESTAMP_LTZ`` (``TIMESTAMP(6) WITH LOCAL TIME ZONE``), and
Spark's ``TIMESTAMP_NTZ`` is Paimon's ``TIMESTAMP(6)`` -- the mapping Paimon's own
Spark connector uses for Spark 3.4+. In Parquet both are INT64 microseconds,
``isAdjustedToUTC`` true for LTZ and false for TIMESTAMP.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Union, cast

from icefloe.core import types as core
from icefloe.errors import SchemaError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import types as T

MAX_LENGTH = 2**31 - 1
NO_ID = core.NO_ID

# A type in a schema file: Paimon's SQL string for an atomic type, a JSON object for ROW, ARRAY,
# MAP and MULTISET (``{"type": "ROW", "fields": [...]}``).
TypeJson = Union[str, dict[str, Any]]

_ALIASES = {
    "INTEGER": "INT", "STRING": "VARCHAR", "BYTES": "VARBINARY", "DEC": "DECIMAL",
    "NUMERIC": "DECIMAL", "BOOL": "BOOLEAN", "REAL": "FLOAT", "DOUBLE PRECISION": "DOUBLE",
}
_SIMPLE = {
    "BOOLEAN": core.BooleanType(), "TINYINT": core.ByteType(), "SMALLINT": core.ShortType(),
    "INT": core.IntegerType(), "BIGINT": core.LongType(), "FLOAT": core.FloatType(),
    "DOUBLE": core.DoubleType(), "DATE": core.DateType(),
}


class DataField(core.NestedField):
    """A field of a Paimon schema: the shared field, named the way schema files name it."""

    def __init__(self, id: int, name: str, type: core.IcebergType, description: Optional[str] = None,
                 nullable: bool = True):
        super().__init__(id, name, type, not nullable, description)

    @property
    def id(self) -> int:
        return self.field_id

    @property
    def type(self) -> core.IcebergType:
        return self.field_type

    @property
    def description(self) -> Optional[str]:
        return self.doc

    @property
    def nullable(self) -> bool:
        return not self.required

    @property
    def type_string(self) -> str:
        """The field's type as Paimon writes it (``BIGINT NOT NULL``, ``ROW<`a` INT>``)."""
        return type_string(self.type, self.nullable)

    def copy(self, **changes: Any) -> "DataField":
        """This field with some of ``id``, ``name``, ``type``, ``description``, ``nullable`` changed."""
        now: dict[str, Any] = dict(id=self.id, name=self.name, type=self.type, description=self.description,
                                   nullable=self.nullable)
        now.update(changes)
        return DataField(**now)

    def __repr__(self) -> str:
        return f"DataField({self.id}, {self.name!r}, {type_string(self.type, self.nullable)})"


_ROOT_BY_CLASS: dict[type[core.IcebergType], str] = {
    **{type(t): r for r, t in _SIMPLE.items()},
    core.CharType: "CHAR", core.VarCharType: "VARCHAR", core.StringType: "VARCHAR", core.FixedType: "BINARY",
    core.VarBinaryType: "VARBINARY", core.BinaryType: "VARBINARY", core.DecimalType: "DECIMAL",
    core.TimeType: "TIME", core.TimestampType: "TIMESTAMP", core.TimestamptzType: "TIMESTAMP_LTZ",
}


def root(t: core.IcebergType) -> Optional[str]:
    """Paimon's name for an atomic type's kind (``INT``, ``VARCHAR``, ``TIMESTAMP_LTZ``...);
    None for ROW, ARRAY, MAP and MULTISET. (Called per value when rows are decoded: one
    dictionary lookup.)"""
    r = _ROOT_BY_CLASS.get(type(t))
    if r is not None:
        return r
    if not t.is_primitive:
        return None
    raise SchemaError(f"type {t} has no Paimon equivalent")


def length(t: core.IcebergType) -> int:
    """The declared length of a CHAR, VARCHAR, BINARY or VARBINARY (the maximum for STRING/BYTES)."""
    return getattr(t, "length", MAX_LENGTH)


def is_compact_decimal(precision: int) -> bool:
    """A DECIMAL whose unscaled value fits a long lives in the fixed part of a BinaryRow."""
    return precision <= 18


def is_compact_timestamp(precision: int) -> bool:
    """A TIMESTAMP of millisecond precision is one long (epoch millis) in a BinaryRow."""
    return precision <= 3


# --------------------------------------------------------------------------- type strings
def type_string(t: core.IcebergType, nullable: bool = True) -> str:
    """Paimon's SQL string of a type (``DECIMAL(10, 2) NOT NULL``, ``ROW<`a` INT>``,
    ``MAP<STRING NOT NULL, BIGINT>``): what schema files hold for atomic types."""
    r = root(t)
    if r is None:
        if isinstance(t, core.StructType):
            s = "ROW<" + ", ".join(f"`{f.name}` {type_string(f.field_type, not f.required)}"
                                   for f in t.fields) + ">"
        elif isinstance(t, (core.ListType, core.MultisetType)):
            kind = "ARRAY" if isinstance(t, core.ListType) else "MULTISET"
            s = f"{kind}<{type_string(t.element_type, not t.element_required)}>"
        elif isinstance(t, core.MapType):
            s = (f"MAP<{type_string(t.key_type, not t.key_required)}, "
                 f"{type_string(t.value_type, not t.value_required)}>")
        else:
            raise SchemaError(f"type {t} has no Paimon form")
    elif r == "VARCHAR":
        s = "STRING" if length(t) == MAX_LENGTH else f"VARCHAR({length(t)})"
    elif r == "VARBINARY":
        s = "BYTES" if length(t) == MAX_LENGTH else f"VARBINARY({length(t)})"
    elif r in ("CHAR", "BINARY"):
        s = f"{r}({length(t)})"
    elif r == "DECIMAL":
        s = f"DECIMAL({core.precision_of(t)}, {core.scale_of(t)})"
    elif r in ("TIME", "TIMESTAMP"):
        s = f"{r}({core.precision_of(t)})"
    elif r == "TIMESTAMP_LTZ":
        s = f"TIMESTAMP({core.precision_of(t)}) WITH LOCAL TIME ZONE"
    else:
        s = r
    return s if nullable else s + " NOT NULL"


_ATOMIC_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z_]+(?: PRECISION)?)\s*"
    r"(?:\(\s*(?P<p>\d+)\s*(?:,\s*(?P<s>\d+)\s*)?\))?\s*"
    r"(?P<ltz>WITH LOCAL TIME ZONE)?\s*(?P<nn>NOT NULL|NULL)?\s*$",
    re.IGNORECASE,
)


def parse_atomic_nullable(text: str) -> tuple[core.IcebergType, bool]:
    """A Paimon SQL type string such as ``DECIMAL(10, 2) NOT NULL`` as (type, nullable)."""
    m = _ATOMIC_RE.match(text)
    if not m:
        raise SchemaError(f"cannot parse Paimon type {text!r}")
    name = m.group("name").upper()
    nullable = (m.group("nn") or "").upper() != "NOT NULL"
    p = int(m.group("p")) if m.group("p") is not None else None
    s = int(m.group("s")) if m.group("s") is not None else None
    r = _ALIASES.get(name, name)
    if m.group("ltz") and r != "TIMESTAMP":
        raise SchemaError(f"cannot parse Paimon type {text!r}")
    if r in _SIMPLE:
        return _SIMPLE[r], nullable
    if r in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
        n = MAX_LENGTH if name in ("STRING", "BYTES") else (p if p is not None else 1)
        if r == "CHAR":
            return core.CharType(n), nullable
        if r == "BINARY":
            return core.FixedType(n), nullable
        if n == MAX_LENGTH:
            return (core.StringType() if r == "VARCHAR" else core.BinaryType()), nullable
        return (core.VarCharType(n) if r == "VARCHAR" else core.VarBinaryType(n)), nullable
    if r == "DECIMAL":
        return core.DecimalType(p if p is not None else 10, s or 0), nullable
    if r == "TIME":
        return core.TimeType(p if p is not None else 0), nullable
    if r == "TIMESTAMP":
        cls = core.TimestamptzType if m.group("ltz") else core.TimestampType
        return cls(p if p is not None else 6), nullable
    if r == "TIMESTAMP_LTZ":
        return core.TimestamptzType(p if p is not None else 6), nullable
    raise SchemaError(f"unsupported Paimon type {text!r}")


def parse_atomic(text: str) -> core.IcebergType:
    """The type of a Paimon SQL type string (its NOT NULL, if any, dropped)."""
    return parse_atomic_nullable(text)[0]


# --------------------------------------------------------------------------- schema-file JSON
def parse_type(js: object) -> tuple[core.IcebergType, bool]:
    """(type, nullable) of schema-file JSON: a string for atomic types, an object otherwise."""
    if isinstance(js, str):
        return parse_atomic_nullable(js)
    if not isinstance(js, dict) or "type" not in js:
        raise SchemaError(f"cannot parse Paimon type {js!r}")
    js = cast(dict[str, Any], js)  # a JSON object of a schema file
    kind = str(js["type"]).strip().upper()
    nullable = not kind.endswith("NOT NULL")
    if kind.startswith("ROW"):
        return core.StructType([parse_field(f) for f in js.get("fields", [])]), nullable
    if kind.startswith("ARRAY"):
        e, e_null = parse_type(js["element"])
        return core.ListType(NO_ID, e, not e_null), nullable
    if kind.startswith("MULTISET"):
        e, e_null = parse_type(js["element"])
        return core.MultisetType(NO_ID, e, not e_null), nullable
    if kind.startswith("MAP"):
        (k, k_null), (v, v_null) = parse_type(js["key"]), parse_type(js["value"])
        return core.MapType(NO_ID, k, NO_ID, v, not v_null, not k_null), nullable
    return parse_atomic_nullable(kind)


def parse_field(js: Mapping[str, Any]) -> DataField:
    try:
        t, nullable = parse_type(js["type"])
        return DataField(int(js["id"]), str(js["name"]), t, js.get("description"), nullable)
    except KeyError as e:
        raise SchemaError(f"schema field {js!r} has no {e.args[0]!r}") from None


def type_to_json(t: core.IcebergType, nullable: bool = True) -> TypeJson:
    suffix = "" if nullable else " NOT NULL"
    if isinstance(t, core.StructType):
        return {"type": "ROW" + suffix, "fields": [field_to_json(f) for f in t.fields]}
    if isinstance(t, core.ListType):
        return {"type": "ARRAY" + suffix, "element": type_to_json(t.element_type, not t.element_required)}
    if isinstance(t, core.MultisetType):
        return {"type": "MULTISET" + suffix, "element": type_to_json(t.element_type, not t.element_required)}
    if isinstance(t, core.MapType):
        return {"type": "MAP" + suffix, "key": type_to_json(t.key_type, not t.key_required),
                "value": type_to_json(t.value_type, not t.value_required)}
    return type_string(t, nullable)


def field_to_json(f: core.NestedField) -> dict[str, Any]:
    out: dict[str, Any] = {"id": f.field_id, "name": f.name, "type": type_to_json(f.field_type, not f.required)}
    if f.doc is not None:
        out["description"] = f.doc
    return out


def highest_field_id(fields: Iterable[core.NestedField]) -> int:
    """The largest field id, nested ROW fields included (-1 for no fields)."""
    best = -1
    for f in fields:
        best = max(best, f.field_id, _highest_in(f.field_type))
    return best


def _highest_in(t: core.IcebergType) -> int:
    if isinstance(t, core.StructType):
        return highest_field_id(t.fields)
    if isinstance(t, (core.ListType, core.MultisetType)):
        return _highest_in(t.element_type)
    if isinstance(t, core.MapType):
        return max(_highest_in(t.key_type), _highest_in(t.value_type))
    return -1


# --------------------------------------------------------------------------- shared schemas <-> Paimon fields
def from_core_type(t: core.IcebergType, next_id: Callable[[], int]) -> core.IcebergType:
    """``t`` with Paimon's field ids: ``next_id()`` numbers nested ROW fields, children
    before their parent (as pypaimon does); elements, keys and values get NO_ID."""
    if isinstance(t, core.StructType):
        fields: list[core.NestedField] = []
        for f in t.fields:
            ft = from_core_type(f.field_type, next_id)
            fields.append(DataField(next_id(), f.name, ft, f.doc, not f.required))
        return core.StructType(fields)
    if isinstance(t, core.ListType):
        return core.ListType(NO_ID, from_core_type(t.element_type, next_id), t.element_required)
    if isinstance(t, core.MultisetType):
        return core.MultisetType(NO_ID, from_core_type(t.element_type, next_id), t.element_required)
    if isinstance(t, core.MapType):
        return core.MapType(NO_ID, from_core_type(t.key_type, next_id), NO_ID,
                            from_core_type(t.value_type, next_id), t.value_required, t.key_required)
    if isinstance(t, (core.UUIDType, core.TimeType)):
        raise SchemaError(f"type {t} has no Paimon equivalent that icefloe's Spark data plane can write")
    root(t)  # refuses what Paimon has no type for
    return t


def fields_from_core_schema(schema: core.Schema) -> list[DataField]:
    """Top-level Paimon fields with fresh ids (0, 1, ...; nested ROW fields interleaved)."""
    counter = [-1]

    def next_id() -> int:
        counter[0] += 1
        return counter[0]

    out: list[DataField] = []
    for f in schema.fields:
        fid = next_id()
        out.append(DataField(fid, f.name, from_core_type(f.field_type, next_id), f.doc, not f.required))
    return out


def to_core_schema(fields: Iterable[core.NestedField], schema_id: int = 0) -> core.Schema:
    """The shared Schema of Paimon fields. Field ids are Paimon's; ARRAY elements, MAP
    keys/values and MULTISET elements, which have no id in Paimon, are numbered above
    the highest Paimon id."""
    fields = list(fields)
    counter = [highest_field_id(fields)]

    def extra_id() -> int:
        counter[0] += 1
        return counter[0]

    numbered = core.number_unset_ids(core.StructType(fields), extra_id)
    return core.Schema(numbered.fields, schema_id=schema_id)


def fields_from_arrow_schema(arrow_schema: pa.Schema) -> list[DataField]:
    """Paimon fields of an Arrow schema: timestamps keep their unit as precision."""
    return fields_from_core_schema(core.from_arrow_schema(arrow_schema, precise=True))


def fields_from_spark_schema(spark_schema: T.DataType) -> list[DataField]:
    """Paimon fields of a Spark schema (Spark TIMESTAMP -> TIMESTAMP_LTZ, TIMESTAMP_NTZ -> TIMESTAMP)."""
    return fields_from_core_schema(core.from_spark_schema(spark_schema))


# --------------------------------------------------------------------------- Arrow and Spark
def to_arrow_type(t: core.IcebergType) -> pa.DataType:
    """The Arrow type of a Paimon column (BINARY(n) is variable-length binary in Paimon's files)."""
    return core.to_arrow_type(t, with_ids=False, fixed_as_binary=True)


def to_arrow_schema(fields: Iterable[core.NestedField], with_ids: bool = True) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([core.to_arrow_field(f, with_ids, fixed_as_binary=True) for f in fields])


def to_spark_type(t: core.IcebergType, with_ids: bool = True) -> T.DataType:
    return core.to_spark_type(t, with_ids=with_ids)


def to_spark_field(f: core.NestedField, with_ids: bool = True) -> T.StructField:
    """A Spark field. ``with_ids`` adds ``parquet.field.id`` so Spark's writer records
    Paimon's field ids in the Parquet schema, as Paimon's own writer does; reads match
    columns by name (like Paimon), so they must use ``with_ids=False``."""
    return core.to_spark_field(f, with_ids=with_ids)


def to_spark_schema(fields: Iterable[core.NestedField], with_ids: bool = True) -> T.StructType:
    from pyspark.sql import types as T

    return T.StructType([to_spark_field(f, with_ids) for f in fields])


def field_by_name(fields: Iterable[DataField], name: str) -> DataField:
    fields = list(fields)
    for f in fields:
        if f.name == name:
            return f
    lowered = [f for f in fields if f.name.lower() == name.lower()]
    if len(lowered) == 1:
        return lowered[0]
    raise SchemaError(f"no column {name!r}; columns are {', '.join(f.name for f in fields)}")


__all__ = [
    "DataField", "MAX_LENGTH", "NO_ID", "root", "length", "type_string", "parse_type", "parse_atomic",
    "parse_atomic_nullable", "parse_field", "type_to_json", "field_to_json", "highest_field_id",
    "from_core_type", "to_arrow_type", "to_arrow_schema", "to_spark_type", "to_spark_field", "to_spark_schema",
    "to_core_schema", "fields_from_core_schema", "fields_from_arrow_schema", "fields_from_spark_schema",
    "field_by_name", "is_compact_decimal", "is_compact_timestamp",
]
