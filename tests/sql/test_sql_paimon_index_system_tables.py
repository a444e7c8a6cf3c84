"""Paimon's system tables ``$file_key_ranges``, ``$aggregation_fields`` and ``$table_indexes`` (Paimon's
docs: concepts/system-tables) with Paimon's columns and the table's true values."""
import pyarrow as pa
import pytest

import icefloe
from icefloe.paimon import deletion_vectors as dv


@pytest.fixture(scope="module")
def pai(tmp_path_factory, spark):
    c = icefloe.Catalog(str(tmp_path_factory.mktemp("idx") / "pwh"), format="paimon", spark=spark)
    c.sql("CREATE DATABASE db")
    return c


def test_file_key_ranges_gives_each_files_key_range_partition_and_format(pai):
    pai.sql("CREATE TABLE db.sales (id INT NOT NULL, d STRING, v BIGINT) PARTITIONED BY (d) "
            "TBLPROPERTIES ('primary-key' = 'id,d', 'bucket' = '1')")
    pai.sql("INSERT INTO db.sales VALUES (3, 'x', 1), (1, 'x', 2), (2, 'y', 3)")
    df = pai.sql("SELECT * FROM db.`sales$file_key_ranges`")
    assert df.columns == ["partition", "bucket", "file_path", "file_format", "schema_id", "level", "record_count",
                          "file_size_in_bytes", "min_key", "max_key", "first_row_id"]
    rows = sorted((r.partition, r.bucket, r.file_format, r.record_count, r.min_key, r.max_key, r.first_row_id)
                  for r in df.collect())
    assert rows == [("{x}", 0, "parquet", 2, "[1]", "[3]", None), ("{y}", 0, "parquet", 1, "[2]", "[2]", None)]
    files = {f["file_path"]: f["file_size_in_bytes"] for f in pai.load_table("db.sales").metadata_table("files").to_pylist()}
    assert {r.file_path: r.file_size_in_bytes for r in df.collect()} == files
    # an append table has no key: the range is null
    pai.sql("CREATE TABLE db.logs (id INT, d DATE)")
    pai.sql("INSERT INTO db.logs VALUES (1, DATE'2024-01-02')")
    r = pai.sql("SELECT partition, min_key, max_key FROM db.`logs$file_key_ranges`").first()
    assert tuple(r) == ("{}", None, None)


def test_aggregation_fields_lists_each_columns_field_options(pai):
    pai.sql("CREATE TABLE db.agg (id INT NOT NULL COMMENT 'the key', price INT, sales BIGINT) TBLPROPERTIES ("
            "'primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'aggregation', "
            "'fields.price.aggregate-function' = 'max', 'fields.sales.aggregate-function' = 'sum', "
            "'fields.sales.ignore-retract' = 'true')")
    rows = [tuple(r) for r in pai.sql("SELECT * FROM db.agg.aggregation_fields").collect()]
    assert rows == [("id", "INT NOT NULL", "[]", "[]", "the key"),
                    ("price", "INT", "[max]", "[fields.price.aggregate-function]", None),
                    ("sales", "BIGINT", "[sum, true]", "[fields.sales.aggregate-function, fields.sales.ignore-retract]",
                     None)]
    pai.sql("ALTER TABLE db.agg SET TBLPROPERTIES ('fields.price.aggregate-function' = 'min')")
    assert pai.sql("SELECT function FROM db.`agg$aggregation_fields` WHERE field_name = 'price'").first()[0] == "[min]"


def test_table_indexes_lists_hash_indexes_and_deletion_vectors(pai, spark):
    pai.sql("CREATE TABLE db.dyn (id INT NOT NULL, d STRING) PARTITIONED BY (d) "
            "TBLPROPERTIES ('primary-key' = 'id,d', 'bucket' = '-1')")
    pai.sql("INSERT INTO db.dyn VALUES (1, 'x'), (2, 'x'), (3, 'y')")
    df = pai.sql("SELECT * FROM db.`dyn$table_indexes`")
    assert df.columns == ["partition", "bucket", "index_type", "file_name", "file_size", "row_count", "dv_ranges",
                          "row_range_start", "row_range_end", "index_field_id", "index_field_name"]
    rows = sorted((r.partition, r.bucket, r.index_type, r.row_count, r.dv_ranges) for r in df.collect())
    assert rows == [("{x}", 0, "HASH", 2, None), ("{y}", 0, "HASH", 1, None)]
    t = pai.load_table("db.dyn")
    for r in df.collect():
        assert t.io.exists(f"{t.location}/index/{r.file_name}") and r.file_size == 4 * r.row_count   # 4-byte hashes

    t = pai.create_table("db.dv", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "1", "deletion-vectors.enabled": "true"})
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}))
    t.append(pa.table({"id": pa.array([2], pa.int64()), "v": ["B"]}))
    vectors = dv.bucket_vectors(t.store, t.current_snapshot())
    assert len(vectors) == 1
    (bv,) = vectors.values()
    r = pai.sql("SELECT * FROM db.`dv$table_indexes`").first()
    assert (r.partition, r.bucket, r.index_type, r.file_name, r.file_size) == ("{}", 0, "DELETION_VECTORS",
                                                                                bv.file_name, bv.file_size)
    assert [(x.f0, x.f1, x.f2, x._CARDINALITY) for x in r.dv_ranges] == \
        [(name, off, size, card) for name, (off, size, card) in bv.ranges.items()]
    assert r.dv_ranges[0]._CARDINALITY == 1
    # time travel: the first snapshot's index manifest had no vectors
    assert pai.sql("SELECT count(*) FROM db.`dv$table_indexes` VERSION AS OF 1").first()[0] == 0
