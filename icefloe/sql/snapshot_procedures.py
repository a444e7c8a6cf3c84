"""Iceberg's procedures that move refs and publish snapshots (spark-procedures, "Snapshot
management"): ``cherrypick_snapshot``, ``publish_changes``, ``fast_forward``,
``set_current_snapshot``, ``ancestors_of``; and ``register_table``, which names a table that does
not exist yet.

Each takes Iceberg's arguments (already evaluated, by name) and returns the rows of Iceberg's
output, in its columns.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from icefloe.sql.errors import SqlError

if TYPE_CHECKING:
    from icefloe.sql.statement_context import StatementCatalog
    from icefloe.table.base import Table

#: a procedure's output rows, in its result's columns
Rows = list[tuple[Any, ...]]
#: a procedure's arguments, evaluated, by name
Args = Mapping[str, Any]


@dataclass(frozen=True)
class Spec:
    params: tuple[str, ...]     # Iceberg's parameter names, in positional order
    required: tuple[str, ...]
    method: str            # the table API method the procedure needs
    result: str            # Spark DDL of the output rows
    run: Optional[Callable[[Table, Args], Rows]]   # (table, arguments) -> rows; None: run by the catalog


def _current(t: Table) -> Optional[int]:
    snap = t.current_snapshot()
    return snap.snapshot_id if snap is not None else None


def _cherrypick(t: Table, a: Args) -> Rows:
    snapshot_id = int(a["snapshot_id"])
    t.cherry_pick(snapshot_id)
    return [(snapshot_id, _current(t))]


def _publish(t: Table, a: Args) -> Rows:
    staged = t.publish_changes(str(a["wap_id"]))
    return [(staged.snapshot_id, _current(t))]


def _fast_forward(t: Table, a: Args) -> Rows:
    branch, to = str(a["branch"]), str(a["to"])
    before = t.refs().get(branch)
    t.fast_forward(branch, to)
    after = t.refs()[branch]              # fast_forward leaves it there
    return [(branch, before.snapshot_id if before is not None else None, after.snapshot_id)]


def _set_current(t: Table, a: Args) -> Rows:
    """Any snapshot of the table becomes current (not only an ancestor, unlike a rollback):
    by ``snapshot_id``, or the one branch or tag ``ref`` names."""
    snapshot_id, ref = a.get("snapshot_id"), a.get("ref")
    if (snapshot_id is None) == (ref is None):
        raise SqlError("set_current_snapshot takes either snapshot_id or ref, not both and not neither")
    if ref is not None:
        refs = t.refs()
        if str(ref) not in refs:
            raise SqlError(f"table {t.name} has no branch or tag {ref!r}; refs are {', '.join(sorted(refs))}")
        target = int(refs[str(ref)].snapshot_id)
    else:
        target = int(a["snapshot_id"])      # given (it is not None without ref)
    before = _current(t)
    t.set_current_snapshot(target)
    return [(before, _current(t))]


def _ancestors(t: Table, a: Args) -> Rows:
    snapshot_id = a.get("snapshot_id")
    return [(s.snapshot_id, s.timestamp_ms) for s in t.ancestors(int(snapshot_id) if snapshot_id is not None
                                                                  else None)]


SNAPSHOT_PROCEDURES = {
    "cherrypick_snapshot": Spec(("table", "snapshot_id"), ("table", "snapshot_id"), "cherry_pick",
                                "source_snapshot_id bigint, current_snapshot_id bigint", _cherrypick),
    "publish_changes": Spec(("table", "wap_id"), ("table", "wap_id"), "publish_changes",
                            "source_snapshot_id bigint, current_snapshot_id bigint", _publish),
    "fast_forward": Spec(("table", "branch", "to"), ("table", "branch", "to"), "fast_forward",
                         "branch_updated string, previous_ref bigint, updated_ref bigint", _fast_forward),
    "set_current_snapshot": Spec(("table", "snapshot_id", "ref"), ("table",), "set_current_snapshot",
                                 "previous_snapshot_id bigint, current_snapshot_id bigint", _set_current),
    "ancestors_of": Spec(("table", "snapshot_id"), ("table",), "ancestors",
                         "snapshot_id bigint, timestamp bigint", _ancestors),
}

REGISTER_TABLE = Spec(("table", "metadata_file"), ("table", "metadata_file"), "register_table",
                      "current_snapshot_id bigint, total_records_count bigint, total_data_files_count bigint",
                      None)


def register_table(catalog: StatementCatalog, name: str, metadata_file: str) -> Rows:
    """``register_table``: ``name`` (db.table, which must not exist) adopts the table whose metadata
    file is ``metadata_file``; the output counts come from its current snapshot's summary."""
    t = catalog.register_table(name, metadata_file)
    snap = t.current_snapshot()
    if snap is None:
        return [(None, 0, 0)]
    return [(snap.snapshot_id, int(snap.summary.get("total-records", 0)),
             int(snap.summary.get("total-data-files", 0)))]
