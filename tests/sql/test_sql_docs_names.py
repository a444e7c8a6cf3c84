"""Statements of Iceberg's and Paimon's Spark documentation that name catalogs, namespaces and Spark's
own tables: each runs on icefloe's catalogs with the documented effect, or is refused in icefloe's
words (never Spark's view of its own catalog, ``spark_catalog`` and single-part namespaces), with
the table as it was. Grouped by the docs page the statement form is on."""
import os
import uuid

import pytest

import icefloe
from icefloe.errors import NotSupportedError
from icefloe.sql import SqlError

LEAKS = ("spark_catalog", "TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND", "REQUIRES_SINGLE_PART_NAMESPACE")


def _files(location: str) -> dict:
    path = location.replace("file:", "")
    out = {}
    for root, _dirs, files in os.walk(path):
        for f in files:
            full = os.path.join(root, f)
            out[full] = os.path.getsize(full)
    return out


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


@pytest.fixture
def sql_cat(tmp_path, spark):
    c = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}", spark=spark)
    c.sql("CREATE NAMESPACE db")
    c.sql("CREATE TABLE db.events (id bigint, kind string) USING iceberg")
    c.sql("INSERT INTO db.events VALUES (1, 'click'), (2, 'view')")
    return c


@pytest.fixture
def pai(tmp_path, spark):
    c = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=spark)
    c.sql("CREATE DATABASE shop")
    c.sql("CREATE TABLE shop.orders (id INT, day STRING) PARTITIONED BY (day)")
    c.sql("INSERT INTO shop.orders VALUES (1, '2024-03-01')")
    return c


# --------------------------------------------------------------------------- Iceberg spark-ddl
def test_show_views_in_a_catalog_lists_its_root_namespace_which_holds_no_views(sql_cat):
    sql_cat.sql("CREATE VIEW db.recent AS SELECT * FROM db.events WHERE id > 1")
    assert [(r.namespace, r.viewName) for r in sql_cat.sql("SHOW VIEWS IN db").collect()
            if not r.isTemporary] == [("db", "recent")]
    # IN <catalog>: Spark resolves the catalog's root namespace; icefloe's views are all in a namespace
    assert [r for r in sql_cat.sql("SHOW VIEWS IN local").collect() if not r.isTemporary] == []
    assert sql_cat.sql("SHOW VIEWS IN local").columns == ["namespace", "viewName", "isTemporary"]


# --------------------------------------------------------------------------- Iceberg spark-writes / spark-queries
def test_a_name_no_catalog_has_is_said_in_icefloes_words(sql_cat):
    sql_cat.sql("USE db")
    with pytest.raises(SqlError) as e:
        sql_cat.sql("SELECT * FROM nowhere_table")
    msg = str(e.value)
    assert "unknown table or view nowhere_table" in msg and "catalogs here are local" in msg
    assert "namespace db of USE" in msg and not any(w in msg for w in LEAKS)
    with pytest.raises(SqlError) as e:
        sql_cat.sql("SELECT * FROM nocat.db.events")
    assert "unknown table or namespace" in str(e.value) and not any(w in str(e.value) for w in LEAKS)
    with pytest.raises(SqlError) as e:
        sql_cat.sql("USE no_such_db")
    assert "unknown namespace no_such_db" in str(e.value) and not any(w in str(e.value) for w in LEAKS)


# --------------------------------------------------------------------------- Paimon sql-ddl (partitions)
def test_msck_repair_on_an_icefloe_table_is_refused_naming_the_statement_and_table(pai):
    pai.sql("USE shop")
    with pytest.raises(SqlError) as e:
        pai.sql("MSCK REPAIR TABLE orders")
    msg = str(e.value)
    assert "not supported yet: MSCK REPAIR TABLE shop.orders" in msg and "nothing to repair" in msg
    assert not any(w in msg for w in LEAKS)


def test_add_partition_is_refused_with_the_formats_reason_and_the_table_unchanged(pai, sql_cat):
    for cat, name in ((pai, "shop.orders"), (sql_cat, "db.events")):
        before = _files(cat.load_table(name).location)
        spec = "day = '2024-04-01'" if cat is pai else "kind = 'x'"
        with pytest.raises(NotSupportedError) as e:
            cat.sql(f"ALTER TABLE {name} ADD IF NOT EXISTS PARTITION ({spec}) LOCATION '/elsewhere'")
        assert "ALTER TABLE ... ADD PARTITION" in str(e.value) and "exists through the data files" in str(e.value)
        assert _files(cat.load_table(name).location) == before


# --------------------------------------------------------------------------- Paimon sql-alter (ALTER DATABASE)
def test_alter_database_of_a_paimon_warehouse_is_refused_and_changes_nothing(pai, tmp_path):
    before = _files(str(tmp_path / "pwh"))
    with pytest.raises(NotSupportedError) as e:
        pai.sql("ALTER DATABASE shop SET LOCATION 'file:/tmp/elsewhere/shop.db'")
    assert "SET LOCATION on namespace shop" in str(e.value) and "spark_catalog" not in str(e.value)
    with pytest.raises(NotSupportedError) as e:
        pai.sql("ALTER SCHEMA shop SET DBPROPERTIES ('owner' = 'me')")
    assert "keeps no properties" in str(e.value)
    with pytest.raises(SqlError) as e:
        pai.sql("ALTER NAMESPACE local.nosuch SET PROPERTIES ('a' = 'b')")
    assert "namespace nosuch does not exist" in str(e.value)
    assert _files(str(tmp_path / "pwh")) == before


def test_alter_namespace_properties_in_a_sql_catalog(sql_cat):
    sql_cat.sql("ALTER NAMESPACE db SET DBPROPERTIES ('owner' = 'ana', 'team' = 'data')")
    assert {k: v for k, v in sql_cat.namespace_properties("db").items() if k in ("owner", "team")} == \
        {"owner": "ana", "team": "data"}
    sql_cat.sql("ALTER DATABASE local.db UNSET DBPROPERTIES ('team')")
    props = sql_cat.namespace_properties("db")
    assert props.get("owner") == "ana" and "team" not in props


# --------------------------------------------------------------------------- Iceberg spark-procedures (migration)
@pytest.fixture
def spark_table(spark, tmp_path):
    """A Parquet table of Spark's own catalog, partitioned Hive-style, dropped afterwards."""
    db = f"survey_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE spark_catalog.{db} LOCATION '{tmp_path / 'sparkdb'}'")
    spark.sql(f"CREATE TABLE spark_catalog.{db}.src (id bigint, name string, part string) USING parquet "
              "PARTITIONED BY (part)")
    spark.sql(f"INSERT INTO spark_catalog.{db}.src VALUES (1, 'a', 'A'), (2, 'b', 'B'), (3, 'c', 'A')")
    yield db
    spark.sql(f"DROP DATABASE IF EXISTS spark_catalog.{db} CASCADE")


def test_snapshot_and_add_files_take_a_parquet_table_of_sparks_catalog(sql_cat, spark_table):
    db = spark_table
    out = sql_cat.sql(f"CALL local.system.snapshot('spark_catalog.{db}.src', 'db.copy')").collect()
    assert [tuple(r) for r in out] == [(3,)]
    assert _rows(sql_cat.sql("SELECT id, name, part FROM db.copy")) == [(1, "a", "A"), (2, "b", "B"), (3, "c", "A")]
    sql_cat.sql("CREATE TABLE db.only_a (id bigint, name string, part string) USING iceberg PARTITIONED BY (part)")
    out = sql_cat.sql(f"CALL local.system.add_files(table => 'db.only_a', source_table => '{db}.src', "
                      "partition_filter => map('part', 'A'))").collect()
    assert out[0].added_files_count == 2
    assert _rows(sql_cat.sql("SELECT id, part FROM db.only_a")) == [(1, "A"), (3, "A")]


# --------------------------------------------------------------------------- Paimon system-tables (database sys)
def test_paimons_global_system_tables_are_read_and_other_statements_on_them_refused(pai):
    pai.sql("USE sys")
    assert pai.sql("SELECT count(*) FROM sys.all_table_options WHERE table_name = 'orders'").first()[0] >= 1
    with pytest.raises(SqlError) as e:
        pai.sql("INSERT INTO sys.tables SELECT * FROM sys.tables")
    assert "global system tables" in str(e.value) and "INSERT cannot change it" in str(e.value)
    assert not any(w in str(e.value) for w in LEAKS)
    assert pai.sql("SELECT count(*) FROM shop.`orders$snapshots`").first()[0] == 1   # a table's own
