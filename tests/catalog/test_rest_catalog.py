"""``icefloe serve``: the Iceberg REST catalog protocol over an icefloe catalog. pyiceberg's
RestCatalog creates namespaces and tables through it, commits appends and schema changes, and
reads; icefloe reads and writes the same tables directly; a commit whose requirement no longer
holds is refused with 409 and changes nothing."""
import os
import time

import pyarrow as pa
import pytest
import requests

import icefloe

from tests.interop_util import free_port as _free_port
from tests.interop_util import served as serve_catalog


@pytest.fixture(params=["sql", "hadoop"])
def served(request, tmp_path):
    kw = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'c.db'}"} if request.param == "sql" else {}
    cat = icefloe.Catalog(str(tmp_path / "wh"), **kw)
    with serve_catalog(cat) as uri:
        yield cat, uri


def _rest(uri):
    from pyiceberg.catalog.rest import RestCatalog

    return RestCatalog("rest", uri=uri)


SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("s", pa.string())])


def test_pyiceberg_through_icefloe_serve(served):
    cat, uri = served
    rc = _rest(uri)
    rc.create_namespace("db")
    assert ("db",) in rc.list_namespaces()
    pt = rc.create_table("db.t", schema=SCHEMA)
    pt.append(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}, schema=SCHEMA))
    pt.append(pa.table({"id": pa.array([3], pa.int64()), "s": ["c"]}, schema=SCHEMA))
    assert rc.list_tables("db") == [("db", "t")]
    t = cat.load_table("db.t")                                  # icefloe, directly
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == [1, 2, 3] and len(t.snapshots()) == 2
    t.append(pa.table({"id": pa.array([4], pa.int64()), "s": ["d"]}))
    assert sorted(rc.load_table("db.t").scan().to_arrow().column("id").to_pylist()) == [1, 2, 3, 4]
    from pyiceberg.types import DoubleType

    with rc.load_table("db.t").update_schema() as u:            # add-schema + set-current-schema
        u.add_column("x", DoubleType())
    assert [f.name for f in cat.load_table("db.t").schema.fields] == ["id", "s", "x"]
    assert sorted(cat.load_table("db.t").to_arrow().column("id").to_pylist()) == [1, 2, 3, 4]


def test_a_stale_commit_is_refused(served):
    cat, uri = served
    cat.create_namespace("db")
    t = cat.create_table("db.c", "id bigint")
    t.append(pa.table({"id": pa.array([1], pa.int64())}))
    stale = t.current_snapshot().snapshot_id
    t.append(pa.table({"id": pa.array([2], pa.int64())}))
    before = t.refresh().metadata_location
    body = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": stale}],
            "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}
    r = requests.post(f"{uri}/v1/namespaces/db/tables/c", json=body, timeout=30)
    assert r.status_code == 409 and r.json()["error"]["type"] == "CommitFailedException"
    assert cat.load_table("db.c").metadata_location == before
    body["requirements"][0]["snapshot-id"] = t.current_snapshot().snapshot_id
    r = requests.post(f"{uri}/v1/namespaces/db/tables/c", json=body, timeout=30)
    assert r.status_code == 200 and cat.load_table("db.c").properties["k"] == "v"
    assert requests.get(f"{uri}/v1/namespaces/db/tables/nope", timeout=30).status_code == 404
    assert requests.get(f"{uri}/v1/namespaces/nope", timeout=30).status_code == 404


def test_icefloe_as_a_rest_client(served, spark):
    server_cat, uri = served
    cat = icefloe.Catalog(type="rest", uri=uri, spark=spark)
    cat.create_namespace("db")
    t = cat.create_table("db.r", "id bigint not null, s string", partitioned_by=["s"])
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}))
    t.append(spark.createDataFrame([(3, "a")], "id bigint, s string"))
    with t.update_schema() as u:
        u.add_column("x", "double")
    t.delete("id = 2")
    assert sorted(r["id"] for r in server_cat.load_table("db.r").to_arrow().to_pylist()) == [1, 3]
    assert sorted(_rest(uri).load_table("db.r").scan().to_arrow().column("id").to_pylist()) == [1, 3]
    # two clients racing: the loser's change is re-applied on the winner's metadata, nothing lost
    other = icefloe.Catalog(type="rest", uri=uri).load_table("db.r")
    t.append(pa.table({"id": pa.array([10], pa.int64()), "s": ["c"], "x": [1.0]}))
    other.append(pa.table({"id": pa.array([11], pa.int64()), "s": ["c"], "x": [2.0]}))
    assert sorted(r["id"] for r in cat.load_table("db.r").to_arrow().to_pylist()) == [1, 3, 10, 11]
    assert cat.sql("SELECT count(*) FROM db.r").collect()[0][0] == 4
    assert cat.list_tables("db") == ["db.r"] and cat.list_namespaces() == ["db"]
    data = [f.file_path for f in server_cat.load_table("db.r").plan_files()]
    cat.drop_table("db.r")                         # no purge asked (the REST default): the files stay
    assert not cat.table_exists("db.r") and data and all(os.path.exists(p) for p in data)


def test_the_serve_command(tmp_path):
    import subprocess
    import sys

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from icefloe.cli import main; main(sys.argv[1:])",
                             "--warehouse", str(tmp_path / "wh"), "serve", "--port", str(port)],
                            stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            try:
                if requests.get(f"http://127.0.0.1:{port}/v1/config", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                time.sleep(0.1)
        rc = _rest(f"http://127.0.0.1:{port}")
        rc.create_namespace("db")
        rc.create_table("db.t", schema=SCHEMA)
        assert icefloe.Catalog(str(tmp_path / "wh")).list_tables("db") == ["db.t"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_refuses_a_catalog_it_cannot_place_tables_in(tmp_path, monkeypatch, capsys):
    """The server puts a new table in its warehouse and checks every file a commit names against
    the table's location; a REST catalog's tables, locations and commits belong to its own server,
    so serving one is refused by name before anything listens (it used to start, then answer a
    create with a 500: the server's ``Catalog.check_new_location`` met a REST catalog, which has
    none). A Paimon catalog is refused as before."""
    from icefloe.cli import main
    from icefloe.errors import IcefloeError, NotSupportedError
    from icefloe.rest import server

    cat = icefloe.Catalog(str(tmp_path / "wh"))
    cat.create_namespace("db")
    with serve_catalog(cat) as uri:
        upstream = icefloe.Catalog(uri=uri)
        with pytest.raises(NotSupportedError, match="icefloe serve over a REST catalog is not supported: .*connect "
                                                    "clients to that server directly"):
            server.RestCatalogApp(upstream)

        def started(*args, **kwargs):
            raise AssertionError("the server was started over a REST catalog")
        monkeypatch.setattr(server, "serve", started)
        for key, value in (("WAREHOUSE", str(tmp_path / "other")), ("TYPE", "rest"), ("URI", uri)):
            monkeypatch.setenv(f"ICEFLOE_CATALOG__UP__{key}", value)
        with pytest.raises(SystemExit) as e:
            main(["--catalog", "up", "serve", "--port", str(_free_port())])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert "icefloe serve over a REST catalog is not supported" in err and "REST catalog on" not in err
    assert cat.list_tables("db") == []
    paimon = icefloe.Catalog(str(tmp_path / "pw"), format="paimon")
    with pytest.raises(IcefloeError, match="the REST catalog serves Iceberg tables"):
        server.RestCatalogApp(paimon)


def test_namespace_properties_in_the_sql_catalog(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}")
    with serve_catalog(cat) as uri:
        rc = _rest(uri)
        rc.create_namespace("db", {"owner": "ana", "team": "x"})
        assert rc.load_namespace_properties("db") == {"owner": "ana", "team": "x"}
        summary = rc.update_namespace_properties("db", removals={"team", "nope"}, updates={"owner": "bo"})
        assert summary.removed == ["team"] and summary.missing == ["nope"] and summary.updated == ["owner"]
        assert rc.load_namespace_properties("db") == {"owner": "bo"}
        from pyiceberg.catalog.sql import SqlCatalog

        py = SqlCatalog("default", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=f"file://{tmp_path}/py")
        assert py.load_namespace_properties("db")["owner"] == "bo"    # the JDBC catalog's table, shared


def test_register_table_through_a_rest_catalog(tmp_path):
    """``Catalog.register_table`` on a REST catalog asks the server (the spec's ``register`` route):
    the table written elsewhere in the warehouse is adopted, nothing copied; a taken name or a
    metadata file the server may not adopt is refused and registers nothing."""
    from icefloe.errors import IcefloeError, NotSupportedError, TableAlreadyExistsError

    wh = str(tmp_path / "wh")
    plain = icefloe.Catalog(wh)                      # the table's files, written by another catalog
    plain.create_namespace("db")
    plain.create_table("db.n", "id bigint").append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    location = plain.load_table("db.n").metadata_location
    server = icefloe.Catalog(wh, type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}")
    server.create_namespace("db")
    with serve_catalog(server) as uri:
        cat = icefloe.Catalog(type="rest", uri=uri)
        t = cat.register_table("db.reg", location)
        assert t.metadata_location == location and cat.list_tables("db") == ["db.reg"]
        assert sorted(cat.load_table("db.reg").to_arrow().column("id").to_pylist()) == [1, 2]
        with pytest.raises(TableAlreadyExistsError):
            cat.register_table("db.reg", location)
        outside = icefloe.Catalog(str(tmp_path / "other"))
        outside.create_namespace("db")
        outside.create_table("db.o", "id bigint")
        with pytest.raises(IcefloeError, match="inside the warehouse or the server's allowed locations"):
            cat.register_table("db.o", outside.load_table("db.o").metadata_location)
        assert cat.list_tables("db") == ["db.reg"]
    with pytest.raises(NotSupportedError, match="Paimon tables are adopted by pointing a catalog at their warehouse"):
        icefloe.Catalog(str(tmp_path / "p"), format="paimon").register_table("db.x", location)


def test_serve_stores_what_other_engines_ask_and_icefloe_does_not_write_it(served, spark):
    """A table whose properties ask for what icefloe does not do (ORC data files) is created through
    ``icefloe serve`` by another engine (pyiceberg) and kept as asked; icefloe reads it, but refuses to
    write it or, as a REST client, to create one, naming the property."""
    from icefloe.errors import IcefloeError

    cat, uri = served
    rc = _rest(uri)
    rc.create_namespace("db")
    rc.create_table("db.orc", schema=SCHEMA, properties={"write.format.default": "orc"})
    t = cat.load_table("db.orc")
    assert t.properties["write.format.default"] == "orc" and t.to_arrow().num_rows == 0
    with pytest.raises(IcefloeError, match="write.format.default"):
        t.append(pa.table({"id": pa.array([1], pa.int64()), "s": ["a"]}))
    client = icefloe.Catalog(uri=uri, type="rest", spark=spark)
    with pytest.raises(IcefloeError, match="write.format.default"):
        client.create_table("db.orc2", "id bigint, s string", properties={"write.format.default": "orc"})
    assert rc.list_tables("db") == [("db", "orc")]
