"""The exact Arrow filter of a bound expression: the rows Spark SQL selects, nulls and NaN included."""
import math

import pyarrow as pa
import pytest

from icefloe.core import expressions as ex
from icefloe.core.expressions.arrow import to_arrow_filter
from icefloe.core.types import parse_schema
from icefloe.errors import UnsupportedFilterError

SCHEMA = parse_schema("id bigint, x double, s string, d date, t timestamp_ntz, z timestamp")
DATA = pa.table({
    "id": pa.array([1, 2, 3, None], pa.int64()),
    "x": pa.array([1.0, float("nan"), None, -1.0], pa.float64()),
    "s": pa.array(["ab", "b", None, "ac"]),
    "d": pa.array([0, 1, 2, None], pa.int32()).cast(pa.date32()),
    "t": pa.array([0, 10**6, None, 5], pa.int64()).cast(pa.timestamp("us")),
    "z": pa.array([0, 1, 2, 3], pa.int64()).cast(pa.timestamp("us", tz="UTC")),
})


def rows(text):
    expr = ex.bind(ex.parse_predicate(text), SCHEMA)
    return DATA.filter(to_arrow_filter(expr)).column("id").to_pylist()


@pytest.mark.parametrize("text, expected", [
    ("id > 1", [2, 3]),
    ("not (id > 1)", [1]),                          # null id: unknown, never selected
    ("not (id in (1, 2))", [3]),
    ("id is null", [None]),
    ("not (id is null)", [1, 2, 3]),
    ("x > 0", [1, 2]),                              # NaN sorts above every number, as in Spark
    ("x < 0", [None]),
    ("not (x > 0)", [None]),
    ("s like 'a%'", [1, None]),
    ("not (s like 'a%')", [2]),
    ("d = DATE '1970-01-02'", [2]),
    ("t >= TIMESTAMP_NTZ '1970-01-01 00:00:01'", [2]),
    ("id = 1.5", []),                               # no bigint equals 1.5
    ("id < 2.5 and s is not null", [1, 2]),
    ("x = CAST('NaN' AS DOUBLE)", [2]),             # NaN equals itself in Spark
])
def test_rows_match_spark_sql(text, expected):
    assert rows(text) == expected


@pytest.mark.parametrize("text", ["z > TIMESTAMP '1970-01-01 00:00:00'", "upper(s) = 'AB'"])
def test_what_arrow_cannot_do_exactly_is_refused(text):
    with pytest.raises(UnsupportedFilterError):
        rows(text)


def test_nan_is_never_below_a_number():
    assert all(not (isinstance(v, float) and math.isnan(v)) for v in DATA.filter(
        to_arrow_filter(ex.bind(ex.parse_predicate("x < 100"), SCHEMA))).column("x").to_pylist())
