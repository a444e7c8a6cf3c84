"""Column statistics of an Iceberg snapshot computed in Spark: the theta sketches of Iceberg's
``compute_table_stats`` (spark-procedures), one per column, as ``iceberg/theta.py`` builds them.

Each task hashes its rows' values and sends back one small sketch per column (at most
``theta.K`` hashes); the driver unions them. The driver never sees the rows.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Sequence

from icefloe.iceberg import theta

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

RESULT = "col int, sketch binary"


def column_sketches(rows: DataFrame, columns: Sequence[tuple[str, str]]) -> list[tuple[bytes, float]]:
    """``rows`` (a DataFrame) and ``columns`` ``[(name, Iceberg type name)]`` -> each column's
    ``(serialized compact theta sketch, estimate)``."""
    seed_hash = theta.seed_hash()
    names = [n for n, _ in columns]
    types = [t for _, t in columns]

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # in the Python workers
        import numpy as np
        import pyarrow as pa

        hashes: list[list[theta.Words]] = [[] for _ in names]
        for batch in batches:
            for i, name in enumerate(names):
                values = theta.single_value_bytes(batch.column(name), types[i])
                hashes[i].append(theta.theta_hashes(values))
                hashes[i] = [np.unique(np.concatenate(hashes[i]))[: theta.K + 1]]     # the smallest are kept
        for i, parts in enumerate(hashes):
            sketch = theta.kmv_sketch(np.concatenate(parts) if parts else np.zeros(0, np.uint64), seed_hash)
            if sketch:
                yield pa.RecordBatch.from_arrays([pa.array([i], pa.int32()), pa.array([sketch], pa.binary())],
                                                 names=["col", "sketch"])

    selected = rows.select(*[f"`{n}`" for n in names])
    found: dict[int, list[bytes]] = {i: [] for i in range(len(names))}
    for r in selected.mapInArrow(run, RESULT).collect():
        found[r["col"]].append(bytes(r["sketch"]))
    return [theta.union(found[i]) for i in range(len(names))]
