"""A Paimon table's changes between two snapshots as a Spark DataFrame.

The snapshots after ``start`` up to ``end`` are planned on the driver (``icefloe.paimon.changelog``:
their changelog files, or the data files APPEND snapshots added when the table has no changelog
producer); one Spark task per file reads its records as they are stored, each with its row kind
(``rowkind``: +I, -U, +U, -D). ``changes`` puts ``rowkind`` first, as Paimon's ``audit_log``
shows a stream; ``changelog`` gives the same rows in the shape Iceberg's ``create_changelog_view``
has (``_change_type``, ``_change_ordinal``, ``_commit_snapshot_id`` after the table's columns).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Optional

from icefloe.errors import NoSuchSnapshotError, NotSupportedError
from icefloe.paimon import chain_options
from icefloe.paimon import changelog as cl
from icefloe.paimon.chain import INCREMENTAL
from icefloe.paimon import row_tracking
from icefloe.paimon import types as pt
from icefloe.spark import connect
from icefloe.spark.paimon_read import paimon_read_bucket, partitions_of
from icefloe.spark.scans import empty_frame

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.core.timetravel import AsOf
    from icefloe.paimon.snapshot import Snapshot
    from icefloe.spark.paimon_target import PaimonStore, SparkPaimonTable

ROWKIND = "rowkind"
_ORD, _SNAP = "_change_ordinal", "_commit_snapshot_id"
_CHANGE_TYPES = ("INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE")


def _range(table: PaimonStore, start: Optional[int], end: Optional[int]) -> list[Snapshot]:
    live = table.snapshots()
    ids_live = {s.id for s in live}
    kept = cl.kept_changelogs(table.store) if cl.decoupled(table.store) else []
    snaps = [c for c in kept if c.id not in ids_live] + live
    if not snaps:
        return []
    ids = [s.id for s in snaps]
    end = ids[-1] if end is None else int(end)
    if end not in ids:
        raise NoSuchSnapshotError(f"table {table.name} has no snapshot {end} (it has {ids[0]}..{ids[-1]})")
    if start is not None and int(start) < ids[0] - 1:
        raise NoSuchSnapshotError(f"the changes of {table.name} after snapshot {start} are gone: snapshots (and "
                                  f"changelogs) before {ids[0]} have expired")
    lo = -1 if start is None else int(start)
    return [s for s in snaps if lo < s.id <= end]


def changes_df(spark: SparkSession, table: PaimonStore, start: Optional[int] = None, end: Optional[int] = None,
               iceberg_shape: bool = False) -> DataFrame:
    """The records of the snapshots in ``(start, end]`` (``start`` None: from the first)."""
    import pickle

    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

    table.refresh()
    schema = table.table_schema
    if chain_options.branches(schema.options, getattr(table, "branch", None)) is not None:
        raise NotSupportedError("the changes (an incremental query or changelog)", table.name, "paimon",
                                INCREMENTAL)
    if row_tracking.evolution_enabled(schema.options):
        raise NotSupportedError("the changes (a changelog or stream read)", table.name, "paimon",
                                "a data-evolution table's update writes files of some columns of existing rows, "
                                "which are no changed rows of their own; read its snapshots whole instead")
    fields = schema.fields
    mode = cl.producer(schema)
    keyed = bool(schema.primary_keys)
    tasks: list[tuple[bytes]] = []
    for ordinal, snap in enumerate(_range(table, start, end)):
        for e in cl.snapshot_changes(table.store, snap, mode):
            tasks.append((pickle.dumps((e.file.path, list(table.schema_by_id(e.file.schema_id).fields),
                                        ordinal, snap.id)),))
    values = pt.to_spark_schema(fields, with_ids=False)
    if iceberg_shape:
        out = StructType(list(values.fields) + [StructField("_change_type", StringType(), False),
                                                StructField(_ORD, IntegerType(), False),
                                                StructField(_SNAP, LongType(), False)])
    else:
        out = StructType([StructField(ROWKIND, StringType(), False)] + list(values.fields))
    if not tasks:
        return empty_frame(spark, out)
    task_io = table.io.for_tasks()
    labels = _CHANGE_TYPES if iceberg_shape else cl.KIND_LABELS

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # in the Python workers
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyspark.sql.pandas.types import to_arrow_schema as spark_arrow_schema

        from icefloe.paimon import merge as mg
        from icefloe.paimon.arrow_read import read_data_file
        from icefloe.paimon.schema import evolve_arrow

        wanted = spark_arrow_schema(out, timezone="UTC")
        for batch in batches:
            for blob in batch.column(0).to_pylist():
                path, ff, ordinal, sid = pickle.loads(blob)
                if keyed:
                    data = mg.read_kv_file(path, task_io, ff, fields)
                    kinds = data.column(mg.VALUE_KIND).cast(pa.int32())
                    data = data.drop_columns(list(mg.SYSTEM_COLUMNS))
                else:
                    data = evolve_arrow(read_data_file(path, task_io), ff, fields)
                    kinds = pa.array([0] * data.num_rows, pa.int32())
                kind = pc.take(pa.array(labels, pa.string()), kinds)
                n = data.num_rows
                if iceberg_shape:
                    cols = list(data.columns) + [kind, pa.array([ordinal] * n, pa.int32()),
                                                 pa.array([sid] * n, pa.int64())]
                else:
                    cols = [kind] + list(data.columns)
                cols = [c.cast(f.type) for c, f in zip(cols, wanted)]
                yield from pa.Table.from_arrays(cols, schema=wanted).to_batches(max_chunksize=65536)

    return connect.task_frame(spark, tasks, "task binary", 10_000).mapInArrow(run, out)


def audit_log_df(spark: SparkSession, table: SparkPaimonTable, snapshot_id: Optional[int] = None,
                 as_of: Optional[AsOf] = None, ref: Optional[str] = None) -> DataFrame:
    """Paimon's ``audit_log`` of a snapshot: ``rowkind`` then the table's columns. A primary-key
    table's rows are merged keeping each key's row kind (+I, +U; -D where the merge retracts a key
    whose older records a compaction has not yet dropped), one Spark task per (partition, bucket);
    an append table's rows are +I."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StringType, StructField, StructType

    table.refresh()
    schema = table.table_schema_for(snapshot_id, as_of, ref)
    if not schema.primary_keys:
        df = table.to_spark(snapshot_id, as_of, ref=ref)
        return df.select(F.lit("+I").alias(ROWKIND), *[F.col(f"`{c}`") for c in df.columns])
    out = StructType([StructField(ROWKIND, StringType(), False)]
                     + list(pt.to_spark_schema(table.table_schema.fields, with_ids=False).fields))
    specs = partitions_of(table, table.plan(None, snapshot_id, as_of, ref), snapshot_id, as_of, ref)
    if not specs:
        return empty_frame(spark, out)
    location, task_io = table.location, table.io.for_tasks()

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # in the Python workers
        wanted = to_arrow_schema(out, timezone="UTC")
        for batch in batches:
            for spec in batch.column(0).to_pylist():
                yield from paimon_read_bucket(location, spec, wanted, task_io, kind_col=ROWKIND)

    return connect.task_frame(spark, [(s,) for s in specs], "task string", 10_000).mapInArrow(run, out)


__all__ = ["changes_df", "audit_log_df", "ROWKIND"]
