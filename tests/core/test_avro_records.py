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
