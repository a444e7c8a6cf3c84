"""Paimon type strings, schema files and the filesystem catalog layout."""
import json
import os

import pyarrow as pa
import pytest

from icefloe.errors import (
    InvalidNameError, NoSuchNamespaceError, NoSuchTableError, SchemaError, TableAlreadyExistsError,
)
from icefloe.paimon.schema import TableSchema, load_schema
from icefloe.core import types as core
from icefloe.paimon.types import (
    parse_atomic, parse_atomic_nullable, parse_type, to_core_schema, type_string, type_to_json,
)


@pytest.mark.parametrize("text", [
    "BIGINT NOT NULL", "STRING", "INT", "TIMESTAMP(6)", "TIMESTAMP(3) NOT NULL", "DECIMAL(10, 2)",
    "DECIMAL(38, 0) NOT NULL", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "DATE", "BOOLEAN", "DOUBLE", "FLOAT",
    "TINYINT", "SMALLINT", "BYTES", "VARCHAR(10)", "CHAR(3) NOT NULL", "BINARY(16)", "TIME(0)",
])
def test_type_strings_round_trip(text):
    assert type_string(*parse_atomic_nullable(text)) == text


@pytest.mark.parametrize("text,canonical", [
    ("INTEGER", "INT"), ("TIMESTAMP_LTZ(3)", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
    ("timestamp with local time zone", "TIMESTAMP(6) WITH LOCAL TIME ZONE"), ("DECIMAL", "DECIMAL(10, 0)"),
    ("VARCHAR(2147483647)", "STRING"), ("TIMESTAMP", "TIMESTAMP(6)"), ("bigint not null", "BIGINT NOT NULL"),
])
def test_type_aliases(text, canonical):
    assert type_string(*parse_atomic_nullable(text)) == canonical


@pytest.mark.parametrize("text,shared", [
    ("TINYINT", core.ByteType()), ("SMALLINT", core.ShortType()), ("BIGINT", core.LongType()),
    ("CHAR(3)", core.CharType(3)), ("VARCHAR(10)", core.VarCharType(10)), ("STRING", core.StringType()),
    ("BINARY(16)", core.FixedType(16)), ("VARBINARY(8)", core.VarBinaryType(8)), ("BYTES", core.BinaryType()),
    ("TIME(0)", core.TimeType(0)), ("TIMESTAMP(3)", core.TimestampType(3)), ("TIMESTAMP(6)", core.TimestampType()),
    ("TIMESTAMP(9) WITH LOCAL TIME ZONE", core.TimestamptzType(9)), ("DECIMAL(5, 2)", core.DecimalType(5, 2)),
])
def test_paimon_types_are_the_shared_types(text, shared):
    assert parse_atomic(text) == shared
    assert type_string(shared) == text


def test_nested_type_json():
    js = {"type": "MAP NOT NULL", "key": "STRING NOT NULL",
          "value": {"type": "ARRAY", "element": {"type": "ROW", "fields": [
              {"id": 5, "name": "x", "type": "INT", "description": "an x"}]}}}
    t, nullable = parse_type(js)
    assert isinstance(t, core.MapType) and not nullable and t.key_required and not t.value_required
    assert isinstance(t.value_type, core.ListType) and isinstance(t.value_type.element_type, core.StructType)
    assert t.value_type.element_type.fields[0].description == "an x"
    assert type_to_json(t, nullable) == js
    assert type_string(t, nullable) == "MAP<STRING NOT NULL, ARRAY<ROW<`x` INT>>> NOT NULL"
    multiset = {"type": "MULTISET", "element": "INT NOT NULL"}
    m, _ = parse_type(multiset)
    assert isinstance(m, core.MultisetType) and m.element_required and type_to_json(m) == multiset


def test_schema_file_layout(paimon_catalog, paimon_warehouse):
    t = paimon_catalog.create_table(
        "db.t", "id bigint not null, name string, ts timestamp, ntz timestamp_ntz, d decimal(10,2), "
                "s struct<a: int, b: struct<c: string>>, l array<int>, m map<string, bigint>",
        partitioned_by=["name"], properties={"bucket": "2", "bucket-key": "id", "snapshot.num-retained.min": "5"})
    path = os.path.join(paimon_warehouse, "db.db", "t", "schema", "schema-0")
    doc = json.loads(open(path).read())
    assert doc["version"] == 3 and doc["id"] == 0
    assert [f["id"] for f in doc["fields"]] == [0, 1, 2, 3, 4, 5, 9, 10]
    assert [f["type"] for f in doc["fields"][:5]] == [
        "BIGINT NOT NULL", "STRING", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "TIMESTAMP(6)", "DECIMAL(10, 2)"]
    row = doc["fields"][5]["type"]
    assert row["type"] == "ROW" and [(f["id"], f["name"]) for f in row["fields"]] == [(6, "a"), (8, "b")]
    assert row["fields"][1]["type"]["fields"][0] == {"id": 7, "name": "c", "type": "STRING"}
    assert doc["fields"][6]["type"] == {"type": "ARRAY", "element": "INT"}
    assert doc["fields"][7]["type"] == {"type": "MAP", "key": "STRING NOT NULL", "value": "BIGINT"}
    assert doc["highestFieldId"] == 10
    assert doc["partitionKeys"] == ["name"] and doc["primaryKeys"] == []
    assert doc["options"] == {"bucket": "2", "bucket-key": "id", "snapshot.num-retained.min": "5"}
    assert isinstance(doc["timeMillis"], int)
    # the icefloe Schema keeps Paimon's ids
    assert [f.field_id for f in t.schema.fields] == [0, 1, 2, 3, 4, 5, 9, 10]
    assert str(t.schema.find_field("ts").field_type) == "timestamptz"


def test_pypaimon_reads_our_schema_file(paimon_catalog, paimon_warehouse, pypaimon_catalog):
    paimon_catalog.create_table("db.t", "id bigint not null, name string, d decimal(10,2), l array<int>",
                                partitioned_by=["name"])
    pt = pypaimon_catalog.get_table("db.t")
    assert [f.name for f in pt.fields] == ["id", "name", "d", "l"]
    assert [str(f.type) for f in pt.fields] == ["BIGINT NOT NULL", "STRING", "DECIMAL(10, 2)", "ARRAY<INT>"]
    assert pt.partition_keys == ["name"]


def test_we_read_a_pypaimon_schema_file(paimon_catalog, pypaimon_catalog, paimon_warehouse):
    from tools.pypaimon_env import remote_module
    Schema = remote_module("pypaimon").Schema

    pypaimon_catalog.create_database("db", True)
    arrow = pa.schema([pa.field("id", pa.int64(), nullable=False), ("tiny", pa.int8()),
                       ("s", pa.struct([("a", pa.int32())])), ("ts", pa.timestamp("ms"))])
    pypaimon_catalog.create_table("db.p", Schema.from_pyarrow_schema(arrow, options={"bucket": "-1"}), False)
    ts = load_schema(paimon_catalog.io, os.path.join(paimon_warehouse, "db.db", "p"), 0)
    assert [type_string(f.type, f.nullable) for f in ts.fields] == [
        "BIGINT NOT NULL", "TINYINT", "ROW<`a` INT>", "TIMESTAMP(3)"]
    core = to_core_schema(ts.fields)
    assert str(core.find_field("tiny").field_type) == "tinyint"     # the shared type system keeps TINYINT
    assert TableSchema.from_json(ts.to_json()).fields == ts.fields


def test_catalog_layout_and_lifecycle(paimon_catalog, paimon_warehouse):
    cat = paimon_catalog
    t = cat.create_table("db.one", "id int")
    assert t.location == os.path.join(paimon_warehouse, "db.db", "one")
    cat.create_table("db.two", pa.schema([("x", pa.string())]))
    assert cat.list_tables("db") == ["db.one", "db.two"]
    assert cat.list_namespaces() == ["db", "default"]       # default: created with the catalog, as Paimon's
    assert cat.table_exists("db.one") and not cat.table_exists("db.three")
    with pytest.raises(TableAlreadyExistsError):
        cat.create_table("db.one", "id int")
    cat.drop_table("db.one")
    assert cat.list_tables("db") == ["db.two"]
    with pytest.raises(NoSuchTableError):
        cat.load_table("db.one")
    with pytest.raises(NoSuchTableError):
        cat.drop_table("db.one")
    with pytest.raises(NoSuchNamespaceError):
        cat.list_tables("nope")


@pytest.mark.parametrize("name", ["db", "a.b.c", "../x.y", "db.t/x", "db.", ".t", "d b.t", "db.t\n", "db.t:x",
                                  "db.t\\x", "db.t\x00", "db.t\u00e4"])
def test_invalid_names(paimon_catalog, name):
    with pytest.raises(InvalidNameError):
        paimon_catalog.create_table(name, "id int")


@pytest.mark.parametrize("props,partitions,msg", [
    ({"bucket": "4"}, None, "bucket-key"),
    ({"bucket": "4", "bucket-key": "dt"}, ["dt"], "partition key"),
    ({"bucket": "4", "bucket-key": "nope"}, None, "nope"),
    ({"bucket": "0"}, None, "bucket"),
    ({"bucket-key": "id"}, None, "bucket"),
    ({"primary-key": "id", "bucket": "-2"}, None, "fixed number of buckets"),
    ({"file.format": "csv"}, None, "parquet, orc or avro"),
    ({"manifest.target-file-size": "8 lightyears"}, None, "memory size"),
    ({}, ["nope"], "nope"),
    ({}, ["year(dt)"], "column names"),
    ({"row-tracking.enabled": "true", "bucket": "2", "bucket-key": "id"}, None, "row-tracking.enabled.*bucket"),
    ({"data-evolution.enabled": "true"}, None, "data-evolution.enabled"),
    ({"tag.automatic-creation": "sometimes"}, None, "tag.automatic-creation.*not one of none, process-time"),
    ({"tag.automatic-creation": "process-time", "tag.creation-delay": "1 d"}, None, "tag.creation-delay.*shorter"),
    ({"tag.callbacks": "com.example.Callback"}, None, "tag.callbacks.*Java tag callback"),
    ({"file-index.range-bitmap.columns": "id"}, None, "file-index.range-bitmap.columns.*not honoured.*bitmap"),
    ({"clustering.columns": "id"}, None, "clustering.columns"),
])
def test_create_option_validation(paimon_catalog, props, partitions, msg):
    with pytest.raises(SchemaError, match=msg):
        paimon_catalog.create_table("db.t", "id bigint, dt string", partitioned_by=partitions, properties=props)
    assert not paimon_catalog.table_exists("db.t")


def test_through_the_shared_catalog_api(paimon_warehouse):
    import icefloe

    cat = icefloe.Catalog(paimon_warehouse, format="paimon")
    t = cat.create_table("db.t", "id bigint not null, dt string", partitioned_by=["dt"],
                         properties={"bucket": "2", "bucket-key": "id"})
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "dt": ["a", "b", "a"]}))
    assert cat.list_tables("db") == ["db.t"] and cat.table_exists("db.t")
    loaded = cat.load_table("db.t")
    assert loaded.format == "paimon" and loaded.name == "db.t"
    assert sorted(loaded.to_arrow().column("id").to_pylist()) == [1, 2, 3]
    s = loaded.current_snapshot()
    assert (s.snapshot_id, s.operation, s.parent_snapshot_id) == (1, "append", None)
    assert loaded.history()[0]["snapshot-id"] == 1
    cat.drop_table("db.t")
    assert not cat.table_exists("db.t")


def test_options_icefloe_does_not_honour_are_refused_by_alter_and_the_schema_stays(paimon_catalog, paimon_warehouse):
    """An option asking writers for what icefloe's do not do (file indexes, tag success files) is
    refused when set; its harmless values and the read-side switch pass; a table whose schema another
    engine wrote with such an option still takes other changes."""
    t = paimon_catalog.create_table("db.opts", "id bigint, dt string",
                                    properties={"row-tracking.enabled": "false", "tag.automatic-creation": "none",
                                                "file-index.read.enabled": "false"})
    schema_dir = os.path.join(paimon_warehouse, "db.db", "opts", "schema")
    before = sorted(os.listdir(schema_dir))
    for key, value in [("file-index.range-bitmap.columns", "dt"), ("tag.create-success-file", "true")]:
        with pytest.raises(SchemaError, match=f"db.opts.*{key}.*not honoured"):
            with t.update_schema() as u:
                u.set_option(key, value)
    with pytest.raises(SchemaError, match="data-evolution.enabled.*row-tracking.enabled"):
        with t.update_schema() as u:      # data evolution needs row tracking, both fixed at CREATE
            u.set_option("data-evolution.enabled", "true")
    with pytest.raises(SchemaError, match="db.opts.*row-tracking.enabled.*cannot be changed"):
        with t.update_schema() as u:      # fixed at CREATE, as in Paimon
            u.set_option("row-tracking.enabled", "true")
    assert sorted(os.listdir(schema_dir)) == before
    # a schema written elsewhere with a file index: other changes still go through, the option stays
    latest = os.path.join(schema_dir, before[-1])
    doc = json.load(open(latest))
    doc["options"]["file-index.range-bitmap.columns"] = "id"
    json.dump(doc, open(latest, "w"))
    t = paimon_catalog.load_table("db.opts")
    with t.update_schema() as u:
        u.set_option("snapshot.num-retained.min", "5")
    got = json.load(open(os.path.join(schema_dir, sorted(os.listdir(schema_dir))[-1])))["options"]
    assert got["snapshot.num-retained.min"] == "5" and got["file-index.range-bitmap.columns"] == "id"
