# pyright: strict
"""Primary-key tables: the key-value layout of their data files and the merge engines.

A primary-key table's data files hold one record per change: the key columns again as
``_KEY_<name>`` (files of some writers omit these), ``_SEQUENCE_NUMBER`` (the order of
changes within a bucket), ``_VALUE_KIND`` (the row kind: 0 +I insert, 1 -U update
before, 2 +U update after, 3 -D delete) and then the value columns. A read merges all
records of a key, over all files of its (partition, bucket), oldest first, with the
table's ``merge-engine``:

- ``deduplicate`` (default): the newest record wins; a newest -U/-D removes the key.
- ``first-row``: the oldest insert wins; -U/-D records are refused unless ``ignore-delete``.
- ``partial-update``: per column, the newest non-null value, with sequence groups and
  per-column aggregate functions (``icefloe.paimon.merge_function``).
- ``aggregation``: per column, ``fields.<name>.aggregate-function`` (default
  ``fields.default-aggregate-function``, else ``last_non_null_value``) over the records,
  -U/-D records retracted.

``ignore-delete`` drops -U/-D records before any engine sees them. Where Arrow's hash
aggregations give the engine's result exactly (no retraction, no sequence group, functions
Arrow has), whole buckets merge in Arrow; otherwise key by key with the merge function.

Records are ordered by ``sequence.field`` columns when the table sets them, then by
sequence number. The stored key is the primary key without the partition keys (the
"trimmed" key), unless that would leave nothing.

Everything here works on one bucket's records as Arrow and runs wherever it is called
(in Spark tasks for ``to_spark``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Optional, Sequence

from icefloe.errors import CorruptDataFileError, UnsupportedTableError
from icefloe.paimon.arrow_read import iter_data_file, read_data_file
from icefloe.paimon.merge_function import aggregate_function_name, merge_function
from icefloe.paimon.schema import evolve_arrow
from icefloe.paimon.types import DataField, to_arrow_schema

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.core.io import FileIO
    from icefloe.paimon.schema import TableSchema

SEQUENCE = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
KEY_PREFIX = "_KEY_"
SYSTEM_COLUMNS = (SEQUENCE, VALUE_KIND)

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
KIND_NAMES = {INSERT: "+I", UPDATE_BEFORE: "-U", UPDATE_AFTER: "+U", DELETE: "-D"}

MERGE_ENGINE = "merge-engine"
ENGINES = ("deduplicate", "first-row", "partial-update", "aggregation")

# Arrow hash aggregations for the functions that have one: (function, skip nulls)
_AGGREGATES = {
    "sum": ("sum", True), "product": ("product", True), "max": ("max", True), "min": ("min", True),
    "last_value": ("last", False), "last_non_null_value": ("last", True),
    "first_value": ("first", False), "first_non_null_value": ("first", True),
    "bool_and": ("all", True), "bool_or": ("any", True), "primary_key": ("last", False),
}


def trimmed_primary_keys(primary_keys: Sequence[str], partition_keys: Sequence[str]) -> list[str]:
    """The key a primary-key table stores: its primary key without the partition keys."""
    trimmed = [k for k in primary_keys if k not in partition_keys]
    return trimmed or list(primary_keys)


def merge_engine(options: Mapping[str, str]) -> str:
    engine = str(options.get(MERGE_ENGINE, "deduplicate")).strip().lower()
    if engine not in ENGINES:
        raise UnsupportedTableError(f"merge engine {engine!r} is not one icefloe knows ({', '.join(ENGINES)})")
    return engine


def sequence_fields(options: Mapping[str, str]) -> list[str]:
    raw = options.get("sequence.field") or ""
    return [f.strip() for f in str(raw).split(",") if f.strip()]


def _truthy(options: Mapping[str, str], key: str) -> bool:
    return str(options.get(key, "false")).strip().lower() == "true"


def aggregate_function(name: str, primary_keys: Sequence[str], options: Mapping[str, str], seq_fields: Sequence[str] = ()) -> str:
    """The aggregation engine's function for column ``name`` (Paimon's precedence)."""
    return aggregate_function_name(name, primary_keys, options, seq_fields)


def check_engine_options(engine: str, value_names: Sequence[str], primary_keys: Sequence[str], options: Mapping[str, str],
                         table: str) -> None:
    """Refuse, before any row is read, options this engine cannot merge (unknown aggregate
    functions, bad sequence groups, conflicting delete options)."""
    if engine in ("partial-update", "aggregation"):
        names = list(primary_keys) + [n for n in value_names if n not in primary_keys]
        merge_function(engine, names, primary_keys, options, [n not in primary_keys for n in names],
                       sequence_fields(options), table)


def row_level_refusal(operation: str, options: Mapping[str, str]) -> "str | None":
    """Why ``operation`` ("delete", "update" or "merge") cannot be written to a primary-key
    table with these options as upserts and DELETE records, or None if it can (Paimon's
    rules): deletes need an engine that removes a row on a -D (deduplicate;
    partial-update with ``partial-update.remove-record-on-delete`` or
    ``...remove-record-on-sequence-group``; aggregation with
    ``aggregation.remove-record-on-delete``) and no ``ignore-delete``; updates cannot go
    to first-row (the first row stays) or aggregation tables (the new row would be
    aggregated into the old)."""
    engine = merge_engine(options)
    if operation in ("update", "merge") and engine in ("first-row", "aggregation"):
        return (f"the {engine} merge engine would {'keep the first row' if engine == 'first-row' else 'aggregate an updated row into the current one'}; "
                "updates go to deduplicate and partial-update tables")
    if operation == "delete":
        if _truthy(options, "ignore-delete") or _truthy(options, f"{engine}.ignore-delete"):
            return "the table ignores deletes ('ignore-delete' = 'true')"
        if engine == "first-row":
            return "the first-row merge engine cannot take deletes"
        if engine == "partial-update" and not (_truthy(options, "partial-update.remove-record-on-delete")
                                               or options.get("partial-update.remove-record-on-sequence-group")):
            return ("a partial-update table removes rows only with 'partial-update.remove-record-on-delete' "
                    "(or 'partial-update.remove-record-on-sequence-group')")
        if engine == "aggregation" and not _truthy(options, "aggregation.remove-record-on-delete"):
            return "an aggregation table removes rows only with 'aggregation.remove-record-on-delete'"
    return None


def _vectorizable(engine: str, names: Sequence[str], primary_keys: Sequence[str], options: Mapping[str, str]) -> bool:
    """Whether Arrow's hash aggregations merge this engine exactly (no retraction present)."""
    if engine == "partial-update":
        return not any(str(k).startswith("fields.") and (str(k).endswith(".sequence-group")
                                                         or str(k).endswith("aggregate-function"))
                       for k in options)
    seq = sequence_fields(options)
    return all(aggregate_function(n, primary_keys, options, seq) in _AGGREGATES for n in names)


def merge(data: pa.Table, keys: Sequence[str], value_names: Sequence[str], engine: str, options: Mapping[str, str],
          primary_keys: Sequence[str] = (), table: str = "table", keep_sequence: bool = False,
          keep_deletes: bool = False) -> pa.Table:
    """The merged rows of one bucket. ``data`` is a pyarrow Table holding the value columns
    ``value_names``, ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` of all its records (any order);
    ``keys`` are the stored key's columns. Returns the value columns, one row per live key,
    sorted by key (with ``keep_sequence``, each key's newest sequence number too). With
    ``keep_deletes`` (a compaction of some runs: older runs may hold the key) a key whose merge
    retracts it stays, and every row carries its ``_VALUE_KIND``."""
    out = _merge(data, keys, value_names, engine, options, primary_keys, table)
    if keep_deletes:
        return out.select(list(value_names) + ([SEQUENCE] if keep_sequence else []) + [VALUE_KIND])
    return out.filter(is_live(out.column(VALUE_KIND))).select(list(value_names) + ([SEQUENCE] if keep_sequence else []))


def is_live(kinds: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A mask of the row kinds that keep a row (+I, +U)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.invert(pc.is_in(kinds, value_set=pa.array([UPDATE_BEFORE, DELETE], pa.int8())))


def sort_records(data: pa.Table, keys: Sequence[str], options: Mapping[str, str]) -> pa.Table:
    """Records in key order, each key's in sequence order (as a bucket's files hold them)."""
    return _sorted(data, keys, options)


def _sorted(data: pa.Table, keys: Sequence[str], options: Mapping[str, str]) -> pa.Table:
    import pyarrow.compute as pc

    order = [(c, "ascending", "at_start") for c in [*keys, *sequence_fields(options), SEQUENCE]]
    # sort_indices is stable: records with equal sequence stay in file order
    return data.take(pc.sort_indices(data, sort_keys=order))


def _merge(data: pa.Table, keys: Sequence[str], value_names: Sequence[str], engine: str,
           options: Mapping[str, str], primary_keys: Sequence[str], table: str) -> pa.Table:
    """One row per key, in key order: the value columns, ``_SEQUENCE_NUMBER`` (the key's
    newest) and ``_VALUE_KIND`` (a retraction where the merge deletes the key). A key's only
    record stays as it is, its row kind too, as in Paimon's readers and writers (merging a
    lone retraction would turn it into an insert)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    names = list(value_names)
    if data.num_rows == 0:
        return data.select(names + list(SYSTEM_COLUMNS))
    data = _sorted(data, keys, options)
    retract = pc.invert(is_live(data.column(VALUE_KIND)))
    has_retract = pc.any(retract).as_py()
    ignore = _truthy(options, "ignore-delete") or _truthy(options, f"{engine}.ignore-delete")
    if has_retract and (ignore or engine == "first-row"):
        if not ignore:
            raise UnsupportedTableError(
                f"table {table}: the {engine} merge engine got DELETE/UPDATE_BEFORE records; "
                "set 'ignore-delete' = 'true' to ignore them")
        data = data.filter(pc.invert(retract))
        has_retract = False
        if data.num_rows == 0:
            return data.select(names + list(SYSTEM_COLUMNS))
    ends = np.flatnonzero(group_edges(data, keys, last=True).to_numpy(zero_copy_only=False))
    starts = np.concatenate([[0], ends[:-1] + 1])
    newest = pa.array(np.maximum.reduceat(data.column(SEQUENCE).to_numpy(), starts), pa.int64())
    if engine in ("deduplicate", "first-row"):
        out = data.take(pa.array(ends if engine == "deduplicate" else starts))
        return out.select(names).append_column(SEQUENCE, newest).append_column(VALUE_KIND, out.column(VALUE_KIND))
    if has_retract or not _vectorizable(engine, value_names, primary_keys, options):
        out = _merge_records_one_by_one(data, ends, keys, names, engine, options, primary_keys, table)
        out = out.select(names).append_column(SEQUENCE, newest).append_column(VALUE_KIND, out.column(VALUE_KIND))
        single = np.flatnonzero(ends == starts)
        if len(single):
            originals = data.take(pa.array(starts[single])).select(names + list(SYSTEM_COLUMNS))
            both = pa.concat_tables([out, originals.cast(out.schema)])
            pick = np.arange(int(out.num_rows))
            pick[single] = out.num_rows + np.arange(len(single))
            out = both.take(pa.array(pick))
        return out
    aggs: list[tuple[str, str, Any]] = []
    for n in names:
        if n in keys:
            continue
        if engine == "partial-update":
            fn, skip = "last", True
        else:
            fn, skip = _AGGREGATES[aggregate_function(n, primary_keys, options, sequence_fields(options))]
        aggs.append((n, fn, pc.ScalarAggregateOptions(skip_nulls=skip)))
    grouped = data.group_by(list(keys), use_threads=False).aggregate(aggs)
    renamed = grouped.rename_columns([c.rsplit("_", 1)[0] if c not in keys else c for c in grouped.column_names])
    schema = data.select(names).schema
    cols = [renamed.column(n).cast(schema.field(n).type) for n in names]
    out = pa.Table.from_arrays(cols, schema=schema)
    out = out.take(pc.sort_indices(out, sort_keys=[(k, "ascending") for k in keys]))   # the groups' order
    return out.append_column(SEQUENCE, newest).append_column(VALUE_KIND, pa.array([INSERT] * out.num_rows, pa.int8()))


def _merge_records_one_by_one(data: pa.Table, ends: Iterable[int], keys: Sequence[str], names: Sequence[str],
                              engine: str, options: Mapping[str, str], primary_keys: Sequence[str],
                              table: str) -> pa.Table:
    """Key-sorted ``data`` (groups ending at ``ends``) merged by Paimon's merge function, key
    by key, in sequence order: the value columns and ``_VALUE_KIND``."""
    import pyarrow as pa

    fn = merge_function(engine, names, primary_keys, options, [n not in primary_keys for n in names],
                        sequence_fields(options), table)
    cols = [data.column(n).to_pylist() for n in names]
    kinds = data.column(VALUE_KIND).to_pylist()
    rows: list[list[Any]] = []
    dead: list[bool] = []
    start = 0
    for end in ends:
        row, deleted = fn.merge((kinds[j], [c[j] for c in cols]) for j in range(start, end + 1))
        rows.append(row)
        dead.append(deleted)
        start = end + 1
    schema = data.select(names).schema
    arrays = [pa.array([r[i] for r in rows], type=schema.field(n).type) for i, n in enumerate(names)]
    kind = pa.array([DELETE if d else INSERT for d in dead], pa.int8())
    return pa.Table.from_arrays(arrays + [kind], schema=schema.append(pa.field(VALUE_KIND, pa.int8())))


def group_edges(data: pa.Table, keys: Sequence[str], last: bool) -> pa.Array:
    """A mask of the last (or first) record of each key in key-sorted ``data``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = data.num_rows
    change = np.zeros(max(n - 1, 0), dtype=bool)
    for k in keys:
        col = data.column(k)
        a, b = col.slice(0, n - 1), col.slice(1)
        neq = pc.not_equal(a, b)
        both_null = pc.and_(pc.is_null(a), pc.is_null(b))
        neq = pc.if_else(both_null, False, pc.fill_null(neq, True))
        change |= neq.to_numpy(zero_copy_only=False)
    if last:
        mask = np.append(change, True)
    else:
        mask = np.insert(change, 0, True)
    return pa.array(mask)


def strip_key_columns(table: pa.Table) -> pa.Table:
    """A data file's records without the ``_KEY_`` copies of the key (not every writer has them)."""
    keep = [c for c in table.column_names if not c.startswith(KEY_PREFIX)]
    return table.select(keep) if len(keep) != table.num_columns else table


def _kv_columns(raw: pa.Table, path: str, file_fields: Sequence[DataField],
                read_fields: Sequence[DataField]) -> pa.Table:
    """Records of a data file as the value columns of ``read_fields`` (matched by field id,
    as ``evolve_arrow`` does) plus ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``."""
    import pyarrow as pa

    missing = [c for c in SYSTEM_COLUMNS if c not in raw.column_names]
    if missing:
        raise UnsupportedTableError(f"data file {path} of a primary-key table has no {', '.join(missing)} column")
    values = evolve_arrow(strip_key_columns(raw).drop_columns(list(SYSTEM_COLUMNS)), file_fields, list(read_fields))
    return values.append_column(SEQUENCE, raw.column(SEQUENCE).cast(pa.int64())) \
        .append_column(VALUE_KIND, raw.column(VALUE_KIND).cast(pa.int8()))


def distinct_keys(tables: Iterable[pa.Table], keys: Sequence[str]) -> Optional[pa.Table]:
    """The distinct values of the key columns ``keys`` over ``tables`` (None for none)."""
    import pyarrow as pa

    parts = [t.select(list(keys)) for t in tables]
    if not parts:
        return None
    return pa.concat_tables(parts, promote_options="permissive").group_by(list(keys)).aggregate([])


def keys_of_files(io: FileIO, files: Iterable[tuple[str, Sequence[DataField]]], read_fields: Sequence[DataField],
                  keys: Sequence[str]) -> Optional[pa.Table]:
    """The distinct keys the data files ``files`` (``(path, fields written with)``) hold."""
    return distinct_keys([read_kv_file(p, io, ff, read_fields) for p, ff in files], keys)


def read_kv_file(path: str, io: FileIO, file_fields: Sequence[DataField], read_fields: Sequence[DataField]) -> pa.Table:
    """One data file of a primary-key table as the value columns of ``read_fields`` plus
    ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``."""
    return _kv_columns(read_data_file(path, io), path, file_fields, read_fields)


BATCH_ROWS = 65536


def read_merged_bucket(io: FileIO, paths: Sequence[str], file_fields: Sequence[Sequence[DataField]], schema: TableSchema,
                       table: str = "table", levels: Sequence[int] | None = None) -> pa.Table:
    """The merged rows of one (partition, bucket) of a primary-key table as one Arrow table
    (see ``iter_merged_bucket``)."""
    import pyarrow as pa

    parts = list(iter_merged_bucket(io, paths, file_fields, schema, table, levels=levels))
    if not parts:
        return to_arrow_schema(schema.fields, with_ids=False).empty_table()
    return pa.concat_tables(parts)


LEVEL = "_LEVEL"


def reads_by_lookup(options: Mapping[str, str]) -> bool:
    """Whether Paimon's readers merge a key as a lookup table's: its level-0 records over only its
    newest record above level 0 (the lookup compaction writes every key's whole value, so older
    levels hold stale whole values). Partial-update and aggregation tables with the lookup
    changelog, ``force-lookup`` or deletion vectors; for the other engines both merges agree."""
    if merge_engine(options) not in ("partial-update", "aggregation"):
        return False
    return (str(options.get("changelog-producer", "none")).lower() == "lookup"
            or str(options.get("force-lookup", "false")).lower() == "true"
            or str(options.get("deletion-vectors.enabled", "false")).lower() == "true")


def _newest_level_only(data: pa.Table, keys: Sequence[str]) -> pa.Table:
    """Of each key's records, those at level 0 and those at its lowest level above 0."""
    import pyarrow as pa
    import pyarrow.compute as pc

    level = data.column(LEVEL)
    high = pc.if_else(pc.greater(level, 0), level, pa.scalar(None, pa.int32()))
    if pc.count_distinct(high).as_py() <= 1:
        return data.drop_columns([LEVEL])
    out_schema = data.drop_columns([LEVEL]).schema
    data = data.append_column("_HIGH", high)
    lowest = data.select(list(keys) + ["_HIGH"]).group_by(list(keys)).aggregate([("_HIGH", "min")])
    data = data.join(lowest, keys=list(keys))
    keep = pc.or_(pc.equal(data.column(LEVEL), 0), pc.equal(data.column(LEVEL), data.column("_HIGH_min")))
    return data.filter(pc.fill_null(keep, False)).select(out_schema.names).cast(out_schema)


def iter_merged_bucket(io: FileIO, paths: Sequence[str], file_fields: Sequence[Sequence[DataField]], schema: TableSchema,
                       table: str = "table",
                       batch_rows: int = BATCH_ROWS, keep_sequence: bool = False, keep_deletes: bool = False,
                       levels: Sequence[int] | None = None) -> Iterator[pa.Table]:
    """The merged rows of one (partition, bucket) of a primary-key table, in key order, as a
    stream of Arrow tables: ``paths`` are its live data files (``file_fields[i]`` the fields
    of the schema each was written with), ``schema`` the read's TableSchema.

    Every data file of a primary-key table is sorted by key, so the files are read batch by
    batch side by side: all records with keys below the smallest of the files' last buffered
    keys are complete (no file can hold more of them) and are merged and handed on. Memory
    holds about one batch per file, not the bucket. A file found out of key order is corrupt.
    With ``keep_sequence`` each row carries its key's newest ``_SEQUENCE_NUMBER``. ``levels``
    (each file's LSM level) lets a lookup table merge as Paimon's readers do (``reads_by_lookup``)."""
    import pyarrow as pa

    read_fields = schema.fields
    names = [f.name for f in read_fields]
    keys = trimmed_primary_keys(schema.primary_keys, schema.partition_keys)
    engine, options = merge_engine(schema.options), schema.options
    readers = [_sorted_batches(p, io, ff, read_fields, keys, batch_rows) for p, ff in zip(paths, file_fields)]
    buffers: list[Any] = [None] * len(readers)     # per file: its buffered records (a Table), or None
    done = [False] * len(readers)

    by_level = levels is not None and reads_by_lookup(options)

    def pull(i: int) -> None:
        for chunk in readers[i]:
            if chunk.num_rows:
                if by_level and levels is not None:
                    chunk = chunk.append_column(LEVEL, pa.array([levels[i]] * chunk.num_rows, pa.int32()))
                buffers[i] = chunk if buffers[i] is None or not buffers[i].num_rows else \
                    pa.concat_tables([buffers[i], chunk])
                return
        done[i] = True

    def emit(parts: list[pa.Table]) -> Optional[pa.Table]:
        data = pa.concat_tables(parts)
        if by_level:
            data = _newest_level_only(data, keys)
        out = merge(data, keys, names, engine, options, schema.primary_keys, table, keep_sequence,
                    keep_deletes)
        return out if out.num_rows else None

    for i in range(len(readers)):
        pull(i)
    while True:
        active = [i for i in range(len(readers)) if not done[i]]
        held = [b for b in buffers if b is not None and b.num_rows]
        if not active:
            if held:
                out = emit(held)
                if out is not None:
                    yield out
            return
        bound = min(_key_at(buffers[i], keys, buffers[i].num_rows - 1) for i in active)
        cuts = [0 if b is None else _count_below(b, keys, bound) for b in buffers]
        if not any(cuts):           # every buffered record is at or above the bound: read on
            for i in active:
                if _key_at(buffers[i], keys, buffers[i].num_rows - 1) == bound:
                    pull(i)
            continue
        ready = [buffers[i].slice(0, c) for i, c in enumerate(cuts) if c]
        buffers = [b if b is None or not c else b.slice(c) for b, c in zip(buffers, cuts)]
        out = emit(ready)
        if out is not None:
            yield out


def _key_at(table: pa.Table, keys: Sequence[str], i: int) -> tuple[Any, ...]:
    return tuple(table.column(k)[i].as_py() for k in keys)


def _count_below(table: pa.Table, keys: Sequence[str], bound: tuple[Any, ...]) -> int:
    """How many of key-sorted ``table``'s first records have keys below ``bound``."""
    lo, hi = 0, table.num_rows
    while lo < hi:
        mid = (lo + hi) // 2
        if _key_at(table, keys, mid) < bound:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _sorted_batches(path: str, io: FileIO, file_fields: Sequence[DataField], read_fields: Sequence[DataField],
                    keys: Sequence[str], batch_rows: int) -> Iterator[pa.Table]:
    """A data file's records batch by batch, checked to be in key order."""
    import pyarrow.compute as pc

    last: Optional[tuple[Any, ...]] = None
    for raw in iter_data_file(path, io, batch_rows):
        chunk = _kv_columns(raw, path, file_fields, read_fields)
        if not chunk.num_rows:
            continue
        first = _key_at(chunk, keys, 0)
        col = chunk.column(keys[0])
        unsorted = (last is not None and first < last) or (
            chunk.num_rows > 1 and pc.any(pc.less(col.slice(1), col.slice(0, chunk.num_rows - 1))).as_py())
        if unsorted:
            raise CorruptDataFileError(path, "records of a primary-key table's data file are not in key order")
        last = _key_at(chunk, keys, chunk.num_rows - 1)
        yield chunk


def merge_records(data: pa.Table, keys: Sequence[str], value_names: Sequence[str], engine: str, options: Mapping[str, str],
                  primary_keys: Sequence[str] = (), table: str = "table") -> pa.Table:
    """The records of one write merged to one per key (a data file holds each key once, in
    key order): ``data`` as for ``merge``; returns the value columns with each key's
    ``_SEQUENCE_NUMBER`` (its newest) and ``_VALUE_KIND``. The deduplicate engine keeps the
    newest record as it is (a -D stays a -D, to delete older records at read time); the
    others keep their merge function's result, a -D where it deletes the key."""
    if engine == "deduplicate":
        data = _sorted(data, keys, options)
        return data.filter(group_edges(data, keys, last=True)).select(list(value_names) + list(SYSTEM_COLUMNS))
    return _merge(data, keys, value_names, engine, options, primary_keys, table)
