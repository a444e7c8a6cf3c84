"""The ``icefloe`` command: output and exit codes.

Tables here are written with pyarrow appends, and the metadata commands must not ask for Spark (run
in this process with Spark refused, ``tests/cli_run.py``); only the SQL runs use it (the session's).
The console script as a real process: ``test_errors_are_one_line_and_verbose_shows_the_trace`` here,
and tests/cli/test_cli_scripts.py.
"""
import json
import os
import subprocess
import sys

import pyarrow as pa
import pytest

import icefloe
from tests.cli_run import icefloe_here

ICEFLOE = [sys.executable, "-c", "import sys; from icefloe.cli import main; main(sys.argv[1:])"]


def icefloe_cmd(warehouse, *args, stdin=None, env=None, spark=False):
    return icefloe_here("--warehouse", warehouse, *args, stdin=stdin, env={"ICEFLOE_CLI_WIDTH": "200", **(env or {})},
                        spark=spark)


@pytest.fixture
def arrow_table(tmp_path):
    wh = str(tmp_path / "wh")
    cat = icefloe.Catalog(wh)             # no Spark: pyarrow appends write the files
    t = cat.create_table("db.events", "id bigint not null, name string", partitioned_by=["bucket(2, id)"])
    t.append(pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "name": ["a", "b", "c", "d"]}))
    t.append(pa.table({"id": pa.array([5], pa.int64()), "name": ["e"]}))
    return wh, t


def test_metadata_commands_without_spark(arrow_table):
    wh, t = arrow_table
    r = icefloe_cmd(wh, "tables")
    assert r.returncode == 0 and r.stdout.split() == ["db.events"]
    r = icefloe_cmd(wh, "snapshots", "db.events", "--json")
    snaps = json.loads(r.stdout)
    assert [s["summary"]["total-records"] for s in snaps] == ["4", "5"]
    r = icefloe_cmd(wh, "snapshots", "local.db.events")
    assert r.returncode == 0 and str(t.current_snapshot().snapshot_id) in r.stdout
    r = icefloe_cmd(wh, "files", "db.events", "--json")
    assert sum(f["records"] for f in json.loads(r.stdout)) == 5
    r = icefloe_cmd(wh, "manifests", "db.events", "--json")
    assert len(json.loads(r.stdout)) == 2
    r = icefloe_cmd(wh, "describe", "db.events", "--json")
    assert {"col_name": "Part 0", "data_type": "bucket(2, id)", "comment": ""} in json.loads(r.stdout)
    r = icefloe_cmd(wh, "tree", "db.events")
    assert r.returncode == 0
    for text in ("manifest list snap-", "ADDED", "data/id_bucket=", "version-hint.text"):
        assert text in r.stdout
    r = icefloe_cmd(wh, "check", "db.events")
    assert r.returncode == 0 and r.stdout.startswith("OK db.events")
    r = icefloe_cmd(wh, "snapshots", "db.missing")
    assert r.returncode == 1 and "db.missing does not exist" in r.stderr
    r = icefloe_cmd(wh, "expire", "db.events", "--retain-last", "1")
    if hasattr(t, "expire_snapshots"):
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode == 2 and "not supported yet: expire snapshots" in r.stderr


def test_check_reports_a_deleted_data_file(arrow_table):
    wh, t = arrow_table
    victim = t.plan_files()[0]
    os.remove(victim.file_path)
    r = icefloe_cmd(wh, "check", "db.events", "--json")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert not report["ok"]
    assert {"kind": "file", "path": victim.file_path,
            "message": f"missing (recorded {victim.file_size_in_bytes} bytes, {victim.record_count} records)"} \
        in report["problems"]
    r = icefloe_cmd(wh, "check", "db.events")
    assert r.returncode == 1 and "FAILED" in r.stdout and victim.file_path in r.stdout


def test_check_reports_a_wrong_hint_and_a_wrong_size(arrow_table):
    wh, t = arrow_table
    hint = os.path.join(t.location, "metadata", "version-hint.text")
    with open(hint, "w") as f:
        f.write("2")
    victim = t.plan_files()[-1]
    with open(victim.file_path, "ab") as f:
        f.write(b"junk")
    r = icefloe_cmd(wh, "check", "db.events", "--json")
    assert r.returncode == 1
    problems = json.loads(r.stdout)["problems"]
    assert {"kind": "hint", "path": hint,
            "message": "says version 2 but the latest metadata file is v3.metadata.json"} in problems
    assert any(p["kind"] == "file" and p["path"] == victim.file_path and "bytes, the manifest records" in p["message"]
               for p in problems)


def test_sql_command(tmp_path, spark):
    wh = str(tmp_path / "wh")
    r = icefloe_cmd(wh, "sql", "CREATE TABLE local.db.t (id bigint, name string) USING iceberg; "
                               "INSERT INTO local.db.t VALUES (1, 'a'), (2, 'b'); "
                               "SELECT * FROM local.db.t ORDER BY id", "--json", spark=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]


def test_sql_shell_with_history(tmp_path, spark, monkeypatch):
    """The interactive shell, in-process (it uses the test session's Spark instead of a new JVM)."""
    from click.testing import CliRunner

    from icefloe.cli import cli

    wh = str(tmp_path / "wh")
    history = str(tmp_path / "history")
    monkeypatch.setenv("ICEFLOE_HISTORY", history)
    monkeypatch.setenv("ICEFLOE_CLI_WIDTH", "200")
    script = ("CREATE TABLE local.db.t (id bigint, name string) USING iceberg;\n"
              "INSERT INTO db.t VALUES (1, 'a'),\n  (2, 'b');\n"
              "SELECT count(*) AS n\n  FROM db.t;\n"
              "SELECT * FROM db.t.snapshots;\n"
              "SELECT * FROM local.db.nope;\n")
    r = CliRunner().invoke(cli, ["--warehouse", wh, "sql", "--interactive"], input=script)
    assert r.exit_code == 0, r.output
    assert "│ 2 │" in r.output                                    # the count, as a table
    assert "snapshot_id" in r.output and "append" in r.output
    assert "error: line 1, column 15: unknown table local.db.nope" in r.output
    assert os.path.exists(history)


def test_partition_values_read_as_people_write_them_and_tree_as_json(tmp_path):
    wh = str(tmp_path / "wh")
    t = icefloe.Catalog(wh).create_table("db.d", "id bigint not null, day date, ts timestamp",
                                         partitioned_by=["day", "months(ts)", "bucket(2, id)"])
    import datetime as dt

    t.append(pa.table({"id": pa.array([1], pa.int64()), "day": pa.array([dt.date(2024, 1, 1)]),
                       "ts": pa.array([dt.datetime(2024, 3, 5, 12)], pa.timestamp("us", "UTC"))}))
    r = icefloe_cmd(wh, "files", "db.d", "--json")
    assert r.returncode == 0, r.stderr
    part = json.loads(r.stdout)[0]["partition"]
    assert part["day"] == "2024-01-01" and part["ts_month"] == "2024-03" and part["id_bucket"] in ("0", "1")
    r = icefloe_cmd(wh, "files", "db.d")                       # piped: plain columns
    assert "day=2024-01-01/ts_month=2024-03/id_bucket=" in r.stdout
    r = icefloe_cmd(wh, "tree", "db.d", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["children"] and "label" in doc["children"][0]
    assert str(t.current_snapshot().snapshot_id) in json.dumps(doc)


def test_errors_are_one_line_and_verbose_shows_the_trace(arrow_table):
    wh, _t = arrow_table
    r = subprocess.run(ICEFLOE + ["--warehouse", wh, "snapshots", "db.nope"], capture_output=True, text=True,
                       timeout=240)
    assert r.returncode == 1 and r.stderr.strip().startswith("error:") and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = subprocess.run(ICEFLOE + ["--verbose", "--warehouse", wh, "snapshots", "db.nope"], capture_output=True,
                       text=True, timeout=240)
    assert r.returncode == 1 and "Traceback" in r.stderr and r.stderr.strip().splitlines()[-1].startswith("error:")


def test_secrets_in_summaries_and_properties_are_never_printed(tmp_path, spark, monkeypatch):
    """A writer's secret in a snapshot summary or a table property is masked wherever the CLI
    shows it (snapshots, describe, tree, the SQL metadata tables and DESCRIBE), in tables and in
    JSON; the table's metadata keeps it as written."""
    from click.testing import CliRunner

    from icefloe.cli import cli

    wh = str(tmp_path / "wh")
    t = icefloe.Catalog(wh).create_table("db.t", "id bigint", properties={"source.password": "S3cretPw"})
    monkeypatch.setattr(t, "app_summary", lambda: {"source.password": "S3cretPw", "s3.access-key-id": "AKIA1",
                                                   "source": "mysql://u:S3cretPw@h/db"})
    t.append(pa.table({"id": pa.array([1], pa.int64())}))
    assert t.refresh().current_snapshot().summary["source.password"] == "S3cretPw"     # the content is kept
    monkeypatch.setenv("ICEFLOE_CLI_WIDTH", "400")
    runs = [["snapshots", "db.t"], ["snapshots", "db.t", "--json"], ["describe", "db.t"],
            ["describe", "db.t", "--json"], ["tree", "db.t"], ["tree", "db.t", "--json"],
            ["sql", "SELECT * FROM db.t.snapshots"], ["sql", "SELECT * FROM db.t.snapshots", "--json"],
            ["sql", "DESCRIBE TABLE EXTENDED db.t"]]
    outputs = {}
    for args in runs:
        r = CliRunner().invoke(cli, ["--warehouse", wh, *args])
        assert r.exit_code == 0, (args, r.output)
        assert "S3cretPw" not in r.output, args
        outputs[" ".join(args)] = r.output
    summary = json.loads(outputs["sql SELECT * FROM db.t.snapshots --json"])[0]["summary"]
    assert summary["source.password"] == "***" and summary["source"] == "mysql://u:***@h/db"
    assert summary["s3.access-key-id"] == "AKIA1" and summary["added-records"] == "1"   # not a secret: shown
    props = {r["col_name"]: r["data_type"] for r in json.loads(outputs["describe db.t --json"])}["Table Properties"]
    assert "source.password=***" in props
    assert "source.password" in outputs["sql SELECT * FROM db.t.snapshots"]
