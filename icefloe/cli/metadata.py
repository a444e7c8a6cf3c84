"""The commands that read a table's metadata without Spark: ``tables``, ``describe``,
``snapshots``, ``files``, ``manifests``, ``tree`` and ``check``."""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Optional

import click
from rich.markup import escape
from rich.tree import Tree

from icefloe.check import check_table
from icefloe.cli.common import (
    EXIT_ERROR, Bars, echo_json, load, make_console, ms, open_catalog, rows_table, show,
)
from icefloe.core.redact import redact, redact_properties
from icefloe.core.tree import Node
from icefloe.demo import file_tree
from icefloe.errors import NoSuchNamespaceError
from icefloe.sql.ddl import describe_rows, list_tables


def _namespace_exists(ctx: click.Context, namespace: str) -> bool:
    wh = ctx.obj["warehouse"]
    return os.path.isdir(os.path.join(wh, namespace)) or os.path.isdir(os.path.join(wh, f"{namespace}.db"))


@click.command()
@click.argument("namespace", required=False)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def tables(ctx: click.Context, namespace: Optional[str], as_json: bool) -> None:
    """List the tables (of one namespace, or all)."""
    found: list[str] = []
    for fmt in (ctx.obj["format"], "paimon" if ctx.obj["format"] == "iceberg" else "iceberg"):
        try:
            found += [f"{ns}.{t}" for ns, t in list_tables(open_catalog(ctx, fmt, create=False), namespace)]
        except NoSuchNamespaceError:
            continue
    if namespace is not None and not found and not _namespace_exists(ctx, namespace):
        raise NoSuchNamespaceError(f"namespace {namespace} does not exist in warehouse {ctx.obj['warehouse']}")
    found = sorted(set(found))
    if as_json:
        echo_json(found)
        return
    for name in found:
        click.echo(name)


@click.command()
@click.argument("table")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def describe(ctx: click.Context, table: str, as_json: bool) -> None:
    """Columns, partitioning and table information."""
    t = load(ctx, table)
    rows = describe_rows(t, extended=True)
    if as_json:
        echo_json([{"col_name": a, "data_type": b, "comment": c} for a, b, c in rows])
        return
    show(rows_table(f"{t.name}", ["col_name", "data_type", "comment"], rows))


@click.command()
@click.argument("table")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def snapshots(ctx: click.Context, table: str, as_json: bool) -> None:
    """List a table's snapshots."""
    t = load(ctx, table)
    snaps = t.snapshots()
    if as_json:
        # Iceberg snapshots give a dict; Paimon's give their snapshot-N JSON text
        docs = [json.loads(d) if isinstance(d, str) else d for d in (s.to_json() for s in snaps)]
        for d in docs:              # a writer may have put a secret into a summary: never print it
            if isinstance(d.get("summary"), dict):
                d["summary"] = redact_properties(d["summary"])
        echo_json(docs)
        return
    cols = ("seq", "snapshot id", "parent", "operation", "+files", "-files", "+rows", "-rows", "rows", "files",
            "committed")
    current = t.current_snapshot()
    rows: list[tuple[object, ...]] = []
    for s in snaps:
        sm = s.summary
        mark = " *" if current is not None and s.snapshot_id == current.snapshot_id else ""
        rows.append((str(s.sequence_number), f"{s.snapshot_id}{mark}", str(s.parent_snapshot_id or ""),
                     # blank where the format's snapshot does not record the figure (Paimon's: file counts)
                     s.operation, sm.get("added-data-files", ""), sm.get("deleted-data-files", ""),
                     sm.get("added-records", ""), sm.get("deleted-records", ""), sm.get("total-records", ""),
                     sm.get("total-data-files", ""), ms(s.timestamp_ms)))
    show(rows_table(f"snapshots of {t.name}", cols, rows,
                                 no_wrap=("snapshot id", "parent", "committed", "operation")))


@click.command()
@click.argument("table")
@click.option("--where", default=None, help="Spark SQL predicate used for pruning")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def files(ctx: click.Context, table: str, where: Optional[str], as_json: bool) -> None:
    """List the data files a read would use."""
    t = load(ctx, table)
    rows = t.data_files(where=where)
    if as_json:
        echo_json([{"path": f.path, "partition": f.partition, "records": f.records, "size": f.size,
                    "content": f.content} for f in rows])
        return
    show(rows_table(f"files of {t.name}", ["path", "partition", "records", "bytes"],
                    [(f.path, "/".join(f"{k}={v}" for k, v in f.partition.items()), f.records, f.size) for f in rows]))


@click.command()
@click.argument("table")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def manifests(ctx: click.Context, table: str, as_json: bool) -> None:
    """List the manifests of the current snapshot."""
    t = load(ctx, table)
    rows = t.manifest_files()
    if as_json:
        echo_json(rows)
        return
    columns = [c for c in (rows[0] if rows else {}) if c not in ("partition_summaries", "manifest_list")]
    show(rows_table(f"manifests of {t.name}", columns,
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


@click.command()
@click.argument("table")
@click.option("--current", is_flag=True, help="only the current snapshot")
@click.option("--no-disk", is_flag=True, help="leave out the files on disk")
@click.option("--json", "as_json", is_flag=True, help="the metadata tree as nested JSON ({label, children})")
@click.pass_context
def tree(ctx: click.Context, table: str, current: bool, no_disk: bool, as_json: bool) -> None:
    """Draw snapshot -> manifest list -> manifests -> data files, then the files on disk."""
    t = load(ctx, table)
    if as_json:
        def doc(node: Node) -> dict[str, Any]:
            return {"label": redact(node.text), "children": [doc(c) for c in node.children]}
        echo_json(doc(t.metadata_tree(all_snapshots=not current)))
        return
    console = make_console()
    console.print(rich_tree(t.metadata_tree(all_snapshots=not current)))
    if not no_disk:
        console.print(file_tree(t.location))


@click.command()
@click.argument("table")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def check(ctx: click.Context, table: str, as_json: bool) -> None:
    """Verify a table end to end; exit 1 with a report when something is wrong."""
    t = load(ctx, table)
    console = make_console()
    if as_json:
        report = check_table(t)
        echo_json(report.to_json())
    else:
        with Bars(f"checking {t.name}"):
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
