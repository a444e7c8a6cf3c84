"""The ``icefloe`` command line.

``icefloe --warehouse DIR [--format iceberg|paimon] COMMAND``. Commands that only
read metadata (``tables``, ``describe``, ``snapshots``, ``files``, ``manifests``,
``tree``, ``check``) never start Spark; ``sql``, ``demo`` and the maintenance
commands do when they need it. Exit codes: 0 success, 1 an error (or ``check``
found problems), 2 a capability icefloe does not have yet.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import sys

import click
from rich.console import Console
from rich.table import Table as RichTable
from rich.markup import escape
from rich.tree import Tree

from icefloe.core.io import is_remote
from icefloe.core.redact import redact, redact_properties
from icefloe.core.tree import Node
from icefloe.errors import IcefloeError, NoSuchNamespaceError, NoSuchTableError, NotSupportedError, WarehouseError
from icefloe.catalog import Catalog
from icefloe.check import check_table
from icefloe.core import progress
from icefloe.demo import file_tree
from icefloe.sql import SqlSession
from icefloe.sql.ddl import describe_rows, list_tables

EXIT_ERROR = 1
EXIT_NOT_SUPPORTED = 2


def _piped() -> bool:
    """Whether standard output is not a terminal (a pipe or a file): then nothing is wrapped
    or squeezed to a width, and tables are plain tab-separated columns."""
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError):
        return True


def _console() -> Console:
    width = int(os.environ.get("ICEFLOE_CLI_WIDTH", "0")) or None
    if width is None and _piped():
        return Console(width=100_000, soft_wrap=True, no_color=True, highlight=False)
    return Console(width=width)


def _version() -> str:
    from icefloe import __version__

    return __version__


@click.group()
@click.version_option(_version(), "--version", prog_name="icefloe")
@click.option("--warehouse", default="warehouse", show_default=True, help="warehouse directory")
@click.option("--format", "fmt", default="iceberg", type=click.Choice(["iceberg", "paimon"]), show_default=True)
@click.option("--catalog-name", default="local", show_default=True, help="catalog name used in SQL (local.db.t)")
@click.option("--verbose", is_flag=True, help="on an error, print the full trace (Spark's included)")
@click.option("--catalog", "catalog", default=None,
              help="a catalog configured in .icefloe.yaml or ICEFLOE_CATALOG__<NAME>__* (its warehouse and format; "
                   "--warehouse and --format override them)")
@click.pass_context
def cli(ctx, warehouse, fmt, catalog_name, verbose, catalog):
    """icefloe: Iceberg and Paimon tables with Spark as the data plane."""
    if catalog:
        from click.core import ParameterSource

        from icefloe.config import ConfigError, catalog_properties

        try:
            props = catalog_properties(catalog)
        except ConfigError as e:
            raise click.UsageError(str(e)) from None
        if ctx.get_parameter_source("warehouse") is ParameterSource.DEFAULT:
            if not props.get("warehouse"):
                raise click.UsageError(f"catalog {catalog!r} has no warehouse configured (.icefloe.yaml or "
                                       f"ICEFLOE_CATALOG__{catalog.upper()}__WAREHOUSE)")
            warehouse = str(props["warehouse"])
        if ctx.get_parameter_source("fmt") is ParameterSource.DEFAULT and props.get("format"):
            fmt = str(props["format"]).lower()
        from icefloe.config import storage_properties

        sql_catalog = {k: props[k] for k in ("type", "uri", "name") if props.get(k)}
        storage = storage_properties(props)
    else:
        sql_catalog, storage = {}, {}
    ctx.obj = {"warehouse": warehouse, "format": fmt, "catalog_name": catalog_name, "sql_catalog": sql_catalog,
               "storage": storage, "open_catalog": lambda fmt: _catalog(ctx, fmt)}


def _catalog(ctx, fmt=None, create: bool = True):
    """The warehouse's catalog (of ``fmt``, default the --format). ``create``: a missing
    warehouse directory is made (SQL may create the first table); else it is an error,
    since a mistyped --warehouse would otherwise look like an empty one."""
    wh = ctx.obj["warehouse"]
    fmt = fmt or ctx.obj["format"]
    if is_remote(wh):
        extra = (ctx.obj.get("sql_catalog") or {}) if fmt == "iceberg" else {}
        return Catalog(wh, format=fmt, **extra, **(ctx.obj.get("storage") or {}))
    if os.path.exists(wh) and not os.path.isdir(wh):
        raise WarehouseError(f"--warehouse {wh} is a file; it must name the directory that holds the tables")
    if not create and not os.path.isdir(wh):
        raise WarehouseError(f"warehouse {wh} does not exist (--warehouse names the directory that holds the "
                             f"tables; the current directory is {os.getcwd()})")
    fmt = fmt or ctx.obj["format"]
    extra = (ctx.obj.get("sql_catalog") or {}) if fmt == "iceberg" else {}
    return Catalog(wh, format=fmt, **extra)


def _load(ctx, name):
    """The table ``name`` in whichever format the warehouse holds it (the --format one first)."""
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == ctx.obj["catalog_name"]:
        name = ".".join(parts[1:])
    first = ctx.obj["format"]
    try:
        return _catalog(ctx, first, create=False).load_table(name)
    except NoSuchTableError as e:
        other = "paimon" if first == "iceberg" else "iceberg"
        try:
            return _catalog(ctx, other, create=False).load_table(name)
        except NoSuchTableError:
            raise e from None


def _ms(ms) -> str:
    if ms is None:
        return ""
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _echo_json(obj) -> None:
    click.echo(json.dumps(obj, indent=2, default=_json_default))


def _json_default(v):
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, (dt.datetime, dt.date)):
        return v.isoformat()
    return str(v)


def _cell(v) -> str:
    return "" if v is None else (v.hex() if isinstance(v, (bytes, bytearray)) else str(v))


def _rows_table(title, columns, rows, no_wrap=()):
    """A rich table on a terminal; piped, plain tab-separated lines (a header, then one line per
    row; tabs and newlines inside values escaped), which ``print`` writes as they are."""
    if _piped() and not os.environ.get("ICEFLOE_CLI_WIDTH"):
        return _PlainRows(columns, rows)
    rt = RichTable(title=title)
    for c in columns:
        rt.add_column(c, overflow="fold", no_wrap=c in no_wrap)
    for r in rows:
        rt.add_row(*[_cell(v) for v in r])
    return rt


class _PlainRows:
    def __init__(self, columns, rows):
        self.columns, self.rows = list(columns), list(rows)

    def lines(self):
        def esc(v):
            return _cell(v).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")

        yield "\t".join(self.columns)
        for r in self.rows:
            yield "\t".join(esc(v) for v in r)


def _show(renderable) -> None:
    """Print a table: plain lines as they are, anything else through rich."""
    if isinstance(renderable, _PlainRows):
        for line in renderable.lines():
            click.echo(line)
        return
    _console().print(renderable)


def _metadata_rows(table, name):
    """(column names, rows) of a metadata table, built without Spark."""
    arrow = table.metadata_table(name)
    return arrow.column_names, [tuple(r.values()) for r in arrow.to_pylist()]


# --------------------------------------------------------------------------- progress bars
class _Bars:
    """Progress bars on stderr: one per loop icefloe reports (:mod:`icefloe.core.progress`),
    and one for the Spark job running, if any (its stages' tasks, polled)."""
    def __init__(self, title: str):
        import threading

        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn)

        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=False)
        self.title = title
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll_spark, daemon=True)
        self._spark_task = None

    # the Reporter protocol
    def start(self, description, total):
        return self.progress.add_task(description, total=total)

    def advance(self, handle, n=1):
        self.progress.advance(handle, n)

    def finish(self, handle):
        task = self.progress.tasks[handle] if handle < len(self.progress.tasks) else None
        if task is not None and task.total is None:
            self.progress.update(handle, total=task.completed)

    def _poll_spark(self):
        """Tasks done / tasks in the active stages of the running Spark job."""
        while not self._stop.wait(0.25):
            try:
                from pyspark import SparkContext

                sc = SparkContext._active_spark_context
                if sc is None:
                    continue
                tracker = sc.statusTracker()
                infos = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
                infos = [i for i in infos if i is not None]
                if not infos:
                    continue
                total = sum(i.numTasks for i in infos)
                done = sum(i.numCompletedTasks for i in infos)
                label = f"Spark stage {', '.join(str(i.stageId) for i in infos)}"
                if self._spark_task is None:
                    self._spark_task = self.progress.add_task(label, total=total, completed=done)
                else:
                    self.progress.update(self._spark_task, description=label, total=total, completed=done)
            except Exception:  # progress is best effort; never break the work it reports on
                continue

    def __enter__(self):
        self.progress.start()
        self._main = self.progress.add_task(self.title, total=None)
        self._thread.start()
        self._ctx = progress.reporting(self)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=1)
        if self._spark_task is not None:
            task = self.progress.tasks[self._spark_task]
            self.progress.update(self._spark_task, completed=task.total or task.completed)
        self._ctx.__exit__(*exc)
        self.progress.update(self._main, total=1, completed=1)
        self.progress.stop()
        return False


# --------------------------------------------------------------------------- demo and SQL
@cli.command()
@click.option("--fresh/--keep", default=True, help="drop db.tb01 first")
@click.pass_context
def demo(ctx, fresh):
    """Replay the demo session on the warehouse (what `make demo` runs)."""
    from icefloe.demo import run

    run(ctx.obj["warehouse"], fresh=fresh)


def _print_df(df, as_json: bool, limit: int) -> None:
    """A statement's result: its rows (at most ``limit``, 0 for all, with a warning on standard
    error when rows were left out), or OK for a statement without rows."""
    if df is None or not df.columns:
        if not as_json:
            click.echo("OK")
        else:
            _echo_json([])
        return
    rows = (df.limit(limit + 1) if limit > 0 else df).collect()
    if limit > 0 and len(rows) > limit:
        rows = rows[:limit]
        click.echo(f"warning: showing the first {limit} rows; more were left out (--limit N, 0 for all)", err=True)
    secret_maps = _SECRET_MAP_COLUMNS & set(df.columns)
    if as_json:
        _echo_json([_redacted_maps(r.asDict(recursive=True), secret_maps) for r in rows])
        return
    _show(_rows_table(None, df.columns, [tuple(redact_properties(v) if c in secret_maps and isinstance(v, dict) else v
                                               for c, v in zip(df.columns, r)) for r in rows]))


# map columns of metadata tables that may hold a writer's secrets (snapshots.summary, Paimon's options)
_SECRET_MAP_COLUMNS = frozenset({"summary", "properties", "options"})


def _redacted_maps(row: dict, columns) -> dict:
    """``row`` with the values of secret-named keys in its map ``columns`` masked (a snapshot
    summary may hold a writer's password): the same rule as ``snapshots --json``."""
    return {k: redact_properties(v) if k in columns and isinstance(v, dict) else v for k, v in row.items()}


def _spark_started(session) -> None:
    """Start Spark for ``session`` if it is not running, with a line on a terminal's standard
    error while it starts (it takes seconds; without the line the shell would seem stuck)."""
    from icefloe.spark import session as spark_session

    if session._spark is not None or spark_session._session is not None:
        return
    if sys.stderr.isatty():
        err = Console(stderr=True)
        with err.status("starting Spark (once per run) ..."):
            session.spark  # noqa: B018
    else:
        session.spark  # noqa: B018


def _run_script(session, text: str, as_json: bool, limit: int) -> None:
    """Every statement of ``text`` in order, each result printed; the first failure stops the
    script (the error goes to standard error and the exit code says so)."""
    first = True
    for _stmt, df in session.sql_each(text):
        if as_json and (df is None or not df.columns):
            continue            # JSON: one document per statement that returns rows
        if not first and not as_json:
            click.echo()
        first = False
        _print_df(df, as_json, limit)


@cli.command()
@click.argument("text", required=False)
@click.option("-f", "--file", "path", type=click.Path(exists=True, dir_okay=False), help="run the SQL in FILE")
@click.option("--json", "as_json", is_flag=True, help="print rows as JSON")
@click.option("--limit", default=1000, show_default=True, help="rows to print per statement (0: all)")
@click.option("-i", "--interactive", is_flag=True, help="the shell, even when standard input is not a terminal")
@click.pass_context
def sql(ctx, text, path, as_json, limit, interactive):
    """Run SQL: TEXT, a file (-f), standard input when it is not a terminal, or else an
    interactive shell. Statements are separated by ';' (the last may omit it); each result is
    printed; the first failing statement stops the run with exit code 1."""
    session = SqlSession(_catalog(ctx), None, ctx.obj["catalog_name"])
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
        return
    _shell(session, as_json, limit)


SHELL_HELP = """\
Statements end with ';' and may span lines (the prompt turns to '...>' until the ';').
  help, \\?      this help                 \\q, quit, exit, Ctrl-D   leave
  Ctrl-C        drop the statement being typed
  SHOW TABLES;  DESCRIBE db.t;  SELECT * FROM db.t LIMIT 10;  SELECT * FROM db.t.snapshots;
  CALL system.expire_snapshots(table => 'db.t', retain_last => 5);
Tab completes table names. Results show at most --limit rows."""


def _shell(session, as_json: bool, limit: int) -> None:
    history = os.path.expanduser(os.environ.get("ICEFLOE_HISTORY", "~/.icefloe_history"))
    try:
        import readline

        try:
            readline.read_history_file(history)
        except (FileNotFoundError, OSError):
            pass
    except ImportError:  # pragma: no cover - platforms without readline
        readline = None
    console = _console()
    if readline is not None:
        _complete_tables(readline, session)
    console.print(f"icefloe SQL on {session.catalog.warehouse} ({session.catalog.format}); "
                  "end statements with ';', 'help' for help, quit with \\q or Ctrl-D", markup=False, highlight=False)
    buf = []
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
    if readline is not None:
        try:
            readline.write_history_file(history)
        except OSError:
            pass


def _complete_tables(readline, session) -> None:
    """Tab completion of table names (db.t) and SQL keywords in the shell."""
    words = ["SELECT", "FROM", "WHERE", "INSERT", "INTO", "VALUES", "UPDATE", "DELETE", "MERGE", "CREATE", "TABLE",
             "DROP", "ALTER", "DESCRIBE", "SHOW", "TABLES", "CALL", "system."]

    def names():
        try:
            return [f"{ns}.{t}" for ns, t in list_tables(session.catalog, None)]
        except Exception:
            return []

    def complete(text, state):
        options = [w for w in names() + words if w.lower().startswith(text.lower())]
        return options[state] if state < len(options) else None

    readline.set_completer_delims(" \t\n;,()=")
    readline.set_completer(complete)
    readline.parse_and_bind("tab: complete")


def _namespace_exists(ctx, namespace: str) -> bool:
    wh = ctx.obj["warehouse"]
    return os.path.isdir(os.path.join(wh, namespace)) or os.path.isdir(os.path.join(wh, f"{namespace}.db"))


# --------------------------------------------------------------------------- reading metadata
@cli.command()
@click.argument("namespace", required=False)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def tables(ctx, namespace, as_json):
    """List the tables (of one namespace, or all)."""
    found: list = []
    for fmt in (ctx.obj["format"], "paimon" if ctx.obj["format"] == "iceberg" else "iceberg"):
        try:
            found += [f"{ns}.{t}" for ns, t in list_tables(_catalog(ctx, fmt, create=False), namespace)]
        except NoSuchNamespaceError:
            continue
    if namespace is not None and not found and not _namespace_exists(ctx, namespace):
        raise NoSuchNamespaceError(f"namespace {namespace} does not exist in warehouse {ctx.obj['warehouse']}")
    found = sorted(set(found))
    if as_json:
        _echo_json(found)
        return
    for name in found:
        click.echo(name)


@cli.command()
@click.argument("table")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def describe(ctx, table, as_json):
    """Columns, partitioning and table information."""
    t = _load(ctx, table)
    rows = describe_rows(t, extended=True)
    if as_json:
        _echo_json([{"col_name": a, "data_type": b, "comment": c} for a, b, c in rows])
        return
    _show(_rows_table(f"{t.name}", ["col_name", "data_type", "comment"], rows))


@cli.command()
@click.argument("table")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def snapshots(ctx, table, as_json):
    """List a table's snapshots."""
    t = _load(ctx, table)
    snaps = t.snapshots()
    if as_json:
        # Iceberg snapshots give a dict; Paimon's give their snapshot-N JSON text
        docs = [json.loads(d) if isinstance(d, str) else d for d in (s.to_json() for s in snaps)]
        for d in docs:              # a writer may have put a secret into a summary: never print it
            if isinstance(d.get("summary"), dict):
                d["summary"] = redact_properties(d["summary"])
        _echo_json(docs)
        return
    cols = ("seq", "snapshot id", "parent", "operation", "+files", "-files", "+rows", "-rows", "rows", "files",
            "committed")
    current = t.current_snapshot()
    rows = []
    for s in snaps:
        sm = s.summary
        mark = " *" if current is not None and s.snapshot_id == current.snapshot_id else ""
        rows.append((str(s.sequence_number), f"{s.snapshot_id}{mark}", str(s.parent_snapshot_id or ""),
                     # blank where the format's snapshot does not record the figure (Paimon's: file counts)
                     s.operation, sm.get("added-data-files", ""), sm.get("deleted-data-files", ""),
                     sm.get("added-records", ""), sm.get("deleted-records", ""), sm.get("total-records", ""),
                     sm.get("total-data-files", ""), _ms(s.timestamp_ms)))
    _show(_rows_table(f"snapshots of {t.name}", cols, rows,
                                 no_wrap=("snapshot id", "parent", "committed", "operation")))


@cli.command()
@click.argument("table")
@click.option("--where", default=None, help="Spark SQL predicate used for pruning")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def files(ctx, table, where, as_json):
    """List the data files a read would use."""
    t = _load(ctx, table)
    rows = list(_file_rows(t, t.plan_files(where=where)))
    if as_json:
        _echo_json([{"path": p, "partition": part, "records": n, "size": size, "content": content}
                    for p, part, n, size, content in rows])
        return
    _show(_rows_table(f"files of {t.name}", ["path", "partition", "records", "bytes"],
                      [(p, "/".join(f"{k}={v}" for k, v in part.items()), n, size) for p, part, n, size, _ in rows]))


def _file_rows(t, files):
    """(path, partition {field: value as people read it}, records, bytes, content) of Iceberg
    DataFiles or Paimon DataFileMetas."""
    import os

    for f in files:
        if hasattr(f, "partition"):
            yield f.file_path, _iceberg_partition(t, f), f.record_count, f.file_size_in_bytes, f.content
        else:  # a Paimon data file: its partition and bucket are its directory, <k>=<v>/bucket-<N>
            rel = os.path.relpath(os.path.dirname(f.file_path), t.location)
            part = dict(p.split("=", 1) for p in rel.split(os.sep) if "=" in p)
            part["bucket"] = int(rel.rsplit("bucket-", 1)[-1]) if "bucket-" in rel else None
            yield f.file_path, part, f.row_count, f.file_size, 0


def _iceberg_partition(t, f) -> dict:
    """An Iceberg partition tuple with each value as the spec writes it (``2024-01-01``, not 19723)."""
    meta = t.metadata
    spec = meta.spec_by_id(f.spec_id)
    out = {}
    for pf, v in zip(spec.fields, f.partition):
        src = meta.schema.find_field_or_none(pf.source_id)
        out[pf.name] = None if v is None else pf.transform.human(src.field_type, v) if src is not None else str(v)
    return out


@cli.command()
@click.argument("table")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def manifests(ctx, table, as_json):
    """List the manifests of the current snapshot."""
    t = _load(ctx, table)
    rows = t.manifest_files()
    if as_json:
        _echo_json(rows)
        return
    columns = [c for c in (rows[0] if rows else {}) if c not in ("partition_summaries", "manifest_list")]
    _show(_rows_table(f"manifests of {t.name}", columns,
                                 [tuple(os.path.basename(str(r[c])) if c == "path" else r[c] for c in columns)
                                  for r in rows]))


def rich_tree(node: Node) -> Tree:
    """A table's metadata tree (``Table.metadata_tree``) drawn with rich."""
    label = "".join(f"[{style}]{escape(redact(text))}[/]" if style else escape(redact(text))
                    for text, style in node.parts)
    tree = Tree(label)
    for child in node.children:
        tree.children.append(rich_tree(child))
    return tree


@cli.command()
@click.argument("table")
@click.option("--current", is_flag=True, help="only the current snapshot")
@click.option("--no-disk", is_flag=True, help="leave out the files on disk")
@click.option("--json", "as_json", is_flag=True, help="the metadata tree as nested JSON ({label, children})")
@click.pass_context
def tree(ctx, table, current, no_disk, as_json):
    """Draw snapshot -> manifest list -> manifests -> data files, then the files on disk."""
    t = _load(ctx, table)
    if as_json:
        def doc(node: Node) -> dict:
            return {"label": redact(node.text), "children": [doc(c) for c in node.children]}
        _echo_json(doc(t.metadata_tree(all_snapshots=not current)))
        return
    console = _console()
    console.print(rich_tree(t.metadata_tree(all_snapshots=not current)))
    if not no_disk:
        console.print(file_tree(t.location))


@cli.command()
@click.argument("table")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def check(ctx, table, as_json):
    """Verify a table end to end; exit 1 with a report when something is wrong."""
    t = _load(ctx, table)
    console = _console()
    if as_json:
        report = check_table(t)
        _echo_json(report.to_json())
    else:
        with _Bars(f"checking {t.name}"):
            report = check_table(t)
        looked = ", ".join(f"{n} {k}" for k, n in report.checked.items())
        if report.ok:
            console.print(f"[green]OK[/] {t.name}: {looked}")
        else:
            console.print(f"[red]FAILED[/] {t.name}: {len(report.problems)} problem(s) ({looked})")
            for p in report.problems:
                console.print(f"  [{p.kind}] {p.path}: {p.message}", markup=False)
    if not report.ok:
        sys.exit(EXIT_ERROR)


# --------------------------------------------------------------------------- maintenance
def _maintain(ctx, table, capability, call):
    """``call(table)`` under progress bars; a format's refusal is a not-supported exit."""
    t = _load(ctx, table)
    with _Bars(f"{capability} on {t.name}"):
        result = call(t)
    return t, result


def _report(result, as_json: bool) -> None:
    if hasattr(result, "to_json"):
        result = result.to_json()
        if isinstance(result, str):       # a Paimon snapshot: its snapshot-N JSON text
            result = json.loads(result)
    elif hasattr(result, "__dict__") and not isinstance(result, dict):
        result = dict(result.__dict__)
    if as_json:
        _echo_json(result)
    else:
        click.echo(json.dumps(result, default=_json_default) if result is not None else "OK")


def _older_than(value):
    if value is None:
        return None
    try:
        return int(dt.datetime.fromisoformat(value).timestamp() * 1000)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO timestamp like 2024-01-31T12:00:00")


@cli.command()
@click.argument("table")
@click.option("--older-than", default=None, help="ISO timestamp; snapshots older than this expire")
@click.option("--retain-last", type=int, default=None, help="keep at least this many snapshots")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def expire(ctx, table, older_than, retain_last, as_json):
    """Expire old snapshots and delete the files only they used."""
    _t, r = _maintain(ctx, table, "expire snapshots",
                      lambda t: t.expire_snapshots(older_than=_older_than(older_than), retain_last=retain_last))
    _report(r, as_json)


@cli.command("remove-orphans")
@click.argument("table")
@click.option("--older-than", default=None, help="ISO timestamp; only files older than this are removed")
@click.option("--dry-run", is_flag=True, default=None)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def remove_orphans(ctx, table, older_than, dry_run, as_json):
    """Delete files in the table directory that no metadata references."""
    _t, r = _maintain(ctx, table, "remove orphan files",
                      lambda t: t.remove_orphan_files(older_than=_older_than(older_than), dry_run=bool(dry_run)))
    _report(r, as_json)


@cli.command()
@click.argument("table")
@click.option("--where", default=None, help="only files that may hold rows matching this predicate")
@click.option("--target-file-size", type=int, default=None)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def compact(ctx, table, where, target_file_size, as_json):
    """Rewrite small data files (and fold delete files in)."""
    _t, r = _maintain(ctx, table, "compaction (rewrite data files)",
                      lambda t: t.rewrite_data_files(where=where, target_file_size=target_file_size))
    _report(r, as_json)


@cli.command("rewrite-manifests")
@click.argument("table")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def rewrite_manifests(ctx, table, as_json):
    """Regroup manifests to the target manifest size."""
    _t, r = _maintain(ctx, table, "rewrite manifests", lambda t: t.rewrite_manifests())
    _report(r, as_json)


@cli.command()
@click.argument("table")
@click.option("--snapshot", "snapshot_id", type=int, default=None, help="snapshot id to make current")
@click.option("--to-time", default=None, help="ISO timestamp: the snapshot current at that time")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def rollback(ctx, table, snapshot_id, to_time, as_json):
    """Make an earlier snapshot current again."""
    if (snapshot_id is None) == (to_time is None):
        raise click.UsageError("give exactly one of --snapshot or --to-time")
    t = _load(ctx, table)
    if snapshot_id is not None:
        r = t.rollback_to_snapshot(snapshot_id)
    else:
        r = t.rollback_to_timestamp(_older_than(to_time))
    _report(r, as_json)


def _register_rest_commands() -> None:
    """``serve`` and ``auth`` live with the REST server (``icefloe.rest.commands``); they open the
    warehouse's catalog through ``ctx.obj["open_catalog"]``."""
    from icefloe.rest.commands import auth, serve

    cli.add_command(serve)
    cli.add_command(auth)


_register_rest_commands()


def main(argv=None):
    """The console entry (``icefloe``): friendly errors and exit codes; ``--verbose`` adds the
    full trace of an error."""
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in args[:args.index("--") if "--" in args else len(args)]

    def trace() -> None:
        if verbose:
            import traceback

            click.echo(redact(traceback.format_exc()), err=True)

    try:
        cli.main(args=args, prog_name="icefloe", standalone_mode=False)
    except NotSupportedError as e:              # a format's refusal, or a statement icefloe lacks
        trace()
        click.echo(redact(f"error: {e}"), err=True)
        sys.exit(EXIT_NOT_SUPPORTED)
    except IcefloeError as e:
        trace()
        click.echo(redact(f"error: {e}"), err=True)
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_ERROR)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except SystemExit:
        raise
    except Exception as e:                      # anything else (a Spark failure): one line, the trace on request
        trace()
        first = (str(e).strip().splitlines() or [""])[0]
        click.echo(redact(f"error: {type(e).__name__}: {first}")
                   + ("" if verbose else " (--verbose shows the full trace)"), err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(0)


run = main   # the name pyproject's console script points at

if __name__ == "__main__":  # pragma: no cover
    main()
