"""Paimon's system tables and commands about a table in SQL: ``ANALYZE TABLE`` with ``$statistics``
(Paimon's statistics file), ``$ro`` (read-optimized rows), ``$binlog``."""
import glob
import json
import os

import pytest

from icefloe.sql.errors import SqlError


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _stats_files(warehouse, table="t"):
    return sorted(glob.glob(os.path.join(warehouse, "db.db", table, "statistics", "stat-*")))


def _stats_of(warehouse, snapshot):
    with open(os.path.join(warehouse, "db.db", "t", "statistics", snapshot.statistics)) as f:
        return json.load(f)


def test_analyze_writes_paimon_statistics_file(pcat, warehouse):
    run = pcat.sql
    run("CREATE TABLE db.t (id int, name string, price double, d date, flag boolean) USING paimon")
    run("INSERT INTO db.t VALUES (1, 'ab', 1.5, DATE '1970-01-02', true), (2, 'abcd', 1.0E7, DATE '2024-01-01', "
        "false), (3, NULL, NULL, NULL, NULL)")
    t = pcat.load_table("db.t")
    written = t.current_snapshot()

    run("ANALYZE TABLE db.t COMPUTE STATISTICS")
    snap = t.refresh().current_snapshot()
    assert snap.id == written.id + 1 and snap.commit_kind == "ANALYZE"
    assert snap.base_manifest_list != written.base_manifest_list or snap.total_record_count == 3
    assert [os.path.basename(p) for p in _stats_files(warehouse)] == [snap.statistics]
    assert snap.statistics.startswith("stat-") and snap.statistics.endswith("-0")
    doc = _stats_of(warehouse, snap)
    assert doc["snapshotId"] == written.id and doc["schemaId"] == 0
    assert doc["mergedRecordCount"] == 3 and doc["colStats"] == {}
    data_bytes = sum(r["file_size_in_bytes"] for r in t.metadata_table("files").to_pylist())
    assert doc["mergedRecordSize"] == data_bytes
    assert _rows(run("SELECT id FROM db.t")) == [(1,), (2,), (3,)]

    run("ANALYZE TABLE db.t COMPUTE STATISTICS FOR COLUMNS id, name")
    doc = _stats_of(warehouse, t.refresh().current_snapshot())
    assert doc["snapshotId"] == written.id + 1
    assert doc["colStats"] == {
        "id": {"colId": 0, "distinctCount": 3, "min": "1", "max": "3", "nullCount": 0, "avgLen": 4, "maxLen": 4},
        "name": {"colId": 1, "distinctCount": 2, "nullCount": 1, "avgLen": 3, "maxLen": 4}}

    run("ANALYZE TABLE db.t COMPUTE STATISTICS FOR ALL COLUMNS")
    snap = t.refresh().current_snapshot()
    cols = _stats_of(warehouse, snap)["colStats"]
    assert set(cols) == {"id", "name", "price", "d", "flag"}
    assert (cols["price"]["min"], cols["price"]["max"], cols["price"]["nullCount"]) == ("1.5", "1.0E7", 1)
    assert (cols["d"]["min"], cols["d"]["max"], cols["d"]["avgLen"]) == ("1", "19723", 4)
    assert (cols["flag"]["min"], cols["flag"]["max"], cols["flag"]["maxLen"]) == ("false", "true", 1)

    # $statistics shows the latest snapshot's
    row = run("SELECT * FROM db.`t$statistics`").collect()
    assert [tuple(r)[:4] for r in row] == [(snap.id - 1, 0, 3, data_bytes)]
    assert json.loads(row[0]["colstat"])["id"]["max"] == "3"
    assert run("SELECT snapshot_id FROM db.t.statistics").collect()[0][0] == snap.id - 1


def test_statistics_inherited_until_the_schema_changes(pcat, warehouse):
    run = pcat.sql
    run("CREATE TABLE db.t (id int) USING paimon")
    assert run("SELECT * FROM db.`t$statistics`").count() == 0
    run("ANALYZE TABLE db.t COMPUTE STATISTICS")          # no snapshot: nothing to analyze
    assert pcat.load_table("db.t").current_snapshot() is None and _stats_files(warehouse) == []
    run("INSERT INTO db.t VALUES (1)")
    run("ANALYZE TABLE db.t COMPUTE STATISTICS FOR ALL COLUMNS")
    t = pcat.load_table("db.t")
    name = t.current_snapshot().statistics
    run("INSERT INTO db.t VALUES (2)")
    assert t.refresh().current_snapshot().statistics == name      # a later commit carries them on
    assert run("SELECT mergedRecordCount FROM db.`t$statistics`").collect()[0][0] == 1
    run("ALTER TABLE db.t ADD COLUMN v string")
    run("INSERT INTO db.t VALUES (3, 'x')")
    assert t.refresh().current_snapshot().statistics is None      # ... until the schema changes
    assert run("SELECT * FROM db.`t$statistics`").count() == 0
    # time travel reads the statistics of that snapshot
    assert run("SELECT mergedRecordCount FROM db.`t$statistics` VERSION AS OF 3").collect()[0][0] == 1


def test_analyze_refusals_leave_the_table_as_it_was(pcat, warehouse):
    run = pcat.sql
    run("CREATE TABLE db.t (id int, tags array<string>, dt string) USING paimon PARTITIONED BY (dt)")
    run("INSERT INTO db.t VALUES (1, array('a'), 'x')")
    t = pcat.load_table("db.t")
    for stmt, match in [("ANALYZE TABLE db.t COMPUTE STATISTICS NOSCAN", "NOSCAN"),
                        ("ANALYZE TABLE db.t PARTITION (dt = 'x') COMPUTE STATISTICS", "PARTITION"),
                        ("ANALYZE TABLE db.t COMPUTE STATISTICS FOR COLUMNS nope", "no column nope"),
                        ("ANALYZE TABLE db.t COMPUTE STATISTICS FOR COLUMNS tags", "cannot analyze column tags"),
                        ("ANALYZE TABLE db.t COMPUTE STATISTICS FOR ALL COLUMNS", "cannot analyze column tags")]:
        with pytest.raises(SqlError, match=match):
            run(stmt)
    assert len(t.refresh().snapshots()) == 1 and _stats_files(warehouse) == []


def test_read_optimized_reads_the_compacted_level_only(pcat):
    run = pcat.sql
    run("CREATE TABLE db.t (id int, v string) USING paimon TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    run("INSERT INTO db.t VALUES (1, 'a'), (2, 'b')")
    assert run("SELECT * FROM db.`t$ro`").count() == 0            # level 0 only: not compacted yet
    run("CALL sys.compact(table => 'db.t')")
    assert _rows(run("SELECT * FROM db.`t$ro`")) == [(1, "a"), (2, "b")]
    run("INSERT INTO db.t VALUES (1, 'new'), (3, 'c')")
    assert _rows(run("SELECT * FROM db.t")) == [(1, "new"), (2, "b"), (3, "c")]
    assert _rows(run("SELECT * FROM db.t.ro")) == [(1, "a"), (2, "b")]   # what the last compaction saw
    assert _rows(run("SELECT v FROM db.`t$ro` WHERE id = 2")) == [("b",)]
    # $binlog (batch): audit_log's rows, each column a one-element array
    binlog = sorted((r[0], tuple(r[1]), tuple(r[2])) for r in run("SELECT * FROM db.`t$binlog`").collect())
    audit = sorted((r[0], (r[1],), (r[2],)) for r in run("SELECT * FROM db.`t$audit_log`").collect())
    assert binlog == audit and len(binlog) == 3
    assert run("SELECT * FROM db.t.binlog").schema.simpleString() == \
        "struct<rowkind:string,id:array<int>,v:array<string>>"
    # an append table's read-optimized rows are its rows
    run("CREATE TABLE db.a (id int) USING paimon")
    run("INSERT INTO db.a VALUES (1), (2)")
    assert _rows(run("SELECT * FROM db.`a$ro`")) == [(1,), (2,)]


def test_expiry_deletes_statistics_only_expired_snapshots_name(pcat, warehouse):
    run = pcat.sql
    run("CREATE TABLE db.t (id int) USING paimon")
    run("INSERT INTO db.t VALUES (1)")
    run("ANALYZE TABLE db.t COMPUTE STATISTICS")             # snapshot 2 names stat A
    first = pcat.load_table("db.t").current_snapshot().statistics
    run("ANALYZE TABLE db.t COMPUTE STATISTICS")             # snapshot 3 names stat B
    run("INSERT INTO db.t VALUES (2)")                       # snapshot 4 inherits B
    t = pcat.load_table("db.t")
    second = t.current_snapshot().statistics
    assert second != first and len(_stats_files(warehouse)) == 2
    run("CALL sys.expire_snapshots(table => 'db.t', retain_max => 2, retain_min => 1)")
    assert [s.id for s in t.refresh().snapshots()] == [3, 4]
    assert [os.path.basename(p) for p in _stats_files(warehouse)] == [second]
    run("CALL sys.expire_snapshots(table => 'db.t', retain_max => 1, retain_min => 1)")
    assert [os.path.basename(p) for p in _stats_files(warehouse)] == [second]   # snapshot 4 still names it
    assert _rows(run("SELECT * FROM db.t")) == [(1,), (2,)]
