"""Interop with pypaimon 2.1 on one warehouse: each reads what the other writes."""
import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.paimon.bucket import bucket_of

UTC = dt.timezone.utc
DDL = ("id bigint not null, name string, dt string, amount decimal(10,2), ts timestamp, "
       "ntz timestamp_ntz, day date, score double, flag boolean")


def spark_rows(spark, start, n):
    return spark.sql(f"""
        select id, concat('name-', id) as name, concat('2024-01-0', cast(id % 3 + 1 as string)) as dt,
               cast(id * 1.25 as decimal(10,2)) as amount,
               timestamp'2024-03-01 12:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) as ts,
               timestamp_ntz'2024-03-01 08:00:00' + make_interval(0, 0, 0, 0, 0, id, 0) as ntz,
               date_add(date'2024-01-01', cast(id as int)) as day, cast(id as double) / 3 as score, id % 2 = 0 as flag
        from range({start}, {start + n})""")


def arrow_rows(start, n):
    r = range(start, start + n)
    return pa.table({
        "id": pa.array(r, pa.int64()), "name": [f"name-{i}" for i in r],
        "dt": [f"2024-01-0{i % 3 + 1}" for i in r],
        "amount": pa.array([decimal.Decimal(i * 125).scaleb(-2) for i in r], pa.decimal128(10, 2)),
        "ts": pa.array([dt.datetime(2024, 3, 1, 12, 0, 0, tzinfo=UTC) + dt.timedelta(seconds=i) for i in r],
                       pa.timestamp("us", tz="UTC")),
        "ntz": pa.array([dt.datetime(2024, 3, 1, 8) + dt.timedelta(minutes=i) for i in r], pa.timestamp("us")),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in r], pa.date32()),
        "score": [i / 3.0 for i in r], "flag": [i % 2 == 0 for i in r],
    })


def normalised(table: pa.Table):
    rows = table.to_pylist()
    for r in rows:
        for k, v in list(r.items()):
            if isinstance(v, dt.datetime) and v.tzinfo is not None:
                r[k] = v.astimezone(UTC)
            if isinstance(v, float):
                r[k] = round(v, 9)
    return sorted(rows, key=lambda r: r["id"])


def pypaimon_read(pcat, name, snapshot_id=None):
    t = pcat.get_table(name)
    if snapshot_id is not None:
        t = t.copy({"scan.snapshot-id": str(snapshot_id)})
    rb = t.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def pypaimon_write(pcat, name, data):
    """``data`` written by pypaimon to table ``name`` in one batch commit (in its worker)."""
    from tools.pypaimon_env import remote_module

    remote_module("tools.pypaimon_side").append_arrow(pcat, name, data)


@pytest.mark.parametrize("layout", ["partitioned-fixed-bucket", "unpartitioned-unaware"])
def test_pypaimon_reads_every_snapshot_we_write(spark_catalog, paimon_spark, pypaimon_catalog, layout):
    if layout == "partitioned-fixed-bucket":
        t = spark_catalog.create_table("db.t", DDL, partitioned_by=["dt"],
                                       properties={"bucket": "3", "bucket-key": "id"})
    else:
        t = spark_catalog.create_table("db.t", DDL)
    t.append(spark_rows(paimon_spark, 0, 30))        # Spark's Parquet writer
    t.append(arrow_rows(30, 10))                     # the Arrow writer
    t.overwrite(spark_rows(paimon_spark, 100, 12))
    t.append(spark_rows(paimon_spark, 200, 5))
    assert [s.id for s in t.snapshots()] == [1, 2, 3, 4]
    for s in t.snapshots():
        ours = normalised(t.to_arrow(snapshot_id=s.id))
        assert len(ours) == s.total_record_count
        assert normalised(pypaimon_read(pypaimon_catalog, "db.t", s.id)) == ours
        spark_ids = sorted(r.id for r in t.to_spark(snapshot_id=s.id).select("id").collect())
        assert spark_ids == [r["id"] for r in ours]
    assert normalised(pypaimon_read(pypaimon_catalog, "db.t")) == normalised(t.to_arrow())


def test_our_buckets_are_pypaimons_buckets(spark_catalog, paimon_spark):
    t = spark_catalog.create_table("db.b", "id bigint not null, k string, v int", partitioned_by=["v"],
                                   properties={"bucket": "4", "bucket-key": "k,id"})
    t.append(paimon_spark.sql("select id, concat('key', id % 17) as k, cast(id % 2 as int) as v from range(200)"))
    t.append(pa.table({"id": pa.array(range(200, 260), pa.int64()), "k": [f"key{i}" for i in range(60)],
                       "v": pa.array([i % 2 for i in range(60)], pa.int32())}))
    key_types = [f.type for f in t.table_schema.bucket_key_fields]
    seen = 0
    for e in t.plan():
        assert e.file.file_path.endswith(f"/v={e.file.file_path.split('/v=')[1].split('/')[0]}/bucket-{e.bucket}/"
                                          f"{e.file.file_name}")
        data = pq.ParquetFile(e.file.file_path).read()
        for k, i in zip(data.column("k").to_pylist(), data.column("id").to_pylist()):
            assert bucket_of([k, i], key_types, 4) == e.bucket
            seen += 1
    assert seen == 260


def test_we_read_what_pypaimon_writes(spark_catalog, pypaimon_catalog, paimon_warehouse):
    from tools.pypaimon_env import remote_module
    Schema = remote_module("pypaimon").Schema

    pypaimon_catalog.create_database("db", True)
    schema = arrow_rows(0, 1).schema
    schema = schema.set(0, pa.field("id", pa.int64(), nullable=False))
    pypaimon_catalog.create_table("db.p", Schema.from_pyarrow_schema(
        schema, partition_keys=["dt"], options={"bucket": "2", "bucket-key": "id"}), False)
    pypaimon_write(pypaimon_catalog, "db.p", arrow_rows(0, 20).cast(schema))
    pypaimon_write(pypaimon_catalog, "db.p", arrow_rows(20, 7).cast(schema))
    t = spark_catalog.load_table("db.p")
    assert [s.id for s in t.snapshots()] == [1, 2]
    expected = normalised(pypaimon_read(pypaimon_catalog, "db.p"))
    assert normalised(t.to_arrow()) == expected
    assert normalised(t.to_arrow(snapshot_id=1)) == expected[:20]
    spark_rows_ = t.to_spark().toArrow()
    assert normalised(spark_rows_) == expected
    assert t.to_spark(where="dt = '2024-01-02' and id >= 10").count() == \
        len([r for r in expected if r["dt"] == "2024-01-02" and r["id"] >= 10])


def test_we_append_to_a_pypaimon_table_and_it_reads_both(spark_catalog, paimon_spark, pypaimon_catalog):
    from tools.pypaimon_env import remote_module
    Schema = remote_module("pypaimon").Schema

    pypaimon_catalog.create_database("db", True)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("dt", pa.string())])
    pypaimon_catalog.create_table("db.p", Schema.from_pyarrow_schema(schema, partition_keys=["dt"]), False)
    first = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"], "dt": ["x", "y", "x"]},
                     schema=schema)
    pypaimon_write(pypaimon_catalog, "db.p", first)
    t = spark_catalog.load_table("db.p")
    t.append(paimon_spark.sql("select id, concat('s', id) as name, 'y' as dt from range(10, 13)"))
    t.append(pa.table({"id": pa.array([20], pa.int64()), "name": ["arrow"], "dt": ["z"]}))
    got = pypaimon_read(pypaimon_catalog, "db.p")
    assert sorted(got.column("id").to_pylist()) == [1, 2, 3, 10, 11, 12, 20]
    assert sorted(pypaimon_read(pypaimon_catalog, "db.p", 2).column("id").to_pylist()) == [1, 2, 3, 10, 11, 12]
    # and pypaimon can keep writing after us
    pypaimon_write(pypaimon_catalog, "db.p", first.slice(0, 1).set_column(0, "id", pa.array([99], pa.int64())))
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2, 3, 10, 11, 12, 20, 99]
    assert [s.id for s in t.snapshots()] == [1, 2, 3, 4]


def test_nested_types_round_trip(spark_catalog, paimon_spark, pypaimon_catalog):
    t = spark_catalog.create_table("db.n", "id bigint, s struct<a: int, b: string>, l array<int>, "
                                           "m map<string, bigint>")
    t.append(paimon_spark.sql("select id, named_struct('a', cast(id as int), 'b', cast(id as string)) as s, "
                              "array(cast(id as int), 1) as l, map('k', id) as m from range(5)"))
    ours = sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])
    theirs = sorted(pypaimon_read(pypaimon_catalog, "db.n").to_pylist(), key=lambda r: r["id"])
    assert ours == theirs
    assert ours[3] == {"id": 3, "s": {"a": 3, "b": "3"}, "l": [3, 1], "m": [("k", 3)]}


def test_data_file_layout(spark_catalog, paimon_spark):
    t = spark_catalog.create_table("db.l", "id bigint not null, d date, ts timestamp", partitioned_by=["d"])
    t.append(paimon_spark.sql("select id, date'2024-01-01' as d, timestamp'2024-01-01 00:00:00' as ts "
                              "from range(3)"))
    (f,) = t.plan_files()
    rel = os.path.relpath(f.file_path, t.location)
    # legacy partition names (Java's default): a DATE is its day number
    assert rel.startswith("d=19723/bucket-0/data-") and rel.endswith("-0.parquet")
    pf = pq.ParquetFile(f.file_path)
    assert pf.schema_arrow.names == ["id", "d", "ts"]       # partition columns stay in the file
    fields = {pf.schema.column(i).name: pf.schema.column(i) for i in range(3)}
    assert pf.metadata.schema.to_arrow_schema().field("ts").type == pa.timestamp("us", tz="UTC")
    assert "isAdjustedToUTC=true" in str(fields["ts"].logical_type)
    assert pf.metadata.row_group(0).column(0).compression == "ZSTD"
    assert [pf.schema_arrow.field(n).metadata[b"PARQUET:field_id"] for n in ("id", "d", "ts")] == [b"0", b"1", b"2"]


def test_dynamic_bucket_primary_key_tables_read_merged_and_take_upserts(paimon_catalog, pypaimon_catalog):
    from tools.pypaimon_env import remote_module
    Schema = remote_module("pypaimon").Schema

    pypaimon_catalog.create_database("db", True)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    pypaimon_catalog.create_table("db.pk", Schema.from_pyarrow_schema(
        schema, primary_keys=["id"], options={"bucket": "-1"}), False)
    pypaimon_write(pypaimon_catalog, "db.pk", pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]}, schema=schema))
    pypaimon_write(pypaimon_catalog, "db.pk", pa.table({"id": pa.array([1], pa.int64()), "v": ["b"]}, schema=schema))
    t = paimon_catalog.load_table("db.pk")
    assert t.to_arrow().to_pylist() == [{"id": 1, "v": "b"}]
    t.append(pa.table({"id": pa.array([2, 1], pa.int64()), "v": ["x", "c"]}))
    assert normalised(pypaimon_read(pypaimon_catalog, "db.pk")) == normalised(t.refresh().to_arrow())
    assert sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"]) == [{"id": 1, "v": "c"}, {"id": 2, "v": "x"}]


def test_typed_partition_keys_written_by_spark(spark_catalog, paimon_spark, pypaimon_catalog):
    t = spark_catalog.create_table("db.tp", "id bigint, d date, ts timestamp_ntz, n int, b boolean, "
                                            "amount decimal(10,2)", partitioned_by=["d", "ts", "n", "b", "amount"])
    t.append(paimon_spark.sql(
        "select id, date_add(date'2024-02-28', cast(id % 2 as int)) as d, "
        "timestamp_ntz'2024-01-01 10:00:05.5' as ts, if(id = 0, null, cast(id % 2 as int)) as n, "
        "id % 2 = 0 as b, cast(cast(id % 3 as decimal(10,2)) / 2 as decimal(10,2)) as amount from range(6)"))
    dirs = {os.path.relpath(os.path.dirname(f.file_path), t.location) for f in t.plan_files()}
    assert "d=19781/ts=2024-01-01T10%3A00%3A05.500/n=__DEFAULT_PARTITION__/b=true/amount=0.00/bucket-0" in dirs
    assert normalised(pypaimon_read(pypaimon_catalog, "db.tp")) == normalised(t.to_arrow())
    assert t.to_spark(where="d = date'2024-02-29' and n = 1").count() == 3
