"""MERGE INTO's clauses, shared by both formats: the builder users chain
(``when_matched_update``, ``when_not_matched_insert_all``...) and the Spark expressions that
pick, for every joined row, the first clause that applies and the values it writes."""
from __future__ import annotations

import dataclasses
from typing import Optional

T_MARK, S_MARK, CLAUSE = "_icefloe_in_target", "_icefloe_in_source", "_icefloe_clause"


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


def check_resolvable(spark, schema, sets: dict, table_name: str, condition=None) -> None:
    """Analyse UPDATE's values and condition against the table's own columns (no job runs), so a
    name that is no column is reported as such, and never with icefloe's internal columns as
    suggestions. A bare word where a string was meant gets the hint to quote it."""
    from pyspark.errors import AnalysisException

    from icefloe.core.types import to_spark_schema
    from icefloe.errors import ExpressionError

    empty = spark.createDataFrame([], to_spark_schema(schema))
    columns = ", ".join(f.name for f in schema.fields)
    items = [(f"value of column {k!r}", v) for k, v in sets.items()]
    if condition is not None and (isinstance(condition, str) or hasattr(condition, "_jc")):
        items.append(("condition", condition))
    for what, v in items:
        try:
            empty.select((predicate(v) if what == "condition" else value(v)).alias("_v")).schema  # noqa: B018
        except AnalysisException as e:
            reason = (str(e).splitlines() or [""])[0]
            if "UNRESOLVED_COLUMN" in reason:
                hint = f" (a string needs quotes: \"'{v}'\")" if isinstance(v, str) and v.isidentifier() else ""
                raise ExpressionError(f"{what} {v!r} names no column of table {table_name} (columns: {columns})"
                                      f"{hint}") from None
            raise ExpressionError(f"{what} {v!r}: {reason.split(' SQLSTATE')[0]}") from None


class MergeClauses:
    """``MERGE INTO target t USING source s ON ...`` built clause by clause (the first matching
    clause of its kind wins); a format's builder adds ``execute()``."""

    def __init__(self, table, source, on, target_alias: str = "t", source_alias: str = "s",
                 isolation: Optional[str] = None):
        self.table, self.source, self.on = table, source, on
        self.ta, self.sa = target_alias, source_alias
        self.isolation = isolation
        self.matched: list[Clause] = []
        self.not_matched: list[Clause] = []
        self.not_matched_by_source: list[Clause] = []

    def when_matched_update(self, set: dict, condition=None) -> "MergeClauses":
        self.matched.append(Clause("update", condition, set))
        return self

    def when_matched_update_all(self, condition=None) -> "MergeClauses":
        self.matched.append(Clause("update_all", condition))
        return self

    def when_matched_delete(self, condition=None) -> "MergeClauses":
        self.matched.append(Clause("delete", condition))
        return self

    def when_not_matched_insert(self, values: dict, condition=None) -> "MergeClauses":
        self.not_matched.append(Clause("insert", condition, values))
        return self

    def when_not_matched_insert_all(self, condition=None) -> "MergeClauses":
        self.not_matched.append(Clause("insert_all", condition))
        return self

    def when_not_matched_by_source_update(self, set: dict, condition=None) -> "MergeClauses":
        self.not_matched_by_source.append(Clause("update", condition, set))
        return self

    def when_not_matched_by_source_delete(self, condition=None) -> "MergeClauses":
        self.not_matched_by_source.append(Clause("delete", condition))
        return self

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
