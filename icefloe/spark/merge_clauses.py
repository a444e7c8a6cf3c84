"""MERGE INTO's clauses, shared by both formats: the builder users chain
(``when_matched_update``, ``when_not_matched_insert_all``...) and the Spark expressions that
pick, for every joined row, the first clause that applies and the values it writes."""
from __future__ import annotations

import dataclasses
import enum
import re
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from icefloe.core.types import to_spark_type
from icefloe.errors import MergeCardinalityError
from icefloe.spark import jvm
from icefloe.spark.align import check_assignable, checked_cast, fitted_column, restructured
from icefloe.spark.row_changes import (
    DELETE_ROW, INSERT, KEEP, NOTHING, UPDATE, checkpointed, column_name, predicate, value,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql import types as T

    from icefloe.core.types import NestedField, Schema

    # a joined row's conditions: in the target, matched, not matched, not matched by source
    Marks = tuple[Column, Column, Column, Column]

T_MARK, S_MARK, CLAUSE = "_icefloe_in_target", "_icefloe_in_source", "_icefloe_clause"
SOURCE_ID = "_icefloe_source_row"
BROADCAST_SOURCE_BYTES = 256 << 20     # a MERGE source up to this size (estimated from its rows) is broadcast


class When(enum.Enum):
    """The rows a MERGE clause applies to (SQL's ``WHEN [NOT] MATCHED [BY SOURCE]``)."""
    MATCHED = "matched"                             # a target row and the source row it matches
    NOT_MATCHED = "not matched"                     # a source row no target row matches: an insert
    NOT_MATCHED_BY_SOURCE = "not matched by source"  # a target row no source row matches


@dataclasses.dataclass
class Clause:
    kind: str                  # "update", "update_all", "delete", "insert", "insert_all"
    condition: Optional[str | Column] = None
    values: Optional[dict] = None
    when: When = When.MATCHED


# a failed check of ``icefloe.jvm.MergeCardinality``: its mark, the file, a NUL, the position
_CARDINALITY_FAILURE = re.compile("icefloe-merge-cardinality:([^\x00]*)\x00([0-9]+)")


def _width(t: T.DataType) -> int:
    """A rough width in bytes of a value of Spark type ``t`` (a string or binary counted as 32)."""
    from pyspark.sql import types as T

    if isinstance(t, T.StructType):
        return sum(_width(f.dataType) for f in t.fields)
    if isinstance(t, (T.ArrayType, T.MapType)):
        return 128
    if isinstance(t, (T.StringType, T.BinaryType)):
        return 32
    return 16 if isinstance(t, T.DecimalType) else 8


def action_column(clauses: dict, in_target: Column) -> Column:
    """The ACTION of each joined row from the clause it takes: DELETE_ROW, INSERT (not matched),
    UPDATE; KEEP for a target row no clause takes, NOTHING for a source row none takes."""
    from pyspark.sql import functions as F

    clause = F.col(CLAUSE)
    action = None
    for idx, c in clauses.items():
        a = DELETE_ROW if c.kind == "delete" else INSERT if c.when is When.NOT_MATCHED else UPDATE
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

    def __init__(self, table: Any, source: Any, on: str | Column, target_alias: str = "t", source_alias: str = "s",
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

    def when_matched_update(self, set: dict, condition: Optional[str | Column] = None) -> "MergeClauses":
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

    def when_matched_update_all(self, condition: Optional[str | Column] = None) -> "MergeClauses":
        """``WHEN MATCHED [AND condition] THEN UPDATE SET *``: every column from the source's column of that name.

        Args:
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.matched.append(Clause("update_all", condition))
        return self

    def when_matched_delete(self, condition: Optional[str | Column] = None) -> "MergeClauses":
        """``WHEN MATCHED [AND condition] THEN DELETE``.

        Args:
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.matched.append(Clause("delete", condition))
        return self

    def when_not_matched_insert(self, values: dict, condition: Optional[str | Column] = None) -> "MergeClauses":
        """``WHEN NOT MATCHED [AND condition] THEN INSERT (...) VALUES (...)``.

        Args:
            values: ``{column: value}`` over the source's alias; columns left out are null (or their
                default).
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.not_matched.append(Clause("insert", condition, values, When.NOT_MATCHED))
        return self

    def when_not_matched_insert_all(self, condition: Optional[str | Column] = None) -> "MergeClauses":
        """``WHEN NOT MATCHED [AND condition] THEN INSERT *``: the source row, column by column name.

        Args:
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.not_matched.append(Clause("insert_all", condition, None, When.NOT_MATCHED))
        return self

    def when_not_matched_by_source_update(self, set: dict, condition: Optional[str | Column] = None) -> "MergeClauses":
        """``WHEN NOT MATCHED BY SOURCE [AND condition] THEN UPDATE SET ...``: target rows no source row matches.

        A clause of this kind reads every file of the table.

        Args:
            set: ``{column: value}`` over the target's alias.
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.not_matched_by_source.append(Clause("update", condition, set, When.NOT_MATCHED_BY_SOURCE))
        return self

    def when_not_matched_by_source_delete(self, condition: Optional[str | Column] = None) -> "MergeClauses":
        """``WHEN NOT MATCHED BY SOURCE [AND condition] THEN DELETE``.

        A clause of this kind reads every file of the table.

        Args:
            condition: Spark SQL text over both aliases: the clause applies only to rows matching it
                (clauses of one kind are tried in order; the first that applies wins).

        Returns:
            The builder.
        """
        self.not_matched_by_source.append(Clause("delete", condition, None, When.NOT_MATCHED_BY_SOURCE))
        return self

    def join(self, target: DataFrame, need_target: bool) -> tuple[DataFrame, Callable[[str], Column], Marks]:
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

        def tcol(name: str):
            return F.col(f"{self.ta}.`{name}`")

        in_t = tcol(T_MARK).isNotNull()
        in_s = F.col(f"{self.sa}.`{S_MARK}`").isNotNull()
        return joined, tcol, (in_t, in_t & in_s, in_s & ~in_t, in_t & ~in_s)

    def small_source(self, keys: Optional[dict] = None) -> Optional[DataFrame]:
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
        found = keys if keys is not None else {}
        pairs = list(found.items())
        row = source.agg(F.count(F.lit(1)), *[f(F.col(f"`{s}`")) for _t, s in pairs for f in (F.min, F.max)]).first()
        if row[0] * width > BROADCAST_SOURCE_BYTES:
            return None
        for i, (target, _s) in enumerate(pairs):
            low, high = row[1 + 2 * i], row[2 + 2 * i]
            if low is None:
                del found[target]
            else:
                found[target] = (low, high)
        return source

    def join_keys(self, schema: Schema) -> dict:
        """The ON condition's equalities between a target column and a source column (ANDed at its
        top), as {target column: source column}, for the types whose file bounds a range prunes
        exactly (integers, strings, dates): a target row with no value in the source column's
        range matches no source row. Empty when the condition is not SQL text (a Column)."""
        import sqlglot
        from pyspark.sql import types as T
        from sqlglot import expressions as exp
        from sqlglot.errors import SqlglotError

        if not isinstance(self.on, str):      # a Spark 4 Column gives no SQL text to read
            return {}
        try:
            tree = sqlglot.parse_one(self.on, read="spark")
        except SqlglotError:
            return {}
        source_types = {f.name.lower(): (f.name, f.dataType) for f in self.source.schema.fields}
        # the source types a target column compares with as itself (no wider cast, no collation)
        families = {"int": (T.ByteType, T.ShortType, T.IntegerType), "long": T.IntegralType, "date": T.DateType,
                    "string": T.StringType}
        out: dict = {}
        tree = tree.unnest() if tree is not None else None
        conjuncts = list(tree.flatten()) if isinstance(tree, exp.And) else [tree]
        for c in (c.unnest() for c in conjuncts if c is not None):
            if not isinstance(c, exp.EQ) or not isinstance(c.left, exp.Column) or not isinstance(c.right, exp.Column):
                continue
            sides = {side.table.lower(): side.name for side in (c.left, c.right)}
            if set(sides) != {self.ta.lower(), self.sa.lower()}:
                continue
            field = schema.find_field_or_none(sides[self.ta.lower()])
            src = source_types.get(sides[self.sa.lower()].lower())
            family = families.get(str(field.field_type)) if field is not None else None
            if (field is not None and family is not None and src is not None and isinstance(src[1], family)
                    and getattr(src[1], "collation", "UTF8_BINARY") == "UTF8_BINARY"):
                out[field.name] = src[0]
        return out

    def broadcast_join(self, target: DataFrame, source: DataFrame, how: str) -> DataFrame:
        """``target`` joined (``inner`` or ``left_outer``) with the broadcast ``source`` on the ON
        condition: the target is not shuffled. Same columns and aliases as ``join``."""
        from pyspark.sql import functions as F

        on = F.expr(self.on) if isinstance(self.on, str) else self.on
        return target.withColumn(T_MARK, F.lit(True)).alias(self.ta).join(
            F.broadcast(source.withColumn(S_MARK, F.lit(True))).alias(self.sa), on, how)

    def unmatched_source_rows(self, empty_target: DataFrame, source: DataFrame) -> DataFrame:
        """``source`` rows as a join of an empty target and them (every target column null):
        the NOT MATCHED side of a broadcast MERGE, with the same columns and aliases as ``join``."""
        from pyspark.sql import functions as F

        on = F.expr(self.on) if isinstance(self.on, str) else self.on
        return empty_target.withColumn(T_MARK, F.lit(True)).alias(self.ta).join(
            source.withColumn(S_MARK, F.lit(True)).alias(self.sa), on, "right_outer")

    def marks(self) -> Marks:
        """The conditions on a joined row: (in target, matched, not matched, not matched by source)."""
        from pyspark.sql import functions as F

        in_t = F.col(f"{self.ta}.`{T_MARK}`").isNotNull()
        in_s = F.col(f"{self.sa}.`{S_MARK}`").isNotNull()
        return in_t, in_t & in_s, in_s & ~in_t, in_t & ~in_s

    def matches_checked(self, matched: DataFrame, file_col: str, pos_col: str, source_col: str,
                        describe: Callable[[tuple[Any, ...]], str]) -> DataFrame:
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

    def joined_checked(self, target: DataFrame, need_target: bool, equal_keys: bool, file_col: str,
                       pos_col: str) -> tuple[DataFrame, Callable[[str], Column], Marks, bool]:
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
    def _jvm_check(file: Column, pos: Column, source: Column):
        """``icefloe.jvm.MergeCardinality.check`` over these columns (a target row's data file and
        position, and a source column), or None where icefloe's classes are not loaded."""
        return jvm.jvm_column(
            lambda spark: spark._jvm.icefloe.jvm.MergeCardinality.check(file._jc, pos._jc, source._jc))

    def raise_cardinality_failure(self, error: BaseException, describe: Callable[[tuple[Any, ...]], str]) -> None:
        """Raise ``MergeCardinalityError`` for a job that a JVM cardinality check failed (its
        message names the row's file and position; ``describe`` names the row); else return."""
        found = _CARDINALITY_FAILURE.search(str(error))
        if found is not None:
            raise self._cardinality_error(describe((found.group(1), int(found.group(2))))) from None

    def _cardinality_error(self, row: str) -> MergeCardinalityError:
        return MergeCardinalityError(
            f"MERGE into {self.table.name}: {row} matched more than one source row; "
            "make the source unique on the join keys. Nothing was committed.")

    def check_cardinality(self, joined: DataFrame, matched: Column, row_id: list, describe: Callable[[tuple[Any, ...]],
                          str]) -> None:
        """SQL's MERGE rule: a target row (identified by the ``row_id`` columns) that more than one
        source row matches is an error, checked only when a MATCHED clause exists. ``describe``
        names the offending row from its id values."""
        from pyspark.sql import functions as F

        if not self.matched:
            return
        dup = joined.where(matched).groupBy(*row_id).count().where(F.col("count") > 1).limit(1).collect()
        if dup:
            raise self._cardinality_error(describe(tuple(dup[0])[:-1]))

    def clause_column(self, matched: Column, not_matched: Column,
                      by_source: Column) -> tuple[Column, dict[int, Clause]]:
        """The number of the clause each joined row takes (null for none), and the clauses by
        number: each row's first clause, in the order written, whose ``When`` holds for the row
        (``matched``, ``not_matched``, ``by_source``: the Columns saying which does) and whose
        condition holds."""
        from pyspark.sql import functions as F

        applies = {When.MATCHED: matched, When.NOT_MATCHED: not_matched, When.NOT_MATCHED_BY_SOURCE: by_source}
        chain = None
        clauses: dict = {}
        for c in (*self.matched, *self.not_matched, *self.not_matched_by_source):
            n = len(clauses)
            cat = applies[c.when]
            cond = cat & F.coalesce(predicate(c.condition), F.lit(False)) if c.condition is not None else cat
            chain = F.when(cond, F.lit(n)) if chain is None else chain.when(cond, F.lit(n))
            clauses[n] = c
        return (chain if chain is not None else F.lit(None).cast("int")), clauses

    def clause_values(self, fields: Iterable[NestedField], clause: Column, clauses: dict, tcol: Callable[[str],
                      Column], resolve: Callable[[str], str], table_name: str,
                      check_update: Optional[Callable[[list[str]], None]] = None) -> list:
        """For each target field (``.name``, ``.field_type``), the value of the clause each joined
        row takes (``clause``: the column from ``clause_column``), the target's own value when
        the clause does not set it. ``resolve(name)`` maps an assigned name (alias stripped) to
        the field's name and raises for no column; ``check_update(names)`` may refuse an UPDATE
        clause by the columns it sets."""
        from pyspark.sql import functions as F

        ta, sa = self.ta, self.sa
        source_fields = {sf.name.lower(): sf for sf in self.source.schema.fields}

        def scol(name: str):
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
                    v, exact = (F.col(f"{sa}.`{source.name}`"), exact) if source is not None else (tcol(f.name), True)
                elif c.kind == "insert":
                    v, exact = (value(sets[f.name]), False) if f.name in sets else (F.lit(None).cast(spark_type), True)
                else:  # insert_all
                    v, exact = ((F.col(f"{sa}.`{source.name}`"), exact) if source is not None
                                else (F.lit(None).cast(spark_type), True))
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
