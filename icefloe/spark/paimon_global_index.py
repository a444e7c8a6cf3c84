"""Paimon global indexes built in Spark tasks: one task per row range (``global_index.ShardSpec``)
reads the range's data files and writes its index file, as Paimon's Spark procedure builds them; the
driver commits the entries the tasks return (``global_index_ops.create_global_index``).

Small builds stay on the driver: ``builder`` picks Spark tasks only when the rows to index are more
than ``DRIVER_ROWS``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Optional, Sequence

from icefloe.paimon import global_index as gi
from icefloe.paimon.dynamic_bucket import IndexRecord
from icefloe.paimon.global_index_ops import Build, delete_files, on_driver
from icefloe.spark import connect
from icefloe.spark.align import explain_spark_error

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from icefloe.core.io import FileIO

# rows up to which the index files are written on the driver
DRIVER_ROWS = 1_000_000


def _rows(specs: Sequence[gi.ShardSpec]) -> int:
    return sum(s.range_end - s.range_start + 1 for s in specs)


def in_tasks(spark: SparkSession) -> Build:
    """A ``Build`` that writes each range's index file in a Spark task."""
    def build(io: FileIO, specs: Sequence[gi.ShardSpec]) -> list[IndexRecord]:
        import pickle

        def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            import pyarrow as pa

            for batch in batches:
                for i, spec in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()):
                    out = pickle.dumps(gi.build_shard(io, pickle.loads(spec)))
                    yield pa.RecordBatch.from_pylist([{"task": i, "out": out}],
                                                     schema=pa.schema([("task", pa.int64()), ("out", pa.binary())]))

        rows = [(i, pickle.dumps(spec)) for i, spec in enumerate(specs)]
        df = connect.task_frame(spark, rows, "task long, spec binary", connect.default_parallelism(spark) * 2)
        try:
            done = df.mapInArrow(run, "task long, out binary").collect()
        except Exception as e:
            # a failed task's files, and those of the tasks that finished, are referenced by no snapshot
            raise explain_spark_error(e) from None
        per_task: list[list[IndexRecord]] = [pickle.loads(r.out) for r in sorted(done, key=lambda r: r.task)]
        records = [r for got in per_task for r in got]
        if len(per_task) != len(specs):         # a task ran twice or not at all: keep the files of none
            delete_files(io, specs[0].index_dir, records)
            raise RuntimeError(f"{len(specs)} global index tasks returned {len(per_task)} answers")
        return records
    return build


def builder(spark: Optional[SparkSession], driver_rows: int = DRIVER_ROWS) -> Build:
    """The driver for up to ``driver_rows`` rows (or without a session), else Spark tasks."""
    def build(io: FileIO, specs: Sequence[gi.ShardSpec]) -> list[IndexRecord]:
        if spark is None or _rows(specs) <= driver_rows:
            return on_driver(io, specs)
        return in_tasks(spark)(io, specs)
    return build


__all__ = ["DRIVER_ROWS", "builder", "in_tasks"]
