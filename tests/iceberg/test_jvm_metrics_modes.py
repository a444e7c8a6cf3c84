"""Metrics modes against Apache Iceberg's Java runtime: the runtime writes rows to a table with
``write.metadata.metrics.*`` properties, icefloe writes the same rows (its Arrow and its Spark
path) to a table with the same properties, and the manifest entries' counts and bounds are equal."""
from __future__ import annotations

import pyarrow as pa
import pytest

import icefloe

TOP = "\U0010ffff"
NAMES = ["abcdefgh", "abc" + TOP + TOP + "zz", "ab"]
BINS = ["01ffffffff", "00", None]
SCHEMA = "id bigint, name string, b binary, s struct<x: string, y: int>"
PROPS = [
    {"write.metadata.metrics.default": "counts"},
    {"write.metadata.metrics.default": "truncate(4)"},
    {"write.metadata.metrics.default": "full"},
    {"write.metadata.metrics.default": "none", "write.metadata.metrics.column.name": "truncate(2)",
     "write.metadata.metrics.column.s.y": "counts", "write.metadata.metrics.column.s.x": "truncate(3)"},
]

_WRITE = """
data = [(3, names[0], bytearray.fromhex(bins[0]), ('y' * 20, 7)), (1, names[1], bytearray.fromhex(bins[1]), ('xy', None)),
        (2, names[2], None, None)]
spark.createDataFrame(data, schema).coalesce(1).writeTo(table).append()
result = 1
"""


@pytest.fixture(scope="module")
def jvm(tmp_path_factory, iceberg_runtime):
    return iceberg_runtime(None, tmp_path_factory.mktemp("jvm-metrics"))


def _arrow() -> pa.Table:
    return pa.table({"id": pa.array([3, 1, 2], pa.int64()), "name": NAMES,
                     "b": pa.array([None if h is None else bytes.fromhex(h) for h in BINS], pa.binary()),
                     "s": [{"x": "y" * 20, "y": 7}, {"x": "xy", "y": None}, None]})


def _spark(spark):
    return spark.createDataFrame([(3, NAMES[0], bytearray.fromhex(BINS[0]), ("y" * 20, 7)),
                                  (1, NAMES[1], bytearray.fromhex(BINS[1]), ("xy", None)),
                                  (2, NAMES[2], None, None)], SCHEMA).coalesce(1)


def _metrics(t) -> dict:
    (f,) = list(t.plan_files())

    def d(m):
        return {k: bytes(v) if isinstance(v, (bytes, bytearray, memoryview)) else v for k, v in (m or {}).items()}

    return {"record_count": f.record_count, "value_counts": d(f.value_counts),
            "null_value_counts": d(f.null_value_counts), "nan_value_counts": d(f.nan_value_counts),
            "lower_bounds": d(f.lower_bounds), "upper_bounds": d(f.upper_bounds),
            "sized_columns": sorted(f.column_sizes or {})}


@pytest.mark.parametrize("i", range(len(PROPS)))
def test_icefloe_writes_the_metrics_the_runtime_writes(jvm, catalog, spark, i):
    props = PROPS[i]
    name = f"db.mm{i}"
    tblprops = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
    jvm.sql(f"CREATE TABLE jvm.{name} ({SCHEMA.replace(': ', ' ')}) USING iceberg TBLPROPERTIES ({tblprops})")
    jvm.run(_WRITE, table=f"jvm.{name}", names=NAMES, bins=BINS, schema=SCHEMA)
    theirs = _metrics(icefloe.load_table(jvm.table_location(name)))
    # what the runtime wrote is what the modes say (so the comparison below is not between empties)
    if i == 0:
        assert theirs["value_counts"] == {1: 3, 2: 3, 3: 3, 5: 3, 6: 3} and not theirs["upper_bounds"]
    elif i == 1:
        assert (theirs["lower_bounds"][2], theirs["upper_bounds"][2]) == (b"ab", b"abd")     # the increment
        assert theirs["upper_bounds"][3] == b"\x02" and theirs["upper_bounds"][5] == b"yyyz"
    elif i == 2:
        assert theirs["upper_bounds"][5] == b"y" * 20
    else:
        assert set(theirs["lower_bounds"]) == {2, 5} and set(theirs["value_counts"]) == {2, 5, 6}
    for via, data in (("arrow", _arrow()), ("spark", _spark(spark))):
        t = catalog.create_table(f"db.ours{i}_{via}", SCHEMA, properties=props)
        t.append(data)
        assert _metrics(t) == theirs, (props, via)


def test_an_upper_bound_that_cannot_be_incremented_is_left_out_as_the_runtime_does(jvm, catalog):
    values = [TOP * 3, TOP + "a"]
    jvm.sql("CREATE TABLE jvm.db.top (name string) USING iceberg "
            "TBLPROPERTIES ('write.metadata.metrics.default' = 'truncate(2)')")
    jvm.run("spark.createDataFrame([(v,) for v in values], 'name string').coalesce(1).writeTo(table).append()\n"
            "result = 1", table="jvm.db.top", values=values)
    theirs = _metrics(icefloe.load_table(jvm.table_location("db.top")))
    assert theirs["lower_bounds"] == {1: (TOP + "a").encode()} and theirs["upper_bounds"] == {}
    t = catalog.create_table("db.top", "name string", properties={"write.metadata.metrics.default": "truncate(2)"})
    t.append(pa.table({"name": values}))
    assert _metrics(t) == theirs
