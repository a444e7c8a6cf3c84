"""Metadata files are Avro files of records: one whose data are not records (a file of another
shape) is a corrupt metadata file, named, not an AttributeError from deep inside a reader."""
import io

import fastavro
import pytest

from icefloe.core.avro import as_records, read_records
from icefloe.errors import CorruptMetadataError
from icefloe.paimon.manifest import index_types


def _avro(schema, data) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), data)
    return buf.getvalue()


def test_records_are_read_as_dicts():
    data = _avro({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]}, [{"a": 1}, {"a": 2}])
    assert read_records(data) == [{"a": 1}, {"a": 2}]


def test_a_datum_that_is_not_a_record_is_refused():
    with pytest.raises(ValueError, match="int"):
        read_records(_avro("int", [1, 2]))
    with pytest.raises(ValueError, match="str"):
        as_records(["x"])


def test_a_paimon_index_manifest_of_another_shape_is_corrupt_metadata():
    with pytest.raises(CorruptMetadataError, match="index-manifest-x"):
        index_types(_avro("long", [7]), "index-manifest-x")


def _snappy_container(records: list[dict], schema: dict, crc_delta: int = 0) -> bytes:
    """An Avro object container file whose one block is compressed with the ``snappy`` codec, built by
    hand from the spec (fastavro cannot write it without a library icefloe does not install)."""
    import json
    import zlib

    import pyarrow as pa

    def long(n: int) -> bytes:
        n = (n << 1) ^ (n >> 63)
        out = bytearray()
        while n & ~0x7F:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
        return bytes(out)

    def blob(b: bytes) -> bytes:
        return long(len(b)) + b

    body = io.BytesIO()
    for r in records:
        fastavro.schemaless_writer(body, fastavro.parse_schema(schema), r)
    raw = body.getvalue()
    block = pa.compress(raw, codec="snappy", asbytes=True) + ((zlib.crc32(raw) + crc_delta) % 2**32).to_bytes(4, "big")
    sync = bytes(range(16))
    header = (b"Obj\x01" + long(2) + blob(b"avro.schema") + blob(json.dumps(schema).encode())
              + blob(b"avro.codec") + blob(b"snappy") + long(0) + sync)
    return header + long(len(records)) + blob(block) + sync


SNAPPY_SCHEMA = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"}, {"name": "s", "type": "string"}]}


def test_snappy_compressed_avro_files_are_read():
    """Iceberg and Paimon writers may compress metadata with Avro's snappy codec (Paimon 1.4's Iceberg
    compatibility writes its manifest lists so): icefloe reads them without fastavro's optional library."""
    records = [{"id": i, "s": "x" * (i % 7)} for i in range(500)]
    assert read_records(_snappy_container(records, SNAPPY_SCHEMA)) == records


def test_a_snappy_block_with_a_wrong_checksum_is_an_error():
    with pytest.raises(ValueError, match="CRC-32"):
        read_records(_snappy_container([{"id": 1, "s": "a"}], SNAPPY_SCHEMA, crc_delta=1))
