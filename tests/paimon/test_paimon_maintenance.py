"""Paimon maintenance: compaction, manifest rewrite, rollback and expiry arguments.

Every result is read back by pypaimon as well as by icefloe.
"""
import os

import pyarrow as pa
import pytest

from icefloe.errors import CommitConflictError, NoSuchSnapshotError
from icefloe.catalog import Catalog
from icefloe.paimon.commit import FileStoreCommit
from tests.paimon.test_paimon_interop import pypaimon_read


def rows(start, n, p=None):
    ids = range(start, start + n)
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "p": pa.array([p if p is not None else i % 2 for i in ids], pa.int32())})


def ids_of(table):
    return sorted(table.column("id").to_pylist())


def data_files_on_disk(t):
    return {os.path.join(d, f) for d, _, fs in os.walk(t.location) for f in fs
            if f.startswith("data-") and f.endswith(".parquet")}


def manifests_on_disk(t):
    return set(os.listdir(os.path.join(t.location, "manifest")))


@pytest.mark.parametrize("bucket", ["-1", "2"])
def test_compaction_merges_small_files_per_bucket(paimon_catalog, pypaimon_catalog, bucket):
    props = {"bucket": bucket, "write-only": "true"}
    if bucket != "-1":
        props["bucket-key"] = "id"
    t = paimon_catalog.create_table("db.c", "id bigint not null, name string, p int", partitioned_by=["p"],
                                    properties=props)
    for i in range(5):
        t.append(rows(i * 10, 4))
    before = t.plan_files()
    assert len(before) >= 10
    seqs_before = {(f.file_path.rsplit("/", 2)[-2], f.min_sequence_number, f.max_sequence_number) for f in before}
    snap = t.rewrite_data_files()
    assert snap.commit_kind == "COMPACT" and snap.delta_record_count == 0 and snap.total_record_count == 20
    after = t.plan_files()
    buckets = {(os.path.dirname(f.file_path)) for f in before}
    assert len(after) == len(buckets)                        # one file per (partition, bucket)
    assert all(f.file_source == 1 for f in after)            # FILE_SOURCE_COMPACT
    if bucket != "-1":
        # rows keep their sequence numbers: each bucket's range covers exactly what its files had
        for f in after:
            d = f.file_path.rsplit("/", 2)[-2]
            olds = [b for b in before if os.path.dirname(b.file_path) == os.path.dirname(f.file_path)]
            assert (f.min_sequence_number, f.max_sequence_number) == (
                min(b.min_sequence_number for b in olds), max(b.max_sequence_number for b in olds)), d
        assert seqs_before
    assert ids_of(t.to_arrow()) == ids_of(pypaimon_read(pypaimon_catalog, "db.c")) == \
        sorted(i * 10 + k for i in range(5) for k in range(4))
    # time travel to before the compaction still reads the old files
    assert ids_of(pypaimon_read(pypaimon_catalog, "db.c", snapshot_id=snap.id - 1)) == ids_of(t.to_arrow())
    assert t.rewrite_data_files() is None                    # nothing small left in pairs


def test_compaction_of_an_append_table_reads_its_rows_in_spark_tasks(paimon_catalog, pypaimon_catalog, monkeypatch):
    from icefloe.paimon import maintenance

    t = paimon_catalog.create_table("db.c", "id bigint not null, name string, p int", partitioned_by=["p"],
                                    properties={"bucket": "2", "bucket-key": "id"})
    for i in range(4):
        t.append(rows(i * 10, 6))
    groups = {os.path.dirname(f.file_path) for f in t.plan_files()}

    def on_the_driver(*args, **kwargs):
        raise AssertionError("the driver read a data file")

    # the Python workers run their own copy of the module: only the driver's is replaced
    monkeypatch.setattr(maintenance, "read_data_file", on_the_driver)
    snap = t.rewrite_data_files()
    assert snap.commit_kind == "COMPACT" and snap.total_record_count == 24
    after = t.plan_files()
    assert {os.path.dirname(f.file_path) for f in after} == groups and len(after) == len(groups)
    expected = sorted(i * 10 + k for i in range(4) for k in range(6))
    assert ids_of(t.to_arrow()) == ids_of(pypaimon_read(pypaimon_catalog, "db.c")) == expected


def test_compaction_honours_where_and_target_size(paimon_catalog):
    t = paimon_catalog.create_table("db.c", "id bigint not null, name string, p int", partitioned_by=["p"])
    for i in range(3):
        t.append(rows(i * 10, 4))
    t.rewrite_data_files(where="p = 0")
    by_part = {}
    for f in t.plan_files():
        by_part.setdefault(os.path.basename(os.path.dirname(os.path.dirname(f.file_path))), []).append(f)
    assert len(by_part["p=0"]) == 1 and len(by_part["p=1"]) == 3
    assert t.rewrite_data_files(target_file_size=1) is None  # every file is already "big"


def test_compaction_conflicting_with_an_overwrite_fails_and_leaves_no_trace(paimon_catalog, paimon_warehouse,
                                                                           monkeypatch):
    t = paimon_catalog.create_table("db.c", "id bigint not null, name string, p int")
    for i in range(3):
        t.append(rows(i * 10, 2))
    rival = Catalog(paimon_warehouse, "paimon").load_table("db.c")
    real = FileStoreCommit.apply
    done = []

    def racing(self, *a, **kw):
        if not done:
            done.append(1)
            rival.overwrite(rows(100, 2))
        return real(self, *a, **kw)

    monkeypatch.setattr(FileStoreCommit, "apply", racing)
    on_disk = None
    with pytest.raises(CommitConflictError, match="no longer live"):
        on_disk = data_files_on_disk(t)
        t.rewrite_data_files()
    monkeypatch.undo()
    assert [s.commit_kind for s in t.snapshots()] == ["APPEND"] * 3 + ["OVERWRITE"]
    assert ids_of(t.to_arrow()) == [100, 101]
    # the compaction's own files were deleted; only the overwrite's file is new
    assert len(data_files_on_disk(t) - on_disk) == 1


def test_rewrite_manifests_merges_into_one(paimon_catalog, pypaimon_catalog):
    t = paimon_catalog.create_table("db.m", "id bigint not null, name string, p int", partitioned_by=["p"],
                                    properties={"manifest.merge-min-count": "100"})
    for i in range(6):
        t.append(rows(i * 10, 3))
    t.overwrite(rows(200, 2, p=0))     # DELETE entries too
    assert len(t.store.data_manifests(t.current_snapshot())) > 3
    snap = t.rewrite_manifests()
    assert snap.commit_kind == "COMPACT" and snap.delta_record_count == 0
    assert len(t.store.read_manifest_list(snap.base_manifest_list)) == 1
    assert t.store.read_manifest_list(snap.delta_manifest_list) == []
    assert ids_of(t.to_arrow()) == ids_of(pypaimon_read(pypaimon_catalog, "db.m")) == [200, 201]


def test_rollback_deletes_later_snapshots_and_their_files(paimon_catalog, pypaimon_catalog):
    t = paimon_catalog.create_table("db.r", "id bigint not null, name string, p int", partitioned_by=["p"])
    t.append(rows(0, 4))
    t.append(rows(10, 4))
    files_at_2, manifests_at_2 = data_files_on_disk(t), manifests_on_disk(t)
    t.append(rows(20, 4))
    t.overwrite(rows(30, 2))
    target = t.rollback_to_snapshot(2)
    assert target.id == 2 and [s.id for s in t.snapshots()] == [1, 2]
    assert open(os.path.join(t.location, "snapshot", "LATEST")).read() == "2"
    assert ids_of(t.to_arrow()) == ids_of(pypaimon_read(pypaimon_catalog, "db.r")) == \
        [0, 1, 2, 3, 10, 11, 12, 13]
    assert data_files_on_disk(t) == files_at_2                 # files only 3 and 4 added are gone
    assert manifests_on_disk(t) == manifests_at_2
    assert t.append(rows(50, 1)).id == 3                       # history continues from the target
    with pytest.raises(NoSuchSnapshotError):
        t.rollback_to_snapshot(99)


def test_rollback_to_timestamp_and_expire_arguments(paimon_catalog):
    import time

    t = paimon_catalog.create_table("db.r", "id bigint not null, name string, p int",
                                    properties={"write-only": "true"})
    t.append(rows(0, 1))
    time.sleep(0.01)
    t.append(rows(1, 1))
    mid = t.current_snapshot().time_millis
    time.sleep(0.01)
    t.append(rows(2, 1))
    t.append(rows(3, 1))
    assert t.rollback_to_timestamp(mid).id == 2 and ids_of(t.to_arrow()) == [0, 1]
    t.append(rows(4, 1))
    t.append(rows(5, 1))
    assert t.expire_snapshots(older_than=t.current_snapshot().time_millis + 1, retain_last=2).expired_snapshot_ids == [1, 2]
    assert [s.id for s in t.snapshots()] == [3, 4] and ids_of(t.to_arrow()) == [0, 1, 4, 5]


def test_expiry_reads_no_manifest_of_an_append_only_delta(paimon_catalog, monkeypatch):
    """Expiring snapshots whose deltas only add files reads none of their manifests (their list's
    counts say so); a delta that deletes files (a compaction, an overwrite) is read and the files
    it deleted go, while every file a kept snapshot reads stays."""
    from icefloe.paimon.file_store import FileStore

    t = paimon_catalog.create_table("db.x", "id bigint not null, name string, p int",
                                    properties={"write-only": "true"})
    for i in range(4):
        t.append(rows(i * 10, 10))
    t.compact()
    for i in range(4, 6):
        t.append(rows(i * 10, 10))
    before = data_files_on_disk(t)
    reads = []
    real = FileStore.read_manifest

    def spy(self, name, *args, **kwargs):
        reads.append(name)
        return real(self, name, *args, **kwargs)

    monkeypatch.setattr(FileStore, "read_manifest", spy)
    kinds = {s.id: s.commit_kind for s in t.snapshots()}
    latest = t.current_snapshot()
    expired = t.expire_snapshots(older_than=latest.time_millis + 1, retain_last=1).expired_snapshot_ids
    monkeypatch.setattr(FileStore, "read_manifest", real)
    assert expired == sorted(kinds)[:-1]
    assert sorted(kinds.values()) == ["APPEND"] * 6 + ["COMPACT"]
    after = data_files_on_disk(t)
    assert ids_of(t.to_arrow()) == list(range(60))
    gone = before - after
    assert len(gone) == 4                          # the four appended files the compaction replaced
    live = {e.file.file_name for e in t.plan()}
    assert {os.path.basename(p) for p in after} >= live
    assert 0 < len(reads) <= 2, reads                # the compaction's delta only, of the five expired
