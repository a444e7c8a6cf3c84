"""The documentation site: every example in it runs (the Python blocks of each tutorial in
order, the SQL reference statement by statement, the command-line examples as commands), and
``mkdocs build --strict`` builds it without a warning."""
import contextlib
import io
import os
import re
import textwrap
import shlex
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe.sql.parser import split

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = ["getting-started.md", "own-session.md", "iceberg.md", "paimon.md", "streaming.md"]


def blocks(page: str, lang: str) -> list:
    """The page's ``lang`` code blocks, each dedented (a block may sit in a tab or an admonition)."""
    found = re.findall(rf"^([ \t]*)```{lang}\n(.*?)^[ \t]*```", (DOCS / page).read_text(), re.S | re.M)
    return [textwrap.dedent(code) if indent else code for indent, code in found]


def shown_output(code: str) -> list:
    """The output a block shows as comments: the ``# ...`` lines right under a ``print(...)`` or
    ``.show()`` line, as text (one entry per such run of lines)."""
    out, lines = [], code.splitlines()
    for i, line in enumerate(lines):
        if not re.search(r"\bprint\(|\.show\(", line.split("#")[0]):
            continue
        shown = []
        for follow in lines[i + 1:]:
            if not follow.startswith("# "):
                break
            shown.append(follow[2:])
        if shown:
            out.append("\n".join(shown))
    return out


@pytest.mark.parametrize("page", PAGES)
def test_python_examples_run(page, tmp_path, monkeypatch, spark):
    monkeypatch.chdir(tmp_path)
    code = blocks(page, "python")
    assert len(code) >= 2, page
    namespace: dict = {}
    for i, block in enumerate(code):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(block, f"{page} example {i + 1}", "exec"), namespace)   # noqa: S102
        text = "\n".join(line.rstrip() for line in printed.getvalue().splitlines())
        for expected in shown_output(block):
            assert expected in text, f"{page} example {i + 1} shows\n{expected}\nbut printed\n{text}"


def test_sql_reference_runs(tmp_path, monkeypatch, spark):
    monkeypatch.chdir(tmp_path)
    cat = icefloe.Catalog("warehouse", spark=spark)
    statements = [s.text for block in blocks("sql.md", "sql") for s in split(block)]
    assert len(statements) > 30
    for text in statements:
        cat.sql(text).collect()
    assert cat.sql("SELECT count(*) FROM local.shop.orders").collect()[0][0] == 0      # after TRUNCATE
    assert cat.sql("SELECT count(*) FROM shop.orders.branch_dev").collect()[0][0] == 3


def test_object_store_example_runs(s3_server, spark, monkeypatch, tmp_path):
    """The configuration page's object-store example, against the test S3 server."""
    monkeypatch.chdir(tmp_path)
    bucket = s3_server.new_bucket()
    code = [b for b in blocks("configuration.md", "python") if "s3://" in b]     # (HDFS's: tests/objectstore/test_hdfs.py)
    assert len(code) == 1
    props = s3_server.properties
    block = (code[0].replace("my-bucket", bucket).replace("http://127.0.0.1:9000", props["s3.endpoint"])
             .replace("my-key-id", props["s3.access-key-id"]).replace("my-secret", props["s3.secret-access-key"]))
    namespace: dict = {}
    exec(compile(block, "configuration.md object stores", "exec"), namespace)   # noqa: S102
    assert any(k.endswith(".metadata.json") for k in s3_server.keys(bucket))


def test_configuration_example_is_a_working_configuration(tmp_path, monkeypatch, spark):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ICEFLOE_CONFIG", raising=False)
    for k in [k for k in os.environ if k.startswith("ICEFLOE_CATALOG__")]:
        monkeypatch.delenv(k)
    (tmp_path / ".icefloe.yaml").write_text(blocks("configuration.md", "yaml")[0])
    assert icefloe.load_catalog(spark=spark).warehouse == str(tmp_path / "warehouse")
    assert icefloe.load_catalog("logs", spark=spark).format == "paimon"


def test_cli_examples_run(tmp_path, monkeypatch, spark):
    """The CLI page's command lines, in this process (tests/cli_run.py; the console script itself
    runs as a process in tests/cli): the SQL one with the session's Spark, the others without Spark."""
    from tests.cli_run import icefloe_here

    wh = tmp_path / "warehouse"
    t = icefloe.Catalog(str(wh)).create_table("db.t", "id bigint not null, name string")
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]}))
    monkeypatch.chdir(tmp_path)
    lines = [ln for block in blocks("cli.md", "sh") for ln in block.splitlines() if ln.strip()]
    assert len(lines) >= 5
    for line in lines:
        argv = shlex.split(line)
        assert argv[0] == "icefloe"
        proc = icefloe_here(*argv[1:], spark=" sql " in f" {line} ")
        assert proc.returncode == 0, (line, proc.stdout, proc.stderr)
        assert proc.stdout.strip(), line


def test_cli_page_lists_every_command():
    import click

    from icefloe import cli

    group = next(v for v in vars(cli).values() if isinstance(v, click.Group))
    page = (DOCS / "cli.md").read_text()
    listed = set(re.findall(r"^\| `([a-z-]+)", page, re.M))
    assert listed == set(group.commands), (set(group.commands) - listed, listed - set(group.commands))


def test_the_site_builds_without_warnings(built_site):
    site, stderr = built_site
    assert "WARNING" not in stderr, stderr
    api = (site / "api" / "index.html").read_text()
    for member in ("icefloe.Catalog.load_table", "icefloe.table.Table.merge", "icefloe.table.Table.to_spark"):
        assert f'id="{member}"' in api, member


def test_migration_page_runs(tmp_path, monkeypatch, spark):
    """The migration page's Python blocks in order, then its command lines (in this process:
    the commands share the session's Spark)."""
    from click.testing import CliRunner

    from icefloe.cli import cli

    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for i, block in enumerate(blocks("migration.md", "python")):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(block, f"migration.md example {i + 1}", "exec"), namespace)   # noqa: S102
        text = "\n".join(line.rstrip() for line in printed.getvalue().splitlines())
        for expected in shown_output(block):
            assert expected in text, f"migration.md example {i + 1} shows\n{expected}\nbut printed\n{text}"
    lines = [ln for block in blocks("migration.md", "sh") for ln in block.splitlines() if ln.strip()]
    assert len(lines) == 3
    for line in lines:
        argv = shlex.split(line)
        result = CliRunner().invoke(cli, argv[1:], catch_exceptions=False)
        assert result.exit_code == 0, (line, result.output)
    cat = icefloe.Catalog("warehouse", spark=spark)
    assert cat.load_table("db.sales").to_spark().count() == 4
    assert cat.load_table("db.landing_copy").to_spark().count() == 4
    assert icefloe.Catalog("warehouse", format="paimon", spark=spark).load_table("db.clicks").to_spark().count() == 2
    assert not cat.table_exists("db.clicks")
