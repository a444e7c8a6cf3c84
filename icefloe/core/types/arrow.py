"""Types to Arrow types and back."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from icefloe.core.types.ddl import IdAllocator, PendingList, PendingMap, PendingStruct, assign_ids
from icefloe.core.types.model import (
    DDL_PRIMITIVES,
    NO_ID,
    PRIMITIVES_BY_NAME,
    BinaryType,
    DecimalType,
    FixedType,
    IcebergType,
    ListType,
    MapType,
    MultisetType,
    NestedField,
    Schema,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UnknownType,
    VariantType,
)
from icefloe.errors import SchemaError

if TYPE_CHECKING:
    import pyarrow as pa

_UNITS = {0: "s", 3: "ms", 6: "us", 9: "ns"}
_PRECISIONS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _unit(precision: int) -> str:
    """The Arrow unit holding ``precision`` fractional digits without loss."""
    return "s" if precision == 0 else "ms" if precision <= 3 else "us" if precision <= 6 else "ns"


def to_arrow_type(t: IcebergType, with_ids: bool = True, fixed_as_binary: bool = False) -> pa.DataType:
    """The Arrow type of ``t``. ``with_ids`` puts field ids in ``PARQUET:field_id`` metadata
    (fields without an id get none); ``fixed_as_binary`` gives fixed-length binary the
    variable-length Arrow type, as Paimon's files store BINARY(n)."""
    import pyarrow as pa

    if isinstance(t, StructType):
        return pa.struct([to_arrow_field(f, with_ids, fixed_as_binary) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(to_arrow_field(t.element_field, with_ids, fixed_as_binary))
    if isinstance(t, MultisetType):
        t = t.as_map
    if isinstance(t, MapType):
        key = to_arrow_field(t.key_field, with_ids, fixed_as_binary).with_nullable(False)  # Arrow map keys
        return pa.map_(key, to_arrow_field(t.value_field, with_ids, fixed_as_binary))
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pa.binary() if fixed_as_binary else pa.binary(t.length)
    if isinstance(t, StringType):
        return pa.string()
    if isinstance(t, BinaryType):
        return pa.binary()
    if isinstance(t, TimestampType):
        return pa.timestamp(_unit(t.precision))
    if isinstance(t, TimestamptzType):
        return pa.timestamp(_unit(t.precision), tz="UTC")
    if isinstance(t, TimeType):
        return pa.time32("ms") if t.precision <= 3 else pa.time64("us")
    if isinstance(t, UnknownType):
        return pa.null()
    if isinstance(t, VariantType):
        return variant_arrow_type()
    return {
        "boolean": pa.bool_(), "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(),
        "long": pa.int64(), "float": pa.float32(), "double": pa.float64(), "date": pa.date32(),
        "uuid": pa.binary(16),
    }[str(t)]


def variant_arrow_type() -> pa.DataType:
    """A ``variant`` value in Arrow: its two byte strings, as Parquet stores an unshredded one."""
    import pyarrow as pa

    return pa.struct([pa.field("metadata", pa.binary(), nullable=False), pa.field("value", pa.binary(), nullable=False)])


def is_variant_arrow_type(at: pa.DataType) -> bool:
    """Whether an Arrow struct is a ``variant``'s storage: ``metadata`` and ``value`` byte strings
    (Spark's order, value first, too), and nothing else."""
    import pyarrow.types as pt

    return bool(pt.is_struct(at) and at.num_fields == 2 and {at.field(i).name for i in range(2)} == {"metadata", "value"}
            and all(pt.is_binary(at.field(i).type) or pt.is_large_binary(at.field(i).type) for i in range(2)))


def to_arrow_field(f: NestedField, with_ids: bool = True, fixed_as_binary: bool = False) -> pa.Field:
    import pyarrow as pa

    md = {b"PARQUET:field_id": str(f.field_id).encode()} if with_ids and f.field_id != NO_ID else None
    return pa.field(f.name, to_arrow_type(f.field_type, with_ids, fixed_as_binary), nullable=not f.required,
                    metadata=md)


def to_arrow_schema(schema: Schema, with_ids: bool = True, fixed_as_binary: bool = False) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([to_arrow_field(f, with_ids, fixed_as_binary) for f in schema.fields])


def from_arrow_schema(arrow_schema: pa.Schema, precise: bool = False) -> Schema:
    """Map an Arrow schema to a Schema with fresh ids (ids in Arrow metadata are ignored).

    Times and timestamps become microsecond types unless ``precise``, which keeps their
    unit as a precision (seconds 0, ms 3, us 6, ns 9), as Paimon's TIME(p)/TIMESTAMP(p) can.
    A field's ``description`` metadata becomes its doc."""
    ids = IdAllocator(0)

    def doc_of(af: pa.Field) -> Optional[str]:
        md: dict[bytes, bytes] = af.metadata or {}
        desc = md.get(b"description")
        return desc.decode() if desc else None

    def conv(at: pa.DataType) -> IcebergType:
        import pyarrow as pa
        import pyarrow.types as pt

        if pt.is_struct(at):
            return PendingStruct([(at.field(i).name, conv(at.field(i).type), not at.field(i).nullable,
                                   doc_of(at.field(i))) for i in range(at.num_fields)])
        if pt.is_list(at) or pt.is_large_list(at):
            return PendingList(conv(at.value_type), not at.value_field.nullable)
        if pt.is_map(at):
            return PendingMap(conv(at.key_type), conv(at.item_type), not at.item_field.nullable)
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
            cls = TimestamptzType if at.tz else TimestampType
            return cls(_PRECISIONS[at.unit] if precise else 6)
        if pt.is_time(at):
            return TimeType(_PRECISIONS[at.unit] if precise else 6)
        if pt.is_string(at) or pt.is_large_string(at) or pa.types.is_string_view(at):
            return PRIMITIVES_BY_NAME["string"]
        if pt.is_fixed_size_binary(at):
            return FixedType(at.byte_width)
        if pt.is_binary(at) or pt.is_large_binary(at):
            return PRIMITIVES_BY_NAME["binary"]
        raise SchemaError(f"Arrow type {at} has no table type")

    pending = PendingStruct([(f.name, conv(f.type), not f.nullable, doc_of(f)) for f in arrow_schema])
    return Schema(assign_ids(pending, ids).fields)
