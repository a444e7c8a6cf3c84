"""Iceberg views through ``icefloe serve`` (the REST spec's ``/views`` routes over a SQL catalog):
icefloe's REST client creates, replaces, renames and drops views through SQL; pyiceberg's REST
catalog lists and drops them; the server checks requests as it does for tables (404
NoSuchViewException, 409 for a failed assert-view-uuid, locations confined to the warehouse)."""
import pytest
import requests

import icefloe
from tests.interop_util import served as serve_catalog


@pytest.fixture(scope="module")
def served(tmp_path_factory, spark):
    d = tmp_path_factory.mktemp("rest_views")
    cat = icefloe.Catalog(str(d / "wh"), type="sql", uri=f"sqlite:///{d / 'c.db'}", spark=spark)
    cat.create_namespace("db")
    cat.sql("CREATE TABLE db.t (id bigint, data string) USING iceberg")
    cat.sql("INSERT INTO db.t VALUES (1, 'a'), (2, 'b')")
    with serve_catalog(cat) as uri:
        yield cat, uri, icefloe.Catalog(type="rest", uri=uri, spark=spark)


def test_views_through_the_rest_client_and_pyiceberg(served):
    cat, uri, rest = served
    rest.sql("CREATE VIEW db.v (i COMMENT 'id') TBLPROPERTIES ('k' = 'v') AS SELECT id FROM db.t WHERE id > 1")
    assert [tuple(r) for r in rest.sql("SELECT * FROM db.v").collect()] == [(2,)]
    loaded = cat.load_view("db.v")                       # the server's catalog has it, as the spec writes it
    assert loaded.metadata.properties["k"] == "v" and loaded.metadata.current_version_id == 1
    assert loaded.metadata_location.startswith(cat.warehouse)
    rest.sql("CREATE OR REPLACE VIEW db.v AS SELECT id, data FROM db.t")
    rest.sql("ALTER VIEW db.v SET TBLPROPERTIES ('k' = 'w')")
    meta = cat.load_view("db.v").metadata
    assert meta.current_version_id == 2 and [e[1] for e in meta.version_log] == [1, 2]
    assert meta.properties["k"] == "w" and len(meta.schemas) == 2
    assert sorted(tuple(r) for r in cat.sql("SELECT * FROM db.v").collect()) == [(1, "a"), (2, "b")]

    from pyiceberg.catalog.rest import RestCatalog

    py = RestCatalog("rest", uri=uri)
    assert py.list_views("db") == [("db", "v")]
    assert py.view_exists("db.v") and not py.view_exists("db.t")
    rest.sql("ALTER VIEW db.v RENAME TO db.w")
    assert py.list_views("db") == [("db", "w")] and rest.list_views("db") == ["db.w"]
    py.drop_view("db.w")
    assert not cat.view_exists("db.w") and cat.table_exists("db.t")


def test_the_server_checks_view_requests(served):
    cat, uri, rest = served
    config = requests.get(f"{uri}/v1/config").json()
    assert "POST /v1/{prefix}/namespaces/{namespace}/views/{view}" in config["endpoints"]
    assert "POST /v1/{prefix}/views/rename" in config["endpoints"]
    r = requests.get(f"{uri}/v1/namespaces/db/views/nope")
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchViewException"
    body = {"name": "x", "schema": {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "a", "type": "int", "required": False}]},
        "view-version": {"version-id": 1, "timestamp-ms": 1, "schema-id": 0, "summary": {},
                         "representations": [{"type": "sql", "sql": "SELECT 1 AS a", "dialect": "spark"}],
                         "default-namespace": ["db"]}}
    r = requests.post(f"{uri}/v1/namespaces/db/views", json={**body, "location": "/tmp/elsewhere"})
    assert r.status_code == 400 and "inside the warehouse" in r.json()["error"]["message"]
    r = requests.post(f"{uri}/v1/namespaces/db/views", json={**body, "name": "t"})
    assert r.status_code == 409 and "a table of that name exists" in r.json()["error"]["message"]
    r = requests.post(f"{uri}/v1/namespaces/db/views", json=body)
    assert r.status_code == 200 and r.json()["metadata"]["current-version-id"] == 1
    before = cat.load_view("db.x").metadata_location
    r = requests.post(f"{uri}/v1/namespaces/db/views/x", json={
        "requirements": [{"type": "assert-view-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}],
        "updates": [{"action": "set-properties", "updates": {"a": "b"}}]})
    assert r.status_code == 409 and r.json()["error"]["type"] == "CommitFailedException"
    r = requests.post(f"{uri}/v1/namespaces/db/views/x", json={
        "updates": [{"action": "set-location", "location": "/etc"}]})
    assert r.status_code == 400
    r = requests.post(f"{uri}/v1/namespaces/db/views/x", json={
        "updates": [{"action": "add-view-version", "view-version": {**body["view-version"], "schema-id": 7}}]})
    assert r.status_code == 400 and "unknown schema 7" in r.json()["error"]["message"]
    assert cat.load_view("db.x").metadata_location == before          # nothing was committed
    r = requests.post(f"{uri}/v1/namespaces/db/tables", json={"name": "x", "schema": body["schema"]})
    assert r.status_code == 409 and not cat.table_exists("db.x")
    assert requests.delete(f"{uri}/v1/namespaces/db/views/x").status_code == 204


def test_view_routes_need_the_grants_table_routes_need():
    from icefloe.rest.auth import classify

    assert classify("GET", "/v1/namespaces/db/views").privilege == "read"
    assert classify("POST", "/v1/namespaces/db/views").privilege == "create"
    for method, privilege in (("GET", "read"), ("HEAD", "read"), ("POST", "write"), ("DELETE", "drop")):
        action = classify(method, "/v1/namespaces/db/views/v")
        assert (action.privilege, action.namespace) == (privilege, "db")
    rename = classify("POST", "/v1/views/rename")
    assert rename.privilege == "drop" and rename.body_namespaces
