"""The SQL catalog on PostgreSQL (the system's server, started by the tests): writers in
separate processes commit through it and lose nothing; pyiceberg's SqlCatalog on the same
database reads what they wrote."""
import os
import subprocess
import sys

import pyarrow as pa

import icefloe

WRITER = """
import sys, pyarrow as pa, icefloe
wh, uri, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = icefloe.Catalog(wh, type="sql", uri=uri, name="pg").load_table("db.t")
for i in range(6):
    t.append(pa.table({"id": pa.array([k * 100 + i], pa.int64())}))
"""


def test_processes_committing_through_postgres_lose_nothing(tmp_path, postgres_url):
    wh = str(tmp_path / "wh")
    cat = icefloe.Catalog(wh, type="sql", uri=postgres_url, name="pg")
    cat.create_table("db.t", "id bigint not null")
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, wh, postgres_url, str(k)], stderr=subprocess.PIPE,
                              text=True, env=dict(os.environ)) for k in range(3)]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    t = cat.load_table("db.t")
    want = sorted(k * 100 + i for k in range(3) for i in range(6))
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == want
    assert len(t.snapshots()) == 18

    from pyiceberg.catalog.sql import SqlCatalog

    py = SqlCatalog("pg", uri=postgres_url, warehouse=f"file://{tmp_path}/py")
    assert sorted(py.load_table("db.t").scan().to_arrow().column("id").to_pylist()) == want
    py.create_namespace("pyns")
    py.create_table("pyns.p", schema=pa.schema([("x", pa.int64())])).append(pa.table({"x": pa.array([7])}))
    assert cat.load_table("pyns.p").to_arrow().column("x").to_pylist() == [7]
