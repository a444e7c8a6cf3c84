"""The ``icefloe`` command line."""
from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table as RichTable

from icefloe.errors import IcefloeError


@click.group()
@click.option("--warehouse", default="warehouse", show_default=True, help="warehouse directory")
@click.option("--format", "fmt", default="iceberg", type=click.Choice(["iceberg", "paimon"]), show_default=True)
@click.pass_context
def main(ctx, warehouse, fmt):
    """icefloe: Iceberg and Paimon tables with Spark as the data plane."""
    ctx.obj = {"warehouse": warehouse, "format": fmt}


def _catalog(ctx):
    from icefloe.catalog import Catalog

    return Catalog(ctx.obj["warehouse"], format=ctx.obj["format"])


@main.command()
@click.option("--fresh/--keep", default=True, help="drop db.tb01 first")
@click.pass_context
def demo(ctx, fresh):
    """Replay seed 001 on the warehouse (what `make demo` runs)."""
    from icefloe.demo import run

    run(ctx.obj["warehouse"], fresh=fresh)


@main.command()
@click.argument("namespace", default="db")
@click.pass_context
def tables(ctx, namespace):
    """List the tables of a namespace."""
    for name in _catalog(ctx).list_tables(namespace):
        click.echo(name)


@main.command()
@click.argument("table")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def snapshots(ctx, table, as_json):
    """List a table's snapshots."""
    t = _catalog(ctx).load_table(table)
    snaps = t.snapshots()
    if as_json:
        click.echo(json.dumps([s.to_json() for s in snaps], indent=2))
        return
    from icefloe.demo import snapshot_table

    Console().print(snapshot_table(t))


@main.command()
@click.argument("table")
@click.option("--where", default=None, help="Spark SQL predicate used for pruning")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def files(ctx, table, where, as_json):
    """List the data files a read would use."""
    t = _catalog(ctx).load_table(table)
    fs = t.plan_files(where=where)
    if as_json:
        click.echo(json.dumps([{"path": f.file_path, "partition": list(f.partition), "records": f.record_count,
                                "size": f.file_size_in_bytes} for f in fs], indent=2, default=str))
        return
    rt = RichTable(title=f"files of {table}")
    for c in ("path", "partition", "records", "bytes"):
        rt.add_column(c)
    for f in fs:
        rt.add_row(f.file_path, str(f.partition), str(f.record_count), str(f.file_size_in_bytes))
    Console().print(rt)


@main.command()
@click.argument("table")
@click.pass_context
def tree(ctx, table):
    """Draw the table's files on disk."""
    from icefloe.demo import file_tree

    t = _catalog(ctx).load_table(table)
    Console().print(file_tree(t.location))


def run():  # pragma: no cover - console entry with friendly errors
    try:
        main(standalone_mode=True)
    except IcefloeError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    run()
