"""Reliability of Paimon primary-key tables: a fault at every mutating file operation of an
upsert (with updates and deletes) leaves the table's merged rows as they were, or as the
commit made them, in full; nothing the failed commit wrote is left behind; the next commit
works. Everything writes with pyarrow: no Spark."""
import os

import pyarrow as pa
import pytest

from icefloe.catalog import Catalog
from icefloe.core.faults import FaultInjectingFileIO, InjectedFault

NAME = "db.k"
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.int32(), nullable=False),
                    ("v", pa.string()), ("op", pa.string())])


def load(wh, io=None):
    return Catalog(wh, "paimon", io=io).load_table(NAME)


def upsert(t, rows):
    return t.append(pa.Table.from_pylist([dict(zip(("id", "p", "v", "op"), r)) for r in rows], schema=SCHEMA))


def merged(wh):
    return sorted((r["id"], r["v"]) for r in load(wh).to_arrow().to_pylist())


def setup(wh):
    t = Catalog(wh, "paimon").create_table(NAME, SCHEMA, partitioned_by=["p"], properties={
        "primary-key": "id,p", "bucket": "2", "rowkind.field": "op", "manifest.merge-min-count": "2"})
    upsert(t, [(i, i % 2, f"v{i}", "+I") for i in range(6)])
    upsert(t, [(1, 1, "w1", "+U"), (2, 0, "w2", "+U")])


CHANGE = [(1, 1, "x1", "+U"), (3, 1, None, "-D"), (4, 0, "x4", "+U"), (9, 1, "x9", "+I"), (9, 1, "y9", "+U")]
OLD = [(0, "v0"), (1, "w1"), (2, "w2"), (3, "v3"), (4, "v4"), (5, "v5")]
NEW = [(0, "v0"), (1, "x1"), (2, "w2"), (4, "x4"), (5, "v5"), (9, "y9")]


def files_on_disk(t):
    out = set()
    for d, _, fs in os.walk(t.location):
        if os.path.relpath(d, t.location).split(os.sep)[0] not in ("schema", "snapshot"):
            out.update(os.path.join(d, f) for f in fs)
    return out


def referenced(t):
    store = t.refresh().store
    out = set()
    for s in t.snapshots():
        for lst in (s.base_manifest_list, s.delta_manifest_list):
            out.add(store.manifest_path(lst))
            for m in store.read_manifest_list(lst):
                out.add(store.manifest_path(m.file_name))
        out.update(e.file.file_path for e in t.plan(snapshot_id=s.id))
        if s.index_manifest:                                   # dynamic buckets: the HASH index
            from icefloe.paimon import dynamic_bucket as db

            out.add(store.manifest_path(s.index_manifest))
            out.update(db.index_path(store, r["_FILE_NAME"]) for r in db.read_index_manifest(store, s.index_manifest))
    return out


def test_fault_at_every_point_of_an_upsert(tmp_path):
    probe = str(tmp_path / "probe")
    setup(probe)
    io = FaultInjectingFileIO()
    upsert(load(probe, io), CHANGE)
    n = io.count
    assert merged(probe) == NEW and n >= 7, io.log     # data files (2 buckets), manifests, lists, snapshot, hint
    for k in range(1, n + 1):
        wh = str(tmp_path / f"k{k}")
        setup(wh)
        io = FaultInjectingFileIO(fail_at=k)
        try:
            upsert(load(wh, io), CHANGE)
            failed = False
        except InjectedFault:
            failed = True
        what = (k, io.log[k - 1])
        t = load(wh)
        if failed:
            assert merged(wh) == OLD, what
            assert [s.id for s in t.snapshots()] == [1, 2], what
            assert files_on_disk(t) == referenced(t), (what, files_on_disk(t) - referenced(t))
            upsert(load(wh), CHANGE)                               # the retry succeeds
        assert merged(wh) == NEW, what
        assert [s.id for s in load(wh).snapshots()] == [1, 2, 3], what
        upsert(load(wh), [(0, 0, "z0", "+U")])                      # and so does the next commit
        assert merged(wh)[0] == (0, "z0"), what
        # sequence numbers in each bucket stay increasing across the files of the latest snapshot
        by_bucket: dict = {}
        for e in load(wh).plan():
            by_bucket.setdefault((e.partition.data, e.bucket), []).append(
                (e.file.min_sequence_number, e.file.max_sequence_number))
        for ranges in by_bucket.values():
            ranges.sort()
            assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:])), (what, ranges)


@pytest.mark.parametrize("k", [1, 2])
def test_a_failed_write_of_data_files_leaves_nothing(tmp_path, k):
    wh = str(tmp_path / "w")
    setup(wh)
    t = load(wh, FaultInjectingFileIO(fail_at=k))
    with pytest.raises(InjectedFault):
        t.write(pa.Table.from_pylist([dict(zip(("id", "p", "v", "op"), r)) for r in CHANGE], schema=SCHEMA))
    fresh = load(wh)
    assert files_on_disk(fresh) == referenced(fresh) and merged(wh) == OLD


@pytest.mark.parametrize("props", [{"bucket": "4"}, {"bucket": "-1", "dynamic-bucket.target-row-num": "5"}],
                         ids=["fixed", "dynamic"])
def test_a_failed_spark_upsert_leaves_nothing_behind(tmp_path, spark, props):
    """One Spark task fails (a bad row kind in its rows) while others finish: the table is
    unchanged and no data or index file of the failed write is left on disk."""
    wh = str(tmp_path / "s")
    t = Catalog(wh, "paimon", spark=spark).create_table(NAME, SCHEMA, partitioned_by=["p"], properties={
        "primary-key": "id,p", "rowkind.field": "op", **props})
    upsert(t, [(i, i % 3, f"v{i}", "+I") for i in range(30)])
    before = merged(wh)
    # the bad row goes to the last of the write's tasks, so earlier ones finish writing first
    from pyspark.sql import functions as F

    from icefloe.spark.paimon_write import key_column

    ddl = "id bigint, p int, v string, op string"
    candidates = spark.createDataFrame([(i, 2, "bad", "?") for i in range(100, 160)], ddl)
    placed = (candidates.withColumn("k", key_column(t.table_schema)).repartition("k")
              .select("id", F.spark_partition_id().alias("task")).collect())
    last = max(r.task for r in placed)
    bad = next(r.id for r in placed if r.task == last)
    rows = [(i, i % 3, f"x{i}", "+U") for i in range(30)] + [(bad, 2, "bad", "?")]
    df = spark.createDataFrame([dict(zip(("id", "p", "v", "op"), r)) for r in rows], ddl)
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")   # keep the tasks apart
    try:
        with pytest.raises(Exception, match="rowkind.field"):
            t.append(df)
    finally:
        spark.conf.unset("spark.sql.adaptive.coalescePartitions.enabled")
    fresh = load(wh)
    assert merged(wh) == before and [s.id for s in fresh.snapshots()] == [1]
    left = files_on_disk(fresh) - referenced(fresh)
    # only the abort marker, in a staging directory that orphan cleanup removes once old
    assert {os.path.relpath(f, fresh.location).split(os.sep)[0][:9] for f in left} == {".staging-"}
    upsert(load(wh), [(0, 0, "again", "+U")])                                   # the next write works
    assert merged(wh)[0] == (0, "again")
