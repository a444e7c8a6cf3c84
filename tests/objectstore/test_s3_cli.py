"""The command line with a catalog whose warehouse is on the S3 server, configured through
``ICEFLOE_CATALOG__<NAME>__*`` (``S3__ENDPOINT`` -> ``s3.endpoint``, ``S3__ACCESS_KEY_ID`` ->
``s3.access-key-id``, as pyiceberg spells its variables)."""
import os
import subprocess
import sys

import pyarrow as pa

import icefloe
from tools.s3_server import SECRET_KEY


def test_cli_on_an_s3_catalog(s3_server, s3_warehouse):
    p = s3_server.properties
    t = icefloe.Catalog(s3_warehouse, **p).create_table("db.t", "id bigint, v string")
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"]}))
    env = dict(os.environ, ICEFLOE_CATALOG__S3__WAREHOUSE=s3_warehouse, ICEFLOE_CATALOG__S3__S3__ENDPOINT=p["s3.endpoint"],
               ICEFLOE_CATALOG__S3__S3__ACCESS_KEY_ID=p["s3.access-key-id"],
               ICEFLOE_CATALOG__S3__S3__SECRET_ACCESS_KEY=p["s3.secret-access-key"])
    cli = [sys.executable, "-m", "icefloe.cli", "--catalog", "s3"]

    def run(*args):
        r = subprocess.run(cli + list(args), capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        assert SECRET_KEY not in r.stdout + r.stderr
        return r.stdout

    assert run("tables", "db").split() == ["db.t"]
    assert str(t.current_snapshot().snapshot_id) in run("snapshots", "db.t")
    assert run("check", "db.t").startswith("OK db.t")
    bad = dict(env, ICEFLOE_CATALOG__S3__S3__ENDPOINT="http://127.0.0.1:1")
    r = subprocess.run(cli + ["tables", "db"], capture_output=True, text=True, env=bad, timeout=300)
    assert r.returncode != 0 and "unreachable" in r.stderr and SECRET_KEY not in r.stderr, r.stderr[-2000:]
