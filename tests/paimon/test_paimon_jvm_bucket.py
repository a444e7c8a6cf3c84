"""Paimon's bucket function run in the JVM tasks (``jvm/PaimonBucket.java``) gives every row the
bucket the Python function gives it (which ``test_paimon_bucket`` holds to pypaimon's): every key
type with a JVM form, nulls, strings and binaries on both sides of the 7 bytes kept inline, wide
decimals and fine timestamps (variable-length parts, reserved even when null), several keys at once.
A bucket-key table's write then runs no Python UDF."""
import datetime as dt
import decimal
import random
from dataclasses import dataclass

import pytest

from icefloe.paimon import types as pt
from icefloe.paimon.bucket import bucket_of
from icefloe.spark import jvm
from icefloe.spark.paimon_write import _jvm_bucket

UTC = dt.timezone.utc


@dataclass
class Key:
    name: str
    type: object


GEN = {
    "BOOLEAN": lambda r: r.random() < 0.5,
    "TINYINT": lambda r: r.randint(-128, 127),
    "SMALLINT": lambda r: r.randint(-(2 ** 15), 2 ** 15 - 1),
    "INT": lambda r: r.randint(-(2 ** 31), 2 ** 31 - 1),
    "BIGINT": lambda r: r.randint(-(2 ** 63), 2 ** 63 - 1),
    "FLOAT": lambda r: float(decimal.Decimal(r.randint(-10 ** 6, 10 ** 6)) / 64),
    "DOUBLE": lambda r: r.uniform(-1e9, 1e9),
    "STRING": lambda r: "".join(r.choice("ab-é字𝄞") for _ in range(r.randint(0, 12))),
    "BYTES": lambda r: bytes(r.randrange(256) for _ in range(r.randint(0, 20))),
    "DATE": lambda r: dt.date(1960, 1, 1) + dt.timedelta(days=r.randint(0, 40000)),
    "DECIMAL(10, 2)": lambda r: decimal.Decimal(r.randint(-10 ** 9, 10 ** 9)).scaleb(-2),
    "DECIMAL(25, 4)": lambda r: decimal.Decimal(r.randint(-10 ** 24, 10 ** 24)).scaleb(-4),
    "TIMESTAMP(3)": lambda r: dt.datetime(1965, 1, 1) + dt.timedelta(milliseconds=r.randint(0, 2 * 10 ** 12)),
    "TIMESTAMP(6)": lambda r: dt.datetime(1965, 1, 1) + dt.timedelta(microseconds=r.randint(0, 2 * 10 ** 15)),
    "TIMESTAMP_LTZ(6)": lambda r: dt.datetime(1965, 1, 1, tzinfo=UTC) + dt.timedelta(
        microseconds=r.randint(0, 2 * 10 ** 15)),
}
KEYS = [["INT"], ["BIGINT"], ["STRING"], ["BYTES"], ["DATE"], ["BOOLEAN", "TINYINT", "SMALLINT"],
        ["FLOAT", "DOUBLE"], ["DECIMAL(10, 2)"], ["DECIMAL(25, 4)"], ["TIMESTAMP(3)"], ["TIMESTAMP(6)"],
        ["TIMESTAMP_LTZ(6)"], ["BIGINT", "STRING", "DECIMAL(25, 4)", "TIMESTAMP(6)"]]


@pytest.mark.parametrize("key", KEYS, ids=["+".join(k) for k in KEYS])
def test_jvm_buckets_are_the_python_buckets(spark, key):
    from pyspark.sql.types import StructField, StructType

    if not jvm.available(spark):
        pytest.skip("icefloe's JVM classes are not loadable here")
    types = [pt.parse_atomic("VARBINARY(100)" if k == "BYTES" else k) for k in key]
    keys = [Key(f"c{i}", t) for i, t in enumerate(types)]
    rnd = random.Random("+".join(key))
    rows = [tuple(None if rnd.random() < 0.15 else GEN[k](rnd) for k in key) for _ in range(200)]
    rows += [tuple(None for _ in key)]
    schema = StructType([StructField("i", pt.to_spark_type(pt.parse_atomic("INT")))] +
                        [StructField(k.name, pt.to_spark_type(k.type)) for k in keys])
    df = spark.createDataFrame([(i,) + r for i, r in enumerate(rows)], schema)
    for n in (1, 7, 16):
        bucket = _jvm_bucket(keys, n)
        assert bucket is not None
        got = [r[1] for r in df.select("i", bucket).orderBy("i").collect()]
        want = [bucket_of(list(r), types, n) for r in rows]
        assert got == want, (key, n)
    assert len(set(got)) > 3          # 16 buckets: the rows spread, a constant would not pass


def test_a_time_key_falls_back_to_python(spark):
    assert _jvm_bucket([Key("t", pt.parse_atomic("TIME"))], 4) is None
