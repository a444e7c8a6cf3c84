"""Crash consistency: a fault at every write, rename and delete of an Iceberg commit.

For every point the table opens, shows either the old or the new state in full,
a retry of the same commit succeeds, and nothing already committed is lost.
"""
import os
import subprocess
import sys
import textwrap

import pytest

from icefloe.core.faults import FaultInjectingFileIO, InjectedFault
from icefloe.catalog import Catalog
from tests.reliability.rel_util import all_files, make_table, read_ids, referenced_files, rows


def _count_ops(tmp_path, op):
    wh = str(tmp_path / "probe")
    make_table(wh).append(rows(0, 5))
    io = FaultInjectingFileIO()
    t = Catalog(wh, io=io).load_table("db.t")
    getattr(t, op)(rows(100, 5))
    return io.count


@pytest.mark.parametrize("op", ["append", "overwrite"])
def test_fault_at_every_point_raise(tmp_path, op):
    n = _count_ops(tmp_path, op)
    assert n >= 4  # data file, manifest, manifest list, metadata, hint (+ rewritten manifests)
    old, new = list(range(5)), (list(range(5)) + list(range(100, 105)) if op == "append" else list(range(100, 105)))
    for k in range(1, n + 1):
        wh = str(tmp_path / f"{op}-{k}")
        make_table(wh).append(rows(0, 5))
        t = Catalog(wh, io=FaultInjectingFileIO(fail_at=k)).load_table("db.t")
        failed = False
        try:
            getattr(t, op)(rows(100, 5))
        except InjectedFault:
            failed = True
        state = read_ids(wh)
        assert state in (old, new), (k, state)
        clean = Catalog(wh).load_table("db.t")
        if failed:
            assert state == old
            getattr(clean, op)(rows(100, 5))  # the retry succeeds
            assert read_ids(wh) == new
        else:
            assert state == new
        # every file the metadata references exists; what the crash left behind is unreferenced
        refs = referenced_files(clean)
        assert all(os.path.exists(p) for p in refs)


KILL_SCRIPT = textwrap.dedent("""
    import sys
    import pyarrow as pa
    from icefloe.core.faults import FaultInjectingFileIO
    from icefloe.catalog import Catalog
    wh, k = sys.argv[1], int(sys.argv[2])
    t = Catalog(wh, io=FaultInjectingFileIO(fail_at=k, mode="kill")).load_table("db.t")
    t.append(pa.table({"id": pa.array(range(100, 105), pa.int64()), "name": ["x"] * 5}))
""")


def test_kill_at_every_point(tmp_path):
    n = _count_ops(tmp_path, "append")
    for k in range(1, n + 1):
        wh = str(tmp_path / f"kill-{k}")
        make_table(wh).append(rows(0, 5))
        before = all_files(wh)
        proc = subprocess.run([sys.executable, "-c", KILL_SCRIPT, wh, str(k)], capture_output=True, text=True)
        assert proc.returncode == 137, proc.stderr
        state = read_ids(wh)
        assert state in (list(range(5)), list(range(5)) + list(range(100, 105))), (k, state)
        t = Catalog(wh).load_table("db.t")
        refs = referenced_files(t)
        assert all(os.path.exists(p) for p in refs)
        leftovers = {p for p in all_files(wh) - before if "/data/" in p or p.endswith(".avro")} - refs
        # a crash may leave unreferenced files (found by orphan cleanup), never referenced-but-missing ones
        if state == list(range(5)):
            t.append(rows(100, 5))
            assert read_ids(wh) == list(range(5)) + list(range(100, 105))
        assert not (leftovers & referenced_files(t))
