"""Types to Spark types and back (pyspark is imported only when called)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from icefloe.core.types.ddl import IdAllocator, PendingList, PendingMap, PendingStruct, assign_ids
from icefloe.core.types.model import (
    DDL_PRIMITIVES,
    NO_ID,
    PRIMITIVES_BY_NAME,
    BinaryType,
    DecimalType,
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
    UUIDType,
    VariantType,
)
from icefloe.errors import SchemaError

if TYPE_CHECKING:
    from pyspark.sql import types as T


def to_spark_type(t: IcebergType, field_id: Optional[int] = None, uuid_as_binary: bool = False,
                  with_ids: bool = True) -> T.DataType:
    """Spark DataType for ``t``; nested struct fields carry ``parquet.field.id`` metadata
    unless ``with_ids`` is false.

    uuid is a string in Spark; ``uuid_as_binary`` maps it to BinaryType instead, the type in
    which Spark's Parquet reader accepts the spec's fixed_len_byte_array(16) columns. Spark
    has no time of day: Iceberg's microsecond time is read as its long value; other
    precisions (Paimon's TIME(p), stored as milliseconds) are refused."""
    from pyspark.sql import types as T

    if isinstance(t, StructType):
        return T.StructType([to_spark_field(f, uuid_as_binary, with_ids) for f in t.fields])
    if isinstance(t, ListType):
        return T.ArrayType(to_spark_type(t.element_type, uuid_as_binary=uuid_as_binary, with_ids=with_ids),
                           containsNull=not t.element_required)
    if isinstance(t, MultisetType):
        t = t.as_map
    if isinstance(t, MapType):
        return T.MapType(to_spark_type(t.key_type, uuid_as_binary=uuid_as_binary, with_ids=with_ids),
                         to_spark_type(t.value_type, uuid_as_binary=uuid_as_binary, with_ids=with_ids),
                         valueContainsNull=not t.value_required)
    if isinstance(t, DecimalType):
        return T.DecimalType(t.precision, t.scale)
    if isinstance(t, UUIDType):
        return T.BinaryType() if uuid_as_binary else T.StringType()
    if isinstance(t, StringType):
        return T.StringType()
    if isinstance(t, BinaryType):
        return T.BinaryType()
    if isinstance(t, TimestampType):
        return T.TimestampNTZType()
    if isinstance(t, TimestamptzType):
        return T.TimestampType()
    if isinstance(t, UnknownType):
        return T.NullType()
    if isinstance(t, VariantType):
        return T.VariantType()
    if isinstance(t, TimeType):
        if t.precision != 6:
            raise SchemaError(f"{t} columns cannot be read or written with Spark")
        return T.LongType()
    return {
        "boolean": T.BooleanType(), "tinyint": T.ByteType(), "smallint": T.ShortType(),
        "int": T.IntegerType(), "long": T.LongType(),
        "float": T.FloatType(), "double": T.DoubleType(), "date": T.DateType(),
    }.get(str(t), T.BinaryType())


def to_spark_field(f: NestedField, uuid_as_binary: bool = False, with_ids: bool = True) -> T.StructField:
    from pyspark.sql import types as T

    md: dict[str, Any] = {"parquet.field.id": f.field_id} if with_ids and f.field_id != NO_ID else {}
    if f.doc:
        md["comment"] = f.doc
    return T.StructField(f.name, to_spark_type(f.field_type, uuid_as_binary=uuid_as_binary, with_ids=with_ids),
                         nullable=not f.required, metadata=md)


def to_spark_schema(schema: Schema, with_ids: bool = True) -> T.StructType:
    from pyspark.sql import types as T

    return T.StructType([to_spark_field(f, with_ids=with_ids) for f in schema.fields])


def from_spark_schema(spark_schema: T.DataType) -> Schema:
    """Map a Spark StructType to a Schema with fresh ids; ``comment`` metadata becomes docs.
    Spark's CHAR(n) and VARCHAR(n) are strings, as in Spark itself."""
    from pyspark.sql import types as T

    def comment(f: T.StructField) -> Optional[str]:
        return f.metadata.get("comment") if f.metadata else None

    def conv(st: T.DataType) -> IcebergType:
        if isinstance(st, T.StructType):
            return PendingStruct([(f.name, conv(f.dataType), not f.nullable, comment(f)) for f in st.fields])
        if isinstance(st, T.ArrayType):
            return PendingList(conv(st.elementType), not st.containsNull)
        if isinstance(st, T.MapType):
            return PendingMap(conv(st.keyType), conv(st.valueType), not st.valueContainsNull)
        if isinstance(st, T.DecimalType):
            return DecimalType(st.precision, st.scale)
        if isinstance(st, (T.StringType, T.VarcharType, T.CharType)):
            return PRIMITIVES_BY_NAME["string"]
        if isinstance(st, T.TimestampNTZType):
            return PRIMITIVES_BY_NAME["timestamp"]
        if isinstance(st, T.TimestampType):
            return PRIMITIVES_BY_NAME["timestamptz"]
        if isinstance(st, T.VariantType):
            return PRIMITIVES_BY_NAME["variant"]
        simple = [(T.BooleanType, "boolean"), (T.ByteType, "tinyint"), (T.ShortType, "smallint"),
                  (T.IntegerType, "int"), (T.LongType, "long"), (T.FloatType, "float"),
                  (T.DoubleType, "double"), (T.DateType, "date"), (T.BinaryType, "binary")]
        for cls, name in simple:
            if isinstance(st, cls):
                return DDL_PRIMITIVES[name]
        raise SchemaError(f"Spark type {st.simpleString()} has no table type")

    pending = conv(spark_schema)
    if not isinstance(pending, PendingStruct):
        raise SchemaError(f"a Spark schema is a StructType, not {spark_schema.simpleString()}")
    return Schema(assign_ids(pending, IdAllocator(0)).fields)
