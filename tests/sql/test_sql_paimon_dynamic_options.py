"""``SET spark.paimon.<key>`` goes through the audit of Paimon's options: options with nothing for
icefloe to do are taken, refused ones are errors giving the audit's reason; and Paimon's Spark write
option ``write.merge-schema`` lets ``INSERT ... BY NAME`` add the query's new columns (Paimon's docs:
spark/sql-write, "Write Merge Schema")."""
import glob
import json
import os

import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.sql import SqlError


@pytest.fixture
def pai(tmp_path, spark):
    c = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=spark)
    c.sql("CREATE DATABASE db")
    c.sql("CREATE TABLE db.t (a INT, b STRING)")
    c.sql("INSERT INTO db.t VALUES (1, '1'), (2, '2')")
    yield c
    for k in list(spark.conf.getAll):
        if k.startswith("spark.paimon."):
            spark.conf.unset(k)


def test_accepted_options_are_taken_and_refused_ones_give_the_audits_reason(pai, spark):
    pai.sql("SET spark.paimon.write-buffer-size = 512 mb")
    assert spark.conf.get("spark.paimon.write-buffer-size") == "512 mb"
    assert pai.sql("SELECT count(*) FROM db.t").first()[0] == 2         # reads go on as before
    with pytest.raises(SqlError, match="'file.compression.per.level'.*every level"):
        pai.sql("SET spark.paimon.file.compression.per.level=0:lz4")
    with pytest.raises(SqlError, match="'num-levels'.*as a table option"):
        pai.sql("SET spark.paimon.num-levels=3")
    with pytest.raises(SqlError, match="'bucket'.*as a table option"):
        pai.sql("SET spark.paimon.*.db.t.bucket = 4")
    with pytest.raises(SqlError, match="'write.merge-schema.explicit-cast'"):
        pai.sql("SET spark.paimon.write.merge-schema.explicit-cast = true")
    assert "spark.paimon.num-levels" not in spark.conf.getAll


def test_merge_schema_insert_by_name_adds_the_new_column(pai):
    with pytest.raises(SqlError, match="column c is not a column of the table"):
        pai.sql("INSERT INTO db.t BY NAME SELECT 3 AS a, '3' AS b, 3 AS c")     # without the setting
    pai.sql("SET `spark.paimon.write.merge-schema` = true")
    pai.sql("INSERT INTO db.t BY NAME SELECT 3 AS a, '3' AS b, 3 AS c")
    t = pai.load_table("db.t")
    assert t.schema.column_names == ["a", "b", "c"]
    assert [f["name"] for f in __import__("json").loads(t.metadata_table("schemas").to_pylist()[-1]["fields"])] == \
        ["a", "b", "c"]
    assert sorted(tuple(r) for r in pai.sql("SELECT * FROM db.t").collect()) == \
        [(1, "1", None), (2, "2", None), (3, "3", 3)]
    # scoped to another table: not this one's
    pai.sql("RESET spark.paimon.write.merge-schema")
    pai.sql("SET spark.paimon.*.db.other.write.merge-schema = true")
    with pytest.raises(SqlError, match="column d is not a column of the table"):
        pai.sql("INSERT INTO db.t BY NAME SELECT 4 AS a, 4 AS d")
    assert pai.load_table("db.t").schema.column_names == ["a", "b", "c"]


def _new_files(root, before):
    now = set(glob.glob(os.path.join(root, "db.db", "t", "bucket-*", "data-*")))
    return sorted(now - before), now


def test_session_file_options_write_the_files_and_leave_the_schema(pai, spark, tmp_path):
    """``SET spark.paimon.file.block-size`` (and the other file options) for every table or one: the
    statements writing a table write its files so; the schema file keeps the table's own options."""
    root = str(tmp_path / "pwh")
    rows = "SELECT id, repeat(cast(id AS STRING), 40) FROM range(3000)"
    new, seen = _new_files(root, set())
    pai.sql(f"INSERT INTO db.t {rows}")
    new, seen = _new_files(root, seen)
    assert new and max(pq.ParquetFile(f).num_row_groups for f in new) == 1       # the table's own sizes
    pai.sql("SET spark.paimon.file.block-size = 8kb")
    pai.sql("SET spark.paimon.file.compression = snappy")
    pai.sql(f"INSERT INTO db.t {rows}")
    new, seen = _new_files(root, seen)
    metas = [pq.ParquetFile(f).metadata for f in new]
    assert min(m.num_row_groups for m in metas) > 2
    assert {m.row_group(0).column(0).compression for m in metas} == {"SNAPPY"}
    # the format's own key, for one table only; another table's setting is not this one's
    pai.sql("RESET spark.paimon.file.block-size")
    pai.sql("SET spark.paimon.*.db.other.file.format = orc")
    pai.sql("SET spark.paimon.local.db.t.parquet.block.size = 8kb")
    pai.sql("DELETE FROM db.t WHERE a = 2")
    new, seen = _new_files(root, seen)
    assert new and all(f.endswith(".parquet") for f in new)
    assert max(pq.ParquetFile(f).num_row_groups for f in new) > 1
    pai.sql("SET spark.paimon.*.db.t.file.format = orc")
    pai.sql("INSERT INTO db.t VALUES (7, '7')")
    new, seen = _new_files(root, seen)
    assert len(new) == 1 and new[0].endswith(".orc")
    pai.sql("RESET spark.paimon.*.db.other.file.format")
    pai.sql("SET spark.paimon.file.format = avro")                 # every table's writes, CREATE TABLE AS too
    with pytest.raises(SqlError, match="'snappy' is not an Avro codec"):         # still set from above
        pai.sql("CREATE TABLE db.c AS SELECT 1 AS x")
    assert not pai.table_exists("db.c")                          # CTAS all or nothing
    pai.sql("RESET spark.paimon.file.compression")
    pai.sql("CREATE TABLE db.c AS SELECT 1 AS x")
    assert [f.rsplit(".", 1)[-1] for f in glob.glob(os.path.join(root, "db.db", "c", "bucket-*", "data-*"))] == \
        ["avro"]
    assert pai.sql("SELECT x FROM db.c").first()[0] == 1 and pai.load_table("db.c").options.get("file.format") is None
    t = pai.load_table("db.t")
    assert t.table_schema.id == 0 and t.options == {}             # no schema written, no option kept
    assert json.loads(open(os.path.join(root, "db.db", "t", "schema", "schema-0")).read())["options"] == {}
    assert pai.sql("SELECT count(*), sum(a) FROM db.t").first()[:] == (6000, 2 * sum(range(3000)) + 4)   # 2s deleted, 7 added


def test_session_file_options_that_no_file_takes_are_errors(pai, spark):
    with pytest.raises(SqlError, match="file.format 'csv' is not supported"):
        pai.sql("SET spark.paimon.file.format = csv")
    with pytest.raises(SqlError, match="file.block-size"):
        pai.sql("SET spark.paimon.file.block-size = lots")
    assert not any(k.startswith("spark.paimon.") for k in spark.conf.getAll)
    pai.sql("SET spark.paimon.file.format = avro")
    pai.sql("SET spark.paimon.*.db.t.file.block-size = 1mb")        # Avro files have no row groups
    with pytest.raises(SqlError, match="'file.block-size'.*Avro"):
        pai.sql("INSERT INTO db.t VALUES (3, '3')")
    pai.sql("RESET spark.paimon.*.db.t.file.block-size")
    pai.sql("INSERT INTO db.t VALUES (3, '3')")
    assert pai.sql("SELECT count(*) FROM db.t").first()[0] == 3


def test_replace_as_select_refuses_the_session_file_options_it_cannot_apply(pai, spark):
    pai.sql("SET spark.paimon.file.block-size = 1mb")
    before = pai.sql("SELECT count(*) FROM db.`t$snapshots`").first()[0]
    with pytest.raises(SqlError, match=r"session's Paimon options file.block-size=1mb"):
        pai.sql("CREATE OR REPLACE TABLE db.t AS SELECT 9 AS a, 'x' AS b")
    assert pai.sql("SELECT count(*) FROM db.`t$snapshots`").first()[0] == before
    assert sorted(tuple(r) for r in pai.sql("SELECT * FROM db.t").collect()) == [(1, "1"), (2, "2")]
    pai.sql("RESET spark.paimon.file.block-size")
    pai.sql("CREATE OR REPLACE TABLE db.t AS SELECT 9 AS a, 'x' AS b")
    assert [tuple(r) for r in pai.sql("SELECT * FROM db.t").collect()] == [(9, "x")]
