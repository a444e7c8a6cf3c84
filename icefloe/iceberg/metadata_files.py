# pyright: strict
"""Table and view metadata files as bytes: plain JSON or gzip-compressed JSON.

The table property ``write.metadata.compression-codec`` (``none``, the default, or ``gzip``, in any
case) says how a table's new metadata files are written. A gzip-compressed file is named
``<version>-<uuid>.gz.metadata.json`` (catalog tables) or ``v<N>.gz.metadata.json`` (Hadoop
layout), as Iceberg's Java runtime names them; its readers tell the codec by that name, so icefloe
writes no other. Older Java versions named them ``...metadata.json.gz``: icefloe reads those too.

A reader goes by the bytes, not the name: a file that starts with gzip's magic bytes is inflated,
never past :data:`MAX_METADATA_BYTES` (a corrupt file or a "bomb" is a ``CorruptMetadataError``
naming it), whatever it is called.
"""
from __future__ import annotations

import gzip
import zlib
from typing import Mapping

from icefloe.errors import BadUpdate, CorruptMetadataError

MAX_METADATA_BYTES = 128 * 1024 * 1024     # the most a metadata file may hold, stored or inflated
METADATA_COMPRESSION = "write.metadata.compression-codec"
CODECS = ("none", "gzip")
PLAIN_SUFFIX = ".metadata.json"
GZIP_SUFFIX = ".gz.metadata.json"
OLD_GZIP_SUFFIX = ".metadata.json.gz"       # what Iceberg's Java runtime once wrote; read, never written
GZIP_MAGIC = b"\x1f\x8b"


def metadata_codec(properties: Mapping[str, str], what: str = "the table") -> str:
    """The metadata codec ``properties`` ask for, ``none`` or ``gzip``; ``BadUpdate`` naming the
    property and its value when it is anything else."""
    value = properties.get(METADATA_COMPRESSION)
    if value is None:
        return "none"
    codec = value.lower() if value.isascii() else value
    if codec not in CODECS:
        raise BadUpdate(f"{what}: table property {METADATA_COMPRESSION}={value!r} is not a metadata codec: "
                        f"use 'none' or 'gzip' (in any case)")
    return codec


def metadata_suffix(properties: Mapping[str, str], what: str = "the table") -> str:
    """How the name of a new metadata file of a table with ``properties`` ends."""
    return GZIP_SUFFIX if metadata_codec(properties, what) == "gzip" else PLAIN_SUFFIX


def is_metadata_file_name(name: str) -> bool:
    """``name`` is a metadata file's name (or path), compressed or not."""
    return name.endswith(PLAIN_SUFFIX) or name.endswith(OLD_GZIP_SUFFIX)


def is_gzip_name(name: str) -> bool:
    """``name`` says its metadata is gzip-compressed (the way Iceberg's Java runtime reads a name)."""
    return name.endswith(GZIP_SUFFIX) or name.endswith(OLD_GZIP_SUFFIX)


def encode_metadata(data: bytes, path: str) -> bytes:
    """The bytes to store at ``path`` for the metadata JSON ``data``: compressed when the name says so."""
    return gzip.compress(data, compresslevel=6, mtime=0) if is_gzip_name(path) else data


def inflate_metadata(data: bytes, path: str) -> bytes:
    """``data`` inflated when it is gzip (by its magic bytes; every member of a multi-member file),
    else as it is; ``CorruptMetadataError`` naming ``path`` when it is not valid gzip or would
    inflate past :data:`MAX_METADATA_BYTES`."""
    if data[:2] != GZIP_MAGIC:
        return data
    out: list[bytes] = []
    room = MAX_METADATA_BYTES
    rest = data
    while rest:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = inflater.decompress(rest, room + 1)
        except zlib.error as e:
            raise CorruptMetadataError(path, f"not valid gzip ({e})") from None
        room -= len(chunk)
        if room < 0 or inflater.unconsumed_tail:
            raise CorruptMetadataError(path, f"inflates to more than {MAX_METADATA_BYTES} bytes")
        if not inflater.eof:
            raise CorruptMetadataError(path, "not valid gzip (the compressed data is cut short)")
        out.append(chunk)
        rest = inflater.unused_data
        if rest and rest[:2] != GZIP_MAGIC:
            raise CorruptMetadataError(path, "not valid gzip (data after the compressed stream)")
    return b"".join(out)
