"""``ALTER TABLE ... ALTER COLUMN c COMMENT '...'`` (Iceberg's spark-ddl page): a new metadata
version whose schema gives the field its ``doc``, for top-level and nested fields and with TYPE."""
import json


def _schema_json(t) -> dict:
    """The current schema as the metadata file holds it."""
    meta = json.loads(t.io.read_bytes(t.metadata_location))
    return next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])


def test_alter_column_comment_writes_the_doc(catalog):
    run = catalog.sql
    run("CREATE TABLE db.c (id int, measurement double, point struct<x: int, y: int>) USING iceberg")
    run("INSERT INTO db.c VALUES (1, 2.5, named_struct('x', 1, 'y', 2))")
    t = catalog.load_table("db.c")
    version = t.ops.current_version()

    run("ALTER TABLE db.c ALTER COLUMN measurement COMMENT 'unit is bytes per second'")
    t.refresh()
    assert t.ops.current_version() == version + 1
    fields = {f["name"]: f for f in _schema_json(t)["fields"]}
    assert fields["measurement"]["doc"] == "unit is bytes per second"
    assert len(t.metadata.schemas) == 2

    run("ALTER TABLE db.c ALTER COLUMN point.y COMMENT 'the ordinate'")
    run("ALTER TABLE db.c ALTER COLUMN id TYPE bigint COMMENT 'the key'")
    t.refresh()
    fields = {f["name"]: f for f in _schema_json(t)["fields"]}
    nested = {f["name"]: f for f in fields["point"]["type"]["fields"]}
    assert nested["y"]["doc"] == "the ordinate" and "doc" not in nested["x"]
    assert (fields["id"]["type"], fields["id"]["doc"]) == ("long", "the key")
    assert fields["measurement"]["doc"] == "unit is bytes per second"
    # DESCRIBE shows the comment; the rows are unchanged
    described = {r.col_name: r.comment for r in run("DESCRIBE TABLE db.c").collect()}
    assert described["measurement"] == "unit is bytes per second"
    assert [tuple(r) for r in run("SELECT id, measurement FROM db.c").collect()] == [(1, 2.5)]
