"""Metadata tables (``t.inspect``): Iceberg's column names, and values that agree with the metadata and pyiceberg.

The column lists below are those of Iceberg's Java metadata tables (SnapshotsTable,
HistoryTable, FilesTable, ManifestsTable, AllManifestsTable, PartitionsTable,
RefsTable, MetadataLogEntriesTable, ManifestEntriesTable) as Spark shows them.
"""
from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from tests.interop_util import pyiceberg_table

UTC = dt.timezone.utc

FILE_COLUMNS = ["content", "file_path", "file_format", "spec_id", "partition", "record_count", "file_size_in_bytes",
                "column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
                "upper_bounds", "key_metadata", "split_offsets", "equality_ids", "sort_order_id", "first_row_id",
                "referenced_data_file", "content_offset", "content_size_in_bytes", "readable_metrics"]
RUNTIME_ONLY = ("first_row_id", "referenced_data_file", "content_offset", "content_size_in_bytes")
MANIFEST_COLUMNS = ["content", "path", "length", "partition_spec_id", "added_snapshot_id", "added_data_files_count",
                    "existing_data_files_count", "deleted_data_files_count", "added_delete_files_count",
                    "existing_delete_files_count", "deleted_delete_files_count", "partition_summaries"]
COLUMNS = {
    "snapshots": ["committed_at", "snapshot_id", "parent_id", "operation", "manifest_list", "summary"],
    "history": ["made_current_at", "snapshot_id", "parent_id", "is_current_ancestor"],
    "metadata_log_entries": ["timestamp", "file", "latest_snapshot_id", "latest_schema_id", "latest_sequence_number"],
    "refs": ["name", "type", "snapshot_id", "max_reference_age_in_ms", "min_snapshots_to_keep",
             "max_snapshot_age_in_ms"],
    "files": FILE_COLUMNS, "data_files": FILE_COLUMNS, "delete_files": FILE_COLUMNS,
    "entries": ["status", "snapshot_id", "sequence_number", "file_sequence_number", "data_file", "readable_metrics"],
    "manifests": MANIFEST_COLUMNS,
    "all_manifests": MANIFEST_COLUMNS + ["reference_snapshot_id", "key_metadata"],
    "partitions": ["partition", "spec_id", "record_count", "file_count", "total_data_file_size_in_bytes",
                   "position_delete_record_count", "position_delete_file_count", "equality_delete_record_count",
                   "equality_delete_file_count", "last_updated_at", "last_updated_snapshot_id"],
}


def _rows(ids, month, cat=None):
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "ts": pa.array([dt.datetime(2024, month, 2, tzinfo=UTC)] * len(ids), pa.timestamp("us", tz="UTC")),
                     "cat": [cat or f"c{i % 2}" for i in ids]})


@pytest.fixture(scope="module")
def evolved(spark, tmp_path_factory):
    """cat-partitioned, then cat + month(ts); an overwrite; a tag; a rollback."""
    import icefloe

    cat = icefloe.Catalog(str(tmp_path_factory.mktemp("inspect")), spark=spark)
    t = cat.create_table("db.t", "id bigint not null, ts timestamp, cat string", partitioned_by=["cat"])
    s1 = t.append(_rows([1, 2, 3], 1))
    with t.update_spec() as u:
        u.add_field("month(ts)")
    s2 = t.append(_rows([4, 5], 4, cat="c0"))
    t.create_tag("v2", s2.snapshot_id, max_ref_age_ms=1000)
    s3 = t.overwrite(_rows([6], 5, cat="c1"))
    t.rollback_to_snapshot(s2.snapshot_id)
    return t, (s1, s2, s3)


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_column_names_are_icebergs(evolved, name):
    t, _ = evolved
    assert getattr(t.inspect, name)().columns == COLUMNS[name]
    # pyiceberg mirrors the same Java tables (it has no `partitions` spec_id in unpartitioned tables either);
    # pyiceberg 0.12 predates the columns Iceberg 1.10's runtime shows for v3 files
    py = getattr(pyiceberg_table(t.metadata_location).inspect, name)()
    assert py.column_names == [c for c in COLUMNS[name] if c not in RUNTIME_ONLY]


def test_snapshots_history_refs_and_metadata_log(evolved):
    t, (s1, s2, s3) = evolved
    snaps = {r["snapshot_id"]: r for r in t.inspect.snapshots().collect()}
    assert list(snaps) == [s1.snapshot_id, s2.snapshot_id, s3.snapshot_id]
    assert snaps[s3.snapshot_id]["operation"] == "overwrite" and snaps[s3.snapshot_id]["parent_id"] == s2.snapshot_id
    assert snaps[s2.snapshot_id]["summary"]["added-records"] == "2"
    assert snaps[s1.snapshot_id]["manifest_list"] == s1.manifest_list
    history = [(r["snapshot_id"], r["is_current_ancestor"]) for r in t.inspect.history().collect()]
    assert history == [(s1.snapshot_id, True), (s2.snapshot_id, True), (s3.snapshot_id, False),
                       (s2.snapshot_id, True)]
    refs = {r["name"]: r.asDict() for r in t.inspect.refs().collect()}
    assert refs["main"]["type"] == "BRANCH" and refs["main"]["snapshot_id"] == s2.snapshot_id
    assert refs["v2"] == {"name": "v2", "type": "TAG", "snapshot_id": s2.snapshot_id,
                          "max_reference_age_in_ms": 1000, "min_snapshots_to_keep": None,
                          "max_snapshot_age_in_ms": None}
    log = t.inspect.metadata_log_entries().collect()
    assert len(log) == len(t.metadata.metadata_log) + 1 and log[-1]["file"] == t.metadata_location
    assert log[-1]["latest_snapshot_id"] == s2.snapshot_id and log[0]["latest_snapshot_id"] is None
    assert log[-1]["latest_sequence_number"] == s2.sequence_number


def test_files_and_entries_show_unified_partitions_and_metrics(evolved):
    t, (s1, s2, s3) = evolved
    files = t.inspect.files().collect()
    assert sorted(r["file_path"] for r in files) == sorted(f.file_path for f in t.plan_files())
    by_spec = sorted((r["spec_id"], r["partition"]["cat"], r["partition"]["ts_month"], r["record_count"])
                     for r in files)
    # spec 0 files have no ts_month: null in the unified partition struct
    assert by_spec == [(0, "c0", None, 1), (0, "c1", None, 2), (1, "c0", 651, 2)]
    assert all(r["file_format"] == "PARQUET" and r["content"] == 0 for r in files)
    metrics = {r["file_path"]: r["readable_metrics"]["id"] for r in files}
    assert sorted((m["lower_bound"], m["upper_bound"], m["value_count"]) for m in metrics.values()) == \
        [(1, 3, 2), (2, 2, 1), (4, 5, 2)]
    assert t.inspect.delete_files().count() == 0 and t.inspect.data_files().count() == 3
    # pyiceberg lists the same files with the same partitions
    py = pyiceberg_table(t.metadata_location).inspect.files().to_pylist()
    assert sorted((r["file_path"], r["spec_id"], r["partition"]["cat"], r["record_count"]) for r in py) == \
        sorted((r["file_path"], r["spec_id"], r["partition"]["cat"], r["record_count"]) for r in files)
    # the overwrite snapshot's entries: the new file ADDED, the old ones DELETED
    entries = t.inspect.entries(snapshot_id=s3.snapshot_id).collect()
    assert sorted(r["status"] for r in entries) == [1, 2, 2, 2]
    assert {r["data_file"]["file_path"] for r in entries if r["status"] == 2} == {r["file_path"] for r in files}
    assert t.inspect.files(snapshot_id=s3.snapshot_id).count() == 1


def test_manifests_partitions_and_all_manifests(evolved):
    t, (s1, s2, s3) = evolved
    manifests = sorted(t.inspect.manifests().collect(), key=lambda r: r["partition_spec_id"])
    assert [(r["partition_spec_id"], r["added_data_files_count"]) for r in manifests] == [(0, 2), (1, 1)]
    summaries = [(p["lower_bound"], p["upper_bound"]) for p in manifests[1]["partition_summaries"]]
    assert summaries == [("c0", "c0"), ("2024-04", "2024-04")]   # human strings, as Java shows them
    everything = t.inspect.all_manifests().collect()
    assert {r["reference_snapshot_id"] for r in everything} == {s1.snapshot_id, s2.snapshot_id, s3.snapshot_id}
    assert len(everything) == 1 + 2 + len(t.inspect.manifests(snapshot_id=s3.snapshot_id).collect())
    parts = sorted(((r["partition"]["cat"], r["partition"]["ts_month"], r["spec_id"], r["record_count"],
                     r["file_count"], r["last_updated_snapshot_id"]) for r in t.inspect.partitions().collect()),
                   key=repr)
    assert parts == [("c0", 651, 1, 2, 1, s2.snapshot_id), ("c0", None, 0, 1, 1, s1.snapshot_id),
                     ("c1", None, 0, 2, 1, s1.snapshot_id)]
    py = pyiceberg_table(t.metadata_location).inspect.partitions().to_pylist()
    assert sorted(((r["partition"]["cat"], r["partition"]["ts_month"], r["record_count"]) for r in py), key=repr) == \
        [(c, m, n) for c, m, _, n, _, _ in parts]


def test_unpartitioned_tables_have_no_partition_column(catalog):
    t = catalog.create_table("db.flat", "id bigint, s string")
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", None]}))
    assert "partition" not in t.inspect.files().columns
    parts = t.inspect.partitions()
    assert parts.columns == COLUMNS["partitions"][2:]
    assert [(r["record_count"], r["file_count"]) for r in parts.collect()] == [(2, 1)]
    metrics = t.inspect.files().collect()[0]["readable_metrics"]
    assert metrics["s"]["null_value_count"] == 1 and metrics["s"]["lower_bound"] == "a"
