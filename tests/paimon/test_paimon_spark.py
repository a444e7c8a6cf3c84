"""The Spark data plane: writes through Spark's Parquet writer, reads, bad input."""
import os
import pickle

import pyarrow as pa
import pytest

from icefloe.errors import RequiredFieldNullError, SchemaMismatchError


def files_under(location):
    out = set()
    for root, _dirs, files in os.walk(location):
        out |= {os.path.join(root, f) for f in files}
    return out


@pytest.fixture
def table(spark_catalog):
    return spark_catalog.create_table("db.s", "id bigint not null, name string, dt string",
                                      partitioned_by=["dt"], properties={"bucket": "2", "bucket-key": "id"})


def test_append_overwrite_and_read_back(table, paimon_spark):
    table.append(paimon_spark.sql("select id, concat('n', id) as name, if(id < 5, 'a', 'b') as dt from range(10)"))
    # columns matched by name, in any order and case; int widened to bigint
    table.append(paimon_spark.sql("select 'c' as DT, cast(42 as int) as ID, 'x' as name"))
    df = table.to_spark()
    assert df.columns == ["id", "name", "dt"]
    assert sorted(r.id for r in df.collect()) == list(range(10)) + [42]
    assert table.to_spark(where="dt = 'a'", columns=["id"]).orderBy("id").toPandas()["id"].tolist() == [0, 1, 2, 3, 4]
    table.overwrite(paimon_spark.sql("select 7 as id, 'seven' as name, 'z' as dt"))
    assert [tuple(r) for r in table.to_spark().collect()] == [(7, "seven", "z")]
    assert table.to_spark(snapshot_id=2).count() == 11
    s2 = table.snapshot(2)
    assert table.to_spark(as_of=s2.time_millis).count() == 11
    # nothing left in staging
    assert not [d for d in os.listdir(table.location) if d.startswith(".staging")]


def test_where_prunes_files(table, paimon_spark):
    table.append(paimon_spark.sql("select id, 'n' as name, concat('p', id % 4) as dt from range(40)"))
    all_files = table.plan_files()
    assert len(all_files) == 8                                  # 4 partitions x 2 buckets
    assert len(table.plan_files(where="dt = 'p1'")) == 2        # partition pruning
    assert len(table.plan_files(where="dt = 'p1' and id = 5")) == 1          # + the bucket of id 5
    assert len(table.plan_files(where="dt in ('p1', 'p2') and id in (5, 6)")) <= 4
    assert len(table.plan_files(where="id > 1000")) == 0        # value statistics
    assert table.to_spark(where="dt = 'p1' and id < 10").count() == 3


@pytest.mark.parametrize("sql,error,match", [
    ("select id, 'n' as name, 'a' as dt, 1 as extra from range(3)", SchemaMismatchError, "extra"),
    ("select cast(id as string) as id, 'n' as name, 'a' as dt from range(3)", SchemaMismatchError, "'id'"),
    ("select 'n' as name, 'a' as dt from range(3)", SchemaMismatchError, "required column 'id'"),
    ("select if(id = 2, null, id) as id, 'n' as name, 'a' as dt from range(3)", RequiredFieldNullError, "'id'"),
])
def test_bad_dataframes_are_rejected_before_commit(table, paimon_spark, sql, error, match):
    table.append(paimon_spark.sql("select id, 'n' as name, 'a' as dt from range(3)"))
    before = files_under(table.location)
    with pytest.raises(error, match=match):
        table.append(paimon_spark.sql(sql))
    assert files_under(table.location) == before
    assert [s.id for s in table.snapshots()] == [1]


@pytest.mark.parametrize("data,error", [
    (pa.table({"id": pa.array([1, None], pa.int64()), "name": ["a", "b"], "dt": ["x", "y"]}), RequiredFieldNullError),
    (pa.table({"id": ["1"], "name": ["a"], "dt": ["x"]}), SchemaMismatchError),
    (pa.table({"id": pa.array([1], pa.int64()), "nope": ["a"]}), SchemaMismatchError),
])
def test_bad_arrow_data_is_rejected(paimon_catalog, data, error):
    t = paimon_catalog.create_table("db.a", "id bigint not null, name string, dt string", partitioned_by=["dt"])
    before = files_under(t.location)
    with pytest.raises(error):
        t.append(data)
    assert files_under(t.location) == before and t.snapshots() == []


def test_write_arrow_files_in_spark_tasks(table, paimon_spark):
    """What a Spark Python data source writer does: tasks write, the driver commits."""
    from icefloe.paimon import write_arrow_files

    def task(batches):
        messages = write_arrow_files(table, batches)
        yield pa.RecordBatch.from_pylist([{"m": pickle.dumps(messages)}])

    df = paimon_spark.sql("select id, concat('n', id) as name, if(id % 2 = 0, 'e', 'o') as dt from range(20)")
    out = df.repartition(3).mapInArrow(task, "m binary").collect()
    messages = [m for row in out for m in pickle.loads(row.m)]
    assert {(m.partition, m.bucket) for m in messages} <= {(("e",), 0), (("e",), 1), (("o",), 0), (("o",), 1)}
    s = table.commit(messages)
    assert s.id == 1 and s.total_record_count == 20
    assert sorted(r.id for r in table.to_spark().collect()) == list(range(20))


def test_create_from_spark_schema_keeps_narrow_types(spark_catalog, paimon_spark):
    df = paimon_spark.sql("select cast(1 as tinyint) as b, cast(2 as smallint) as s, timestamp'2024-01-01' as ts, "
                          "timestamp_ntz'2024-01-01' as ntz")
    t = spark_catalog.create_table("db.narrow", df.schema)
    assert [f.type_string for f in t.table_schema.fields] == [
        "TINYINT NOT NULL", "SMALLINT NOT NULL", "TIMESTAMP(6) WITH LOCAL TIME ZONE NOT NULL", "TIMESTAMP(6) NOT NULL"]
    t.append(df)
    assert t.to_spark().collect() == df.collect()


def test_data_source_hooks(spark_catalog, paimon_spark):
    """The functions the ``icefloe`` Python data source calls for a Paimon location."""
    from icefloe.spark.paimon_read import paimon_partitions, paimon_read_file, paimon_schema_ddl
    from icefloe.spark.paimon_write import paimon_abort, paimon_commit, paimon_write_batches

    t = spark_catalog.create_table("db.ds", "id bigint not null, dt string", partitioned_by=["dt"])
    assert paimon_schema_ddl(t.location) == "`id` bigint NOT NULL, `dt` string"
    batch = pa.RecordBatch.from_pydict({"id": pa.array([1, 2, 3], pa.int64()), "dt": ["a", "b", "a"]})
    messages = paimon_write_batches(t.location, [batch])
    s = paimon_commit(t.location, messages + [None])
    assert s.id == 1
    paths = paimon_partitions(t.location, {}, "dt = 'a'")
    assert len(paths) == 1
    target = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    rows = [r for b in paimon_read_file(t.location, paths[0], target) for r in b.to_pylist()]
    assert sorted(r["id"] for r in rows) == [1, 3]
    assert paimon_partitions(t.location, {"snapshot-id": "1"}, None) and \
        len(paimon_partitions(t.location, {}, None)) == 2
    aborted = paimon_write_batches(t.location, [batch])
    paths = [f.file_path for m in aborted for f in m.new_files]
    assert all(os.path.exists(p) for p in paths)
    paimon_abort(t.location, aborted)
    assert not any(os.path.exists(p) for p in paths) and len(t.snapshots()) == 1


def test_primary_key_table_with_timestamps_reads_merged_through_spark(spark_catalog, paimon_spark):
    """A bucket whose runs need merging is read in Python tasks: their Arrow schema carries the
    timestamp columns' zone (without it, PySpark refuses to build the schema)."""
    import datetime

    t = spark_catalog.create_table("db.pk_ts", "id bigint not null, ts timestamp, ntz timestamp_ntz",
                                   properties={"primary-key": "id", "bucket": "1", "write-only": "true"})
    first = paimon_spark.sql("SELECT id, timestamp_seconds(1700000000 + id) AS ts, "
                             "CAST(timestamp_seconds(id) AS timestamp_ntz) AS ntz FROM range(4)")
    t.append(first)
    t.append(paimon_spark.sql("SELECT 2L AS id, timestamp_seconds(5) AS ts, CAST(NULL AS timestamp_ntz) AS ntz"))
    assert len(t.plan_files()) == 2                      # two runs in the bucket: a merged read
    got = {r["id"]: (r["ts"], r["ntz"]) for r in t.to_spark().collect()}
    utc = datetime.timezone.utc
    want = {i: (datetime.datetime.fromtimestamp(1700000000 + i, utc), datetime.datetime(1970, 1, 1, 0, 0, i))
            for i in range(4)}
    want[2] = (datetime.datetime.fromtimestamp(5, utc), None)
    assert {k: (ts.replace(tzinfo=utc) if ts.tzinfo is None else ts, ntz) for k, (ts, ntz) in got.items()} == want
