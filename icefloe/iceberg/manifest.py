"""Manifests: ``DataFile``, ``ManifestEntry`` and their Avro files (Iceberg spec, "Manifests").

Entries added by a snapshot are written with null ``snapshot_id``-independent
sequence numbers and inherit them from the manifest-list entry on read
("Sequence Number Inheritance"). Existing and deleted entries carry theirs.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional

import fastavro

from icefloe.core.io import FileIO
from icefloe.core.types import Schema, StructType
from icefloe.errors import CorruptMetadataError
from icefloe.iceberg import conversions
from icefloe.iceberg.avro_schemas import avro_name, manifest_entry_schema
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.schema import schema_to_json

# ManifestEntry.status
EXISTING, ADDED, DELETED = 0, 1, 2
# DataFile.content
DATA, POSITION_DELETES, EQUALITY_DELETES = 0, 1, 2


@dataclass
class DataFile:
    file_path: str
    file_format: str
    partition: tuple
    record_count: int
    file_size_in_bytes: int
    content: int = DATA
    column_sizes: Optional[dict] = None
    value_counts: Optional[dict] = None
    null_value_counts: Optional[dict] = None
    nan_value_counts: Optional[dict] = None
    lower_bounds: Optional[dict] = None
    upper_bounds: Optional[dict] = None
    key_metadata: Optional[bytes] = None
    split_offsets: Optional[list] = None
    equality_ids: Optional[list] = None
    sort_order_id: Optional[int] = None
    spec_id: int = 0


@dataclass
class ManifestEntry:
    status: int
    snapshot_id: Optional[int]
    sequence_number: Optional[int]
    file_sequence_number: Optional[int]
    data_file: DataFile


def _map_to_avro(d: Optional[dict]):
    if d is None:
        return None
    return [{"key": k, "value": v} for k, v in sorted(d.items())]


def _map_from_avro(a) -> Optional[dict]:
    if a is None:
        return None
    return {kv["key"]: kv["value"] for kv in a}


def _partition_to_avro(partition_type: StructType, values: tuple) -> dict:
    out = {}
    for f, v in zip(partition_type.fields, values):
        s = str(f.field_type)
        if v is not None and s == "uuid":
            v = v.bytes
        out[avro_name(f.name)] = v
    return out


def _partition_from_avro(partition_type: StructType, rec: dict) -> tuple:
    out = []
    for f in partition_type.fields:
        v = rec.get(avro_name(f.name), rec.get(f.name))
        if v is not None:
            v = conversions.to_internal(f.field_type, v)
            s = str(f.field_type)
            if s == "uuid" and isinstance(v, (bytes, bytearray)):
                import uuid as _uuid

                v = _uuid.UUID(bytes=bytes(v))
        out.append(v)
    return tuple(out)


def entry_to_avro(e: ManifestEntry, partition_type: StructType) -> dict:
    f = e.data_file
    return {
        "status": e.status,
        "snapshot_id": e.snapshot_id,
        "sequence_number": e.sequence_number,
        "file_sequence_number": e.file_sequence_number,
        "data_file": {
            "content": f.content,
            "file_path": f.file_path,
            "file_format": f.file_format,
            "partition": _partition_to_avro(partition_type, f.partition),
            "record_count": f.record_count,
            "file_size_in_bytes": f.file_size_in_bytes,
            "column_sizes": _map_to_avro(f.column_sizes),
            "value_counts": _map_to_avro(f.value_counts),
            "null_value_counts": _map_to_avro(f.null_value_counts),
            "nan_value_counts": _map_to_avro(f.nan_value_counts),
            "lower_bounds": _map_to_avro(f.lower_bounds),
            "upper_bounds": _map_to_avro(f.upper_bounds),
            "key_metadata": f.key_metadata,
            "split_offsets": f.split_offsets,
            "equality_ids": f.equality_ids,
            "sort_order_id": f.sort_order_id,
        },
    }


def write_manifest(io_: FileIO, path: str, schema: Schema, spec: PartitionSpec,
                   entries: Iterable[ManifestEntry], content: int = DATA) -> int:
    """Write a manifest file; returns its length in bytes."""
    ptype = spec.partition_type(schema)
    avro_schema = manifest_entry_schema(ptype)
    metadata = {
        "schema": json.dumps(schema_to_json(schema), separators=(",", ":")),
        "schema-id": str(schema.schema_id),
        "partition-spec": json.dumps(spec.fields_json(), separators=(",", ":")),
        "partition-spec-id": str(spec.spec_id),
        "format-version": "2",
        "content": "data" if content == DATA else "deletes",
    }
    buf = io.BytesIO()
    records = [entry_to_avro(e, ptype) for e in entries]
    fastavro.writer(buf, fastavro.parse_schema(avro_schema), records, codec="deflate", metadata=metadata)
    data = buf.getvalue()
    io_.write_bytes(path, data, overwrite=False)
    return len(data)


def read_manifest_raw(io_: FileIO, path: str) -> tuple[dict, list[dict]]:
    """Read a manifest's key/value metadata and raw records; errors name the file."""
    try:
        data = io_.read_bytes(path)
    except FileNotFoundError as e:
        raise CorruptMetadataError(path, "manifest file is missing") from e
    try:
        reader = fastavro.reader(io.BytesIO(data))
        meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in reader.metadata.items()}
        records = list(reader)
    except Exception as e:
        raise CorruptMetadataError(path, f"not a readable Avro manifest ({type(e).__name__}: {e})") from e
    return meta, records


def entries_from_records(records: list[dict], partition_type: StructType, spec_id: int,
                         inherited_snapshot_id: int, inherited_sequence_number: int) -> list[ManifestEntry]:
    out = []
    for r in records:
        df = r["data_file"]
        status = r["status"]
        snap = r.get("snapshot_id")
        seq = r.get("sequence_number")
        fseq = r.get("file_sequence_number")
        if snap is None:
            snap = inherited_snapshot_id
        # Inheritance applies to ADDED entries only (spec: "Sequence Number Inheritance").
        # v1 manifests carry no sequence numbers: every entry then has the list's (0).
        if seq is None and (status == ADDED or inherited_sequence_number == 0):
            seq = inherited_sequence_number
        if fseq is None and (status == ADDED or inherited_sequence_number == 0):
            fseq = inherited_sequence_number
        f = DataFile(
            file_path=df["file_path"], file_format=df["file_format"],
            partition=_partition_from_avro(partition_type, df["partition"] or {}),
            record_count=df["record_count"], file_size_in_bytes=df["file_size_in_bytes"],
            content=df.get("content", 0) or 0,
            column_sizes=_map_from_avro(df.get("column_sizes")),
            value_counts=_map_from_avro(df.get("value_counts")),
            null_value_counts=_map_from_avro(df.get("null_value_counts")),
            nan_value_counts=_map_from_avro(df.get("nan_value_counts")),
            lower_bounds=_map_from_avro(df.get("lower_bounds")),
            upper_bounds=_map_from_avro(df.get("upper_bounds")),
            key_metadata=df.get("key_metadata"), split_offsets=df.get("split_offsets"),
            equality_ids=df.get("equality_ids"), sort_order_id=df.get("sort_order_id"),
            spec_id=spec_id,
        )
        out.append(ManifestEntry(status, snap, seq, fseq, f))
    return out


def as_existing(e: ManifestEntry) -> ManifestEntry:
    return ManifestEntry(EXISTING, e.snapshot_id, e.sequence_number, e.file_sequence_number, e.data_file)


def as_deleted(e: ManifestEntry, snapshot_id: int) -> ManifestEntry:
    return ManifestEntry(DELETED, snapshot_id, e.sequence_number, e.file_sequence_number, e.data_file)
