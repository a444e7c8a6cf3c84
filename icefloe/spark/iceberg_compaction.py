"""Compaction of an Iceberg table in Spark: Iceberg's ``rewrite_data_files`` (spark-procedures).

The driver plans which files to rewrite (``iceberg.rewrite.plan_compaction`` with the bin-pack
rules and defaults of Iceberg's procedure); Spark reads them (deletes applied; on format v3 with
each row's lineage), puts about one target file size of rows in each task, so the small files of
a partition become one file, and writes them (``strategy='sort'``: each file sorted by the given
or the table's sort order). One ``replace`` snapshot swaps them in, keeping the read snapshot's
sequence number for the new files, and drops delete files that no longer apply to any file.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Optional

from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.manifest import DATA
from icefloe.iceberg.manifest_reader import live_entries
from icefloe.iceberg.rewrite import TARGET_FILE_SIZE, BinPack, RewriteFiles, plan_compaction
from icefloe.iceberg.sort_order import default_order, parse_sort_terms, with_sort_order
from icefloe.spark import iceberg_lineage as lineage_mod
from icefloe.spark.iceberg_evolved_read import has_nanos
from icefloe.spark.iceberg_read import FILE_COL, POS_COL, read_tasks
from icefloe.spark.iceberg_write import write_data_files
from icefloe.spark.target import WriteTarget, branch_head

BINPACK, SORT = "binpack", "sort"
KEEP = "keep"
# options of Iceberg's procedure about how the job runs, not what it writes: every group is
# rewritten by one Spark job and committed once here
RUN_OPTIONS = {"max-concurrent-file-group-rewrites": None, "partial-progress.max-commits": None,
               "rewrite-job-order": None, "partial-progress.enabled": "false",
               "use-starting-sequence-number": "true", "remove-dangling-deletes": "true"}


def check_options(options: dict) -> None:
    """Raise ValueError naming an option icefloe does not carry out (unknown, or a value of a
    run option that would change what is committed)."""
    for key, value in options.items():
        if key in BinPack.OPTIONS:
            continue
        if key not in RUN_OPTIONS:
            raise ValueError(f"unknown rewrite_data_files option {key!r}; known: "
                             f"{', '.join(sorted([*BinPack.OPTIONS, *RUN_OPTIONS]))}")
        needed = RUN_OPTIONS[key]
        if needed is not None and str(value).strip().lower() != needed:
            raise ValueError(f"rewrite_data_files option {key}={value} is not supported: icefloe rewrites "
                             f"every file group in one commit with {key}={needed}")


def sort_terms(text: str) -> list:
    """``'id DESC NULLS LAST, bucket(4, name)'`` -> its terms (commas inside parentheses kept)."""
    terms, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            terms.append(cur.strip())
            cur = ""
        else:
            cur += ch
    terms.append(cur.strip())
    return [t for t in terms if t]


def _write_meta(meta, binpack: BinPack, strategy: str, sort_order: Optional[str]):
    """The metadata the new files are written with: the target size, and for ``sort`` the order."""
    out = dataclasses.replace(meta, properties={**meta.properties, TARGET_FILE_SIZE: str(binpack.target_file_size)})
    if strategy == BINPACK:
        if sort_order is not None:
            raise ValueError("rewrite_data_files takes sort_order only with strategy => 'sort'")
        return out
    if strategy != SORT:
        raise ValueError(f"unknown rewrite_data_files strategy {strategy!r} (binpack or sort)")
    if sort_order is None:
        if not default_order(meta)[1]:
            raise ValueError("strategy 'sort' needs a sort_order: the table has no sort order")
        return out
    if sort_order.strip().lower().startswith("zorder("):
        raise NotImplementedError("z-order (sort_order => 'zorder(...)') is not implemented in icefloe; "
                                  "sort by the columns instead (sort_order => 'c1, c2')")
    return with_sort_order(out, parse_sort_terms(meta.schema, sort_terms(sort_order)))


def rewrite_data_files(table: WriteTarget, where=None, target_file_size: Optional[int] = None,
                       options: Optional[dict] = None, strategy: Optional[str] = None,
                       sort_order: Optional[str] = None):
    """Compact the data files ``where`` selects (all without it); one ``replace`` snapshot,
    contents unchanged (None when nothing needs rewriting). With ``options`` (``{}`` for the
    defaults), ``strategy`` or ``sort_order``, by the bin-pack rules of Iceberg's procedure;
    without, every partition with two files or more, or with delete files, is rewritten."""
    from pyspark.sql import functions as F

    icebergs_rules = options is not None or strategy is not None or sort_order is not None
    options = {str(k).lower(): v for k, v in (options or {}).items()}
    check_options(options)
    if target_file_size is not None:
        options.setdefault("target-file-size-bytes", target_file_size)
    binpack_options = {k: v for k, v in options.items() if k in BinPack.OPTIONS}
    meta = table.refresh().metadata
    binpack = BinPack.from_options(binpack_options, meta.properties)
    write_meta = _write_meta(meta, binpack, (strategy or BINPACK).lower(), sort_order)
    snap = branch_head(meta, table.branch)
    if snap is None:
        return None
    nanos_raw = has_nanos(meta.schema)      # every digit carried through Spark as raw nanoseconds
    all_tasks = scan_mod.plan_files(table.io, meta, snap, None)
    candidates = all_tasks if where is None else scan_mod.plan_files(table.io, meta, snap, where)
    live_deletes = [e.data_file for e in live_entries(table.io, meta, snap) if e.data_file.content != DATA]
    plan = plan_compaction(candidates, all_tasks, live_deletes, meta.default_spec_id,
                           binpack if icebergs_rules else None)
    if plan.empty:
        return None
    added: list = []
    if plan.rewrite:
        lineage = lineage_mod.tracks_lineage(meta)
        schema = lineage_mod.with_lineage_fields(meta.schema) if lineage else meta.schema
        rows = read_tasks(table.spark, plan.rewrite, schema, with_positions=lineage, history=meta.schemas,
                          name_mapping=meta.properties.get("schema.name-mapping.default"), io=table.io,
                          nanos_raw=nanos_raw)
        cols = [f"`{f.name}`" for f in meta.schema.fields]
        if lineage:                        # rows keep their ids and last sequence numbers
            rows = lineage_mod.stored(table.spark, lineage_mod.as_stored(rows).withColumn("_action", F.lit(KEEP)),
                                      plan.rewrite, cols, FILE_COL, POS_COL, "_action", KEEP)
            write_meta = lineage_mod.writing_lineage(write_meta)
        else:
            rows = rows.select(*cols)
        # about one target file size of rows per task: a partition's small files become one file
        size = sum(t.file.file_size_in_bytes for t in plan.rewrite)
        rows = rows.coalesce(max(1, math.ceil(size / binpack.target_file_size)))
        added = write_data_files(rows, write_meta, table.io, table.name, nanos_raw)
        known_orders = {o["order-id"] for o in meta.sort_orders}
        for f in added:                    # an order the table does not hold is not named by the files
            if f.sort_order_id not in known_orders:
                f.sort_order_id = 0
    change = RewriteFiles(snap, [t.file for t in plan.rewrite], added, plan.drop_delete_files)
    return table.commit(change, table.branch)
