"""The docs survey (``tools/doc_sql_survey.py``) on a small page of its own: which statements it finds,
what it leaves out of scope, and how it classifies what icefloe does with the rest (pass, refused
with a reason, fail: Spark's errors and silently wrong results)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools import doc_sql_survey as survey  # noqa: E402

FENCE = "```"
PAGE = f"""# A page of examples

{FENCE}sql
CREATE TABLE prod.db.t (id bigint, s string) USING iceberg;
INSERT INTO prod.db.t VALUES (1, 'a'), (2, 'b');
SELECT * FROM prod.db.t
{FENCE}

<Tabs>
<TabItem value="flink" label="Flink SQL">

{FENCE}sql
CREATE TABLE f (k INT PRIMARY KEY NOT ENFORCED) WITH ('connector' = 'x');
{FENCE}

</TabItem>
</Tabs>

  {FENCE}sql
  ALTER TABLE prod.db.t ADD PARTITION (s = 'x');
  SELECT no_such_function(1);
  COPY INTO prod.db.t FROM '/x' FILE_FORMAT = (TYPE = CSV);
  INSERT {{ INTO | OVERWRITE }} table_identifier VALUES (1)
  {FENCE}
"""


def test_statements_are_split_where_a_user_would_split_them():
    found = survey.split_statements("UPDATE t\nSET a = 1\nWHERE b = 2\nINSERT INTO t\nSELECT 1\n"
                                    "SELECT a\n  FROM t; -- a comment\nSELECT ';' AS x\n"
                                    "ALTER TABLE t CREATE BRANCH b\nWITH SNAPSHOT RETENTION 2 SNAPSHOTS", 10)
    assert [(line, " ".join(text.split())) for line, text, _flink in found] == [
        (10, "UPDATE t SET a = 1 WHERE b = 2"), (13, "INSERT INTO t SELECT 1"), (15, "SELECT a FROM t"),
        (17, "SELECT ';' AS x"), (18, "ALTER TABLE t CREATE BRANCH b WITH SNAPSHOT RETENTION 2 SNAPSHOTS")]
    flink = survey.split_statements("-- Flink SQL\nINSERT INTO t SELECT 1;\n-- Spark SQL\nSELECT 1", 1)
    assert [f for _l, _t, f in flink] == [True, False]


def test_out_of_scope_statements_are_told_apart():
    exs = survey.examples(PAGE)
    assert [(" ".join(e.text.split())[:24], e.out) for e in exs] == [
        ("CREATE TABLE prod.db.t (", ""), ("INSERT INTO prod.db.t VA", ""), ("SELECT * FROM prod.db.t", ""),
        ("CREATE TABLE f (k INT PR", "Flink SQL tab"), ("ALTER TABLE prod.db.t AD", ""),
        ("SELECT no_such_function(", ""), ("COPY INTO prod.db.t FROM", "COPY INTO"), ("INSERT { INTO | OVERWRIT", "")]
    assert survey.out_reason(exs[-1].text) == "a syntax template ({ a | b })"


def test_a_page_is_run_and_each_statement_classified(spark, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(PAGE)
    text = survey.Docs(str(tmp_path)).read("docs/page.md")
    page = survey.Page("page", "iceberg", ("docs/page.md",), setup=["CREATE NAMESPACE prod.db"])
    root = tmp_path / "run"
    root.mkdir()
    got = [(o.kind, o.cause) for o in survey.run_page(page, text, spark, str(root))]
    assert got == [("pass", ""), ("pass", ""), ("pass", ""), ("out", ""), ("refused", "not supported"),
                   ("fail", "Spark's message (names spark_catalog)"), ("out", ""), ("out", "")]


def test_a_statement_that_is_silently_ignored_fails(spark, tmp_path):
    """An INSERT that adds no rows, and a CREATE TABLE that makes no icefloe table, are failures even
    though no error was raised."""
    page = survey.Page("page", "iceberg", ("docs/page.md",), setup=["CREATE NAMESPACE prod.db"])
    run = survey.Run(page, spark, str(tmp_path))
    for s in page.setup:
        run.quietly(s)
    assert run.statement(survey.Example("CREATE TABLE prod.db.t (id bigint) USING iceberg", 1)).kind == "pass"
    assert run.statement(survey.Example("INSERT INTO prod.db.t VALUES (0)", 1)).kind == "pass"
    real = run.session.sql
    run.session.sql = lambda text: run.session.empty()      # an engine that accepts and does nothing
    try:
        ignored = run.statement(survey.Example("INSERT INTO prod.db.t VALUES (1), (2)", 2))
        created = run.statement(survey.Example("CREATE TABLE prod.db.u (id bigint)", 3))
        altered = run.statement(survey.Example("ALTER TABLE prod.db.t ALTER COLUMN id COMMENT 'the id'", 4))
    finally:
        run.session.sql = real
    assert (ignored.kind, ignored.cause, ignored.message) == (
        "fail", "wrong result", "INSERT of 2 rows: main went from 1 to 1 rows")
    assert (created.kind, created.cause) == ("fail", "wrong result") and "Spark's own catalog" in created.message
    assert (altered.kind, altered.message) == ("fail", "ALTER TABLE passed but wrote no new metadata: nothing changed")
    # a write-audit-publish branch: the rows must go to the branch, not to main
    assert run.statement(survey.Example("ALTER TABLE prod.db.t SET TBLPROPERTIES ('write.wap.enabled'='true')",
                                        5)).kind == "pass"
    assert run.statement(survey.Example("ALTER TABLE prod.db.t CREATE BRANCH audit", 6)).kind == "pass"
    assert run.statement(survey.Example("SET spark.wap.branch = audit", 7)).kind == "pass"
    staged = run.statement(survey.Example("INSERT INTO prod.db.t VALUES (3)", 8))
    assert staged.kind == "pass", staged.message
    t = run.table("prod.db.t")
    assert (t.to_arrow().num_rows, t.to_arrow(ref="audit").num_rows) == (1, 2)
    run.statement(survey.Example("RESET spark.wap.branch", 9))
    survey.reset_spark(spark)


def test_a_procedure_syntax_template_is_out_of_scope():
    assert survey.out_reason("CALL prod.system.procedure_name(arg_name_2 => arg_2, arg_name_1 => arg_1)") == \
        "a syntax template (names of grammar parts)"
    assert survey.out_reason("CALL prod.system.rollback_to_snapshot('db.sample', 1)") == ""
