"""SQL text -> statements, without Spark: splitting, positions, the Iceberg extension statements."""
import pytest

from icefloe.sql.errors import SqlError
from icefloe.sql.parser import AlterPartitionField, AlterRef, Call, ShowTables, node_position, split


def test_split_keeps_positions_and_text():
    text = "select 1;\n  select *\n from db.t;"
    a, b = split(text)
    assert (a.line, a.column, a.text) == (1, 1, "select 1")
    assert (b.line, b.column) == (2, 3) and b.text == "select *\n from db.t"
    from sqlglot import exp

    assert node_position(b.tree.find(exp.Table)) == (3, 7)


def test_for_system_version_becomes_version_as_of():
    (s,) = split("SELECT * FROM local.db.t FOR SYSTEM_VERSION AS OF 42 x")
    v = s.tree.find(__import__("sqlglot").exp.Version)
    assert str(v.this).upper() == "VERSION" and v.expression.this == "42"
    (s,) = split("SELECT * FROM db.t FOR SYSTEM_TIME AS OF '2024-01-01 00:00:00'")
    assert str(s.tree.find(__import__("sqlglot").exp.Version).this).upper() == "TIMESTAMP"


def test_call_with_named_and_positional_arguments():
    (s,) = split("CALL local.system.expire_snapshots(table => 'db.t', older_than => TIMESTAMP '2024-01-01', "
                 "retain_last => 2)")
    assert isinstance(s.ext, Call)
    assert s.ext.procedure.parts == ["local", "system", "expire_snapshots"]
    assert [n for n, _ in s.ext.args] == ["table", "older_than", "retain_last"]
    (s,) = split("CALL local.system.rollback_to_snapshot('db.t', 12)")
    assert [n for n, _ in s.ext.args] == [None, None]


def test_alter_extensions_and_show_tables():
    stmts = split("ALTER TABLE db.t ADD PARTITION FIELD bucket(16, id) AS shard;"
                  "ALTER TABLE db.t REPLACE PARTITION FIELD ts_day WITH months(ts);"
                  "ALTER TABLE db.t DROP PARTITION FIELD truncate(4, name);"
                  "ALTER TABLE db.t CREATE TAG IF NOT EXISTS v1 AS OF VERSION 7 RETAIN 2 DAYS;"
                  "ALTER TABLE local.db.t DROP BRANCH IF EXISTS dev;"
                  "SHOW TABLES IN local.db")
    add, rep, drop, tag, br, show = (s.ext for s in stmts)
    assert isinstance(add, AlterPartitionField) and (add.action, add.term, add.alias) == ("add", "bucket(16, id)", "shard")
    assert (rep.action, rep.old, rep.term) == ("replace", "ts_day", "months(ts)")
    assert (drop.action, drop.term) == ("drop", "truncate(4, name)")
    assert isinstance(tag, AlterRef) and (tag.kind, tag.ref, tag.snapshot_id, tag.retain_ms, tag.if_not_exists) == \
        ("tag", "v1", 7, 2 * 86_400_000, True)
    assert (br.action, br.kind, br.ref, br.if_exists, br.table.parts) == ("drop", "branch", "dev", True,
                                                                          ["local", "db", "t"])
    assert isinstance(show, ShowTables) and show.namespace.parts == ["local", "db"]


@pytest.mark.parametrize("text,line,col", [
    ("select * fro m x where", 1, 14),
    ("select 1;\nALTER TABLE db.t CREATE BRANCH", 2, None),
])
def test_syntax_errors_name_the_position(text, line, col):
    with pytest.raises(SqlError) as ei:
        split(text)
    assert ei.value.line == line
    if col is not None:
        assert ei.value.column == col
    assert "syntax error" in str(ei.value)


def test_alter_column_positions_and_changes():
    from icefloe.sql.parser import AlterColumn

    (s,) = split("ALTER TABLE local.db.t ALTER COLUMN v TYPE decimal(10, 2) COMMENT 'c' AFTER id, "
                 "w FIRST")
    assert isinstance(s.ext, AlterColumn) and s.ext.table.parts == ["local", "db", "t"]
    v, w = s.ext.changes
    assert (v.column.parts, v.type_text, v.comment, v.position, v.after.parts) == \
        (["v"], "decimal(10, 2)", "c", "after", ["id"])
    assert v.type_at == (1, 44) and (w.column.parts, w.position) == (["w"], "first")
    (s,) = split("ALTER TABLE db.t CHANGE v v struct<first: int, b: map<string, int>> AFTER id")
    (ch,) = s.ext.changes
    assert ch.new_name.parts == ["v"] and ch.type_text == "struct<first: int, b: map<string, int>>"
    (s,) = split("ALTER TABLE db.t ALTER COLUMN info.y SET NOT NULL")
    assert (s.ext.changes[0].column.parts, s.ext.changes[0].nullable) == (["info", "y"], False)
    (s,) = split("ALTER TABLE db.t ALTER COLUMN `first` DROP NOT NULL")   # a quoted name is a name
    assert (s.ext.changes[0].column.parts, s.ext.changes[0].nullable) == (["first"], True)


def test_branch_retention_and_replace_table():
    (s,) = split("ALTER TABLE db.t CREATE BRANCH b AS OF VERSION 3 RETAIN 2 DAYS "
                 "WITH SNAPSHOT RETENTION 3 SNAPSHOTS 4 HOURS")
    r = s.ext
    assert (r.snapshot_id, r.retain_ms, r.min_snapshots_to_keep, r.max_snapshot_age_ms) == \
        (3, 2 * 86_400_000, 3, 4 * 3_600_000)
    (s,) = split("ALTER TABLE db.t CREATE OR REPLACE BRANCH b WITH SNAPSHOT RETENTION 5 MINUTES")
    assert (s.ext.action, s.ext.min_snapshots_to_keep, s.ext.max_snapshot_age_ms) == \
        ("create_or_replace", None, 300_000)
    (s,) = split("REPLACE TABLE db.t\n  USING iceberg AS SELECT 1 AS x")
    assert s.replace_only and s.tree.args["replace"] and s.text.startswith("REPLACE TABLE")
    from sqlglot import exp

    assert node_position(s.tree.find(exp.Table)) == (1, 15)


@pytest.mark.parametrize("text,col,reason", [
    ("ALTER TABLE db.t CREATE TAG v WITH SNAPSHOT RETENTION 3 SNAPSHOTS", 31, "applies to branches only"),
    ("ALTER TABLE db.t ALTER COLUMN v", 32, "expected TYPE, COMMENT, FIRST, AFTER"),
    ("ALTER TABLE db.t ALTER COLUMN v AFTER", 38, "expected a name"),
    ("ALTER TABLE db.t ALTER COLUMN v TYPE int TYPE bigint", 42, "the type is given twice"),
    ("ALTER TABLE db.t CREATE BRANCH b WITH SNAPSHOT RETENTION", 57, "expected <n> SNAPSHOTS"),
])
def test_alter_syntax_errors_name_the_position(text, col, reason):
    with pytest.raises(SqlError) as ei:
        split(text)
    assert (ei.value.line, ei.value.column) == (1, col) and reason in str(ei.value)
