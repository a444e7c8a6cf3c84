"""The logical schema shared by both formats: types, fields with ids, schemas.

Types follow the Iceberg type system (which Paimon's types map onto); every
field carries a stable id. This module also parses the Spark DDL column lists
users type (``"id bigint not null, name string"``) and maps schemas to Arrow
and Spark types. It has no I/O and does not import Spark.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Optional

from icefloe.errors import SchemaError


# --------------------------------------------------------------------------- types
class IcebergType:
    """Base of all types. Primitive types compare by their string form."""

    is_primitive = True

    def __str__(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def __repr__(self) -> str:
        return str(self)

    def __eq__(self, other) -> bool:
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


class TimeType(PrimitiveType):
    name = "time"


class TimestampType(PrimitiveType):
    """Timestamp without time zone (Spark TIMESTAMP_NTZ), microseconds."""

    name = "timestamp"


class TimestamptzType(PrimitiveType):
    """Timestamp with time zone, stored as UTC microseconds (Spark TIMESTAMP)."""

    name = "timestamptz"


class StringType(PrimitiveType):
    name = "string"


class UUIDType(PrimitiveType):
    name = "uuid"


class BinaryType(PrimitiveType):
    name = "binary"


class FixedType(PrimitiveType):
    def __init__(self, length: int):
        self.length = length

    def __str__(self) -> str:
        return f"fixed[{self.length}]"


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
                 value_required: bool = False):
        self.key_id = key_id
        self.key_type = key_type
        self.value_id = value_id
        self.value_type = value_type
        self.value_required = value_required

    @property
    def key_field(self) -> NestedField:
        return NestedField(self.key_id, "key", self.key_type, True)

    @property
    def value_field(self) -> NestedField:
        return NestedField(self.value_id, "value", self.value_type, self.value_required)

    def __str__(self) -> str:
        return (f"map<{self.key_id}: {self.key_type}, {self.value_id}: "
                f"{'required' if self.value_required else 'optional'} {self.value_type}>")


PRIMITIVES_BY_NAME: dict[str, PrimitiveType] = {
    t.name: t() for t in (BooleanType, IntegerType, LongType, FloatType, DoubleType, DateType,
                          TimeType, TimestampType, TimestamptzType, StringType, UUIDType, BinaryType)
}

# The spec strings above are Iceberg's; Spark DDL also names the small integers, which Paimon keeps.
DDL_PRIMITIVES: dict[str, PrimitiveType] = dict(PRIMITIVES_BY_NAME, tinyint=ByteType(), smallint=ShortType())
SMALL_INTS = ("tinyint", "smallint")


def widen_small_ints(t: IcebergType) -> IcebergType:
    """``t`` with TINYINT and SMALLINT as int, nested ones included: the type a format without
    small integers (Iceberg) stores."""
    if isinstance(t, StructType):
        return StructType([NestedField(f.field_id, f.name, widen_small_ints(f.field_type), f.required, f.doc)
                           for f in t.fields])
    if isinstance(t, ListType):
        return ListType(t.element_id, widen_small_ints(t.element_type), t.element_required)
    if isinstance(t, MapType):
        return MapType(t.key_id, widen_small_ints(t.key_type), t.value_id, widen_small_ints(t.value_type),
                       t.value_required)
    return PRIMITIVES_BY_NAME["int"] if str(t) in SMALL_INTS else t


_DECIMAL_RE = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_FIXED_RE = re.compile(r"^fixed\[\s*(\d+)\s*\]$")


def primitive_from_string(text: str) -> PrimitiveType:
    """Parse the spec's string form of a primitive type (``long``, ``decimal(9, 2)``)."""
    s = text.strip().lower()
    if s in PRIMITIVES_BY_NAME:
        return PRIMITIVES_BY_NAME[s]
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
        dupes = len(self._by_id) != sum(1 for _ in _walk(self.struct, ()))
        if dupes:
            raise SchemaError("duplicate field ids in schema")

    @property
    def fields(self) -> list[NestedField]:
        return self.struct.fields

    def __eq__(self, other) -> bool:
        return isinstance(other, Schema) and str(self.struct) == str(other.struct) \
            and self.identifier_field_ids == other.identifier_field_ids

    def same_fields(self, other: "Schema") -> bool:
        return str(self.struct) == str(other.struct)

    def __repr__(self) -> str:
        return f"Schema(id={self.schema_id}, {self.struct})"

    def find_field(self, name_or_id) -> NestedField:
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

    def find_field_or_none(self, name_or_id) -> Optional[NestedField]:
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


def widen_schema_small_ints(schema: Schema) -> Schema:
    """``schema`` with every TINYINT and SMALLINT as int (see ``widen_small_ints``)."""
    widened = widen_small_ints(schema.struct)
    if widened == schema.struct:
        return schema
    return Schema(list(widened.fields), schema.schema_id, schema.identifier_field_ids)


def _walk(t: IcebergType, path: tuple[str, ...]):
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
    elif isinstance(t, MapType):
        for f in (t.key_field, t.value_field):
            p = path + (f.name,)
            yield p, f
            yield from _walk(f.field_type, p)


# --------------------------------------------------------------------------- DDL
_SPARK_NAMES = {
    "boolean": "boolean", "bool": "boolean",
    "tinyint": "tinyint", "byte": "tinyint", "smallint": "smallint", "short": "smallint",
    "int": "int", "integer": "int",
    "bigint": "long", "long": "long",
    "float": "float", "real": "float", "double": "double",
    "date": "date",
    # Spark's TIMESTAMP is instant semantics (with local time zone): Iceberg timestamptz,
    # exactly as seed 001's `ts timestamp` becomes `"type": "timestamptz"`.
    "timestamp": "timestamptz", "timestamp_ltz": "timestamptz", "timestamptz": "timestamptz",
    "timestamp_ntz": "timestamp",
    "string": "string", "binary": "binary", "uuid": "uuid", "time": "time",
}

_TOKEN_RE = re.compile(r"\s*(?:(`(?:[^`]|``)*`)|('(?:[^'\\]|\\.)*')|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(.))")


class _Tokens:
    def __init__(self, text: str):
        self.text = text
        self.toks: list[str] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            m = _TOKEN_RE.match(text, pos)
            if not m:  # pragma: no cover - the last alternative matches anything
                raise SchemaError(f"cannot parse schema at position {pos}: {text[pos:]!r}")
            tok = next(g for g in m.groups() if g is not None)
            self.toks.append(tok)
            pos = m.end()
        self.i = 0

    def peek(self, k: int = 0) -> Optional[str]:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def next(self) -> str:
        t = self.peek()
        if t is None:
            raise SchemaError(f"unexpected end of schema string {self.text!r}")
        self.i += 1
        return t

    def expect(self, tok: str) -> None:
        t = self.next()
        if t.lower() != tok.lower():
            raise SchemaError(f"expected {tok!r} but found {t!r} in schema {self.text!r}")

    def accept(self, tok: str) -> bool:
        t = self.peek()
        if t is not None and t.lower() == tok.lower():
            self.i += 1
            return True
        return False


class _IdAllocator:
    def __init__(self, start: int = 0):
        self.last = start

    def next(self) -> int:
        self.last += 1
        return self.last


def _ident(tok: str) -> str:
    if tok.startswith("`"):
        return tok[1:-1].replace("``", "`")
    return tok


def _parse_type(tk: _Tokens, ids: _IdAllocator) -> IcebergType:
    name = tk.next().lower()
    if name in ("struct", "row"):
        tk.expect("<")
        fields = []
        if not tk.accept(">"):
            while True:
                fname = _ident(tk.next())
                tk.accept(":")
                ftype = _parse_type(tk, ids)
                required = False
                if tk.accept("not"):
                    tk.expect("null")
                    required = True
                doc = None
                if tk.accept("comment"):
                    doc = _unquote(tk.next())
                fields.append((fname, ftype, required, doc))
                if tk.accept(">"):
                    break
                tk.expect(",")
        return _PendingStruct(fields)
    if name in ("array", "list"):
        tk.expect("<")
        elem = _parse_type(tk, ids)
        tk.expect(">")
        return _PendingList(elem)
    if name == "map":
        tk.expect("<")
        k = _parse_type(tk, ids)
        tk.expect(",")
        v = _parse_type(tk, ids)
        tk.expect(">")
        return _PendingMap(k, v)
    if name in ("decimal", "dec", "numeric"):
        if tk.accept("("):
            p = int(tk.next())
            s = 0
            if tk.accept(","):
                s = int(tk.next())
            tk.expect(")")
            return DecimalType(p, s)
        return DecimalType(10, 0)
    if name in ("varchar", "char"):
        if tk.accept("("):
            tk.next()
            tk.expect(")")
        return PRIMITIVES_BY_NAME["string"]
    if name == "fixed":
        tk.expect("[") if tk.peek() == "[" else tk.expect("(")
        n = int(tk.next())
        tk.next()
        return FixedType(n)
    if name in _SPARK_NAMES:
        return DDL_PRIMITIVES[_SPARK_NAMES[name]]
    raise SchemaError(f"unknown type {name!r} in schema {tk.text!r}")


def _unquote(tok: str) -> str:
    if tok.startswith("'") and tok.endswith("'"):
        return tok[1:-1].replace("\\'", "'")
    return tok


class _PendingStruct(IcebergType):
    is_primitive = False

    def __init__(self, fields):
        self.fields = fields

    def __str__(self):
        return "pending-struct"


class _PendingList(IcebergType):
    is_primitive = False

    def __init__(self, elem):
        self.elem = elem

    def __str__(self):
        return "pending-list"


class _PendingMap(IcebergType):
    is_primitive = False

    def __init__(self, k, v):
        self.k, self.v = k, v

    def __str__(self):
        return "pending-map"


def _assign(t: IcebergType, ids: _IdAllocator) -> IcebergType:
    """Assign ids the way Iceberg does: a struct's fields first, then their children."""
    if isinstance(t, _PendingStruct):
        own = [ids.next() for _ in t.fields]
        fields = []
        for fid, (name, ft, req, doc) in zip(own, t.fields):
            fields.append(NestedField(fid, name, _assign(ft, ids), req, doc))
        return StructType(fields)
    if isinstance(t, _PendingList):
        eid = ids.next()
        return ListType(eid, _assign(t.elem, ids), False)
    if isinstance(t, _PendingMap):
        kid, vid = ids.next(), ids.next()
        return MapType(kid, _assign(t.k, ids), vid, _assign(t.v, ids), False)
    return t


def parse_schema(ddl: str, start_id: int = 0) -> Schema:
    """Parse a Spark DDL column list into a Schema with fresh field ids.

    ``"id bigint not null, name string comment 'x', ts timestamp not null"``
    """
    if not ddl or not ddl.strip():
        raise SchemaError("empty schema string")
    tk = _Tokens(ddl)
    cols = []
    names = set()
    while tk.peek() is not None:
        name = _ident(tk.next())
        if name.lower() in names:
            raise SchemaError(f"duplicate column {name!r} in schema {ddl!r}")
        names.add(name.lower())
        tk.accept(":")
        ftype = _parse_type(tk, None)
        required = False
        doc = None
        while tk.peek() is not None and tk.peek() != ",":
            if tk.accept("not"):
                tk.expect("null")
                required = True
            elif tk.accept("null"):
                required = False
            elif tk.accept("comment"):
                doc = _unquote(tk.next())
            else:
                raise SchemaError(f"unexpected {tk.peek()!r} after column {name!r} in schema {ddl!r}")
        cols.append((name, ftype, required, doc))
        if tk.peek() is not None:
            tk.expect(",")
    struct = _assign(_PendingStruct(cols), _IdAllocator(start_id))
    return Schema(struct.fields)


def parse_type(text: str) -> IcebergType:
    """Parse one Spark type string (``bigint``, ``struct<a:int>``) with fresh ids from 1."""
    tk = _Tokens(text)
    t = _parse_type(tk, None)
    if tk.peek() is not None:
        raise SchemaError(f"unexpected {tk.peek()!r} in type {text!r}")
    return _assign(t, _IdAllocator(0))


def reassign_ids(t: IcebergType, next_id) -> IcebergType:
    """Return a copy of ``t`` whose nested field ids come from ``next_id()``."""
    if isinstance(t, StructType):
        own = [next_id() for _ in t.fields]
        return StructType([NestedField(i, f.name, reassign_ids(f.field_type, next_id), f.required, f.doc)
                           for i, f in zip(own, t.fields)])
    if isinstance(t, ListType):
        e = next_id()
        return ListType(e, reassign_ids(t.element_type, next_id), t.element_required)
    if isinstance(t, MapType):
        k, v = next_id(), next_id()
        return MapType(k, reassign_ids(t.key_type, next_id), v, reassign_ids(t.value_type, next_id),
                       t.value_required)
    return t


def to_spark_ddl_type(t: IcebergType) -> str:
    if isinstance(t, StructType):
        return "struct<" + ",".join(f"`{f.name}`:{to_spark_ddl_type(f.field_type)}" for f in t.fields) + ">"
    if isinstance(t, ListType):
        return f"array<{to_spark_ddl_type(t.element_type)}>"
    if isinstance(t, MapType):
        return f"map<{to_spark_ddl_type(t.key_type)},{to_spark_ddl_type(t.value_type)}>"
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    return {
        "boolean": "boolean", "tinyint": "tinyint", "smallint": "smallint", "int": "int", "long": "bigint",
        "float": "float", "double": "double", "date": "date", "timestamp": "timestamp_ntz", "timestamptz": "timestamp", "string": "string",
        "uuid": "string", "binary": "binary", "time": "bigint",
    }.get(str(t), "binary")


def schema_to_ddl(schema: Schema) -> str:
    parts = []
    for f in schema.fields:
        s = f"`{f.name}` {to_spark_ddl_type(f.field_type)}"
        if f.required:
            s += " NOT NULL"
        parts.append(s)
    return ", ".join(parts)


# --------------------------------------------------------------------------- Arrow
def to_arrow_type(t: IcebergType, with_ids: bool = True):
    import pyarrow as pa

    if isinstance(t, StructType):
        return pa.struct([to_arrow_field(f, with_ids) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(to_arrow_field(t.element_field, with_ids))
    if isinstance(t, MapType):
        return pa.map_(to_arrow_field(t.key_field, with_ids), to_arrow_field(t.value_field, with_ids))
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pa.binary(t.length)
    s = str(t)
    return {
        "boolean": pa.bool_(), "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(),
        "long": pa.int64(), "float": pa.float32(),
        "double": pa.float64(), "date": pa.date32(), "time": pa.time64("us"),
        "timestamp": pa.timestamp("us"), "timestamptz": pa.timestamp("us", tz="UTC"),
        "string": pa.string(), "uuid": pa.binary(16),
        "binary": pa.binary(),
    }[s]


def to_arrow_field(f: NestedField, with_ids: bool = True):
    import pyarrow as pa

    md = {b"PARQUET:field_id": str(f.field_id).encode()} if with_ids else None
    return pa.field(f.name, to_arrow_type(f.field_type, with_ids), nullable=not f.required, metadata=md)


def to_arrow_schema(schema: Schema, with_ids: bool = True):
    import pyarrow as pa

    return pa.schema([to_arrow_field(f, with_ids) for f in schema.fields])


def from_arrow_schema(arrow_schema) -> Schema:
    """Map an Arrow schema to a Schema with fresh ids (ids in Arrow metadata are ignored)."""
    ids = _IdAllocator(0)

    def conv(at) -> IcebergType:
        import pyarrow as pa
        import pyarrow.types as pt

        if pt.is_struct(at):
            return _PendingStruct([(at.field(i).name, conv(at.field(i).type), not at.field(i).nullable, None)
                                   for i in range(at.num_fields)])
        if pt.is_list(at) or pt.is_large_list(at):
            return _PendingList(conv(at.value_type))
        if pt.is_map(at):
            return _PendingMap(conv(at.key_type), conv(at.item_type))
        if pt.is_boolean(at):
            return PRIMITIVES_BY_NAME["boolean"]
        if pt.is_int8(at):
            return DDL_PRIMITIVES["tinyint"]
        if pt.is_int16(at) or pt.is_uint8(at):
            return DDL_PRIMITIVES["smallint"]
        if pt.is_int32(at) or pt.is_uint16(at):
            return PRIMITIVES_BY_NAME["int"]
        if pt.is_int64(at) or pt.is_uint32(at):
            return PRIMITIVES_BY_NAME["long"]
        if pt.is_float32(at):
            return PRIMITIVES_BY_NAME["float"]
        if pt.is_float64(at):
            return PRIMITIVES_BY_NAME["double"]
        if pt.is_decimal(at):
            return DecimalType(at.precision, at.scale)
        if pt.is_date(at):
            return PRIMITIVES_BY_NAME["date"]
        if pt.is_timestamp(at):
            return PRIMITIVES_BY_NAME["timestamptz" if at.tz else "timestamp"]
        if pt.is_time(at):
            return PRIMITIVES_BY_NAME["time"]
        if pt.is_string(at) or pt.is_large_string(at) or pa.types.is_string_view(at):
            return PRIMITIVES_BY_NAME["string"]
        if pt.is_fixed_size_binary(at):
            return FixedType(at.byte_width)
        if pt.is_binary(at) or pt.is_large_binary(at):
            return PRIMITIVES_BY_NAME["binary"]
        raise SchemaError(f"Arrow type {at} has no table type")

    pending = _PendingStruct([(f.name, conv(f.type), not f.nullable, None) for f in arrow_schema])
    return Schema(_assign(pending, ids).fields)


# --------------------------------------------------------------------------- Spark
def to_spark_type(t: IcebergType, field_id: Optional[int] = None, uuid_as_binary: bool = False):
    """Spark DataType for ``t``; nested struct fields carry ``parquet.field.id`` metadata.

    uuid is a string in Spark; ``uuid_as_binary`` maps it to BinaryType instead, the type in
    which Spark's Parquet reader accepts the spec's fixed_len_byte_array(16) columns."""
    from pyspark.sql import types as T

    if isinstance(t, StructType):
        return T.StructType([to_spark_field(f, uuid_as_binary) for f in t.fields])
    if isinstance(t, ListType):
        return T.ArrayType(to_spark_type(t.element_type, uuid_as_binary=uuid_as_binary),
                           containsNull=not t.element_required)
    if isinstance(t, MapType):
        return T.MapType(to_spark_type(t.key_type, uuid_as_binary=uuid_as_binary),
                         to_spark_type(t.value_type, uuid_as_binary=uuid_as_binary),
                         valueContainsNull=not t.value_required)
    if isinstance(t, DecimalType):
        return T.DecimalType(t.precision, t.scale)
    s = str(t)
    return {
        "boolean": T.BooleanType(), "tinyint": T.ByteType(), "smallint": T.ShortType(),
        "int": T.IntegerType(), "long": T.LongType(),
        "float": T.FloatType(), "double": T.DoubleType(), "date": T.DateType(),
        "timestamp": T.TimestampNTZType(), "timestamptz": T.TimestampType(),
        "string": T.StringType(), "uuid": T.BinaryType() if uuid_as_binary else T.StringType(),
        "binary": T.BinaryType(),
        "time": T.LongType(),
    }.get(s, T.BinaryType())


def to_spark_field(f: NestedField, uuid_as_binary: bool = False):
    from pyspark.sql import types as T

    md = {"parquet.field.id": f.field_id}
    if f.doc:
        md["comment"] = f.doc
    return T.StructField(f.name, to_spark_type(f.field_type, uuid_as_binary=uuid_as_binary),
                         nullable=not f.required, metadata=md)


def to_spark_schema(schema: Schema):
    from pyspark.sql import types as T

    return T.StructType([to_spark_field(f) for f in schema.fields])


def from_spark_schema(spark_schema) -> Schema:
    """Map a Spark StructType to a Schema with fresh ids."""
    return parse_schema(", ".join(
        f"`{f.name.replace('`', '``')}` {f.dataType.simpleString()}{'' if f.nullable else ' not null'}"
        for f in spark_schema.fields))
