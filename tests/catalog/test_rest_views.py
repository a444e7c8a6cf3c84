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
    assert r.status_code == 409 and r.json()["error"]["message"] == "Table with same name already exists: db.t"
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
    assert r.json()["error"]["message"] == "View with same name already exists: db.x"
    assert requests.delete(f"{uri}/v1/namespaces/db/views/x").status_code == 204


def _error(r) -> tuple:
    return r.status_code, r.json()["error"]["type"], r.json()["error"]["message"]


def test_view_errors_in_the_words_of_javas_catalogs(served):
    """Java's REST clients turn these answers into their exceptions (a 400 of type
    IllegalArgumentException into IllegalArgumentException) and show the message as it is."""
    cat, uri, _rest = served
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "a", "type": "int", "required": False}]}
    version = {"version-id": 1, "timestamp-ms": 1, "schema-id": 0, "summary": {}, "default-namespace": ["db"],
               "representations": [{"type": "sql", "sql": "SELECT 1 AS a", "dialect": "spark"}]}
    twice = {**version, "representations": version["representations"] * 2}
    r = requests.post(f"{uri}/v1/namespaces/db/views", json={"name": "e", "schema": schema, "view-version": twice})
    assert _error(r) == (400, "IllegalArgumentException",
                         "Invalid view version: Cannot add multiple queries for dialect spark")
    for name in ("e", "f"):
        r = requests.post(f"{uri}/v1/namespaces/db/views", json={"name": name, "schema": schema,
                                                                 "view-version": version})
        assert r.status_code == 200
    r = requests.post(f"{uri}/v1/namespaces/db/views", json={"name": "e", "schema": schema, "view-version": version})
    assert _error(r) == (409, "AlreadyExistsException", "View already exists: db.e")
    r = requests.get(f"{uri}/v1/namespaces/db/views/t")
    assert _error(r)[:2] == (404, "NoSuchViewException") and _error(r)[2].startswith("View does not exist: db.t")
    r = requests.get(f"{uri}/v1/namespaces/nowhere/views/v")
    assert _error(r)[2].startswith("View does not exist: nowhere.v")
    rename = f"{uri}/v1/views/rename"
    r = requests.post(rename, json={"source": {"namespace": ["db"], "name": "e"},
                                    "destination": {"namespace": ["db"], "name": "f"}})
    assert _error(r) == (409, "AlreadyExistsException", "Cannot rename db.e to db.f. View already exists")
    r = requests.post(rename, json={"source": {"namespace": ["db"], "name": "e"},
                                    "destination": {"namespace": ["db"], "name": "t"}})
    assert _error(r) == (409, "AlreadyExistsException", "Cannot rename db.e to db.t. Table already exists")
    r = requests.post(f"{uri}/v1/tables/rename", json={"source": {"namespace": ["db"], "name": "t"},
                                                       "destination": {"namespace": ["db"], "name": "e"}})
    assert _error(r) == (409, "AlreadyExistsException", "Cannot rename db.t to db.e. View already exists")
    assert cat.table_exists("db.t") and cat.view_exists("db.e") and cat.view_exists("db.f")
    r = requests.post(f"{uri}/v1/namespaces/db/register", json={
        "name": "e", "metadata-location": cat.load_table("db.t").ops.current_location()})
    assert _error(r) == (409, "AlreadyExistsException", "View with same name already exists: db.e")
    assert not cat.table_exists("db.e")
    for name in ("e", "f"):
        assert requests.delete(f"{uri}/v1/namespaces/db/views/{name}").status_code == 204


def test_view_routes_need_the_grants_table_routes_need():
    from icefloe.rest.auth import classify

    assert classify("GET", "/v1/namespaces/db/views").privilege == "read"
    assert classify("POST", "/v1/namespaces/db/views").privilege == "create"
    for method, privilege in (("GET", "read"), ("HEAD", "read"), ("POST", "write"), ("DELETE", "drop")):
        action = classify(method, "/v1/namespaces/db/views/v")
        assert (action.privilege, action.namespace) == (privilege, "db")
    rename = classify("POST", "/v1/views/rename")
    assert rename.privilege == "drop" and rename.body_namespaces


def test_register_view_adopts_a_views_metadata_file_inside_the_warehouse(served, tmp_path):
    cat, uri, rest = served
    rest.sql("CREATE VIEW db.r AS SELECT id FROM db.t")
    path = cat.load_view("db.r").metadata_location
    register = f"{uri}/v1/namespaces/db/register-view"
    r = requests.post(register, json={"name": "r", "metadata-location": path})
    assert _error(r) == (409, "AlreadyExistsException", "View already exists: db.r")
    r = requests.post(register, json={"name": "t", "metadata-location": path})
    assert _error(r) == (409, "AlreadyExistsException", "Table with same name already exists: db.t")
    rest.drop_view("db.r")
    outside = tmp_path / "v1.metadata.json"                  # a copy outside the warehouse: refused
    outside.write_bytes(open(path, "rb").read())
    r = requests.post(register, json={"name": "r", "metadata-location": str(outside)})
    assert r.status_code == 400 and "inside the warehouse" in r.json()["error"]["message"]
    assert requests.post(register, json={"name": "r", "metadata-location": path + ".nope"}).status_code == 400
    import json                                      # a file inside whose view lives outside: refused too
    doc = json.loads(open(path, "rb").read())
    elsewhere = path.replace(".metadata.json", "-elsewhere.metadata.json")
    with open(elsewhere, "w") as f:
        json.dump({**doc, "location": str(tmp_path / "v")}, f)
    r = requests.post(register, json={"name": "r", "metadata-location": elsewhere})
    assert r.status_code == 400 and "inside the warehouse" in r.json()["error"]["message"]
    assert not cat.view_exists("db.r")
    loaded = rest.register_view("db.r2", path)             # the client's call, the server's route
    assert loaded.metadata_location == path and cat.load_view("db.r2").metadata_location == path
    assert [tuple(r) for r in rest.sql("SELECT * FROM db.r2 ORDER BY id").collect()] == [(1,), (2,)]
    rest.drop_view("db.r2")
