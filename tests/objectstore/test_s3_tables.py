"""Warehouses on an S3 server (moto, on the loopback address): both formats written by Spark and
Arrow, changed row by row, evolved, and read back by icefloe and by the independent readers
(pyiceberg with its own S3 FileIO, pypaimon with its own); nothing lands outside the bucket."""
import os

import pyarrow as pa
import pytest

import icefloe


def _rows(df, cols=("id", "name")):
    return sorted(tuple(r[c] for c in cols) for r in df.select(*cols).collect())


def _arrow_rows(table, cols=("id", "name")):
    d = table.select(list(cols)).to_pydict()
    return sorted(zip(*[d[c] for c in cols]))


def _pyiceberg_rows(t, props, cols=("id", "name")):
    from pyiceberg.table import StaticTable

    return _arrow_rows(StaticTable.from_metadata(t.metadata_location, properties=props).scan().to_arrow(), cols)


def test_iceberg_table_on_s3_written_changed_and_read_by_pyiceberg(spark, s3_server, s3_warehouse, tmp_path):
    props = s3_server.properties
    cat = icefloe.Catalog(s3_warehouse, spark=spark, **props)
    t = cat.create_table("db.t", "id bigint not null, name string", partitioned_by=["bucket(4, id)"],
                         properties={"write.update.mode": "merge-on-read", "write.merge.mode": "merge-on-read"})
    assert t.location.startswith(s3_warehouse)
    model = {i: str(i) for i in range(600)}

    def check():
        expected = sorted(model.items())
        assert _rows(t.to_spark()) == expected
        assert _arrow_rows(t.to_arrow()) == expected
        assert _pyiceberg_rows(t, props) == expected

    t.append(pa.table({"id": pa.array(range(200), pa.int64()), "name": [str(i) for i in range(200)]}))
    t.append(spark.range(200, 600).selectExpr("id", "cast(id as string) as name"))
    check()
    cat.sql("DELETE FROM db.t WHERE id % 7 = 0")                       # copy-on-write
    for i in [i for i in model if i % 7 == 0]:
        del model[i]
    check()
    cat.sql("UPDATE db.t SET name = 'u' WHERE id < 100")               # merge-on-read: position deletes
    model.update({i: "u" for i in model if i < 100})
    check()
    assert int(t.current_snapshot().summary["added-position-deletes"]) > 0
    spark.range(590, 610).selectExpr("id", "'m' as name").createOrReplaceTempView("s3_src")
    cat.sql("MERGE INTO db.t AS t USING s3_src AS s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT *")
    model.update({i: "m" for i in range(590, 610)})
    check()
    with t.update_schema() as u:
        u.add_column("extra", "int")
    t.append(spark.range(700, 710).selectExpr("id", "cast(id as string) as name", "cast(id as int) as extra"))
    model.update({i: str(i) for i in range(700, 710)})
    check()
    assert sorted(r.extra for r in t.to_spark(where="extra is not null").collect()) == list(range(700, 710))
    assert not os.path.exists(tmp_path / "s3:") and not os.path.exists("s3:")   # nothing local named after it
    bucket = s3_warehouse.split("/")[2]
    keys = s3_server.keys(bucket)
    assert all(k.startswith("warehouse/db/t/") for k in keys), keys[:5]
    assert any(k.endswith(".metadata.json") for k in keys) and any(k.endswith(".parquet") for k in keys)


def test_paimon_tables_on_s3_written_changed_and_read_by_pypaimon(spark, s3_server, s3_warehouse):
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    cat = icefloe.Catalog(s3_warehouse, format="paimon", spark=spark, **s3_server.properties)
    a = cat.create_table("db.a", "id bigint, name string, dt string", partitioned_by=["dt"])
    a.append(spark.range(0, 300).selectExpr("id", "cast(id as string) as name", "cast(id % 3 as string) as dt"))
    a.append(pa.table({"id": pa.array(range(300, 310), pa.int64()), "name": [str(i) for i in range(300, 310)],
                       "dt": ["0"] * 10}))
    cat.sql("DELETE FROM db.a WHERE id % 10 = 0")
    cat.sql("UPDATE db.a SET name = 'x' WHERE id < 50")
    model = {i: ("x" if i < 50 else str(i)) for i in range(310) if i % 10}
    k = cat.create_table("db.k", "id bigint not null, name string", properties={"primary-key": "id", "bucket": "2"})
    k.append(spark.range(0, 100).selectExpr("id", "'a' as name"))
    k.append(spark.range(50, 150).selectExpr("id", "'b' as name"))
    cat.sql("DELETE FROM db.k WHERE id < 10")
    kmodel = {i: ("a" if i < 50 else "b") for i in range(10, 150)}

    pcat = CatalogFactory.create({"warehouse": s3_warehouse, **s3_server.paimon_options})
    for table, expected in ((a, model), (k, kmodel)):
        assert _rows(table.to_spark()) == sorted(expected.items())
        assert _arrow_rows(table.to_arrow()) == sorted(expected.items())
        pt = pcat.get_table(f"db.{table.name.split('.')[-1]}")
        rb = pt.new_read_builder()
        assert _arrow_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())) == sorted(expected.items())


def test_tables_on_s3_survive_maintenance(spark, s3_server, s3_warehouse):
    """Expiry, orphan cleanup and check list and delete through the object store."""
    import time

    cat = icefloe.Catalog(s3_warehouse, spark=spark, **s3_server.properties)
    t = cat.create_table("db.m", "id bigint, name string")
    for i in range(3):
        t.append(pa.table({"id": pa.array([i], pa.int64()), "name": [str(i)]}))
    t.overwrite(pa.table({"id": pa.array([9], pa.int64()), "name": ["9"]}))
    orphan = f"{t.location}/data/stray.parquet"
    cat.io.write_bytes(orphan, b"not referenced")
    time.sleep(1.1)
    before = len(s3_server.keys(s3_warehouse.split("/")[2]))
    t.expire_snapshots(older_than=int(time.time() * 1000), retain_last=1)
    assert len(t.snapshots()) == 1
    assert len(s3_server.keys(s3_warehouse.split("/")[2])) < before       # the expired files are gone
    removed = t.remove_orphan_files(older_than=int(time.time() * 1000))
    assert orphan in [str(p) for p in removed]
    assert not cat.io.exists(orphan)
    assert _arrow_rows(t.to_arrow()) == [(9, "9")]
    assert _pyiceberg_rows(t, s3_server.properties) == [(9, "9")]
    report = t.check()
    assert report.ok, report.problems


@pytest.mark.parametrize("version", ["2", "3"])
def test_changelog_of_merge_on_read_deletes_on_s3(spark, s3_server, s3_warehouse, version):
    """The changelog reads added files, and the rows position deletes (v2) or deletion vectors (v3)
    removed, through the object store in Spark tasks."""
    cat = icefloe.Catalog(s3_warehouse, spark=spark, **s3_server.properties)
    t = cat.create_table("db.c", "id bigint not null, name string",
                         properties={"format-version": version, "write.delete.mode": "merge-on-read"})
    t.append(spark.range(10).selectExpr("id", "cast(id as string) as name"))
    t.delete("id < 3")
    t.delete("id = 7")
    rows = sorted((r["_change_ordinal"], r["_change_type"], r["id"]) for r in t.changelog().collect())
    assert rows == [(0, "INSERT", i) for i in range(10)] + [(1, "DELETE", i) for i in range(3)] + [(2, "DELETE", 7)]
    assert _rows(t.to_spark()) == [(i, str(i)) for i in range(10) if i >= 3 and i != 7]


def test_paimon_maintenance_on_s3(spark, s3_server, s3_warehouse):
    """Compaction of an append table and of a primary-key table, rename and drop, on the object
    store (rename is a copy of every object, then their deletion)."""
    cat = icefloe.Catalog(s3_warehouse, format="paimon", spark=spark, **s3_server.properties)
    a = cat.create_table("db.a", "id bigint, name string")
    for i in range(3):
        a.append(spark.range(i * 10, i * 10 + 10).selectExpr("id", "cast(id as string) as name"))
    files_before = len(a.plan_files())
    a.rewrite_data_files()
    assert len(a.plan_files()) < files_before
    assert _rows(a.to_spark()) == [(i, str(i)) for i in range(30)]
    k = cat.create_table("db.k", "id bigint not null, name string", properties={"primary-key": "id", "bucket": "1"})
    for i in range(3):
        k.append(spark.range(i * 5, i * 5 + 10).selectExpr("id", f"'r{i}' as name"))
    k.rewrite_data_files()
    assert len(k.plan_files()) == 1 and k.check().ok
    expected = sorted({**{i: "r0" for i in range(10)}, **{i: "r1" for i in range(5, 15)},
                       **{i: "r2" for i in range(10, 20)}}.items())
    assert _rows(k.to_spark()) == expected
    cat.rename_table("db.a", "db.b")
    assert _rows(cat.load_table("db.b").to_spark()) == [(i, str(i)) for i in range(30)]
    assert not cat.table_exists("db.a")
    cat.drop_table("db.b")
    assert cat.list_tables("db") == ["db.k"]
    bucket = s3_warehouse.split("/")[2]
    assert not [key for key in s3_server.keys(bucket) if "/db.db/a/" in key or "/db.db/b/" in key]
