"""What every row-level statement shares, whatever its format: the label each row read or joined
gets (``ACTION``: keep, update, delete, insert), UPDATE's assignments resolved and checked, the
statement's condition as a Column, the per-file counts of labelled rows, and ``overwrite(where=...)``'s
rows checked against their condition. MERGE's clauses build on these (``merge_clauses``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence

from icefloe.core.arrow import as_arrow_table, is_arrow_data
from icefloe.core.types import to_spark_schema
from icefloe.errors import ExpressionError, SchemaMismatchError
from icefloe.spark.align import checked_cast, explain_spark_error
from icefloe.spark.scans import empty_frame

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Row, SparkSession

    from icefloe.core.types import NestedField, Schema

# what happens to each row a copy-on-write or merge-on-read statement reads or joins
ACTION = "_icefloe_action"
NOTHING, KEEP, UPDATE, DELETE_ROW, INSERT = -1, 0, 1, 2, 3


def predicate(cond: Optional[str | Column]) -> Column:
    """A condition (Spark SQL text or a Column) as a Column; None is true."""
    from pyspark.sql import functions as F

    if cond is None:
        return F.lit(True)
    return F.expr(cond) if isinstance(cond, str) else cond


def value(v: Any) -> Column:
    """A value to write: a Column, Spark SQL text, or a literal."""
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    if isinstance(v, Column):
        return v
    if isinstance(v, str):
        return F.expr(v)
    return F.lit(v)


def column_name(key: str, alias: str = "t") -> str:
    """An assigned column as written (``name``, ``t.name``, backquoted) without the target alias."""
    key = key.strip().strip("`")
    if key.lower().startswith(alias.lower() + "."):
        key = key[len(alias) + 1:].strip("`")
    return key


def resolve_assignments(schema: Schema, values: dict, alias: str = "t") -> dict:
    """UPDATE's ``{column: value}`` keyed by the schema's own column names (an unknown one raises)."""
    return {schema.find_field(column_name(k, alias)).name: v for k, v in (values or {}).items()}


def updated_columns(fields: Iterable[NestedField], sets: dict, hit: Optional[Column], table_name: str) -> list:
    """UPDATE's new row: each field (``.name``, ``.field_type``) its assigned value, cast and
    checked, where ``hit`` (the condition) holds, else its own value; with ``hit`` None (rows
    already filtered by the condition) the assigned value alone, so an overwritten column is not read."""
    from pyspark.sql import functions as F

    out = []
    for f in fields:
        c = F.col(f"`{f.name}`")
        if f.name in sets:
            new = checked_cast(value(sets[f.name]), f.field_type, f.name, table_name)
            c = new if hit is None else F.when(hit, new).otherwise(c)
        out.append(c.alias(f.name))
    return out


def check_resolvable(spark: SparkSession, schema: Schema, sets: dict, table_name: str,
                     condition: Optional[str | Column] = None, hidden: Sequence[str] = ()) -> None:
    """Analyse UPDATE's values and condition against the table's own columns (no job runs), so a
    name that is no column is reported as such, and never with icefloe's internal columns as
    suggestions. A bare word where a string was meant gets the hint to quote it. ``hidden``: BIGINT
    columns the rows have besides the table's (a row-tracking table's ``_ROW_ID``...)."""
    from pyspark.errors import AnalysisException

    items = [(f"value of column {k!r}", v) for k, v in sets.items()]
    if condition is not None and (isinstance(condition, str) or hasattr(condition, "_jc")
                                  or type(condition).__name__ == "Column"):     # (a Spark Connect Column)
        items.append(("condition", condition))
    if not items:
        return
    empty = empty_frame(spark, to_spark_schema(schema))
    if hidden:
        from pyspark.sql import functions as F

        empty = empty.select("*", *[F.lit(None).cast("long").alias(n) for n in hidden])
    columns = ", ".join(f.name for f in schema.fields)

    def column(what: str, v: Any):
        return predicate(v) if what == "condition" else value(v)

    try:        # all in one analysis; one at a time only to name the one that fails
        empty.select(*[column(what, v).alias(f"_v{i}") for i, (what, v) in enumerate(items)]).schema  # noqa: B018
        return
    except AnalysisException:
        pass
    for what, v in items:
        try:
            empty.select(column(what, v).alias("_v")).schema  # noqa: B018
        except AnalysisException as e:
            reason = (str(e).splitlines() or [""])[0]
            if "UNRESOLVED_COLUMN" in reason:
                hint = f" (a string needs quotes: \"'{v}'\")" if isinstance(v, str) and v.isidentifier() else ""
                raise ExpressionError(f"{what} {v!r} names no column of table {table_name} (columns: {columns})"
                                      f"{hint}") from None
            raise ExpressionError(f"{what} {v!r}: {reason.split(' SQLSTATE')[0]}") from None


def checkpointed(df: DataFrame) -> DataFrame:
    """``df.localCheckpoint()``; a value an assignment or clause cannot store raises its typed
    error here (nothing is written yet)."""
    try:
        return df.localCheckpoint()
    except Exception as e:
        typed = explain_spark_error(e)
        if typed is e:
            raise
        raise typed from None


def file_stats(changes: DataFrame, file_col: str,
               checkpoint: bool = True) -> tuple[DataFrame, dict[str, Row], dict[str, int]]:
    """Labelled rows (an ``ACTION`` column, the data file in ``file_col``), checkpointed so the
    counts and the writes see the same rows (unless ``checkpoint`` is False: the caller then
    computes its writes again from the same immutable files), with each file's counts (n, upd,
    dele, ins) and the statement's totals. With a checkpoint, a value an assignment cannot store
    raises its typed error here."""
    from pyspark.sql import functions as F

    try:
        changes = changes.where(F.col(ACTION) != NOTHING)
        if checkpoint:
            changes = changes.localCheckpoint()
        stats = (changes.groupBy(file_col)
                 .agg(F.count(F.lit(1)).alias("n"),
                      F.sum((F.col(ACTION) == UPDATE).cast("long")).alias("upd"),
                      F.sum((F.col(ACTION) == DELETE_ROW).cast("long")).alias("dele"),
                      F.sum((F.col(ACTION) == INSERT).cast("long")).alias("ins"))
                 .collect())
    except Exception as e:  # nothing written yet
        typed = explain_spark_error(e)
        if typed is e:
            raise
        raise typed from None
    by_file = {r[file_col]: r for r in stats if r[file_col] is not None}
    counts = {"updated": sum(r["upd"] for r in stats), "deleted": sum(r["dele"] for r in stats),
              "inserted": sum(r["ins"] for r in stats)}
    return changes, by_file, counts


def replacement_rows(spark: SparkSession, data: Any, aligned_fn: Callable[[DataFrame], DataFrame], where: str,
                     table_name: str) -> DataFrame:
    """``overwrite(data, where=...)``: ``data`` (Spark or Arrow) fitted to the table by
    ``aligned_fn``, every row of it checked to match ``where`` (Delta's replaceWhere rule: rows
    that would not be replaced are not written), labelled INSERT with no source file."""
    from pyspark.sql import functions as F


    df = spark.createDataFrame(as_arrow_table(data)) if is_arrow_data(data) else data
    aligned = aligned_fn(df)
    outside = aligned.where(~F.coalesce(F.expr(where), F.lit(False))).limit(1).collect()
    if outside:
        raise SchemaMismatchError(f"overwrite of {table_name} where {where!r}: the data has a row that does not "
                                  f"match it ({outside[0].asDict()}); every row written must match the condition. "
                                  "Nothing was committed.")
    return aligned
