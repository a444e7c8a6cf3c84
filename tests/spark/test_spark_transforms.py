"""Partition values computed by Spark expressions equal the spec transforms computed in Python."""
import datetime as dt
import decimal
import random

import pytest


from icefloe.core.types import PRIMITIVES_BY_NAME as P, DecimalType, FixedType, parse_schema
from icefloe.iceberg.conversions import to_internal
from icefloe.iceberg.partitioning import build_spec
from icefloe.spark import jvm
from icefloe.spark.iceberg_write import decode_partition_key, partition_key_expr

SCHEMA = parse_schema("l bigint, i int, s string, d date, ts timestamp, tn timestamp_ntz, dec decimal(9,2), b binary")
TERMS = ["year(ts)", "month(ts)", "day(ts)", "hour(ts)", "year(tn)", "month(tn)", "day(tn)", "hour(tn)",
         "year(d)", "month(d)", "day(d)", "bucket(16, l)", "bucket(7, s)", "bucket(5, i)", "truncate(10, l)",
         "truncate(3, i)", "truncate(2, s)", "truncate(50, dec)", "l", "s", "d", "ts", "tn", "dec", "b",
         "truncate(2, b)", "bucket(3, d)", "bucket(4, ts)", "bucket(6, tn)", "bucket(5, dec)", "bucket(4, b)"]


def _rows():
    rnd = random.Random(7)
    rows = [(None,) * 8]
    utc = dt.timezone.utc
    edge = [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(1970, 1, 1), dt.datetime(1899, 3, 1, 5, 30),
            dt.datetime(2023, 12, 31, 0, 12), dt.datetime(2024, 2, 29, 23, 0, 0, 1)]
    for k in range(40):
        base = edge[k] if k < len(edge) else dt.datetime(1900, 1, 1) + dt.timedelta(
            seconds=rnd.randrange(0, 250 * 365 * 86400), microseconds=rnd.randrange(0, 10 ** 6))
        rows.append((rnd.randrange(-10 ** 12, 10 ** 12), rnd.randrange(-1000, 1000),
                     rnd.choice(["", "a", "iceberg", "ünïcödé", "x" * 20]), base.date(),
                     base.replace(tzinfo=utc), base, decimal.Decimal(rnd.randrange(-10 ** 6, 10 ** 6)).scaleb(-2),
                     bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 5)))))
    return rows


def test_spark_partition_values_match_spec(spark):
    spec = build_spec(SCHEMA, TERMS)
    rows = _rows()
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")  # transforms must not depend on it
    try:
        df = spark.createDataFrame(rows, "l bigint, i int, s string, d date, ts timestamp, tn timestamp_ntz, "
                                         "dec decimal(9,2), b binary")
        keyed = df.select(partition_key_expr(spec, SCHEMA))
        keys = [r[0] for r in keyed.collect()]
    finally:
        spark.conf.unset("spark.sql.session.timeZone")
    assert len(keys) == len(rows)
    for row, key in zip(rows, keys):
        got = decode_partition_key(key, spec, SCHEMA)
        values = {f.field_id: to_internal(f.field_type, v) for f, v in zip(SCHEMA.fields, row)}
        want = spec.partition_for_row(SCHEMA, values)
        assert got == want, (row, [str(f.transform) for f in spec.fields])
    if jvm.available(spark):       # every bucket computed in the JVM tasks, no Python worker
        plan = keyed._jdf.queryExecution().executedPlan().toString()
        assert "UDF(" in plan
        assert "EvalPython" not in plan, plan


def test_jvm_bucket_hashes_are_the_specs_vectors(spark):
    """``jvm/IcebergBucket.java`` against the spec's Appendix B hash vectors: with 2^31 - 1 buckets
    the bucket is the hash with its sign bit cleared (modulo 2^31 - 1)."""
    from pyspark.sql import functions as F

    from icefloe.spark.iceberg_write import _jvm_bucket

    if not jvm.available(spark):
        pytest.skip("icefloe's JVM classes are not loadable here")
    cases = [("bigint", 34, P["long"], 2017239379), ("int", 34, P["int"], 2017239379),
             ("decimal(9,2)", decimal.Decimal("14.20"), DecimalType(9, 2), -500754589),
             ("date", dt.date(2017, 11, 16), P["date"], -653330422),
             ("timestamp_ntz", dt.datetime(2017, 11, 16, 22, 31, 8), P["timestamp"], -2047944441),
             ("timestamp", dt.datetime(2017, 11, 16, 22, 31, 8, tzinfo=dt.timezone.utc), P["timestamptz"],
              -2047944441),
             ("string", "iceberg", P["string"], 1210000089),
             ("string", "f79c3e09-677c-4bbd-a479-3f349cb785e7", P["uuid"], 1488055340),
             ("binary", bytes([0, 1, 2, 3]), P["binary"], -188683207),
             ("binary", bytes([0, 1, 2, 3]), FixedType(4), -188683207)]
    n = 2 ** 31 - 1
    for spark_type, value, t, want in cases:
        df = spark.createDataFrame([(value,), (None,)], f"v {spark_type}")
        col = _jvm_bucket(n, F.col("v"), t)
        assert col is not None, t
        got = [r[0] for r in df.select(col).collect()]
        assert got == [(want & 0x7FFFFFFF) % n, None], (t, got)


def test_jvm_bucket_matches_python_over_random_values(spark):
    """Strings of every length modulo 4 (murmur3's tail), multi-byte UTF-8, wide and negative
    decimals, long binaries: each bucket as the Python transform gives it."""
    from pyspark.sql import functions as F

    from icefloe.iceberg.transforms import BucketTransform
    from icefloe.spark.iceberg_write import _jvm_bucket

    if not jvm.available(spark):
        pytest.skip("icefloe's JVM classes are not loadable here")
    rnd = random.Random(11)
    alphabet = "aZ09-ä€𝄞 "
    strings = ["".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 13))) for _ in range(60)]
    decimals = [decimal.Decimal(rnd.randrange(-10 ** 30, 10 ** 30)).scaleb(-6) for _ in range(60)]
    binaries = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 40))) for _ in range(60)]
    longs = [rnd.randrange(-2 ** 63, 2 ** 63) for _ in range(60)]
    for spark_type, values, t in (("string", strings, P["string"]), ("decimal(38,6)", decimals, DecimalType(38, 6)),
                                  ("binary", binaries, P["binary"]), ("bigint", longs, P["long"])):
        df = spark.createDataFrame([(i, v) for i, v in enumerate(values)], f"i int, v {spark_type}")
        got = [r[1] for r in df.select("i", _jvm_bucket(97, F.col("v"), t)).orderBy("i").collect()]
        want = [BucketTransform(97).apply(t, v) for v in values]
        assert got == want, t


def test_pyiceberg_buckets_every_row_of_a_spark_write_as_we_did(spark, catalog):
    """The referee's own bucket transform, applied to the rows of each data file a Spark append wrote
    (bucketed in the JVM where the classes load), gives the file's partition values; and its
    pruning by an equality finds each row."""
    import pyarrow.parquet as pq
    from pyiceberg.expressions import EqualTo
    from pyiceberg.transforms import BucketTransform as Referee
    from pyiceberg.types import DecimalType as PyDecimal, LongType, StringType

    from tests.interop_util import pyiceberg_table

    t = catalog.create_table("db.bk", "id bigint, name string, amount decimal(12,3)",
                             partitioned_by=["bucket(8, id)", "bucket(5, name)", "bucket(3, amount)"])
    rnd = random.Random(5)
    rows = [(i * 7919 - 40000, "".join(rnd.choice("ab€😀") for _ in range(i % 9)),
             decimal.Decimal(rnd.randrange(-10 ** 9, 10 ** 9)).scaleb(-3)) for i in range(120)]
    t.append(spark.createDataFrame(rows, "id bigint, name string, amount decimal(12,3)"))
    py = pyiceberg_table(t.metadata_location)
    refs = [Referee(8).transform(LongType()), Referee(5).transform(StringType()),
            Referee(3).transform(PyDecimal(12, 3))]
    tasks = list(py.scan().plan_files())
    assert len(tasks) > 10
    seen = 0
    for task in tasks:
        data = pq.read_table(task.file.file_path.replace("file:", ""))
        part = task.file.partition
        for r in data.to_pylist():
            assert (refs[0](r["id"]), refs[1](r["name"]), refs[2](r["amount"])) == (part[0], part[1], part[2])
            seen += 1
    assert seen == len(rows)
    for i in (0, 17, 119):
        got = py.scan(row_filter=EqualTo("id", rows[i][0])).to_arrow().to_pylist()
        assert [g["id"] for g in got] == [rows[i][0]]
