"""DDL, DML, queries, metadata tables, procedures and errors through ``icefloe.sql``."""
import pytest

import icefloe
from icefloe.sql.errors import NotSupportedYetError, SqlError


def test_ddl_insert_query_and_errors(catalog, spark, warehouse):
    run = catalog.sql
    run("CREATE TABLE IF NOT EXISTS local.db.ev (id bigint not null, name string comment 'who', ts timestamp, "
        "amount double) USING iceberg PARTITIONED BY (days(ts), bucket(4, id), truncate(2, name)) "
        "TBLPROPERTIES ('owner'='me')")
    run("CREATE TABLE IF NOT EXISTS local.db.ev (id bigint) USING iceberg")   # no-op
    t = catalog.load_table("db.ev")
    assert [str(f.transform) for f in t.spec.fields] == ["day", "bucket[4]", "truncate[2]"]
    assert t.properties["owner"] == "me" and t.schema.find_field("name").doc == "who"

    # INSERT casts by position with Spark's store-assignment rules (int -> bigint, decimal -> double)
    run("INSERT INTO db.ev VALUES (1, 'ann', TIMESTAMP '2024-01-01 10:00:00', 1.5), "
        "(2, 'bob', TIMESTAMP '2024-01-02 10:00:00', 2)")
    first = t.current_snapshot().snapshot_id
    run("INSERT INTO local.db.ev (id, name) SELECT id + 10, name FROM db.ev")
    assert run("SELECT count(*) AS n FROM local.db.ev").first().n == 4

    # joins, CTEs and time travel per reference; FOR SYSTEM_VERSION AS OF
    q = (f"WITH old AS (SELECT * FROM local.db.ev FOR SYSTEM_VERSION AS OF {first}) "
         "SELECT count(*) AS n FROM db.ev e JOIN old o ON e.id = o.id")
    assert run(q).first().n == 2
    assert run("SELECT count(*) AS n FROM db.ev TIMESTAMP AS OF current_timestamp()").first().n == 4
    assert run("SELECT 41 + 1 AS x").first().x == 42            # not about icefloe: Spark as is

    # metadata tables
    assert run("SELECT count(*) AS n FROM db.ev.files").first().n == \
        int(t.current_snapshot().summary["total-data-files"])
    assert run("SELECT * FROM local.db.ev.history").count() == 2
    assert [r.name for r in run("SELECT * FROM db.ev.refs").collect()] == ["main"]
    assert run("SELECT sum(added_data_files_count) AS n FROM db.ev.manifests").first().n >= 1
    assert run("SELECT sum(record_count) AS n FROM db.ev.partitions").first().n == 4
    assert run(f"SELECT count(*) AS n FROM db.ev.entries VERSION AS OF {first}").first().n == 2

    # SHOW TABLES / DESCRIBE
    assert [(r.namespace, r.tableName) for r in run("SHOW TABLES IN local.db").collect()] == [("db", "ev")]
    desc = {r.col_name: r.data_type for r in run("DESCRIBE EXTENDED local.db.ev").collect()}
    assert desc["id"] == "bigint not null" and desc["Provider"] == "iceberg"

    # CTAS, INSERT OVERWRITE, DROP
    run("CREATE TABLE db.ev2 USING iceberg AS SELECT id, name FROM local.db.ev WHERE id < 10")
    assert run("SELECT count(*) AS n FROM db.ev2").first().n == 2
    run("INSERT OVERWRITE db.ev2 SELECT 7, 'x'")
    assert [tuple(r) for r in run("SELECT * FROM db.ev2").collect()] == [(7, "x")]
    run("DROP TABLE local.db.ev2")
    assert not catalog.table_exists("db.ev2")
    run("DROP TABLE IF EXISTS local.db.ev2")

    # errors name the position and the reason
    with pytest.raises(SqlError) as ei:
        run("SELECT *\n  FROM local.db.nope")
    assert (ei.value.line, ei.value.column) == (2, 8) and "unknown table local.db.nope" in str(ei.value)
    with pytest.raises(SqlError, match="type mismatch.*column ts"):
        run("INSERT INTO db.ev VALUES (3, 'c', true, 1.0)")
    with pytest.raises(SqlError, match="gives 2 values per row but table has 4"):
        run("INSERT INTO db.ev VALUES (3, 'c')")
    with pytest.raises(SqlError) as ei:
        run("SELECT nosuch FROM db.ev")
    assert ei.value.line == 1 and ei.value.column == 8
    with pytest.raises(SqlError, match="unknown column missing"):
        run("DELETE FROM db.ev WHERE missing = 1")
    with pytest.raises(SqlError, match="unknown argument 'snapshot'"):
        run("CALL local.system.rollback_to_snapshot(table => 'db.ev', snapshot => 1)")
    with pytest.raises(SqlError, match="unknown procedure"):
        run("CALL local.system.nope('db.ev')")

    # the module-level entry point
    df = icefloe.sql(spark, "SELECT count(*) AS n FROM local.db.ev", warehouse=warehouse)
    assert df.first().n == 4


def test_row_level_and_lifecycle_statements(catalog):
    run = catalog.sql
    run("CREATE TABLE db.rl (id bigint, name string) USING iceberg")
    run("INSERT INTO db.rl VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    t = catalog.load_table("db.rl")
    first = t.current_snapshot().snapshot_id

    def expect(capability_present, statement, check, match):
        if capability_present:
            run(statement)
            check()
        else:
            with pytest.raises(NotSupportedYetError, match=match):
                run(statement)

    def ids():
        return sorted(r.id for r in run("SELECT id FROM db.rl").collect())

    expect(hasattr(t, "delete"), "DELETE FROM db.rl r WHERE r.id = 3", lambda: ids() == [1, 2], "DELETE")
    expect(hasattr(t, "update"), "UPDATE local.db.rl SET name = upper(name) WHERE id = 1",
           lambda: None, "UPDATE")
    if hasattr(t, "update"):
        assert run("SELECT name FROM db.rl WHERE id = 1").first().name == "A"
    expect(hasattr(t, "merge"),
           "MERGE INTO db.rl t USING (SELECT 2 AS id, 'z' AS name UNION ALL SELECT 9, 'n') s ON t.id = s.id "
           "WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *", lambda: None, "MERGE")
    if hasattr(t, "merge") and hasattr(t, "delete"):
        assert ids() == [1, 9]

    expect(hasattr(t, "create_tag"), f"ALTER TABLE db.rl CREATE TAG v1 AS OF VERSION {first}",
           lambda: None, "CREATE TAG")
    if hasattr(t, "create_tag"):
        assert run("SELECT count(*) AS n FROM db.rl VERSION AS OF 'v1'").first().n == 3
    expect(hasattr(t, "update_spec"), "ALTER TABLE db.rl ADD PARTITION FIELD bucket(2, id)", lambda: None,
           "PARTITION FIELD")
    expect(hasattr(t, "update_schema"), "ALTER TABLE db.rl RENAME COLUMN name TO label", lambda: None,
           "RENAME COLUMN")
    expect(hasattr(t, "rollback_to_snapshot"), f"CALL local.system.rollback_to_snapshot('db.rl', {first})",
           lambda: None, "rollback_to_snapshot")
    if hasattr(t, "rollback_to_snapshot"):
        assert t.current_snapshot().snapshot_id == first
    expect(hasattr(t, "rewrite_manifests"), "CALL local.system.rewrite_manifests(table => 'db.rl')",
           lambda: None, "rewrite_manifests")
    expect(hasattr(t, "expire_snapshots"),
           "CALL local.system.expire_snapshots(table => 'db.rl', older_than => TIMESTAMP '2000-01-01 00:00:00')",
           lambda: None, "expire_snapshots")
