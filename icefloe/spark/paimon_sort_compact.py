"""Sort compaction of Paimon append tables: ``CALL sys.compact(..., order_strategy, order_by)``.

As Paimon's Spark procedure does it: every live file of the partitions chosen is read, the rows are
ordered by ``order_by`` -- the columns themselves (``order``), their z-order value (``zorder``,
``core/zorder.py``) or their position on a Hilbert curve (``hilbert``, ``core/hilbert.py``) --
range-partitioned over the output files and sorted within them, and written again. One OVERWRITE
snapshot replaces the partitions' files (Paimon writes the sorted rows as a dynamic partition
overwrite); the rows do not change, only their order and the files holding them.

The curves take each column as Paimon's Spark sorters do (whole numbers, floats, strings, binary,
booleans; timestamps as whole seconds), with two differences: a date is its day number (Spark's cast
of a date to a long, which Paimon's sorters use, gives null, so they leave dates out of the curve),
and a timestamp without time zone is taken too (Paimon's z-order refuses it).

Paimon sorts only bucket-unaware append tables (``bucket = -1``): in a table with fixed buckets a
row's file is set by its bucket, and in a primary-key table by its key and the LSM tree, so no
order over the whole partition can be written.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Optional, Sequence

import pyarrow as pa   # (loaded with paimon_write anyway) resolves the curve UDF's type hints at runtime

from icefloe.core import hilbert, zorder
from icefloe.paimon import row_tracking
from icefloe.spark.paimon_read import read_files
from icefloe.spark.paimon_write import write_data_files

ORDER, ZORDER, HILBERT, NONE = "order", "zorder", "hilbert", "none"
STRATEGIES = (ORDER, ZORDER, HILBERT)
SORT_COL = "__icefloe_sort_value"
VAR_LENGTH_OPTION = "zorder.var-length-contribution"     # Paimon's option: string bytes in a z-value

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

    from icefloe.paimon.manifest import ManifestEntry
    from icefloe.paimon.snapshot import Snapshot
    from icefloe.spark.paimon_target import SparkPaimonTable


def check_sortable(table: SparkPaimonTable, strategy: str, columns: Sequence[str]) -> list[str]:
    """The table's names of ``columns``; ValueError (Paimon's rules) when the table cannot be
    sorted so: not a bucket-unaware append table, no column, an unknown or a partition column."""
    schema = table.table_schema
    if strategy not in STRATEGIES:
        raise ValueError(f"order_strategy {strategy!r}: Paimon's are 'order', 'zorder', 'hilbert' and 'none'")
    if row_tracking.evolution_enabled(schema.options):
        raise NotImplementedError(f"sort compaction ({strategy}) of {table.name}: Paimon does not sort a data-evolution "
                                  "table (data-evolution.enabled): its rows' columns are matched across files by row "
                                  "id, which a sort would reorder")
    if schema.primary_keys or schema.num_buckets != -1:
        kind = "a primary-key table" if schema.primary_keys else f"a table with {schema.num_buckets} fixed buckets"
        raise NotImplementedError(
            f"sort compaction ({strategy}) of {table.name}: Paimon sorts only bucket-unaware append tables "
            f"(bucket = -1); {table.name} is {kind}, whose rows' files are set by their bucket"
            + (" and key" if schema.primary_keys else "") + "; CALL sys.compact without order_strategy compacts it")
    if not columns:
        raise ValueError(f"order_strategy {strategy!r} needs order_by columns (order_by => 'a,b')")
    by_name = {f.name.lower(): f.name for f in schema.fields}
    names: list[str] = []
    for c in columns:
        name = by_name.get(c.strip().lower())
        if name is None:
            raise ValueError(f"order_by column {c.strip()!r} is not a column of {table.name}; columns are "
                             f"{', '.join(f.name for f in schema.fields)}")
        names.append(name)
    parts = [n for n in names if n.lower() in {k.lower() for k in schema.partition_keys}]
    if parts:
        raise ValueError(f"order_by should not contain partition columns ({', '.join(parts)}): a partition's "
                         f"rows all have the same value there (partition keys of {table.name}: "
                         f"{', '.join(schema.partition_keys)})")
    return names


def _curve_input(name: str, dtype: DataType, strategy: str) -> tuple[Column, str]:
    """The Spark column and the byte form (zorder) or coordinate (hilbert) kind for column ``name``."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    c = F.col(f"`{name}`")
    if isinstance(dtype, T.ByteType) and strategy == HILBERT:
        return c, hilbert.TINY
    if isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return c.cast("bigint"), zorder.WHOLE if strategy == ZORDER else hilbert.WHOLE
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        return c.cast("double"), zorder.FLOATING if strategy == ZORDER else hilbert.FLOATING
    if isinstance(dtype, T.StringType):
        return c, zorder.STRING if strategy == ZORDER else hilbert.BYTES
    if isinstance(dtype, T.BinaryType):
        return c, zorder.BINARY if strategy == ZORDER else hilbert.BYTES
    if isinstance(dtype, T.BooleanType):
        return c, zorder.BOOLEAN if strategy == ZORDER else hilbert.BOOLEAN
    if isinstance(dtype, T.DateType):
        return F.unix_date(c).cast("bigint"), zorder.WHOLE if strategy == ZORDER else hilbert.WHOLE
    if isinstance(dtype, (T.TimestampType, T.TimestampNTZType)):       # whole seconds, as Spark's cast to long
        micros = F.unix_micros(c) if isinstance(dtype, T.TimestampType) else F.timestamp_diff(
            "MICROSECOND", F.lit("1970-01-01 00:00:00").cast("timestamp_ntz"), c)
        return F.floor(micros.cast("decimal(20,0)") / F.lit(1_000_000)).cast("bigint"), \
            zorder.WHOLE if strategy == ZORDER else hilbert.WHOLE
    if isinstance(dtype, T.DecimalType) and strategy == HILBERT:
        return c.cast("bigint"), hilbert.WHOLE
    raise ValueError(f"cannot {strategy}-order by column {name} of type {dtype.simpleString()}")


def _arrangement(table: SparkPaimonTable, strategy: str, names: Sequence[str],
                 files: int) -> Callable[[DataFrame, Optional[str]], DataFrame]:
    """(rows, key column or None) -> rows range-partitioned over ``files`` tasks by (key, sort
    value) and sorted within them; the sort value column is dropped again."""
    from pyspark.sql import functions as F

    var_length = int(table.table_schema.options.get(VAR_LENGTH_OPTION, zorder.PRIMITIVE_SIZE))

    def arrange(rows: DataFrame, key_col: Optional[str]) -> DataFrame:
        keys = [F.col(key_col)] if key_col else []
        if strategy == ORDER:
            keys += [F.col(f"`{n}`") for n in names]
            return rows.repartitionByRange(files, *keys).sortWithinPartitions(*keys)
        types = {f.name: f.dataType for f in rows.schema.fields}
        inputs = [_curve_input(n, types[n], strategy) for n in names]
        kinds = [k for _, k in inputs]

        def value(*arrays: pa.Array) -> pa.Array:  # runs in the Python workers, on Arrow batches
            if strategy == ZORDER:
                return zorder.z_values(list(arrays), kinds, var_length)
            return hilbert.hilbert_values(list(arrays), kinds)

        # (pyspark's stubs list only the forms naming a functionType; Spark takes it from the hints: scalar)
        udf = F.arrow_udf(value, returnType="binary")  # pyright: ignore[reportCallIssue, reportArgumentType]
        keys.append(F.col(SORT_COL))
        rows = rows.withColumn(SORT_COL, udf(*[c for c, _ in inputs]))
        return rows.repartitionByRange(files, *keys).sortWithinPartitions(*keys).drop(SORT_COL)

    return arrange


def sort_compact(table: SparkPaimonTable, entries: Sequence[ManifestEntry], strategy: str, columns: Sequence[str],
                 target_file_size: Optional[int] = None) -> Optional[Snapshot]:
    """Rewrite the live files ``entries`` (every file of the partitions chosen) with their rows
    sorted by ``strategy`` over ``columns``; one OVERWRITE snapshot (None when there is no file)."""
    strategy = strategy.lower()
    names = check_sortable(table, strategy, columns)
    base = table.current_snapshot()
    if not entries or base is None:
        return None
    schema = table.table_schema
    if schema.core_options.deletion_vectors_enabled:
        raise NotImplementedError(f"sort compaction of {table.name}: icefloe does not yet sort tables with "
                                  "deletion vectors (deletion-vectors.enabled)")
    # the curve's value is computed for the types the rows have in Spark: fail before reading on one it cannot take
    rows = read_files(table.spark, [e.file.path for e in entries]
, schema.fields,
                      file_fields=[table.schema_by_id(e.file.schema_id).fields for e in entries], io=table.io)
    if strategy != ORDER:
        types = {f.name: f.dataType for f in rows.schema.fields}
        for n in names:
            _curve_input(n, types[n], strategy)
    target = int(target_file_size) if target_file_size else schema.core_options.target_file_size
    files = max(1, math.ceil(sum(e.file.file_size for e in entries) / target))
    messages = write_data_files(rows, table, arrange=_arrangement(table, strategy, names, files),
                                target_file_size=target)
    return table.replace_files(entries, messages, "OVERWRITE", base.id)


__all__ = ["sort_compact", "check_sortable", "STRATEGIES", "ORDER", "ZORDER", "HILBERT", "NONE"]
