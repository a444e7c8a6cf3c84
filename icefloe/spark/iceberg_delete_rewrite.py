"""Compaction of position delete files in Spark: Iceberg's ``rewrite_position_delete_files``
(spark-procedures).

The driver plans (spec "Scan Planning": a position delete file lies in the partition of the data
files it points at): the live position delete files are grouped by (spec, partition); a file is a
candidate when its size lies outside [min, max] of ``write.delete.target-file-size-bytes`` (64 MB),
or always with ``rewrite-all``; a partition's candidates are rewritten when there are
``min-input-files`` (5) of them, or they hold more than the target size together, or more than
``max-file-size-bytes`` (the size rules of Iceberg's delete planner). Spark tasks read their
positions, keep those whose data file is still live (deletes of removed data files are dropped)
and write each group's positions as one position delete file of its partition, sorted by data
file and position. One ``replace`` snapshot swaps the files.

Format v3 keeps positions in deletion vectors: a table whose position deletes are all vectors
has nothing to rewrite, as in Iceberg. A v3 table still holding format v2 position delete files (an
upgraded table) has its groups rewritten into deletion vectors instead, as Iceberg 1.8+ does: each
live data file a group's files apply to gets one vector holding every position that applies to it
(those of its other delete files and earlier vector too, as the spec allows one vector per data
file); the group's files and the earlier vectors leave the table in the same ``replace`` snapshot.
Only the v2 files are grouped there: vectors are rewritten when a data file of theirs gets a new one.
"""
from __future__ import annotations

import pickle
import uuid
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Optional

from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.delete_files import write_position_deletes
from icefloe.iceberg.manifest import DATA, POSITION_DELETES
from icefloe.iceberg.manifest_reader import live_entries
from icefloe.iceberg.parquet_props import ParquetSettings
from icefloe.iceberg.rewrite import RUN_OPTIONS, TARGET_FILE_SIZE, BinPack, RewriteFiles, check_run_option
from icefloe.spark.align import explain_spark_error
from icefloe.spark.iceberg_delete_write import write_position_deletes_in_tasks
from icefloe.spark.iceberg_read import FILE_COL, POS_COL
from icefloe.spark.python_read import position_rows
from icefloe.spark.target import RowFilter, WriteTarget, branch_head

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.iceberg.manifest import DataFile
    from icefloe.iceberg.snapshot import Snapshot
    from icefloe.iceberg.table_metadata import TableMetadata

DELETE_TARGET_FILE_SIZE = "write.delete.target-file-size-bytes"
DELETE_TARGET_DEFAULT = 64 * 1024 * 1024
# Iceberg's size options of the procedure (its run options are ``rewrite.RUN_OPTIONS``)
SIZE_OPTIONS = ("target-file-size-bytes", "min-file-size-bytes", "max-file-size-bytes", "min-input-files",
                "rewrite-all", "max-file-group-size-bytes")
GROUP_COL = "__icefloe_group"
EMPTY = {"rewritten_delete_files_count": 0, "added_delete_files_count": 0, "rewritten_bytes_count": 0,
         "added_bytes_count": 0}


def _rules(options: dict, properties: dict) -> BinPack:
    for key, value in options.items():
        if key not in SIZE_OPTIONS:
            check_run_option("rewrite_position_delete_files", key, value, RUN_OPTIONS, [*SIZE_OPTIONS, *RUN_OPTIONS])
    target = properties.get(DELETE_TARGET_FILE_SIZE, DELETE_TARGET_DEFAULT)
    return BinPack.from_options({k: v for k, v in options.items() if k in SIZE_OPTIONS},
                                {TARGET_FILE_SIZE: str(target)})


def plan_groups(delete_files: list, rules: BinPack) -> list:
    """The groups of position delete files to rewrite: ``[(spec id, partition, [files])]``."""
    by_partition: dict = {}
    for d in delete_files:
        size = d.file_size_in_bytes
        if rules.rewrite_all or not rules.min_file_size <= size <= rules.max_file_size:
            by_partition.setdefault((d.spec_id, d.partition), []).append(d)
    groups = []
    for (spec_id, partition), files in sorted(by_partition.items(), key=lambda kv: repr(kv[0])):
        size = sum(f.file_size_in_bytes for f in files)
        many = len(files) > 1 and (len(files) >= rules.min_input_files or size > rules.target_file_size)
        if rules.rewrite_all or many or size > rules.max_file_size:
            groups.append((spec_id, partition, files))
    return groups


def rewrite_position_delete_files(table: WriteTarget, where: RowFilter = None,
                                  options: Optional[Mapping[str, Any]] = None) -> dict[str, int]:
    """Compact the table's position delete files (those that apply to the data files ``where``
    selects, all without it); returns Iceberg's output counts."""
    options = {str(k).lower(): v for k, v in (options or {}).items()}
    meta = table.refresh().metadata
    rules = _rules(options, dict(meta.properties))
    snap = branch_head(meta, table.branch)
    if snap is None:
        return dict(EMPTY)
    entries = [e.data_file for e in live_entries(table.io, meta, snap)]
    positional = [d for d in entries if d.content == POSITION_DELETES]
    if where is not None:
        applying = {d.file_path for t in scan_mod.plan_files(table.io, meta, snap, where) for d in t.deletes}
        positional = [d for d in positional if d.file_path in applying]
    if meta.format_version >= 3 and all(d.is_deletion_vector for d in positional):
        return dict(EMPTY)       # the v2 delete files were rewritten into vectors already
    if meta.format_version >= 3:         # the v2 files are grouped; vectors follow their data files
        positional = [d for d in positional if not d.is_deletion_vector]
    groups = plan_groups(positional, rules)
    if not groups:
        return dict(EMPTY)
    rewritten = [d for _, _, files in groups for d in files]
    replaced: list[DataFile] = []
    if meta.format_version >= 3:
        added, replaced = _write_vectors(table, meta, snap, rewritten)
    else:
        added = _write_groups(table, meta, groups, [d for d in entries if d.content == DATA])
    # an earlier vector of a data file that gets a new one leaves with it (the commit removes it by
    # its data file: a Puffin file may hold the vectors of other data files too)
    table.commit(RewriteFiles(snap, rewritten, added), table.branch)
    rewritten += replaced
    return {"rewritten_delete_files_count": len(rewritten), "added_delete_files_count": len(added),
            "rewritten_bytes_count": sum(d.file_size_in_bytes for d in rewritten),
            "added_bytes_count": sum(d.file_size_in_bytes for d in added)}


def _write_groups(table: WriteTarget, meta: TableMetadata, groups: list, data_files: list[DataFile]) -> list[DataFile]:
    """Each group's live positions as one position delete file, written by Spark tasks."""
    from pyspark.sql import functions as F

    spark = table.spark
    keys = {(spec_id, partition): i for i, (spec_id, partition, _) in enumerate(groups)}
    # the live data files of the groups' partitions, each with its group: the positions of other
    # (removed) data files fall away in the join
    owners = [(f.file_path, keys[(f.spec_id, f.partition)]) for f in data_files if (f.spec_id, f.partition) in keys]
    if not owners:
        return []
    live = spark.createDataFrame(owners, f"{FILE_COL} string, {GROUP_COL} int")
    positions = position_rows(spark, [d for _, _, files in groups for d in files], table.io)
    rows = positions.join(F.broadcast(live), FILE_COL).repartition(len(groups), GROUP_COL)
    task_io = table.io.for_tasks()
    places = [(meta.spec_by_id(spec_id), partition) for spec_id, partition, _ in groups]
    schema, location, properties = meta.schema, meta.location, dict(meta.properties)
    ParquetSettings.of(properties, delete=True).arrow_options()      # refused here, not in the tasks
    write_id = uuid.uuid4().hex

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # in the Python workers
        import pyarrow as pa
        import pyarrow.compute as pc

        batches = [b for b in batches if b.num_rows]
        if not batches:
            return
        got = pa.Table.from_batches(batches)
        for group in pc.unique(got.column(GROUP_COL)).to_pylist():
            spec, partition = places[group]
            mine = got.filter(pc.equal(got.column(GROUP_COL), group))
            rows = pa.table({"file_path": mine.column(FILE_COL), "pos": mine.column(POS_COL)})
            files = write_position_deletes(task_io, location, schema, spec, {partition: rows}, properties,
                                           f"{write_id}-{group}")
            yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(files)], pa.binary())], names=["files"])

    try:
        out = rows.mapInArrow(run, "files binary").collect()
    except Exception as e:      # a failed job: the files its tasks wrote are removed
        for path in table.io.walk_files(f"{location.rstrip('/')}/data"):
            if write_id in path:
                table.io.delete(path)
        raise explain_spark_error(e) from None
    return [f for r in out for f in pickle.loads(r["files"])]


def _write_vectors(table: WriteTarget, meta: TableMetadata, snap: Snapshot,
                   group_files: list[DataFile]) -> tuple[list[DataFile], list[DataFile]]:
    """Deletion vectors for the live data files the ``group_files`` apply to, written by Spark
    tasks (``iceberg_delete_write``); returns (vectors added, earlier vectors they replace)."""
    from pyspark.sql import functions as F

    in_group = {d.delete_key for d in group_files}
    partition_of: dict[str, tuple[int, Any]] = {}
    previous: dict[str, list[DataFile]] = {}
    replaced: list[DataFile] = []
    for task in scan_mod.plan_files(table.io, meta, snap):
        applying = [d for d in task.deletes if d.content == POSITION_DELETES]
        if not any(d.delete_key in in_group for d in applying):
            continue
        f = task.file
        partition_of[f.file_path] = (f.spec_id, f.partition)
        previous[f.file_path] = [d for d in applying if d.delete_key not in in_group]
        replaced.extend(d for d in previous[f.file_path] if d.is_deletion_vector)
    if not partition_of:
        return [], []
    spark = table.spark
    targets = spark.createDataFrame([(p,) for p in partition_of], f"{FILE_COL} string")
    positions = position_rows(spark, group_files, table.io).join(F.broadcast(targets), FILE_COL)
    added = write_position_deletes_in_tasks(positions, meta, table.io, partition_of, previous)
    return added, replaced
