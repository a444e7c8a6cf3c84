"""Data Evolution tables (``icefloe.paimon.data_evolution``) in Spark: reads and updates of some columns.

A read plans the files on the driver, groups them by row-id range, and gives each range to a Python
task, which reads the columns each file holds with Arrow and merges them (the newest file holding a
column wins). An update (UPDATE, MERGE's ``WHEN MATCHED THEN UPDATE``) labels the merged rows as the
copy-on-write statements do (``paimon_append_dml``); then, for every range with an updated row, one
Python task writes a file of the updated columns with a value for each of the range's rows, in row-id
order, with the range's first row id. Inserted rows (MERGE's ``WHEN NOT MATCHED``) are appended as new
rows. One APPEND snapshot adds them all and removes nothing; a commit since the read that removed a
file of an updated range makes it a ``CommitConflictError`` with nothing committed.

As in Paimon 1.4's Spark engine, DELETE, MERGE's ``WHEN MATCHED THEN DELETE`` and ``WHEN NOT MATCHED
BY SOURCE`` are refused on these tables (``check_merge``, ``refuse_delete``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, Optional, Sequence

from icefloe.core.io import staged_files
from icefloe.core.reports import RowChanges
from icefloe.errors import NotSupportedError
from icefloe.paimon import data_evolution as evolution
from icefloe.paimon import row_tracking
from icefloe.paimon import types as pt
from icefloe.paimon.data_file import CommitMessage, DataFileNamer
from icefloe.paimon.file_store import FileStore
from icefloe.spark import connect
from icefloe.spark.align import explain_spark_error
from icefloe.spark.iceberg_write import task_input
from icefloe.spark.paimon_write import write_data_files
from icefloe.spark.row_changes import ACTION, INSERT, KEEP, UPDATE, column_name, file_stats
from icefloe.spark.scans import empty_frame

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from icefloe.paimon.manifest import ManifestEntry
    from icefloe.paimon.schema import TableSchema
    from icefloe.paimon.snapshot import Snapshot
    from icefloe.spark.merge_clauses import MergeClauses
    from icefloe.spark.paimon_target import SparkPaimonTable, Where

enabled = evolution.enabled
ROW_ID, SEQUENCE_NUMBER = row_tracking.NAMES
# why reads that take files one by one (changes, the data source, incremental queries) refuse these tables
NO_INCREMENTAL = ("its files of some columns are merged with the other files of their row-id range by a read of "
                  "a whole snapshot; icefloe reads such a table only whole (SELECT, to_spark, to_arrow, $row_tracking)")


def read_evolved(table: SparkPaimonTable, schema: TableSchema, entries: Sequence[ManifestEntry], where: Where = None,
                 columns: Optional[Sequence[str]] = None, tracked: bool = False, file_col: Optional[str] = None,
                 pos_col: Optional[str] = None, bucket_col: Optional[str] = None) -> DataFrame:
    """The rows of a data-evolution table's planned ``entries`` under ``schema``, each row-id range's
    files merged column by column by one Python task; with ``tracked`` ``_ROW_ID`` and
    ``_SEQUENCE_NUMBER`` after the columns, then ``file_col`` (the range's oldest file: the one its
    rows were first written to), ``pos_col`` (the row's position in the range) and ``bucket_col``."""
    import pickle

    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

    spark = table.spark
    fields = list(schema.fields)
    extra: list[StructField] = []
    if tracked:
        extra += [StructField(ROW_ID, LongType(), False), StructField(SEQUENCE_NUMBER, LongType(), False)]
    if file_col:
        extra.append(StructField(file_col, StringType(), False))
    if pos_col:
        extra.append(StructField(pos_col, LongType(), False))
    if bucket_col:
        extra.append(StructField(bucket_col, IntegerType(), False))
    out = StructType(list(pt.to_spark_schema(fields, with_ids=False).fields) + extra)
    tasks = [(pickle.dumps((evolution.group_files(g, lambda i: table.schema_by_id(i).fields), g[0].bucket)),)
             for g in evolution.groups(entries)]
    if not tasks:
        df = empty_frame(spark, out)
    else:
        task_io = table.io.for_tasks()

        def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # in the Python workers
            import pyarrow as pa
            from pyspark.sql.pandas.types import to_arrow_schema as spark_arrow_schema

            wanted = spark_arrow_schema(out, timezone="UTC")
            for batch in batches:
                for blob in batch.column(0).to_pylist():
                    files, bucket = pickle.loads(blob)
                    data = evolution.read_group(task_io, files, fields, tracked)
                    n = data.num_rows
                    if file_col:
                        data = data.append_column(file_col, pa.array([files[-1].meta.path] * n, pa.string()))
                    if pos_col:
                        data = data.append_column(pos_col, pa.array(range(n), pa.int64()))
                    if bucket_col:
                        data = data.append_column(bucket_col, pa.array([bucket] * n, pa.int32()))
                    cols = [data.column(i).cast(f.type) for i, f in enumerate(wanted)]
                    yield from pa.Table.from_arrays(cols, schema=wanted).to_batches(max_chunksize=65536)

        df = connect.task_frame(spark, tasks, "task binary", 10_000).mapInArrow(run, out)
    if where is not None:
        df = df.where(where)
    if columns:
        df = df.select(*[f"`{c}`" for c in columns], *[f"`{f.name}`" for f in extra])
    return df


# --------------------------------------------------------------------------- statements
def refuse_delete(table: SparkPaimonTable, operation: str) -> None:
    """DELETE (and a replacement of the rows matching a condition) on a data-evolution table."""
    if enabled(table.table_schema.options):
        raise NotSupportedError(operation, table.name, "paimon",
                                "Paimon 1.4 deletes no rows of a data-evolution table (data-evolution.enabled): a "
                                "row's columns are in several files matched by row id, and such a table takes no "
                                "deletion vectors; UPDATE and MERGE INTO ... WHEN MATCHED THEN UPDATE change "
                                "some columns of rows in place")


def check_merge(merge: MergeClauses, schema: TableSchema) -> list[str]:
    """The clauses Paimon 1.4's MERGE INTO takes on a data-evolution table (``WHEN MATCHED THEN
    UPDATE``, ``WHEN NOT MATCHED THEN INSERT``), else a refusal naming the clause; returns the
    columns its updates change (in the table's order)."""
    name = merge.table.name
    if merge.not_matched_by_source:
        raise NotSupportedError("MERGE INTO with WHEN NOT MATCHED BY SOURCE", name, "paimon",
                                "Paimon 1.4's MERGE INTO a data-evolution table does not take that clause")
    for c in merge.matched:
        if c.kind == "delete":
            raise NotSupportedError("MERGE INTO with WHEN MATCHED THEN DELETE", name, "paimon",
                                    "Paimon 1.4's MERGE INTO a data-evolution table takes only UPDATE SET in "
                                    "WHEN MATCHED: it deletes no rows of such a table")
    changed: set[str] = set()
    for c in merge.matched:
        if c.kind == "update_all":
            changed.update(f.name for f in schema.fields)
        else:
            changed.update(changed_columns(schema, c.values or {}, merge.ta))
    columns = [f.name for f in schema.fields if f.name in changed]
    evolution.check_column_update(schema, columns, name, "MERGE INTO")
    return columns


def update_columns(table: SparkPaimonTable, sets: dict[str, Any]) -> list[str]:
    """The columns an UPDATE of a data-evolution table changes (checked: none a partition column); []
    for another table."""
    schema = table.table_schema
    if not enabled(schema.options):
        return []
    columns = changed_columns(schema, sets, "")
    evolution.check_column_update(schema, columns, table.name, "UPDATE")
    return columns


def changed_columns(schema: TableSchema, sets: dict[str, Any], alias: str = "t") -> list[str]:
    """The columns assignments change, in the table's order: ``c = c`` (or ``t.c``) changes nothing,
    as Paimon leaves such an assignment out."""
    by_lower = {f.name.lower(): f.name for f in schema.fields}
    out: set[str] = set()
    for key, v in sets.items():
        name = by_lower.get(column_name(key, alias).lower(), column_name(key, alias))
        if isinstance(v, str) and column_name(v, alias).lower() == name.lower():
            continue
        out.add(name)
    return [f.name for f in schema.fields if f.name in out]


def apply_updates(table: SparkPaimonTable, operation: str, base: Optional[Snapshot], entries: Sequence[ManifestEntry],
                  changes: DataFrame, columns: Sequence[str], file_col: str) -> RowChanges:
    """Write and commit labelled rows of a data-evolution table (the table's columns, ``_ROW_ID``,
    ``file_col`` naming each row's range, ACTION; every row of each range read is there): a file of
    ``columns`` for each range with an updated row, inserted rows appended."""
    from pyspark.sql import functions as F

    changes, by_file, counts = file_stats(changes, file_col)
    if counts["deleted"]:
        raise NotSupportedError(operation, table.name, "paimon", "a data-evolution table's rows are not deleted")
    touched = sorted(f for f, r in by_file.items() if r["upd"] > 0) if columns else []
    if not touched and not counts["inserted"]:
        return RowChanges.of(counts)
    by_key = {g[-1].file.path: g for g in evolution.groups(entries)}
    updated: list[ManifestEntry] = [e for key in touched for e in by_key[key]]
    messages: list[CommitMessage] = []
    try:
        if counts["inserted"]:
            new_rows = changes.where(F.col(ACTION) == INSERT).select(*[f"`{f.name}`" for f in table.table_schema.fields])
            messages += write_data_files(new_rows, table)
        if touched:
            rows = changes.where(F.col(file_col).isin(touched) & F.col(ACTION).isin(KEEP, UPDATE))
            messages += _write_ranges(table, rows, columns, file_col, {k: by_key[k] for k in touched})
    except BaseException:
        table.abort(messages)
        raise
    if not touched:
        snap = table.commit(messages)
    else:
        snap = table.commit_column_updates(messages, updated, operation.upper(), base.id if base else None)
    return RowChanges.of(counts, snap.id if snap else None)


def _write_ranges(table: SparkPaimonTable, rows: DataFrame, columns: Sequence[str], file_col: str,
                  ranges: dict[str, list[ManifestEntry]]) -> list[CommitMessage]:
    """One file of ``columns`` per updated range (``rows``: every row of those ranges, ``file_col``
    naming the range), each written by the Python task that gets the range's rows."""
    import pickle

    from pyspark.sql import functions as F

    io, location, schema, name = table.store.io.for_tasks(), table.store.table_path, table.table_schema, table.name
    facts: dict[str, tuple[int, tuple[Any, ...], int, int, int]] = {}
    for key, group in ranges.items():
        first, last = evolution.row_range(group[0].file)
        e = group[0]
        facts[key] = (first, tuple(table.store.partition_values(e.partition)), e.bucket, e.total_buckets,
                      last - first + 1)
    wanted = list(columns)

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # in the Python workers
        import pyarrow as pa
        import pyarrow.compute as pc

        got = task_input(batches)
        if got is None:
            return
        data = got[0]
        store = FileStore(io, location, schema)
        namer = DataFileNamer(schema.core_options.data_file_prefix, schema.core_options.file_format)
        out: list[CommitMessage] = []
        with staged_files(io) as written:
            keys = data.column(file_col)
            for key in pc.unique(keys).to_pylist():
                first, partition, bucket, total, count = facts[key]
                part = data.filter(pc.equal(keys, key)).sort_by(ROW_ID)
                evolution.check_range_rows(part.column(ROW_ID).to_pylist(), first, count, name)
                meta = evolution.write_columns_file(io, schema, part, wanted, store.bucket_dir(partition, bucket),
                                                    namer, written, first, name)
                out.append(CommitMessage(partition, bucket, total, [meta]))
        yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(out)], pa.binary())], names=["messages"])

    picked = rows.select(*[F.col(f"`{c}`") for c in wanted], F.col(ROW_ID), F.col(file_col))
    try:
        got = picked.repartition(F.col(file_col)).mapInArrow(run, "messages binary").collect()
    except Exception as e:
        raise explain_spark_error(e) from None
    return [m for r in got for m in pickle.loads(r["messages"])]


__all__ = ["apply_updates", "check_merge", "changed_columns", "read_evolved", "refuse_delete",
           "update_columns", "NO_INCREMENTAL"]
