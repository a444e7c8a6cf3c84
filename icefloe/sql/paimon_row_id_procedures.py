"""Paimon's Spark procedures on the row ids of Data Evolution tables: ``reassign_row_id`` (row ids
made contiguous within each partition, ``icefloe.paimon.row_id_reassign``) and
``materialize_deletion_vectors``, with Paimon's arguments, checks and result rows.

``materialize_deletion_vectors`` rewrites the files of an unaware-bucket Data Evolution table
without the rows its deletion vectors delete. Paimon runs it only on a table with both
``data-evolution.enabled`` and ``deletion-vectors.enabled``; icefloe's tables never have both
(Paimon 1.4's rule, which icefloe keeps when a table is created or altered), so on each of them the
call ends in Paimon's own refusal, and a table another engine gave both is one icefloe cannot read.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from icefloe.paimon import row_id_reassign, row_tracking
from icefloe.paimon.commit import FileStoreCommit
from icefloe.paimon.commit_changes import PaimonCommit
from icefloe.paimon.snapshot import OVERWRITE
from icefloe.sql.call_args import partition_specs
from icefloe.sql.errors import SqlError

if TYPE_CHECKING:
    from icefloe.sql.call_args import Args, Rows
    from icefloe.table.paimon import PaimonTable

_DV = "deletion-vectors.enabled"


def _accept(t: PaimonTable, text: object, procedure: str) -> Optional[Callable[[tuple[Any, ...]], bool]]:
    """Paimon's ``partitions`` filter (``;`` between partitions, ``,`` between keys) as a predicate on
    partition values; None for all partitions."""
    specs = partition_specs(text, procedure, "dt=2026-05-19")
    if not specs:
        return None
    matches = [t.static_partition_match(s) for s in specs]
    return lambda values: any(m(values) for m in matches)


def reassign_row_id(t: PaimonTable, args: Args) -> Rows:
    """``reassign_row_id(table[, partitions])``: one row, Paimon's ``Success.``/``Skipped.`` message."""
    t.refresh()
    opts = t.options
    name = t.name
    if not row_tracking.enabled(opts):
        raise SqlError(f"Table '{name}' must enable 'row-tracking.enabled=true' before reassigning row IDs.")
    if not row_tracking.evolution_enabled(opts):
        raise SqlError(f"Table '{name}' must enable 'data-evolution.enabled=true' before reassigning row IDs.")
    latest = t.current_snapshot()
    if latest is None:
        raise SqlError(f"Cannot reassign row IDs for empty table '{name}'.")
    next_id = latest.next_row_id or 0

    def skipped(reason: str) -> Rows:
        return [(f"Skipped. Row IDs for table '{name}' were not reassigned because {reason}: snapshot {latest.id} "
                 f"unchanged, nextRowId={next_id}.",)]

    if not t.partition_keys:
        return skipped("table is not partitioned")
    accept = _accept(t, args.get("partitions"), "reassign_row_id")
    threshold = row_id_reassign.skip_contiguous(opts)
    store = t.store
    if not row_id_reassign.plan(store, store.live_entries(latest), accept, threshold, next_id).moves:
        return skipped("no partition requires row-id reassignment")
    change = row_id_reassign.ReassignRowIds(name, accept, threshold)
    snap = FileStoreCommit(store, t.commit_user).apply(PaimonCommit(OVERWRITE, (change,)))
    t.refresh()
    r = change.report
    return [(f"Success. Reassigned row IDs for table '{name}': snapshot {snap.id - 1} -> {snap.id}, nextRowId "
             f"{r['first']} -> {r['next']}, files={r['files']}, rows={r['rows']}, indexFiles=0.",)]


def materialize_deletion_vectors(t: PaimonTable, args: Args) -> Rows:
    """``materialize_deletion_vectors(table[, partitions][, options][, where])``: Paimon's checks, in
    its order (see the module doc)."""
    partitions, where = (str(args.get(k) or "").strip() or None for k in ("partitions", "where"))
    if partitions is not None and where is not None:
        raise SqlError("partitions and where cannot be used together.")
    dynamic: dict[str, str] = {}
    for item in str(args.get("options") or "").split(","):
        if item.strip():
            k, eq, v = item.partition("=")
            if not eq:
                raise SqlError(f"materialize_deletion_vectors options {item.strip()!r} is not key=value")
            dynamic[k.strip()] = v.strip()
    t.refresh()
    opts = t.options
    if t.table_schema.primary_keys or t.table_schema.num_buckets != -1 or not row_tracking.evolution_enabled(opts):
        raise SqlError("Materializing deletion vectors only supports unaware-bucket data evolution tables.")
    old = str(opts.get(_DV, "false")).strip().lower() == "true"
    new = str(dynamic.get(_DV, old)).strip().lower() == "true"
    if old != new:
        raise SqlError(f"Cannot change deletion vectors mode from {str(old).lower()} to {str(new).lower()}.")
    if not old:
        raise SqlError("Materializing deletion vectors requires deletion vectors to be enabled.")
    raise SqlError(f"materialize_deletion_vectors on {t.name}: a Data Evolution table with deletion vectors is not "
                   "one icefloe reads or writes (Paimon 1.4's rule: data-evolution.enabled without "
                   "deletion-vectors.enabled)")


__all__ = ["materialize_deletion_vectors", "reassign_row_id"]
