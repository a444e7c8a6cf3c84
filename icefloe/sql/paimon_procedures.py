"""``CALL sys.<procedure>(...)`` on Paimon tables: Paimon's Spark procedures, with Paimon's
argument names, argument types and result rows.

Paimon's procedures take times as epoch milliseconds (``timestamp => 1730292023000``) and
retention as Paimon durations (``time_retained => '1 d'``); a snapshot is ``snapshot`` and a
tag ``tag``. ``procedures.call`` hands a call here when its table is a Paimon table and the
procedure is one of :data:`PROCEDURES`; the rest of the procedures are shared with Iceberg's.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Callable

from icefloe.errors import IcefloeError, SchemaError
from icefloe.paimon.options import parse_duration_ms
from icefloe.sql.errors import SqlError
from icefloe.sql.parser import node_position
from icefloe.sql.translate import literal_value


@dataclass(frozen=True)
class PaimonProcedure:
    params: tuple          # Paimon's parameter names, in positional order
    required: tuple
    result: str            # Spark DDL of the result rows
    run: Callable          # (table, {name: python value}) -> result rows
    times: tuple = ()      # parameters holding epoch milliseconds


def _check_one(args: dict, names: tuple, procedure: str) -> None:
    given = [n for n in names if args.get(n) is not None]
    if len(given) != 1:
        raise SqlError(f"{procedure} needs exactly one of {', '.join(names)}"
                       + (f" (got {', '.join(given)})" if given else ""))


def _rollback(t, args):
    """Paimon's ``rollback``: ``version`` (a snapshot id when all digits, else a tag name), or
    ``snapshot``, or ``tag``; rows (previous latest snapshot id, snapshot id rolled back to)."""
    _check_one(args, ("version", "snapshot", "tag"), "rollback")
    latest = _latest(t, "rollback")
    snapshot, tag = args.get("snapshot"), args.get("tag")
    version = args.get("version")
    if version is not None:
        text = str(version).strip()
        snapshot, tag = (int(text), None) if text.isdigit() else (None, text)
    if snapshot is not None:
        target = t.rollback_to_snapshot(int(snapshot))
    else:
        target = t.rollback_to_tag(str(tag))
    return [(latest, target.id)]


def _rollback_to_timestamp(t, args):
    """Roll back to the latest snapshot committed at or before ``timestamp`` (epoch ms)."""
    latest = _latest(t, "rollback_to_timestamp")
    millis = args["timestamp"]
    candidates = [s for s in t.snapshots() if s.time_millis <= millis]
    if not candidates:
        raise SqlError(f"table {t.name} has no snapshot committed at or before {millis} "
                       f"({_show_ms(millis)}); nothing was changed")
    target = t.rollback_to_snapshot(max(s.id for s in candidates))
    return [(latest, target.id)]


def _latest(t, procedure: str) -> int:
    snap = t.refresh().current_snapshot()
    if snap is None:
        raise SqlError(f"{procedure}: table {t.name} has no snapshot to roll back")
    return snap.id


def _show_ms(millis: int) -> str:
    return _dt.datetime.fromtimestamp(millis / 1000, _dt.timezone.utc).isoformat(timespec="milliseconds")


PROCEDURES = {
    "rollback": PaimonProcedure(("table", "version", "snapshot", "tag"), ("table",),
                                "previous_snapshot_id bigint, current_snapshot_id bigint", _rollback),
    "rollback_to_timestamp": PaimonProcedure(("table", "timestamp"), ("table", "timestamp"),
                                             "previous_snapshot_id bigint, current_snapshot_id bigint",
                                             _rollback_to_timestamp, times=("timestamp",)),
}


def _epoch_ms(sess, name: str, node) -> int:
    """A time argument: epoch milliseconds (Paimon's unit), or a timestamp expression."""
    try:
        value = literal_value(node)
    except ValueError:
        value = None
    if isinstance(value, bool):
        value = None
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        return int(value)
    micros = sess.run_spark(f"SELECT unix_micros(CAST(({node.sql('spark')}) AS TIMESTAMP))").first()[0]
    if micros is None:
        line, col = node_position(node)
        raise SqlError(f"argument {name!r} must be epoch milliseconds or a timestamp, got {node.sql('spark')}",
                       line, col)
    return micros // 1000


def _plain(sess, node):
    try:
        return literal_value(node)
    except ValueError:
        return sess.run_spark(f"SELECT {node.sql('spark')}").first()[0]


def duration_ms(text, name: str = "time_retained") -> int:
    """A Paimon duration argument (``'1 d'``, ``'12 h'``, ``'30 min'``; a bare number: ms)."""
    try:
        return parse_duration_ms(str(text))
    except SchemaError as e:
        raise SqlError(f"argument {name!r}: {e}") from None


def call(sess, t, name: str, bound: dict):
    """Run Paimon procedure ``name`` on table ``t`` with the bound arguments ({name: node})."""
    proc = PROCEDURES[name]
    args = {}
    for key, node in bound.items():
        if key == "table":
            continue
        args[key] = _epoch_ms(sess, key, node) if key in proc.times else _plain(sess, node)
    try:
        rows = proc.run(t, args)
    except SqlError:
        raise
    except IcefloeError as e:
        raise SqlError(f"CALL sys.{name} on {t.name}: {e}") from None
    return sess.spark.createDataFrame(rows, proc.result)
