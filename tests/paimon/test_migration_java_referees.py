"""Migrations checked by the Java engines: Apache Iceberg's Spark runtime reads what icefloe
imported into Iceberg (files of a Paimon table Paimon's Java engine wrote, a Hive-style Parquet
directory), and Paimon's Java engine reads what icefloe moved into Paimon (an Iceberg table the
Java runtime wrote)."""
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.jvm_runtime import JvmRuntime  # noqa: E402

pytestmark = pytest.mark.long


@pytest.fixture(scope="module")
def iceberg_java(tmp_path_factory):
    with JvmRuntime(tmp_path_factory.mktemp("iceberg-java")) as runtime:
        yield runtime


def java_iceberg_rows(jvm, location: str, cols: str) -> list:
    code = (f"spark.read.format('iceberg').load(location).createOrReplaceTempView('migrated')\n"
            f"result = rows(spark.sql('SELECT {cols} FROM migrated'))")
    return sorted(tuple(r) for r in jvm.run(code, location=location))


def test_paimon_java_table_into_iceberg_read_by_the_iceberg_runtime(paimon_java, iceberg_java, spark, tmp_path):
    pj = paimon_java
    pj.sql("CREATE TABLE db.mig_src (id BIGINT, v STRING, dt STRING) PARTITIONED BY (dt) "
           "TBLPROPERTIES ('bucket' = '-1')")
    pj.sql("INSERT INTO db.mig_src VALUES (1, 'a', 'd1'), (2, NULL, 'd2'), (3, 'c', 'd1')")
    pj.sql("INSERT INTO db.mig_src VALUES (4, 'd', 'd2')")
    want = sorted(tuple(r) for r in pj.sql("SELECT id, v, dt FROM db.mig_src"))
    assert len(want) == 4
    pc = icefloe.Catalog(pj.warehouse, "paimon", spark)
    ic = icefloe.Catalog(iceberg_java.warehouse, spark=spark)
    ic.snapshot_table("db.mig_src", "db.mig_snap", source_catalog=pc)
    snap = ic.load_table("db.mig_snap")
    assert java_iceberg_rows(iceberg_java, snap.location, "id, v, dt") == want
    # migrate moves the Paimon table to its backup name (the snapshot, which shares its files, is
    # left behind: the Iceberg docs' warning about changes to a snapshot's source)
    ic.migrate_table("db.mig_src", source_catalog=pc)
    t = ic.load_table("db.mig_src")
    assert java_iceberg_rows(iceberg_java, t.location, "id, v, dt") == want
    assert sorted(tuple(r) for r in t.to_spark().select("id", "v", "dt").collect()) == want
    # the backup is still Paimon's table, read by Paimon's engine
    assert sorted(tuple(r) for r in pj.sql("SELECT id, v, dt FROM db.mig_src_BACKUP_")) == want


def test_hive_directory_into_iceberg_read_by_the_iceberg_runtime(iceberg_java, spark, tmp_path):
    src = tmp_path / "src"
    for dt, ids in (("2024-01-01", [1, 2]), ("2024-01-02", [3])):
        (src / f"dt={dt}").mkdir(parents=True)
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids]}),
                       str(src / f"dt={dt}" / "part-0.parquet"))
    ic = icefloe.Catalog(iceberg_java.warehouse, spark=spark)
    ic.create_table("db.hive_add", "id bigint, v string, dt string", partitioned_by=["dt"])
    ic.sql(f"CALL local.system.add_files('db.hive_add', '`parquet`.`{src}`')")
    t = ic.load_table("db.hive_add")
    want = [(1, "v1", "2024-01-01"), (2, "v2", "2024-01-01"), (3, "v3", "2024-01-02")]
    # the Java runtime takes dt, which the files lack, from the identity partition
    assert java_iceberg_rows(iceberg_java, t.location, "id, v, dt") == want
    assert java_iceberg_rows(iceberg_java, t.location, "count(*)") == [(3,)]


def test_iceberg_java_table_into_paimon_read_by_paimon_java(paimon_java, iceberg_java, spark):
    jv = iceberg_java
    jv.sql("CREATE TABLE jvm.db.ice_src (id bigint, v string, dt string) USING iceberg PARTITIONED BY (dt)")
    jv.sql("INSERT INTO jvm.db.ice_src VALUES (1, 'a', 'x'), (2, 'b', 'y')")
    jv.sql("INSERT INTO jvm.db.ice_src VALUES (3, NULL, 'x')")
    want = sorted(tuple(r) for r in jv.sql("SELECT id, v, dt FROM jvm.db.ice_src"))
    ic = icefloe.Catalog(jv.warehouse, spark=spark)
    pc = icefloe.Catalog(paimon_java.warehouse, "paimon", spark)
    pc.sql("CALL sys.migrate_table(source_type => 'iceberg', table => 'ice.db.ice_src', target_table => 'db.from_ice')",
           catalogs={"ice": ic})
    assert sorted(tuple(r) for r in paimon_java.sql("SELECT id, v, dt FROM db.from_ice")) == want
    assert not ic.table_exists("db.ice_src")



def test_iceberg_java_table_with_renamed_columns_into_paimon_read_by_paimon_java(paimon_java, iceberg_java, spark):
    """The Iceberg runtime writes a file, renames id to key, swaps b's and c's names and adds a
    column, and writes again: Paimon's engine reads the migrated table's old file through its own
    schema (the old names, matched by field id; no added column: null), values and filters right."""
    jv = iceberg_java
    jv.sql("CREATE TABLE jvm.db.ren_ice (id bigint, b string, c string) USING iceberg")
    jv.sql("INSERT INTO jvm.db.ren_ice VALUES (1, 'bee', 'sea')")
    for old, new in (("id", "key"), ("b", "tmp"), ("c", "b"), ("tmp", "c")):
        jv.sql(f"ALTER TABLE jvm.db.ren_ice RENAME COLUMN {old} TO {new}")
    jv.sql("ALTER TABLE jvm.db.ren_ice ADD COLUMN n bigint")
    jv.sql("INSERT INTO jvm.db.ren_ice VALUES (2, 'c2', 'b2', 7)")
    want = sorted(tuple(r) for r in jv.sql("SELECT key, b, c, n FROM jvm.db.ren_ice"))
    assert want == [(1, "sea", "bee", None), (2, "b2", "c2", 7)]
    ic = icefloe.Catalog(jv.warehouse, spark=spark)
    pc = icefloe.Catalog(paimon_java.warehouse, "paimon", spark)
    pc.migrate_table("db.ren_ice", name="db.ren_from_ice", source_catalog=ic)
    assert sorted(tuple(r) for r in paimon_java.sql("SELECT key, b, c, n FROM db.ren_from_ice")) == want
    assert [tuple(r) for r in paimon_java.sql("SELECT key FROM db.ren_from_ice WHERE n IS NULL")] == [(1,)]
    assert [tuple(r) for r in paimon_java.sql("SELECT key FROM db.ren_from_ice WHERE c = 'bee'")] == [(1,)]
    assert [tuple(r) for r in paimon_java.sql("SELECT key FROM db.ren_from_ice WHERE b = 'bee'")] == []

def test_paimon_java_table_with_renamed_columns_into_iceberg(paimon_java, iceberg_java, spark):
    """Paimon's engine writes a file (without Parquet field ids), renames a column, adds one and
    writes again: the snapshot's name mapping keeps the old name, and the Iceberg runtime reads
    both files' values under the right columns, filters included. Once the old name is given to
    a new column, the old file cannot be told apart by name: refused."""
    from icefloe.errors import MigrationError

    pj = paimon_java
    pj.sql("CREATE TABLE db.ren_src (id BIGINT, v STRING) TBLPROPERTIES ('bucket' = '-1')")
    pj.sql("INSERT INTO db.ren_src VALUES (1, 'old')")
    pj.sql("ALTER TABLE db.ren_src RENAME COLUMN v TO v_before")
    pj.sql("ALTER TABLE db.ren_src ADD COLUMNS (w STRING)")
    pj.sql("INSERT INTO db.ren_src VALUES (2, 'kept', 'new')")
    want = sorted(tuple(r) for r in pj.sql("SELECT id, v_before, w FROM db.ren_src"))
    assert want == [(1, "old", None), (2, "kept", "new")]
    pc = icefloe.Catalog(pj.warehouse, "paimon", spark)
    ic = icefloe.Catalog(iceberg_java.warehouse, spark=spark)
    ic.snapshot_table("db.ren_src", "db.ren_snap", source_catalog=pc)
    snap = ic.load_table("db.ren_snap")
    assert java_iceberg_rows(iceberg_java, snap.location, "id, v_before, w") == want
    code = ("spark.read.format('iceberg').load(location).createOrReplaceTempView('migrated')\n"
            "result = rows(spark.sql(\"SELECT id FROM migrated WHERE w IS NULL AND v_before = 'old'\"))")
    assert [tuple(r) for r in iceberg_java.run(code, location=snap.location)] == [(1,)]
    assert sorted(tuple(r) for r in snap.to_spark().select("id", "v_before", "w").collect()) == want
    pj.sql("ALTER TABLE db.ren_src ADD COLUMNS (v STRING)")
    with pytest.raises(MigrationError, match="column 'v' has no field id"):
        ic.snapshot_table("db.ren_src", "db.ren_snap2", source_catalog=pc)
    assert not ic.table_exists("db.ren_snap2")
