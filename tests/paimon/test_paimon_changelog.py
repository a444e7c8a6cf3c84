"""Changelog producers of primary-key tables (input, lookup, full-compaction): the changes between
any two snapshots turn the first snapshot's rows into the second's, pypaimon's stream reads the
same changelog files icefloe reads, pypaimon and pypaimon-rust read the tables, expiry takes an
expired snapshot's changelog with it, and a fault anywhere in a changelog-producing commit leaves
the table readable and whole."""
import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import icefloe
from icefloe.errors import SchemaError
from icefloe.paimon import changelog as cl
from icefloe.paimon import kv_compact
from icefloe.paimon import merge as mg

PRODUCERS = ["input", "lookup", "full-compaction"]


def _table(wh, name, producer, **extra):
    cat = icefloe.Catalog(str(wh), format="paimon")
    return cat.create_table(name, "id bigint not null, v string",
                            properties={"primary-key": "id", "bucket": "2", "changelog-producer": producer, **extra})


def _state(t):
    d = t.to_arrow().to_pydict()
    return dict(zip(d["id"], d["v"]))


def _records(t, start, end):
    """The changelog records of snapshots (start, end] read through the spec layer: (kind, id, v)."""
    out = []
    for s in t.snapshots():
        if start < s.id <= end:
            for e in cl.snapshot_changes(t.store, s, cl.producer(t.table_schema)):
                d = mg.read_kv_file(e.file.file_path, t.io, t.table_schema.fields, t.table_schema.fields)
                out += [(cl.KIND_LABELS[k], i, v) for k, i, v in
                        zip(d.column(mg.VALUE_KIND).to_pylist(), d.column("id").to_pylist(), d.column("v").to_pylist())]
    return out


def _apply(state: dict, records, exact: bool, combine=None) -> dict:
    """Apply a changelog to a state. ``exact`` (lookup, full-compaction): every retraction names
    the value the key held, every +I a key that was absent. Otherwise (input: the records as
    written) an added record goes through the merge engine's ``combine(old, new)``."""
    state = dict(state)
    for kind, k, v in records:
        if kind in ("-U", "-D"):
            if exact:
                assert state.get(k, object()) == v, (kind, k, v, state.get(k))
            state.pop(k, None)
        else:
            if exact:
                assert k not in state, (kind, k, v)
            state[k] = v if exact or combine is None else combine(state.get(k), v)
    return state


def _upsert(t, ids, tag):
    t.append(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{tag}{i}" for i in ids]}))


def _pypaimon_stream(wh, name):
    """pypaimon's streaming read of each snapshot's changelog: {snapshot id: [(kind, id, v)]}."""
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    t = CatalogFactory.create({"warehouse": str(wh)}).get_table(name)
    builder = t.new_stream_read_builder().with_include_row_kind(True)
    scan, read = builder.new_streaming_scan(), builder.new_read()
    out = {}
    sm = t.snapshot_manager()
    for sid in range(1, sm.get_latest_snapshot().id + 1):
        snap = sm.get_snapshot_by_id(sid)
        if scan.follow_up_scanner.should_scan(snap):
            rows = read.to_arrow(scan._create_follow_up_plan(snap).splits()).to_pylist()
            out[sid] = sorted((r["_row_kind"], r["id"], r["v"]) for r in rows)
    return out


@pytest.mark.parametrize("producer,extra", [(p, {}) for p in PRODUCERS] +
                         [("lookup", {"deletion-vectors.enabled": "true"})], ids=PRODUCERS + ["lookup-vectors"])
def test_changes_between_snapshots_turn_one_state_into_the_other(tmp_path, producer, extra):
    t = _table(tmp_path / "wh", "db.t", producer, **extra)
    rnd = random.Random(3)
    states = {0: {}}
    for step in range(8):
        _upsert(t, rnd.sample(range(30), rnd.randint(1, 8)), f"s{step}-")
        if step % 3 == 2:
            t.delete(f"id in ({', '.join(map(str, rnd.sample(range(30), 6)))})")
        states[t.current_snapshot().id] = _state(t)
    ids = sorted(states)
    exact = producer != "input"
    for a in ids:
        for b in ids:
            if a < b:
                assert _apply(states[a], _records(t, a, b), exact) == states[b], (a, b)
    kinds = {s.commit_kind for s in t.snapshots() if s.changelog_manifest_list}
    assert kinds == ({"APPEND"} if producer == "input" else {"COMPACT"})
    assert all((s.changelog_record_count or 0) > 0 for s in t.snapshots() if s.changelog_manifest_list)
    report = t.check()
    assert report.ok and report.checked.get("changelog files", 0) > 0, report.problems
    # pypaimon's stream reads the same records from the same files, snapshot by snapshot
    ours = {s.id: sorted(_records(t, s.id - 1, s.id)) for s in t.snapshots() if s.changelog_manifest_list}
    assert _pypaimon_stream(tmp_path / "wh", "db.t") == ours


def test_lookup_emits_update_pairs_and_first_row_only_inserts(tmp_path):
    t = _table(tmp_path / "wh", "db.t", "lookup")
    _upsert(t, [1, 2], "a")
    first = t.current_snapshot().id
    _upsert(t, [2, 3], "a")          # 2 gets the same value again: -U/+U anyway (no row-deduplicate)
    assert sorted(_records(t, first, t.current_snapshot().id)) == [("+I", 3, "a3"), ("+U", 2, "a2"), ("-U", 2, "a2")]
    d = _table(tmp_path / "wh", "db.d", "lookup", **{"changelog-producer.row-deduplicate": "true"})
    _upsert(d, [1, 2], "a")
    first = d.current_snapshot().id
    _upsert(d, [2, 3], "a")
    assert _records(d, first, d.current_snapshot().id) == [("+I", 3, "a3")]
    f = _table(tmp_path / "wh", "db.f", "lookup", **{"merge-engine": "first-row"})
    _upsert(f, [1, 2], "a")
    first = f.current_snapshot().id
    _upsert(f, [2, 3], "b")
    assert _records(f, first, f.current_snapshot().id) == [("+I", 3, "b3")]
    assert _state(f) == {1: "a1", 2: "a2", 3: "b3"}


def test_full_compaction_changelog_of_an_aggregation_table(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon")
    t = cat.create_table("db.a", "id bigint not null, n bigint",
                         properties={"primary-key": "id", "bucket": "1", "changelog-producer": "full-compaction",
                                     "merge-engine": "aggregation", "fields.n.aggregate-function": "sum"})
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "n": pa.array([5, 7], pa.int64())}))
    s1 = t.current_snapshot().id
    t.append(pa.table({"id": pa.array([1, 3], pa.int64()), "n": pa.array([10, 1], pa.int64())}))
    snap = t.current_snapshot()
    assert snap.commit_kind == "COMPACT"
    recs = []
    for e in cl.snapshot_changes(t.store, snap, "full-compaction"):
        d = mg.read_kv_file(e.file.file_path, t.io, t.table_schema.fields, t.table_schema.fields)
        recs += list(zip(d.column(mg.VALUE_KIND).to_pylist(), d.column("id").to_pylist(), d.column("n").to_pylist()))
    assert recs == [(mg.UPDATE_BEFORE, 1, 5), (mg.UPDATE_AFTER, 1, 15), (mg.INSERT, 3, 1)]   # 2 unchanged: nothing
    assert s1 < snap.id
    rows = t.to_arrow().to_pydict()
    assert dict(zip(rows["id"], rows["n"])) == {1: 15, 2: 7, 3: 1}


@pytest.mark.parametrize("engine", ["aggregation", "partial-update"])
def test_lookup_changelog_of_aggregation_and_partial_update_tables_without_vectors(tmp_path, engine):
    """Without vectors the lookup compaction merges every run of the bucket after each write, so a
    key is once above level 0 (Paimon's lookup readers take that record whole, other readers merge
    every level: both read the same); the changelog pairs carry whole values."""
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory
    from pypaimon_rust.datafusion import SQLContext

    wh = tmp_path / "wh"
    extra = ({"fields.n.aggregate-function": "sum", "fields.s.aggregate-function": "last_non_null_value"}
             if engine == "aggregation" else {})
    t = icefloe.Catalog(str(wh), format="paimon").create_table(
        "db.a", "id bigint not null, n bigint, s string",
        properties={"primary-key": "id", "bucket": "1", "changelog-producer": "lookup", "merge-engine": engine,
                    "num-sorted-run.compaction-trigger": "50", "num-levels": "4", **extra})

    def put(ids, n, s):
        t.append(pa.table({"id": pa.array(ids, pa.int64()), "n": pa.array([n] * len(ids), pa.int64()),
                           "s": pa.array([s] * len(ids), pa.string())}))

    put([1, 2], 5, "a")
    first = t.current_snapshot().id
    put([1, 3], 10, None)
    last = t.current_snapshot()
    assert last.commit_kind == "COMPACT"
    assert {e.file.level for e in t.plan()} == {3}                    # one run, at the top level
    recs = []
    for s in t.snapshots():
        if first < s.id <= last.id:
            for e in cl.snapshot_changes(t.store, s, "lookup"):
                d = mg.read_kv_file(e.file.file_path, t.io, t.table_schema.fields, t.table_schema.fields)
                recs += zip([cl.KIND_LABELS[k] for k in d.column(mg.VALUE_KIND).to_pylist()],
                            d.column("id").to_pylist(), d.column("n").to_pylist(), d.column("s").to_pylist())
    one = (15, "a") if engine == "aggregation" else (10, "a")          # partial-update: null keeps "a"
    assert sorted(recs) == sorted([("-U", 1, 5, "a"), ("+U", 1, *one), ("+I", 3, 10, None)])
    expected = {1: one, 2: (5, "a"), 3: (10, None)}
    d = t.to_arrow().to_pydict()
    assert {i: (n, s) for i, n, s in zip(d["id"], d["n"], d["s"])} == expected
    pt = CatalogFactory.create({"warehouse": str(wh)}).get_table("db.a")
    rb = pt.new_read_builder()
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pydict()
    assert {i: (n, s) for i, n, s in zip(got["id"], got["n"], got["s"])} == expected
    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": str(wh)})
    rust = pa.Table.from_batches(ctx.sql("SELECT id, n, s FROM paimon.db.a")).to_pydict()
    assert {i: (n, s) for i, n, s in zip(rust["id"], rust["n"], rust["s"])} == expected


def test_a_lookup_aggregation_table_with_stale_whole_values_reads_as_paimon_reads_it(tmp_path, spark):
    """The layout Paimon's own lookup compaction leaves (a key's whole value at level 1 over its stale
    whole value at level 3) merges as Paimon's readers merge it: level 0 over the newest record above
    it, never a sum of both levels; the dedicated compaction and its changelog likewise."""
    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon", spark=spark)
    t = cat.create_table("db.a", "id bigint not null, n bigint", properties={
        "primary-key": "id", "bucket": "1", "changelog-producer": "lookup", "merge-engine": "aggregation",
        "fields.n.aggregate-function": "sum", "write-only": "true", "num-levels": "4"})

    def put(i, n):
        t.append(pa.table({"id": pa.array([i], pa.int64()), "n": pa.array([n], pa.int64())}))

    def move_up(level):                       # the level-0 file alone to ``level``, as its whole value
        t.refresh()
        new = [e for e in t.plan() if e.file.level == 0]
        task = kv_compact.BucketCompaction(new[0].partition, 0, 1, new, level, drop_deletes=False)
        kv_compact.commit(t, t.current_snapshot(), [kv_compact.run_task(t, task)])

    put(1, 5)
    move_up(3)
    put(1, 15)                                # Paimon's lookup compaction of +10 writes the whole 15
    move_up(1)
    put(2, 7)
    put(1, 1)
    t.refresh()
    assert sorted(e.file.level for e in t.plan()) == [0, 0, 1, 3]
    expected = {1: 16, 2: 7}
    d = t.to_arrow().to_pydict()
    assert dict(zip(d["id"], d["n"])) == expected
    assert {r.id: r.n for r in t.to_spark().collect()} == expected
    before = t.current_snapshot().id
    t.compact()
    t.refresh()
    assert {e.file.level for e in t.plan()} == {3}
    d = t.to_arrow().to_pydict()
    assert dict(zip(d["id"], d["n"])) == expected
    recs = sorted(_records_n(t, before, t.current_snapshot().id))
    assert recs == [("+I", 2, 7), ("+U", 1, 16), ("-U", 1, 15)]


def _records_n(t, start, end):
    out = []
    for s in t.snapshots():
        if start < s.id <= end:
            for e in cl.snapshot_changes(t.store, s, "lookup"):
                d = mg.read_kv_file(e.file.file_path, t.io, t.table_schema.fields, t.table_schema.fields)
                out += zip([cl.KIND_LABELS[k] for k in d.column(mg.VALUE_KIND).to_pylist()],
                           d.column("id").to_pylist(), d.column("n").to_pylist())
    return out


def test_changes_and_changelog_views_in_spark(tmp_path, spark):
    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon", spark=spark)
    t = cat.create_table("db.t", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "2", "changelog-producer": "lookup"})
    _upsert(t, [1, 2, 3], "a")
    s1 = t.current_snapshot().id
    t.append(spark.createDataFrame([(2, "b2"), (4, "b4")], "id long, v string"))
    t.delete("id = 3")
    rows = sorted(tuple(r) for r in t.changes(s1).collect())
    assert rows == [("+I", 4, "b4"), ("+U", 2, "b2"), ("-D", 3, "a3"), ("-U", 2, "a2")]
    assert sorted(tuple(r) for r in t.changes().collect()) == sorted(
        [("+I", 1, "a1"), ("+I", 2, "a2"), ("+I", 3, "a3")] + rows)
    assert t.changes().columns == ["rowkind", "id", "v"]
    view = t.changelog(s1)
    assert view.columns == ["id", "v", "_change_type", "_change_ordinal", "_commit_snapshot_id"]
    got = sorted((r.id, r.v, r._change_type) for r in view.collect())
    assert got == [(2, "a2", "UPDATE_BEFORE"), (2, "b2", "UPDATE_AFTER"), (3, "a3", "DELETE"), (4, "b4", "INSERT")]
    by_snapshot = {r._commit_snapshot_id for r in view.collect()}
    assert by_snapshot <= {s.id for s in t.snapshots() if s.commit_kind == "COMPACT"}
    # SQL: Iceberg's procedure gives Paimon tables the same view
    cat.sql(f"CALL system.create_changelog_view(table => 'db.t', options => map('start-snapshot-id', '{s1}'))")
    assert sorted(tuple(r) for r in cat.sql("SELECT id, v, _change_type FROM t_changes").collect()) == got
    # a table without a producer: the records as written, deletes as -D
    n = cat.create_table("db.n", "id bigint not null, v string", properties={"primary-key": "id", "bucket": "1"})
    _upsert(n, [1, 2], "a")
    _upsert(n, [2], "b")
    n.delete("id = 1")
    assert sorted(tuple(r) for r in n.changes().collect()) == [("+I", 1, "a1"), ("+I", 2, "a2"), ("+I", 2, "b2"),
                                                                ("-D", 1, "a1")]


def test_expiry_deletes_an_expired_snapshots_changelog(tmp_path):
    t = _table(tmp_path / "wh", "db.t", "input")
    for i in range(5):
        _upsert(t, [i, i + 10], f"w{i}-")
    files = {e.file.file_path for s in t.snapshots() for e in cl.snapshot_changes(t.store, s, "input")}
    assert len(files) >= 5 and all(t.io.exists(p) for p in files)
    t.expire_snapshots(older_than=2**62, retain_last=2)
    kept = {e.file.file_path for s in t.snapshots() for e in cl.snapshot_changes(t.store, s, "input")}
    assert kept and kept < files
    assert not any(t.io.exists(p) for p in files - kept)
    assert all(t.io.exists(p) for p in kept)
    assert t.check().ok, t.check().problems
    assert not t.remove_orphan_files(older_than=2**62, dry_run=True)    # nothing dangling
    first = t.snapshots()[0].id
    assert _records(t, first - 1, t.current_snapshot().id)                 # what is left reads
    with pytest.raises(icefloe.errors.NoSuchSnapshotError, match="expired"):
        from icefloe.spark.paimon_changes import _range
        _range(t, first - 3, None)


def test_bad_producer_options_are_refused(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon")
    with pytest.raises(SchemaError, match="primary-key"):
        cat.create_table("db.a", "id bigint", properties={"changelog-producer": "input"})
    with pytest.raises(SchemaError, match="changelog-producer"):
        cat.create_table("db.b", "id bigint not null", properties={"primary-key": "id", "bucket": "1",
                                                                    "changelog-producer": "sometimes"})
    with pytest.raises(SchemaError, match="deletion vectors"):
        cat.create_table("db.c", "id bigint not null, n bigint",
                         properties={"primary-key": "id", "bucket": "1", "changelog-producer": "full-compaction",
                                     "deletion-vectors.enabled": "true"})
    assert not (tmp_path / "wh" / "db.db").exists() or not any((tmp_path / "wh" / "db.db").iterdir())


def test_we_read_the_input_changelog_pypaimon_writes(tmp_path, spark):
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory
    Schema = remote_module("pypaimon").Schema

    wh = tmp_path / "wh"
    pcat = CatalogFactory.create({"warehouse": str(wh)})
    pcat.create_database("db", True)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    pcat.create_table("db.p", Schema.from_pyarrow_schema(schema, primary_keys=["id"], options={
        "bucket": "1", "changelog-producer": "input"}), False)
    pt = pcat.get_table("db.p")
    for batch in ([(1, "a"), (2, "b")], [(2, "c"), (3, "d")]):
        wb = pt.new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(pa.Table.from_pylist([{"id": i, "v": v} for i, v in batch], schema=schema))
        c.commit(w.prepare_commit())
        w.close()
        c.close()
    t = icefloe.Catalog(str(wh), format="paimon", spark=spark).load_table("db.p")
    expected = _pypaimon_stream(wh, "db.p")
    assert sorted(tuple(r) for r in t.changes().collect()) == sorted(r for rows in expected.values() for r in rows)
    assert sorted(tuple(r) for r in t.changes().collect()) == [("+I", 1, "a"), ("+I", 2, "b"), ("+I", 2, "c"),
                                                                ("+I", 3, "d")]
    # and icefloe goes on writing the changelog of the table pypaimon made
    t.append(pa.table({"id": pa.array([1], pa.int64()), "v": ["z"]}))
    assert _pypaimon_stream(wh, "db.p")[t.current_snapshot().id] == [("+I", 1, "z")]


@pytest.mark.parametrize("producer", PRODUCERS)
def test_pypaimon_and_pypaimon_rust_read_changelog_tables(tmp_path, producer):
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory
    from pypaimon_rust.datafusion import SQLContext

    wh = tmp_path / "wh"
    t = _table(wh, "db.t", producer)
    for i in range(4):
        _upsert(t, [i, i + 1, 7], f"w{i}-")
    t.delete("id = 1")
    expected = _state(t)
    pt = CatalogFactory.create({"warehouse": str(wh)}).get_table("db.t")
    rb = pt.new_read_builder()
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pydict()
    assert dict(zip(got["id"], got["v"])) == expected
    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": str(wh)})
    rust = pa.Table.from_batches(ctx.sql("SELECT id, v FROM paimon.db.t")).to_pydict()
    assert dict(zip(rust["id"], rust["v"])) == expected


def test_a_fault_at_every_file_operation_of_a_changelog_producing_commit(tmp_path):
    """Input (the write's changelog in its own commit) and lookup (in the compaction after it): a
    fault anywhere leaves the old rows or the new ones, every referenced file present, and the
    changelog whole: the states on either side still follow from it."""
    from icefloe.core.faults import FaultInjectingFileIO, InjectedFault

    second = pa.table({"id": pa.array([2, 4], pa.int64()), "v": ["b", "b"]})
    old, new = {1: "a", 2: "a", 3: "a"}, {1: "a", 2: "b", 3: "a", 4: "b"}
    seen_outcomes = set()
    for producer in ("input", "lookup"):
        def fresh(k, producer=producer):
            wh = tmp_path / f"{producer}{k}"
            t = _table(wh, "db.t", producer, bucket="1")
            t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a"] * 3}))
            return wh

        probe = FaultInjectingFileIO()
        icefloe.Catalog(str(fresh("probe")), format="paimon", io=probe).load_table("db.t").append(second)
        for k in range(1, probe.count + 1):
            wh = fresh(k)
            t = icefloe.Catalog(str(wh), format="paimon", io=FaultInjectingFileIO(fail_at=k)).load_table("db.t")
            failed = False
            try:
                t.append(second)
            except InjectedFault:
                failed = True
            clean = icefloe.Catalog(str(wh), format="paimon").load_table("db.t")
            assert _state(clean) == (old if failed else new), (producer, k)
            problems = [p for p in clean.check().problems if p.kind != "hint"]
            assert not problems, (producer, k, problems)
            last = clean.current_snapshot()
            changed = _apply({}, _records(clean, 0, last.id), exact=False)
            complete = producer == "input" or last.commit_kind == "COMPACT"
            if complete:
                assert changed == _state(clean), (producer, k)
            seen_outcomes.add((producer, failed, last.commit_kind))
    assert ("input", True, "APPEND") in seen_outcomes and ("input", False, "APPEND") in seen_outcomes
    assert ("lookup", False, "COMPACT") in seen_outcomes and ("lookup", False, "APPEND") in seen_outcomes


OPS = st.lists(st.one_of(
    st.tuples(st.just("upsert"), st.lists(st.integers(0, 15), min_size=1, max_size=6)),
    st.tuples(st.just("delete"), st.lists(st.integers(0, 15), min_size=1, max_size=4)),
    st.tuples(st.just("compact"), st.none()),
    st.tuples(st.just("expire"), st.integers(1, 4)),
    st.tuples(st.just("rollback"), st.integers(1, 3)),
), min_size=3, max_size=10)

# merge engines with the options that let them take deletes, and how each changes the model
ENGINES = {
    "deduplicate": ({}, lambda old, new: new),
    "first-row": ({"merge-engine": "first-row"}, lambda old, new: new if old is None else old),
    "partial-update": ({"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
                       lambda old, new: new),
    "aggregation": ({"merge-engine": "aggregation", "fields.v.aggregate-function": "max",
                     "aggregation.remove-record-on-delete": "true"},
                    lambda old, new: new if old is None else max(old, new)),
}
# (engine, producer, deletion vectors): vectors take input and lookup, and every engine but first-row
CASES = [(e, p, False) for e in ENGINES for p in PRODUCERS]
CASES += [(e, "lookup", True) for e in ENGINES if e != "first-row"] + [("deduplicate", "input", True)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(CASES), ops=OPS, seed=st.integers(0, 10**6))
def test_model_changelog_between_any_two_snapshots(tmp_path_factory, case, ops, seed):
    """Random upserts, deletes, full compactions, expiries and rollbacks against a dict, per merge
    engine and changelog producer: the changelog between any two retained snapshots (where the
    changelog is complete) turns the model's state at the first into its state at the second."""
    engine, producer, vectors = case
    options, combine = ENGINES[engine]
    if vectors:
        options = {**options, "deletion-vectors.enabled": "true"}
    wh = tmp_path_factory.mktemp("model")
    t = _table(wh, "db.t", producer, bucket="2", **options)
    model: dict = {}
    states = {0: {}}
    rnd = random.Random(seed)
    for n, (op, arg) in enumerate(ops):
        if op == "upsert":
            vals = {k: f"{n}-{rnd.randint(0, 2)}" for k in arg}
            t.append(pa.table({"id": pa.array(list(vals), pa.int64()), "v": list(vals.values())}))
            model = {**model, **{k: combine(model.get(k), v) for k, v in vals.items()}}
        elif op == "delete" and engine != "first-row":
            t.delete(f"id in ({', '.join(map(str, arg))})")
            model = {k: v for k, v in model.items() if k not in arg}
        elif op == "compact":
            kv_compact.compact_table(t)
        elif op == "expire":
            t.expire_snapshots(older_than=2**62, retain_last=arg)
        elif op == "rollback":
            retained = sorted(i for i in states if i in {s.id for s in t.snapshots()})
            if len(retained) > 1:
                target = retained[max(0, len(retained) - 1 - arg)]
                t.rollback_to_snapshot(target)
                states = {i: st_ for i, st_ in states.items() if i <= target}
                model = dict(states[target])
        t.refresh()
        assert _state(t) == model, (n, op)
        cur = t.current_snapshot()
        if cur is not None:
            states[cur.id] = dict(model)
    retained = {s.id for s in t.snapshots()}
    first = min(retained) if retained else 1
    usable = sorted(i for i in states if i in retained or i == first - 1)
    checked = 0
    for a in usable:
        for b in usable:
            if a < b:
                assert _apply(states[a], _records(t, a, b), producer != "input", combine) == states[b], (a, b)
                checked += 1
    if len(usable) >= 2:
        assert checked
    if t.current_snapshot() is not None:
        assert t.check().ok, t.check().problems


def test_changelogs_outlive_their_snapshots_when_retained_longer(tmp_path, spark):
    """``changelog.num-retained.max`` above the snapshots' retention: an expired snapshot's
    changelog is kept as ``changelog/changelog-<id>`` (its files too) until the changelog's own
    retention passes, and the changes still read across the expired snapshots."""
    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon", spark=spark)
    t = cat.create_table("db.t", "id bigint not null, v string", properties={
        "primary-key": "id", "bucket": "1", "changelog-producer": "input", "write-only": "true",
        "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2", "changelog.num-retained.max": "5"})
    states = {0: {}}
    for i in range(8):
        _upsert(t, [i, 100], f"w{i}-")
        states[t.current_snapshot().id] = _state(t)
        t.expire_snapshots()
    latest = t.current_snapshot().id
    assert [s.id for s in t.snapshots()] == [latest - 1, latest]
    kept = [c.id for c in cl.kept_changelogs(t.store)]
    assert kept == [latest - 4, latest - 3, latest - 2]          # the newest 5 changelogs, 2 in snapshots
    rows = [tuple(r) for r in t.changes(latest - 5).collect()]
    assert _apply(states[latest - 5], rows, exact=False) == states[latest]
    with pytest.raises(icefloe.errors.NoSuchSnapshotError, match="expired"):
        t.changes(latest - 7).collect()
    assert t.check().ok, t.check().problems
    assert not t.remove_orphan_files(older_than=2**62, dry_run=True)
    changelog_files = {p.name for p in (tmp_path / "wh" / "db.db" / "t" / "bucket-0").iterdir()
                       if p.name.startswith("changelog-")}
    assert len(changelog_files) == 5                               # older ones were deleted with their changelogs
