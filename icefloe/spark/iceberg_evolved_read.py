"""Reading data files written under older schemas with Spark's Parquet reader.

Spark 4.3 matches requested columns to file columns by ``parquet.field.id``
(``spark.sql.parquet.fieldId.read.enabled``) and widens int -> bigint,
float -> double and decimal(P,S) -> decimal(P2,S) itself, so a renamed column
keeps its data, a dropped-then-re-added one reads as null and promoted
columns read widened, with no help.

Its Parquet *filter pushdown*, however, looks file columns up by name. When a
file has a column whose name the current schema gives to a different field id
(a column dropped and re-added under the same name, or two columns that swapped
names), a pushed filter is evaluated on the wrong column's statistics and whole
row groups are skipped wrongly. Such columns are requested under an alias no
file contains -- still matched by field id, never pushed down by name -- and
get their names back right after the read.
"""
from __future__ import annotations

from typing import Iterable

from icefloe.core.types import Schema, to_spark_field

ALIAS_PREFIX = "__icefloe_fid_"


def _paths_by_name(schema: Schema) -> dict:
    out: dict = {}
    for path, f in schema.all_fields():
        out.setdefault(path.lower(), set()).add(f.field_id)
    return out


def ambiguous_columns(schema: Schema, history: Iterable[Schema]) -> set:
    """Ids of top-level columns of ``schema`` that contain a (dotted, case-insensitive) name
    which some schema in ``history`` gave to a different field id."""
    used: dict = {}
    for old in history:
        for path, ids in _paths_by_name(old).items():
            used.setdefault(path, set()).update(ids)
    out = set()
    for top in schema.fields:
        for path, f in Schema([top]).all_fields():
            if used.get(path.lower(), set()) - {f.field_id}:
                out.add(top.field_id)
                break
    return out


def spark_read_schema(schema: Schema, history: Iterable[Schema] = ()):
    """The Spark schema to hand ``spark.read.schema(...)``: field ids on every column,
    ambiguous top-level columns renamed to an alias (see :func:`restore_column_names`)."""
    from pyspark.sql import types as T

    aliased = ambiguous_columns(schema, history)
    fields = []
    for f in schema.fields:
        sf = to_spark_field(f)
        if f.field_id in aliased:
            sf = T.StructField(f"{ALIAS_PREFIX}{f.field_id}", sf.dataType, sf.nullable, sf.metadata)
        fields.append(sf)
    return T.StructType(fields)


def restore_column_names(df, schema: Schema):
    """Give aliased columns their names back; other columns (e.g. ``_metadata`` selections) stay."""
    renames = {f"{ALIAS_PREFIX}{f.field_id}": f.name for f in schema.fields
               if f"{ALIAS_PREFIX}{f.field_id}" in df.columns}
    return df.withColumnsRenamed(renames) if renames else df


def read_parquet_by_field_id(spark, paths: list, schema: Schema, history: Iterable[Schema] = ()):
    """``spark.read.parquet(paths)`` projected onto ``schema`` by field id, safe under schema evolution."""
    df = spark.read.schema(spark_read_schema(schema, history)).parquet(*paths)
    return restore_column_names(df, schema)
