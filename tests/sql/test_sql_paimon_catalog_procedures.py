"""Paimon's Spark procedures (procedures page) added last: ``rename_branch``,
``repair_earliest_snapshot``, ``compact_database``, and the ones refused by name with their reason,
checked on the files Paimon's layout puts them in."""
import os

import pyarrow as pa
import pytest

import icefloe
from icefloe.sql.errors import NotSupportedYetError, SqlError


@pytest.fixture
def pcat(warehouse, spark):
    return icefloe.Catalog(warehouse, format="paimon", spark=spark)


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_rename_branch_moves_the_branch_directory(pcat, warehouse):
    pcat.create_table("default.rb", "id int, v string").append(pa.table({"id": pa.array([1], pa.int32()),
                                                                         "v": ["a"]}))
    pcat.sql("CALL sys.create_tag(table => 'default.rb', tag => 't1')")
    pcat.sql("CALL sys.create_branch(table => 'default.rb', branch => 'test_branch', tag => 't1')")
    pcat.load_table("default.rb").branch_table("test_branch").append(
        pa.table({"id": pa.array([2], pa.int32()), "v": ["b"]}))
    assert _rows(pcat.sql("CALL sys.rename_branch(table => 'default.rb', from_branch => 'test_branch', "
                          "to_branch => 'new_branch')")) == [(True,)]
    root = os.path.join(warehouse, "default.db", "rb", "branch")
    assert sorted(os.listdir(root)) == ["branch-new_branch"]
    moved = pcat.load_table("default.rb").branch_table("new_branch").to_arrow().to_pylist()
    assert sorted((r["id"], r["v"]) for r in moved) == [(1, "a"), (2, "b")]
    # a missing source, a taken or invalid target, and main: refused, nothing moved
    with pytest.raises(SqlError, match="no branch 'test_branch'"):
        pcat.sql("CALL sys.rename_branch('default.rb', 'test_branch', 'x')")
    pcat.sql("CALL sys.create_branch('default.rb', 'other')")
    with pytest.raises(SqlError, match="already exists"):
        pcat.sql("CALL sys.rename_branch('default.rb', 'new_branch', 'other')")
    with pytest.raises(SqlError, match="main"):
        pcat.sql("CALL sys.rename_branch('default.rb', 'main', 'y')")
    with pytest.raises(SqlError, match="all digits"):
        pcat.sql("CALL sys.rename_branch('default.rb', 'new_branch', '123')")
    assert sorted(os.listdir(root)) == ["branch-new_branch", "branch-other"]


def test_repair_earliest_snapshot_points_the_hint_past_a_gap(pcat, warehouse):
    t = pcat.create_table("default.re", "id int")
    for i in range(5):
        t.append(pa.table({"id": pa.array([i], pa.int32())}))
    snap_dir = os.path.join(warehouse, "default.db", "re", "snapshot")
    # an interrupted expiry left snapshots 1 and 2 behind a gap (3 is gone)
    os.remove(os.path.join(snap_dir, "snapshot-3"))
    with pytest.raises(SqlError, match="snapshot 3 .* does not exist.*nothing was changed"):
        pcat.sql("CALL sys.repair_earliest_snapshot(table => 'default.re', snapshot_id => 2)")
    with pytest.raises(SqlError, match="does not follow a gap"):
        pcat.sql("CALL sys.repair_earliest_snapshot(table => 'default.re', snapshot_id => 5)")
    with pytest.raises(SqlError, match="not between"):
        pcat.sql("CALL sys.repair_earliest_snapshot(table => 'default.re', snapshot_id => 9)")
    df = pcat.sql("CALL sys.repair_earliest_snapshot(table => 'default.re', snapshot_id => 4)")
    assert df.columns == ["previous_earliest_snapshot_id", "current_earliest_snapshot_id"]
    assert _rows(df) == [(1, 4)]
    with open(os.path.join(snap_dir, "EARLIEST")) as f:
        assert f.read().strip() == "4"
    assert t.refresh().store.snapshots.earliest_id() == 4


def test_compact_database_compacts_the_tables_the_patterns_select(pcat, warehouse):
    pcat.sql("CREATE DATABASE db1")
    tables = {}
    for name in ("db1.t1", "db1.t2_ignore", "default.t3"):
        tables[name] = t = pcat.create_table(name, "id int, v string")
        t.append(pa.table({"id": pa.array([1], pa.int32()), "v": ["a"]}))
        t.append(pa.table({"id": pa.array([2], pa.int32()), "v": ["b"]}))

    def kinds(name):
        return [s.commit_kind for s in tables[name].refresh().snapshots()]

    df = pcat.sql("CALL sys.compact_database(including_databases => 'db1', including_tables => '.*', "
                  "excluding_tables => '.*ignore')")
    assert _rows(df) == [("Compact database finished. Success: 1, Failed: 0",)]
    assert kinds("db1.t1") == ["APPEND", "APPEND", "COMPACT"]
    assert len(tables["db1.t1"].plan()) == 1
    assert kinds("db1.t2_ignore") == kinds("default.t3") == ["APPEND", "APPEND"]
    assert sorted(tables["db1.t1"].to_arrow().to_pylist(), key=lambda r: r["id"]) == \
        [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    with pytest.raises(NotSupportedYetError, match="options sink.parallelism"):
        pcat.sql("CALL sys.compact_database(options => 'target-file-size=128m,sink.parallelism=2')")
    with pytest.raises(SqlError, match="not a regular expression"):
        pcat.sql("CALL sys.compact_database(including_databases => '(')")
    assert _rows(pcat.sql("CALL sys.compact_database()")) == [("Compact database finished. Success: 3, Failed: 0",)]
    assert kinds("default.t3")[-1] == "COMPACT"
