"""Paimon's Spark procedures that expire or clean a table's files: ``expire_snapshots`` (Paimon's
arguments), ``expire_changelogs`` (Paimon's Flink procedure: Paimon's Spark integration has none,
the table format has the changelog files it expires), ``purge_files``, ``remove_unexisting_files``.

They are entries of ``paimon_procedures.PROCEDURES``; times arrive as epoch milliseconds.
"""
from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Optional

from icefloe.errors import SchemaError
from icefloe.paimon.options import parse_duration_ms
from icefloe.sql.errors import SqlError

if TYPE_CHECKING:
    from icefloe.sql.call_args import Args, Rows
    from icefloe.table.paimon import PaimonTable

# the retention options an ``options => 'k=v,...'`` argument of expire_snapshots may set
_SNAPSHOT_OPTIONS = ("snapshot.num-retained.min", "snapshot.num-retained.max", "snapshot.time-retained",
                     "snapshot.expire.limit")
_DEFAULT_EXPIRE_LIMIT = 50      # Paimon's snapshot.expire.limit


def _count(args: Args, key: str) -> Optional[int]:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not str(value).strip().lstrip("-").isdigit():
        raise SqlError(f"argument {key!r} must be a whole number, got {value!r}")
    if int(value) < 0:
        raise SqlError(f"argument {key!r} must not be negative, got {value}")
    return int(value)


def _dynamic_options(text: object, known: tuple[str, ...], procedure: str) -> dict[str, str]:
    """``'k1=v1,k2=v2'`` as a dict; a key the procedure does not honour is an error naming it."""
    out: dict[str, str] = {}
    for item in str(text or "").split(","):
        if not item.strip():
            continue
        k, eq, v = item.partition("=")
        if not eq:
            raise SqlError(f"{procedure} options {item.strip()!r} is not key=value")
        out[k.strip()] = v.strip()
    unknown = sorted(set(out) - set(known))
    if unknown:
        raise SqlError(f"{procedure} options {', '.join(unknown)} are not honoured here (the ones that are: "
                       f"{', '.join(known)}); nothing was expired")
    return out


def expire_snapshots(t: PaimonTable, args: Args) -> Rows:
    """Paimon's ``expire_snapshots(table, retain_max, retain_min, older_than, max_deletes, options)``:
    the table's retention with these overrides; at most ``max_deletes`` (``snapshot.expire.limit``,
    50 by default) snapshots at once. Row: how many snapshots were deleted."""
    opts = {**t.options, **_dynamic_options(args.get("options"), _SNAPSHOT_OPTIONS, "expire_snapshots")}
    retain_max = _count(args, "retain_max")
    retain_min = _count(args, "retain_min")
    max_deletes = _count(args, "max_deletes")
    if retain_min is None and "snapshot.num-retained.min" in opts:
        retain_min = _count(opts, "snapshot.num-retained.min")
    if retain_max is None and "snapshot.num-retained.max" in opts:
        retain_max = _count(opts, "snapshot.num-retained.max")
    if max_deletes is None:
        max_deletes = _count(opts, "snapshot.expire.limit") if "snapshot.expire.limit" in opts \
            else _DEFAULT_EXPIRE_LIMIT
    co = t.store.options
    lowest = retain_min if retain_min is not None else co.snapshot_num_retained_min
    highest = retain_max if retain_max is not None else co.snapshot_num_retained_max
    if highest < lowest:
        raise SqlError(f"expire_snapshots: retain_max ({highest}) must not be less than retain_min ({lowest}); "
                       "nothing was expired")
    older = args.get("older_than")
    if older is None and "snapshot.time-retained" in opts:
        try:
            older = int(time.time() * 1000) - parse_duration_ms(opts["snapshot.time-retained"])
        except SchemaError as e:
            raise SqlError(f"expire_snapshots option snapshot.time-retained: {e}") from None
    report = t.expire_snapshots(older_than=older, retain_last=retain_min, retain_max=retain_max,
                                max_deletes=max_deletes)
    return [(len(report.expired_snapshot_ids),)]


def expire_changelogs(t: PaimonTable, args: Args) -> Rows:
    """``expire_changelogs(table, retain_max, retain_min, older_than, max_deletes, delete_all)``:
    the changelogs kept past their snapshots; row: how many expired (or, with ``delete_all``,
    Paimon's message)."""
    delete_all = args.get("delete_all")
    if delete_all is not None and not isinstance(delete_all, bool):
        raise SqlError(f"argument 'delete_all' must be true or false, got {delete_all!r}")
    expired = t.expire_changelogs(_count(args, "retain_min"), _count(args, "retain_max"), args.get("older_than"),
                                  _count(args, "max_deletes"), bool(delete_all))
    if delete_all:
        return [("Delete all separated changelogs success.",)]
    return [(str(len(expired)),)]


def purge_files(t: PaimonTable, args: Args) -> Rows:
    """``purge_files(table)``: every branch, tag, consumer, changelog and row gone; the table
    stays, with its schema and one empty snapshot."""
    t.purge_files()
    return [("Success",)]


def remove_unexisting_files(t: PaimonTable, args: Args) -> Rows:
    """``remove_unexisting_files(table, dry_run, parallelism)``: the live data files whose file is
    gone, dropped from the table by one commit (listed only with ``dry_run``); rows: their paths."""
    dry_run = args.get("dry_run")
    if dry_run is not None and not isinstance(dry_run, bool):
        raise SqlError(f"argument 'dry_run' must be true or false, got {dry_run!r}")
    return [(p,) for p in t.remove_unexisting_files(dry_run=bool(dry_run), parallelism=_count(args, "parallelism"))]


def reset_consumer(t: PaimonTable, args: Args) -> Rows:
    """``reset_consumer(table, consumerId, nextSnapshotId)``: the consumer's next snapshot (which
    must exist) set, or the consumer deleted without ``nextSnapshotId``."""
    cid = args.get("consumerId")
    if not isinstance(cid, str) or not cid.strip():
        raise SqlError("reset_consumer needs argument 'consumerId' (a consumer id)")
    t.reset_consumer(cid.strip(), _count(args, "nextSnapshotId"))
    return [(True,)]


def clear_consumers(t: PaimonTable, args: Args) -> Rows:
    """``clear_consumers(table, includingConsumers, excludingConsumers)``: the consumers whose id
    matches the first regular expression (all without it) and not the second, deleted."""
    for key in ("includingConsumers", "excludingConsumers"):
        if args.get(key) is not None:
            try:
                re.compile(str(args[key]))
            except re.error as e:
                raise SqlError(f"argument {key!r} is not a regular expression: {e}") from None
    t.clear_consumers(args.get("includingConsumers"), args.get("excludingConsumers"))
    return [(True,)]


__all__ = ["reset_consumer", "clear_consumers", "expire_snapshots", "expire_changelogs", "purge_files", "remove_unexisting_files"]
