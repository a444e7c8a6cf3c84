"""A table schema as users give it: DDL text, an icefloe Schema, a pyarrow.Schema or a Spark StructType."""
from __future__ import annotations

import pyarrow as pa

from icefloe.core.types import Schema, from_arrow_schema, from_spark_schema, parse_schema
from icefloe.errors import SchemaError


def to_schema(schema) -> Schema:
    """Accept a DDL string, an icefloe Schema, a pyarrow.Schema or a Spark StructType."""
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, str):
        return parse_schema(schema)
    if isinstance(schema, pa.Schema):
        return from_arrow_schema(schema)
    if type(schema).__name__ == "StructType":
        return from_spark_schema(schema)
    raise SchemaError(f"cannot use {type(schema).__name__} as a table schema")
