"""Paimon tags (``tag/tag-<name>``): create, list, replace, delete; time travel by tag after
its snapshot expired (icefloe, Spark, the data source and pypaimon); expiry, tag deletion,
orphan cleanup and rollback delete exactly the files nothing else needs."""
import datetime
import hashlib
import json
import os

import pyarrow as pa
import pytest

from icefloe.errors import InvalidNameError, NoSuchSnapshotError
from icefloe.catalog import Catalog
from icefloe.paimon.tag import NoSuchTagError, TagAlreadyExistsError, TagError
from tests.paimon.test_paimon_interop import pypaimon_read

DAY_MS = 24 * 3600 * 1000


def rows(start, n):
    ids = range(start, start + n)
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "p": pa.array([i % 2 for i in ids], pa.int32())})


def ids_of(table):
    return sorted(table.column("id").to_pylist())


def data_files(t):
    return {os.path.join(d, f) for d, _, fs in os.walk(t.location) for f in fs
            if f.startswith("data-") and f.endswith(".parquet")}


def manifests(t):
    return set(os.listdir(os.path.join(t.location, "manifest")))


def used_manifests(t, *snaps):
    """Manifest lists and manifests the given snapshots name (read directly from their lists)."""
    out = set()
    for s in snaps:
        for lst in (s.base_manifest_list, s.delta_manifest_list):
            out.add(lst)
            out.update(m.file_name for m in t.store.read_manifest_list(lst))
    return out


def tree(t):
    """Every file under the table with a hash of its bytes."""
    out = {}
    for d, _, fs in os.walk(t.location):
        for f in fs:
            p = os.path.join(d, f)
            out[p] = hashlib.sha1(open(p, "rb").read()).hexdigest()
    return out


def expire_all_but_last(t, n=1):
    return t.expire_snapshots(older_than=t.current_snapshot().time_millis + 1, retain_last=n).expired_snapshot_ids


def pypaimon_tag_read(pcat, name, tag):
    pt = pcat.get_table(name).copy({"scan.tag-name": tag})
    rb = pt.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


@pytest.fixture
def table(paimon_catalog):
    # write-only: commits never expire snapshots; the tests expire explicitly
    return paimon_catalog.create_table("db.t", "id bigint not null, name string, p int", partitioned_by=["p"],
                                       properties={"write-only": "true"})


# --------------------------------------------------------------------------- API
def test_create_list_read_and_delete(table, pypaimon_catalog):
    t = table
    t.append(rows(0, 4))
    t.append(rows(10, 2))
    tag = t.create_tag("latest")                      # default: the latest snapshot
    assert tag.snapshot_id == 2 and tag.type == "tag"
    t.create_tag("first", 1)
    t.create_tag("7", snapshot_id=1)                  # digits are a name too (Paimon 1.x)
    t.overwrite(rows(20, 2))
    # the tag file is the snapshot file, byte for byte
    loc = t.location
    assert open(f"{loc}/tag/tag-first", "rb").read() == open(f"{loc}/snapshot/snapshot-1", "rb").read()
    assert list(t.tags()) == ["7", "first", "latest"]            # by snapshot id, then name
    assert {n: g.snapshot_id for n, g in t.refs().items()} == {"7": 1, "first": 1, "latest": 2}
    assert ids_of(t.to_arrow(tag="first")) == [0, 1, 2, 3]
    assert ids_of(t.to_arrow(ref="latest")) == [0, 1, 2, 3, 10, 11]
    assert ids_of(t.to_arrow()) == [20, 21]
    assert t.snapshot_for(ref="latest").id == 2
    assert sorted(os.path.basename(f.file_path) for f in t.plan_files(tag="first")) == \
        sorted(os.path.basename(f.file_path) for f in t.plan_files(snapshot_id=1))
    assert ids_of(t.to_arrow(tag="first", where="id >= 2")) == [2, 3]
    assert ids_of(pypaimon_tag_read(pypaimon_catalog, "db.t", "latest")) == [0, 1, 2, 3, 10, 11]
    assert sorted(pypaimon_catalog.get_table("db.t").list_tags()) == ["7", "first", "latest"]

    before = tree(t)
    assert t.delete_tag("latest") == []               # its snapshot still holds every file
    after = tree(t)
    assert set(before) - set(after) == {f"{loc}/tag/tag-latest"} and not set(after) - set(before)
    t.drop_tag("7")                                    # the Iceberg API's name
    assert list(t.tags()) == ["first"]
    with pytest.raises(NoSuchTagError, match="latest"):
        t.to_arrow(tag="latest")
    with pytest.raises(NoSuchSnapshotError):           # what a read of a missing ref raises for Iceberg too
        t.to_arrow(ref="latest")


def test_bad_input_is_refused_and_changes_nothing(table, paimon_catalog):
    t = table
    empty = paimon_catalog.create_table("db.e", "id bigint")
    with pytest.raises(NoSuchSnapshotError, match="no snapshot"):
        empty.create_tag("x")
    assert empty.tags() == {} and not os.path.exists(f"{empty.location}/tag/tag-x")

    t.append(rows(0, 2))
    t.create_tag("a")
    before = tree(t)
    for bad in ["", "   ", "a/b", "../x", "..", ".", "x\n", "a\\b", "\x00", "n" * 201, None, 7]:
        with pytest.raises(InvalidNameError):
            t.create_tag(bad)
    with pytest.raises(TagAlreadyExistsError, match="'a' already exists"):
        t.create_tag("a")
    for sid in (99, 0, -1, "x"):
        with pytest.raises(NoSuchSnapshotError):
            t.create_tag("b", sid)
    with pytest.raises(NoSuchTagError):
        t.delete_tag("nope")
    with pytest.raises(NoSuchTagError):
        t.replace_tag("nope", 1)
    with pytest.raises(NoSuchSnapshotError):
        t.replace_tag("a", 42)
    with pytest.raises(NoSuchTagError):
        t.rollback_to_tag("nope")
    with pytest.raises(ValueError, match="one of"):
        t.to_arrow(snapshot_id=1, tag="a")
    with pytest.raises(ValueError, match="ref or tag"):
        t.to_arrow(ref="a", tag="b")
    assert tree(t) == before
    assert not os.path.exists(os.path.join(os.path.dirname(t.location), "x"))
    # the errors are the library's typed ones
    assert issubclass(TagAlreadyExistsError, TagError) and issubclass(NoSuchTagError, NoSuchSnapshotError)


# --------------------------------------------------------------------------- expiry and deletion
def _history(t):
    """s1 append A, tag t1; s2 append B; s3 overwrite C (deletes A and B); s4 append D."""
    files = []
    t.append(rows(0, 4))
    files.append(data_files(t))
    t.create_tag("t1")
    t.append(rows(10, 4))
    files.append(data_files(t) - set().union(*files))
    t.overwrite(rows(20, 2))
    files.append(data_files(t) - set().union(*files))
    t.append(rows(30, 2))
    files.append(data_files(t) - set().union(*files))
    return files                                      # the data files each snapshot added


def test_tag_survives_expiry_and_expiry_deletes_only_what_no_tag_needs(table, pypaimon_catalog):
    t = table
    a, b, c, d = _history(t)
    assert expire_all_but_last(t) == [1, 2, 3]
    assert [s.id for s in t.snapshots()] == [4]
    assert open(f"{t.location}/snapshot/EARLIEST").read() == "4"
    # A is kept for the tag, B (deleted by snapshot 3, in no tag) is gone
    assert data_files(t) == a | c | d
    # manifests: exactly those the latest snapshot or the tag uses
    tag_snap = t.tag("t1").snapshot
    assert manifests(t) == used_manifests(t, t.current_snapshot(), tag_snap)
    # the tag still reads, by icefloe and by pypaimon; so does the latest snapshot
    assert ids_of(t.to_arrow(tag="t1")) == ids_of(pypaimon_tag_read(pypaimon_catalog, "db.t", "t1")) == [0, 1, 2, 3]
    assert ids_of(t.to_arrow()) == ids_of(pypaimon_read(pypaimon_catalog, "db.t")) == [20, 21, 30, 31]
    with pytest.raises(NoSuchSnapshotError):
        t.to_arrow(snapshot_id=1)
    # orphan cleanup agrees that nothing is unreferenced
    assert t.remove_orphan_files(older_than=t.current_snapshot().time_millis + DAY_MS, dry_run=True) == []

    # deleting the tag deletes what only it kept: A and its manifests; the latest reads on
    removed = t.delete_tag("t1")
    assert data_files(t) == c | d
    assert set(removed) >= a and not set(removed) & (c | d)
    assert manifests(t) == used_manifests(t, t.current_snapshot())
    assert ids_of(t.to_arrow()) == ids_of(pypaimon_read(pypaimon_catalog, "db.t")) == [20, 21, 30, 31]
    assert t.remove_orphan_files(older_than=t.current_snapshot().time_millis + DAY_MS, dry_run=True) == []


def test_deleting_a_tag_keeps_what_another_tag_or_a_snapshot_needs(table):
    t = table
    t.append(rows(0, 4))                               # A: live in 1, 2
    a = data_files(t)
    t.create_tag("t1")
    t.append(rows(10, 2))                              # B: live in 2
    t.create_tag("t2")
    t.create_tag("t2-again")                           # a second tag of snapshot 2
    t.overwrite(rows(20, 2))                           # deletes A and B
    t.append(rows(30, 2))
    expire_all_but_last(t)
    on_disk = data_files(t)
    assert a <= on_disk
    # t1's files are all live in t2: deleting t1 deletes only t1's own manifest lists
    removed = t.delete_tag("t1")
    assert data_files(t) == on_disk and all("/manifest/manifest-list-" in p for p in removed)
    assert manifests(t) == used_manifests(t, t.current_snapshot(), t.tag("t2").snapshot)
    # two tags of one snapshot: deleting one keeps every file
    assert t.delete_tag("t2-again") == [] and data_files(t) == on_disk
    assert ids_of(t.to_arrow(tag="t2")) == [0, 1, 2, 3, 10, 11]
    # the last tag: A and B go, the latest snapshot's files stay
    t.delete_tag("t2")
    assert data_files(t) == {f.file_path for f in t.plan_files()} and not a & data_files(t)
    assert len(on_disk - data_files(t)) == len(a) + 2
    assert manifests(t) == used_manifests(t, t.current_snapshot())


def test_replace_tag_moves_it_and_cleans_what_only_the_old_snapshot_kept(table, pypaimon_catalog):
    t = table
    a, b, c, d = _history(t)
    expire_all_but_last(t, 2)                          # keeps 3 and 4
    assert data_files(t) == a | c | d
    moved = t.replace_tag("t1", 3)
    assert moved.snapshot_id == 3 and t.tag("t1").snapshot_id == 3
    assert data_files(t) == c | d
    assert manifests(t) == used_manifests(t, t.snapshot(3), t.snapshot(4))
    assert ids_of(t.to_arrow(tag="t1")) == ids_of(pypaimon_tag_read(pypaimon_catalog, "db.t", "t1")) == [20, 21]
    assert t.replace_tag("t1").snapshot_id == 4        # default: the latest


def test_pypaimon_tags_with_retention_are_read_and_protected(table, pypaimon_catalog):
    t = table
    t.append(rows(0, 4))
    a = data_files(t)
    t.append(rows(10, 2))
    pt = pypaimon_catalog.get_table("db.t")
    pt.create_tag("py", 1, time_retained="1d")         # tagCreateTime and tagTimeRetained fields
    doc = json.loads(open(f"{t.location}/tag/tag-py").read())
    assert "tagCreateTime" in doc and "tagTimeRetained" in doc
    tag = t.tag("py")
    assert tag.snapshot_id == 1 and tag.time_retained.total_seconds() == 86400 and tag.create_time.year >= 2024
    # the tags system table (Paimon's columns): create_time and time_retained as Paimon shows them
    tags_table = t.metadata_table("tags")
    assert tags_table.column_names[:4] == ["tag_name", "snapshot_id", "schema_id", "commit_time"]
    assert str(tags_table.schema.field("commit_time").type) == "timestamp[us, tz=UTC]"
    table_rows = [tuple(r.values()) for r in tags_table.to_pylist()]
    created = tag.create_time.astimezone(datetime.timezone.utc)    # Paimon records local wall-clock time
    assert [(r[0], r[1], r[4], r[5], r[6]) for r in table_rows] == [("py", 1, 4, created, "PT24H")]
    t.overwrite(rows(20, 2))
    t.append(rows(30, 1))
    expire_all_but_last(t)
    assert a <= data_files(t)
    assert ids_of(t.to_arrow(tag="py")) == ids_of(pypaimon_tag_read(pypaimon_catalog, "db.t", "py")) == [0, 1, 2, 3]
    assert t.remove_orphan_files(older_than=t.current_snapshot().time_millis + DAY_MS, dry_run=True) == []
    # a tag icefloe created is listed and read by pypaimon's tag manager
    t.create_tag("ours")
    assert sorted(pt.list_tags()) == ["ours", "py"]
    assert pt.tag_manager().get("ours").id == t.current_snapshot().id


def test_orphan_cleanup_deletes_nothing_a_tag_holds(table):
    t = table
    a, b, c, d = _history(t)
    expire_all_but_last(t)
    # an interrupted write left a stray data file and manifest behind
    stray = os.path.join(t.location, "p=0", "bucket-0", "data-stray-0.parquet")
    open(stray, "wb").write(b"x")
    open(os.path.join(t.location, "manifest", "manifest-stray-0"), "wb").write(b"x")
    later = t.current_snapshot().time_millis + DAY_MS
    removed = t.remove_orphan_files(older_than=later)
    assert sorted(os.path.basename(p) for p in removed) == ["data-stray-0.parquet", "manifest-stray-0"]
    assert data_files(t) == a | c | d
    assert ids_of(t.to_arrow(tag="t1")) == [0, 1, 2, 3]


def test_commit_expiry_honours_tags(paimon_catalog, pypaimon_catalog):
    # commits expire by the retention options (here: keep the last 2)
    t = paimon_catalog.create_table("db.x", "id bigint not null, name string, p int", partitioned_by=["p"],
                                    properties={"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "2"})
    t.append(rows(0, 2))
    t.create_tag("keep")
    for i in range(1, 6):
        t.overwrite(rows(i * 10, 2))
    assert [s.id for s in t.snapshots()] == [5, 6]
    assert ids_of(t.to_arrow(tag="keep")) == ids_of(pypaimon_tag_read(pypaimon_catalog, "db.x", "keep")) == [0, 1]
    assert len(data_files(t)) == 2 + 2 + 2              # the tag's, snapshot 5's and 6's


# --------------------------------------------------------------------------- races with expiry
def test_a_tag_whose_snapshot_expires_while_it_is_written_is_undone(table, monkeypatch):
    from icefloe.paimon.tag import TagManager

    t = table
    t.append(rows(0, 2))
    t.append(rows(10, 2))
    write = TagManager.write

    def write_then_expire(self, name, data, overwrite):
        write(self, name, data, overwrite)
        os.unlink(f"{t.location}/snapshot/snapshot-1")   # an expiration deleted it meanwhile

    monkeypatch.setattr(TagManager, "write", write_then_expire)
    with pytest.raises(NoSuchSnapshotError, match="expired while tag"):
        t.create_tag("late", 1)
    assert t.tags() == {}


def test_expiry_keeps_the_files_of_a_tag_created_while_it_ran(table, monkeypatch):
    from icefloe.paimon.snapshot import SnapshotManager

    t = table
    a, b, c, d = _history(t)
    t.delete_tag("t1")
    delete = SnapshotManager.delete_snapshot
    done = []

    def tag_then_delete(self, sid):
        if not done:          # a tag of snapshot 2 appears after expiry listed the tags
            done.append(sid)
            data = open(self.snapshot_path(2), "rb").read()
            open(f"{t.location}/tag/tag-late", "wb").write(data)
        delete(self, sid)

    monkeypatch.setattr(SnapshotManager, "delete_snapshot", tag_then_delete)
    assert expire_all_but_last(t) == [1, 2, 3]
    monkeypatch.undo()
    assert data_files(t) == a | b | c | d
    assert ids_of(t.to_arrow(tag="late")) == [0, 1, 2, 3, 10, 11, 12, 13]


# --------------------------------------------------------------------------- rollback
def test_rollback_deletes_later_tags_and_keeps_the_files_of_earlier_ones(table, pypaimon_catalog):
    t = table
    t.append(rows(0, 4))                               # 1: A
    a = data_files(t)
    t.create_tag("old")
    t.overwrite(rows(10, 2))                           # 2: B (A deleted)
    b = data_files(t) - a
    t.append(rows(20, 2))                              # 3: B + C
    c = data_files(t) - a - b
    t.create_tag("mid")
    t.append(rows(30, 2))                              # 4: + D
    t.create_tag("new")
    t.append(rows(40, 2))                              # 5: + E
    assert expire_all_but_last(t, 4) == [1]
    target = t.rollback_to_snapshot(3)
    assert target.id == 3 and [s.id for s in t.snapshots()] == [2, 3]
    assert list(t.tags()) == ["old", "mid"]            # as Paimon: the tag of snapshot 4 is gone
    assert data_files(t) == a | b | c                  # D and E went; A stays for "old"
    assert manifests(t) == used_manifests(t, t.snapshot(2), t.snapshot(3), t.tag("old").snapshot)
    assert ids_of(t.to_arrow(tag="old")) == ids_of(pypaimon_tag_read(pypaimon_catalog, "db.t", "old")) == [0, 1, 2, 3]
    assert ids_of(t.to_arrow()) == ids_of(pypaimon_read(pypaimon_catalog, "db.t")) == [10, 11, 20, 21]
    assert t.remove_orphan_files(older_than=t.current_snapshot().time_millis + DAY_MS, dry_run=True) == []


@pytest.mark.parametrize("how", ["tag", "snapshot id"])
def test_rollback_to_a_tag_restores_its_expired_snapshot(table, pypaimon_catalog, how):
    t = table
    a, b, c, d = _history(t)
    t.append(rows(40, 2))
    t.create_tag("t5")                                 # a later tag: deleted by the rollback
    assert expire_all_but_last(t, 2) == [1, 2, 3]
    target = t.rollback_to_tag("t1") if how == "tag" else t.rollback_to_snapshot(1)
    assert target.id == 1 and [s.id for s in t.snapshots()] == [1]
    snap_dir = f"{t.location}/snapshot"
    assert open(f"{snap_dir}/EARLIEST").read() == open(f"{snap_dir}/LATEST").read() == "1"
    assert open(f"{snap_dir}/snapshot-1", "rb").read() == open(f"{t.location}/tag/tag-t1", "rb").read()
    assert list(t.tags()) == ["t1"]
    assert data_files(t) == a                          # C, D and the later appends are gone
    assert manifests(t) == used_manifests(t, t.current_snapshot())
    assert ids_of(t.to_arrow()) == ids_of(pypaimon_read(pypaimon_catalog, "db.t")) == [0, 1, 2, 3]
    assert t.append(rows(50, 1)).id == 2               # history goes on from the tag
    assert ids_of(pypaimon_read(pypaimon_catalog, "db.t")) == [0, 1, 2, 3, 50]


# --------------------------------------------------------------------------- Spark
def test_spark_reads_a_tag_after_its_snapshot_expired(paimon_warehouse, spark):
    cat = Catalog(paimon_warehouse, "paimon", spark)
    t = cat.create_table("db.s", "id bigint not null, name string, p int", partitioned_by=["p"],
                         properties={"write-only": "true"})
    t.append(rows(0, 4))
    t.create_tag("v1")
    t.overwrite(rows(10, 2))
    t.append(rows(20, 2))
    expire_all_but_last(t)
    assert sorted(r.id for r in t.to_spark(tag="v1").collect()) == [0, 1, 2, 3]
    assert sorted(r.id for r in t.to_spark(ref="v1", where="p = 1").collect()) == [1, 3]
    df = spark.read.format("icefloe").option("tag", "v1").load(t.location)
    assert sorted(r.id for r in df.collect()) == [0, 1, 2, 3]
    assert sorted(r.id for r in spark.read.format("icefloe").load(t.location).collect()) == [10, 11, 20, 21]
    with pytest.raises(Exception, match="no tag 'nope'"):
        spark.read.format("icefloe").option("tag", "nope").load(t.location).collect()


# --------------------------------------------------------------------------- faults
def _readable(t):
    """What every snapshot and tag reads (a missing file would raise)."""
    out = {("snapshot", s.id): ids_of(t.to_arrow(snapshot_id=s.id)) for s in t.snapshots()}
    out.update({("tag", name): ids_of(t.to_arrow(tag=name)) for name in t.tags()})
    return out


@pytest.mark.parametrize("op", ["delete_tag", "replace_tag", "expire", "rollback_to_tag"])
def test_a_fault_at_any_point_leaves_every_snapshot_and_tag_readable(tmp_path, op):
    from icefloe.core.faults import FaultInjectingFileIO, InjectedFault

    def setup(wh):
        t = Catalog(wh, "paimon").create_table("db.t", "id bigint not null, name string, p int", partitioned_by=["p"],
                                           properties={"write-only": "true"})
        _history(t)
        t.create_tag("t3", 3)
        if op != "expire":
            expire_all_but_last(t, 2)            # 3 and 4 stay; t1's snapshot expired
        return t

    def run(t):
        if op == "delete_tag":
            t.delete_tag("t1")
        elif op == "replace_tag":
            t.replace_tag("t1", 4)
        elif op == "expire":
            expire_all_but_last(t)
        else:
            t.rollback_to_tag("t1")

    before = _readable(setup(str(tmp_path / "before")))
    probe = str(tmp_path / "probe")
    setup(probe)
    io = FaultInjectingFileIO()
    run(Catalog(probe, "paimon", io=io).load_table("db.t"))
    after = _readable(Catalog(probe, "paimon").load_table("db.t"))
    assert io.count >= 3 and any(o == "delete" for o, _ in io.log), io.log
    for k in range(1, io.count + 1):
        wh = str(tmp_path / f"{op}-{k}")
        setup(wh)
        try:
            run(Catalog(wh, "paimon", io=FaultInjectingFileIO(fail_at=k)).load_table("db.t"))
        except InjectedFault:
            pass
        state = _readable(Catalog(wh, "paimon").load_table("db.t"))
        for key, value in state.items():
            assert value in (before.get(key), after.get(key)), (k, key, value)
        assert state.get(("tag", "t1")) in (before[("tag", "t1")], after.get(("tag", "t1"))), k
