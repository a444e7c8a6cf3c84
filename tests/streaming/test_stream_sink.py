"""The streaming sink: each micro-batch is one snapshot, a replayed batch is not committed twice."""
import glob
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.interop_util import pyiceberg_table


def _inputs(folder, batches, rows=5, start=0):
    """``batches`` Parquet files of ``rows`` rows each: ids start, start+1, ...; returns all ids."""
    os.makedirs(folder, exist_ok=True)
    ids = []
    for b in range(batches):
        chunk = list(range(start + b * rows, start + (b + 1) * rows))
        ids += chunk
        pq.write_table(pa.table({"id": pa.array(chunk, pa.int64()), "v": [f"v{i}" for i in chunk]}),
                       os.path.join(folder, f"in-{start + b:05d}.parquet"))
    return ids


def _run(spark, src_dir, location, checkpoint, *, mode="append", files_per_batch=1, **options):
    src = spark.readStream.schema("id long, v string").option("maxFilesPerTrigger", files_per_batch).parquet(src_dir)
    w = src.writeStream.format("icefloe").option("checkpointLocation", checkpoint).outputMode(mode)
    for k, v in options.items():
        w = w.option(k, v)
    q = w.trigger(availableNow=True).start(location)
    q.awaitTermination()
    return q


def _forget_last_batch(checkpoint):
    """What a crash between the table commit and Spark's record of it leaves: the batch's
    offsets are logged, its commit is not, so a restart runs the batch again."""
    commits = sorted(glob.glob(os.path.join(checkpoint, "commits", "[0-9]*")), key=lambda p: int(os.path.basename(p)))
    os.remove(commits[-1])
    crc = os.path.join(os.path.dirname(commits[-1]), f".{os.path.basename(commits[-1])}.crc")
    if os.path.exists(crc):
        os.remove(crc)
    return int(os.path.basename(commits[-1]))


def _live_parquet(location):
    return sorted(p for p in glob.glob(os.path.join(location, "**", "*.parquet"), recursive=True)
                  if "/." not in p[len(location):])


def test_iceberg_sink_commits_each_batch_once_and_a_replay_is_skipped(spark, catalog, warehouse, tmp_path):
    ids = _inputs(str(tmp_path / "in"), 4)
    loc, cp = os.path.join(warehouse, "db", "events"), str(tmp_path / "cp")
    _run(spark, str(tmp_path / "in"), loc, cp)
    t = catalog.load_table("db.events")
    snaps = t.snapshots()
    assert [s.summary.get("spark.sql.streaming.epochId") for s in snaps] == ["0", "1", "2", "3"]
    query_id = json.load(open(os.path.join(cp, "metadata")))["id"]
    assert {s.summary.get("spark.sql.streaming.queryId") for s in snaps} == {query_id}
    files_before = _live_parquet(loc)

    replayed = _forget_last_batch(cp)
    _run(spark, str(tmp_path / "in"), loc, cp)
    assert os.path.exists(os.path.join(cp, "commits", str(replayed)))  # Spark did run the batch again
    t = catalog.load_table("db.events")
    assert len(t.snapshots()) == 4
    assert _live_parquet(loc) == files_before           # the replay's files were deleted
    got = sorted(r["id"] for r in spark.read.format("icefloe").load(loc).collect())
    assert got == sorted(ids)
    # an independent reader sees the same rows
    assert sorted(pyiceberg_table(t.metadata_location).scan().to_arrow().column("id").to_pylist()) == sorted(ids)

    # new input after the restart: only it is added, in one more snapshot
    more = _inputs(str(tmp_path / "in"), 1, start=100)
    _run(spark, str(tmp_path / "in"), loc, cp)
    t = catalog.load_table("db.events")
    assert len(t.snapshots()) == 5
    assert sorted(r["id"] for r in spark.read.format("icefloe").load(loc).collect()) == sorted(ids + more)


def test_paimon_sink_commits_each_batch_once_and_a_replay_is_skipped(spark, warehouse, tmp_path):
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    ids = _inputs(str(tmp_path / "in"), 3)
    loc, cp = os.path.join(warehouse, "db.db", "events"), str(tmp_path / "cp")
    _run(spark, str(tmp_path / "in"), loc, cp, format="paimon")
    snapdir = os.path.join(loc, "snapshot")
    snaps = [json.load(open(os.path.join(snapdir, f"snapshot-{i}"))) for i in (1, 2, 3)]
    query_id = json.load(open(os.path.join(cp, "metadata")))["id"]
    assert [(s["commitUser"], s["commitIdentifier"], s["commitKind"]) for s in snaps] == \
        [(query_id, 0, "APPEND"), (query_id, 1, "APPEND"), (query_id, 2, "APPEND")]
    files_before = _live_parquet(loc)

    _forget_last_batch(cp)
    _run(spark, str(tmp_path / "in"), loc, cp)
    assert not os.path.exists(os.path.join(snapdir, "snapshot-4"))
    assert _live_parquet(loc) == files_before
    t = CatalogFactory.create({"warehouse": warehouse}).get_table("db.events")
    rb = t.new_read_builder()
    assert sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("id").to_pylist()) == sorted(ids)


def test_paimon_primary_key_sink_upserts_across_batches(spark, warehouse, tmp_path):
    import icefloe
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    cat = icefloe.Catalog(warehouse, "paimon", spark)
    cat.create_table("db.kv", "id bigint not null, v string", properties={"primary-key": "id", "bucket": "2"})
    src_dir = str(tmp_path / "in")
    os.makedirs(src_dir)
    for b in range(3):  # each batch rewrites ids 0..5 and adds its own
        ids = list(range(6)) + [10 + b]
        path = os.path.join(src_dir, f"in-{b}.parquet")
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"b{b}"] * len(ids)}), path)
        # Spark's file source takes files in modification-time order: make it the batch order
        os.utime(path, (1_700_000_000 + 10 * b, 1_700_000_000 + 10 * b))
    loc, cp = os.path.join(warehouse, "db.db", "kv"), str(tmp_path / "cp")
    _run(spark, src_dir, loc, cp)
    _forget_last_batch(cp)
    _run(spark, src_dir, loc, cp)
    want = {i: "b2" for i in range(6)} | {10: "b0", 11: "b1", 12: "b2"}
    got = {r["id"]: r["v"] for r in spark.read.format("icefloe").load(loc).collect()}
    assert got == want
    t = CatalogFactory.create({"warehouse": warehouse}).get_table("db.kv")
    rb = t.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert {r["id"]: r["v"] for r in rows} == want
    assert not os.path.exists(os.path.join(loc, "snapshot", "snapshot-4"))


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_complete_mode_replaces_the_table_each_batch(spark, warehouse, tmp_path, fmt):
    src_dir = str(tmp_path / "in")
    _inputs(src_dir, 3, rows=4)
    loc = os.path.join(warehouse, "db.db" if fmt == "paimon" else "db", "counts")
    src = spark.readStream.schema("id long, v string").option("maxFilesPerTrigger", 1).parquet(src_dir)
    agg = src.selectExpr("id % 2 AS parity").groupBy("parity").count()
    q = (agg.writeStream.format("icefloe").option("checkpointLocation", str(tmp_path / "cp"))
         .option("format", fmt).outputMode("complete").trigger(availableNow=True).start(loc))
    q.awaitTermination()
    got = {r["parity"]: r["count"] for r in spark.read.format("icefloe").load(loc).collect()}
    assert got == {0: 6, 1: 6}     # the last batch's totals, not three batches' rows


def test_a_sink_without_a_checkpoint_location_is_refused_clearly(spark, warehouse, tmp_path):
    from icefloe.spark.streaming import StreamingSetupError, stream_query_id

    with pytest.raises(StreamingSetupError, match="checkpointLocation"):
        stream_query_id({"path": warehouse})
    assert stream_query_id({"commit-user": "job-7"}) == "job-7"


def test_cdc_stream_mirrors_its_source_in_a_primary_key_table(spark, warehouse, tmp_path):
    import icefloe

    cat = icefloe.Catalog(warehouse, "paimon", spark)
    t = cat.create_table("db.cdc", "id bigint not null, v string, op string",
                         properties={"primary-key": "id", "bucket": "2", "rowkind.field": "op"})
    src_dir = str(tmp_path / "in")
    os.makedirs(src_dir)
    changes = [([1, 2, 3], ["a", "b", "c"], ["+I", "+I", "+I"]), ([2, 3], ["B", None], ["+U", "-D"]),
               ([4, 1], ["d", None], ["+I", "-D"])]
    for n, (ids, vs, ops) in enumerate(changes):
        path = os.path.join(src_dir, f"c-{n}.parquet")
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": vs, "op": ops}), path)
        os.utime(path, (1_700_000_000 + 10 * n, 1_700_000_000 + 10 * n))   # the file source's order
    src = spark.readStream.schema("id long, v string, op string").option("maxFilesPerTrigger", 1).parquet(src_dir)
    q = (src.writeStream.format("icefloe").option("checkpointLocation", str(tmp_path / "cp"))
         .trigger(availableNow=True).start(t.location))
    q.awaitTermination()
    got = sorted((r["id"], r["v"]) for r in spark.read.format("icefloe").load(t.location).collect())
    assert got == [(2, "B"), (4, "d")]


def test_update_mode_through_foreach_batch_upserts_running_counts_once(spark, warehouse, tmp_path):
    import icefloe

    cat = icefloe.Catalog(warehouse, "paimon", spark)
    t = cat.create_table("db.counts", "k bigint not null, n bigint", properties={"primary-key": "k", "bucket": "1"})
    src_dir = str(tmp_path / "in")
    os.makedirs(src_dir)
    for b in range(3):
        ids = [0, 1, 1, b + 2]
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": ["x"] * 4}), os.path.join(src_dir, f"{b}.parquet"))

    def run():
        src = spark.readStream.schema("id long, v string").option("maxFilesPerTrigger", 1).parquet(src_dir)
        counts = src.groupBy(src.id.alias("k")).count().withColumnRenamed("count", "n")
        q = (counts.writeStream.outputMode("update").foreachBatch(t.foreach_batch())
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start())
        q.awaitTermination()

    run()
    want = {0: 3, 1: 6, 2: 1, 3: 1, 4: 1}
    assert {r["k"]: r["n"] for r in t.to_spark().collect()} == want
    snapshots = len(t.snapshots())
    assert snapshots == 3
    _forget_last_batch(str(tmp_path / "cp"))
    run()
    assert len(t.snapshots()) == snapshots
    assert {r["k"]: r["n"] for r in t.to_spark().collect()} == want
    with pytest.raises(Exception, match="foreachBatch"):
        t.foreach_batch()(spark.range(1), 0)


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_a_processing_time_trigger_commits_files_as_they_arrive(spark, warehouse, tmp_path, fmt):
    import time

    src_dir = str(tmp_path / "in")
    ids = _inputs(src_dir, 1)
    loc = os.path.join(warehouse, "db.db" if fmt == "paimon" else "db", "live")
    src = spark.readStream.schema("id long, v string").parquet(src_dir)
    q = (src.writeStream.format("icefloe").option("format", fmt).option("checkpointLocation", str(tmp_path / "cp"))
         .trigger(processingTime="200 milliseconds").start(loc))
    try:
        def rows():
            try:
                return sorted(r["id"] for r in spark.read.format("icefloe").load(loc).collect())
            except Exception:
                return []
        deadline = time.time() + 60
        while rows() != sorted(ids) and time.time() < deadline:
            time.sleep(0.2)
        assert rows() == sorted(ids)
        ids += _inputs(src_dir, 1, start=50)
        deadline = time.time() + 60
        while rows() != sorted(ids) and time.time() < deadline:
            time.sleep(0.2)
        assert rows() == sorted(ids)
    finally:
        q.stop()
