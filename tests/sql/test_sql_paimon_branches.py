"""Paimon branches as Paimon's Spark documentation uses them (manage-branches, procedures):
``CALL sys.create_branch / delete_branch / fast_forward``, reads and writes of ``t$branch_b``,
the ``$branches`` and ``$buckets`` system tables, ``expire_tags``, ``compact_manifest``,
``SHOW PARTITIONS``, and Paimon's procedures refused by name."""
import json
import os

import pytest

from icefloe.errors import IcefloeError
from icefloe.sql.errors import NotSupportedYetError, SqlError


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _files(path):
    return sorted(os.listdir(path)) if os.path.isdir(path) else []


def test_branch_from_tag_read_write_and_fast_forward(pcat, warehouse):
    pcat.sql("CREATE TABLE default.T (id bigint, v string) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    pcat.sql("INSERT INTO default.T VALUES (1, 'a'), (2, 'b')")
    pcat.sql("CALL sys.create_tag(table => 'default.T', tag => 'tag1')")
    table_dir = os.path.join(warehouse, "default.db", "T")
    # the doc's forms: positional, from a tag; and an empty branch
    assert _rows(pcat.sql("CALL sys.create_branch('default.T', 'branch1', 'tag1')")) == [(True,)]
    pcat.sql("CALL sys.create_branch('default.T', 'empty_branch')")
    branch_dir = os.path.join(table_dir, "branch", "branch-branch1")
    # Paimon's layout: the tag, its snapshot and the schemas copied into the branch's directory
    assert _files(os.path.join(branch_dir, "tag")) == ["tag-tag1"]
    assert _files(os.path.join(branch_dir, "snapshot")) == ["snapshot-1"]
    assert _files(os.path.join(branch_dir, "schema")) == ["schema-0"]
    assert _files(os.path.join(table_dir, "branch", "branch-empty_branch", "snapshot")) == []
    assert _rows(pcat.sql("SELECT * FROM default.`T$branches`").select("branch_name")) == \
        [("branch1",), ("empty_branch",)]

    pcat.sql("INSERT INTO default.`T$branch_branch1` VALUES (3, 'c')")
    pcat.sql("UPDATE default.`T$branch_branch1` SET v = 'x' WHERE id = 1")
    pcat.sql("DELETE FROM default.`T$branch_branch1` WHERE id = 2")
    assert _rows(pcat.sql("SELECT * FROM default.`T$branch_branch1`")) == [(1, "x"), (3, "c")]
    assert _rows(pcat.sql("SELECT * FROM default.`T$branch_empty_branch`")) == []
    # main is untouched: its snapshot directory still ends at snapshot 1
    assert _rows(pcat.sql("SELECT * FROM default.T")) == [(1, "a"), (2, "b")]
    assert [s for s in _files(os.path.join(table_dir, "snapshot")) if s.startswith("snapshot-")] == ["snapshot-1"]
    branch_snaps = _rows(pcat.sql("SELECT snapshot_id FROM default.`T$branch_branch1$snapshots`"))
    assert branch_snaps[0] == (1,) and len(branch_snaps) >= 4
    with open(os.path.join(branch_dir, "snapshot", f"snapshot-{branch_snaps[-1][0]}")) as f:
        assert json.load(f)["id"] == branch_snaps[-1][0]

    pcat.sql("INSERT INTO default.T VALUES (9, 'main only')")
    assert _rows(pcat.sql("CALL sys.fast_forward(table => 'default.T', branch => 'branch1')")) == [(True,)]
    assert _rows(pcat.sql("SELECT * FROM default.T")) == [(1, "x"), (3, "c")]
    main_snaps = [s for s in _files(os.path.join(table_dir, "snapshot")) if s.startswith("snapshot-")]
    assert main_snaps == sorted(f"snapshot-{i}" for (i,) in branch_snaps)
    pcat.sql("INSERT INTO default.T VALUES (4, 'd')")       # main goes on from the branch's history
    assert _rows(pcat.sql("SELECT id FROM default.T")) == [(1,), (3,), (4,)]

    pcat.sql("CALL sys.delete_branch('default.T', 'empty_branch')")
    assert not os.path.exists(os.path.join(table_dir, "branch", "branch-empty_branch"))
    assert _rows(pcat.sql("SELECT branch_name FROM default.`T$branches`")) == [("branch1",)]


def test_branch_errors_leave_the_table_as_it_was(pcat, warehouse):
    pcat.sql("CREATE TABLE default.t (id bigint, v string)")
    pcat.sql("INSERT INTO default.t VALUES (1, 'a')")
    pcat.sql("CALL sys.create_tag('default.t', 'tag1')")
    pcat.sql("CALL sys.create_branch('default.t', 'b1', 'tag1')")
    before = sorted(os.path.relpath(os.path.join(r, f), warehouse) for r, _d, fs in os.walk(warehouse) for f in fs)
    with pytest.raises(SqlError, match="no branch 'nope'.*branches: b1"):
        pcat.sql("SELECT * FROM default.`t$branch_nope`")
    with pytest.raises(SqlError, match="already exists"):
        pcat.sql("CALL sys.create_branch('default.t', 'b1')")
    with pytest.raises(SqlError, match="all digits"):
        pcat.sql("CALL sys.create_branch('default.t', '123')")
    with pytest.raises(SqlError, match="no tag"):
        pcat.sql("CALL sys.create_branch('default.t', 'b2', 'missing_tag')")
    with pytest.raises(SqlError, match="has no branch nope"):
        pcat.sql("CALL sys.delete_branch('default.t', 'b1,nope')")
    with pytest.raises(SqlError, match="is a Paimon branch.*`t\\$branch_b1`"):
        pcat.sql("SELECT * FROM default.t VERSION AS OF 'b1'")
    with pytest.raises(SqlError, match="not its branch"):
        pcat.sql("CALL sys.fast_forward('default.t$branch_b1', 'b1')")
    pcat.sql("CALL sys.create_branch('default.t', 'nothing_yet')")
    with pytest.raises(SqlError, match="no snapshot"):
        pcat.sql("CALL sys.fast_forward('default.t', 'nothing_yet')")
    pcat.sql("CALL sys.delete_branch('default.t', 'nothing_yet')")
    after = sorted(os.path.relpath(os.path.join(r, f), warehouse) for r, _d, fs in os.walk(warehouse) for f in fs)
    assert after == before
    # expiring a branch's snapshots could delete files main reads: refused
    with pytest.raises(IcefloeError, match="main.s snapshots only"):
        pcat.load_table("default.t$branch_b1").expire_snapshots(retain_last=1)




def test_tag_of_a_branch_keeps_its_files_when_deleted_on_main(pcat):
    """A branch made from a tag shares the tag's files: deleting the tag on main (or expiring it)
    deletes the tag file only, and the branch still reads its rows."""
    t = pcat.create_table("default.t", "id bigint not null, v string")
    pcat.sql("INSERT INTO default.t VALUES (1, 'a')")
    pcat.sql("CALL sys.create_tag('default.t', 'tag1')")
    pcat.sql("CALL sys.create_branch('default.t', 'b1', 'tag1')")
    pcat.sql("INSERT OVERWRITE default.t VALUES (2, 'b')")
    t.expire_snapshots(retain_last=1, older_than=10 ** 13)       # snapshot 1 only kept alive by the tag
    assert [s.id for s in t.refresh().snapshots()] == [2]
    out = _rows(pcat.sql("CALL sys.expire_tags(table => 'default.t', older_than => '2999-01-01 00:00:00')"))
    assert out == [("tag1",)]
    assert t.refresh().tags() == {}
    assert _rows(pcat.sql("SELECT * FROM default.`t$branch_b1`")) == [(1, "a")]
    assert _rows(pcat.sql("CALL sys.expire_tags(table => 'default.t')")) == [("No expired tags.",)]


def test_buckets_table_compact_manifest_and_refused_procedures(pcat):
    pcat.sql("CREATE TABLE default.k (id bigint, dt string) PARTITIONED BY (dt) "
             "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2', 'write-only' = 'true')")
    for i in range(3):
        pcat.sql(f"INSERT INTO default.k VALUES ({i}, 'd1'), ({i + 10}, 'd2')")
    buckets = _rows(pcat.sql("SELECT partition, bucket, record_count, file_count FROM default.`k$buckets`"))
    files = _rows(pcat.sql("SELECT partition, bucket, record_count FROM default.`k$files`"))
    expected = {}
    for part, bucket, n in files:
        got = expected.setdefault((part, bucket), [0, 0])
        got[0] += n
        got[1] += 1
    assert buckets == sorted((p, b, n, c) for (p, b), (n, c) in expected.items())
    assert {p for p, *_ in buckets} == {"dt=d1", "dt=d2"}
    # SHOW PARTITIONS, as Paimon's Spark catalog answers it (Spark's `partition` column)
    assert _rows(pcat.sql("SHOW PARTITIONS default.k")) == [("dt=d1",), ("dt=d2",)]
    assert _rows(pcat.sql("SHOW PARTITIONS default.k PARTITION (dt = 'd2')")) == [("dt=d2",)]
    with pytest.raises(SqlError, match="not a partition key"):
        pcat.sql("SHOW PARTITIONS default.k PARTITION (id = 1)")
    t = pcat.load_table("default.k")
    assert len(t.manifest_files()) > 2
    assert _rows(pcat.sql("CALL sys.compact_manifest(`table` => 'default.k')")) == [(True,)]
    assert t.refresh().current_snapshot().commit_kind == "COMPACT"
    assert sum(1 for m in t.manifest_files() if m["list_kind"] != "delta") == 1
    assert _rows(pcat.sql("SELECT count(*) FROM default.k")) == [(6,)]
    snaps = len(t.refresh().snapshots())
    for call in ("CALL sys.alter_view_dialect('v', 'drop', 'spark')",):
        name = call.split("sys.")[1].split("(")[0]
        with pytest.raises(NotSupportedYetError, match=f"CALL sys.{name} \\("):
            pcat.sql(call)
    assert len(t.refresh().snapshots()) == snaps
