"""Fitting a Spark DataFrame to a table schema before anything is written.

Columns match by name (case-insensitively); a column the table does not have,
a missing required column or a type that cannot be widened safely is rejected
at once with a message naming it. Nulls in required columns can only be seen
while the data is written, so each such column is wrapped in a check that
fails the Spark job, and with it the write, before any commit. The same goes
for date and timestamp partition values outside years 1..9999
(``check_partition_ranges``) and for UPDATE/MERGE values a column cannot
hold (``checked_cast``: overflow or unparsable text fails, ANSI mode or not).
"""
from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

from icefloe.core.ranges import MAX_DAYS, MAX_MICROS, MIN_DAYS, MIN_MICROS
from icefloe.core.types import (
    DecimalType, DoubleType, FixedType, FloatType, IcebergType, IntegerType, ListType, LongType, MapType, Schema,
    StructType, to_spark_type,
)
from icefloe.errors import RequiredFieldNullError, SchemaMismatchError
from icefloe.iceberg.schema import default_value, stored_type

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql import types as T

    from icefloe.core.types import NestedField

NULL_MARKER = "ICEFLOE_REQUIRED_NULL"
RANGE_MARKER = "ICEFLOE_OUT_OF_RANGE"

_WIDENINGS = {
    ("int", "long"), ("float", "double"),
    # Spark's timestamps are microseconds: exact as format v3's nanosecond types
    ("timestamp", "timestamp_ns"), ("timestamptz", "timestamptz_ns"),
}


def _spark_to_name(dt: T.DataType) -> str:
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


def _compatible(src: T.DataType, target: IcebergType, path: str) -> None:
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
    if s == "binary" and t.startswith("fixed["):       # Spark has no fixed type: lengths checked per value
        return
    if s.startswith("decimal") and isinstance(src, T.DecimalType) and isinstance(target, DecimalType):
        sp, ss = src.precision, src.scale
        if ss == target.scale and sp <= target.precision:
            return
    raise SchemaMismatchError(
        f"column {path!r} has type {src.simpleString()} but the table column is {target}; "
        "cast it explicitly (only int->bigint, float->double and wider decimals are implicit)")


@dataclass(frozen=True)
class Target:
    """One column a DataFrame is fitted to: its name and field id, the Spark type it is written
    as, whether it is required, and the format's rule for which source types it accepts
    (``accepts(source_spark_type, path)`` raises ``SchemaMismatchError`` naming the column)."""
    name: str
    field_id: int
    spark_type: T.DataType
    required: bool
    accepts: Callable[[T.DataType, str], None]
    default: object = None       # the value a row without this column gets (Iceberg v3 write-default)


def fit_dataframe(df: DataFrame, targets: list, table_name: str = "table") -> DataFrame:
    """``df`` projected, cast and checked to the ``targets`` (field-id metadata on every column):
    columns matched by name case-insensitively, missing optional columns as nulls, a missing
    required column or one the table does not have refused, a null in a required column failing
    the job with a marker ``explain_spark_error`` turns into ``RequiredFieldNullError``. The one
    way both formats fit data to a table; each brings its own type rules (``Target.accepts``)."""
    from pyspark.sql import functions as F

    by_name = {}
    for f in df.schema.fields:
        key = f.name.lower()
        if key in by_name:
            raise SchemaMismatchError(f"data has two columns named {f.name!r}")
        by_name[key] = f
    extra = set(by_name) - {t.name.lower() for t in targets}
    if extra:
        raise SchemaMismatchError(
            f"data has columns that table {table_name} does not: {sorted(extra)}; "
            f"table columns are {[t.name for t in targets]}")
    cols = []
    for t in targets:
        sf = by_name.get(t.name.lower())
        md = {"parquet.field.id": t.field_id}
        if sf is None:
            if t.default is not None:
                cols.append(F.lit(t.default).cast(t.spark_type).alias(t.name, metadata=md))
                continue
            if t.required:
                raise SchemaMismatchError(f"required column {t.name!r} of table {table_name} is missing from the data")
            cols.append(F.lit(None).cast(t.spark_type).alias(t.name, metadata=md))
            continue
        t.accepts(sf.dataType, t.name)
        c = F.col(f"`{sf.name}`")
        if sf.dataType != t.spark_type:
            c = fitted_column(c, sf.dataType, t.spark_type)
        if t.required and sf.nullable:
            msg = f"{NULL_MARKER}: null value in required column '{t.name}' of table {table_name}"
            c = F.when(c.isNull(), F.raise_error(F.lit(msg)).cast(t.spark_type)).otherwise(c)
        cols.append(c.alias(t.name, metadata=md))
    return df.select(*cols)


def restructured(src: T.DataType, target: T.DataType) -> bool:
    """Whether Spark type ``src`` reaches ``target`` only field by field: somewhere a struct's
    fields differ from the target's in names or order (Spark's cast pairs them by position)."""
    from pyspark.sql import types as T

    if isinstance(src, T.StructType) and isinstance(target, T.StructType):
        if [f.name.lower() for f in src.fields] != [f.name.lower() for f in target.fields]:
            return True
        return any(restructured(a.dataType, b.dataType) for a, b in zip(src.fields, target.fields))
    if isinstance(src, T.ArrayType) and isinstance(target, T.ArrayType):
        return restructured(src.elementType, target.elementType)
    if isinstance(src, T.MapType) and isinstance(target, T.MapType):
        return restructured(src.keyType, target.keyType) or restructured(src.valueType, target.valueType)
    return False


def fitted_column(c: Column, src: T.DataType, target: T.DataType) -> Column:
    """Column ``c`` of Spark type ``src`` as Spark type ``target``: struct fields matched by name
    (case-insensitively) at any depth, a field ``target`` lacks left out, one ``src`` lacks null
    (the caller has checked that it may be), lists and maps element by element; the rest cast."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if not restructured(src, target):
        return c if src == target else c.cast(target)
    if isinstance(target, T.StructType) and isinstance(src, T.StructType):
        by_name = {f.name.lower(): f for f in src.fields}
        parts = []
        for tf in target.fields:
            sf = by_name.get(tf.name.lower())
            part = (F.lit(None).cast(tf.dataType) if sf is None
                    else fitted_column(c.getField(sf.name), sf.dataType, tf.dataType))
            parts.append(part.alias(tf.name))
        return F.when(c.isNull(), F.lit(None)).otherwise(F.struct(*parts)).cast(target)
    if isinstance(target, T.ArrayType) and isinstance(src, T.ArrayType):
        return F.transform(c, lambda x: fitted_column(x, src.elementType, target.elementType)).cast(target)
    if isinstance(target, T.MapType) and isinstance(src, T.MapType):     # restructured: both are maps
        if restructured(src.keyType, target.keyType):
            c = F.transform_keys(c, lambda k, _v: fitted_column(k, src.keyType, target.keyType))
        if restructured(src.valueType, target.valueType):
            c = F.transform_values(c, lambda _k, v: fitted_column(v, src.valueType, target.valueType))
    return c.cast(target)


def stored_columns(df: DataFrame, schema: Schema) -> DataFrame:
    """``df`` (fitted to ``schema``) as data files hold it: no column or struct field of type
    ``unknown`` at any depth (``schema.stored_type``), the rest as they are."""
    from pyspark.sql import functions as F

    cols, changed = [], False
    table_columns = {f.name.lower() for f in schema.fields}
    for f in schema.fields:
        st = stored_type(f.field_type, f.name)
        if st is None:
            changed = True
            continue
        c = F.col(f"`{f.name}`")
        if st is not f.field_type:
            sf = df.schema[f.name]
            c = fitted_column(c, sf.dataType, to_spark_type(st)).alias(f.name, metadata=sf.metadata)
            changed = True
        cols.append(c)
    return df.select(*cols, *[c for c in df.columns if c.lower() not in table_columns]) if changed else df


def spark_default(field_type: IcebergType, value: Any) -> Any:
    """A field default (JSON single-value form) as a value Spark's ``lit`` takes and casts to the
    column's type: UUIDs and naive timestamps as text, so no session time zone applies."""
    if value is None:
        return None
    out = default_value(field_type, value)
    if isinstance(out, uuid.UUID) or (isinstance(out, datetime.datetime) and out.tzinfo is None):
        return str(out)
    return out


def _write_default(f: NestedField):
    """A field's write default as a value Spark's ``lit`` takes."""
    return spark_default(f.field_type, f.write_default)


def align_dataframe(df: DataFrame, schema: Schema, table_name: str = "table") -> DataFrame:
    """``df`` fitted to an Iceberg table's ``schema`` (only safe widening is implicit); a value of
    a ``fixed[N]`` column that is not N bytes long fails the job (``SchemaMismatchError``)."""
    from pyspark.sql import functions as F

    fitted = fit_dataframe(df, [
        Target(f.name, f.field_id, to_spark_type(f.field_type), f.required,
               lambda src, path, target=f.field_type: _compatible(src, target, path), _write_default(f))
        for f in schema.fields], table_name)
    fixed = {f.name: f.field_type.length for f in schema.fields if isinstance(f.field_type, FixedType)}
    if not fixed:
        return fitted
    cols = []
    for name in fitted.columns:
        c = F.col(f"`{name}`")
        if name in fixed:
            n = fixed[name]
            msg = F.concat(F.lit(f"{RANGE_MARKER}: a value of "), F.length(c).cast("string"),
                           F.lit(f" bytes cannot be stored in column '{name}' (fixed[{n}]) of table {table_name}"))
            c = F.when(c.isNotNull() & (F.length(c) != n), F.raise_error(msg).cast("binary")).otherwise(c)
        cols.append(c.alias(name, metadata=fitted.schema[name].metadata))
    return fitted.select(*cols)


def check_partition_ranges(df: DataFrame, columns: Iterable[str], table_name: str = "table") -> DataFrame:
    """``df`` with each named date/timestamp column checked to lie in the range partition
    values can take (``icefloe.core.ranges``); a value outside fails the Spark job, and the write."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    types = {f.name.lower(): f.dataType for f in df.schema.fields}
    checked = {c.lower() for c in columns
               if isinstance(types.get(c.lower()), (T.DateType, T.TimestampType, T.TimestampNTZType))}
    if not checked:
        return df
    cols = []
    for name in df.columns:
        c = F.col(f"`{name}`")
        dt = types[name.lower()]
        if name.lower() in checked:
            if isinstance(dt, T.DateType):
                v, lo, hi = F.unix_date(c), MIN_DAYS, MAX_DAYS
            elif isinstance(dt, T.TimestampType):
                v, lo, hi = F.unix_micros(c), MIN_MICROS, MAX_MICROS
            else:
                epoch = F.lit("1970-01-01 00:00:00").cast("timestamp_ntz")
                v, lo, hi = F.timestamp_diff("MICROSECOND", epoch, c), MIN_MICROS, MAX_MICROS
            msg = F.concat(F.lit(f"{RANGE_MARKER}: partition value out of range (years 1 to 9999) in column "
                                 f"'{name}' of table {table_name}: "), v.cast("string"),
                           F.lit(" days from 1970-01-01" if isinstance(dt, T.DateType) else " us from 1970-01-01"))
            c = F.when((v < lo) | (v > hi), F.raise_error(msg).cast(dt)).otherwise(c)
        cols.append(c.alias(name, metadata=df.schema[name].metadata))
    return df.select(*cols)


def checked_cast(value: Column, target: IcebergType, column: str, table_name: str = "table") -> Column:
    """``value`` (a Column) cast to ``target`` for an UPDATE or MERGE assignment: a non-null
    value the cast cannot represent (overflow, unparsable text) fails the Spark job whether
    or not ANSI mode is on, instead of turning into null or wrapping around."""
    return checked_cast_to(value, to_spark_type(target), str(target), column, table_name)


def checked_cast_to(value: Column, spark_type: T.DataType | str, type_label: str, column: str,
                    table_name: str = "table") -> Column:
    """``value`` cast to Spark type ``spark_type`` (``type_label`` names it in the error); a
    non-null value the cast cannot represent fails the Spark job, ANSI mode or not."""
    from pyspark.sql import functions as F

    cast = value.try_cast(spark_type)
    msg = F.concat(F.lit(f"{RANGE_MARKER}: value cannot be stored in column '{column}' ({type_label}) of table "
                         f"{table_name}: "), value.cast("string"))
    return F.when(value.isNotNull() & cast.isNull(), F.raise_error(msg).cast(spark_type)).otherwise(cast)


def check_assignable(src: T.DataType, target: IcebergType, path: str) -> None:
    """Raise unless Spark type ``src`` may be assigned to ``target`` by MERGE's ``*`` clauses:
    what an append accepts, plus numeric narrowing (checked per value by ``checked_cast``)."""
    from pyspark.sql import types as T

    numeric_target = target in (IntegerType(), LongType(), FloatType(), DoubleType()) or isinstance(target, DecimalType)
    if isinstance(src, T.NumericType) and numeric_target:
        return
    _compatible(src, target, path)


def _marker_detail(text: str, marker: str) -> str:
    i = text.index(marker) + len(marker) + 2
    j = text.find("\n", i)
    detail = text[i:j if j > 0 else None].strip().rstrip(".").rstrip("'\"").rstrip()
    # drop trailing Spark error-class decoration such as ' SQLSTATE: P0001'
    return detail.split(" SQLSTATE")[0]


def explain_spark_error(e: Exception) -> Exception:
    """Turn a failed Spark job caused by our null or range checks into a typed error."""
    text = str(e)
    if NULL_MARKER in text:
        return RequiredFieldNullError(_marker_detail(text, NULL_MARKER))
    if RANGE_MARKER in text:
        return SchemaMismatchError(_marker_detail(text, RANGE_MARKER))
    return e
