# pyright: strict
"""Paimon's commit: commit messages -> manifests -> manifest lists -> a snapshot.

1. *Check and collect the changes*: the commit's requirements are checked against the latest
   snapshot, then its changes (``commit_changes``) become manifest entries: every new data
   file of every ``CommitMessage`` an ADD ``ManifestEntry``, every deleted file a DELETE (an
   overwrite deletes every live file of its partitions).
2. *Compact manifests*: the base and delta manifests of the latest snapshot are
   compacted -- full compaction first, else minor compaction (``compact_manifests``).
3. *Base manifest list*: the compacted manifests.
4. *New manifests and the delta manifest list*: this commit's entries.
   A row-tracking table's new files get their first row ids and sequence numbers here
   (``row_tracking.assign``); the snapshot records the next free row id.
5. *Snapshot and hint*: ``snapshot-(latest + 1)`` is created if absent -- the atomic
   step that makes the commit visible -- then the ``LATEST`` hint is written.

Anything written by an attempt that does not become visible (an error, or a lost
race for the snapshot id) is deleted; a lost race retries on the new latest
snapshot, ``commit.max-retries`` times within ``commit.timeout``.
"""
from __future__ import annotations

import logging
import time
import uuid
from typing import Any, Callable, Collection, Optional, Sequence

from icefloe.core.retry import RetryPolicy
from icefloe.errors import AfterCommitError, CommitFailedError
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon import manifest as mf
from icefloe.paimon import manifest_merge
from icefloe.paimon import row_tracking, table_hooks
from icefloe.paimon.binary_row import BinaryRow, decode_row
from icefloe.paimon.commit_changes import (
    AddFiles, BucketKey, BucketsKeepSame, OverwritePartitions, PaimonCommit, Requirement, SetIndexFiles, SetStatistics,
    message_changes, written_totals,
)
from icefloe.paimon.dynamic_bucket import IndexFile
from icefloe.paimon.consumer import expire_consumers
from icefloe.paimon.data_file import CommitMessage as CommitMessage  # defined beside the files it lists
from icefloe.paimon.options import parse_duration_ms
from icefloe.paimon.dynamic_bucket import IndexRecord, write_index_manifest
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.manifest_sort import ManifestSort, sort_manifests
from icefloe.paimon.ownership import check_owns_files
from icefloe.paimon.snapshot import (
    ANALYZE, APPEND, BATCH_COMMIT_IDENTIFIER, EARLIEST, NO_WATERMARK, OVERWRITE, Snapshot,
)
from icefloe.paimon.statistics import Statistics, read_statistics, statistics_path, write_statistics
from icefloe.paimon.expire import expire_snapshots
from icefloe.paimon import tag_auto

log = logging.getLogger(__name__)


class _LostRace(Exception):
    """Another committer created the snapshot id this attempt wanted."""


# --------------------------------------------------------------------------- 2. compact
def compact_manifests(store: FileStore, manifests: list[mf.ManifestFileMeta], created: list[str], target_size: int,
                      min_count: int, full_threshold: int) -> list[mf.ManifestFileMeta]:
    """Manifest compaction as Paimon's commit does it: full compaction if it triggers, else minor."""
    full = try_full_compaction(store, manifests, created, target_size, full_threshold)
    if full is not None:
        return full
    return minor_compaction(store, manifests, created, target_size, min_count)


def try_full_compaction(store: FileStore, manifests: list[mf.ManifestFileMeta], created: list[str], target_size: int,
                        threshold: int) -> Optional[list[mf.ManifestFileMeta]]:
    """A manifest without DELETE entries of at least the target size is *base*; every
    other one is *delta*. Once the delta manifests total ``threshold`` bytes, all
    DELETEs are applied: delta manifests and the base manifests holding a deleted
    file are rewritten without the deleted files (and without DELETE entries);
    untouched base manifests are kept as they are. None if it does not trigger."""
    def is_delta(m: mf.ManifestFileMeta) -> bool:
        return m.num_deleted_files > 0 or m.file_size < target_size

    if sum(m.file_size for m in manifests if is_delta(m)) < threshold:
        return None
    deleting = [m for m in manifests if m.num_deleted_files > 0]
    # from columns where every manifest is in icefloe's entry schema (``manifest_merge``), else entry by entry
    delete_partitions = manifest_merge.deleted_partitions(store, deleting) if deleting else set[bytes]()
    deleted: Optional[set[mf.FileIdentifier]] = None
    if delete_partitions is None:
        deleted = _deleted(store, deleting)
        delete_partitions = {ident[0] for ident in deleted}
    result: list[mf.ManifestFileMeta] = []
    to_merge: list[mf.ManifestFileMeta] = []
    for m in manifests:
        if is_delta(m) or (delete_partitions and _may_contain(store, m, delete_partitions)):
            to_merge.append(m)
        else:
            result.append(m)
    if len(to_merge) <= 1:
        return None
    fast = None if deleted is not None else manifest_merge.full_compaction(
        store, to_merge, [is_delta(m) for m in to_merge], created)
    if fast is not None:
        return result + fast[0] + fast[1]
    if deleted is None:
        deleted = _deleted(store, deleting)
    kept: list[mf.ManifestEntry] = []
    seen: set[mf.FileIdentifier] = set()
    for m in to_merge:
        rewrite = is_delta(m)
        survivors: list[mf.ManifestEntry] = []
        for e in store.read_manifest(m.file_name, m.file_size):
            if e.kind == mf.DELETE:
                continue
            ident = e.identifier()
            if ident in deleted:
                rewrite = True
            else:
                survivors.append(e)
        if rewrite:
            for e in survivors:
                ident = e.identifier()
                if ident in seen:
                    raise mf.DuplicateFileError(f"trying to add file {e.file.file_name} which is already added")
                seen.add(ident)
            kept.extend(survivors)
        else:
            result.append(m)
    result.extend(store.write_manifests(kept, created))
    return result


def _deleted(store: FileStore, manifests: Sequence[mf.ManifestFileMeta]) -> set[mf.FileIdentifier]:
    """The files the DELETE entries of ``manifests`` delete."""
    return {e.identifier() for m in manifests for e in store.read_manifest(m.file_name, m.file_size)
            if e.kind == mf.DELETE}


def _may_contain(store: FileStore, m: mf.ManifestFileMeta, partitions: set[bytes]) -> bool:
    """Whether a manifest's partition statistics admit one of the given partitions."""
    types = store.partition_types
    if not types:
        return True
    mins, maxs, nulls = m.partition_stats.decode(types)
    for raw in partitions:
        values = decode_row(BinaryRow.from_bytes(raw), types)
        ok = True
        for v, lo, hi, n in zip(values, mins, maxs, nulls):
            if v is None:
                ok = n is None or n > 0
            else:
                ok = lo is None or hi is None or lo <= v <= hi
            if not ok:
                break
        if ok:
            return True
    return False


def minor_compaction(store: FileStore, manifests: list[mf.ManifestFileMeta], created: list[str], target_size: int,
                     min_count: int) -> list[mf.ManifestFileMeta]:
    """Walk the manifests in order collecting a run; once the run totals the target size
    it is merged into new manifests (a run of one -- a manifest already at least the
    target size -- is kept as it is). A leftover run is merged only if it has at least
    ``manifest.merge-min-count`` manifests. Order is kept, so every DELETE stays after
    the ADD it cancels."""
    result: list[mf.ManifestFileMeta] = []
    run: list[mf.ManifestFileMeta] = []
    size = 0
    for m in manifests:
        run.append(m)
        size += m.file_size
        if size >= target_size:
            _merge_run(store, run, result, created)
            run, size = [], 0
    if len(run) >= min_count:
        _merge_run(store, run, result, created)
    else:
        result.extend(run)
    return result


def _merge_run(store: FileStore, run: list[mf.ManifestFileMeta], result: list[mf.ManifestFileMeta],
               created: list[str]) -> None:
    if len(run) == 1:
        result.append(run[0])
        return
    fast = manifest_merge.merge_run(store, run, created)
    if fast is not None:
        result.extend(fast)
        return
    result.extend(merge_run_entries(store, run, created))


def merge_run_entries(store: FileStore, run: Sequence[mf.ManifestFileMeta], created: list[str]
                      ) -> list[mf.ManifestFileMeta]:
    """A run of manifests merged entry by entry (``manifest.merge_entries``) and written again:
    what ``manifest_merge.merge_run`` does from columns and record bytes, for any manifest."""
    merged: dict[mf.FileIdentifier, mf.ManifestEntry] = {}
    for m in run:
        mf.merge_entries(store.read_manifest(m.file_name, m.file_size), merged)
    return store.write_manifests(list(merged.values()), created) if merged else []


# --------------------------------------------------------------------------- the commit
class FileStoreCommit:
    """The one commit path of a Paimon table: every snapshot is a ``PaimonCommit`` (typed changes
    plus requirements, ``paimon/commit_changes.py``) applied by ``apply``."""

    def __init__(self, store: FileStore, commit_user: Optional[str] = None,
                 commit_identifier: int = BATCH_COMMIT_IDENTIFIER):
        self.store = store
        self.commit_user = commit_user or str(uuid.uuid4())
        # a streaming write's batch id: with the user, how a replayed batch is recognised
        self.commit_identifier = commit_identifier

    def commit(self, messages: Sequence[CommitMessage], overwrite: bool = False,
               properties: Optional[dict[str, str]] = None,
               overwrite_partitions: Optional[Callable[[tuple[Any, ...]], bool]] = None,
               requirements: Sequence[Requirement] = ()) -> Optional[Snapshot]:
        """Commit the messages as one snapshot (APPEND, or OVERWRITE replacing every live
        file). An append without files commits nothing and returns None.
        ``overwrite_partitions`` (a predicate on a partition's values) narrows an
        overwrite to the live files of the partitions it accepts. ``requirements`` are checked
        against each snapshot the commit would follow, before the messages' own."""
        changes, own = message_changes(messages, self.store.partition_types)
        if not any(isinstance(c, (AddFiles, SetIndexFiles)) for c in changes) and not overwrite:
            return None
        if overwrite:
            changes.insert(0, OverwritePartitions(overwrite_partitions))
        else:
            own.append(BucketsKeepSame(written_totals(messages, self.store.partition_types),
                                       tuple(self.store.schema.partition_keys)))
        return self.apply(PaimonCommit(OVERWRITE if overwrite else APPEND, tuple(changes),
                                       (*requirements, *own), properties))

    def apply(self, commit: PaimonCommit) -> Snapshot:
        """Commit ``commit`` as one snapshot: on each attempt its requirements are checked against
        the latest snapshot (one failing raises, and nothing of the attempt is written), its changes
        resolved on it, and the snapshot created; a lost race retries on the new latest snapshot."""
        kind = commit.kind
        check_owns_files(self.store.schema.options, self.store.table_path, f"commit a {kind} snapshot")
        co = self.store.options
        timeout = co.commit_timeout_ms
        policy = RetryPolicy(num_retries=co.commit_max_retries, min_wait_ms=co.commit_min_retry_wait_ms,
                             max_wait_ms=co.commit_max_retry_wait_ms,
                             total_timeout_ms=timeout if timeout is not None else 2**62)

        def attempt(_n: int) -> Snapshot:
            latest = self.store.snapshots.latest()
            commit.check(self.store, latest)
            done = commit.resolve(self.store, latest)
            return self._try_commit_once(latest, done.entries, kind, commit.properties,
                                         commit.full_manifest_compaction, done.index_files, done.changelog,
                                         done.vectors, done.statistics, (done.global_added, done.global_removed),
                                         done.next_row_id, done.rewrite)

        try:
            snapshot = policy.run(attempt, retry_on=(_LostRace,))
        except _LostRace:
            raise CommitFailedError(
                f"commit to {self.store.table_path} lost the race for a snapshot id "
                f"{co.commit_max_retries + 1} times; giving up") from None
        try:
            self._after_commit(snapshot)
        except Exception as e:      # the snapshot is visible: its files must stay, whatever the caller does
            raise AfterCommitError(f"snapshot {snapshot.id} of {self.store.table_path} is committed, but what "
                                   f"keeps other views of the table in step after a commit failed: {e}") from e
        return snapshot

    def _try_commit_once(self, latest: Optional[Snapshot], changes: list[mf.ManifestEntry], kind: str,
                         properties: Optional[dict[str, str]], full_manifest_compaction: "bool | ManifestSort" = False,
                         index_files: Optional[dict[BucketKey, IndexFile]] = None,
                         changelog: Sequence[mf.ManifestEntry] = (),
                         vectors: Optional[dict[BucketKey, Optional[IndexFile]]] = None,
                         statistics: Optional[str] = None,
                         global_indexes: tuple[Sequence[IndexRecord], Collection[str]] = ((), ()),
                         min_next_row_id: Optional[int] = None,
                         rewrite: Optional[Callable[[mf.ManifestEntry], mf.ManifestEntry]] = None) -> Snapshot:
        store = self.store
        co = store.options
        new_id = latest.id + 1 if latest is not None else 1
        created: list[str] = []      # manifests and lists written by this attempt
        snapshot = None
        try:
            # 2. compact the manifests of the latest snapshot
            before = store.data_manifests(latest)
            if rewrite is not None:         # entries changed in place: their manifests written again
                before = _rewritten(store, before, rewrite, created)
            after = None
            if isinstance(full_manifest_compaction, ManifestSort):     # sorted by a partition field
                after = sort_manifests(store, before, created, full_manifest_compaction)
            if after is None and full_manifest_compaction:
                after = compact_manifests(store, before, created, co.manifest_target_file_size, 1, 0)
            elif after is None:
                after = compact_manifests(store, before, created, co.manifest_target_file_size,
                                          co.manifest_merge_min_count, co.manifest_full_compaction_size)
            # 3. the base manifest list
            base_list, base_size = store.write_manifest_list(after)
            created.append(base_list)
            # row tracking: the new files' first row ids and sequence numbers (the snapshot's id)
            next_row_id = latest.next_row_id if latest is not None else None
            if row_tracking.enabled(store.schema.options):
                changes, next_row_id = row_tracking.assign(changes, new_id, next_row_id or 0)
            if min_next_row_id is not None:        # row ids renumbered past the latest snapshot's next one
                next_row_id = max(next_row_id or 0, min_next_row_id)
            # 4. new manifests and the delta manifest list
            delta_metas = store.write_manifests(changes, created)
            delta_list, delta_size = store.write_manifest_list(delta_metas)
            created.append(delta_list)
            # the changelog manifest list: this commit's changelog files
            changelog_list = changelog_size = None
            if changelog:
                changelog_list, changelog_size = store.write_manifest_list(store.write_manifests(list(changelog),
                                                                                                  created))
                created.append(changelog_list)
            # 5. the index manifest: the latest one with the new HASH index files, deletion vectors and
            # global index files swapped in
            index_manifest = latest.index_manifest if latest is not None else None
            # ... and no vector left marking a data file this commit removes
            dropped = dv.dropped_with_files(store, latest, changes, vectors or {})
            if dropped:
                vectors = {**(vectors or {}), **dropped}
            if index_files or vectors or global_indexes[0] or global_indexes[1]:
                index_manifest = write_index_manifest(store, index_manifest, index_files or {}, vectors,
                                                      *global_indexes)
                if index_manifest is not None:
                    created.append(index_manifest)
            # 6. the snapshot
            delta_count = sum(e.file.row_count if e.kind == mf.ADD else -e.file.row_count for e in changes)
            snapshot = Snapshot(
                id=new_id, schema_id=store.schema.id,
                base_manifest_list=base_list, delta_manifest_list=delta_list,
                base_manifest_list_size=base_size, delta_manifest_list_size=delta_size,
                changelog_manifest_list=changelog_list, changelog_manifest_list_size=changelog_size,
                index_manifest=index_manifest,
                commit_user=self.commit_user, commit_identifier=self.commit_identifier,
                commit_kind=kind, time_millis=int(time.time() * 1000), log_offsets={},
                total_record_count=(latest.total_record_count if latest is not None else 0) + delta_count,
                delta_record_count=delta_count,
                changelog_record_count=sum(e.file.row_count for e in changelog),
                watermark=NO_WATERMARK, properties=properties or None,
                statistics=statistics if statistics is not None else self._inherited_statistics(latest),
                next_row_id=next_row_id,
            )
            won = store.snapshots.try_commit(snapshot)
        except BaseException:
            if snapshot is not None and self._is_visible(snapshot):
                return snapshot  # the failure came after the snapshot file was in place
            self._clean_up(created)
            raise
        if not won:
            self._clean_up(created)
            raise _LostRace()
        return snapshot

    def _inherited_statistics(self, latest: Optional[Snapshot]) -> Optional[str]:
        """The latest snapshot's statistics file, while they describe the current schema (Paimon
        drops them on a schema change)."""
        if latest is None or not latest.statistics:
            return None
        try:
            stats = read_statistics(self.store.io, self.store.table_path, latest.statistics)
        except Exception:       # unreadable statistics are not carried on
            log.warning("statistics %s of snapshot %d unreadable; not inherited", latest.statistics, latest.id)
            return None
        return latest.statistics if stats.schema_id == self.store.schema.id else None

    def commit_statistics(self, stats: Statistics) -> Snapshot:
        """Write ``stats`` to a statistics file and commit an ANALYZE snapshot (no file changes)
        that names it."""
        name = write_statistics(self.store.io, self.store.table_path, stats)
        try:
            return self.apply(PaimonCommit(ANALYZE, (SetStatistics(name),)))
        except BaseException:
            self.store.io.delete(statistics_path(self.store.table_path, name))
            raise

    def _is_visible(self, snapshot: Snapshot) -> bool:
        try:
            data = self.store.io.read_bytes(self.store.snapshots.snapshot_path(snapshot.id))
        except Exception:
            return False
        return data == snapshot.to_json().encode("utf-8")

    def _clean_up(self, created: list[str]) -> None:
        for name in created:
            try:
                self.store.delete_manifest_file(name)
            except Exception:  # pragma: no cover - best effort; the names are unreferenced
                log.warning("could not delete %s after a failed commit", name, exc_info=True)

    def _after_commit(self, snapshot: Snapshot) -> None:
        """Hints, automatic tags (``tag_auto``), snapshot expiration, then the hooks of ``table_hooks``
        (the Iceberg view). None can undo the commit: failures of hints, tags and expiration are
        logged (CALL sys.trigger_tag_automatic_creation makes missing tags and raises what stops it);
        a hook's failure is raised by ``apply`` as ``AfterCommitError``, which no cleanup of the
        commit's files acts on."""
        snaps = self.store.snapshots
        try:
            snaps.commit_latest_hint(snapshot.id)
            earliest = snaps.earliest_id()   # lists the directory if the hint is off
            if earliest is not None and snaps.read_hint(EARLIEST) != earliest:
                snaps.commit_earliest_hint(earliest)
        except Exception:
            log.warning("could not write snapshot hints for snapshot %d", snapshot.id, exc_info=True)
        if not self.store.options.write_only:
            try:        # Paimon's order: automatic tags and tag expiry, then consumers and snapshots
                tag_auto.run(self.store)
            except Exception:
                log.warning("automatic tags after snapshot %d of %s were not made (CALL "
                            "sys.trigger_tag_automatic_creation makes them, and says why not)", snapshot.id,
                            self.store.table_path, exc_info=True)
        try:
            if not self.store.options.write_only:
                # consumers first: an expired consumer no longer holds snapshots back
                expiration = self.store.schema.options.get("consumer.expiration-time")
                if expiration:
                    expire_consumers(self.store.io, self.store.meta_path, parse_duration_ms(expiration))
                expire_snapshots(self.store)
        except Exception:
            log.warning("snapshot expiration after snapshot %d failed", snapshot.id, exc_info=True)
        # what is kept in step with the snapshots (the Iceberg view): its failure is the caller's to see
        table_hooks.changed(self.store)



def _rewritten(store: FileStore, metas: Sequence[mf.ManifestFileMeta], rewrite: Callable[[mf.ManifestEntry], mf.ManifestEntry],
               created: list[str]) -> list[mf.ManifestFileMeta]:
    """``metas`` with each manifest that has an entry ``rewrite`` changes written again with the new entries
    (in order), in its place; the others as they are."""
    out: list[mf.ManifestFileMeta] = []
    for m in metas:
        entries = store.read_manifest(m.file_name, m.file_size)
        new = [rewrite(e) for e in entries]
        out.extend([m] if all(a is b for a, b in zip(entries, new)) else store.write_manifests(new, created))
    return out

__all__ = ["CommitMessage", "FileStoreCommit", "compact_manifests", "try_full_compaction",
           "minor_compaction"]
