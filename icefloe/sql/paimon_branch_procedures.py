"""Paimon's Spark procedures for branches, tags and file indexes: ``create_branch``,
``delete_branch``, ``fast_forward``, ``merge_branch``, ``expire_tags``, ``trigger_tag_automatic_creation``,
``rewrite_file_index``; and the ones this
engine refuses by name (views and functions a filesystem catalog does not have...), each saying why.

They are entries of ``paimon_procedures.PROCEDURES`` (Paimon's argument names and result rows).
"""
from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING

from icefloe.errors import IcefloeError
from icefloe.paimon.catalog import HIVE_MIGRATION
from icefloe.sql.errors import SqlError

if TYPE_CHECKING:
    from icefloe.sql.call_args import Args, Rows
    from icefloe.table.paimon import PaimonTable


def _name(args: Args, key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SqlError(f"argument {key!r} must be a name")
    return value.strip()


def create_branch(t: PaimonTable, args: Args) -> Rows:
    """``create_branch(table, branch[, tag])``: from the tag's snapshot, or empty."""
    tag = args.get("tag")
    t.create_branch(_name(args, "branch"), tag=None if tag is None else _name(args, "tag"))
    return [(True,)]


def delete_branch(t: PaimonTable, args: Args) -> Rows:
    """``delete_branch(table, branch)``: several when ``branch`` is comma-separated."""
    names = [n.strip() for n in _name(args, "branch").split(",") if n.strip()]
    missing = [n for n in names if n not in t.branches()]
    if missing:
        raise SqlError(f"table {t.name} has no branch {', '.join(missing)} (branches: "
                       f"{', '.join(t.branches()) or 'none'}); nothing was deleted")
    for n in names:
        t.delete_branch(n)
    return [(True,)]


def fast_forward(t: PaimonTable, args: Args) -> Rows:
    """``fast_forward(table, branch)``: main becomes the branch's history."""
    t.fast_forward(_name(args, "branch"))
    return [(True,)]


def merge_branch(t: PaimonTable, args: Args) -> Rows:
    """``merge_branch(table, source_branch[, target_branch])``: the source's files the target
    (main by default) lacks, appended to it."""
    target = args.get("target_branch")
    try:
        t.merge_branch(_name(args, "source_branch"), None if target is None else _name(args, "target_branch"))
    except IcefloeError as e:
        raise SqlError(f"merge_branch: {e}; nothing was changed") from None
    return [(True,)]


def rename_branch(t: PaimonTable, args: Args) -> Rows:
    """``rename_branch(table, from_branch, to_branch)``."""
    t.rename_branch(_name(args, "from_branch"), _name(args, "to_branch"))
    return [(True,)]


def repair_earliest_snapshot(t: PaimonTable, args: Args) -> Rows:
    """``repair_earliest_snapshot(table, snapshot_id)``: the EARLIEST hint names ``snapshot_id``
    (the first snapshot after a gap); row: the earliest snapshot id before, and now."""
    sid = args.get("snapshot_id")
    if sid is None or isinstance(sid, bool) or not str(sid).strip().isdigit():
        raise SqlError(f"argument 'snapshot_id' must be a snapshot id, got {sid!r}")
    try:
        previous = t.repair_earliest_snapshot(int(sid))
    except ValueError as e:
        raise SqlError(f"repair_earliest_snapshot: {e}; nothing was changed") from None
    return [(previous, int(sid))]


def _local_time(value: object) -> _dt.datetime:
    """``older_than``: a local wall-clock time (Paimon's tag create times are local), a
    ``TIMESTAMP`` value or epoch milliseconds."""
    if isinstance(value, _dt.datetime):
        return value.astimezone().replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        return _dt.datetime.fromtimestamp(int(value) / 1000)
    try:
        return _dt.datetime.fromisoformat(str(value).strip())
    except ValueError:
        raise SqlError(f"argument 'older_than' must be a time like '2024-09-06 11:00:00', got {value!r}") from None


def rewrite_file_index(t: PaimonTable, args: Args) -> Rows:
    """``rewrite_file_index(table[, where])``: the live files (of the partitions ``where`` selects)
    get the table's configured file indexes; row: partitions written, files given a new index."""
    where = args.get("where")
    if where is not None and not isinstance(where, str):
        raise SqlError(f"argument 'where' must be a condition on partition columns, got {where!r}")
    return [t.rewrite_file_index(where)]


def expire_tags(t: PaimonTable, args: Args) -> Rows:
    """Paimon's tag expiry: a tag goes when its ``time_retained`` has passed since it was created,
    or (``older_than``) when it was created before that time; a tag without a create time counts
    from its file's modification time for ``older_than``. Rows: the expired tags' names."""
    older = args.get("older_than")
    older = None if older is None else _local_time(older)
    now = _dt.datetime.now()
    expired: list[str] = []
    for name, tag in sorted(t.tags().items()):
        created = tag.create_time
        if created is not None and created.tzinfo is not None:
            created = created.astimezone().replace(tzinfo=None)
        if created is None and older is not None:
            created = _dt.datetime.fromtimestamp(t.io.mtime_ms(t.tag_path(name)) / 1000)
        if created is None:
            continue
        if (tag.time_retained is not None and now > created + tag.time_retained) or \
                (older is not None and older > created):
            expired.append(name)
    for name in expired:
        t.delete_tag(name)
    return [(n,) for n in expired] or [("No expired tags.",)]


def trigger_tag_automatic_creation(t: PaimonTable, args: Args) -> Rows:
    """``trigger_tag_automatic_creation(table)``: the automatic tags the table's snapshots call for
    (``tag.automatic-creation`` process-time or watermark) and the expiry of tags past their
    retention, as a commit makes them."""
    t.trigger_tag_automatic_creation()
    return [(True,)]


# Paimon's procedures icefloe does not run, and why (each refused by name)
REFUSED = {
    "migrate_database": HIVE_MIGRATION,
    "migrate_table": HIVE_MIGRATION,
    "repair": "Paimon's repair registers the warehouse's databases and tables in the metastore of a Hive or JDBC "
              "catalog (its filesystem catalog refuses it); a filesystem warehouse has no metastore",
    "alter_view_dialect": "a Paimon filesystem catalog has no views (Paimon changes a view's dialects in a JDBC "
                          "or REST catalog)",
    "create_function": "a Paimon filesystem catalog has no functions (Paimon keeps them in a REST catalog)",
    "alter_function": "a Paimon filesystem catalog has no functions (Paimon keeps them in a REST catalog)",
    "drop_function": "a Paimon filesystem catalog has no functions (Paimon keeps them in a REST catalog)",
}
