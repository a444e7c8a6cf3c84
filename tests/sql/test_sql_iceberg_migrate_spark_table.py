"""Iceberg's spark-procedures page, ``migrate`` of Spark's own Parquet table: the Iceberg table
takes the table's name in icefloe's catalog, over the same files; Spark's table stays as the
backup (``<name>_BACKUP_`` or ``backup_table_name``), or is dropped with ``drop_backup`` when it is
external (a managed table's drop would delete the files)."""
import os
import uuid

import pytest

from icefloe.sql.errors import SqlError


@pytest.fixture
def spark_db(spark, tmp_path):
    db = f"mig_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE spark_catalog.{db} LOCATION '{tmp_path / 'sparkdb'}'")
    spark.sql(f"CREATE TABLE spark_catalog.{db}.src (id bigint, name string, part string) USING parquet "
              "PARTITIONED BY (part)")
    spark.sql(f"INSERT INTO spark_catalog.{db}.src VALUES (1, 'a', 'A'), (2, 'b', 'B'), (3, 'c', 'A')")
    yield db
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{db} CASCADE")


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


ROWS = [(1, "a", "A"), (2, "b", "B"), (3, "c", "A")]


def test_migrate_a_managed_spark_table_keeps_it_as_the_backup(catalog, spark, spark_db):
    db = spark_db
    run = catalog.sql
    with pytest.raises(SqlError, match="managed Spark table, and dropping it deletes its files"):
        run(f"CALL system.migrate(table => 'spark_catalog.{db}.src', drop_backup => true)")
    assert spark.catalog.tableExists(f"spark_catalog.{db}.src") and not catalog.table_exists(f"{db}.src")

    out = run(f"CALL system.migrate('spark_catalog.{db}.src', map('note', 'migrated'))").collect()
    t = catalog.load_table(f"{db}.src")
    files = [f.file_path for f in t.plan_files()]
    assert [tuple(r) for r in out] == [(len(files),)] and len(files) >= 2
    assert not spark.catalog.tableExists(f"spark_catalog.{db}.src")
    backup = f"spark_catalog.{db}.src_BACKUP_"
    assert _rows(spark.table(backup)) == ROWS
    # the Iceberg table reads the backup's files where they are, and takes the table's properties
    location = spark.sql(f"DESCRIBE TABLE EXTENDED {backup}").where("col_name = 'Location'").first()[1]
    assert all(f.removeprefix("file:").startswith(location.removeprefix("file:")) for f in files)
    assert t.properties["note"] == "migrated"
    assert t.current_snapshot().summary["migrated-from"] == "spark"
    assert _rows(run(f"SELECT id, name, part FROM {db}.src")) == ROWS
    assert t.spec.fields[0].name == "part"
    run(f"INSERT INTO {db}.src VALUES (4, 'd', 'B')")
    assert _rows(run(f"SELECT id FROM {db}.src")) == [(1,), (2,), (3,), (4,)]
    assert _rows(spark.table(backup)) == ROWS               # the backup is as it was

    # the name is taken now: a second migrate of a table of that name is refused, Spark's table untouched
    spark.sql(f"CREATE TABLE spark_catalog.{db}.src (id bigint) USING parquet")
    with pytest.raises(SqlError, match=f"has a table {db}.src already"):
        run(f"CALL system.migrate('spark_catalog.{db}.src')")
    assert spark.catalog.tableExists(f"spark_catalog.{db}.src")


def test_migrate_an_external_spark_table_with_drop_backup(catalog, spark, spark_db, tmp_path):
    db = spark_db
    where = tmp_path / "ext"
    spark.sql(f"CREATE TABLE spark_catalog.{db}.ext (id bigint, name string) USING parquet LOCATION '{where}'")
    spark.sql(f"INSERT INTO spark_catalog.{db}.ext VALUES (1, 'a'), (2, 'b')")
    with pytest.raises(SqlError, match="backup_table_name 'a.b' must be a table name"):
        catalog.sql(f"CALL system.migrate(table => '{db}.ext', backup_table_name => 'a.b')")
    out = catalog.sql(f"CALL system.migrate(table => '{db}.ext', drop_backup => true)").collect()
    assert out[0].migrated_files_count == len(catalog.load_table(f"{db}.ext").plan_files())
    assert not spark.catalog.tableExists(f"spark_catalog.{db}.ext")
    assert not spark.catalog.tableExists(f"spark_catalog.{db}.ext_BACKUP_")
    assert any(n.endswith(".parquet") for n in os.listdir(where))     # the files stay: the Iceberg table's now
    assert _rows(catalog.sql(f"SELECT id, name FROM {db}.ext")) == [(1, "a"), (2, "b")]


def test_migrate_with_a_backup_name(catalog, spark, spark_db):
    db = spark_db
    catalog.sql(f"CALL system.migrate(table => 'spark_catalog.{db}.src', backup_table_name => 'src_old')")
    assert _rows(spark.table(f"spark_catalog.{db}.src_old")) == ROWS
    assert _rows(catalog.sql(f"SELECT id, name, part FROM {db}.src")) == ROWS
