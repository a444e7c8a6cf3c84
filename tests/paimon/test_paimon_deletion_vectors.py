"""Deletion vectors of primary-key tables: compaction marks the records a key's new value
replaces, reads take the files above level 0 minus the marked rows without merging, and
pypaimon and pypaimon-rust read exactly what icefloe reads; the index files are Paimon's
(checked frame by frame), expiry removes the ones no snapshot names, and a fault anywhere in a
write and its compaction leaves the table whole."""
import random

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import SchemaError
from icefloe.paimon import deletion_vectors as dv

PROPS = {"primary-key": "id", "bucket": "2", "deletion-vectors.enabled": "true"}


def _as_dict(arrow):
    d = arrow.to_pydict()
    return dict(zip(d["id"], d["v"]))


def _pypaimon(wh, name):
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    t = CatalogFactory.create({"warehouse": str(wh)}).get_table(name)
    rb = t.new_read_builder()
    return _as_dict(rb.new_read().to_arrow(rb.new_scan().plan().splits()))


def _pypaimon_rust(wh, name):
    from pypaimon_rust.datafusion import SQLContext

    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": str(wh)})
    batches = ctx.sql(f"SELECT id, v FROM paimon.{name}")
    return _as_dict(pa.Table.from_batches(batches)) if batches else {}


def _vector_count(t):
    vectors = dv.bucket_vectors(t.store, t.current_snapshot())
    return sum(card for bv in vectors.values() for _o, _s, card in bv.ranges.values())


def test_upserts_and_deletes_read_through_vectors_as_every_reader_does(tmp_path, spark):
    wh = tmp_path / "wh"
    t = icefloe.Catalog(str(wh), format="paimon", spark=spark).create_table(
        "db.d", "id bigint not null, v string", properties=PROPS)
    rnd = random.Random(5)
    model: dict = {}
    marked = 0
    for step in range(9):
        ids = rnd.sample(range(40), rnd.randint(3, 12))
        t.append(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"s{step}-{i}" for i in ids]}))
        model.update({i: f"s{step}-{i}" for i in ids})
        if step % 3 == 1:
            gone = rnd.sample(sorted(model), 3)
            t.delete(f"id in ({', '.join(map(str, gone))})")
            for g in gone:
                del model[g]
        assert t.current_snapshot().commit_kind == "COMPACT"
        assert all(e.file.level > 0 and not e.file.delete_row_count for e in t.plan())   # no merge needed
        assert _as_dict(t.to_arrow()) == model, step
        marked = max(marked, _vector_count(t))
    assert marked > 0                                   # vectors were written and applied
    assert {r.id: r.v for r in t.to_spark().collect()} == model
    assert {r.id: r.v for r in t.to_spark(where="id < 20").collect()} == {k: v for k, v in model.items() if k < 20}
    assert _pypaimon(wh, "db.d") == model
    assert _pypaimon_rust(wh, "db.d") == model
    report = t.check()
    assert report.ok and report.checked.get("deletion vectors", 0) > 0, report.problems
    # an UPDATE goes through the same path: a new record, compacted, the old one marked
    t.update({"v": "'upd'"}, where="id % 2 = 0")
    model = {k: ("upd" if k % 2 == 0 else v) for k, v in model.items()}
    assert _as_dict(t.to_arrow()) == model
    assert _pypaimon(wh, "db.d") == model


def test_a_spark_read_applies_vectors_without_python_or_a_shuffle(tmp_path, spark, monkeypatch):
    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon", spark=spark)
    t = cat.create_table("db.d", "id bigint not null, v string", properties={**PROPS, "bucket": "1"})
    t.append(spark.range(1000).selectExpr("id", "'a' as v"))
    plan = t.to_spark()._jdf.queryExecution().executedPlan().toString()
    assert "MapInArrow" not in plan and "Join" not in plan, plan        # nothing marked: a plain scan
    t.append(pa.table({"id": pa.array([5, 5000], pa.int64()), "v": ["b", "b"]}))
    assert _vector_count(t) == 1
    plan = t.to_spark()._jdf.queryExecution().executedPlan().toString()
    # the vector applied inside the Parquet scan: one scan, nothing after it
    assert plan.count("FileScan icefloe-parquet") == 1 and "Batched: true" in plan, plan
    assert "Join" not in plan and "Union" not in plan and "MapInArrow" not in plan, plan
    expected = {i: "a" for i in range(1000)}
    expected.update({5: "b", 5000: "b"})
    assert {r.id: r.v for r in t.to_spark().collect()} == expected
    from icefloe.spark import bitmaps, jvm
    monkeypatch.setattr(jvm, "available", lambda spark: False)     # without the format: SQL
    plan = t.to_spark()._jdf.queryExecution().executedPlan().toString()
    assert "Join" not in plan and "Union" not in plan, plan      # the vector a constant of one scan's filter
    assert "MapInArrow" not in plan and "hashpartitioning" not in plan, plan
    assert {r.id: r.v for r in t.to_spark().collect()} == expected
    monkeypatch.setattr(bitmaps, "MAX_LITERAL_ELEMENTS", 0)     # too big for the plan: a broadcast join
    plan = t.to_spark()._jdf.queryExecution().executedPlan().toString()
    assert "BroadcastHashJoin" in plan, plan           # the marked file's bitmap joined to its rows
    assert "MapInArrow" not in plan and "hashpartitioning" not in plan, plan
    assert {r.id: r.v for r in t.to_spark().collect()} == expected
    # where Spark cannot take the paths (or two files share a size), Python tasks drop the rows
    monkeypatch.setattr(t.io, "spark_native", False, raising=False)
    plan = t.to_spark()._jdf.queryExecution().executedPlan().toString()
    assert "MapInArrow" in plan, plan
    assert {r.id: r.v for r in t.to_spark().collect()} == expected


def test_aggregation_keeps_one_full_value_per_key(tmp_path, spark):
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon")
    t = cat.create_table("db.a", "id bigint not null, n bigint", properties={
        "primary-key": "id", "bucket": "1", "deletion-vectors.enabled": "true", "merge-engine": "aggregation",
        "fields.n.aggregate-function": "sum", "num-sorted-run.compaction-trigger": "2"})
    t.append(pa.table({"id": pa.array(range(100, 400), pa.int64()), "n": pa.array([1] * 300, pa.int64())}))
    total: dict = {i: 1 for i in range(100, 400)}
    rnd = random.Random(2)
    with_vectors = 0
    for _ in range(8):
        ids = rnd.sample(range(10), 3) + [rnd.randint(100, 399)]
        t.append(pa.table({"id": pa.array(ids, pa.int64()), "n": pa.array([1] * 4, pa.int64())}))
        for i in ids:
            total[i] = total.get(i, 0) + 1
        d = t.to_arrow().to_pydict()
        assert dict(zip(d["id"], d["n"])) == total
        if _vector_count(t) == 0:    # a full compaction left one file: nothing marked
            continue
        with_vectors += 1
        pt = CatalogFactory.create({"warehouse": str(tmp_path / "wh")}).get_table("db.a")
        rb = pt.new_read_builder()
        d = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pydict()
        assert dict(zip(d["id"], d["n"])) == total
        # the data source reads the same: each task drops its files' marked rows (no double counting)
        rows = spark.read.format("icefloe").load(t.location).collect()
        assert {r.id: r.n for r in rows} == total
    assert with_vectors >= 2, with_vectors


def test_we_compact_a_table_pypaimon_wrote_and_it_reads_the_vectors(tmp_path):
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory
    Schema = remote_module("pypaimon").Schema

    wh = tmp_path / "wh"
    pcat = CatalogFactory.create({"warehouse": str(wh)})
    pcat.create_database("db", True)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    pcat.create_table("db.p", Schema.from_pyarrow_schema(schema, primary_keys=["id"], options={
        "bucket": "1", "deletion-vectors.enabled": "true"}), False)
    pt = pcat.get_table("db.p")
    expected: dict = {}
    for n, batch in enumerate(([1, 2, 3], [2, 3, 4], [3, 5])):
        wb = pt.new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(pa.Table.from_pylist([{"id": i, "v": f"w{n}"} for i in batch], schema=schema))
        c.commit(w.prepare_commit())
        w.close()
        c.close()
        expected.update({i: f"w{n}" for i in batch})
    t = icefloe.Catalog(str(wh), format="paimon").load_table("db.p")
    assert _as_dict(t.to_arrow()) == {}                       # level 0 only: not yet visible, as for pypaimon
    from icefloe.paimon import kv_compact

    kv_compact.compact_universal(t, None)                    # its runs merged up
    t = icefloe.Catalog(str(wh), format="paimon").load_table("db.p")
    assert _as_dict(t.to_arrow()) == expected
    assert _pypaimon(wh, "db.p") == expected
    for n in range(4):      # upserts until one is compacted into a level below the old records: a vector
        t.append(pa.table({"id": pa.array([1, 9 + n], pa.int64()), "v": [f"x{n}", f"x{n}"]}))
        expected.update({1: f"x{n}", 9 + n: f"x{n}"})
        if _vector_count(t) >= 1:
            break
    assert _vector_count(t) >= 1
    assert _pypaimon(wh, "db.p") == expected
    assert _pypaimon_rust(wh, "db.p") == expected


def test_vectors_are_paimons_frames_and_check_finds_a_broken_one(tmp_path):
    from pyroaring import BitMap

    bitmap = BitMap([0, 3, 70000])
    blob = dv.serialize(bitmap)
    assert int.from_bytes(blob[:4], "big") == len(blob) - 8
    assert int.from_bytes(blob[4:8], "big") == dv.MAGIC
    assert dv.deserialize(blob, 0, len(blob) - 8, "x") == bitmap
    from tools.pypaimon_env import remote_module
    BitmapDeletionVector = remote_module("pypaimon.deletionvectors.bitmap_deletion_vector").BitmapDeletionVector

    assert list(BitmapDeletionVector.deserialize_from_bytes(blob[8:-4]).bit_map()._data) == list(bitmap)  # pypaimon agrees
    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon")
    t = cat.create_table("db.d", "id bigint not null, v string", properties={**PROPS, "bucket": "1"})
    t.append(pa.table({"id": pa.array(range(10), pa.int64()), "v": ["a"] * 10}))
    t.append(pa.table({"id": pa.array([4], pa.int64()), "v": ["b"]}))
    bv = next(iter(dv.bucket_vectors(t.store, t.current_snapshot()).values()))
    raw = bytearray(t.io.read_bytes(bv.path))
    raw[-5] ^= 0xFF                                            # a bit of the bitmap flipped
    with open(bv.path, "wb") as fh:
        fh.write(bytes(raw))
    problems = t.check().problems
    assert any("checksum" in p.message for p in problems), problems


def test_expiry_removes_index_files_no_snapshot_names(tmp_path):
    t = icefloe.Catalog(str(tmp_path / "wh"), format="paimon").create_table(
        "db.d", "id bigint not null, v string", properties={**PROPS, "bucket": "1"})
    t.append(pa.table({"id": pa.array(range(500), pa.int64()), "v": ["base"] * 500}))
    expected = {i: "base" for i in range(500)}
    for i in range(5):                         # small writes over a big run: each leaves vectors
        t.append(pa.table({"id": pa.array([i, 1000 + i], pa.int64()), "v": [f"w{i}"] * 2}))
        expected.update({i: f"w{i}", 1000 + i: f"w{i}"})
    index_dir = tmp_path / "wh" / "db.db" / "d" / "index"
    before = set(p.name for p in index_dir.iterdir())
    assert len(before) > 1
    t.expire_snapshots(older_than=2**62, retain_last=1)
    after = set(p.name for p in index_dir.iterdir())
    named = {bv.file_name for bv in dv.bucket_vectors(t.store, t.current_snapshot()).values()}
    assert named and after == named
    assert t.check().ok, t.check().problems
    assert _as_dict(t.to_arrow()) == expected


def test_a_fault_at_every_file_operation_of_a_write_and_its_vector_compaction(tmp_path):
    import warnings

    from icefloe.core.faults import FaultInjectingFileIO, InjectedFault

    props = {**PROPS, "bucket": "1"}

    def fresh(k):
        wh = str(tmp_path / f"wh{k}")
        t = icefloe.Catalog(wh, format="paimon").create_table("db.d", "id bigint not null, v string",
                                                               properties=props)
        t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a"] * 3}))
        return wh

    second = pa.table({"id": pa.array([3, 4], pa.int64()), "v": ["b", "b"]})
    old, new = {1: "a", 2: "a", 3: "a"}, {1: "a", 2: "a", 3: "b", 4: "b"}
    probe = FaultInjectingFileIO()
    icefloe.Catalog(fresh("probe"), format="paimon", io=probe).load_table("db.d").append(second)
    outcomes = set()
    for k in range(1, probe.count + 1):
        wh = fresh(k)
        t = icefloe.Catalog(wh, format="paimon", io=FaultInjectingFileIO(fail_at=k)).load_table("db.d")
        failed = False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                t.append(second)
            except InjectedFault:
                failed = True
        clean = icefloe.Catalog(wh, format="paimon").load_table("db.d")
        kind = clean.current_snapshot().commit_kind
        # a write whose compaction failed is in the table, waiting at level 0 for the next one
        assert _as_dict(clean.to_arrow()) == (new if kind == "COMPACT" and not failed else old), k
        problems = [p for p in clean.check().problems if p.kind != "hint"]
        assert not problems, (k, problems)
        outcomes.add((failed, kind))
        if kind == "APPEND" and not failed:                     # the next compaction catches up
            from icefloe.paimon import kv_compact

            kv_compact.compact_universal(clean, None)
            assert _as_dict(icefloe.Catalog(wh, format="paimon").load_table("db.d").to_arrow()) == new, k
    assert {(True, "COMPACT"), (False, "COMPACT"), (False, "APPEND")} <= outcomes, outcomes


def test_vectors_with_the_full_compaction_changelog_or_first_row_are_refused_as_paimon_refuses_them(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"), format="paimon")
    with pytest.raises(SchemaError, match="deletion vectors"):
        cat.create_table("db.x", "id bigint not null, v string",
                         properties={**PROPS, "changelog-producer": "full-compaction"})
    with pytest.raises(SchemaError, match="first-row"):
        cat.create_table("db.y", "id bigint not null, v string", properties={**PROPS, "merge-engine": "first-row"})
    assert not (tmp_path / "wh" / "db.db" / "x").exists() and not (tmp_path / "wh" / "db.db" / "y").exists()
    # nor can an option change turn them on later: the schema stays as it was
    f = cat.create_table("db.f", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "1", "merge-engine": "first-row"})
    with pytest.raises(SchemaError, match="first-row"):
        f.update_properties(set={"deletion-vectors.enabled": "true"})
    assert f.refresh().table_schema.id == 0 and "deletion-vectors.enabled" not in f.table_schema.options


def test_rollback_removes_the_later_snapshots_vectors_and_changelogs(tmp_path):
    t = icefloe.Catalog(str(tmp_path / "wh"), format="paimon").create_table(
        "db.d", "id bigint not null, v string",
        properties={**PROPS, "bucket": "1", "changelog-producer": "input"})
    t.append(pa.table({"id": pa.array(range(100), pa.int64()), "v": ["base"] * 100}))
    target = t.current_snapshot().id
    table_dir = tmp_path / "wh" / "db.db" / "d"

    def files():
        return {p.name for p in table_dir.rglob("*") if p.is_file() and ("index-" in p.name or "changelog-" in p.name)}

    before = files()
    for i in range(3):
        t.append(pa.table({"id": pa.array([i, 200 + i], pa.int64()), "v": [f"w{i}"] * 2}))
    assert len(files()) > len(before)
    t.rollback_to_snapshot(target)
    assert files() == before
    assert _as_dict(t.to_arrow()) == {i: "base" for i in range(100)}
    assert t.check().ok, t.check().problems
    assert not t.remove_orphan_files(older_than=2**62, dry_run=True)


def test_a_partitioned_dynamic_bucket_table_with_vectors_and_a_lookup_changelog(tmp_path):
    wh = tmp_path / "wh"
    t = icefloe.Catalog(str(wh), format="paimon").create_table(
        "db.d", "id bigint not null, dt string not null, v string", partitioned_by=["dt"],
        properties={"primary-key": "id,dt", "bucket": "-1", "deletion-vectors.enabled": "true",
                    "changelog-producer": "lookup", "dynamic-bucket.target-row-num": "20"})
    rnd = random.Random(1)
    model: dict = {}
    for step in range(8):
        ids = rnd.sample(range(60), 12)
        dts = [f"d{i % 2}" for i in ids]
        t.append(pa.table({"id": pa.array(ids, pa.int64()), "dt": dts, "v": [f"s{step}"] * 12}))
        model.update({(i, d): f"s{step}" for i, d in zip(ids, dts)})
        d = t.to_arrow().to_pydict()
        assert {(i, x): v for i, x, v in zip(d["id"], d["dt"], d["v"])} == model, step
    assert len({(e.partition.to_bytes(), e.bucket) for e in t.plan()}) > 2      # several dynamic buckets
    assert _vector_count(t) > 0
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    pt = CatalogFactory.create({"warehouse": str(wh)}).get_table("db.d")
    rb = pt.new_read_builder()
    g = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pydict()
    assert {(i, x): v for i, x, v in zip(g["id"], g["dt"], g["v"])} == model
    assert t.check().ok, t.check().problems
