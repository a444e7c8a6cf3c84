"""Struct fields of written data are matched to the table's by name, at any depth, in both formats:
Spark's own cast pairs struct fields by position, which put one field's values into another when
the data's fields came in another order. A field the data lacks is null (when the table allows
it, in Iceberg; Paimon wants every field); one the table lacks is refused, naming it, with the
table left as it was."""
import pytest

import icefloe
from icefloe.errors import SchemaMismatchError
from tests.nested_rows import nested_rows

SCHEMA = ("id bigint not null, st struct<x: int, y: int, z: string>, "
          "l array<struct<x: int, y: int>>, m map<string, struct<x: int, y: int>>")


@pytest.fixture(params=["iceberg", "paimon"])
def table(request, tmp_path, spark):
    return icefloe.Catalog(str(tmp_path / request.param), request.param, spark=spark).create_table("db.t", SCHEMA)


def test_struct_fields_land_by_name_at_any_depth(table, spark):
    table.append(spark.sql(
        "SELECT 1L AS id, named_struct('z', 'zz', 'y', 20, 'x', 10) AS st, "
        "array(named_struct('y', 2, 'x', 1)) AS l, map('k', named_struct('y', 4, 'X', 3)) AS m"))
    partial = spark.sql("SELECT 2L AS id, named_struct('y', 21) AS st, array(named_struct('x', 5)) AS l, "
                        "map('k', named_struct('y', 6)) AS m")
    if table.format == "iceberg":               # Iceberg: the fields left out are null
        table.append(partial)
    else:                                       # Paimon's writer wants every field of a row
        with pytest.raises(SchemaMismatchError, match="lacks field 'x'"):
            table.append(partial)
    table.append(spark.sql(                         # the table's order, as before
        "SELECT 3L AS id, named_struct('x', 30, 'y', 31, 'z', 'c') AS st, "
        "CAST(NULL AS array<struct<x: int, y: int>>) AS l, map('k', named_struct('x', 7, 'y', 8)) AS m"))
    assert nested_rows(table.refresh().to_spark()) == [
        (1, (10, 20, "zz"), [(1, 2)], {"k": (3, 4)}),
        *([(2, (None, 21, None), [(5, None)], {"k": (None, 6)})] if table.format == "iceberg" else []),
        (3, (30, 31, "c"), None, {"k": (7, 8)}),
    ]


def test_a_nested_field_the_table_lacks_is_refused(table, spark):
    table.append(spark.sql("SELECT 1L AS id, named_struct('x', 1, 'y', 2, 'z', 'a') AS st, "
                           "CAST(NULL AS array<struct<x: int, y: int>>) AS l, "
                           "CAST(NULL AS map<string, struct<x: int, y: int>>) AS m"))
    before = nested_rows(table.refresh().to_spark())
    snapshots = len(list(table.snapshots()))
    with pytest.raises(SchemaMismatchError, match="'w'"):
        table.append(spark.sql("SELECT 2L AS id, named_struct('x', 1, 'y', 2, 'z', 'b', 'w', 2) AS st"))
    assert nested_rows(table.refresh().to_spark()) == before
    assert len(list(table.snapshots())) == snapshots


def test_arrow_struct_fields_land_by_name_at_any_depth(table):
    import pyarrow as pa

    yx = pa.struct([("y", pa.int32()), ("x", pa.int32())])
    table.append(pa.table({
        "id": pa.array([1, 2], pa.int64()),
        "st": pa.array([{"z": "a", "y": 2, "x": 1}, None],
                       pa.struct([("z", pa.string()), ("y", pa.int32()), ("x", pa.int32())])),
        "l": pa.array([[{"y": 4, "x": 3}, None], None], pa.list_(yx)),
        "m": pa.array([[("k", {"y": 6, "x": 5})], None], pa.map_(pa.string(), yx)),
    }))
    assert nested_rows(table.refresh().to_spark()) == [(1, (1, 2, "a"), [(3, 4), None], {"k": (5, 6)}),
                                                 (2, None, None, None)]
    partial = pa.table({"id": pa.array([3], pa.int64()),
                        "st": pa.array([{"y": 5}], pa.struct([("y", pa.int32())]))})
    if table.format == "iceberg":               # as from Spark: null in Iceberg, refused in Paimon
        table.append(partial)
        assert nested_rows(table.refresh().to_spark())[-1] == (3, (None, 5, None), None, None)
    else:
        with pytest.raises(SchemaMismatchError, match="lacks field 'x'"):
            table.append(partial)
    snapshots = len(list(table.refresh().snapshots()))
    with pytest.raises(SchemaMismatchError, match="'w'"):
        table.append(pa.table({"id": pa.array([3], pa.int64()),
                               "st": pa.array([{"x": 1, "y": 2, "z": "b", "w": 2}],
                                              pa.struct([("x", pa.int32()), ("y", pa.int32()), ("z", pa.string()),
                                                         ("w", pa.int32())]))}))
    assert len(list(table.refresh().snapshots())) == snapshots


def test_merge_star_clauses_take_struct_fields_by_name(table, spark):
    table.append(spark.sql("SELECT 1L AS id, named_struct('x', 1, 'y', 2, 'z', 'a') AS st, "
                           "CAST(NULL AS array<struct<x: int, y: int>>) AS l, "
                           "CAST(NULL AS map<string, struct<x: int, y: int>>) AS m"))
    source = spark.sql(
        "SELECT id, named_struct('z', z, 'y', y, 'x', x) AS st, array(named_struct('y', y, 'x', x)) AS l, "
        "map('k', named_struct('y', y, 'x', x)) AS m "
        "FROM VALUES (1L, 10, 20, 'b'), (2L, 30, 40, 'c') AS v(id, x, y, z)")
    (table.merge(source, "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute())
    assert nested_rows(table.refresh().to_spark()) == [(1, (10, 20, "b"), [(10, 20)], {"k": (10, 20)}),
                                                 (2, (30, 40, "c"), [(30, 40)], {"k": (30, 40)})]
