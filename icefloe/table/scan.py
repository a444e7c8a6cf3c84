"""``t.scan(row_filter=..., selected_fields=...)``: a read described first and run as Arrow,
pandas or Spark, as pyiceberg users write it."""
from __future__ import annotations

from typing import Optional, Sequence


class TableScan:
    """A read of one table: which rows (``row_filter``, Spark SQL text), which columns
    (``selected_fields``; all by default) and which snapshot (``snapshot_id``, ``as_of`` or
    ``ref``). Nothing is read until ``to_arrow()``, ``to_pandas()``, ``to_spark()`` or
    ``plan_files()``."""

    def __init__(self, table, row_filter: Optional[str] = None, selected_fields: Optional[Sequence[str]] = None,
                 snapshot_id: Optional[int] = None, as_of=None, ref: Optional[str] = None):
        self.table = table
        self.row_filter = row_filter if row_filter not in ("", "true", "TRUE", "1 = 1") else None
        self.selected_fields = tuple(selected_fields) if selected_fields and tuple(selected_fields) != ("*",) else None
        self.snapshot_id, self.as_of, self.ref = snapshot_id, as_of, ref
        if self.selected_fields:
            known = {f.name.lower(): f.name for f in table.schema_for(snapshot_id, as_of, ref).fields}
            missing = [c for c in self.selected_fields if c.lower() not in known]
            if missing:
                raise ValueError(f"selected_fields {missing} are not columns of {table.name} "
                                 f"(columns: {', '.join(known.values())})")

    def _travel(self) -> dict:
        return {"snapshot_id": self.snapshot_id, "as_of": self.as_of, "ref": self.ref}

    def to_arrow(self):
        """The rows as a pyarrow.Table, read on the caller (no Spark)."""
        out = self.table.to_arrow(where=self.row_filter, **self._travel())
        return out.select(list(self.selected_fields)) if self.selected_fields else out

    def to_pandas(self):
        return self.to_arrow().to_pandas()

    def to_spark(self):
        """The rows as a Spark DataFrame, read by Spark tasks."""
        return self.table.to_spark(where=self.row_filter, columns=self.selected_fields, **self._travel())

    def plan_files(self) -> list:
        """The data files the read uses (pruned by ``row_filter``)."""
        return self.table.plan_files(where=self.row_filter, **self._travel())

    def count(self) -> int:
        return self.to_spark().count()
