"""Metadata tables as Spark DataFrames, with the columns Iceberg's Spark integration shows.

``t.inspect.snapshots()`` is what ``SELECT * FROM db.t.snapshots`` shows in Spark
with Iceberg's runtime: same table names, column names, order and types. Rows
are built in Python from the metadata and manifests (they are small), and each
DataFrame gets an explicit Spark schema.

Partition values are shown in the table's unified partition type: the union of
all specs' fields (ordered by field id, named as in the newest spec that has
them), with nulls for fields a file's spec does not have. As in Java, tables
that were never partitioned have no ``partition`` column.
"""
from __future__ import annotations

import datetime as _dt
import uuid as _uuid
from typing import Any, Optional

from icefloe.core.types import IcebergType, NestedField, StructType, to_spark_type
from icefloe.iceberg import conversions
from icefloe.iceberg.manifest import DATA, DELETED, EQUALITY_DELETES, POSITION_DELETES
from icefloe.iceberg.manifest_reader import load_manifest_entries, snapshot_manifests
from icefloe.iceberg.manifest_list import DATA_MANIFEST
from icefloe.iceberg.refs import ancestors
from icefloe.iceberg.snapshot import Snapshot
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.iceberg.transforms import VoidTransform

UTC = _dt.timezone.utc


# --------------------------------------------------------------------------- values
def _ts(ms: Optional[int]) -> Optional[_dt.datetime]:
    return None if ms is None else conversions.EPOCH_DT_UTC + _dt.timedelta(milliseconds=ms)


def spark_value(t: IcebergType, v: Any) -> Any:
    """An internal value as the Python value Spark expects for ``to_spark_type(t)``."""
    if v is None:
        return None
    s = str(t)
    try:
        if s == "date":
            return conversions.days_to_date(v)
        if s == "timestamptz":
            return conversions.micros_to_datetime(v, utc=True)
        if s == "timestamp":
            return conversions.micros_to_datetime(v)
    except OverflowError:  # outside Python's years 1..9999
        return None
    if s == "uuid":
        return str(v if isinstance(v, _uuid.UUID) else _uuid.UUID(bytes=bytes(v)))
    if s == "binary" or s.startswith("fixed"):
        return bytearray(v)
    return v


def _bound(t: IcebergType, raw: Optional[bytes]) -> Any:
    if raw is None:
        return None
    try:
        return spark_value(t, conversions.from_bytes(t, raw))
    except Exception:  # a bound this reader cannot decode is shown as unknown
        return None


# --------------------------------------------------------------------------- partition type
def unified_partition_type(meta: TableMetadata) -> StructType:
    """All partition fields of all specs: by field id, named as in the newest spec having them."""
    schema = meta.schema
    fields: dict = {}
    for spec in sorted(meta.partition_specs, key=lambda s: s.spec_id, reverse=True):
        for f in spec.fields:
            if f.field_id in fields and not isinstance(fields[f.field_id][1], VoidTransform):
                continue
            src = schema.find_field_or_none(f.source_id)
            if src is None:
                continue
            fields[f.field_id] = (f.name, f.transform, f.transform.result_type(src.field_type))
    live = [fid for fid, (_, tr, _) in fields.items() if not isinstance(tr, VoidTransform)]
    return StructType([NestedField(fid, fields[fid][0], fields[fid][2], False) for fid in sorted(live)])


def _coerce(meta: TableMetadata, unified: StructType, spec_id: int, values: tuple) -> tuple:
    spec = meta.spec_by_id(spec_id)
    by_id = {f.field_id: v for f, v in zip(spec.fields, values)}
    return tuple(spark_value(f.field_type, by_id.get(f.field_id)) for f in unified.fields)


# --------------------------------------------------------------------------- Spark schemas
def _T():
    from pyspark.sql import types as T

    return T


def _field(name: str, dt, nullable: bool = True):
    return _T().StructField(name, dt, nullable)


def _struct_type(struct: StructType):
    T = _T()
    return T.StructType([_field(f.name, to_spark_type(f.field_type)) for f in struct.fields])


def _readable_columns(meta: TableMetadata) -> list:
    """(dotted name, field) of every primitive column, sorted by name (as Java's readable_metrics)."""
    return sorted(((n, f) for n, f in meta.schema.all_fields() if f.field_type.is_primitive), key=lambda x: x[0])


def _readable_metrics_type(meta: TableMetadata):
    T = _T()
    cols = []
    for name, f in _readable_columns(meta):
        vt = to_spark_type(f.field_type)
        cols.append(_field(name, T.StructType([
            _field("column_size", T.LongType()), _field("value_count", T.LongType()),
            _field("null_value_count", T.LongType()), _field("nan_value_count", T.LongType()),
            _field("lower_bound", vt), _field("upper_bound", vt)]), False))
    return T.StructType(cols)


def _data_file_fields(unified: Optional[StructType]) -> list:
    T = _T()
    int_long = T.MapType(T.IntegerType(), T.LongType())
    fields = [_field("content", T.IntegerType(), False), _field("file_path", T.StringType(), False),
              _field("file_format", T.StringType(), False), _field("spec_id", T.IntegerType(), False)]
    if unified is not None:
        fields.append(_field("partition", _struct_type(unified), False))
    fields += [
        _field("record_count", T.LongType(), False), _field("file_size_in_bytes", T.LongType(), False),
        _field("column_sizes", int_long), _field("value_counts", int_long),
        _field("null_value_counts", int_long), _field("nan_value_counts", int_long),
        _field("lower_bounds", T.MapType(T.IntegerType(), T.BinaryType())),
        _field("upper_bounds", T.MapType(T.IntegerType(), T.BinaryType())),
        _field("key_metadata", T.BinaryType()), _field("split_offsets", T.ArrayType(T.LongType())),
        _field("equality_ids", T.ArrayType(T.IntegerType())), _field("sort_order_id", T.IntegerType()),
    ]
    return fields


def _bytes_map(d: Optional[dict]) -> Optional[dict]:
    return None if d is None else {k: bytearray(v) for k, v in d.items()}


class InspectTable:
    """``table.inspect``: Iceberg's metadata tables of one table, read at call time."""

    def __init__(self, table):
        self._table = table

    # ------------------------------------------------------------------ plumbing
    def _meta(self) -> TableMetadata:
        return self._table.refresh().metadata

    def _df(self, rows: list, fields: list):
        return self._table.spark.createDataFrame(rows, _T().StructType(fields))

    def _unified(self, meta: TableMetadata) -> Optional[StructType]:
        unified = unified_partition_type(meta)
        return unified if unified.fields else None

    def _snapshot(self, meta: TableMetadata, snapshot_id: Optional[int]) -> Optional[Snapshot]:
        return meta.snapshot_by_id(int(snapshot_id)) if snapshot_id is not None else meta.current_snapshot

    def _file_row(self, meta, unified, f) -> list:
        row = [f.content, f.file_path, f.file_format.upper(), f.spec_id]
        if unified is not None:
            row.append(_coerce(meta, unified, f.spec_id, f.partition))
        row += [f.record_count, f.file_size_in_bytes, f.column_sizes, f.value_counts, f.null_value_counts,
                f.nan_value_counts, _bytes_map(f.lower_bounds), _bytes_map(f.upper_bounds),
                None if f.key_metadata is None else bytearray(f.key_metadata), f.split_offsets, f.equality_ids,
                f.sort_order_id]
        return row

    def _readable_metrics(self, meta, f) -> tuple:
        out = []
        for _name, col in _readable_columns(meta):
            fid = col.field_id

            def get(d):
                return None if d is None else d.get(fid)

            out.append((get(f.column_sizes), get(f.value_counts), get(f.null_value_counts),
                        get(f.nan_value_counts), _bound(col.field_type, get(f.lower_bounds)),
                        _bound(col.field_type, get(f.upper_bounds))))
        return tuple(out)

    # ------------------------------------------------------------------ tables
    def snapshots(self):
        T = _T()
        meta = self._meta()
        rows = [(_ts(s.timestamp_ms), s.snapshot_id, s.parent_snapshot_id, s.operation or None,
                 s.manifest_list, dict(s.summary)) for s in meta.snapshots]
        return self._df(rows, [
            _field("committed_at", T.TimestampType(), False), _field("snapshot_id", T.LongType(), False),
            _field("parent_id", T.LongType()), _field("operation", T.StringType()),
            _field("manifest_list", T.StringType()), _field("summary", T.MapType(T.StringType(), T.StringType()))])

    def history(self):
        T = _T()
        meta = self._meta()
        current = {s.snapshot_id for s in ancestors(meta, meta.current_snapshot_id)}
        parents = {s.snapshot_id: s.parent_snapshot_id for s in meta.snapshots}
        rows = [(_ts(e["timestamp-ms"]), e["snapshot-id"], parents.get(e["snapshot-id"]),
                 e["snapshot-id"] in current) for e in meta.snapshot_log]
        return self._df(rows, [
            _field("made_current_at", T.TimestampType(), False), _field("snapshot_id", T.LongType(), False),
            _field("parent_id", T.LongType()), _field("is_current_ancestor", T.BooleanType(), False)])

    def metadata_log_entries(self):
        T = _T()
        meta = self._meta()
        entries = [(e["timestamp-ms"], e["metadata-file"]) for e in meta.metadata_log]
        entries.append((meta.last_updated_ms, self._table.metadata_location))
        by_id = {s.snapshot_id: s for s in meta.snapshots}
        rows = []
        for ts, path in entries:
            sid = None
            for e in meta.snapshot_log:
                if e["timestamp-ms"] <= ts:
                    sid = e["snapshot-id"]
            snap = by_id.get(sid)
            rows.append((_ts(ts), path, sid, snap.schema_id if snap else None,
                         snap.sequence_number if snap else None))
        return self._df(rows, [
            _field("timestamp", T.TimestampType(), False), _field("file", T.StringType(), False),
            _field("latest_snapshot_id", T.LongType()), _field("latest_schema_id", T.IntegerType()),
            _field("latest_sequence_number", T.LongType())])

    def refs(self):
        T = _T()
        meta = self._meta()
        rows = [(name, r.type.upper(), r.snapshot_id, r.max_ref_age_ms, r.min_snapshots_to_keep,
                 r.max_snapshot_age_ms) for name, r in sorted(meta.refs.items())]
        return self._df(rows, [
            _field("name", T.StringType(), False), _field("type", T.StringType(), False),
            _field("snapshot_id", T.LongType(), False), _field("max_reference_age_in_ms", T.LongType()),
            _field("min_snapshots_to_keep", T.IntegerType()), _field("max_snapshot_age_in_ms", T.LongType())])

    def _files(self, contents: tuple, snapshot_id: Optional[int]):
        meta = self._meta()
        unified = self._unified(meta)
        io = self._table.io
        rows = []
        for m in snapshot_manifests(io, self._snapshot(meta, snapshot_id)):
            for e in load_manifest_entries(io, meta, m):
                if e.status != DELETED and e.data_file.content in contents:
                    rows.append(tuple(self._file_row(meta, unified, e.data_file))
                                + (self._readable_metrics(meta, e.data_file),))
        fields = _data_file_fields(unified) + [_field("readable_metrics", _readable_metrics_type(meta))]
        return self._df(rows, fields)

    def files(self, snapshot_id: Optional[int] = None):
        """Live data and delete files of the current (or given) snapshot."""
        return self._files((DATA, POSITION_DELETES, EQUALITY_DELETES), snapshot_id)

    def data_files(self, snapshot_id: Optional[int] = None):
        return self._files((DATA,), snapshot_id)

    def delete_files(self, snapshot_id: Optional[int] = None):
        return self._files((POSITION_DELETES, EQUALITY_DELETES), snapshot_id)

    def entries(self, snapshot_id: Optional[int] = None):
        """Every manifest entry of the snapshot, deleted ones included (status 0/1/2)."""
        T = _T()
        meta = self._meta()
        unified = self._unified(meta)
        io = self._table.io
        rows = []
        for m in snapshot_manifests(io, self._snapshot(meta, snapshot_id)):
            for e in load_manifest_entries(io, meta, m):
                rows.append((e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number,
                             tuple(self._file_row(meta, unified, e.data_file)),
                             self._readable_metrics(meta, e.data_file)))
        return self._df(rows, [
            _field("status", T.IntegerType(), False), _field("snapshot_id", T.LongType()),
            _field("sequence_number", T.LongType()), _field("file_sequence_number", T.LongType()),
            _field("data_file", T.StructType(_data_file_fields(unified)), False),
            _field("readable_metrics", _readable_metrics_type(meta))])

    def _manifest_fields(self, all_manifests: bool) -> list:
        T = _T()
        summary = T.StructType([
            _field("contains_null", T.BooleanType(), False), _field("contains_nan", T.BooleanType()),
            _field("lower_bound", T.StringType()), _field("upper_bound", T.StringType())])
        fields = [
            _field("content", T.IntegerType(), False), _field("path", T.StringType(), False),
            _field("length", T.LongType(), False), _field("partition_spec_id", T.IntegerType(), False),
            _field("added_snapshot_id", T.LongType(), False),
            _field("added_data_files_count", T.IntegerType(), False),
            _field("existing_data_files_count", T.IntegerType(), False),
            _field("deleted_data_files_count", T.IntegerType(), False),
            _field("added_delete_files_count", T.IntegerType(), False),
            _field("existing_delete_files_count", T.IntegerType(), False),
            _field("deleted_delete_files_count", T.IntegerType(), False),
            _field("partition_summaries", T.ArrayType(summary, False), False)]
        if all_manifests:
            fields += [_field("reference_snapshot_id", T.LongType(), False), _field("key_metadata", T.BinaryType())]
        return fields

    def _manifest_row(self, meta: TableMetadata, m) -> tuple:
        spec = meta.spec_by_id(m.partition_spec_id)
        summaries = []
        for f, s in zip(spec.fields, m.partitions or []):
            src = meta.schema.find_field_or_none(f.source_id)
            rt = f.transform.result_type(src.field_type) if src is not None else None

            def human(raw):
                if raw is None or rt is None:
                    return None
                return f.transform.human(src.field_type, conversions.from_bytes(rt, raw))

            summaries.append((bool(s.contains_null), s.contains_nan, human(s.lower_bound), human(s.upper_bound)))
        data = m.content == DATA_MANIFEST

        def count(n):
            return n or 0

        return (m.content, m.manifest_path, m.manifest_length, m.partition_spec_id, m.added_snapshot_id,
                count(m.added_files_count) if data else 0, count(m.existing_files_count) if data else 0,
                count(m.deleted_files_count) if data else 0, 0 if data else count(m.added_files_count),
                0 if data else count(m.existing_files_count), 0 if data else count(m.deleted_files_count),
                summaries)

    def manifests(self, snapshot_id: Optional[int] = None):
        meta = self._meta()
        rows = [self._manifest_row(meta, m)
                for m in snapshot_manifests(self._table.io, self._snapshot(meta, snapshot_id))]
        return self._df(rows, self._manifest_fields(False))

    def all_manifests(self):
        """The manifests of every snapshot, once per snapshot that lists them."""
        meta = self._meta()
        rows = []
        for snap in meta.snapshots:
            for m in snapshot_manifests(self._table.io, snap):
                key = None if m.key_metadata is None else bytearray(m.key_metadata)
                rows.append(self._manifest_row(meta, m) + (snap.snapshot_id, key))
        return self._df(rows, self._manifest_fields(True))

    def partitions(self, snapshot_id: Optional[int] = None):
        """Per partition (in the unified partition type): counts and sizes of live files."""
        T = _T()
        meta = self._meta()
        unified = self._unified(meta)
        by_id = {s.snapshot_id: s for s in meta.snapshots}
        stats: dict = {}
        for m in snapshot_manifests(self._table.io, self._snapshot(meta, snapshot_id)):
            for e in load_manifest_entries(self._table.io, meta, m):
                if e.status == DELETED:
                    continue
                f = e.data_file
                key = _coerce(meta, unified, f.spec_id, f.partition) if unified is not None else ()
                p = stats.setdefault(key, {"spec_id": f.spec_id, "records": 0, "files": 0, "size": 0,
                                           "pos_records": 0, "pos_files": 0, "eq_records": 0, "eq_files": 0,
                                           "updated_at": None, "updated_by": None})
                snap = by_id.get(e.snapshot_id)
                if snap is not None and (p["updated_at"] is None or snap.timestamp_ms > p["updated_at"]):
                    p["updated_at"], p["updated_by"] = snap.timestamp_ms, snap.snapshot_id
                p["spec_id"] = f.spec_id
                if f.content == DATA:
                    p["records"] += f.record_count
                    p["files"] += 1
                    p["size"] += f.file_size_in_bytes
                elif f.content == POSITION_DELETES:
                    p["pos_records"] += f.record_count
                    p["pos_files"] += 1
                else:
                    p["eq_records"] += f.record_count
                    p["eq_files"] += 1
        rows = []
        for key, p in stats.items():
            row = [key, p["spec_id"]] if unified is not None else []
            row += [p["records"], p["files"], p["size"], p["pos_records"], p["pos_files"], p["eq_records"],
                    p["eq_files"], _ts(p["updated_at"]), p["updated_by"]]
            rows.append(tuple(row))
        fields = [_field("partition", _struct_type(unified), False), _field("spec_id", T.IntegerType(), False)] \
            if unified is not None else []
        fields += [
            _field("record_count", T.LongType(), False), _field("file_count", T.IntegerType(), False),
            _field("total_data_file_size_in_bytes", T.LongType(), False),
            _field("position_delete_record_count", T.LongType(), False),
            _field("position_delete_file_count", T.IntegerType(), False),
            _field("equality_delete_record_count", T.LongType(), False),
            _field("equality_delete_file_count", T.IntegerType(), False),
            _field("last_updated_at", T.TimestampType()), _field("last_updated_snapshot_id", T.LongType())]
        return self._df(rows, fields)
