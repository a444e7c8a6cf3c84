# pyright: strict
"""Puffin files and deletion vectors (Iceberg's Puffin spec; table spec v3, "Deletion Vectors").

A Puffin file is the magic ``PFA1``, the blobs one after another, and a footer: the magic,
a JSON payload describing each blob (type, offset, length, properties), the payload's size
(4 bytes, little-endian), 4 bytes of flags, and the magic again.

A ``deletion-vector-v1`` blob holds the deleted row positions of one data file: the length of
what follows up to the checksum (4 bytes, big-endian), the magic ``D1 D3 39 64``, the positions
as a 64-bit Roaring bitmap in the portable serialization, and a CRC-32 of magic and bitmap
(4 bytes, big-endian). The bitmap's bytes are pyroaring's ``BitMap64`` serialization, which is
that portable format.
"""
from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

from pyroaring import BitMap64

from icefloe.core.io import FileIO
from icefloe.errors import CorruptDataFileError
from icefloe.iceberg.manifest import DataFile

MAGIC = b"PFA1"
DV_MAGIC = bytes([0xD1, 0xD3, 0x39, 0x64])
DV_BLOB_TYPE = "deletion-vector-v1"
ROW_POSITION_FIELD_ID = 2147483645      # the reserved ``_pos`` field a vector's positions belong to
FLAG_FOOTER_COMPRESSED = 1


def serialize_vector(positions: BitMap64) -> bytes:
    """A ``deletion-vector-v1`` blob of ``positions``."""
    body = DV_MAGIC + positions.serialize()
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def deserialize_vector(blob: bytes, where: str = "a deletion vector") -> BitMap64:
    """The positions of a ``deletion-vector-v1`` blob; a damaged blob names ``where``."""
    if len(blob) < 12:
        raise CorruptDataFileError(where, f"deletion vector blob of {len(blob)} bytes is too short")
    (n,) = struct.unpack(">I", blob[:4])
    if n + 8 != len(blob):
        raise CorruptDataFileError(where, f"deletion vector length {n} does not match its blob of {len(blob)} bytes")
    body = blob[4:4 + n]
    if body[:4] != DV_MAGIC:
        raise CorruptDataFileError(where, "deletion vector blob lacks its magic bytes")
    (crc,) = struct.unpack(">I", blob[4 + n:])
    if crc != zlib.crc32(body) & 0xFFFFFFFF:
        raise CorruptDataFileError(where, "deletion vector checksum does not match its bitmap")
    try:
        return BitMap64.deserialize(body[4:])
    except Exception as e:  # noqa: BLE001 - pyroaring raises plain exceptions for bad input
        raise CorruptDataFileError(where, f"deletion vector bitmap cannot be read ({e})") from None


def read_vector(io: FileIO, path: str, offset: int, length: int) -> BitMap64:
    """The deletion vector stored at ``offset`` (``length`` bytes) in the Puffin file ``path``."""
    where = f"{path} (deletion vector at offset {offset})"
    try:
        with io.open_read(path) as fh:
            fh.seek(offset)
            blob = fh.read(length)
    except FileNotFoundError:
        raise CorruptDataFileError(path, "Puffin file referenced by the snapshot is missing") from None
    if len(blob) != length:
        raise CorruptDataFileError(where, f"the file ends before the {length} bytes of the vector")
    return deserialize_vector(blob, where)


@dataclass
class BlobMetadata:
    type: str
    fields: list[int]
    snapshot_id: int
    sequence_number: int
    offset: int
    length: int
    properties: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "fields": self.fields, "snapshot-id": self.snapshot_id,
                "sequence-number": self.sequence_number, "offset": self.offset, "length": self.length,
                "properties": self.properties}


def write_vectors(io: FileIO, path: str, vectors: Iterable[tuple[str, BitMap64]],
                  created_by: str = "icefloe") -> list[BlobMetadata]:
    """Write one Puffin file holding a deletion vector per (data file, positions); returns each
    vector's blob metadata (offset and length locate it; ``referenced-data-file`` and
    ``cardinality`` are its properties). Snapshot id and sequence number are -1: a vector's
    snapshot is the one whose delete manifest lists it."""
    parts = [MAGIC]
    offset = len(MAGIC)
    blobs: list[BlobMetadata] = []
    for data_file, positions in vectors:
        blob = serialize_vector(positions)
        blobs.append(BlobMetadata(DV_BLOB_TYPE, [ROW_POSITION_FIELD_ID], -1, -1, offset, len(blob),
                                  {"referenced-data-file": data_file, "cardinality": str(len(positions))}))
        parts.append(blob)
        offset += len(blob)
    payload = json.dumps({"blobs": [b.to_json() for b in blobs], "properties": {"created-by": created_by}},
                         separators=(",", ":")).encode("utf-8")
    parts += [MAGIC, payload, struct.pack("<i", len(payload)), b"\0\0\0\0", MAGIC]
    io.write_bytes(path, b"".join(parts), overwrite=False)
    return blobs


def read_footer(io: FileIO, path: str) -> list[BlobMetadata]:
    """The blobs a Puffin file's footer describes; a malformed file names what is wrong."""
    try:
        data = io.read_bytes(path)
    except FileNotFoundError:
        raise CorruptDataFileError(path, "Puffin file referenced by the snapshot is missing") from None
    if len(data) < 16 or data[:4] != MAGIC or data[-4:] != MAGIC:
        raise CorruptDataFileError(path, "not a Puffin file (magic bytes missing)")
    (size,) = struct.unpack("<i", data[-12:-8])
    (flags,) = struct.unpack("<i", data[-8:-4])
    start = len(data) - 12 - size
    if size < 0 or start < 8 or data[start - 4:start] != MAGIC:
        raise CorruptDataFileError(path, f"Puffin footer payload size {size} does not fit the file")
    if flags & FLAG_FOOTER_COMPRESSED:
        raise CorruptDataFileError(path, "Puffin footer is compressed (LZ4), which icefloe does not read")
    try:
        doc: Any = json.loads(data[start:start + size])
        return [BlobMetadata(b["type"], list(b.get("fields") or []), b.get("snapshot-id", -1),
                             b.get("sequence-number", -1), b["offset"], b["length"], dict(b.get("properties") or {}))
                for b in doc["blobs"]]
    except (ValueError, KeyError, TypeError) as e:
        raise CorruptDataFileError(path, f"Puffin footer is not valid ({type(e).__name__}: {e})") from None


def vector_positions(io: FileIO, dv: DataFile, where: Optional[str] = None) -> BitMap64:
    """The positions of deletion vector ``dv`` (a ``DataFile`` with content offset and size)."""
    if dv.content_offset is None or dv.content_size_in_bytes is None:
        raise CorruptDataFileError(where or dv.file_path, "deletion vector entry lacks content_offset or "
                                   "content_size_in_bytes")
    return read_vector(io, dv.file_path, dv.content_offset, dv.content_size_in_bytes)


# A statistics blob to write: (type, field ids, snapshot id, sequence number, bytes, properties)
StatisticsBlob = tuple[str, Sequence[int], int, int, bytes, Mapping[str, str]]


def write_statistics_file(io: FileIO, path: str, blobs: Iterable[StatisticsBlob],
                          created_by: str = "icefloe") -> dict[str, Any]:
    """A Puffin file of statistics blobs, each ``(type, field ids, snapshot id, sequence number,
    bytes, properties)``, stored uncompressed; returns the table metadata's statistics entry
    (spec, "Table Statistics") for it."""
    parts = [MAGIC]
    offset = len(MAGIC)
    written: list[BlobMetadata] = []
    for blob_type, fields, snapshot_id, sequence_number, data, properties in blobs:
        written.append(BlobMetadata(blob_type, list(fields), snapshot_id, sequence_number, offset, len(data),
                                    dict(properties)))
        parts.append(data)
        offset += len(data)
    payload = json.dumps({"blobs": [b.to_json() for b in written], "properties": {"created-by": created_by}},
                         separators=(",", ":")).encode("utf-8")
    footer = MAGIC + payload + struct.pack("<i", len(payload)) + b"\0\0\0\0" + MAGIC
    io.write_bytes(path, b"".join(parts) + footer, overwrite=False)
    return {"snapshot-id": written[0].snapshot_id if written else None, "statistics-path": path,
            "file-size-in-bytes": offset + len(footer), "file-footer-size-in-bytes": len(footer),
            "blob-metadata": [{"type": b.type, "snapshot-id": b.snapshot_id, "sequence-number": b.sequence_number,
                               "fields": b.fields, "properties": b.properties} for b in written]}
