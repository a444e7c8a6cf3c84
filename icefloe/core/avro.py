"""Records of an Avro file, as both formats' metadata files hold them (manifests, manifest lists,
index manifests): each datum a record, decoded to a dict. No I/O of its own.

Importing this module teaches fastavro the ``snappy`` codec through pyarrow's Snappy (fastavro itself
needs a library icefloe does not install): Iceberg writers may compress manifests and manifest lists
with it (Paimon's Iceberg compatibility does), and so may Paimon's ``manifest.compression``."""
from __future__ import annotations

import io
import zlib
from typing import IO, Any, Callable, Iterable, Protocol, cast

import fastavro
import fastavro.read
import pyarrow as pa


def snappy_block(data: bytes) -> bytes:
    """The uncompressed bytes of an Avro ``snappy`` block: raw Snappy data followed by the big-endian
    CRC-32 of the uncompressed bytes, which must match (``ValueError`` otherwise)."""
    if len(data) < 5:
        raise ValueError(f"a snappy block of {len(data)} bytes is too short")
    size, shift, p = 0, 0, 0
    while True:                             # the uncompressed length leads raw Snappy data (a varint)
        if p >= len(data) - 4 or shift > 35:
            raise ValueError("a snappy block without a valid length")
        b = data[p]
        size |= (b & 0x7F) << shift
        p += 1
        shift += 7
        if not b & 0x80:
            break
    out = pa.decompress(data[:-4], decompressed_size=size, codec="snappy", asbytes=True)
    if zlib.crc32(out) != int.from_bytes(data[-4:], "big"):
        raise ValueError("a snappy block's CRC-32 does not match its uncompressed data")
    return out


class _Decoder(Protocol):
    """What fastavro's pure-Python reader hands a block reader."""

    def read_long(self) -> int: ...

    def read_fixed(self, size: int) -> bytes: ...


def _read_long(fo: IO[bytes]) -> int:
    n, shift = 0, 0
    while True:
        b = fo.read(1)
        if not b:
            raise EOFError("the Avro file ends inside a block's length")
        n |= (b[0] & 0x7F) << shift
        shift += 7
        if not b[0] & 0x80:
            return (n >> 1) ^ -(n & 1)


def _snappy_read_block(decoder: "_Decoder | IO[bytes]") -> io.BytesIO:
    """fastavro's block reader contract: its compiled reader passes the file, its pure-Python one a
    decoder; either way a length-prefixed block."""
    if hasattr(decoder, "read_fixed"):
        d = cast(_Decoder, decoder)
        return io.BytesIO(snappy_block(d.read_fixed(d.read_long())))
    f = cast("IO[bytes]", decoder)
    return io.BytesIO(snappy_block(f.read(_read_long(f))))


# fastavro types its table of block readers with bare Callable values
_block_readers = cast("dict[str, Callable[..., io.BytesIO]]", fastavro.read.BLOCK_READERS)  # pyright: ignore[reportUnknownMemberType]
_block_readers["snappy"] = _snappy_read_block


def as_records(data: Iterable[object]) -> list[dict[str, Any]]:
    """The data of an Avro file as records; ``ValueError`` when a datum is not a record (a file of
    another shape than the metadata file the caller expected)."""
    out: list[dict[str, Any]] = []
    for d in data:
        if not isinstance(d, dict):
            raise ValueError(f"a datum of type {type(d).__name__} where a record was expected")
        out.append(cast("dict[str, Any]", d))
    return out


def read_records(data: bytes) -> list[dict[str, Any]]:
    """Every record of the Avro file ``data``; fastavro's errors on a damaged file, or ``ValueError``."""
    return as_records(fastavro.reader(io.BytesIO(data)))
