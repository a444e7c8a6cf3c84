"""The rounds both Paimon Java referees play with icefloe, once with each engine (``java``): Paimon 0.9
through its Spark runtime (``paimon_java``) and Paimon 1.4 without Spark (``paimon_bundle``), through
the one set of operations of ``tests/paimon_referee.py``. Each round writes the same rows on a table
of icefloe's making and on one of Paimon Java's, and holds both engines' reads (rows at every snapshot,
``$snapshots``, ``$files``, ``$audit_log``, the changelog) to the plain-Python model.

Long (``make test-long``): ``make test`` keeps the bundle's small round trip
(``test_paimon_bundle_referee.py::test_round_trip_with_paimon_java_table_api``).
"""
from __future__ import annotations

import random

import pyarrow as pa
import pytest

from icefloe.catalog import Catalog
from tests.paimon_referee import (ENGINES, KV, KV_COLUMNS, PK, PK_COLUMNS, PK_DDL, BundleSide, SparkRuntimeSide,
                                  arrow, ice_changes, ice_files, ice_rows, ice_snapshots, merge_model)

pytestmark = pytest.mark.long


@pytest.fixture(params=["paimon-0.9-spark", "paimon-1.4-bundle"])
def java(request):
    if request.param == "paimon-0.9-spark":
        return SparkRuntimeSide(request.getfixturevalue("paimon_java"))
    return BundleSide(request.getfixturevalue("paimon_bundle"))


@pytest.fixture
def ice(java, paimon_spark):
    return Catalog(java.warehouse, "paimon", paimon_spark)


def _pair(java, ice, name: str, ddl: str, columns: list, props: dict):
    """icefloe's table ``<name>_ice`` and Paimon Java's ``<name>_java``, both primary-keyed on id."""
    t = ice.create_table(f"db.{name}_ice", ddl, properties={"primary-key": "id", **props})
    java.create(f"{name}_java", columns, keys=("id",), options=props)
    return t, ice.load_table(f"db.{name}_java")


def test_primary_key_merge_engines_both_ways(java, ice):
    """Each merge engine's commits on both sides: every snapshot of each read by the other, the same
    snapshots, files and audit log; each compacts the other's table; deletes both ways."""
    for engine, (options, commits, expected) in ENGINES.items():
        t, jt = _pair(java, ice, f"pk_{engine}", PK_DDL, PK_COLUMNS, {"bucket": "2", **options})
        ice_name, java_name = f"pk_{engine}_ice", f"pk_{engine}_java"
        history, state = [], {}
        for rows in commits:
            t.append(arrow(PK, rows))
            java.write(java_name, rows)
            state = merge_model(engine, state, rows)
            history.append((t.refresh().current_snapshot().id, jt.refresh().current_snapshot().id,
                            sorted(state.values(), key=repr)))
        want = sorted(expected, key=repr)
        assert history[-1][2] == want, f"the model of {engine}"
        assert java.rows_at(ice_name, [i for i, _, _ in history]) == [rows for _, _, rows in history], \
            f"Paimon Java reading icefloe's {engine} snapshots"
        for _, j, rows in history:
            assert ice_rows(jt, list(PK), snapshot_id=j) == rows, f"icefloe reading Paimon Java's {engine} at {j}"
        assert java.rows(ice_name) == want and ice_rows(jt, list(PK)) == want, engine
        assert ice_rows(t, list(PK)) == want and java.rows(java_name) == want, engine
        assert java.snapshots(ice_name) == ice_snapshots(t)
        assert java.files(ice_name) == ice_files(t)
        audit = java.audit(ice_name)
        assert sorted((r[1:] for r in audit), key=repr) == want
        assert sorted((tuple(r) for r in t.audit_log().collect()), key=repr) == audit, engine
        # Paimon Java compacts icefloe's table, icefloe compacts Paimon Java's: nothing changes
        java.compact(ice_name)
        jt.refresh().rewrite_data_files()
        assert ice_rows(t, list(PK)) == want == java.rows(java_name) == ice_rows(jt, list(PK)), engine
        assert java.files(ice_name) == ice_files(t)
        # deletes both ways (partial-update and first-row take none without more options,
        # aggregation retracts its values: deduplicate's deletes are the ones compared here)
        if engine == "dedup_seq":
            t.delete("id = 1")
            assert java.rows(ice_name) == [r for r in want if r[0] != 1]
            java.delete(java_name, (2, None, None, 100))
            assert ice_rows(jt, list(PK)) == [r for r in want if r[0] != 2]


def test_changelog_producers_and_deletion_vectors_both_ways(java, ice):
    """Each changelog producer and deletion vectors: the rows after each step on both sides, and the
    changelog of each side's table as icefloe and Paimon Java read it, the same."""
    kinds = {"input": {"changelog-producer": "input"},
             "lookup": {"changelog-producer": "lookup"},
             "fullcomp": {"changelog-producer": "full-compaction"},
             "dv": {"deletion-vectors.enabled": "true"},
             "dv_lookup": {"deletion-vectors.enabled": "true", "changelog-producer": "lookup"}}
    for kind, options in kinds.items():
        t, jt = _pair(java, ice, f"cl_{kind}", "id bigint not null, v string", KV_COLUMNS, {"bucket": "1", **options})
        ice_name, java_name = f"cl_{kind}_ice", f"cl_{kind}_java"
        model: dict[int, str] = {}
        for step, rows in enumerate([[(1, "a"), (2, "b"), (3, "c")], [(2, "B"), (4, "d")], "delete 3"]):
            if rows == "delete 3":
                t.delete("id = 3")
                java.delete(java_name, (3, "c"))
                model.pop(3)
            else:
                t.append(arrow(KV, rows))
                java.write(java_name, rows)
                model.update(dict(rows))
            if kind == "fullcomp":      # this producer writes its changelog at full compactions
                t.rewrite_data_files()
                java.compact(java_name)
            want = sorted(model.items(), key=repr)
            assert java.rows(ice_name) == want, (kind, step)
            assert ice_rows(jt, ["id", "v"]) == want, (kind, step)
        assert java.snapshots(ice_name) == ice_snapshots(t)
        assert java.files(ice_name) == ice_files(t)
        if "changelog-producer" not in options:
            continue
        ours = ice_changes(t, 0)
        assert ice_changes(jt, 0) == ours, f"icefloe reading the {kind} changelog Paimon Java wrote"
        theirs = java.changes(java_name, jt.refresh().current_snapshot().id)
        assert java.changes(ice_name, t.refresh().current_snapshot().id) == theirs == ours, kind


def test_rowkind_field_and_streamed_changelog_both_ways(java, ice):
    """``rowkind.field``: the kind of each row comes from a column (+I, -U, +U, -D), on both sides;
    with the input changelog producer each side's changelog is its input, read by both engines and
    streamed by Paimon Java's streaming source from the first snapshot."""
    props = {"bucket": "1", "rowkind.field": "k", "changelog-producer": "input"}
    rk = {"id": pa.int64(), "v": pa.string(), "k": pa.string()}
    t, jt = _pair(java, ice, "rk", "id bigint not null, v string, k string", [*KV_COLUMNS, ("k", "STRING")], props)
    commits = [[(1, "a", "+I"), (2, "b", "+I"), (3, "c", "+I")],
               [(1, "a", "-U"), (1, "A", "+U"), (2, "b", "-D")],
               [(4, "d", "+I"), (3, "c", "-D"), (3, "C", "+I")]]
    model: dict[int, tuple] = {}
    history = []
    for rows in commits:
        t.append(arrow(rk, rows))
        java.write("rk_java", rows)
        for r in rows:
            if r[2] in ("-U", "-D"):
                model.pop(r[0], None)
            else:
                model[r[0]] = r
        want = sorted(model.values(), key=repr)
        history.append((t.refresh().current_snapshot().id, jt.refresh().current_snapshot().id, want))
        assert java.rows("rk_ice") == want == ice_rows(jt, list(rk)), rows
    assert java.rows_at("rk_ice", [i for i, _, _ in history]) == [w for _, _, w in history]
    for _, j, want in history:
        assert ice_rows(jt, list(rk), snapshot_id=j) == want
    written = sorted(((r[2], *r) for rows in commits for r in rows), key=repr)
    assert ice_changes(t, 0) == ice_changes(jt, 0) == written
    assert java.changes("rk_ice", history[-1][0]) == java.changes("rk_java", history[-1][1]) == written
    assert java.streamed("rk_ice") == java.streamed("rk_java") == written


def test_dynamic_bucket_and_schema_evolution_both_ways(java, ice):
    """Dynamic buckets (``bucket = -1``) written by both engines on both tables, each key in one
    bucket; then icefloe changes the schema, Paimon Java reads and writes, changes it again, and icefloe
    follows."""
    t, jt = _pair(java, ice, "dyn", "id bigint not null, v string", KV_COLUMNS,
                  {"bucket": "-1", "dynamic-bucket.target-row-num": "2"})
    model: dict[int, str] = {}
    rounds = [[(i, f"v{i}") for i in range(1, 7)], [(2, "two"), (7, "seven")], [(3, "three"), (7, "SEVEN"), (8, "e")]]
    for i, rows in enumerate(rounds):
        icefloe_side, java_side = (t, "dyn_java") if i % 2 == 0 else (jt, "dyn_ice")
        icefloe_side.append(arrow(KV, rows))
        java.write(java_side, rows)
        model.update(dict(rows))
        want = sorted(model.items(), key=repr)
        for name, table in (("dyn_ice", t), ("dyn_java", jt)):
            assert java.rows(name) == want and ice_rows(table, ["id", "v"]) == want, (name, i)
    for name in ("dyn_ice", "dyn_java"):        # more than one bucket: both engines assigned them from the index
        assert len({b for b, _ in java.buckets(name)}) > 1, name

    with t.update_schema() as u:
        u.add_column("extra", "INT")
        u.rename_column("v", "label")
    t.append(pa.table({"id": pa.array([9], pa.int64()), "label": ["nine"], "extra": pa.array([90], pa.int32())}))
    model9 = {k: (k, v, None) for k, v in model.items()} | {9: (9, "nine", 90)}
    assert java.rows("dyn_ice") == sorted(model9.values(), key=repr)
    java.add_and_rename_column("dyn_ice", ("note", "STRING"), ("extra", "x"))
    java.write("dyn_ice", [(10, "ten", 100, "n")])
    t.refresh()
    assert [f.name for f in t.schema.fields] == ["id", "label", "x", "note"]
    want = sorted([(*r, None) for r in model9.values()] + [(10, "ten", 100, "n")], key=repr)
    assert ice_rows(t, ["id", "label", "x", "note"]) == want
    t.append(pa.table({"id": pa.array([1], pa.int64()), "label": ["ONE"], "x": pa.array([1], pa.int32()),
                       "note": ["again"]}))
    want = sorted([r for r in want if r[0] != 1] + [(1, "ONE", 1, "again")], key=repr)
    assert java.rows("dyn_ice") == want
    assert java.schema_ids("dyn_ice") == list(range(len(t.metadata_table("schemas"))))


def test_interleaved_rounds_for_every_merge_engine(java, ice):
    """Each merge engine (deduplicate with ``sequence.field``, deletion vectors and the lookup changelog
    producer; partial-update with a sequence group; aggregation; first-row) on a table of each side's
    making: rounds in which icefloe writes, Paimon Java writes, and one of them compacts, both engines'
    reads held to ``merge_model`` after every step; then each reads every snapshot a step ended on."""
    rnd = random.Random(50)
    sequence = iter(rnd.sample(range(1, 10_000), 2_000))         # distinct: no ties to break
    tables, models, history = {}, {}, {}
    for engine, (options, _, _) in ENGINES.items():
        props = {"bucket": "2", **options}
        if engine == "dedup_seq":
            props |= {"deletion-vectors.enabled": "true", "changelog-producer": "lookup"}
        _pair(java, ice, f"il_{engine}", PK_DDL, PK_COLUMNS, props)
        for side in ("ice", "java"):
            name = f"il_{engine}_{side}"
            tables[name] = (engine, ice.load_table(f"db.{name}"))
            models[name], history[name] = {}, []

    def some_rows(count):
        keys = rnd.sample(range(1, 40), count)
        return [(k, rnd.choice([None, f"a{k}-{rnd.randrange(100)}"]), rnd.choice([None, rnd.randrange(50)]),
                 next(sequence)) for k in keys]

    def check(step):
        names = list(tables)
        for name, theirs in zip(names, java.read_many(names)):
            table = tables[name][1]
            want = sorted(models[name].values(), key=repr)
            assert theirs == want, (name, step, "Paimon Java")
            assert ice_rows(table, list(PK)) == want, (name, step, "icefloe")
            history[name].append((table.refresh().current_snapshot().id, want))

    for r in range(3):
        for name, (engine, table) in tables.items():
            rows = some_rows(8)
            table.append(arrow(PK, rows))
            models[name] = merge_model(engine, models[name], rows)
        check(f"round {r}: icefloe writes")
        writes = {name: some_rows(8) for name in tables}
        java.write_many(writes)
        for name, rows in writes.items():
            models[name] = merge_model(tables[name][0], models[name], rows)
        check(f"round {r}: Paimon Java writes")
        if r % 2 == 0:
            java.compact_many(list(tables), full=r == 0)
        else:
            for _, table in tables.values():
                table.refresh().rewrite_data_files()
        check(f"round {r}: {'Paimon Java' if r % 2 == 0 else 'icefloe'} compacts")
    for name, (_, table) in tables.items():
        kept = dict(history[name])
        assert java.rows_at(name, list(kept)) == list(kept.values()), name
        for i, want in kept.items():
            assert ice_rows(table, list(PK), snapshot_id=i) == want, (name, i)
        assert java.snapshots(name) == ice_snapshots(table)
        assert java.files(name) == ice_files(table)
        assert table.refresh().check().ok
