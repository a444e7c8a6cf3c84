"""MERGE INTO's clauses, shared by both formats: the builder users chain
(``when_matched_update``, ``when_not_matched_insert_all``...) and the Spark expressions that
pick, for every joined row, the first clause that applies and the values it writes."""
from __future__ import annotations

import dataclasses
import re
from typing import Optional

from icefloe.core.arrow import as_arrow_table, is_arrow_data
from icefloe.core.types import to_spark_schema, to_spark_type
from icefloe.errors import ExpressionError, MergeCardinalityError, SchemaMismatchError
from icefloe.spark import deleted_rows
from icefloe.spark.align import check_assignable, checked_cast, explain_spark_error, fitted_column, restructured
from icefloe.spark.scans import empty_frame

T_MARK, S_MARK, CLAUSE = "_icefloe_in_target", "_icefloe_in_source", "_icefloe_clause"
SOURCE_ID = "_icefloe_source_row"
BROADCAST_SOURCE_BYTES = 256 << 20     # a MERGE source up to this size (estimated from its rows) is broadcast
# what happens to each row a copy-on-write or merge-on-read statement reads or joins
ACTION = "_icefloe_action"
NOTHING, KEEP, UPDATE, DELETE_ROW, INSERT = -1, 0, 1, 2, 3


@dataclasses.dataclass
class Clause:
    kind: str                  # "update", "update_all", "delete", "insert", "insert_all"
    condition: object = None
    values: Optional[dict] = None


def predicate(cond):
    """A condition (Spark SQL text or a Column) as a Column; None is true."""
    from pyspark.sql import functions as F

    if cond is None:
        return F.lit(True)
    return F.expr(cond) if isinstance(cond, str) else cond


def value(v):
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


def resolve_assignments(schema, values: dict, alias: str = "t") -> dict:
    """UPDATE's ``{column: value}`` keyed by the schema's own column names (an unknown one raises)."""
    return {schema.find_field(column_name(k, alias)).name: v for k, v in (values or {}).items()}


def updated_columns(fields, sets: dict, hit, table_name: str) -> list:
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


def check_resolvable(spark, schema, sets: dict, table_name: str, condition=None) -> None:
    """Analyse UPDATE's values and condition against the table's own columns (no job runs), so a
    name that is no column is reported as such, and never with icefloe's internal columns as
    suggestions. A bare word where a string was meant gets the hint to quote it."""
    from pyspark.errors import AnalysisException

    items = [(f"value of column {k!r}", v) for k, v in sets.items()]
    if condition is not None and (isinstance(condition, str) or hasattr(condition, "_jc")):
        items.append(("condition", condition))
    if not items:
        return
    empty = empty_frame(spark, to_spark_schema(schema))
    columns = ", ".join(f.name for f in schema.fields)

    def column(what, v):
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


# a failed check of ``icefloe.jvm.MergeCardinality``: its mark, the file, a NUL, the position
_CARDINALITY_FAILURE = re.compile("icefloe-merge-cardinality:([^\x00]*)\x00([0-9]+)")


def checkpointed(df):
    """``df.localCheckpoint()``; a value an assignment or clause cannot store raises its typed
    error here (nothing is written yet)."""
    try:
        return df.localCheckpoint()
    except Exception as e:
        typed = explain_spark_error(e)
        if typed is e:
            raise
        raise typed from None


def file_stats(changes, file_col: str, checkpoint: bool = True):
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


def replacement_rows(spark, data, aligned_fn, where: str, table_name: str):
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


def _width(t) -> int:
    """A rough width in bytes of a value of Spark type ``t`` (a string or binary counted as 32)."""
    from pyspark.sql import types as T

    if isinstance(t, T.StructType):
        return sum(_width(f.dataType) for f in t.fields)
    if isinstance(t, (T.ArrayType, T.MapType)):
        return 128
    if isinstance(t, (T.StringType, T.BinaryType)):
        return 32
    return 16 if isinstance(t, T.DecimalType) else 8


def action_column(clauses: dict, in_target):
    """The ACTION of each joined row from the clause it takes: DELETE_ROW, INSERT (not matched),
    UPDATE; KEEP for a target row no clause takes, NOTHING for a source row none takes."""
    from pyspark.sql import functions as F

    clause = F.col(CLAUSE)
    action = None
    for idx, c in clauses.items():
        a = DELETE_ROW if c.kind == "delete" else INSERT if 1000 <= idx < 2000 else UPDATE
        action = F.when(clause == idx, F.lit(a)) if action is None else action.when(clause == idx, F.lit(a))
    action = action if action is not None else F.when(F.lit(False), F.lit(0))
    return action.when(in_target, F.lit(KEEP)).otherwise(F.lit(NOTHING))


class MergeClauses:
    """The MERGE builder ``table.merge(source, on)`` returns: add ``when_*`` clauses, then ``execute()``.

    Each clause method returns the builder, so calls chain. Clauses of one kind are tried in the
    order they were added; the first whose condition holds decides a row.

    Example:
        ```python
        result = (t.merge(changes, "t.id = s.id")
                    .when_matched_delete("s.deleted")
                    .when_matched_update({"amount": "s.amount"})
                    .when_not_matched_insert_all()
                    .execute())
        result                     # {'updated': 1, 'deleted': 0, 'inserted': 1, 'snapshot_id': ...}
        ```
    """

    def __init__(self, table, source, on, target_alias: str = "t", source_alias: str = "s",
                 isolation: Optional[str] = None):
        """Start a MERGE (``table.merge(...)`` calls this).

        Args:
            table: The target table.
            source: The source rows (Spark DataFrame, or Arrow/pandas data).
            on: The join condition over both aliases (``"t.id = s.id"``).
            target_alias: The target's alias.
            source_alias: The source's alias.
            isolation: ``serializable`` or ``snapshot`` (Iceberg).
        """
        self.table, self.source, self.on = table, source, on
        self.ta, self.sa = target_alias, source_alias
        self.isolation = isolation
        self.matched: list[Clause] = []
        self.not_matched: list[Clause] = []
        self.not_matched_by_source: list[Clause] = []

    def when_matched_update(self, set: dict, condition=None) -> "MergeClauses":
        """``WHEN MATCHED [AND condition] THEN UPDATE SET ...``.

        Args:
            set: ``{column: value}``; a value is Spark SQL text over both aliases (``"s.amount"``,
                ``"t.n + 1"``), a ``Column`` or a literal.
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.matched.append(Clause("update", condition, set))
        return self

    def when_matched_update_all(self, condition=None) -> "MergeClauses":
        """``WHEN MATCHED [AND condition] THEN UPDATE SET *``: every column from the source's column of that name.

        Args:
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.matched.append(Clause("update_all", condition))
        return self

    def when_matched_delete(self, condition=None) -> "MergeClauses":
        """``WHEN MATCHED [AND condition] THEN DELETE``.

        Args:
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.matched.append(Clause("delete", condition))
        return self

    def when_not_matched_insert(self, values: dict, condition=None) -> "MergeClauses":
        """``WHEN NOT MATCHED [AND condition] THEN INSERT (...) VALUES (...)``.

        Args:
            values: ``{column: value}`` over the source's alias; columns left out are null (or their
                default).
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.not_matched.append(Clause("insert", condition, values))
        return self

    def when_not_matched_insert_all(self, condition=None) -> "MergeClauses":
        """``WHEN NOT MATCHED [AND condition] THEN INSERT *``: the source row, column by column name.

        Args:
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.not_matched.append(Clause("insert_all", condition))
        return self

    def when_not_matched_by_source_update(self, set: dict, condition=None) -> "MergeClauses":
        """``WHEN NOT MATCHED BY SOURCE [AND condition] THEN UPDATE SET ...``: target rows no source row matches.

        A clause of this kind reads every file of the table.

        Args:
            set: ``{column: value}`` over the target's alias.
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.not_matched_by_source.append(Clause("update", condition, set))
        return self

    def when_not_matched_by_source_delete(self, condition=None) -> "MergeClauses":
        """``WHEN NOT MATCHED BY SOURCE [AND condition] THEN DELETE``.

        A clause of this kind reads every file of the table.

        Args:
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.not_matched_by_source.append(Clause("delete", condition))
        return self

    def join(self, target, need_target: bool):
        """The target rows (a DataFrame of the table's columns) joined with the source on the ON
        condition: an outer join on the sides whose unmatched rows a clause takes (the target's
        when ``need_target``, the source's when there is a NOT MATCHED clause). Returns the
        joined rows, a function naming a target column, and the conditions (in target, matched,
        not matched, not matched by source)."""
        from pyspark.sql import functions as F

        how = {(True, True): "full_outer", (True, False): "left_outer",
               (False, True): "right_outer", (False, False): "inner"}[(need_target, bool(self.not_matched))]
        on = F.expr(self.on) if isinstance(self.on, str) else self.on
        joined = target.withColumn(T_MARK, F.lit(True)).alias(self.ta).join(
            self.source.withColumn(S_MARK, F.lit(True)).alias(self.sa), on, how)

        def tcol(name):
            return F.col(f"{self.ta}.`{name}`")

        in_t = tcol(T_MARK).isNotNull()
        in_s = F.col(f"{self.sa}.`{S_MARK}`").isNotNull()
        return joined, tcol, (in_t, in_t & in_s, in_s & ~in_t, in_t & ~in_s)

    def small_source(self, keys: Optional[dict] = None):
        """The source, checkpointed with a row id (SOURCE_ID), if it is small enough to broadcast
        to every target task (its rows times Spark's estimate of a row's width); else None. Not
        when the session turned broadcast joins off (``autoBroadcastJoinThreshold`` -1).

        ``keys`` (``join_keys``: target column -> source column), if given, is filled in place
        with each target column's (lowest, highest) source value, from the same job that counts
        the source's rows; a column whose source values are all null is left out."""
        from pyspark.sql import functions as F

        spark = self.source.sparkSession
        if str(spark.conf.get("spark.sql.autoBroadcastJoinThreshold", "1")).strip() == "-1":
            return None
        width = sum(_width(f.dataType) for f in self.source.schema.fields) + 16
        source = self.source.withColumn(SOURCE_ID, F.monotonically_increasing_id()).localCheckpoint()
        pairs = list((keys or {}).items())
        row = source.agg(F.count(F.lit(1)), *[f(F.col(f"`{s}`")) for _t, s in pairs for f in (F.min, F.max)]).first()
        if row[0] * width > BROADCAST_SOURCE_BYTES:
            return None
        for i, (target, _s) in enumerate(pairs):
            low, high = row[1 + 2 * i], row[2 + 2 * i]
            if low is None:
                del keys[target]
            else:
                keys[target] = (low, high)
        return source

    def join_keys(self, schema) -> dict:
        """The ON condition's equalities between a target column and a source column (ANDed at its
        top), as {target column: source column}, for the types whose file bounds a range prunes
        exactly (integers, strings, dates): a target row with no value in the source column's
        range matches no source row. Empty when the condition is not SQL text (a Column)."""
        import sqlglot
        from pyspark.sql import types as T
        from sqlglot import expressions as exp

        if not isinstance(self.on, str):      # a Spark 4 Column gives no SQL text to read
            return {}
        try:
            tree = sqlglot.parse_one(self.on, read="spark")
        except sqlglot.errors.SqlglotError:
            return {}
        source_types = {f.name.lower(): (f.name, f.dataType) for f in self.source.schema.fields}
        # the source types a target column compares with as itself (no wider cast, no collation)
        families = {"int": (T.ByteType, T.ShortType, T.IntegerType), "long": T.IntegralType, "date": T.DateType,
                    "string": T.StringType}
        out: dict = {}
        tree = tree.unnest() if tree is not None else None
        conjuncts = list(tree.flatten()) if isinstance(tree, exp.And) else [tree]
        for c in (c.unnest() for c in conjuncts if c is not None):
            if not isinstance(c, exp.EQ) or not all(isinstance(side, exp.Column) for side in (c.left, c.right)):
                continue
            sides = {side.table.lower(): side.name for side in (c.left, c.right)}
            if set(sides) != {self.ta.lower(), self.sa.lower()}:
                continue
            field = schema.find_field_or_none(sides[self.ta.lower()])
            src = source_types.get(sides[self.sa.lower()].lower())
            family = families.get(str(field.field_type)) if field is not None else None
            if (family is not None and src is not None and isinstance(src[1], family)
                    and getattr(src[1], "collation", "UTF8_BINARY") == "UTF8_BINARY"):
                out[field.name] = src[0]
        return out

    def broadcast_join(self, target, source, how: str):
        """``target`` joined (``inner`` or ``left_outer``) with the broadcast ``source`` on the ON
        condition: the target is not shuffled. Same columns and aliases as ``join``."""
        from pyspark.sql import functions as F

        on = F.expr(self.on) if isinstance(self.on, str) else self.on
        return target.withColumn(T_MARK, F.lit(True)).alias(self.ta).join(
            F.broadcast(source.withColumn(S_MARK, F.lit(True))).alias(self.sa), on, how)

    def unmatched_source_rows(self, empty_target, source):
        """``source`` rows as a join of an empty target and them (every target column null):
        the NOT MATCHED side of a broadcast MERGE, with the same columns and aliases as ``join``."""
        from pyspark.sql import functions as F

        on = F.expr(self.on) if isinstance(self.on, str) else self.on
        return empty_target.withColumn(T_MARK, F.lit(True)).alias(self.ta).join(
            source.withColumn(S_MARK, F.lit(True)).alias(self.sa), on, "right_outer")

    def marks(self):
        """The conditions on a joined row: (in target, matched, not matched, not matched by source)."""
        from pyspark.sql import functions as F

        in_t = F.col(f"{self.ta}.`{T_MARK}`").isNotNull()
        in_s = F.col(f"{self.sa}.`{S_MARK}`").isNotNull()
        return in_t, in_t & in_s, in_s & ~in_t, in_t & ~in_s

    def matches_checked(self, matched, file_col: str, pos_col: str, source_col: str, describe):
        """``matched`` (the rows of a join that streams the target past the broadcast source: all
        of a target row's matches are made in the task that reads it), checkpointed, with SQL's
        cardinality rule checked by the JVM in the job that makes them (no job of its own); where
        icefloe's classes are not loaded, by :meth:`check_cardinality` after. ``describe`` names
        the offending row from its (file, position)."""
        from pyspark.sql import functions as F

        check = self._jvm_check(F.col(file_col), F.col(pos_col), F.col(source_col)) if self.matched else None
        try:
            out = checkpointed(matched if check is None else matched.where(check))
        except Exception as e:
            self.raise_cardinality_failure(e, describe)
            raise
        if check is None:
            self.check_cardinality(out, F.lit(True), [file_col, pos_col], describe)
        return out

    def joined_checked(self, target, need_target: bool, equal_keys: bool, file_col: str, pos_col: str):
        """:meth:`join`, with SQL's cardinality rule checked by the JVM in whichever job reads the
        joined rows (no job of its own) where that is sound: a MATCHED clause, the target on a
        preserved side of the join (``need_target``: a left or full outer join), an ON condition
        with an equality of a target and a source column (``equal_keys``: Spark joins on it, not
        by a nested loop over a broadcast target), and icefloe's classes loaded. Spark then
        neither broadcasts the target nor splits the source's side of a skewed partition, so every
        match of a target row is made in the one task that reads the row, which fails on a (file,
        position) matched twice. An inner or right outer join is not widened to keep the target:
        Spark filters the target's side of those by the source's keys before the shuffle (a runtime
        bloom filter), which saves more than the check job costs. Returns the joined rows,
        ``join``'s column function and conditions, and whether the rule is checked."""
        from pyspark.sql import functions as F

        check = None
        if self.matched and need_target and equal_keys:
            check = self._jvm_check(F.col(f"{self.ta}.`{file_col}`"), F.col(f"{self.ta}.`{pos_col}`"),
                                    F.col(f"{self.sa}.`{S_MARK}`"))
        joined, tcol, marks = self.join(target, need_target)
        if check is None:
            return joined, tcol, marks, False
        # one nondeterministic condition: Spark does not push it below the join
        return joined.where(F.when(marks[1], check).otherwise(F.lit(True))), tcol, marks, True

    @staticmethod
    def _jvm_check(file, pos, source):
        """``icefloe.jvm.MergeCardinality.check`` over these columns (a target row's data file and
        position, and a source column), or None where icefloe's classes are not loaded."""
        return deleted_rows.jvm_column(
            lambda spark: spark._jvm.icefloe.jvm.MergeCardinality.check(file._jc, pos._jc, source._jc))

    def raise_cardinality_failure(self, error: BaseException, describe) -> None:
        """Raise ``MergeCardinalityError`` for a job that a JVM cardinality check failed (its
        message names the row's file and position; ``describe`` names the row); else return."""
        found = _CARDINALITY_FAILURE.search(str(error))
        if found is not None:
            raise self._cardinality_error(describe((found.group(1), int(found.group(2))))) from None

    def _cardinality_error(self, row: str) -> MergeCardinalityError:
        return MergeCardinalityError(
            f"MERGE into {self.table.name}: {row} matched more than one source row; "
            "make the source unique on the join keys. Nothing was committed.")

    def check_cardinality(self, joined, matched, row_id: list, describe) -> None:
        """SQL's MERGE rule: a target row (identified by the ``row_id`` columns) that more than one
        source row matches is an error, checked only when a MATCHED clause exists. ``describe``
        names the offending row from its id values."""
        from pyspark.sql import functions as F

        if not self.matched:
            return
        dup = joined.where(matched).groupBy(*row_id).count().where(F.col("count") > 1).limit(1).collect()
        if dup:
            raise self._cardinality_error(describe(tuple(dup[0])[:-1]))

    def clause_column(self, matched, not_matched, by_source):
        """The index of the clause each joined row takes (matched i -> i, not matched j ->
        1000 + j, not matched by source k -> 2000 + k; null for none), and the clauses by index."""
        from pyspark.sql import functions as F

        chain = None
        clauses: dict = {}
        for base, cat, items in ((0, matched, self.matched), (1000, not_matched, self.not_matched),
                                 (2000, by_source, self.not_matched_by_source)):
            for i, c in enumerate(items):
                cond = cat & F.coalesce(predicate(c.condition), F.lit(False)) if c.condition is not None else cat
                chain = F.when(cond, F.lit(base + i)) if chain is None else chain.when(cond, F.lit(base + i))
                clauses[base + i] = c
        return (chain if chain is not None else F.lit(None).cast("int")), clauses

    def clause_values(self, fields, clause, clauses: dict, tcol, resolve, table_name: str,
                      check_update=None) -> list:
        """For each target field (``.name``, ``.field_type``), the value of the clause each joined
        row takes (``clause``: the column from ``clause_column``), the target's own value when
        the clause does not set it. ``resolve(name)`` maps an assigned name (alias stripped) to
        the field's name and raises for no column; ``check_update(names)`` may refuse an UPDATE
        clause by the columns it sets."""
        from pyspark.sql import functions as F

        ta, sa = self.ta, self.sa
        source_fields = {sf.name.lower(): sf for sf in self.source.schema.fields}

        def scol(name):
            sf = source_fields.get(name.lower())
            return None if sf is None else F.col(f"{sa}.`{sf.name}`")

        sets_of = {idx: {resolve(column_name(k, ta)): v for k, v in (c.values or {}).items()}
                   for idx, c in clauses.items()}
        if check_update is not None:
            for idx, c in clauses.items():
                if c.kind == "update":
                    check_update(list(sets_of[idx]))
        values = []
        for f in fields:
            expr = None
            for idx, c in clauses.items():
                if c.kind == "delete":
                    continue
                if c.kind in ("update_all", "insert_all") and scol(f.name) is not None:
                    # UPDATE SET * / INSERT *: the source column must fit as an appended one would
                    check_assignable(source_fields[f.name.lower()].dataType, f.field_type, f.name)
                sets = sets_of[idx]
                spark_type = to_spark_type(f.field_type)
                source = source_fields.get(f.name.lower())
                # a value already of the column's type needs no checked cast (the target's own
                # value, a source column of the same type, a null)
                exact = source is not None and source.dataType == spark_type
                if c.kind == "update":
                    v, exact = (value(sets[f.name]), False) if f.name in sets else (tcol(f.name), True)
                elif c.kind == "update_all":
                    v, exact = (scol(f.name), exact) if source is not None else (tcol(f.name), True)
                elif c.kind == "insert":
                    v, exact = (value(sets[f.name]), False) if f.name in sets else (F.lit(None).cast(spark_type), True)
                else:  # insert_all
                    v, exact = (scol(f.name), exact) if source is not None else (F.lit(None).cast(spark_type), True)
                if c.kind in ("update_all", "insert_all") and source is not None and not exact \
                        and restructured(source.dataType, spark_type):
                    # struct fields by name, not position (the checked cast below then pairs them right)
                    v = fitted_column(v, source.dataType, spark_type)
                if not exact:
                    v = checked_cast(v, f.field_type, f.name, table_name)
                expr = F.when(clause == idx, v) if expr is None else expr.when(clause == idx, v)
            expr = tcol(f.name) if expr is None else expr.otherwise(tcol(f.name))
            values.append(expr.alias(f.name))
        return values
