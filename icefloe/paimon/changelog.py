# pyright: strict
"""Changelog producers of primary-key tables: what a stream (or ``changes``) reads of each commit.

``changelog-producer`` says where a snapshot's changes come from:

- ``none`` (default): no changelog files; a stream reads each APPEND snapshot's new data files,
  the records as written (an upsert shows as ``+I``, with no ``-U`` for the row it replaced).
- ``input``: every write also writes its records, as given, to changelog files
  (``changelog-<uuid>-<n>.parquet`` in the bucket's directory, the data files' key-value layout);
  the snapshot lists them in its changelog manifest list.
- ``lookup``: the compaction after every write merges the new level-0 runs into the levels
  above and, for each key the new runs hold, compares the key's value in the levels above
  (before) with its merged value (after): ``+I`` for a new key, ``-U``/``+U`` for a changed one
  (both even if equal, unless ``changelog-producer.row-deduplicate``), ``-D`` for a removed one
  (the first-row engine only ever emits ``+I``). The changelog lands in the COMPACT snapshot.
- ``full-compaction``: each full compaction compares the previous full compaction's output (the
  highest level) with the new one, for every key, and writes the differences (unchanged keys emit
  nothing); ``full-compaction.delta-commits`` defaults to 1, a full compaction after every write.

The changes between two snapshots are the changelog files of the snapshots after the first up
to the second (the data files added by APPEND snapshots for ``none``). Everything here works on
one bucket as Arrow and runs wherever it is called (Spark tasks for compaction).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from icefloe.errors import NoSuchSnapshotError

from icefloe.paimon import manifest as mf
from icefloe.paimon import merge as mg
from icefloe.paimon.options import parse_duration_ms
from icefloe.paimon.types import to_arrow_schema
from icefloe.paimon.snapshot import APPEND, COMPACT, OVERWRITE, Snapshot

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

    from icefloe.core.io import FileIO
    from icefloe.paimon.file_store import FileStore
    from icefloe.paimon.schema import TableSchema
    from icefloe.paimon.types import DataField

# a live file of a bucket: (path, the fields it was written with, its level)
BucketFile = tuple[str, Sequence["DataField"], int]

NONE, INPUT, LOOKUP, FULL_COMPACTION = "none", "input", "lookup", "full-compaction"
KIND_LABELS = ("+I", "-U", "+U", "-D")


def producer(schema: TableSchema) -> str:
    """The table's changelog producer (``none`` for an append table)."""
    return schema.core_options.changelog_producer if schema.primary_keys else NONE


@dataclass
class CompactionChangelog:
    """What a compaction task needs to write a bucket's changelog: ``mode`` (lookup or
    full-compaction), every live file of the bucket before the compaction as ``(path, fields,
    level)``, and the level whose runs hold the changes already emitted (lookup: 1 and above;
    full-compaction: the highest level only)."""
    mode: str
    files: list[BucketFile]
    before_level: int
    only_level: Optional[int] = None


def compaction_changelog(mode: str, bucket_entries: Sequence[mf.ManifestEntry],
                         field_of: Callable[[mf.ManifestEntry], Sequence[DataField]], top: int) -> CompactionChangelog:
    """The changelog spec of a compaction of a bucket whose live entries are ``bucket_entries``
    (``field_of(entry)`` the fields its file was written with)."""
    files = [(e.file.path, field_of(e), e.file.level) for e in bucket_entries]
    if mode == LOOKUP:
        return CompactionChangelog(mode, files, before_level=1)
    return CompactionChangelog(mode, files, before_level=top, only_level=top)


def _merged(io: FileIO, files: Sequence[BucketFile], schema: TableSchema, table: str) -> pa.Table:
    import pyarrow as pa

    paths = [p for p, _, _ in files]
    fields = [ff for _, ff, _ in files]
    levels = [lvl for _, _, lvl in files]
    parts = list(mg.iter_merged_bucket(io, paths, fields, schema, table, keep_sequence=True,
                                       levels=levels)) if paths else []
    if not parts:
        empty = to_arrow_schema(schema.fields, with_ids=False).empty_table()
        return empty.append_column(mg.SEQUENCE, pa.array([], pa.int64()))
    return pa.concat_tables(parts)


def _equal_rows(a: pa.Table, b: pa.Table, names: Sequence[str]) -> npt.NDArray[np.bool_]:
    """A boolean mask: the rows of ``a`` and ``b`` hold equal values in every column of ``names``
    (nulls equal to nulls)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    same = np.ones(a.num_rows, dtype=bool)
    for n in names:
        x, y = a.column(n), b.column(n)
        if pa.types.is_nested(x.type) or pa.types.is_dictionary(x.type):
            eq = np.array([u == v for u, v in zip(x.to_pylist(), y.to_pylist())], dtype=bool)
        else:
            both_null = pc.and_(pc.is_null(x), pc.is_null(y))
            eq = pc.or_(pc.fill_null(pc.equal(x, y), False), both_null).to_numpy(zero_copy_only=False)
        same &= eq
    return same


def bucket_changelog(io: FileIO, schema: TableSchema, spec: CompactionChangelog,
                     table: str = "table") -> Optional[pa.Table]:
    """The changelog records of one bucket's compaction (value columns, ``_SEQUENCE_NUMBER``,
    ``_VALUE_KIND``), in key order, -U before +U; None when there is nothing to emit."""
    names = [f.name for f in schema.fields]
    keys = mg.trimmed_primary_keys(schema.primary_keys, schema.partition_keys)
    if spec.only_level is not None:
        before_files = [f for f in spec.files if f[2] == spec.only_level]
    else:
        before_files = [f for f in spec.files if f[2] >= spec.before_level]
    before = _merged(io, before_files, schema, table)
    after = _merged(io, spec.files, schema, table)
    if spec.mode == LOOKUP:     # only the keys of the new (level-0) runs
        touched = mg.keys_of_files(io, [(p, ff) for p, ff, lvl in spec.files if lvl == 0], schema.fields, keys)
        before = _semi(before, touched, keys)
        after = _semi(after, touched, keys)
    return diff_states(before, after, keys, names, mg.merge_engine(schema.options),
                       spec.mode == FULL_COMPACTION or schema.core_options.changelog_row_deduplicate)


def diff_states(before: pa.Table, after: pa.Table, keys: Sequence[str], names: Sequence[str], engine: str,
                skip_equal: bool) -> Optional[pa.Table]:
    """The changelog that turns ``before`` into ``after`` (a bucket's live rows of some keys: value
    columns and ``_SEQUENCE_NUMBER``): -D for a key only before, +I for one only after, -U/+U for
    one in both (none where the values are equal and ``skip_equal``; the first-row engine emits
    only +I), in key order; None when there is nothing to emit."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    keys, names = list(keys), list(names)
    b = before.append_column("__b", pa.array(np.arange(before.num_rows), pa.int64())).select(keys + ["__b"])
    a = after.append_column("__a", pa.array(np.arange(after.num_rows), pa.int64())).select(keys + ["__a"])
    joined = b.join(a, keys, join_type="full outer")
    jb, ja = joined.column("__b"), joined.column("__a")
    b_has = jb.is_valid().to_numpy(zero_copy_only=False)
    a_has = ja.is_valid().to_numpy(zero_copy_only=False)
    bi = pc.fill_null(jb, 0).to_numpy(zero_copy_only=False)
    ai = pc.fill_null(ja, 0).to_numpy(zero_copy_only=False)
    inserts = a_has & ~b_has
    deletes = b_has & ~a_has
    both = a_has & b_has
    if engine == "first-row":
        deletes[:] = False
        both[:] = False
    elif both.any() and skip_equal:
        idx = np.flatnonzero(both)
        same = _equal_rows(before.take(pa.array(bi[idx])), after.take(pa.array(ai[idx])), names)
        both[idx[same]] = False
    parts: list[pa.Table] = []   # (table rows, kind, order within a key)
    for mask, src, pick, kind, order in ((deletes, before, bi, mg.DELETE, 0), (both, before, bi, mg.UPDATE_BEFORE, 0),
                                         (both, after, ai, mg.UPDATE_AFTER, 1), (inserts, after, ai, mg.INSERT, 1)):
        if not mask.any():
            continue
        rows = src.take(pa.array(pick[mask])).select(names + [mg.SEQUENCE])
        rows = rows.append_column(mg.VALUE_KIND, pa.array([kind] * rows.num_rows, pa.int8()))
        parts.append(rows.append_column("__o", pa.array([order] * rows.num_rows, pa.int8())))
    if not parts:
        return None
    out = pa.concat_tables(parts)
    out = out.sort_by([(k, "ascending") for k in keys] + [("__o", "ascending")])
    return out.drop_columns(["__o"])


def _semi(table: pa.Table, keys_table: Optional[pa.Table], keys: Sequence[str]) -> pa.Table:
    if keys_table is None:
        return table.slice(0, 0)
    out = table.join(keys_table, list(keys), join_type="left semi")
    return out.sort_by([(k, "ascending") for k in keys])


# --------------------------------------------------------------------------- the changelog's own lifecycle
# ``changelog.num-retained.min/max`` and ``changelog.time-retained`` (defaults: the snapshot
# options) may keep changelogs longer than their snapshots. Expiring such a snapshot writes its
# JSON to ``changelog/changelog-<id>`` and keeps its changelog manifest list, manifests and files;
# the changelogs past their own retention are expired after the snapshots.
CHANGELOG_DIR = "changelog"
_CHANGELOG_RE = re.compile(r"^changelog-(\d+)$")


def _retention(store: FileStore) -> tuple[int, int, int]:
    """(``changelog.num-retained.min``, ``.max``, ``changelog.time-retained`` in ms), each
    defaulting to the snapshots' option."""
    o, co = store.schema.options, store.options
    n_min = int(o.get("changelog.num-retained.min") or co.snapshot_num_retained_min)
    n_max = int(o.get("changelog.num-retained.max") or co.snapshot_num_retained_max)
    ms = parse_duration_ms(o["changelog.time-retained"]) if o.get("changelog.time-retained") else \
        co.snapshot_time_retained_ms
    return n_min, n_max, ms


def decoupled(store: FileStore) -> bool:
    """Whether the table keeps changelogs past their snapshots' expiry."""
    if not store.schema.primary_keys or producer(store.schema) == NONE:
        return False
    co = store.options
    n_min, n_max, ms = _retention(store)
    return n_max > co.snapshot_num_retained_max or n_min > co.snapshot_num_retained_min or \
        ms > co.snapshot_time_retained_ms


def changelog_path(store: FileStore, changelog_id: int) -> str:
    return f"{store.table_path}/{CHANGELOG_DIR}/changelog-{changelog_id}"


def kept_changelogs(store: FileStore) -> list[Snapshot]:
    """The changelogs kept past their snapshots, oldest first (Snapshot objects)."""
    out: list[Snapshot] = []
    for name in store.io.list_dir(f"{store.table_path}/{CHANGELOG_DIR}"):
        m = _CHANGELOG_RE.match(name)
        if m:
            path = f"{store.table_path}/{CHANGELOG_DIR}/{name}"
            out.append(Snapshot.from_json(store.io.read_bytes(path).decode("utf-8"), path))
    return sorted(out, key=lambda s: s.id)


def earliest_changes(store: FileStore) -> Optional[int]:
    """The earliest snapshot id whose changes are still there: the earliest kept changelog's, else
    the earliest snapshot's."""
    kept = kept_changelogs(store) if decoupled(store) else []
    earliest = store.snapshots.earliest_id()
    if kept and (earliest is None or kept[0].id < earliest):
        return kept[0].id
    return earliest


def changes_of(store: FileStore, snapshot_id: int) -> Optional[Snapshot]:
    """Snapshot ``snapshot_id``, or its kept changelog once it has expired; None when it expired
    without a changelog (it changed nothing a stream reads)."""
    try:
        return store.snapshots.snapshot(snapshot_id)
    except NoSuchSnapshotError:
        path = changelog_path(store, snapshot_id)
        if not store.io.exists(path):
            first = earliest_changes(store)
            if first is not None and snapshot_id >= first:
                return None
            raise
        return Snapshot.from_json(store.io.read_bytes(path).decode("utf-8"), path)


def expire_changelogs(store: FileStore, latest_id: int, now_ms: int, retain_min: Optional[int] = None,
                      retain_max: Optional[int] = None, older_than_ms: Optional[int] = None,
                      max_deletes: Optional[int] = None, delete_all: bool = False) -> list[int]:
    """Expire kept changelogs past ``changelog.num-retained.max`` (counted back from the latest
    snapshot), or older than ``changelog.time-retained`` beyond ``changelog.num-retained.min``:
    their files, manifests and lists, then the changelog file. The arguments override the options
    (``older_than_ms``: a time, not a duration) and cap the changelogs expired (``max_deletes``);
    ``delete_all`` expires every kept changelog. Returns the expired ids."""
    n_min, n_max, ms = _retention(store)
    n_min = n_min if retain_min is None else int(retain_min)
    n_max = max(n_min, n_max if retain_max is None else int(retain_max))
    before = now_ms - ms if older_than_ms is None else older_than_ms
    expired: list[int] = []
    for c in kept_changelogs(store):
        too_many = c.id <= latest_id - n_max
        too_old = c.id <= latest_id - n_min and c.time_millis < before
        if not (delete_all or too_many or too_old) or (max_deletes is not None and len(expired) >= max_deletes):
            break
        files, lists = changelog_files_of(store, c)
        store.io.delete(changelog_path(store, c.id))     # first: a crash leaves unreferenced files only
        for path in files:
            store.io.delete(path)
        for name in lists:
            store.delete_manifest_file(name)
        expired.append(c.id)
    return expired


def changelog_files_of(store: FileStore, snap: Snapshot) -> tuple[list[str], list[str]]:
    """(changelog file paths, manifest and list names) of a snapshot's changelog."""
    if not snap.changelog_manifest_list:
        return [], []
    try:
        metas = store.read_manifest_list(snap.changelog_manifest_list, snap.changelog_manifest_list_size)
        files = [store.data_file_path(e) for m in metas for e in store.read_manifest(m.file_name, m.file_size)]
    except Exception:
        return [], [snap.changelog_manifest_list]
    return files, [m.file_name for m in metas] + [snap.changelog_manifest_list]


# --------------------------------------------------------------------------- reading changes
def snapshot_changes(store: FileStore, snap: Snapshot, mode: str,
                     read_overwrite: bool = False) -> list[mf.ManifestEntry]:
    """The ADD entries a stream reads for ``snap`` (with file paths): its changelog files, or for
    ``none`` the data files an APPEND (or, with ``read_overwrite``, an OVERWRITE) added."""
    if mode == NONE:
        if snap.commit_kind == COMPACT or (snap.commit_kind == OVERWRITE and not read_overwrite) or \
                snap.commit_kind not in (APPEND, OVERWRITE):
            return []
        manifests = store.read_manifest_list(snap.delta_manifest_list, snap.delta_manifest_list_size)
    else:
        if not snap.changelog_manifest_list:
            return []
        manifests = store.read_manifest_list(snap.changelog_manifest_list, snap.changelog_manifest_list_size)
    return [mf.ManifestEntry(e.kind, e.partition, e.bucket, e.total_buckets,
                             replace(e.file, file_path=store.data_file_path(e)))
            for e in store.entries(manifests) if e.kind == mf.ADD]


__all__ = ["producer", "bucket_changelog", "diff_states", "compaction_changelog", "CompactionChangelog", "snapshot_changes",
           "NONE", "INPUT", "LOOKUP", "FULL_COMPACTION", "KIND_LABELS"]
