"""What the command line's commands share: the warehouse's catalog and tables from the command's
context, and output: rich tables on a terminal, tab-separated lines through a pipe, JSON, statement
results with secrets masked, and progress bars on standard error."""
from __future__ import annotations

import datetime as dt
import json
import os
import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any, Collection, Iterable, Iterator, Optional, Sequence, Union

import click
from rich.console import Console
from rich.table import Table as RichTable

from icefloe.catalog import Catalog
from icefloe.core import progress
from icefloe.core.io import is_remote
from icefloe.core.redact import redact_properties
from icefloe.errors import NoSuchTableError, WarehouseError
from icefloe.table import Table

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from pyspark.sql import DataFrame
    from rich.progress import TaskID

EXIT_ERROR = 1
EXIT_NOT_SUPPORTED = 2


def piped() -> bool:
    """Whether standard output is not a terminal (a pipe or a file): then nothing is wrapped
    or squeezed to a width, and tables are plain tab-separated columns."""
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError):
        return True


def make_console() -> Console:
    width = int(os.environ.get("ICEFLOE_CLI_WIDTH", "0")) or None
    if width is None and piped():
        return Console(width=100_000, soft_wrap=True, no_color=True, highlight=False)
    return Console(width=width)


def open_catalog(ctx: click.Context, fmt: Optional[str] = None, create: bool = True) -> Catalog:
    """The warehouse's catalog (of ``fmt``, default the --format). ``create``: a missing
    warehouse directory is made (SQL may create the first table); else it is an error,
    since a mistyped --warehouse would otherwise look like an empty one."""
    wh = ctx.obj["warehouse"]
    chosen: str = fmt or ctx.obj["format"]
    if is_remote(wh):
        extra = (ctx.obj.get("sql_catalog") or {}) if chosen == "iceberg" else {}
        return Catalog(wh, format=chosen, **extra, **(ctx.obj.get("storage") or {}))
    if os.path.exists(wh) and not os.path.isdir(wh):
        raise WarehouseError(f"--warehouse {wh} is a file; it must name the directory that holds the tables")
    if not create and not os.path.isdir(wh):
        raise WarehouseError(f"warehouse {wh} does not exist (--warehouse names the directory that holds the "
                             f"tables; the current directory is {os.getcwd()})")
    extra = (ctx.obj.get("sql_catalog") or {}) if chosen == "iceberg" else {}
    return Catalog(wh, format=chosen, **extra)


def load(ctx: click.Context, name: str) -> Table:
    """The table ``name`` in whichever format the warehouse holds it (the --format one first)."""
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == ctx.obj["catalog_name"]:
        name = ".".join(parts[1:])
    first = ctx.obj["format"]
    try:
        return open_catalog(ctx, first, create=False).load_table(name)
    except NoSuchTableError as e:
        other = "paimon" if first == "iceberg" else "iceberg"
        try:
            return open_catalog(ctx, other, create=False).load_table(name)
        except NoSuchTableError:
            raise e from None


def ms(ms: Optional[int]) -> str:
    if ms is None:
        return ""
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def echo_json(obj: object) -> None:
    click.echo(json.dumps(obj, indent=2, default=json_default))


def json_default(v: object) -> str:
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, (dt.datetime, dt.date)):
        return v.isoformat()
    return str(v)


def cell(v: object) -> str:
    return "" if v is None else (v.hex() if isinstance(v, (bytes, bytearray)) else str(v))


def rows_table(title: Optional[str], columns: Sequence[str], rows: Iterable[Sequence[object]],
               no_wrap: Collection[str] = ()) -> Union[RichTable, PlainRows]:
    """A rich table on a terminal; piped, plain tab-separated lines (a header, then one line per
    row; tabs and newlines inside values escaped), which ``print`` writes as they are."""
    if piped() and not os.environ.get("ICEFLOE_CLI_WIDTH"):
        return PlainRows(columns, rows)
    rt = RichTable(title=title)
    for c in columns:
        rt.add_column(c, overflow="fold", no_wrap=c in no_wrap)
    for r in rows:
        rt.add_row(*[cell(v) for v in r])
    return rt


class PlainRows:
    def __init__(self, columns: Iterable[str], rows: Iterable[Sequence[object]]) -> None:
        self.columns, self.rows = list(columns), list(rows)

    def lines(self) -> Iterator[str]:
        def esc(v: object) -> str:
            return cell(v).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")

        yield "\t".join(self.columns)
        for r in self.rows:
            yield "\t".join(esc(v) for v in r)


def show(renderable: object) -> None:
    """Print a table: plain lines as they are, anything else through rich."""
    if isinstance(renderable, PlainRows):
        for line in renderable.lines():
            click.echo(line)
        return
    make_console().print(renderable)


def metadata_rows(table: Table, name: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(column names, rows) of a metadata table, built without Spark."""
    arrow = table.metadata_table(name)
    return arrow.column_names, [tuple(r.values()) for r in arrow.to_pylist()]


class Bars:
    """Progress bars on stderr: one per loop icefloe reports (:mod:`icefloe.core.progress`),
    and one for the Spark job running, if any (its stages' tasks, polled)."""
    def __init__(self, title: str) -> None:
        import threading

        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn)

        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=False)
        self.title = title
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll_spark, daemon=True)
        self._spark_task: Optional[TaskID] = None

    # the Reporter protocol
    def start(self, description: str, total: Optional[int]) -> TaskID:
        return self.progress.add_task(description, total=total)

    def advance(self, handle: TaskID, n: int = 1) -> None:
        self.progress.advance(handle, n)

    def finish(self, handle: TaskID) -> None:
        task = self.progress.tasks[handle] if handle < len(self.progress.tasks) else None
        if task is not None and task.total is None:
            self.progress.update(handle, total=task.completed)

    def _poll_spark(self) -> None:
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

    def __enter__(self) -> Bars:
        self.progress.start()
        self._main = self.progress.add_task(self.title, total=None)
        self._thread.start()
        self._ctx: AbstractContextManager[object] = progress.reporting(self)
        self._ctx.__enter__()
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool:
        self._stop.set()
        self._thread.join(timeout=1)
        if self._spark_task is not None:
            task = self.progress.tasks[self._spark_task]
            self.progress.update(self._spark_task, completed=task.total or task.completed)
        self._ctx.__exit__(exc_type, exc, tb)
        self.progress.update(self._main, total=1, completed=1)
        self.progress.stop()
        return False


# map columns of metadata tables that may hold a writer's secrets (snapshots.summary, Paimon's options)
SECRET_MAP_COLUMNS = frozenset({"summary", "properties", "options"})


def redacted_maps(row: dict[str, Any], columns: Collection[str]) -> dict[str, Any]:
    """``row`` with the values of secret-named keys in its map ``columns`` masked (a snapshot
    summary may hold a writer's password): the same rule as ``snapshots --json``."""
    return {k: redact_properties(v) if k in columns and isinstance(v, dict) else v for k, v in row.items()}


def print_df(df: Optional[DataFrame], as_json: bool, limit: int) -> None:
    """A statement's result: its rows (at most ``limit``, 0 for all, with a warning on standard
    error when rows were left out), or OK for a statement without rows."""
    if df is None or not df.columns:
        if not as_json:
            click.echo("OK")
        else:
            echo_json([])
        return
    rows = (df.limit(limit + 1) if limit > 0 else df).collect()
    if limit > 0 and len(rows) > limit:
        rows = rows[:limit]
        click.echo(f"warning: showing the first {limit} rows; more were left out (--limit N, 0 for all)", err=True)
    secret_maps = SECRET_MAP_COLUMNS & set(df.columns)
    if as_json:
        echo_json([redacted_maps(r.asDict(recursive=True), secret_maps) for r in rows])
        return
    show(rows_table(None, df.columns, [tuple(redact_properties(v) if c in secret_maps and isinstance(v, dict) else v
                                               for c, v in zip(df.columns, r)) for r in rows]))
