"""CREATE TABLE keeps what was declared: no stray properties, Paimon's small integer types."""
import json

import pytest

import icefloe
from icefloe.errors import SchemaMismatchError


def test_using_clause_and_comment_are_not_table_properties(catalog):
    catalog.sql("CREATE TABLE db.p (id bigint) USING iceberg COMMENT 'people' TBLPROPERTIES ('k' = 'v')")
    props = catalog.load_table("db.p").properties
    assert props.get("k") == "v" and props.get("comment") == "people"
    assert "iceberg" not in props and "people" not in props


def test_paimon_tinyint_and_smallint_columns(warehouse, spark, tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=spark)
    run = cat.sql
    run("CREATE TABLE db.s (id bigint, s smallint, t tinyint) USING paimon")
    t = cat.load_table("db.s")
    schema = json.load(open(f"{t.location}/schema/schema-0"))
    assert [f["type"] for f in schema["fields"]] == ["BIGINT", "SMALLINT", "TINYINT"]
    assert schema["options"] == {}                                  # no stray "paimon" option
    run("INSERT INTO db.s VALUES (1, 2, 3), (2, -32768, 127)")
    assert sorted(tuple(r) for r in run("SELECT * FROM db.s").collect()) == [(1, 2, 3), (2, -32768, 127)]
    described = {r.col_name: r.data_type for r in run("DESCRIBE db.s").collect()}
    assert described["s"] == "smallint" and described["t"] == "tinyint"
    with pytest.raises(SchemaMismatchError, match="cannot be stored in column 's'"):
        run("INSERT INTO db.s VALUES (3, 40000, 1)")
    assert len(t.snapshots()) == 1                                  # the failed insert committed nothing
    # the Python API's DDL strings keep them too
    t2 = cat.create_table("db.s2", "a tinyint not null, b short")
    assert [f.type_string for f in t2.table_schema.fields][:2] == ["TINYINT NOT NULL", "SMALLINT"]
