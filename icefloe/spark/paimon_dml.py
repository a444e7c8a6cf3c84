"""MERGE INTO a Paimon primary-key table: changed keys only, as records.

The current rows (merged, in Spark) are joined with the source; each joined row takes the
first clause that applies; updates and inserts become upserts and deletes become DELETE
records of the target row, written together by Spark tasks per bucket
(``paimon_write.write_kv_files``) and committed as one snapshot. No data file is rewritten.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from icefloe.core.reports import RowChanges
from icefloe.paimon.merge import DELETE, INSERT, UPDATE_AFTER, row_level_refusal
from icefloe.spark.merge_clauses import CLAUSE, MergeClauses, When
from icefloe.spark.paimon_write import write_kv_files
from icefloe.paimon.writer import restored_sequence_numbers

if TYPE_CHECKING:
    from pyspark.sql import Column

KIND_COL = "__icefloe_row_kind"


class PrimaryKeyMerge(MergeClauses):
    """``MERGE INTO`` a deduplicate or partial-update primary-key table (see the module doc)."""

    def execute(self) -> RowChanges:
        """Run the MERGE as one commit.

        Returns:
            RowChanges: the rows updated, deleted and inserted, and the new ``snapshot_id``.

        Raises:
            MergeCardinalityError: a target row matched more than one source row; nothing was committed.
            NotSupportedError: a clause the table's merge engine cannot take (Paimon).
        """
        from pyspark.sql import functions as F

        table = self.table
        table.refresh()
        schema = table.table_schema
        restored = restored_sequence_numbers(table.store)
        keys = list(schema.primary_keys)
        joined, tcol, (in_t, matched, not_matched, by_source) = self.join(table.to_spark(),
                                                                          bool(self.not_matched_by_source))
        self.check_cardinality(joined, matched, [tcol(k) for k in keys], lambda row: f"the row with key {row}")
        chain, clauses = self.clause_column(matched, not_matched, by_source)
        joined = joined.withColumn(CLAUSE, chain)
        clause = F.col(CLAUSE)
        key_names = {k.lower() for k in keys}

        def check_update(names: Sequence[str]) -> None:
            if any(n.lower() in key_names for n in names):
                raise table.unsupported("MERGE updating a primary-key column",
                                        "a new key is a new row: delete the old key and insert the new one")
        values = self.clause_values(schema.fields, clause, clauses, tcol, lambda n: schema.field(n).name,
                                    table.name, check_update)
        if any(c.kind == "delete" for c in clauses.values()):
            reason = row_level_refusal("delete", schema.options)
            if reason:
                raise table.unsupported("MERGE with a DELETE clause", reason)
        kind: Optional[Column] = None
        for idx, c in clauses.items():
            k = DELETE if c.kind == "delete" else INSERT if c.when is When.NOT_MATCHED else UPDATE_AFTER
            kind = F.when(clause == idx, F.lit(k)) if kind is None else kind.when(clause == idx, F.lit(k))
        if kind is None:
            return RowChanges()
        rows = joined.where(clause.isNotNull()).select(*values, kind.cast("tinyint").alias(KIND_COL)).cache()
        try:
            by_kind = {r[0]: r[1] for r in rows.groupBy(KIND_COL).count().collect()}
            messages = write_kv_files(rows, table, restored, kind_column=KIND_COL)
        finally:
            rows.unpersist()
        snap = table.commit(messages)
        return RowChanges(by_kind.get(UPDATE_AFTER, 0), by_kind.get(DELETE, 0), by_kind.get(INSERT, 0),
                          snap.id if snap else None)
