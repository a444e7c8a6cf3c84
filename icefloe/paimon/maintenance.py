"""Maintenance of Paimon append tables: compaction, manifest rewrite, rollback.

* ``compact``: in every (partition, bucket), data files smaller than the target
  file size are read and rewritten as files of about the target size. The commit is
  a ``COMPACT`` snapshot whose delta manifests DELETE the old files and ADD the new
  ones (file source ``COMPACT``); the table's rows do not change. In fixed-bucket
  tables the rows keep their order and sequence numbers. A concurrent commit that
  removed one of the files being compacted (an overwrite) makes the compaction fail
  with :class:`CommitConflictError`, and its new files are deleted.
* ``rewrite_manifests``: a ``COMPACT`` snapshot with no file changes whose base
  manifest list is the latest snapshot's manifests fully merged (DELETE entries
  applied) into manifests of ``manifest.target-file-size``.
* ``rollback_to``: Paimon's rollback. Snapshots after the target are deleted,
  newest first (an interrupted rollback leaves a table at a snapshot in between, each
  one whole), then the ``LATEST`` hint, then the data files, manifests and manifest
  lists only those snapshots added.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from icefloe.core.progress import track
from icefloe.errors import CommitConflictError, NoSuchSnapshotError
from icefloe.paimon import manifest as mf
from icefloe.paimon.data_file import FILE_SOURCE_COMPACT, DataFileNamer
from icefloe.paimon.snapshot import COMPACT, Snapshot


# --------------------------------------------------------------------------- compaction
def compact(table, where=None, target_file_size: Optional[int] = None) -> Optional[Snapshot]:
    """Rewrite small data files (of the files a read with ``where`` would use); None if
    no (partition, bucket) has two or more small files."""
    from icefloe.paimon.commit import FileStoreCommit
    from icefloe.paimon.table import _project_by_name, _read_data_file
    from icefloe.paimon.types import to_arrow_schema
    from icefloe.paimon.writer import _write_one

    table.refresh()
    table._check_writable()
    store, schema = table.store, table.table_schema
    co = schema.core_options
    target = int(target_file_size) if target_file_size is not None else co.target_file_size
    base = table.current_snapshot()
    if base is None:
        return None
    groups: dict = {}
    for e in table.plan(where):
        if e.file.file_size < target:
            groups.setdefault((e.partition.to_bytes(), e.bucket), []).append(e)
    groups = {k: sorted(v, key=lambda e: (e.file.min_sequence_number, e.file.file_name))
              for k, v in groups.items() if len(v) > 1}
    if not groups:
        return None
    arrow_schema = to_arrow_schema(schema.fields, with_ids=False)
    namer = DataFileNamer(co.data_file_prefix, co.file_format)
    written: list = []
    removed, added = [], []
    try:
        for (_part, bucket), inputs in track(list(groups.items()), "compacting buckets"):
            import pyarrow as pa

            first = inputs[0]
            data = pa.concat_tables([_project_by_name(_read_data_file(e.file.file_path), arrow_schema)
                                     for e in inputs])
            directory = store.bucket_dir(store.partition_values(first.partition), bucket)
            per_file = max(1, int(data.num_rows * target / max(data.nbytes, 1)))
            seq = min(e.file.min_sequence_number for e in inputs)
            for start in range(0, data.num_rows, per_file):
                chunk = data.slice(start, per_file)
                meta = replace(_write_one(store, schema, chunk, directory, namer, written),
                               file_source=FILE_SOURCE_COMPACT)
                if first.total_buckets > 0:       # fixed buckets: rows keep their sequence numbers
                    meta = meta.with_sequence_numbers(seq)
                    seq += chunk.num_rows
                added.append(mf.ManifestEntry(mf.ADD, first.partition, bucket, first.total_buckets, meta))
            removed.extend(mf.ManifestEntry(mf.DELETE, e.partition, e.bucket, e.total_buckets, e.file)
                           for e in inputs)

        def changes(latest: Optional[Snapshot]) -> list:
            live = {e.identifier() for e in store.live_entries(latest)}
            for e in removed:
                if e.identifier() not in live:
                    raise CommitConflictError(
                        f"compaction of {table.name} conflicts with a commit after snapshot {base.id}: "
                        f"data file {e.file.file_name} it rewrites is no longer live")
            return removed + added

        return FileStoreCommit(store, table.commit_user).commit_changes(changes, COMPACT)
    except BaseException:
        for path in written:
            store.io.delete(path)
        raise


# --------------------------------------------------------------------------- manifests
def rewrite_manifests(table) -> Optional[Snapshot]:
    """Merge every manifest of the latest snapshot (a COMPACT snapshot without file changes)."""
    from icefloe.paimon.commit import FileStoreCommit

    table.refresh()
    if table.current_snapshot() is None:
        return None
    return FileStoreCommit(table.store, table.commit_user).commit_changes(
        lambda latest: [], COMPACT, full_manifest_compaction=True)


# --------------------------------------------------------------------------- rollback
def rollback_to(table, snapshot_id: int) -> Snapshot:
    """Make ``snapshot_id`` the latest snapshot again, deleting every later one."""
    table.refresh()
    store = table.store
    snaps = store.snapshots
    target = snaps.snapshot(int(snapshot_id))       # NoSuchSnapshotError names the table
    latest = snaps.latest_id()
    if latest is None or latest <= target.id:
        return target
    keep_paths = {store.data_file_path(e) for e in store.live_entries(target)}
    keep_manifests = {m.file_name for m in store.data_manifests(target)}
    keep_lists = {target.base_manifest_list, target.delta_manifest_list}
    later = []
    for sid in range(target.id + 1, latest + 1):
        try:
            later.append(snaps.snapshot(sid))
        except NoSuchSnapshotError:
            continue
    data_files: list = []
    metadata_files: list = []
    for s in later:
        for lst in (s.base_manifest_list, s.delta_manifest_list):
            if lst in keep_lists:
                continue
            try:
                metas = store.read_manifest_list(lst)
            except Exception:
                metas = []
            for m in metas:
                if m.file_name in keep_manifests:
                    continue
                metadata_files.append(m.file_name)
                if lst == s.delta_manifest_list:
                    data_files.extend(p for p in (store.data_file_path(e) for e in
                                                  store.read_manifest(m.file_name, m.file_size)
                                                  if e.kind == mf.ADD) if p not in keep_paths)
            metadata_files.append(lst)
    for s in track(list(reversed(later)), "deleting snapshots"):
        snaps.delete_snapshot(s.id)
    snaps.commit_latest_hint(target.id)
    for path in track(list(dict.fromkeys(data_files)), "deleting data files"):
        store.io.delete(path)
    for name in track(list(dict.fromkeys(metadata_files)), "deleting manifests"):
        store.delete_manifest_file(name)
    return target
