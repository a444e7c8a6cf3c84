# pyright: strict
"""``t.inspect``: a table's metadata tables as Spark DataFrames, for either format.

Each metadata table is built once, by its format, as Arrow (``Table.metadata_table``); this is
only the Spark view of it, so ``t.inspect.snapshots()``, ``t.metadata_table("snapshots")`` and
``SELECT * FROM db.t.snapshots`` always agree.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Protocol

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from icefloe.core.timetravel import AsOf


class MetadataTables(Protocol):
    """What ``t.inspect`` reads: a table (``icefloe.table.base.Table``) and its metadata tables."""

    @property
    def name(self) -> str: ...

    @property
    def format(self) -> str: ...

    @property
    def spark(self) -> SparkSession: ...

    def metadata_table_names(self) -> tuple[str, ...]: ...

    def metadata_table(self, name: str, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                       ref: Optional[str] = None) -> pa.Table: ...


def _python(value: Any, t: pa.DataType) -> Any:
    """An Arrow value (from ``to_pylist``) as Spark takes it: maps as dicts, structs as tuples."""
    if value is None:
        return None
    if pa.types.is_map(t):
        return {_python(k, t.key_type): _python(v, t.item_type) for k, v in value}
    if pa.types.is_struct(t):
        return tuple(_python(value[f.name], f.type) for f in t)
    if pa.types.is_list(t):
        return [_python(v, t.value_type) for v in value]
    return value


def to_spark(spark: SparkSession, table: pa.Table) -> DataFrame:
    """A metadata table as a Spark DataFrame with the Arrow schema's types and nullability, nested
    fields included (timestamps with a zone are Spark TIMESTAMP, without one TIMESTAMP_NTZ). Rows
    go through Python: metadata tables are small, and Spark's Arrow path loses nested
    non-nullable fields of timestamp structs."""
    schema = from_arrow_schema(table.schema, prefer_timestamp_ntz=True)
    types = [f.type for f in table.schema]
    rows = [tuple(_python(v, t) for v, t in zip(r.values(), types)) for r in table.to_pylist()]
    return spark.createDataFrame(rows, schema)


class Inspect:
    """``t.inspect.<name>(snapshot_id=None)`` for every name in ``t.metadata_table_names()``."""

    def __init__(self, table: MetadataTables):
        self._table = table

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._table.metadata_table_names()))

    def __getattr__(self, name: str) -> Callable[..., DataFrame]:
        if name.startswith("_") or name not in self._table.metadata_table_names():
            raise AttributeError(f"{self._table.format} table {self._table.name} has no metadata table {name!r}; "
                                 f"it has {', '.join(self._table.metadata_table_names())}")

        def show(snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                 ref: Optional[str] = None) -> DataFrame:
            arrow = self._table.metadata_table(name, snapshot_id=snapshot_id, as_of=as_of, ref=ref)
            return to_spark(self._table.spark, arrow)

        show.__name__ = name
        return show
