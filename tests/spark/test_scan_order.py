"""A merge-on-read DELETE's or UPDATE's rows come to the writing tasks as the scan reads them when
no data file is cut into ranges (``ScanOrder.java``): each task then writes its own files' deletes
and no exchange clusters the rows. Where a file is cut, or the rows come from a join (MERGE), the
rows are clustered by data file first. Either way the delete files name each position in order,
and pyiceberg reads the table as icefloe does."""
import pyarrow.parquet as pq
import pytest

from icefloe.catalog import Catalog
from icefloe.spark import iceberg_change_writer, iceberg_delete_write
from tests.interop_util import pyiceberg_table

MOR = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read",
       "write.merge.mode": "merge-on-read"}


@pytest.fixture
def clustering(monkeypatch):
    """Counts the change jobs whose rows were clustered by an exchange."""
    calls = []
    original = iceberg_delete_write._clustered

    def counted(rows, *args, **kwargs):
        calls.append(rows)
        return original(rows, *args, **kwargs)

    monkeypatch.setattr(iceberg_delete_write, "_clustered", counted)
    return calls


def _table(tmp_path, spark, version: str, rows: int = 20000, row_group_bytes=None):
    props = {"format-version": version, **MOR}
    if row_group_bytes:
        props["write.parquet.row-group-size-bytes"] = str(row_group_bytes)
    t = Catalog(str(tmp_path / "wh"), spark=spark).create_table("db.t", "id bigint not null, name string",
                                                                 properties=props)
    t.append(spark.range(0, rows, 1, 2).selectExpr("id", "concat('n', cast(id as string)) as name"))
    return t


def _pyiceberg_ids(t):
    import glob
    import os

    latest = sorted(glob.glob(os.path.join(t.location, "metadata", "*.metadata.json")))[-1]
    return sorted(pyiceberg_table(latest).scan().to_arrow().column("id").to_pylist())


@pytest.mark.parametrize("version", ["2", "3"])
def test_delete_and_update_of_whole_files_write_where_the_scan_reads(tmp_path, spark, clustering, version):
    t = _table(tmp_path, spark, version)
    assert all(len(f.split_offsets) == 1 for f in t.plan_files())
    t.delete("id % 7 = 1")
    t.update({"name": "'u'"}, where="id % 7 = 2")
    assert clustering == []
    live = [i for i in range(20000) if i % 7 != 1]
    assert sorted(r.id for r in t.to_spark().select("id").collect()) == live == _pyiceberg_ids(t)
    assert sorted(r.id for r in t.to_spark().where("name = 'u'").select("id").collect()) == [
        i for i in range(20000) if i % 7 == 2]
    if version == "2":           # each position delete file: one data file's positions, ascending
        deletes = [f for f in t.inspect.files().collect() if f["content"] == 1]
        assert len(deletes) == 4
        for f in deletes:
            got = pq.read_table(f["file_path"])
            assert len(set(got.column("file_path").to_pylist())) == 1
            pos = got.column("pos").to_pylist()
            assert pos == sorted(pos) and len(pos) == f["record_count"]


def test_rows_of_cut_files_or_of_a_join_are_clustered_first(tmp_path, spark, clustering):
    # files of several row groups, cut into ranges across tasks
    key = "spark.sql.files.maxPartitionBytes"
    old = spark.conf.get(key)
    t = _table(tmp_path, spark, "2", rows=200000, row_group_bytes=64 * 1024)
    assert all(len(f.split_offsets) > 1 for f in t.plan_files())
    spark.conf.set(key, str(128 * 1024))
    try:
        t.delete("id % 5 = 0")
    finally:
        spark.conf.set(key, old)
    assert len(clustering) == 1
    src = spark.range(1, 200000, 1000).selectExpr("id", "'m' as name")
    t.merge(src, "t.id = s.id").when_matched_update_all().execute()
    assert len(clustering) == 2
    live = [i for i in range(200000) if i % 5]
    assert sorted(r.id for r in t.to_spark().select("id").collect()) == live == _pyiceberg_ids(t)
    assert t.to_spark().where("name = 'm'").count() == 200


def test_scan_order_seen_in_the_plan(tmp_path, spark):
    t = _table(tmp_path, spark, "2", rows=1000)
    df = t.to_spark().where("id > 3").select("id")
    assert iceberg_change_writer.in_scan_order(df)
    assert not iceberg_change_writer.in_scan_order(df.repartition(2))
    assert not iceberg_change_writer.in_scan_order(df.join(spark.range(10), "id"))
