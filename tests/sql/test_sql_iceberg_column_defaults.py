"""Column ``DEFAULT`` in Spark's DDL on Iceberg tables (format v3's ``initial-default`` and
``write-default``, spec "Default values"): CREATE TABLE sets write defaults, ADD COLUMN both,
ALTER COLUMN SET/DROP DEFAULT the write default only; v2 tables refuse them."""
import datetime
import json

import pytest

from icefloe.sql.errors import SqlError


def _fields(t) -> dict:
    meta = json.loads(t.io.read_bytes(t.refresh().metadata_location))
    schema = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
    return {f["name"]: f for f in schema["fields"]}


def _rows(run, table="db.d"):
    return sorted(tuple(r) for r in run(f"SELECT * FROM {table}").collect())


def test_defaults_on_a_v3_table(catalog):
    run = catalog.sql
    run("CREATE TABLE db.d (id bigint, s string DEFAULT 'x', n int DEFAULT 1 + 1) USING iceberg "
        "TBLPROPERTIES ('format-version'='3')")
    t = catalog.load_table("db.d")
    f = _fields(t)
    assert f["s"]["write-default"] == "x" and f["n"]["write-default"] == 2
    assert "initial-default" not in f["s"] and "write-default" not in f["id"]
    run("INSERT INTO db.d (id) VALUES (1)")              # the columns left out get their write defaults
    run("INSERT INTO db.d VALUES (2, 'y', 5)")
    assert _rows(run) == [(1, "x", 2), (2, "y", 5)]

    # ADD COLUMN ... DEFAULT: rows written before read it (initial-default), new rows get it too
    run("ALTER TABLE db.d ADD COLUMN d date DEFAULT DATE '2024-01-02'")
    f = _fields(t)
    assert f["d"]["initial-default"] == f["d"]["write-default"] == "2024-01-02"
    day = datetime.date(2024, 1, 2)
    assert _rows(run) == [(1, "x", 2, day), (2, "y", 5, day)]

    # SET DEFAULT changes what new rows get, not what written rows hold
    run("ALTER TABLE db.d ALTER COLUMN n SET DEFAULT 7")
    run("INSERT INTO db.d (id) VALUES (3)")
    assert _rows(run)[-1] == (3, "x", 7, day) and _rows(run)[0] == (1, "x", 2, day)
    assert _fields(t)["n"]["write-default"] == 7 and "initial-default" not in _fields(t)["n"]

    # DROP DEFAULT: new rows get null; rows written before the column existed still read its initial default
    run("ALTER TABLE db.d ALTER COLUMN d DROP DEFAULT")
    f = _fields(t)
    assert "write-default" not in f["d"] and f["d"]["initial-default"] == "2024-01-02"
    run("INSERT INTO db.d (id) VALUES (4)")
    assert _rows(run) == [(1, "x", 2, day), (2, "y", 5, day), (3, "x", 7, day), (4, "x", 7, None)]

    # a default evaluated at each write cannot be kept in the schema; the table stays as it was
    location = t.refresh().metadata_location
    with pytest.raises(SqlError, match="changes from write to write"):
        run("ALTER TABLE db.d ALTER COLUMN s SET DEFAULT current_timestamp()")
    with pytest.raises(SqlError, match="is not a constant"):
        run("ALTER TABLE db.d ADD COLUMN e int DEFAULT id + 1")
    assert t.refresh().metadata_location == location


def test_defaults_refused_on_a_v2_table(catalog):
    run = catalog.sql
    with pytest.raises(SqlError, match="format v3's.*format version 2"):
        run("CREATE TABLE db.v2 (id bigint, s string DEFAULT 'x') USING iceberg")
    assert not catalog.table_exists("db.v2")
    run("CREATE TABLE db.v2 (id bigint, s string) USING iceberg")
    t = catalog.load_table("db.v2")
    location = t.metadata_location
    with pytest.raises(SqlError, match="default values need format version 3"):
        run("ALTER TABLE db.v2 ADD COLUMN n int DEFAULT 1")
    with pytest.raises(SqlError, match="default values need format version 3"):
        run("ALTER TABLE db.v2 ALTER COLUMN s SET DEFAULT 'y'")
    assert t.refresh().metadata_location == location

