"""Seed 001's MERGE: one partition's file rewritten (copy-on-write), the other carried over as EXISTING."""
import fastavro
import pytest

from icefloe.demo import SCHEMA, seed_rows
from tests.interop_util import duckdb_connection, pyiceberg_table


def _avro(path):
    with open(path, "rb") as f:
        return list(fastavro.reader(f))


@pytest.fixture
def seeded(catalog, spark):
    t = catalog.create_table("db.tb01", SCHEMA, partitioned_by=["year(ts)"])
    first = t.append(spark.createDataFrame(seed_rows(), "id bigint, name string, ts timestamp"))
    return t, first


def test_seed001_merge_manifests_and_summary(seeded, spark):
    t, first = seeded
    # MERGE INTO t USING (values (1,'update_name1'),(50,'update_name50')) u ON t.id = u.id
    # WHEN MATCHED THEN UPDATE SET t.name = u.name
    u = spark.createDataFrame([(1, "update_name1"), (50, "update_name50")], "id bigint, name string")
    result = t.merge(u, "t.id = u.id", source_alias="u").when_matched_update({"t.name": "u.name"}).execute()
    assert (result["updated"], result["deleted"], result["inserted"]) == (2, 0, 0)
    snap = t.current_snapshot()
    assert snap.snapshot_id == result["snapshot_id"] and snap.sequence_number == 2
    assert snap.parent_snapshot_id == first.snapshot_id
    sm = snap.summary
    assert sm["operation"] == "overwrite"
    expected = {"added-data-files": "1", "deleted-data-files": "1", "added-records": "50", "deleted-records": "50",
                "changed-partition-count": "1", "total-records": "100", "total-data-files": "2",
                "total-delete-files": "0", "total-position-deletes": "0", "total-equality-deletes": "0"}
    assert {k: sm[k] for k in expected} == expected
    old_2023 = [f for f in first_files(t, first) if "ts_year=2023" in f.file_path][0]
    assert sm["removed-files-size"] == str(old_2023.file_size_in_bytes)
    assert int(sm["total-files-size"]) == int(first.summary["total-files-size"]) - old_2023.file_size_in_bytes \
        + int(sm["added-files-size"])

    lists = _avro(snap.manifest_list)
    assert len(lists) == 2
    added_m, rewritten_m = lists  # the new files' manifest is listed first, as in the seed
    assert (added_m["added_files_count"], added_m["existing_files_count"], added_m["deleted_files_count"]) == (1, 0, 0)
    assert (added_m["sequence_number"], added_m["min_sequence_number"]) == (2, 2)
    assert added_m["added_rows_count"] == 50
    assert added_m["partitions"][0]["lower_bound"] == b"5\x00\x00\x00" == added_m["partitions"][0]["upper_bound"]
    assert (rewritten_m["added_files_count"], rewritten_m["existing_files_count"],
            rewritten_m["deleted_files_count"]) == (0, 1, 1)
    assert (rewritten_m["sequence_number"], rewritten_m["min_sequence_number"]) == (2, 1)
    assert (rewritten_m["existing_rows_count"], rewritten_m["deleted_rows_count"]) == (50, 50)
    assert rewritten_m["manifest_path"].endswith("-m0.avro") and added_m["manifest_path"].endswith("-m1.avro")

    statuses = {}
    for m in lists:
        for e in _avro(m["manifest_path"]):
            year = e["data_file"]["partition"]["ts_year"]
            statuses.setdefault(e["status"], []).append((year, e))
    assert sorted((s, y) for s, es in statuses.items() for y, _ in es) == [(0, 52), (1, 53), (2, 53)]
    existing = statuses[0][0][1]
    deleted = statuses[2][0][1]
    added = statuses[1][0][1]
    assert existing["snapshot_id"] == first.snapshot_id and existing["sequence_number"] == 1
    assert existing["file_sequence_number"] == 1
    assert deleted["snapshot_id"] == snap.snapshot_id and deleted["sequence_number"] == 1
    assert deleted["data_file"]["file_path"] == old_2023.file_path
    assert added["snapshot_id"] == snap.snapshot_id and added["sequence_number"] is None

    rows = sorted((r.id, r.name) for r in t.to_spark().collect())
    assert rows[0] == (1, "update_name1") and rows[49] == (50, "update_name50") and len(rows) == 100
    theirs = pyiceberg_table(t.metadata_location).scan().to_arrow()
    assert sorted(zip(theirs["id"].to_pylist(), theirs["name"].to_pylist())) == rows
    got = duckdb_connection().execute(f"select id, name from iceberg_scan('{t.metadata_location}') order by id").fetchall()
    assert got == rows
    # time travel still sees the seed's original names
    assert t.to_spark(snapshot_id=first.snapshot_id).where("id = 1").collect()[0].name == "name1"


def first_files(t, snap):
    return t.plan_files(snapshot_id=snap.snapshot_id)
