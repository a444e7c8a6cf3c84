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
has nothing to rewrite, as in Iceberg; format v2 delete files left in a v3 table are refused
(Iceberg rewrites them into vectors; icefloe does not yet).
"""
from __future__ import annotations

import pickle
import uuid
from typing import Optional

from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.delete_files import write_position_deletes
from icefloe.iceberg.manifest import DATA, POSITION_DELETES
from icefloe.iceberg.manifest_reader import live_entries
from icefloe.iceberg.rewrite import RUN_OPTIONS, TARGET_FILE_SIZE, BinPack, RewriteFiles, check_run_option
from icefloe.spark.align import explain_spark_error
from icefloe.spark.iceberg_read import FILE_COL, POS_COL
from icefloe.spark.python_read import position_rows
from icefloe.spark.target import WriteTarget, branch_head

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


def rewrite_position_delete_files(table: WriteTarget, where=None, options: Optional[dict] = None) -> dict:
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
    if meta.format_version >= 3:
        if any(not d.is_deletion_vector for d in positional):
            raise NotImplementedError("rewriting the format v2 position delete files of a format v3 table into "
                                      "deletion vectors is not implemented in icefloe")
        return dict(EMPTY)
    groups = plan_groups(positional, rules)
    if not groups:
        return dict(EMPTY)
    rewritten = [d for _, _, files in groups for d in files]
    added = _write_groups(table, meta, groups, [d for d in entries if d.content == DATA])
    table.commit(RewriteFiles(snap, rewritten, added), table.branch)
    return {"rewritten_delete_files_count": len(rewritten), "added_delete_files_count": len(added),
            "rewritten_bytes_count": sum(d.file_size_in_bytes for d in rewritten),
            "added_bytes_count": sum(d.file_size_in_bytes for d in added)}


def _write_groups(table: WriteTarget, meta, groups: list, data_files: list) -> list:
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
    write_id = uuid.uuid4().hex

    def run(batches):  # in the Python workers
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
