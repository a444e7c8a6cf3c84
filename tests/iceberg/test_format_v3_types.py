"""Format v3 types. ``unknown``: never stored, read as null by icefloe and pyiceberg, the Java
runtime's core reading icefloe's metadata and icefloe reading the runtime's (its Spark 3.5
integration cannot read the type at all), and refused where the spec refuses it. Nanosecond timestamps (``timestamp_ns``,
``timestamptz_ns``): Arrow writes and reads keep every digit, Spark (which holds microseconds) reads them floored and writes its microseconds
exactly, partitions and bounds follow the spec, pyiceberg reads the nanoseconds back, the Java
runtime reads the metadata (its Spark 3.5 integration cannot read the type's data at all: "Cannot
convert unknown type to Spark: timestamp_ns"), row-level changes and compaction write the rows
they keep back with every digit, and where they cannot (a nested one) they are refused rather than
truncating it."""
from __future__ import annotations

import os
import struct
import sys

import pyarrow as pa
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from icefloe.core.types.model import NestedField, Schema, primitive_from_string  # noqa: E402
from icefloe.core.values import to_nanos  # noqa: E402
from icefloe.errors import UnsupportedFeatureError  # noqa: E402
from icefloe.iceberg.transforms import BucketTransform, DayTransform  # noqa: E402
from tests.interop_util import JVM_LOAD_TABLE, iceberg_referees, pyiceberg_table  # noqa: E402
from tests.nested_rows import nested_rows  # noqa: E402

# values with digits below the microsecond, one before 1970 (floored, not truncated toward zero)
NANOS = [to_nanos("2017-11-16T22:31:08.000001001"), to_nanos("2024-02-29T23:59:59.999999999"),
         -1_500, None]
MOR = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read",
       "write.merge.mode": "merge-on-read"}


def _schema():
    return Schema([NestedField(1, "id", primitive_from_string("long"), False),
                   NestedField(2, "ts", primitive_from_string("timestamp_ns"), False),
                   NestedField(3, "tz", primitive_from_string("timestamptz_ns"), False)])


def _arrow(ids, nanos):
    return pa.table({"id": pa.array(ids, pa.int64()), "ts": pa.array(nanos, pa.timestamp("ns")),
                     "tz": pa.array(nanos, pa.timestamp("ns", tz="UTC"))})


def _table(catalog, name, properties=None, partitioned_by=None):
    return catalog.create_table(name, _schema(), partitioned_by=partitioned_by,
                                properties={"format-version": "3", **(properties or {})})


def _arrow_nanos(t, col="ts"):
    arrow = t.refresh().to_arrow()
    return sorted(zip(arrow.column("id").to_pylist(), arrow.column(col).cast(pa.int64()).to_pylist()),
                  key=lambda r: r[0])


def test_nanoseconds_round_trip_through_arrow_and_read_floored_by_spark(catalog, spark):
    t = _table(catalog, "db.ns")
    t.append(_arrow([1, 2, 3, 4], NANOS))
    assert _arrow_nanos(t) == list(zip([1, 2, 3, 4], NANOS))
    assert _arrow_nanos(t, "tz") == list(zip([1, 2, 3, 4], NANOS))
    # Spark holds microseconds: each value floored (-1500 ns is -2 us, not -1)
    got = {r.id: r for r in t.to_spark().selectExpr("id", "unix_micros(cast(ts as timestamp)) as ts",
                                                    "unix_micros(tz) as tz").collect()}
    for i, v in zip([1, 2, 3, 4], NANOS):
        assert (got[i].ts, got[i].tz) == ((None, None) if v is None else (v // 1000, v // 1000)), i
    # Spark's microseconds go in exactly, through the Arrow writer (Parquet TIMESTAMP(NANOS))
    t.append(spark.sql("SELECT 5L AS id, timestamp_ntz'2024-01-01 00:00:00.123456' AS ts, "
                       "timestamp'2024-01-01 00:00:00.123456Z' AS tz"))
    assert _arrow_nanos(t)[-1] == (5, to_nanos("2024-01-01T00:00:00.123456"))
    assert _arrow_nanos(t, "tz")[-1] == (5, to_nanos("2024-01-01T00:00:00.123456"))
    # pyiceberg reads the nanoseconds icefloe wrote
    theirs = pyiceberg_table(t.metadata_location).scan().to_arrow()
    assert sorted(zip(theirs.column("id").to_pylist(), theirs.column("ts").cast(pa.int64()).to_pylist()),
                  key=lambda r: r[0]) == _arrow_nanos(t)
    # the data file's bounds are the nanosecond min and max, 8-byte little-endian
    files = [f for f in t.inspect.files().collect() if f.record_count == 4]
    assert len(files) == 1
    real = [v for v in NANOS if v is not None]
    assert struct.unpack("<q", bytes(files[0].lower_bounds[2]))[0] == min(real)
    assert struct.unpack("<q", bytes(files[0].upper_bounds[2]))[0] == max(real)


def test_partitions_of_nanosecond_columns_follow_the_spec(catalog):
    t = _table(catalog, "db.ns_parts", partitioned_by=["day(ts)", "bucket(8, tz)"])
    t.append(_arrow([1, 2, 3], NANOS[:3]))
    parts = sorted((r.partition.ts_day, r.partition.tz_bucket) for r in t.inspect.files().collect())
    ns = primitive_from_string("timestamp_ns")
    expected = sorted((_date(DayTransform().apply(ns, v)), BucketTransform(8).apply(ns, v)) for v in NANOS[:3])
    assert parts == expected
    # the spec's test vector: nanoseconds hash as their microseconds
    assert BucketTransform(8).apply(ns, to_nanos("2017-11-16T22:31:08.000001001")) == \
        BucketTransform(8).apply(primitive_from_string("timestamp"), to_nanos("2017-11-16T22:31:08.000001") // 1000)
    assert sorted(r[0] for r in _arrow_nanos(t)) == [1, 2, 3]
    assert sorted(pyiceberg_table(t.metadata_location).scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]


def _date(days):
    import datetime as dt

    return dt.date(1970, 1, 1) + dt.timedelta(days=days)


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_row_level_changes_keep_every_nanosecond_digit(catalog, spark, mode):
    """DELETE, UPDATE and MERGE rewrite rows through Spark, which holds microseconds: the rows they
    write back get their files' nanoseconds again; a value Spark assigns or inserts is its
    microseconds exactly. Row ids stay the rows' own."""
    props = {"write.delete.mode": mode, "write.update.mode": mode, "write.merge.mode": mode}
    t = _table(catalog, f"db.ns_{mode[:3]}", props)
    t.append(_arrow([1, 2, 3, 4], NANOS))
    ids = dict(tuple(r) for r in t.to_spark(row_lineage=True).selectExpr("id", "_row_id").collect())
    assert t.delete("id = 4")["deleted"] == 1
    assert t.update({"id": "id + 10"}, where="id = 1")["updated"] == 1          # its timestamps untouched
    assert t.update({"ts": "TIMESTAMP_NTZ'2020-01-01 00:00:00.000007'"}, where="id = 2")["updated"] == 1
    source = spark.sql("SELECT 3L AS id, TIMESTAMP'2021-01-01 00:00:00.000003Z' AS tz "
                       "UNION ALL SELECT 9L, TIMESTAMP'1969-12-31 23:59:59.999999Z'")
    (t.merge(source, "t.id = s.id").when_matched_update({"tz": "s.tz"})
     .when_not_matched_insert({"id": "s.id", "tz": "s.tz"}).execute())
    ts_2020, tz_2021 = to_nanos("2020-01-01T00:00:00.000007"), to_nanos("2021-01-01T00:00:00.000003")
    assert _arrow_nanos(t) == [(2, ts_2020), (3, NANOS[2]), (9, None), (11, NANOS[0])]
    assert _arrow_nanos(t, "tz") == [(2, NANOS[1]), (3, tz_2021), (9, -1000), (11, NANOS[0])]
    theirs = pyiceberg_table(t.metadata_location).scan().to_arrow()
    assert sorted(zip(theirs.column("id").to_pylist(), theirs.column("tz").cast(pa.int64()).to_pylist())) == \
        [(2, NANOS[1]), (3, tz_2021), (9, -1000), (11, NANOS[0])]
    after = dict(tuple(r) for r in t.to_spark(row_lineage=True).selectExpr("id", "_row_id").collect())
    assert after[11] == ids[1] and after[2] == ids[2] and after[3] == ids[3]


def _nested_nanos_table(catalog, name, props):
    from icefloe.core.types.model import ListType, MapType, StructType

    ns, string = primitive_from_string("timestamp_ns"), primitive_from_string("string")
    schema = Schema([NestedField(1, "id", primitive_from_string("long"), True),
                     NestedField(2, "st", StructType([NestedField(3, "ts", ns, False),
                                                      NestedField(4, "note", string, False)]), False),
                     NestedField(5, "l", ListType(6, ns, False), False),
                     NestedField(7, "m", MapType(8, string, 9, StructType([NestedField(10, "at", ns, False)]),
                                                 False), False)])
    t = catalog.create_table(name, schema, properties={"format-version": "3", **props})
    st = pa.struct([("ts", pa.timestamp("ns")), ("note", pa.string())])
    m = pa.map_(pa.string(), pa.struct([("at", pa.timestamp("ns"))]))
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                       "st": pa.array([{"ts": NANOS[0], "note": "a"}, {"ts": NANOS[1], "note": "b"}, None], st),
                       "l": pa.array([[NANOS[0], NANOS[2]], None, [NANOS[1]]], pa.list_(pa.timestamp("ns"))),
                       "m": pa.array([[("k", {"at": NANOS[1]})], [("k", {"at": NANOS[2]}), ("z", None)], None], m)}))
    return t


def _nested_nanos(t):
    """(id, st.ts, st.note, l, m as (key, at) pairs) per row, the timestamps as raw nanoseconds."""
    rows = t.refresh().to_arrow().sort_by("id")
    longs = {"st": pa.struct([("ts", pa.int64()), ("note", pa.string())]), "l": pa.list_(pa.int64()),
             "m": pa.map_(pa.string(), pa.struct([("at", pa.int64())]))}
    cols = {n: rows.column(n).cast(ty).to_pylist() for n, ty in longs.items()}
    return [(i, st and st["ts"], st and st["note"], lst, None if m is None else [(k, v and v["at"]) for k, v in m])
            for i, st, lst, m in zip(rows.column("id").to_pylist(), cols["st"], cols["l"], cols["m"])]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_nested_nanosecond_timestamps_keep_every_digit_through_changes_and_compaction(catalog, spark, mode):
    """Inside structs, lists and maps too: a rewritten row's column that Spark left as it read it
    (floored) gets its file's nanoseconds back, whole; one Spark changed is its microseconds."""
    props = {"write.delete.mode": mode, "write.update.mode": mode, "write.merge.mode": mode}
    t = _nested_nanos_table(catalog, f"db.ns_nested_{mode[:3]}", props)
    before = _nested_nanos(t)
    assert before[0] == (1, NANOS[0], "a", [NANOS[0], NANOS[2]], [("k", NANOS[1])])
    assert t.update({"st": "named_struct('ts', st.ts, 'note', 'u')"}, where="id = 1")["updated"] == 1
    assert t.update({"l": "array(TIMESTAMP_NTZ'2020-01-01 00:00:00.000007')"}, where="id = 3")["updated"] == 1
    assert t.delete("id = 2")["deleted"] == 1
    expected = [(1, NANOS[0], "u", [NANOS[0], NANOS[2]], [("k", NANOS[1])]),
                (3, None, None, [to_nanos("2020-01-01T00:00:00.000007")], None)]
    assert _nested_nanos(t) == expected
    t.append(pa.table({"id": pa.array([4], pa.int64())}))
    assert t.rewrite_data_files() is not None
    assert _nested_nanos(t) == expected + [(4, None, None, None, None)]


@pytest.mark.parametrize("partitioned_by", [None, ["day(ts)"]])
def test_compaction_keeps_every_nanosecond_digit(catalog, spark, partitioned_by):
    """Compaction carries nanosecond timestamps through Spark as their raw nanoseconds: the files it
    writes hold every digit, fold the deletes in and keep each row's id."""
    import glob

    import pyarrow.parquet as pq


    t = _table(catalog, f"db.ns_compact_{bool(partitioned_by)}", MOR, partitioned_by=partitioned_by)
    t.append(_arrow([1, 2], NANOS[:2]))
    t.append(_arrow([3, 4, 5], NANOS[2:] + [NANOS[0] + 1]))
    assert t.delete("id = 2")["deleted"] == 1
    ids_before = sorted(tuple(r) for r in t.to_spark(row_lineage=True).selectExpr("id", "_row_id").collect())
    expected = [(1, NANOS[0]), (3, NANOS[2]), (4, NANOS[3]), (5, NANOS[0] + 1)]
    assert _arrow_nanos(t) == expected
    assert t.rewrite_data_files() is not None
    t.refresh()
    assert t.current_snapshot().summary["total-delete-files"] == "0"       # the delete folded in
    assert _arrow_nanos(t) == expected and _arrow_nanos(t, "tz") == expected
    assert sorted(tuple(r) for r in t.to_spark(row_lineage=True).selectExpr("id", "_row_id").collect()) == ids_before
    theirs = pyiceberg_table(t.metadata_location).scan().to_arrow()
    assert sorted(zip(theirs.column("id").to_pylist(), theirs.column("ts").cast(pa.int64()).to_pylist()),
                  key=lambda r: (r[0], r[1] is None)) == expected
    for f in t.plan_files():             # stored as the spec's nanosecond type, not as longs
        assert pq.read_schema(f.file_path).field("ts").type == pa.timestamp("ns")
    assert len(glob.glob(os.path.join(t.location, "data", "**", "*.parquet"), recursive=True)) >= len(t.plan_files())



@pytest.fixture(scope="module", params=iceberg_referees())
def jvm(request, tmp_path_factory, iceberg_runtime):
    return iceberg_runtime(request.param, tmp_path_factory.mktemp("jvm-ns"))


JVM_META = JVM_LOAD_TABLE + """
C = jvm.org.apache.iceberg.types.Conversions
out = []
it = t.newScan().includeColumnStats().planFiles().iterator()
integer = jvm.java.lang.Class.forName('java.lang.Integer')
while it.hasNext():
    f = it.next().file()
    ft = t.schema().findType(2)
    lo = C.fromByteBuffer(ft, f.lowerBounds().get(2))
    hi = C.fromByteBuffer(ft, f.upperBounds().get(2))
    out.append([str(ft), f.recordCount(), lo, hi, f.partition().get(0, integer)])
result = out
"""


def test_the_java_runtime_reads_the_metadata_of_icefloes_nanosecond_table(catalog, jvm):
    t = _table(catalog, "db.ns_jvm", partitioned_by=["day(ts)"])
    t.append(_arrow([1, 2], NANOS[:2]))
    got = sorted(jvm.run(JVM_META, location=t.location))
    ns = primitive_from_string("timestamp_ns")
    assert got == sorted(["timestamp_ns", 1, v, v, DayTransform().apply(ns, v)] for v in NANOS[:2])


def _unknown_schema():
    return Schema([NestedField(1, "id", primitive_from_string("long"), False),
                   NestedField(2, "u", primitive_from_string("unknown"), False),
                   NestedField(3, "s", primitive_from_string("string"), False)])


def test_unknown_columns_are_never_stored_and_read_as_null(catalog, spark, jvm):
    import glob

    import pyarrow.parquet as pq

    from icefloe.errors import SchemaError

    with pytest.raises(SchemaError, match="unknown need format version 3"):
        catalog.create_table("db.u2", _unknown_schema())
    required = Schema([NestedField(1, "id", primitive_from_string("long"), False),
                       NestedField(2, "u", primitive_from_string("unknown"), True)])
    with pytest.raises(SchemaError, match="must be optional"):
        catalog.create_table("db.u3", required, properties={"format-version": "3"})
    t = catalog.create_table("db.u", _unknown_schema(), properties={"format-version": "3"})
    t.append(pa.table({"id": pa.array([1], pa.int64()), "s": ["a"]}))             # Arrow writer
    t.append(spark.sql("SELECT 2L AS id, 'b' AS s"))                               # Spark's writer
    files = glob.glob(os.path.join(t.location, "data", "*.parquet"))
    assert len(files) == 2 and all(pq.read_schema(f).names == ["id", "s"] for f in files)
    df = t.to_spark()
    assert df.schema["u"].dataType.simpleString() == "void"
    assert sorted(tuple(r) for r in df.collect()) == [(1, None, "a"), (2, None, "b")]
    assert sorted(tuple(r) for r in t.to_spark(where="u IS NULL and id > 1").collect()) == [(2, None, "b")]
    arrow = t.to_arrow()
    assert arrow.column("u").type == pa.null() and arrow.column("u").null_count == 2
    theirs = pyiceberg_table(t.metadata_location).scan().to_arrow()
    assert sorted(zip(theirs.column("id").to_pylist(), theirs.column("u").to_pylist())) == [(1, None), (2, None)]
    # the Java runtime's Spark 3.5 integration refuses the type ("Cannot convert unknown type to
    # Spark"); its core reads the schema and the files, which hold no column 2
    assert jvm.run(JVM_FILES, location=t.location) == ["unknown", 2, [[1, 3], [1, 3]]]


JVM_FILES = JVM_LOAD_TABLE + """
files = []
it = t.newScan().includeColumnStats().planFiles().iterator()
while it.hasNext():
    files.append(it.next().file())
result = [str(t.schema().findType(2)), sum(f.recordCount() for f in files),
          sorted(sorted(int(k) for k in f.valueCounts().keySet()) for f in files)]
"""


JVM_ADD_UNKNOWN = JVM_LOAD_TABLE + """
t.updateSchema().addColumn("u", jvm.org.apache.iceberg.types.Types.UnknownType.get()).commit()
result = 'ok'
"""


def test_icefloe_reads_and_appends_to_the_runtimes_table_with_an_unknown_column(spark, jvm):
    import icefloe

    jvm.sql("CREATE TABLE jvm.db.unknown (id bigint) USING iceberg TBLPROPERTIES ('format-version'='3')")
    jvm.sql("INSERT INTO jvm.db.unknown VALUES (1)")
    location = jvm.table_location("db.unknown")
    jvm.run(JVM_ADD_UNKNOWN, location=location)          # through Iceberg's API: its Spark cannot write it
    t = icefloe.load_table(location)
    assert str(t.metadata.schema.find_field(2).field_type) == "unknown"
    assert sorted(tuple(r) for r in t.to_spark().collect()) == [(1, None)]
    t.append(spark.sql("SELECT 3L AS id"))
    assert sorted(tuple(r) for r in t.refresh().to_spark().collect()) == [(1, None), (3, None)]
    assert sorted(pyiceberg_table(t.metadata_location).scan().to_arrow().column("id").to_pylist()) == [1, 3]
    got = jvm.run(JVM_FILES, location=location)
    assert got == ["unknown", 2, [[1], [1]]]


def _nested_unknown_schema():
    from icefloe.core.types.model import ListType, MapType, StructType

    return Schema([
        NestedField(1, "id", primitive_from_string("long"), True),
        NestedField(2, "st", StructType([NestedField(3, "a", primitive_from_string("int"), False),
                                         NestedField(4, "u", primitive_from_string("unknown"), False)]), False),
        NestedField(5, "l", ListType(6, StructType([NestedField(7, "b", primitive_from_string("string"), False),
                                                    NestedField(8, "u", primitive_from_string("unknown"), False)]),
                                     False), False),
        NestedField(9, "m", MapType(10, primitive_from_string("string"), 11,
                                    StructType([NestedField(12, "u", primitive_from_string("unknown"), False),
                                                NestedField(13, "c", primitive_from_string("int"), False)]),
                                    False), False)])


def _parquet_field_ids(path):
    import pyarrow.parquet as pq

    ids = []

    def walk(field):
        if field.metadata and b"PARQUET:field_id" in field.metadata:
            ids.append(int(field.metadata[b"PARQUET:field_id"]))
        t = field.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(t.field(i))
        elif pa.types.is_map(t):
            walk(t.key_field)
            walk(t.item_field)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(t.value_field)

    for f in pq.read_schema(path):
        walk(f)
    return sorted(ids)


JVM_LEAF_IDS = JVM_LOAD_TABLE + """
ids = set()
it = t.newScan().includeColumnStats().planFiles().iterator()
while it.hasNext():
    ids.update(int(k) for k in it.next().file().valueCounts().keySet())
result = sorted(ids)
"""


def test_unknown_fields_inside_structs_lists_and_maps_are_never_stored(catalog, spark, jvm):
    """The spec stores no ``unknown`` field at any depth: a struct's unknown field is left out of
    the file by both writers (and given or not by the data), read back as null, by Spark's own
    reader, by pyiceberg and by the Java runtime's core; a list or map of unknown has no stored
    form and its write is refused before anything is written."""
    import glob

    from icefloe.core.types.model import ListType

    t = catalog.create_table("db.nested_unknown", _nested_unknown_schema(), properties={"format-version": "3"})
    t.append(spark.sql("SELECT 1L AS id, named_struct('a', 1, 'u', null) AS st, "
                       "array(named_struct('b', 'x', 'u', null)) AS l, "
                       "map('k', named_struct('u', null, 'c', 10)) AS m"))
    t.append(spark.sql("SELECT 2L AS id, named_struct('a', 2) AS st, array(named_struct('b', 'y')) AS l, "
                       "map('k', named_struct('c', 20)) AS m"))            # the unknown fields left out
    t.append(pa.table({"id": pa.array([3], pa.int64()),
                       "st": pa.array([{"a": 3}], pa.struct([("a", pa.int32())])),
                       "l": pa.array([[{"b": "z"}, None]], pa.list_(pa.struct([("b", pa.string())]))),
                       "m": pa.array([[("k", {"c": 30})]], pa.map_(pa.string(), pa.struct([("c", pa.int32())])))}))
    t.append(pa.table({"id": pa.array([4], pa.int64()), "st": pa.array([None], pa.struct([("a", pa.int32())])),
                       "l": pa.array([None], pa.list_(pa.struct([("b", pa.string())]))),
                       "m": pa.array([None], pa.map_(pa.string(), pa.struct([("c", pa.int32())])))}))
    files = glob.glob(os.path.join(t.location, "data", "*.parquet"))
    assert len(files) == 4
    for f in files:      # (Spark's writer gives list elements and map keys and values no id)
        assert {1, 2, 3, 5, 7, 9, 13} <= set(_parquet_field_ids(f)) <= {1, 2, 3, 5, 6, 7, 9, 10, 11, 13}
    expected = [
        (1, (1, None), [("x", None)], {"k": (None, 10)}),
        (2, (2, None), [("y", None)], {"k": (None, 20)}),
        (3, (3, None), [("z", None), None], {"k": (None, 30)}),
        (4, None, None, None),
    ]

    df = t.refresh().to_spark()
    assert df.schema["st"].dataType.simpleString() == "struct<a:int,u:void>"
    assert nested_rows(df) == expected
    assert nested_rows(t.to_spark(where="st.u IS NULL AND st.a >= 2")) == expected[1:3]
    arrow = sorted(t.to_arrow().to_pylist(), key=lambda r: r["id"])
    assert arrow[0]["st"] == {"a": 1, "u": None} and arrow[2]["l"] == [{"b": "z", "u": None}, None]
    theirs = sorted(pyiceberg_table(t.metadata_location).scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [r["st"] and r["st"]["a"] for r in theirs] == [1, 2, 3, None]
    # (pyiceberg 0.12 gives a null map as an empty one)
    assert [dict(r["m"] or []).get("k", {}).get("c") for r in theirs] == [10, 20, 30, None]
    assert jvm.run(JVM_LEAF_IDS, location=t.location) == [1, 3, 7, 10, 13]
    # a row-level change rewrites a file through Spark: still nothing of type unknown stored
    t.update({"st": "named_struct('a', 22, 'u', null)"}, where="id = 2")
    assert nested_rows(t.refresh().to_spark())[1] == (2, (22, None), [("y", None)], {"k": (None, 20)})
    live = [f.file_path for f in t.plan_files()]
    assert all(7 in _parquet_field_ids(p) and 4 not in _parquet_field_ids(p) for p in live)

    listed = Schema([NestedField(1, "id", primitive_from_string("long"), True),
                     NestedField(2, "l", ListType(3, primitive_from_string("unknown"), False), False)])
    lt = catalog.create_table("db.list_of_unknown", listed, properties={"format-version": "3"})
    for rows in (spark.sql("SELECT 1L AS id, array(null) AS l"),
                 pa.table({"id": pa.array([1], pa.int64()), "l": pa.array([[None]], pa.list_(pa.null()))})):
        with pytest.raises(UnsupportedFeatureError, match="'l.element' is of type unknown"):
            lt.append(rows)
    assert lt.refresh().current_snapshot() is None
    assert glob.glob(os.path.join(lt.location, "data", "**", "*.parquet"), recursive=True) == []
