"""``SELECT * FROM db.t.changes`` (Iceberg's spark-queries, the changelog of a table's rows)."""


def test_changes_table_lists_every_row_change(catalog):
    run = catalog.sql
    run("CREATE TABLE db.c (id bigint, v string) USING iceberg")
    run("INSERT INTO db.c VALUES (1, 'a'), (2, 'b')")
    run("DELETE FROM db.c WHERE id = 1")
    t = catalog.load_table("db.c")
    first, second = [s.snapshot_id for s in t.snapshots()]
    rows = sorted(tuple(r) for r in run("SELECT id, v, _change_type, _change_ordinal, _commit_snapshot_id "
                                        "FROM db.c.changes").collect())
    assert rows == [(1, "a", "DELETE", 1, second), (1, "a", "INSERT", 0, first), (2, "b", "INSERT", 0, first)]
