# pyright: strict
"""Maintenance of Paimon tables: compaction, manifest rewrite, rollback.

* ``compact``: primary-key tables get a full compaction (``kv_compact``). Append tables:
  in every (partition, bucket), data files smaller than the target
  file size are read and rewritten as files of about the target size. The commit is
  a ``COMPACT`` snapshot whose delta manifests DELETE the old files and ADD the new
  ones (file source ``COMPACT``); the table's rows do not change. In fixed-bucket
  tables the rows keep their order and sequence numbers; in a row-tracking table every row
  keeps its ``_ROW_ID`` and ``_SEQUENCE_NUMBER``, written as columns of the new files. A concurrent commit that
  removed one of the files being compacted (an overwrite) makes the compaction fail
  with :class:`CommitConflictError`, and its new files are deleted.
* ``rewrite_manifests``: a ``COMPACT`` snapshot with no file changes whose base
  manifest list is the latest snapshot's manifests fully merged (DELETE entries
  applied) into manifests of ``manifest.target-file-size``.
* ``rollback_to``: Paimon's rollback. Snapshots after the target are deleted,
  newest first (an interrupted rollback leaves a table at a snapshot in between, each
  one whole), then the ``LATEST`` hint, then the data files, manifests and manifest
  lists only those snapshots added. As in Paimon, tags of snapshots after the target
  are deleted with them; the files of the tags that stay (the target's and older ones)
  are kept.
* ``rollback_to_tag``: rollback to a tag's snapshot. If that snapshot has expired, its
  file is written again from the tag (as Paimon does) and becomes the only snapshot:
  every other snapshot is later. A snapshot id that only a tag still has rolls back to
  that tag.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Collection, Iterable, Iterator, Optional, Sequence

from icefloe.core.io import FileIO, staged_files
from icefloe.core.progress import track
from icefloe.paimon.arrow_read import read_data_file
from icefloe.paimon.binary_row import BinaryRow
from icefloe.errors import CommitConflictError, NoSuchSnapshotError, NotSupportedError
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon import manifest as mf
from icefloe.paimon import row_tracking
from icefloe.paimon.data_file import FILE_SOURCE_COMPACT, DataFileMeta, DataFileNamer
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.snapshot import COMPACT, Snapshot
from icefloe.paimon import changelog as cl
from icefloe.paimon.expire import unused_index_files
from icefloe.core.io import FileAlreadyExistsError
from icefloe.paimon.commit import FileStoreCommit
from icefloe.paimon.commit_changes import AddFiles, DeleteFiles, FilesLive, PaimonCommit, VectorsUnchanged
from icefloe.paimon.ownership import check_owns_files
from icefloe.paimon.kv_compact import CompactTable, compact_table
from icefloe.paimon.manifest_sort import ManifestSort
from icefloe.paimon.schema import TableSchema, evolve_arrow
from icefloe.paimon.store_table import StoreTable
from icefloe.paimon.tag import Tag, TagError, TagManager, data_paths, reach
from icefloe.paimon.types import DataField
from icefloe.paimon.writer import write_one


# --------------------------------------------------------------------------- compaction
# rewrites groups of files as files of a target size, yielding each group's new entries in order
Rewrite = Callable[[list["AppendGroup"], int], Iterable[list[mf.ManifestEntry]]]


def compact(table: CompactTable, where: Any = None, target_file_size: Optional[int] = None,
            rewrite: Optional[Rewrite] = None, buckets: Optional[Collection[tuple[bytes, int]]] = None,
            minor: bool = False) -> Optional[Snapshot]:
    """Rewrite small data files (of the files a read with ``where`` would use, of the
    ``buckets``, (partition bytes, bucket) pairs, if given), and every file with a deletion vector
    (its marked rows left out); None if no (partition, bucket) has two or more small files or a file
    with a vector. ``minor`` (a fixed-bucket append table): in each bucket, the files a
    Paimon writer's compaction picks (``pick_minor``) instead. ``rewrite(groups, target)`` runs
    ``rewrite_group`` over each of a list of ``AppendGroup`` and yields their answers in order: by
    default here, one after another as they are taken; icefloe's Spark layer runs them in Spark
    tasks. The groups answered are reported as progress (``compacting buckets``)."""
    table.refresh()
    table.check_writable()
    store, schema = table.store, table.table_schema
    if row_tracking.evolution_enabled(schema.options):
        raise NotSupportedError("compaction", table.name, "paimon",
                                "a data-evolution table (data-evolution.enabled) is compacted by Paimon's own "
                                "data-evolution compaction, which merges each row-id range's files of some columns "
                                "into one file keeping the row ids; icefloe's compaction rewrites whole files and "
                                "does not (compact the table with Paimon)")
    if schema.primary_keys:             # merging records into the highest LSM level
        return compact_table(table, where, target_file_size)
    co = schema.core_options
    target = int(target_file_size) if target_file_size is not None else co.target_file_size
    base = table.current_snapshot()
    if base is None:
        return None
    minor = minor and schema.num_buckets > 0        # bucket-unaware: Paimon's coordinator picks small files either way
    # deletion vectors: applied as the files are rewritten, dropped with them (the commit), and
    # the buckets' vectors required unchanged since they were read; as Paimon's full compaction, a
    # file with a vector is rewritten whatever its size, alone if need be
    vectors = dv.bucket_vectors(store, base)
    marks = dv.file_vectors(store, base) if vectors else {}
    read_vectors: dict[tuple[bytes, int], Optional[str]] = {}
    by_bucket: dict[tuple[bytes, int], list[mf.ManifestEntry]] = {}
    for e in table.plan(where):
        key = (e.partition.to_bytes(), e.bucket)
        if (minor or e.file.file_size < target or e.file.file_name in marks) and (buckets is None or key in buckets):
            by_bucket.setdefault(key, []).append(e)
    groups: list[AppendGroup] = []
    removed: list[mf.ManifestEntry] = []
    for inputs in by_bucket.values():
        inputs = sorted(inputs, key=lambda e: (e.file.min_sequence_number, e.file.file_name))
        if minor:
            inputs = pick_minor(inputs, int(schema.options.get(COMPACTION_MIN_FILE_NUM, 5)), target)
        if len(inputs) > 1 or (inputs and not minor and inputs[0].file.file_name in marks):
            first = inputs[0]
            groups.append(AppendGroup(
                [(e.file.path, table.schema_by_id(e.file.schema_id).fields) for e in inputs],
                store.bucket_dir(store.partition_values(first.partition), first.bucket),
                first.partition, first.bucket, first.total_buckets,
                min(e.file.min_sequence_number for e in inputs),
                [e.file for e in inputs] if row_tracking.enabled(schema.options) else None,
                [marks.get(e.file.file_name) for e in inputs] if marks else None))
            removed.extend(inputs)
            key = (first.partition.to_bytes(), first.bucket)
            read_vectors[key] = vectors[key].signature if key in vectors else None
    if not groups:
        return None
    if rewrite is None:
        def one_by_one(todo: list[AppendGroup], size: int) -> Iterator[list[mf.ManifestEntry]]:
            return (rewrite_group(store.io, schema, g, size) for g in todo)
        rewrite = one_by_one

    with staged_files(store.io, path=lambda e: e.file.file_path) as added:
        for got in track(rewrite(groups, target), "compacting buckets", total=len(groups)):
            added.extend(got)

        inputs = tuple(removed)
        return FileStoreCommit(store, table.commit_user).apply(PaimonCommit(
            COMPACT, (DeleteFiles(inputs), AddFiles(tuple(added))),
            (FilesLive(inputs, f"compaction of {table.name}", base.id),
             VectorsUnchanged(read_vectors if vectors else {}, f"compaction of {table.name}", base.id))))


COMPACTION_MIN_FILE_NUM = "compaction.min.file-num"


def pick_minor(files: list[mf.ManifestEntry], min_file_num: int, target: int) -> list[mf.ManifestEntry]:
    """The files (in sequence order) a fixed-bucket append writer's own compaction merges: the
    first run of ``min_file_num`` consecutive files, the run's oldest file dropped whenever the run
    reaches twice the target size (so big files pass by); none when no run gets there."""
    run: list[mf.ManifestEntry] = []
    size = 0
    for e in files:
        run.append(e)
        size += e.file.file_size
        if len(run) >= min_file_num:
            return run
        if size >= 2 * target:
            size -= run.pop(0).file.file_size
    return []


@dataclass
class AppendGroup:
    """The small files of one (partition, bucket) of an append table, to be rewritten together:
    each file's path and the fields of the schema it was written with, in sequence order."""
    files: list[tuple[str, list[DataField]]]
    directory: str
    partition: BinaryRow
    bucket: int
    total_buckets: int
    first_sequence: int
    # a row-tracking table's: the files' metadata, whose row ids and sequence numbers the rows keep
    tracked: Optional[list[DataFileMeta]] = None
    # each file's deletion vector (index file path, offset, size), or None: its marked rows are not rewritten
    vectors: Optional[list[Optional[tuple[str, int, int]]]] = None


def rewrite_group(io: FileIO, schema: TableSchema, group: AppendGroup, target: int) -> list[mf.ManifestEntry]:
    """The ADD entries of ``group``'s rows rewritten as files of about ``target`` bytes (rows in
    order; in a fixed-bucket table keeping their sequence numbers). Runs where its rows are
    (a Spark task): a failure deletes the files it wrote."""
    import pyarrow as pa
    import pyarrow.compute as pc

    co = schema.core_options
    namer = DataFileNamer(co.data_file_prefix, co.file_format)
    added: list[mf.ManifestEntry] = []
    with staged_files(io) as written:
        # files written under older schemas are matched to the current one by field id
        marks = group.vectors or [None] * len(group.files)

        def unmarked(i: int, rows: pa.Table) -> pa.Table:     # the rows a file's deletion vector keeps
            where = marks[i]
            return rows if where is None else dv.without_positions(rows, dv.read_vector(io, *where))
        if group.tracked is not None:
            data = pa.concat_tables([unmarked(i, _with_row_tracking(read_data_file(path, io), fields, schema.fields,
                                                                    meta))
                                     for i, ((path, fields), meta) in enumerate(zip(group.files, group.tracked))])
        else:
            data = pa.concat_tables([unmarked(i, evolve_arrow(read_data_file(path, io), fields, schema.fields))
                                     for i, (path, fields) in enumerate(group.files)])
        per_file = max(1, int(data.num_rows * target / max(data.nbytes, 1)))
        seq = group.first_sequence
        for start in range(0, data.num_rows, per_file):
            chunk = data.slice(start, per_file)
            meta = replace(write_one(io, schema, chunk, group.directory, namer, written), file_source=FILE_SOURCE_COMPACT)
            if group.total_buckets > 0:       # fixed buckets: rows keep their sequence numbers
                meta = meta.with_sequence_numbers(seq)
                seq += chunk.num_rows
            if group.tracked is not None:     # the rows' ids and sequence numbers go with them
                seqs = chunk.column(row_tracking.SEQUENCE_NUMBER)
                meta = replace(meta, min_sequence_number=pc.min(seqs).as_py(), max_sequence_number=pc.max(seqs).as_py(),
                               write_cols=tuple(chunk.column_names))
            added.append(mf.ManifestEntry(mf.ADD, group.partition, group.bucket, group.total_buckets, meta))
    return added


def _with_row_tracking(data: Any, file_fields: Sequence[DataField], fields: Sequence[DataField],
                       meta: DataFileMeta) -> Any:
    """A data file's rows as ``fields``, then their ``_ROW_ID`` and ``_SEQUENCE_NUMBER``."""
    import pyarrow as pa

    tracked = evolve_arrow(data, list(file_fields) + list(row_tracking.FIELDS), list(fields) + list(row_tracking.FIELDS))
    row_id, seq = row_tracking.tracked_columns(tracked, meta)
    own = tracked.select(list(range(len(fields))))
    return own.append_column(pa.field(row_tracking.ROW_ID, pa.int64(), False), row_id) \
        .append_column(pa.field(row_tracking.SEQUENCE_NUMBER, pa.int64(), False), seq)


# --------------------------------------------------------------------------- manifests
def rewrite_manifests(table: StoreTable, sort: Optional[ManifestSort] = None) -> Optional[Snapshot]:
    """Merge every manifest of the latest snapshot (a COMPACT snapshot without file changes);
    with ``sort``, their entries sorted by a partition field (``manifest_sort``)."""
    table.refresh()
    if table.current_snapshot() is None:
        return None
    return FileStoreCommit(table.store, table.commit_user).apply(
        PaimonCommit(COMPACT, full_manifest_compaction=sort or True))


# --------------------------------------------------------------------------- rollback
def rollback_to(table: StoreTable, snapshot_id: int) -> Snapshot:
    """Make ``snapshot_id`` the latest snapshot again, deleting every later one (and the
    tags of later snapshots). An expired snapshot some tag still holds is restored from it."""
    table.refresh()
    store = table.store
    try:
        target = store.snapshots.snapshot(int(snapshot_id))
    except NoSuchSnapshotError:
        for t in TagManager(store.io, store.meta_path).tags():
            if t.snapshot.id == int(snapshot_id):
                return rollback_to_tag(table, t.name)
        raise                                        # names the table's snapshot directory
    return _rollback(store, target)


def rollback_to_tag(table: StoreTable, name: str) -> Snapshot:
    """Make the snapshot of tag ``name`` the latest snapshot again (see ``rollback_to``)."""
    table.refresh()
    store = table.store
    snaps = store.snapshots
    tag = TagManager(store.io, store.meta_path).tag(name)      # NoSuchTagError
    try:
        snap = snaps.snapshot(tag.snapshot.id)
    except NoSuchSnapshotError:
        snap = None
    if snap is not None:
        if not tag.same_snapshot(snap):
            raise TagError(f"tag {name!r} of {store.table_path} names snapshot {tag.snapshot.id} as it was "
                           "before a rollback; the snapshot of that id now is another one (nothing was changed)")
        return _rollback(store, snap)
    earliest = snaps.earliest_id()
    if earliest is not None and tag.snapshot.id >= earliest:
        raise TagError(f"snapshot {tag.snapshot.id} of tag {name!r} is missing from {snaps.snapshot_dir} although "
                       f"snapshots from {earliest} on are retained; icefloe does not roll back over the gap "
                       "(nothing was changed)")
    return _rollback(store, tag.snapshot, restore=tag)


def _snapshot_json_of_tag(tag: Tag) -> bytes:
    """The tag file without the tag-only fields: the snapshot file it was copied from."""
    import json

    doc = json.loads(tag.raw.decode("utf-8"))
    if "tagCreateTime" not in doc and "tagTimeRetained" not in doc:
        return tag.raw
    doc.pop("tagCreateTime", None)
    doc.pop("tagTimeRetained", None)
    return json.dumps(doc, indent=2, separators=(",", " : "), ensure_ascii=False).encode("utf-8")


def _rollback(store: FileStore, target: Snapshot, restore: Optional[Tag] = None) -> Snapshot:
    """Roll back to ``target``; ``restore`` is the tag to write an expired target back from."""
    check_owns_files(store.schema.options, store.table_path, "roll back")
    snaps = store.snapshots
    latest, earliest = snaps.latest_id(), snaps.earliest_id()
    if restore is None and (latest is None or latest <= target.id):
        return target
    tag_manager = TagManager(store.io, store.meta_path)
    tags = tag_manager.tags()
    staying = [t for t in tags if t.snapshot.id <= target.id]
    unique = {(s.id, s.base_manifest_list, s.delta_manifest_list): s
              for s in [target] + [t.snapshot for t in staying]}
    keep = reach(store, unique.values(), description="reading the target and its tags")
    first = target.id + 1 if restore is None else earliest
    later: list[Snapshot] = []
    for sid in range(first or target.id + 1, (latest or 0) + 1):
        try:
            later.append(snaps.snapshot(sid))
        except NoSuchSnapshotError:
            continue
    data_files: list[str] = []
    metadata_files: list[str] = []
    for s in later:
        for lst in (s.base_manifest_list, s.delta_manifest_list):
            if lst in keep.lists:
                continue
            try:
                metas = store.read_manifest_list(lst)
            except Exception:
                metas = []
            for m in metas:
                if m.file_name in keep.manifests:
                    continue
                metadata_files.append(m.file_name)
                if lst == s.delta_manifest_list:
                    # (with their extra files: the index a rewrite_file_index gave a file that stays)
                    data_files.extend(p for e in store.read_manifest(m.file_name, m.file_size)
                                      if e.kind == mf.ADD for p in data_paths(store, e) if p not in keep.data)
            metadata_files.append(lst)
    # later snapshots' changelogs, and index files (HASH, deletion vectors) only they name
    for s in later:
        files, lists = cl.changelog_files_of(store, s)
        data_files.extend(files)
        metadata_files.extend(lists)
    files, manifests = unused_index_files(store, later, [target] + [t.snapshot for t in staying])
    data_files.extend(files)
    metadata_files.extend(manifests)
    # Snapshots whose files no later snapshot's delta lists: the earliest when the target is
    # restored from a tag, and tags of expired snapshots after the target.
    whole = [t.snapshot for t in tags if t.snapshot.id > target.id and earliest is not None
             and t.snapshot.id < earliest]
    if restore is not None and later:
        whole.append(later[0])
    if whole:
        doomed = reach(store, whole, description="reading deleted tags")
        data_files.extend(p for p in sorted(doomed.data) if p not in keep.data)
        metadata_files.extend(n for n in sorted(doomed.manifests | doomed.lists)
                              if n not in keep.manifests and n not in keep.lists)
    if restore is not None:
        try:
            store.io.write_bytes(snaps.snapshot_path(target.id), _snapshot_json_of_tag(restore), overwrite=False)
        except FileAlreadyExistsError:
            raise CommitConflictError(f"snapshot {target.id} of {store.table_path} was written while rolling back "
                                      f"to tag {restore.name!r}; nothing was rolled back") from None
    for s in track(list(reversed(later)), "deleting snapshots"):
        snaps.delete_snapshot(s.id)
    snaps.commit_latest_hint(target.id)
    if restore is not None:
        snaps.commit_earliest_hint(target.id)
    # as Paimon: the tags of later snapshots go (also one created meanwhile); one created
    # meanwhile on the target or before keeps its files
    seen = {(t.name, t.raw) for t in tags}
    late_staying: list[Snapshot] = []
    for t in tag_manager.tags():
        if t.snapshot.id > target.id:
            tag_manager.delete_file(t.name)
        elif (t.name, t.raw) not in seen:
            late_staying.append(t.snapshot)
    if late_staying:
        more = reach(store, late_staying)
        data_files = [p for p in data_files if p not in more.data]
        metadata_files = [n for n in metadata_files if n not in more.manifests and n not in more.lists]
    for path in track(list(dict.fromkeys(data_files)), "deleting data files"):
        store.io.delete(path)
    for name in track(list(dict.fromkeys(metadata_files)), "deleting manifests"):
        store.delete_manifest_file(name)
    return target
