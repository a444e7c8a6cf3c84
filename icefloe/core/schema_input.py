"""A table schema as users give it: DDL text, an icefloe Schema, a pyarrow.Schema or a Spark StructType."""
from __future__ import annotations

from typing import TYPE_CHECKING, cast

import pyarrow as pa

from icefloe.core.types import Schema, from_arrow_schema, from_spark_schema, parse_schema
from icefloe.errors import SchemaError

if TYPE_CHECKING:
    from pyspark.sql.types import StructType


def to_schema(schema: object) -> Schema:
    """Accept a DDL string, an icefloe Schema, a pyarrow.Schema or a Spark StructType."""
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, str):
        return parse_schema(schema)
    if isinstance(schema, pa.Schema):
        return from_arrow_schema(schema)
    if type(schema).__name__ == "StructType":         # told by name: pyspark is imported only when used
        return from_spark_schema(cast("StructType", schema))
    raise SchemaError(f"cannot use {type(schema).__name__} as a table schema")
