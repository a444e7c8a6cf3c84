"""Where the Iceberg statements of the documentation put a table: ``CALL system.snapshot(source, table,
location)`` (spark-procedures) and ``CREATE TABLE ... LOCATION`` (spark-ddl) on a SQL catalog place the
table at the location (its metadata and data files under it, its rows read back); a directory catalog
refuses the location with its true reason (the path is the table's identity, as Iceberg's HadoopCatalog
has it); ``register_table`` of a metadata file that lies outside any ``metadata`` directory adopts the
table where its metadata says it lives, and the next commit writes there."""
import os
import shutil

import pytest

import icefloe
from icefloe.sql import SqlError


@pytest.fixture
def sqlcat(tmp_path, spark):
    c = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'cat.db'}", spark=spark)
    c.sql("CREATE NAMESPACE db")
    return c


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _dirs, fs in os.walk(root) for f in fs)


# --------------------------------------------------------------------------- spark-procedures: snapshot
def test_snapshot_with_a_location_places_the_new_table_there_on_a_sql_catalog(sqlcat, tmp_path, spark):
    spark.range(3).selectExpr("id", "cast(id as string) AS name").write.parquet(str(tmp_path / "pq"))
    where = tmp_path / "temptable"
    out = sqlcat.sql(f"CALL system.snapshot('`parquet`.`{tmp_path / 'pq'}`', 'db.snap', '{where}/')").collect()
    assert out[0].imported_files_count >= 1
    t = sqlcat.load_table("db.snap")
    assert t.location == str(where)
    assert t.metadata_location.startswith(f"{where}/metadata/")
    assert t.properties.get("gc.enabled") == "false"         # the snapshot owns none of the source files
    assert _rows(sqlcat.sql("SELECT id, name FROM db.snap")) == [(0, "0"), (1, "1"), (2, "2")]
    sqlcat.sql("INSERT INTO db.snap VALUES (9, 'z')")
    assert _rows(sqlcat.sql("SELECT id FROM db.snap")) == [(0,), (1,), (2,), (9,)]
    written = _files(where)
    assert any(f.startswith("data/") and f.endswith(".parquet") for f in written)     # the new rows go there
    assert not os.path.exists(tmp_path / "wh" / "db" / "snap")                       # nothing in the warehouse
    # the source directory is untouched, and a second table cannot take the same location
    assert len([f for f in _files(tmp_path / "pq") if f.endswith(".parquet")]) == out[0].imported_files_count
    with pytest.raises(SqlError, match="never share a location"):
        sqlcat.sql(f"CALL system.snapshot('`parquet`.`{tmp_path / 'pq'}`', 'db.snap2', '{where}/inner')")
    assert not sqlcat.table_exists("db.snap2")


def test_snapshot_with_another_location_is_refused_by_a_directory_catalog_with_its_reason(catalog, tmp_path,
                                                                                          spark):
    catalog.sql("CREATE NAMESPACE db")
    spark.range(2).selectExpr("id").write.parquet(str(tmp_path / "pq"))
    with pytest.raises(SqlError, match=r"CALL system.snapshot.*path is the table's identity.*HadoopCatalog"):
        catalog.sql(f"CALL system.snapshot('`parquet`.`{tmp_path / 'pq'}`', 'db.snap', '{tmp_path / 'elsewhere'}')")
    assert not catalog.table_exists("db.snap")
    assert not os.path.exists(tmp_path / "elsewhere")
    # its own directory is a location it takes
    own = catalog.table_location("db.snap")
    catalog.sql(f"CALL system.snapshot('`parquet`.`{tmp_path / 'pq'}`', 'db.snap', '{own}')")
    assert _rows(catalog.sql("SELECT id FROM db.snap")) == [(0,), (1,)]


# --------------------------------------------------------------------------- spark-ddl: CREATE TABLE ... LOCATION
def test_create_table_location_on_a_sql_catalog_writes_the_table_there(sqlcat, tmp_path):
    where = tmp_path / "ext" / "events"
    sqlcat.sql(f"CREATE TABLE db.events (id bigint, data string) USING iceberg LOCATION '{where}'")
    sqlcat.sql("INSERT INTO db.events VALUES (1, 'a'), (2, 'b')")
    t = sqlcat.load_table("db.events")
    assert t.location == str(where) and t.metadata.location == str(where)
    written = _files(where)
    assert sum(f.startswith("metadata/") and f.endswith(".metadata.json") for f in written) == 2
    assert any(f.startswith("data/") for f in written)
    assert _rows(sqlcat.sql("SELECT * FROM db.events")) == [(1, "a"), (2, "b")]
    # CTAS too; and a location inside another table's is refused, nothing created
    sqlcat.sql(f"CREATE TABLE db.copy USING iceberg LOCATION '{tmp_path / 'ext' / 'copy'}' AS SELECT * FROM db.events")
    assert sqlcat.load_table("db.copy").location == str(tmp_path / "ext" / "copy")
    assert _rows(sqlcat.sql("SELECT * FROM db.copy")) == [(1, "a"), (2, "b")]
    with pytest.raises(SqlError, match="never share a location"):
        sqlcat.sql(f"CREATE TABLE db.nested (id bigint) USING iceberg LOCATION '{where}/data'")
    assert not sqlcat.table_exists("db.nested")


def test_create_table_location_on_a_directory_catalog_is_refused_with_its_reason(catalog, tmp_path):
    catalog.sql("CREATE NAMESPACE db")
    with pytest.raises(SqlError, match="CREATE TABLE ... LOCATION.*table's identity"):
        catalog.sql(f"CREATE TABLE db.t (id bigint) USING iceberg LOCATION '{tmp_path / 'x'}'")
    assert not catalog.table_exists("db.t") and not os.path.exists(tmp_path / "x")


# --------------------------------------------------------------------------- spark-procedures: register_table
def test_register_table_of_a_metadata_file_anywhere_lives_where_its_metadata_says(sqlcat, tmp_path, spark):
    other = icefloe.Catalog(str(tmp_path / "other"), spark=spark)
    other.sql("CREATE NAMESPACE db")
    other.sql("CREATE TABLE db.t (id bigint, name string) USING iceberg")
    other.sql("INSERT INTO db.t VALUES (1, 'a')")
    src = other.load_table("db.t")
    copied = tmp_path / "registered.metadata.json"          # a metadata file outside any metadata directory
    shutil.copy(src.metadata_location.replace("file:", ""), copied)
    out = sqlcat.sql(f"CALL system.register_table(table => 'db.registered', metadata_file => '{copied}')").collect()
    assert (out[0].current_snapshot_id, out[0].total_records_count) == (src.current_snapshot().snapshot_id, 1)
    t = sqlcat.load_table("db.registered")
    assert t.location == src.location
    sqlcat.sql("INSERT INTO db.registered VALUES (2, 'b')")
    t = sqlcat.load_table("db.registered")
    assert t.metadata_location.startswith(f"{src.location}/metadata/")     # the next commit writes there
    assert _rows(sqlcat.sql("SELECT * FROM db.registered")) == [(1, "a"), (2, "b")]
    # the warehouse's own tables still may not lie inside it
    with pytest.raises(SqlError, match="never share a location"):
        sqlcat.sql(f"CREATE TABLE db.inside (id bigint) USING iceberg LOCATION '{src.location}/x'")
