"""The ``sql`` command (a statement, a script, standard input or the interactive shell) and ``demo``."""
from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Optional

import click
from rich.console import Console

from icefloe.cli.common import make_console, open_catalog, print_df
from icefloe.errors import IcefloeError
from icefloe.sql import SqlSession
from icefloe.sql.ddl import list_tables


@click.command()
@click.option("--fresh/--keep", default=True, help="drop db.tb01 first")
@click.pass_context
def demo(ctx: click.Context, fresh: bool) -> None:
    """Replay the demo session on the warehouse (what `make demo` runs)."""
    from icefloe.demo import run

    run(ctx.obj["warehouse"], fresh=fresh)


def _spark_started(session: SqlSession) -> None:
    """Start Spark for ``session`` if it is not running, with a line on a terminal's standard
    error while it starts (it takes seconds; without the line the shell would seem stuck)."""
    from icefloe.spark import session as spark_session

    if session.spark_started or spark_session.embedded_started():
        return
    if sys.stderr.isatty():
        err = Console(stderr=True)
        with err.status("starting Spark (once per run) ..."):
            session.spark  # noqa: B018
    else:
        session.spark  # noqa: B018


def _run_script(session: SqlSession, text: str, as_json: bool, limit: int) -> None:
    """Every statement of ``text`` in order, each result printed; the first failure stops the
    script (the error goes to standard error and the exit code says so)."""
    first = True
    for _stmt, df in session.sql_each(text):
        if as_json and (df is None or not df.columns):
            continue            # JSON: one document per statement that returns rows
        if not first and not as_json:
            click.echo()
        first = False
        print_df(df, as_json, limit)


@click.command()
@click.argument("text", required=False)
@click.option("-f", "--file", "path", type=click.Path(exists=True, dir_okay=False), help="run the SQL in FILE")
@click.option("--json", "as_json", is_flag=True, help="print rows as JSON")
@click.option("--limit", default=1000, show_default=True, help="rows to print per statement (0: all)")
@click.option("-i", "--interactive", is_flag=True, help="the shell, even when standard input is not a terminal")
@click.pass_context
def sql(ctx: click.Context, text: Optional[str], path: Optional[str], as_json: bool, limit: int,
        interactive: bool) -> None:
    """Run SQL: TEXT, a file (-f), standard input when it is not a terminal, or else an
    interactive shell. Statements are separated by ';' (the last may omit it); each result is
    printed; the first failing statement stops the run with exit code 1."""
    session = SqlSession(open_catalog(ctx), None, ctx.obj["catalog_name"])
    if text is not None and path is not None:
        raise click.UsageError("give SQL as TEXT or with -f FILE, not both")
    if path is not None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    elif text is None and not interactive and not sys.stdin.isatty():
        text = sys.stdin.read()
    if text is not None:
        if text.strip() in ("-", ""):
            raise click.UsageError("no SQL given")
        _run_script(session, text, as_json, limit)
        session.finish()            # a transaction left open is rolled back, and an error
        return
    _shell(session, as_json, limit)


SHELL_HELP = """\
Statements end with ';' and may span lines (the prompt turns to '...>' until the ';').
  help, \\?      this help                 \\q, quit, exit, Ctrl-D   leave
  Ctrl-C        drop the statement being typed
  SHOW TABLES;  DESCRIBE db.t;  SELECT * FROM db.t LIMIT 10;  SELECT * FROM db.t.snapshots;
  CALL system.expire_snapshots(table => 'db.t', retain_last => 5);
Tab completes table names. Results show at most --limit rows."""


def _shell(session: SqlSession, as_json: bool, limit: int) -> None:
    history = os.path.expanduser(os.environ.get("ICEFLOE_HISTORY", "~/.icefloe_history"))
    try:
        import readline

        try:
            readline.read_history_file(history)
        except (FileNotFoundError, OSError):
            pass
    except ImportError:  # pragma: no cover - platforms without readline
        readline = None
    console = make_console()
    if readline is not None:
        _complete_tables(readline, session)
    console.print(f"icefloe SQL on {session.catalog.warehouse} ({session.catalog.format}); "
                  "end statements with ';', 'help' for help, quit with \\q or Ctrl-D", markup=False, highlight=False)
    buf: list[str] = []
    while True:
        try:
            line = input("icefloe> " if not buf else "     ...> ")
        except EOFError:
            break
        except KeyboardInterrupt:
            buf = []
            click.echo()
            continue
        if not buf and line.strip().rstrip(";") in ("\\q", "quit", "exit"):
            break
        if not buf and line.strip().rstrip(";").lower() in ("help", "\\?", "\\h"):
            console.print(SHELL_HELP, markup=False, highlight=False)
            continue
        buf.append(line)
        text = "\n".join(buf).strip()
        if not text.endswith(";"):
            continue
        buf = []
        try:
            _spark_started(session)
            _run_script(session, text, as_json, limit)
        except IcefloeError as e:
            console.print(f"[red]error:[/] {e}")
        except Exception as e:  # keep the shell alive on Spark errors
            console.print(f"[red]error:[/] {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    try:
        session.finish()
    except IcefloeError as e:
        console.print(f"[red]error:[/] {e}")
    if readline is not None:
        try:
            readline.write_history_file(history)
        except OSError:
            pass


def _complete_tables(readline: ModuleType, session: SqlSession) -> None:
    """Tab completion of table names (db.t) and SQL keywords in the shell."""
    words = ["SELECT", "FROM", "WHERE", "INSERT", "INTO", "VALUES", "UPDATE", "DELETE", "MERGE", "CREATE", "TABLE",
             "DROP", "ALTER", "DESCRIBE", "SHOW", "TABLES", "CALL", "system."]

    def names() -> list[str]:
        try:
            return [f"{ns}.{t}" for ns, t in list_tables(session.catalog, None)]
        except Exception:
            return []

    def complete(text: str, state: int) -> Optional[str]:
        options = [w for w in names() + words if w.lower().startswith(text.lower())]
        return options[state] if state < len(options) else None

    readline.set_completer_delims(" \t\n;,()=")
    readline.set_completer(complete)
    readline.parse_and_bind("tab: complete")
