"""Branches, tags and moving main (spec: "Snapshot References"; seed 003, section 2.3).

Refs are checked in the metadata (``refs``, ``current-snapshot-id``, ``snapshot-log``)
and through the readers: what icefloe reads for a ref is what pyiceberg and DuckDB
read for the snapshot that ref names.
"""
from __future__ import annotations

import time

import pyarrow as pa
import pytest

from icefloe.errors import NoSuchSnapshotError
from icefloe.iceberg.refs import RefError
from tests.interop_util import duckdb_connection, pyiceberg_table


def _rows(ids):
    return pa.table({"id": pa.array(list(ids), pa.int64()), "v": [f"v{i}" for i in ids]})


def _ids(t, **kw):
    return sorted(t.to_arrow(**kw)["id"].to_pylist())


@pytest.fixture
def table(catalog):
    """main: s1 (0..4) -> s2 (+5..9)"""
    t = catalog.create_table("db.refs", "id bigint not null, v string")
    t.append(_rows(range(5)))
    t.append(_rows(range(5, 10)))
    return t


def _snap_ids(t):
    return [s.snapshot_id for s in t.snapshots()]


def test_tags_and_branches_are_refs_in_the_metadata(table):
    s1, s2 = _snap_ids(table)
    tag = table.create_tag("v1", s1, max_ref_age_ms=86_400_000)
    assert (tag.type, tag.snapshot_id, tag.max_ref_age_ms) == ("tag", s1, 86_400_000)
    br = table.create_branch("audit", min_snapshots_to_keep=3, max_snapshot_age_ms=3_600_000)
    assert (br.type, br.snapshot_id, br.min_snapshots_to_keep, br.max_snapshot_age_ms) == ("branch", s2, 3, 3_600_000)
    raw = table.metadata.to_json()["refs"]
    assert raw["v1"] == {"snapshot-id": s1, "type": "tag", "max-ref-age-ms": 86_400_000}
    assert raw["audit"] == {"snapshot-id": s2, "type": "branch", "min-snapshots-to-keep": 3,
                            "max-snapshot-age-ms": 3_600_000}
    assert _ids(table, ref="v1") == list(range(5))
    # pyiceberg parses the refs as the spec defines them
    py = pyiceberg_table(table.metadata_location).metadata.refs
    assert py["v1"].snapshot_ref_type == "tag" and py["v1"].max_ref_age_ms == 86_400_000
    assert py["audit"].min_snapshots_to_keep == 3

    table.replace_tag("v1", s2)
    assert table.refs()["v1"].snapshot_id == s2 and table.refs()["v1"].max_ref_age_ms == 86_400_000
    table.replace_branch("audit", s1)
    assert table.refs()["audit"].snapshot_id == s1 and table.refs()["audit"].min_snapshots_to_keep == 3
    table.replace_branch("audit", "v1")   # a ref name: that ref's snapshot
    assert table.refs()["audit"].snapshot_id == s2
    table.rename_branch("audit", "qa")
    assert "audit" not in table.refs() and table.refs()["qa"].snapshot_id == s2
    table.drop_tag("v1")
    table.drop_branch("qa")
    assert set(table.refs()) == {"main"}
    assert table.current_snapshot().snapshot_id == s2   # none of this moved main


@pytest.mark.parametrize("op, error, message", [
    (lambda t, s: t.create_tag("v1", s), RefError, "already exists"),
    (lambda t, s: t.create_branch("v1"), RefError, "already exists"),
    (lambda t, s: t.create_tag("main", s), RefError, "main"),
    (lambda t, s: t.drop_branch("main"), RefError, "cannot drop the main branch"),
    (lambda t, s: t.rename_branch("main", "x"), RefError, "cannot rename the main branch"),
    (lambda t, s: t.drop_branch("v1"), RefError, "is a tag"),
    (lambda t, s: t.drop_tag("nope"), RefError, "no tag named 'nope'"),
    (lambda t, s: t.replace_tag("v1", 12345), NoSuchSnapshotError, "12345"),
    (lambda t, s: t.create_tag("x", 12345), NoSuchSnapshotError, "12345"),
    (lambda t, s: t.fast_forward("v1", "main"), RefError, "is a tag"),
])
def test_ref_misuse_is_rejected(table, op, error, message):
    s1, _ = _snap_ids(table)
    table.create_tag("v1", s1)
    version = table.ops.current_version()
    with pytest.raises(error, match=message):
        op(table, s1)
    assert table.refresh().ops.current_version() == version


def test_branch_writes_leave_main_alone_and_fast_forward(table):
    _, s2 = _snap_ids(table)
    table.create_branch("audit")
    staged = table.append(_rows([100, 101]), branch="audit")
    assert staged.parent_snapshot_id == s2
    assert table.current_snapshot().snapshot_id == s2
    assert [e["snapshot-id"] for e in table.history()] == _snap_ids(table)[:2]   # branch commits are not logged
    assert _ids(table) == list(range(10))
    assert _ids(table, ref="audit") == list(range(10)) + [100, 101]
    # every reader sees the branch's snapshot the same way
    loc = table.metadata_location
    assert sorted(pyiceberg_table(loc).scan(snapshot_id=staged.snapshot_id).to_arrow()["id"].to_pylist()) == \
        list(range(10)) + [100, 101]
    assert sorted(r["id"] for r in table.to_spark(ref="audit").collect()) == list(range(10)) + [100, 101]

    ref = table.fast_forward("main", "audit")
    assert ref.snapshot_id == staged.snapshot_id and table.current_snapshot().snapshot_id == staged.snapshot_id
    assert table.history()[-1]["snapshot-id"] == staged.snapshot_id   # main moved: logged
    assert table.fast_forward("main", "audit").snapshot_id == staged.snapshot_id   # already there: no-op
    # main diverges; audit cannot be fast-forwarded backwards onto another line
    table.append(_rows([200]))
    table.append(_rows([300]), branch="audit")
    with pytest.raises(RefError, match="not an ancestor"):
        table.fast_forward("main", "audit")


def test_writing_to_a_new_branch_starts_from_main(table):
    _, s2 = _snap_ids(table)
    snap = table.append(_rows([50]), branch="fresh")
    assert snap.parent_snapshot_id == s2
    assert _ids(table, ref="fresh") == list(range(10)) + [50]
    assert table.current_snapshot().snapshot_id == s2


def test_branch_on_an_empty_table_starts_with_an_empty_snapshot(catalog):
    t = catalog.create_table("db.empty", "id bigint")
    ref = t.create_branch("dev", max_ref_age_ms=1000)
    snap = t.metadata.snapshot_by_id(ref.snapshot_id)
    assert snap.operation == "append" and ref.max_ref_age_ms == 1000
    assert t.current_snapshot() is None and t.to_arrow(ref="dev").num_rows == 0


def test_rollback_and_set_current_snapshot(table):
    s1, s2 = _snap_ids(table)
    s3 = table.append(_rows([10])).snapshot_id
    time.sleep(0.01)  # the rollback must land in a later millisecond than s3's commit
    before = time.time() * 1000
    assert table.rollback_to_snapshot(s1).snapshot_id == s1
    assert table.metadata.current_snapshot_id == s1 and table.refs()["main"].snapshot_id == s1
    log = table.history()
    assert log[-1]["snapshot-id"] == s1 and log[-1]["timestamp-ms"] >= before - 5
    assert _ids(table) == list(range(5))
    # time travel by timestamp follows the log: just before the rollback, s3 was current
    assert _ids(table, as_of=int(before) - 1) == list(range(11))
    # s2 and s3 are no longer ancestors of the current snapshot: rollback refuses, set_current does not
    with pytest.raises(RefError, match="not an ancestor"):
        table.rollback_to_snapshot(s3)
    assert table.set_current_snapshot(s3).snapshot_id == s3
    # rollback to a time: the newest ancestor committed strictly before it
    t2 = table.metadata.snapshot_by_id(s2).timestamp_ms
    assert table.rollback_to_timestamp(t2 + 1).snapshot_id == s2
    with pytest.raises(RefError, match="no ancestor"):
        table.rollback_to_timestamp(table.metadata.snapshot_by_id(s1).timestamp_ms)
    with pytest.raises(NoSuchSnapshotError):
        table.set_current_snapshot(42)
    # pyiceberg and DuckDB follow current-snapshot-id
    assert sorted(pyiceberg_table(table.metadata_location).scan().to_arrow()["id"].to_pylist()) == list(range(10))
    con = duckdb_connection()
    assert sorted(x for (x,) in con.execute(f"SELECT id FROM iceberg_scan('{table.metadata_location}')")
                  .fetchall()) == list(range(10))


def test_cherry_pick_fast_forwards_or_reapplies_an_append(table):
    _, s2 = _snap_ids(table)
    table.create_branch("wap")
    staged = table.append(_rows([100]), branch="wap")
    # its parent is main's head: main simply moves to it, no new snapshot
    assert table.cherry_pick(staged.snapshot_id).snapshot_id == staged.snapshot_id
    assert len(table.snapshots()) == 3
    with pytest.raises(RefError, match="already an ancestor"):
        table.cherry_pick(staged.snapshot_id)

    staged2 = table.append(_rows([200, 201]), branch="wap")
    table.append(_rows([300]))          # main moves on: picking must re-apply the files
    picked = table.cherry_pick(staged2.snapshot_id)
    assert picked.snapshot_id != staged2.snapshot_id and picked.operation == "append"
    assert picked.summary["source-snapshot-id"] == str(staged2.snapshot_id)
    assert picked.summary["added-data-files"] == "1" and picked.summary["added-records"] == "2"
    assert _ids(table) == list(range(10)) + [100, 200, 201, 300]
    assert sorted(pyiceberg_table(table.metadata_location).scan().to_arrow()["id"].to_pylist()) == _ids(table)
    with pytest.raises(RefError, match="already picked"):
        table.cherry_pick(staged2.snapshot_id)
    table.overwrite(_rows([7]), branch="wap")
    with pytest.raises(RefError, match="only append"):
        table.cherry_pick(table.refs()["wap"].snapshot_id)
