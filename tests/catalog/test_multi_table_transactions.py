"""Multi-table transactions (``catalog.transaction()``): on a SQL catalog (one database
transaction) and through REST (``POST /v1/transactions/commit``) every table's changes commit or
none do; a Hadoop warehouse refuses a second table, naming why."""
import pyarrow as pa
import pytest
import requests

import icefloe
from icefloe.errors import VersionConflict
from icefloe.iceberg.transaction import MultiTableCommitUnsupported

from tests.interop_util import served


def _rows(ids):
    return pa.table({"id": pa.array(ids, pa.int64())})


def _sql(tmp_path):
    return icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}")


def _two_tables(cat):
    cat.create_namespace("db")
    a, b = cat.create_table("db.a", "id bigint"), cat.create_table("db.b", "id bigint")
    a.append(_rows([1]))
    b.append(_rows([1]))
    return a, b


def _state(cat):
    return {n: cat.load_table(n).metadata.to_json() for n in ("db.a", "db.b")}


@pytest.fixture(params=["sql", "rest"])
def catalog(request, tmp_path):
    if request.param == "sql":
        yield _sql(tmp_path)
        return
    with served(_sql(tmp_path)) as uri:
        yield icefloe.Catalog(type="rest", uri=uri)


def test_changes_of_two_tables_commit_together(catalog):
    _two_tables(catalog)
    with catalog.transaction() as ctx:
        ctx.table("db.a").append(_rows([2]))
        ctx.table("db.b").update_properties(set={"k": "v"})
        ctx.table("db.b").append(_rows([3]))
        assert catalog.load_table("db.b").properties.get("k") is None       # nothing before the block ends
    a, b = catalog.load_table("db.a"), catalog.load_table("db.b")
    assert sorted(r["id"] for r in a.to_arrow().to_pylist()) == [1, 2]
    assert sorted(r["id"] for r in b.to_arrow().to_pylist()) == [1, 3] and b.properties["k"] == "v"
    assert len(b.metadata.metadata_log) == 2                 # create, append, then ONE version for both changes


def test_when_one_table_moved_on_neither_table_changes(catalog):
    _two_tables(catalog)
    ctx = catalog.transaction()
    ctx.table("db.a").append(_rows([2]))
    ctx.table("db.b").append(_rows([2]))
    catalog.load_table("db.b").append(_rows([9]))            # another writer: db.b's requirement now fails
    before = _state(catalog)
    with pytest.raises(VersionConflict):
        ctx.commit()
    assert _state(catalog) == before
    assert sorted(r["id"] for r in catalog.load_table("db.a").to_arrow().to_pylist()) == [1]


def test_an_exception_in_the_block_commits_no_table(catalog):
    _two_tables(catalog)
    before = _state(catalog)
    with pytest.raises(RuntimeError):
        with catalog.transaction() as ctx:
            ctx.table("db.a").append(_rows([2]))
            ctx.table("db.b").update_properties(set={"k": "v"})
            raise RuntimeError("stop")
    assert _state(catalog) == before


def test_the_rest_endpoint_checks_every_requirement_before_committing_any(tmp_path):
    cat = _sql(tmp_path)
    a, b = _two_tables(cat)
    before = _state(cat)

    def change(table, snapshot_id):
        return {"identifier": {"namespace": ["db"], "name": table},
                "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": snapshot_id}],
                "updates": [{"action": "set-properties", "updates": {"k": table}}]}

    good_a, good_b = a.current_snapshot().snapshot_id, b.current_snapshot().snapshot_id
    with served(cat) as uri:
        r = requests.post(f"{uri}/v1/transactions/commit", timeout=30,
                          json={"table-changes": [change("a", good_a), change("b", good_b + 1)]})
        assert r.status_code == 409 and r.json()["error"]["type"] == "CommitFailedException"
        assert _state(cat) == before
        r = requests.post(f"{uri}/v1/transactions/commit", timeout=30,
                          json={"table-changes": [change("a", good_a), change("a", good_a)]})
        assert r.status_code == 400 and "twice" in r.json()["error"]["message"]
        r = requests.post(f"{uri}/v1/transactions/commit", timeout=30,
                          json={"table-changes": [change("a", good_a), change("b", good_b)]})
        assert r.status_code == 204
    assert cat.load_table("db.a").properties["k"] == "a" and cat.load_table("db.b").properties["k"] == "b"


def test_a_hadoop_warehouse_refuses_a_second_table(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    _two_tables(cat)
    before = _state(cat)
    with pytest.raises(MultiTableCommitUnsupported, match="cannot commit several tables atomically"):
        with cat.transaction() as ctx:
            ctx.table("db.a").append(_rows([2]))
            ctx.table("db.b").append(_rows([2]))
    assert _state(cat) == before
    with cat.transaction() as ctx:                           # one table is one ordinary commit
        ctx.table("db.a").append(_rows([2]))
    assert sorted(r["id"] for r in cat.load_table("db.a").to_arrow().to_pylist()) == [1, 2]
    with served(cat) as uri:                                 # the REST endpoint over it refuses too
        body = {"table-changes": [{"identifier": {"namespace": ["db"], "name": n}, "requirements": [],
                                   "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}
                                  for n in ("a", "b")]}
        r = requests.post(f"{uri}/v1/transactions/commit", json=body, timeout=30)
        assert r.status_code == 400 and "atomically" in r.json()["error"]["message"]
    assert cat.load_table("db.b").properties.get("k") is None
