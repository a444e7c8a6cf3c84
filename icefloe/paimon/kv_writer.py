# pyright: strict
"""Writing primary-key tables: records as level-0 key-value data files.

Every row written is a record of its key: an insert/update (+I) or, for deletes, a -D
record (or the kind a ``rowkind.field`` column names: +I, -U, +U, -D). Per (partition,
bucket), records are numbered in arrival order from one past the highest sequence number
committed in that bucket, sorted by key (the records of one key in sequence order), and
written with the layout Paimon's writers use: ``_KEY_<k>`` for each stored key column,
``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, then every column of the table. With the
``deduplicate`` engine only the newest record of a key within one write is kept (it wins
at read time anyway, and a -D deletes older records); the other engines merge the write's
records of a key into one, as Paimon's write buffer does: a data file holds each key once.

The manifest records the file's key range (``_MIN_KEY``/``_MAX_KEY``), key statistics,
value statistics, sequence range, level 0 and the number of retracting records. Usable on
the driver or inside a Spark task.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from icefloe.core.io import staged_files
from icefloe.errors import SchemaMismatchError
from icefloe.paimon import dynamic_bucket as db
from icefloe.paimon import merge as mg
from icefloe.paimon.binary_row import encode_row
from icefloe.paimon.data_file import CommitMessage
from icefloe.paimon.data_file import (FILE_SOURCE_APPEND, FILE_SOURCE_COMPACT, DataFileMeta, DataFileNamer,
                                      local_now_millis)
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.schema import TableSchema
from icefloe.paimon.stats import SimpleStats, stats_from_arrow, value_stats
from icefloe.paimon.writer import (align_arrow, check_partition_ranges, group_rows, put_data_file, restored_sequence_numbers,
                                   write_file_index, write_table_file)

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.paimon.dynamic_bucket import IndexFile

KINDS = {"+I": mg.INSERT, "-U": mg.UPDATE_BEFORE, "+U": mg.UPDATE_AFTER, "-D": mg.DELETE}


def row_kinds(data: pa.Table, schema: TableSchema, table_name: str, kinds: Any = None) -> pa.Array:
    """The int8 row kind of every row: ``kinds`` if given, else the ``rowkind.field``
    column's (+I, -U, +U, -D), else inserts."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if kinds is not None:
        return pa.array(kinds, pa.int8()) if not isinstance(kinds, pa.Array) else kinds.cast(pa.int8())
    field = schema.options.get("rowkind.field")
    if not field:
        return pa.array([mg.INSERT] * data.num_rows, pa.int8())
    names = {n.lower(): n for n in data.column_names}
    if field.lower() not in names:
        raise SchemaMismatchError(f"table {table_name} takes row kinds from column {field!r} (rowkind.field), "
                                  "which the data lacks")
    col = data.column(names[field.lower()])
    bad = pc.invert(pc.is_in(col, value_set=pa.array(list(KINDS))))
    if pc.any(pc.fill_null(bad, True)).as_py():
        raise SchemaMismatchError(f"column {field!r} (rowkind.field) of table {table_name} holds a value that "
                                  f"is not one of {', '.join(KINDS)}")
    return pa.array([KINDS[v] for v in col.to_pylist()], pa.int8())


def write_kv_table(store: FileStore, schema: TableSchema, data: pa.Table, table_name: str,
                   restored: Optional[Mapping[tuple[bytes, int], int]], kinds: Any = None, namer: Optional[DataFileNamer] = None, seq_offset: int = 0,
                   index_base: Optional[int] = None) -> list[CommitMessage]:
    """Write ``data`` (a pyarrow Table in arrival order) as key-value files of a primary-key
    table. ``restored`` maps (partition bytes, bucket) to the highest committed sequence
    number (``writer.restored_sequence_numbers``; None: those of the buckets written are read
    here); ``seq_offset`` moves this writer's
    numbers past those of writers of the same commit with smaller offsets. Dynamic-bucket
    tables assign buckets from the HASH index of snapshot ``index_base`` (None: the latest;
    0: none yet) and write the index files of the buckets that gain keys."""
    import pyarrow as pa

    row_kind = row_kinds(data, schema, table_name, kinds)
    data = align_arrow(data, schema.fields, table_name)
    if data.num_rows == 0:
        return []
    check_partition_ranges(data, schema.partition_keys, table_name)
    data = data.append_column(mg.VALUE_KIND, row_kind)
    co = schema.core_options
    namer = namer or DataFileNamer(co.data_file_prefix, co.file_format)
    keys = mg.trimmed_primary_keys(schema.primary_keys, schema.partition_keys)
    engine = mg.merge_engine(schema.options)
    messages: list[CommitMessage] = []
    cnamer: Optional[DataFileNamer] = None
    if co.changelog_producer == "input":      # the records as written, to changelog files too
        cnamer = namer.sibling(co.changelog_file_prefix)
    dynamic = schema.num_buckets == -1
    base = None
    if dynamic:
        snap = store.snapshots.latest() if index_base is None else \
            (store.snapshots.snapshot(index_base) if index_base else None)
        base = snap.id if snap is not None else None
        groups, changed = db.assign_buckets(store, schema, data, snap)
    else:
        groups, changed = group_rows(data, schema), {}
    if restored is None:
        restored = restored_sequence_numbers(store, [(encode_row(list(p), schema.partition_types).data, b)
                                                     for p, b in groups])
    with staged_files(store.io) as written:
        for (partition, bucket), rows in groups.items():
            part = data if rows is None else data.take(rows)
            seq_key = (encode_row(list(partition), schema.partition_types).data, bucket)
            first = restored.get(seq_key, -1) + 1 + seq_offset
            part = part.append_column(mg.SEQUENCE, pa.array(range(first, first + part.num_rows), pa.int64()))
            directory = store.bucket_dir(partition, bucket)
            meta = _write_file(store, schema, part, keys, engine, directory, namer, written)
            changelog: list[DataFileMeta] = []
            if cnamer is not None:
                records = mg.sort_records(part, keys, schema.options).select(
                    [f.name for f in schema.fields] + list(mg.SYSTEM_COLUMNS))
                cmeta = _write_file(store, schema, records, keys, engine, directory, cnamer, written, merged=True)
                changelog = [cmeta] if cmeta is not None else []
            index: list[IndexFile] = []
            if (partition, bucket) in changed:             # named after the data files' writer
                f = db.write_index_file(store, changed[(partition, bucket)], f"index-{namer.uuid}-{len(messages)}")
                written.append(f.file_path)
                index.append(f)
            if meta is None and not index and not changelog:        # nothing left (ignored deletes)
                continue
            messages.append(CommitMessage(tuple(partition), bucket, schema.num_buckets, [meta] if meta else [],
                                          index_files=index, index_base=base, changelog_files=changelog))
    return messages


def _write_file(store: FileStore, schema: TableSchema, part: pa.Table, keys: Sequence[str], engine: str,
                directory: str, namer: DataFileNamer, written: list[str], merged: bool = False, level: int = 0) -> Optional[DataFileMeta]:
    """One key-value file of ``part``'s records (merged to one per key first, unless
    ``merged``: then ``part`` already holds each key once, in key order, with its
    ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``) at LSM ``level``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [f.name for f in schema.fields]
    if not merged:
        part = mg.merge_records(part, keys, names, engine, schema.options, schema.primary_keys, store.table_path)
    if part.num_rows == 0:
        return None
    columns = [part.column(k) for k in keys] + [part.column(mg.SEQUENCE), part.column(mg.VALUE_KIND)] + \
        [part.column(n) for n in names]
    key_fields = [schema.field(k) for k in keys]
    arrow = pa.Table.from_arrays(columns, names=[mg.KEY_PREFIX + k for k in keys] + [mg.SEQUENCE, mg.VALUE_KIND] + names)
    arrow = arrow.cast(_file_schema(arrow.schema, keys, len(names)))
    co = schema.core_options
    name = namer.next()
    path = f"{directory}/{name}"
    raw = write_table_file(arrow, schema)
    put_data_file(store.io, path, raw, written)
    key_types = [f.type for f in key_fields]
    key_cols = part.select(keys)
    key_stats_cols = stats_from_arrow(key_cols, key_fields)
    key_stats = SimpleStats(encode_row([c.min for c in key_stats_cols], key_types),
                            encode_row([c.max for c in key_stats_cols], key_types),
                            tuple(c.null_count for c in key_stats_cols))
    values = part.select(names)
    stats, stats_cols = value_stats(schema.fields, stats_from_arrow(values, schema.fields), co.stats_mode,
                                    co.stats_truncate_length)
    embedded, extras = write_file_index(store.io, schema, values, path, written)
    seqs = part.column(mg.SEQUENCE)
    retract = pc.sum(pc.cast(pc.is_in(part.column(mg.VALUE_KIND),
                                      value_set=pa.array([mg.UPDATE_BEFORE, mg.DELETE], pa.int8())), pa.int64()))
    first_key = [key_cols.column(i)[0].as_py() for i in range(len(keys))]
    last_key = [key_cols.column(i)[part.num_rows - 1].as_py() for i in range(len(keys))]
    return DataFileMeta(
        file_name=name, file_size=len(raw), row_count=part.num_rows,
        min_key=encode_row(first_key, key_types), max_key=encode_row(last_key, key_types), key_stats=key_stats,
        value_stats=stats, min_sequence_number=pc.min(seqs).as_py(), max_sequence_number=pc.max(seqs).as_py(),
        schema_id=schema.id, level=level, creation_time=local_now_millis(), delete_row_count=retract.as_py() or 0,
        value_stats_cols=stats_cols, file_path=path, file_source=FILE_SOURCE_COMPACT if level else FILE_SOURCE_APPEND,
        embedded_index=embedded, extra_files=extras)


def _file_schema(schema: pa.Schema, keys: Sequence[str], n_values: int) -> pa.Schema:
    """Key copies, sequence number and row kind are required columns (as Paimon writes them)."""
    import pyarrow as pa

    fields = [schema.field(i).with_nullable(False) for i in range(len(keys) + 2)] + \
        [schema.field(i) for i in range(len(keys) + 2, len(keys) + 2 + n_values)]
    return pa.schema(fields)


def write_merged_file(store: FileStore, schema: TableSchema, merged: pa.Table, directory: str, namer: DataFileNamer,
                      written: list[str],
                      level: int) -> Optional[DataFileMeta]:
    """A file of already merged records (each key once, in key order, with
    ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``) at ``level``, as compaction writes them."""
    keys = mg.trimmed_primary_keys(schema.primary_keys, schema.partition_keys)
    return _write_file(store, schema, merged, keys, mg.merge_engine(schema.options), directory, namer, written,
                       merged=True, level=level)


__all__ = ["write_kv_table", "write_merged_file", "row_kinds", "KINDS"]
