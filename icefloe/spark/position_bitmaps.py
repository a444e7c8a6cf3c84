"""Each data file's row positions as a Roaring bitmap, built by Spark tasks: the driver receives one
compact bitmap per file, never the positions.

Every task makes a bitmap of the positions it holds of each file (no shuffle of the rows: a file's
rows come mostly from one scan task); those partial bitmaps, a few bytes per run of positions, are
then sent by file to tasks that OR each file's into one. The Python workers need only pyarrow and
pyroaring (dependencies of the package): the task functions are closures that import nothing of
icefloe, so a user's own session runs them as it is.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from icefloe.spark import connect
from icefloe.spark.align import explain_spark_error

if TYPE_CHECKING:
    import pyarrow as pa
    from pyroaring import BitMap
    from pyspark.sql import DataFrame

_SCHEMA = "file string, bitmap binary"
_ROWS_OUT = 1024        # (file, bitmap) rows per batch a task sends on


def _tasks() -> tuple[Callable[[Iterable[pa.RecordBatch]], Iterator[pa.RecordBatch]],
                      Callable[[Iterable[pa.RecordBatch]], Iterator[pa.RecordBatch]]]:
    """The two task functions, made here so that Spark sends them by value (a module's own
    functions go by name, and the worker would import icefloe to find them)."""
    rows_out = _ROWS_OUT

    def _emit(maps: dict) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        items = sorted(maps.items())
        for i in range(0, len(items), rows_out):
            part = items[i:i + rows_out]
            yield pa.RecordBatch.from_arrays([pa.array([f for f, _ in part], pa.string()),
                                              pa.array([b.serialize() for _, b in part], pa.binary())],
                                             names=["file", "bitmap"])

    def _partial(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # in the Python workers
        """A task's (file, position) rows as one bitmap per file it saw."""
        import array

        import numpy as np
        import pyarrow.compute as pc
        from pyroaring import BitMap

        maps: dict[str, BitMap] = {}
        for b in batches:
            if b.num_rows == 0:
                continue
            files, pos = b.column(0), b.column(1)
            if files.null_count or pos.null_count:
                raise ValueError("a row to mark names no data file or position")
            enc = pc.dictionary_encode(files)
            codes = enc.indices.to_numpy(zero_copy_only=False)
            positions = pos.to_numpy(zero_copy_only=False)
            if positions.min() < 0 or positions.max() > 0xFFFFFFFF:
                raise ValueError(f"a row position out of a deletion vector's range: {int(positions.min())}..."
                                 f"{int(positions.max())}")
            order = np.argsort(codes, kind="stable")
            codes, positions = codes[order], positions[order].astype(np.uint32)
            found, starts = np.unique(codes, return_index=True)
            ends = [*starts[1:].tolist(), len(codes)]
            names = enc.dictionary.to_pylist()
            for code, s, e in zip(found.tolist(), starts.tolist(), ends):
                bm = BitMap(array.array("I", positions[s:e].tobytes()))
                name = names[code]
                if name in maps:
                    maps[name] |= bm
                else:
                    maps[name] = bm
        yield from _emit(maps)

    def _merged(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # in the Python workers
        """Each file's partial bitmaps (all of its in this task) ORed into one."""
        from pyroaring import BitMap

        maps: dict[str, BitMap] = {}
        for b in batches:
            for name, raw in zip(b.column(0).to_pylist(), b.column(1).to_pylist()):
                bm = BitMap.deserialize(raw)
                if name in maps:
                    maps[name] |= bm
                else:
                    maps[name] = bm
        yield from _emit(maps)

    return _partial, _merged


def position_bitmaps(rows: DataFrame, file_col: str, pos_col: str, files: int) -> dict[str, BitMap]:
    """``rows``' positions (``pos_col``, non-negative and below 2^32) per data file (``file_col``), as
    bitmaps built in tasks; ``files``, how many files there may be, sizes the merging job. The
    driver collects one serialized bitmap per file."""
    from pyroaring import BitMap
    from pyspark.sql import functions as F

    spark = rows.sparkSession
    partial_task, merge_task = _tasks()
    tasks = max(1, min(files, connect.default_parallelism(spark)))
    picked = rows.select(F.col(file_col).cast("string").alias("file"), F.col(pos_col).cast("long").alias("pos"))
    partial = picked.mapInArrow(partial_task, _SCHEMA)
    try:
        got = partial.repartition(tasks, "file").mapInArrow(merge_task, _SCHEMA).collect()
    except Exception as e:
        raise explain_spark_error(e) from None
    return {r["file"]: BitMap.deserialize(r["bitmap"]) for r in got}


__all__ = ["position_bitmaps"]
