"""``CALL sys.<procedure>(...)`` on Paimon tables: Paimon's Spark procedures, with Paimon's
argument names, argument types and result rows.

Paimon's procedures take times as epoch milliseconds (``timestamp => 1730292023000``) and
retention as Paimon durations (``time_retained => '1 d'``); a snapshot is ``snapshot`` and a
tag ``tag``. ``procedures.call`` hands a call here when its table is a Paimon table and the
procedure is one of :data:`PROCEDURES`; the rest of the procedures are shared with Iceberg's.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from icefloe.errors import IcefloeError, NotSupportedError, SchemaError
from icefloe.paimon.options import parse_duration_ms
from icefloe.paimon.snapshot import NO_WATERMARK
from icefloe.sql import paimon_branch_procedures as branch_procs
from icefloe.sql import paimon_chain_procedures as chain_procs
from icefloe.sql import paimon_compact_procedures as compact_procs
from icefloe.sql import paimon_file_procedures as file_procs
from icefloe.sql import paimon_index_procedures as index_procs
from icefloe.sql import paimon_row_id_procedures as row_id_procs
from icefloe.sql.call_args import partition_specs, spark_value
from icefloe.sql.errors import NotSupportedYetError, SqlError
from icefloe.sql.parser import node_position
from icefloe.sql.translate import literal_value

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from sqlglot import exp

    from icefloe.sql.call_args import Args, Rows
    from icefloe.sql.statement_context import StatementSession
    from icefloe.table.paimon import PaimonTable


@dataclass(frozen=True)
class PaimonProcedure:
    params: tuple[str, ...]      # Paimon's parameter names, in positional order
    required: tuple[str, ...]
    result: str                  # Spark DDL of the result rows
    run: Callable[[PaimonTable, Args], Rows]     # (table, {name: python value}) -> result rows
    times: tuple[str, ...] = ()  # parameters holding epoch milliseconds


def _check_one(args: Args, names: tuple[str, ...], procedure: str) -> None:
    given = [n for n in names if args.get(n) is not None]
    if len(given) != 1:
        raise SqlError(f"{procedure} needs exactly one of {', '.join(names)}"
                       + (f" (got {', '.join(given)})" if given else ""))


def _rollback(t: PaimonTable, args: Args) -> Rows:
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


def _rollback_to_watermark(t: PaimonTable, args: Args) -> Rows:
    """Roll back to the latest snapshot whose watermark (a streaming writer's, epoch ms) is at or
    before ``watermark``; snapshots without one are passed over."""
    latest = _latest(t, "rollback_to_watermark")
    mark = args.get("watermark")
    if mark is None or isinstance(mark, bool) or not str(mark).strip().lstrip("-").isdigit():
        raise SqlError(f"argument 'watermark' must be a number (epoch milliseconds), got {mark!r}")
    marked = [s for s in t.snapshots() if s.watermark is not None and s.watermark != NO_WATERMARK
              and s.watermark <= int(mark)]
    if not marked:
        raise SqlError(f"rollback_to_watermark: no snapshot of {t.name} has a watermark at or before {mark}; "
                       "nothing was rolled back")
    target = max(marked, key=lambda s: s.id)
    t.rollback_to_snapshot(target.id)
    return [(latest, target.id)]


def _rollback_to_timestamp(t: PaimonTable, args: Args) -> Rows:
    """Roll back to the latest snapshot committed at or before ``timestamp`` (epoch ms)."""
    latest = _latest(t, "rollback_to_timestamp")
    millis = args["timestamp"]
    candidates = [s for s in t.snapshots() if s.time_millis <= millis]
    if not candidates:
        raise SqlError(f"table {t.name} has no snapshot committed at or before {millis} "
                       f"({_show_ms(millis)}); nothing was changed")
    target = t.rollback_to_snapshot(max(s.id for s in candidates))
    return [(latest, target.id)]


def _latest(t: PaimonTable, procedure: str) -> int:
    snap = t.refresh().current_snapshot()
    if snap is None:
        raise SqlError(f"{procedure}: table {t.name} has no snapshot to roll back")
    return snap.id


def _show_ms(millis: int) -> str:
    return _dt.datetime.fromtimestamp(millis / 1000, _dt.timezone.utc).isoformat(timespec="milliseconds")


def _retained(args: Args) -> Optional[_dt.timedelta]:
    value = args.get("time_retained")
    return None if value is None else _dt.timedelta(milliseconds=duration_ms(value))


def _create_tag(t: PaimonTable, args: Args) -> Rows:
    """``create_tag(table, tag, snapshot, time_retained)``: the latest snapshot unless ``snapshot``."""
    snapshot = args.get("snapshot")
    t.create_tag(_tag_name(args), int(snapshot) if snapshot is not None else None, time_retained=_retained(args))
    return [(True,)]


def _replace_tag(t: PaimonTable, args: Args) -> Rows:
    snapshot = args.get("snapshot")
    t.replace_tag(_tag_name(args), int(snapshot) if snapshot is not None else None, time_retained=_retained(args))
    return [(True,)]


def _create_tag_from_timestamp(t: PaimonTable, args: Args) -> Rows:
    """A tag of the first snapshot committed at or after ``timestamp`` (epoch ms); a tag of an
    expired snapshot counts when it is earlier than that snapshot, as in Paimon."""
    millis = args.get("timestamp")
    if millis is None:
        raise SqlError("create_tag_from_timestamp needs argument 'timestamp' (epoch milliseconds)")
    found = [s for s in t.snapshots() if s.time_millis >= millis]
    snap = min(found, key=lambda s: s.time_millis) if found else None
    for tag in sorted(t.tags().values(), key=lambda g: g.snapshot.time_millis):
        if tag.snapshot.time_millis >= millis:
            if snap is None or tag.snapshot.time_millis < snap.time_millis:
                snap = tag.snapshot
            break
    if snap is None:
        raise SqlError(f"table {t.name} has no snapshot committed at or after {millis} ({_show_ms(millis)})")
    name = _tag_name(args)
    t.create_tag(name, snap.id, time_retained=_retained(args))
    watermark = getattr(snap, "watermark", None)
    return [(name, snap.id, snap.time_millis, None if watermark is None else str(watermark))]


def _rename_tag(t: PaimonTable, args: Args) -> Rows:
    t.rename_tag(_tag_name(args), _tag_name(args, "target_tag"))
    return [(True,)]


def _delete_tag(t: PaimonTable, args: Args) -> Rows:
    """``delete_tag(table, tag)``: several tags when ``tag`` is comma-separated, as in Paimon."""
    names = [n.strip() for n in _tag_name(args).split(",") if n.strip()]
    missing = [n for n in names if n not in t.tags()]
    if missing:
        raise SqlError(f"table {t.name} has no tag {', '.join(missing)}; nothing was deleted")
    for n in names:
        t.delete_tag(n)
    return [(True,)]


def _tag_name(args: Args, key: str = "tag") -> str:
    name = args.get(key)
    if not isinstance(name, str) or not name.strip():
        raise SqlError(f"argument {key!r} must be a tag name")
    return name


_JAVA_TIME = {"yyyy": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}


def _partition_time(text: str, formatter: Optional[str]) -> _dt.datetime:
    """A partition's time, as Paimon's PartitionTimeExtractor reads it (a date alone: midnight)."""
    if formatter is None:
        return _dt.datetime.fromisoformat(text)
    fmt = ""
    for run in re.finditer(r"([A-Za-z])\1*|[^A-Za-z]+", formatter):
        token = run.group(0)
        if token[0].isalpha():
            if token not in _JAVA_TIME:
                raise SqlError(f"timestamp_formatter {formatter!r}: icefloe reads the fields yyyy, MM, dd, HH, mm, "
                               f"ss, not {token!r}")
            fmt += _JAVA_TIME[token]
        else:
            fmt += token.replace("%", "%%").replace("'", "")
    return _dt.datetime.strptime(text, fmt)


def _expire_partitions(t: PaimonTable, args: Args) -> Rows:
    """``expire_partitions``: drop (one OVERWRITE snapshot) the partitions whose time, read from
    their values (``values-time``), is older than ``expiration_time`` before now."""
    strategy = str(args.get("expire_strategy") or "values-time").lower()
    if strategy != "values-time":
        raise SqlError(f"expire_partitions expire_strategy {strategy!r}: icefloe expires by partition values "
                       "('values-time'); 'update-time' is not supported")
    options: dict[str, str] = {}
    for item in str(args.get("options") or "").split(","):
        if item.strip():
            k, _, v = item.partition("=")
            options[k.strip()] = v.strip()
    unknown = sorted(k for k in options if k != "partition.expiration-max-num")
    if unknown:
        raise SqlError(f"expire_partitions options {', '.join(unknown)} are not honoured by icefloe (known: "
                       "partition.expiration-max-num)")
    if args.get("expiration_time") is None:
        raise SqlError("expire_partitions needs argument 'expiration_time' (e.g. '1 d')")
    keys = t.partition_keys
    if not keys:
        raise SqlError(f"table {t.name} is not partitioned")
    limit = args.get("max_expires", options.get("partition.expiration-max-num"))
    horizon = _dt.datetime.now() - _dt.timedelta(milliseconds=duration_ms(args["expiration_time"], "expiration_time"))
    pattern, formatter = args.get("timestamp_pattern"), args.get("timestamp_formatter")
    store = t.refresh().store
    live = sorted({store.partition_values(e.partition) for e in t.plan()}) if t.current_snapshot() else []
    expired: list[tuple[_dt.datetime, tuple[Any, ...]]] = []
    for values in live:
        texts = ["null" if v is None else str(v) for v in values]
        text = texts[0]
        if pattern is not None:
            text = str(pattern)
            for k, v in sorted(zip(keys, texts), key=lambda kv: -len(kv[0])):
                text = text.replace(f"${k}", v)
        try:
            when = _partition_time(text, formatter)
        except ValueError as e:
            raise SqlError(f"expire_partitions: partition {dict(zip(keys, texts))} has no time {text!r} "
                           f"({e})") from None
        if when < horizon:
            expired.append((when, values))
    expired.sort(key=lambda w: w[0])
    if limit is not None:
        expired = expired[:int(limit)]
    if not expired:
        return [("No expired partitions.",)]
    t.drop_partitions([dict(zip(keys, values)) for _, values in expired])
    return [(", ".join(f"{k}={v}" for k, v in zip(keys, values)),) for _, values in expired]


def _mark_partition_done(t: PaimonTable, args: Args) -> Rows:
    """``mark_partition_done(table, partitions => 'dt=2024-07-01;dt=2024-07-02')``."""
    specs = partition_specs(args.get("partitions"), "mark_partition_done", "dt=2024-07-01;dt=2024-07-02")
    if not specs:
        raise SqlError("mark_partition_done needs argument 'partitions' (e.g. 'dt=2024-07-01;dt=2024-07-02')")
    t.mark_partition_done(specs)
    return [(True,)]


PROCEDURES = {
    "create_branch": PaimonProcedure(("table", "branch", "tag"), ("table", "branch"), "result boolean",
                                     branch_procs.create_branch),
    "delete_branch": PaimonProcedure(("table", "branch"), ("table", "branch"), "result boolean",
                                     branch_procs.delete_branch),
    "fast_forward": PaimonProcedure(("table", "branch"), ("table", "branch"), "result boolean",
                                    branch_procs.fast_forward),
    "compact_chain_table": PaimonProcedure(("table", "partition", "overwrite"), ("table", "partition"),
                                           "result boolean", chain_procs.compact_chain_table),
    "merge_branch": PaimonProcedure(("table", "source_branch", "target_branch"), ("table", "source_branch"),
                                    "result boolean", branch_procs.merge_branch),
    "rename_branch": PaimonProcedure(("table", "from_branch", "to_branch"), ("table", "from_branch", "to_branch"),
                                     "result boolean", branch_procs.rename_branch),
    "repair_earliest_snapshot": PaimonProcedure(("table", "snapshot_id"), ("table", "snapshot_id"),
                                                "previous_earliest_snapshot_id bigint, current_earliest_snapshot_id bigint",
                                                branch_procs.repair_earliest_snapshot),
    "expire_tags": PaimonProcedure(("table", "older_than"), ("table",), "expired_tags string",
                                   branch_procs.expire_tags),
    "compact": PaimonProcedure(("table", "partitions", "compact_strategy", "order_strategy", "order_by", "where",
                                "options", "partition_idle_time", "buckets"), ("table",), "result boolean",
                               compact_procs.compact),
    "rescale": PaimonProcedure(("table", "bucket_num", "partitions", "where"), ("table",), "result boolean",
                               compact_procs.rescale),
    "compact_manifest": PaimonProcedure(("table", "options", "dry_run", "manifest_sort_enabled",
                                         "manifest_sort_partition_field", "manifest_sort_max_rewrite_size"),
                                        ("table",), "result boolean", compact_procs.compact_manifest),
    "remove_orphan_files": PaimonProcedure(("table", "older_than", "dry_run", "parallelism", "mode"), ("table",),
                                           compact_procs.ORPHANS_RESULT, compact_procs.remove_orphan_files,
                                           times=("older_than",)),
    "rewrite_file_index": PaimonProcedure(("table", "where"), ("table",), "written_partitions int, written_indexes int",
                                          branch_procs.rewrite_file_index),
    "trigger_tag_automatic_creation": PaimonProcedure(("table",), ("table",), "result boolean",
                                                      branch_procs.trigger_tag_automatic_creation),
    "rollback": PaimonProcedure(("table", "version", "snapshot", "tag"), ("table",),
                                "previous_snapshot_id bigint, current_snapshot_id bigint", _rollback),
    "rollback_to_watermark": PaimonProcedure(("table", "watermark"), ("table", "watermark"),
                                             "previous_snapshot_id bigint, current_snapshot_id bigint",
                                             _rollback_to_watermark),
    "rollback_to_timestamp": PaimonProcedure(("table", "timestamp"), ("table", "timestamp"),
                                             "previous_snapshot_id bigint, current_snapshot_id bigint",
                                             _rollback_to_timestamp, times=("timestamp",)),
    "create_tag": PaimonProcedure(("table", "tag", "snapshot", "time_retained"), ("table", "tag"), "result boolean",
                                  _create_tag),
    "replace_tag": PaimonProcedure(("table", "tag", "snapshot", "time_retained"), ("table", "tag"),
                                   "result boolean", _replace_tag),
    "create_tag_from_timestamp": PaimonProcedure(("table", "tag", "timestamp", "time_retained"),
                                                 ("table", "tag", "timestamp"),
                                                 "tagName string, snapshot bigint, commit_time bigint, watermark string",
                                                 _create_tag_from_timestamp, times=("timestamp",)),
    "rename_tag": PaimonProcedure(("table", "tag", "target_tag"), ("table", "tag", "target_tag"), "result boolean",
                                  _rename_tag),
    "delete_tag": PaimonProcedure(("table", "tag"), ("table", "tag"), "result boolean", _delete_tag),
    "expire_partitions": PaimonProcedure(("table", "expiration_time", "timestamp_formatter", "timestamp_pattern",
                                          "expire_strategy", "max_expires", "options"), ("table",),
                                         "expired_partitions string", _expire_partitions),
    "mark_partition_done": PaimonProcedure(("table", "partitions"), ("table", "partitions"), "result boolean",
                                           _mark_partition_done),
    "expire_snapshots": PaimonProcedure(("table", "retain_max", "retain_min", "older_than", "max_deletes", "options"),
                                        ("table",), "deleted_snapshots_count int", file_procs.expire_snapshots,
                                        times=("older_than",)),
    "expire_changelogs": PaimonProcedure(("table", "retain_max", "retain_min", "older_than", "max_deletes",
                                          "delete_all"), ("table",), "result string", file_procs.expire_changelogs,
                                         times=("older_than",)),
    "reset_consumer": PaimonProcedure(("table", "consumerId", "nextSnapshotId"), ("table", "consumerId"),
                                      "result boolean", file_procs.reset_consumer),
    "clear_consumers": PaimonProcedure(("table", "includingConsumers", "excludingConsumers"), ("table",),
                                       "result boolean", file_procs.clear_consumers),
    "purge_files": PaimonProcedure(("table",), ("table",), "result string", file_procs.purge_files),
    "remove_unexisting_files": PaimonProcedure(("table", "dry_run", "parallelism"), ("table",), "fileName string",
                                               file_procs.remove_unexisting_files),
    "reassign_row_id": PaimonProcedure(("table", "partitions"), ("table",), "result string",
                                       row_id_procs.reassign_row_id),
    "materialize_deletion_vectors": PaimonProcedure(("table", "partitions", "options", "where"), ("table",),
                                                    "result boolean", row_id_procs.materialize_deletion_vectors),
    "create_global_index": PaimonProcedure(("table", "index_column", "index_type", "partitions", "options"),
                                           ("table", "index_column", "index_type"), "result boolean",
                                           index_procs.create_global_index),
    "drop_global_index": PaimonProcedure(("table", "index_column", "index_type", "partitions", "dry_run"),
                                         ("table", "index_column", "index_type"),
                                         "result boolean, dropped_file_count bigint",
                                         index_procs.drop_global_index),
}


# Paimon's procedures whose call with an argument only the shared (Iceberg's) form has runs that form
SHARED_FORMS = ("expire_snapshots", "remove_orphan_files")
# Paimon's procedures whose ``table`` may be ``db.*``: every Paimon table of the database, the rows summed
DATABASE_WIDE = ("remove_orphan_files",)
_MAIN_ONLY = ("delete_branch", "fast_forward", "rename_branch", "purge_files", "expire_changelogs")
REFUSED = branch_procs.REFUSED


def _epoch_ms(sess: StatementSession, name: str, node: exp.Expression) -> int:
    """A time argument: epoch milliseconds (Paimon's unit), or a timestamp expression."""
    try:
        value = literal_value(node)
    except ValueError:
        value = None
    if isinstance(value, bool):
        value = None
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        return int(value)
    micros = spark_value(sess, f"unix_micros(CAST(({node.sql('spark')}) AS TIMESTAMP))")
    if micros is None:
        line, col = node_position(node)
        raise SqlError(f"argument {name!r} must be epoch milliseconds or a timestamp, got {node.sql('spark')}",
                       line, col)
    return micros // 1000


def _plain(sess: StatementSession, node: exp.Expression) -> Any:
    try:
        return literal_value(node)
    except ValueError:
        return spark_value(sess, node.sql('spark'))


def duration_ms(text: object, name: str = "time_retained") -> int:
    """A Paimon duration argument (``'1 d'``, ``'12 h'``, ``'30 min'``; a bare number: ms)."""
    try:
        return parse_duration_ms(str(text))
    except SchemaError as e:
        raise SqlError(f"argument {name!r}: {e}") from None


def _values(sess: StatementSession, proc: PaimonProcedure, bound: Mapping[str, exp.Expression]) -> dict[str, Any]:
    return {key: _epoch_ms(sess, key, node) if key in proc.times else _plain(sess, node)
            for key, node in bound.items() if key != "table"}


def _run(t: PaimonTable, name: str, proc: PaimonProcedure, args: Args) -> Rows:
    try:
        return proc.run(t, args)
    except SqlError:
        raise
    except NotSupportedError as e:
        raise NotSupportedYetError(f"CALL sys.{name} on {t.name}: {e}") from None
    except IcefloeError as e:
        raise SqlError(f"CALL sys.{name} on {t.name}: {e}") from None


def call(sess: StatementSession, t: PaimonTable, name: str, bound: Mapping[str, exp.Expression]) -> DataFrame:
    """Run Paimon procedure ``name`` on table ``t`` with the bound arguments ({name: node})."""
    proc = PROCEDURES[name]
    if t.branch is not None and name in _MAIN_ONLY:
        raise SqlError(f"CALL sys.{name} takes the table, not its branch {t.branch!r}: table => '{t.name}'")
    return sess.spark.createDataFrame(_run(t, name, proc, _values(sess, proc, bound)), proc.result)


def call_database(sess: StatementSession, name: str, database: str, bound: Mapping[str, exp.Expression],
                  tables: list[PaimonTable]) -> DataFrame:
    """``table => 'db.*'``: procedure ``name`` on each of ``tables`` (the Paimon tables of the
    database) with the same arguments; one row, each column summed over the tables."""
    proc = PROCEDURES[name]
    args = _values(sess, proc, bound)
    rows = [row for t in tables for row in _run(t, name, proc, args)]
    width = len(proc.result.split(","))
    total = tuple(sum(r[i] for r in rows) for i in range(width))
    return sess.spark.createDataFrame([total], proc.result)
