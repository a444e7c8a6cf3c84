"""Statement edges where an unclear Python error reached the user: each is now a SQL error naming the
statement, and the table is as it was."""
import pytest

from icefloe.sql.errors import NotSupportedYetError, SqlError


def test_merge_without_on_is_an_error_naming_on_and_changes_nothing(catalog):
    # sqlglot reads MERGE without ON; Spark's grammar has no such statement
    run = catalog.sql
    run("CREATE TABLE db.mno (id bigint, name string) USING iceberg")
    run("INSERT INTO db.mno VALUES (1, 'a')")
    before = catalog.load_table("db.mno").current_snapshot().snapshot_id
    with pytest.raises(SqlError, match=r"MERGE INTO needs ON <condition>") as e:
        run("MERGE INTO db.mno t USING (SELECT 1 AS id, 'z' AS name) s WHEN MATCHED THEN DELETE")
    assert e.value.line == 1
    assert catalog.load_table("db.mno").current_snapshot().snapshot_id == before
    assert [tuple(r) for r in run("SELECT id, name FROM db.mno").collect()] == [(1, "a")]


@pytest.mark.parametrize("statement", ["ALTER TABLE db.pf DROP PARTITION FIELD p",
                                       "ALTER TABLE db.pf REPLACE PARTITION FIELD p WITH id"])
def test_dropping_or_replacing_a_paimon_partition_field_is_refused_like_adding_one(pcat, statement):
    run = pcat.sql
    run("CREATE TABLE db.pf (id bigint, p string) USING paimon PARTITIONED BY (p)")
    run("INSERT INTO db.pf VALUES (1, 'x')")
    with pytest.raises(NotSupportedYetError, match=r"PARTITION FIELD \(partition evolution\) on paimon table") as e:
        run(statement)
    assert e.value.line == 1
    t = pcat.load_table("db.pf")
    assert t.partition_columns() == ["p"] and [s.id for s in t.snapshots()] == [1]


def test_an_iceberg_partition_field_that_is_not_there_is_an_error_and_the_spec_stays(catalog):
    run = catalog.sql
    run("CREATE TABLE db.ipf (id bigint, p string) USING iceberg PARTITIONED BY (p)")
    spec = repr(catalog.load_table("db.ipf").spec)
    for statement in ("ALTER TABLE db.ipf DROP PARTITION FIELD nope",
                      "ALTER TABLE db.ipf REPLACE PARTITION FIELD nope WITH bucket(4, id)"):
        with pytest.raises(SqlError, match="nope"):
            run(statement)
        assert repr(catalog.load_table("db.ipf").spec) == spec
    run("ALTER TABLE db.ipf REPLACE PARTITION FIELD p WITH bucket(4, id)")
    assert [f.name for f in catalog.load_table("db.ipf").spec.fields] == ["id_bucket"]


def test_show_tables_of_the_used_namespace_once_it_is_gone_is_an_error_at_the_statement(catalog):
    run = catalog.sql
    catalog.create_namespace("gone")
    run("USE gone")
    catalog.drop_namespace("gone")          # dropped outside this SQL session
    with pytest.raises(SqlError, match="namespace gone does not exist") as e:
        run("SHOW TABLES")
    assert (e.value.line, e.value.column) == (1, 1)
    run("USE local")


def test_a_default_on_a_column_without_a_type_is_an_error_naming_the_column(catalog):
    with pytest.raises(SqlError, match=r"column c has a DEFAULT but no type"):
        catalog.sql("CREATE TABLE db.dnt (id int, c DEFAULT 1) USING iceberg TBLPROPERTIES ('format-version'='3')")
    assert not catalog.table_exists("db.dnt")
