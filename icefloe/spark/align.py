"""Fitting a Spark DataFrame to a table schema before anything is written.

Columns match by name (case-insensitively); a column the table does not have,
a missing required column or a type that cannot be widened safely is rejected
at once with a message naming it. Nulls in required columns can only be seen
while the data is written, so each such column is wrapped in a check that
fails the Spark job, and with it the write, before any commit.
"""
from __future__ import annotations

from icefloe.core.types import (
    IcebergType, ListType, MapType, NestedField, Schema, StructType, to_spark_type,
)
from icefloe.errors import SchemaMismatchError

NULL_MARKER = "ICEFLOE_REQUIRED_NULL"

_WIDENINGS = {
    ("int", "long"), ("float", "double"),
}


def _spark_to_name(dt) -> str:
    from pyspark.sql import types as T

    if isinstance(dt, (T.ByteType, T.ShortType, T.IntegerType)):
        return "int"
    if isinstance(dt, T.LongType):
        return "long"
    if isinstance(dt, T.FloatType):
        return "float"
    if isinstance(dt, T.DoubleType):
        return "double"
    if isinstance(dt, T.BooleanType):
        return "boolean"
    if isinstance(dt, (T.StringType, T.VarcharType, T.CharType)):
        return "string"
    if isinstance(dt, T.BinaryType):
        return "binary"
    if isinstance(dt, T.DateType):
        return "date"
    if isinstance(dt, T.TimestampNTZType):
        return "timestamp"
    if isinstance(dt, T.TimestampType):
        return "timestamptz"
    if isinstance(dt, T.DecimalType):
        return f"decimal({dt.precision}, {dt.scale})"
    if isinstance(dt, T.NullType):
        return "null"
    return dt.simpleString()


def _compatible(src, target: IcebergType, path: str) -> None:
    """Raise unless Spark type ``src`` can be written to ``target`` without loss."""
    from pyspark.sql import types as T

    if isinstance(src, T.NullType):
        return
    if isinstance(target, StructType):
        if not isinstance(src, T.StructType):
            raise SchemaMismatchError(f"column {path!r}: expected struct, got {src.simpleString()}")
        names = {f.name.lower(): f for f in src.fields}
        for tf in target.fields:
            sf = names.pop(tf.name.lower(), None)
            if sf is None:
                if tf.required:
                    raise SchemaMismatchError(f"required field {path}.{tf.name} is missing")
                continue
            _compatible(sf.dataType, tf.field_type, f"{path}.{tf.name}")
        if names:
            raise SchemaMismatchError(f"struct {path!r} has fields the table does not: {sorted(names)}")
        return
    if isinstance(target, ListType):
        if not isinstance(src, T.ArrayType):
            raise SchemaMismatchError(f"column {path!r}: expected array, got {src.simpleString()}")
        _compatible(src.elementType, target.element_type, f"{path}.element")
        return
    if isinstance(target, MapType):
        if not isinstance(src, T.MapType):
            raise SchemaMismatchError(f"column {path!r}: expected map, got {src.simpleString()}")
        _compatible(src.keyType, target.key_type, f"{path}.key")
        _compatible(src.valueType, target.value_type, f"{path}.value")
        return
    s = _spark_to_name(src)
    t = str(target)
    if t == "uuid":
        t = "string"
    if s == t or (s, t) in _WIDENINGS:
        return
    if s.startswith("decimal") and t.startswith("decimal"):
        sp, ss = src.precision, src.scale
        if ss == target.scale and sp <= target.precision:
            return
    raise SchemaMismatchError(
        f"column {path!r} has type {src.simpleString()} but the table column is {target}; "
        "cast it explicitly (only int->bigint, float->double and wider decimals are implicit)")


def align_dataframe(df, schema: Schema, table_name: str = "table"):
    """Return ``df`` projected, cast and checked to match ``schema`` (with field-id metadata)."""
    from pyspark.sql import functions as F

    by_name = {}
    for f in df.schema.fields:
        key = f.name.lower()
        if key in by_name:
            raise SchemaMismatchError(f"data has two columns named {f.name!r}")
        by_name[key] = f
    extra = set(by_name) - {f.name.lower() for f in schema.fields}
    if extra:
        raise SchemaMismatchError(
            f"data has columns that table {table_name} does not: {sorted(extra)}; "
            f"table columns are {schema.column_names}")
    cols = []
    for tf in schema.fields:
        sf = by_name.get(tf.name.lower())
        spark_type = to_spark_type(tf.field_type)
        md = {"parquet.field.id": tf.field_id}
        if sf is None:
            if tf.required:
                raise SchemaMismatchError(f"required column {tf.name!r} of table {table_name} is missing from the data")
            cols.append(F.lit(None).cast(spark_type).alias(tf.name, metadata=md))
            continue
        _compatible(sf.dataType, tf.field_type, tf.name)
        c = F.col(f"`{sf.name}`")
        if sf.dataType != spark_type:
            c = c.cast(spark_type)
        if tf.required and sf.nullable:
            msg = f"{NULL_MARKER}: null value in required column '{tf.name}' of table {table_name}"
            c = F.when(c.isNull(), F.raise_error(F.lit(msg)).cast(spark_type)).otherwise(c)
        cols.append(c.alias(tf.name, metadata=md))
    return df.select(*cols)


def explain_spark_error(e: Exception) -> Exception:
    """Turn a failed Spark job caused by our null check into a typed error."""
    from icefloe.errors import RequiredFieldNullError

    text = str(e)
    if NULL_MARKER in text:
        i = text.index(NULL_MARKER) + len(NULL_MARKER) + 2
        j = text.find("\n", i)
        detail = text[i:j if j > 0 else None].strip().rstrip(".").rstrip("'\"").rstrip()
        # drop trailing Spark error-class decoration such as ' SQLSTATE: P0001'
        detail = detail.split(" SQLSTATE")[0]
        return RequiredFieldNullError(detail)
    return e
