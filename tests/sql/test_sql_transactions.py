"""``BEGIN; ...; COMMIT`` and ``ROLLBACK`` in a SQL session (``icefloe/sql/transactions.py``): the
statements between them staged and committed as one metadata version per table (all tables or none);
any failure rolls everything back; what cannot be staged is refused by name."""
import os
import sys

import pytest

import icefloe
from icefloe.errors import NotSupportedYetError, SqlError, VersionConflict
from icefloe.iceberg.transaction import MultiTableCommitUnsupported
from tests.interop_util import pyiceberg_table


def _rows(run, q):
    return sorted(tuple(r) for r in run(q).collect())


def _state(cat, *names):
    return {n: cat.load_table(n).metadata.to_json() for n in names}


def _data_files(cat, name):
    loc = cat.load_table(name).location
    return {os.path.join(d, f) for d, _, fs in os.walk(loc) for f in fs if f.endswith(".parquet")}


@pytest.fixture
def sql_catalog(tmp_path, spark):
    cat = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}", spark=spark)
    cat.create_namespace("db")
    return cat


def _table(cat, name="db.t"):
    cat.sql(f"CREATE TABLE {name} (id bigint, v string) USING iceberg")
    cat.sql(f"INSERT INTO {name} VALUES (1, 'a')")
    return cat.load_table(name)


def test_schema_change_insert_and_properties_commit_as_one_metadata_version(catalog):
    t = _table(catalog)
    versions, snapshots = len(t.metadata.metadata_log), len(t.snapshots())
    run = catalog.sql
    run("BEGIN")
    run("ALTER TABLE db.t ADD COLUMN n int")
    run("INSERT INTO db.t VALUES (2, 'b', 20)")          # written under the staged schema
    run("ALTER TABLE db.t SET TBLPROPERTIES ('owner' = 'ops')")
    assert catalog.load_table("db.t").metadata.to_json() == t.metadata.to_json()    # nothing visible yet
    run("COMMIT")
    t = catalog.load_table("db.t")
    assert len(t.metadata.metadata_log) == versions + 1 and len(t.snapshots()) == snapshots + 1
    assert t.schema.column_names == ["id", "v", "n"] and t.properties["owner"] == "ops"
    assert _rows(run, "SELECT id, v, n FROM db.t") == [(1, "a", None), (2, "b", 20)]
    # an independent reader sees the same single version
    seen = pyiceberg_table(t.metadata_location)
    assert seen.properties["owner"] == "ops" and [f.name for f in seen.schema().fields] == ["id", "v", "n"]
    assert sorted(seen.scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "v": "a", "n": None}, {"id": 2, "v": "b", "n": 20}]


def test_one_call_with_every_statement_and_rollback(catalog):
    _table(catalog)
    before, files = _state(catalog, "db.t"), _data_files(catalog, "db.t")
    catalog.sql("BEGIN; INSERT INTO db.t VALUES (2, 'b'); INSERT INTO db.t VALUES (3, 'c'); ROLLBACK")
    assert _state(catalog, "db.t") == before
    assert _data_files(catalog, "db.t") == files               # the staged data files were deleted
    catalog.sql("BEGIN; INSERT INTO db.t VALUES (2, 'b'); INSERT INTO db.t VALUES (3, 'c'); COMMIT")
    t = catalog.load_table("db.t")
    assert [s.operation for s in t.snapshots()] == ["append"] * 3      # the first insert, then two in one version
    assert _rows(catalog.sql, "SELECT id FROM db.t") == [(1,), (2,), (3,)]


def test_a_failing_statement_rolls_back_everything(catalog):
    _table(catalog)
    before, files = _state(catalog, "db.t"), _data_files(catalog, "db.t")
    run = catalog.sql
    run("BEGIN")
    run("INSERT INTO db.t VALUES (2, 'b')")
    with pytest.raises(SqlError) as e:
        run("INSERT INTO db.t (id, nope) VALUES (3, 'c')")
    if sys.version_info >= (3, 11):      # the error carries a note saying so
        assert "transaction was rolled back" in "\n".join(e.value.__notes__)
    assert _state(catalog, "db.t") == before and _data_files(catalog, "db.t") == files
    with pytest.raises(SqlError, match="COMMIT without a transaction"):
        run("COMMIT")


@pytest.mark.parametrize("statement, named", [
    ("DELETE FROM db.t WHERE id = 1", "DELETE"),
    ("INSERT OVERWRITE db.t VALUES (5, 'e')", "INSERT OVERWRITE"),
    ("CALL local.system.expire_snapshots(table => 'db.t')", "CALL"),
    ("ALTER TABLE db.t RENAME TO db.u", "ALTER TABLE action RENAME TO"),
    ("SELECT * FROM db.t", "inside a transaction that changed it"),
    ("INSERT INTO db.t.branch_main VALUES (6, 'f')", "INSERT into .*branch"),
])
def test_what_cannot_be_staged_is_refused_by_name_and_nothing_commits(catalog, statement, named):
    _table(catalog)
    before = _state(catalog, "db.t")
    catalog.sql("BEGIN; INSERT INTO db.t VALUES (2, 'b')")
    with pytest.raises(NotSupportedYetError, match=named):
        catalog.sql(statement)
    assert _state(catalog, "db.t") == before and catalog.table_exists("db.t")
    with pytest.raises(SqlError, match="without a transaction"):
        catalog.sql("ROLLBACK")


def test_queries_of_unchanged_tables_run_inside_a_transaction(catalog):
    _table(catalog)
    _table(catalog, "db.src")
    catalog.sql("BEGIN; INSERT INTO db.t SELECT id + 10, v FROM db.src")
    assert _rows(catalog.sql, "SELECT id FROM db.src") == [(1,)]
    catalog.sql("COMMIT")
    assert _rows(catalog.sql, "SELECT id FROM db.t") == [(1,), (11,)]


def test_nested_begin_and_stray_commit_are_errors(catalog):
    _table(catalog)
    before = _state(catalog, "db.t")
    with pytest.raises(SqlError, match="COMMIT without a transaction: BEGIN starts one"):
        catalog.sql("COMMIT")
    catalog.sql("BEGIN; INSERT INTO db.t VALUES (2, 'b')")
    with pytest.raises(SqlError, match="transactions do not nest"):
        catalog.sql("BEGIN")
    assert _state(catalog, "db.t") == before


def test_two_tables_commit_together_on_a_sql_catalog(sql_catalog):
    cat = sql_catalog
    _table(cat, "db.a")
    _table(cat, "db.b")
    cat.sql("BEGIN; INSERT INTO db.a VALUES (2, 'x'); ALTER TABLE db.b SET TBLPROPERTIES ('k' = 'v'); "
            "INSERT INTO db.b VALUES (3, 'y'); COMMIT")
    assert _rows(cat.sql, "SELECT id FROM db.a") == [(1,), (2,)]
    assert _rows(cat.sql, "SELECT id FROM db.b") == [(1,), (3,)] and cat.load_table("db.b").properties["k"] == "v"


def test_when_a_requirement_fails_at_commit_neither_table_changes(sql_catalog):
    cat = sql_catalog
    _table(cat, "db.a")
    _table(cat, "db.b")
    cat.sql("BEGIN; INSERT INTO db.a VALUES (2, 'x'); INSERT INTO db.b VALUES (2, 'x')")
    cat.load_table("db.b").update_properties(set={"other": "writer"})     # db.b's requirement now fails
    before = _state(cat, "db.a", "db.b")
    with pytest.raises(VersionConflict):
        cat.sql("COMMIT")
    assert _state(cat, "db.a", "db.b") == before
    assert _rows(cat.sql, "SELECT id FROM db.a") == [(1,)]


def test_a_hadoop_warehouse_refuses_a_second_table_and_rolls_back(catalog):
    _table(catalog, "db.a")
    _table(catalog, "db.b")
    before = _state(catalog, "db.a", "db.b")
    catalog.sql("BEGIN; INSERT INTO db.a VALUES (2, 'x')")
    with pytest.raises(MultiTableCommitUnsupported, match="cannot commit several tables atomically"):
        catalog.sql("INSERT INTO db.b VALUES (2, 'x')")
    assert _state(catalog, "db.a", "db.b") == before


def test_begin_on_a_paimon_catalog_is_refused(pcat):
    with pytest.raises(NotSupportedYetError, match="BEGIN on a paimon catalog"):
        pcat.sql("BEGIN")


def test_sql_run_on_its_own_session_may_not_end_inside_a_transaction(catalog, spark):
    from icefloe.catalog import sql

    _table(catalog)
    before, files = _state(catalog, "db.t"), _data_files(catalog, "db.t")
    with pytest.raises(SqlError, match="ended inside a transaction .*rolled back"):
        sql(spark, "BEGIN; INSERT INTO db.t VALUES (2, 'b')", catalog=catalog)
    assert _state(catalog, "db.t") == before and _data_files(catalog, "db.t") == files


def test_the_sql_command_commits_a_script_transaction_and_refuses_an_unfinished_one(tmp_path, spark):
    from click.testing import CliRunner

    from icefloe.cli import cli

    wh = str(tmp_path / "wh")
    cat = icefloe.Catalog(wh, spark=spark)
    _table(cat)
    r = CliRunner().invoke(cli, ["--warehouse", wh, "sql", "BEGIN; INSERT INTO db.t VALUES (2, 'b'); "
                                 "ALTER TABLE db.t SET TBLPROPERTIES ('k' = 'v'); COMMIT"])
    assert r.exit_code == 0, r.output
    t = cat.load_table("db.t")
    assert t.properties["k"] == "v" and len(t.snapshots()) == 2
    before = _state(cat, "db.t")
    r = CliRunner().invoke(cli, ["--warehouse", wh, "sql", "BEGIN; INSERT INTO db.t VALUES (3, 'c')"])
    assert r.exit_code != 0 and "ended inside a transaction" in str(r.exception or r.output)
    assert _state(cat, "db.t") == before
