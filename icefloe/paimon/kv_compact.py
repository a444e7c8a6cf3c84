# pyright: strict
"""Full compaction of primary-key tables: every file of a bucket merged into the highest LSM level.

A primary-key table's writes add level-0 files, one sorted run each; a read merges all runs
of a bucket. Full compaction merges, per (partition, bucket), all its live files with the
table's merge engine (``merge.iter_merged_bucket``, streaming through the key-sorted files)
and writes the result as files at the highest level (``num-levels`` - 1; by default
``num-sorted-run.compaction-trigger`` = 5), each key once with its newest sequence number.
Records that delete a key are dropped: nothing older is left for them to delete. The commit is
a ``COMPACT`` snapshot that DELETEs the inputs and ADDs the outputs; it fails with
:class:`CommitConflictError` if a commit after the base removed one of the inputs (a
concurrent compaction or overwrite). Upserts committed meanwhile stay: their files are newer
runs with higher sequence numbers. The table's rows do not change.

``plan`` and ``commit`` run on the driver; ``compact_bucket`` runs wherever it is called
(one Spark task per bucket for ``PaimonTable.rewrite_data_files``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Collection, Iterable, Mapping, Optional, Protocol, Sequence, Union

from icefloe.core.io import staged_files
from icefloe.errors import AfterCommitError
from icefloe.paimon import changelog as cl
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon import manifest as mf
from icefloe.paimon import merge as mg
from icefloe.paimon.binary_row import BinaryRow, encode_row
from icefloe.paimon.bucket_files import BucketFiles
from icefloe.paimon.commit import FileStoreCommit
from icefloe.paimon.commit_changes import (
    AddChangelog, AddFiles, DeleteFiles, FilesLive, PaimonCommit, SetDeletionVectors, VectorsUnchanged,
)
from icefloe.paimon.data_file import CommitMessage, DataFileNamer
from icefloe.paimon.dv_compact import compact_bucket_dv
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.kv_writer import write_merged_file
from icefloe.paimon.snapshot import COMPACT, Snapshot
from icefloe.paimon.store_table import StoreTable

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.core.io import FileIO
    from icefloe.core.types import IcebergType
    from icefloe.paimon.data_file import DataFileMeta
    from icefloe.paimon.dynamic_bucket import IndexFile
    from icefloe.paimon.schema import TableSchema
    from icefloe.paimon.types import DataField


class CompactTable(StoreTable, Protocol):
    """What compaction reads of a Paimon table beyond ``StoreTable``."""

    @property
    def io(self) -> FileIO: ...
    @property
    def location(self) -> str: ...

    def check_mergeable(self, schema: TableSchema) -> None: ...
    def snapshots(self) -> list[Snapshot]: ...


PartBucket = tuple[bytes, int]                          # (partition bytes, bucket)
FileRef = tuple[str, Sequence["DataField"], str]        # (path, fields written with, file name)
KeyFile = tuple[str, Sequence["DataField"]]             # (path, fields written with)
# what ``compact_bucket`` takes as ``vectors``: (files left out, the bucket's vectors, the merged
# files' levels, whether the table's changelog is made by lookup)
VectorsSpec = tuple[list[FileRef], Optional["dv.BucketVectors"], list[int], bool]
VectorsOut = tuple[Optional["IndexFile"], bool]         # (the bucket's new vector index file, changed)
# a compacted bucket: (task, new file metas[, changelog file metas[, vectors out]])
Done = Union[tuple["BucketCompaction", Sequence["DataFileMeta"]],
             tuple["BucketCompaction", Sequence["DataFileMeta"], Sequence["DataFileMeta"]],
             tuple["BucketCompaction", Sequence["DataFileMeta"], Sequence["DataFileMeta"], Sequence[VectorsOut]]]


def max_level(options: Mapping[str, Any]) -> int:
    """The highest LSM level: ``num-levels`` - 1, by default the compaction trigger."""
    if options.get("num-levels"):
        return max(1, int(options["num-levels"]) - 1)
    return max(1, int(options.get("num-sorted-run.compaction-trigger", 5)))


@dataclass
class BucketCompaction:
    """One (partition, bucket) to compact: the live entries it merges, oldest first; ``level``
    the LSM level its output goes to (None: the highest); ``drop_deletes`` whether records that
    delete a key may go (nothing older than the merged runs is left in the bucket)."""
    partition: BinaryRow
    bucket: int
    total_buckets: int
    entries: list[mf.ManifestEntry]
    level: Optional[int] = None
    drop_deletes: bool = True
    changelog: Optional[cl.CompactionChangelog] = None   # the changelog this compaction produces
    # deletion vectors: the bucket's files left out ((path, fields, file name)) and its vectors
    vectors_mode: bool = False
    exclude: list[KeyFile] = field(default_factory=list[KeyFile])       # first-row: (path, fields) whose keys the output drops
    lookup_changelog: bool = False
    others: list[FileRef] = field(default_factory=list[FileRef])
    vectors: Optional[dv.BucketVectors] = None

    def vectors_spec(self) -> Optional[VectorsSpec]:
        """What ``compact_bucket`` takes as ``vectors`` (None without deletion vectors)."""
        if not self.vectors_mode:
            return None
        return (self.others, self.vectors, [e.file.level for e in self.entries], self.lookup_changelog)

    def with_vectors(self, table: StoreTable, bucket_entries: Sequence[mf.ManifestEntry],
                     snapshot: Optional[Snapshot]) -> "BucketCompaction":
        """A table with deletion vectors: what the compaction needs to look keys up and mark them.
        A first-row table without vectors: the files left out, whose keys the merged runs drop
        (the first row of a key is the one already above level 0, so each key stays once there,
        as Paimon's readers expect of first-row tables)."""
        options = table.table_schema.options
        if not dv.enabled(options):
            if mg.merge_engine(options) == "first-row":
                picked = {e.file.file_name for e in self.entries}
                self.exclude = [(e.file.path, table.schema_by_id(e.file.schema_id).fields)
                                for e in bucket_entries if e.file.file_name not in picked and e.file.level > 0]
            return self
        picked = {e.file.file_name for e in self.entries}
        self.vectors_mode = True
        self.drop_deletes = True
        self.lookup_changelog = cl.producer(table.table_schema) == cl.LOOKUP
        self.changelog = None          # computed inside the compaction (dv_compact)
        self.others = [(e.file.path, table.schema_by_id(e.file.schema_id).fields, e.file.file_name)
                       for e in bucket_entries if e.file.file_name not in picked]
        self.vectors = dv.bucket_vectors(table.store, snapshot).get((self.partition.to_bytes(), self.bucket))
        return self

    def changelog_for(self, table: StoreTable, bucket_entries: Sequence[mf.ManifestEntry]) -> "BucketCompaction":
        """Attach the changelog the table's producer makes of this compaction (lookup: always;
        full-compaction: when it merges every run into the highest level)."""
        mode = cl.producer(table.table_schema)
        top = max_level(table.table_schema.options)
        if mode == cl.LOOKUP or (mode == cl.FULL_COMPACTION and (self.level is None or self.level == top)):
            self.changelog = cl.compaction_changelog(
                mode, bucket_entries, lambda e: table.schema_by_id(e.file.schema_id).fields, top)
        return self

    def paths(self) -> list[str]:
        return [e.file.path for e in self.entries]

    def levels(self) -> list[int]:
        return [e.file.level for e in self.entries]


def plan(table: StoreTable, where: Any = None, buckets: Optional[Iterable[PartBucket]] = None) -> list[BucketCompaction]:
    """The buckets a full compaction rewrites: those with more than one live file, or one
    not yet at the highest level or holding delete records. ``where`` chooses buckets (any
    bucket with a file it reads), and so do ``buckets`` ((partition bytes, bucket) pairs); a
    chosen bucket is compacted whole."""
    top = max_level(table.table_schema.options)
    every = table.plan() if buckets is None or where is not None else bucket_entries(table, buckets)
    chosen = {(e.partition.to_bytes(), e.bucket) for e in table.plan(where)} if where is not None else None
    if buckets is not None:
        chosen = set(buckets) if chosen is None else chosen & set(buckets)
    groups: dict[PartBucket, list[mf.ManifestEntry]] = {}
    for e in every:
        key = (e.partition.to_bytes(), e.bucket)
        if chosen is None or key in chosen:
            groups.setdefault(key, []).append(e)
    out: list[BucketCompaction] = []
    for entries in groups.values():
        if len(entries) == 1 and entries[0].file.level == top and not entries[0].file.delete_row_count:
            continue
        entries.sort(key=lambda e: (e.file.max_sequence_number, e.file.min_sequence_number))
        first = entries[0]
        out.append(BucketCompaction(first.partition, first.bucket, first.total_buckets, entries)
                   .changelog_for(table, entries).with_vectors(table, entries, table.current_snapshot()))
    return out


def written_buckets(messages: Iterable[CommitMessage], partition_types: Sequence[IcebergType]) -> set[PartBucket]:
    """The (partition bytes, bucket) pairs commit messages add data files to."""
    return {(encode_row(list(m.partition), partition_types).to_bytes(), m.bucket) for m in messages if m.new_files}


def bucket_entries(table: StoreTable, buckets: Optional[Iterable[PartBucket]]) -> list[mf.ManifestEntry]:
    """The live entries of ``buckets`` ((partition bytes, bucket) pairs) of the table's current
    snapshot, reading only the manifests that may hold them; every live entry when None."""
    if buckets is None:
        return table.plan()
    return table.store.bucket_entries(table.current_snapshot(),
                                      [(BinaryRow.from_bytes(p).data, b) for p, b in buckets])


def compact_bucket(io: FileIO, location: str, schema: TableSchema, paths: Sequence[str],
                   file_fields: Sequence[Sequence[DataField]], partition: BinaryRow,
                   bucket: int, table: str = "table", target_file_size: Optional[int] = None,
                   level: Optional[int] = None, drop_deletes: bool = True,
                   changelog: Optional[cl.CompactionChangelog] = None,
                   changelog_out: Optional[list[DataFileMeta]] = None,
                   vectors: Optional[VectorsSpec] = None, vectors_out: Optional[list[VectorsOut]] = None,
                   exclude: Sequence[KeyFile] = (), levels: Optional[Sequence[int]] = None) -> list[DataFileMeta]:
    """Merge files of one bucket and write the result at ``level`` (default the highest);
    returns the new files' metadata (the files are deleted again if anything fails). Without
    ``drop_deletes`` a key whose merged record deletes it keeps that record, for the older runs
    the merge left out. With ``changelog`` the bucket's changelog files are written too and
    their metadata appended to ``changelog_out``. With ``vectors`` (``(others, BucketVectors)``:
    a table with deletion vectors) the merge looks keys up in the other files and marks them
    (``icefloe.paimon.dv_compact``); ``(index file, changed)`` is appended to ``vectors_out``.
    Keys found in the files ``exclude`` names (``(path, fields)``) are left out of the output.
    ``levels``: each file's level (a lookup table merges as Paimon's readers do)."""
    import pyarrow as pa

    store = FileStore(io, location, schema)
    co = schema.core_options
    target = int(target_file_size or co.target_file_size)
    level = max_level(schema.options) if level is None else level
    namer = DataFileNamer(co.data_file_prefix, co.file_format)
    directory = store.bucket_dir(store.partition_values(partition), bucket)
    metas: list[DataFileMeta] = []
    pending: list[pa.Table] = []
    size = 0

    def flush() -> None:
        nonlocal pending, size
        if pending:
            merged = pa.concat_tables(pending)
            if mg.VALUE_KIND not in merged.column_names:
                merged = merged.append_column(mg.VALUE_KIND, pa.array([mg.INSERT] * merged.num_rows, pa.int8()))
            meta = write_merged_file(store, schema, merged, directory, namer, written, level)
            if meta is not None:
                metas.append(meta)
        pending, size = [], 0

    if vectors is not None:
        others, bucket_vectors, picked_levels, lookup = vectors
        names = [p.rsplit("/", 1)[-1] for p in paths]
        with staged_files(io) as written:
            metas, index, changed, records = compact_bucket_dv(
                io, store, schema, list(zip(paths, file_fields, names)), others, bucket_vectors, directory, namer,
                written, level, target, picked_levels, lookup)
            write_changelog(store, schema, records, directory, namer, written, level, changelog_out)
        if vectors_out is not None:
            vectors_out.append((index, changed))
        return metas
    taken = None
    keys: list[str] = []
    if exclude:
        keys = mg.trimmed_primary_keys(schema.primary_keys, schema.partition_keys)
        taken = mg.keys_of_files(io, exclude, schema.fields, keys)
    with staged_files(io) as written:
        # each key's record keeps its row kind (+U stays +U, as Paimon's compaction writes it)
        for chunk in mg.iter_merged_bucket(io, paths, file_fields, schema, table, keep_sequence=True,
                                           keep_deletes=True, levels=levels):
            if drop_deletes:
                chunk = chunk.filter(mg.is_live(chunk.column(mg.VALUE_KIND)))
                if not chunk.num_rows:
                    continue
            if taken is not None:
                chunk = chunk.join(taken, keys, join_type="left anti").sort_by([(k, "ascending") for k in keys])
                if not chunk.num_rows:
                    continue
            pending.append(chunk)
            size += chunk.nbytes
            if size >= target:
                flush()
        flush()
        if changelog is not None:
            write_changelog(store, schema, cl.bucket_changelog(io, schema, changelog, table), directory, namer,
                            written, level, changelog_out)
    return metas


def write_changelog(store: FileStore, schema: TableSchema, records: Optional[pa.Table], directory: str,
                    namer: DataFileNamer, written: list[str], level: int, out: Optional[list[DataFileMeta]]) -> None:
    """A bucket's changelog records (None: none) as a changelog file (the data files' layout,
    named by ``namer``'s sibling), its metadata appended to ``out``."""
    if records is None or records.num_rows == 0:
        return
    meta = write_merged_file(store, schema, records, directory, namer.sibling(schema.core_options.changelog_file_prefix),
                             written, level)
    if meta is not None and out is not None:
        out.append(meta)


def _parts(done: Done) -> tuple[BucketCompaction, Sequence[DataFileMeta], Sequence[DataFileMeta], Sequence[VectorsOut]]:
    """A compacted bucket's (task, new file metas, changelog file metas, vectors out)."""
    if len(done) == 2:
        return done[0], done[1], (), ()
    if len(done) == 3:
        return done[0], done[1], done[2], ()
    return done


def commit(table: CompactTable, base: Snapshot, done: Sequence[Done]) -> Optional[Snapshot]:
    """Commit compacted buckets, ``done`` = [(BucketCompaction, new file metas[, changelog file
    metas])], as one COMPACT snapshot; on any failure the new files are deleted."""
    store = table.store
    removed: list[mf.ManifestEntry] = []
    added: list[mf.ManifestEntry] = []
    changelog: list[mf.ManifestEntry] = []
    vectors: dict[PartBucket, Optional[IndexFile]] = {}
    for task, metas, changelog_metas, vectors_out in map(_parts, done):
        removed.extend(task.entries)
        added.extend(mf.ManifestEntry(mf.ADD, task.partition, task.bucket, task.total_buckets, m) for m in metas)
        for m in changelog_metas:
            changelog.append(mf.ManifestEntry(mf.ADD, task.partition, task.bucket, task.total_buckets, m))
        for index, changed in vectors_out:
            if changed:
                vectors[(task.partition.to_bytes(), task.bucket)] = index
    before = {k: (t.vectors.file_name if t.vectors else None) for t in (d[0] for d in done) if t.vectors_mode
              for k in [(t.partition.to_bytes(), t.bucket)]}

    operation = f"compaction of {table.name}"
    inputs = tuple(removed)
    compaction = PaimonCommit(
        COMPACT, (DeleteFiles(inputs), AddFiles(tuple(added)), AddChangelog(tuple(changelog)),
                  SetDeletionVectors(vectors)),
        (FilesLive(inputs, operation, base.id, "merges"), VectorsUnchanged(before if vectors else {}, operation, base.id)))
    try:
        if not removed:
            return None
        return FileStoreCommit(store, table.commit_user).apply(compaction)
    except AfterCommitError:            # committed: the files are the table's
        raise
    except BaseException:
        abort(table, _all_metas(done))
        raise


def _all_metas(done: Sequence[Done]) -> list[Union[DataFileMeta, IndexFile]]:
    out: list[Union[DataFileMeta, IndexFile]] = []
    for _task, metas, changelog_metas, vectors_out in map(_parts, done):
        out.extend(metas)
        out.extend(changelog_metas)
        out.extend(index for index, _changed in vectors_out if index is not None)
    return out


def abort(table: CompactTable, metas: Sequence[Union[DataFileMeta, IndexFile]]) -> None:
    for m in metas:
        if m.file_path:
            table.io.delete(m.file_path)


def compact_table(table: CompactTable, where: Any = None, target_file_size: Optional[int] = None) -> Optional[Snapshot]:
    """Full compaction on the caller (no Spark): bucket after bucket, one COMPACT snapshot."""
    table.refresh()
    table.check_writable()
    base = table.current_snapshot()
    if base is None:
        return None
    schema = table.table_schema
    table.check_mergeable(schema)
    done: list[Done] = []
    try:
        for task in plan(table, where):
            done.append(run_task(table, task, target_file_size))
    except BaseException:
        abort(table, _all_metas(done))
        raise
    return commit(table, base, done)


def run_task(table: CompactTable, task: BucketCompaction, target_file_size: Optional[int] = None
             ) -> tuple[BucketCompaction, list[DataFileMeta], list[DataFileMeta], list[VectorsOut]]:
    """Compact one bucket on the caller: ``(task, new file metas, changelog file metas)``."""
    fields = [table.schema_by_id(e.file.schema_id).fields for e in task.entries]
    changelog: list[DataFileMeta] = []
    vectors: list[VectorsOut] = []
    metas = compact_bucket(table.io, table.location, table.table_schema, task.paths(), fields, task.partition,
                           task.bucket, table.name, target_file_size, task.level, task.drop_deletes,
                           task.changelog, changelog, task.vectors_spec(), vectors, task.exclude, task.levels())
    return task, metas, changelog, vectors


# --------------------------------------------------------------------------- universal compaction
# Paimon's default compaction strategy for primary-key tables: a bucket is a list of sorted runs
# (each level-0 file is one, newest first, then one per non-empty level 1..max), and after a write
# the runs are checked in this order: size amplification (everything newer than the oldest run is
# more than compaction.max-size-amplification-percent of it: merge all), size ratio (newer runs
# whose sizes add up within compaction.size-ratio percent of the next: merge them), and the run
# count (more than num-sorted-run.compaction-trigger: merge the newest surplus, by size ratio).
# Merged runs go to the level just above the first run left out, never level 0; when every run
# is merged the output goes to the highest level.

def _opt_int(options: Mapping[str, Any], key: str, default: int) -> int:
    v = options.get(key)
    return int(v) if v not in (None, "") else default


SortedRun = tuple[int, list[mf.ManifestEntry]]           # (level, entries)


def sorted_runs(entries: Sequence[mf.ManifestEntry]) -> list[SortedRun]:
    """A bucket's live entries as its sorted runs ``(level, entries)``, newest first."""
    runs: list[SortedRun] = []
    level0 = sorted((e for e in entries if e.file.level == 0),
                    key=lambda e: (e.file.max_sequence_number, e.file.min_sequence_number), reverse=True)
    runs.extend((0, [e]) for e in level0)
    by_level: dict[int, list[mf.ManifestEntry]] = {}
    for e in entries:
        if e.file.level > 0:
            by_level.setdefault(e.file.level, []).append(e)
    runs.extend((lvl, by_level[lvl]) for lvl in sorted(by_level))
    return runs


def _size(run: SortedRun) -> int:
    return sum(e.file.file_size for e in run[1])


def stalled_buckets(table: StoreTable, buckets: Optional[Collection[PartBucket]] = None) -> set[PartBucket]:
    """The (partition bytes, bucket) pairs (of ``buckets``, default all) holding more sorted runs than
    ``num-sorted-run.stop-trigger`` (default the compaction trigger + 3): Paimon's writers wait for
    their compaction before writing more (runs pile up only when compactions failed)."""
    options = table.table_schema.options
    stop = _opt_int(options, "num-sorted-run.stop-trigger", _opt_int(options, "num-sorted-run.compaction-trigger", 5) + 3)
    if buckets is not None:       # the buckets' files as columns: their runs counted, no entry made
        return {key for key, files in _bucket_files(table, buckets).items() if len(files.runs()) > stop}
    groups: dict[PartBucket, list[mf.ManifestEntry]] = {}
    for e in bucket_entries(table, buckets):
        groups.setdefault((e.partition.to_bytes(), e.bucket), []).append(e)
    return {key for key, entries in groups.items() if len(sorted_runs(entries)) > stop}


def _bucket_files(table: StoreTable, buckets: Collection[PartBucket]) -> dict[PartBucket, BucketFiles]:
    """The live files of ``buckets`` of the table's current snapshot as columns (``FileStore.bucket_files``),
    by the (partition bytes, bucket) pairs asked for."""
    asked = {(BinaryRow.from_bytes(p).data, b): (p, b) for p, b in buckets}
    return {asked[key]: files for key, files in table.store.bucket_files(table.current_snapshot(), asked).items()}


RunSize = tuple[int, int]           # a sorted run as (level, total size of its files)


def pick_universal(runs: Sequence[SortedRun], options: Mapping[str, Any]) -> Optional[tuple[int, int]]:
    """Which runs universal compaction merges now: ``(count of the newest runs, output level)``,
    or None. ``runs`` as ``sorted_runs`` gives them."""
    return _pick([(r[0], _size(r)) for r in runs], options)


def _pick(runs: Sequence[RunSize], options: Mapping[str, Any]) -> Optional[tuple[int, int]]:
    """``pick_universal`` of runs given by their levels and sizes (all it reads of them)."""
    trigger = _opt_int(options, "num-sorted-run.compaction-trigger", 5)
    top = max_level(options)
    if len(runs) < trigger:
        return None
    amplification = _opt_int(options, "compaction.max-size-amplification-percent", 200)
    newer = sum(size for _lvl, size in runs[:-1])
    if newer * 100 > amplification * runs[-1][1]:
        return len(runs), top
    picked = _by_size_ratio(runs, 1, options, top)
    if picked is not None:
        return picked
    if len(runs) > trigger:
        return _by_size_ratio(runs, len(runs) - trigger + 1, options, top, force=True)
    return None


def _by_size_ratio(runs: Sequence[RunSize], count: int, options: Mapping[str, Any], top: int,
                   force: bool = False) -> Optional[tuple[int, int]]:
    ratio = _opt_int(options, "compaction.size-ratio", 1)
    size = sum(s for _lvl, s in runs[:count])
    while count < len(runs):
        nxt = runs[count][1]
        if size * (100.0 + ratio) / 100.0 < nxt:
            break
        size += nxt
        count += 1
    if not force and count <= 1:
        return None
    if count == len(runs):
        return count, top
    level = max(0, runs[count][0] - 1)
    while level == 0 and count < len(runs):    # never write level 0: take runs until a leveled one
        level = runs[count][0]
        count += 1
    return (count, top) if count == len(runs) else (count, level)


def full_compaction_due(table: CompactTable) -> bool:
    """``full-compaction.delta-commits`` = N: a full compaction is due once N commits that write
    data followed the last compaction."""
    n = _opt_int(table.table_schema.options, "full-compaction.delta-commits",
                 1 if cl.producer(table.table_schema) == cl.FULL_COMPACTION else 0)
    if n <= 0:
        return False
    # the newest n snapshots at most are read, whatever the table's history
    snaps = table.store.snapshots
    sid, first = snaps.latest_id(), snaps.earliest_id()
    commits = 0
    while sid is not None and first is not None and sid >= first and commits < n:
        if snaps.snapshot(sid).commit_kind == COMPACT:
            break
        commits += 1
        sid -= 1
    return commits >= n


def plan_universal(table: CompactTable, buckets: Optional[Collection[PartBucket]] = None) -> list[BucketCompaction]:
    """The buckets universal compaction merges now (``buckets``: the (partition bytes, bucket)
    pairs to look at, default all), each with the runs it merges and their output level; every
    run of each, to the top level, when ``full-compaction.delta-commits`` says a full compaction
    is due."""
    if full_compaction_due(table):
        return plan(table, buckets=buckets)
    options = table.table_schema.options
    # lookup changelog, deletion vectors, first-row: every new run is merged up after each write
    lookup = cl.producer(table.table_schema) == cl.LOOKUP or dv.skips_level0(options)
    # lookup changelog of a partial-update or aggregation table without vectors: every run,
    # after each write. Paimon's readers of a lookup table take a key's newest record above
    # level 0 as its whole value, other readers merge every level; a key once above level 0 reads
    # the same in both (a partial merge written to a middle level would not)
    whole = (cl.producer(table.table_schema) == cl.LOOKUP and not dv.enabled(options)
             and str(options.get("merge-engine", "deduplicate")).lower() in ("partial-update", "aggregation"))
    if buckets is not None:
        # the pick reads the runs' levels and sizes only: judged on the buckets' columns, and entries
        # made only of the buckets it compacts
        buckets = {key for key, files in _bucket_files(table, buckets).items()
                   if _picked(files.runs(), options, lookup, whole) is not None}
        if not buckets:
            return []
    groups: dict[PartBucket, list[mf.ManifestEntry]] = {}
    for e in bucket_entries(table, buckets):
        key = (e.partition.to_bytes(), e.bucket)
        if buckets is None or key in buckets:
            groups.setdefault(key, []).append(e)
    out: list[BucketCompaction] = []
    for entries in groups.values():
        runs = sorted_runs(entries)
        picked = _picked([(r[0], _size(r)) for r in runs], options, lookup, whole)
        if picked is None:
            continue
        count, level = picked
        merged = [e for _lvl, run in runs[:count] for e in run]
        left = [lvl for lvl, _run in runs[count:]]
        merged.sort(key=lambda e: (e.file.max_sequence_number, e.file.min_sequence_number))
        first = merged[0]
        out.append(BucketCompaction(first.partition, first.bucket, first.total_buckets, merged, level,
                                    drop_deletes=not left or level >= max(left)).changelog_for(table, entries)
                   .with_vectors(table, entries, table.current_snapshot()))
    return out


def _picked(runs: Sequence[RunSize], options: Mapping[str, Any], lookup: bool, whole: bool) -> Optional[tuple[int, int]]:
    """What universal compaction merges of a bucket's runs (``(count of the newest runs, output
    level)``, or None): ``pick_universal``'s choice, or every run (``whole``) or at least every
    level-0 run (``lookup``) when there is one."""
    picked = _pick(runs, options)
    level0 = sum(1 for lvl, _size in runs if lvl == 0)
    if whole and level0:
        return len(runs), max_level(options)
    if lookup and level0 and (picked is None or picked[0] < level0):
        # lookup: every new run is merged up (and its changes emitted) after each write
        return _by_size_ratio(runs, level0, options, max_level(options), force=True)
    return picked


def compact_universal(table: CompactTable, buckets: Optional[Collection[PartBucket]]) -> Optional[Snapshot]:
    """Universal compaction of ``buckets`` on the caller (no Spark): one COMPACT snapshot."""
    base = table.current_snapshot()
    done: list[Done] = []
    try:
        for task in plan_universal(table, buckets):
            done.append(run_task(table, task))
    except BaseException:
        abort(table, _all_metas(done))
        raise
    if not done:
        return None
    assert base is not None                 # buckets were planned from a snapshot
    return commit(table, base, done)


__all__ = ["CompactTable", "plan", "plan_universal", "stalled_buckets", "compact_universal", "pick_universal", "sorted_runs", "compact_bucket", "commit",
           "compact_table", "run_task", "bucket_entries", "written_buckets",
           "max_level", "BucketCompaction"]
