"""Apache Paimon 1.4's Java engine without Spark (``paimon-bundle``, its table API: ``tools/paimon_java.py``)
as a second referee, both ways, beside the Spark runtime of ``test_paimon_java_referee.py`` (Paimon 0.9).

One JVM serves the test session (``paimon_bundle``); icefloe opens the same warehouse. The rounds both
engines play (merge engines, changelog producers, ``rowkind.field``, dynamic buckets and schema
evolution, interleaved rounds) are in ``test_paimon_referee_rounds.py``, once per engine. Here: a small
round trip, append tables both ways with Paimon Java's compaction, Paimon Java's maintenance
(compaction, tags, rollback, expiry, orphan files, branches) on icefloe's tables, and Paimon Java's
Iceberg compatibility read through both of icefloe's readers and pyiceberg, all held to the plain-Python
model of ``tests/paimon_referee.py``. The matrix is long (``make test-long``); the small round trip
runs in ``make test``.
"""
from __future__ import annotations

import os
import time

import pytest

from icefloe.catalog import Catalog
from icefloe.errors import CorruptMetadataError
from tests.paimon_referee import (APPEND, APPEND_COLUMNS, KV, KV_COLUMNS, BundleSide, arrow, ice_files, ice_rows,
                                  ice_snapshots)


@pytest.fixture(scope="module")
def ice(paimon_bundle, paimon_spark):
    return Catalog(paimon_bundle.warehouse, "paimon", paimon_spark)


@pytest.fixture(scope="module")
def java(paimon_bundle):
    return BundleSide(paimon_bundle)


# ---------------------------------------------------------------- make test: one small round trip
def test_round_trip_with_paimon_java_table_api(paimon_bundle, java, ice):
    """icefloe writes a primary-key table that Paimon 1.4 reads at every snapshot, with the same
    snapshots and files; Paimon 1.4 upserts and deletes on it, icefloe reads that and writes on."""
    pj = paimon_bundle
    assert pj.version.startswith("1.4")
    t = ice.create_table("db.rt", "id bigint not null, v string", properties={"primary-key": "id", "bucket": "2"})
    model: dict[int, str] = {}
    seen = []
    for rows in ([(1, "a"), (2, "b"), (3, "c")], [(2, "B"), (4, "d")]):
        t.append(arrow(KV, rows))
        model.update(dict(rows))
        seen.append((t.refresh().current_snapshot().id, sorted(model.items(), key=repr)))
    for snapshot_id, want in seen:
        assert java.rows("rt", snapshot_id) == want, snapshot_id
    assert java.snapshots("rt") == ice_snapshots(t)
    assert java.files("rt") == ice_files(t)
    pj.write("db.rt", [(1, "A"), (5, "e"), (3, "c")], kinds=["+U", "+I", "-D"])
    model.update({1: "A", 5: "e"})
    model.pop(3)
    assert ice_rows(t, ["id", "v"]) == sorted(model.items(), key=repr)
    assert ice_snapshots(t) == java.snapshots("rt")
    t.append(arrow(KV, [(6, "f")]))
    assert java.rows("rt") == sorted({**model, 6: "f"}.items(), key=repr)


# ---------------------------------------------------------------- the matrix (make test-long)
@pytest.mark.long
def test_append_tables_both_ways(paimon_bundle, java, ice):
    pj = paimon_bundle
    for name, props in (("app_unaware", {"bucket": "-1"}), ("app_bucketed", {"bucket": "2", "bucket-key": "id"})):
        t = ice.create_table(f"db.{name}", "id bigint not null, v string, dt string", partitioned_by=["dt"],
                             properties=props)
        pj.create_table(f"db.{name}_java", APPEND_COLUMNS, partition_keys=("dt",), options=props)
        jt = ice.load_table(f"db.{name}_java")
        model: dict[int, tuple] = {}
        seen, seen_java = [], []
        for i in range(4):
            rows = [(i * 10 + j, f"v{i}", "x" if j % 2 else "y") for j in range(3)]
            t.append(arrow(APPEND, rows))
            pj.write(f"db.{name}_java", rows)
            model.update({r[0]: r for r in rows})
            want = sorted(model.values(), key=repr)
            seen.append((t.refresh().current_snapshot().id, want))
            seen_java.append((jt.refresh().current_snapshot().id, want))
            assert java.files(name) == ice_files(t)
        t.delete("id in (1, 12)")
        for k in (1, 12):
            model.pop(k)
        seen.append((t.refresh().current_snapshot().id, sorted(model.values(), key=repr)))
        for snapshot_id, want in seen:
            assert java.rows(name, snapshot_id) == want, (name, snapshot_id)
        for snapshot_id, want in seen_java:
            assert ice_rows(jt, ["id", "v", "dt"], snapshot_id=snapshot_id) == want, (name, snapshot_id)
        assert java.snapshots(name) == ice_snapshots(t)
        assert {r[0] for r in pj.rows(f"db.{name}$audit_log", columns=("rowkind",))} == {"+I"}
        # Paimon Java compacts both tables (a bucket-unaware one through its compaction coordinator,
        # which leaves partitions of fewer than compaction.min.file-num files alone)
        pj.compact(f"db.{name}", options={"compaction.min.file-num": "2"})
        pj.compact(f"db.{name}_java", options={"compaction.min.file-num": "2"})
        assert ice_snapshots(t)[-1][1] == "COMPACT" and ice_snapshots(jt)[-1][1] == "COMPACT", name
        assert ice_rows(t, ["id", "v", "dt"]) == sorted(model.values(), key=repr) == java.rows(name)
        assert ice_rows(jt, ["id", "v", "dt"]) == seen_java[-1][1]
        assert java.files(name) == ice_files(t)
        t.append(arrow(APPEND, [(100, "after", "x")]))
        jt.append(arrow(APPEND, [(100, "after", "x")]))
        assert java.rows(name) == sorted([*model.values(), (100, "after", "x")], key=repr)
        assert java.rows(f"{name}_java") == sorted([*seen_java[-1][1], (100, "after", "x")], key=repr)
        assert t.check().ok and jt.check().ok
    # the same rows land in the same buckets whichever engine writes them
    pj.create_table("db.same_java", APPEND_COLUMNS, options={"bucket": "3", "bucket-key": "id"})
    same = ice.create_table("db.same_ice", "id bigint not null, v string, dt string",
                            properties={"bucket": "3", "bucket-key": "id"})
    rows = [(i, f"v{i}", "x") for i in range(30)]
    pj.write("db.same_java", rows)
    same.append(arrow(APPEND, rows))
    assert java.buckets("same_java") == java.buckets("same_ice")


@pytest.mark.long
def test_tags_branches_rollback_expiry_and_orphans_by_paimon_java(paimon_bundle, java, ice):
    pj = paimon_bundle
    t = ice.create_table("db.proc_ice", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "2", "write-only": "true"})
    states = []
    for rows in ([(1, "a"), (2, "b")], [(2, "B"), (3, "c")], [(4, "d")], [(1, "A")]):
        t.append(arrow(KV, rows))
        states.append(dict(states[-1] if states else {}) | dict(rows))
    ids = [s.id for s in t.refresh().snapshots()]
    assert len(ids) == 4
    t.create_tag("ice_tag", snapshot_id=ids[1])
    assert java.rows("proc_ice", "ice_tag") == sorted(states[1].items(), key=repr)
    pj.create_tag("db.proc_ice", "java_tag", ids[2])
    assert sorted(r[0] for r in pj.rows("db.proc_ice$tags", columns=("tag_name",))) == ["ice_tag", "java_tag"]
    assert ice_rows(t, ["id", "v"], ref="java_tag") == sorted(states[2].items(), key=repr)

    # Paimon Java rolls back to a tag, then to a snapshot; icefloe reads each
    pj.rollback("db.proc_ice", tag="java_tag")
    assert t.refresh().current_snapshot().id == ids[2]
    assert ice_rows(t, ["id", "v"]) == sorted(states[2].items(), key=repr)
    pj.rollback("db.proc_ice", snapshot=ids[1])
    assert ice_rows(t, ["id", "v"]) == sorted(states[1].items(), key=repr)
    assert [r[0] for r in pj.rows("db.proc_ice$tags", columns=("tag_name",))] == ["ice_tag"]      # the later tag goes
    t.append(arrow(KV, [(5, "e")]))
    now = states[1] | {5: "e"}
    assert java.rows("proc_ice") == sorted(now.items(), key=repr)

    # Paimon Java compacts, then rolls back over its compaction: icefloe reads both
    before = t.refresh().current_snapshot().id
    pj.compact("db.proc_ice", options={"write-only": "false"})      # the table's write-only: no compaction
    assert ice_snapshots(t)[-1][1] == "COMPACT"
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr) == java.rows("proc_ice")
    pj.rollback("db.proc_ice", snapshot=before)
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr) and t.check().ok

    # a branch of icefloe's table from a tag, by Paimon Java, written there: icefloe's main is untouched
    # (before expiry: Paimon 1.4 copies the tag's snapshot file into the branch, and fails on a tag
    # whose snapshot has expired, on its own tables too)
    pj.create_branch("db.proc_ice", "dev", tag="ice_tag")
    pj.write("db.proc_ice$branch_dev", [(2, "dev")])
    assert java.rows("proc_ice$branch_dev") == sorted((states[1] | {2: "dev"}).items(), key=repr)
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr) == java.rows("proc_ice")

    # expiry by Paimon Java; then by icefloe, read by Paimon Java
    for i in range(6, 9):
        t.append(arrow(KV, [(i, str(i))]))
        now[i] = str(i)
    pj.expire("db.proc_ice", retain_max=2, retain_min=2)
    kept = ice_snapshots(t)
    assert len(kept) == 2 and kept == java.snapshots("proc_ice")
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr)
    assert ice_rows(t, ["id", "v"], ref="ice_tag") == sorted(states[1].items(), key=repr)
    assert t.check().ok
    t.append(arrow(KV, [(9, "9")]))
    now[9] = "9"
    t.expire_snapshots(older_than=time.time_ns() // 10**6 + 1000, retain_last=1)
    assert java.snapshots("proc_ice") == ice_snapshots(t) and len(ice_snapshots(t)) == 1
    assert java.rows("proc_ice") == sorted(now.items(), key=repr)
    assert java.rows("proc_ice", "ice_tag") == sorted(states[1].items(), key=repr)

    # Paimon Java removes an orphan file from icefloe's table (and the files its own rollbacks left:
    # Paimon 1.4's rollback deletes the later snapshots, not their data and manifests), nothing live
    orphan = os.path.join(t.location, "bucket-0", "data-orphan.parquet")
    with open(orphan, "wb") as f:
        f.write(b"not referenced")
    os.utime(orphan, (1, 1))
    removed = {os.path.basename(p) for p in pj.remove_orphan_files("db.proc_ice", time.time_ns() // 10**6 + 60_000)}
    assert "data-orphan.parquet" in removed and not os.path.exists(orphan)
    assert not removed & ice_files(t)
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr) and t.check().ok
    assert ice_rows(t, ["id", "v"], ref="ice_tag") == sorted(states[1].items(), key=repr)
    assert pj.remove_orphan_files("db.proc_ice", time.time_ns() // 10**6 + 60_000) == []



# ---------------------------------------------------------------- Paimon Java's Iceberg compatibility
@pytest.mark.long
def test_paimon_java_iceberg_metadata_read_through_both_sides_and_pyiceberg(paimon_bundle, java, ice):
    """Paimon 1.4 writes tables with ``metadata.iceberg.storage = table-location`` (append, and primary
    key with deletion vectors): icefloe reads them through their Paimon metadata and their Iceberg
    metadata (snappy-compressed Avro, summaries of the operation only), pyiceberg reads the Iceberg
    side, all equal to the model; icefloe writes on, Paimon Java reads that and icefloe's check passes."""
    from tests.interop_util import pyiceberg_table

    pj = paimon_bundle
    cases = {"ib_append": ({"metadata.iceberg.storage": "table-location", "bucket": "-1"}, ()),
             "ib_pk_dv": ({"metadata.iceberg.storage": "table-location", "bucket": "1",
                           "deletion-vectors.enabled": "true"}, ("id",))}
    for name, (props, keys) in cases.items():
        pj.create_table(f"db.{name}", KV_COLUMNS, primary_keys=keys, options=props)
        model: dict[int, str] = {}
        for rows in ([(1, "a"), (2, "b"), (3, "c")], [(2, "B"), (4, "d")] if keys else [(4, "d")]):
            pj.write(f"db.{name}", rows)
            model.update(dict(rows))
        if keys:
            pj.compact(f"db.{name}")
        t = ice.load_table(f"db.{name}")
        want = sorted(model.items(), key=repr)
        assert ice_rows(t, ["id", "v"]) == want, name
        iceberg = t.iceberg()
        assert sorted(((r["id"], r["v"]) for r in iceberg.to_arrow().to_pylist()), key=repr) == want, name
        py = pyiceberg_table(iceberg.metadata_location).scan().to_arrow()
        assert sorted(((r["id"], r["v"]) for r in py.to_pylist()), key=repr) == want, name
        t.append(arrow(KV, [(9, "nine")]))
        want = sorted([*want, (9, "nine")], key=repr)
        assert java.rows(name) == want
        assert sorted(((r["id"], r["v"]) for r in t.iceberg().to_arrow().to_pylist()), key=repr) == want
        assert t.check().ok, t.check().problems

    # Iceberg format version 3 (``metadata.iceberg.format-version``): Paimon 1.4 writes table metadata
    # without the v3 spec's required ``next-row-id`` (and snapshots without ``first-row-id``).
    # pyiceberg reads it anyway; icefloe refuses it, naming the missing field.
    pj.create_table("db.ib_v3", KV_COLUMNS, primary_keys=("id",), options={
        "metadata.iceberg.storage": "table-location", "bucket": "1", "deletion-vectors.enabled": "true",
        "metadata.iceberg.format-version": "3"})
    pj.write("db.ib_v3", [(1, "a"), (2, "b")])
    pj.write("db.ib_v3", [(2, "B")])
    pj.compact("db.ib_v3")
    t = ice.load_table("db.ib_v3")
    assert ice_rows(t, ["id", "v"]) == [(1, "a"), (2, "B")]
    with pytest.raises(CorruptMetadataError, match="next-row-id"):
        t.iceberg()
    location = os.path.join(t.location, "metadata")
    latest = max((f for f in os.listdir(location) if f.endswith(".metadata.json")), key=lambda f: int(f[1:-14]))
    py = pyiceberg_table(os.path.join(location, latest)).scan().to_arrow()
    assert sorted(((r["id"], r["v"]) for r in py.to_pylist()), key=repr) == [(1, "a"), (2, "B")]
