"""Apache Paimon's own Java engine (its Spark 3.5 runtime, ``tools/jvm_runtime.py``) as referee, both ways.

One Paimon-Java process serves the test session (``paimon_java``); icefloe opens the same warehouse.
The rounds this engine plays like Paimon's engine without Spark (merge engines, changelog producers,
``rowkind.field``, dynamic buckets and schema evolution, interleaved rounds) are in
``test_paimon_referee_rounds.py``, once per engine. Here: append tables both ways, Paimon Java's
branches, tags, rollback, expiry and ``sys.*`` procedures on icefloe's tables, and the engines taking
turns on one table, each step held to rows worked out in plain Python.

The runtime is Paimon 0.9 (no 1.x of ``paimon-spark-3.5`` is served by the registry the project
reaches); where it falls short, the check says why. Long (``make test-long``): ``make test`` keeps the
small round trip with Paimon 1.4 (``test_paimon_bundle_referee.py``).
"""
from __future__ import annotations

import os
import time

import pytest

from icefloe.catalog import Catalog
from icefloe.errors import NotSupportedError
from tests.paimon_referee import (APPEND, APPEND_COLUMNS, KV, KV_COLUMNS, SparkRuntimeSide, arrow, ice_files,
                                  ice_rows, ice_snapshots, sql_values)

pytestmark = pytest.mark.long


@pytest.fixture(scope="module")
def ice(paimon_java, paimon_spark):
    return Catalog(str(paimon_java.warehouse), "paimon", paimon_spark)


@pytest.fixture(scope="module")
def java(paimon_java):
    return SparkRuntimeSide(paimon_java)


# ---------------------------------------------------------------- append tables
def test_append_tables_both_ways(paimon_java, java, ice):
    pj = paimon_java
    for name, props in (("app_unaware", {"bucket": "-1"}), ("app_bucketed", {"bucket": "2", "bucket-key": "id"})):
        t = ice.create_table(f"db.{name}", "id bigint not null, v string, dt string", partitioned_by=["dt"],
                             properties=props)
        model: dict[int, tuple] = {}
        steps = [("append", [(1, "a", "x"), (2, "b", "x"), (3, "c", "y")]),
                 ("append", [(4, "d", "y"), (5, "e", "x")]),
                 ("delete", "id in (2, 4)")]
        seen = []
        for kind, arg in steps:
            if kind == "append":
                t.append(arrow(APPEND, arg))
                model.update({r[0]: r for r in arg})
            else:
                t.delete(arg)
                for k in (2, 4):
                    model.pop(k)
            seen.append((t.refresh().current_snapshot().id, sorted(model.values(), key=repr)))
            assert java.rows(name) == sorted(model.values(), key=repr), (name, kind)
            assert java.snapshots(name) == ice_snapshots(t)
            assert java.files(name) == ice_files(t)
        for snapshot_id, rows in seen:      # every earlier snapshot, read by time travel
            assert java.rows(name, snapshot_id) == rows
        assert {r[0] for r in pj.sql(f"SELECT rowkind FROM db.`{name}$audit_log`")} == {"+I"}

        # Paimon Java appends to icefloe's table; icefloe reads it and appends again
        java.write(name, [(6, "f", "y"), (7, "g", "x")])
        model.update({6: (6, "f", "y"), 7: (7, "g", "x")})
        assert ice_rows(t, ["id", "v", "dt"]) == sorted(model.values(), key=repr)
        t.append(arrow(APPEND, [(8, "h", "x")]))
        model[8] = (8, "h", "x")
        assert java.rows(name) == sorted(model.values(), key=repr)

    # the same rows in a bucketed table Paimon Java writes land in the same buckets as icefloe's
    pj.sql("CREATE TABLE db.app_bucketed_java (id BIGINT NOT NULL, v STRING, dt STRING) PARTITIONED BY (dt) "
           "TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id')")
    every = [tuple(r) for r in pj.sql("SELECT id, v, dt FROM db.app_bucketed")]
    java.write("app_bucketed_java", every)
    icefloe_written = ice.create_table("db.app_bucketed_ice", "id bigint not null, v string, dt string",
                                       partitioned_by=["dt"], properties={"bucket": "2", "bucket-key": "id"})
    icefloe_written.append(arrow(APPEND, every))

    def per_bucket(name):
        return sorted(tuple(r) for r in pj.sql(
            f"SELECT partition, bucket, sum(record_count) FROM db.`{name}$files` GROUP BY partition, bucket"))
    assert per_bucket("app_bucketed_java") == per_bucket("app_bucketed_ice")
    # and icefloe reads the table Paimon Java wrote, then appends to it
    jt = ice.load_table("db.app_bucketed_java")
    assert ice_rows(jt, ["id", "v", "dt"]) == sorted(every, key=repr)
    jt.append(arrow(APPEND, [(100, "z", "y")]))
    assert java.rows("app_bucketed_java") == sorted([*every, (100, "z", "y")], key=repr)


# ---------------------------------------------------------------- branches (Paimon Java's; icefloe follows main)
def test_branches_of_paimon_java_on_icefloe_tables(paimon_java, java, ice):
    """icefloe writes no Paimon branches. Paimon Java branches icefloe's table from a tag and writes
    on the branch: icefloe's main is untouched, a read of the branch by name is refused (icefloe
    reads tags, not branches), and after Paimon Java fast-forwards main to the branch icefloe reads
    and writes on from there."""
    pj = paimon_java
    t = ice.create_table("db.br_ice", "id bigint not null, v string", properties={"primary-key": "id", "bucket": "1"})
    t.append(arrow(KV, [(1, "a"), (2, "b")]))
    t.create_tag("base")
    pj.sql("CALL sys.create_branch(table => 'db.br_ice', branch => 'dev', tag => 'base')")
    pj.sql(f"INSERT INTO db.`br_ice$branch_dev` VALUES {sql_values([(2, 'B'), (3, 'c')])}")
    t.append(arrow(KV, [(4, "main")]))
    main = {1: "a", 2: "b", 4: "main"}
    assert ice_rows(t, ["id", "v"]) == sorted(main.items()) == java.rows("br_ice")
    assert java.rows("`br_ice$branch_dev`") == [(1, "a"), (2, "B"), (3, "c")]
    with pytest.raises(NotSupportedError, match="'dev' is a branch"):
        t.refresh().to_arrow(ref="dev")
    assert set(t.refs()) == {"base"}
    # main fast-forwarded to the branch by Paimon Java (main's later commit is dropped), then icefloe writes
    pj.sql("CALL sys.fast_forward(table => 'db.br_ice', branch => 'dev')")
    assert ice_rows(t, ["id", "v"]) == [(1, "a"), (2, "B"), (3, "c")]
    t.append(arrow(KV, [(5, "e")]))
    assert java.rows("br_ice") == [(1, "a"), (2, "B"), (3, "c"), (5, "e")]
    assert t.refresh().check().ok


# ---------------------------------------------------------------- tags, rollback, expiry, procedures
def test_tags_rollback_expiry_and_procedures_both_ways(paimon_java, java, ice, tmp_path):
    pj = paimon_java
    t = ice.create_table("db.proc_ice", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "2", "write-only": "true"})
    states = []
    for rows in ([(1, "a"), (2, "b")], [(2, "B"), (3, "c")], [(4, "d")], [(1, "A")]):
        t.append(arrow(KV, rows))
        states.append(dict(states[-1] if states else {}) | dict(rows))
    ids = [s.id for s in t.refresh().snapshots()]
    assert len(ids) == 4                                   # write-only: no compaction snapshots

    # icefloe's tag, read by Paimon Java; Paimon Java's tag, read by icefloe
    t.create_tag("ice_tag", snapshot_id=ids[1])
    assert java.rows("proc_ice", "ice_tag") == sorted(states[1].items(), key=repr)
    pj.sql(f"CALL sys.create_tag(table => 'db.proc_ice', tag => 'java_tag', snapshot => {ids[2]})")
    assert sorted(r[0] for r in pj.sql("SELECT tag_name FROM db.`proc_ice$tags`")) == ["ice_tag", "java_tag"]
    assert ice_rows(t, ["id", "v"], ref="java_tag") == sorted(states[2].items(), key=repr)
    assert sorted(r["tag_name"] for r in t.metadata_table("tags").to_pylist()) == ["ice_tag", "java_tag"]

    # Paimon Java rolls icefloe's table back to a tag, then to a snapshot
    pj.sql("CALL sys.rollback(table => 'db.proc_ice', version => 'java_tag')")
    assert t.refresh().current_snapshot().id == ids[2]
    assert ice_rows(t, ["id", "v"]) == sorted(states[2].items(), key=repr)
    pj.sql(f"CALL sys.rollback(table => 'db.proc_ice', version => '{ids[1]}')")
    assert ice_rows(t, ["id", "v"]) == sorted(states[1].items(), key=repr)
    assert [r[0] for r in pj.sql("SELECT tag_name FROM db.`proc_ice$tags`")] == ["ice_tag"]  # a later tag goes
    # icefloe rolls back and writes on; Paimon Java reads it
    t.rollback_to_tag("ice_tag")
    t.append(arrow(KV, [(5, "e")]))
    now = states[1] | {5: "e"}
    assert java.rows("proc_ice") == sorted(now.items(), key=repr)

    # Paimon Java compacts icefloe's table: icefloe reads the compacted snapshot. (After this, Paimon
    # 0.9's rollback would break any table, its own too: the cleanup deletes a file the compaction
    # moved up a level under the same name, which the snapshot rolled back to still reads.)
    pj.sql("CALL sys.compact(table => 'db.proc_ice')")
    assert ice_snapshots(t)[-1][1] == "COMPACT"
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr) == java.rows("proc_ice")
    assert java.files("proc_ice") == ice_files(t)

    # expiry by Paimon Java on icefloe's table: icefloe keeps reading, the check passes
    for i in range(6, 9):
        t.append(arrow(KV, [(i, str(i))]))
        now[i] = str(i)
    pj.sql("CALL sys.expire_snapshots(table => 'db.proc_ice', retain_max => 2)")
    kept = ice_snapshots(t)
    assert len(kept) == 2 and kept == java.snapshots("proc_ice")
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr)
    assert ice_rows(t, ["id", "v"], ref="ice_tag") == sorted(states[1].items(), key=repr)  # the tag keeps its files
    assert t.check().ok
    # expiry by icefloe, read by Paimon Java
    t.append(arrow(KV, [(9, "9")]))
    now[9] = "9"
    t.expire_snapshots(older_than=time.time_ns() // 10**6 + 1000, retain_last=1)   # past snapshot.time-retained
    assert java.snapshots("proc_ice") == ice_snapshots(t) and len(ice_snapshots(t)) == 1
    assert java.rows("proc_ice") == sorted(now.items(), key=repr)
    assert java.rows("proc_ice", "ice_tag") == sorted(states[1].items(), key=repr)

    # Paimon Java removes an orphan file from icefloe's table, and nothing else
    orphan = os.path.join(t.location, "bucket-0", "data-orphan.parquet")
    with open(orphan, "wb") as f:
        f.write(b"not referenced")
    os.utime(orphan, (1, 1))
    pj.sql("CALL sys.remove_orphan_files(table => 'db.proc_ice', older_than => '2099-01-01 00:00:00')")
    assert not os.path.exists(orphan)
    assert ice_rows(t, ["id", "v"]) == sorted(now.items(), key=repr) and t.check().ok


# ---------------------------------------------------------------- interleaved rounds
def test_interleaved_writes_and_compactions_agree_with_the_model(paimon_java, java, ice):
    """Paimon Java writes and compacts on icefloe's table, icefloe on Paimon Java's, several rounds;
    after each step both engines read what the plain-Python model holds."""
    pj = paimon_java
    props = {"primary-key": "id", "bucket": "2", "changelog-producer": "lookup", "deletion-vectors.enabled": "true"}
    t = ice.create_table("db.rounds_ice", "id bigint not null, v string", properties=props)
    java.create("rounds_java", KV_COLUMNS, options=props)
    tables = {"rounds_ice": t, "rounds_java": ice.load_table("db.rounds_java")}
    models: dict[str, dict[int, str]] = {name: {} for name in tables}

    def check(step):
        for name, table in tables.items():
            want = sorted(models[name].items(), key=repr)
            assert java.rows(name) == want, (name, step, "Paimon Java")
            assert ice_rows(table, ["id", "v"]) == want, (name, step, "icefloe")

    for r in range(3):
        base = r * 10
        for name, table in tables.items():
            rows = [(base + i, f"r{r}-ice") for i in range(1, 5)] + [(1, f"r{r}-ice")]
            table.append(arrow(KV, rows))
            models[name].update(dict(rows))
            check(f"round {r}: icefloe upserts {name}")
            java_rows_ = [(base + i, f"r{r}-java") for i in range(3, 7)]
            java.write(name, java_rows_)
            models[name].update(dict(java_rows_))
            pj.sql(f"DELETE FROM db.{name} WHERE id = {base + 2}")
            models[name].pop(base + 2, None)
            check(f"round {r}: Paimon Java upserts and deletes in {name}")
            table.delete(f"id = {base + 4}")
            models[name].pop(base + 4, None)
            check(f"round {r}: icefloe deletes in {name}")
            if r % 2 == 0:
                pj.sql(f"CALL sys.compact(table => 'db.{name}')")
            else:
                table.refresh().rewrite_data_files()
            check(f"round {r}: {'Paimon Java' if r % 2 == 0 else 'icefloe'} compacts {name}")
    for name, table in tables.items():
        assert java.snapshots(name) == ice_snapshots(table)
        assert java.files(name) == ice_files(table)
        assert table.refresh().check().ok


def test_paimon_java_compacts_icefloe_append_tables(paimon_java, java, ice):
    """``sys.compact`` by Paimon Java on icefloe's bucketed append table of many small files: icefloe
    reads the compacted snapshot and appends on. On a bucket-unaware table Paimon 0.9's procedure
    commits nothing (it does the same on tables it wrote itself, checked here on a twin): there
    icefloe compacts, and Paimon Java reads the result."""
    pj = paimon_java
    for name, props in (("cmp_unaware", {"bucket": "-1"}), ("cmp_bucketed", {"bucket": "2", "bucket-key": "id"})):
        t = ice.create_table(f"db.{name}", "id bigint not null, v string, dt string", partitioned_by=["dt"],
                             properties=props)
        java.create(f"{name}_java", APPEND_COLUMNS, partitions=("dt",), options=props)
        model = []
        for i in range(6):
            rows = [(i * 10 + j, f"v{i}", "x" if j % 2 else "y") for j in range(3)]
            t.append(arrow(APPEND, rows))
            java.write(f"{name}_java", rows)
            model += rows
        before = ice_snapshots(t)
        twin_before = java.snapshots(f"{name}_java")
        pj.sql(f"CALL sys.compact(table => 'db.{name}')")
        pj.sql(f"CALL sys.compact(table => 'db.{name}_java')")
        if props["bucket"] == "-1":
            assert ice_snapshots(t) == before and java.snapshots(f"{name}_java") == twin_before
            t.rewrite_data_files()
        else:
            assert java.snapshots(f"{name}_java")[-1][1] == "COMPACT"
        assert ice_snapshots(t)[-1][1] == "COMPACT" and len(ice_files(t)) < 12, name
        assert ice_rows(t, ["id", "v", "dt"]) == sorted(model, key=repr) == java.rows(name)
        assert java.files(name) == ice_files(t)
        t.append(arrow(APPEND, [(100, "after", "x")]))
        model.append((100, "after", "x"))
        assert java.rows(name) == sorted(model, key=repr)
        assert t.refresh().check().ok
