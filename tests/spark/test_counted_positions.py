"""``TableParquetFormat`` counts a whole file's positions itself (Spark's row index costs a boxed
value per row): ``_metadata.row_index`` must be each row's position in its file, whether the split is
the whole file (counted here, no filter pushed into Parquet) or a part of it (Spark's own), with
several row groups, filters Spark could have used to skip row groups, deleted rows, and the rows of
a table's row-level change."""
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.spark import deleted_rows, scans
from tests.interop_util import pyiceberg_table


def _file(path, rows, per_group, start=0):
    # id - start is each row's position in its file
    pq.write_table(pa.table({"id": pa.array(range(start, start + rows), pa.int64()),
                             "s": [f"v{i % 37}" for i in range(rows)]}), path, row_group_size=per_group)
    return path


def _positions(df):
    return sorted((r.id, r.pos) for r in df.selectExpr("id", "_metadata.row_index AS pos").collect())


def test_positions_of_whole_files_and_of_parts(tmp_path, spark, small_splits):
    whole = _file(str(tmp_path / "whole.parquet"), 9000, 1000)
    cut = _file(str(tmp_path / "cut.parquet"), 9000, 1000, start=100000)
    schema = spark.read.parquet(whole).schema
    df = scans.file_scan(spark, [whole, cut], schema, whole=[whole])
    assert df.rdd.getNumPartitions() > 2              # the second file is read in parts
    expected = [(i, i) for i in range(9000)] + [(i, i - 100000) for i in range(100000, 109000)]
    assert _positions(df) == expected
    # filters Spark pushes into Parquet (row groups it could skip): the same positions
    kept = df.where("id >= 4321 AND id < 104567")
    assert _positions(kept) == [(i, p) for i, p in expected if 4321 <= i < 104567]
    # generated code reading the positions with other columns
    assert df.selectExpr("sum(_metadata.row_index * length(s))").collect()[0][0] == 2 * sum(
        p * len(f"v{p % 37}") for p in range(9000))


def test_positions_with_deleted_rows(tmp_path, spark):
    path = _file(str(tmp_path / "d.parquet"), 12000, 5000)
    schema = spark.read.parquet(path).schema
    gone = set(range(0, 12000, 5)) | set(range(4990, 5010))
    options = deleted_rows.scan_options(spark, {path: sorted(gone)})
    df = scans.file_scan(spark, [path], schema, options, deleted_rows.CLASS, whole=[path])
    assert _positions(df) == [(i, i) for i in range(12000) if i not in gone]
    assert _positions(df.where("id > 7000")) == [(i, i) for i in range(7001, 12000) if i not in gone]


@pytest.mark.parametrize("version", ["2", "3"])
def test_a_tables_row_level_changes_name_the_right_positions(tmp_path, spark, version):
    import glob
    import os

    import icefloe

    cat = icefloe.Catalog(str(tmp_path / "wh"), spark=spark)
    t = cat.create_table("db.t", "id bigint, s string", properties={
        "format-version": version, "write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"})
    t.append(spark.range(0, 8000, 1, 2).selectExpr("id", "concat('v', id % 50) AS s"))
    t.delete("id % 7 = 3")
    t.update({"s": "'changed'"}, where="id % 11 = 4 AND id > 100")
    t.delete("id BETWEEN 5000 AND 5100")
    expected = sorted((i, "changed" if i % 11 == 4 and i > 100 else f"v{i % 50}")
                      for i in range(8000) if i % 7 != 3 and not 5000 <= i <= 5100)
    assert sorted((r.id, r.s) for r in t.to_spark().collect()) == expected
    # an independent reader applies the deletes written from those positions alike
    latest = sorted(glob.glob(os.path.join(t.location, "metadata", "*.metadata.json")))[-1]
    arrow = pyiceberg_table(latest).scan().to_arrow()
    assert sorted(zip(arrow.column("id").to_pylist(), arrow.column("s").to_pylist())) == expected


def _records_read(spark, group: str, action) -> int:
    """Rows the scan's tasks read from their files (Spark's input metrics) while ``action`` ran."""
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        action()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    store = spark._jsparkSession.sparkContext().statusStore()
    total = 0
    for job in sc.statusTracker().getJobIdsForGroup(group):
        for stage in sc.statusTracker().getJobInfo(job).stageIds:
            tasks = store.taskList(stage, 0, 10000).iterator()
            while tasks.hasNext():
                metrics = tasks.next().taskMetrics()
                total += metrics.get().inputMetrics().recordsRead() if metrics.isDefined() else 0
    return total


def test_a_file_of_several_row_groups_under_a_filter_still_skips_them(tmp_path, spark):
    path = _file(str(tmp_path / "groups.parquet"), 9000, 1000)
    schema = spark.read.parquet(path).schema
    df = scans.file_scan(spark, [path], schema).where("id >= 8500")
    assert df.rdd.getNumPartitions() == 1
    rows = []
    read = _records_read(spark, "several-groups", lambda: rows.extend(_positions(df)))
    assert rows == [(i, i) for i in range(8500, 9000)]
    assert read <= 1000                 # Spark's reader skipped the eight row groups the filter rules out
    # the same file named as one row group (as a table's metadata would) is read whole and counted
    named = scans.file_scan(spark, [path], schema, whole=[path]).where("id >= 8500")
    rows.clear()
    read = _records_read(spark, "named-whole", lambda: rows.extend(_positions(named)))
    assert rows == [(i, i) for i in range(8500, 9000)] and read == 9000
