"""Snapshot expiry (spec: "Snapshot Retention Policy"), orphan-file removal and property updates.

After expiry every retained snapshot and every ref must still read completely, and
no file may remain that no retained snapshot reaches; nothing a retained snapshot
reaches may be gone. Orphan removal may only take unreferenced files old enough.
"""
from __future__ import annotations

import os
import time

import pyarrow as pa
import pytest

from icefloe.iceberg.maintenance import MaintenanceError
from icefloe.iceberg.manifest import DELETED
from icefloe.iceberg.manifest_reader import load_manifest_entries, load_manifest_list
from tests.interop_util import duckdb_connection, pyiceberg_table

DAY_MS = 24 * 3600 * 1000


def _rows(ids):
    return pa.table({"id": pa.array(list(ids), pa.int64()), "v": [f"v{i}" for i in ids]})


def _commit(t, ids, overwrite=False, branch="main"):
    time.sleep(0.003)   # distinct commit timestamps
    return (t.overwrite if overwrite else t.append)(_rows(ids), branch=branch)


def _ids(t, **kw):
    return sorted(t.to_arrow(**kw)["id"].to_pylist())


def _now_ms():
    return int(time.time() * 1000)


def _reachable(t):
    """(metadata avro files, live data files) that the table's retained snapshots reach."""
    meta = t.refresh().metadata
    avro, data = set(), set()
    for s in meta.snapshots:
        avro.add(s.manifest_list)
        for m in load_manifest_list(t.io, s.manifest_list):
            avro.add(m.manifest_path)
            for e in load_manifest_entries(t.io, meta, m):
                if e.status != DELETED:
                    data.add(e.data_file.file_path)
    return avro, data


def _on_disk(t):
    avro, data = set(), set()
    for root, _, names in os.walk(t.location):
        for n in names:
            p = os.path.join(root, n)
            if p.endswith(".avro"):
                avro.add(p)
            elif p.endswith(".parquet"):
                data.add(p)
    return avro, data


def assert_exactly_the_retained_files(t):
    assert _on_disk(t) == _reachable(t)


def assert_every_snapshot_reads_completely(t):
    for s in t.refresh().snapshots():
        assert t.to_arrow(snapshot_id=s.snapshot_id).num_rows == int(s.summary["total-records"]) \
            - int(s.summary.get("total-position-deletes", "0")) - int(s.summary.get("total-equality-deletes", "0"))


@pytest.fixture
def table(catalog):
    return catalog.create_table("db.m", "id bigint not null, v string")


def test_expire_keeps_the_last_n_and_deletes_only_unreachable_files(table):
    s1 = _commit(table, range(0, 3))
    s2 = _commit(table, range(3, 6))
    s3 = _commit(table, range(6, 8), overwrite=True)   # s1's and s2's files leave the table
    s4 = _commit(table, range(8, 10))
    avro_before, data_before = _on_disk(table)
    report = table.expire_snapshots(older_than=_now_ms() + 1, retain_last=2)
    assert sorted(report.expired_snapshot_ids) == sorted([s1.snapshot_id, s2.snapshot_id])
    assert [s.snapshot_id for s in table.snapshots()] == [s3.snapshot_id, s4.snapshot_id]
    # the files only s1 and s2 read are gone; everything s3 and s4 read is there
    assert len(report.deleted_data_files) == 2 and report.deleted_delete_files == []
    assert set(report.deleted_manifest_lists) == {s1.manifest_list, s2.manifest_list}
    assert report.counts()["deleted_manifests"] == len(report.deleted_manifests) >= 2
    assert_exactly_the_retained_files(table)
    assert_every_snapshot_reads_completely(table)
    assert set(report.deleted_files) == (avro_before | data_before) - set().union(*_on_disk(table))
    # the snapshot log keeps only what it can still show
    assert [e["snapshot-id"] for e in table.history()] == [s3.snapshot_id, s4.snapshot_id]
    assert _ids(table, snapshot_id=s3.snapshot_id) == [6, 7]
    assert _ids(table) == [6, 7, 8, 9]
    # other readers agree
    assert sorted(pyiceberg_table(table.metadata_location).scan().to_arrow()["id"].to_pylist()) == [6, 7, 8, 9]
    con = duckdb_connection()
    assert sorted(x for (x,) in con.execute(
        f"SELECT id FROM iceberg_scan('{table.metadata_location}', snapshot_from_id => {s3.snapshot_id})")
        .fetchall()) == [6, 7]
    # nothing left to expire: no new metadata version
    version = table.ops.current_version()
    assert table.expire_snapshots(older_than=_now_ms() + 1, retain_last=2).expired_snapshot_ids == []
    assert table.refresh().ops.current_version() == version


def test_age_defaults_come_from_table_properties(table):
    for i in range(4):
        _commit(table, [i])
    # default max age is 5 days: nothing this young expires
    assert table.expire_snapshots().expired_snapshot_ids == []
    table.update_properties(set={"history.expire.max-snapshot-age-ms": "1",
                                 "history.expire.min-snapshots-to-keep": "2"})
    time.sleep(0.005)
    report = table.expire_snapshots()
    assert len(report.expired_snapshot_ids) == 2 and len(table.snapshots()) == 2
    assert _ids(table) == [0, 1, 2, 3]
    assert_exactly_the_retained_files(table)


def test_now_ms_is_the_clock_the_age_settings_count_back_from(table):
    for i in range(3):
        _commit(table, [i])
    snaps = table.snapshots()
    last = max(s.timestamp_ms for s in snaps)
    table.update_properties(set={"history.expire.max-snapshot-age-ms": "60000",
                                 "history.expire.min-snapshots-to-keep": "1"})
    # a minute after the last commit nothing is older than the table's one-minute age
    assert table.expire_snapshots(now_ms=last + 1_000).expired_snapshot_ids == []
    assert len(table.snapshots()) == 3
    # two minutes after it every snapshot is, and min-snapshots-to-keep keeps the current one
    report = table.expire_snapshots(now_ms=last + 120_000)
    assert sorted(report.expired_snapshot_ids) == sorted(s.snapshot_id for s in snaps[:-1])
    assert _ids(table) == [0, 1, 2]


def test_every_ref_keeps_what_its_retention_needs(table):
    s1 = _commit(table, [1])
    table.create_tag("keep", s1.snapshot_id)
    table.create_branch("dev", s1.snapshot_id, min_snapshots_to_keep=2)
    d1 = _commit(table, [100], branch="dev")
    d2 = _commit(table, [101], branch="dev")
    s2 = _commit(table, [2])
    table.create_tag("short", s2.snapshot_id, max_ref_age_ms=1)   # expires with its ref
    s3 = _commit(table, [3], overwrite=True)
    s4 = _commit(table, [4])
    time.sleep(0.005)
    report = table.expire_snapshots(older_than=_now_ms() + 1)   # main keeps 1 (default)
    assert report.removed_refs == ["short"]
    kept = {s.snapshot_id for s in table.snapshots()}
    assert kept == {s1.snapshot_id, d1.snapshot_id, d2.snapshot_id, s4.snapshot_id}
    assert s2.snapshot_id in report.expired_snapshot_ids and s3.snapshot_id in report.expired_snapshot_ids
    assert set(table.refs()) == {"main", "keep", "dev"}
    # every ref and every retained snapshot reads completely
    assert _ids(table) == [3, 4]
    assert _ids(table, ref="keep") == [1]
    assert _ids(table, ref="dev") == [1, 100, 101]
    assert _ids(table, snapshot_id=d1.snapshot_id) == [1, 100]
    assert sorted(r["id"] for r in table.to_spark(ref="dev").collect()) == [1, 100, 101]
    assert_exactly_the_retained_files(table)
    assert_every_snapshot_reads_completely(table)
    py = pyiceberg_table(table.metadata_location)
    assert sorted(py.scan(snapshot_id=py.metadata.refs["dev"].snapshot_id).to_arrow()["id"].to_pylist()) == \
        [1, 100, 101]


def test_delete_files_expire_with_the_snapshots_that_need_them(table):
    _commit(table, [1, 2, 3])
    table.delete_by_key(pa.table({"id": pa.array([2], pa.int64())}))   # an equality delete file
    live = _commit(table, [4])
    assert _ids(table) == [1, 3, 4]
    assert _ids(table, snapshot_id=live.snapshot_id) == [1, 3, 4]
    # while a retained snapshot needs the delete file, it stays
    report = table.expire_snapshots(older_than=_now_ms() + 1)
    assert report.deleted_delete_files == [] and _ids(table) == [1, 3, 4]
    assert_exactly_the_retained_files(table)
    _commit(table, [5], overwrite=True)
    report = table.expire_snapshots(older_than=_now_ms() + 1)
    assert len(report.deleted_delete_files) == 1 and len(report.deleted_data_files) == 2
    assert_exactly_the_retained_files(table)
    assert _ids(table) == [5]


def test_metadata_is_committed_before_any_file_is_deleted(table, monkeypatch):
    s1 = _commit(table, [1])
    _commit(table, [2], overwrite=True)
    _commit(table, [3])

    def crash(path):
        raise OSError(f"disk gone while deleting {path}")

    monkeypatch.setattr(table.ops.io, "delete", crash)
    with pytest.raises(OSError, match="disk gone"):
        table.expire_snapshots(older_than=_now_ms() + 1)
    monkeypatch.undo()
    # the new metadata is in place and complete; the files it no longer needs are orphans now
    assert s1.snapshot_id not in {s.snapshot_id for s in table.refresh().snapshots()}
    assert _ids(table) == [2, 3]
    removed = table.remove_orphan_files(older_than=_now_ms() + DAY_MS)
    assert s1.manifest_list in removed
    assert_exactly_the_retained_files(table)
    assert _ids(table) == [2, 3]


def test_gc_disabled_tables_are_not_touched(table):
    _commit(table, [1])
    _commit(table, [2])
    table.update_properties(set={"gc.enabled": "false"})
    version = table.ops.current_version()
    with pytest.raises(MaintenanceError, match="gc.enabled"):
        table.expire_snapshots(older_than=_now_ms() + 1)
    with pytest.raises(MaintenanceError, match="gc.enabled"):
        table.remove_orphan_files(older_than=_now_ms() + 1)
    assert table.ops.current_version() == version and len(table.snapshots()) == 2


def _age(path, days):
    old = time.time() - days * 86400
    os.utime(path, (old, old))


def test_orphan_files_go_only_when_unreferenced_and_old(table):
    table.update_properties(set={"write.metadata.previous-versions-max": "2"})
    s1 = _commit(table, range(3))
    s2 = _commit(table, range(3, 5), overwrite=True)
    _commit(table, [9])
    loc = table.location
    orphans = [f"{loc}/data/junk.parquet", f"{loc}/metadata/stale-m0.avro", f"{loc}/data/.staging-x/part-0.parquet"]
    for p in orphans + [f"{loc}/data/young.parquet"]:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "wb").write(b"x")
    for root, _, names in os.walk(loc):   # everything, referenced or not, is old -- except young.parquet
        for n in names:
            if n != "young.parquet":
                _age(os.path.join(root, n), 4)
    version = table.ops.current_version()
    logged = {e["metadata-file"] for e in table.metadata.metadata_log}
    unlogged = {table.ops.metadata_path(v) for v in range(1, version)} - logged
    assert unlogged  # versions older than previous-versions-max are no longer in the log

    preview = table.remove_orphan_files(dry_run=True)
    assert all(os.path.exists(p) for p in preview)
    assert set(preview) == set(orphans) | unlogged
    removed = table.remove_orphan_files()
    assert removed == preview
    assert not any(os.path.exists(p) for p in removed)
    assert os.path.exists(f"{loc}/data/young.parquet")   # younger than 3 days: never touched
    assert all(os.path.exists(p) for p in logged | {table.metadata_location, f"{loc}/metadata/version-hint.text"})
    # every snapshot still reads completely, here and elsewhere
    assert _ids(table, snapshot_id=s1.snapshot_id) == [0, 1, 2]
    assert _ids(table, snapshot_id=s2.snapshot_id) == [3, 4]
    assert _ids(table) == [3, 4, 9]
    py = pyiceberg_table(table.metadata_location)
    assert sorted(py.scan(snapshot_id=s1.snapshot_id).to_arrow()["id"].to_pylist()) == [0, 1, 2]
    assert table.remove_orphan_files() == []


def test_update_properties_and_comment(table):
    version = table.ops.current_version()
    props = table.update_properties(set={"comment": "the m table", "owner": "me"})
    assert props["comment"] == "the m table" and table.ops.current_version() == version + 1
    props = table.update_properties(set={"owner": "you"}, remove=["comment"])
    assert "comment" not in props and props["owner"] == "you"
    assert pyiceberg_table(table.metadata_location).properties["owner"] == "you"
    table.update_properties(remove=["not-there"])   # nothing changes: nothing written
    assert table.ops.current_version() == version + 2
    with pytest.raises(MaintenanceError, match="both set and removed"):
        table.update_properties(set={"a": "1"}, remove=["a"])


def test_the_live_files_expiry_reads_as_columns_equal_the_entries(catalog):
    """Expiry finds what is unreachable from each manifest's live files read as columns (paths and
    contents only): the same files, in the same order, as the manifests' entries give, for data and
    delete manifests with added, existing and deleted entries; and the expiry of such a table leaves
    exactly what its retained snapshots reach."""
    from icefloe.iceberg.manifest_reader import live_files

    t = catalog.create_table("db.cols", "id bigint not null, v string",
                             properties={"write.delete.mode": "merge-on-read", "commit.manifest.min-count-to-merge": "3"})
    for start in range(0, 12, 3):
        _commit(t, range(start, start + 3))
    t.delete("id IN (1, 4)")                       # position delete files: a delete manifest
    _commit(t, range(20, 22), overwrite=True)       # deleted entries
    _commit(t, range(30, 32))
    meta = t.refresh().metadata
    seen = 0
    kinds = set()
    for s in meta.snapshots:
        for m in load_manifest_list(t.io, s.manifest_list):
            entries = load_manifest_entries(t.io, meta, m)
            paths, content = live_files(t.io, meta, m)
            want = [(e.data_file.file_path, e.data_file.content) for e in entries if e.status != DELETED]
            assert list(zip(paths.to_pylist(), content.tolist())) == want
            kinds |= {(m.content, e.status) for e in entries}
            seen += 1
    assert seen and {(0, 0), (0, 1), (0, 2), (1, 1)} <= kinds          # existing, added, deleted; deletes
    table_files = _on_disk(t)
    report = t.expire_snapshots(older_than=_now_ms() + 1, retain_last=1)
    assert report.expired_snapshot_ids and report.deleted_data_files and report.deleted_delete_files
    assert_exactly_the_retained_files(t)
    assert set(report.deleted_files) == set().union(*table_files) - set().union(*_on_disk(t))
    assert _ids(t) == [20, 21, 30, 31]
