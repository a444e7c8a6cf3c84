# pyright: strict
"""Paimon's system tables (``t$snapshots``, ``t$files``...) as Arrow tables, with Paimon's column names.

In SQL they are ``db.t.snapshots`` or ``db.`t$snapshots```; ``t.metadata_table(name)`` gives them
as Arrow and ``t.inspect.<name>()`` as Spark DataFrames. Partitions are shown as their directory
(``dt=2024-01-01/region=eu``), value statistics as ``{col=value, ...}`` strings, as Paimon does.
Times are instants (Arrow timestamps in UTC), shown by Spark in the session time zone.
"""
from __future__ import annotations

import datetime as _dt
import json
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

import pyarrow as pa

from icefloe.core.types import IcebergType
from icefloe.errors import CorruptMetadataError, UnsupportedTableError
from icefloe.paimon import chain_options
from icefloe.paimon import file_index as fi
from icefloe.paimon import manifest as mf
from icefloe.paimon.binary_row import BinaryRow, decode_row
from icefloe.paimon.dynamic_bucket import read_index_manifest
from icefloe.paimon.merge import trimmed_primary_keys
from icefloe.paimon.schema import TableSchema, list_schema_ids, load_schema
from icefloe.paimon.scan import plan
from icefloe.paimon.tag import duration_text
from icefloe.paimon.snapshot import Snapshot
from icefloe.paimon.table import FileStoreTable
from icefloe.paimon.types import DataField, field_to_json

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
LONG, INT, STRING, TIMESTAMP = pa.int64(), pa.int32(), pa.string(), pa.timestamp("us", tz="UTC")


def _schema(*cols: tuple[str, Any]) -> pa.Schema:
    return pa.schema([pa.field(name, t) for name, t in cols])


SNAPSHOTS = _schema(("snapshot_id", LONG), ("schema_id", LONG), ("commit_user", STRING), ("commit_identifier", LONG),
                    ("commit_kind", STRING), ("commit_time", TIMESTAMP), ("base_manifest_list", STRING),
                    ("delta_manifest_list", STRING), ("changelog_manifest_list", STRING),
                    ("total_record_count", LONG), ("delta_record_count", LONG), ("changelog_record_count", LONG),
                    ("watermark", LONG))
SCHEMAS = _schema(("schema_id", LONG), ("fields", STRING), ("partition_keys", STRING), ("primary_keys", STRING),
                  ("options", STRING), ("comment", STRING), ("update_time", TIMESTAMP))
OPTIONS = _schema(("key", STRING), ("value", STRING))
FILES = _schema(("partition", STRING), ("bucket", INT), ("file_path", STRING), ("file_format", STRING),
                ("schema_id", LONG), ("level", INT), ("record_count", LONG), ("file_size_in_bytes", LONG),
                ("null_value_counts", STRING), ("min_value_stats", STRING), ("max_value_stats", STRING),
                ("min_sequence_number", LONG), ("max_sequence_number", LONG), ("creation_time", TIMESTAMP))
MANIFESTS = _schema(("file_name", STRING), ("file_size", LONG), ("num_added_files", LONG),
                    ("num_deleted_files", LONG), ("schema_id", LONG))
PARTITIONS = _schema(("partition", STRING), ("record_count", LONG), ("file_size_in_bytes", LONG),
                     ("file_count", LONG), ("last_update_time", TIMESTAMP))
TAGS = _schema(("tag_name", STRING), ("snapshot_id", LONG), ("schema_id", LONG), ("commit_time", TIMESTAMP),
               ("record_count", LONG), ("create_time", TIMESTAMP), ("time_retained", STRING))
BUCKETS = _schema(("partition", STRING), ("bucket", INT), ("record_count", LONG), ("file_size_in_bytes", LONG),
                  ("file_count", LONG), ("last_update_time", TIMESTAMP))
BRANCHES = _schema(("branch_name", STRING), ("create_time", TIMESTAMP))
CONSUMERS = _schema(("consumer_id", STRING), ("next_snapshot_id", LONG))
STATISTICS = _schema(("snapshot_id", LONG), ("schema_id", LONG), ("mergedRecordCount", LONG),
                     ("mergedRecordSize", LONG), ("colstat", STRING))

FILE_INDEXES = _schema(("partition", STRING), ("bucket", INT), ("file_path", STRING), ("file_size_in_bytes", LONG),
                      ("record_count", LONG), ("schema_id", LONG), ("column_name", STRING), ("index_type", STRING),
                      ("storage_type", STRING), ("index_file_path", STRING), ("index_size_in_bytes", LONG),
                      ("index_container_size_in_bytes", LONG), ("is_empty", pa.bool_()))
FILE_KEY_RANGES = _schema(("partition", STRING), ("bucket", INT), ("file_path", STRING), ("file_format", STRING),
                          ("schema_id", LONG), ("level", INT), ("record_count", LONG), ("file_size_in_bytes", LONG),
                          ("min_key", STRING), ("max_key", STRING), ("first_row_id", LONG))
AGGREGATION_FIELDS = _schema(("field_name", STRING), ("field_type", STRING), ("function", STRING),
                             ("function_options", STRING), ("comment", STRING))
DV_META = pa.struct([pa.field("f0", STRING, nullable=False), pa.field("f1", INT, nullable=False),
                     pa.field("f2", INT, nullable=False), pa.field("_CARDINALITY", LONG)])
TABLE_INDEXES = _schema(("partition", STRING), ("bucket", INT), ("index_type", STRING), ("file_name", STRING),
                        ("file_size", LONG), ("row_count", LONG), ("dv_ranges", pa.list_(DV_META)),
                        ("row_range_start", LONG), ("row_range_end", LONG), ("index_field_id", INT),
                        ("index_field_name", STRING))

NAMES = ("snapshots", "schemas", "options", "files", "manifests", "partitions", "buckets", "tags", "branches",
         "statistics", "consumers", "file_indexes", "file_key_ranges", "aggregation_fields", "table_indexes")
# they describe the table, not one snapshot
# a row of a system table: its columns' values, in the schema's order
Row = tuple[Any, ...]
TABLE_LEVEL = ("snapshots", "schemas", "options", "tags", "branches", "consumers", "aggregation_fields")


def _table(schema: pa.Schema, rows: Sequence[Row]) -> pa.Table:
    columns: list[Sequence[Any]] = list(zip(*rows)) if rows else [[] for _ in schema]
    return pa.Table.from_arrays([pa.array(list(c), type=f.type) for c, f in zip(columns, schema)], schema=schema)


def _ts(ms: Optional[int]) -> Optional[_dt.datetime]:
    return None if ms is None else _EPOCH + _dt.timedelta(milliseconds=ms)


def _instant(v: Any) -> Any:
    """A local wall-clock datetime (Paimon records some times so) as the instant it names."""
    return v.astimezone() if isinstance(v, _dt.datetime) and v.tzinfo is None else v


def _local_ms(ms: Optional[int]) -> Optional[_dt.datetime]:
    """Paimon's file creation time: local wall-clock millis stored as if UTC."""
    if ms is None:
        return None
    return (_dt.datetime(1970, 1, 1) + _dt.timedelta(milliseconds=ms)).astimezone()


def snapshots(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    rows = [(s.id, s.schema_id, s.commit_user, s.commit_identifier, s.commit_kind, _ts(s.time_millis),
             s.base_manifest_list, s.delta_manifest_list, s.changelog_manifest_list, s.total_record_count,
             s.delta_record_count, s.changelog_record_count, s.watermark) for s in table.snapshots()]
    return _table(SNAPSHOTS, rows)


def _schemas(table: FileStoreTable) -> dict[int, TableSchema]:
    return {i: load_schema(table.io, table.meta_location, i) for i in list_schema_ids(table.io, table.meta_location)}


def schemas(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    rows = [(s.id, json.dumps([field_to_json(f) for f in s.fields]), json.dumps(list(s.partition_keys)),
             json.dumps(list(s.primary_keys)), json.dumps(dict(s.options)), s.comment, _ts(s.time_millis))
            for s in sorted(_schemas(table).values(), key=lambda s: s.id)]
    return _table(SCHEMAS, rows)


def options(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    return _table(OPTIONS, sorted(table.refresh().options.items()))


def _stats_text(names: Sequence[str], values: Optional[Sequence[Any]]) -> Optional[str]:
    if values is None:
        return None
    return "{" + ", ".join(f"{n}={'null' if v is None else v}" for n, v in zip(names, values)) + "}"


def _entries(table: FileStoreTable, snapshot: Optional[Snapshot]) -> Iterator[tuple[mf.ManifestEntry, str]]:
    """(entry, partition directory) of the live files of ``snapshot``; paths filled in."""
    store = table.refresh().store
    # planned from the snapshot itself: a tag's snapshot may have expired
    entries: list[mf.ManifestEntry] = plan(store, snapshot, None, table.schema_by_id(snapshot.schema_id), table.schema_by_id) \
        if snapshot is not None else []
    for e in entries:
        values = store.partition_values(e.partition)
        yield e, (store.partition_dir(values) if table.partition_keys else "")


def files(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    schemas = _schemas(table)
    rows: list[Row] = []
    for e, part in _entries(table, snapshot):
        f = e.file
        mins: Optional[Sequence[Any]] = None
        maxs: Optional[Sequence[Any]] = None
        counts: Optional[Sequence[Any]] = None
        fields: list[DataField] = schemas[f.schema_id].fields if f.schema_id in schemas else []
        # a file of some columns (data evolution) has statistics of those columns, as Paimon reads them
        cols = f.value_stats_cols if f.value_stats_cols is not None else f.write_cols
        if cols is not None:
            by_name = {x.name: x for x in fields}
            fields = [by_name[c] for c in cols if c in by_name]
        names = [x.name for x in fields]
        try:
            mins, maxs, counts = f.value_stats.decode([x.type for x in fields])
        except Exception:       # stats of another layout: shown as unknown, never guessed
            pass
        fmt = f.file_name.rsplit(".", 1)[-1] if "." in f.file_name else None
        rows.append((part, e.bucket, f.file_path, fmt, f.schema_id, f.level, f.row_count, f.file_size,
                     _stats_text(names, counts), _stats_text(names, mins), _stats_text(names, maxs),
                     f.min_sequence_number, f.max_sequence_number, _local_ms(f.creation_time)))
    return _table(FILES, rows)


def file_indexes(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    """Paimon's ``$file_indexes``: one row per index of each live data file, EMBEDDED in its
    manifest entry or in a FILE beside it (its path and size); files without an index have none."""
    rows: list[Row] = []
    for e, part in _entries(table, snapshot):
        f = e.file
        raw, storage = f.embedded_index, "EMBEDDED"
        index_path: Optional[str] = None
        if raw is None:
            found = fi.index_files(f.extra_files)
            if not found:
                continue
            if len(found) > 1:
                raise CorruptMetadataError(f.path, f"more than one file index: {', '.join(found)}")
            index_path = f"{f.path.rsplit('/', 1)[0]}/{found[0]}"
            raw, storage = table.io.read_bytes(index_path), "FILE"
        for m in fi.read_header(raw, index_path or f"the file index of {f.file_path}"):
            rows.append((part, e.bucket, f.file_path, f.file_size, f.row_count, f.schema_id, m.column, m.index_type,
                         storage, index_path, m.length, len(raw), m.empty))
    return _table(FILE_INDEXES, rows)


def manifests(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    store = table.refresh().store
    rows = [(m.file_name, m.file_size, m.num_added_files, m.num_deleted_files, m.schema_id)
            for m in store.data_manifests(snapshot)]
    return _table(MANIFESTS, rows)


def _file_groups(table: FileStoreTable, snapshot: Optional[Snapshot], key: Callable[[mf.ManifestEntry, str], Any],
                 raw_time: bool = False) -> list[Row]:
    """(group, records, bytes, files, last creation time) of the live files, grouped by ``key(entry,
    partition directory)``, in group order."""
    acc: dict[Any, list[Any]] = {}
    for e, part in _entries(table, snapshot):
        a = acc.setdefault(key(e, part), [0, 0, 0, None])
        a[0] += e.file.row_count
        a[1] += e.file.file_size
        a[2] += 1
        if e.file.creation_time is not None and (a[3] is None or e.file.creation_time > a[3]):
            a[3] = e.file.creation_time
    return [(group, a[0], a[1], a[2], a[3] if raw_time else _local_ms(a[3])) for group, a in sorted(acc.items())]


def buckets(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    """Paimon's ``$buckets``: the live files of each (partition, bucket)."""
    rows = [(part, bucket, *rest) for (part, bucket), *rest in _file_groups(table, snapshot, lambda e, p: (p, e.bucket))]
    return _table(BUCKETS, rows)


def branches(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    """Paimon's ``$branches``: each branch and when its directory was made."""
    from icefloe.paimon.branches import branch_path

    rows: list[Row] = []
    for name in table.branches():
        try:
            created = _ts(table.io.mtime_ms(branch_path(table.location, name)))
        except (OSError, NotImplementedError):
            created = None
        rows.append((name, created))
    return _table(BRANCHES, rows)


def partition_groups(table: FileStoreTable, snapshot: Optional[Snapshot]) -> list[Row]:
    """(partition directory, records, bytes, files, last creation time as Paimon's millis) of the live
    files of ``snapshot``, one per partition (``sys.partitions`` and ``sys.tables`` sum them)."""
    return _file_groups(table, snapshot, lambda e, part: part, raw_time=True)


def partitions(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    """Paimon's ``$partitions`` (and ``SHOW PARTITIONS``). A chain table read as one (main) lists main's
    partitions, then the snapshot branch's and the delta branch's not listed yet, each branch's latest,
    as Paimon's chain table lists its partitions (its ``$files`` lists main's files only)."""
    rows = _file_groups(table, snapshot, lambda e, part: part)
    chained = chain_options.branches(table.table_schema.options, table.branch)
    if chained is None:
        return _table(PARTITIONS, rows)
    current = table.current_snapshot()
    if (snapshot.id if snapshot else None) != (current.id if current else None):
        raise UnsupportedTableError(f"the partitions of chain table {table.name} at an earlier snapshot: a chain "
                                    "table's partitions are its main, snapshot and delta branches', and a snapshot of "
                                    "main names none of the other two's; read them of a branch, db.`t$branch_<name>`")
    seen = {r[0] for r in rows}
    for name in chained:
        branch = table.branch_table(name)
        for r in _file_groups(branch, branch.current_snapshot(), lambda e, part: part):
            if r[0] not in seen:
                seen.add(r[0])
                rows.append(r)
    return _table(PARTITIONS, sorted(rows))


def tags(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    """Paimon's ``$tags``: one row per tag, ordered by name; ``create_time`` and
    ``time_retained`` only for tags created with a retention time."""
    rows = [(name, t.snapshot.id, t.snapshot.schema_id, _ts(t.snapshot.time_millis), t.snapshot.total_record_count,
             _instant(t.create_time), duration_text(t.time_retained)) for name, t in sorted(table.tags().items())]
    return _table(TAGS, rows)


def statistics(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    """Paimon's ``$statistics``: the statistics ``ANALYZE TABLE`` took, as the snapshot (the latest
    by default) names them; no row when it names none."""
    stats = table.statistics(snapshot) if snapshot is not None else None
    rows: list[Row] = [] if stats is None else [(stats.snapshot_id, stats.schema_id, stats.merged_record_count,
                                      stats.merged_record_size, stats.col_stats_json())]
    return _table(STATISTICS, rows)


def consumers(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    """Paimon's ``$consumers``: each consumer and the next snapshot it reads."""
    return _table(CONSUMERS, sorted(table.consumers().items()))


def _cast_text(v: Any) -> str:
    """A value as Paimon's cast to STRING writes it (``null``, ``true``, ``2024-10-01``)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, _dt.datetime):
        return v.isoformat(sep=" ")
    return v.isoformat() if isinstance(v, _dt.date) else str(v)


def _row_text(values: Iterable[Any]) -> str:
    """A partition as Paimon's cast of a row to STRING writes it: ``{v1, v2}``."""
    return "{" + ", ".join(_cast_text(v) for v in values) + "}"


def _key_text(values: Iterable[Any]) -> str:
    """A key as Paimon shows it (the Java array of its internal values): ``[c]``, ``[1, a]``; a date is its
    day number, as Paimon keeps it."""
    def internal(v: Any) -> Any:
        if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
            return (v - _dt.date(1970, 1, 1)).days
        return _cast_text(v)
    return "[" + ", ".join(str(internal(v)) for v in values) + "]"


def file_key_ranges(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    """Paimon's ``$file_key_ranges``: each live data file with its key range (the primary key without
    the partition keys; none for an append table) and first row id."""
    store = table.refresh().store
    rows: list[Row] = []
    key_types: dict[int, list[IcebergType]] = {}
    for e, _part in _entries(table, snapshot):
        f = e.file
        if f.schema_id not in key_types:
            schema = table.schema_by_id(f.schema_id)
            keys = trimmed_primary_keys(schema.primary_keys, schema.partition_keys) if schema.primary_keys else []
            key_types[f.schema_id] = [schema.field(k).type for k in keys]
        types = key_types[f.schema_id]
        lo = _key_text(decode_row(f.min_key, types)) if types and f.min_key.arity else None
        hi = _key_text(decode_row(f.max_key, types)) if types and f.max_key.arity else None
        fmt = f.file_name.rsplit(".", 1)[-1] if "." in f.file_name else ""
        rows.append((_row_text(store.partition_values(e.partition)), e.bucket, f.file_path, fmt, f.schema_id,
                     f.level, f.row_count, f.file_size, lo, hi, f.first_row_id))
    return _table(FILE_KEY_RANGES, rows)


def aggregation_fields(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    """Paimon's ``$aggregation_fields``: each column of the latest schema with the values
    (``function``) and keys (``function_options``) of its ``fields.<column>.*`` options."""
    schema = table.refresh().table_schema
    values: dict[str, list[str]] = {}
    keys: dict[str, list[str]] = {}
    for key, value in sorted(schema.options.items()):
        parts = key.split(".")
        if len(parts) > 2 and parts[0] == "fields":
            values.setdefault(parts[1], []).append(value)
            keys.setdefault(parts[1], []).append(key)
    rows = [(f.name, f.type_string, "[" + ", ".join(values.get(f.name, [])) + "]",
             "[" + ", ".join(keys.get(f.name, [])) + "]", f.description) for f in schema.fields]
    return _table(AGGREGATION_FIELDS, rows)


def table_indexes(table: FileStoreTable, snapshot: Optional[Snapshot] = None) -> pa.Table:
    """Paimon's ``$table_indexes``: the index files the snapshot's index manifest names (dynamic
    buckets' HASH indexes, deletion vectors, global indexes), with each vector's range."""
    store = table.refresh().store
    names: dict[int, str] = {f.id: f.name for f in table.table_schema.fields}
    rows: list[Row] = []
    for r in read_index_manifest(store, snapshot.index_manifest if snapshot is not None else None):
        part = _row_text(store.partition_values(BinaryRow.from_bytes(r["_PARTITION"])))
        ranges = r.get("_DELETIONS_VECTORS_RANGES")
        dv = None if ranges is None else [{k: d.get(k) for k in ("f0", "f1", "f2", "_CARDINALITY")} for d in ranges]
        g = r.get("_GLOBAL_INDEX")
        field_name = None
        if g is not None:
            ids = [g["_INDEX_FIELD_ID"], *(g.get("_EXTRA_FIELD_IDS") or ())]
            field_name = ",".join(names[i] for i in ids) if all(i in names for i in ids) else None
        rows.append((part, r["_BUCKET"], r["_INDEX_TYPE"], r["_FILE_NAME"], r["_FILE_SIZE"], r["_ROW_COUNT"], dv,
                     g["_ROW_RANGE_START"] if g else None, g["_ROW_RANGE_END"] if g else None,
                     g["_INDEX_FIELD_ID"] if g else None, field_name))
    return _table(TABLE_INDEXES, rows)


BUILDERS = {"snapshots": snapshots, "schemas": schemas, "options": options, "files": files,
            "manifests": manifests, "partitions": partitions, "buckets": buckets, "tags": tags,
            "branches": branches, "statistics": statistics, "consumers": consumers, "file_indexes": file_indexes,
            "file_key_ranges": file_key_ranges, "aggregation_fields": aggregation_fields,
            "table_indexes": table_indexes}
