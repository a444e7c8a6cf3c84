"""Reading planned Iceberg files with Spark's own Parquet reader.

The driver plans (icefloe.iceberg.scan); Spark reads only the files that can
match, with the table schema carrying ``parquet.field.id`` so columns are
matched by id (a renamed column keeps its data, a column added later reads
as null). The filter is applied again on rows, and projected columns reach
Spark's reader as a plain select it pushes down.
"""
from __future__ import annotations

from typing import Optional, Sequence

from icefloe.core.types import Schema, to_spark_schema
from icefloe.errors import IcefloeError


class UnsupportedFeatureError(IcefloeError):
    pass


def read_tasks(spark, tasks: list, schema: Schema, where=None, columns: Optional[Sequence[str]] = None):
    spark_schema = to_spark_schema(schema)
    if any(t.deletes for t in tasks):
        raise UnsupportedFeatureError(
            "this snapshot has delete files (merge-on-read); reading them is not supported yet")
    if not tasks:
        df = spark.createDataFrame([], spark_schema)
    else:
        paths = [t.path for t in tasks]
        df = spark.read.schema(spark_schema).parquet(*paths)
    if where is not None:
        df = df.where(where) if isinstance(where, str) else df.where(where)
    if columns:
        df = df.select(*[f"`{c}`" for c in columns])
    return df
