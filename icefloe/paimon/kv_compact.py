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

from dataclasses import dataclass
from typing import Optional, Sequence

from icefloe.errors import CommitConflictError
from icefloe.paimon import manifest as mf
from icefloe.paimon import merge as mg
from icefloe.paimon.commit import FileStoreCommit
from icefloe.paimon.data_file import DataFileNamer
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.kv_writer import write_merged_file
from icefloe.paimon.snapshot import COMPACT, Snapshot


def max_level(options: dict) -> int:
    """The highest LSM level: ``num-levels`` - 1, by default the compaction trigger."""
    if options.get("num-levels"):
        return max(1, int(options["num-levels"]) - 1)
    return max(1, int(options.get("num-sorted-run.compaction-trigger", 5)))


@dataclass
class BucketCompaction:
    """One (partition, bucket) to compact: its live entries, oldest first."""
    partition: object              # BinaryRow
    bucket: int
    total_buckets: int
    entries: list

    def paths(self) -> list:
        return [e.file.file_path for e in self.entries]


def plan(table, where=None) -> list[BucketCompaction]:
    """The buckets a full compaction rewrites: those with more than one live file, or one
    not yet at the highest level or holding delete records. ``where`` chooses buckets (any
    bucket with a file it reads); a chosen bucket is compacted whole."""
    top = max_level(table.table_schema.options)
    every = table.plan()
    chosen = {(e.partition.to_bytes(), e.bucket) for e in table.plan(where)} if where is not None else None
    groups: dict = {}
    for e in every:
        key = (e.partition.to_bytes(), e.bucket)
        if chosen is None or key in chosen:
            groups.setdefault(key, []).append(e)
    out = []
    for entries in groups.values():
        if len(entries) == 1 and entries[0].file.level == top and not entries[0].file.delete_row_count:
            continue
        entries.sort(key=lambda e: (e.file.max_sequence_number, e.file.min_sequence_number))
        first = entries[0]
        out.append(BucketCompaction(first.partition, first.bucket, first.total_buckets, entries))
    return out


def compact_bucket(io, location: str, schema, paths: Sequence[str], file_fields: Sequence, partition,
                   bucket: int, table: str = "table", target_file_size: Optional[int] = None) -> list:
    """Merge one bucket's files and write the result at the highest level; returns the new
    files' metadata (the files are deleted again if anything fails)."""
    import pyarrow as pa

    store = FileStore(io, location, schema)
    co = schema.core_options
    target = int(target_file_size or co.target_file_size)
    level = max_level(schema.options)
    namer = DataFileNamer(co.data_file_prefix, co.file_format)
    directory = store.bucket_dir(store.partition_values(partition), bucket)
    written: list = []
    metas: list = []
    pending: list = []
    size = 0

    def flush():
        nonlocal pending, size
        if pending:
            merged = pa.concat_tables(pending)
            merged = merged.append_column(mg.VALUE_KIND, pa.array([mg.INSERT] * merged.num_rows, pa.int8()))
            meta = write_merged_file(store, schema, merged, directory, namer, written, level)
            if meta is not None:
                metas.append(meta)
        pending, size = [], 0

    try:
        for chunk in mg.iter_merged_bucket(io, paths, file_fields, schema, table, keep_sequence=True):
            pending.append(chunk)
            size += chunk.nbytes
            if size >= target:
                flush()
        flush()
    except BaseException:
        for p in written:
            io.delete(p)
        raise
    return metas


def commit(table, base: Snapshot, done: Sequence[tuple]) -> Optional[Snapshot]:
    """Commit compacted buckets, ``done`` = [(BucketCompaction, new file metas)], as one
    COMPACT snapshot; on any failure the new files are deleted."""
    store = table.store
    removed, added = [], []
    for task, metas in done:
        removed.extend(mf.ManifestEntry(mf.DELETE, e.partition, e.bucket, e.total_buckets, e.file)
                       for e in task.entries)
        added.extend(mf.ManifestEntry(mf.ADD, task.partition, task.bucket, task.total_buckets, m) for m in metas)

    def changes(latest: Optional[Snapshot]) -> list:
        live = {e.identifier() for e in store.live_entries(latest)}
        for e in removed:
            if e.identifier() not in live:
                raise CommitConflictError(
                    f"compaction of {table.name} conflicts with a commit after snapshot {base.id}: "
                    f"data file {e.file.file_name} it merges is no longer live")
        return removed + added

    try:
        if not removed:
            return None
        return FileStoreCommit(store, table.commit_user).commit_changes(changes, COMPACT)
    except BaseException:
        abort(table, [m for _, metas in done for m in metas])
        raise


def abort(table, metas: Sequence) -> None:
    for m in metas:
        if m.file_path:
            table.io.delete(m.file_path)


def compact_table(table, where=None, target_file_size: Optional[int] = None) -> Optional[Snapshot]:
    """Full compaction on the caller (no Spark): bucket after bucket, one COMPACT snapshot."""
    table.refresh()
    table.check_writable()
    base = table.current_snapshot()
    if base is None:
        return None
    schema = table.table_schema
    table.check_mergeable(schema)
    done: list = []
    try:
        for task in plan(table, where):
            fields = [table.schema_by_id(e.file.schema_id).fields for e in task.entries]
            done.append((task, compact_bucket(table.io, table.location, schema, task.paths(), fields, task.partition,
                                              task.bucket, table.name, target_file_size)))
    except BaseException:
        abort(table, [m for _, metas in done for m in metas])
        raise
    return commit(table, base, done)


__all__ = ["plan", "compact_bucket", "commit", "compact_table", "max_level", "BucketCompaction"]
