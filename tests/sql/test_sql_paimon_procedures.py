"""Paimon's Spark procedures (``CALL sys.*``) on Paimon tables, with Paimon's argument names and
units: times in epoch milliseconds, retention as Paimon durations."""
import os
import time

import pytest

from icefloe.sql.errors import SqlError


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _three_snapshots(pcat, name="db.t"):
    pcat.sql(f"CREATE TABLE {name} (id int, v string) USING paimon")
    for i in (1, 2, 3):
        pcat.sql(f"INSERT INTO {name} VALUES ({i}, 'v{i}')")
        time.sleep(0.01)
    return pcat.load_table(name)


def test_rollback_to_timestamp_reads_epoch_milliseconds(pcat, warehouse):
    t = _three_snapshots(pcat)
    at = t.snapshot(2).time_millis
    out = pcat.sql(f"CALL sys.rollback_to_timestamp(table => 'db.t', timestamp => {at + 5})").collect()
    assert [tuple(r) for r in out] == [(3, 2)]
    snapdir = os.path.join(warehouse, "db.db", "t", "snapshot")
    assert sorted(f for f in os.listdir(snapdir) if f.startswith("snapshot-")) == ["snapshot-1", "snapshot-2"]
    assert t.refresh().current_snapshot().id == 2
    assert _rows(pcat.sql("SELECT * FROM db.t")) == [(1, "v1"), (2, "v2")]
    # before the first snapshot: an error, nothing changed
    with pytest.raises(SqlError, match="no snapshot committed at or before"):
        pcat.sql(f"CALL sys.rollback_to_timestamp('db.t', {t.snapshot(1).time_millis - 1})")
    assert t.refresh().current_snapshot().id == 2


def test_rollback_by_version_snapshot_and_tag(pcat):
    t = _three_snapshots(pcat)
    t.create_tag("first", 1)
    assert [tuple(r) for r in pcat.sql("CALL sys.rollback(table => 'db.t', version => 2)").collect()] == [(3, 2)]
    assert _rows(pcat.sql("SELECT id FROM db.t")) == [(1,), (2,)]
    assert [tuple(r) for r in pcat.sql("CALL sys.rollback(table => 'db.t', version => 'first')").collect()] \
        == [(2, 1)]
    assert _rows(pcat.sql("SELECT id FROM db.t")) == [(1,)]
    assert [s.id for s in t.refresh().snapshots()] == [1]
    with pytest.raises(SqlError, match="exactly one of version, snapshot, tag"):
        pcat.sql("CALL sys.rollback(table => 'db.t', snapshot => 1, tag => 'first')")
    pcat.sql("INSERT INTO db.t VALUES (5, 'v5')")
    pcat.sql("CALL sys.rollback(table => 'db.t', snapshot => 1)")
    assert _rows(pcat.sql("SELECT id FROM db.t")) == [(1,)]


# --------------------------------------------------------------------------- dynamic options (SET spark.paimon.)
@pytest.fixture
def reset_paimon_conf(spark):
    yield
    for k in list(spark.conf.getAll):
        if k.startswith("spark.paimon."):
            spark.conf.unset(k)


def test_dynamic_scan_options_per_table_and_global(pcat, reset_paimon_conf):
    t = _three_snapshots(pcat)
    pcat.sql("CREATE TABLE db.u (id int) USING paimon")
    pcat.sql("INSERT INTO db.u VALUES (10)")
    pcat.sql("INSERT INTO db.u VALUES (20)")
    pcat.sql("SET spark.paimon.*.db.t.scan.snapshot-id=1")
    assert _rows(pcat.sql("SELECT id FROM db.t")) == [(1,)]
    assert _rows(pcat.sql("SELECT id FROM db.u")) == [(10,), (20,)]          # another table: latest
    pcat.sql("SET spark.paimon.scan.snapshot-id = 1")                          # global; t's own wins
    pcat.sql("SET spark.paimon.local.*.t.scan.snapshot-id=2")
    assert _rows(pcat.sql("SELECT id FROM db.t")) == [(1,), (2,)]
    assert _rows(pcat.sql("SELECT id FROM db.u")) == [(10,)]
    pcat.sql("RESET spark.paimon.scan.snapshot-id")
    pcat.sql("RESET spark.paimon.local.*.t.scan.snapshot-id")
    pcat.sql("RESET spark.paimon.*.db.t.scan.snapshot-id")
    assert _rows(pcat.sql("SELECT id FROM db.t")) == [(1,), (2,), (3,)]
    t.create_tag("two", 2)
    pcat.sql("SET spark.paimon.*.*.t.scan.tag-name=two")
    assert _rows(pcat.sql("SELECT id FROM db.t")) == [(1,), (2,)]
    pcat.sql("RESET spark.paimon.*.*.t.scan.tag-name")
    pcat.sql(f"SET spark.paimon.*.db.t.scan.timestamp-millis={t.snapshot(1).time_millis}")
    assert _rows(pcat.sql("SELECT id FROM db.t")) == [(1,)]
    assert _rows(pcat.sql("SELECT id FROM db.t VERSION AS OF 3")) == [(1,), (2,), (3,)]   # the query's own wins


def test_unknown_dynamic_option_is_an_error(pcat, spark, reset_paimon_conf):
    _three_snapshots(pcat)
    with pytest.raises(SqlError, match="'bucket'.*not honoured"):
        pcat.sql("SET spark.paimon.bucket=4")
    with pytest.raises(SqlError, match="'scan.snapshot-idd'"):
        pcat.sql("SET spark.paimon.*.db.t.scan.snapshot-idd=1")
    assert not any(k.startswith("spark.paimon.") for k in spark.conf.getAll)
    spark.conf.set("spark.paimon.record-level.expire-time", "1 d")            # set behind SQL's back
    with pytest.raises(SqlError, match="'record-level.expire-time'"):
        pcat.sql("SELECT * FROM db.t")


# --------------------------------------------------------------------------- comments
def _schema_file(warehouse, n, table="t"):
    import json
    return json.load(open(os.path.join(warehouse, "db.db", table, "schema", f"schema-{n}")))


def test_table_and_column_comments_go_into_the_schema_file(pcat, warehouse):
    pcat.sql("CREATE TABLE db.t (id int COMMENT 'the key', v string) USING paimon COMMENT 'first words' "
             "TBLPROPERTIES ('bucket' = '-1')")
    s0 = _schema_file(warehouse, 0)
    assert s0["comment"] == "first words" and "comment" not in s0["options"]
    assert s0["fields"][0]["description"] == "the key"
    pcat.sql("ALTER TABLE db.t SET TBLPROPERTIES ('comment' = 'second words')")
    s1 = _schema_file(warehouse, 1)
    assert s1["comment"] == "second words" and s1["options"] == {"bucket": "-1"}
    pcat.sql("ALTER TABLE db.t ALTER COLUMN v COMMENT 'a value'")
    assert _schema_file(warehouse, 2)["fields"][1]["description"] == "a value"
    desc = {r[0]: r[1] for r in pcat.sql("DESCRIBE TABLE EXTENDED db.t").collect()}
    assert desc["Comment"] == "second words"
    assert "COMMENT 'second words'" in pcat.sql("SHOW CREATE TABLE db.t").first()[0]
    pcat.sql("ALTER TABLE db.t UNSET TBLPROPERTIES ('comment')")
    s3 = _schema_file(warehouse, 3)
    assert s3.get("comment") is None and s3["options"] == {"bucket": "-1"}
    assert "COMMENT 'second" not in pcat.sql("SHOW CREATE TABLE db.t").first()[0]


# --------------------------------------------------------------------------- the default database
def test_default_database_and_a_bare_primary_key_table(pcat, warehouse, spark):
    assert os.path.isdir(os.path.join(warehouse, "default.db")) and "default" in pcat.list_namespaces()
    with pytest.raises(SqlError, match="names no database.*primary-key.*paimon.default.my_table"):
        pcat.sql("CREATE TABLE my_table (id int, v string) TBLPROPERTIES ('primary-key' = 'id')",
                 catalog_name="paimon")
    assert not spark.catalog.tableExists("my_table")
    run = lambda text: pcat.sql(text, catalog_name="paimon")        # noqa: E731
    run("USE paimon.default")
    run("CREATE TABLE my_table (id int, v string) TBLPROPERTIES ('primary-key' = 'id')")
    run("INSERT INTO my_table VALUES (1, 'a'), (2, 'b')")
    run("INSERT INTO my_table VALUES (1, 'c')")                      # an upsert of key 1
    assert _rows(run("SELECT * FROM my_table")) == [(1, "c"), (2, "b")]
    assert pcat.load_table("default.my_table").table_schema.primary_keys == ["id"]
    assert os.path.isfile(os.path.join(warehouse, "default.db", "my_table", "schema", "schema-0"))
    assert not spark.catalog.tableExists("my_table")


# --------------------------------------------------------------------------- tags
def _tag_file(warehouse, name):
    import json
    return json.load(open(os.path.join(warehouse, "db.db", "t", "tag", f"tag-{name}")))


def test_tag_procedures_with_paimon_arguments(pcat, warehouse):
    t = _three_snapshots(pcat)
    run = pcat.sql
    assert run("CALL sys.create_tag(table => 'db.t', tag => 'one', snapshot => 1, time_retained => '1 d')"
               ).first().result is True
    one = _tag_file(warehouse, "one")
    assert one["id"] == 1 and one["tagTimeRetained"] == 86400 and len(one["tagCreateTime"]) >= 5
    run("CALL sys.create_tag('db.t', 'latest')")                          # the latest snapshot, no retention
    latest = _tag_file(warehouse, "latest")
    assert latest["id"] == 3 and "tagTimeRetained" not in latest and "tagCreateTime" not in latest
    tags = run("SELECT tag_name, snapshot_id, time_retained FROM db.`t$tags` ORDER BY tag_name").collect()
    assert [tuple(r) for r in tags] == [("latest", 3, None), ("one", 1, "PT24H")]
    out = run(f"CALL sys.create_tag_from_timestamp(`table` => 'db.t', `tag` => 'from2', "
              f"`timestamp` => {t.snapshot(2).time_millis - 1})").collect()
    assert [tuple(r)[:3] for r in out] == [("from2", 2, t.snapshot(2).time_millis)]
    run("CALL sys.rename_tag(table => 'db.t', tag => 'from2', target_tag => 'two')")
    assert _tag_file(warehouse, "two")["id"] == 2 and sorted(t.tags()) == ["latest", "one", "two"]
    with pytest.raises(SqlError, match="has no tag nope; nothing was deleted"):
        run("CALL sys.delete_tag(table => 'db.t', tag => 'two,nope')")
    run("CALL sys.delete_tag(table => 'db.t', tag => 'two,latest')")
    assert os.listdir(os.path.join(warehouse, "db.db", "t", "tag")) == ["tag-one"]


def test_tag_ddl_of_paimon(pcat, warehouse):
    _three_snapshots(pcat)
    run = pcat.sql
    run("ALTER TABLE db.t CREATE TAG `TAG-1`")
    run("ALTER TABLE db.t CREATE TAG IF NOT EXISTS `TAG-1`")
    run("ALTER TABLE db.t CREATE TAG `TAG-2` AS OF VERSION 2 RETAIN 12 HOURS")
    assert _tag_file(warehouse, "TAG-2")["id"] == 2 and _tag_file(warehouse, "TAG-2")["tagTimeRetained"] == 43200
    run("ALTER TABLE db.t REPLACE TAG `TAG-2` AS OF VERSION 1 RETAIN 24 HOURS")
    assert (_tag_file(warehouse, "TAG-2")["id"], _tag_file(warehouse, "TAG-2")["tagTimeRetained"]) == (1, 86400)
    run("ALTER TABLE db.t CREATE OR REPLACE TAG `TAG-3` AS OF VERSION 2")
    assert [r.tag for r in run("SHOW TAGS db.t").collect()] == ["TAG-1", "TAG-2", "TAG-3"]
    run("ALTER TABLE db.t RENAME TAG `TAG-3` TO `TAG-4`")
    assert _rows(run("SELECT id FROM db.t VERSION AS OF 'TAG-4'")) == [(1,), (2,)]
    run("ALTER TABLE db.t DELETE TAG `TAG-1,TAG-4`")
    run("ALTER TABLE db.t DELETE TAG IF EXISTS `TAG-1`")
    assert [r.tag for r in run("SHOW TAGS db.t").collect()] == ["TAG-2"]
    with pytest.raises(SqlError, match="has no tag TAG-1"):
        run("ALTER TABLE db.t DELETE TAG `TAG-1`")


# --------------------------------------------------------------------------- REPLACE TABLE
def test_replace_table_truncates_and_keeps_the_history(pcat, warehouse):
    run = pcat.sql
    run("CREATE TABLE db.t (user_id bigint, item_id bigint, behavior string) "
        "TBLPROPERTIES ('primary-key' = 'user_id', 'bucket' = '2') USING paimon")
    run("INSERT INTO db.t VALUES (1, 10, 'pv')")
    run("REPLACE TABLE db.t (user_id bigint, item_id bigint, category string) USING paimon "
        "TBLPROPERTIES ('primary-key' = 'user_id', 'bucket' = '4')")
    t = pcat.load_table("db.t")
    assert [s.commit_kind for s in t.snapshots()] == ["APPEND", "OVERWRITE"]
    s1 = _schema_file(warehouse, 1)
    assert [f["name"] for f in s1["fields"]] == ["user_id", "item_id", "category"]
    assert s1["options"]["bucket"] == "4" and s1["primaryKeys"] == ["user_id"]
    assert _rows(run("SELECT * FROM db.t")) == []
    assert _rows(run("SELECT * FROM db.t VERSION AS OF 1")) == [(1, 10, "pv")]
    run("CREATE OR REPLACE TABLE db.t TBLPROPERTIES ('primary-key' = 'user_id', 'bucket' = '4') USING paimon "
        "AS SELECT user_id, item_id, behavior FROM db.t VERSION AS OF 1")
    assert _rows(run("SELECT * FROM db.t")) == [(1, 10, "pv")]
    assert [f["name"] for f in _schema_file(warehouse, 2)["fields"]] == ["user_id", "item_id", "behavior"]
    assert _rows(run("SELECT * FROM db.t VERSION AS OF 1")) == [(1, 10, "pv")]


# --------------------------------------------------------------------------- partitions
def test_drop_and_truncate_partitions(pcat):
    run = pcat.sql
    run("CREATE TABLE db.p (id int, dt string, hh int) USING paimon PARTITIONED BY (dt, hh)")
    run("INSERT INTO db.p VALUES (1, 'a', 1), (2, 'a', 2), (3, 'b', 1), (4, 'c', 1)")
    run("ALTER TABLE db.p DROP PARTITION (dt = 'a', hh = 2)")
    t = pcat.load_table("db.p")
    assert t.current_snapshot().commit_kind == "OVERWRITE" and len(t.snapshots()) == 2
    assert _rows(run("SELECT id FROM db.p")) == [(1,), (3,), (4,)]
    with pytest.raises(SqlError, match="no partition"):
        run("ALTER TABLE db.p DROP PARTITION (dt = 'zz')")
    assert len(t.refresh().snapshots()) == 2                           # nothing changed
    run("ALTER TABLE db.p DROP IF EXISTS PARTITION (dt = 'zz'), PARTITION (dt = 'b')")
    assert _rows(run("SELECT id FROM db.p")) == [(1,), (4,)]
    run("TRUNCATE TABLE db.p PARTITION (dt = 'c')")
    assert _rows(run("SELECT id FROM db.p")) == [(1,)]
    assert _rows(run("SELECT id FROM db.p VERSION AS OF 1")) == [(1,), (2,), (3,), (4,)]


# --------------------------------------------------------------------------- CREATE TABLE LIKE
def test_create_table_like_copies_the_definition(pcat, warehouse):
    run = pcat.sql
    run("CREATE TABLE db.src (id int, name string, pt string) USING paimon COMMENT 'source comment' "
        "PARTITIONED BY (pt) TBLPROPERTIES ('primary-key' = 'id,pt', 'bucket' = '5')")
    run("INSERT INTO db.src VALUES (1, 'a', 'x')")
    run("CREATE TABLE db.tgt LIKE db.src")
    s0 = _schema_file(warehouse, 0, "tgt")
    src0 = _schema_file(warehouse, 0, "src")
    assert [(f["name"], f["type"]) for f in s0["fields"]] == [(f["name"], f["type"]) for f in src0["fields"]]
    assert (s0["partitionKeys"], s0["primaryKeys"], s0["options"], s0["comment"]) == \
        (["pt"], ["id", "pt"], {"bucket": "5"}, "source comment")
    assert _rows(run("SELECT * FROM db.tgt")) == []                     # the definition, not the rows
    run("CREATE TABLE IF NOT EXISTS db.tgt LIKE db.src")
    run("CREATE TABLE db.tgt2 LIKE db.src TBLPROPERTIES ('bucket' = '2')")
    assert _schema_file(warehouse, 0, "tgt2")["options"] == {"bucket": "2"}
    run("INSERT INTO db.tgt VALUES (1, 'a', 'x'), (1, 'b', 'x')")
    assert _rows(run("SELECT * FROM db.tgt")) == [(1, "b", "x")]          # a primary-key table: deduplicated


def test_expire_partitions_by_their_values(pcat):
    run = pcat.sql
    run("CREATE TABLE db.e (id int, dt string) USING paimon PARTITIONED BY (dt)")
    run("INSERT INTO db.e VALUES (1, '2020-01-01'), (2, '2020-01-02'), (3, '2999-01-01')")
    out = run("CALL sys.expire_partitions(table => 'db.e', expiration_time => '1 d', "
              "timestamp_formatter => 'yyyy-MM-dd', timestamp_pattern => '$dt', max_expires => 1)").collect()
    assert [r.expired_partitions for r in out] == ["dt=2020-01-01"]
    assert _rows(run("SELECT id FROM db.e")) == [(2,), (3,)]
    out = run("CALL sys.expire_partitions(table => 'db.e', expiration_time => '1 d', "
              "timestamp_formatter => 'yyyy-MM-dd')").collect()
    assert [r.expired_partitions for r in out] == ["dt=2020-01-02"]
    assert run("CALL sys.expire_partitions(table => 'db.e', expiration_time => '1 d')").first()[0] == \
        "No expired partitions."
    assert _rows(run("SELECT id FROM db.e")) == [(3,)]
    with pytest.raises(SqlError, match="'update-time' is not supported"):
        run("CALL sys.expire_partitions(table => 'db.e', expiration_time => '1 d', expire_strategy => 'update-time')")


def test_mark_partition_done_writes_success_files(pcat, warehouse):
    import json
    run = pcat.sql
    run("CREATE TABLE db.m (id int, day string, hh int) USING paimon PARTITIONED BY (day, hh)")
    run("INSERT INTO db.m VALUES (1, '2024-07-01', 1)")
    assert run("CALL sys.mark_partition_done(table => 'db.m', "
               "partitions => 'day=2024-07-01,hh=1;day=2024-07-02,hh=3')").first().result is True
    for part in ("day=2024-07-01/hh=1", "day=2024-07-02/hh=3"):
        doc = json.load(open(os.path.join(warehouse, "db.db", "m", part, "_SUCCESS")))
        assert doc["creationTime"] <= doc["modificationTime"]
    with pytest.raises(SqlError, match="must give each partition key"):
        run("CALL sys.mark_partition_done(table => 'db.m', partitions => 'day=2024-07-01')")
    assert _rows(run("SELECT * FROM db.m")) == [(1, "2024-07-01", 1)]       # no snapshot, no rows changed
    t = pcat.load_table("db.m")
    assert len(t.snapshots()) == 1
    assert t.remove_orphan_files(older_than=time.time() * 1000 + 60_000, dry_run=True) == []   # markers stay
