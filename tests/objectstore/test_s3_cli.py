"""The command line with a catalog whose warehouse is on the S3 server, configured through
``ICEFLOE_CATALOG__<NAME>__*`` (``S3__ENDPOINT`` -> ``s3.endpoint``, ``S3__ACCESS_KEY_ID`` ->
``s3.access-key-id``, as pyiceberg spells its variables); run in this process without Spark
(``tests/cli_run.py``)."""

import pyarrow as pa

import icefloe
from tests.cli_run import icefloe_here
from tools.s3_server import SECRET_KEY


def test_cli_on_an_s3_catalog(s3_server, s3_warehouse):
    p = s3_server.properties
    t = icefloe.Catalog(s3_warehouse, **p).create_table("db.t", "id bigint, v string")
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"]}))
    env = dict(ICEFLOE_CATALOG__S3__WAREHOUSE=s3_warehouse, ICEFLOE_CATALOG__S3__S3__ENDPOINT=p["s3.endpoint"],
               ICEFLOE_CATALOG__S3__S3__ACCESS_KEY_ID=p["s3.access-key-id"],
               ICEFLOE_CATALOG__S3__S3__SECRET_ACCESS_KEY=p["s3.secret-access-key"])

    def run(*args):
        r = icefloe_here("--catalog", "s3", *args, env=env, spark=False)
        assert r.returncode == 0, r.stderr[-2000:]
        assert SECRET_KEY not in r.stdout + r.stderr
        return r.stdout

    assert run("tables", "db").split() == ["db.t"]
    assert str(t.current_snapshot().snapshot_id) in run("snapshots", "db.t")
    assert run("check", "db.t").startswith("OK db.t")
    bad = dict(env, ICEFLOE_CATALOG__S3__S3__ENDPOINT="http://127.0.0.1:1")
    r = icefloe_here("--catalog", "s3", "tables", "db", env=bad, spark=False)
    assert r.returncode != 0 and "unreachable" in r.stderr and SECRET_KEY not in r.stderr, r.stderr[-2000:]
