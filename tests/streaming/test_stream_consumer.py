"""Paimon consumers in Structured Streaming (Paimon's Spark structured-streaming page): a stream
with ``consumer-id`` records its progress in ``consumer/consumer-<id>`` as Paimon does, snapshot expiry keeps what it has still to
read, a new query without a checkpoint starts where the consumer is, ``consumer.ignore-progress``
starts over."""
import json
import os

import pyarrow as pa
import pytest

import icefloe
from tests.streaming.test_stream_source import drain as _drain


def _out(spark, out_dir):
    return sorted(r["id"] for r in spark.read.parquet(out_dir).collect()) if os.path.exists(out_dir) else []


def _batch(lo, hi):
    return pa.table({"id": pa.array(range(lo, hi), pa.int64()), "v": [f"v{i}" for i in range(lo, hi)]})


def _next_snapshot(table, cid="myid"):
    path = os.path.join(table.location, "consumer", f"consumer-{cid}")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)["nextSnapshot"]


@pytest.mark.long      # five streaming queries, one after another
def test_a_consumer_records_the_stream_progress_and_a_new_query_resumes_there(spark, warehouse, tmp_path):
    t = icefloe.Catalog(warehouse, "paimon", spark).create_table(
        "db.cons", "id bigint, v string", properties={"snapshot.num-retained.min": "1",
                                                       "snapshot.num-retained.max": "1"})
    t.append(_batch(0, 5))
    t.append(_batch(5, 10))
    opts = {"consumer-id": "myid", "consumer.mode": "at-least-once"}
    _drain(spark, t.location, str(tmp_path / "cp1"), str(tmp_path / "out1"), **opts)
    assert _out(spark, str(tmp_path / "out1")) == list(range(10))
    # Spark commits a micro-batch to the source when it plans the next one, so the last batch of
    # an availableNow query is committed by the query's next run: the consumer lags a batch behind
    assert _next_snapshot(t) is None          # the full scan of snapshot 2 not committed yet
    t.append(_batch(10, 15))                  # snapshot 3
    _drain(spark, t.location, str(tmp_path / "cp1"), str(tmp_path / "out1"), **opts)
    assert _out(spark, str(tmp_path / "out1")) == list(range(15))
    assert _next_snapshot(t) == 3             # snapshot 2 read to its end: snapshot 3 next
    t.append(_batch(15, 20))                  # snapshot 4: expiry keeps one snapshot...
    assert sorted(s.id for s in t.snapshots()) == [3, 4]      # ...and the consumer's next one
    # a new query (no checkpoint) with the consumer starts at its next snapshot, not with the
    # whole table (scan.mode latest-full): snapshot 3 (read, not yet committed) again, then 4
    _drain(spark, t.location, str(tmp_path / "cp2"), str(tmp_path / "out2"), **opts)
    assert _out(spark, str(tmp_path / "out2")) == list(range(10, 20))
    assert t.metadata_table("consumers").to_pylist()[0]["consumer_id"] == "myid"
    # consumer.ignore-progress: the startup options decide (the whole table)
    _drain(spark, t.location, str(tmp_path / "cp3"), str(tmp_path / "out3"),
           **{"consumer-id": "myid", "consumer.ignore-progress": "true"})
    assert _out(spark, str(tmp_path / "out3")) == list(range(20))


def test_consumer_options_that_cannot_be_honoured_are_errors(spark, warehouse, tmp_path):
    t = icefloe.Catalog(warehouse, "paimon", spark).create_table("db.cons2", "id bigint, v string")
    t.append(_batch(0, 3))
    with pytest.raises(Exception, match="consumer.mode='sometimes'"):
        _drain(spark, t.location, str(tmp_path / "a"), str(tmp_path / "oa"),
               **{"consumer-id": "x", "consumer.mode": "sometimes"})
    with pytest.raises(Exception, match="batch read has none"):
        spark.read.format("icefloe").option("consumer-id", "x").load(t.location).collect()
    ice = icefloe.Catalog(warehouse, "iceberg", spark).create_table("db.ice", "id bigint, v string")
    ice.append(_batch(0, 3))
    with pytest.raises(Exception, match="consumers .* are Paimon's"):
        _drain(spark, ice.location, str(tmp_path / "b"), str(tmp_path / "ob"), **{"consumer-id": "x"})
    assert not os.path.exists(os.path.join(t.location, "consumer"))
