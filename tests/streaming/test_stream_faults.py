"""A fault at every file operation of a streaming commit, both formats.

The batch's files are written as the Spark tasks write them; the driver's commit then fails
at its k-th write / rename / delete. Spark would fail the batch and, after a restart, run it
again with the same batch id: so after each fault the batch is written and committed again.
Whatever the fault hit, the table ends with the batch exactly once, and no file is left
that nothing references.
"""
import os
import time

import pyarrow as pa
import pytest

from icefloe.core.faults import FaultInjectingFileIO, InjectedFault
from icefloe.spark.datasource import IcefloeWriter
from icefloe.spark.streaming import commit_batch

QUERY = "9d7c1a52-0000-4000-8000-000000000001"


def _batch(lo, hi):
    return pa.table({"id": pa.array(range(lo, hi), pa.int64()), "name": [f"n{i}" for i in range(lo, hi)]})


def _write(loc, data):
    """The task side of a micro-batch: data files and the commit message listing them."""
    return IcefloeWriter({"path": loc}, None, False).write(iter(data.to_batches())).files


def _ids(fmt, wh):
    import icefloe

    return sorted(icefloe.Catalog(wh, fmt).load_table("db.t").to_arrow().column("id").to_pylist())


def _batches_committed(fmt, wh):
    import icefloe

    t = icefloe.Catalog(wh, fmt).load_table("db.t")
    if fmt == "iceberg":
        return [s.summary.get("spark.sql.streaming.epochId") for s in t.snapshots()]
    return [s.commit_identifier for s in t.snapshots()]


def _orphans(fmt, wh):
    import icefloe

    t = icefloe.Catalog(wh, fmt).load_table("db.t")
    return t.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000, dry_run=True)


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_fault_at_every_point_of_a_streaming_commit(tmp_path, fmt):
    import icefloe

    rel = os.path.join("db.db" if fmt == "paimon" else "db", "t")
    points, k = [], 0
    while True:
        k += 1
        wh = str(tmp_path / f"wh{k}")   # the same table each time: batch 0 committed
        icefloe.Catalog(wh, fmt).create_table("db.t", "id bigint not null, name string")
        loc = os.path.join(wh, rel)
        commit_batch(loc, fmt, _write(loc, _batch(0, 10)), QUERY, 0)
        io = FaultInjectingFileIO(fail_at=k)
        try:
            commit_batch(loc, fmt, _write(loc, _batch(10, 20)), QUERY, 1, io=io)
            failed = False
        except InjectedFault:
            failed = True
        if io.count >= k:
            points.append(f"{io.log[k - 1][0]} {os.path.basename(io.log[k - 1][1])}")
        if not failed:
            assert _ids(fmt, wh) == list(range(20))
            break
        # the table shows the old state or the new one in full
        after_fault = _ids(fmt, wh)
        assert after_fault in (list(range(10)), list(range(20))), points[-1]
        # the restarted query runs the batch again: it ends in the table once
        committed = commit_batch(loc, fmt, _write(loc, _batch(10, 20)), QUERY, 1)
        assert committed == (after_fault == list(range(10))), points[-1]
        assert _ids(fmt, wh) == list(range(20)), points[-1]
        assert len(_batches_committed(fmt, wh)) == 2, (points[-1], _batches_committed(fmt, wh))
        assert _orphans(fmt, wh) == [], points[-1]
        assert k < 40
    assert len(points) >= 3, points
    print(f"{fmt}: {len(points)} fault points: {points}")
