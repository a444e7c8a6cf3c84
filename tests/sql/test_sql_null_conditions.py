"""Row-level statements whose conditions compare with NULL: SQL's unknown selects no row,
and neither does its NOT, for both formats (Spark SQL on plain Parquet is the oracle)."""
import pytest

CASES = [
    "NOT (x = NULL)", "x = NULL", "NOT (x > 1 AND NULL)", "x NOT IN (1, NULL)", "x IN (1, NULL)",
    "NOT (x BETWEEN NULL AND 2)",
]
ROWS = "(1, 'a'), (2, 'b'), (3, NULL), (NULL, 'd')"


def _oracle(spark, where: str) -> list:
    """The rows a DELETE with ``where`` leaves: those where it is not TRUE."""
    df = spark.sql(f"SELECT * FROM VALUES {ROWS} AS t(x, s)")
    return sorted(((r.x, r.s) for r in df.exceptAll(df.where(where)).collect()), key=repr)


@pytest.mark.parametrize("where", CASES)
def test_iceberg_delete_keeps_what_spark_keeps(catalog, spark, where):
    run = catalog.sql
    run("CREATE TABLE db.n (x int, s string) USING iceberg")
    run(f"INSERT INTO db.n VALUES {ROWS}")
    run(f"DELETE FROM db.n WHERE {where}")
    left = sorted(((r.x, r.s) for r in run("SELECT * FROM db.n").collect()), key=repr)
    assert left == _oracle(spark, where), where


def test_paimon_reads_with_null_conditions_match_spark(catalog, spark, warehouse):
    import icefloe

    paimon = icefloe.Catalog(warehouse + "-p", "paimon", spark=spark)
    t = paimon.create_table("db.n", "x int, s string")
    t.append(spark.sql(f"SELECT * FROM VALUES {ROWS} AS t(x, s)"))
    df = spark.sql(f"SELECT * FROM VALUES {ROWS} AS t(x, s)")
    for where in CASES:
        expected = sorted(((r.x, r.s) for r in df.where(where).collect()), key=repr)
        got = t.to_arrow(where=where).to_pylist()
        assert sorted(((r["x"], r["s"]) for r in got), key=repr) == expected, where
