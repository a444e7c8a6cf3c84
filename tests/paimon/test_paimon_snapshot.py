"""Snapshot files (seed 000): every JSON field, continuous ids, and untrustworthy hints."""
import json
import os
import time

import pyarrow as pa
import pytest

from icefloe.errors import CorruptMetadataError, NoSuchSnapshotError
from icefloe.paimon.snapshot import Snapshot, SnapshotManager

SEED_000_FIELDS = [
    "version", "id", "schemaId", "baseManifestList", "deltaManifestList", "changelogManifestList",
    "indexManifest", "commitUser", "commitIdentifier", "commitKind", "timeMillis", "logOffsets",
    "totalRecordCount", "deltaRecordCount", "changelogRecordCount", "watermark", "statistics",
]


def rows(start, n):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "name": [f"n{i}" for i in range(start, start + n)]})


@pytest.fixture
def table(paimon_catalog):
    return paimon_catalog.create_table("db.t", "id bigint not null, name string")


def snapshot_dir(table):
    return os.path.join(table.location, "snapshot")


def test_snapshot_json_has_every_seed_field(table):
    before = int(time.time() * 1000)
    table.append(rows(0, 5))
    doc = json.loads(open(os.path.join(snapshot_dir(table), "snapshot-1")).read())
    for k in SEED_000_FIELDS:
        assert k in doc, k
    assert doc["version"] == 3 and doc["id"] == 1 and doc["schemaId"] == 0
    manifest_dir = os.path.join(table.location, "manifest")
    assert os.path.exists(os.path.join(manifest_dir, doc["baseManifestList"]))
    assert os.path.exists(os.path.join(manifest_dir, doc["deltaManifestList"]))
    assert doc["baseManifestListSize"] == os.path.getsize(os.path.join(manifest_dir, doc["baseManifestList"]))
    assert doc["changelogManifestList"] is None and doc["indexManifest"] is None
    assert doc["commitUser"] == table.commit_user
    assert doc["commitIdentifier"] == 2**63 - 1       # Long.MAX_VALUE: batch commit
    assert doc["commitKind"] == "APPEND"
    assert before <= doc["timeMillis"] <= int(time.time() * 1000)
    assert doc["logOffsets"] == {}
    assert (doc["totalRecordCount"], doc["deltaRecordCount"], doc["changelogRecordCount"]) == (5, 5, 0)
    assert doc["watermark"] == -(2**63)               # Long.MIN_VALUE: no watermark
    assert doc["statistics"] is None
    table.append(rows(5, 3))
    doc2 = json.loads(open(os.path.join(snapshot_dir(table), "snapshot-2")).read())
    assert (doc2["id"], doc2["totalRecordCount"], doc2["deltaRecordCount"]) == (2, 8, 3)
    table.overwrite(rows(100, 2))
    doc3 = json.loads(open(os.path.join(snapshot_dir(table), "snapshot-3")).read())
    assert doc3["commitKind"] == "OVERWRITE"
    assert (doc3["totalRecordCount"], doc3["deltaRecordCount"]) == (2, -6)


def test_snapshot_json_round_trip():
    s = Snapshot(id=7, schema_id=1, base_manifest_list="manifest-list-a-0", delta_manifest_list="manifest-list-b-0",
                 commit_user="u", commit_identifier=5, commit_kind="COMPACT", time_millis=123,
                 total_record_count=10, delta_record_count=-2, base_manifest_list_size=10,
                 delta_manifest_list_size=20, properties={"k": "v"})
    assert Snapshot.from_json(s.to_json()) == s
    with pytest.raises(CorruptMetadataError):
        Snapshot.from_json("{not json", "/x/snapshot-1")


def test_ids_continuous_and_hints_maintained(table):
    for i in range(4):
        table.append(rows(i * 10, 2))
    d = snapshot_dir(table)
    assert sorted(os.listdir(d)) == ["EARLIEST", "LATEST", "snapshot-1", "snapshot-2", "snapshot-3", "snapshot-4"]
    assert open(os.path.join(d, "LATEST")).read() == "4"
    assert open(os.path.join(d, "EARLIEST")).read() == "1"
    assert [s.id for s in table.snapshots()] == [1, 2, 3, 4]


@pytest.mark.parametrize("latest,earliest", [
    ("2", "1"),            # stale LATEST
    (None, None),          # missing hints
    ("garbage\n", "x"),    # garbage
    ("99", "3"),           # pointing at nothing / hiding snapshots 1-2
    ("-1", "0"),
])
def test_bad_hints_do_not_hide_snapshots(table, pypaimon_catalog, latest, earliest):
    for i in range(4):
        table.append(rows(i * 10, 2))
    d = snapshot_dir(table)
    for name, content in (("LATEST", latest), ("EARLIEST", earliest)):
        p = os.path.join(d, name)
        os.remove(p)
        if content is not None:
            open(p, "w").write(content)
    mgr = SnapshotManager(table.io, table.location)
    assert mgr.latest_id() == 4 and mgr.earliest_id() == 1
    assert table.current_snapshot().id == 4
    assert table.to_arrow().num_rows == 8
    # the next commit takes id 5, never overwriting an existing snapshot
    table.append(rows(100, 1))
    assert [s.id for s in table.snapshots()] == [1, 2, 3, 4, 5]
    assert open(os.path.join(d, "LATEST")).read() == "5"
    pt = pypaimon_catalog.get_table("db.t")
    rb = pt.new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 9


def test_try_commit_is_create_if_absent(table):
    table.append(rows(0, 1))
    mgr = SnapshotManager(table.io, table.location)
    s = mgr.latest()
    before = open(mgr.snapshot_path(1)).read()
    s2 = Snapshot(**{**s.__dict__, "commit_user": "intruder"})
    assert mgr.try_commit(s2) is False
    assert open(mgr.snapshot_path(1)).read() == before


def test_time_travel_lookup(table):
    table.append(rows(0, 1))
    time.sleep(0.01)
    table.append(rows(1, 1))
    s1, s2 = table.snapshots()
    mgr = SnapshotManager(table.io, table.location)
    assert mgr.as_of(s2.time_millis).id == 2
    assert mgr.as_of(s2.time_millis - 1).id == 1
    with pytest.raises(NoSuchSnapshotError):
        mgr.as_of(s1.time_millis - 1)
    with pytest.raises(NoSuchSnapshotError):
        table.snapshot(42)
    assert table.to_arrow(snapshot_id=1).num_rows == 1
    assert table.to_arrow(as_of=s2.time_millis).num_rows == 2
