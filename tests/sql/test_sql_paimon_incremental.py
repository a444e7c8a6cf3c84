"""Paimon's batch incremental queries in SQL (Paimon's sql-query page): ``paimon_incremental_query``
and ``paimon_incremental_between_timestamp``, with Paimon's default scan mode and retractions dropped."""
import pytest

from icefloe.sql.errors import NotSupportedYetError, SqlError


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_incremental_query_append_and_primary_key_tables(pcat):
    pcat.sql("CREATE TABLE default.a (id bigint, v string)")
    for i, v in ((1, "a"), (2, "b"), (3, "c")):
        pcat.sql(f"INSERT INTO default.a VALUES ({i}, '{v}')")
    # the doc's form: changes after snapshot 1 up to snapshot 3
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_query('default.a', 1, 3)")) == [(2, "b"), (3, "c")]
    pcat.sql("USE default")
    assert _rows(pcat.sql("SELECT x.v FROM paimon_incremental_query('a', 0, 2) x WHERE x.id > 1")) == [("b",)]
    times = {r.snapshot_id: r.commit_time for r in pcat.sql("SELECT * FROM default.`a$snapshots`").collect()}
    out = pcat.sql(f"SELECT * FROM paimon_incremental_between_timestamp('a', '{times[1]}', '{times[2]}')")
    assert _rows(out) == [(2, "b")]
    with pytest.raises(SqlError, match="no snapshot 9"):
        pcat.sql("SELECT * FROM paimon_incremental_query('a', 0, 9)")

    # a primary-key table without a changelog producer: its APPEND snapshots' records, merged by key, -D dropped
    pcat.sql("CREATE TABLE default.k (id bigint, v string) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    pcat.sql("INSERT INTO default.k VALUES (1, 'a'), (2, 'b')")
    pcat.sql("INSERT INTO default.k VALUES (1, 'a2')")
    pcat.sql("DELETE FROM default.k WHERE id = 2")
    pcat.sql("INSERT INTO default.k VALUES (3, 'c'), (1, 'a3')")
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_query('default.k', 1, 4)")) == [(1, "a3"), (3, "c")]
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_query('default.k', 1, 3)")) == [(1, "a2")]
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_query('default.k', 0, 1)")) == [(1, "a"), (2, "b")]

    # with a changelog producer: its changelog records, each one (not merged), retractions dropped
    pcat.sql("CREATE TABLE default.c (id bigint, v string) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
             "'changelog-producer' = 'input')")
    pcat.sql("INSERT INTO default.c VALUES (1, 'a')")
    pcat.sql("INSERT INTO default.c VALUES (1, 'b')")
    last = max(r.snapshot_id for r in pcat.sql("SELECT snapshot_id FROM default.`c$snapshots`").collect())
    assert _rows(pcat.sql(f"SELECT * FROM paimon_incremental_query('default.c', 0, {last})")) == [(1, "a"), (1, "b")]


def test_incremental_query_refusals(pcat):
    pcat.sql("CREATE TABLE default.p (id bigint, v string) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
             "'merge-engine' = 'partial-update')")
    pcat.sql("INSERT INTO default.p VALUES (1, 'a')")
    pcat.sql("CALL sys.create_tag('default.p', 'tag1')")
    with pytest.raises(NotSupportedYetError, match="merge-engine partial-update"):
        pcat.sql("SELECT * FROM paimon_incremental_query('default.p', 0, 1)")
    # between tags (the tags' file difference) any merge engine reads: a tag and itself differ in nothing
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_query('default.p', 'tag1', 'tag1')")) == []
    assert _rows(pcat.sql("SELECT * FROM paimon_incremental_to_auto_tag('default.p', '2024-12-04')")) == []
    with pytest.raises(SqlError, match="unknown table default.nope"):
        pcat.sql("SELECT * FROM paimon_incremental_query('default.nope', 0, 1)")
