"""TINYINT and SMALLINT in the one logical type system: kept by Paimon, lowered to int by Iceberg."""
import json

import pyarrow as pa

import icefloe
from icefloe.core.types import parse_schema, to_arrow_schema, widen_schema_small_ints


def test_ddl_arrow_and_spark_names_of_small_ints():
    s = parse_schema("a tinyint, b byte, c smallint, d short not null, e struct<x: tinyint>")
    assert [str(f.field_type) for f in s.fields][:4] == ["tinyint", "tinyint", "smallint", "smallint"]
    arrow = to_arrow_schema(s, with_ids=False)
    assert [arrow.field(i).type for i in range(4)] == [pa.int8(), pa.int8(), pa.int16(), pa.int16()]
    assert str(widen_schema_small_ints(s).struct) == str(parse_schema(
        "a int, b int, c int, d int not null, e struct<x: int>").struct)


def test_paimon_keeps_them_and_iceberg_lowers_them(tmp_path):
    ddl = "id bigint not null, t tinyint, s smallint"
    p = icefloe.Catalog(str(tmp_path / "p"), "paimon").create_table("db.t", ddl)
    assert [f.type_string for f in p.table_schema.fields] == ["BIGINT NOT NULL", "TINYINT", "SMALLINT"]
    assert [str(f.field_type) for f in p.schema.fields] == ["long", "tinyint", "smallint"]
    i = icefloe.Catalog(str(tmp_path / "i")).create_table("db.t", ddl)
    meta = json.loads(open(i.metadata_location).read())
    assert [f["type"] for f in meta["schemas"][0]["fields"]] == ["long", "int", "int"]
    # the same from an Arrow schema: int8/int16 columns
    arrow = pa.schema([("t", pa.int8()), ("s", pa.int16())])
    p2 = icefloe.Catalog(str(tmp_path / "p"), "paimon").create_table("db.a", arrow)
    assert [f.type_string for f in p2.table_schema.fields] == ["TINYINT", "SMALLINT"]
    i2 = icefloe.Catalog(str(tmp_path / "i")).create_table("db.a", arrow)
    assert [str(f.field_type) for f in i2.schema.fields] == ["int", "int"]
    with i2.update_schema() as u:
        u.add_column("more", "tinyint")
    assert str(i2.refresh().schema.find_field("more").field_type) == "int"


def test_predicates_on_small_ints_bind_in_their_range(tmp_path):
    t = icefloe.Catalog(str(tmp_path), "paimon").create_table("db.t", "t tinyint")
    t.append(pa.table({"t": pa.array([1, 100, None], pa.int8())}))
    assert t.to_arrow(where="t > 50").column("t").to_pylist() == [100]
    assert t.to_arrow(where="t > 300").num_rows == 0                  # beyond TINYINT: nothing, no error
    assert len(t.plan_files(where="t < -200")) == 0
