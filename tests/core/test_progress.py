"""Progress reporting: silent without a reporter, one step per unit of work with one."""
import pyarrow as pa

from icefloe.catalog import to_schema
from icefloe.core import progress
from icefloe.catalog import Catalog


def _rows(i):
    return pa.table({"id": pa.array([i, i + 1], pa.int64()), "name": ["a", "b"]})


def test_track_without_reporter_is_plain_iteration():
    assert not progress.active()
    assert list(progress.track(iter(range(3)), "x")) == [0, 1, 2]


def test_track_reports_each_item_and_finishes_on_error():
    rec = progress.Recorder()
    with progress.reporting(rec):
        assert list(progress.track([1, 2, 3], "three")) == [1, 2, 3]
        try:
            for _ in progress.track(range(5), "broken"):
                raise RuntimeError("stop")
        except RuntimeError:
            pass
    assert rec.events[0] == ("start", 1, "three", 3)
    assert rec.steps("three") == 3 and rec.steps("broken") == 0
    assert ("finish", 2) in rec.events     # a loop cut short still closes its bar
    assert not progress.active()


def test_iceberg_expire_and_orphans_report_the_files_they_delete(tmp_path):
    t = Catalog(str(tmp_path)).create_table("db.t", to_schema("id bigint, name string"))
    for i in range(4):
        t.overwrite(_rows(i * 10))
    rec = progress.Recorder()
    with progress.reporting(rec):
        report = t.expire_snapshots(older_than=2**62, retain_last=1)
    assert len(report.expired_snapshot_ids) == 3
    assert rec.steps("reading expired snapshots") == 3
    assert rec.steps("deleting data and delete files") == len(report.deleted_data_files) == 3
    assert rec.steps("deleting manifests") == len(report.deleted_manifests) > 0
    (tmp_path / "db" / "t" / "data" / "stray.parquet").write_bytes(b"x")
    rec = progress.Recorder()
    with progress.reporting(rec):
        orphans = t.remove_orphan_files(older_than=2**62)
    assert [o.rsplit("/", 1)[1] for o in orphans] == ["stray.parquet"]
    assert rec.steps("deleting orphan files") == 1


def test_paimon_expire_reports_progress(tmp_path):
    t = Catalog(str(tmp_path), "paimon").create_table(
        "db.t", "id bigint, name string",
        properties={"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1",
                    "snapshot.time-retained": "1 ms", "snapshot.expire.execution-mode": "sync",
                    "write-only": "true"})
    for i in range(3):
        t.overwrite(_rows(i * 10))
    rec = progress.Recorder()
    with progress.reporting(rec):
        expired = t.expire_snapshots(now_ms=2**62).expired_snapshot_ids
    assert expired == [1, 2]
    assert rec.steps("reading expired snapshots") == 2
    assert rec.steps("deleting data files") == 2   # the files the two overwrites replaced
