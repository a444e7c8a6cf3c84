"""Paimon's Spark procedures that compact and clean a table: ``compact``, ``compact_manifest`` and
``remove_orphan_files``, with Paimon's argument names (procedures.md of Paimon's Spark docs).

Their ``options`` argument is Paimon's dynamic options of the table for that call
(``'target-file-size=128m,k2=v2'``); icefloe honours the ones in :data:`COMPACT_OPTIONS` and
refuses any other key by name.
"""
from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Optional

import sqlglot
from sqlglot.errors import ParseError
from sqlglot import exp

from icefloe.errors import SchemaError
from icefloe.paimon.options import parse_duration_ms, parse_memory_size
from icefloe.sql.call_args import partition_specs
from icefloe.sql.errors import NotSupportedYetError, SqlError

if TYPE_CHECKING:
    from icefloe.sql.call_args import Args, Rows
    from icefloe.table.paimon import PaimonTable

TARGET_FILE_SIZE = "target-file-size"
COMPACT_OPTIONS = (TARGET_FILE_SIZE,)
ORPHAN_DEFAULT_AGE = _dt.timedelta(days=1)      # Paimon's procedure keeps files younger than a day
ORPHAN_MODES = ("local", "distributed")


def parse_options(text: object, procedure: str) -> dict[str, str]:
    """``'k1=v1,k2=v2'`` (Paimon's form of dynamic options) as a dict."""
    out: dict[str, str] = {}
    for item in str(text or "").split(","):
        if not item.strip():
            continue
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise SqlError(f"{procedure}: option {item.strip()!r} is not key=value (options => 'k1=v1,k2=v2')")
        out[key.strip()] = value.strip()
    return out


def compaction_target(text: object, procedure: str) -> Optional[int]:
    """The target file size the ``options`` of a compaction set (None: the table's own); any
    option icefloe's compaction does not act on is refused by name."""
    options = parse_options(text, procedure)
    unknown = sorted(k for k in options if k.lower() not in COMPACT_OPTIONS)
    if unknown:
        raise NotSupportedYetError(f"CALL sys.{procedure} with options {', '.join(unknown)} (icefloe's compaction "
                                   f"takes {', '.join(COMPACT_OPTIONS)} as a dynamic option; set other options "
                                   "on the table with ALTER TABLE ... SET TBLPROPERTIES)")
    size = next((v for k, v in options.items() if k.lower() == TARGET_FILE_SIZE), None)
    if size is None:
        return None
    try:
        value = parse_memory_size(size)
    except SchemaError as e:
        raise SqlError(f"{procedure}: option {TARGET_FILE_SIZE}: {e}") from None
    if value <= 0:
        raise SqlError(f"{procedure}: option {TARGET_FILE_SIZE} must be a positive size, got {size!r}")
    return value


def _partitions(text: object) -> Optional[list[dict[str, str]]]:
    """``'p=0;p=1'``, ``'dt=01,h=02'``: ``;`` separates partitions (OR), ``,`` their keys (AND)."""
    if text is None or not str(text).strip():
        return None
    return partition_specs(text, "compact", "p=0;p=1")


def _partition_predicate(t: PaimonTable, where: str, procedure: str = "compact") -> str:
    """``where`` as given, once it is known to read partition keys only (Paimon's ``where`` of
    ``compact`` is a partition predicate)."""
    try:
        tree = sqlglot.parse_one(where, read="spark")
    except ParseError as e:
        raise SqlError(f"{procedure}: where {where!r} is not a condition: {str(e).splitlines()[0]}") from None
    keys = {k.lower() for k in t.partition_keys}
    other = sorted({c.name for c in tree.find_all(exp.Column) if c.name.lower() not in keys})
    if other:
        raise SqlError(f"{procedure}: where must be a partition predicate; {', '.join(other)} "
                       f"{'is not a partition key' if len(other) == 1 else 'are not partition keys'} of {t.name} "
                       f"(partition keys: {', '.join(t.partition_keys) or 'none'})")
    return where


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def compact(t: PaimonTable, args: Args) -> Rows:
    """``compact(table, partitions, compact_strategy, order_strategy, order_by, where, options,
    partition_idle_time)``: see ``PaimonTable.compact``; row: true."""
    if not _blank(args.get("buckets")):
        raise NotSupportedYetError("CALL sys.compact with buckets (icefloe compacts every bucket of the "
                                   "partitions chosen; use partitions or where)")
    partitions, where = args.get("partitions"), args.get("where")
    if not _blank(partitions) and not _blank(where):
        raise SqlError("compact: partitions and where cannot be used together")
    order = None if _blank(args.get("order_strategy")) else str(args["order_strategy"]).strip().lower()
    order_by = [] if _blank(args.get("order_by")) else [c.strip() for c in str(args["order_by"]).split(",")]
    if order == "none" and order_by:
        raise SqlError("compact: order_strategy 'none' cannot work with order_by columns")
    strategy = None if _blank(args.get("compact_strategy")) else str(args["compact_strategy"]).strip().lower()
    if strategy is not None and strategy not in ("full", "minor"):
        raise SqlError(f"compact: compact_strategy only supports 'full' or 'minor', got {strategy!r}")
    if strategy is not None and order not in (None, "none"):
        raise SqlError(f"compact: compact_strategy {strategy!r} picks the files of a bucket to merge; a sort "
                       f"compaction (order_strategy {order!r}) rewrites every file of the partitions chosen")
    idle = None
    if not _blank(args.get("partition_idle_time")):
        try:
            idle = parse_duration_ms(str(args["partition_idle_time"]))
        except SchemaError as e:
            raise SqlError(f"compact: argument 'partition_idle_time': {e}") from None
    target = compaction_target(args.get("options"), "compact")
    try:
        t.compact(None if _blank(where) else _partition_predicate(t, str(where)), target, _partitions(partitions), strategy, idle,
                  None if order == "none" else order, order_by)
    except ValueError as e:
        raise SqlError(f"compact on {t.name}: {e}") from None
    except NotImplementedError as e:
        raise NotSupportedYetError(f"CALL sys.compact on {t.name}: {e}") from None
    return [(True,)]


def rescale(t: PaimonTable, args: Args) -> list[tuple[bool]]:
    """``rescale(table, bucket_num, partitions, where)``: see ``PaimonTable.rescale``; row: true."""
    partitions, where = args.get("partitions"), args.get("where")
    if not _blank(partitions) and not _blank(where):
        raise SqlError("rescale: partitions and where cannot be used together")
    bucket_num = args.get("bucket_num")
    if bucket_num is not None and (isinstance(bucket_num, bool) or not isinstance(bucket_num, int)):
        raise SqlError(f"rescale: argument 'bucket_num' must be a whole number of buckets, got {bucket_num!r}")
    chosen = None if _blank(partitions) else partition_specs(partitions, "rescale", "dt=20250217,hh=08;dt=20250218,hh=08")
    try:
        t.rescale(bucket_num, None if _blank(where) else _partition_predicate(t, str(where), "rescale"), chosen)
    except ValueError as e:
        raise SqlError(f"rescale on {t.name}: {e}; nothing was changed") from None
    return [(True,)]


def _flag(args: Args, key: str) -> Optional[bool]:
    value = args.get(key)
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise SqlError(f"argument {key!r} must be true or false, got {value!r}")
    return text == "true"


_SORT_ARGS = (("manifest_sort_enabled", "manifest-sort.enabled"),
              ("manifest_sort_partition_field", "manifest-sort.partition-field"),
              ("manifest_sort_max_rewrite_size", "manifest-sort.max-rewrite-size"))


def compact_manifest(t: PaimonTable, args: Args) -> Rows:
    """``compact_manifest(table, options, dry_run, manifest_sort_enabled,
    manifest_sort_partition_field, manifest_sort_max_rewrite_size)``: the latest snapshot's
    manifests merged (a COMPACT snapshot); with manifest sort (the argument, else the option in
    ``options``, else the table's), their entries ordered by a partition field. ``dry_run``:
    the same checks, nothing written (the row is true, as Paimon's)."""
    options = parse_options(args.get("options"), "compact_manifest")
    for arg, key in _SORT_ARGS:              # the arguments win over the options, as in Paimon
        if args.get(arg) is not None:
            options[key] = str(args[arg])
    unknown = sorted(k for k in options if k not in {key for _, key in _SORT_ARGS})
    if unknown:
        raise NotSupportedYetError(f"CALL sys.compact_manifest with options {', '.join(unknown)} (icefloe merges "
                                   "the manifests with the table's own options; it takes "
                                   f"{', '.join(key for _, key in _SORT_ARGS)})")
    merged = {key: options.get(key, t.options.get(key)) for _, key in _SORT_ARGS}
    sort = _flag({"manifest_sort_enabled": merged["manifest-sort.enabled"]}, "manifest_sort_enabled")
    given = [arg for arg, key in _SORT_ARGS[1:] if key in options]
    if given and not sort:
        raise SqlError(f"compact_manifest: {', '.join(given)} only apply with manifest_sort_enabled => true")
    field, max_size = merged["manifest-sort.partition-field"], merged["manifest-sort.max-rewrite-size"]
    try:
        limit = None if max_size is None else parse_memory_size(str(max_size))
        if sort:
            t.manifest_sort(field, limit)       # a field that is not a partition field fails here
    except (SchemaError, ValueError) as e:
        raise SqlError(f"compact_manifest on {t.name}: {e}") from None
    if _flag(args, "dry_run"):
        return [(True,)]
    t.rewrite_manifests(sort_field=field, sort_max_size=limit, sort=bool(sort))
    return [(True,)]


def remove_orphan_files(t: PaimonTable, args: Args) -> Rows:
    """``remove_orphan_files(table, older_than, dry_run, parallelism, mode)``: row
    (deletedFileCount, deletedFileTotalLenInBytes), as Paimon's procedure reports them."""
    mode = "distributed" if _blank(args.get("mode")) else str(args["mode"]).strip().lower()
    if mode not in ORPHAN_MODES:
        raise SqlError(f"remove_orphan_files: unknown mode {args['mode']!r}; Paimon's modes are 'local' and "
                       "'distributed'")
    parallelism = args.get("parallelism")
    if parallelism is not None and (isinstance(parallelism, bool) or not str(parallelism).strip().isdigit()
                                    or int(parallelism) < 1):
        raise SqlError(f"remove_orphan_files: parallelism must be a positive number, got {parallelism!r}")
    older_than = args.get("older_than")
    if older_than is None:
        older_than = int((_dt.datetime.now(_dt.timezone.utc) - ORPHAN_DEFAULT_AGE).timestamp() * 1000)
    sizes: dict[str, int] = {}
    found = t.remove_orphan_files(older_than=older_than, dry_run=bool(_flag(args, "dry_run")),
                                  parallelism=None if parallelism is None else int(parallelism), sizes=sizes)
    return [(len(found), sum(sizes.get(p, 0) for p in found))]


ORPHANS_RESULT = "deletedFileCount bigint, deletedFileTotalLenInBytes bigint"

__all__ = ["compact", "compact_manifest", "remove_orphan_files", "compaction_target", "parse_options",
           "ORPHANS_RESULT", "COMPACT_OPTIONS"]
