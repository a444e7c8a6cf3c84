"""The streaming source: every row of every appended snapshot exactly once, across restarts."""
import os

import pyarrow as pa
import pytest


def drain(spark, location, checkpoint, out_dir, **options):
    """Run a stream of the table into Parquet files until it has read what is there now;
    returns the number of micro-batches it ran."""
    r = spark.readStream.format("icefloe")
    for k, v in options.items():
        r = r.option(k, v)
    q = (r.load(location).writeStream.format("parquet").option("checkpointLocation", checkpoint)
         .trigger(availableNow=True).start(out_dir))
    q.awaitTermination()
    return sum(1 for p in q.recentProgress if p["numInputRows"] > 0)


def _out(spark, out_dir, col="id"):
    if not os.path.exists(out_dir):
        return []
    return sorted(r[col] for r in spark.read.parquet(out_dir).collect())


def _batch(lo, hi):
    return pa.table({"id": pa.array(range(lo, hi), pa.int64()), "v": [f"v{i}" for i in range(lo, hi)]})


@pytest.fixture(params=["iceberg", "paimon"])
def table(request, spark, warehouse):
    import icefloe

    cat = icefloe.Catalog(warehouse, request.param, spark)
    return cat.create_table("db.src", "id bigint, v string")


def test_every_appended_row_is_streamed_once_across_restarts(spark, table, tmp_path):
    table.append(_batch(0, 10))
    table.append(_batch(10, 20))
    cp, out = str(tmp_path / "cp"), str(tmp_path / "out")
    # starts with the whole table, one file per micro-batch
    assert drain(spark, table.location, cp, out, maxFilesPerTrigger=1) >= 2
    assert _out(spark, out) == list(range(20))
    # a restart from the checkpoint reads only what was appended meanwhile
    table.append(_batch(20, 25))
    table.append(_batch(25, 30))
    drain(spark, table.location, cp, out, maxFilesPerTrigger=1)
    assert _out(spark, out) == list(range(30))
    # nothing new: nothing read
    assert drain(spark, table.location, cp, out) == 0
    assert _out(spark, out) == list(range(30))


def test_latest_mode_skips_what_is_there_and_rows_limit_splits_batches(spark, table, tmp_path):
    table.append(_batch(0, 10))
    cp, out = str(tmp_path / "cp"), str(tmp_path / "out")
    assert drain(spark, table.location, cp, out, **{"scan.mode": "latest"}) == 0
    for lo in range(10, 40, 10):
        table.append(_batch(lo, lo + 10))
    batches = drain(spark, table.location, cp, out, maxRowsPerTrigger=10)
    assert batches == 3
    assert _out(spark, out) == list(range(10, 40))


def test_start_from_a_snapshot(spark, table, tmp_path):
    table.append(_batch(0, 5))
    table.append(_batch(5, 10))
    second = table.snapshots()[-1]
    sid = getattr(second, "snapshot_id", None) or second.id
    table.append(_batch(10, 15))
    out = str(tmp_path / "out")
    drain(spark, table.location, str(tmp_path / "cp"), out, **{"scan.mode": "from-snapshot", "scan.snapshot-id": sid})
    assert _out(spark, out) == list(range(5, 15))


def test_iceberg_stream_stops_at_a_delete_unless_told_to_skip(spark, catalog, tmp_path):
    t = catalog.create_table("db.d", "id bigint, v string")
    t.append(_batch(0, 10))
    cp, out = str(tmp_path / "cp"), str(tmp_path / "out")
    drain(spark, t.location, cp, out)
    t.delete("id < 5")
    t.append(_batch(10, 12))
    with pytest.raises(Exception, match="streaming-skip-delete-snapshots|streaming-skip-overwrite-snapshots"):
        drain(spark, t.location, cp, out)
    drain(spark, t.location, cp, out, **{"streaming-skip-delete-snapshots": "true",
                                         "streaming-skip-overwrite-snapshots": "true"})
    assert _out(spark, out) == list(range(12))


def test_paimon_compaction_is_not_streamed_again(spark, warehouse, tmp_path):
    import icefloe

    t = icefloe.Catalog(warehouse, "paimon", spark).create_table("db.c", "id bigint, v string")
    t.append(_batch(0, 5))
    t.append(_batch(5, 10))
    cp, out = str(tmp_path / "cp"), str(tmp_path / "out")
    drain(spark, t.location, cp, out, **{"scan.mode": "latest"})
    t.append(_batch(10, 12))
    t.rewrite_data_files()
    t.append(_batch(12, 14))
    drain(spark, t.location, cp, out)
    assert _out(spark, out) == list(range(10, 14))


def test_paimon_changelog_stream_replayed_onto_a_copy_reproduces_the_table(spark, warehouse, tmp_path):
    import icefloe

    cat = icefloe.Catalog(warehouse, "paimon", spark)
    t = cat.create_table("db.kv", "id bigint not null, v string", properties={"primary-key": "id", "bucket": "2"})
    t.append(_batch(0, 6))
    cp, out = str(tmp_path / "cp"), str(tmp_path / "out")
    drain(spark, t.location, cp, out, **{"read.changelog": "true"})
    t.append(pa.table({"id": pa.array([1, 2, 7], pa.int64()), "v": ["x1", "x2", "x7"]}))
    t.delete("id = 3")
    drain(spark, t.location, cp, out, **{"read.changelog": "true"})
    # replay the changelog, in commit order, onto an empty copy
    rows = spark.read.parquet(out).collect()
    assert {r["rowkind"] for r in rows} >= {"+I", "-D"}
    copy: dict = {}
    import pyarrow.parquet as pq

    files = sorted((os.path.getmtime(p), p) for p in
                   (os.path.join(out, f) for f in os.listdir(out) if f.endswith(".parquet")))
    for _, p in files:
        for r in pq.read_table(p).to_pylist():
            if r["rowkind"] in ("+I", "+U"):
                copy[r["id"]] = r["v"]
            else:
                copy.pop(r["id"], None)
    want = {r["id"]: r["v"] for r in spark.read.format("icefloe").load(t.location).collect()}
    assert copy == want == {0: "v0", 1: "x1", 2: "x2", 4: "v4", 5: "v5", 7: "x7"}


def test_a_stream_that_needs_an_expired_snapshot_fails_naming_it(spark, table, tmp_path):
    import time

    table.append(_batch(0, 2))
    first = table.snapshots()[0]
    first_id = getattr(first, "snapshot_id", None) or first.id
    cp, out = str(tmp_path / "cp"), str(tmp_path / "out")
    drain(spark, table.location, cp, out)
    for lo in range(2, 10, 2):
        table.append(_batch(lo, lo + 2))
    table.expire_snapshots(older_than=int(time.time() * 1000) + 60_000, retain_last=1)
    # Paimon names the snapshot the stream needs next; Iceberg the one it stopped at
    want = "snapshot 2 .*expired" if table.format == "paimon" else f"snapshot {first_id} .*(expired|history)"
    with pytest.raises(Exception, match=want):
        drain(spark, table.location, cp, out)


def test_start_from_a_timestamp(spark, table, tmp_path):
    import time

    table.append(_batch(0, 5))
    time.sleep(0.05)
    cut = int(time.time() * 1000)
    time.sleep(0.05)
    table.append(_batch(5, 8))
    out = str(tmp_path / "out")
    drain(spark, table.location, str(tmp_path / "cp"), out, **{"scan.mode": "from-timestamp",
                                                                 "scan.timestamp-millis": cut})
    assert _out(spark, out) == list(range(5, 8))


def test_pypaimon_appends_are_streamed_without_gaps(spark, warehouse, tmp_path):
    import icefloe
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    icefloe.Catalog(warehouse, "paimon", spark).create_table("db.pp", "id bigint, v string")
    pcat = CatalogFactory.create({"warehouse": warehouse})
    pt = pcat.get_table("db.pp")
    cp, out = str(tmp_path / "cp"), str(tmp_path / "out")
    loc = os.path.join(warehouse, "db.db", "pp")
    expected = []
    for lo in range(0, 30, 10):
        wb = pt.new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(_batch(lo, lo + 10))
        c.commit(w.prepare_commit())
        w.close()
        c.close()
        expected += list(range(lo, lo + 10))
        drain(spark, loc, cp, out)
        assert _out(spark, out) == expected


def test_a_paimon_lookup_table_streams_its_changelog(spark, warehouse, tmp_path):
    """With ``changelog-producer`` = lookup the stream follows the changelog files: an update
    arrives as -U (the old row) and +U, a delete as -D of the row it removes."""
    import icefloe

    cat = icefloe.Catalog(warehouse, "paimon", spark)
    t = cat.create_table("db.lk", "id bigint not null, v string",
                         properties={"primary-key": "id", "bucket": "1", "changelog-producer": "lookup"})
    t.append(_batch(0, 4))
    cp, out = str(tmp_path / "cp"), str(tmp_path / "out")
    drain(spark, t.location, cp, out, **{"read.changelog": "true"})
    first = {(r["rowkind"], r["id"], r["v"]) for r in spark.read.parquet(out).collect()}
    assert first == {("+I", i, f"v{i}") for i in range(4)}
    t.append(pa.table({"id": pa.array([1, 9], pa.int64()), "v": ["x1", "x9"]}))
    t.delete("id = 2")
    drain(spark, t.location, cp, out, **{"read.changelog": "true"})
    rows = {(r["rowkind"], r["id"], r["v"]) for r in spark.read.parquet(out).collect()} - first
    assert rows == {("-U", 1, "v1"), ("+U", 1, "x1"), ("+I", 9, "x9"), ("-D", 2, "v2")}


def test_a_paimon_stream_reads_changelogs_kept_past_their_snapshots(spark, warehouse, tmp_path):
    """Snapshots expire under a paused stream; their changelogs, kept longer
    (``changelog.num-retained.max``), still give the stream every change."""
    import icefloe

    cat = icefloe.Catalog(warehouse, "paimon", spark)
    t = cat.create_table("db.kc", "id bigint not null, v string", properties={
        "primary-key": "id", "bucket": "1", "changelog-producer": "input", "write-only": "true",
        "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "changelog.num-retained.max": "20"})
    t.append(_batch(0, 2))
    cp, out = str(tmp_path / "cp"), str(tmp_path / "out")
    drain(spark, t.location, cp, out, **{"read.changelog": "true"})
    for lo in range(2, 8, 2):
        t.append(_batch(lo, lo + 2))
        t.expire_snapshots()
    assert len(t.snapshots()) == 1
    drain(spark, t.location, cp, out, **{"read.changelog": "true"})
    assert _out(spark, out) == list(range(8))
