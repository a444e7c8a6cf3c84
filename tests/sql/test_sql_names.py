"""Name resolution in ``cat.sql``, both formats: subqueries reading other tables inside DELETE,
UPDATE and MERGE; names after USE; struct fields; nested schema changes."""
import pytest

import icefloe


@pytest.fixture(params=["iceberg", "paimon"])
def fcat(request, warehouse, spark):
    return icefloe.Catalog(warehouse, format=request.param, spark=spark)


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _snapshots(cat, name):
    return len(list(cat.load_table(name).snapshots()))


def test_subqueries_read_other_tables_in_row_level_conditions(fcat):
    run = fcat.sql
    run(f"CREATE TABLE db.t (id bigint, v string) USING {fcat.format}")
    run(f"CREATE TABLE db.o (id bigint) USING {fcat.format}")
    run("INSERT INTO db.t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    run("INSERT INTO db.o VALUES (2)")
    run("DELETE FROM db.t WHERE id IN (SELECT id FROM db.o)")
    assert _rows(run("SELECT * FROM db.t")) == [(1, "a"), (3, "c"), (4, "d")]
    # correlated: t.id is the target's id although db.o has a column id too
    run("UPDATE db.t SET v = 'z' WHERE EXISTS (SELECT 1 FROM db.o WHERE o.id + 1 = t.id)")
    run("UPDATE db.t x SET v = (SELECT max(o.id) FROM db.o WHERE o.id < x.id) WHERE x.id = 4")
    assert _rows(run("SELECT * FROM db.t")) == [(1, "a"), (3, "z"), (4, "2")]
    run("MERGE INTO db.t t USING (SELECT 1 AS id, 'm' AS v UNION ALL SELECT 5, 'n' UNION ALL SELECT 6, 'p') s "
        "ON t.id = s.id WHEN MATCHED AND s.id NOT IN (SELECT id - 1 FROM db.o) THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED AND NOT EXISTS (SELECT 1 FROM db.o WHERE o.id + 4 = s.id) THEN INSERT *")
    assert _rows(run("SELECT * FROM db.t")) == [(1, "a"), (3, "z"), (4, "2"), (5, "n")]
    assert _snapshots(fcat, "db.t") == 5
