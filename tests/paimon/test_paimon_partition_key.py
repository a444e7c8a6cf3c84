"""A partitioned Paimon write through Spark names each row's partition by a string key
(``icefloe.spark.partition_key``) that the driver decodes into the partition a file is committed
under: every file's committed partition is exactly the partition values of the rows it holds, for
every type a partition column may have, nulls, empty strings and text holding the key's own separators."""
import datetime as dt
import decimal

import pyarrow.parquet as pq
import pytest

from icefloe.paimon.binary_row import decode_row

DDL = ("id bigint not null, s string, i int, b boolean, d date, ts timestamp_ntz, dec decimal(10,2), "
       "tiny tinyint, f double")
PARTS = ["s", "i", "b", "d", "ts", "dec", "tiny", "f"]
STRINGS = ["a_b", "", None, "é/=x", "n", "v1_2"]


def _row(k):
    def pick(values):
        return values[k % len(values)]

    return (k, pick(STRINGS), pick([0, -7, None, 2147483647, -2147483648]), pick([True, False, None]),
            pick([dt.date(1970, 1, 1), dt.date(1969, 12, 31), None, dt.date(2024, 2, 29)]),
            pick([dt.datetime(2024, 1, 2, 3, 4, 5, 678901), None, dt.datetime(1960, 6, 1)]),
            pick([decimal.Decimal("-12.34"), decimal.Decimal("0.00"), None, decimal.Decimal("99999999.99")]),
            pick([-128, 127, None, 0]),
            pick([0.5, -1e300, None, 1.25e-7]))


@pytest.mark.parametrize("props", [{}, {"bucket": "2", "bucket-key": "id"}], ids=["unaware", "bucketed"])
def test_each_file_is_committed_under_its_rows_partition(spark_catalog, paimon_spark, props):
    rows = [_row(k) for k in range(60)]
    t = spark_catalog.create_table("db.pk", DDL, partitioned_by=PARTS, properties=props)
    t.append(paimon_spark.createDataFrame(rows, DDL))
    t = spark_catalog.load_table("db.pk")
    schema = t.table_schema
    entries = t.plan()
    seen = set()
    for e in entries:
        committed = decode_row(e.partition, schema.partition_types)
        data = pq.read_table(t.store.data_file_path(e), columns=PARTS).to_pylist()
        held = {tuple(r[c] for c in PARTS) for r in data}
        assert held == {tuple(committed)}, (committed, held)
        seen.add(tuple(committed))
    expected = {tuple(r[1:]) for r in rows}
    assert seen == expected
    assert [tuple(r) for r in t.to_spark().orderBy("id").collect()] == rows
