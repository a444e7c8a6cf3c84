"""Apache Paimon 1.4's Java engine without Spark (``paimon-bundle``, its table API: ``tools/paimon_java.py``)
as a second referee, both ways, beside the Spark runtime of ``test_paimon_java_referee.py`` (Paimon 0.9).

One JVM serves the test session (``paimon_bundle``); icefloe opens the same warehouse. Paimon Java reads
every table kind icefloe writes (rows at every snapshot, ``$snapshots``, ``$files``, ``$audit_log``, the
changelog through a streaming scan), icefloe reads what Paimon Java writes and compacts, both held to the
plain-Python model of ``tests/paimon_referee.py``; then the engines take turns on one table, Paimon Java's
maintenance (compaction, tags, rollback, expiry, orphan files, branches) runs on icefloe's tables, and
Paimon Java's Iceberg compatibility is read through both of icefloe's readers and pyiceberg. The matrix is
long (``make test-long``); one small round trip runs in ``make test``.
"""
from __future__ import annotations

import os
import random
import time

import pyarrow as pa
import pytest

from icefloe.catalog import Catalog
from icefloe.errors import CorruptMetadataError
from tests.paimon_referee import (APPEND, ENGINES, KV, PK, PK_DDL, arrow, ice_changes, ice_files, ice_rows,
                                  ice_snapshots, merge_model)

PK_COLUMNS = [("id", "BIGINT NOT NULL"), ("a", "STRING"), ("n", "BIGINT"), ("s", "BIGINT")]
KV_COLUMNS = [("id", "BIGINT NOT NULL"), ("v", "STRING")]
APPEND_COLUMNS = [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("dt", "STRING")]


@pytest.fixture(scope="module")
def ice(paimon_bundle, paimon_spark):
    return Catalog(paimon_bundle.warehouse, "paimon", paimon_spark)


def java_rows(pj, name: str, **options) -> list[tuple]:
    """Paimon Java's batch read of ``db.<name>``; ``snapshot=`` or ``tag=`` travel."""
    opts = {}
    if "snapshot" in options:
        opts["scan.snapshot-id"] = str(options["snapshot"])
    if "tag" in options:
        opts["scan.tag-name"] = options["tag"]
    return sorted(pj.rows(f"db.{name}", opts), key=repr)


def java_snapshots(pj, name: str) -> list[tuple]:
    return sorted(pj.rows(f"db.{name}$snapshots", columns=("snapshot_id", "commit_kind")))


def java_files(pj, name: str) -> set[str]:
    return {os.path.basename(r[0]) for r in pj.rows(f"db.{name}$files", columns=("file_path",))}


def java_buckets(pj, name: str) -> list[tuple]:
    """(bucket, record count) of every data file."""
    return sorted(pj.rows(f"db.{name}$files", columns=("bucket", "record_count")))


def java_changes(pj, name: str) -> list[tuple]:
    """The changelog of every snapshot, streamed from the first by Paimon Java's ``StreamTableScan``."""
    plans = pj.stream(f"db.{name}", {"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    return sorted((r for plan in plans for r in plan), key=repr)


# ---------------------------------------------------------------- make test: one small round trip
def test_round_trip_with_paimon_java_table_api(paimon_bundle, ice):
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
        assert java_rows(pj, "rt", snapshot=snapshot_id) == want, snapshot_id
    assert java_snapshots(pj, "rt") == ice_snapshots(t)
    assert java_files(pj, "rt") == ice_files(t)
    pj.write("db.rt", [(1, "A"), (5, "e"), (3, "c")], kinds=["+U", "+I", "-D"])
    model.update({1: "A", 5: "e"})
    model.pop(3)
    assert ice_rows(t, ["id", "v"]) == sorted(model.items(), key=repr)
    assert ice_snapshots(t) == java_snapshots(pj, "rt")
    t.append(arrow(KV, [(6, "f")]))
    assert java_rows(pj, "rt") == sorted({**model, 6: "f"}.items(), key=repr)


# ---------------------------------------------------------------- the matrix (make test-long)
@pytest.mark.long
def test_append_tables_both_ways(paimon_bundle, ice):
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
            assert java_files(pj, name) == ice_files(t)
        t.delete("id in (1, 12)")
        for k in (1, 12):
            model.pop(k)
        seen.append((t.refresh().current_snapshot().id, sorted(model.values(), key=repr)))
        for snapshot_id, want in seen:
            assert java_rows(pj, name, snapshot=snapshot_id) == want, (name, snapshot_id)
        for snapshot_id, want in seen_java:
            assert ice_rows(jt, ["id", "v", "dt"], snapshot_id=snapshot_id) == want, (name, snapshot_id)
        assert java_snapshots(pj, name) == ice_snapshots(t)
        assert {r[0] for r in pj.rows(f"db.{name}$audit_log", columns=("rowkind",))} == {"+I"}
        # Paimon Java compacts both tables (a bucket-unaware one through its compaction coordinator,
        # which leaves partitions of fewer than compaction.min.file-num files alone)
        pj.compact(f"db.{name}", options={"compaction.min.file-num": "2"})
        pj.compact(f"db.{name}_java", options={"compaction.min.file-num": "2"})
        assert ice_snapshots(t)[-1][1] == "COMPACT" and ice_snapshots(jt)[-1][1] == "COMPACT", name
        assert ice_rows(t, ["id", "v", "dt"]) == sorted(model.values(), key=repr) == java_rows(pj, name)
        assert ice_rows(jt, ["id", "v", "dt"]) == seen_java[-1][1]
        assert java_files(pj, name) == ice_files(t)
        t.append(arrow(APPEND, [(100, "after", "x")]))
        jt.append(arrow(APPEND, [(100, "after", "x")]))
        assert java_rows(pj, name) == sorted([*model.values(), (100, "after", "x")], key=repr)
        assert java_rows(pj, f"{name}_java") == sorted([*seen_java[-1][1], (100, "after", "x")], key=repr)
        assert t.check().ok and jt.check().ok
    # the same rows land in the same buckets whichever engine writes them
    pj.create_table("db.same_java", APPEND_COLUMNS, options={"bucket": "3", "bucket-key": "id"})
    same = ice.create_table("db.same_ice", "id bigint not null, v string, dt string",
                            properties={"bucket": "3", "bucket-key": "id"})
    rows = [(i, f"v{i}", "x") for i in range(30)]
    pj.write("db.same_java", rows)
    same.append(arrow(APPEND, rows))
    assert java_buckets(pj, "same_java") == java_buckets(pj, "same_ice")


@pytest.mark.long
def test_primary_key_merge_engines_both_ways(paimon_bundle, ice):
    pj = paimon_bundle
    for engine, (options, commits, expected) in ENGINES.items():
        props = {"bucket": "2", **options}
        t = ice.create_table(f"db.pk_{engine}_ice", PK_DDL, properties={"primary-key": "id", **props})
        pj.create_table(f"db.pk_{engine}_java", PK_COLUMNS, primary_keys=("id",), options=props)
        jt = ice.load_table(f"db.pk_{engine}_java")
        history, state = [], {}
        for rows in commits:
            t.append(arrow(PK, rows))
            pj.write(f"db.pk_{engine}_java", rows)
            state = merge_model(engine, state, rows)
            history.append((t.refresh().current_snapshot().id, jt.refresh().current_snapshot().id,
                            sorted(state.values(), key=repr)))
        want = sorted(expected, key=repr)
        assert history[-1][2] == want, f"the model of {engine}"
        for i, j, rows in history:
            assert java_rows(pj, f"pk_{engine}_ice", snapshot=i) == rows, f"Paimon Java reading icefloe's {engine} at {i}"
            assert ice_rows(jt, list(PK), snapshot_id=j) == rows, f"icefloe reading Paimon Java's {engine} at {j}"
        assert java_snapshots(pj, f"pk_{engine}_ice") == ice_snapshots(t)
        assert java_files(pj, f"pk_{engine}_ice") == ice_files(t)
        audit = sorted(pj.rows(f"db.pk_{engine}_ice$audit_log"), key=repr)
        assert sorted((r[1:] for r in audit), key=repr) == want
        assert sorted((tuple(r) for r in t.audit_log().collect()), key=repr) == audit, engine
        # Paimon Java compacts icefloe's table fully, icefloe compacts Paimon Java's: nothing changes
        pj.compact(f"db.pk_{engine}_ice")
        jt.refresh().rewrite_data_files()
        assert ice_rows(t, list(PK)) == want == java_rows(pj, f"pk_{engine}_java")
        assert java_files(pj, f"pk_{engine}_ice") == ice_files(t)
        if engine == "dedup_seq":       # deletes both ways
            t.delete("id = 1")
            assert java_rows(pj, f"pk_{engine}_ice") == [r for r in want if r[0] != 1]
            pj.write(f"db.pk_{engine}_java", [(2, None, None, 100)], kinds=["-D"])
            assert ice_rows(jt, list(PK)) == [r for r in want if r[0] != 2]


@pytest.mark.long
def test_changelog_producers_deletion_vectors_and_rowkind_both_ways(paimon_bundle, ice):
    """Each changelog producer and deletion vectors, and ``rowkind.field``: the rows after each step,
    and the changelog Paimon Java streams from the first snapshot (``StreamTableScan``) equal to
    icefloe's, from each side's table."""
    pj = paimon_bundle
    kinds = {"input": {"changelog-producer": "input"},
             "lookup": {"changelog-producer": "lookup"},
             "fullcomp": {"changelog-producer": "full-compaction"},
             "dv": {"deletion-vectors.enabled": "true"},
             "dv_lookup": {"deletion-vectors.enabled": "true", "changelog-producer": "lookup"}}
    for kind, options in kinds.items():
        props = {"bucket": "1", **options}
        t = ice.create_table(f"db.cl_{kind}_ice", "id bigint not null, v string",
                             properties={"primary-key": "id", **props})
        pj.create_table(f"db.cl_{kind}_java", KV_COLUMNS, primary_keys=("id",), options=props)
        jt = ice.load_table(f"db.cl_{kind}_java")
        model: dict[int, str] = {}
        for step, rows in enumerate([[(1, "a"), (2, "b"), (3, "c")], [(2, "B"), (4, "d")], "delete 3"]):
            if rows == "delete 3":
                t.delete("id = 3")
                pj.write(f"db.cl_{kind}_java", [(3, "c")], kinds=["-D"])
                model.pop(3)
            else:
                t.append(arrow(KV, rows))
                pj.write(f"db.cl_{kind}_java", rows)
                model.update(dict(rows))
            if kind == "fullcomp":      # this producer writes its changelog at full compactions
                t.rewrite_data_files()
                pj.compact(f"db.cl_{kind}_java")
            want = sorted(model.items(), key=repr)
            assert java_rows(pj, f"cl_{kind}_ice") == want, (kind, step)
            assert ice_rows(jt, ["id", "v"]) == want, (kind, step)
        assert java_snapshots(pj, f"cl_{kind}_ice") == ice_snapshots(t)
        assert java_files(pj, f"cl_{kind}_ice") == ice_files(t)
        if "changelog-producer" not in options:
            continue
        ours = ice_changes(t, 0)
        assert ice_changes(jt, 0) == ours, f"icefloe reading the {kind} changelog Paimon Java wrote"
        assert java_changes(pj, f"cl_{kind}_ice") == java_changes(pj, f"cl_{kind}_java") == ours, kind

    # rowkind.field: each row's kind from a column, on both sides, and the input changelog is the input
    props = {"bucket": "1", "rowkind.field": "k", "changelog-producer": "input"}
    t = ice.create_table("db.rk_ice", "id bigint not null, v string, k string", properties={"primary-key": "id", **props})
    pj.create_table("db.rk_java", [*KV_COLUMNS, ("k", "STRING")], primary_keys=("id",), options=props)
    jt = ice.load_table("db.rk_java")
    rk = {"id": pa.int64(), "v": pa.string(), "k": pa.string()}
    commits = [[(1, "a", "+I"), (2, "b", "+I"), (3, "c", "+I")],
               [(1, "a", "-U"), (1, "A", "+U"), (2, "b", "-D")],
               [(4, "d", "+I"), (3, "c", "-D"), (3, "C", "+I")]]
    model2: dict[int, tuple] = {}
    for rows in commits:
        t.append(arrow(rk, rows))
        pj.write("db.rk_java", rows)
        for r in rows:
            if r[2] in ("-U", "-D"):
                model2.pop(r[0], None)
            else:
                model2[r[0]] = r
        want2 = sorted(model2.values(), key=repr)
        assert java_rows(pj, "rk_ice") == want2 == ice_rows(jt, list(rk)), rows
    written = sorted(((r[2], *r) for rows in commits for r in rows), key=repr)
    assert java_changes(pj, "rk_ice") == java_changes(pj, "rk_java") == written
    assert ice_changes(t, 0) == ice_changes(jt, 0) == written


@pytest.mark.long
def test_dynamic_bucket_and_schema_evolution_both_ways(paimon_bundle, ice):
    pj = paimon_bundle
    props = {"bucket": "-1", "dynamic-bucket.target-row-num": "2"}
    t = ice.create_table("db.dyn_ice", "id bigint not null, v string", properties={"primary-key": "id", **props})
    pj.create_table("db.dyn_java", KV_COLUMNS, primary_keys=("id",), options=props)
    jt = ice.load_table("db.dyn_java")
    model: dict[int, str] = {}
    rounds = [[(i, f"v{i}") for i in range(1, 7)], [(2, "two"), (7, "seven")], [(3, "three"), (7, "SEVEN"), (8, "e")]]
    for i, rows in enumerate(rounds):
        icefloe_side, java_side = (t, "dyn_java") if i % 2 == 0 else (jt, "dyn_ice")
        icefloe_side.append(arrow(KV, rows))
        pj.write(f"db.{java_side}", rows)
        model.update(dict(rows))
        want = sorted(model.items(), key=repr)
        for name, table in (("dyn_ice", t), ("dyn_java", jt)):
            assert java_rows(pj, name) == want and ice_rows(table, ["id", "v"]) == want, (name, i)
    for name in ("dyn_ice", "dyn_java"):        # each key in one bucket, and more than one bucket
        assert len({b for b, _ in java_buckets(pj, name)}) > 1, name

    # icefloe changes the schema, Paimon Java reads and writes, changes it again, icefloe follows
    with t.update_schema() as u:
        u.add_column("extra", "INT")
        u.rename_column("v", "label")
    t.append(pa.table({"id": pa.array([9], pa.int64()), "label": ["nine"], "extra": pa.array([90], pa.int32())}))
    model9 = {k: (k, v, None) for k, v in model.items()} | {9: (9, "nine", 90)}
    assert java_rows(pj, "dyn_ice") == sorted(model9.values(), key=repr)
    pj.alter("db.dyn_ice", ("add_column", "note", "STRING"), ("rename_column", "extra", "x"))
    pj.write("db.dyn_ice", [(10, "ten", 100, "n")])
    t.refresh()
    assert [f.name for f in t.schema.fields] == ["id", "label", "x", "note"]
    want = sorted([(*r, None) for r in model9.values()] + [(10, "ten", 100, "n")], key=repr)
    assert ice_rows(t, ["id", "label", "x", "note"]) == want
    t.append(pa.table({"id": pa.array([1], pa.int64()), "label": ["ONE"], "x": pa.array([1], pa.int32()),
                       "note": ["again"]}))
    want = sorted([r for r in want if r[0] != 1] + [(1, "ONE", 1, "again")], key=repr)
    assert java_rows(pj, "dyn_ice") == want
    assert len(pj.rows("db.dyn_ice$schemas")) == len(t.metadata_table("schemas"))


@pytest.mark.long
def test_tags_branches_rollback_expiry_and_orphans_by_paimon_java(paimon_bundle, ice):
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
    assert java_rows(pj, "proc_ice", tag="ice_tag") == sorted(states[1].items(), key=repr)
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
    assert java_rows(pj, "proc_ice") == sorted(now.items(), key=repr)

    # Paimon Java compacts, then rolls back over its compaction: icefloe reads both
    before = t.refresh().current_snapshot().id
    pj.compact("db.proc_ice", options={"write-only": "false"})      # the table's write-only: no compaction
    assert ice_snapshots(t)[-1][1] == "COMPACT"
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr) == java_rows(pj, "proc_ice")
    pj.rollback("db.proc_ice", snapshot=before)
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr) and t.check().ok

    # a branch of icefloe's table from a tag, by Paimon Java, written there: icefloe's main is untouched
    # (before expiry: Paimon 1.4 copies the tag's snapshot file into the branch, and fails on a tag
    # whose snapshot has expired, on its own tables too)
    pj.create_branch("db.proc_ice", "dev", tag="ice_tag")
    pj.write("db.proc_ice$branch_dev", [(2, "dev")])
    assert java_rows(pj, "proc_ice$branch_dev") == sorted((states[1] | {2: "dev"}).items(), key=repr)
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr) == java_rows(pj, "proc_ice")

    # expiry by Paimon Java; then by icefloe, read by Paimon Java
    for i in range(6, 9):
        t.append(arrow(KV, [(i, str(i))]))
        now[i] = str(i)
    pj.expire("db.proc_ice", retain_max=2, retain_min=2)
    kept = ice_snapshots(t)
    assert len(kept) == 2 and kept == java_snapshots(pj, "proc_ice")
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr)
    assert ice_rows(t, ["id", "v"], ref="ice_tag") == sorted(states[1].items(), key=repr)
    assert t.check().ok
    t.append(arrow(KV, [(9, "9")]))
    now[9] = "9"
    t.expire_snapshots(older_than=time.time_ns() // 10**6 + 1000, retain_last=1)
    assert java_snapshots(pj, "proc_ice") == ice_snapshots(t) and len(ice_snapshots(t)) == 1
    assert java_rows(pj, "proc_ice") == sorted(now.items(), key=repr)
    assert java_rows(pj, "proc_ice", tag="ice_tag") == sorted(states[1].items(), key=repr)

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



@pytest.mark.long
def test_interleaved_rounds_for_every_merge_engine(paimon_bundle, ice):
    """Each merge engine, on a table of each side's making, with deletion vectors and the lookup
    changelog producer on deduplicate: rounds in which icefloe writes, Paimon Java writes, one of them
    compacts, both engines' reads held to ``merge_model`` after every step and at every snapshot."""
    pj = paimon_bundle
    rnd = random.Random(52)
    sequence = iter(rnd.sample(range(1, 10_000), 2_000))
    tables, models, history = {}, {}, {}
    for engine, (options, _, _) in ENGINES.items():
        props = {"bucket": "2", **options}
        if engine == "dedup_seq":
            props |= {"deletion-vectors.enabled": "true", "changelog-producer": "lookup"}
        ice.create_table(f"db.il_{engine}_ice", PK_DDL, properties={"primary-key": "id", **props})
        pj.create_table(f"db.il_{engine}_java", PK_COLUMNS, primary_keys=("id",), options=props)
        for side in ("ice", "java"):
            name = f"il_{engine}_{side}"
            tables[name] = (engine, ice.load_table(f"db.{name}"))
            models[name], history[name] = {}, []

    def some_rows(count):
        keys = rnd.sample(range(1, 40), count)
        return [(k, rnd.choice([None, f"a{k}-{rnd.randrange(100)}"]), rnd.choice([None, rnd.randrange(50)]),
                 next(sequence)) for k in keys]

    def check(step):
        for name, (_, table) in tables.items():
            want = sorted(models[name].values(), key=repr)
            assert java_rows(pj, name) == want, (name, step, "Paimon Java")
            assert ice_rows(table, list(PK)) == want, (name, step, "icefloe")
            history[name].append((table.refresh().current_snapshot().id, want))

    for r in range(3):
        for name, (engine, table) in tables.items():
            rows = some_rows(8)
            table.append(arrow(PK, rows))
            models[name] = merge_model(engine, models[name], rows)
        check(f"round {r}: icefloe writes")
        for name, (engine, _) in tables.items():
            rows = some_rows(8)
            pj.write(f"db.{name}", rows)
            models[name] = merge_model(engine, models[name], rows)
        check(f"round {r}: Paimon Java writes")
        for name, (_, table) in tables.items():
            if r % 2 == 0:
                pj.compact(f"db.{name}", full=r == 0)
            else:
                table.refresh().rewrite_data_files()
        check(f"round {r}: {'Paimon Java' if r % 2 == 0 else 'icefloe'} compacts")
    for name, (_, table) in tables.items():
        for i, want in dict(history[name]).items():
            assert java_rows(pj, name, snapshot=i) == want, (name, i)
            assert ice_rows(table, list(PK), snapshot_id=i) == want, (name, i)
        assert java_snapshots(pj, name) == ice_snapshots(table)
        assert java_files(pj, name) == ice_files(table)
        assert table.refresh().check().ok


# ---------------------------------------------------------------- Paimon Java's Iceberg compatibility
@pytest.mark.long
def test_paimon_java_iceberg_metadata_read_through_both_sides_and_pyiceberg(paimon_bundle, ice):
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
        assert java_rows(pj, name) == want
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
