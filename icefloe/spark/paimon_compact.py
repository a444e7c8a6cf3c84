"""Compaction of Paimon tables in Spark: one task per (partition, bucket).

Primary-key tables (full compaction):

The driver plans the buckets (``icefloe.paimon.kv_compact.plan``) and commits; each Spark
task merges one bucket's files, streaming, and writes the merged records at the highest
LSM level (``kv_compact.compact_bucket``), returning only the new files' metadata. A failed
task deletes what it wrote and a failed commit deletes every new file; files of tasks that
finished before another task failed are referenced by no snapshot and left to orphan cleanup.
A table with the lookup or full-compaction changelog producer gets each bucket's changelog
files written by the same task (``icefloe.paimon.changelog``).

Append tables: the driver groups each (partition, bucket)'s small files
(``icefloe.paimon.maintenance.compact``); each task reads one group's files and writes them again
as files of the target size (``maintenance.rewrite_group``), returning the new files' manifest
entries. The driver holds no row.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Iterator, Mapping, Optional, Sequence, TypeVar

from icefloe.paimon import kv_compact, maintenance
from icefloe.paimon.data_file import local_now_millis
from icefloe.spark import connect
from icefloe.spark.align import explain_spark_error
from icefloe.spark.paimon_sort_compact import NONE, check_sortable, sort_compact

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from icefloe.paimon import changelog as cl
    from icefloe.paimon.binary_row import BinaryRow
    from icefloe.paimon.data_file import DataFileMeta
    from icefloe.paimon.manifest import ManifestEntry
    from icefloe.paimon.snapshot import Snapshot
    from icefloe.paimon.types import DataField
    from icefloe.spark.paimon_target import PaimonStore, SparkPaimonTable

    #: what a primary-key compaction task gets: ``kv_compact.compact_bucket``'s arguments for one bucket
    #: (paths, each file's fields, partition, bucket, level, drop_deletes, changelog, vectors, exclude, levels)
    BucketSpec = tuple[list[str], list[list[DataField]], BinaryRow, int, Optional[int], bool,
                       Optional[cl.CompactionChangelog], Optional[kv_compact.VectorsSpec], list[kv_compact.KeyFile],
                       list[int]]
    #: what it returns: the new files, the changelog files, the bucket's new vectors
    BucketDone = tuple[list[DataFileMeta], list[DataFileMeta], list[kv_compact.VectorsOut]]

_Spec = TypeVar("_Spec")
_Out = TypeVar("_Out")


def _in_tasks(spark: SparkSession, specs: Sequence[_Spec], work: Callable[[_Spec], _Out]) -> list[_Out]:
    """``work(spec)`` (picklable answers) for each of ``specs``, each run in a Spark task, in
    ``specs``' order; a task's error surfaces as ``explain_spark_error`` makes it."""
    import pickle

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        for batch in batches:
            for i, spec in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()):
                yield pa.RecordBatch.from_pylist([{"task": i, "out": pickle.dumps(work(pickle.loads(spec)))}],
                                                 schema=pa.schema([("task", pa.int64()), ("out", pa.binary())]))

    rows = [(i, pickle.dumps(spec)) for i, spec in enumerate(specs)]
    parallelism = max(1, min(len(rows), connect.default_parallelism(spark) * 2))
    df = spark.createDataFrame(rows, "task long, spec binary").repartition(parallelism)
    try:
        done = df.mapInArrow(run, "task long, out binary").collect()
    except Exception as e:
        raise explain_spark_error(e) from None
    return [pickle.loads(r.out) for r in sorted(done, key=lambda r: r.task)]


def compact_primary_key_table(spark: SparkSession, table: PaimonStore, where: Any = None,
                              target_file_size: Optional[int] = None,
                              buckets: Optional[Collection[tuple[bytes, int]]] = None,
                              full: Optional[bool] = None) -> Optional[Snapshot]:
    """Full compaction (``buckets`` None, or ``full``: of those buckets), or the universal
    compaction Paimon's writers run after a commit, of those (partition bytes, bucket) pairs (all
    when None): only the sorted runs it picks, written to the level it picks."""
    table.refresh()
    table.check_writable()
    base = table.current_snapshot()
    if base is None:
        return None
    schema = table.table_schema
    table.check_mergeable(schema)
    if full is None:
        full = buckets is None
    tasks = kv_compact.plan(table, where, buckets) if full else kv_compact.plan_universal(table, buckets)
    if not tasks:
        return None
    specs: list[BucketSpec] = [(task.paths(), [table.schema_by_id(e.file.schema_id).fields for e in task.entries], task.partition,
              task.bucket, task.level, task.drop_deletes, task.changelog, task.vectors_spec(), task.exclude,
              task.levels()) for task in tasks]
    io, location, name = table.io.for_tasks(), table.location, table.name

    def compact_one(spec: BucketSpec) -> BucketDone:
        paths, fields, partition, bucket, level, drop_deletes, changelog, vectors, exclude, levels = spec
        changelog_metas: list[DataFileMeta] = []
        vectors_out: list[kv_compact.VectorsOut] = []
        metas = kv_compact.compact_bucket(io, location, schema, paths, fields, partition, bucket, name,
                                          target_file_size, level, drop_deletes, changelog, changelog_metas,
                                          vectors, vectors_out, exclude, levels)
        return metas, changelog_metas, vectors_out

    done = [(task, *out) for task, out in zip(tasks, _in_tasks(spark, specs, compact_one))]
    return kv_compact.commit(table, base, done)


def compact_append_table(spark: SparkSession, table: PaimonStore, where: Any = None,
                         target_file_size: Optional[int] = None,
                         buckets: Optional[Collection[tuple[bytes, int]]] = None,
                         minor: bool = False) -> Optional[Snapshot]:
    """An append table's small files of each (partition, bucket) rewritten together (``minor``:
    the files a writer's compaction picks), each group by a Spark task; a COMPACT snapshot, or
    None when no group has two or more files to merge."""
    io, schema = table.io.for_tasks(), table.table_schema

    def rewrite(groups: list[maintenance.AppendGroup], target: int) -> list[list[ManifestEntry]]:
        return _in_tasks(spark, groups, lambda group: maintenance.rewrite_group(io, schema, group, target))

    return maintenance.compact(table, where, target_file_size, rewrite=rewrite, buckets=buckets, minor=minor)


FULL, MINOR = "full", "minor"


def chosen_entries(table: PaimonStore, where: Any = None, partitions: Optional[Iterable[Mapping[str, Any]]] = None,
                   idle_ms: Optional[int] = None) -> list[ManifestEntry]:
    """The live files of the partitions a compaction takes: those with a file a read with ``where``
    uses, matching one of ``partitions`` (dicts of key -> value text), and (``idle_ms``) whose
    newest file was written that long ago or longer (Paimon's ``partition_idle_time``; file
    creation times are local wall-clock times, as Paimon writes them)."""
    if table.current_snapshot() is None:
        return []
    store = table.store
    every = table.plan()
    keep = {e.partition.to_bytes() for e in (table.plan(where) if where is not None else every)}
    if partitions is not None:
        matches = [table.static_partition_match(p) for p in partitions]
        keep = {e.partition.to_bytes() for e in every if e.partition.to_bytes() in keep
                and any(m(store.partition_values(e.partition)) for m in matches)}
    if idle_ms is not None:
        newest: dict[bytes, int] = {}
        for e in every:
            key = e.partition.to_bytes()
            newest[key] = max(newest.get(key, 0), e.file.creation_time or 0)
        horizon = local_now_millis() - int(idle_ms)
        keep = {k for k in keep if newest[k] <= horizon}
    return [e for e in every if e.partition.to_bytes() in keep]


def compact(spark: SparkSession, table: SparkPaimonTable, where: Any = None,
            partitions: Optional[Iterable[Mapping[str, Any]]] = None, strategy: Optional[str] = None,
            idle_ms: Optional[int] = None, order_strategy: Optional[str] = None, order_by: Sequence[str] = (),
            target_file_size: Optional[int] = None) -> Optional[Snapshot]:
    """Paimon's ``compact`` procedure: a sort compaction (``order_strategy`` order, zorder or
    hilbert over ``order_by``) of an append table's partitions chosen, or a compaction of their
    buckets, ``full`` (the default: primary-key buckets merged into the highest level, append
    tables' small files rewritten) or ``minor`` (what the writers' own compaction would pick)."""
    table.refresh()
    table.check_writable()
    order = (order_strategy or NONE).lower()
    strategy = (strategy or FULL).lower()
    if strategy not in (FULL, MINOR):
        raise ValueError(f"compact_strategy {strategy!r}: Paimon's are 'full' and 'minor'")
    if order != NONE:
        if idle_ms is not None:
            raise ValueError("partition_idle_time does not go with order_strategy: Paimon's sort compaction "
                             "rewrites the partitions chosen whatever their age")
        check_sortable(table, order, list(order_by))
        return sort_compact(table, chosen_entries(table, where, partitions), order, list(order_by), target_file_size)
    if order_by:
        raise ValueError(f"order_by {', '.join(order_by)} needs an order_strategy ('order', 'zorder' or 'hilbert')")
    if where is None and partitions is None and idle_ms is None:
        buckets = None
    else:
        buckets = {(e.partition.to_bytes(), e.bucket) for e in chosen_entries(table, where, partitions, idle_ms)}
        if not buckets:
            return None
    if table.table_schema.primary_keys:
        return compact_primary_key_table(spark, table, None, target_file_size, buckets, full=strategy == FULL)
    return compact_append_table(spark, table, None, target_file_size, buckets, minor=strategy == MINOR)


__all__ = ["compact_primary_key_table", "compact_append_table", "compact", "chosen_entries", "FULL", "MINOR"]
