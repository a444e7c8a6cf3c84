"""Paimon's hidden metadata columns in SELECT (Paimon's Spark sql-query page):
``__paimon_file_path``, ``__paimon_row_index``, ``__paimon_partition``, ``__paimon_bucket``,
checked against the data files the snapshot's manifests list and the rows in those files."""
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.sql.errors import NotSupportedYetError


class _Row:
    """A row whose metadata columns read as attributes without their prefix (Spark's Row refuses
    attribute names that start with two underscores)."""

    def __init__(self, row):
        for k, v in row.asDict().items():
            setattr(self, k.removeprefix("__paimon_"), v)


@pytest.fixture
def pcat(warehouse, spark):
    return icefloe.Catalog(warehouse, format="paimon", spark=spark)


def test_append_table_metadata_columns_are_the_files_positions_partitions_and_buckets(pcat):
    pcat.sql("CREATE TABLE default.m (id int, v string, dt string) PARTITIONED BY (dt) "
             "TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id')")
    pcat.sql("INSERT INTO default.m VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y'), (4, 'd', 'x')")
    pcat.sql("INSERT INTO default.m VALUES (5, 'e', 'y')")
    # SELECT * leaves them out; the doc's query gives them after the table's columns
    assert pcat.sql("SELECT * FROM default.m").columns == ["id", "v", "dt"]
    df = pcat.sql("SELECT *, __paimon_file_path, __paimon_partition, __paimon_bucket, __paimon_row_index "
                  "FROM default.m")
    assert df.columns == ["id", "v", "dt", "__paimon_file_path", "__paimon_partition", "__paimon_bucket",
                          "__paimon_row_index"]
    assert df.schema["__paimon_partition"].dataType.simpleString() == "struct<dt:string>"
    rows = [_Row(r) for r in df.collect()]
    assert sorted(r.id for r in rows) == [1, 2, 3, 4, 5]
    t = pcat.load_table("default.m")
    entries = {e.file.file_path: e for e in t.plan()}
    assert {r.file_path for r in rows} == set(entries)
    for r in rows:
        e = entries[r.file_path]
        assert r.bucket == e.bucket
        assert r.partition.dt == r.dt == t.store.partition_values(e.partition)[0]
        stored = pq.read_table(r.file_path).to_pylist()
        assert stored[r.row_index]["id"] == r.id
    # the bucket is Paimon's for the key: rows of one key always land in the same bucket
    assert len({r.bucket for r in rows}) == 2
    # usable like any column: a filter, a qualified name through an alias, alias.* written out
    one = pcat.sql("SELECT id FROM default.m WHERE __paimon_bucket = 0 ORDER BY id").collect()
    assert [r.id for r in one] == sorted(r.id for r in rows if r.bucket == 0)
    q = pcat.sql("SELECT x.*, x.__paimon_row_index FROM default.m AS x WHERE x.id = 5")
    assert q.columns == ["id", "v", "dt", "__paimon_row_index"] and q.collect()[0][3] == 0


def _bucket_of_keys(table):
    """{key: bucket} from the planned data files themselves."""
    out = {}
    for e in table.plan():
        for r in pq.read_table(e.file.file_path, columns=["id"]).to_pylist():
            out.setdefault(r["id"], set()).add(e.bucket)
    return {k: b.pop() for k, b in out.items() if len(b) == 1}


def test_primary_key_table_file_and_position_only_once_compacted(pcat):
    pcat.sql("CREATE TABLE default.k (id int, v string) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2', "
             "'write-only' = 'true')")
    pcat.sql("INSERT INTO default.k VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    pcat.sql("INSERT INTO default.k VALUES (1, 'z'), (4, 'y')")
    # rows merged from two files have no one file: refused with the way out, as Paimon does
    with pytest.raises(NotSupportedYetError, match="fully compacted.*compact"):
        pcat.sql("SELECT id, __paimon_file_path FROM default.k")
    # the partition and bucket of a merged row are known (an unpartitioned table: the empty struct)
    part = pcat.sql("SELECT id, v, __paimon_partition, __paimon_bucket FROM default.k")
    assert part.schema["__paimon_partition"].dataType.simpleString() == "struct<>"
    got = sorted((r.id, r.v, r[3]) for r in part.collect())
    buckets = _bucket_of_keys(pcat.load_table("default.k"))
    assert got == [(1, "z", buckets[1]), (2, "b", buckets[2]), (3, "c", buckets[3]), (4, "y", buckets[4])]
    assert len(set(buckets.values())) == 2
    pcat.sql("CALL sys.compact(table => 'default.k')")
    rows = [_Row(r) for r in pcat.sql("SELECT *, __paimon_file_path, __paimon_row_index, __paimon_bucket "
                                      "FROM default.k").collect()]
    assert sorted((r.id, r.v) for r in rows) == [(1, "z"), (2, "b"), (3, "c"), (4, "y")]
    entries = {e.file.file_path: e for e in pcat.load_table("default.k").plan()}
    assert len(entries) == 2 and {r.file_path for r in rows} == set(entries)
    for r in rows:
        assert pq.read_table(r.file_path).to_pylist()[r.row_index]["v"] == r.v
        assert r.bucket == entries[r.file_path].bucket == buckets[r.id]
