"""``cat.sql`` on a Paimon warehouse: DDL, DML, time travel, system tables; what Paimon cannot do
raises NotSupportedYetError and changes nothing."""
import json
import os

import pyarrow.parquet as pq
import pytest

from icefloe.sql.errors import NotSupportedYetError, SqlError


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_paimon_ddl_dml_and_time_travel(pcat, warehouse):
    run = pcat.sql
    run("CREATE TABLE local.db.ev (id bigint not null, name string, amount double, dt string) USING paimon "
        "PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id')")
    run("CREATE TABLE IF NOT EXISTS db.ev (x int) USING paimon")                 # no-op
    t = pcat.load_table("db.ev")
    assert t.partition_keys == ["dt"] and t.options["bucket"] == "2"
    assert os.path.isfile(os.path.join(warehouse, "db.db", "ev", "schema", "schema-0"))

    run("INSERT INTO db.ev VALUES (1, 'ann', 1.5, '2024-01-01'), (2, 'bob', 2, '2024-01-02')")
    run("INSERT INTO db.ev PARTITION (dt = '2024-01-01') SELECT 3, 'cy', 3.0")       # static partition value
    run("INSERT INTO db.ev BY NAME SELECT '2024-01-03' AS dt, 4 AS id")             # by name, nulls for the rest
    assert _rows(run("SELECT id, name, amount, dt FROM local.db.ev")) == [
        (1, "ann", 1.5, "2024-01-01"), (2, "bob", 2.0, "2024-01-02"), (3, "cy", 3.0, "2024-01-01"),
        (4, None, None, "2024-01-03")]
    assert [s.id for s in t.snapshots()] == [1, 2, 3]

    # joins, aggregates, filters on partition and data columns
    assert _rows(run("SELECT dt, count(*) AS n FROM db.ev WHERE amount > 1 GROUP BY dt")) == [
        ("2024-01-01", 2), ("2024-01-02", 1)]
    run("CREATE TABLE db.names USING paimon AS SELECT id, upper(name) AS shout FROM db.ev WHERE name IS NOT NULL")
    assert _rows(run("SELECT e.id, n.shout FROM db.ev e JOIN db.names n ON e.id = n.id")) == [
        (1, "ANN"), (2, "BOB"), (3, "CY")]

    # time travel by snapshot id (VERSION AS OF, FOR SYSTEM_VERSION AS OF) and by time
    assert _rows(run("SELECT id FROM db.ev VERSION AS OF 1")) == [(1,), (2,)]
    assert _rows(run("SELECT id FROM db.ev FOR SYSTEM_VERSION AS OF 2")) == [(1,), (2,), (3,)]
    assert run("SELECT count(*) AS n FROM db.ev TIMESTAMP AS OF current_timestamp()").first().n == 4
    with pytest.raises(SqlError, match="snapshot"):
        run("SELECT * FROM db.ev VERSION AS OF 99")

    # INSERT OVERWRITE of the whole table: one OVERWRITE snapshot
    run("INSERT OVERWRITE db.names SELECT 9, 'NINE'")
    assert _rows(run("SELECT * FROM db.names")) == [(9, "NINE")]
    assert pcat.load_table("db.names").current_snapshot().commit_kind == "OVERWRITE"

    # DESCRIBE, SHOW TABLES, DROP
    desc = [tuple(r) for r in run("DESCRIBE TABLE EXTENDED db.ev").collect()]
    assert desc[:4] == [("id", "bigint not null", ""), ("name", "string", ""), ("amount", "double", ""),
                        ("dt", "string", "")]
    assert ("# Partitioning", "", "") in desc and ("Part 0", "dt", "") in desc
    info = {r[0]: r[1] for r in desc}
    assert info["Provider"] == "paimon" and info["Current Snapshot"] == "3"
    assert [(r.namespace, r.tableName) for r in run("SHOW TABLES IN db").collect()] == [("db", "ev"), ("db", "names")]
    run("DROP TABLE db.names")
    assert not pcat.table_exists("db.names")
    assert [r.tableName for r in run("SHOW TABLES").collect()] == ["ev"]


def test_paimon_system_tables(pcat):
    run = pcat.sql
    run("CREATE TABLE db.t (id bigint, name string, p string) USING paimon PARTITIONED BY (p)")
    run("INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'y')")
    run("INSERT INTO db.t VALUES (3, 'c', 'x')")
    t = pcat.load_table("db.t")

    snaps = run("SELECT snapshot_id, schema_id, commit_kind, total_record_count, delta_record_count, "
                "commit_user FROM db.t.snapshots ORDER BY snapshot_id").collect()
    assert [(r.snapshot_id, r.schema_id, r.commit_kind, r.total_record_count, r.delta_record_count)
            for r in snaps] == [(1, 0, "APPEND", 2, 2), (2, 0, "APPEND", 3, 1)]
    assert snaps[0].commit_user == t.snapshot(1).commit_user
    # Paimon's own spelling, in backquotes
    assert run("SELECT count(*) AS n FROM db.`t$snapshots`").first().n == 2
    assert run("SELECT count(*) AS n FROM local.db.`t$snapshots`").first().n == 2

    files = run("SELECT * FROM db.t.files").collect()
    planned = {f.file_path for f in t.plan_files()}
    assert {r.file_path for r in files} == planned and len(files) == 3
    for r in files:
        assert os.path.getsize(r.file_path) == r.file_size_in_bytes
        assert pq.ParquetFile(r.file_path).metadata.num_rows == r.record_count
        assert r.file_format == "parquet" and r.bucket == 0 and r.level == 0
    assert sorted((r.partition, r.record_count) for r in files) == [("p=x", 1), ("p=x", 1), ("p=y", 1)]
    stats = {r.min_value_stats for r in files}
    assert "{id=1, name=a, p=x}" in stats
    assert run("SELECT count(*) AS n FROM db.t.files VERSION AS OF 1").first().n == 2

    parts = [tuple(r) for r in run("SELECT partition, record_count, file_count FROM db.`t$partitions` "
                                   "ORDER BY partition").collect()]
    assert parts == [("p=x", 2, 2), ("p=y", 1, 1)]
    manifests = run("SELECT * FROM db.t.manifests").collect()
    assert sum(r.num_added_files for r in manifests) == 3 and all(r.schema_id == 0 for r in manifests)
    schemas = run("SELECT * FROM db.t.schemas").collect()
    assert len(schemas) == 1 and json.loads(schemas[0].partition_keys) == ["p"]
    assert [f["name"] for f in json.loads(schemas[0].fields)] == ["id", "name", "p"]
    run("CREATE TABLE db.o (a int) USING paimon TBLPROPERTIES ('snapshot.num-retained.max' = '5')")
    assert ("snapshot.num-retained.max", "5") in [tuple(r) for r in run("SELECT * FROM db.o.options").collect()]
    run("ALTER TABLE db.o SET TBLPROPERTIES ('snapshot.num-retained.max' = '7', 'write-only' = 'true')")
    run("ALTER TABLE db.o UNSET TBLPROPERTIES ('write-only')")
    opts = dict(tuple(r) for r in run("SELECT * FROM db.o.options").collect())
    assert opts["snapshot.num-retained.max"] == "7" and "write-only" not in opts
    assert len(run("SELECT * FROM db.o.schemas").collect()) == 3    # one schema file per statement
    with pytest.raises(SqlError, match="Cannot change bucket when it is -1"):     # Paimon's rule
        run("ALTER TABLE db.o SET TBLPROPERTIES ('bucket' = '4')")
    # DESCRIBE of a system table
    assert [r.col_name for r in run("DESCRIBE db.t.partitions").collect()][:2] == ["partition", "record_count"]

    # Iceberg-only metadata tables, and time travel on table-level ones
    with pytest.raises(NotSupportedYetError, match="metadata table refs for paimon tables"):
        run("SELECT * FROM db.t.refs")
    with pytest.raises(SqlError, match="takes no time travel"):
        run("SELECT * FROM db.t.snapshots VERSION AS OF 1")
    with pytest.raises(SqlError, match="backquotes"):
        run("SELECT * FROM db.t$files")


def test_what_paimon_cannot_do_is_refused(pcat):
    run = pcat.sql
    run("CREATE TABLE db.r (id bigint, p string) USING paimon PARTITIONED BY (p)")
    run("INSERT INTO db.r VALUES (1, 'x'), (2, 'y')")
    t = pcat.load_table("db.r")

    def unchanged():
        assert [s.id for s in pcat.load_table("db.r").snapshots()] == [1]
        assert _rows(run("SELECT * FROM db.r")) == [(1, "x"), (2, "y")]

    cases = [
        ("ALTER TABLE db.r ADD PARTITION FIELD id", "PARTITION FIELD"),
        ("ALTER TABLE db.r CREATE BRANCH b", "CREATE BRANCH"),
    ]
    for statement, capability in cases:
        with pytest.raises(NotSupportedYetError, match=capability) as ei:
            run(statement)
        assert ei.value.line == 1, statement
        unchanged()
    # Paimon's REPLACE TABLE keeps the partition keys (as in Paimon)
    with pytest.raises(SqlError, match="cannot change the partition keys"):
        run("CREATE OR REPLACE TABLE db.r (id bigint) USING paimon")
    unchanged()

    # a USING clause of the other format is an error, not a silent Iceberg/Paimon mix
    with pytest.raises(SqlError, match="this catalog holds paimon tables"):
        run("CREATE TABLE db.ice (a int) USING iceberg")
    assert t.snapshots()[0].id == 1


def test_paimon_alter_table_evolves_the_schema(pcat, warehouse):
    """ALTER TABLE on a Paimon table: one ``schema-N`` file per statement, old files read by field id."""
    run = pcat.sql
    run("CREATE TABLE db.ev (id bigint not null, v int, name string, p string) USING paimon PARTITIONED BY (p)")
    run("INSERT INTO db.ev VALUES (1, 10, 'a', 'x'), (2, 20, 'b', 'y')")
    run("ALTER TABLE db.ev ADD COLUMNS (score double COMMENT 'points' AFTER id, tiny tinyint)")
    run("ALTER TABLE db.ev RENAME COLUMN name TO label")
    run("ALTER TABLE db.ev ALTER COLUMN v TYPE bigint")
    run("ALTER TABLE db.ev ALTER COLUMN tiny TYPE smallint")
    run("ALTER TABLE db.ev ALTER COLUMN label COMMENT 'the label'")
    run("ALTER TABLE db.ev ALTER COLUMN label FIRST")
    run("ALTER TABLE db.ev ALTER COLUMN id DROP NOT NULL")
    t = pcat.load_table("db.ev")
    assert t.table_schema.field_names == ["label", "id", "score", "v", "p", "tiny"]
    assert [f.type_string for f in t.table_schema.fields] == ["STRING", "BIGINT", "DOUBLE", "BIGINT", "STRING",
                                                            "SMALLINT"]
    import pyarrow as pa

    t.append(pa.table({"label": ["c"], "id": pa.array([3], pa.int64()), "score": [1.5], "v": [30000000000],
                       "p": ["x"], "tiny": pa.array([7], pa.int16())}))
    run("ALTER TABLE db.ev DROP COLUMN score")
    run("ALTER TABLE db.ev ADD COLUMNS (score double)")       # a new column: the old scores stay gone
    schema_dir = os.path.join(warehouse, "db.db", "ev", "schema")
    assert sorted(os.listdir(schema_dir)) == [f"schema-{i}" for i in range(10)]
    assert _rows(run("SELECT label, id, v, p, tiny, score FROM db.ev")) == [
        ("a", 1, 10, "x", None, None), ("b", 2, 20, "y", None, None), ("c", 3, 30000000000, "x", 7, None)]
    assert [c for c in run("SELECT * FROM db.ev").columns] == ["label", "id", "v", "p", "tiny", "score"]
    # time travel reads each snapshot with its own schema
    old = run("SELECT * FROM db.ev VERSION AS OF 1")
    assert old.columns == ["id", "v", "name", "p"] and _rows(old) == [(1, 10, "a", "x"), (2, 20, "b", "y")]
    assert _rows(run("SELECT label, score FROM db.ev VERSION AS OF 2")) == [("a", None), ("b", None), ("c", 1.5)]
    desc = {r[0]: (r[1], r[2]) for r in run("DESCRIBE TABLE db.ev").collect()}
    assert desc["label"] == ("string", "the label") and desc["score"] == ("double", "")
    snaps = run("SELECT snapshot_id, schema_id FROM db.ev.snapshots ORDER BY snapshot_id").collect()
    assert [(r.snapshot_id, r.schema_id) for r in snaps] == [(1, 0), (2, 7)]

    # refused changes name the reason and write no schema file
    for statement, message in [
        ("ALTER TABLE db.ev ALTER COLUMN v TYPE int", "cannot change column 'v' from BIGINT to INT"),
        ("ALTER TABLE db.ev ALTER COLUMN label TYPE int", "from STRING to INT"),
        ("ALTER TABLE db.ev RENAME COLUMN p TO q", "cannot rename partition column 'p'"),
        ("ALTER TABLE db.ev DROP COLUMN p", "cannot drop partition column 'p'"),
        ("ALTER TABLE db.ev ADD COLUMNS (req int NOT NULL)", "cannot be NOT NULL"),
        ("ALTER TABLE db.ev ALTER COLUMN v SET NOT NULL", "cannot make column 'v' NOT NULL"),
        ("ALTER TABLE db.ev DROP COLUMN nope", "unknown column nope"),
    ]:
        with pytest.raises(SqlError, match=message):
            run(statement)
        assert len(os.listdir(schema_dir)) == 10, statement
    assert _rows(run("SELECT id FROM db.ev")) == [(1,), (2,), (3,)]


def test_paimon_tags_in_sql(pcat, warehouse):
    run = pcat.sql
    run("CREATE TABLE db.tg (id bigint, p string) USING paimon PARTITIONED BY (p) "
        "TBLPROPERTIES ('write-only' = 'true')")
    run("INSERT INTO db.tg VALUES (1, 'x'), (2, 'y')")
    run("INSERT INTO db.tg VALUES (3, 'x')")
    run("ALTER TABLE db.tg CREATE TAG first AS OF VERSION 1")
    run("ALTER TABLE db.tg CREATE TAG IF NOT EXISTS first")                      # no-op
    with pytest.raises(SqlError, match="tag first already exists"):
        run("ALTER TABLE db.tg CREATE TAG first")
    with pytest.raises(SqlError, match="unknown argument 'snapshot_id' of create_tag; arguments are table, tag, "
                                       "snapshot, time_retained"):    # Paimon's procedure, Paimon's names
        run("CALL local.system.create_tag(table => 'db.tg', tag => 'second', snapshot_id => 2)")
    created = run("CALL local.system.create_tag(table => 'db.tg', tag => 'second', snapshot => 2)").collect()
    assert [tuple(r) for r in created] == [(True,)]
    tag_dir = os.path.join(warehouse, "db.db", "tg", "tag")
    assert sorted(os.listdir(tag_dir)) == ["tag-first", "tag-second"]
    run("INSERT OVERWRITE db.tg VALUES (9, 'z')")
    t = pcat.load_table("db.tg")
    assert t.expire_snapshots(older_than=t.current_snapshot().time_millis + 1, retain_last=1).expired_snapshot_ids == [1, 2]

    # time travel to a tag whose snapshot expired; system tables at a tag
    assert _rows(run("SELECT id FROM db.tg VERSION AS OF 'first'")) == [(1,), (2,)]
    assert _rows(run("SELECT id FROM db.tg FOR SYSTEM_VERSION AS OF 'second'")) == [(1,), (2,), (3,)]
    assert _rows(run("SELECT id FROM db.tg")) == [(9,)]
    assert run("SELECT count(*) AS n FROM db.tg.files VERSION AS OF 'first'").first().n == 2
    with pytest.raises(SqlError, match="snapshot 1 does not exist"):
        run("SELECT * FROM db.tg VERSION AS OF 1")
    tags = run("SELECT tag_name, snapshot_id, schema_id, record_count, create_time, time_retained "
               "FROM db.tg.tags ORDER BY tag_name").collect()
    assert [tuple(r) for r in tags] == [("first", 1, 0, 2, None, None), ("second", 2, 0, 3, None, None)]
    assert run("SELECT count(*) AS n FROM db.`tg$tags`").first().n == 2

    # REPLACE moves a tag; DROP deletes it (and what only it kept)
    run("ALTER TABLE db.tg REPLACE TAG second AS OF VERSION 3")
    assert _rows(run("SELECT id FROM db.tg VERSION AS OF 'second'")) == [(9,)]
    run("ALTER TABLE db.tg DROP TAG first")
    run("ALTER TABLE db.tg DROP TAG IF EXISTS first")                            # no-op
    with pytest.raises(SqlError, match="has no tag first"):
        run("ALTER TABLE db.tg DROP TAG first")
    assert run("CALL local.system.delete_tag('db.tg', 'second')").first().result is True
    assert os.listdir(tag_dir) == [] and t.tags() == {}
    with pytest.raises(SqlError, match="no branch or tag 'first'"):
        run("SELECT * FROM db.tg VERSION AS OF 'first'")
    assert _rows(run("SELECT id FROM db.tg")) == [(9,)]
    # only the live files of the latest snapshot are left
    data = {os.path.join(d, f) for d, _, fs in os.walk(t.location) for f in fs if f.startswith("data-")}
    assert data == {f.file_path for f in t.plan_files()}
