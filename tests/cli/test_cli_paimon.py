"""The command line on a Paimon warehouse (no Spark needed for these commands)."""
import json
import os
import subprocess
import sys

import pyarrow as pa

from icefloe.paimon.catalog import PaimonCatalog


def _icefloe(*args):
    return subprocess.run([sys.executable, "-m", "icefloe.cli", *args], capture_output=True, text=True, timeout=120)


def test_files_snapshots_and_check_on_paimon(tmp_path):
    wh = str(tmp_path / "pwh")
    t = PaimonCatalog(wh).create_table("db.t", "id bigint not null, name string", partitioned_by=["name"])
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "a"]}))
    t.append(pa.table({"id": pa.array([4], pa.int64()), "name": ["c"]}))
    base = ["--warehouse", wh, "--format", "paimon"]

    files = _icefloe(*base, "files", "db.t", "--json")
    assert files.returncode == 0, files.stderr
    got = json.loads(files.stdout)
    assert sorted((f["partition"], f["records"]) for f in got) == [
        ("name=a/bucket-0", 2), ("name=b/bucket-0", 1), ("name=c/bucket-0", 1)]
    assert all(os.path.getsize(f["path"]) == f["size"] for f in got)

    snaps = _icefloe(*base, "snapshots", "db.t", "--json")
    assert snaps.returncode == 0, snaps.stderr
    assert [s["id"] for s in json.loads(snaps.stdout)] == [1, 2]

    ok = _icefloe(*base, "check", "db.t")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    os.remove(os.path.join(t.location, "snapshot", "snapshot-2"))
    bad = _icefloe(*base, "check", "db.t")
    assert bad.returncode == 1 and "snapshot" in (bad.stdout + bad.stderr)
