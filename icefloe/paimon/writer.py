# pyright: strict
"""Writing Arrow data as Paimon data files (no Spark): the task side of a write.

``write_arrow_files(table, record_batches)`` fits the batches to the table schema,
splits the rows by partition and bucket, writes one file (Parquet, ORC or Avro per ``file.format``) per
(partition, bucket) -- more when it exceeds ``target-file-size`` -- into
``<partition>/bucket-<N>/data-<uuid>-<n>.<format>`` and returns one
``CommitMessage`` per (partition, bucket). It runs inside Spark tasks (the
Python data source writer) as well as in the driver; nothing is committed.

Parquet files carry every column, partition keys included, with Paimon's field
ids as Parquet field ids, ``zstd`` compressed (``file.compression``).
Sequence numbers: a bucket-unaware file numbers its rows from 0 (Paimon's
append writer ignores earlier files there); in a fixed bucket they continue
after the largest sequence number already committed in that bucket.
"""
from __future__ import annotations

import io as _io
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Protocol, Sequence

from icefloe.core.arrow import dictionary_columns, fit_array
from icefloe.core.io import staged_files
from icefloe.errors import RequiredFieldNullError, SchemaError, SchemaMismatchError
from icefloe.paimon import avro_data
from icefloe.paimon import file_index as fi
from icefloe.paimon import row_tracking
from icefloe.paimon import types as pt
from icefloe.paimon.bucket import buckets_of_columns
from icefloe.paimon.data_file import CommitMessage
from icefloe.paimon.data_file import DataFileMeta, DataFileNamer, local_now_millis
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.schema import TableSchema
from icefloe.paimon.stats import stats_from_arrow, value_stats
from icefloe.core.ranges import arrow_out_of_range, out_of_range_message
from icefloe.paimon.binary_row import encode_row

if TYPE_CHECKING:
    import numpy.typing as npt
    import pyarrow as pa

    from icefloe.core.io import FileIO
    from icefloe.paimon.types import DataField

# (partition values, bucket) -> the indices of its rows (None: every row)
RowGroups = dict[tuple[tuple[Any, ...], int], Optional["npt.NDArray[Any]"]]


class WritableTable(Protocol):
    """What ``write_arrow_files`` needs of a table (a ``FileStoreTable``)."""

    @property
    def name(self) -> str: ...

    @property
    def store(self) -> FileStore: ...

    @property
    def table_schema(self) -> TableSchema: ...


# --------------------------------------------------------------------------- fitting data to the schema
def _compatible(src: pa.DataType, dst: pa.DataType) -> bool:
    """Whether Arrow type ``src`` converts to ``dst`` without loss or reinterpretation."""
    import pyarrow.types as t

    if src == dst or t.is_null(src):
        return True
    ints = [t.is_int8, t.is_int16, t.is_int32, t.is_int64]
    rank: Callable[[pa.DataType], Optional[int]] = lambda x: next((i for i, f in enumerate(ints) if f(x)), None)  # noqa: E731
    rank_src, rank_dst = rank(src), rank(dst)
    if rank_src is not None and rank_dst is not None:
        return rank_src <= rank_dst
    if t.is_floating(src) and t.is_floating(dst):
        return src.bit_width <= dst.bit_width
    if t.is_decimal(src) and t.is_decimal(dst):
        return src.scale <= dst.scale and src.precision - src.scale <= dst.precision - dst.scale
    if t.is_timestamp(src) and t.is_timestamp(dst):
        # naive values for a zoned column are instants in UTC (Arrow's reading of them);
        # zoned values for a naive column would lose their zone: refused
        return (src.tz is None) == (dst.tz is None) or src.tz is None
    strings: tuple[Callable[[pa.DataType], bool], ...] = (t.is_string, t.is_large_string, lambda x: str(x) == "string_view")
    if any(f(src) for f in strings) and any(f(dst) for f in strings):
        return True
    if (t.is_binary(src) or t.is_large_binary(src) or t.is_fixed_size_binary(src)) and t.is_binary(dst):
        return True
    if t.is_date(src) and t.is_date(dst):
        return True
    if t.is_nested(src) and t.is_nested(dst):
        return True  # checked by the cast itself
    return False


def align_arrow(data: pa.Table, fields: Sequence[DataField], table_name: str = "table") -> pa.Table:
    """``data`` (pyarrow.Table) projected, cast and checked against the table's fields."""
    import pyarrow as pa

    by_name: dict[str, str] = {}
    for name in data.column_names:
        if name.lower() in by_name:
            raise SchemaMismatchError(f"data has two columns named {name!r}")
        by_name[name.lower()] = name
    extra = set(by_name) - {f.name.lower() for f in fields}
    if extra:
        raise SchemaMismatchError(f"data has columns that table {table_name} does not: {sorted(extra)}; "
                                  f"table columns are {[f.name for f in fields]}")
    target = pt.to_arrow_schema(fields)
    cols: list[pa.Array] = []
    for f, tf in zip(fields, target):
        src_name = by_name.get(f.name.lower())
        if src_name is None:
            if not f.nullable:
                raise SchemaMismatchError(f"required column {f.name!r} of table {table_name} is missing from the data")
            cols.append(pa.nulls(data.num_rows, tf.type))
            continue
        col = data.column(src_name)
        if not _compatible(col.type, tf.type):
            raise SchemaMismatchError(
                f"column {f.name!r} has type {col.type} but table {table_name} declares {f.type}; "
                "cast it explicitly")
        if col.type != tf.type and pa.types.is_nested(tf.type):     # ROW fields by name, at any depth
            col = fit_array(col, tf.type, f.name, fill_missing=False)   # (every field of a row given, as from Spark)
        elif col.type != tf.type:
            try:
                col = col.cast(tf.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise SchemaMismatchError(f"column {f.name!r} cannot be converted to {f.type}: {e}") from None
        if not f.nullable and col.null_count:
            raise RequiredFieldNullError(f"null value in required column '{f.name}' of table {table_name}")
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=target)


def check_partition_ranges(data: pa.Table, partition_keys: Iterable[str], table_name: str = "table") -> None:
    """Reject date and timestamp partition values outside years 1..9999 (``core.ranges``):
    their directory names and partition values cannot be represented."""
    for key in partition_keys:
        bad = arrow_out_of_range(data.column(key))
        if bad is not None:
            raise SchemaMismatchError(out_of_range_message(key, bad, table_name))


# --------------------------------------------------------------------------- grouping
def group_rows(data: pa.Table, schema: TableSchema) -> RowGroups:
    """(partition tuple, bucket) -> row indices."""
    import numpy as np

    n = data.num_rows
    num_buckets = schema.num_buckets
    if num_buckets > 0:
        keys = schema.bucket_key_fields
        buckets = buckets_of_columns([data.column(k.name) for k in keys], [k.type for k in keys], num_buckets)
    else:
        buckets = np.zeros(n, dtype=np.int32)
    if not schema.partition_keys:
        if num_buckets <= 0:
            return {((), 0): None}
        return {((), int(b)): np.nonzero(buckets == b)[0] for b in np.unique(buckets)}
    import pyarrow as pa

    keys = {f"k{i}": data.column(k) for i, k in enumerate(schema.partition_keys)}
    keys["bucket"] = pa.array(buckets, pa.int32())
    index = pa.table({**keys, "row": pa.array(np.arange(n, dtype=np.int64))})
    grouped = index.group_by(list(keys), use_threads=False).aggregate([("row", "list")])
    groups: RowGroups = {}
    part_values = [grouped.column(f"k{i}").to_pylist() for i in range(len(schema.partition_keys))]
    for g, (bucket, rows) in enumerate(zip(grouped.column("bucket").to_pylist(),
                                           grouped.column("row_list").to_pylist())):
        groups[(tuple(c[g] for c in part_values), int(bucket))] = np.asarray(sorted(rows))
    return groups


def restored_sequence_numbers(store: FileStore, buckets: Optional[Iterable[tuple[bytes, int]]] = None
                              ) -> dict[tuple[bytes, int], int]:
    """Largest committed sequence number per (partition bytes, bucket) of the latest snapshot: of
    every bucket, or of ``buckets`` only (reading only the manifests that may hold them, and of their
    files only the columns a restore needs: ``FileStore.bucket_files``)."""
    out: dict[tuple[bytes, int], int] = {}
    latest = store.snapshots.latest()
    if buckets is not None:
        return {key: files.max_sequence_number() for key, files in store.bucket_files(latest, buckets).items()}
    for e in store.live_entries(latest):
        key = (e.partition.data, e.bucket)
        out[key] = max(out.get(key, -1), e.file.max_sequence_number)
    return out


# --------------------------------------------------------------------------- writing
def rows_per_block(data: pa.Table, block_size: Optional[int]) -> Optional[int]:
    """Rows per Parquet row group for ``file.block-size`` bytes (None: Arrow's default). Arrow
    cuts row groups by rows, so the rows' in-memory size stands for their encoded size."""
    if block_size is None or data.num_rows == 0:
        return None
    return max(1, int(block_size * data.num_rows / max(data.nbytes, 1)))


def write_parquet_bytes(data: pa.Table, compression: str = "zstd", block_size: Optional[int] = None) -> bytes:
    """``data`` as one Parquet file; ``block_size``: bytes per row group (``file.block-size``)."""
    import pyarrow.parquet as pq

    buf = _io.BytesIO()
    # pyarrow takes None (no compression) and a list of columns to dictionary-encode, beyond its annotations
    pq.write_table(data, buf, compression=None if compression in ("none", "uncompressed") else compression,
                   use_compliant_nested_type=True, use_dictionary=dictionary_columns(data),
                   row_group_size=rows_per_block(data, block_size),
                   write_page_checksum=True)  # readers can catch bit rot
    return buf.getvalue()


def write_orc_bytes(data: pa.Table, compression: str = "zstd", block_size: Optional[int] = None) -> bytes:
    """``data`` as one ORC file (Arrow's ORC writer; ``file.compression`` as its codec,
    ``block_size`` as its stripe size in bytes, as Paimon sets ``orc.stripe.size``)."""
    import pyarrow.orc as po

    buf = _io.BytesIO()
    po.write_table(data, buf, compression="uncompressed" if compression == "none" else compression,
                   **({} if block_size is None else {"stripe_size": block_size}))
    return buf.getvalue()


def write_data_bytes(data: pa.Table, file_format: str, compression: str = "zstd",
                     block_size: Optional[int] = None) -> bytes:
    """``data`` as one data file of ``file.format`` (parquet or orc), row groups or stripes of
    ``block_size`` bytes (None: the writer's default)."""
    if file_format == "orc":
        return write_orc_bytes(data, compression, block_size)
    if file_format != "parquet":
        raise SchemaError(f"file.format {file_format!r} is not supported here; icefloe writes parquet or orc "
                          "(avro through write_table_file, which knows the columns' Paimon types)")
    return write_parquet_bytes(data, compression, block_size)


def write_table_file(data: pa.Table, schema: TableSchema) -> bytes:
    """``data`` as one data file of table ``schema`` (its ``file.format``, ``file.compression``
    and ``file.block-size``). An Avro file's schema comes from the columns' Paimon types."""
    co = schema.core_options
    if co.file_format == "avro":
        return avro_data.write_avro_bytes(data, avro_data.columns_of(data.schema, schema.fields),
                                           co.file_compression)
    return write_data_bytes(data, co.file_format, co.file_compression, co.block_size())


def put_data_file(io: FileIO, path: str, raw: bytes, written: list[str]) -> None:
    """``raw`` as the new data file ``path``, which joins ``written`` first (so a failure deletes
    what it left). Written in place and not synced, as Spark's tasks write theirs: nothing reads a
    data file before a commit names it."""
    written.append(path)
    with io.open_write(path) as sink:
        sink.write(raw)


def write_arrow_table(store: FileStore, schema: TableSchema, data: pa.Table, table_name: str = "table",
                      namer: Optional[DataFileNamer] = None, tracked: bool = False) -> list[CommitMessage]:
    """Write an Arrow table (any column order) as data files; return the commit messages.
    ``tracked``: ``data`` also has the rows' ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (rows a
    row-tracking table moves to new files), written as the files' last columns and named in
    their ``_WRITE_COLS`` (``row_tracking``)."""
    fields = list(schema.fields) + (list(row_tracking.FIELDS) if tracked else [])
    data = align_arrow(data, fields, table_name)
    if data.num_rows == 0:
        return []
    check_partition_ranges(data, schema.partition_keys, table_name)
    co = schema.core_options
    namer = namer or DataFileNamer(co.data_file_prefix, co.file_format)
    total_buckets = schema.num_buckets if schema.num_buckets > 0 else -1
    groups = group_rows(data, schema)
    # the buckets written: only their sequence numbers are restored (and only their manifests read)
    restored = restored_sequence_numbers(store, [(encode_row(list(p), schema.partition_types).data, b)
                                                 for p, b in groups]) if total_buckets > 0 else {}
    target = co.target_file_size
    messages: list[CommitMessage] = []
    with staged_files(store.io) as written:
        for (partition, bucket), rows in groups.items():
            part_data = data if rows is None else data.take(rows)
            seq_key = (encode_row(list(partition), schema.partition_types).data, bucket)
            next_seq = restored.get(seq_key, -1) + 1
            directory = store.bucket_dir(partition, bucket)
            files: list[DataFileMeta] = []
            per_file = max(1, int(part_data.num_rows * target / max(part_data.nbytes, 1)))
            for start in range(0, part_data.num_rows, per_file):
                chunk = part_data.slice(start, per_file)
                meta = write_one(store.io, schema, chunk, directory, namer, written)
                if tracked:
                    meta = replace(meta, write_cols=tuple(f.name for f in fields))
                files.append(meta.with_sequence_numbers(next_seq))
                if total_buckets > 0:
                    next_seq += chunk.num_rows
            messages.append(CommitMessage(tuple(partition), bucket, total_buckets, files))
    return messages


def write_one(io: FileIO, schema: TableSchema, chunk: pa.Table, directory: str, namer: DataFileNamer,
              written: list[str]) -> DataFileMeta:
    """Write ``chunk`` as one data file in ``directory`` (its path appended to ``written``); its meta,
    sequence numbers from 0."""
    co = schema.core_options
    name = namer.next()
    path = f"{directory}/{name}"
    raw = write_table_file(chunk, schema)
    put_data_file(io, path, raw, written)
    stats, stats_cols = value_stats(schema.fields, stats_from_arrow(chunk, schema.fields),
                                    co.stats_mode, co.stats_truncate_length)
    embedded, extras = write_file_index(io, schema, chunk, path, written)
    return DataFileMeta(
        file_name=name, file_size=len(raw), row_count=chunk.num_rows, value_stats=stats,
        min_sequence_number=0, max_sequence_number=chunk.num_rows - 1, schema_id=schema.id,
        creation_time=local_now_millis(), value_stats_cols=stats_cols, file_path=path,
        embedded_index=embedded, extra_files=extras,
    )


def write_file_index(io: FileIO, schema: TableSchema, values: pa.Table, data_path: str, written: list[str],
                     index_path: Optional[str] = None) -> tuple[Optional[bytes], tuple[str, ...]]:
    """The file indexes the table's ``file-index.*`` options ask for, built from ``values`` (the
    rows of the data file at ``data_path``): (bytes to embed in its manifest entry, its extra
    files). A container larger than ``file-index.in-manifest-threshold`` is written beside the data
    file as ``<data file>.index`` (or ``index_path``) and named in the extra files instead."""
    wanted = fi.index_options(schema.options)
    raw = fi.build_container(values, schema.fields, wanted)
    if raw is None:
        return None, ()
    if len(raw) <= wanted.threshold:
        return raw, ()
    path = index_path or fi.index_file_name(data_path)
    put_data_file(io, path, raw, written)
    return None, (path.rsplit("/", 1)[-1],)


def write_arrow_files(table: WritableTable, record_batches: Iterable[Optional[pa.RecordBatch]]) -> list[CommitMessage]:
    """Write record batches as data files of ``table`` (a PaimonTable); returns picklable
    commit messages for ``table.commit(messages)``. Usable inside a Spark task."""
    import pyarrow as pa

    batches = [b for b in record_batches if b is not None and b.num_rows > 0]
    if not batches:
        return []
    data = pa.Table.from_batches(batches)
    return write_arrow_table(table.store, table.table_schema, data, table.name)
