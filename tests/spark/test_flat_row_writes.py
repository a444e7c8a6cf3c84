"""Rows of a flat schema written straight to Parquet's column writers (``jvm/FlatRowWriteSupport.java``).

The writer changes how values reach the column writers, not what is written: every file must be
byte for byte the file Spark's own Parquet writer writes from the same rows (every supported type,
nulls in each column, several row groups and pages). Schemas it does not write itself (a nested
column, a wide decimal) and dates and timestamps Spark rebases must go to Spark's writer whole; a
counter of the row groups written directly tells the two paths apart."""
import datetime
import decimal
import os

import pytest

from icefloe.spark import described_writes, jvm

ROWS = 3000


@pytest.fixture
def jvm_classes(spark):
    if not jvm.available(spark):
        pytest.skip("icefloe's JVM classes are not loadable here")
    return spark._jvm.icefloe.jvm.FlatRowWriteSupport


def _flat_rows(spark):
    return spark.sql(f"""
        SELECT
          IF(id % 7 = 0, NULL, id % 2 = 0) AS b,
          IF(id % 11 = 1, NULL, CAST(id % 120 AS TINYINT)) AS i8,
          IF(id % 13 = 2, NULL, CAST(id * 3 % 30000 AS SMALLINT)) AS i16,
          IF(id % 5 = 3, NULL, CAST(id * 7919 AS INT)) AS i32,
          IF(id % 17 = 4, NULL, id * 1000003) AS i64,
          IF(id % 19 = 5, NULL, CAST(id AS FLOAT) / 3) AS f32,
          IF(id % 23 = 6, NULL, CAST(id AS DOUBLE) * 0.25) AS f64,
          IF(id % 3 = 0, NULL, concat('s-', CAST(id % 97 AS STRING), repeat('x', CAST(id % 5 AS INT)))) AS s,
          IF(id % 29 = 7, NULL, CAST(concat('bin', CAST(id AS STRING)) AS BINARY)) AS bin,
          IF(id % 31 = 8, NULL, date_add(DATE'2020-01-01', CAST(id AS INT))) AS d,
          IF(id % 37 = 9, NULL, timestamp_seconds(1700000000 + id)) AS ts,
          IF(id % 41 = 10, NULL, CAST(timestamp_seconds(1600000000 + id) AS TIMESTAMP_NTZ)) AS ntz,
          IF(id % 43 = 11, NULL, CAST(id / 7 AS DECIMAL(9, 2))) AS dec9,
          IF(id % 47 = 12, NULL, CAST(id * 1000 / 7 AS DECIMAL(18, 4))) AS dec18,
          id AS req
        FROM range(0, {ROWS}, 1, 2)""")


def _files(root) -> list[bytes]:
    names = sorted(n for n in os.listdir(root) if n.endswith(".parquet"))
    return [open(os.path.join(root, n), "rb").read() for n in names]


def _both(df, tmp_path, **options) -> tuple[list[bytes], list[bytes]]:
    """The files Spark's Parquet format writes from ``df``, and those icefloe's format writes."""
    spark_dir, ours_dir = str(tmp_path / "spark"), str(tmp_path / "ours")
    df.write.options(**options).parquet(spark_dir)
    df.write.options(**options).format(described_writes.CLASS).save(ours_dir)
    return _files(spark_dir), _files(ours_dir)


def test_flat_files_are_spark_writers_files_byte_for_byte(spark, jvm_classes, tmp_path):
    import pyarrow.parquet as pq

    df = _flat_rows(spark)
    before = jvm_classes.directRowGroups()
    theirs, ours = _both(df, tmp_path, compression="zstd")
    assert jvm_classes.directRowGroups() - before == 2          # both tasks' files, straight to the columns
    assert len(ours) == len(theirs) == 2
    assert ours == theirs
    got = pq.read_table(str(tmp_path / "ours")).sort_by("req")
    assert got.num_rows == ROWS
    assert got.column("s").null_count == ROWS // 3
    assert got.column("i64").to_pylist()[:6] == [i * 1000003 if i % 17 != 4 else None for i in range(6)]
    assert got.column("dec18").to_pylist()[7] == decimal.Decimal(7000 / 7).quantize(decimal.Decimal("0.0001"))
    assert got.column("d").to_pylist()[1] == datetime.date(2020, 1, 2)


def test_several_row_groups_and_pages(spark, jvm_classes, tmp_path):
    import pyarrow.parquet as pq

    df = _flat_rows(spark).coalesce(1)
    before = jvm_classes.directRowGroups()
    theirs, ours = _both(df, tmp_path, **{"parquet.block.size": "16384", "parquet.page.size": "2048",
                                          "parquet.page.row.count.limit": "200"})
    assert ours == theirs
    written = [n for n in os.listdir(tmp_path / "ours") if n.endswith(".parquet")]
    meta = pq.ParquetFile(str(tmp_path / "ours" / written[0])).metadata
    assert meta.num_row_groups > 1
    assert jvm_classes.directRowGroups() - before == meta.num_row_groups     # each one directly
    assert meta.num_rows == ROWS


def test_nested_and_wide_decimal_schemas_go_to_sparks_writer(spark, jvm_classes, tmp_path):
    nested = spark.sql("SELECT id, named_struct('a', id, 'b', CAST(id AS STRING)) AS st FROM range(0, 500, 1, 1)")
    wide = spark.sql("SELECT id, CAST(id AS DECIMAL(38, 3)) AS big FROM range(0, 500, 1, 1)")
    before = jvm_classes.directRowGroups()
    for i, df in enumerate((nested, wide)):
        theirs, ours = _both(df, tmp_path / str(i))
        assert ours == theirs and len(ours) == 1
    assert jvm_classes.directRowGroups() == before


def test_rebased_dates_go_to_sparks_writer(spark, jvm_classes, tmp_path):
    key = "spark.sql.parquet.datetimeRebaseModeInWrite"
    old = spark.conf.get(key)
    spark.conf.set(key, "LEGACY")
    try:
        df = spark.sql("SELECT id, date_add(DATE'1500-01-01', CAST(id AS INT)) AS d, "
                       "timestamp_seconds(-15000000000 + id) AS ts FROM range(0, 300, 1, 1)")
        before = jvm_classes.directRowGroups()
        theirs, ours = _both(df, tmp_path)
        assert jvm_classes.directRowGroups() == before
        assert ours == theirs
    finally:
        spark.conf.set(key, old)
    # the same rows with Spark's default (no rebase) are written directly
    before = jvm_classes.directRowGroups()
    theirs, ours = _both(df, tmp_path / "corrected")
    assert jvm_classes.directRowGroups() - before == 1
    assert ours == theirs
