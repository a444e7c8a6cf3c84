"""The logical types shared by both formats, fields with ids, and schemas.

One type system for Iceberg and Paimon: the Iceberg types, plus what Paimon adds
(TINYINT, SMALLINT, CHAR(n), VARCHAR(n), VARBINARY(n), MULTISET, time and timestamp
precisions). Each format lowers these to its own vocabulary (``iceberg/schema.py``,
``paimon/types.py``). Types compare by their string form; every field carries an id.
No I/O, no Spark.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Union, overload

from icefloe.errors import SchemaError

# --------------------------------------------------------------------------- types
class IcebergType:
    """Base of all types. Primitive types compare by their string form."""

    is_primitive = True

    def __str__(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def __repr__(self) -> str:
        return str(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IcebergType) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


class PrimitiveType(IcebergType):
    name = ""

    def __str__(self) -> str:
        return self.name


class BooleanType(PrimitiveType):
    name = "boolean"


class IntegerType(PrimitiveType):
    name = "int"


class LongType(PrimitiveType):
    name = "long"


class ByteType(PrimitiveType):
    """An 8-bit integer: Paimon's TINYINT, Spark's ByteType. Iceberg has no such type and stores
    these columns as int (``widen_small_ints``), as Iceberg's Spark integration does."""
    name = "tinyint"


class ShortType(PrimitiveType):
    """A 16-bit integer: Paimon's SMALLINT, Spark's ShortType (an int in Iceberg tables)."""
    name = "smallint"


class FloatType(PrimitiveType):
    name = "float"


class DoubleType(PrimitiveType):
    name = "double"


class DateType(PrimitiveType):
    name = "date"


class _Precise(PrimitiveType):
    """A time or timestamp with a number of fractional-second digits. Iceberg's are
    microseconds (6, the default, printed without a suffix) or, from format v3,
    nanoseconds (9, the ``_ns`` types); Paimon's ``TIME(p)`` and ``TIMESTAMP(p)`` take
    any p in 0..9."""

    def __init__(self, precision: int = 6):
        if not 0 <= precision <= 9:
            raise SchemaError(f"{self.name} precision must be 0..9, got {precision}")
        self.precision = precision

    def __str__(self) -> str:
        if self.precision == 6:
            return self.name
        if self.precision == 9 and self.name != "time":
            return f"{self.name}_ns"
        return f"{self.name}({self.precision})"


class TimeType(_Precise):
    name = "time"


class TimestampType(_Precise):
    """Timestamp without time zone (Spark TIMESTAMP_NTZ, Paimon TIMESTAMP(p))."""

    name = "timestamp"


class TimestamptzType(_Precise):
    """An instant, stored as UTC (Spark TIMESTAMP, Paimon TIMESTAMP(p) WITH LOCAL TIME ZONE)."""

    name = "timestamptz"


class StringType(PrimitiveType):
    name = "string"


class _Sized:
    """A type with a length, written as ``form`` with the length in it."""

    form = ""

    def __init__(self, length: int):
        self.length = length

    def __str__(self) -> str:
        return self.form.format(self.length)


class CharType(_Sized, StringType):
    """Paimon's CHAR(n): a string of exactly n characters. A string in Iceberg and Spark."""

    form = "char({})"


class VarCharType(_Sized, StringType):
    """Paimon's VARCHAR(n) for n below the maximum (VARCHAR of the maximum is STRING)."""

    form = "varchar({})"


class UUIDType(PrimitiveType):
    name = "uuid"


class BinaryType(PrimitiveType):
    name = "binary"


class VarBinaryType(_Sized, BinaryType):
    """Paimon's VARBINARY(n) for n below the maximum (VARBINARY of the maximum is BYTES)."""

    form = "varbinary({})"


class FixedType(_Sized, PrimitiveType):
    """Binary of exactly ``length`` bytes: Iceberg's fixed[n], Paimon's BINARY(n)."""

    form = "fixed[{}]"


class DecimalType(PrimitiveType):
    def __init__(self, precision: int, scale: int):
        if not 0 < precision <= 38:
            raise SchemaError(f"decimal precision must be 1..38, got {precision}")
        if not 0 <= scale <= precision:
            raise SchemaError(f"decimal scale must be 0..precision, got {scale}")
        self.precision = precision
        self.scale = scale

    def __str__(self) -> str:
        return f"decimal({self.precision}, {self.scale})"


@dataclass(eq=True)
class NestedField:
    field_id: int
    name: str
    field_type: IcebergType
    required: bool = False
    doc: Optional[str] = None
    # Iceberg v3 default values, in the spec's JSON single-value form: ``initial_default`` is the
    # value of rows written before the field existed, ``write_default`` what a writer puts when a
    # row has no value for it
    initial_default: Any = None
    write_default: Any = None

    @property
    def optional(self) -> bool:
        return not self.required


class StructType(IcebergType):
    is_primitive = False

    def __init__(self, fields: list[NestedField]):
        self.fields = list(fields)

    def __str__(self) -> str:
        inner = ", ".join(
            f"{f.field_id}: {f.name}: {'required' if f.required else 'optional'} {f.field_type}"
            for f in self.fields
        )
        return f"struct<{inner}>"

    def field_by_name(self, name: str) -> Optional[NestedField]:
        for f in self.fields:
            if f.name == name:
                return f
        return None


class ListType(IcebergType):
    is_primitive = False

    def __init__(self, element_id: int, element_type: IcebergType, element_required: bool = False):
        self.element_id = element_id
        self.element_type = element_type
        self.element_required = element_required

    @property
    def element_field(self) -> NestedField:
        return NestedField(self.element_id, "element", self.element_type, self.element_required)

    def __str__(self) -> str:
        return f"list<{self.element_id}: {'required' if self.element_required else 'optional'} {self.element_type}>"


class MapType(IcebergType):
    is_primitive = False

    def __init__(self, key_id: int, key_type: IcebergType, value_id: int, value_type: IcebergType,
                 value_required: bool = False, key_required: bool = True):
        self.key_id = key_id
        self.key_type = key_type
        self.value_id = value_id
        self.value_type = value_type
        self.value_required = value_required
        # Iceberg map keys are always required; a Paimon MAP may declare a nullable key type
        # (no row may hold a null key either way)
        self.key_required = key_required

    @property
    def key_field(self) -> NestedField:
        return NestedField(self.key_id, "key", self.key_type, self.key_required)

    @property
    def value_field(self) -> NestedField:
        return NestedField(self.value_id, "value", self.value_type, self.value_required)

    def __str__(self) -> str:
        key = "" if self.key_required else "optional "
        return (f"map<{self.key_id}: {key}{self.key_type}, {self.value_id}: "
                f"{'required' if self.value_required else 'optional'} {self.value_type}>")


class MultisetType(IcebergType):
    """Paimon's MULTISET<t>: a bag of elements, stored as a map from element to its count
    (an INT NOT NULL). Iceberg has no such type."""

    is_primitive = False

    def __init__(self, element_id: int, element_type: IcebergType, element_required: bool = False):
        self.element_id = element_id
        self.element_type = element_type
        self.element_required = element_required

    @property
    def as_map(self) -> MapType:
        """The map this multiset is stored as; the count has no field id of its own."""
        return MapType(self.element_id, self.element_type, NO_ID, PRIMITIVES_BY_NAME["int"], True,
                       self.element_required)

    def __str__(self) -> str:
        return (f"multiset<{self.element_id}: {'required' if self.element_required else 'optional'} "
                f"{self.element_type}>")


# Paimon gives ids to ROW fields only: ARRAY elements, MAP keys and values and MULTISET
# elements of Paimon schemas carry NO_ID until a Schema is built from them (``number_unset_ids``).
NO_ID = -1


class UnknownType(PrimitiveType):
    """Iceberg format v3's ``unknown``: a column whose type is not known yet, always null, never
    stored in data files (Spark's ``void``)."""

    name = "unknown"


class VariantType(PrimitiveType):
    """Iceberg format v3's ``variant``: semi-structured values in the Variant binary encoding,
    a ``metadata`` and a ``value`` byte string (Spark's ``variant``; in Parquet, a group of the
    two annotated ``VARIANT``). It has no bounds, no order and no partition transform."""

    name = "variant"


PRIMITIVES_BY_NAME: dict[str, PrimitiveType] = {
    t.name: t() for t in (BooleanType, IntegerType, LongType, FloatType, DoubleType, DateType,
                          TimeType, TimestampType, TimestamptzType, StringType, UUIDType, BinaryType,
                          UnknownType, VariantType)
}

# Types a table may hold only from Iceberg's format version 3 on
V3_TYPE_NAMES = ("unknown", "timestamp_ns", "timestamptz_ns", "variant")


def nested_fields(t: IcebergType) -> list[NestedField]:
    """Every field inside ``t`` (a struct, list, map or multiset type), nested ones included:
    struct fields, list elements, map keys and values."""
    return [f for _path, f in _walk(t, ())]


def type_names(t: IcebergType) -> list[str]:
    """The string form of every primitive type in ``t``: ``t`` itself, or any depth inside it."""
    if isinstance(t, PrimitiveType):
        return [str(t)]
    return [str(f.field_type) for f in nested_fields(t) if isinstance(f.field_type, PrimitiveType)]


def is_nanos(t: IcebergType) -> bool:
    """Whether ``t`` is a nanosecond timestamp, Iceberg v3's ``timestamp_ns`` or ``timestamptz_ns``."""
    return isinstance(t, (TimestampType, TimestamptzType)) and t.precision == 9


def is_micros(t: IcebergType) -> bool:
    """Whether ``t`` is Iceberg's microsecond ``time``, ``timestamp`` or ``timestamptz`` (the default
    precision, 6 digits; not Paimon's other precisions)."""
    return isinstance(t, _Precise) and t.precision == 6


def is_integral(t: IcebergType) -> bool:
    """Whether ``t`` is Iceberg's ``int`` or ``long`` (not Paimon's TINYINT/SMALLINT)."""
    return isinstance(t, (IntegerType, LongType))


def is_plain_string(t: IcebergType) -> bool:
    """Whether ``t`` is ``string`` itself (not Paimon's CHAR(n) or VARCHAR(n))."""
    return type(t) is StringType


def contains_nanos(t: IcebergType) -> bool:
    """Whether ``t`` is or holds, at any depth, a nanosecond timestamp (field names play no part)."""
    return is_nanos(t) or any(is_nanos(f.field_type) for f in nested_fields(t))


def precision_of(t: IcebergType) -> int:
    """The precision of a decimal (digits) or of a time or timestamp (fractional-second digits)."""
    if isinstance(t, (DecimalType, _Precise)):
        return t.precision
    raise SchemaError(f"type {t} has no precision")


def scale_of(t: IcebergType) -> int:
    """The scale of a decimal type."""
    if isinstance(t, DecimalType):
        return t.scale
    raise SchemaError(f"type {t} has no scale")


def length_of(t: IcebergType) -> int:
    """The declared length of a CHAR, VARCHAR, VARBINARY or fixed type."""
    if isinstance(t, _Sized):
        return t.length
    raise SchemaError(f"type {t} has no length")


def is_floating(t: IcebergType) -> bool:
    """Whether ``t`` is ``float`` or ``double``: the types whose values may be NaN."""
    return isinstance(t, (FloatType, DoubleType))


# The spec strings above are Iceberg's; Spark DDL also names the small integers, which Paimon keeps.
DDL_PRIMITIVES: dict[str, PrimitiveType] = dict(PRIMITIVES_BY_NAME, tinyint=ByteType(), smallint=ShortType())
SMALL_INTS = ("tinyint", "smallint")


@overload
def widen_to_common_types(t: StructType) -> StructType: ...
@overload
def widen_to_common_types(t: IcebergType) -> IcebergType: ...
def widen_to_common_types(t: IcebergType) -> IcebergType:
    """``t`` in the types every format has, nested types included: TINYINT and SMALLINT as
    int, CHAR(n) and VARCHAR(n) as string, VARBINARY(n) as binary, times and timestamps of
    fewer than 6 digits as microseconds, MULTISET as its map. This is what a format without
    Paimon's extra types (Iceberg) stores, as Iceberg's Spark integration does. Every value
    of ``t`` is a value of the result."""
    if isinstance(t, StructType):
        return StructType([NestedField(f.field_id, f.name, widen_to_common_types(f.field_type), f.required, f.doc)
                           for f in t.fields])
    if isinstance(t, ListType):
        return ListType(t.element_id, widen_to_common_types(t.element_type), t.element_required)
    if isinstance(t, MultisetType):
        return widen_to_common_types(t.as_map)
    if isinstance(t, MapType):
        return MapType(t.key_id, widen_to_common_types(t.key_type), t.value_id,
                       widen_to_common_types(t.value_type), t.value_required, t.key_required)
    if isinstance(t, (ByteType, ShortType)):
        return PRIMITIVES_BY_NAME["int"]
    if isinstance(t, StringType):
        return PRIMITIVES_BY_NAME["string"]
    if isinstance(t, BinaryType):
        return PRIMITIVES_BY_NAME["binary"]
    if isinstance(t, _Precise) and t.precision < 6:
        return type(t)(6)
    return t


widen_small_ints = widen_to_common_types


_DECIMAL_RE = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_FIXED_RE = re.compile(r"^fixed\[\s*(\d+)\s*\]$")


def primitive_from_string(text: str) -> PrimitiveType:
    """Parse the spec's string form of a primitive type (``long``, ``decimal(9, 2)``)."""
    s = text.strip().lower()
    if s in PRIMITIVES_BY_NAME:
        return PRIMITIVES_BY_NAME[s]
    if s in ("timestamp_ns", "timestamptz_ns"):      # format v3: nanosecond precision
        return (TimestampType if s == "timestamp_ns" else TimestamptzType)(9)
    m = _DECIMAL_RE.match(s)
    if m:
        return DecimalType(int(m.group(1)), int(m.group(2)))
    m = _FIXED_RE.match(s)
    if m:
        return FixedType(int(m.group(1)))
    raise SchemaError(f"unknown primitive type {text!r}")


# --------------------------------------------------------------------------- schema
class Schema:
    """A struct of fields with ids, plus the schema id and identifier fields."""

    def __init__(self, fields: list[NestedField], schema_id: int = 0,
                 identifier_field_ids: Optional[list[int]] = None):
        self.struct = StructType(fields)
        self.schema_id = schema_id
        self.identifier_field_ids = list(identifier_field_ids or [])
        self._by_id: dict[int, NestedField] = {}
        self._by_name: dict[str, NestedField] = {}
        self._parent: dict[int, int] = {}
        for path, f in _walk(self.struct, ()):
            self._by_id[f.field_id] = f
            self._by_name[".".join(path)] = f
        if NO_ID in self._by_id:
            raise SchemaError(f"field {self.name_of(NO_ID)!r} has no field id")
        dupes = len(self._by_id) != sum(1 for _ in _walk(self.struct, ()))
        if dupes:
            raise SchemaError("duplicate field ids in schema")

    @property
    def fields(self) -> list[NestedField]:
        return self.struct.fields

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and str(self.struct) == str(other.struct) \
            and self.identifier_field_ids == other.identifier_field_ids

    def same_fields(self, other: "Schema") -> bool:
        return str(self.struct) == str(other.struct)

    def __repr__(self) -> str:
        return f"Schema(id={self.schema_id}, {self.struct})"

    def find_field(self, name_or_id: Union[int, str]) -> NestedField:
        if isinstance(name_or_id, int):
            f = self._by_id.get(name_or_id)
        else:
            f = self._by_name.get(name_or_id)
            if f is None:
                lowered = {k.lower(): v for k, v in self._by_name.items()}
                f = lowered.get(str(name_or_id).lower())
        if f is None:
            raise SchemaError(f"no column {name_or_id!r} in schema; columns are "
                              f"{', '.join(self.column_names)}")
        return f

    def find_field_or_none(self, name_or_id: Union[int, str]) -> Optional[NestedField]:
        try:
            return self.find_field(name_or_id)
        except SchemaError:
            return None

    def name_of(self, field_id: int) -> Optional[str]:
        for name, f in self._by_name.items():
            if f.field_id == field_id:
                return name
        return None

    @property
    def column_names(self) -> list[str]:
        return [f.name for f in self.fields]

    @property
    def highest_field_id(self) -> int:
        return max(self._by_id) if self._by_id else 0

    def all_fields(self) -> Iterator[tuple[str, NestedField]]:
        """Every field, nested ones included, with its dotted path."""
        for path, f in _walk(self.struct, ()):
            yield ".".join(path), f


def widen_schema_to_common_types(schema: Schema) -> Schema:
    """``schema`` in the types every format has (see ``widen_to_common_types``)."""
    widened = widen_to_common_types(schema.struct)
    if widened == schema.struct:
        return schema
    return Schema(list(widened.fields), schema.schema_id, schema.identifier_field_ids)


widen_schema_small_ints = widen_schema_to_common_types


@overload
def number_unset_ids(t: StructType, next_id: Callable[[], int]) -> StructType: ...
@overload
def number_unset_ids(t: IcebergType, next_id: Callable[[], int]) -> IcebergType: ...
def number_unset_ids(t: IcebergType, next_id: Callable[[], int]) -> IcebergType:
    """``t`` with every NO_ID of a list element, map key or value or multiset element
    replaced by ``next_id()``; struct fields (and their classes) are kept."""
    def fresh(i: int) -> int:
        return next_id() if i == NO_ID else i

    if isinstance(t, StructType):
        return StructType([_with_type(f, number_unset_ids(f.field_type, next_id)) for f in t.fields])
    if isinstance(t, ListType):
        return ListType(fresh(t.element_id), number_unset_ids(t.element_type, next_id), t.element_required)
    if isinstance(t, MultisetType):
        return MultisetType(fresh(t.element_id), number_unset_ids(t.element_type, next_id), t.element_required)
    if isinstance(t, MapType):
        k, v = fresh(t.key_id), fresh(t.value_id)
        return MapType(k, number_unset_ids(t.key_type, next_id), v, number_unset_ids(t.value_type, next_id),
                       t.value_required, t.key_required)
    return t


def _with_type(f: NestedField, t: IcebergType) -> NestedField:
    if t is f.field_type:
        return f
    g = copy.copy(f)
    g.field_type = t
    return g


def _walk(t: IcebergType, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], NestedField]]:
    if isinstance(t, StructType):
        for f in t.fields:
            p = path + (f.name,)
            yield p, f
            yield from _walk(f.field_type, p)
    elif isinstance(t, ListType):
        f = t.element_field
        p = path + ("element",)
        yield p, f
        yield from _walk(t.element_type, p)
    elif isinstance(t, MultisetType):
        f = t.as_map.key_field
        p = path + ("element",)
        yield p, f
        yield from _walk(t.element_type, p)
    elif isinstance(t, MapType):
        for f in (t.key_field, t.value_field):
            p = path + (f.name,)
            yield p, f
            yield from _walk(f.field_type, p)
