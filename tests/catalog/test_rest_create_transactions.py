"""``icefloe serve`` creating tables as Java's catalogs and the REST spec have it: field ids assigned
afresh (a client's ids are its own), create transactions (``stage-create``, then a commit with
``assert-create``), a missing namespace refused, and errors worded the way Java's catalogs word them
(what Iceberg's REST Compatibility Kit checks: tests/catalog/test_rest_compatibility_kit.py)."""
import pyarrow as pa
import pytest
import requests

import icefloe

from tests.interop_util import served as serve_catalog


@pytest.fixture
def served(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}")
    cat.create_namespace("db")
    with serve_catalog(cat) as uri:
        yield cat, uri + "/v1"


SCHEMA = {"type": "struct", "schema-id": 0, "identifier-field-ids": [4], "fields": [
    {"id": 3, "name": "info", "required": False, "type": {"type": "struct", "fields": [
        {"id": 5, "name": "x", "required": False, "type": "int"},
        {"id": 6, "name": "tags", "required": False,
         "type": {"type": "list", "element-id": 7, "element": "string", "element-required": False}}]}},
    {"id": 4, "name": "id", "required": True, "type": "long"},
    {"id": 8, "name": "n", "required": False, "type": "int", "write-default": 7, "initial-default": 7}]}
V3 = {"format-version": "3"}           # the schema has column defaults, which need format version 3
SPEC = {"spec-id": 0, "fields": [{"source-id": 4, "field-id": 1000, "name": "b", "transform": "bucket[4]"}]}
ORDER = {"order-id": 1, "fields": [{"source-id": 5, "transform": "identity", "direction": "asc",
                                    "null-order": "nulls-first"}]}


def test_a_new_tables_ids_are_assigned_afresh_in_javas_order_and_its_spec_and_order_follow(served):
    cat, uri = served
    r = requests.post(f"{uri}/namespaces/db/tables", json={
        "name": "t", "schema": SCHEMA, "partition-spec": SPEC, "write-order": ORDER,
        "properties": {"format-version": "3"}})
    assert r.status_code == 200, r.text
    schema = r.json()["metadata"]["schemas"][0]
    # a struct's own fields first, then what they hold: info=1, id=2, n=3, info.x=4, info.tags=5, element=6
    assert [(f["name"], f["id"]) for f in schema["fields"]] == [("info", 1), ("id", 2), ("n", 3)]
    inner = schema["fields"][0]["type"]["fields"]
    assert [(f["name"], f["id"]) for f in inner] == [("x", 4), ("tags", 5)] and inner[1]["type"]["element-id"] == 6
    assert schema["identifier-field-ids"] == [2]
    assert schema["fields"][2]["write-default"] == 7 and schema["fields"][2]["initial-default"] == 7
    md = cat.load_table("db.t").metadata.to_json()
    assert md["last-column-id"] == 6
    assert [f["source-id"] for f in md["partition-specs"][0]["fields"]] == [2]
    [order] = [o for o in md["sort-orders"] if o["order-id"] == md["default-sort-order-id"]]
    assert [f["source-id"] for f in order["fields"]] == [4]


def test_a_spec_naming_no_field_of_the_schema_is_refused(served):
    cat, uri = served
    bad = {"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "b", "transform": "identity"}]}
    r = requests.post(f"{uri}/namespaces/db/tables", json={"name": "t", "schema": SCHEMA, "partition-spec": bad, "properties": V3})
    assert r.status_code == 400 and "source id 1 is no field" in r.json()["error"]["message"]
    assert not cat.table_exists("db.t")


def test_a_create_transaction_writes_nothing_until_its_commit(served):
    cat, uri = served
    from pyiceberg.catalog.rest import RestCatalog

    rc = RestCatalog("rest", uri=uri[: -len("/v1")])
    schema = pa.schema([pa.field("id", pa.int64(), False), ("s", pa.string())])
    txn = rc.create_table_transaction("db.staged", schema=schema, properties={"owner": "ana"})
    assert not cat.table_exists("db.staged")                    # staged: nothing written yet
    txn.append(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}, schema=schema))
    assert not cat.table_exists("db.staged")
    txn.commit_transaction()
    t = cat.load_table("db.staged")
    assert t.metadata.properties["owner"] == "ana"
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2] and len(t.snapshots()) == 1
    # a second commit of a create transaction finds the table there: the conflict, nothing changed
    staged = requests.post(f"{uri}/namespaces/db/tables", json={"name": "late", "schema": SCHEMA, "properties": V3,
                                                                "stage-create": True}).json()["metadata"]
    updates = [{"action": "assign-uuid", "uuid": staged["table-uuid"]}, {"action": "upgrade-format-version", "format-version": 3},
               {"action": "add-schema", "schema": staged["schemas"][0]}, {"action": "set-current-schema", "schema-id": -1},
               {"action": "set-location", "location": staged["location"]}]
    body = {"requirements": [{"type": "assert-create"}], "updates": updates}
    assert requests.post(f"{uri}/namespaces/db/tables/late", json=body).status_code == 200
    assert cat.load_table("db.late").metadata.table_uuid == staged["table-uuid"]
    before = cat.load_table("db.late").metadata_location
    again = requests.post(f"{uri}/namespaces/db/tables/late", json=body)
    assert again.status_code == 409
    assert again.json()["error"]["message"].startswith("Requirement failed: table already exists")
    assert cat.load_table("db.late").metadata_location == before
    # a create transaction placing the table outside the warehouse is refused, and nothing is created
    elsewhere = {"requirements": [{"type": "assert-create"}],
                 "updates": [*updates[:4], {"action": "set-location", "location": "/tmp/elsewhere"}]}
    r = requests.post(f"{uri}/namespaces/db/tables/other", json=elsewhere)
    assert r.status_code == 400 and "set-location '/tmp/elsewhere' is elsewhere" in r.json()["error"]["message"]
    assert not cat.table_exists("db.other")


def test_missing_namespaces_and_tables_are_named_as_java_names_them(served):
    cat, uri = served
    r = requests.get(f"{uri}/namespaces/db/tables/nope")
    assert r.status_code == 404 and r.json()["error"]["message"].startswith("Table does not exist: db.nope")
    r = requests.post(f"{uri}/namespaces/gone/tables", json={"name": "t", "schema": SCHEMA, "properties": V3})
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchNamespaceException"
    assert r.json()["error"]["message"].startswith("Namespace does not exist: gone")
    assert not cat.namespace_exists("gone")
    r = requests.get(f"{uri}/namespaces", params={"parent": "gone"})
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchNamespaceException"
    assert requests.get(f"{uri}/namespaces", params={"parent": "db"}).json() == {"namespaces": []}
    r = requests.post(f"{uri}/namespaces", json={"namespace": ["db"]})
    assert r.status_code == 409 and r.json()["error"]["message"].startswith("Namespace already exists: db")
    requests.post(f"{uri}/namespaces/db/tables", json={"name": "t", "schema": SCHEMA, "properties": V3}).raise_for_status()
    r = requests.delete(f"{uri}/namespaces/db")
    assert r.status_code == 409 and r.json()["error"]["message"].startswith("Namespace is not empty: db")
    uuid = cat.load_table("db.t").metadata.table_uuid
    r = requests.post(f"{uri}/namespaces/db/tables/t", json={
        "requirements": [{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}],
        "updates": [{"action": "set-properties", "updates": {"k": "v"}}]})
    assert r.status_code == 409
    assert r.json()["error"]["message"] == ("Requirement failed: UUID does not match (assert-table-uuid): expected "
                                            f"'00000000-0000-0000-0000-000000000000', the table has '{uuid}'")
    assert "k" not in cat.load_table("db.t").metadata.properties
