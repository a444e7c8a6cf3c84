"""The ``TableOperations`` contract (``icefloe.iceberg.operations``): the Hadoop, SQL, REST and
in-memory operations each commit typed updates and requirements as one new version, refuse a
commit made on a stale base or whose requirement fails (``VersionConflict``, nothing changed),
refuse an update that breaks a rule (nothing changed), and commit a transaction (schema change +
append + property change) as ONE new metadata version, nothing when its block raises, and
re-applied on the newer metadata after a lost race."""
import os

import pyarrow as pa
import pytest

import icefloe
from icefloe.core.io import LOCAL
from icefloe.errors import IcefloeError, VersionConflict
from icefloe.iceberg.metadata_builder import SetCurrentSchema, SetProperties
from icefloe.iceberg.operations import Changes, InMemoryTableOperations, TableOperations
from icefloe.iceberg.partitioning import build_spec
from icefloe.iceberg.table_metadata import new_table_metadata
from icefloe.iceberg.table_requirements import AssertRefSnapshotId, requirements_for

from tests.interop_util import served

SCHEMA = "id bigint, s string"


def _rows(ids, **extra):
    cols = {"id": pa.array(ids, pa.int64()), "s": [str(i) for i in ids]}
    cols.update(extra)
    return pa.table(cols)


@pytest.fixture(params=["memory", "hadoop", "sql", "rest"])
def table(request, tmp_path):
    """A new table ``db.t`` of each kind of operations, and a function loading a second handle on it."""
    from icefloe.core.schema_input import to_schema
    from icefloe.table.iceberg import IcebergTable

    if request.param == "memory":
        loc = str(tmp_path / "mem" / "t")
        ops = InMemoryTableOperations(LOCAL, loc)
        schema = to_schema(SCHEMA)
        ops.commit(None, None, new_table_metadata(loc, schema, build_spec(schema, None), {}))
        yield IcebergTable("db.t", ops), lambda: IcebergTable("db.t", ops)
        return
    if request.param == "rest":
        server_cat = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}")
        with served(server_cat) as uri:
            cat = icefloe.Catalog(type="rest", uri=uri)
            cat.create_namespace("db")
            yield cat.create_table("db.t", SCHEMA), lambda: cat.load_table("db.t")
        return
    kw = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'c.db'}"} if request.param == "sql" else {}
    cat = icefloe.Catalog(str(tmp_path / "wh"), **kw)
    cat.create_namespace("db")
    yield cat.create_table("db.t", SCHEMA), lambda: cat.load_table("db.t")


def test_the_operations_implement_the_protocol(table):
    t, _ = table
    assert isinstance(t.ops, TableOperations)


def test_a_commit_of_updates_makes_one_new_version(table):
    t, _ = table
    version, base = t.ops.load()
    done = t.ops.commit_changes(version, base, Changes([SetProperties({"k": "v"})], requirements_for(base)))
    assert done.version == version + 1 and done.metadata.properties["k"] == "v"
    assert t.ops.load()[0] == done.version and t.ops.current().properties["k"] == "v"
    assert len(done.metadata.metadata_log) == len(base.metadata_log) + 1


def test_a_commit_on_a_stale_base_conflicts_and_changes_nothing(table):
    t, other = table
    version, stale = t.ops.load()
    other().append(_rows([5]))                         # moves main, which the commit requires unmoved
    before = t.ops.current().to_json()
    with pytest.raises(VersionConflict):
        t.ops.commit_changes(version, stale, Changes([SetProperties({"b": "2"})], requirements_for(stale)))
    assert t.ops.current().to_json() == before


def test_a_failed_requirement_conflicts_and_changes_nothing(table):
    t, _ = table
    t.append(_rows([1]))
    version, base = t.ops.load()
    with pytest.raises(VersionConflict):
        t.ops.commit_changes(version, base, Changes([SetProperties({"b": "2"})],
                                                    [AssertRefSnapshotId(12345, "main")]))
    assert t.ops.current().to_json() == base.to_json()


def test_an_update_breaking_a_rule_is_refused_and_changes_nothing(table):
    t, _ = table
    version, base = t.ops.load()
    with pytest.raises(IcefloeError, match="no schema with id 99"):
        t.ops.commit_changes(version, base, Changes([SetProperties({"b": "2"}), SetCurrentSchema(99)],
                                                    requirements_for(base)))
    assert t.ops.current().to_json() == base.to_json()


def test_a_transaction_is_one_metadata_version(table):
    t, _ = table
    t.append(_rows([1]))
    _, before = t.ops.load()
    with t.transaction() as tx:
        with tx.update_schema() as u:
            u.add_column("x", "double")
        tx.append(_rows([2], x=[2.5]))                 # written under the schema staged above
        tx.update_properties(set={"owner": "etl"})
        assert t.ops.current().to_json() == before.to_json()       # nothing before the block ends
    _, after = t.ops.load()
    assert len(after.metadata_log) == len(before.metadata_log) + 1              # one new version
    assert len(after.snapshots) == len(before.snapshots) + 1                    # one new snapshot
    snap = after.current_snapshot
    assert snap.parent_snapshot_id == before.current_snapshot_id and snap.schema_id == after.current_schema_id
    assert [f.name for f in after.schema.fields] == ["id", "s", "x"] and after.properties["owner"] == "etl"
    rows = sorted(t.refresh().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "s": "1", "x": None}, {"id": 2, "s": "2", "x": 2.5}]


def test_a_transaction_whose_block_raises_commits_nothing(table):
    t, _ = table
    t.append(_rows([1]))
    _, before = t.ops.load()
    files = sorted(os.listdir(t.ops.metadata_dir))
    with pytest.raises(RuntimeError, match="changed my mind"):
        with t.transaction() as tx:
            tx.update_properties(set={"owner": "etl"})
            tx.append(_rows([2]))
            raise RuntimeError("changed my mind")
    assert t.ops.current().to_json() == before.to_json()
    assert sorted(os.listdir(t.ops.metadata_dir)) == files          # its manifests are deleted too


def test_a_transaction_that_lost_a_race_is_applied_on_the_winners_metadata(table):
    t, other = table
    t.append(_rows([1]))
    with t.transaction() as tx:
        tx.append(_rows([2]))
        tx.update_properties(set={"k": "v"})
        won = other().append(_rows([3]))              # commits first
    meta = t.ops.current()
    assert meta.current_snapshot.parent_snapshot_id == won.snapshot_id
    assert sorted(r["id"] for r in t.refresh().to_arrow().to_pylist()) == [1, 2, 3]
    assert meta.properties["k"] == "v" and len(meta.snapshots) == 3


def test_two_appends_in_one_transaction_are_two_snapshots_in_one_version(table):
    t, _ = table
    _, before = t.ops.load()
    with t.transaction() as tx:
        tx.append(_rows([1]))
        tx.append(_rows([2]))
    _, after = t.ops.load()
    assert len(after.metadata_log) == len(before.metadata_log) + 1 and len(after.snapshots) == 2
    first, second = after.snapshots
    assert second.parent_snapshot_id == first.snapshot_id and after.current_snapshot_id == second.snapshot_id
    assert second.sequence_number == first.sequence_number + 1
    assert sorted(r["id"] for r in t.refresh().to_arrow().to_pylist()) == [1, 2]
