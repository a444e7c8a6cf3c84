"""Overwriting some partitions of a Paimon table: the API, SQL's static and dynamic modes, pypaimon's view."""
import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import SchemaMismatchError
from tests.paimon.test_paimon_interop import pypaimon_read


def rows(ids, ps, q="a"):
    return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array(ps, pa.int32()), "q": [q] * len(ids)})


def ids_of(t):
    return sorted(t.column("id").to_pylist())


@pytest.fixture
def table(paimon_catalog):
    t = paimon_catalog.create_table("db.o", "id bigint not null, p int, q string", partitioned_by=["p", "q"])
    t.append(rows([1, 2, 3], [1, 2, 3]))
    t.append(rows([4], [1], q="b"))
    return t


def test_dynamic_overwrite_replaces_only_partitions_with_new_rows(table, pypaimon_catalog):
    snap = table.overwrite(rows([10, 20], [1, 1]), dynamic=True)
    assert snap.commit_kind == "OVERWRITE"
    # partition (1, a) replaced; (2, a), (3, a) and (1, b) stay
    assert ids_of(table.to_arrow()) == ids_of(pypaimon_read(pypaimon_catalog, "db.o")) == [2, 3, 4, 10, 20]
    assert table.overwrite(rows([], []), dynamic=True) is None       # no rows: nothing replaced
    assert len(table.snapshots()) == 3


def test_static_overwrite_of_a_partial_partition_spec(table, pypaimon_catalog):
    table.overwrite(rows([7], [1], q="c"), partition={"p": 1})        # (1, a) and (1, b) go
    assert ids_of(table.to_arrow()) == ids_of(pypaimon_read(pypaimon_catalog, "db.o")) == [2, 3, 7]
    table.overwrite(rows([], []), partition={"p": "2", "q": "a"})     # values cast to the key types
    assert ids_of(table.to_arrow()) == [3, 7]


def test_static_overwrite_refuses_rows_outside_the_partition(table):
    before = [s.id for s in table.snapshots()]
    with pytest.raises(SchemaMismatchError, match="has rows in partition"):
        table.overwrite(rows([8, 9], [1, 2]), partition={"p": 1})
    with pytest.raises(SchemaMismatchError, match="not a partition key"):
        table.overwrite(rows([8], [1]), partition={"id": 1})
    assert [s.id for s in table.snapshots()] == before and ids_of(table.to_arrow()) == [1, 2, 3, 4]


def test_sql_insert_overwrite_partition_static_and_dynamic(paimon_warehouse, spark, pypaimon_catalog):
    cat = icefloe.Catalog(paimon_warehouse, format="paimon", spark=spark)
    run = cat.sql
    run("CREATE TABLE db.s (id bigint, p string) USING paimon PARTITIONED BY (p)")
    run("INSERT INTO db.s VALUES (1, 'x'), (2, 'y'), (3, 'z')")
    run("INSERT OVERWRITE db.s PARTITION (p = 'x') VALUES (10)")
    assert sorted(tuple(r) for r in run("SELECT * FROM db.s").collect()) == [(2, "y"), (3, "z"), (10, "x")]
    key = "spark.sql.sources.partitionOverwriteMode"
    old = spark.conf.get(key)
    spark.conf.set(key, "dynamic")
    try:
        run("INSERT OVERWRITE db.s VALUES (20, 'y'), (21, 'w')")
    finally:
        spark.conf.set(key, old)
    expected = [3, 10, 20, 21]
    assert sorted(r.id for r in run("SELECT id FROM db.s").collect()) == expected
    assert ids_of(pypaimon_read(pypaimon_catalog, "db.s")) == expected
    run("INSERT OVERWRITE db.s SELECT 99, 'q'")                       # static mode, no clause: whole table
    assert [r.id for r in run("SELECT id FROM db.s").collect()] == [99]
