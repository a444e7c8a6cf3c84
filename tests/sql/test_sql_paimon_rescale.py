"""Paimon's bucket rescale: ``ALTER TABLE ... SET TBLPROPERTIES ('bucket' = 'N')`` on fixed-bucket
tables, writes refused to a partition whose files have another bucket number (unless an overwrite),
``CALL sys.rescale`` rewriting partitions into new buckets, and reads using each file's own
``_TOTAL_BUCKETS``; checked on the manifest entries and the rows."""
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.paimon.bucket import bucket_of
from icefloe.sql.errors import SqlError


@pytest.fixture
def pcat(warehouse, spark):
    return icefloe.Catalog(warehouse, format="paimon", spark=spark)


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _layout(t):
    """{partition values: {(bucket, total_buckets)}} of the live files."""
    t.refresh()
    out = {}
    for e in t.plan():
        out.setdefault(t.store.partition_values(e.partition), set()).add((e.bucket, e.total_buckets))
    return out


def _data(**cols):
    return pa.table({k: pa.array(v, pa.int32()) if k in ("id", "k", "hh") else pa.array(v, pa.string())
                     for k, v in cols.items()})


def _arrow_rows(t, where=None):
    t.refresh()
    return sorted(tuple(r.values()) for r in t.to_arrow(where=where).to_pylist())


def _keys_in_right_buckets(t, key):
    """Every live file holds only keys whose hash picks its bucket among its own total_buckets."""
    types = [f.type for f in t.table_schema.fields if f.name == key]
    for e in t.plan():
        keys = set(pq.read_table(e.file.file_path, columns=[key]).column(key).to_pylist())
        assert {bucket_of([k], types, e.total_buckets) for k in keys} == {e.bucket}, e


def _totals(t):
    return {p: {total for _, total in v} for p, v in _layout(t).items()}


def _schema_files(warehouse, name):
    return sorted(os.listdir(os.path.join(warehouse, "default.db", name, "schema")))


def _snapshots(t):
    t.refresh()
    return [s.id for s in t.snapshots()]


def test_alter_bucket_then_writes_follow_paimon(pcat, warehouse):
    pcat.sql("CREATE TABLE default.rp (id int, v string, dt string) PARTITIONED BY (dt) "
             "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2')")
    t = pcat.load_table("default.rp")
    t.append(_data(id=[1, 2, 3, 4], v=["a", "b", "c", "d"], dt=["d1"] * 4))
    pcat.sql("ALTER TABLE default.rp SET TBLPROPERTIES ('bucket' = '4')")
    t.refresh()
    assert t.table_schema.options["bucket"] == "4"
    assert _totals(t) == {("d1",): {2}}               # ALTER rewrites nothing
    # reads (bucket pruning by key included) use each file's own total
    assert _arrow_rows(t, "id = 3") == [(3, "c", "d1")]
    assert [e.bucket for e in t.plan("id = 3")] == [bucket_of([3], [t.table_schema.fields[0].type], 2)]
    # an old partition refuses rows without an overwrite (SQL and API), and nothing is written
    before = _snapshots(t)
    with pytest.raises(Exception, match=r"Try to write partition \{dt=d1\} with a new bucket num 4, but the previous "
                                        r"bucket num is 2"):
        pcat.sql("INSERT INTO default.rp VALUES (5, 'e', 'd1')")
    with pytest.raises(Exception, match="previous bucket num is 2"):
        t.append(_data(id=[5], v=["e"], dt=["d1"]))
    assert _snapshots(t) == before and _totals(t) == {("d1",): {2}}
    # a new partition takes the new number
    t.append(_data(id=[6], v=["f"], dt=["d2"]))
    assert _totals(t) == {("d1",): {2}, ("d2",): {4}}
    # INSERT OVERWRITE of the old partition rewrites it with the new number
    t.overwrite(_data(id=[1, 2, 3, 4], v=["a", "b", "c", "d"], dt=["d1"] * 4), partition={"dt": "d1"})
    assert _totals(t) == {("d1",): {4}, ("d2",): {4}}
    _keys_in_right_buckets(t, "id")
    t.append(_data(id=[5], v=["e"], dt=["d1"]))
    assert [r[0] for r in _arrow_rows(t)] == [1, 2, 3, 4, 5, 6]


def test_alter_bucket_refusals_leave_the_schema(pcat, warehouse):
    pcat.sql("CREATE TABLE default.fb (id int, v string) TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id')")
    pcat.sql("CREATE TABLE default.dyn (id int, v string) TBLPROPERTIES ('primary-key' = 'id')")
    pcat.sql("CREATE TABLE default.ua (id int, v string)")
    cases = [("fb", "'bucket' = '-1'", "Cannot change bucket to -1"),
             ("fb", "'bucket' = '0'", "greater than 0"),
             ("fb", "'bucket' = '-2'", "postpone-bucket"),
             ("fb", "'bucket' = 'four'", "whole number"),
             ("dyn", "'bucket' = '4'", "Cannot change bucket when it is -1"),
             ("ua", "'bucket' = '4'", "Cannot change bucket when it is -1")]
    for name, props, message in cases:
        files = _schema_files(warehouse, name)
        with pytest.raises(Exception, match=message):
            pcat.sql(f"ALTER TABLE default.{name} SET TBLPROPERTIES ({props})")
        assert _schema_files(warehouse, name) == files
    with pytest.raises(Exception, match="Cannot reset bucket"):
        pcat.sql("ALTER TABLE default.fb UNSET TBLPROPERTIES ('bucket')")
    assert pcat.load_table("default.fb").table_schema.options["bucket"] == "2"


def test_rescale_primary_key_table_keeps_the_merged_view(pcat):
    pcat.sql("CREATE TABLE default.rk (id int, v string, dt string) PARTITIONED BY (dt) "
             "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2')")
    t = pcat.load_table("default.rk")
    t.append(_data(id=[1, 2, 3, 4], v=["a", "b", "c", "d"], dt=["d1", "d1", "d2", "d2"]))
    t.append(_data(id=[1, 3, 5], v=["a2", "c2", "e"], dt=["d1", "d2", "d1"]))
    merged = _arrow_rows(t)
    assert merged == [(1, "a2", "d1"), (2, "b", "d1"), (3, "c2", "d2"), (4, "d", "d2"), (5, "e", "d1")]
    pcat.sql("ALTER TABLE default.rk SET TBLPROPERTIES ('bucket' = '3')")
    assert _rows(pcat.sql("CALL sys.rescale(table => 'default.rk', bucket_num => 3, partitions => 'dt=\"d1\"')")) \
        == [(True,)]
    t.refresh()
    assert t.current_snapshot().commit_kind == "OVERWRITE"
    assert _totals(t) == {("d1",): {3}, ("d2",): {2}}
    _keys_in_right_buckets(t, "id")
    assert _arrow_rows(t) == merged
    # without bucket_num: the table's option; without partitions: every partition
    pcat.sql("CALL sys.rescale(table => 'default.rk')")
    assert _totals(t) == {("d1",): {3}, ("d2",): {3}}
    _keys_in_right_buckets(t, "id")
    assert _arrow_rows(t) == merged
    assert _rows(pcat.sql("SELECT v FROM default.rk WHERE id = 5")) == [("e",)]
    t.append(_data(id=[5], v=["e2"], dt=["d1"]))
    assert _arrow_rows(t, "id = 5") == [(5, "e2", "d1")]


def test_rescale_bucketed_append_table_unpartitioned(pcat):
    pcat.sql("CREATE TABLE default.ra (k int, v string) TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'k')")
    t = pcat.load_table("default.ra")
    t.append(_data(k=[1, 2, 3, 1], v=["a", "b", "c", "a"]))
    rows = _arrow_rows(t)
    pcat.sql("ALTER TABLE default.ra SET TBLPROPERTIES ('bucket' = '4')")
    with pytest.raises(Exception, match="Try to write table with a new bucket num 4, but the previous bucket num is 2"):
        t.append(_data(k=[6], v=["f"]))
    with pytest.raises(Exception, match="new bucket num 4, but the previous bucket num is 2"):   # copy-on-write too
        pcat.sql("DELETE FROM default.ra WHERE k = 1")
    assert _arrow_rows(t) == rows and _totals(t) == {(): {2}}
    assert _rows(pcat.sql("CALL sys.rescale(table => 'default.ra', bucket_num => 4)")) == [(True,)]
    assert _totals(t) == {(): {4}}
    _keys_in_right_buckets(t, "k")
    assert _arrow_rows(t) == rows          # duplicates kept
    assert _arrow_rows(t, "k = 3") == [(3, "c")]
    t.append(_data(k=[6], v=["f"]))
    assert len(_arrow_rows(t)) == 5
    # a rescale to another number than the option's: that number in the entries, then writes refused
    pcat.sql("CALL sys.rescale(table => 'default.ra', bucket_num => 3)")
    assert _totals(t) == {(): {3}}
    _keys_in_right_buckets(t, "k")
    assert t.table_schema.options["bucket"] == "4"
    with pytest.raises(Exception, match="new bucket num 4, but the previous bucket num is 3"):
        t.append(_data(k=[7], v=["g"]))
    assert _arrow_rows(t, "k = 6") == [(6, "f")]


def test_rescale_where_and_bad_input(pcat, warehouse):
    pcat.sql("CREATE TABLE default.rw (id int, v string, dt string, hh int) PARTITIONED BY (dt, hh) "
             "TBLPROPERTIES ('primary-key' = 'id,dt,hh', 'bucket' = '2')")
    pcat.load_table("default.rw").append(_data(id=[1, 2, 3], v=["a", "b", "c"], dt=["d1", "d1", "d2"], hh=[0, 1, 0]))
    pcat.sql("ALTER TABLE default.rw SET TBLPROPERTIES ('bucket' = '4')")
    t = pcat.load_table("default.rw")
    pcat.sql("CALL sys.rescale(table => 'default.rw', where => 'dt = \"d1\" AND hh >= 1')")
    assert _totals(t) == {("d1", 0): {2}, ("d1", 1): {4}, ("d2", 0): {2}}
    before = _snapshots(t)
    bad = [("bucket_num => 0", "bucket_num must be a positive number"),
           ("bucket_num => -3", "bucket_num must be a positive number"),
           ("partitions => 'dt=\"d9\"'", "has no partition dt=d9 with data files"),
           ("partitions => 'nope=1'", "'nope' is not a partition key"),
           ("where => 'id = 1'", "where must be a partition predicate; id is not a partition key"),
           ("where => 'dt = \"d9\"'", "chooses no partition"),
           ("partitions => 'dt=d1', where => 'dt = \"d1\"'", "partitions and where cannot be used together")]
    for args, message in bad:
        with pytest.raises(SqlError, match=message):
            pcat.sql(f"CALL sys.rescale(table => 'default.rw', {args})")
        assert _snapshots(t) == before
    assert _totals(t) == {("d1", 0): {2}, ("d1", 1): {4}, ("d2", 0): {2}}
    # a dynamic-bucket table and a table without snapshots
    pcat.sql("CREATE TABLE default.rd (id int, v string) TBLPROPERTIES ('primary-key' = 'id')")
    pcat.load_table("default.rd").append(_data(id=[1], v=["a"]))
    with pytest.raises(SqlError, match=r"dynamic buckets \('bucket' = -1\)"):
        pcat.sql("CALL sys.rescale(table => 'default.rd', bucket_num => 4)")
    assert len(_snapshots(pcat.load_table("default.rd"))) == 1
    pcat.sql("CREATE TABLE default.re (id int, v string) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')")
    with pytest.raises(SqlError, match="has no snapshot, no need to rescale"):
        pcat.sql("CALL sys.rescale(table => 'default.re', bucket_num => 4)")
