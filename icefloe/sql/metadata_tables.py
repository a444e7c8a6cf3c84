"""Iceberg's metadata tables (``t.snapshots``, ``t.files``...) and Paimon's system tables as plain rows.

Column names and types follow Iceberg's Spark metadata tables. Each builder
returns ``(spark_ddl_schema, rows)`` from the table's metadata and manifests
alone, so the command line can print them without starting Spark; the SQL
layer turns them into DataFrames. When the table offers ``t.inspect`` (the
lifecycle API), the SQL layer prefers it.
"""
from __future__ import annotations

import datetime as _dt
from typing import Callable, Optional

from icefloe.core.types import to_spark_ddl_type

METADATA_TABLES = ("snapshots", "history", "files", "data_files", "delete_files", "manifests",
                   "partitions", "refs", "entries",
                   "schemas", "options", "tags")   # the last three: Paimon's system tables

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _ts(ms: Optional[int]):
    if ms is None:
        return None
    # Spark renders TIMESTAMP values in the session time zone; hand it an aware instant.
    return (_EPOCH + _dt.timedelta(milliseconds=ms)).astimezone()


def _internal_to_python(type_str: str, v):
    if v is None:
        return None
    if type_str == "date":
        return _dt.date(1970, 1, 1) + _dt.timedelta(days=v)
    if type_str == "timestamptz":
        return (_EPOCH + _dt.timedelta(microseconds=v)).astimezone()
    if type_str == "timestamp":
        return _dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=v)
    if type_str == "uuid":
        return str(v)
    return v


def _history_ids(meta) -> set:
    """Snapshot ids on the current snapshot's ancestry."""
    by_id = {s.snapshot_id: s for s in meta.snapshots}
    out = set()
    cur = meta.current_snapshot_id
    while cur is not None and cur in by_id and cur not in out:
        out.add(cur)
        cur = by_id[cur].parent_snapshot_id
    return out


def snapshots(table, snapshot=None):
    schema = ("committed_at timestamp, snapshot_id bigint, parent_id bigint, operation string, "
              "manifest_list string, summary map<string,string>")
    rows = [(_ts(s.timestamp_ms), s.snapshot_id, s.parent_snapshot_id, s.operation, s.manifest_list,
             dict(s.summary)) for s in table.snapshots()]
    return schema, rows


def history(table, snapshot=None):
    schema = "made_current_at timestamp, snapshot_id bigint, parent_id bigint, is_current_ancestor boolean"
    meta = table.refresh().metadata
    ancestors = _history_ids(meta)
    parents = {s.snapshot_id: s.parent_snapshot_id for s in meta.snapshots}
    rows = [(_ts(e["timestamp-ms"]), e["snapshot-id"], parents.get(e["snapshot-id"]),
             e["snapshot-id"] in ancestors) for e in meta.snapshot_log]
    return schema, rows


def refs(table, snapshot=None):
    schema = ("name string, type string, snapshot_id bigint, max_reference_age_in_ms bigint, "
              "min_snapshots_to_keep int, max_snapshot_age_in_ms bigint")
    meta = table.refresh().metadata
    rows = [(name, r.type.upper(), r.snapshot_id, r.max_ref_age_ms, r.min_snapshots_to_keep,
             r.max_snapshot_age_ms) for name, r in sorted(meta.refs.items())]
    return schema, rows


def _partition_struct(meta):
    """One struct over every spec's fields (by field id), as Iceberg's metadata tables show."""
    fields = {}
    for spec in meta.partition_specs:
        try:
            ptype = spec.partition_type(meta.schema)
        except Exception:
            continue
        for f in ptype.fields:
            fields[f.field_id] = (f.name, str(f.field_type), f.field_type)
    order = sorted(fields)
    if not order:
        return None, order, fields
    ddl = "struct<" + ",".join(f"`{fields[i][0]}`:{to_spark_ddl_type(fields[i][2])}" for i in order) + ">"
    return ddl, order, fields


def _partition_value(meta, data_file, order, fields):
    if not order:
        return None
    spec = meta.spec_by_id(data_file.spec_id)
    by_id = {pf.field_id: v for pf, v in zip(spec.fields, data_file.partition)}
    return tuple(_internal_to_python(fields[i][1], by_id.get(i)) for i in order)


def _manifests(table, snapshot):
    from icefloe.iceberg.manifest_reader import snapshot_manifests

    return snapshot_manifests(table.io, snapshot)


def _entries(table, snapshot):
    from icefloe.iceberg.manifest_reader import load_manifest_entries

    meta = table.metadata
    for m in _manifests(table, snapshot):
        for e in load_manifest_entries(table.io, meta, m):
            yield m, e


def _file_columns(meta):
    pddl, order, fields = _partition_struct(meta)
    cols = ("content int, file_path string, file_format string, spec_id int"
            + (f", partition {pddl}" if pddl else "")
            + ", record_count bigint, file_size_in_bytes bigint, column_sizes map<int,bigint>, "
              "value_counts map<int,bigint>, null_value_counts map<int,bigint>, "
              "nan_value_counts map<int,bigint>, lower_bounds map<int,binary>, upper_bounds map<int,binary>, "
              "key_metadata binary, split_offsets array<bigint>, equality_ids array<int>, sort_order_id int")
    return cols, order, fields


def _file_row(meta, f, order, fields):
    row = [f.content, f.file_path, f.file_format, f.spec_id]
    if order:
        row.append(_partition_value(meta, f, order, fields))
    row += [f.record_count, f.file_size_in_bytes, f.column_sizes, f.value_counts, f.null_value_counts,
            f.nan_value_counts, f.lower_bounds, f.upper_bounds, f.key_metadata, f.split_offsets,
            f.equality_ids, f.sort_order_id]
    return tuple(row)


def _live_files(table, snapshot, keep: Callable):
    from icefloe.iceberg.manifest import DELETED

    table.refresh()
    meta = table.metadata
    schema, order, fields = _file_columns(meta)
    rows = [_file_row(meta, e.data_file, order, fields) for _m, e in _entries(table, snapshot)
            if e.status != DELETED and keep(e.data_file)]
    return schema, rows


def files(table, snapshot=None):
    return _live_files(table, snapshot, lambda f: True)


def data_files(table, snapshot=None):
    return _live_files(table, snapshot, lambda f: f.content == 0)


def delete_files(table, snapshot=None):
    return _live_files(table, snapshot, lambda f: f.content != 0)


def manifests(table, snapshot=None):
    from icefloe.iceberg import conversions

    table.refresh()
    meta = table.metadata
    schema = ("content int, path string, length bigint, partition_spec_id int, added_snapshot_id bigint, "
              "added_data_files_count int, existing_data_files_count int, deleted_data_files_count int, "
              "added_delete_files_count int, existing_delete_files_count int, deleted_delete_files_count int, "
              "partition_summaries array<struct<contains_null:boolean,contains_nan:boolean,"
              "lower_bound:string,upper_bound:string>>")
    rows = []
    for m in _manifests(table, snapshot):
        summaries = None
        if m.partitions is not None:
            try:
                ptype = meta.spec_by_id(m.partition_spec_id).partition_type(meta.schema)
                types = [f.field_type for f in ptype.fields]
            except Exception:
                types = [None] * len(m.partitions)
            summaries = []
            for p, t in zip(m.partitions, types):
                def human(b):
                    if b is None or t is None:
                        return None
                    return str(conversions.from_bytes(t, b))
                summaries.append((p.contains_null, p.contains_nan, human(p.lower_bound), human(p.upper_bound)))
        is_data = m.content == 0
        counts = (m.added_files_count, m.existing_files_count, m.deleted_files_count)
        zero = (0, 0, 0)
        rows.append((m.content, m.manifest_path, m.manifest_length, m.partition_spec_id, m.added_snapshot_id,
                     *(counts if is_data else zero), *(zero if is_data else counts), summaries))
    return schema, rows


def entries(table, snapshot=None):
    table.refresh()
    meta = table.metadata
    fcols, order, fields = _file_columns(meta)
    schema = (f"status int, snapshot_id bigint, sequence_number bigint, file_sequence_number bigint, "
              f"data_file struct<{_ddl_to_struct_body(fcols)}>")
    rows = [(e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number,
             _file_row(meta, e.data_file, order, fields)) for _m, e in _entries(table, snapshot)]
    return schema, rows


def split_top_level(text: str) -> list:
    """``text`` split at the commas outside ``<...>``."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def _ddl_to_struct_body(cols: str) -> str:
    """``a int, b map<int,bigint>`` -> ``a:int,b:map<int,bigint>`` (top-level commas only)."""
    parts = split_top_level(cols)
    out = []
    for p in parts:
        name, _, typ = p.strip().partition(" ")
        out.append(f"{name}:{typ.strip()}")
    return ",".join(out)


def partitions(table, snapshot=None):
    from icefloe.iceberg.manifest import DELETED, EQUALITY_DELETES, POSITION_DELETES

    table.refresh()
    meta = table.metadata
    pddl, order, fields = _partition_struct(meta)
    schema = ((f"partition {pddl}, " if pddl else "") +
              "spec_id int, record_count bigint, file_count int, total_data_file_size_in_bytes bigint, "
              "position_delete_record_count bigint, position_delete_file_count int, "
              "equality_delete_record_count bigint, equality_delete_file_count int, "
              "last_updated_snapshot_id bigint")
    acc: dict = {}
    for _m, e in _entries(table, snapshot):
        if e.status == DELETED:
            continue
        f = e.data_file
        key = (_partition_value(meta, f, order, fields), f.spec_id)
        a = acc.setdefault(key, [0, 0, 0, 0, 0, 0, 0, None])
        if f.content == 0:
            a[0] += f.record_count
            a[1] += 1
            a[2] += f.file_size_in_bytes
        elif f.content == POSITION_DELETES:
            a[3] += f.record_count
            a[4] += 1
        elif f.content == EQUALITY_DELETES:
            a[5] += f.record_count
            a[6] += 1
        if a[7] is None or (e.snapshot_id or 0) > a[7]:
            a[7] = e.snapshot_id
    rows = []
    for (pv, spec_id), a in sorted(acc.items(), key=lambda kv: repr(kv[0])):
        rows.append(((pv,) if order else ()) + (spec_id, *a))
    return schema, rows


BUILDERS = {
    "snapshots": snapshots, "history": history, "refs": refs, "files": files, "data_files": data_files,
    "delete_files": delete_files, "manifests": manifests, "entries": entries, "partitions": partitions,
}

# Metadata tables that describe the table, not one snapshot: time travel does not apply.
TABLE_LEVEL = ("snapshots", "history", "refs")


# =========================================================================== Paimon system tables
# Paimon's system tables (``t$snapshots``, ``t$files``...), with Paimon's column names. In SQL they
# are ``db.t.snapshots`` or ``db.`t$snapshots```. Partitions are shown as their directory
# (``dt=2024-01-01/region=eu``), value statistics as ``{col=value, ...}`` strings as Paimon does.
PAIMON_METADATA_TABLES = ("snapshots", "schemas", "options", "files", "manifests", "partitions", "tags")
PAIMON_TABLE_LEVEL = ("snapshots", "schemas", "options", "tags")


def _local_ms(ms: Optional[int]):
    """Paimon's file creation time: local wall-clock millis stored as if UTC."""
    if ms is None:
        return None
    return _dt.datetime(1970, 1, 1) + _dt.timedelta(milliseconds=ms)


def paimon_snapshots(table, snapshot=None):
    schema = ("snapshot_id bigint, schema_id bigint, commit_user string, commit_identifier bigint, "
              "commit_kind string, commit_time timestamp, base_manifest_list string, delta_manifest_list string, "
              "changelog_manifest_list string, total_record_count bigint, delta_record_count bigint, "
              "changelog_record_count bigint, watermark bigint")
    rows = [(s.id, s.schema_id, s.commit_user, s.commit_identifier, s.commit_kind, _ts(s.time_millis),
             s.base_manifest_list, s.delta_manifest_list, s.changelog_manifest_list, s.total_record_count,
             s.delta_record_count, s.changelog_record_count, s.watermark) for s in table.snapshots()]
    return schema, rows


def _paimon_schemas(table) -> dict:
    from icefloe.paimon.schema import list_schema_ids, load_schema

    return {i: load_schema(table.io, table.location, i) for i in list_schema_ids(table.io, table.location)}


def paimon_schemas(table, snapshot=None):
    import json

    from icefloe.paimon.types import field_to_json

    schema = ("schema_id bigint, fields string, partition_keys string, primary_keys string, options string, "
              "comment string, update_time timestamp")
    rows = [(s.id, json.dumps([field_to_json(f) for f in s.fields]), json.dumps(list(s.partition_keys)),
             json.dumps(list(s.primary_keys)), json.dumps(dict(s.options)), s.comment, _ts(s.time_millis))
            for s in sorted(_paimon_schemas(table).values(), key=lambda s: s.id)]
    return schema, rows


def paimon_options(table, snapshot=None):
    return "key string, value string", sorted(table.refresh().options.items())


def _stats_text(names, values) -> Optional[str]:
    if values is None:
        return None
    return "{" + ", ".join(f"{n}={'null' if v is None else v}" for n, v in zip(names, values)) + "}"


def _paimon_entries(table, snapshot):
    """(entry, partition directory) of the live files of ``snapshot``; paths filled in."""
    from icefloe.paimon.scan import plan

    store = table.refresh().store
    # planned from the snapshot itself: a tag's snapshot may have expired
    entries = plan(store, snapshot, None, table.schema_by_id(snapshot.schema_id), table.schema_by_id) \
        if snapshot is not None else []
    for e in entries:
        values = store.partition_values(e.partition)
        yield e, (store.partition_dir(values) if table.partition_keys else "")


def paimon_files(table, snapshot=None):
    schema = ("partition string, bucket int, file_path string, file_format string, schema_id bigint, "
              "level int, record_count bigint, file_size_in_bytes bigint, null_value_counts string, "
              "min_value_stats string, max_value_stats string, min_sequence_number bigint, "
              "max_sequence_number bigint, creation_time timestamp")
    schemas = _paimon_schemas(table)
    rows = []
    for e, part in _paimon_entries(table, snapshot):
        f = e.file
        mins = maxs = counts = None
        fields = schemas[f.schema_id].fields if f.schema_id in schemas else []
        if f.value_stats_cols is not None:
            by_name = {x.name: x for x in fields}
            fields = [by_name[c] for c in f.value_stats_cols if c in by_name]
        names = [x.name for x in fields]
        try:
            mins, maxs, counts = f.value_stats.decode([x.type for x in fields])
        except Exception:       # stats of another layout: shown as unknown, never guessed
            pass
        fmt = f.file_name.rsplit(".", 1)[-1] if "." in f.file_name else None
        rows.append((part, e.bucket, f.file_path, fmt, f.schema_id, f.level, f.row_count, f.file_size,
                     _stats_text(names, counts), _stats_text(names, mins), _stats_text(names, maxs),
                     f.min_sequence_number, f.max_sequence_number, _local_ms(f.creation_time)))
    return schema, rows


def paimon_manifests(table, snapshot=None):
    schema = "file_name string, file_size bigint, num_added_files bigint, num_deleted_files bigint, schema_id bigint"
    store = table.refresh().store
    rows = [(m.file_name, m.file_size, m.num_added_files, m.num_deleted_files, m.schema_id)
            for m in store.data_manifests(snapshot)]
    return schema, rows


def paimon_partitions(table, snapshot=None):
    schema = ("partition string, record_count bigint, file_size_in_bytes bigint, file_count bigint, "
              "last_update_time timestamp")
    acc: dict = {}
    for e, part in _paimon_entries(table, snapshot):
        a = acc.setdefault(part, [0, 0, 0, None])
        a[0] += e.file.row_count
        a[1] += e.file.file_size
        a[2] += 1
        if e.file.creation_time is not None and (a[3] is None or e.file.creation_time > a[3]):
            a[3] = e.file.creation_time
    rows = [(part, a[0], a[1], a[2], _local_ms(a[3])) for part, a in sorted(acc.items())]
    return schema, rows


def paimon_tags(table, snapshot=None):
    """Paimon's ``$tags``: one row per tag, ordered by name; ``create_time`` and
    ``time_retained`` only for tags created with a retention time."""
    from icefloe.paimon.tag import duration_text

    schema = ("tag_name string, snapshot_id bigint, schema_id bigint, commit_time timestamp, "
              "record_count bigint, create_time timestamp, time_retained string")
    rows = [(name, t.snapshot.id, t.snapshot.schema_id, _ts(t.snapshot.time_millis), t.snapshot.total_record_count,
             t.create_time, duration_text(t.time_retained)) for name, t in sorted(table.tags().items())]
    return schema, rows


PAIMON_BUILDERS = {
    "snapshots": paimon_snapshots, "schemas": paimon_schemas, "options": paimon_options, "files": paimon_files,
    "manifests": paimon_manifests, "partitions": paimon_partitions, "tags": paimon_tags,
}
