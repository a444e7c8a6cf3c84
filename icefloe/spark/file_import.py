"""Describing existing Parquet files in Spark tasks, for imports that do not rewrite them.

The driver lists the files (names and sizes only); each Spark task reads the footers of its
share of them and turns each into what the target format records (an Iceberg ``DataFile``, a
Paimon ``DataFileMeta``) with a ``describe(path, size, footer)`` function the caller gives; only
those descriptions come back to the driver, never a row.
"""
from __future__ import annotations

import os
import pickle
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, Sequence, TypeVar

from icefloe import errors
from icefloe.core.io import FileIO
from icefloe.spark import connect

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

TASK_FILES = 64           # footers one task reads, at most (a bound on a task's work)
_MAX_SLICES = 10_000
T = TypeVar("T")


def parquet_files(io: FileIO, location: str) -> list[str]:
    """The Parquet files of ``location``: the file itself, or every file below the directory
    whose name does not start with ``.`` or ``_`` (Spark's and Hadoop's hidden files:
    ``_SUCCESS``, ``.crc``), in a stable order."""
    loc = location.rstrip("/") if location != "/" else location
    if not io.is_dir(loc):
        if not io.exists(loc):
            raise FileNotFoundError(loc)
        return [loc]
    out = []
    for path in io.walk_files(loc):
        rel = os.path.relpath(path, loc) if not path.startswith(loc + "/") else path[len(loc) + 1:]
        if any(part.startswith((".", "_")) for part in rel.split("/")):
            continue
        out.append(path)
    return sorted(out)


def describe_files(spark: SparkSession, paths: Sequence[str], io: FileIO, describe: Callable[[str, int, Any], T],
                   parallelism: Optional[int] = None) -> list[T]:
    """``describe(path, size, footer)`` of each of ``paths`` (``footer``: a pyarrow
    ``FileMetaData``), run in Spark tasks (``parallelism`` of them, by default enough for the
    session's cores and at most ``TASK_FILES`` files each); the results in the order of
    ``paths``. An error in a task (an unreadable file, one ``describe`` refuses) fails the call."""
    if not paths:
        return []
    task_io = io.for_tasks()
    slices = parallelism or max(connect.default_parallelism(spark) * 2, -(-len(paths) // TASK_FILES))
    slices = max(1, min(_MAX_SLICES, len(paths), slices))
    indexed = list(enumerate(paths))

    def run(items: Iterable[tuple[int, str]]) -> Iterator[tuple[int, bytes]]:  # in the Python workers
        import pyarrow.parquet as pq

        for i, path in items:
            local = _local(path)
            if local is not None:
                size = os.path.getsize(local)
                footer = pq.read_metadata(local)
            else:
                size = task_io.size(path)
                with task_io.open_read(path) as fh:
                    footer = pq.read_metadata(fh)
            yield i, pickle.dumps(describe(path, size, footer))

    try:
        if connect.is_connect(spark):       # no RDDs: the same tasks as Arrow batches
            out = connect.task_frame(spark, indexed, "i bigint, path string", slices).mapInArrow(
                _arrow_tasks(run), "i bigint, out binary").collect()
        else:
            out = spark.sparkContext.parallelize(indexed, slices).mapPartitions(run).collect()
    except Exception as e:  # a task's error, as Spark reports it: icefloe's own error raised again
        raise _task_error(e) from None
    out.sort(key=lambda r: r[0])
    return [pickle.loads(blob) for _i, blob in out]


def _arrow_tasks(run: Callable[[Iterable[tuple[int, str]]], Iterator[tuple[int, bytes]]]
                 ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """``run`` (a partition's ``(index, path)`` pairs to ``(index, blob)`` pairs) over Arrow batches."""
    def over_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:     # in the Python workers
        import pyarrow as pa

        for batch in batches:
            done = list(run(zip(batch.column(0).to_pylist(), batch.column(1).to_pylist())))
            yield pa.RecordBatch.from_arrays([pa.array([i for i, _ in done], pa.int64()),
                                              pa.array([b for _, b in done], pa.binary())], names=["i", "out"])

    return over_batches


def _task_error(e: Exception) -> Exception:
    """The error a task raised, from the text Spark wraps it in: an icefloe error's own message,
    else the task's last error line."""
    text = str(e)
    found = re.findall(r"icefloe\.errors\.(\w+): (.*)", text)
    if found:
        name, message = found[-1]
        cls = getattr(errors, name, None)
        if isinstance(cls, type) and issubclass(cls, errors.IcefloeError) and name != "NotSupportedError":
            return cls(message)
    lines = [ln for ln in text.splitlines() if re.match(r"^[\w.]+(Error|Exception): ", ln)]
    return errors.MigrationError(f"reading the files' footers failed: {lines[-1] if lines else text.splitlines()[0]}")


def _local(path: str) -> Optional[str]:
    if path.startswith("file:"):
        path = path[5:]
        while path.startswith("//"):
            path = path[1:]
    return path if path.startswith("/") else None


__all__ = ["parquet_files", "describe_files", "TASK_FILES"]
