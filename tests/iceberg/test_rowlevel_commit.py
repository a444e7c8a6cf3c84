"""Row-level commits: conflict validation against concurrent writers, MERGE cardinality, manifest merging."""
import os

import pyarrow as pa
import pytest

from icefloe.errors import CommitConflictError
from icefloe.iceberg.hadoop import HadoopTableOperations
from icefloe.spark.iceberg_dml import MergeCardinalityError

SCHEMA = "id bigint not null, name string, cat string"


def _arrow(ids, cat):
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids], "cat": [cat] * len(ids)})


def _ids(t):
    return sorted(t.to_arrow()["id"].to_pylist())


def _data_files_on_disk(t):
    return {os.path.join(d, f) for d, _, fs in os.walk(f"{t.location}/data") for f in fs if f.endswith(".parquet")}


def _race(monkeypatch, other_writer):
    """Let ``other_writer`` commit just before our first commit attempt."""
    real = HadoopTableOperations.commit
    state = {"done": False}

    def racing(self, base_version, base, new):
        if not state["done"]:
            state["done"] = True
            other_writer()
        return real(self, base_version, base, new)

    monkeypatch.setattr(HadoopTableOperations, "commit", racing)


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_concurrent_append_to_another_partition_retries(catalog, monkeypatch, mode):
    t = catalog.create_table("db.t", SCHEMA, partitioned_by=["cat"], properties={"write.delete.mode": mode})
    t.append(_arrow([1, 2, 3], "a"))
    t.append(_arrow([4, 5], "b"))
    other = catalog.load_table("db.t")
    _race(monkeypatch, lambda: other.append(_arrow([6], "c")))
    r = t.delete("cat = 'a' and id = 2")
    monkeypatch.undo()
    assert r["deleted"] == 1
    assert _ids(t) == [1, 3, 4, 5, 6]
    assert [s.operation for s in t.snapshots()][-2:] == ["append", "overwrite" if mode == "copy-on-write" else "delete"]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_conflicting_commits_fail_cleanly(catalog, monkeypatch, mode):
    t = catalog.create_table("db.t", SCHEMA, partitioned_by=["cat"], properties={"write.update.mode": mode})
    t.append(_arrow([1, 2, 3], "a"))
    other = catalog.load_table("db.t")
    # serializable (default): a concurrent append of rows our predicate could match is a conflict
    before_files = _data_files_on_disk(t)
    _race(monkeypatch, lambda: other.append(_arrow([7], "a")))
    with pytest.raises(CommitConflictError, match="serializable"):
        t.update({"name": "'x'"}, where="cat = 'a'")
    monkeypatch.undo()
    assert _ids(t) == [1, 2, 3, 7]
    assert set(t.to_arrow()["name"].to_pylist()) == {"n1", "n2", "n3", "n7"}
    # nothing of our attempt is left behind: only the other writer's file is new
    assert len(_data_files_on_disk(t) - before_files) == 1
    # snapshot isolation allows it
    _race(monkeypatch, lambda: other.append(_arrow([8], "a")))
    r = t.update({"name": "'x'"}, where="cat = 'a'", isolation_level="snapshot")
    monkeypatch.undo()
    assert r["updated"] == 4
    assert sorted(zip(*[t.to_arrow()[c].to_pylist() for c in ("id", "name")])) == \
        [(1, "x"), (2, "x"), (3, "x"), (7, "x"), (8, "n8")]
    # a concurrent delete of the same rows conflicts under any isolation level
    before = t.current_snapshot().snapshot_id
    _race(monkeypatch, lambda: other.delete("id = 2"))
    with pytest.raises(CommitConflictError):
        t.update({"name": "'y'"}, where="id = 1 or id = 2", isolation_level="snapshot")
    monkeypatch.undo()
    assert t.refresh().current_snapshot().parent_snapshot_id == before  # only the other writer's commit
    assert _ids(t) == [1, 3, 7, 8]


def test_merge_rejects_duplicate_matches(catalog, spark):
    t = catalog.create_table("db.t", SCHEMA)
    t.append(_arrow([1, 2], "a"))
    src = spark.createDataFrame([(1, "p"), (1, "q")], "id bigint, name string")
    with pytest.raises(MergeCardinalityError, match="more than one source row"):
        t.merge(src, "t.id = s.id").when_matched_update({"name": "s.name"}).execute()
    assert len(t.snapshots()) == 1
    # without matched clauses duplicates are fine (they are only inserted or ignored)
    r = t.merge(src, "t.id = s.id").when_not_matched_insert_all().execute()
    assert r["inserted"] == 0 and r["snapshot_id"] is None


def test_manifest_merging_on_commit(catalog):
    t = catalog.create_table("db.t", SCHEMA, properties={"commit.manifest.min-count-to-merge": "3"})
    for i in range(4):
        t.append(_arrow([i], "a"))
    from icefloe.iceberg.manifest_reader import load_manifest_list

    counts = [len(load_manifest_list(t.io, s.manifest_list)) for s in t.snapshots()]
    assert counts == [1, 2, 1, 2]  # the third commit reached min-count 3 and merged all into one
    merged = load_manifest_list(t.io, t.snapshots()[2].manifest_list)[0]
    assert (merged.added_files_count, merged.existing_files_count) == (1, 2)
    assert _ids(t) == [0, 1, 2, 3]
    off = catalog.create_table("db.off", SCHEMA, properties={"commit.manifest-merge.enabled": "false",
                                                             "commit.manifest.min-count-to-merge": "2"})
    for i in range(3):
        off.append(_arrow([i], "a"))
    assert len(load_manifest_list(off.io, off.current_snapshot().manifest_list)) == 3
    snap = off.rewrite_manifests()
    assert snap.operation == "replace" and snap.summary["manifests-replaced"] == "3"
    assert snap.summary["manifests-created"] == "1" and snap.summary["total-records"] == "3"
    ms = load_manifest_list(off.io, snap.manifest_list)
    assert len(ms) == 1 and (ms[0].existing_files_count, ms[0].added_files_count) == (3, 0)
    assert ms[0].min_sequence_number == 1 and ms[0].sequence_number == 4
    assert _ids(off) == [0, 1, 2]


def test_merge_on_read_delete_of_some_rows_keeps_the_rest_of_the_file(catalog, spark):
    """A merge-on-read MERGE reads only the matched target rows: deleting every one of them
    must not be mistaken for deleting the whole data file."""
    t = catalog.create_table("db.m", SCHEMA, properties={"write.merge.mode": "merge-on-read"})
    t.append(_arrow([1, 3], "a"))                    # one data file, two rows
    src = spark.createDataFrame([(3, "s", "a")], "id bigint, name string, cat string")
    r = t.merge(src, "t.id = s.id").when_matched_delete().when_not_matched_insert_all().execute()
    assert r["deleted"] == 1
    assert _ids(t) == [1]
    assert sorted(row.id for row in t.to_spark().collect()) == [1]
    summary = t.current_snapshot().summary
    assert summary.get("deleted-data-files", "0") == "0" and summary["added-position-deletes"] == "1"
    # the same with the one row left deleted too: now the whole file goes
    src = spark.createDataFrame([(1, "s", "a")], "id bigint, name string, cat string")
    t.merge(src, "t.id = s.id").when_matched_delete().execute()
    assert _ids(t) == []


@pytest.mark.parametrize("version", ["2", "3"])
def test_merge_on_read_delete_is_one_job_and_an_emptied_file_is_dropped(catalog, spark, version):
    """A merge-on-read DELETE writes its positions straight from the scan (no checkpoint, no count
    job: at most the shuffle's map job and the write); one that empties a data file (here behind an
    earlier delete file naming other data files too) drops the file instead, leaving no delete
    file of its own behind."""
    t = catalog.create_table("db.one" + version, SCHEMA, properties={
        "write.delete.mode": "merge-on-read", "format-version": version})
    t.append(spark.range(1000).selectExpr("id", "cast(id as string) as name", "'a' as cat"))
    t.append(_arrow([5000, 5002], "b"))
    sc = spark.sparkContext
    sc.setJobGroup("icefloe-one-job-" + version, "delete")
    try:
        r = t.delete("id % 10 = 1 or id = 5000")
    finally:
        sc.setJobGroup("", "")
    assert r["deleted"] == 101
    assert len(sc.statusTracker().getJobIdsForGroup("icefloe-one-job-" + version)) <= 2
    assert t.current_snapshot().summary.get("deleted-data-files", "0") == "0"
    r = t.delete("id = 5002")                         # the small file's last live row
    assert r["deleted"] == 1
    summary = t.current_snapshot().summary
    assert summary["deleted-data-files"] == "1" and summary.get("added-delete-files", "0") == "0", summary
    assert _ids(t) == [i for i in range(1000) if i % 10 != 1]
    assert t.check().ok, t.check().problems
    assert not t.remove_orphan_files(older_than=2**62, dry_run=True)      # the unused delete files went


@pytest.mark.parametrize("version", ["2", "3"])
def test_merge_on_read_merge_counts_come_from_the_writing_tasks(catalog, spark, version):
    """A merge-on-read MERGE with a small source: updated and deleted rows counted by the tasks
    that write their positions, inserted rows by what the data files hold beyond the updates;
    the rows read back as expected; a MERGE that empties a data file drops it."""
    t = catalog.create_table("db.mc" + version, SCHEMA, properties={
        "write.merge.mode": "merge-on-read", "format-version": version})
    t.append(spark.range(100).selectExpr("id", "cast(id as string) as name", "'a' as cat"))
    t.append(_arrow([500, 501], "b"))
    src = spark.createDataFrame([(1, "u", "a"), (2, "u", "a"), (3, "d", "a"), (500, "d", "b"), (900, "i", "c"),
                                 (901, "i", "c"), (902, "i", "c")], "id bigint, name string, cat string")
    r = (t.merge(src, "t.id = s.id").when_matched_delete("s.name = 'd'").when_matched_update_all()
         .when_not_matched_insert_all().execute())
    assert (r["updated"], r["deleted"], r["inserted"]) == (2, 2, 3)
    rows = {row.id: row.name for row in t.to_spark().collect()}
    expected = {i: str(i) for i in range(100) if i != 3}
    expected.update({1: "u", 2: "u", 501: "n501", 900: "i", 901: "i", 902: "i"})
    assert rows == expected
    summary = t.current_snapshot().summary
    assert summary.get("deleted-data-files", "0") == "0"
    # the last row of the small file: that file is dropped instead of referenced
    r = t.merge(spark.createDataFrame([(501, "d", "b")], "id bigint, name string, cat string"), "t.id = s.id") \
        .when_matched_delete().execute()
    assert (r["updated"], r["deleted"], r["inserted"]) == (0, 1, 0)
    assert t.current_snapshot().summary["deleted-data-files"] == "1"
    assert 501 not in _ids(t) and len(_ids(t)) == len(expected) - 1
    assert t.check().ok, t.check().problems


@pytest.mark.parametrize("version", ["2", "3"])
def test_merge_on_read_overwrite_where_keeps_the_new_rows(catalog, version):
    """``overwrite(data, where=...)`` on a merge-on-read table: the matching rows' positions
    deleted and the new rows written in the same snapshot, with the counts of both."""
    t = catalog.create_table("db.ow" + version, SCHEMA, properties={
        "write.delete.mode": "merge-on-read", "format-version": version})
    t.append(_arrow([1, 2, 3], "a"))
    r = t.overwrite(_arrow([2, 20], "a"), where="id >= 2 and id <= 20")
    assert (r["deleted"], r["inserted"]) == (2, 2)
    assert _ids(t) == [1, 2, 20]
    summary = t.current_snapshot().summary
    assert summary["added-records"] == "2" and summary.get("deleted-data-files", "0") == "0"


@pytest.mark.parametrize("version", ["2", "3"])
def test_merge_on_read_merge_with_a_value_a_column_cannot_hold_changes_nothing(catalog, spark, version):
    """An inserted value out of the column's range fails the MERGE with its typed error after the
    matched rows' positions were written: the table is unchanged and those files are gone; so is a
    target row matched twice."""
    from icefloe.errors import SchemaMismatchError

    t = catalog.create_table("db.mx" + version, "id int, name string", properties={
        "write.merge.mode": "merge-on-read", "format-version": version})
    t.append(spark.range(10).selectExpr("cast(id as int) as id", "cast(id as string) as name"))
    before, files = t.current_snapshot().snapshot_id, _data_files_on_disk(t)
    src = spark.createDataFrame([(1, "u"), (1 << 40, "too big")], "id bigint, name string")
    with pytest.raises(SchemaMismatchError, match="cannot be stored in column 'id'"):
        t.merge(src, "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute()
    twice = spark.createDataFrame([(2, "a"), (2, "b")], "id bigint, name string")
    with pytest.raises(MergeCardinalityError):
        t.merge(twice, "t.id = s.id").when_matched_update_all().execute()
    assert t.refresh().current_snapshot().snapshot_id == before
    assert _data_files_on_disk(t) == files
    assert not [f for d, _, fs in os.walk(f"{t.location}/data") for f in fs if "delete" in f or f.endswith(".puffin")]
    assert sorted(r.name for r in t.to_spark().collect()) == [str(i) for i in range(10)]
