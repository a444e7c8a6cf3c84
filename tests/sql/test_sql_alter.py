"""ALTER TABLE: column moves and changes, ADD COLUMNS positions, RENAME TO, branch retention."""
import pytest

from icefloe.sql.errors import NotSupportedYetError, SqlError
from tests.interop_util import pyiceberg_table


def _cols(t):
    return [(f.name, f.field_id) for f in t.schema.fields]


def test_alter_column_moves_and_changes_keep_field_ids(catalog):
    run = catalog.sql
    run("CREATE TABLE db.a (id bigint, name string, v int, info struct<x: int, y: string>) USING iceberg")
    run("INSERT INTO db.a VALUES (1, 'n', 7, named_struct('x', 1, 'y', 'a'))")
    t = catalog.load_table("db.a")
    ids = dict(_cols(t))
    schemas = len(t.metadata.schemas)

    run("ALTER TABLE db.a ALTER COLUMN v FIRST")
    t.refresh()
    assert _cols(t) == [("v", ids["v"]), ("id", ids["id"]), ("name", ids["name"]), ("info", ids["info"])]
    assert len(t.metadata.schemas) == schemas + 1          # a reorder is a new schema

    run("ALTER TABLE local.db.a ALTER COLUMN v AFTER name")
    t.refresh()
    assert [n for n, _ in _cols(t)] == ["id", "name", "v", "info"]
    assert t.metadata.current_schema_id == 0              # the original order again: schema 0 is reused

    # several changes of one column in one statement, one schema change: TYPE, COMMENT, position
    version = t.ops.current_version()
    run("ALTER TABLE db.a ALTER COLUMN v TYPE bigint COMMENT 'the value' FIRST")
    t.refresh()
    v = t.schema.fields[0]
    assert (v.name, v.field_id, str(v.field_type), v.doc) == ("v", ids["v"], "long", "the value")
    assert len(t.metadata.schemas) == schemas + 2 and t.ops.current_version() == version + 1
    # Hive's CHANGE COLUMN with the same name, and a nested move (siblings inside the struct)
    run("ALTER TABLE db.a CHANGE COLUMN v v bigint AFTER id")
    run("ALTER TABLE db.a ALTER COLUMN info.y FIRST")
    t.refresh()
    assert [n for n, _ in _cols(t)] == ["id", "v", "name", "info"]
    assert [f.name for f in t.schema.find_field("info").field_type.fields] == ["y", "x"]
    # several columns in one statement (Spark 4), SET/DROP NOT NULL
    run("CREATE TABLE db.req (k bigint not null, a int, b int) USING iceberg")
    run("ALTER TABLE db.req ALTER COLUMN k DROP NOT NULL, b FIRST")
    r = catalog.load_table("db.req")
    assert [f.name for f in r.schema.fields] == ["b", "k", "a"] and not r.schema.find_field("k").required

    # the data follows the ids, whatever the order
    assert [tuple(x) for x in run("SELECT id, v, name, info.x, info.y FROM db.a").collect()] == \
        [(1, 7, "n", 1, "a")]
    py = pyiceberg_table(t.metadata_location)
    assert [f.name for f in py.schema().fields] == ["id", "v", "name", "info"]
    assert py.scan().to_arrow().to_pylist()[0]["v"] == 7

    # errors name the place and the reason; nothing is committed
    version = t.ops.current_version()
    with pytest.raises(SqlError) as ei:
        run("ALTER TABLE db.a ALTER COLUMN v AFTER nope")
    assert (ei.value.line, ei.value.column) == (1, 39) and "AFTER names unknown column nope" in str(ei.value)
    with pytest.raises(SqlError) as ei:
        run("ALTER TABLE db.a\n  ALTER COLUMN missing FIRST")
    assert (ei.value.line, ei.value.column) == (2, 16) and "unknown column missing" in str(ei.value)
    with pytest.raises(SqlError, match="make optional column 'name' required"):
        run("ALTER TABLE db.a ALTER COLUMN name SET NOT NULL")
    with pytest.raises(SqlError, match="only allows int -> long") as ei:
        run("ALTER TABLE db.a ALTER COLUMN name TYPE int FIRST")
    assert ei.value.column == 41
    with pytest.raises(SqlError, match="renaming is not supported in Hive-style CHANGE COLUMN"):
        run("ALTER TABLE db.a CHANGE COLUMN v w bigint")
    with pytest.raises(SqlError, match="column position is given twice"):
        run("ALTER TABLE db.a ALTER COLUMN v FIRST AFTER id")
    with pytest.raises(SqlError, match="default values need format version 3"):
        run("ALTER TABLE db.a ALTER COLUMN v SET DEFAULT 1")
    assert catalog.load_table("db.a").ops.current_version() == version


def test_add_columns_with_positions(catalog):
    run = catalog.sql
    run("CREATE TABLE db.c (id bigint, name string) USING iceberg")
    run("INSERT INTO db.c VALUES (1, 'a')")
    run("ALTER TABLE db.c ADD COLUMNS (first_col int FIRST, mid string AFTER id, after_mid int AFTER mid)")
    t = catalog.load_table("db.c")
    assert [f.name for f in t.schema.fields] == ["first_col", "id", "mid", "after_mid", "name"]
    assert [f.field_id for f in t.schema.fields] == [3, 1, 4, 5, 2]
    run("ALTER TABLE db.c ADD COLUMN last int")
    run("ALTER TABLE db.c ADD COLUMN second int AFTER first_col")
    t.refresh()
    assert [f.name for f in t.schema.fields] == ["first_col", "second", "id", "mid", "after_mid", "name", "last"]
    assert [tuple(r) for r in run("SELECT * FROM db.c").collect()] == [(None, None, 1, None, None, "a", None)]
    version = t.ops.current_version()
    with pytest.raises(SqlError) as ei:
        run("ALTER TABLE db.c ADD COLUMNS (z int AFTER nope)")
    assert "AFTER names unknown column nope" in str(ei.value) and (ei.value.line, ei.value.column) == (1, 43)
    assert catalog.load_table("db.c").ops.current_version() == version


def test_rename_table(catalog, warehouse, spark):
    run = catalog.sql
    run("CREATE TABLE db.old (a int) USING iceberg")
    with pytest.raises(NotSupportedYetError) as ei:
        run("ALTER TABLE db.old RENAME TO db.new")
    msg = str(ei.value)
    assert "Hadoop catalog" in msg and "absolute paths" in msg and (ei.value.line, ei.value.column) == (1, 30)
    assert catalog.table_exists("db.old") and not catalog.table_exists("db.new")

    import icefloe

    pcat = icefloe.Catalog(warehouse + "_paimon", format="paimon", spark=spark)
    pcat.sql("CREATE TABLE db.old (a int, p string) USING paimon PARTITIONED BY (p)")
    pcat.sql("INSERT INTO db.old VALUES (1, 'x'), (2, 'y')")
    pcat.sql("INSERT INTO db.old VALUES (3, 'x')")
    pcat.sql("ALTER TABLE db.old RENAME TO new")                      # stays in namespace db
    assert not pcat.table_exists("db.old") and pcat.table_exists("db.new")
    assert sorted(tuple(r) for r in pcat.sql("SELECT * FROM db.new").collect()) == [(1, "x"), (2, "y"), (3, "x")]
    assert pcat.sql("SELECT count(*) AS n FROM db.new VERSION AS OF 1").first().n == 2
    pcat.sql("CREATE TABLE db.taken (a int) USING paimon")
    with pytest.raises(SqlError, match="already exists"):
        pcat.sql("ALTER TABLE db.new RENAME TO db.taken")
    with pytest.raises(SqlError, match="database other does not exist"):
        pcat.sql("ALTER TABLE db.new RENAME TO other.t")


def test_branch_snapshot_retention(catalog):
    run = catalog.sql
    run("CREATE TABLE db.b (a int) USING iceberg")
    run("INSERT INTO db.b VALUES (1)")
    t = catalog.load_table("db.b")
    first = t.current_snapshot().snapshot_id
    run("INSERT INTO db.b VALUES (2)")
    run(f"ALTER TABLE db.b CREATE BRANCH audit AS OF VERSION {first} RETAIN 7 DAYS "
        "WITH SNAPSHOT RETENTION 3 SNAPSHOTS 2 DAYS")
    run("ALTER TABLE db.b CREATE BRANCH keep2 WITH SNAPSHOT RETENTION 2 SNAPSHOTS")
    run("ALTER TABLE db.b CREATE BRANCH aged WITH SNAPSHOT RETENTION 12 HOURS")
    refs = catalog.load_table("db.b").refs()
    a = refs["audit"]
    assert (a.snapshot_id, a.max_ref_age_ms, a.min_snapshots_to_keep, a.max_snapshot_age_ms) == \
        (first, 7 * 86_400_000, 3, 2 * 86_400_000)
    assert (refs["keep2"].min_snapshots_to_keep, refs["keep2"].max_snapshot_age_ms) == (2, None)
    assert (refs["aged"].min_snapshots_to_keep, refs["aged"].max_snapshot_age_ms) == (None, 12 * 3_600_000)
    got = {r.name: (r.min_snapshots_to_keep, r.max_snapshot_age_in_ms, r.max_reference_age_in_ms)
           for r in run("SELECT * FROM db.b.refs").collect()}
    assert got["audit"] == (3, 2 * 86_400_000, 7 * 86_400_000)

    # REPLACE moves the branch to the current snapshot, in place, keeping its retention
    version = catalog.load_table("db.b").ops.current_version()
    run("ALTER TABLE db.b REPLACE BRANCH audit")
    t = catalog.load_table("db.b")
    assert t.ops.current_version() == version + 1
    a = t.refs()["audit"]
    assert (a.snapshot_id, a.min_snapshots_to_keep, a.max_snapshot_age_ms) == \
        (t.current_snapshot().snapshot_id, 3, 2 * 86_400_000)
    run(f"ALTER TABLE db.b CREATE OR REPLACE BRANCH audit AS OF VERSION {first} WITH SNAPSHOT RETENTION 5 SNAPSHOTS")
    a = catalog.load_table("db.b").refs()["audit"]
    assert (a.snapshot_id, a.min_snapshots_to_keep, a.max_snapshot_age_ms) == (first, 5, 2 * 86_400_000)
    py = pyiceberg_table(catalog.load_table("db.b").metadata_location)
    assert py.metadata.refs["audit"].min_snapshots_to_keep == 5

    # tags have no snapshot retention (a tag is one snapshot); RETAIN is their max age
    with pytest.raises(SqlError) as ei:
        run("ALTER TABLE db.b CREATE TAG t1 WITH SNAPSHOT RETENTION 2 SNAPSHOTS")
    assert "applies to branches only" in str(ei.value) and ei.value.column == 32
    run("ALTER TABLE db.b CREATE TAG t1 RETAIN 3 HOURS")
    assert catalog.load_table("db.b").refs()["t1"].max_ref_age_ms == 3 * 3_600_000
    with pytest.raises(SqlError, match="expected DAYS, HOURS or MINUTES"):
        run("ALTER TABLE db.b CREATE BRANCH x WITH SNAPSHOT RETENTION 2 WEEKS")
    with pytest.raises(SqlError, match="t1 is a tag of table db.b, not a branch"):
        run("ALTER TABLE db.b REPLACE BRANCH t1")
