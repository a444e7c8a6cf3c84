"""Nanosecond timestamps through a row-level change (``timestamp_ns``, ``timestamptz_ns``, format v3).

Spark holds timestamps in microseconds, so the rows a DELETE, UPDATE or MERGE rewrites come out
of Spark floored to their microsecond. The writers put every digit back (``with_raw_nanos``): a
value still equal to its file's value floored gets the file's raw nanoseconds, a value Spark
computed (or a new row's) is its microseconds exactly. The restoration is Spark SQL, built leaf
by leaf inside structs, lists and maps.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from icefloe.core.types import ListType, MapType, StructType, TimestamptzType, contains_nanos, is_nanos, to_spark_type
from icefloe.core.types.model import IcebergType, nested_fields
from icefloe.iceberg.schema import nanos_type_as_long
from icefloe.spark.iceberg_read import FILE_COL, POS_COL

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.core.types import NestedField
    from icefloe.iceberg.table_metadata import TableMetadata

RAW = "_icefloe_raw_nanos_"
RAW_HIT = "_icefloe_raw_hit"


def with_raw_nanos(rows: DataFrame, meta: TableMetadata, raw: Optional[DataFrame]) -> DataFrame:
    """``rows`` (labelled: FILE_COL and POS_COL name where each came from, null for new rows) with
    every nanosecond timestamp, at any depth, as raw ``long`` nanoseconds, for the Arrow writer.

    Spark read those values floored to its microseconds. A timestamp still equal to its file's value
    floored gets the file's nanoseconds back, every digit: ``raw`` is a raw read (``nanos_raw``) of
    the files the rows came from, joined on file and position (None when no row came from a file);
    ``_ns_restored`` pairs the values inside structs, lists and maps. One Spark computed, or a new
    row's, is its microseconds exactly. Assigning a row the floored value of its own timestamp
    keeps its digits."""
    from pyspark.sql import functions as F

    ns = [f for f in meta.schema.fields if contains_nanos(f.field_type)]
    raw_name = {f.field_id: f"{RAW}{f.field_id}" for f in ns}
    if raw is not None:
        raw = raw.select(FILE_COL, POS_COL, F.lit(True).alias(RAW_HIT),
                         *[F.col(f"`{f.name}`").alias(raw_name[f.field_id]) for f in ns])
        rows = rows.join(raw, [FILE_COL, POS_COL], "left")
    else:
        rows = rows.select("*", F.lit(None).cast("boolean").alias(RAW_HIT),
                           *[F.lit(None).cast(to_spark_type(nanos_type_as_long(f.field_type))).alias(raw_name[f.field_id])
                             for f in ns])
    for f in ns:
        value = _ns_restored(f"`{f.name}`", f"`{raw_name[f.field_id]}`", f.field_type)
        rows = rows.withColumn(f.name, F.expr(value))
    return rows.drop(RAW_HIT, *raw_name.values())


def _ns_restored(mine: str, theirs: str, t: IcebergType, depth: int = 0) -> str:
    """SQL for the raw nanoseconds to write of value ``mine`` (Spark's, type ``t``) given ``theirs``
    (the file's raw value of the same row, null for a new row): leaf by leaf, struct fields by name,
    list elements by position, map values by key (a map keyed by timestamps compared whole)."""
    if not isinstance(t, (StructType, ListType, MapType)):
        if not is_nanos(t):
            return mine
        return f"IF({RAW_HIT} AND {_micros(mine, t)} <=> {_floored(theirs, t)}, {theirs}, {_nanos(mine, t)})"
    if not contains_nanos(t):
        return mine
    if isinstance(t, StructType):
        return _struct_sql(mine, t, lambda f, field: _ns_restored(field(mine), field(theirs), f.field_type, depth + 1))
    if isinstance(t, ListType):
        x, i = f"x{depth}", f"i{depth}"
        return (f"transform({mine}, ({x}, {i}) -> "
                f"{_ns_restored(x, f'try_element_at({theirs}, {i} + 1)', t.element_type, depth + 1)})")
    if not contains_nanos(t.key_type):
        k, v = f"k{depth}", f"v{depth}"
        return (f"transform_values({mine}, ({k}, {v}) -> "
                f"{_ns_restored(v, f'try_element_at({theirs}, {k})', t.value_type, depth + 1)})")
    same = (f"{RAW_HIT} AND ({_ns_rebuilt(mine, t, _micros, True)} <=> {_ns_rebuilt(theirs, t, _floored, True)})")
    return f"IF({same}, {theirs}, {_ns_rebuilt(mine, t, _nanos)})"


def _struct_sql(sql: str, t: StructType, value: Callable[[NestedField, Callable[[str], str]], str]) -> str:
    """SQL of struct ``sql`` (of type ``t``) rebuilt field by field: ``value(field, of)`` gives a
    field's SQL, ``of(struct_sql)`` naming that field of a struct; null stays null."""
    def part(f: NestedField) -> str:
        def of(struct_sql: str) -> str:
            return f"{struct_sql}.`{f.name.replace('`', '``')}`"
        return f"'{f.name.replace(chr(39), chr(92) + chr(39))}', {value(f, of)}"

    return f"IF({sql} IS NULL, NULL, named_struct({', '.join(part(f) for f in t.fields)}))"


def _micros(sql: str, t: IcebergType) -> str:
    if isinstance(t, TimestamptzType):
        return f"unix_micros({sql})"
    return f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', {sql})"


def _nanos(sql: str, t: IcebergType) -> str:
    return f"({_micros(sql, t)} * 1000)"


def _floored(sql: str, _t: IcebergType) -> str:
    return f"(({sql} - pmod({sql}, 1000)) div 1000)"


def _ns_rebuilt(sql: str, t: IcebergType, leaf: Callable[[str, IcebergType], str], comparable: bool = False,
                depth: int = 0) -> str:
    """SQL rebuilding the value ``sql`` of type ``t`` with each nanosecond timestamp in it replaced
    by ``leaf(sql, type)``; ``comparable``: maps as their entries (Spark cannot compare maps)."""
    if not isinstance(t, (StructType, ListType, MapType)):
        return leaf(sql, t) if is_nanos(t) else sql
    if not contains_nanos(t) and not (comparable and _holds_map(t)):
        return sql
    x = f"x{depth}"
    if isinstance(t, StructType):
        return _struct_sql(sql, t, lambda f, field: _ns_rebuilt(field(sql), f.field_type, leaf, comparable, depth + 1))
    if isinstance(t, ListType):
        return f"transform({sql}, {x} -> {_ns_rebuilt(x, t.element_type, leaf, comparable, depth + 1)})"
    key = _ns_rebuilt(f"{x}.key", t.key_type, leaf, comparable, depth + 1)
    value = _ns_rebuilt(f"{x}.value", t.value_type, leaf, comparable, depth + 1)
    if comparable:
        return f"transform(map_entries({sql}), {x} -> named_struct('key', {key}, 'value', {value}))"
    return f"map_from_entries(transform(map_entries({sql}), {x} -> struct({key} AS key, {value} AS value)))"


def _holds_map(t: IcebergType) -> bool:
    """Whether ``t`` is or holds, at any depth, a map (which Spark cannot compare)."""
    return isinstance(t, MapType) or any(isinstance(f.field_type, MapType) for f in nested_fields(t))
