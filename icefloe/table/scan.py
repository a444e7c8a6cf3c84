# pyright: strict
"""``t.scan(row_filter=..., selected_fields=...)``: a read described first and run as Arrow,
pandas or Spark, as pyiceberg users write it."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Protocol, Sequence

from icefloe.core.timetravel import AsOf
from icefloe.core.types import Schema

if TYPE_CHECKING:
    import pandas as pd  # pyright: ignore[reportMissingTypeStubs]  (pandas ships no stubs; it names a type here)
    import pyarrow as pa
    from pyspark.sql import DataFrame


class ScanSource(Protocol):
    """What a scan reads from: a table (``icefloe.table.base.Table``)."""

    @property
    def name(self) -> str: ...

    def schema_for(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                   ref: Optional[str] = None) -> Schema: ...

    def to_arrow(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, where: Any = None,
                 ref: Optional[str] = None) -> pa.Table: ...

    def to_spark(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, where: Any = None,
                 columns: Optional[Sequence[str]] = None, ref: Optional[str] = None) -> DataFrame: ...

    def plan_files(self, where: Any = None, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                   ref: Optional[str] = None) -> list[Any]: ...


class TableScan:
    """A read described first and run later, from ``table.scan(...)``, as pyiceberg users write it.

    Nothing is read until ``to_arrow()``, ``to_pandas()``, ``to_spark()``, ``count()`` or
    ``plan_files()``.

    Example:
        ```python
        scan = t.scan(row_filter="id >= 2", selected_fields=["id", "kind"])
        df = scan.to_pandas()
        ```
    """

    def __init__(self, table: ScanSource, row_filter: Optional[str] = None,
                 selected_fields: Optional[Sequence[str]] = None, snapshot_id: Optional[int] = None,
                 as_of: Optional[AsOf] = None, ref: Optional[str] = None):
        """Describe the read (``table.scan(...)`` calls this).

        Args:
            table: The table.
            row_filter: Spark SQL predicate text (every row by default).
            selected_fields: The columns (all by default).
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.

        Raises:
            ValueError: a selected field is not a column of the table.
        """
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

    def _travel(self) -> dict[str, Any]:
        return {"snapshot_id": self.snapshot_id, "as_of": self.as_of, "ref": self.ref}

    def to_arrow(self) -> pa.Table:
        """Run the read in this process, without Spark.

        Returns:
            pyarrow.Table: the rows.
        """
        out = self.table.to_arrow(where=self.row_filter, **self._travel())
        return out.select(list(self.selected_fields)) if self.selected_fields else out

    def to_pandas(self) -> pd.DataFrame:
        """Run the read in this process, without Spark.

        Returns:
            pandas.DataFrame: the rows.
        """
        return self.to_arrow().to_pandas()

    def to_spark(self) -> DataFrame:
        """Run the read as Spark tasks.

        Returns:
            pyspark.sql.DataFrame: the rows, lazily read.
        """
        return self.table.to_spark(where=self.row_filter, columns=self.selected_fields, **self._travel())

    def plan_files(self) -> list[Any]:
        """The data files the read uses, pruned by ``row_filter``.

        Returns:
            list: one entry per data file.
        """
        return self.table.plan_files(where=self.row_filter, **self._travel())

    def count(self) -> int:
        """Count the rows the read returns (with Spark).

        Returns:
            int: the number of rows.
        """
        return self.to_spark().count()
