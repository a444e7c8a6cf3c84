# pyright: strict
"""Compaction of a bucket of a table with deletion vectors (``icefloe.paimon.deletion_vectors``).

The picked runs (every level-0 run, and the runs universal compaction takes with them) are read
minus their vectors' rows. For each of their keys, the key's live record in the files left out
is looked up (each key has at most one live record above level 0) and merged in as the oldest
record; that record's position is added to its file's vector. The merged records, without
deletes (a vector now hides the old record), are written at the output level, and the bucket's
vectors -- old ones of the files left out, plus the new positions; none for the picked files,
which the compaction removes -- are written as the bucket's new index file. Runs wherever it is
called (a Spark task per bucket).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from icefloe.paimon import changelog as cl
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon import merge as mg
from icefloe.paimon.arrow_read import read_data_file
from icefloe.paimon.kv_writer import write_merged_file

if TYPE_CHECKING:
    import pyarrow as pa
    from pyroaring import BitMap

    from icefloe.core.io import FileIO
    from icefloe.paimon.data_file import DataFileMeta, DataFileNamer
    from icefloe.paimon.dynamic_bucket import IndexFile
    from icefloe.paimon.file_store import FileStore
    from icefloe.paimon.schema import TableSchema
    from icefloe.paimon.types import DataField

# a data file of a compaction: (path, the fields it was written with, file name)
FileRef = tuple[str, Sequence["DataField"], str]


def _kv(io: FileIO, path: str, fields: Sequence[DataField], schema: TableSchema,
        deleted: Optional[BitMap]) -> pa.Table:
    """A file's records (value columns, sequence, kind) minus the rows ``deleted`` marks, with
    their positions in ``_POS``."""
    import numpy as np
    import pyarrow as pa

    data = mg.read_kv_file(path, io, fields, schema.fields)
    data = data.append_column("_POS", pa.array(np.arange(data.num_rows, dtype=np.int64)))
    return dv.without_positions(data, deleted)


def _key_positions(io: FileIO, path: str, file_fields: Sequence[DataField], schema: TableSchema,
                   keys: Sequence[str], wanted: pa.Table, deleted: Optional[BitMap]) -> pa.Table:
    """A file's key columns (named as ``schema`` names them, typed as ``wanted``) and positions,
    minus the rows ``deleted`` marks: all a lookup needs when the found record's value is not."""
    import numpy as np
    import pyarrow as pa

    by_id = {f.id: f.name for f in file_fields}
    data = read_data_file(path, io, columns=[by_id[schema.field(k).id] for k in keys])
    data = pa.Table.from_arrays([data.column(i).cast(wanted.schema.field(k).type) for i, k in enumerate(keys)],
                                names=list(keys))
    data = data.append_column("_POS", pa.array(np.arange(data.num_rows, dtype=np.int64)))
    return dv.without_positions(data, deleted)


def compact_bucket_dv(io: FileIO, store: FileStore, schema: TableSchema, picked: Sequence[FileRef],
                      others: Sequence[FileRef], vectors: Optional[dv.BucketVectors],
                      directory: str, namer: DataFileNamer, written: list[str], level: int, target_file_size: int,
                      picked_levels: Sequence[int] = (), lookup_changelog: bool = False
                      ) -> tuple[list[DataFileMeta], Optional[IndexFile], bool, Optional[pa.Table]]:
    """Compact one bucket: ``picked`` and ``others`` are ``(path, fields, file name)`` of the runs
    merged and of the files left out, ``vectors`` the bucket's ``BucketVectors`` (or None).
    Returns (new data file metas, the bucket's new vector IndexFile or None, whether its vectors
    changed, the lookup changelog records or None). Files written are appended to ``written``.
    With ``lookup_changelog`` the changes of the keys of the level-0 runs (``picked_levels``) are
    computed: their live records above level 0 before, their merged records after."""
    import pyarrow as pa
    from pyroaring import BitMap

    current: dict[str, BitMap] = vectors.load(io) if vectors is not None else {}
    keys = mg.trimmed_primary_keys(schema.primary_keys, schema.partition_keys)
    names = [f.name for f in schema.fields]
    cols = names + list(mg.SYSTEM_COLUMNS)
    parts = [_kv(io, p, ff, schema, current.get(n)).select(cols) for p, ff, n in picked]
    levels = list(picked_levels) or [0] * len(parts)
    records = pa.concat_tables(parts, promote_options="permissive") if parts else None
    before = [part for part, lvl in zip(parts, levels) if lvl > 0]
    changed = any(n in current for _p, _ff, n in picked)
    new_vectors = {n: BitMap(current[n]) for _p, _ff, n in others if n in current}
    # deduplicate without a changelog or sequence field: the newest picked record wins whatever
    # was found, so the lookup reads only the other files' keys and marks positions (as Paimon's
    # writers keep positions alone then)
    positions_only = (mg.merge_engine(schema.options) == "deduplicate" and not lookup_changelog
                      and not mg.sequence_fields(schema.options))
    if records is not None and records.num_rows and others:
        wanted = mg.distinct_keys([records], keys)
        looked_up: list[pa.Table] = []
        for path, ff, name in others:
            if positions_only:
                found = _key_positions(io, path, ff, schema, keys, wanted, current.get(name)).join(
                    wanted, keys, join_type="left semi")
                if found.num_rows:
                    new_vectors.setdefault(name, BitMap()).update(found.column("_POS").to_pylist())
                    changed = True
                continue
            rows = _kv(io, path, ff, schema, current.get(name))
            hit = rows.join(wanted, keys, join_type="left semi")
            if not hit.num_rows:
                continue
            new_vectors.setdefault(name, BitMap()).update(hit.column("_POS").to_pylist())
            looked_up.append(hit.select(cols))
            before.append(hit.select(cols))
            changed = True
        if looked_up:                 # the looked-up records are older: they go first
            records = pa.concat_tables(looked_up + [records], promote_options="permissive")
    metas: list[DataFileMeta] = []
    changelog: Optional[pa.Table] = None
    if records is not None and records.num_rows:
        engine = mg.merge_engine(schema.options)
        merged = mg.merge(records, keys, names, engine, schema.options, schema.primary_keys, store.table_path,
                          keep_sequence=True, keep_deletes=True)
        merged = merged.filter(mg.is_live(merged.column(mg.VALUE_KIND)))     # each kept with its kind (+I, +U)
        if lookup_changelog:
            changelog = _lookup_changelog(parts, levels, before, merged.drop_columns([mg.VALUE_KIND]), keys, names,
                                          engine, schema)
        rows_per_file = max(1, int(target_file_size // max(1, merged.nbytes // max(1, merged.num_rows))))
        for start in range(0, merged.num_rows, rows_per_file):
            meta = write_merged_file(store, schema, merged.slice(start, rows_per_file), directory, namer, written,
                                     level)
            if meta is not None:
                metas.append(meta)
    index: Optional[IndexFile] = None
    if changed:
        index = dv.write_index(store, new_vectors, f"index-{namer.uuid}-{len(written)}")
        if index is not None:
            assert index.file_path is not None       # write_index names the file it wrote
            written.append(index.file_path)
    return metas, index, changed, changelog


def _lookup_changelog(parts: Sequence[pa.Table], levels: Sequence[int], before: Sequence[pa.Table], merged: pa.Table,
                      keys: Sequence[str], names: list[str], engine: str, schema: TableSchema) -> Optional[pa.Table]:
    """The changes of the keys of the level-0 runs: their live records above level 0 (each key
    has at most one) against their merged records."""
    import pyarrow as pa

    touched = mg.distinct_keys([part for part, lvl in zip(parts, levels) if lvl == 0], keys)
    if touched is None:
        return None
    cols = names + [mg.SEQUENCE]
    if before:
        old = pa.concat_tables([b.select(cols) for b in before], promote_options="permissive")
    else:
        old = merged.select(cols).slice(0, 0)
    old = old.join(touched, keys, join_type="left semi").sort_by([(k, "ascending") for k in keys])
    now = merged.select(cols).join(touched, keys, join_type="left semi").sort_by([(k, "ascending") for k in keys])
    return cl.diff_states(old, now, keys, names, engine, schema.core_options.changelog_row_deduplicate)


__all__ = ["compact_bucket_dv"]
