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
