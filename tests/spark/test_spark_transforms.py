"""Partition values computed by Spark expressions equal the spec transforms computed in Python."""
import datetime as dt
import decimal
import random


from icefloe.core.types import parse_schema
from icefloe.iceberg.conversions import to_internal
from icefloe.iceberg.partitioning import build_spec
from icefloe.spark.iceberg_write import decode_partition_key, partition_key_expr

SCHEMA = parse_schema("l bigint, i int, s string, d date, ts timestamp, tn timestamp_ntz, dec decimal(9,2), b binary")
TERMS = ["year(ts)", "month(ts)", "day(ts)", "hour(ts)", "year(tn)", "month(tn)", "day(tn)", "hour(tn)",
         "year(d)", "month(d)", "day(d)", "bucket(16, l)", "bucket(7, s)", "bucket(5, i)", "truncate(10, l)",
         "truncate(3, i)", "truncate(2, s)", "truncate(50, dec)", "l", "s", "d", "ts", "tn", "dec", "b",
         "truncate(2, b)", "bucket(3, d)", "bucket(4, ts)"]


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
        keys = [r[0] for r in df.select(partition_key_expr(spec, SCHEMA)).collect()]
    finally:
        spark.conf.unset("spark.sql.session.timeZone")
    assert len(keys) == len(rows)
    for row, key in zip(rows, keys):
        got = decode_partition_key(key, spec, SCHEMA)
        values = {f.field_id: to_internal(f.field_type, v) for f, v in zip(SCHEMA.fields, row)}
        want = spec.partition_for_row(SCHEMA, values)
        assert got == want, (row, [str(f.transform) for f in spec.fields])
