"""Schema evolution (spec: "Schema Evolution"): ids are forever, data follows ids, every reader agrees.

Each step is checked three ways: the metadata against the spec's rules (ids,
schema ids, last-column-id, name mapping), and the rows of the current and of
time-travelled snapshots as icefloe (Spark), pyiceberg and DuckDB read them.
The other direction: a table that pyiceberg evolved reads the same in icefloe.
"""
from __future__ import annotations

import json
from decimal import Decimal

import pyarrow as pa
import pytest

from icefloe.errors import SchemaError
from icefloe.iceberg.schema_update import UpdateSchema, can_promote
from icefloe.core.types import parse_type
from tests.interop_util import duckdb_connection, pyiceberg_table

DDL = "id bigint not null, a int, b string, f float, amount decimal(9,2), info struct<x: int, y: string>"


def _batch(ids, **cols):
    data = {"id": pa.array(ids, pa.int64())}
    data.update(cols)
    return pa.table(data)


def _first_rows():
    return _batch([1, 2], a=pa.array([10, None], pa.int32()), b=["x", "y"], f=pa.array([1.5, 2.5], pa.float32()),
                  amount=pa.array([Decimal("1.25"), Decimal("-3.50")], pa.decimal128(9, 2)),
                  info=pa.array([{"x": 1, "y": "p"}, None], pa.struct([("x", pa.int32()), ("y", pa.string())])))


@pytest.fixture(scope="module")
def duck():
    con = duckdb_connection()
    con.execute("SET TimeZone = 'UTC'")
    yield con
    con.close()


def _sorted(rows):
    return sorted(rows, key=lambda r: r["id"])


def readers_agree(t, duck, snapshot_id=None, expected=None):
    """Spark (icefloe), pyiceberg and DuckDB return the same rows; returns them.

    Without ``snapshot_id`` the table is read as it is now (current schema); with one,
    as of that snapshot (time travel: the snapshot's own schema).
    """
    loc = t.metadata_location
    if snapshot_id is None:
        ours = t.to_spark().toArrow().to_pylist()
        theirs = pyiceberg_table(loc).scan().to_arrow().to_pylist()
        quack = duck.execute(f"SELECT * FROM iceberg_scan('{loc}')").fetch_arrow_table().to_pylist()
    else:
        ours = t.to_spark(snapshot_id=snapshot_id).toArrow().to_pylist()
        theirs = pyiceberg_table(loc).scan(snapshot_id=snapshot_id).to_arrow().to_pylist()
        quack = duck.execute(f"SELECT * FROM iceberg_scan('{loc}', snapshot_from_id => {snapshot_id})") \
            .fetch_arrow_table().to_pylist()
    key = next((k for k in ("id", "key") if ours and k in ours[0]), None)
    ours, theirs, quack = (sorted(x, key=lambda r: r[key] if key else repr(r)) for x in (ours, theirs, quack))
    assert ours == theirs, "pyiceberg"
    assert ours == quack, "duckdb"
    if expected is not None:
        assert ours == sorted(expected, key=lambda r: r[key] if key else repr(r))
    return ours


@pytest.fixture
def table(catalog):
    t = catalog.create_table("db.evo", DDL)
    t.append(_first_rows())
    return t


# --------------------------------------------------------------------------- the rules
@pytest.mark.parametrize("old, new, ok", [
    ("int", "bigint", True), ("float", "double", True), ("decimal(9,2)", "decimal(12,2)", True),
    ("bigint", "int", False), ("double", "float", False), ("int", "string", False), ("int", "double", False),
    ("decimal(9,2)", "decimal(12,3)", False), ("decimal(9,2)", "decimal(8,2)", False), ("date", "timestamp", False),
])
def test_type_promotions_are_the_specs(old, new, ok):
    assert can_promote(parse_type(old), parse_type(new)) is ok


def test_one_block_is_one_version_with_new_ids(table, duck):
    before_version = table.ops.current_version()
    s1 = table.current_snapshot().snapshot_id
    with table.update_schema() as u:
        u.add_column("c", "string", doc="new")
        u.add_column("info.z", "bigint")
        u.add_column("tags", "array<struct<k: string, v: int>>")
    meta = table.metadata
    assert table.ops.current_version() == before_version + 1
    assert [s.schema_id for s in meta.schemas] == [0, 1] and meta.current_schema_id == 1
    # columns 1..8 existed (info.x = 7, info.y = 8); new ids continue after last-column-id
    assert table.schema.find_field("c").field_id == 9 and table.schema.find_field("c").doc == "new"
    assert table.schema.find_field("info.z").field_id == 10
    tags = table.schema.find_field("tags")
    assert tags.field_id == 11 and tags.field_type.element_id == 12
    assert [f.field_id for f in tags.field_type.element_type.fields] == [13, 14]
    assert meta.last_column_id == 14
    tag = pa.struct([("k", pa.string()), ("v", pa.int32())])
    table.append(_batch([3], c=["new"], tags=pa.array([[{"k": "a", "v": 1}]], pa.list_(tag))))
    rows = readers_agree(table, duck)
    assert [(r["id"], r["c"], r["tags"]) for r in rows] == \
        [(1, None, None), (2, None, None), (3, "new", [{"k": "a", "v": 1}])]
    # the old snapshot still reads with its own schema
    old = readers_agree(table, duck, s1)
    assert set(old[0]) == {"id", "a", "b", "f", "amount", "info"}


def test_block_that_raises_commits_nothing(table):
    version = table.ops.current_version()
    with pytest.raises(RuntimeError):
        with table.update_schema() as u:
            u.add_column("c", "string")
            raise RuntimeError("changed my mind")
    assert table.refresh().ops.current_version() == version and table.metadata.current_schema_id == 0


@pytest.mark.parametrize("change, message", [
    (lambda u: u.add_column("c", "string", required=True), "required"),
    (lambda u: u.add_column("a", "string"), "already exists"),
    (lambda u: u.add_column("b.c", "int"), "not a struct"),
    (lambda u: u.update_column("a", "string"), "only allows"),
    (lambda u: u.update_column("id", "int"), "only allows"),
    (lambda u: u.update_column("amount", "decimal(12,3)"), "only allows"),
    (lambda u: u.update_column("a", required=True), "required"),
    (lambda u: u.rename_column("a", "b"), "already used"),
    (lambda u: u.rename_column("a", "x.y"), "dots"),
    (lambda u: u.delete_column("nope"), "no column"),
    (lambda u: u.move_after("info.x", "a"), "same struct"),
    (lambda u: u.move_before("a", "a"), "itself"),
])
def test_illegal_changes_are_rejected_clearly(table, change, message):
    version = table.ops.current_version()
    with pytest.raises(SchemaError, match=message):
        with table.update_schema() as u:
            change(u)
    assert table.refresh().ops.current_version() == version


def test_partition_source_columns_cannot_be_dropped(catalog):
    t = catalog.create_table("db.p", "id bigint, ts timestamp", partitioned_by=["day(ts)"])
    with pytest.raises(SchemaError, match="partition field 'ts_day'"):
        with t.update_schema() as u:
            u.delete_column("ts")


def test_rename_delete_readd_promote_reorder_keep_data_by_id(table, duck):
    s1 = table.current_snapshot().snapshot_id
    with table.update_schema() as u:
        u.rename_column("b", "bee")
        u.update_column("a", "bigint")
        u.update_column("f", "double")
        u.update_column("amount", "decimal(20,2)")
        u.delete_column("info")
        u.add_column("info", "struct<x: int, y: string>")   # same name, new ids: old values stay buried
        u.rename_column("id", "key")
        u.move_first("bee")
        u.move_after("key", "a")
    schema = table.schema
    assert schema.column_names == ["bee", "a", "key", "f", "amount", "info"]
    assert schema.find_field("key").field_id == 1 and schema.find_field("bee").field_id == 3
    assert str(schema.find_field("a").field_type) == "long"
    assert schema.find_field("info").field_id == 9  # never reuses 6
    s2 = table.append(pa.table({
        "key": pa.array([3], pa.int64()), "a": pa.array([5_000_000_000], pa.int64()), "bee": ["z"],
        "f": pa.array([0.1], pa.float64()), "amount": pa.array([Decimal("12345678901.25")], pa.decimal128(20, 2)),
        "info": pa.array([{"x": 9, "y": "q"}], pa.struct([("x", pa.int32()), ("y", pa.string())]))}))
    rows = readers_agree(table, duck)
    assert rows[0] == {"bee": "x", "a": 10, "key": 1, "f": 1.5, "amount": Decimal("1.25"), "info": None}
    assert rows[1]["a"] is None and rows[1]["amount"] == Decimal("-3.50")
    assert rows[2]["a"] == 5_000_000_000 and rows[2]["info"] == {"x": 9, "y": "q"}
    # time travel: the first snapshot under its own schema
    old = readers_agree(table, duck, s1)
    assert old[0] == {"id": 1, "a": 10, "b": "x", "f": 1.5, "amount": Decimal("1.25"), "info": {"x": 1, "y": "p"}}
    assert s2.schema_id == table.metadata.current_schema_id


def test_a_plain_read_uses_the_current_schema_before_any_new_commit(table, duck):
    with table.update_schema() as u:
        u.add_column("c", "string")
        u.rename_column("b", "bee")
    rows = readers_agree(table, duck)
    assert [(r["bee"], r["c"]) for r in rows] == [("x", None), ("y", None)]


def test_nested_paths_reach_list_elements_and_map_values(catalog, duck):
    t = catalog.create_table("db.nest", "id bigint, nums array<int>, m map<string, float>, "
                                        "pts array<struct<x: int>>")
    t.append(pa.table({"id": pa.array([1], pa.int64()), "nums": pa.array([[1, 2]], pa.list_(pa.int32())),
                       "m": pa.array([[("k", 1.5)]], pa.map_(pa.string(), pa.float32())),
                       "pts": pa.array([[{"x": 7}]], pa.list_(pa.struct([("x", pa.int32())])))}))
    with t.update_schema() as u:
        u.update_column("nums.element", "bigint")
        u.update_column("m.value", "double")
        u.add_column("pts.y", "string")           # the element struct of a list, named through the list
        u.rename_column("pts.element.x", "xx")
    schema = t.schema
    assert str(schema.find_field("nums").field_type.element_type) == "long"
    assert str(schema.find_field("m").field_type.value_type) == "double"
    assert [f.name for f in schema.find_field("pts").field_type.element_type.fields] == ["xx", "y"]
    with pytest.raises(SchemaError, match="map key"):
        with t.update_schema() as u:
            u.update_column("m.key", "int")
    t.append(pa.table({"id": pa.array([2], pa.int64()), "nums": pa.array([[5_000_000_000]], pa.list_(pa.int64()))}))
    rows = sorted(t.to_spark().toArrow().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "nums": [1, 2], "m": [("k", 1.5)], "pts": [{"xx": 7, "y": None}]},
                    {"id": 2, "nums": [5_000_000_000], "m": None, "pts": None}]
    theirs = sorted(pyiceberg_table(t.metadata_location).scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert theirs[0] == rows[0]


def test_identical_schema_reuses_its_id_and_ids_never_come_back(table):
    with table.update_schema() as u:
        u.add_column("tmp", "int")
    assert table.metadata.current_schema_id == 1 and table.metadata.last_column_id == 9
    with table.update_schema() as u:
        u.delete_column("tmp")
    meta = table.metadata
    assert meta.current_schema_id == 0 and len(meta.schemas) == 2  # back to schema 0, as Java does
    assert meta.last_column_id == 9
    with table.update_schema() as u:
        u.add_column("tmp", "int")
    assert table.schema.find_field("tmp").field_id == 10 and table.metadata.current_schema_id == 2
    version = table.ops.current_version()
    with table.update_schema() as u:
        u.update_column("a", "int")   # no change at all: nothing is written
    assert table.refresh().ops.current_version() == version


def test_name_mapping_follows_renames_and_keeps_old_names(table):
    with table.update_schema() as u:
        u.rename_column("b", "bee")
        u.rename_column("info.x", "ex")
        u.delete_column("f")
        u.add_column("f", "double")
    mapping = {e["field-id"]: e for e in json.loads(table.properties["schema.name-mapping.default"])}
    assert mapping[3]["names"] == ["b", "bee"]
    assert [f["names"] for f in mapping[6]["fields"]] == [["x", "ex"], ["y"]]
    assert mapping[9]["names"] == ["f"]
    assert 4 not in mapping  # the dropped f's only name now belongs to the new f
    # pyiceberg parses it
    from pyiceberg.table.name_mapping import parse_mapping_from_json

    parsed = parse_mapping_from_json(table.properties["schema.name-mapping.default"])
    assert {name: f.field_id for f in parsed for name in f.names}["bee"] == 3


def test_a_lost_race_is_replayed_on_the_winners_schema(table):
    first = UpdateSchema(table.ops)
    second = UpdateSchema(table.ops)
    first.add_column("c1", "string")
    second.add_column("c2", "string")
    first.commit()
    second.commit()   # based on the old version: replays on the latest
    schema = table.refresh().schema
    assert schema.find_field("c1").field_id == 9 and schema.find_field("c2").field_id == 10
    clash = UpdateSchema(table.ops)
    clash.rename_column("c1", "d")
    with table.update_schema() as u:
        u.delete_column("c1")
    with pytest.raises(SchemaError, match="no column 'c1'"):
        clash.commit()


def test_pushdown_never_reads_a_dropped_columns_statistics(table):
    """A column dropped and re-added under the same name: Spark's Parquet filter pushdown looks
    columns up by name, so a filter on the new column must not be judged by the old one's stats."""
    from icefloe.spark.iceberg_evolved_read import ambiguous_columns, read_parquet_by_field_id

    with table.update_schema() as u:
        u.delete_column("f")
        u.add_column("f", "double")
    table.append(_batch([3], f=pa.array([9.0], pa.float64())))
    schema = table.schema
    assert ambiguous_columns(schema, table.metadata.schemas) == {schema.find_field("f").field_id}
    paths = [t.path for t in table.plan_tasks()]
    df = read_parquet_by_field_id(table.spark, paths, schema, table.metadata.schemas)
    assert sorted(r["id"] for r in df.where("f IS NULL").collect()) == [1, 2]
    assert [r["id"] for r in df.where("f > 5").collect()] == [3]


def test_to_spark_filters_a_readded_column_correctly(table):
    with table.update_schema() as u:
        u.delete_column("f")
        u.add_column("f", "double")
    table.append(_batch([3], f=pa.array([9.0], pa.float64())))
    assert sorted(r["id"] for r in table.to_spark(where="f IS NULL").collect()) == [1, 2]


# --------------------------------------------------------------------------- pyiceberg evolves, we read
def _pyiceberg_catalog(warehouse):
    """A minimal pyiceberg catalog over a local warehouse (sqlalchemy, needed by SqlCatalog, is absent)."""
    from pyiceberg.catalog import MetastoreCatalog
    from pyiceberg.serializers import FromInputFile
    from pyiceberg.table import CommitTableResponse, Table

    class DictCatalog(MetastoreCatalog):
        def __init__(self):
            super().__init__("dict", warehouse=warehouse)
            self.locations: dict = {}

        def create_table(self, identifier, schema, location=None, partition_spec=None, sort_order=None,
                         properties=None):
            from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
            from pyiceberg.table.sorting import UNSORTED_SORT_ORDER

            staged = self._create_staged_table(identifier, schema, location,
                                               partition_spec or UNPARTITIONED_PARTITION_SPEC,
                                               sort_order or UNSORTED_SORT_ORDER, properties or {})
            self._write_metadata(staged.metadata, staged.io, staged.metadata_location)
            self.locations[self.identifier_to_tuple(identifier)] = staged.metadata_location
            return self.load_table(identifier)

        def load_table(self, identifier):
            ident = self.identifier_to_tuple(identifier)
            loc = self.locations[ident]
            io = self._load_file_io(location=loc)
            meta = FromInputFile.table_metadata(io.new_input(loc))
            return Table(identifier=ident, metadata=meta, metadata_location=loc,
                         io=self._load_file_io(meta.properties, loc), catalog=self)

        def commit_table(self, table, requirements, updates):
            current = self.load_table(table.name())
            staged = self._update_and_stage_table(current, table.name(), requirements, updates)
            self._write_metadata(staged.metadata, staged.io, staged.metadata_location)
            self.locations[self.identifier_to_tuple(table.name())] = staged.metadata_location
            return CommitTableResponse(metadata=staged.metadata, metadata_location=staged.metadata_location)

        def load_namespace_properties(self, namespace):
            return {}

        def _unsupported(self, *a, **k):
            raise NotImplementedError

        (create_namespace, drop_namespace, drop_table, drop_view, list_namespaces, list_tables, list_views,
         load_view, register_table, register_view, rename_table, update_namespace_properties,
         view_exists) = (_unsupported,) * 13

    return DictCatalog()


def test_icefloe_reads_a_table_pyiceberg_evolved(catalog, tmp_path, duck):
    from pyiceberg.schema import Schema as PySchema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DoubleType, IntegerType, LongType, NestedField, StringType, TimestamptzType

    import datetime as dt

    pycat = _pyiceberg_catalog(str(tmp_path / "pywh"))
    tbl = pycat.create_table("db.t", PySchema(
        NestedField(1, "id", LongType(), required=False), NestedField(2, "n", IntegerType(), required=False),
        NestedField(3, "s", StringType(), required=False), NestedField(4, "ts", TimestamptzType(), required=False)))
    utc = dt.timezone.utc
    arrow1 = pa.table({"id": pa.array([1, 2], pa.int64()), "n": pa.array([10, 20], pa.int32()), "s": ["a", "b"],
                       "ts": pa.array([dt.datetime(2024, 1, 5, tzinfo=utc), dt.datetime(2024, 2, 5, tzinfo=utc)],
                                      pa.timestamp("us", tz="UTC"))})
    tbl.append(arrow1)
    first = tbl.current_snapshot().snapshot_id
    with tbl.update_schema() as u:
        u.update_column("n", LongType())
        u.rename_column("s", "label")
        u.add_column("score", DoubleType())
    with tbl.update_spec() as u:
        u.add_field("label", IdentityTransform(), "label")  # time transforms need pyiceberg-core to write
    tbl.append(pa.table({"id": pa.array([3], pa.int64()), "n": pa.array([7_000_000_000], pa.int64()),
                         "label": ["c"], "ts": pa.array([dt.datetime(2024, 3, 9, tzinfo=utc)],
                                                        pa.timestamp("us", tz="UTC")),
                         "score": pa.array([0.5], pa.float64())}))
    t = catalog.register_table("db.from_py", tbl.metadata_location)
    assert t.metadata.default_spec_id == 1 and [f.name for f in t.spec.fields] == ["label"]
    rows = readers_agree(t, duck)
    assert [(r["id"], r["n"], r["label"], r["score"]) for r in rows] == \
        [(1, 10, "a", None), (2, 20, "b", None), (3, 7_000_000_000, "c", 0.5)]
    old = readers_agree(t, duck, first)
    assert [(r["id"], r["s"]) for r in old] == [(1, "a"), (2, "b")]
    # partition pruning judges each manifest with its own spec
    assert [f.spec_id for f in t.plan_files(where="label = 'c'")] == [1]
    assert sorted(f.spec_id for f in t.plan_files(where="label <= 'c'")) == [0, 1]
    # and icefloe evolves it further, readable by all
    with t.update_schema() as u:
        u.add_column("extra", "string")
    t.append(pa.table({"id": pa.array([4], pa.int64()), "extra": ["e"]}))
    assert [r["extra"] for r in readers_agree(t, duck)] == [None, None, None, "e"]
