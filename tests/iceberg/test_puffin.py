"""Puffin files and deletion vectors: the blob layout the spec fixes, checked byte by byte, and
damage named rather than misread."""
from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap64

from icefloe.core.io import LOCAL
from icefloe.errors import CorruptDataFileError
from icefloe.iceberg.puffin import (
    DV_MAGIC, MAGIC, ROW_POSITION_FIELD_ID, deserialize_vector, read_footer, read_vector, serialize_vector,
    write_vectors,
)


def test_a_vector_blob_is_length_magic_portable_bitmap_and_crc():
    positions = BitMap64([0, 5, 7, 1 << 33])          # a position past 2^32 takes a second 32-bit bitmap
    blob = serialize_vector(positions)
    (n,) = struct.unpack(">I", blob[:4])
    assert n == len(blob) - 8
    assert blob[4:8] == DV_MAGIC
    bitmap = blob[8:4 + n]
    # the portable 64-bit layout: the number of 32-bit bitmaps (8 bytes, little-endian), then each key
    assert struct.unpack("<Q", bitmap[:8])[0] == 2
    assert struct.unpack("<I", bitmap[8:12])[0] == 0
    assert struct.unpack(">I", blob[4 + n:])[0] == zlib.crc32(blob[4:4 + n])
    assert list(deserialize_vector(blob)) == [0, 5, 7, 1 << 33]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=(1 << 40)), max_size=300))
def test_vectors_round_trip_through_a_puffin_file(tmp_path_factory, values):
    path = str(tmp_path_factory.mktemp("puffin") / "v.puffin")
    vectors = [("/t/data/a.parquet", BitMap64(values)), ("/t/data/b.parquet", BitMap64([1, 2, 3]))]
    blobs = write_vectors(LOCAL, path, vectors)
    data = open(path, "rb").read()
    assert data[:4] == MAGIC and data[-4:] == MAGIC
    footer = read_footer(LOCAL, path)
    assert [(b.offset, b.length) for b in footer] == [(b.offset, b.length) for b in blobs]
    for (target, positions), b in zip(vectors, footer):
        assert b.type == "deletion-vector-v1" and b.fields == [ROW_POSITION_FIELD_ID]
        assert b.properties == {"referenced-data-file": target, "cardinality": str(len(positions))}
        assert read_vector(LOCAL, path, b.offset, b.length) == positions


def test_damage_is_named(tmp_path):
    path = str(tmp_path / "v.puffin")
    (b,) = write_vectors(LOCAL, path, [("/t/data/a.parquet", BitMap64([3, 4]))])
    data = bytearray(open(path, "rb").read())
    data[b.offset + 10] ^= 0xFF                    # a flipped bit inside the bitmap
    open(path, "wb").write(bytes(data))
    with pytest.raises(CorruptDataFileError, match="checksum"):
        read_vector(LOCAL, path, b.offset, b.length)
    with pytest.raises(CorruptDataFileError, match="length"):
        read_vector(LOCAL, path, b.offset, b.length - 1)
    open(path, "wb").write(b"PFA1 not a footer")
    with pytest.raises(CorruptDataFileError, match="Puffin"):
        read_footer(LOCAL, path)
