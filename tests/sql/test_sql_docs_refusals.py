"""Statements of Paimon's and Iceberg's Spark documentation that icefloe refuses or reads in their
format's own way: each refusal gives the reason the format itself has (checked against Paimon's and
Iceberg's catalogs: what their filesystem catalogs refuse too) and leaves the files as they were; a
Paimon time travel to a watermark reads the snapshot Paimon reads. Grouped by the docs page the
statement form is on."""
import os

import pytest

import icefloe
from icefloe.errors import NotSupportedError
from icefloe.paimon.snapshot import Snapshot
from icefloe.sql import SqlError

LEAKS = ("spark_catalog", "TABLE_OR_VIEW_NOT_FOUND", "[", "org.apache")


def _files(path: str) -> dict:
    out = {}
    for root, _dirs, files in os.walk(path.replace("file:", "")):
        for f in files:
            full = os.path.join(root, f)
            out[full] = (os.path.getsize(full), os.stat(full).st_mtime_ns)
    return out


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


@pytest.fixture
def pai(tmp_path, spark):
    c = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=spark)
    c.sql("USE default")
    return c


def _set_watermark(table, snapshot_id: int, watermark: int) -> None:
    """The snapshot file as a streaming writer commits it: with a watermark (batch commits carry none)."""
    path = os.path.join(table.location.replace("file:", ""), "snapshot", f"snapshot-{snapshot_id}")
    with open(path, encoding="utf-8") as f:
        snap = Snapshot.from_json(f.read())
    snap.watermark = watermark
    with open(path, "w", encoding="utf-8") as f:
        f.write(snap.to_json())


# --------------------------------------------------------------------------- Paimon sql-query (time travel)
def test_version_as_of_a_watermark_reads_the_first_snapshot_at_or_after_it(pai):
    run = pai.sql
    run("CREATE TABLE t (id INT, v STRING)")
    for i in range(1, 5):
        run(f"INSERT INTO t VALUES ({i}, 'v{i}')")
    t = pai.load_table("default.t")
    # snapshot 1 is a batch commit (no watermark); 2, 3 and 4 a streaming writer's
    for sid, mark in ((2, 1000), (3, 2000), (4, 3000)):
        _set_watermark(t, sid, mark)
    assert _rows(run("SELECT id FROM t VERSION AS OF 'watermark-1500'")) == [(1,), (2,), (3,)]
    assert _rows(run("SELECT id FROM t VERSION AS OF 'watermark-2000'")) == [(1,), (2,), (3,)]
    assert _rows(run("SELECT id FROM t VERSION AS OF 'watermark-5'")) == [(1,), (2,)]
    # the same starting points as Paimon's dynamic options
    try:
        run("SET spark.paimon.scan.watermark = 1500")
        assert _rows(run("SELECT id FROM t")) == [(1,), (2,), (3,)]
        run("RESET spark.paimon.scan.watermark")
        run("SET spark.paimon.*.default.t.scan.version = watermark-2001")
        assert _rows(run("SELECT id FROM t")) == [(1,), (2,), (3,), (4,)]
    finally:
        run("RESET spark.paimon.scan.watermark")
        run("RESET spark.paimon.*.default.t.scan.version")
    # a tag of that name comes first, as in Paimon
    run("CALL sys.create_tag(table => 'default.t', tag => 'watermark-2500', snapshot => 1)")
    assert _rows(run("SELECT id FROM t VERSION AS OF 'watermark-2500'")) == [(1,)]
    before = _files(t.location)
    with pytest.raises(SqlError) as e:
        run("SELECT * FROM t VERSION AS OF 'watermark-3001'")
    assert "default.t has no snapshot with a watermark at or after 3001" in str(e.value)
    assert _files(t.location) == before


def test_version_as_of_a_watermark_on_batch_commits_only_is_an_error(pai):
    pai.sql("CREATE TABLE t (id INT)")
    pai.sql("INSERT INTO t VALUES (1)")
    with pytest.raises(SqlError, match="no snapshot with a watermark at or after 1678883047356"):
        pai.sql("SELECT * FROM t VERSION AS OF 'watermark-1678883047356'")


# --------------------------------------------------------------------------- Paimon manage-branches (names)
def test_a_table_name_differing_only_in_case_is_not_the_table_and_the_error_names_it(pai):
    run = pai.sql
    run("CREATE TABLE T (id INT, v STRING)")
    run("INSERT INTO T VALUES (1, 'a')")
    run("CALL sys.create_branch('default.T', 'branch1')")
    run("INSERT INTO `T$branch_branch1` VALUES (2, 'b')")
    assert _rows(run("SELECT * FROM `T$branch_branch1`")) == [(2, "b")]
    for name, twin in (("`t$branch_branch1`", "default.`T$branch_branch1`"), ("t", "default.T"),
                       ("default.t", "default.T")):
        with pytest.raises(SqlError) as e:
            run(f"SELECT * FROM {name}")
        msg = str(e.value)
        assert "case-sensitive" in msg and f"the table is {twin}" in msg, msg
        assert not any(w in msg for w in LEAKS)
    with pytest.raises(SqlError, match="the table is default.`T\\$branch_branch1`"):
        run("INSERT INTO `t$branch_branch1` VALUES (3, 'c')")
    assert _rows(run("SELECT * FROM `T$branch_branch1`")) == [(2, "b")]
    assert _rows(run("SELECT * FROM T")) == [(1, "a")]
    with pytest.raises(SqlError) as e:                       # no twin: the usual message
        run("SELECT * FROM nothing_like_it")
    assert "case-sensitive" not in str(e.value)


# --------------------------------------------------------------------------- Paimon sql-ddl
def test_msck_repair_table_is_refused_with_the_formats_reason(pai, catalog):
    pai.sql("CREATE TABLE p (id INT, dt STRING) PARTITIONED BY (dt)")
    pai.sql("INSERT INTO p VALUES (1, '2025-01-01')")
    catalog.sql("CREATE NAMESPACE db")
    catalog.sql("CREATE TABLE db.i (id bigint, dt string) USING iceberg PARTITIONED BY (dt)")
    for cat, name, reason in ((pai, "p", "Paimon runs MSCK REPAIR TABLE only on Format Tables"),
                              (catalog, "db.i", "Iceberg's Spark runtime refuses MSCK REPAIR TABLE")):
        location = cat.load_table(name if "." in name else f"default.{name}").location
        before = _files(location)
        with pytest.raises(NotSupportedError) as e:
            cat.sql(f"MSCK REPAIR TABLE {name}")
        assert "MSCK REPAIR TABLE" in str(e.value) and reason in str(e.value)
        assert _files(location) == before


def test_partition_ddl_of_format_tables_is_refused_on_paimon_tables_with_paimons_reason(pai):
    pai.sql("CREATE TABLE p (id INT, dt STRING) PARTITIONED BY (dt)")
    pai.sql("INSERT INTO p VALUES (1, '2025-01-01')")
    t = pai.load_table("default.p")
    before = _files(t.location)
    with pytest.raises(NotSupportedError) as e:
        pai.sql("ALTER TABLE p ADD PARTITION (dt='2025-01-02')")
    assert "exists through the data files" in str(e.value)
    assert "in a filesystem catalog its ADD PARTITION does nothing" in str(e.value)
    with pytest.raises(NotSupportedError) as e:
        pai.sql("ANALYZE TABLE p PARTITION (dt='2025-01-01') COMPUTE STATISTICS NOSCAN")
    assert "Paimon refuses PARTITION on its tables too" in str(e.value)
    assert _files(t.location) == before
    assert _rows(pai.sql("SHOW PARTITIONS p")) == [("dt=2025-01-01",)]


def test_create_table_location_names_the_paimon_catalogs_that_take_a_table_path(pai, tmp_path):
    with pytest.raises(NotSupportedError) as e:
        pai.sql(f"CREATE TABLE my_table (id INT) LOCATION '{tmp_path / 'elsewhere'}'")
    assert "Hive or REST catalog" in str(e.value)
    assert not pai.table_exists("default.my_table") and not os.path.exists(tmp_path / "elsewhere")


def test_views_of_a_paimon_catalog_are_refused_naming_the_catalogs_that_keep_them(pai):
    pai.sql("CREATE TABLE t1 (id INT)")
    for stmt in ("CREATE VIEW default.v1 AS SELECT * FROM t1", "CREATE OR REPLACE VIEW default.v1 AS SELECT * FROM t1",
                 "DROP VIEW default.v1"):
        with pytest.raises(NotSupportedError) as e:
            pai.sql(stmt)
        assert "a Paimon filesystem catalog has no views" in str(e.value), stmt
        assert "Hive, JDBC or REST catalog" in str(e.value)
    pai.sql("DROP VIEW IF EXISTS default.v1")          # nothing to drop, as asked
    assert pai.list_tables("default") == ["default.t1"]


# --------------------------------------------------------------------------- Paimon sql-alter (ALTER DATABASE)
def test_alter_database_of_a_paimon_catalog_gives_paimons_reason(pai, tmp_path):
    pai.sql("CREATE DATABASE my_database")
    before = _files(str(tmp_path / "pwh"))
    for stmt in ("ALTER DATABASE my_database SET LOCATION 'file:/temp/my_database.db'",
                 "ALTER DATABASE my_database SET DBPROPERTIES ('k' = 'v')"):
        with pytest.raises(NotSupportedError) as e:
            pai.sql(stmt)
        msg = str(e.value)
        assert "on namespace my_database" in msg and "Paimon's filesystem catalog refuses ALTER DATABASE" in msg
        assert "absolute paths" not in msg        # Paimon's metadata names its files relative to the table
    assert _files(str(tmp_path / "pwh")) == before


# --------------------------------------------------------------------------- Paimon procedures
def test_paimon_procedures_of_other_catalogs_are_refused_with_the_catalog_that_runs_them(pai):
    pai.sql("CREATE TABLE T (id INT)")
    cases = {
        "CALL sys.migrate_table(source_type => 'hive', table => 'default.T', options => 'file.format=parquet')":
            "only in a Paimon Hive catalog",
        "CALL sys.migrate_database(source_type => 'hive', database => 'default')": "only in a Paimon Hive catalog",
        "CALL sys.repair('default.T')": "a Hive or JDBC catalog",
        "CALL sys.alter_view_dialect('v', 'drop', 'spark')": "in a JDBC or REST catalog",
        "CALL sys.drop_function(`function` => 'f')": "REST catalog",
    }
    for stmt, reason in cases.items():
        with pytest.raises(NotSupportedError) as e:
            pai.sql(stmt)
        assert reason in str(e.value), (stmt, str(e.value))
    assert pai.list_tables("default") == ["default.T"]
