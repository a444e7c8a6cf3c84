"""The logical schema shared by both formats: types, fields with ids, schemas, and their
Spark DDL, Arrow and Spark forms.

``model`` holds the types and ``Schema``; ``ddl`` parses and prints Spark DDL; ``arrow``
and ``spark`` map types to those engines. Everything is re-exported here.
"""
from icefloe.core.types.model import (  # noqa: F401
    DDL_PRIMITIVES,
    NO_ID,
    PRIMITIVES_BY_NAME,
    SMALL_INTS,
    BinaryType,
    BooleanType,
    ByteType,
    CharType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    MultisetType,
    NestedField,
    PrimitiveType,
    Schema,
    ShortType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
    VarBinaryType,
    VarCharType,
    VariantType,
    contains_nanos,
    is_floating,
    is_integral,
    is_micros,
    is_nanos,
    is_plain_string,
    length_of,
    precision_of,
    scale_of,
    number_unset_ids,
    primitive_from_string,
    widen_schema_small_ints,
    widen_schema_to_common_types,
    widen_small_ints,
    widen_to_common_types,
)
from icefloe.core.types.ddl import parse_schema, parse_type, reassign_ids, schema_to_ddl, to_spark_ddl_type  # noqa: F401
from icefloe.core.types.arrow import from_arrow_schema, to_arrow_field, to_arrow_schema, to_arrow_type  # noqa: F401
from icefloe.core.types.spark import from_spark_schema, to_spark_field, to_spark_schema, to_spark_type  # noqa: F401

__all__ = [
    "DDL_PRIMITIVES", "NO_ID", "PRIMITIVES_BY_NAME", "SMALL_INTS",
    "BinaryType", "BooleanType", "ByteType", "CharType", "DateType", "DecimalType", "DoubleType", "FixedType",
    "FloatType", "IcebergType", "IntegerType", "ListType", "LongType", "MapType", "MultisetType", "NestedField",
    "PrimitiveType", "Schema", "ShortType", "StringType", "StructType", "TimestampType", "TimestamptzType",
    "TimeType", "UUIDType", "VarBinaryType", "VarCharType", "VariantType",
    "contains_nanos", "is_floating", "is_integral", "is_micros", "is_nanos", "is_plain_string", "length_of",
    "precision_of", "scale_of", "number_unset_ids", "primitive_from_string", "widen_schema_small_ints",
    "widen_schema_to_common_types", "widen_small_ints", "widen_to_common_types",
    "parse_schema", "parse_type", "reassign_ids", "schema_to_ddl", "to_spark_ddl_type",
    "from_arrow_schema", "to_arrow_field", "to_arrow_schema", "to_arrow_type",
    "from_spark_schema", "to_spark_field", "to_spark_schema", "to_spark_type",
]
