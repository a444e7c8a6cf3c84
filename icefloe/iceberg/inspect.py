# pyright: strict
"""Iceberg's metadata tables (spec: Snapshots, Manifests, Manifest Lists, Snapshot References),
built once, as Arrow tables, with the columns Iceberg's Spark integration shows.

``t.metadata_table("snapshots")`` (Arrow), ``t.inspect.snapshots()`` (Spark) and
``SELECT * FROM db.t.snapshots`` all come from here: same table names, column names,
order and types as with Iceberg's runtime. Rows are built from the metadata and manifests
(they are small); each table gets an explicit Arrow schema whose types map one to one to
the Spark types the runtime shows (timestamps with a zone are Spark TIMESTAMP, uuids
strings, binary and fixed values BINARY).

Partition values are shown in the table's unified partition type: the union of
all specs' fields (ordered by field id, named as in the newest spec that has
them), with nulls for fields a file's spec does not have. As in Java, tables
that were never partitioned have no ``partition`` column.
"""
from __future__ import annotations

import datetime as _dt
import uuid as _uuid
from typing import TYPE_CHECKING, Any, Callable, Optional

import pyarrow as pa

from icefloe.core.types import (
    BinaryType, DateType, DecimalType, FixedType, IcebergType, NestedField, StructType, TimestampType, TimestamptzType,
    UUIDType, is_micros, is_nanos,
)
from icefloe.iceberg import conversions
from icefloe.iceberg.manifest import DATA, DELETED, EQUALITY_DELETES, POSITION_DELETES, DataFile
from icefloe.iceberg.puffin import vector_positions
from icefloe.iceberg.manifest_reader import load_manifest_entries, snapshot_manifests
from icefloe.iceberg.manifest_list import DATA_MANIFEST, ManifestFile
from icefloe.iceberg.refs import ancestors
from icefloe.iceberg.snapshot import Snapshot
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.iceberg.transforms import Transform, VoidTransform

if TYPE_CHECKING:
    from icefloe.iceberg.table import BaseTable

UTC = _dt.timezone.utc


# --------------------------------------------------------------------------- values
def _ts(ms: Optional[int]) -> Optional[_dt.datetime]:
    return None if ms is None else conversions.EPOCH_DT_UTC + _dt.timedelta(milliseconds=ms)


def spark_value(t: IcebergType, v: Any) -> Any:
    """An internal value as the Python value Spark expects for ``to_spark_type(t)``."""
    if v is None:
        return None
    try:
        if isinstance(t, DateType):
            return conversions.days_to_date(v)
        if is_micros(t) and isinstance(t, (TimestampType, TimestamptzType)):
            return conversions.micros_to_datetime(v, utc=isinstance(t, TimestamptzType))
        if is_nanos(t):       # Spark holds microseconds
            return conversions.nanos_to_datetime(v, utc=isinstance(t, TimestamptzType))
    except OverflowError:  # outside Python's years 1..9999
        return None
    if isinstance(t, UUIDType):
        return str(v if isinstance(v, _uuid.UUID) else _uuid.UUID(bytes=bytes(v)))
    if t == BinaryType() or isinstance(t, FixedType):
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
    fields: dict[int, tuple[str, Transform, IcebergType]] = {}
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


def _coerce(meta: TableMetadata, unified: StructType, spec_id: int, values: tuple[Any, ...]) -> tuple[Any, ...]:
    spec = meta.spec_by_id(spec_id)
    by_id = {f.field_id: v for f, v in zip(spec.fields, values)}
    return tuple(spark_value(f.field_type, by_id.get(f.field_id)) for f in unified.fields)


# --------------------------------------------------------------------------- Arrow schemas
_PRIMITIVE = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
              "double": pa.float64(), "date": pa.date32(), "time": pa.int64(),
              "timestamp": pa.timestamp("us"), "timestamptz": pa.timestamp("us", tz="UTC"),
              # spark_value gives nanosecond timestamps as Spark holds them: microseconds
              "timestamp_ns": pa.timestamp("us"), "timestamptz_ns": pa.timestamp("us", tz="UTC"),
              "string": pa.string(), "uuid": pa.string(), "binary": pa.binary()}
LONG, INT, STRING, BOOL, BINARY = pa.int64(), pa.int32(), pa.string(), pa.bool_(), pa.binary()
TIMESTAMP = pa.timestamp("us", tz="UTC")


def value_type(t: IcebergType) -> pa.DataType:
    """The Arrow type of a primitive value as ``spark_value`` gives it (fixed[N] is binary)."""
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    return _PRIMITIVE.get(str(t), pa.binary())


def _field(name: str, dt: pa.DataType, nullable: bool = True) -> pa.Field:
    return pa.field(name, dt, nullable)


def _map(k: pa.DataType, v: pa.DataType) -> pa.DataType:
    return pa.map_(k, v)


def _list(element: pa.DataType, contains_null: bool = True) -> pa.DataType:
    return pa.list_(pa.field("element", element, contains_null))


def _struct_type(struct: StructType) -> pa.DataType:
    return pa.struct([_field(f.name, value_type(f.field_type)) for f in struct.fields])


def _relaxed(t: pa.DataType) -> pa.DataType:
    """``t`` with every nested field nullable: the type Python values convert to (pyarrow refuses
    nested non-nullable fields there); the array is then viewed as ``t`` (the same layout)."""
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _relaxed(f.type)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, _relaxed(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(_relaxed(t.key_type), _relaxed(t.item_type))
    return t


def _array(values: list[Any], t: pa.DataType) -> pa.Array:
    loose = _relaxed(t)
    arr = pa.array(values, type=loose)
    return arr if loose == t else arr.view(t)


def arrow_table(rows: list[tuple[Any, ...]], fields: list[pa.Field]) -> pa.Table:
    """Rows (tuples in field order, nested structs as tuples) as an Arrow table of ``fields``."""
    schema = pa.schema(fields)
    columns: list[tuple[Any, ...]] = list(zip(*rows)) if rows else [() for _ in fields]
    return pa.Table.from_arrays([_array(list(c), f.type) for c, f in zip(columns, fields)], schema=schema)


def _readable_columns(meta: TableMetadata) -> list[tuple[str, NestedField]]:
    """(dotted name, field) of every primitive column, sorted by name (as Java's readable_metrics)."""
    return sorted(((n, f) for n, f in meta.schema.all_fields() if f.field_type.is_primitive), key=lambda x: x[0])


def _readable_metrics_type(meta: TableMetadata) -> pa.DataType:
    cols: list[pa.Field] = []
    for name, f in _readable_columns(meta):
        vt = value_type(f.field_type)
        cols.append(_field(name, pa.struct([
            _field("column_size", LONG), _field("value_count", LONG),
            _field("null_value_count", LONG), _field("nan_value_count", LONG),
            _field("lower_bound", vt), _field("upper_bound", vt)]), False))
    return pa.struct(cols)


def _data_file_fields(unified: Optional[StructType]) -> list[pa.Field]:
    int_long = _map(INT, LONG)
    fields = [_field("content", INT, False), _field("file_path", STRING, False),
              _field("file_format", STRING, False), _field("spec_id", INT, False)]
    if unified is not None:
        fields.append(_field("partition", _struct_type(unified), False))
    fields += [
        _field("record_count", LONG, False), _field("file_size_in_bytes", LONG, False),
        _field("column_sizes", int_long), _field("value_counts", int_long),
        _field("null_value_counts", int_long), _field("nan_value_counts", int_long),
        _field("lower_bounds", _map(INT, BINARY)),
        _field("upper_bounds", _map(INT, BINARY)),
        _field("key_metadata", BINARY), _field("split_offsets", _list(LONG)),
        _field("equality_ids", _list(INT)), _field("sort_order_id", INT),
        # v3 fields (row lineage, deletion vectors) are null in v2 tables; referenced_data_file is v2's too
        _field("first_row_id", LONG), _field("referenced_data_file", STRING),
        _field("content_offset", LONG), _field("content_size_in_bytes", LONG),
    ]
    return fields


def _bytes_map(d: Optional[dict[int, bytes]]) -> Optional[dict[int, bytearray]]:
    return None if d is None else {k: bytearray(v) for k, v in d.items()}


class MetadataTables:
    """Iceberg's metadata tables of one table (a ``BaseTable``), read at call time, as Arrow."""

    def __init__(self, table: BaseTable):
        self._table = table

    # ------------------------------------------------------------------ plumbing
    def _meta(self) -> TableMetadata:
        return self._table.refresh().metadata

    def _df(self, rows: list[tuple[Any, ...]], fields: list[pa.Field]) -> pa.Table:
        return arrow_table(rows, fields)

    def _unified(self, meta: TableMetadata) -> Optional[StructType]:
        unified = unified_partition_type(meta)
        return unified if unified.fields else None

    def _snapshot(self, meta: TableMetadata, snapshot_id: Optional[int]) -> Optional[Snapshot]:
        return meta.snapshot_by_id(int(snapshot_id)) if snapshot_id is not None else meta.current_snapshot

    def _file_row(self, meta: TableMetadata, unified: Optional[StructType], f: DataFile) -> list[Any]:
        row: list[Any] = [f.content, f.file_path, f.file_format.upper(), f.spec_id]
        if unified is not None:
            row.append(_coerce(meta, unified, f.spec_id, f.partition))
        row += [f.record_count, f.file_size_in_bytes, f.column_sizes, f.value_counts, f.null_value_counts,
                f.nan_value_counts, _bytes_map(f.lower_bounds), _bytes_map(f.upper_bounds),
                None if f.key_metadata is None else bytearray(f.key_metadata), f.split_offsets, f.equality_ids,
                f.sort_order_id, f.first_row_id if f.content == 0 else None, f.referenced_data_file,
                f.content_offset, f.content_size_in_bytes]
        return row

    def _readable_metrics(self, meta: TableMetadata, f: DataFile) -> tuple[Any, ...]:
        out: list[tuple[Any, ...]] = []
        for _name, col in _readable_columns(meta):
            fid = col.field_id

            def get(d: Optional[dict[int, Any]]) -> Any:
                return None if d is None else d.get(fid)

            out.append((get(f.column_sizes), get(f.value_counts), get(f.null_value_counts),
                        get(f.nan_value_counts), _bound(col.field_type, get(f.lower_bounds)),
                        _bound(col.field_type, get(f.upper_bounds))))
        return tuple(out)

    # ------------------------------------------------------------------ tables
    def snapshots(self) -> pa.Table:
        meta = self._meta()
        rows = [(_ts(s.timestamp_ms), s.snapshot_id, s.parent_snapshot_id, s.operation or None,
                 s.manifest_list, dict(s.summary)) for s in meta.snapshots]
        return self._df(rows, [
            _field("committed_at", TIMESTAMP, False), _field("snapshot_id", LONG, False),
            _field("parent_id", LONG), _field("operation", STRING),
            _field("manifest_list", STRING), _field("summary", _map(STRING, STRING))])

    def history(self) -> pa.Table:
        meta = self._meta()
        current = {s.snapshot_id for s in ancestors(meta, meta.current_snapshot_id)}
        parents = {s.snapshot_id: s.parent_snapshot_id for s in meta.snapshots}
        rows = [(_ts(e["timestamp-ms"]), e["snapshot-id"], parents.get(e["snapshot-id"]),
                 e["snapshot-id"] in current) for e in meta.snapshot_log]
        return self._df(rows, [
            _field("made_current_at", TIMESTAMP, False), _field("snapshot_id", LONG, False),
            _field("parent_id", LONG), _field("is_current_ancestor", BOOL, False)])

    def metadata_log_entries(self) -> pa.Table:
        meta = self._meta()
        entries = [(e["timestamp-ms"], e["metadata-file"]) for e in meta.metadata_log]
        entries.append((meta.last_updated_ms, self._table.metadata_location))
        by_id = {s.snapshot_id: s for s in meta.snapshots}
        rows: list[tuple[Any, ...]] = []
        for ts, path in entries:
            sid = None
            for e in meta.snapshot_log:
                if e["timestamp-ms"] <= ts:
                    sid = e["snapshot-id"]
            snap = by_id.get(sid) if sid is not None else None
            rows.append((_ts(ts), path, sid, snap.schema_id if snap else None,
                         snap.sequence_number if snap else None))
        return self._df(rows, [
            _field("timestamp", TIMESTAMP, False), _field("file", STRING, False),
            _field("latest_snapshot_id", LONG), _field("latest_schema_id", INT),
            _field("latest_sequence_number", LONG)])

    def refs(self) -> pa.Table:
        meta = self._meta()
        rows = [(name, r.type.upper(), r.snapshot_id, r.max_ref_age_ms, r.min_snapshots_to_keep,
                 r.max_snapshot_age_ms) for name, r in sorted(meta.refs.items())]
        return self._df(rows, [
            _field("name", STRING, False), _field("type", STRING, False),
            _field("snapshot_id", LONG, False), _field("max_reference_age_in_ms", LONG),
            _field("min_snapshots_to_keep", INT), _field("max_snapshot_age_in_ms", LONG)])

    def _all_manifests(self, meta: TableMetadata) -> list[ManifestFile]:
        """Each manifest any snapshot lists, once."""
        seen: dict[str, ManifestFile] = {}
        for snap in meta.snapshots:
            for m in snapshot_manifests(self._table.io, snap):
                seen.setdefault(m.manifest_path, m)
        return list(seen.values())

    def _files(self, contents: tuple[int, ...], snapshot_id: Optional[int], every_snapshot: bool = False) -> pa.Table:
        meta = self._meta()
        unified = self._unified(meta)
        io = self._table.io
        manifests = self._all_manifests(meta) if every_snapshot else \
            snapshot_manifests(io, self._snapshot(meta, snapshot_id))
        rows: list[tuple[Any, ...]] = []
        seen: set[str] = set()
        for m in manifests:
            for e in load_manifest_entries(io, meta, m):
                f = e.data_file
                if e.status != DELETED and f.content in contents and f.delete_key not in seen:
                    seen.add(f.delete_key)     # deletion vectors share a Puffin file
                    rows.append(tuple(self._file_row(meta, unified, f)) + (self._readable_metrics(meta, f),))
        fields = _data_file_fields(unified) + [_field("readable_metrics", _readable_metrics_type(meta))]
        return self._df(rows, fields)

    def all_files(self) -> pa.Table:
        """The data and delete files of every snapshot (each once)."""
        return self._files((DATA, POSITION_DELETES, EQUALITY_DELETES), None, every_snapshot=True)

    def all_data_files(self) -> pa.Table:
        return self._files((DATA,), None, every_snapshot=True)

    def all_delete_files(self) -> pa.Table:
        return self._files((POSITION_DELETES, EQUALITY_DELETES), None, every_snapshot=True)

    def position_deletes(self, snapshot_id: Optional[int] = None) -> pa.Table:
        """The rows of the live position delete files: the data file and position each deletes,
        with the delete file's partition, spec id and path."""
        import pyarrow.parquet as pq

        meta = self._meta()
        unified = self._unified(meta)
        io = self._table.io
        rows: list[tuple[Any, ...]] = []
        for m in snapshot_manifests(io, self._snapshot(meta, snapshot_id)):
            for e in load_manifest_entries(io, meta, m):
                f = e.data_file
                if e.status == DELETED or f.content != POSITION_DELETES:
                    continue
                if f.is_deletion_vector:
                    positions = list(vector_positions(io, f))
                    pairs = zip([f.referenced_data_file] * len(positions), positions)
                else:
                    with io.open_read(f.file_path) as fh:
                        got = pq.read_table(fh, columns=["file_path", "pos"])
                    pairs = zip(got.column("file_path").to_pylist(), got.column("pos").to_pylist())
                part = _coerce(meta, unified, f.spec_id, f.partition) if unified is not None else None
                for path, pos in pairs:
                    rows.append((path, pos) + ((part,) if unified is not None else ()) + (f.spec_id, f.file_path))
        fields = [_field("file_path", STRING, False), _field("pos", LONG, False)]
        if unified is not None:
            fields.append(_field("partition", _struct_type(unified), False))
        fields += [_field("spec_id", INT, False), _field("delete_file_path", STRING, False)]
        return self._df(rows, fields)

    def files(self, snapshot_id: Optional[int] = None) -> pa.Table:
        """Live data and delete files of the current (or given) snapshot."""
        return self._files((DATA, POSITION_DELETES, EQUALITY_DELETES), snapshot_id)

    def data_files(self, snapshot_id: Optional[int] = None) -> pa.Table:
        return self._files((DATA,), snapshot_id)

    def delete_files(self, snapshot_id: Optional[int] = None) -> pa.Table:
        return self._files((POSITION_DELETES, EQUALITY_DELETES), snapshot_id)

    def entries(self, snapshot_id: Optional[int] = None, every_snapshot: bool = False) -> pa.Table:
        """Every manifest entry of the snapshot, deleted ones included (status 0/1/2)."""
        meta = self._meta()
        unified = self._unified(meta)
        io = self._table.io
        rows: list[tuple[Any, ...]] = []
        manifests = self._all_manifests(meta) if every_snapshot else \
            snapshot_manifests(io, self._snapshot(meta, snapshot_id))
        for m in manifests:
            for e in load_manifest_entries(io, meta, m):
                rows.append((e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number,
                             tuple(self._file_row(meta, unified, e.data_file)),
                             self._readable_metrics(meta, e.data_file)))
        return self._df(rows, [
            _field("status", INT, False), _field("snapshot_id", LONG),
            _field("sequence_number", LONG), _field("file_sequence_number", LONG),
            _field("data_file", pa.struct(_data_file_fields(unified)), False),
            _field("readable_metrics", _readable_metrics_type(meta))])

    def all_entries(self) -> pa.Table:
        """The entries of every manifest any snapshot lists (each manifest once)."""
        return self.entries(every_snapshot=True)

    def _manifest_fields(self, all_manifests: bool) -> list[pa.Field]:
        summary = pa.struct([
            _field("contains_null", BOOL, False), _field("contains_nan", BOOL),
            _field("lower_bound", STRING), _field("upper_bound", STRING)])
        fields = [
            _field("content", INT, False), _field("path", STRING, False),
            _field("length", LONG, False), _field("partition_spec_id", INT, False),
            _field("added_snapshot_id", LONG, False),
            _field("added_data_files_count", INT, False),
            _field("existing_data_files_count", INT, False),
            _field("deleted_data_files_count", INT, False),
            _field("added_delete_files_count", INT, False),
            _field("existing_delete_files_count", INT, False),
            _field("deleted_delete_files_count", INT, False),
            _field("partition_summaries", _list(summary, False), False)]
        if all_manifests:
            fields += [_field("reference_snapshot_id", LONG, False), _field("key_metadata", BINARY)]
        return fields

    def _manifest_row(self, meta: TableMetadata, m: ManifestFile) -> tuple[Any, ...]:
        spec = meta.spec_by_id(m.partition_spec_id)
        summaries: list[tuple[Any, ...]] = []
        for f, s in zip(spec.fields, m.partitions or []):
            src = meta.schema.find_field_or_none(f.source_id)
            rt = f.transform.result_type(src.field_type) if src is not None else None

            def human(raw: Optional[bytes]) -> Optional[str]:
                if raw is None or rt is None or src is None:
                    return None
                return f.transform.human(src.field_type, conversions.from_bytes(rt, raw))

            summaries.append((bool(s.contains_null), s.contains_nan, human(s.lower_bound), human(s.upper_bound)))
        data = m.content == DATA_MANIFEST

        def count(n: Optional[int]) -> int:
            return n or 0

        return (m.content, m.manifest_path, m.manifest_length, m.partition_spec_id, m.added_snapshot_id,
                count(m.added_files_count) if data else 0, count(m.existing_files_count) if data else 0,
                count(m.deleted_files_count) if data else 0, 0 if data else count(m.added_files_count),
                0 if data else count(m.existing_files_count), 0 if data else count(m.deleted_files_count),
                summaries)

    def manifests(self, snapshot_id: Optional[int] = None) -> pa.Table:
        meta = self._meta()
        rows = [self._manifest_row(meta, m)
                for m in snapshot_manifests(self._table.io, self._snapshot(meta, snapshot_id))]
        return self._df(rows, self._manifest_fields(False))

    def all_manifests(self) -> pa.Table:
        """The manifests of every snapshot, once per snapshot that lists them."""
        meta = self._meta()
        rows: list[tuple[Any, ...]] = []
        for snap in meta.snapshots:
            for m in snapshot_manifests(self._table.io, snap):
                key = None if m.key_metadata is None else bytearray(m.key_metadata)
                rows.append(self._manifest_row(meta, m) + (snap.snapshot_id, key))
        return self._df(rows, self._manifest_fields(True))

    def partitions(self, snapshot_id: Optional[int] = None) -> pa.Table:
        """Per partition (in the unified partition type): counts and sizes of live files."""
        meta = self._meta()
        unified = self._unified(meta)
        by_id = {s.snapshot_id: s for s in meta.snapshots}
        stats: dict[tuple[Any, ...], dict[str, Any]] = {}
        for m in snapshot_manifests(self._table.io, self._snapshot(meta, snapshot_id)):
            for e in load_manifest_entries(self._table.io, meta, m):
                if e.status == DELETED:
                    continue
                f = e.data_file
                key = _coerce(meta, unified, f.spec_id, f.partition) if unified is not None else ()
                # binary partition values are bytearrays (unhashable): group by their bytes
                group = tuple(bytes(v) if isinstance(v, bytearray) else v for v in key)
                p = stats.setdefault(group, {"key": key, "spec_id": f.spec_id, "records": 0, "files": 0, "size": 0,
                                           "pos_records": 0, "pos_files": 0, "eq_records": 0, "eq_files": 0,
                                           "updated_at": None, "updated_by": None})
                snap = by_id.get(e.snapshot_id) if e.snapshot_id is not None else None
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
        rows: list[tuple[Any, ...]] = []
        for p in stats.values():
            row: list[Any] = [p["key"], p["spec_id"]] if unified is not None else []
            row += [p["records"], p["files"], p["size"], p["pos_records"], p["pos_files"], p["eq_records"],
                    p["eq_files"], _ts(p["updated_at"]), p["updated_by"]]
            rows.append(tuple(row))
        fields = [_field("partition", _struct_type(unified), False), _field("spec_id", INT, False)] \
            if unified is not None else []
        fields += [
            _field("record_count", LONG, False), _field("file_count", INT, False),
            _field("total_data_file_size_in_bytes", LONG, False),
            _field("position_delete_record_count", LONG, False),
            _field("position_delete_file_count", INT, False),
            _field("equality_delete_record_count", LONG, False),
            _field("equality_delete_file_count", INT, False),
            _field("last_updated_at", TIMESTAMP), _field("last_updated_snapshot_id", LONG)]
        return self._df(rows, fields)


# Metadata tables by name; those describing the table, not one snapshot, ignore time travel.
NAMES = ("snapshots", "history", "metadata_log_entries", "refs", "files", "data_files", "delete_files",
         "entries", "manifests", "all_manifests", "partitions", "all_files", "all_data_files", "all_delete_files",
         "all_entries", "position_deletes")
TABLE_LEVEL = ("snapshots", "history", "metadata_log_entries", "refs", "all_manifests", "all_files",
               "all_data_files", "all_delete_files", "all_entries")


def metadata_table(table: BaseTable, name: str, snapshot_id: Optional[int] = None) -> pa.Table:
    """Metadata table ``name`` of ``table`` (of the current or the given snapshot) as Arrow."""
    build: Callable[..., pa.Table] = getattr(MetadataTables(table), name)
    return build() if name in TABLE_LEVEL else build(snapshot_id=snapshot_id)
