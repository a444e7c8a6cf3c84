"""The maintenance commands: ``expire``, ``remove-orphans``, ``compact``, ``rewrite-manifests`` and
``rollback``, each under progress bars, its result printed as JSON."""
from __future__ import annotations

import datetime as dt
import json
from typing import Any, Callable, Optional

import click

from icefloe.cli.common import Bars, echo_json, json_default, load
from icefloe.table import Table


def _maintain(ctx: click.Context, table: str, capability: str, call: Callable[[Table], object]
              ) -> tuple[Table, object]:
    """``call(table)`` under progress bars; a format's refusal is a not-supported exit."""
    t = load(ctx, table)
    with Bars(f"{capability} on {t.name}"):
        result = call(t)
    return t, result


def _report(result: Any, as_json: bool) -> None:
    if hasattr(result, "to_json"):
        result = result.to_json()
        if isinstance(result, str):       # a Paimon snapshot: its snapshot-N JSON text
            result = json.loads(result)
    elif hasattr(result, "__dict__") and not isinstance(result, dict):
        result = dict(result.__dict__)
    if as_json:
        echo_json(result)
    else:
        click.echo(json.dumps(result, default=json_default) if result is not None else "OK")


def _older_than(value: Optional[str]) -> Optional[int]:
    if value is None:
        return None
    return _epoch_ms(value)


def _epoch_ms(value: str) -> int:
    try:
        return int(dt.datetime.fromisoformat(value).timestamp() * 1000)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO timestamp like 2024-01-31T12:00:00")


@click.command()
@click.argument("table")
@click.option("--older-than", default=None, help="ISO timestamp; snapshots older than this expire")
@click.option("--retain-last", type=int, default=None, help="keep at least this many snapshots")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def expire(ctx: click.Context, table: str, older_than: Optional[str], retain_last: Optional[int],
           as_json: bool) -> None:
    """Expire old snapshots and delete the files only they used."""
    _t, r = _maintain(ctx, table, "expire snapshots",
                      lambda t: t.expire_snapshots(older_than=_older_than(older_than), retain_last=retain_last))
    _report(r, as_json)


@click.command("remove-orphans")
@click.argument("table")
@click.option("--older-than", default=None, help="ISO timestamp; only files older than this are removed")
@click.option("--dry-run", is_flag=True, default=None)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def remove_orphans(ctx: click.Context, table: str, older_than: Optional[str], dry_run: Optional[bool],
                   as_json: bool) -> None:
    """Delete files in the table directory that no metadata references."""
    _t, r = _maintain(ctx, table, "remove orphan files",
                      lambda t: t.remove_orphan_files(older_than=_older_than(older_than), dry_run=bool(dry_run)))
    _report(r, as_json)


@click.command()
@click.argument("table")
@click.option("--where", default=None, help="only files that may hold rows matching this predicate")
@click.option("--target-file-size", type=int, default=None)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def compact(ctx: click.Context, table: str, where: Optional[str], target_file_size: Optional[int],
            as_json: bool) -> None:
    """Rewrite small data files (and fold delete files in)."""
    _t, r = _maintain(ctx, table, "compaction (rewrite data files)",
                      lambda t: t.rewrite_data_files(where=where, target_file_size=target_file_size))
    _report(r, as_json)


@click.command("rewrite-manifests")
@click.argument("table")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def rewrite_manifests(ctx: click.Context, table: str, as_json: bool) -> None:
    """Regroup manifests to the target manifest size."""
    _t, r = _maintain(ctx, table, "rewrite manifests", lambda t: t.rewrite_manifests())
    _report(r, as_json)


@click.command()
@click.argument("table")
@click.option("--snapshot", "snapshot_id", type=int, default=None, help="snapshot id to make current")
@click.option("--to-time", default=None, help="ISO timestamp: the snapshot current at that time")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def rollback(ctx: click.Context, table: str, snapshot_id: Optional[int], to_time: Optional[str],
             as_json: bool) -> None:
    """Make an earlier snapshot current again."""
    if (snapshot_id is None) == (to_time is None):
        raise click.UsageError("give exactly one of --snapshot or --to-time")
    t = load(ctx, table)
    if snapshot_id is not None:
        r = t.rollback_to_snapshot(snapshot_id)
    else:
        assert to_time is not None      # exactly one of the two, checked above
        r = t.rollback_to_timestamp(_epoch_ms(to_time))
    _report(r, as_json)
