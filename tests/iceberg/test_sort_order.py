"""Sort orders: declared in metadata (spec "Sorting"), used by both writers, read by pyiceberg."""
import json

import pyarrow as pa
import pyarrow.parquet as pq

from tests.interop_util import pyiceberg_table


def test_sort_order_declared_and_used(catalog, spark):
    t = catalog.create_table("db.sorted", "id bigint not null, name string, ts timestamp",
                             partitioned_by=["bucket(2, id)"])
    order = t.replace_sort_order("name desc nulls last", "id")
    assert order["order-id"] == 1
    meta = json.load(open(t.metadata_location))
    assert meta["default-sort-order-id"] == 1
    assert meta["sort-orders"][1] == {"order-id": 1, "fields": [
        {"transform": "identity", "source-id": 2, "direction": "desc", "null-order": "nulls-last"},
        {"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first"}]}
    assert t.replace_sort_order("name desc nulls last", "id")["order-id"] == 1  # same order, same id

    names = ["m", None, "z", "a", "k", "b", None, "q"]
    spark_df = spark.createDataFrame([(i, n, None) for i, n in enumerate(names)], "id bigint, name string, ts timestamp")
    t.append(spark_df)
    t.append(pa.table({"id": pa.array(range(100, 108), pa.int64()), "name": names}))
    files = t.plan_files()
    assert files and all(f.sort_order_id == 1 for f in files)
    for f in files:
        got = pq.read_table(f.file_path).to_pydict()
        rows = list(zip(got["name"], got["id"]))
        present = [r for r in rows if r[0] is not None]
        assert present == sorted(present, key=lambda r: (r[0], -r[1]), reverse=True)
        assert all(r[0] is None for r in rows[len(present):])  # nulls last
    assert pyiceberg_table(t.metadata_location).sort_order().order_id == 1
    assert t.to_spark().count() == 16

    assert t.replace_sort_order()["order-id"] == 0  # unsorted again


def test_each_sort_key_places_its_own_nulls(catalog, spark):
    """``a asc nulls last, b desc nulls first``: within a run of equal ``a``, ``b``'s nulls come
    first, whatever ``a``'s null order says (both writers)."""
    t = catalog.create_table("db.nulls", "a int, b int, id bigint not null")
    t.replace_sort_order("a asc nulls last", "b desc nulls first")
    rows = [(1, 5, 0), (None, 1, 1), (1, None, 2), (2, 7, 3), (None, None, 4), (1, 9, 5), (2, None, 6)]
    t.append(pa.table({"a": pa.array([r[0] for r in rows], pa.int32()), "b": pa.array([r[1] for r in rows], pa.int32()),
                       "id": pa.array([r[2] for r in rows], pa.int64())}))
    t.append(spark.createDataFrame(rows, "a int, b int, id bigint"))
    expected = [2, 5, 0, 6, 3, 4, 1]        # a=1: null, 9, 5; a=2: null, 7; a=null: null, 1
    files = t.plan_files()
    assert len(files) >= 2
    arrow_file = [f for f in files if f.record_count == len(rows)]
    assert arrow_file and pq.read_table(arrow_file[0].file_path).column("id").to_pylist() == expected
    for f in files:                      # Spark's tasks each write a part, in the same order
        got = pq.read_table(f.file_path).column("id").to_pylist()
        assert got == [i for i in expected if i in got]


def test_bucket_sort_field_files_are_recorded_unsorted(catalog):
    t = catalog.create_table("db.bsorted", "id bigint not null")
    t.replace_sort_order("bucket(4, id)")
    t.append(pa.table({"id": pa.array([3, 1, 2], pa.int64())}))
    assert [f.sort_order_id for f in t.plan_files()] == [0]
