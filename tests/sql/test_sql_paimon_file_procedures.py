"""Paimon's procedures that expire or clean a table's files (``CALL sys.expire_snapshots`` with
Paimon's arguments, ``expire_changelogs``, ``purge_files``, ``remove_unexisting_files``): their
effect on the table's files and rows, and pypaimon reading the result."""
import os

import pytest

from icefloe.sql.errors import SqlError


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _files(warehouse, sub, prefix=""):
    d = os.path.join(warehouse, "db.db", "t", sub)
    return sorted(f for f in os.listdir(d) if f.startswith(prefix)) if os.path.isdir(d) else []


def _pypaimon_rows(warehouse, name="db.t"):
    from tools.pypaimon_env import remote_module

    t = remote_module("pypaimon").CatalogFactory.create({"warehouse": warehouse}).get_table(name)
    rb = t.new_read_builder()
    return sorted(tuple(r.values()) for r in rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist())


def _four_snapshots(run):
    run("CREATE TABLE db.t (id int) USING paimon")
    for i in range(1, 5):
        run(f"INSERT INTO db.t VALUES ({i})")


def test_expire_snapshots_with_paimon_arguments(pcat, warehouse):
    run = pcat.sql
    _four_snapshots(run)
    with pytest.raises(SqlError, match=r"retain_max \(2\) must not be less than retain_min \(3\)"):
        run("CALL sys.expire_snapshots(table => 'db.t', retain_max => 2, retain_min => 3)")
    with pytest.raises(SqlError, match="options snapshot.bogus are not honoured"):
        run("CALL sys.expire_snapshots(table => 'db.t', retain_max => 2, retain_min => 1, "
            "options => 'snapshot.bogus=1')")
    assert _files(warehouse, "snapshot", "snapshot-") == ["snapshot-1", "snapshot-2", "snapshot-3", "snapshot-4"]
    # snapshot.expire.limit (an option of this call) caps one run at one snapshot
    out = run("CALL sys.expire_snapshots(table => 'db.t', retain_max => 2, retain_min => 1, "
              "options => 'snapshot.expire.limit=1')").collect()
    assert [tuple(r) for r in out] == [(1,)]
    assert _files(warehouse, "snapshot", "snapshot-") == ["snapshot-2", "snapshot-3", "snapshot-4"]
    out = run("CALL sys.expire_snapshots(table => 'db.t', retain_max => 2, retain_min => 1)").collect()
    assert [tuple(r) for r in out] == [(1,)] and out[0].asDict() == {"deleted_snapshots_count": 1}
    assert _files(warehouse, "snapshot", "snapshot-") == ["snapshot-3", "snapshot-4"]
    # older_than: a time; the newest retain_min stay
    out = run("CALL sys.expire_snapshots(table => 'db.t', retain_min => 1, older_than => '2999-01-01 00:00:00')")
    assert [tuple(r) for r in out.collect()] == [(1,)]
    assert _files(warehouse, "snapshot", "snapshot-") == ["snapshot-4"]
    assert _rows(run("SELECT * FROM db.t")) == [(1,), (2,), (3,), (4,)]
    # Iceberg's arguments still take the shared form
    run("INSERT INTO db.t VALUES (5)")
    run("CALL sys.expire_snapshots(table => 'db.t', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)")
    assert _files(warehouse, "snapshot", "snapshot-") == ["snapshot-5"]
    assert _pypaimon_rows(warehouse) == [(1,), (2,), (3,), (4,), (5,)]


def test_remove_unexisting_files(pcat, warehouse):
    run = pcat.sql
    run("CREATE TABLE db.t (id int) USING paimon")
    run("INSERT INTO db.t VALUES (1)")
    run("INSERT INTO db.t VALUES (2)")
    t = pcat.load_table("db.t")
    lost = [r["file_path"] for r in t.metadata_table("files").to_pylist()
            if _rows(pcat.spark.read.parquet(r["file_path"])) == [(2,)]][0]
    assert run("CALL sys.remove_unexisting_files(table => 'db.t', dry_run => true)").count() == 0
    os.remove(lost.replace("file:", ""))
    out = run("CALL sys.remove_unexisting_files(table => 'db.t', dry_run => true)").collect()
    assert [r.fileName.replace("file:", "") for r in out] == [lost.replace("file:", "")]
    assert t.refresh().current_snapshot().id == 2                  # dry run: nothing committed
    out = run("CALL sys.remove_unexisting_files(table => 'db.t', parallelism => 2)").collect()
    assert len(out) == 1
    snap = t.refresh().current_snapshot()
    assert (snap.id, snap.commit_kind, snap.total_record_count) == (3, "APPEND", 1)
    assert _rows(run("SELECT * FROM db.t")) == [(1,)]
    assert _pypaimon_rows(warehouse) == [(1,)]
    with pytest.raises(SqlError, match="'dry_run' must be true or false"):
        run("CALL sys.remove_unexisting_files(table => 'db.t', dry_run => 'yes')")


def test_purge_files_empties_the_table_and_its_history(pcat, warehouse):
    run = pcat.sql
    _four_snapshots(run)
    run("CALL sys.create_tag(table => 'db.t', tag => 'v1', snapshot => 1)")
    run("CALL sys.create_branch(table => 'db.t', branch => 'b')")
    consumer = os.path.join(warehouse, "db.db", "t", "consumer")
    os.makedirs(consumer)
    with open(os.path.join(consumer, "consumer-job1"), "w") as f:
        f.write('{"nextSnapshot":2}')
    assert [tuple(r) for r in run("CALL sys.purge_files(table => 'db.t')").collect()] == [("Success",)]
    assert run("SELECT * FROM db.t").count() == 0
    assert _files(warehouse, "snapshot", "snapshot-") == ["snapshot-5"]
    t = pcat.load_table("db.t")
    assert t.current_snapshot().commit_kind == "OVERWRITE"
    assert t.tags() == {} and t.branches() == [] and os.listdir(consumer) == []
    data = [f for _, _, fs in os.walk(os.path.join(warehouse, "db.db", "t")) for f in fs if f.endswith(".parquet")]
    assert data == []
    assert _pypaimon_rows(warehouse) == []
    run("INSERT INTO db.t VALUES (9)")
    assert _rows(run("SELECT * FROM db.t")) == [(9,)]


def test_expire_changelogs(pcat, warehouse):
    run = pcat.sql
    run("CREATE TABLE db.t (id int, v string) USING paimon TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
        "'changelog-producer' = 'input', 'snapshot.num-retained.min' = '1', 'snapshot.num-retained.max' = '1', "
        "'changelog.num-retained.max' = '10')")
    for i in range(1, 5):
        run(f"INSERT INTO db.t VALUES ({i}, 'v{i}')")
    assert _files(warehouse, "changelog", "changelog-") == ["changelog-1", "changelog-2", "changelog-3"]
    out = run("CALL sys.expire_changelogs(table => 'db.t', retain_max => 2, retain_min => 1)").collect()
    assert [tuple(r) for r in out] == [("2",)]
    assert _files(warehouse, "changelog", "changelog-") == ["changelog-3"]
    out = run("CALL sys.expire_changelogs(table => 'db.t', delete_all => true)").collect()
    assert [tuple(r) for r in out] == [("Delete all separated changelogs success.",)]
    assert _files(warehouse, "changelog", "changelog-") == []
    assert _rows(run("SELECT * FROM db.t")) == [(1, "v1"), (2, "v2"), (3, "v3"), (4, "v4")]


def test_consumers_files_procedures_and_expiry(pcat, warehouse):
    run = pcat.sql
    _four_snapshots(run)
    assert run("SELECT * FROM db.`t$consumers`").count() == 0
    assert [tuple(r) for r in run("CALL sys.reset_consumer(table => 'db.t', consumerId => 'job1', "
                                  "nextSnapshotId => 2)").collect()] == [(True,)]
    run("CALL sys.reset_consumer(table => 'db.t', consumerId => 'job2', nextSnapshotId => 3)")
    run("CALL sys.reset_consumer(table => 'db.t', consumerId => 'other', nextSnapshotId => 4)")
    path = os.path.join(warehouse, "db.db", "t", "consumer", "consumer-job1")
    with open(path) as f:
        assert f.read() == '{\n  "nextSnapshot" : 2\n}'
    assert _rows(run("SELECT * FROM db.t.consumers")) == [("job1", 2), ("job2", 3), ("other", 4)]
    with pytest.raises(Exception, match="snapshot 9"):
        run("CALL sys.reset_consumer(table => 'db.t', consumerId => 'job1', nextSnapshotId => 9)")
    # expiry keeps every snapshot from the smallest next snapshot of the consumers on
    run("CALL sys.expire_snapshots(table => 'db.t', retain_max => 1, retain_min => 1)")
    assert _files(warehouse, "snapshot", "snapshot-") == ["snapshot-2", "snapshot-3", "snapshot-4"]
    # clear_consumers: regular expressions, whole ids
    run("CALL sys.clear_consumers(table => 'db.t', includingConsumers => 'job.*', excludingConsumers => 'job2')")
    assert _rows(run("SELECT consumer_id FROM db.`t$consumers`")) == [("job2",), ("other",)]
    run("CALL sys.reset_consumer(table => 'db.t', consumerId => 'job2')")     # no snapshot: deleted
    assert _rows(run("SELECT consumer_id FROM db.`t$consumers`")) == [("other",)]
    run("CALL sys.expire_snapshots(table => 'db.t', retain_max => 1, retain_min => 1)")
    assert _files(warehouse, "snapshot", "snapshot-") == ["snapshot-4"]
    run("CALL sys.clear_consumers(table => 'db.t')")
    assert run("SELECT * FROM db.`t$consumers`").count() == 0
    # consumer.expiration-time: a consumer not renewed for that long is dropped at the next commit
    run("CALL sys.reset_consumer(table => 'db.t', consumerId => 'stale', nextSnapshotId => 4)")
    old = os.path.join(warehouse, "db.db", "t", "consumer", "consumer-stale")
    os.utime(old, (1, 1))
    run("ALTER TABLE db.t SET TBLPROPERTIES ('consumer.expiration-time' = '1 h')")
    run("INSERT INTO db.t VALUES (5)")
    assert not os.path.exists(old)


def test_rollback_to_watermark(pcat):
    run = pcat.sql
    _four_snapshots(run)
    with pytest.raises(SqlError, match="no snapshot of db.t has a watermark at or before 1000"):
        run("CALL sys.rollback_to_watermark(table => 'db.t', watermark => 1000)")
    assert pcat.load_table("db.t").current_snapshot().id == 4
