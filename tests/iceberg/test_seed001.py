"""Seed 001 as a test: the 100-row insert and the files, manifests and summary it leaves."""
import glob
import json
import os
import struct

import fastavro
import pytest

from icefloe.demo import SCHEMA, seed_rows
from tests.interop_util import duckdb_connection, pyiceberg_table


@pytest.fixture
def seeded(catalog, spark):
    t = catalog.create_table("db.tb01", SCHEMA, partitioned_by=["year(ts)"])
    df = spark.createDataFrame(seed_rows(), "id bigint, name string, ts timestamp")
    snap = t.append(df)
    return t, snap


def _avro(path):
    with open(path, "rb") as f:
        r = fastavro.reader(f)
        return r.metadata, list(r)


def test_layout_and_metadata(seeded):
    t, snap = seeded
    loc = t.location
    assert sorted(os.listdir(f"{loc}/data")) == ["ts_year=2022", "ts_year=2023"]
    assert open(f"{loc}/metadata/version-hint.text").read().strip() == "2"
    meta = json.load(open(f"{loc}/metadata/v2.metadata.json"))
    assert meta["format-version"] == 2
    assert meta["last-sequence-number"] == 1
    assert meta["last-column-id"] == 3
    assert meta["current-schema-id"] == 0
    assert meta["schemas"][0]["fields"] == [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "name", "required": False, "type": "string"},
        {"id": 3, "name": "ts", "required": True, "type": "timestamptz"},
    ]
    assert meta["partition-specs"] == [{"spec-id": 0, "fields": [
        {"name": "ts_year", "transform": "year", "source-id": 3, "field-id": 1000}]}]
    assert meta["last-partition-id"] == 1000
    assert meta["default-sort-order-id"] == 0 and meta["sort-orders"] == [{"order-id": 0, "fields": []}]
    assert meta["current-snapshot-id"] == snap.snapshot_id
    assert meta["refs"] == {"main": {"snapshot-id": snap.snapshot_id, "type": "branch"}}
    assert meta["snapshot-log"] == [{"timestamp-ms": snap.timestamp_ms, "snapshot-id": snap.snapshot_id}]
    assert [e["metadata-file"] for e in meta["metadata-log"]] == [f"{loc}/metadata/v1.metadata.json"]
    s = meta["snapshots"][0]
    assert s["sequence-number"] == 1 and s["schema-id"] == 0
    assert os.path.basename(s["manifest-list"]).startswith(f"snap-{snap.snapshot_id}-1-")


def test_summary_figures(seeded):
    t, snap = seeded
    sm = snap.summary
    sizes = sum(os.path.getsize(f) for f in glob.glob(f"{t.location}/data/*/*.parquet"))
    assert sm["operation"] == "append"
    assert sm["added-data-files"] == "2"
    assert sm["added-records"] == "100"
    assert sm["added-files-size"] == str(sizes)
    assert sm["changed-partition-count"] == "2"
    assert sm["total-records"] == "100"
    assert sm["total-files-size"] == str(sizes)
    assert sm["total-data-files"] == "2"
    for key in ("total-delete-files", "total-position-deletes", "total-equality-deletes"):
        assert sm[key] == "0"


def test_manifest_list_and_manifest(seeded):
    t, snap = seeded
    meta, lists = _avro(snap.manifest_list)
    assert meta["format-version"] == "2" and meta["snapshot-id"] == str(snap.snapshot_id)
    assert len(lists) == 1
    m = lists[0]
    assert m["content"] == 0 and m["sequence_number"] == 1 and m["min_sequence_number"] == 1
    assert m["added_snapshot_id"] == snap.snapshot_id
    assert (m["added_files_count"], m["existing_files_count"], m["deleted_files_count"]) == (2, 0, 0)
    assert (m["added_rows_count"], m["existing_rows_count"], m["deleted_rows_count"]) == (100, 0, 0)
    assert m["partitions"] == [{"contains_null": False, "contains_nan": False,
                                "lower_bound": b"4\x00\x00\x00", "upper_bound": b"5\x00\x00\x00"}]
    assert os.path.getsize(m["manifest_path"]) == m["manifest_length"]
    assert os.path.basename(m["manifest_path"]).endswith("-m0.avro")

    mmeta, entries = _avro(m["manifest_path"])
    assert mmeta["format-version"] == "2" and mmeta["content"] == "data"
    assert json.loads(mmeta["partition-spec"]) == [{"name": "ts_year", "transform": "year",
                                                     "source-id": 3, "field-id": 1000}]
    assert json.loads(mmeta["schema"])["fields"][2]["type"] == "timestamptz"
    assert len(entries) == 2
    by_year = {e["data_file"]["partition"]["ts_year"]: e for e in entries}
    assert set(by_year) == {52, 53}
    for year, e in by_year.items():
        assert e["status"] == 1 and e["snapshot_id"] == snap.snapshot_id
        assert e["sequence_number"] is None and e["file_sequence_number"] is None
        df = e["data_file"]
        assert df["content"] == 0 and df["file_format"] == "PARQUET" and df["record_count"] == 50
        assert f"/data/ts_year={1970 + year}/" in df["file_path"]
        assert os.path.getsize(df["file_path"]) == df["file_size_in_bytes"]
        counts = {kv["key"]: kv["value"] for kv in df["value_counts"]}
        nulls = {kv["key"]: kv["value"] for kv in df["null_value_counts"]}
        assert counts == {1: 50, 2: 50, 3: 50} and nulls == {1: 0, 2: 0, 3: 0}
        assert {kv["key"] for kv in df["column_sizes"]} == {1, 2, 3}
        lows = {kv["key"]: kv["value"] for kv in df["lower_bounds"]}
        highs = {kv["key"]: kv["value"] for kv in df["upper_bounds"]}
        if year == 52:   # ids 51..100, names name100..name99 (string order)
            assert lows[1] == struct.pack("<q", 51) and highs[1] == struct.pack("<q", 100)
            assert lows[2] == b"name100" and highs[2] == b"name99"
        else:            # ids 1..50
            assert lows[1] == struct.pack("<q", 1) and highs[1] == struct.pack("<q", 50)
            assert lows[2] == b"name1" and highs[2] == b"name9"
        assert len(lows[3]) == 8 and lows[3] == highs[3]
        assert df["split_offsets"] == [4]
        assert df["sort_order_id"] == 0


def test_independent_readers_agree(seeded, spark):
    t, _ = seeded
    ours = sorted(tuple(r) for r in t.to_spark().collect())
    theirs = pyiceberg_table(t.metadata_location).scan().to_arrow()
    assert sorted(zip(theirs["id"].to_pylist(), theirs["name"].to_pylist())) == [(r[0], r[1]) for r in ours]
    con = duckdb_connection()
    got = con.execute(f"select id, name from iceberg_scan('{t.metadata_location}') order by id").fetchall()
    assert got == [(r[0], r[1]) for r in ours]


def test_time_travel_and_second_insert(seeded, spark):
    t, first = seeded
    df = spark.createDataFrame([(101, "x", __import__("datetime").datetime(2024, 1, 1))], "id bigint, name string, ts timestamp")
    second = t.append(df)
    assert second.parent_snapshot_id == first.snapshot_id and second.sequence_number == 2
    assert t.to_spark().count() == 101
    assert t.to_spark(snapshot_id=first.snapshot_id).count() == 100
    assert t.to_spark(as_of=first.timestamp_ms).count() == 100
    assert second.summary["total-records"] == "101" and second.summary["total-data-files"] == "3"
    assert [s.snapshot_id for s in t.snapshots()] == [first.snapshot_id, second.snapshot_id]
