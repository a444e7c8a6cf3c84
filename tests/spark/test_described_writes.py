"""Spark's Parquet writes are described by the tasks that wrote them: the driver turns footers
handed over by the tasks into file statistics and opens no data file itself; the statistics are
exactly those the files' own footers give, and those of the driver-side fallback."""
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.core.parquet import metrics_from_footer
from icefloe.iceberg.arrow_writer import data_file_from_metrics
from icefloe.spark import described_writes, jvm


@pytest.fixture
def driver_reads(monkeypatch):
    """Paths of the data files the driver opens for reading (or whose footers it reads)."""
    opened = []
    real_read_metadata = pq.read_metadata

    def read_metadata(where, *a, **k):
        if not isinstance(where, pa.BufferReader):      # (a footer handed over, parsed from memory)
            opened.append(getattr(where, "name", where))
        return real_read_metadata(where, *a, **k)

    monkeypatch.setattr(pq, "read_metadata", read_metadata)
    return opened


def _rows(spark, n=3000):
    return spark.range(0, n, numPartitions=3).selectExpr(
        "id", "cast(id % 7 as string) AS s", "date_add(date'2024-01-01', cast(id % 3 as int)) AS d")


@pytest.mark.parametrize("partitioned_by", [None, ["d"]])
def test_iceberg_files_are_described_by_their_tasks(tmp_path, spark, driver_reads, partitioned_by):
    t = icefloe.Catalog(str(tmp_path / "ice"), spark=spark).create_table(
        "db.t", "id bigint, s string, d date", partitioned_by=partitioned_by)
    t.append(_rows(spark))
    files = t.plan_files()
    assert len(files) >= 3 and driver_reads == []
    schema = t.metadata.schema
    for f in files:
        assert f.file_size_in_bytes == os.path.getsize(f.file_path)
        m = metrics_from_footer(pq.ParquetFile(f.file_path).metadata, schema, skip_float_bounds=True)
        want = data_file_from_metrics(f.file_path, f.file_size_in_bytes, f.partition, f.spec_id, schema, m)
        assert (f.record_count, f.column_sizes, f.value_counts, f.null_value_counts, f.lower_bounds, f.upper_bounds) \
            == (want.record_count, want.column_sizes, want.value_counts, want.null_value_counts, want.lower_bounds,
                want.upper_bounds)
        assert f.record_count > 0
    assert t.to_spark().count() == 3000


def test_paimon_files_are_described_by_their_tasks(tmp_path, spark, driver_reads):
    t = icefloe.Catalog(str(tmp_path / "pai"), "paimon", spark=spark).create_table("db.t", "id bigint, s string")
    t.append(_rows(spark).drop("d"))
    entries = t.plan()
    assert len(entries) >= 3 and driver_reads == []
    assert all(e.file.file_size == os.path.getsize(e.file.file_path) for e in entries)
    assert sum(e.file.row_count for e in entries) == 3000 == t.to_spark().count()


def test_without_the_jvm_classes_the_driver_reads_the_same_footers(tmp_path, spark, monkeypatch):
    described = icefloe.Catalog(str(tmp_path / "a"), spark=spark).create_table("db.t", "id bigint, s string, d date")
    described.append(_rows(spark))
    monkeypatch.setattr(jvm, "available", lambda _spark: False)
    calls = []
    real = described_writes.parse
    monkeypatch.setattr(described_writes, "parse", lambda frames: calls.append(1) or real(frames))
    fallback = icefloe.Catalog(str(tmp_path / "b"), spark=spark).create_table("db.t", "id bigint, s string, d date")
    fallback.append(_rows(spark))
    assert calls == []

    def stats(t):
        return sorted((f.record_count, f.file_size_in_bytes, sorted(f.value_counts.items()),
                       sorted(f.lower_bounds.items()), sorted(f.upper_bounds.items())) for f in t.plan_files())

    assert stats(described) == stats(fallback)
