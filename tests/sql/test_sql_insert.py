"""INSERT ... PARTITION (static values), INSERT OVERWRITE ... PARTITION (static and dynamic), BY NAME."""
import datetime as dt

import pytest

from icefloe.sql.errors import NotSupportedYetError, SqlError
from tests.interop_util import pyiceberg_table


def _rows(run, q):
    return sorted(tuple(r) for r in run(q).collect())


def test_insert_with_static_partition_values(catalog):
    run = catalog.sql
    run("CREATE TABLE db.s (id bigint, region string, v int, day date) USING iceberg "
        "PARTITIONED BY (region, day)")
    run("INSERT INTO db.s PARTITION (region = 'eu', day = DATE '2024-05-01') SELECT 1, 10")
    run("INSERT INTO db.s PARTITION (region = 'us', day = '2024-05-02') VALUES (2, 20), (3, 30)")
    # a dynamic partition column takes its value from the query, in table order
    run("INSERT INTO db.s PARTITION (region = 'eu', day) SELECT 4, 40, DATE '2024-05-03'")
    # a column list gives the remaining columns in its own order
    run("INSERT INTO db.s PARTITION (region = 'ap') (day, id) VALUES (DATE '2024-05-04', 5)")
    assert _rows(run, "SELECT id, region, v, day FROM db.s") == [
        (1, "eu", 10, dt.date(2024, 5, 1)), (2, "us", 20, dt.date(2024, 5, 2)), (3, "us", 30, dt.date(2024, 5, 2)),
        (4, "eu", 40, dt.date(2024, 5, 3)), (5, "ap", None, dt.date(2024, 5, 4))]
    t = catalog.load_table("db.s")
    assert [s.operation for s in t.snapshots()] == ["append"] * 4
    parts = sorted(tuple(f.partition) for f in t.plan_files())
    assert parts == [("ap", 19847), ("eu", 19844), ("eu", 19846), ("us", 19845)]
    py = pyiceberg_table(t.metadata_location).scan(row_filter="region == 'us'").to_arrow()
    assert sorted(py.column("id").to_pylist()) == [2, 3]


def test_insert_overwrite_partition_static(catalog):
    run = catalog.sql
    run("CREATE TABLE db.o (id bigint, p string, q int) USING iceberg PARTITIONED BY (p, q)")
    run("INSERT INTO db.o VALUES (1, 'x', 1), (2, 'x', 2), (3, 'y', 1), (4, 'z', 1)")
    run("INSERT INTO db.o VALUES (5, 'x', 1)")
    t = catalog.load_table("db.o")
    before = t.current_snapshot().snapshot_id

    # only partition p = 'x' is replaced (both of its q values), the rest stays
    run("INSERT OVERWRITE db.o PARTITION (p = 'x') SELECT 10, 3")
    assert _rows(run, "SELECT id, p, q FROM db.o") == [(3, "y", 1), (4, "z", 1), (10, "x", 3)]
    t.refresh()
    snap = t.current_snapshot()
    assert snap.operation == "overwrite" and snap.parent_snapshot_id == before
    assert snap.summary["deleted-data-files"] == "3" and snap.summary["added-data-files"] == "1"
    assert snap.summary["deleted-records"] == "3" and snap.summary["total-records"] == "3"

    # both columns static: exactly that partition; the query gives the other columns
    run("INSERT OVERWRITE TABLE db.o PARTITION (p = 'y', q = 1) VALUES (30), (31)")
    assert _rows(run, "SELECT id, p, q FROM db.o") == [(4, "z", 1), (10, "x", 3), (30, "y", 1), (31, "y", 1)]
    # static overwrite with no rows empties the partition (Spark's static mode)
    run("INSERT OVERWRITE db.o PARTITION (p = 'z') SELECT id, q FROM db.o WHERE false")
    assert _rows(run, "SELECT id, p FROM db.o") == [(10, "x"), (30, "y"), (31, "y")]
    # whole-table overwrite without a PARTITION clause is unchanged
    assert run(f"SELECT count(*) AS n FROM db.o VERSION AS OF {before}").first().n == 5
    py = pyiceberg_table(catalog.load_table("db.o").metadata_location)
    assert sorted(py.scan().to_arrow().column("id").to_pylist()) == [10, 30, 31]


def test_overwrite_refuses_files_mixing_partitions(catalog):
    run = catalog.sql
    import pyarrow as pa

    run("CREATE TABLE db.m (id bigint, p string) USING iceberg")
    # one file, unpartitioned, holding both values
    catalog.load_table("db.m").append(pa.table({"id": pa.array([1, 2], pa.int64()), "p": ["x", "y"]}))
    run("ALTER TABLE db.m ADD PARTITION FIELD p")
    run("INSERT INTO db.m VALUES (3, 'x')")
    version = catalog.load_table("db.m").ops.current_version()
    with pytest.raises(NotSupportedYetError, match="may hold rows both inside and outside"):
        run("INSERT OVERWRITE db.m PARTITION (p = 'x') VALUES (9)")
    assert catalog.load_table("db.m").ops.current_version() == version
    assert _rows(run, "SELECT * FROM db.m") == [(1, "x"), (2, "y"), (3, "x")]
    # a partition that old file cannot hold (its bounds are x..y) is replaced normally
    run("INSERT OVERWRITE db.m PARTITION (p = 'z') VALUES (7)")
    assert _rows(run, "SELECT * FROM db.m") == [(1, "x"), (2, "y"), (3, "x"), (7, "z")]


def test_dynamic_partition_overwrite(catalog, spark):
    run = catalog.sql
    run("CREATE TABLE db.d (id bigint, day date) USING iceberg PARTITIONED BY (day)")
    run("INSERT INTO db.d VALUES (1, DATE '2024-01-01'), (2, DATE '2024-01-02'), (3, DATE '2024-01-03')")
    run("CREATE TABLE db.u (id bigint) USING iceberg")
    run("INSERT INTO db.u VALUES (1), (2)")
    key = "spark.sql.sources.partitionOverwriteMode"
    old = spark.conf.get(key)
    spark.conf.set(key, "dynamic")
    try:
        # only the partitions the query writes are replaced
        run("INSERT OVERWRITE db.d VALUES (20, DATE '2024-01-02'), (40, DATE '2024-01-04')")
        assert _rows(run, "SELECT id, day FROM db.d") == [
            (1, dt.date(2024, 1, 1)), (3, dt.date(2024, 1, 3)), (20, dt.date(2024, 1, 2)), (40, dt.date(2024, 1, 4))]
        snap = catalog.load_table("db.d").current_snapshot()
        assert snap.operation == "overwrite" and snap.summary["deleted-data-files"] == "1"
        # with a static value the mode still decides: dynamic replaces what the query writes
        run("INSERT OVERWRITE db.d PARTITION (day = DATE '2024-01-01') VALUES (10)")
        assert _rows(run, "SELECT id FROM db.d") == [(3,), (10,), (20,), (40,)]
        # no rows: nothing replaced, no snapshot
        n = len(catalog.load_table("db.d").snapshots())
        run("INSERT OVERWRITE db.d SELECT id, day FROM db.d WHERE false")
        assert len(catalog.load_table("db.d").snapshots()) == n
        # an unpartitioned table is one partition: replaced whole
        run("INSERT OVERWRITE db.u VALUES (7)")
        assert _rows(run, "SELECT id FROM db.u") == [(7,)]
    finally:
        spark.conf.set(key, old)
    py = pyiceberg_table(catalog.load_table("db.d").metadata_location)
    assert sorted(py.scan().to_arrow().column("id").to_pylist()) == [3, 10, 20, 40]


def test_insert_by_name(catalog):
    run = catalog.sql
    run("CREATE TABLE db.n (id bigint not null, name string, score double, p string) USING iceberg "
        "PARTITIONED BY (p)")
    run("INSERT INTO db.n BY NAME SELECT 'b' AS p, 2.5 AS score, 'ann' AS name, 1 AS id")
    run("INSERT INTO db.n BY NAME SELECT 2 AS ID, 'a' AS p")                # case-insensitive; name, score null
    run("INSERT INTO db.n PARTITION (p = 'c') BY NAME SELECT 'cy' AS name, 3 AS id")
    assert _rows(run, "SELECT id, name, score, p FROM db.n") == [
        (1, "ann", 2.5, "b"), (2, None, None, "a"), (3, "cy", None, "c")]
    with pytest.raises(SqlError, match="the query's column nope is not a column of the table"):
        run("INSERT INTO db.n BY NAME SELECT 1 AS id, 2 AS nope")
    with pytest.raises(SqlError, match="no column id, which is required"):
        run("INSERT INTO db.n BY NAME SELECT 'x' AS name")
    with pytest.raises(SqlError, match="gives column id twice"):
        run("INSERT INTO db.n BY NAME SELECT 1 AS id, 2 AS ID")
    with pytest.raises(SqlError, match="given by the query and by the PARTITION clause"):
        run("INSERT INTO db.n PARTITION (p = 'c') BY NAME SELECT 1 AS id, 'd' AS p")
    with pytest.raises(SqlError, match="type mismatch: cannot write boolean value to column score"):
        run("INSERT INTO db.n BY NAME SELECT 1 AS id, true AS score")
    assert run("SELECT count(*) AS n FROM db.n").first().n == 3


def test_partition_clause_errors(catalog):
    run = catalog.sql
    run("CREATE TABLE db.e (id bigint, p string, k int, n int, ts timestamp) USING iceberg "
        "PARTITIONED BY (p, k, days(ts))")
    version = catalog.load_table("db.e").ops.current_version()
    ts = "TIMESTAMP '2024-01-01 00:00:00'"
    with pytest.raises(SqlError) as ei:
        run(f"INSERT INTO db.e\n  PARTITION (nope = 'x') SELECT 1, 2, 3, {ts}")
    assert (ei.value.line, ei.value.column) == (2, 14)
    assert "unknown column nope in the PARTITION clause" in str(ei.value)
    with pytest.raises(SqlError) as ei:
        run(f"INSERT INTO db.e PARTITION (n = 1) SELECT 1, 'x', 2, {ts}")
    assert ei.value.column == 29
    assert "n, which is not a partition column of db.e (partition columns: p, k" in str(ei.value)
    with pytest.raises(SqlError, match="ts, which is not a partition column"):     # days(ts) is not identity
        run(f"INSERT INTO db.e PARTITION (ts = {ts}) SELECT 1, 'x', 2, 3")
    with pytest.raises(SqlError, match="must be a constant"):
        run(f"INSERT INTO db.e PARTITION (p = id) SELECT 1, 2, 3, {ts}")
    with pytest.raises(SqlError, match="PARTITION clause names p twice"):
        run(f"INSERT INTO db.e PARTITION (p = 'a', p = 'b') SELECT 1, 2, 3, {ts}")
    with pytest.raises(SqlError, match="type mismatch: cannot write TRUE to partition column k of type int") as ei:
        run(f"INSERT INTO db.e PARTITION (k = true) SELECT 1, 'x', 2, {ts}")
    assert ei.value.column == 29
    with pytest.raises(SqlError, match="INSERT gives 2 values per row but the table has, besides the PARTITION "
                                       r"clause's, 3 \(id, n, ts\)"):
        run("INSERT INTO db.e PARTITION (p = 'a', k = 1) SELECT 1, 2")
    assert catalog.load_table("db.e").ops.current_version() == version


def test_insert_takes_query_columns_by_position_even_where_two_share_a_name(catalog):
    # Spark names both of these columns ``id``: INSERT goes by position, so neither name is looked up
    run = catalog.sql
    run("CREATE TABLE db.dup (id bigint, s string, n bigint) USING iceberg")
    run("INSERT INTO db.dup SELECT id, cast(id AS string), id * 2 FROM range(3)")
    run("INSERT INTO db.dup (n, s, id) SELECT r.id, cast(r.id AS string), r.id + 10 FROM range(1) r")
    assert _rows(run, "SELECT id, s, n FROM db.dup") == [(0, "0", 0), (1, "1", 2), (2, "2", 4), (10, "0", 0)]
