# pyright: strict
"""Manifest lists (Iceberg spec, "Manifest Lists") and partition field summaries."""
from __future__ import annotations

import io
import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional

import fastavro

from icefloe.core.avro import read_records
from icefloe.core.io import FileIO
from icefloe.core.types import StructType
from icefloe.errors import CorruptMetadataError
from icefloe.iceberg import conversions
from icefloe.iceberg.avro_schemas import MANIFEST_LIST_SCHEMA, MANIFEST_LIST_SCHEMA_V3
from icefloe.iceberg.manifest import ADDED, DELETED, EXISTING, ManifestEntry

_PARSED_LIST_SCHEMA = fastavro.parse_schema(MANIFEST_LIST_SCHEMA)
_PARSED_LIST_SCHEMA_V3 = fastavro.parse_schema(MANIFEST_LIST_SCHEMA_V3)

# ManifestFile.content
DATA_MANIFEST, DELETE_MANIFEST = 0, 1


@dataclass
class FieldSummary:
    contains_null: bool
    contains_nan: Optional[bool] = None
    lower_bound: Optional[bytes] = None
    upper_bound: Optional[bytes] = None


@dataclass
class ManifestFile:
    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    content: int
    sequence_number: int
    min_sequence_number: int
    added_snapshot_id: int
    added_files_count: Optional[int]   # optional in format v1
    existing_files_count: Optional[int]   # optional in format v1
    deleted_files_count: Optional[int]   # optional in format v1
    added_rows_count: Optional[int]   # optional in format v1: None is unknown, not 0
    existing_rows_count: Optional[int]   # optional in format v1
    deleted_rows_count: Optional[int]   # optional in format v1
    partitions: Optional[list[FieldSummary]] = None
    key_metadata: Optional[bytes] = None
    # format v3: the row id the manifest's data files without one inherit from (field 520)
    first_row_id: Optional[int] = None
    # the manifest list this entry was read from (for error messages; not part of the entry)
    manifest_list: Optional[str] = field(default=None, compare=False, repr=False)

    def has_added_or_existing(self) -> bool:
        # counts are optional in v1 manifest lists: unknown means "may have live files"
        if self.added_files_count is None or self.existing_files_count is None:
            return True
        return self.added_files_count > 0 or self.existing_files_count > 0


def summarize_partitions(partition_type: StructType, entries: Iterable[ManifestEntry]) -> list[FieldSummary]:
    """Per partition field: null/NaN presence and serialized min/max over live and deleted entries."""
    fields = partition_type.fields
    lows: list[Any] = [None] * len(fields)
    highs: list[Any] = [None] * len(fields)
    nulls = [False] * len(fields)
    nans = [False] * len(fields)
    for e in entries:
        for i, v in enumerate(e.data_file.partition):
            if v is None:
                nulls[i] = True
            elif isinstance(v, float) and math.isnan(v):
                nans[i] = True
            else:
                if lows[i] is None or v < lows[i]:
                    lows[i] = v
                if highs[i] is None or v > highs[i]:
                    highs[i] = v
    out: list[FieldSummary] = []
    for i, f in enumerate(fields):
        out.append(FieldSummary(
            contains_null=nulls[i], contains_nan=nans[i],
            lower_bound=None if lows[i] is None else conversions.to_bytes(f.field_type, lows[i]),
            upper_bound=None if highs[i] is None else conversions.to_bytes(f.field_type, highs[i]),
        ))
    return out


def manifest_file_for(path: str, length: int, spec_id: int, content: int, snapshot_id: int,
                      sequence_number: int, entries: list[ManifestEntry],
                      partition_type: StructType) -> ManifestFile:
    """The manifest-list entry describing a manifest written by ``snapshot_id``.

    ``sequence_number`` is the snapshot's own; min_sequence_number is the lowest
    data sequence number of live entries (new entries inherit the snapshot's).
    """
    counts = {ADDED: 0, EXISTING: 0, DELETED: 0}
    rows = {ADDED: 0, EXISTING: 0, DELETED: 0}
    min_seq = sequence_number
    for e in entries:
        counts[e.status] += 1
        rows[e.status] += e.data_file.record_count
        if e.status != DELETED and e.sequence_number is not None:
            min_seq = min(min_seq, e.sequence_number)
    return ManifestFile(
        manifest_path=path, manifest_length=length, partition_spec_id=spec_id, content=content,
        sequence_number=sequence_number, min_sequence_number=min_seq, added_snapshot_id=snapshot_id,
        added_files_count=counts[ADDED], existing_files_count=counts[EXISTING],
        deleted_files_count=counts[DELETED], added_rows_count=rows[ADDED],
        existing_rows_count=rows[EXISTING], deleted_rows_count=rows[DELETED],
        partitions=summarize_partitions(partition_type, entries),
    )


_COUNTS = ("added_files_count", "existing_files_count", "deleted_files_count",
           "added_rows_count", "existing_rows_count", "deleted_rows_count")


def _to_avro(m: ManifestFile) -> dict[str, Any]:
    # the list written is v2-shaped, where the counts are required [Manifest Lists]: a format v1
    # list's unknown ones are counted from the manifest first (manifest_reader.with_counts), never
    # written as a 0 that would claim the manifest holds no files or rows
    unknown = [c for c in _COUNTS if getattr(m, c) is None]
    if unknown:
        raise ValueError(f"manifest {m.manifest_path}: {', '.join(unknown)} unknown; count them from the "
                         "manifest's entries before writing a manifest list")
    return {
        "manifest_path": m.manifest_path, "manifest_length": m.manifest_length,
        "partition_spec_id": m.partition_spec_id, "content": m.content,
        "sequence_number": m.sequence_number, "min_sequence_number": m.min_sequence_number,
        "added_snapshot_id": m.added_snapshot_id, "added_files_count": m.added_files_count,
        "existing_files_count": m.existing_files_count, "deleted_files_count": m.deleted_files_count,
        "added_rows_count": m.added_rows_count, "existing_rows_count": m.existing_rows_count,
        "deleted_rows_count": m.deleted_rows_count,
        "partitions": None if m.partitions is None else [
            {"contains_null": p.contains_null, "contains_nan": p.contains_nan,
             "lower_bound": p.lower_bound, "upper_bound": p.upper_bound} for p in m.partitions],
        "key_metadata": m.key_metadata,
        "first_row_id": m.first_row_id,
    }


def assign_first_row_ids(manifests: list[ManifestFile], next_row_id: int) -> tuple[list[ManifestFile], int]:
    """Format v3 ("First Row ID Assignment"): each data manifest without a first row id gets the
    next one, which moves on by the rows of its live files; delete manifests get none. Returns the
    manifests and how many ids were assigned."""
    out: list[ManifestFile] = []
    start = next_row_id
    for m in manifests:
        if m.content == DATA_MANIFEST and m.first_row_id is None:
            m = replace(m, first_row_id=next_row_id)
            next_row_id += (m.added_rows_count or 0) + (m.existing_rows_count or 0)
        out.append(m)
    return out, next_row_id - start


def write_manifest_list(io_: FileIO, path: str, manifests: list[ManifestFile], snapshot_id: int,
                        parent_snapshot_id: Optional[int], sequence_number: int, format_version: int = 2,
                        first_row_id: Optional[int] = None) -> None:
    metadata = {
        "snapshot-id": str(snapshot_id),
        "parent-snapshot-id": "null" if parent_snapshot_id is None else str(parent_snapshot_id),
        "sequence-number": str(sequence_number),
        "format-version": str(max(format_version, 2)),
    }
    schema = _PARSED_LIST_SCHEMA
    if format_version >= 3:
        metadata["first-row-id"] = str(first_row_id or 0)
        schema = _PARSED_LIST_SCHEMA_V3
    buf = io.BytesIO()
    # fastavro types its file argument IO[Unknown]
    fastavro.writer(buf, schema, [_to_avro(m) for m in manifests], codec="deflate",  # pyright: ignore[reportUnknownMemberType]
                    metadata=metadata)
    io_.write_bytes(path, buf.getvalue(), overwrite=False)


def _first(rec: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if rec.get(k) is not None:
            return rec[k]
    return None


def read_manifest_list(io_: FileIO, path: str) -> list[ManifestFile]:
    try:
        data = io_.read_bytes(path)
    except FileNotFoundError as e:
        raise CorruptMetadataError(path, "manifest list is missing") from e
    except (IsADirectoryError, ValueError) as e:   # e.g. a path with a NUL byte
        raise CorruptMetadataError(path, f"manifest list cannot be read ({type(e).__name__}: {e})") from e
    try:
        records = read_records(data)
    except Exception as e:
        raise CorruptMetadataError(path, f"not a readable Avro manifest list ({type(e).__name__}: {e})") from e
    out: list[ManifestFile] = []
    try:
        for r in records:
            parts: Optional[list[dict[str, Any]]] = r.get("partitions")
            mp = r["manifest_path"]
            if not isinstance(mp, str) or not mp or "\x00" in mp:
                raise CorruptMetadataError(path, f"manifest list entry names an invalid manifest path {mp!r}")
            out.append(ManifestFile(
                manifest_path=mp, manifest_length=r["manifest_length"],
                partition_spec_id=r["partition_spec_id"], content=r.get("content", 0) or 0,
                sequence_number=r.get("sequence_number", 0) or 0,
                min_sequence_number=r.get("min_sequence_number", 0) or 0,
                added_snapshot_id=r["added_snapshot_id"],
                added_files_count=_first(r, "added_files_count", "added_data_files_count"),
                existing_files_count=_first(r, "existing_files_count", "existing_data_files_count"),
                deleted_files_count=_first(r, "deleted_files_count", "deleted_data_files_count"),
                added_rows_count=r.get("added_rows_count"),
                existing_rows_count=r.get("existing_rows_count"),
                deleted_rows_count=r.get("deleted_rows_count"),
                partitions=None if parts is None else [
                    FieldSummary(p["contains_null"], p.get("contains_nan"), p.get("lower_bound"),
                                 p.get("upper_bound")) for p in parts],
                key_metadata=r.get("key_metadata"), first_row_id=r.get("first_row_id"), manifest_list=path,
            ))
    except (KeyError, TypeError, AttributeError) as e:
        raise CorruptMetadataError(path, f"manifest list entry lacks a required field: {e}") from e
    return out
