"""Distributed scan planning (the Java runtime's ``distributed`` planning mode): a plan's manifests
read and filtered in Spark tasks, a few manifests per task, their matches sent back to the driver,
which matches delete files to data files as a local plan does (``iceberg.scan.plan_files``).
"""
from __future__ import annotations

import dataclasses
import marshal
import pickle
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

from icefloe.core.io import FileIO
from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.manifest import DataFile, ManifestEntry
from icefloe.iceberg.scan import FileScanTask, ManifestMatches
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.spark import connect
from icefloe.spark.align import explain_spark_error

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from icefloe.core import expressions as ex
    from icefloe.iceberg.manifest_list import ManifestFile


class SparkPlanner:
    """``scan.RemotePlanner`` over a Spark session. ``session`` gives the session to run tasks in
    (it may start one); ``running`` the session already running, if any: settings and the
    ``auto`` mode's parallelism are read from it alone, so a plan never starts Spark to decide
    (by default the session active in this thread, ``running_session``)."""

    def __init__(self, session: Callable[[], SparkSession],
                 running: Optional[Callable[[], Optional[SparkSession]]] = None):
        self._session = session
        self._running: Callable[[], Optional[SparkSession]] = running if running is not None else running_session

    def setting(self, key: str) -> Optional[str]:
        spark = self._running()
        if spark is None:
            return None
        return spark.conf.get(key, None)

    def parallelism(self) -> int:
        spark = self._running()
        if spark is None:
            return 0
        return _parallelism(spark)

    def run(self, io: FileIO, meta: TableMetadata, bound: Optional[ex.Expr],
            manifests: list[ManifestFile]) -> list[ManifestMatches]:
        return plan_in_tasks(self._session(), io, meta, bound, manifests)


def running_session(spark: Optional[SparkSession] = None) -> Optional[SparkSession]:
    """``spark``, else the session running in this thread (None: none is)."""
    if spark is not None:
        return spark
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def _parallelism(spark: SparkSession) -> int:
    return connect.default_parallelism(spark)      # (a Spark Connect session's, from its settings)


def plan_in_tasks(spark: SparkSession, io: FileIO, meta: TableMetadata, bound: Optional[ex.Expr],
                  manifests: list[ManifestFile]) -> list[ManifestMatches]:
    """``scan.plan_manifests(io, meta, bound, manifests)`` with the manifests spread over Spark
    tasks: one ``ManifestMatches`` per manifest, in order. An error in a task (a corrupt manifest:
    ``CorruptMetadataError`` naming it) is raised here as it would be locally."""
    import pyarrow as pa

    if not manifests:
        return []
    shared = pickle.dumps((io, meta, bound))      # in the task's closure (Spark broadcasts a large one)
    out_schema = pa.schema([("i", pa.int64()), ("matches", pa.binary())])

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task_io, task_meta, task_bound = pickle.loads(shared)
        for batch in batches:
            order = batch.column(0).to_pylist()
            listed = [pickle.loads(b) for b in batch.column(1).to_pylist()]
            try:
                found = scan_mod.plan_manifests(task_io, task_meta, task_bound, listed)
                answers = [_encoded(got) for got in found]
            except Exception as e:  # noqa: BLE001 - sent to the driver, raised there as it is
                answers = [b"p" + pickle.dumps(("error", _portable(e)))] + \
                    [b"p" + pickle.dumps(("ok", None))] * (len(order) - 1)
            yield pa.RecordBatch.from_arrays([pa.array(order, pa.int64()), pa.array(answers, pa.binary())],
                                             schema=out_schema)

    rows = pa.table({"i": pa.array(range(len(manifests)), pa.int64()),
                     "manifest": pa.array([pickle.dumps(m) for m in manifests], pa.binary())})
    slices = max(1, min(len(manifests), _parallelism(spark) * 2))
    df = spark.createDataFrame(rows).repartition(slices)
    try:
        done = df.mapInArrow(run, "i long, matches binary").collect()
    except Exception as e:
        raise explain_spark_error(e) from None
    found: list[Any] = [None] * len(manifests)        # each filled below, from its answer
    for r in done:
        kind, value = _decoded(r["matches"])
        if kind == "error":
            raise _restored(value)
        found[r["i"]] = value
    return found


# A manifest's matches travel as plain tuples in ``marshal``'s format: for a plan of many files,
# pickling each file's objects (and building them again) cost more than reading the manifests
# (50,000 files: 5.6 s to pickle and 5.1 s to unpickle; marshal, a fraction of that). Values
# marshal cannot hold (a partition's Decimal or UUID) send that manifest's matches pickled.
_FIELDS = tuple(f.name for f in dataclasses.fields(DataFile))


def _encoded(got: ManifestMatches) -> bytes:
    def file_values(f: DataFile) -> tuple[Any, ...]:
        return tuple(getattr(f, n) for n in _FIELDS)

    plain = ([(file_values(t.file), t.data_sequence_number) for t in got.tasks],
             [(e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number, file_values(e.data_file))
              for e in got.deletes])
    try:
        return b"m" + marshal.dumps(plain)
    except ValueError:
        return b"p" + pickle.dumps(("ok", got))


def _decoded(data: bytes) -> tuple[str, Any]:
    if data[:1] == b"p":
        return pickle.loads(data[1:])
    tasks, deletes = marshal.loads(data[1:])
    new = DataFile
    return "ok", ManifestMatches([FileScanTask(new(*values), seq) for values, seq in tasks],
                                 [ManifestEntry(status, snap, seq, fseq, new(*values))
                                  for status, snap, seq, fseq, values in deletes])


def _portable(e: Exception) -> tuple[type[Exception], str, dict[str, Any]]:
    """An exception as picklable parts (icefloe's errors take arguments their ``args`` do not hold)."""
    return type(e), str(e), dict(e.__dict__)


def _restored(parts: tuple[type[Exception], str, dict[str, Any]]) -> Exception:
    cls, message, attributes = parts
    e = cls.__new__(cls)
    e.args = (message,)
    e.__dict__.update(attributes)
    return e


__all__ = ["SparkPlanner", "plan_in_tasks", "running_session"]
