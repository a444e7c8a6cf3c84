"""Universal compaction, as Paimon's writers run it after each commit to a primary-key table:
the sorted runs it picks (size amplification, size ratio, run count), the level it writes them
to, deletes kept while older runs remain, ``write-only`` tables left alone; the rows never change
and pypaimon and pypaimon-rust read what icefloe reads."""
import random
from types import SimpleNamespace

import pyarrow as pa

import icefloe
from icefloe.paimon import kv_compact


def _entry(level, size, seq):
    return SimpleNamespace(file=SimpleNamespace(level=level, file_size=size, max_sequence_number=seq,
                                                min_sequence_number=seq))


OPTIONS = {"num-sorted-run.compaction-trigger": "3"}     # levels 0..3


def _runs(*specs):
    """Runs newest first from (level, size); level-0 runs get newer sequence numbers first."""
    entries = [_entry(level, size, 1000 - i) for i, (level, size) in enumerate(specs)]
    runs = kv_compact.sorted_runs(entries)
    assert [(lvl, sum(e.file.file_size for e in es)) for lvl, es in runs] == list(specs)
    return runs


def test_pick_follows_paimons_universal_rules():
    # fewer runs than the trigger: nothing
    assert kv_compact.pick_universal(_runs((0, 10), (3, 10)), OPTIONS) is None
    # size amplification: the newer runs outweigh twice the oldest: everything to the top level
    assert kv_compact.pick_universal(_runs((0, 50), (0, 60), (3, 10)), OPTIONS) == (3, 3)
    # size ratio: newest runs of like size merge, stopping before a run much bigger than they are;
    # the output goes just above it
    assert kv_compact.pick_universal(_runs((0, 10), (0, 10), (0, 10), (3, 1000)), OPTIONS) == (3, 2)
    # more runs than the trigger and no size rule applies: the surplus (and like-sized runs after
    # it) merge to the level just above the first run left out
    assert kv_compact.pick_universal(_runs((0, 10), (0, 100), (2, 1000), (3, 100000)), OPTIONS) == (2, 1)
    # never to level 0: when the run left out is at level 1, the pick takes it too, and its level
    assert kv_compact.pick_universal(_runs((0, 10), (0, 100), (1, 1000), (3, 100000)), OPTIONS) == (3, 1)
    # five runs: the two surplus runs and the like-sized level-1 run merge above level 2
    picked = kv_compact.pick_universal(_runs((0, 1), (0, 10), (1, 100), (2, 1000), (3, 100000)), OPTIONS)
    assert picked == (3, 1)
    # a custom size ratio lets a slightly bigger run join
    assert kv_compact.pick_universal(_runs((0, 10), (0, 14), (3, 1000)),
                                     {**OPTIONS, "compaction.size-ratio": "50"}) == (2, 2)


def _as_dict(arrow):
    d = arrow.to_pydict()
    return dict(zip(d["id"], d["v"]))


def _pypaimon_dict(warehouse, name):
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    t = CatalogFactory.create({"warehouse": warehouse}).get_table(name)
    rb = t.new_read_builder()
    return _as_dict(rb.new_read().to_arrow(rb.new_scan().plan().splits()))


def _pypaimon_rust_dict(warehouse, name):
    from pypaimon_rust.datafusion import SQLContext

    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": warehouse})
    batches = ctx.sql(f"SELECT id, v FROM paimon.{name}")
    return _as_dict(pa.Table.from_batches(batches)) if batches else {}


def test_writes_compact_their_buckets_and_the_rows_stay(tmp_path):
    wh = str(tmp_path / "wh")
    cat = icefloe.Catalog(wh, format="paimon")
    t = cat.create_table("db.k", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "2", **OPTIONS})
    rnd = random.Random(7)
    model: dict = {}
    for step in range(14):
        ids = rnd.sample(range(60), rnd.randint(1, 15))
        t.append(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"s{step}"] * len(ids)}))
        model.update({i: f"s{step}" for i in ids})
        if step % 3 == 2 and model:
            gone = rnd.sample(sorted(model), min(4, len(model)))
            t.delete(f"id in ({', '.join(map(str, gone))})")
            for g in gone:
                del model[g]
        assert _as_dict(t.to_arrow()) == model, step
        by_bucket: dict = {}
        for e in t.plan():
            by_bucket.setdefault((e.partition.to_bytes(), e.bucket), []).append(e)
        assert all(len(kv_compact.sorted_runs(es)) <= 3 for es in by_bucket.values()), step   # never above the trigger
    kinds = [s.commit_kind for s in t.snapshots()]
    assert "COMPACT" in kinds and kinds.count("COMPACT") < kinds.count("APPEND")
    assert _pypaimon_dict(wh, "db.k") == model
    assert _pypaimon_rust_dict(wh, "db.k") == model
    assert t.check().ok, t.check().problems


def test_a_compaction_of_newer_runs_keeps_their_deletes(tmp_path, spark):
    """Newer small runs merge above an older big one: a key they delete keeps its delete record
    (the older run still has the key), so the key stays deleted for every reader."""
    wh = str(tmp_path / "wh")
    cat = icefloe.Catalog(wh, format="paimon", spark=spark)
    t = cat.create_table("db.k", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "1", "write-only": "true", **OPTIONS})
    t.append(spark.range(2000).selectExpr("id", "'base' as v"))
    t.rewrite_data_files()                                     # one big run at the top level
    t.update_properties(remove=["write-only"])
    t = cat.load_table("db.k")
    t.delete("id < 5")                                         # run 2 (deletes of keys in the big run)
    t.append(pa.table({"id": pa.array([10, 11], pa.int64()), "v": ["a", "a"]}))     # run 3
    t.append(pa.table({"id": pa.array([12, 13], pa.int64()), "v": ["b", "b"]}))     # run 4: compaction
    assert t.current_snapshot().commit_kind == "COMPACT"
    levels = sorted(e.file.level for e in t.plan())
    assert levels == [2, 3], levels                            # merged just above the big run
    middle = [e.file for e in t.plan() if e.file.level == 2][0]
    assert middle.delete_row_count == 5                        # the deletes were kept
    expected = {i: "base" for i in range(5, 2000)}
    expected.update({10: "a", 11: "a", 12: "b", 13: "b"})
    assert _as_dict(t.to_arrow()) == expected
    assert {r.id: r.v for r in t.to_spark().collect()} == expected
    assert "MapInArrow" in t.to_spark()._jdf.queryExecution().executedPlan().toString()   # two runs: merged
    assert _pypaimon_dict(wh, "db.k") == expected
    assert _pypaimon_rust_dict(wh, "db.k") == expected


def test_write_only_tables_leave_compaction_to_a_separate_job(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon")
    t = cat.create_table("db.k", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "1", "write-only": "true", **OPTIONS})
    for i in range(6):
        t.append(pa.table({"id": pa.array([i], pa.int64()), "v": ["x"]}))
    assert [s.commit_kind for s in t.snapshots()] == ["APPEND"] * 6
    assert sorted(e.file.level for e in t.plan()) == [0] * 6


def test_a_fault_at_every_file_operation_of_a_write_and_its_compaction(tmp_path):
    """A fault anywhere in an upsert's commit or in the compaction after it: the table shows the
    old rows or the new ones (the compaction never changes rows), every file it references exists,
    and what a failed compaction wrote is gone."""
    import warnings

    from icefloe.core.faults import FaultInjectingFileIO, InjectedFault

    props = {"primary-key": "id", "bucket": "1", "num-sorted-run.compaction-trigger": "2"}

    def fresh(k):
        wh = str(tmp_path / f"wh{k}")
        t = icefloe.Catalog(wh, format="paimon").create_table("db.k", "id bigint not null, v string",
                                                               properties=props)
        t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a"] * 3}))
        return wh

    second = pa.table({"id": pa.array([3, 4], pa.int64()), "v": ["b", "b"]})
    old, new = {1: "a", 2: "a", 3: "a"}, {1: "a", 2: "a", 3: "b", 4: "b"}
    probe = FaultInjectingFileIO()
    icefloe.Catalog(fresh("probe"), format="paimon", io=probe).load_table("db.k").append(second)
    assert [s for s in icefloe.Catalog(str(tmp_path / "whprobe"), format="paimon").load_table("db.k").snapshots()
            if s.commit_kind == "COMPACT"], "the probe's write must be followed by a compaction"
    n = probe.count
    compacted_or_not = set()
    for k in range(1, n + 1):
        wh = fresh(k)
        t = icefloe.Catalog(wh, format="paimon", io=FaultInjectingFileIO(fail_at=k)).load_table("db.k")
        failed = False
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                t.append(second)
            except InjectedFault:
                failed = True
        clean = icefloe.Catalog(wh, format="paimon").load_table("db.k")
        assert _as_dict(clean.to_arrow()) == (old if failed else new), k
        # every referenced file exists; a LATEST hint left behind by a fault at its own write is
        # advisory (readers look past it) and the next commit rewrites it
        problems = [p for p in clean.check().problems if p.kind != "hint"]
        assert not problems, (k, problems)
        kinds = [s.commit_kind for s in clean.snapshots()]
        compacted_or_not.add(kinds[-1])
        if not failed and kinds[-1] != "COMPACT":      # the compaction failed: said so, its files removed
            assert any("compaction after snapshot" in str(w.message) for w in caught), k
            live = {e.file.file_path for e in clean.plan()}
            on_disk = {p for p in clean.io.walk_files(clean.location) if "/bucket-" in p}
            assert on_disk <= live | {p for p in on_disk if "/." in p}, (k, on_disk - live)
    assert compacted_or_not == {"APPEND", "COMPACT"}    # faults hit both the write and the compaction


def test_full_compaction_every_n_delta_commits(tmp_path):
    """``full-compaction.delta-commits`` = 3: every third write is followed by a full compaction
    of its buckets (all runs to the top level), whatever the run count."""
    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon")
    t = cat.create_table("db.k", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "1", "full-compaction.delta-commits": "3"})
    for i in range(7):
        t.append(pa.table({"id": pa.array([i, i + 100], pa.int64()), "v": [f"w{i}"] * 2}))
    kinds = [s.commit_kind for s in t.snapshots()]
    assert kinds == ["APPEND"] * 3 + ["COMPACT"] + ["APPEND"] * 3 + ["COMPACT"] + ["APPEND"], kinds
    assert sorted(e.file.level for e in t.plan()) == [0, 5]
    assert len(_as_dict(t.to_arrow())) == 14


def _write_only_table(tmp_path, spark, shared_key: int):
    """A write-only table ``db.k`` after three writes of keys 0..2 and ``shared_key`` (three level-0 runs)."""
    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon", spark=spark)
    t = cat.create_table("db.k", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "1", "write-only": "true"})
    for i in range(3):
        t.append(pa.table({"id": pa.array([i, shared_key], pa.int64()), "v": [f"w{i}"] * 2}))
    return cat, t


def test_call_sys_compact(tmp_path, spark):
    """Paimon's ``CALL sys.compact(table => ...)``: a full compaction in one COMPACT snapshot."""
    cat, t = _write_only_table(tmp_path, spark, 7)
    assert cat.sql("CALL sys.compact(table => 'db.k')").collect()[0][0] is True
    t = cat.load_table("db.k")
    assert t.current_snapshot().commit_kind == "COMPACT"
    assert [e.file.level for e in t.plan()] == [5]
    assert _as_dict(t.to_arrow()) == {0: "w0", 1: "w1", 2: "w2", 7: "w2"}
    # one compacted run, no deletes: read by Spark's own Parquet reader, no merge task
    plan = t.to_spark()._jdf.queryExecution().executedPlan().toString()
    assert "MapInArrow" not in plan and "parquet" in plan.lower(), plan
    assert {r.id: r.v for r in t.to_spark().collect()} == {0: "w0", 1: "w1", 2: "w2", 7: "w2"}


def test_compact_is_dedicated_compaction(tmp_path, spark):
    """``t.compact()``, Paimon's name for a dedicated compaction of a write-only table."""
    _cat, t = _write_only_table(tmp_path, spark, 9)
    assert t.compact().commit_kind == "COMPACT"
    assert [e.file.level for e in t.refresh().plan()] == [5]
    assert _as_dict(t.to_arrow()) == {0: "w0", 1: "w1", 2: "w2", 9: "w2"}


def test_writes_wait_for_compaction_past_the_stop_trigger(tmp_path, monkeypatch):
    """Compactions that fail leave runs behind; once a bucket holds more than
    ``num-sorted-run.stop-trigger`` runs the next write compacts it first, as Paimon's writers wait,
    and is refused (table unchanged) when that compaction fails too."""
    import pytest

    from icefloe.errors import CommitFailedError
    t = icefloe.Catalog(str(tmp_path / "wh"), format="paimon").create_table(
        "db.t", "id bigint not null, v string",
        properties={"primary-key": "id", "bucket": "1", "num-sorted-run.compaction-trigger": "2",
                    "num-sorted-run.stop-trigger": "3"})
    real = kv_compact.compact_universal
    monkeypatch.setattr(kv_compact, "compact_universal", lambda *a, **k: (_ for _ in ()).throw(OSError("disk")))

    def put(i):
        t.append(pa.table({"id": pa.array([i, 100], pa.int64()), "v": [f"w{i}", f"w{i}"]}))

    def runs():
        t.refresh()
        return len(kv_compact.sorted_runs(t.plan()))

    with pytest.warns(RuntimeWarning, match="compaction"):
        for i in range(4):                # each compaction fails: the write stands, its run stays
            put(i)
    assert runs() == 4                    # past the stop trigger
    before = t.current_snapshot().id
    with pytest.raises(CommitFailedError, match="stop-trigger"):
        put(9)
    t.refresh()
    assert t.current_snapshot().id == before and runs() == 4
    monkeypatch.setattr(kv_compact, "compact_universal", real)
    put(5)                                # compacts the backlog first, then writes and compacts again
    assert runs() <= 2
    d = t.to_arrow().to_pydict()
    assert dict(zip(d["id"], d["v"])) == {0: "w0", 1: "w1", 2: "w2", 3: "w3", 5: "w5", 100: "w5"}
    kinds = [s.commit_kind for s in t.snapshots() if s.id > before]
    assert kinds[:2] == ["COMPACT", "APPEND"], kinds           # the backlog first, then the write
