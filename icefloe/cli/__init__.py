"""The ``icefloe`` command line.

``icefloe --warehouse DIR [--format iceberg|paimon] COMMAND``. Commands that only
read metadata (``tables``, ``describe``, ``snapshots``, ``files``, ``manifests``,
``tree``, ``check``) never start Spark; ``sql``, ``demo`` and the maintenance
commands do when they need it. Exit codes: 0 success, 1 an error (or ``check``
found problems), 2 a capability icefloe does not have yet.
"""
from __future__ import annotations

import sys
from typing import NoReturn, Optional, Sequence

import click

from icefloe.cli import maintenance, metadata, migration, sql_shell
from icefloe.cli.common import EXIT_ERROR, EXIT_NOT_SUPPORTED, open_catalog
from icefloe.core.redact import redact
from icefloe.errors import IcefloeError, NotSupportedError


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
def cli(ctx: click.Context, warehouse: str, fmt: str, catalog_name: str, verbose: bool, catalog: Optional[str]) -> None:
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
               "storage": storage, "open_catalog": lambda fmt: open_catalog(ctx, fmt)}


for _command in (sql_shell.demo, sql_shell.sql, metadata.tables, metadata.describe, metadata.snapshots, metadata.files,
                 metadata.manifests, metadata.tree, metadata.check, maintenance.expire, maintenance.remove_orphans,
                 maintenance.compact, maintenance.rewrite_manifests, maintenance.rollback, *migration.COMMANDS):
    cli.add_command(_command)


def _register_rest_commands() -> None:
    """``serve`` and ``auth`` live with the REST server (``icefloe.rest.commands``); they open the
    warehouse's catalog through ``ctx.obj["open_catalog"]``."""
    from icefloe.rest.commands import auth, serve

    cli.add_command(serve)
    cli.add_command(auth)


_register_rest_commands()


def main(argv: Optional[Sequence[str]] = None) -> NoReturn:
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
