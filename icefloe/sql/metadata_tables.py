"""Iceberg's metadata tables (``t.snapshots``, ``t.files``...) as plain rows.

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
                   "partitions", "refs", "entries")

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
    from icefloe.iceberg.commit import snapshot_manifests

    return snapshot_manifests(table.io, snapshot)


def _entries(table, snapshot):
    from icefloe.iceberg.commit import load_manifest_entries

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


def _ddl_to_struct_body(cols: str) -> str:
    """``a int, b map<int,bigint>`` -> ``a:int,b:map<int,bigint>`` (top-level commas only)."""
    parts, depth, cur = [], 0, ""
    for ch in cols:
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
