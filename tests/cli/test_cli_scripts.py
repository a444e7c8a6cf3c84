"""The CLI as scripts use it: piped output, ``icefloe sql`` with files, standard input and
several statements, exit codes; and the interactive shell in a pseudo-terminal."""
import os
import pty
import select
import subprocess
import sys
import time

import pyarrow as pa
import pytest
from click.testing import CliRunner

import icefloe
from icefloe.cli import cli

ICEFLOE = [os.path.join(os.path.dirname(sys.executable), "icefloe")]


def _plain_env():
    env = dict(os.environ)
    env.pop("ICEFLOE_CLI_WIDTH", None)
    return env


@pytest.fixture
def arrow_wh(tmp_path):
    wh = str(tmp_path / "wh")
    t = icefloe.Catalog(wh).create_table("db.events", "id bigint not null, name string",
                                         partitioned_by=["bucket(2, id)"])
    for lo in range(0, 9, 3):
        t.append(pa.table({"id": pa.array(range(lo, lo + 3), pa.int64()), "name": [f"n{i}" for i in range(3)]}))
    return wh, t


def test_piped_metadata_output_is_plain_columns_never_wrapped(arrow_wh):
    wh, t = arrow_wh
    r = subprocess.run(ICEFLOE + ["--warehouse", wh, "snapshots", "db.events"], capture_output=True, text=True,
                       env=_plain_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split("\t") == ["seq", "snapshot id", "parent", "operation", "+files", "-files", "+rows", "-rows",
                                    "rows", "files", "committed"]
    assert len(lines) == 1 + len(t.snapshots())
    rows = [ln.split("\t") for ln in lines[1:]]
    assert all(len(r) == 11 for r in rows)
    assert [r[1].rstrip(" *") for r in rows] == [str(s.snapshot_id) for s in t.snapshots()]
    files = subprocess.run(ICEFLOE + ["--warehouse", wh, "files", "db.events"], capture_output=True, text=True,
                           env=_plain_env(), timeout=120)
    paths = [ln.split("\t")[0] for ln in files.stdout.splitlines()[1:]]
    assert sorted(paths) == sorted(f.file_path for f in t.plan_files())   # whole paths, one per line


def test_version():
    r = CliRunner().invoke(cli, ["--version"])
    assert r.exit_code == 0 and r.output.strip() == f"icefloe, version {icefloe.__version__}"


def test_sql_scripts_from_stdin_and_files(tmp_path, spark):
    wh = str(tmp_path / "wh")
    runner = CliRunner()
    # standard input, several statements, the last without ';': each result printed
    script = ("CREATE TABLE local.db.t (id bigint, name string) USING iceberg;\n"
              "INSERT INTO local.db.t VALUES (1, 'a'), (2, 'b'), (3, 'c');\n"
              "SELECT count(*) AS n FROM local.db.t;\n"
              "SELECT id FROM local.db.t ORDER BY id")
    r = runner.invoke(cli, ["--warehouse", wh, "sql"], input=script)
    assert r.exit_code == 0, r.output
    assert r.stdout.split("\n\n") == ["OK", "OK", "n\n3", "id\n1\n2\n3\n"]
    # a failing statement stops the script: exit code 1, the error on stderr, later statements not run
    path = tmp_path / "q.sql"
    path.write_text("INSERT INTO local.db.t VALUES (4, 'd');\nSELECT * FROM local.db.nope;\n"
                    "INSERT INTO local.db.t VALUES (5, 'e');\n")
    r = runner.invoke(cli, ["--warehouse", wh, "sql", "-f", str(path)])
    assert r.exit_code == 1      # (the installed command prints the error on stderr; see test_cli_commands)
    assert "unknown table local.db.nope" in str(r.exception) and "line 2" in str(r.exception)
    assert sorted(x["id"] for x in icefloe.Catalog(wh).load_table("db.t").to_arrow().to_pylist()) == [1, 2, 3, 4]
    # --limit cuts with a warning; --json prints one document per statement with rows
    r = runner.invoke(cli, ["--warehouse", wh, "sql", "--json", "--limit", "2"],
                      input="SELECT id FROM local.db.t ORDER BY id; SELECT count(*) AS n FROM local.db.t")
    assert r.exit_code == 0, r.output
    docs = [d for d in r.stdout.split("\n]\n") if d.strip()]
    assert len(docs) == 2 and '"id": 2' in docs[0] and '"id": 3' not in docs[0] and '"n": 4' in docs[1]
    assert "showing the first 2 rows" in r.stderr
    r = runner.invoke(cli, ["--warehouse", wh, "sql", "--limit", "0"], input="SELECT id FROM local.db.t ORDER BY id")
    assert r.stdout.split() == ["id", "1", "2", "3", "4"] and "showing" not in r.stderr
    r = runner.invoke(cli, ["--warehouse", wh, "sql"], input="   \n")
    assert r.exit_code != 0 and "no SQL given" in r.output


def _read_until(fd, pattern: bytes, timeout: float) -> bytes:
    out = b""
    deadline = time.time() + timeout
    while pattern not in out and time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out


def test_the_shell_in_a_terminal(tmp_path):
    wh = str(tmp_path / "wh")
    master, slave = pty.openpty()
    env = _plain_env()
    env["ICEFLOE_HISTORY"] = str(tmp_path / "history")
    proc = subprocess.Popen(ICEFLOE + ["--warehouse", wh, "sql"], stdin=slave, stdout=slave, stderr=slave, env=env,
                            close_fds=True)
    os.close(slave)
    try:
        banner = _read_until(master, b"icefloe> ", 60)
        assert b"'help' for help" in banner and b"icefloe> " in banner
        os.write(master, b"help\n")
        out = _read_until(master, b"icefloe> ", 30)
        assert b"Statements end with ';'" in out and b"Tab completes table names" in out
        # a statement over two lines; Spark starts with a line saying so
        os.write(master, b"SELECT 40 + 2\n")
        assert b"...> " in _read_until(master, b"...> ", 30)
        os.write(master, b"AS answer;\n")
        out = _read_until(master, b"icefloe> ", 240)
        assert b"starting Spark" in out and b"42" in out and b"answer" in out
        os.write(master, b"\\q\n")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def test_warehouse_mistakes_and_the_format_found_per_table(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    r = CliRunner().invoke(cli, ["--warehouse", str(afile), "tables"])
    assert r.exit_code != 0 and "is a file" in str(r.exception)
    missing = tmp_path / "typo"
    r = CliRunner().invoke(cli, ["--warehouse", str(missing), "tables"])
    assert r.exit_code != 0 and "does not exist" in str(r.exception) and not missing.exists()
    # one warehouse, both formats: every command finds each table in its own format
    wh = str(tmp_path / "wh")
    icefloe.Catalog(wh).create_table("db.ice", "id bigint")
    p = icefloe.Catalog(wh, "paimon").create_table("db.pai", "id bigint")
    p.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    r = CliRunner().invoke(cli, ["--warehouse", wh, "tables"])
    assert r.exit_code == 0 and r.stdout.split() == ["db.ice", "db.pai"]
    r = CliRunner().invoke(cli, ["--warehouse", wh, "snapshots", "db.pai"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1].split("\t")[3] == "append"
    r = CliRunner().invoke(cli, ["--warehouse", wh, "tables", "nope"])
    assert r.exit_code != 0 and "namespace nope does not exist" in str(r.exception)
