"""The Hadoop-layout commit: atomic versions, hint files that never hide commits, cleanup of failed attempts."""
import os
import threading

import pyarrow as pa
import pytest

import icefloe
from icefloe.core.io import FileIO
from icefloe.errors import CorruptMetadataError
from icefloe.catalog import Catalog
from icefloe.iceberg.hadoop import HadoopTableOperations, VersionConflict


def _rows(start, n=5):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "name": [f"n{i}" for i in range(start, start + n)]})


@pytest.fixture
def table(tmp_path):
    cat = Catalog(str(tmp_path / "wh"))
    return cat, cat.create_table("db.t", icefloe.catalog.to_schema("id bigint not null, name string"))


def _metadata_files(t):
    return sorted(os.listdir(f"{t.location}/metadata"))


def test_versions_are_create_if_absent(table):
    cat, t = table
    ops = t.ops
    v, meta = ops.load()
    ops.commit(v, meta, meta)
    with pytest.raises(VersionConflict):
        ops.commit(v, meta, meta)  # version v+1 exists: the second writer must lose


@pytest.mark.parametrize("hint", [None, "", "garbage", "1", "999"])
def test_bad_hint_never_hides_or_invents_versions(table, hint):
    cat, t = table
    for i in range(3):
        t.append(_rows(i * 10))
    hint_path = f"{t.location}/metadata/version-hint.text"
    if hint is None:
        os.remove(hint_path)
    else:
        open(hint_path, "w").write(hint)
    t2 = cat.load_table("db.t")
    assert t2.ops.current_version() == 4
    assert t2.to_arrow().num_rows == 15
    # and a commit through the stale hint still lands on the next version
    t2.append(_rows(100))
    assert t2.ops.current_version() == 5 and t2.to_arrow().num_rows == 20


def test_lost_race_retries_without_rewriting_data(table, monkeypatch):
    cat, t = table
    t.append(_rows(0))
    other = cat.load_table("db.t")
    real_commit = HadoopTableOperations.commit
    calls = {"n": 0}

    def racing_commit(self, base_version, base, new):
        calls["n"] += 1
        if calls["n"] == 1:  # another writer wins this version just before us
            other.append(_rows(50))
        return real_commit(self, base_version, base, new)

    monkeypatch.setattr(HadoopTableOperations, "commit", racing_commit)
    before_data = {p for p in _all_files(t.location) if "/data/" in p}
    snap = t.append(_rows(100))
    monkeypatch.undo()
    assert calls["n"] == 3  # ours lost (1), the other writer's own commit (2), our retry (3)
    assert t.to_arrow().num_rows == 15
    seqs = [s.sequence_number for s in t.snapshots()]
    assert seqs == [1, 2, 3]
    assert snap.parent_snapshot_id == t.snapshots()[1].snapshot_id
    # the losing attempt's manifests and list are gone; only referenced metadata remains
    referenced = _referenced_metadata(t)
    leftovers = [f for f in _metadata_files(t) if f.endswith(".avro") and f not in referenced]
    assert leftovers == []
    data_now = {p for p in _all_files(t.location) if "/data/" in p}
    assert len(data_now - before_data) == 2  # one file per append, none written twice


def _all_files(root):
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]


def _referenced_metadata(t):
    from icefloe.iceberg.manifest_reader import load_manifest_list

    names = set()
    for s in t.snapshots():
        names.add(os.path.basename(s.manifest_list))
        for m in load_manifest_list(t.io, s.manifest_list):
            names.add(os.path.basename(m.manifest_path))
    return names


class FailingIO(FileIO):
    def __init__(self, fail_on):
        self.fail_on = fail_on

    def write_bytes(self, path, data, overwrite=True):
        if self.fail_on(path):
            raise OSError(f"injected failure writing {path}")
        return super().write_bytes(path, data, overwrite)


@pytest.mark.parametrize("point", ["manifest", "manifest-list", "metadata"])
def test_failed_commit_leaves_table_and_directory_unchanged(tmp_path, point):
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table("db.t", icefloe.catalog.to_schema("id bigint not null, name string")).append(_rows(0))
    predicate = {
        "manifest": lambda p: p.endswith(".avro") and "-m" in os.path.basename(p) and not os.path.basename(p).startswith("snap-"),
        "manifest-list": lambda p: os.path.basename(p).startswith("snap-"),
        "metadata": lambda p: p.endswith(".metadata.json"),
    }[point]
    cat = Catalog(wh, io=FailingIO(predicate))
    t = cat.load_table("db.t")
    before = sorted(_all_files(t.location))
    with pytest.raises(OSError, match="injected"):
        t.append(_rows(10))
    assert sorted(_all_files(t.location)) == before
    clean = Catalog(wh).load_table("db.t")
    assert clean.to_arrow().num_rows == 5 and len(clean.snapshots()) == 1


def test_concurrent_threads_all_commit(tmp_path):
    wh = str(tmp_path / "wh")
    Catalog(wh).create_table("db.t", icefloe.catalog.to_schema("id bigint not null, name string"),
                                   properties={"commit.retry.num-retries": "50", "commit.retry.min-wait-ms": "1",
                                               "commit.retry.max-wait-ms": "20"})
    errors = []

    def writer(k):
        try:
            t = Catalog(wh).load_table("db.t")
            for j in range(3):
                t.append(_rows(k * 100 + j * 10, 2))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    t = Catalog(wh).load_table("db.t")
    assert t.to_arrow().num_rows == 24
    assert [s.sequence_number for s in t.snapshots()] == list(range(1, 13))
    assert sorted(t.to_arrow()["id"].to_pylist()) == sorted(k * 100 + j * 10 + i for k in range(4) for j in range(3) for i in range(2))


def test_corrupt_metadata_names_the_file(table):
    cat, t = table
    t.append(_rows(0))
    path = f"{t.location}/metadata/v2.metadata.json"
    open(path, "w").write('{"format-version": 2, "location": ')
    with pytest.raises(CorruptMetadataError, match="v2.metadata.json"):
        cat.load_table("db.t")


def test_corrupt_manifest_list_names_the_file(table):
    cat, t = table
    snap = t.append(_rows(0))
    open(snap.manifest_list, "wb").write(b"Obj\x01garbage")
    from icefloe.iceberg.manifest_reader import clear_manifest_cache
    clear_manifest_cache()
    with pytest.raises(CorruptMetadataError, match=os.path.basename(snap.manifest_list)):
        cat.load_table("db.t").plan_files()
