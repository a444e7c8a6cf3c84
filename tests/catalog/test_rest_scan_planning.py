"""Server-side scan planning (the REST spec's planTableScan, fetchPlanningResult, cancelPlanning,
fetchScanTasks) in ``icefloe serve`` and icefloe's REST client: the server's plan equals the
library's local plan on a table with position and equality deletes (the same data files, each with
the same delete files), reads through it give the same rows (Arrow and Spark, whose merge re-checks
the spec's sequence-number rules), and the refusals: an unknown plan id or plan task, a plan of
another table, a principal without the read grant, a filter or select naming an unknown column."""
import pyarrow as pa
import pytest
import requests

import icefloe
from icefloe.errors import IcefloeError
from icefloe.iceberg.delete_files import write_equality_deletes
from icefloe.iceberg.rest_client import PLAN_ENDPOINT
from icefloe.iceberg.row_delta import RowDelta
from icefloe.rest.auth import Authenticator, hash_secret, load_auth
from icefloe.rest.server import ServerSettings
from tests.interop_util import served

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("p", pa.string())])


def _rows(ids, p):
    return pa.table({"id": pa.array(ids, pa.int64()), "p": [p] * len(ids)}, schema=SCHEMA)


@pytest.fixture(scope="module")
def table_with_deletes(tmp_path_factory, spark):
    """A table partitioned by ``p`` with a position delete (id 2), an equality delete of id 3 in
    partition a, and a row id 3 appended to partition a after it (which the delete must not reach)."""
    tmp_path = tmp_path_factory.mktemp("planning")
    cat = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}")
    t = cat.create_table("db.t", "id bigint, p string", partitioned_by=["p"],
                         properties={"write.delete.mode": "merge-on-read"})
    t.append(_rows([1, 2, 3], "a"))
    t.append(_rows([4, 5, 6], "b"))
    t.delete("id = 2")
    t.refresh()
    eq = write_equality_deletes(t.io, t.location, t.schema, t.spec, {("a",): pa.table({"id": pa.array([3, 5])})},
                                [t.schema.find_field("id").field_id])
    RowDelta(eq).commit(t.ops)
    t.refresh()
    t.append(_rows([3, 7], "a"))
    return cat, cat.load_table("db.t")


def _tasks(tasks) -> dict:
    return {t.path: sorted(d.delete_key for d in t.deletes) for t in tasks}


def test_server_planning_equals_local_planning_with_deletes(table_with_deletes):
    cat, local = table_with_deletes
    seen: list = []
    with served(cat, ServerSettings(plan_task_files=1), seen=seen) as uri:
        remote = icefloe.Catalog(uri=uri, **{"scan-planning-mode": "server"}).load_table("db.t")
        for where in (None, "p = 'b' and id < 5", "id in (3, 6)"):
            mine, theirs = local.plan_tasks(where), remote.plan_tasks(where)
            assert _tasks(theirs) == _tasks(mine), where
        assert sum(len(t.deletes) for t in local.plan_tasks()) == 2     # a position and an equality delete
        plans = [p for m, p, _ in seen if m == "POST" and p.endswith("/plan")]
        fetched = [p for m, p, _ in seen if m == "POST" and p.endswith("/tasks")]
        assert len(plans) == 3 and fetched          # one plan each, the rest of its tasks as plan tasks
        expected = sorted(r["id"] for r in local.to_arrow().to_pylist())
        assert expected == [1, 3, 4, 5, 6, 7]        # 2 (position), the first 3 (equality) deleted
        assert sorted(r["id"] for r in remote.to_arrow().to_pylist()) == expected
        assert sorted(r.id for r in remote.to_spark().collect()) == expected
        first = local.snapshots()[0].snapshot_id
        assert sorted(r["id"] for r in remote.to_arrow(snapshot_id=first).to_pylist()) == [1, 2, 3]
        # the catalog's default stays client-side planning: no plan request
        before = len(seen)
        plain = icefloe.Catalog(uri=uri).load_table("db.t")
        assert sorted(r["id"] for r in plain.to_arrow().to_pylist()) == expected
        assert not any(p.endswith("/plan") for _, p, _ in seen[before:])


def test_incremental_plan_and_select(table_with_deletes):
    cat, t = table_with_deletes
    snaps = [s.snapshot_id for s in t.snapshots()]
    with served(cat) as uri:
        base = f"{uri}/v1/namespaces/db/tables/t"
        doc = requests.post(f"{base}/plan", json={"start-snapshot-id": snaps[0], "end-snapshot-id": snaps[-1],
                                                 "select": ["id"], "filter": {"type": "eq", "term": "p",
                                                                              "value": "a"}}).json()
        # appends after the first snapshot: partition b's file (pruned by the filter) and the last one
        assert doc["status"] == "completed"
        assert [f["data-file"]["partition"] for f in doc["file-scan-tasks"]] == [["a"]]
        assert doc["file-scan-tasks"][0]["data-file"]["record-count"] == 2
        assert "delete-files" not in doc
        refused = requests.post(f"{base}/plan", json={"snapshot-id": snaps[0], "start-snapshot-id": snaps[0],
                                                     "end-snapshot-id": snaps[-1]})
        assert refused.status_code == 400 and "not both" in refused.json()["error"]["message"]


def test_refusals(table_with_deletes):
    cat, _ = table_with_deletes
    if not cat.table_exists("db.other"):
        cat.create_table("db.other", "id bigint")
    with served(cat, ServerSettings(plan_task_files=1)) as uri:
        base = f"{uri}/v1/namespaces/db/tables"

        def error(r, status, kind, text):
            assert r.status_code == status, r.text
            assert r.json()["error"]["type"] == kind and text in r.json()["error"]["message"], r.text
        error(requests.get(f"{base}/t/plan/no-such-plan"), 404, "NoSuchPlanIdException", "no-such-plan")
        error(requests.delete(f"{base}/t/plan/no-such-plan"), 404, "NoSuchPlanIdException", "no-such-plan")
        error(requests.post(f"{base}/t/tasks", json={"plan-task": "x:1"}), 404, "NoSuchPlanTaskException", "x:1")
        error(requests.post(f"{base}/t/plan", json={"filter": {"type": "eq", "term": "nope", "value": 1}}), 400,
              "BadRequestException", "no column 'nope'")
        error(requests.post(f"{base}/t/plan", json={"filter": {"type": "eq", "term": "ID", "value": 1}}), 400,
              "BadRequestException", "no column 'ID'")          # case-sensitive unless asked otherwise
        assert requests.post(f"{base}/t/plan", json={"case-sensitive": False, "filter": {
            "type": "eq", "term": "ID", "value": 1}}).json()["status"] == "completed"
        error(requests.post(f"{base}/t/plan", json={"select": ["id", "nope"]}), 400, "BadRequestException",
              "no column 'nope'")
        error(requests.post(f"{base}/t/plan", json={"filter": {"type": "eq", "term": {"type": "transform",
              "transform": "bucket[4]", "term": "id"}, "value": 1}}), 400, "BadRequestException", "transform")
        error(requests.post(f"{base}/t/plan", json={"snapshot-id": 1}), 400, "BadRequestException", "no snapshot")
        error(requests.post(f"{base}/t/plan", json={"limit": 1}), 400, "BadRequestException", "limit")
        error(requests.post(f"{base}/missing/plan", json={}), 404, "NoSuchTableException", "db.missing")
        # a plan and its plan tasks belong to their table
        doc = requests.post(f"{base}/t/plan", json={}).json()
        assert doc["plan-tasks"]
        error(requests.get(f"{base}/other/plan/{doc['plan-id']}"), 404, "NoSuchPlanIdException", "db.other")
        error(requests.post(f"{base}/other/tasks", json={"plan-task": doc["plan-tasks"][0]}), 404,
              "NoSuchPlanTaskException", "db.other")
        assert requests.post(f"{base}/t/tasks", json={"plan-task": doc["plan-tasks"][0]}).status_code == 200
        assert requests.delete(f"{base}/t/plan/{doc['plan-id']}").status_code == 204
        error(requests.post(f"{base}/t/tasks", json={"plan-task": doc["plan-tasks"][1]}), 404,
              "NoSuchPlanTaskException", "cancelled")


def test_planning_needs_the_read_grant(table_with_deletes, tmp_path):
    cat, _ = table_with_deletes
    (tmp_path / "auth.yaml").write_text(
        f"principals:\n  reader: {{secret: '{hash_secret('r-secret')}', grants: {{db: [read]}}}}\n"
        f"  stranger: {{secret: '{hash_secret('s-secret')}', grants: {{elsewhere: [read]}}}}\n")
    auth = Authenticator(load_auth(str(tmp_path / "auth.yaml")))
    with served(cat, auth=auth) as uri:
        reader = icefloe.Catalog(uri=uri, credential="reader:r-secret", **{"scan-planning-mode": "server"})
        assert sorted(r["id"] for r in reader.load_table("db.t").to_arrow().to_pylist()) == [1, 3, 4, 5, 6, 7]
        token = requests.post(f"{uri}/v1/oauth/tokens", data={"grant_type": "client_credentials",
                                                              "client_id": "stranger", "client_secret": "s-secret",
                                                              "scope": "catalog"}).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        base = f"{uri}/v1/namespaces/db/tables/t"
        for r in (requests.post(f"{base}/plan", json={}, headers=headers),
                  requests.get(f"{base}/plan/x", headers=headers),
                  requests.post(f"{base}/tasks", json={"plan-task": "x:1"}, headers=headers)):
            assert r.status_code == 403 and r.json()["error"]["type"] == "ForbiddenException", r.text
        assert requests.post(f"{base}/plan", json={}).status_code == 401


def test_the_client_refuses_server_planning_a_server_does_not_offer(table_with_deletes, monkeypatch):
    cat, _ = table_with_deletes
    import icefloe.rest.server as server

    monkeypatch.setattr(server, "ENDPOINTS", [e for e in server.ENDPOINTS if e != PLAN_ENDPOINT])
    with served(cat) as uri:
        with pytest.raises(IcefloeError, match="does not offer server-side scan planning"):
            icefloe.Catalog(uri=uri, **{"scan-planning-mode": "server"})
        with pytest.raises(IcefloeError, match="scan-planning-mode 'remote' is none of client, server"):
            icefloe.Catalog(uri=uri, **{"scan-planning-mode": "remote"})
    with pytest.raises(IcefloeError, match="scan-planning-mode chooses where a REST catalog plans"):
        icefloe.Catalog(str(cat.warehouse), **{"scan-planning-mode": "server"})


@pytest.mark.long
def test_the_java_rest_catalog_plans_on_icefloe_serve(table_with_deletes):
    """Apache Iceberg's Java ``RESTCatalog`` (the newest pinned runtime, which plans on the server
    when ``scan-planning-mode=server``) reads the table with deletes through icefloe serve's plans:
    its own request and response parsers, its reader applying the delete files each task names."""
    from tools.jvm_runtime import JvmRuntime, newest_iceberg_version

    cat, _ = table_with_deletes
    seen: list = []
    with served(cat, ServerSettings(plan_task_files=1), seen=seen) as uri:
        conf = {"spark.sql.catalog.rest": "org.apache.iceberg.spark.SparkCatalog",
                "spark.sql.catalog.rest.type": "rest", "spark.sql.catalog.rest.uri": uri,
                "spark.sql.catalog.rest.cache-enabled": "false",
                "spark.sql.catalog.rest.scan-planning-mode": "server"}
        with JvmRuntime(cat.warehouse + "-jvm", conf=conf, iceberg_version=newest_iceberg_version()) as jvm:
            assert [r[0] for r in jvm.sql("SELECT id FROM rest.db.t ORDER BY id")] == [1, 3, 4, 5, 6, 7]
            assert [r[0] for r in jvm.sql("SELECT id FROM rest.db.t WHERE p = 'a' ORDER BY id")] == [1, 3, 7]
            assert [r[0] for r in jvm.sql("SELECT id FROM rest.db.t WHERE id > 4 ORDER BY id")] == [5, 6, 7]
            agent = {h.get("user-agent", "").split(" ")[0] for m, p, h in seen if p.endswith("/plan")}
    plans = [p for m, p, _ in seen if m == "POST" and p.endswith("/plan")]
    assert len(plans) >= 3 and all(a.startswith("Apache-HttpClient/5.") for a in agent), agent
    assert any(p.endswith("/tasks") for m, p, _ in seen if m == "POST")     # it fetched the plan tasks
