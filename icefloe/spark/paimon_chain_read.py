"""A Paimon chain table's merged read with Spark: the driver plans the merges
(``icefloe.paimon.chain``: main's partitions, the snapshot branch's full partitions, and the delta
partitions chain merged onto their anchors); one Python task per merge reads its files and merges
them by key. The filter applies to the merged rows."""
from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Iterable, Iterator, Optional, Sequence

from icefloe.paimon import chain
from icefloe.paimon import types as pt
from icefloe.spark import connect
from icefloe.spark.scans import empty_frame

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.paimon.chain import ChainTable, MergeUnit
    from icefloe.spark.paimon_target import Where


def read_chain(spark: SparkSession, table: ChainTable, units: Sequence[MergeUnit], where: Where = None,
               columns: Optional[Sequence[str]] = None) -> DataFrame:
    """The rows of ``units`` (``chain.plan``) as a DataFrame of the table's columns."""
    from pyspark.sql.pandas.types import to_arrow_schema

    out_schema = pt.to_spark_schema(table.table_schema.fields, with_ids=False)
    if not units:
        df = empty_frame(spark, out_schema)
    else:
        arrow_out = to_arrow_schema(out_schema, timezone="UTC")
        io, name = table.io, table.name

        def merge(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:     # in the Python workers
            import pyarrow as pa

            for batch in batches:
                for blob in batch.column(0).to_pylist():
                    for merged in chain.merged_rows(io, pickle.loads(blob), name):
                        cols = [c.cast(f.type) for c, f in zip(merged.columns, arrow_out)]
                        yield from pa.Table.from_arrays(cols, schema=arrow_out).to_batches()

        tasks = [(pickle.dumps(u),) for u in units]
        slices = max(1, min(len(tasks), connect.default_parallelism(spark) * 2))
        df = connect.task_frame(spark, tasks, "task binary", slices).mapInArrow(merge, out_schema)
    if where is not None:
        df = df.where(where)
    if columns:
        df = df.select(*[f"`{c}`" for c in columns])
    return df


__all__ = ["read_chain"]
