"""Paimon's Spark procedures for global indexes: ``create_global_index(table, index_column, index_type,
partitions, options)`` and ``drop_global_index(table, index_column, index_type, partitions, dry_run)``
(``paimon/global_index_ops.py``; the index itself: ``paimon/global_index.py``). Each returns one row,
``result`` true (drop: and ``dropped_file_count``, the index files dropped, or with ``dry_run`` the
ones it would drop, committing nothing), as Paimon's do.

They are entries of ``paimon_procedures.PROCEDURES``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from icefloe.paimon.global_index_ops import create_global_index as create
from icefloe.paimon.global_index_ops import drop_global_index as drop
from icefloe.paimon.global_index_ops import global_index_files_to_drop
from icefloe.spark.paimon_global_index import builder
from icefloe.sql.call_args import partition_specs
from icefloe.sql.errors import SqlError

if TYPE_CHECKING:
    from icefloe.sql.call_args import Args, Rows
    from icefloe.table.paimon import PaimonTable

_EXAMPLE = "dt=2024-07-01;dt=2024-07-02"


def _text(args: Args, key: str, procedure: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SqlError(f"{procedure} needs argument {key!r} (a string)")
    return value.strip()


def _accept(t: PaimonTable, args: Args, procedure: str) -> Optional[Callable[[tuple[Any, ...]], bool]]:
    """The partitions the ``partitions`` argument names, as a predicate on partition values."""
    specs = partition_specs(args.get("partitions"), procedure, _EXAMPLE)
    if not specs:
        return None
    if not t.partition_keys:
        raise SqlError(f"{procedure}: table {t.name} is not partitioned, so it takes no 'partitions'")
    matches = [t.static_partition_match(spec) for spec in specs]
    return lambda values: any(m(values) for m in matches)


def _options(text: object) -> dict[str, str]:
    """``'k1=v1,k2=v2'`` as a dict."""
    out: dict[str, str] = {}
    for item in str(text or "").split(","):
        if not item.strip():
            continue
        k, eq, v = item.partition("=")
        if not eq or not k.strip():
            raise SqlError(f"create_global_index options {item.strip()!r} is not key=value")
        out[k.strip()] = v.strip()
    return out


def create_global_index(t: PaimonTable, args: Args) -> Rows:
    """Build the index (on the driver for up to a million rows, else in Spark tasks)."""
    column = _text(args, "index_column", "create_global_index")
    index_type = _text(args, "index_type", "create_global_index")
    create(t, column, index_type, _options(args.get("options")), _accept(t, args, "create_global_index"),
           builder(t.spark))
    return [(True,)]


def drop_global_index(t: PaimonTable, args: Args) -> Rows:
    column = _text(args, "index_column", "drop_global_index")
    index_type = _text(args, "index_type", "drop_global_index")
    dry_run = args.get("dry_run")
    if dry_run is not None and not isinstance(dry_run, bool):
        raise SqlError(f"drop_global_index: argument 'dry_run' must be true or false, got {dry_run!r}")
    accept = _accept(t, args, "drop_global_index")
    going = global_index_files_to_drop(t, column, index_type, accept)
    if not dry_run and going:
        drop(t, column, index_type, accept)
    return [(True, len(going))]


__all__ = ["create_global_index", "drop_global_index"]
