# pyright: strict
"""Automatic tags, made and expired after a commit as Paimon's writers do (Paimon's
``TagAutoManager``: ``TagAutoCreation``, ``TagBatchCreation``, ``TagTimeExpire``).

After each commit of a table that is not ``write-only`` (and on
``CALL sys.trigger_tag_automatic_creation``):

1. **Time-driven tags** (``tag.automatic-creation`` = ``process-time`` or ``watermark``): the
   snapshots after the newest automatic tag's snapshot (all of them when there is none) are
   visited in order. The first one, and later each one whose time minus ``tag.creation-delay``
   reaches the end of the period after the last tag's, is tagged with the period its time closes
   (the period before the one it falls in) -- or, with ``tag.automatic-completion``, with the
   period right after the last tag, so that no period is skipped. A tag of that name that exists
   already is left alone. Then, beyond ``tag.num-retained-max`` automatic tags, the oldest go
   (by snapshot; tags of other names are never counted).
2. **Batch tags** (``batch``; after a commit only: a batch write is what closes a batch): the latest
   snapshot is tagged ``tag.batch.customized-name`` or ``batch-write-<yyyy-MM-dd>`` of its commit
   time, replacing a tag of that name; then, beyond ``tag.num-retained-max`` tags of any name, the
   oldest go (by snapshot, then by the tag file's age).
3. **Tag expiry** (unless ``tag.time-expire-enabled`` is false): a tag created with a retention
   time (``tagCreateTime``, ``tagTimeRetained``) whose time has passed is deleted.

New tags keep ``tag.default-time-retained``. Deleting a tag deletes the files only it kept alive,
as ``tag.delete_tag`` does (none for a branch's tag, or a tag branches were made from).
"""
from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Optional

from icefloe.errors import TagError
from icefloe.paimon import branches
from icefloe.paimon.tag import TagManager, create_tag, delete_tag
from icefloe.paimon.tag_period import AutoTagOptions, auto_tag_options, local_time

if TYPE_CHECKING:
    from icefloe.paimon.file_store import FileStore

BATCH_PREFIX = "batch-write-"
# what one run did: {"created": [tag names], "deleted": [tag names]}
TagChanges = dict[str, list[str]]


def _delete(store: FileStore, mgr: TagManager, name: str) -> None:
    shared = store.meta_path != store.table_path or \
        bool(branches.branches_from_tag(store.io, store.table_path, name))
    delete_tag(store, name, keep_files=shared)


def run(store: FileStore, after_commit: bool = True, now: Optional[_dt.datetime] = None) -> TagChanges:
    """Steps 1-3 for ``store``'s table (or branch); returns ``{"created": [...], "deleted": [...]}``."""
    opts = auto_tag_options(store.schema.options)
    mgr = TagManager(store.io, store.meta_path)
    out: TagChanges = {"created": [], "deleted": []}
    if opts.mode in ("process-time", "watermark"):
        _time_tags(store, mgr, opts, out)
    elif opts.mode == "batch" and after_commit:
        _batch_tag(store, mgr, opts, out)
    if opts.time_expire_enabled:
        _expire(store, mgr, now or _dt.datetime.now(), out)
    return out


def _time_tags(store: FileStore, mgr: TagManager, opts: AutoTagOptions, out: TagChanges) -> None:
    handler, snapshot_time = opts.handler, opts.snapshot_time()
    snaps = store.snapshots
    if snapshot_time is None:       # pragma: no cover - run() calls this for the time-driven modes only
        return
    auto = [(time, n) for n in mgr.names() if (time := handler.tag_to_time(n)) is not None]
    next_tag = None
    if auto:
        newest_time, newest = max(auto)
        first = mgr.tag(newest).snapshot.id + 1
        next_tag = handler.next_time(newest_time)
    else:
        first = snaps.earliest_id() or 1
    for sid in sorted(i for i in snaps.ids() if i >= first):
        snap = snaps.snapshot(sid)
        time = snapshot_time(snap.time_millis, snap.watermark)
        if time is None or not (next_tag is None or time - opts.delay >= handler.next_time(next_tag)):
            continue
        this_tag = next_tag if opts.automatic_completion and next_tag is not None else \
            handler.previous_tag_time(time)
        name = handler.time_to_tag(this_tag)
        if not mgr.exists(name):
            tagged = [n for n in mgr.names() if handler.is_auto_tag(n) and mgr.tag(n).snapshot.id == sid]
            if tagged:
                raise TagError(f"snapshot {sid} is already tagged automatically ({', '.join(tagged)}); "
                               f"tag {name!r} was not created")
            create_tag(store, name, sid, opts.default_time_retained)
            out["created"].append(name)
        next_tag = handler.next_time(this_tag)
        if opts.num_retained_max is not None:
            _retain_auto(store, mgr, opts, out)


def _retain_auto(store: FileStore, mgr: TagManager, opts: AutoTagOptions, out: TagChanges) -> None:
    by_snapshot: dict[int, list[str]] = {}
    for tag in mgr.tags():
        if opts.handler.is_auto_tag(tag.name):
            by_snapshot.setdefault(tag.snapshot.id, []).append(tag.name)
    excess = len(by_snapshot) - int(opts.num_retained_max or 0)
    for sid in sorted(by_snapshot)[:max(excess, 0)]:
        names = by_snapshot[sid]
        if len(names) != 1:
            raise TagError(f"snapshot {sid} has more than one automatic tag: {', '.join(names)}")
        _delete(store, mgr, names[0])
        out["deleted"].append(names[0])


def _batch_tag(store: FileStore, mgr: TagManager, opts: AutoTagOptions, out: TagChanges) -> None:
    latest = store.snapshots.latest()
    if latest is None:
        return
    name = opts.batch_name or BATCH_PREFIX + local_time(latest.time_millis, opts.process_zone).strftime("%Y-%m-%d")
    if mgr.exists(name):
        _delete(store, mgr, name)
    create_tag(store, name, latest.id, opts.default_time_retained)
    out["created"].append(name)
    if opts.num_retained_max is None:
        return
    tags = mgr.tags()            # by snapshot id, then name
    excess = len(tags) - opts.num_retained_max
    by_age = sorted(tags, key=lambda t: (t.snapshot.id, store.io.mtime_ms(mgr.tag_path(t.name)), t.name))
    for tag in by_age[:max(excess, 0)]:
        _delete(store, mgr, tag.name)
        out["deleted"].append(tag.name)


def _expire(store: FileStore, mgr: TagManager, now: _dt.datetime, out: TagChanges) -> None:
    for tag in mgr.tags():
        created, retained = tag.create_time, tag.time_retained
        if created is None or retained is None:
            continue
        if created.tzinfo is not None:
            created = created.astimezone().replace(tzinfo=None)
        if now > created + retained:
            _delete(store, mgr, tag.name)
            out["deleted"].append(tag.name)


__all__ = ["run", "BATCH_PREFIX"]
