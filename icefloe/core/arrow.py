"""Data handed to a write as Arrow: a pyarrow.Table, a RecordBatch or a pandas DataFrame."""
from __future__ import annotations

import pyarrow as pa


def is_arrow_data(data) -> bool:
    """True for data written without Spark (pyarrow Table or RecordBatch, pandas DataFrame)."""
    return isinstance(data, (pa.Table, pa.RecordBatch)) or (
        type(data).__name__ == "DataFrame" and type(data).__module__.startswith("pandas"))


def as_arrow_table(data) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    return pa.Table.from_pandas(data, preserve_index=False)
