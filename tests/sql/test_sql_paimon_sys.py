"""Paimon's global system database ``sys`` (Paimon's docs: concepts/system-tables, "Global System Table"):
``USE sys``, ``SHOW TABLES`` in it, and ``sys.tables``, ``sys.partitions``, ``sys.all_table_options`` and
``sys.catalog_options`` with Paimon's columns and the catalog's true values."""
import pytest

import icefloe
from icefloe.sql import SqlError


@pytest.fixture(scope="module")
def pai(tmp_path_factory, spark):
    # one catalog for the module's tests, which only read it (tiny data, one Spark session)
    c = icefloe.Catalog(str(tmp_path_factory.mktemp("sys") / "pwh"), format="paimon", spark=spark)
    c.sql("CREATE DATABASE shop")
    c.sql("CREATE TABLE shop.orders (id INT, day STRING) PARTITIONED BY (day) TBLPROPERTIES ('bucket' = '-1')")
    c.sql("INSERT INTO shop.orders VALUES (1, '2024-03-01'), (2, '2024-03-01'), (3, '2024-03-02')")
    c.sql("CREATE TABLE shop.users (id INT, name STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    c.sql("CREATE TABLE `default`.empty (id INT)")
    return c


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_sys_tables_lists_every_table_with_paimons_columns_and_live_file_totals(pai):
    df = pai.sql("SELECT * FROM sys.tables")
    assert df.columns == ["database_name", "table_name", "table_type", "partitioned", "primary_key", "owner",
                          "created_at", "created_by", "updated_at", "updated_by", "record_count",
                          "file_size_in_bytes", "file_count", "last_file_creation_time"]
    rows = {(r.database_name, r.table_name): r for r in df.collect()}
    assert sorted(rows) == [("default", "empty"), ("shop", "orders"), ("shop", "users")]
    orders = rows[("shop", "orders")]
    files = pai.load_table("shop.orders").metadata_table("files").to_pylist()
    assert (orders.table_type, orders.partitioned, orders.primary_key) == ("table", True, False)
    assert orders.record_count == 3 and orders.file_count == len(files) == 2
    assert orders.file_size_in_bytes == sum(f["file_size_in_bytes"] for f in files)
    assert orders.last_file_creation_time > 0 and orders.owner is None
    users, empty = rows[("shop", "users")], rows[("default", "empty")]
    assert (users.partitioned, users.primary_key) == (False, True)
    assert (empty.record_count, empty.file_count, empty.last_file_creation_time) == (None, None, None)
    # qualified with the catalog's name, and filtered like any table
    assert _rows(pai.sql("SELECT table_name FROM local.sys.tables WHERE primary_key")) == [("users",)]


def test_sys_partitions_has_one_row_per_partition_of_partitioned_tables(pai):
    df = pai.sql("SELECT * FROM sys.partitions")
    assert df.columns == ["database_name", "table_name", "partition_name", "record_count", "file_size_in_bytes",
                          "file_count", "last_file_creation_time", "done"]
    rows = _rows(df.select("database_name", "table_name", "partition_name", "record_count", "file_count", "done"))
    assert rows == [("shop", "orders", "day=2024-03-01", 2, 1, False), ("shop", "orders", "day=2024-03-02", 1, 1, False)]
    sizes = {r["partition"]: r["file_size_in_bytes"]
             for r in pai.load_table("shop.orders").metadata_table("partitions").to_pylist()}
    assert {r.partition_name: r.file_size_in_bytes for r in df.collect()} == sizes


def test_sys_all_table_options_lists_each_tables_options(pai):
    rows = _rows(pai.sql("SELECT * FROM sys.all_table_options WHERE key = 'bucket'"))
    assert rows == [("shop", "orders", "bucket", "-1"), ("shop", "users", "bucket", "1")]
    df = pai.sql("SELECT * FROM sys.all_table_options WHERE key = 'path'")
    assert df.columns == ["database_name", "table_name", "key", "value"]
    assert dict((r.table_name, r.value) for r in df.collect())["orders"] == pai.load_table("shop.orders").location


def test_use_sys_then_show_tables_and_one_part_names(pai):
    pai.sql("USE sys")
    assert _rows(pai.sql("SHOW TABLES")) == [("sys", "all_table_options", False), ("sys", "partitions", False),
                                             ("sys", "tables", False)]
    assert pai.sql("SELECT count(*) FROM tables").first()[0] == 3
    assert pai.sql("SELECT count(*) FROM partitions WHERE table_name = 'orders'").first()[0] == 2
    pai.sql("USE shop")
    assert pai.sql("SELECT count(*) FROM orders").first()[0] == 3


def test_catalog_options_exists_only_when_the_catalog_enables_it(pai, spark):
    with pytest.raises(SqlError) as e:
        pai.sql("SELECT * FROM sys.catalog_options")
    assert "catalog-options-table.enabled" in str(e.value)
    c = icefloe.Catalog(pai.warehouse, format="paimon", spark=spark,
                        **{"catalog-options-table.enabled": "true", "s3.secret-access-key": "hidden"})
    rows = dict(_rows(c.sql("SELECT * FROM sys.catalog_options")))
    assert rows["warehouse"] == c.warehouse and rows["catalog-options-table.enabled"] == "true"
    assert rows["s3.secret-access-key"] == "******"
    assert ("sys", "catalog_options", False) in _rows(c.sql("SHOW TABLES IN sys"))


def test_unknown_sys_table_and_time_travel_are_refused_naming_the_tables(pai):
    with pytest.raises(SqlError) as e:
        pai.sql("SELECT * FROM sys.snapshots")
    assert "no table snapshots" in str(e.value) and "tables, partitions, all_table_options" in str(e.value)
    with pytest.raises(SqlError) as e:
        pai.sql("SELECT * FROM sys.tables VERSION AS OF 1")
    assert "no VERSION or TIMESTAMP AS OF" in str(e.value)


def test_an_iceberg_catalogs_sys_is_a_plain_namespace(catalog):
    catalog.sql("CREATE NAMESPACE sys")
    catalog.sql("CREATE TABLE sys.tables (id bigint) USING iceberg")
    catalog.sql("INSERT INTO sys.tables VALUES (7)")
    assert [tuple(r) for r in catalog.sql("SELECT * FROM sys.tables").collect()] == [(7,)]


def test_create_table_location_is_refused_with_paimons_reason(pai, tmp_path):
    from icefloe.errors import NotSupportedError

    for text in (f"CREATE TABLE shop.ext (id INT) LOCATION '{tmp_path / 'ext'}'",
                 f"CREATE TABLE shop.ext LIKE shop.orders LOCATION '{tmp_path / 'ext'}'"):
        with pytest.raises(NotSupportedError) as e:
            pai.sql(text)
        assert "Paimon filesystem catalog keeps each table" in str(e.value) and "Hive or REST catalog" in str(e.value)
    assert not pai.table_exists("shop.ext") and not (tmp_path / "ext").exists()
