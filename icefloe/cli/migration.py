"""The command line of migrations between the formats: ``icefloe add-files``, ``icefloe snapshot``
and ``icefloe migrate`` (registered on the ``icefloe`` group, which puts the warehouse's catalog
opener in ``ctx.obj["open_catalog"]``). A warehouse directory holds both
formats' tables (Iceberg's at ``<db>/<table>``, Paimon's at ``<db>.db/<table>``)."""
from __future__ import annotations

import json
from typing import Iterable, Optional

import click

from icefloe.table import migration


def _pairs(values: Optional[Iterable[str]], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values or ():
        if "=" not in v:
            raise click.BadParameter(f"{v!r} is not key=value", param_hint=what)
        k, val = v.split("=", 1)
        out[k.strip()] = val.strip()
    return out


def _echo(result: object, as_json: bool) -> None:
    click.echo(json.dumps(result, indent=2 if as_json else None))


@click.command("add-files")
@click.argument("table")
@click.argument("source")
@click.option("--partition", "partitions", multiple=True, help="only files of this partition: key=value (repeatable)")
@click.option("--allow-duplicates", is_flag=True, help="add files the table has already (check_duplicate_files false)")
@click.option("--from-paimon", is_flag=True, help="SOURCE is a Paimon append table of the warehouse (db.table)")
@click.option("--parallelism", type=int, default=None, help="Spark tasks reading the footers")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def add_files(ctx: click.Context, table: str, source: str, partitions: tuple[str, ...], allow_duplicates: bool,
              from_paimon: bool, parallelism: Optional[int], as_json: bool) -> None:
    """Add the Parquet files of SOURCE (a file or a directory, Hive-style key=value/ partition
    directories below it) to the Iceberg TABLE where they are, without rewriting them."""
    t = ctx.obj["open_catalog"]("iceberg").load_table(table)
    src = ctx.obj["open_catalog"]("paimon").load_table(source) if from_paimon else source
    _echo(t.add_files(src, _pairs(partitions, "--partition") or None, not allow_duplicates, parallelism), as_json)


@click.command("snapshot")
@click.argument("source")
@click.argument("table")
@click.option("--from-paimon", is_flag=True, help="SOURCE is a Paimon append table of the warehouse (db.table)")
@click.option("--property", "properties", multiple=True, help="a property of the new table: key=value")
@click.option("--parallelism", type=int, default=None, help="Spark tasks reading the footers")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def snapshot(ctx: click.Context, source: str, table: str, from_paimon: bool, properties: tuple[str, ...],
             parallelism: Optional[int], as_json: bool) -> None:
    """Create the Iceberg TABLE over SOURCE's files (a Parquet directory, or a Paimon table with
    --from-paimon), leaving SOURCE untouched."""
    cat = ctx.obj["open_catalog"]("iceberg")
    paimon = ctx.obj["open_catalog"]("paimon") if from_paimon else None
    _echo(cat.snapshot_table(source, table, source_catalog=paimon, properties=_pairs(properties, "--property") or None,
                             parallelism=parallelism), as_json)


@click.command("migrate")
@click.argument("source")
@click.option("--to", "target_format", required=True, type=click.Choice(["iceberg", "paimon"]),
              help="the format of the table that replaces SOURCE")
@click.option("--table", "target", default=None, help="into Paimon: the new table's name (default SOURCE's)")
@click.option("--drop-backup", is_flag=True, help="into Iceberg: keep no backup of the Paimon table")
@click.option("--backup-name", default=None, help="into Iceberg: the backup's name (default <table>_BACKUP_)")
@click.option("--keep-origin", is_flag=True, help="into Paimon: do not drop the source (delete_origin false)")
@click.option("--property", "properties", multiple=True, help="a property (Iceberg) or option (Paimon): key=value")
@click.option("--parallelism", type=int, default=None, help="Spark tasks reading the footers")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def migrate(ctx: click.Context, source: str, target_format: str, target: Optional[str], drop_backup: bool,
            backup_name: Optional[str], keep_origin: bool, properties: tuple[str, ...], parallelism: Optional[int],
            as_json: bool) -> None:
    """Replace SOURCE by a table of the other format over the same data files: a Paimon append
    table by an Iceberg table (--to iceberg), or an Iceberg table or a Parquet directory by a
    Paimon append table (--to paimon; the files are moved into it, not rewritten)."""
    props = _pairs(properties, "--property") or None
    if target_format == "iceberg":
        if target is not None or keep_origin:
            raise click.UsageError("--table and --keep-origin are for --to paimon")
        cat = ctx.obj["open_catalog"]("iceberg")
        out = cat.migrate_table(source, source_catalog=ctx.obj["open_catalog"]("paimon"), properties=props,
                                drop_backup=drop_backup, backup_table_name=backup_name, parallelism=parallelism)
        _echo(out, as_json)
        return
    if drop_backup or backup_name is not None:
        raise click.UsageError("--drop-backup and --backup-name are for --to iceberg")
    cat = ctx.obj["open_catalog"]("paimon")
    is_path = migration.parse_source(source) is not None or "/" in source
    src_cat = None if is_path else ctx.obj["open_catalog"]("iceberg")
    path = migration.parse_source(source) or source
    cat.migrate_table(path, name=target, source_catalog=src_cat, properties=props, delete_origin=not keep_origin,
                      parallelism=parallelism)
    _echo({"result": True}, as_json)


COMMANDS = (add_files, snapshot, migrate)
