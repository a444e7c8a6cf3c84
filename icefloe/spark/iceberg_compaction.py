"""Compaction of an Iceberg table in Spark: Iceberg's ``rewrite_data_files`` (spark-procedures).

The driver plans which files to rewrite (``iceberg.rewrite.plan_compaction`` with the bin-pack
rules and defaults of Iceberg's procedure); Spark reads them (deletes applied; on format v3 with
each row's lineage), puts about one target file size of rows in each task, so the small files of
a partition become one file, and writes them (``strategy='sort'``: each file sorted by the given
or the table's sort order). One ``replace`` snapshot swaps them in, keeping the read snapshot's
sequence number for the new files, and drops delete files that no longer apply to any file.

``sort_order => 'zorder(c1, c2)'``: Iceberg's z-order. A Spark column holds each row's z-value
(``core/zorder.py``, computed on Arrow batches in the tasks); the rows are range-partitioned
over the output files by (partition, z-value) and sorted within them, so each file holds a box of
nearby values in every z-ordered column.
"""
from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

import pyarrow as pa

from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg import rewrite as rewrite_mod
from icefloe.core import zorder
from icefloe.iceberg.manifest import DATA
from icefloe.iceberg.manifest_reader import live_entries
from icefloe.iceberg.rewrite import TARGET_FILE_SIZE, BinPack, RewriteFiles, plan_compaction
from icefloe.iceberg.sort_order import default_order, parse_sort_terms, with_sort_order
from icefloe.spark import iceberg_lineage as lineage_mod
from icefloe.spark.iceberg_evolved_read import has_nanos
from icefloe.spark.iceberg_read import FILE_COL, POS_COL, read_tasks
from icefloe.spark.iceberg_write import write_data_files
from icefloe.spark.target import RowFilter, WriteTarget, branch_head

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from icefloe.iceberg.manifest import DataFile
    from icefloe.iceberg.snapshot import Snapshot
    from icefloe.iceberg.table_metadata import TableMetadata

BINPACK, SORT = "binpack", "sort"
KEEP = "keep"
# the run options of Iceberg's procedure: the common ones, and two that change what is committed
RUN_OPTIONS = {**rewrite_mod.RUN_OPTIONS, "use-starting-sequence-number": "true", "remove-dangling-deletes": "true"}
# options of the sort and z-order rewriters (``shuffle-partitions-per-file`` only splits the shuffle
# of one output file; the rows and files written are the same)
SORT_OPTIONS = ("shuffle-partitions-per-file",)
ZORDER_OPTIONS = ("max-output-size", "var-length-contribution")
Z_COL = "__icefloe_zvalue"


def check_options(options: dict, strategy: str = "binpack", zordered: bool = False) -> None:
    """Raise ValueError naming an option icefloe does not carry out (unknown, not one of the
    strategy's, or a value of a run option that would change what is committed)."""
    own = (SORT_OPTIONS if strategy == SORT else ()) + (ZORDER_OPTIONS if zordered else ())
    for key, value in options.items():
        if key in BinPack.OPTIONS:
            continue
        if key in own:
            if int(value) < 1:
                raise ValueError(f"rewrite_data_files option {key} must be at least 1, got {value}")
            continue
        if key not in RUN_OPTIONS and (key in SORT_OPTIONS or key in ZORDER_OPTIONS):
            raise ValueError(f"rewrite_data_files option {key!r} applies only to "
                             f"{'z-order' if key in ZORDER_OPTIONS else 'sort'} rewrites")
        rewrite_mod.check_run_option("rewrite_data_files", key, value, RUN_OPTIONS,
                                     [*BinPack.OPTIONS, *RUN_OPTIONS, *own])


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


def _write_meta(meta: TableMetadata, binpack: BinPack, strategy: str, sort_order: Optional[str]) -> TableMetadata:
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
    if zorder_columns(sort_order) is not None:      # files in no order the table can declare
        return with_sort_order(out, [])
    return with_sort_order(out, parse_sort_terms(meta.schema, sort_terms(sort_order)))


def zorder_columns(sort_order: Optional[str]) -> Optional[list[str]]:
    """The columns of ``'zorder(c1, c2)'`` (None for any other sort order)."""
    if sort_order is None or "zorder(" not in sort_order.lower().replace(" ", ""):
        return None
    terms = sort_terms(sort_order)
    if len(terms) != 1:
        raise ValueError(f"sort_order {sort_order!r} mixes sort columns and a zorder(...) expression: "
                         f"z-order takes every column inside zorder(...)")
    term = terms[0].strip()
    open_at = term.find("(")
    if term[:open_at].strip().lower() != "zorder" or not term.endswith(")"):
        raise ValueError(f"cannot parse sort_order {sort_order!r}; z-order is written zorder(c1, c2)")
    names = [c.strip().strip("`") for c in term[open_at + 1:-1].split(",")]
    if not all(names):
        raise ValueError(f"zorder(...) needs column names, got {sort_order!r}")
    return names


# the z-order byte form of each column type (``core/zorder.py``)
_Z_KINDS = {"int": zorder.WHOLE, "long": zorder.WHOLE, "date": zorder.WHOLE, "timestamp": zorder.WHOLE,
            "timestamptz": zorder.WHOLE, "timestamp_ns": zorder.WHOLE, "timestamptz_ns": zorder.WHOLE,
            "float": zorder.FLOATING, "double": zorder.FLOATING, "string": zorder.STRING,
            "binary": zorder.BINARY, "boolean": zorder.BOOLEAN}


def _z_input(name: str, type_name: str) -> Column:
    """The Spark column the z-value takes from column ``name``: whole numbers as longs (dates
    as days, timestamps as whole seconds since the epoch, as Iceberg's job casts them), floats as
    doubles, the rest as they are."""
    from pyspark.sql import functions as F

    c = F.col(f"`{name}`")
    if type_name in ("int", "long"):
        return c.cast("bigint")
    if type_name == "date":
        return F.unix_date(c).cast("bigint")
    if type_name in ("timestamp", "timestamptz"):
        micros = F.unix_micros(c) if type_name == "timestamptz" else F.timestamp_diff(
            "MICROSECOND", F.lit("1970-01-01 00:00:00").cast("timestamp_ntz"), c)
        return F.floor(micros.cast("decimal(20,0)") / F.lit(1_000_000)).cast("bigint")
    if type_name.endswith("_ns"):          # carried through Spark as raw nanoseconds (longs)
        return F.floor(c.cast("decimal(21,0)") / F.lit(1_000_000_000)).cast("bigint")
    if type_name == "float":
        return c.cast("double")
    return c


def zorder_arrangement(meta: TableMetadata, names: list[str],
                       options: Mapping[str, Any]) -> Callable[[DataFrame, Optional[str], int], DataFrame]:
    """How a z-order rewrite spreads its rows: a function (rows, partition key column or None,
    number of files) -> rows range-partitioned over that many tasks by (partition, z-value),
    sorted within them.
    Identity partition columns are left out of the z-value (constant within a partition), as
    Iceberg does; ValueError for an unknown column or a type z-order cannot order."""
    from pyspark.sql import functions as F

    identity_sources = {pf.source_id for pf in meta.spec.fields if str(pf.transform) == "identity"}
    by_name = {f.name.lower(): f for f in meta.schema.fields}
    used: list[Column] = []
    kinds: list[str] = []
    for name in names:
        field = by_name.get(name.lower())
        if field is None:
            raise ValueError(f"zorder column {name!r} is not a top-level column of the table; columns are "
                             f"{', '.join(f.name for f in meta.schema.fields)}")
        type_name = str(field.field_type)
        if type_name not in _Z_KINDS:
            raise ValueError(f"cannot z-order by column {field.name} of type {type_name} (z-order takes "
                             f"int, long, float, double, string, binary, boolean, date and timestamp columns)")
        if field.field_id not in identity_sources:
            used.append(_z_input(field.name, type_name))
            kinds.append(_Z_KINDS[type_name])
    if not used:
        raise ValueError("cannot z-order: every column given is an identity partition column, constant "
                         "within each partition")
    var_length = int(options.get("var-length-contribution", zorder.PRIMITIVE_SIZE))
    max_output = int(options["max-output-size"]) if "max-output-size" in options else None

    # runs in the Python workers, on Arrow batches; Spark reads its kind (scalar) from the type hints,
    # which need ``pa`` among the module's names
    def z_value(*arrays: pa.Array) -> pa.Array:
        return zorder.z_values(list(arrays), kinds, var_length, max_output)

    # the kind comes from the hints: PySpark's stubs list only the calls that name it
    z_udf = F.arrow_udf(z_value, returnType="binary")  # pyright: ignore[reportCallIssue, reportArgumentType]

    def arrange(rows: DataFrame, key_col: Optional[str], files: int) -> DataFrame:
        keys = ([F.col(key_col)] if key_col else []) + [F.col(Z_COL)]
        rows = rows.withColumn(Z_COL, z_udf(*used))
        return rows.repartitionByRange(files, *keys).sortWithinPartitions(*keys).drop(Z_COL)

    return arrange


def rewrite_data_files(table: WriteTarget, where: RowFilter = None, target_file_size: Optional[int] = None,
                       options: Optional[Mapping[str, Any]] = None, strategy: Optional[str] = None,
                       sort_order: Optional[str] = None) -> Optional[Snapshot]:
    """Compact the data files ``where`` selects (all without it); one ``replace`` snapshot,
    contents unchanged (None when nothing needs rewriting). With ``options`` (``{}`` for the
    defaults), ``strategy`` or ``sort_order``, by the bin-pack rules of Iceberg's procedure;
    without, every partition with two files or more, or with delete files, is rewritten."""
    from pyspark.sql import functions as F

    icebergs_rules = options is not None or strategy is not None or sort_order is not None
    options = {str(k).lower(): v for k, v in (options or {}).items()}
    z_names = zorder_columns(sort_order)
    check_options(options, (strategy or BINPACK).lower(), z_names is not None)
    z_arrange = zorder_arrangement(table.metadata, z_names, options) if z_names is not None else None
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
    added: list[DataFile] = []
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
        files = max(1, math.ceil(size / binpack.target_file_size))
        arrange = None
        if z_arrange is not None:
            arrange = lambda rows, key_col: z_arrange(rows, key_col, files)  # noqa: E731
        else:
            rows = rows.coalesce(files)
        added = write_data_files(rows, write_meta, table.io, table.name, nanos_raw, arrange=arrange)
        known_orders = {o["order-id"] for o in meta.sort_orders}
        for f in added:                    # an order the table does not hold is not named by the files
            if f.sort_order_id not in known_orders:
                f.sort_order_id = 0
    change = RewriteFiles(snap, [t.file for t in plan.rewrite], added, plan.drop_delete_files)
    return table.commit(change, table.branch)
