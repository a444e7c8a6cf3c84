"""SQL's three-valued logic for NULL literals: the tree, the row evaluator and the Arrow
filter keep exactly the rows DuckDB keeps for the same WHERE clause."""
import duckdb
import pyarrow as pa
import pytest

from icefloe.core import expressions as ex
from icefloe.core.expressions.arrow import to_arrow_filter
from icefloe.core.types import parse_schema

SCHEMA = parse_schema("x int, s string")
DATA = pa.table({"x": pa.array([None, 0, 1, 2, 3, 4], pa.int32()),
                 "s": pa.array(["a", None, "b", "a", None, "c"])})

CONDITIONS = [
    "x = NULL", "NOT (x = NULL)", "x <> NULL", "NOT (x > NULL)", "NULL", "NOT NULL",
    "NOT (x > 1 AND NULL)", "x > 1 OR NULL", "NOT (x > 1 OR NULL)", "x > 1 AND NULL",
    "x IN (NULL)", "x NOT IN (NULL)", "x IN (1, NULL)", "x NOT IN (1, NULL)", "NOT (x NOT IN (1, NULL))",
    "NOT (x IN (1, 2, NULL) AND s = 'a')", "NULL OR x IS NULL", "NOT (NULL OR x IS NULL)",
    "NOT (NULL AND x IS NULL)", "x BETWEEN NULL AND 2", "NOT (x BETWEEN NULL AND 2)",
    "NOT (x BETWEEN 1 AND NULL)", "s = NULL OR s = 'a'", "NOT (s = NULL OR s = 'a')",
    "NOT (NOT (x = NULL))", "NOT (x = 1 OR (x = NULL AND s = 'b'))", "x >= 2 AND NOT (NULL AND s = 'c')",
]


def duckdb_rows(where: str) -> list:
    con = duckdb.connect()
    con.register("t", DATA.append_column("i", pa.array(range(DATA.num_rows))))
    return sorted(r[0] for r in con.execute(f"SELECT i FROM t WHERE {where}").fetchall())


def bound(where: str):
    return ex.bind(ex.parse_predicate(where), SCHEMA)


@pytest.mark.parametrize("where", CONDITIONS)
def test_arrow_filter_and_row_evaluator_match_duckdb(where):
    expected = duckdb_rows(where)
    e = bound(where)
    kept = DATA.append_column("i", pa.array(range(DATA.num_rows))).filter(to_arrow_filter(e))
    assert sorted(kept.column("i").to_pylist()) == expected, (where, e)
    rows = DATA.to_pylist()
    ids = {f.name: f.field_id for f in SCHEMA.fields}
    by_evaluator = [i for i, r in enumerate(rows) if ex.evaluate(e, {ids[k]: v for k, v in r.items()})]
    assert by_evaluator == expected, (where, e)


def test_the_oracle_is_not_vacuous():
    # the conditions select different row sets, both empty and not
    results = {tuple(duckdb_rows(w)) for w in CONDITIONS}
    assert () in results and len(results) >= 6


@pytest.mark.parametrize("a,b,and_,or_", [
    (ex.AlwaysNull(), ex.AlwaysTrue(), ex.AlwaysNull(), ex.AlwaysTrue()),
    (ex.AlwaysNull(), ex.AlwaysFalse(), ex.AlwaysFalse(), ex.AlwaysNull()),
    (ex.AlwaysNull(), ex.AlwaysNull(), ex.AlwaysNull(), ex.AlwaysNull()),
])
def test_kleene_folding(a, b, and_, or_):
    assert ex.and_(a, b) == and_ and ex.and_(b, a) == and_
    assert ex.or_(a, b) == or_ and ex.or_(b, a) == or_
    assert ex.not_(ex.AlwaysNull()) == ex.AlwaysNull()


def test_comparisons_with_null_parse_to_unknown_and_stay_unknown_under_not():
    assert ex.parse_predicate("x = NULL") == ex.AlwaysNull()
    assert ex.parse_predicate("NOT (x = NULL)") == ex.AlwaysNull()
    assert bound("NOT (x > 1 AND NULL)") != ex.AlwaysTrue()
    assert ex.rewrite_not(bound("NOT (x = NULL)")) == ex.AlwaysFalse()
