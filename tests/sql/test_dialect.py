"""icefloe's sqlglot dialect: the Iceberg extension statements as typed nodes that print back
to SQL parsing to the same tree; everything else exactly as Spark's dialect reads it."""
import pytest
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from icefloe.sql import dialect as d

EXTENSIONS = [
    ("CALL local.system.expire_snapshots(table => 'db.t', retain_last => 2)", d.Call),
    ("CALL cat.system.rollback_to_snapshot('db.t', 12)", d.Call),
    ("CALL cat.system.remove_orphan_files()", d.Call),
    ("SHOW TABLES", d.ShowTables),
    ("SHOW TABLES IN local.db", d.ShowTables),
    ("ALTER TABLE db.t ADD PARTITION FIELD bucket(16, id) AS shard", d.PartitionFieldChange),
    ("ALTER TABLE db.t DROP PARTITION FIELD truncate(4, name)", d.PartitionFieldChange),
    ("ALTER TABLE db.t REPLACE PARTITION FIELD ts_day WITH months(ts) AS m", d.PartitionFieldChange),
    ("ALTER TABLE db.t CREATE TAG IF NOT EXISTS v1 AS OF VERSION 7 RETAIN 2 DAYS", d.RefChange),
    ("ALTER TABLE db.t CREATE OR REPLACE BRANCH b WITH SNAPSHOT RETENTION 3 SNAPSHOTS 4 HOURS", d.RefChange),
    ("ALTER TABLE db.t REPLACE BRANCH b AS OF VERSION 9", d.RefChange),
    ("ALTER TABLE local.db.t DROP BRANCH IF EXISTS dev", d.RefChange),
    ("ALTER TABLE db.t UNSET TBLPROPERTIES IF EXISTS ('a', 'b')", d.UnsetProperties),
    ("ALTER TABLE db.t DROP COLUMNS (a, s.b)", d.DropColumns),
    ("ALTER TABLE db.t DROP COLUMN a, b", d.DropColumns),
    ("ALTER TABLE db.t ALTER COLUMN v TYPE decimal(10, 2) COMMENT 'c' AFTER id, w FIRST", d.ColumnChanges),
    ("ALTER TABLE db.t CHANGE v v2 struct<a: int, b: map<string, int>> FIRST", d.ColumnChanges),
    ("ALTER TABLE db.t ALTER COLUMN info.y SET NOT NULL", d.ColumnChanges),
    ("SHOW DATABASES", d.ShowNamespaces),
    ("SHOW NAMESPACES IN local LIKE 'd*'", d.ShowNamespaces),
    ("SHOW CREATE TABLE local.db.t", d.ShowCreateTable),
    ("SHOW TBLPROPERTIES db.t", d.ShowTblProperties),
    ("SHOW TBLPROPERTIES db.t ('write.format.default')", d.ShowTblProperties),
    ("ALTER TABLE db.t WRITE ORDERED BY id DESC NULLS LAST, bucket(4, name)", d.WriteOrder),
    ("ALTER TABLE db.t WRITE LOCALLY ORDERED BY id", d.WriteOrder),
    ("ALTER TABLE db.t WRITE UNORDERED", d.WriteOrder),
    ("ALTER TABLE db.t WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY id", d.WriteOrder),
    ("ALTER TABLE db.t SET IDENTIFIER FIELDS id, s.k", d.IdentifierFields),
    ("ALTER TABLE db.t DROP IDENTIFIER FIELDS id", d.IdentifierFields),
]


def _node(tree):
    return tree.args["actions"][0] if isinstance(tree, exp.Alter) else tree


@pytest.mark.parametrize("text,cls", EXTENSIONS)
def test_extension_statements_parse_to_typed_nodes_and_round_trip(text, cls):
    tree = sqlglot.parse_one(text, read="icefloe")
    assert isinstance(_node(tree), cls)
    printed = tree.sql(dialect="icefloe")
    assert sqlglot.parse_one(printed, read="icefloe") == tree, printed


def test_node_fields():
    call = sqlglot.parse_one("CALL local.system.expire_snapshots('db.t', older_than => 5)", read="icefloe")
    assert d.name_parts(call.this) == ["local", "system", "expire_snapshots"]
    assert isinstance(call.expressions[1], exp.Kwarg) and call.expressions[1].this.name == "older_than"
    ref = _node(sqlglot.parse_one("ALTER TABLE db.t CREATE BRANCH b AS OF VERSION 3 RETAIN 2 DAYS "
                                  "WITH SNAPSHOT RETENTION 3 SNAPSHOTS 4 HOURS", read="icefloe"))
    assert (ref.args["action"], ref.args["kind"], ref.this.name, ref.args["version"], ref.args["retain"],
            ref.args["min_snapshots"], ref.args["max_age"]) == ("create", "branch", "b", 3, 2 * 86_400_000, 3,
                                                               4 * 3_600_000)
    part = _node(sqlglot.parse_one("ALTER TABLE db.t REPLACE PARTITION FIELD ts_day WITH months(ts) AS m",
                                   read="icefloe"))
    assert (part.args["old"], part.args["term"], part.args["alias"]) == ("ts_day", "months(ts)", "m")
    (v,) = _node(sqlglot.parse_one("ALTER TABLE db.t ALTER COLUMN v TYPE map<string, int> DROP NOT NULL",
                                   read="icefloe")).expressions
    assert (v.args["type"].name, v.args["nullable"]) == ("map<string, int>", True)


@pytest.mark.parametrize("text", [
    "SELECT a, count(*) FROM db.t WHERE x > 1 GROUP BY a ORDER BY 2 DESC LIMIT 3",
    "MERGE INTO db.t t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    "CREATE TABLE db.t (id BIGINT NOT NULL, ts TIMESTAMP) USING iceberg PARTITIONED BY (days(ts))",
    "ALTER TABLE db.t ADD COLUMN x INT", "ALTER TABLE db.t RENAME COLUMN a TO b",
    "ALTER TABLE db.t SET TBLPROPERTIES ('k' = 'v')", "DELETE FROM db.t WHERE id = 1",
    "SELECT * FROM db.t VERSION AS OF 3", "SHOW FUNCTIONS", "ADD JAR x.jar",
    "MSCK REPAIR TABLE db.t", "ALTER TABLE db.t DROP COLUMN a",
])
def test_the_spark_grammar_parses_as_spark_does(text):
    assert sqlglot.parse_one(text, read="icefloe") == sqlglot.parse_one(text, read="spark")


def test_for_system_version_and_time_are_time_travel():
    v = sqlglot.parse_one("SELECT * FROM t FOR SYSTEM_VERSION AS OF 42", read="icefloe").find(exp.Version)
    assert (v.name.upper(), v.expression.this) == ("VERSION", "42")
    v = sqlglot.parse_one("SELECT * FROM t FOR SYSTEM_TIME AS OF '2024-01-01'", read="icefloe").find(exp.Version)
    assert v.name.upper() == "TIMESTAMP"


@pytest.mark.parametrize("text,line,col,reason", [
    ("ALTER TABLE db.t CREATE TAG v WITH SNAPSHOT RETENTION 3 SNAPSHOTS", 1, 31, "branches only"),
    ("ALTER TABLE db.t\n  CREATE BRANCH", 2, 16, "expected a name, found end of statement"),
    ("ALTER TABLE db.t CREATE TAG t RETAIN 2 WEEKS", 1, 40, "expected DAYS, HOURS or MINUTES"),
    ("CALL local.system.f 1", 1, 21, "expected '(' after the procedure name"),
    ("SHOW TABLES LIKE 'x'", 1, 13, "SHOW TABLES takes only IN"),
])
def test_bad_extension_syntax_names_line_and_column(text, line, col, reason):
    with pytest.raises(ParseError) as ei:
        sqlglot.parse_one(text, read="icefloe")
    err = ei.value.errors[0]
    assert (err["line"], err["col"]) == (line, col) and reason in err["description"]
