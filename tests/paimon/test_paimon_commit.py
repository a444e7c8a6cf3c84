"""The commit (seed 004): continuous ids, lost races, failures before visibility, cleanup."""
import os

import pyarrow as pa
import pytest

from icefloe.core.io import FileIO
from icefloe.errors import CommitFailedError
from icefloe.catalog import Catalog
from icefloe.paimon.commit import CommitMessage
from icefloe.paimon.data_file import DataFileMeta
from icefloe.paimon.manifest import DuplicateFileError


def rows(start, n):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "dt": [f"d{i % 2}" for i in range(start, start + n)]})


def ids(table, **kw):
    return sorted(table.to_arrow(**kw).column("id").to_pylist())


def manifest_files(table) -> set:
    return set(os.listdir(os.path.join(table.location, "manifest")))


def referenced_manifest_files(table) -> set:
    """Every manifest list and manifest some snapshot uses."""
    store = table.refresh().store
    out = set()
    for s in table.snapshots():
        out |= {s.base_manifest_list, s.delta_manifest_list}
        out |= {m.file_name for m in store.data_manifests(s)}
    return out


def data_files(table) -> set:
    out = set()
    for root, dirs, files in os.walk(table.location):
        dirs[:] = [d for d in dirs if d not in ("manifest", "snapshot", "schema")]
        out |= {os.path.join(root, f) for f in files if f.endswith(".parquet")}
    return out


class HookIO(FileIO):
    """FileIO that runs a hook (or raises) when a snapshot file is about to be created."""

    def __init__(self, hook=None, times=1):
        self.hook = hook
        self.times = times
        self.snapshot_writes = 0

    def write_bytes(self, path, data, overwrite=True):
        if "/snapshot/snapshot-" in path and not overwrite:
            self.snapshot_writes += 1
            if self.hook is not None and self.times > 0:
                self.times -= 1
                self.hook(path)
        return super().write_bytes(path, data, overwrite)


def open_with(warehouse, io):
    return Catalog(warehouse, "paimon", io=io).load_table("db.t")


@pytest.fixture
def table(paimon_catalog):
    return paimon_catalog.create_table("db.t", "id bigint not null, dt string", partitioned_by=["dt"],
                                       properties={"commit.min-retry-wait": "1 ms"})


def test_ids_start_at_one_and_are_continuous(table):
    assert table.current_snapshot() is None and table.to_arrow().num_rows == 0
    for i in range(5):
        s = table.append(rows(i * 10, 3))
        assert s.id == i + 1
    assert [s.id for s in table.snapshots()] == [1, 2, 3, 4, 5]
    assert [s.total_record_count for s in table.snapshots()] == [3, 6, 9, 12, 15]
    assert referenced_manifest_files(table) == manifest_files(table)


def test_empty_append_commits_nothing_but_empty_overwrite_truncates(table):
    table.append(rows(0, 4))
    assert table.append(rows(0, 0)) is None
    assert len(table.snapshots()) == 1
    s = table.overwrite(rows(0, 0))
    assert s.commit_kind == "OVERWRITE" and s.total_record_count == 0
    assert ids(table) == [] and ids(table, snapshot_id=1) == [0, 1, 2, 3]


def test_overwrite_deletes_every_live_file(table):
    table.append(rows(0, 4))
    table.append(rows(10, 4))
    s = table.overwrite(rows(100, 2))
    assert ids(table) == [100, 101]
    entries = table.store.entries(table.store.read_manifest_list(s.delta_manifest_list))
    kinds = sorted(e.kind for e in entries)
    assert kinds.count(1) == 4 and kinds.count(0) == 2  # 4 DELETEs (2 files x 2 commits) and 2 ADDs
    assert ids(table, snapshot_id=2) == [0, 1, 2, 3, 10, 11, 12, 13]


def test_lost_race_retries_on_new_latest_and_cleans_up(table, paimon_warehouse):
    table.append(rows(0, 2))
    rival = Catalog(paimon_warehouse, "paimon").load_table("db.t")

    def rival_commits_first(path):
        rival.append(rows(50, 2))   # takes the snapshot id our attempt planned

    io = HookIO(rival_commits_first)
    ours = open_with(paimon_warehouse, io)
    s = ours.append(rows(100, 2))
    assert io.snapshot_writes == 2   # our lost attempt, then our retry
    assert s.id == 3
    assert [x.commit_user for x in ours.snapshots()][1:] == [rival.commit_user, ours.commit_user]
    assert ids(ours) == [0, 1, 50, 51, 100, 101]
    # the losing attempt's manifests and lists are gone: only referenced files remain
    assert manifest_files(ours) == referenced_manifest_files(ours)


def test_retries_run_out(paimon_catalog, paimon_warehouse):
    from icefloe.paimon.writer import write_arrow_table

    table = paimon_catalog.create_table("db.t", "id bigint not null, dt string", partitioned_by=["dt"],
                                        properties={"commit.max-retries": "2", "commit.min-retry-wait": "1 ms"})
    table.append(rows(0, 2))
    rival = Catalog(paimon_warehouse, "paimon").load_table("db.t")
    counter = iter(range(1000, 2000))

    def always_lose(path):
        rival.append(rows(next(counter), 1))

    before_data = data_files(table)
    io = HookIO(always_lose, times=100)
    ours = open_with(paimon_warehouse, io)
    messages = write_arrow_table(ours.store, ours.table_schema, rows(500, 2))
    with pytest.raises(CommitFailedError, match="lost the race"):
        ours.commit(messages)
    assert io.snapshot_writes == 3   # the first attempt and 2 retries
    assert manifest_files(table) == referenced_manifest_files(table)
    assert 500 not in ids(table)     # our data files were deleted, the rival's are there
    assert before_data < data_files(table)
    assert not any(os.path.exists(f.file_path) for m in messages for f in m.new_files)


class FailingSnapshotIO(FileIO):
    def write_bytes(self, path, data, overwrite=True):
        if "/snapshot/snapshot-" in path:
            raise OSError("disk gone while writing the snapshot")
        return super().write_bytes(path, data, overwrite)


def test_failure_before_snapshot_is_visible_leaves_nothing(table, paimon_warehouse):
    table.append(rows(0, 3))
    manifests_before, data_before = manifest_files(table), data_files(table)
    broken = open_with(paimon_warehouse, FailingSnapshotIO())
    with pytest.raises(OSError, match="disk gone"):
        broken.append(rows(100, 3))
    assert manifest_files(table) == manifests_before
    assert data_files(table) == data_before
    assert [s.id for s in table.snapshots()] == [1]
    assert ids(table) == [0, 1, 2]
    # and the table still works
    assert table.append(rows(10, 1)).id == 2


class FailingListIO(FileIO):
    """Fails on the second manifest list write (the delta list), after manifests exist."""

    def __init__(self):
        self.lists = 0

    def write_bytes(self, path, data, overwrite=True):
        if "/manifest/manifest-list-" in path:
            self.lists += 1
            if self.lists == 2:
                raise OSError("injected")
        return super().write_bytes(path, data, overwrite)


def test_failure_writing_manifest_list_cleans_up(table, paimon_warehouse):
    table.append(rows(0, 3))
    before = manifest_files(table)
    with pytest.raises(OSError, match="injected"):
        open_with(paimon_warehouse, FailingListIO()).append(rows(100, 3))
    assert manifest_files(table) == before
    assert len(table.snapshots()) == 1


def test_snapshot_visible_despite_error_after_write_is_kept(table, paimon_warehouse):
    class ErrorAfterWrite(FileIO):
        def write_bytes(self, path, data, overwrite=True):
            super().write_bytes(path, data, overwrite)
            if "/snapshot/snapshot-" in path:
                raise OSError("lost the acknowledgement")

    s = open_with(paimon_warehouse, ErrorAfterWrite()).append(rows(7, 1))
    assert s.id == 1 and ids(table) == [7]
    assert manifest_files(table) == referenced_manifest_files(table)


def test_same_file_twice_in_one_commit_is_an_error(table):
    f = DataFileMeta(file_name="data-x-0.parquet", file_size=1, row_count=1)
    with pytest.raises(DuplicateFileError):
        table.commit([CommitMessage(("d0",), 0, -1, [f]), CommitMessage(("d0",), 0, -1, [f])])
    assert table.snapshots() == []


def test_snapshot_expiration(paimon_catalog):
    t = paimon_catalog.create_table("db.e", "id bigint", properties={
        "snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3", "snapshot.time-retained": "1 h"})
    t.append(pa.table({"id": pa.array([1], pa.int64())}))
    t.overwrite(pa.table({"id": pa.array([2], pa.int64())}))
    for i in range(3, 6):
        t.append(pa.table({"id": pa.array([i], pa.int64())}))
    assert [s.id for s in t.snapshots()] == [3, 4, 5]
    assert open(os.path.join(t.location, "snapshot", "EARLIEST")).read() == "3"
    assert sorted(t.to_arrow().column("id").to_pylist()) == [2, 3, 4, 5]
    # snapshot 1's file (replaced by the overwrite in 2) is deleted; live files remain
    assert len(data_files(t)) == 4
    assert manifest_files(t) == referenced_manifest_files(t)


def test_write_only_commits_leave_expiry_to_a_separate_job(paimon_catalog):
    t = paimon_catalog.create_table("db.w", "id bigint", properties={
        "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "write-only": "true"})
    for i in range(3):
        t.append(pa.table({"id": pa.array([i], pa.int64())}))
    assert [s.id for s in t.snapshots()] == [1, 2, 3]
    assert t.expire_snapshots().expired_snapshot_ids == [1, 2]
    assert [s.id for s in t.snapshots()] == [3] and sorted(t.to_arrow().column("id").to_pylist()) == [0, 1, 2]


def test_commit_timeout_stops_retrying(paimon_catalog, paimon_warehouse):
    table = paimon_catalog.create_table("db.t", "id bigint not null, dt string", properties={
        "commit.max-retries": "1000", "commit.timeout": "50 ms", "commit.min-retry-wait": "20 ms"})
    rival = Catalog(paimon_warehouse, "paimon").load_table("db.t")
    counter = iter(range(1000, 5000))
    io = HookIO(lambda path: rival.append(rows(next(counter), 1)), times=10_000)
    with pytest.raises(CommitFailedError):
        open_with(paimon_warehouse, io).append(rows(0, 1))
    assert 1 <= io.snapshot_writes < 50
    assert manifest_files(table) == referenced_manifest_files(table)


def test_a_fault_at_every_step_leaves_a_consistent_table(paimon_catalog, paimon_warehouse):
    """Fail each mutating file operation of an append in turn: either the append is committed
    whole, or the table is unchanged and nothing the attempt wrote is left behind."""
    from icefloe.core.faults import FaultInjectingFileIO, InjectedFault

    table = paimon_catalog.create_table("db.t", "id bigint not null, dt string", partitioned_by=["dt"],
                                        properties={"manifest.merge-min-count": "2"})
    table.append(rows(0, 4))
    table.append(rows(4, 4))
    probe = FaultInjectingFileIO()
    open_with(paimon_warehouse, probe).append(rows(1000, 4))
    steps = probe.count
    assert steps >= 6   # data files, manifests, lists, snapshot, hints
    for fail_at in range(1, steps + 1):
        before_snapshots = [s.id for s in table.snapshots()]
        before_ids = ids(table)
        io = FaultInjectingFileIO(fail_at=fail_at)
        try:
            open_with(paimon_warehouse, io).append(rows(100 * fail_at, 2))
            committed = True
        except InjectedFault:
            committed = False
        after = [s.id for s in table.snapshots()]
        if committed:
            assert after == before_snapshots + [before_snapshots[-1] + 1]
            assert ids(table) == sorted(before_ids + [100 * fail_at, 100 * fail_at + 1])
        else:
            assert after == before_snapshots and ids(table) == before_ids
        assert manifest_files(table) == referenced_manifest_files(table), fail_at
        live = {f.file_path for s in after for f in table.plan_files(snapshot_id=s)}
        assert data_files(table) == live, fail_at
