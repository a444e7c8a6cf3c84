"""Reading planned Iceberg files in Python tasks, for stores Spark's own reader cannot reach.

A pip-installed PySpark has no Hadoop connector for ``s3://`` (or ``gs://``, ``az://``), so
when a table's FileIO is an object store without ``spark.native-io``, Spark never sees its
paths: the driver hands each task one planned file (its ``FileScanTask``, pickled; the driver
holds file lists, never rows), and the task reads it with pyarrow through the FileIO, matches
columns by field id (``iceberg.arrow_read``), applies the file's deletes and deletion vectors
(``iceberg.delete_files``) and returns Arrow batches in the Spark schema of the table. With
``with_positions`` each row also carries its data file and 0-based position (``FILE_COL``,
``POS_COL``), exactly what the reads by Spark's Parquet reader give row-level changes.
"""
from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

from icefloe.core.io import LOCAL, FileIO
from icefloe.core.types import Schema, UUIDType, to_spark_schema
from icefloe.core.types.arrow import to_arrow_schema
from icefloe.iceberg.schema import default_value, nanos_as_long
from icefloe.spark import connect

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from icefloe.iceberg.arrow_read import NameMapping

FILE_COL = "_icefloe_file"
POS_COL = "_icefloe_pos"
_BATCH_ROWS = 65536
_MAX_SLICES = 10_000


def read_tasks_in_python(spark: SparkSession, tasks: list, schema: Schema, where: Optional[str | Column] = None,
                         columns: Optional[Sequence[str]] = None, with_positions: bool = False,
                         name_mapping: Optional[NameMapping] = None, io: FileIO = LOCAL,
                         nanos_raw: bool = False) -> DataFrame:
    """A DataFrame of the planned ``tasks`` (deletes applied), each file read by one Python task.
    ``nanos_raw``: top-level nanosecond timestamp columns as ``long`` raw nanoseconds (a rewrite
    carries them unchanged) rather than Spark's microseconds."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    out = to_spark_schema(nanos_as_long(schema) if nanos_raw else schema)
    if with_positions:
        out = StructType(list(out.fields) + [StructField(FILE_COL, StringType(), False),
                                             StructField(POS_COL, LongType(), False)])
    if not tasks:
        df = spark.createDataFrame([], out)
    else:
        payload = [(pickle.dumps(t),) for t in tasks]
        df = connect.task_frame(spark, payload, "task binary", _MAX_SLICES).mapInArrow(
            _reader(schema, out, with_positions, name_mapping, io.for_tasks()), out)
    if where is not None:
        df = df.where(where)
    if columns:
        df = df.select(*[f"`{c}`" for c in columns], *([FILE_COL, POS_COL] if with_positions else []))
    return df


def _reader(schema: Schema, spark_schema: StructType, with_positions: bool, name_mapping: Optional[NameMapping],
            io: FileIO):
    defaults = {f.field_id: default_value(f.field_type, f.initial_default) for f in schema.fields
                if f.initial_default is not None}

    def run(batches: Iterator[pa.RecordBatch]):  # in the Python workers
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema as spark_arrow_schema

        from icefloe.iceberg.arrow_read import read_by_field_id, read_data_file
        from icefloe.iceberg.delete_files import apply_deletes_arrow

        target = to_arrow_schema(schema)
        wanted = spark_arrow_schema(spark_schema, timezone="UTC")
        for batch in batches:
            for blob in batch.column(0).to_pylist():
                task = pickle.loads(blob)
                table = read_by_field_id(read_data_file(task.file, io), target, name_mapping, task.path,
                                         {**defaults, **task.identity_values})
                if with_positions:
                    table = table.append_column(POS_COL, pa.array(range(table.num_rows), pa.int64()))
                table = apply_deletes_arrow(table, task.path, task.deletes, schema, io)
                if with_positions:
                    pos = table.column(POS_COL)
                    table = table.drop_columns([POS_COL])
                    table = table.append_column(FILE_COL, pa.array([task.path] * table.num_rows, pa.string()))
                    table = table.append_column(POS_COL, pos)
                yield from _as_spark(table, wanted, schema).to_batches(max_chunksize=_BATCH_ROWS)

    return run


def _as_spark(table: pa.Table, wanted: pa.Schema, schema: Schema):
    """``table`` (the Iceberg schema's Arrow types) in the Arrow types Spark expects: uuid as its
    text form, everything else cast."""
    import uuid

    import pyarrow as pa

    uuids = {f.name for f in schema.fields if isinstance(f.field_type, UUIDType)}
    cols = []
    for i, f in enumerate(wanted):
        col = table.column(i)
        if f.name in uuids:
            col = pa.array([None if v is None else str(uuid.UUID(bytes=v)) for v in col.to_pylist()], pa.string())
        elif "timestamp[ns" in str(col.type):
            col = _spark_nanos(col, f.type)     # at any depth: floored to Spark's microseconds, or raw longs
        cols.append(col.cast(f.type, safe=not pa.types.is_nested(col.type)))
    return pa.Table.from_arrays(cols, schema=wanted)


def _spark_nanos(col: pa.Array | pa.ChunkedArray, wanted: pa.DataType):
    """An array with every nanosecond timestamp in it (itself, or inside a struct, list or map) as
    ``wanted`` holds it: its raw nanoseconds where ``wanted`` has an integer, else floored to
    microseconds."""
    import pyarrow as pa

    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    t = col.type
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return col.cast(pa.int64()) if pa.types.is_integer(wanted) else _floor_to_micros(col)
    if pa.types.is_struct(t):
        children = [_spark_nanos(col.field(i), wanted.field(i).type) for i in range(t.num_fields)]
        fields = [t.field(i).with_type(c.type) for i, c in enumerate(children)]
        return pa.StructArray.from_arrays(children, fields=fields, mask=col.is_null())
    if pa.types.is_map(t):
        keys, items = _spark_nanos(col.keys, wanted.key_type), _spark_nanos(col.items, wanted.item_type)
        return pa.MapArray.from_arrays(col.offsets, keys, items, pa.map_(t.key_field.with_type(keys.type),
                                                                         t.item_field.with_type(items.type)),
                                       mask=col.is_null())
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = _spark_nanos(col.values, wanted.value_type)
        cls = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
        return cls.from_arrays(col.offsets, values, mask=col.is_null())
    return col


def _floor_to_micros(col: pa.Array | pa.ChunkedArray):
    """Nanosecond timestamps as microseconds, floored (as Iceberg converts them, also before 1970)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    mask = np.asarray(pc.is_null(col).to_numpy(zero_copy_only=False), dtype=bool)
    nanos = pc.fill_null(col.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    return pa.array(np.floor_divide(nanos, 1000), pa.int64(), mask=mask).cast(pa.timestamp("us", col.type.tz))


def position_rows(spark: SparkSession, delete_files: list, io: FileIO) -> DataFrame:
    """A DataFrame of (FILE_COL, POS_COL): the rows ``delete_files`` delete, position delete files
    and deletion vectors alike, each file read by a Python task through ``io`` (the driver holds the
    file list only)."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    out = StructType([StructField(FILE_COL, StringType(), False), StructField(POS_COL, LongType(), False)])
    if not delete_files:
        return spark.createDataFrame([], out)
    task_io = io.for_tasks()

    def run(batches: Iterator[pa.RecordBatch]):  # in the Python workers
        import numpy as np
        import pyarrow as pa

        from icefloe.iceberg.delete_files import positions_by_data_file

        for batch in batches:
            for blob in batch.column(0).to_pylist():
                d = pickle.loads(blob)
                if d.is_deletion_vector:
                    targets = [d.referenced_data_file]
                else:
                    with task_io.open_read(d.file_path) as fh:
                        import pyarrow.parquet as pq

                        targets = pq.read_table(fh, columns=["file_path"]).column(0).unique().to_pylist()
                found = positions_by_data_file(task_io, {t: [d] for t in targets if t is not None})
                for target, positions in found.items():
                    positions = np.asarray(positions, dtype=np.int64)
                    yield pa.RecordBatch.from_arrays([pa.array([target] * len(positions), pa.string()),
                                                      pa.array(positions, pa.int64())], names=[FILE_COL, POS_COL])

    payload = [(pickle.dumps(d),) for d in delete_files]
    return connect.task_frame(spark, payload, "task binary", _MAX_SLICES).mapInArrow(run, out)
