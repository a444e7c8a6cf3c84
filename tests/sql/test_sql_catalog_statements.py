"""The SQL a user brings from Iceberg's and Spark's docs: namespaces and USE, SHOW CREATE TABLE
(whose output recreates the table), SHOW TBLPROPERTIES, TRUNCATE TABLE, WRITE ORDERED BY,
identifier fields, branch and tag names (``t.branch_dev``), the all_* and position_deletes
metadata tables, procedure results, and syntax errors that name the statement's own text."""
import os

import pyarrow as pa
import pytest

import icefloe
from icefloe.iceberg.sort_order import default_order
from icefloe.sql.errors import NotSupportedYetError, SqlError
from tests.interop_util import pyiceberg_table


def rows(df):
    return sorted(tuple(r) for r in df.collect())


@pytest.fixture
def cat(warehouse, spark):
    return icefloe.Catalog(warehouse, spark=spark)


def test_namespaces_and_use(cat, warehouse, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = cat.sql
    run("CREATE NAMESPACE local.db2")
    run("CREATE DATABASE db3")                                     # ours, in the warehouse
    run("CREATE SCHEMA IF NOT EXISTS db3")
    assert os.path.isdir(os.path.join(warehouse, "db2")) and os.path.isdir(os.path.join(warehouse, "db3"))
    assert not os.path.exists(tmp_path / "spark-warehouse")       # nothing in the working directory
    with pytest.raises(SqlError, match="namespace db3 already exists"):
        run("CREATE DATABASE db3")
    with pytest.raises(NotSupportedYetError, match="namespace properties"):
        run("CREATE NAMESPACE db4 COMMENT 'x'")
    with pytest.raises(NotSupportedYetError, match="namespace properties are kept by the SQL catalog only"):
        run("CREATE NAMESPACE IF NOT EXISTS db4 COMMENT 'x' WITH DBPROPERTIES ('a' = 'b')")   # not Spark's own
    with pytest.raises(NotSupportedYetError, match="SET DBPROPERTIES on namespace db3 .*keeps no properties"):
        run("ALTER DATABASE db3 SET DBPROPERTIES ('k' = 'v')")
    assert rows(run("DESCRIBE NAMESPACE EXTENDED local.db3")) == sorted([
        ("Catalog Name", "local"), ("Namespace Name", "db3"), ("Comment", ""),
        ("Location", os.path.join(warehouse, "db3")), ("Owner", ""), ("Properties", "()")])
    assert rows(run("SHOW NAMESPACES")) == [("db2",), ("db3",)]
    assert rows(run("SHOW DATABASES LIKE 'db2|x*'")) == [("db2",)]
    run("USE local.db2")
    run("CREATE TABLE t (id bigint, name string)")                 # lands in db2
    run("INSERT INTO t VALUES (1, 'a')")
    assert cat.table_exists("db2.t") and rows(run("SELECT * FROM t")) == [(1, "a")]
    assert rows(run("SHOW TABLES")) == [("db2", "t", False)]
    assert rows(run("SELECT * FROM db2.t")) == [(1, "a")]          # two-part names still work
    run("USE db3")
    with pytest.raises(SqlError, match="unknown table or view t: .*namespace db3 of USE"):
        run("SELECT * FROM t")
    with pytest.raises(SqlError, match="namespace nope does not exist"):
        run("USE local.nope")
    with pytest.raises(SqlError, match=r"namespace db2 holds 1 table\(s\) \(db2.t\).*CASCADE"):
        run("DROP NAMESPACE db2")
    run("DROP NAMESPACE db2 CASCADE")
    run("DROP DATABASE IF EXISTS db2")
    assert rows(run("SHOW NAMESPACES")) == [("db3",)] and not os.path.exists(os.path.join(warehouse, "db2"))
    assert not os.path.exists(tmp_path / "spark-warehouse")


def test_namespace_properties_in_the_sql_catalog(tmp_path, spark):
    cat = icefloe.Catalog(str(tmp_path / "wh"), spark=spark, type="sql", uri=f"sqlite:///{tmp_path}/catalog.db")
    run = cat.sql
    run("CREATE NAMESPACE IF NOT EXISTS sales COMMENT 'orders' LOCATION '/data/sales' WITH DBPROPERTIES ('a' = 'b')")
    assert cat.namespace_properties("sales") == {"comment": "orders", "location": "/data/sales", "a": "b"}
    run("ALTER NAMESPACE sales SET PROPERTIES ('owner' = 'ops', 'k' = 'v')")
    run("ALTER SCHEMA sales UNSET PROPERTIES ('k')")
    assert dict(tuple(r) for r in run("DESCRIBE NAMESPACE EXTENDED sales").collect()) == {
        "Catalog Name": "local", "Namespace Name": "sales", "Comment": "orders", "Location": "/data/sales",
        "Owner": "ops", "Properties": "((a,b))"}
    with pytest.raises(NotSupportedYetError, match="SET LOCATION"):
        run("ALTER NAMESPACE sales SET LOCATION '/elsewhere'")
    with pytest.raises(SqlError, match="unexpected 'BOGUS'"):
        run("CREATE NAMESPACE more COMMENT 'x' BOGUS")


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_show_create_table_recreates_the_table(warehouse, spark, fmt):
    c = icefloe.Catalog(warehouse, format=fmt, spark=spark)
    run = c.sql
    extra = ", 'primary-key' = 'id,p', 'bucket' = '2'" if fmt == "paimon" else ", 'write.delete.mode' = 'merge-on-read'"
    part = "p" if fmt == "paimon" else "bucket(4, id), days(ts)"
    run(f"CREATE TABLE local.db.t (id bigint NOT NULL COMMENT 'the key', `a b` string, ts timestamp, p string) "
        f"USING {fmt} PARTITIONED BY ({part}) COMMENT 'my table' TBLPROPERTIES ('k' = 'it\\'s'{extra})")
    ddl = run("SHOW CREATE TABLE db.t").collect()[0][0]
    assert ddl.startswith("CREATE TABLE local.db.t (") and f"USING {fmt}" in ddl and "COMMENT 'my table'" in ddl
    before = c.load_table("db.t")
    shape = (before.describe_columns(), before.partitioning(), before.properties)
    props = rows(run("SHOW TBLPROPERTIES db.t"))
    assert ("k", "it's") in props and ("comment", "my table") in props
    assert rows(run("SHOW TBLPROPERTIES local.db.t ('k')")) == [("k", "it's")]
    assert "does not have property: nope" in rows(run("SHOW TBLPROPERTIES db.t ('nope')"))[0][1]
    run("DROP TABLE db.t")
    run(ddl)
    after = c.load_table("db.t")
    assert (after.describe_columns(), after.partitioning(), after.properties) == shape


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_truncate_table(warehouse, spark, fmt):
    c = icefloe.Catalog(warehouse, format=fmt, spark=spark)
    run = c.sql
    run(f"CREATE TABLE db.t (id bigint, p string) USING {fmt} PARTITIONED BY (p)")
    run("INSERT INTO db.t VALUES (1, 'a'), (2, 'b')")
    run("INSERT INTO db.t VALUES (3, 'a')")
    t = c.load_table("db.t")
    first = t.snapshots()[0]
    run("TRUNCATE TABLE local.db.t")
    assert rows(run("SELECT count(*) FROM db.t")) == [(0,)]
    t.refresh()
    assert len(t.snapshots()) == 3 and t.plan_files() == []
    first_id = getattr(first, "snapshot_id", getattr(first, "id", None))
    assert sorted(r["id"] for r in t.to_arrow(snapshot_id=first_id).to_pylist()) == [1, 2]   # history stays
    if fmt == "iceberg":
        assert t.current_snapshot().summary["operation"] == "delete"
        assert pyiceberg_table(t.metadata_location).scan().to_arrow().num_rows == 0
    else:
        from tools.pypaimon_env import remote_module
        CatalogFactory = remote_module("pypaimon").CatalogFactory

        pt = CatalogFactory.create({"warehouse": warehouse}).get_table("db.t")
        rb = pt.new_read_builder()
        assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 0
        assert t.current_snapshot().commit_kind == "OVERWRITE"
    if fmt == "iceberg":
        with pytest.raises(NotSupportedYetError, match="PARTITION"):
            run("TRUNCATE TABLE db.t PARTITION (p = 'a')")
    else:       # Paimon's TRUNCATE ... PARTITION (tests/sql/test_sql_paimon_procedures.py): nothing left here
        run("TRUNCATE TABLE db.t PARTITION (p = 'a')")
        assert len(t.refresh().snapshots()) == 3


def test_write_order_and_identifier_fields(cat):
    run = cat.sql
    run("CREATE TABLE db.t (id bigint NOT NULL, name string, score double NOT NULL) USING iceberg")
    t = cat.load_table("db.t")
    run("ALTER TABLE local.db.t WRITE ORDERED BY id DESC NULLS LAST, bucket(4, name)")
    t.refresh()
    _id, order = default_order(t.metadata)
    assert [(f["direction"], f["null-order"], f["transform"]) for f in order] == \
        [("desc", "nulls-last", "identity"), ("asc", "nulls-first", "bucket[4]")]
    assert t.properties["write.distribution-mode"] == "range"
    run("ALTER TABLE db.t WRITE LOCALLY ORDERED BY name")
    assert cat.load_table("db.t").properties["write.distribution-mode"] == "none"
    run("ALTER TABLE db.t WRITE DISTRIBUTED BY PARTITION")
    t = cat.load_table("db.t")
    assert t.properties["write.distribution-mode"] == "hash"
    assert default_order(t.metadata)[1] == []
    run("ALTER TABLE db.t SET IDENTIFIER FIELDS id")
    t = cat.load_table("db.t")
    assert t.schema.identifier_field_ids == [1]
    assert pyiceberg_table(t.metadata_location).schema().identifier_field_ids == [1]
    with pytest.raises(SqlError, match="'name' is an optional column"):
        run("ALTER TABLE db.t SET IDENTIFIER FIELDS id, name")
    with pytest.raises(SqlError, match="cannot be double"):
        run("ALTER TABLE db.t SET IDENTIFIER FIELDS score")
    with pytest.raises(SqlError, match="score is not an identifier field"):
        run("ALTER TABLE db.t DROP IDENTIFIER FIELDS score")
    assert cat.load_table("db.t").schema.identifier_field_ids == [1]
    run("ALTER TABLE db.t DROP IDENTIFIER FIELDS id")
    assert cat.load_table("db.t").schema.identifier_field_ids == []


def test_branch_and_tag_names(cat):
    run = cat.sql
    run("CREATE TABLE db.t (id bigint) USING iceberg")
    run("INSERT INTO db.t VALUES (1)")
    run("ALTER TABLE db.t CREATE TAG v1")
    run("ALTER TABLE db.t CREATE BRANCH dev")
    run("INSERT INTO local.db.t.branch_dev VALUES (2)")
    run("INSERT INTO db.t VALUES (3)")
    assert rows(run("SELECT * FROM local.db.t.branch_dev")) == [(1,), (2,)]
    assert rows(run("SELECT * FROM db.t.tag_v1")) == [(1,)]
    assert rows(run("SELECT * FROM db.t")) == [(1,), (3,)]
    with pytest.raises(SqlError, match="has no branch 'nope'"):
        run("SELECT * FROM db.t.branch_nope")
    with pytest.raises(NotSupportedYetError, match="tag"):
        run("INSERT INTO db.t.tag_v1 VALUES (9)")
    # row-level statements on a branch (spark-writes, "Writing to Branches") change only the branch
    run("DELETE FROM db.t.branch_dev WHERE id = 1")
    run("UPDATE db.t.branch_dev SET id = 20 WHERE id = 2")
    run("MERGE INTO db.t.branch_dev t USING (SELECT 4 AS id) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *")
    assert rows(run("SELECT * FROM db.t.branch_dev")) == [(4,), (20,)]
    assert rows(run("SELECT * FROM db.t")) == [(1,), (3,)]
    with pytest.raises(SqlError, match="tag names one snapshot"):
        run("UPDATE db.t.tag_v1 SET id = 0")
    with pytest.raises(SqlError, match="has no branch 'nope'"):
        run("DELETE FROM db.t.branch_nope WHERE id = 1")
    assert rows(run("SELECT * FROM db.t.tag_v1")) == [(1,)]


def test_all_files_tables_and_position_deletes(cat):
    run = cat.sql
    run("CREATE TABLE db.t (id bigint, name string) USING iceberg TBLPROPERTIES ('write.delete.mode' = "
        "'merge-on-read')")
    t = cat.load_table("db.t")
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]}))
    first_file = t.plan_files()[0].file_path
    run("DELETE FROM db.t WHERE id = 2")                           # a position delete
    pos = run("SELECT file_path, pos, spec_id, delete_file_path FROM db.t.position_deletes").collect()
    assert [(r.file_path, r.pos, r.spec_id) for r in pos] == [(first_file, 1, 0)]
    assert pos[0].delete_file_path.endswith(".parquet")
    run("TRUNCATE TABLE db.t")
    assert run("SELECT * FROM db.t.data_files").count() == 0
    all_data = [r.file_path for r in run("SELECT file_path FROM db.t.all_data_files").collect()]
    assert all_data == [first_file]                                # gone from the table, still in history
    assert run("SELECT * FROM db.t.all_delete_files").count() == 1
    assert run("SELECT * FROM local.db.t.all_files").count() == 2
    statuses = rows(run("SELECT status, data_file.content FROM db.t.all_entries"))
    assert (1, 0) in statuses and (1, 1) in statuses and (2, 0) in statuses


def test_procedure_results_are_counted(cat):
    run = cat.sql
    run("CREATE TABLE db.t (id bigint) USING iceberg")
    for i in range(3):
        run(f"INSERT INTO db.t VALUES ({i})")
    r = run("CALL local.system.rewrite_manifests('db.t')").collect()[0]
    assert (r.rewritten_manifests_count, r.added_manifests_count) == (3, 1)
    run("TRUNCATE TABLE db.t")
    r = run("CALL local.system.expire_snapshots(table => 'db.t', older_than => TIMESTAMP '2999-01-01 00:00:00', "
            "retain_last => 1)").collect()[0]
    assert r.deleted_data_files_count == 3 and r.deleted_manifest_files_count >= 3
    assert r.deleted_manifest_lists_count == 4


def test_syntax_errors_point_at_the_text(cat):
    with pytest.raises(SqlError) as e:
        cat.sql("SELECT 1;\nSELEC * FROM db.t")
    assert (e.value.line, e.value.column) == (2, 1) and "'SELEC'" in str(e.value) and "sqlglot" not in str(e.value)
    with pytest.raises(SqlError) as e:
        cat.sql("SELECT 1 +")
    assert "sqlglot" not in str(e.value) and "<class" not in str(e.value)
