"""An Iceberg changelog as a Spark DataFrame (what ``create_changelog_view`` shows).

Rows of the files each snapshot added are ``INSERT``s and rows of the files it removed
(or of the positions its position deletes name) are ``DELETE``s, tagged with the
snapshot's ordinal in the range and its id: columns ``_change_type``,
``_change_ordinal`` and ``_commit_snapshot_id`` after the table's columns. Files are
read in Spark tasks; the driver only plans.

Then, as Iceberg's Spark runtime does:
- carry-over rows (a copy-on-write rewrite deletes and re-inserts unchanged rows) are
  removed: a DELETE and an INSERT of the same row in the same snapshot cancel out;
- with ``net_changes``, a DELETE and an INSERT of the same row cancel out across the whole
  range, leaving only the net change;
- with ``compute_updates``, a DELETE and an INSERT of the same identifier in one snapshot
  become ``UPDATE_BEFORE`` and ``UPDATE_AFTER`` (more than one row per identifier and
  snapshot is an error).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from icefloe.core.types import to_spark_schema
from icefloe.errors import SchemaError
from icefloe.iceberg.changelog import SnapshotChanges, plan_changelog
from icefloe.iceberg.scan import FileScanTask, attach_identity_values, plan_files
from icefloe.spark.iceberg_read import FILE_COL, POS_COL, read_tasks
from icefloe.spark.python_read import position_rows
from icefloe.spark.scans import empty_frame

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from icefloe.core.types import Schema
    from icefloe.iceberg.table import BaseTable
    from icefloe.iceberg.table_metadata import TableMetadata

CHANGE_TYPE, CHANGE_ORDINAL, COMMIT_SNAPSHOT_ID = "_change_type", "_change_ordinal", "_commit_snapshot_id"
_ROW, _RN, _ID = "_icefloe_row", "_icefloe_rn", "_icefloe_id"


def changelog_df(spark: SparkSession, table: BaseTable, start_snapshot_id: Optional[int] = None, end_snapshot_id: Optional[int] = None,
                 identifier_columns: Optional[Sequence[str]] = None, compute_updates: Optional[bool] = None,
                 net_changes: bool = False) -> DataFrame:
    from pyspark.sql import functions as F

    meta = table.refresh().metadata
    schema = meta.schema
    names = [f.name for f in schema.fields]
    ids = list(identifier_columns or [])
    if compute_updates is None:
        compute_updates = bool(ids)
    if compute_updates and not ids:
        ids = [schema.find_field(i).name for i in (schema.identifier_field_ids or [])]
        if not ids:
            raise SchemaError(f"table {table.name}: computing updates needs identifier columns (the argument "
                              "identifier_columns, or the table's identifier fields)")
    unknown = [c for c in ids if c not in names]
    if unknown:
        raise SchemaError(f"table {table.name}: identifier column(s) {unknown} are not columns of the table "
                          f"(columns: {names})")
    if net_changes and compute_updates:
        raise SchemaError("net_changes and compute_updates cannot be used together (as in Iceberg)")

    history = meta.schemas
    mapping = meta.properties.get("schema.name-mapping.default")
    parts: list[DataFrame] = []
    for ch in plan_changelog(table.io, meta, start_snapshot_id, end_snapshot_id, table.name):
        tag = (F.lit(ch.ordinal).cast("int"), F.lit(ch.snapshot.snapshot_id).cast("bigint"))
        for kind, files in (("INSERT", ch.added), ("DELETE", ch.removed)):
            if files:
                tasks = [FileScanTask(f, seq) for f, seq in files]
                attach_identity_values(tasks, meta.specs_by_id())      # columns only their paths hold
                df = read_tasks(spark, tasks, schema, history=history, name_mapping=mapping, io=table.io)
                parts.append(_tagged(df, names, kind, tag))
        if ch.position_deletes:
            df = _deleted_by_positions(spark, table, meta, ch, schema, history, mapping)
            parts.append(_tagged(df, names, "DELETE", tag))
    if not parts:
        from pyspark.sql import types as T

        fields = to_spark_schema(schema).fields + [T.StructField(CHANGE_TYPE, T.StringType()),
                                                   T.StructField(CHANGE_ORDINAL, T.IntegerType()),
                                                   T.StructField(COMMIT_SNAPSHOT_ID, T.LongType())]
        return empty_frame(spark, T.StructType(fields))
    df = parts[0]
    for p in parts[1:]:
        df = df.unionByName(p)
    df = _cancel_pairs(df, names, per_snapshot=not net_changes)
    if compute_updates:
        df = _updates(df, ids)
    return df.select(*[F.col(f"`{n}`") for n in names], CHANGE_TYPE, CHANGE_ORDINAL, COMMIT_SNAPSHOT_ID)


def _tagged(df: DataFrame, names: Sequence[str], kind: str, tag: tuple[Column, Column]) -> DataFrame:
    from pyspark.sql import functions as F

    return df.select(*[F.col(f"`{n}`") for n in names], F.lit(kind).alias(CHANGE_TYPE),
                     tag[0].alias(CHANGE_ORDINAL), tag[1].alias(COMMIT_SNAPSHOT_ID))


def _deleted_by_positions(spark: SparkSession, table: BaseTable, meta: TableMetadata, ch: SnapshotChanges,
                          schema: Schema, history: Sequence[Schema], mapping: Optional[str]) -> DataFrame:
    """The rows the snapshot's position delete files name, read from their data files."""
    import pyarrow.parquet as pq

    targets: set[str] = set()
    for d in ch.position_deletes:   # which data files they point at: one small column per delete file
        if d.referenced_data_file is not None:       # a deletion vector, or a file scoped to one data file
            targets.add(d.referenced_data_file)
            continue
        with table.io.open_read(d.file_path) as fh:
            col = pq.read_table(fh, columns=["file_path"]).column(0)
        targets.update(v for v in col.unique().to_pylist() if v is not None)
    tasks = [FileScanTask(t.file, t.data_sequence_number, identity_values=t.identity_values)
             for t in plan_files(table.io, meta, ch.snapshot) if t.path in targets]
    data = read_tasks(spark, tasks, schema, with_positions=True, history=history, name_mapping=mapping,
                      io=table.io)
    positions = position_rows(spark, list(ch.position_deletes), table.io)
    return data.join(positions, [FILE_COL, POS_COL], "left_semi").drop(FILE_COL, POS_COL)


def _cancel_pairs(df: DataFrame, names: Sequence[str], per_snapshot: bool) -> DataFrame:
    """Remove DELETE/INSERT pairs of identical rows: within one snapshot (carry-overs), or
    across the range (net changes). The k-th copy of a row deleted pairs with its k-th
    re-insert, so duplicates cancel one for one."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    keyed = df.withColumn(_ROW, F.to_json(F.struct(*[F.col(f"`{n}`") for n in names])))
    group = [_ROW] + ([CHANGE_ORDINAL] if per_snapshot else [])
    w = Window.partitionBy(*group, CHANGE_TYPE).orderBy(CHANGE_ORDINAL)
    keyed = keyed.withColumn(_RN, F.row_number().over(w))
    keys = group + [_RN]
    ins = keyed.where(F.col(CHANGE_TYPE) == "INSERT")
    dels = keyed.where(F.col(CHANGE_TYPE) == "DELETE")
    kept = ins.join(dels.select(*keys), keys, "left_anti").unionByName(dels.join(ins.select(*keys), keys, "left_anti"))
    return kept.drop(_ROW, _RN)


def _updates(df: DataFrame, ids: Sequence[str]) -> DataFrame:
    """A DELETE and an INSERT of one identifier in one snapshot: UPDATE_BEFORE / UPDATE_AFTER."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    keyed = df.withColumn(_ID, F.to_json(F.struct(*[F.col(f"`{c}`") for c in ids])))
    w = Window.partitionBy(_ID, CHANGE_ORDINAL)
    n_del = F.sum(F.when(F.col(CHANGE_TYPE) == "DELETE", 1).otherwise(0)).over(w)
    n_ins = F.sum(F.when(F.col(CHANGE_TYPE) == "INSERT", 1).otherwise(0)).over(w)
    keyed = keyed.withColumn("_icefloe_nd", n_del).withColumn("_icefloe_ni", n_ins)
    too_many = (F.col("_icefloe_nd") > 1) | (F.col("_icefloe_ni") > 1)
    msg = F.concat(F.lit(f"cannot compute updates: more than one row with identifier ({', '.join(ids)}) = "),
                   F.col(_ID), F.lit(" changed in snapshot "), F.col(COMMIT_SNAPSHOT_ID).cast("string"))
    kind = (F.when(too_many, F.raise_error(msg).cast("string"))
            .when((F.col("_icefloe_nd") == 1) & (F.col("_icefloe_ni") == 1),
                  F.when(F.col(CHANGE_TYPE) == "DELETE", F.lit("UPDATE_BEFORE")).otherwise(F.lit("UPDATE_AFTER")))
            .otherwise(F.col(CHANGE_TYPE)))
    return keyed.withColumn(CHANGE_TYPE, kind).drop(_ID, "_icefloe_nd", "_icefloe_ni")
