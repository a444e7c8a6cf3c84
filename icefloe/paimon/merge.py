"""Primary-key tables: the key-value layout of their data files and the merge engines.

A primary-key table's data files hold one record per change: the key columns again as
``_KEY_<name>`` (files of some writers omit these), ``_SEQUENCE_NUMBER`` (the order of
changes within a bucket), ``_VALUE_KIND`` (the row kind: 0 +I insert, 1 -U update
before, 2 +U update after, 3 -D delete) and then the value columns. A read merges all
records of a key, over all files of its (partition, bucket), oldest first, with the
table's ``merge-engine``:

- ``deduplicate`` (default): the newest record wins; a newest -U/-D removes the key.
- ``first-row``: the oldest insert wins; -U/-D records are refused unless ``ignore-delete``.
- ``partial-update``: per column, the newest non-null value; -U/-D refused unless
  ``ignore-delete``.
- ``aggregation``: per column, ``fields.<name>.aggregate-function`` (default
  ``fields.default-aggregate-function``, else ``last_non_null_value``) over the records;
  -U/-D refused unless ``ignore-delete``.

Records are ordered by ``sequence.field`` columns when the table sets them, then by
sequence number. The stored key is the primary key without the partition keys (the
"trimmed" key), unless that would leave nothing.

Everything here works on one bucket's records as Arrow and runs wherever it is called
(in Spark tasks for ``to_spark``).
"""
from __future__ import annotations

from typing import Sequence

from icefloe.errors import NotSupportedError, UnsupportedTableError
from icefloe.paimon.arrow_read import read_data_file
from icefloe.paimon.schema import evolve_arrow
from icefloe.paimon.types import to_arrow_schema

SEQUENCE = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
KEY_PREFIX = "_KEY_"
SYSTEM_COLUMNS = (SEQUENCE, VALUE_KIND)

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
KIND_NAMES = {INSERT: "+I", UPDATE_BEFORE: "-U", UPDATE_AFTER: "+U", DELETE: "-D"}

MERGE_ENGINE = "merge-engine"
ENGINES = ("deduplicate", "first-row", "partial-update", "aggregation")

# Arrow hash aggregations of the aggregation engine's functions: (function, skip nulls)
_AGGREGATES = {
    "sum": ("sum", True), "product": ("product", True), "max": ("max", True), "min": ("min", True),
    "last_value": ("last", False), "last_non_null_value": ("last", True),
    "first_value": ("first", False), "first_non_null_value": ("first", True),
    "bool_and": ("all", True), "bool_or": ("any", True),
}


def trimmed_primary_keys(primary_keys: Sequence[str], partition_keys: Sequence[str]) -> list[str]:
    """The key a primary-key table stores: its primary key without the partition keys."""
    trimmed = [k for k in primary_keys if k not in partition_keys]
    return trimmed or list(primary_keys)


def merge_engine(options: dict) -> str:
    engine = str(options.get(MERGE_ENGINE, "deduplicate")).strip().lower()
    if engine not in ENGINES:
        raise UnsupportedTableError(f"merge engine {engine!r} is not one icefloe knows ({', '.join(ENGINES)})")
    return engine


def sequence_fields(options: dict) -> list[str]:
    raw = options.get("sequence.field") or ""
    return [f.strip() for f in str(raw).split(",") if f.strip()]


def _truthy(options: dict, key: str) -> bool:
    return str(options.get(key, "false")).strip().lower() == "true"


def aggregate_function(name: str, primary_keys: Sequence[str], options: dict, seq_fields=()) -> str:
    """The aggregation engine's function for column ``name`` (Paimon's precedence)."""
    if name in seq_fields:
        return "last_value"
    if name in primary_keys:
        return "primary_key"
    return str(options.get(f"fields.{name}.aggregate-function")
               or options.get("fields.default-aggregate-function") or "last_non_null_value").strip().lower()


def check_engine_options(engine: str, value_names: Sequence[str], primary_keys: Sequence[str], options: dict,
                         table: str) -> None:
    """Refuse, before any row is read, what this engine cannot merge exactly."""
    if engine == "partial-update":
        groups = [k for k in options if str(k).startswith("fields.") and str(k).endswith(".sequence-group")]
        if groups:
            raise NotSupportedError("read partial-update with sequence groups", table, "paimon",
                                    f"options {', '.join(sorted(groups))} are not supported yet")
    if engine == "aggregation":
        seq = sequence_fields(options)
        for n in value_names:
            fn = aggregate_function(n, primary_keys, options, seq)
            if fn != "primary_key" and fn not in _AGGREGATES:
                raise NotSupportedError(f"read the aggregation function {fn!r} (column {n!r})", table, "paimon",
                                        f"icefloe merges {', '.join(sorted(_AGGREGATES))}")


def merge(data, keys: Sequence[str], value_names: Sequence[str], engine: str, options: dict,
          primary_keys: Sequence[str] = (), table: str = "table"):
    """The merged rows of one bucket. ``data`` is a pyarrow Table holding the value columns
    ``value_names``, ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` of all its records (any order);
    ``keys`` are the stored key's columns. Returns the value columns, one row per live key,
    sorted by key."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if data.num_rows == 0:
        return data.select(list(value_names))
    seq = sequence_fields(options)
    order = [(k, "ascending") for k in keys] + [(f, "ascending") for f in seq] + [(SEQUENCE, "ascending")]
    # sort_indices is stable: records with equal sequence stay in file order
    data = data.take(pc.sort_indices(data, sort_keys=order, null_placement="at_start"))
    kinds = data.column(VALUE_KIND)
    retract = pc.is_in(kinds, value_set=pa.array([UPDATE_BEFORE, DELETE], pa.int8()))
    has_retract = pc.any(retract).as_py()
    if engine != "deduplicate" and has_retract:
        if not _truthy(options, "ignore-delete") and not _truthy(options, f"{engine}.ignore-delete"):
            raise UnsupportedTableError(
                f"table {table}: the {engine} merge engine got DELETE/UPDATE_BEFORE records; "
                "set 'ignore-delete' = 'true' to ignore them")
        data = data.filter(pc.invert(retract))
        if data.num_rows == 0:
            return data.select(list(value_names))
    if engine in ("deduplicate", "first-row"):
        edge = group_edges(data, keys, last=engine == "deduplicate")
        out = data.filter(edge)
        if engine == "deduplicate":
            live = pc.invert(pc.is_in(out.column(VALUE_KIND), value_set=pa.array([UPDATE_BEFORE, DELETE], pa.int8())))
            out = out.filter(live)
        return out.select(list(value_names))
    aggs = []
    for n in value_names:
        if n in keys:
            continue
        if engine == "partial-update":
            fn, skip = "last", True
        else:
            name = aggregate_function(n, primary_keys, options, seq)
            fn, skip = _AGGREGATES["last_value" if name == "primary_key" else name]
        aggs.append((n, fn, pc.ScalarAggregateOptions(skip_nulls=skip)))
    grouped = data.group_by(list(keys), use_threads=False).aggregate(aggs)
    renamed = grouped.rename_columns([c.rsplit("_", 1)[0] if c not in keys else c for c in grouped.column_names])
    schema = data.select(list(value_names)).schema
    cols = [renamed.column(n).cast(schema.field(n).type) for n in value_names]
    out = pa.Table.from_arrays(cols, schema=schema)
    return out.take(pc.sort_indices(out, sort_keys=[(k, "ascending") for k in keys]))


def group_edges(data, keys: Sequence[str], last: bool):
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


def strip_key_columns(table):
    """A data file's records without the ``_KEY_`` copies of the key (not every writer has them)."""
    keep = [c for c in table.column_names if not c.startswith(KEY_PREFIX)]
    return table.select(keep) if len(keep) != table.num_columns else table


def read_kv_file(path: str, io, file_fields, read_fields):
    """One data file of a primary-key table as the value columns of ``read_fields`` (matched
    by field id, as ``evolve_arrow`` does) plus ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND``."""
    import pyarrow as pa

    raw = read_data_file(path, io)
    missing = [c for c in SYSTEM_COLUMNS if c not in raw.column_names]
    if missing:
        raise UnsupportedTableError(f"data file {path} of a primary-key table has no {', '.join(missing)} column")
    values = evolve_arrow(strip_key_columns(raw).drop_columns(list(SYSTEM_COLUMNS)), file_fields, read_fields)
    return values.append_column(SEQUENCE, raw.column(SEQUENCE).cast(pa.int64())) \
        .append_column(VALUE_KIND, raw.column(VALUE_KIND).cast(pa.int8()))


def read_merged_bucket(io, paths: Sequence[str], file_fields: Sequence, schema, table: str = "table"):
    """The merged rows of one (partition, bucket) of a primary-key table: ``paths`` are its
    live data files (``file_fields[i]`` the fields of the schema each was written with),
    ``schema`` the read's TableSchema."""
    import pyarrow as pa

    read_fields = schema.fields
    names = [f.name for f in read_fields]
    parts = [read_kv_file(p, io, ff, read_fields) for p, ff in zip(paths, file_fields)]
    if not parts:
        return to_arrow_schema(read_fields, with_ids=False).empty_table()
    data = pa.concat_tables(parts)
    keys = trimmed_primary_keys(schema.primary_keys, schema.partition_keys)
    return merge(data, keys, names, merge_engine(schema.options), schema.options, schema.primary_keys, table)


def merge_records(data, keys: Sequence[str], value_names: Sequence[str], engine: str, options: dict,
                  primary_keys: Sequence[str] = (), table: str = "table"):
    """The records of one write merged to one per key (a data file holds each key once, in
    key order): ``data`` as for ``merge``; returns the value columns with each key's
    ``_SEQUENCE_NUMBER`` (its newest) and ``_VALUE_KIND``. The deduplicate engine keeps the
    newest record as it is (a -D stays a -D, to delete older records at read time)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if engine == "deduplicate":
        order = [(k, "ascending") for k in keys] + [(f, "ascending") for f in sequence_fields(options)] + \
            [(SEQUENCE, "ascending")]
        data = data.take(pc.sort_indices(data, sort_keys=order))
        return data.filter(group_edges(data, keys, last=True)).select(list(value_names) + list(SYSTEM_COLUMNS))
    merged = merge(data, keys, value_names, engine, options, primary_keys, table)
    seqs = data.group_by(list(keys), use_threads=False).aggregate([(SEQUENCE, "max")])
    joined = merged.join(seqs, list(keys), join_type="left outer")
    joined = joined.take(pc.sort_indices(joined, sort_keys=[(k, "ascending") for k in keys]))
    out = joined.select(list(value_names)).append_column(SEQUENCE, joined.column(f"{SEQUENCE}_max"))
    return out.append_column(VALUE_KIND, pa.array([INSERT] * out.num_rows, pa.int8()))
