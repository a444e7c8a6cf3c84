"""Streams with the table on an S3 server: the sink commits each micro-batch once (a replayed batch
is recognised through the table's own history), and the source reads the table then each new
snapshot, for both formats; the storage settings are the stream's options."""
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe


def _inputs(folder, batches, rows=5):
    os.makedirs(folder, exist_ok=True)
    for b in range(batches):
        chunk = list(range(b * rows, (b + 1) * rows))
        pq.write_table(pa.table({"id": pa.array(chunk, pa.int64()), "v": [f"v{i}" for i in chunk]}),
                       os.path.join(folder, f"in-{b:05d}.parquet"))
    return list(range(batches * rows))


@pytest.mark.parametrize("fmt", ["iceberg", "paimon"])
def test_stream_sink_and_source_on_s3(spark, s3_server, s3_warehouse, tmp_path, fmt):
    props = s3_server.properties
    ids = _inputs(str(tmp_path / "in"), 3)
    loc = f"{s3_warehouse}/db/events" if fmt == "iceberg" else f"{s3_warehouse}/db.db/events"
    src = spark.readStream.schema("id long, v string").option("maxFilesPerTrigger", 1).parquet(str(tmp_path / "in"))
    w = src.writeStream.format("icefloe").options(**props).option("format", fmt) \
        .option("checkpointLocation", str(tmp_path / "cp"))
    w.trigger(availableNow=True).start(loc).awaitTermination()
    t = icefloe.Catalog(s3_warehouse, format=fmt, **props).load_table("db.events")
    assert len(t.snapshots()) == 3                                   # one snapshot per micro-batch
    assert sorted(t.to_arrow().column("id").to_pylist()) == ids

    t.append(pa.table({"id": pa.array([100, 101], pa.int64()), "v": ["a", "b"]}))
    out = str(tmp_path / "out")
    q = (spark.readStream.format("icefloe").options(**props).load(loc).writeStream.format("parquet")
         .option("checkpointLocation", str(tmp_path / "cp2")).trigger(availableNow=True).start(out))
    q.awaitTermination()
    assert sorted(spark.read.parquet(out).toPandas()["id"].tolist()) == ids + [100, 101]
