"""Dynamic-bucket primary-key tables (``bucket = -1``): keys assigned buckets through the HASH
index, a key never moving bucket; pypaimon and pypaimon-rust read what icefloe writes and
icefloe reads and appends to what they write."""
import pyarrow as pa
import pytest

from icefloe.errors import CommitConflictError
from icefloe.paimon import dynamic_bucket as db

DDL = "id bigint, dt string, a bigint"
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False),
                    ("a", pa.int64())])


def _rows(table):
    return sorted(table.to_pylist(), key=lambda r: r["id"])


def _rust_rows(warehouse, name):
    from pypaimon_rust.datafusion import SQLContext

    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": warehouse})
    return _rows(pa.Table.from_batches(ctx.sql(f"SELECT * FROM paimon.{name}")))


def _pypaimon_rows(pcat, name):
    pt = pcat.get_table(name)
    rb = pt.new_read_builder()
    return _rows(rb.new_read().to_arrow(rb.new_scan().plan().splits()))


def _buckets_of_keys(t) -> dict:
    """key -> set of buckets holding a record of it."""
    import pyarrow.parquet as pq

    out: dict = {}
    for e in t.plan():
        for k in pq.ParquetFile(e.file.file_path).read(columns=["id"]).column("id").to_pylist():
            out.setdefault(k, set()).add(e.bucket)
    return out


def _batch(ids, dt=lambda i: "x" if i % 3 else "y", a=lambda i: i):
    return pa.Table.from_pylist([{"id": i, "dt": dt(i), "a": a(i)} for i in ids], schema=SCHEMA)


def test_our_dynamic_bucket_writes_read_the_same_in_both_referees(spark_catalog, paimon_spark, paimon_warehouse,
                                                                  pypaimon_catalog):
    t = spark_catalog.create_table("db.d", DDL, partitioned_by=["dt"],
                                   properties={"primary-key": "id,dt", "dynamic-bucket.target-row-num": "4"})
    assert t.table_schema.num_buckets == -1                     # Paimon's default bucket mode
    t.append(_batch(range(12)))                                  # Arrow, on the caller
    t.append(paimon_spark.createDataFrame(_batch(range(8, 20), a=lambda i: -i).to_pylist(), DDL))   # Spark
    t.append(_batch([1, 5, 25]))
    t.delete("id = 2")
    ours = _rows(t.to_arrow())
    assert len(ours) == 20 and {r["id"]: r["a"] for r in ours}[9] == -9 and 2 not in {r["id"] for r in ours}
    assert ours == _rust_rows(paimon_warehouse, "db.d") == _pypaimon_rows(pypaimon_catalog, "db.d")
    keys = _buckets_of_keys(t)
    assert all(len(b) == 1 for b in keys.values())              # a key never moves bucket
    entries = t.plan()
    assert {e.total_buckets for e in entries} == {-1} and len({e.bucket for e in entries}) >= 3
    # each index file holds the hashes of exactly the keys of its (partition, bucket)
    index = db.hash_entries(t.store, t.current_snapshot())
    counts: dict = {}
    for e in entries:
        import pyarrow.parquet as pq

        ids = set(pq.ParquetFile(e.file.file_path).read(columns=["id"]).column("id").to_pylist())
        counts.setdefault((e.partition.to_bytes(), e.bucket), set()).update(ids)
    assert {k: v["_ROW_COUNT"] for k, v in index.items()} == {k: len(v) for k, v in counts.items()}
    assert all(v <= 4 for v in (len(x) for x in counts.values()))
    assert t.check().ok


def test_we_read_and_append_to_a_pypaimon_dynamic_bucket_table(pypaimon_catalog, spark_catalog, paimon_warehouse):
    from tools.pypaimon_env import remote_module
    Schema = remote_module("pypaimon").Schema

    pypaimon_catalog.create_database("db", True)
    pypaimon_catalog.create_table("db.p", Schema.from_pyarrow_schema(
        SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
        options={"bucket": "-1", "dynamic-bucket.target-row-num": "3"}), False)
    for ids in (range(10), range(5, 15)):
        pt = pypaimon_catalog.get_table("db.p")
        wb = pt.new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(_batch(ids, a=lambda i, ids=ids: i * 100 + ids[0]))
        c.commit(w.prepare_commit())
        w.close()
        c.close()
    t = spark_catalog.load_table("db.p")
    assert _rows(t.to_arrow()) == _pypaimon_rows(pypaimon_catalog, "db.p")
    before = _buckets_of_keys(t)
    t.append(_batch([0, 7, 14, 30], a=lambda i: -1))           # existing keys stay in their bucket
    after = _buckets_of_keys(t.refresh())
    assert all(after[k] == before[k] for k in before) and all(len(b) == 1 for b in after.values())
    expected = _pypaimon_rows(pypaimon_catalog, "db.p")
    assert _rows(t.to_arrow()) == expected == _rust_rows(paimon_warehouse, "db.p")
    assert {r["id"]: r["a"] for r in expected}[7] == -1 and len(expected) == 16


def test_two_writers_of_one_partition_cannot_both_commit(paimon_catalog):
    t = paimon_catalog.create_table("db.c", DDL, properties={"primary-key": "id", "dynamic-bucket.target-row-num": "2"})
    t.append(_batch(range(4)))
    other = paimon_catalog.load_table("db.c")
    mine = t.write(_batch([10, 11]))
    theirs = other.write(_batch([10, 12]))                      # key 10 would land in two buckets
    other.commit(theirs)
    with pytest.raises(CommitConflictError, match="another (commit|writer)"):
        t.commit(mine)
    import os

    assert not any(os.path.exists(f.file_path) for m in mine for f in m.new_files + m.index_files)
    assert all(len(b) == 1 for b in _buckets_of_keys(t.refresh()).values())


def test_bad_dynamic_bucket_settings_are_refused(paimon_catalog, paimon_spark, tmp_path):
    from icefloe.errors import SchemaError

    t = paimon_catalog.create_table("db.m", DDL, properties={"primary-key": "id", "dynamic-bucket.target-row-num": "1",
                                                             "dynamic-bucket.max-buckets": "2"})
    t.append(_batch(range(5)))                                   # past two buckets, keys share them
    assert sorted({e.bucket for e in t.plan()}) == [0, 1] and len(_rows(t.to_arrow())) == 5
    with pytest.raises(SchemaError, match="max-buckets"):
        paimon_catalog.create_table("db.n", DDL, properties={"primary-key": "id", "dynamic-bucket.max-buckets": "0"}) \
            .append(_batch([1]))
    with pytest.raises(Exception, match="assigns a partition's keys in one writer"):
        paimon_spark.createDataFrame(_batch([1]).to_pylist(), DDL).write.format("icefloe").mode("append") \
            .save(t.location)
    assert len(t.refresh().snapshots()) == 1
    fresh = tmp_path / "wh" / "db.db" / "fresh"                # refused before anything is created
    with pytest.raises(Exception, match="set option.bucket"):
        paimon_spark.createDataFrame(_batch([1]).to_pylist(), DDL).write.format("icefloe").mode("append") \
            .option("format", "paimon").option("option.primary-key", "id").save(str(fresh))
    assert not fresh.exists()


def test_a_changed_index_of_the_partition_refuses_the_commit(paimon_catalog):
    t = paimon_catalog.create_table("db.i", DDL, partitioned_by=["dt"], properties={"primary-key": "id,dt"})
    t.append(_batch(range(6)))
    base = t.current_snapshot().id
    t.append(_batch([100], dt=lambda i: "x"))                   # partition x gains a key: its index changes
    from icefloe.paimon.binary_row import encode_row

    x, y = (encode_row([v], t.table_schema.partition_types).to_bytes() for v in ("x", "y"))
    latest = t.refresh().current_snapshot()
    with pytest.raises(CommitConflictError, match="one writer per partition"):
        db.check_index_base(t.store, latest, base, {x})
    db.check_index_base(t.store, latest, base, {y})             # partition y is untouched: fine
    db.check_index_base(t.store, latest, latest.id, {x})        # nothing since: fine
