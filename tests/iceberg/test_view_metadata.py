"""The view spec's metadata: JSON round trip, validation, the updates' rules (version and schema
reuse, -1 for the last added, the version log, history size), gzip-compressed files."""
import gzip
import json

import pytest

from icefloe.core.io import LOCAL
from icefloe.core.types import parse_schema
from icefloe.errors import CorruptMetadataError, VersionConflict
from icefloe.iceberg.view_metadata import (
    AddViewSchema, AddViewVersion, AssertViewUuid, SetCurrentViewVersion, SetViewProperties, ViewMetadata,
    ViewUpdateError, apply_view_updates, new_version, new_view_metadata, view_update_from_json,
)
from icefloe.iceberg.view_store import read_view_metadata, view_version_of


def _meta(**props):
    return new_view_metadata("/wh/db/v", parse_schema("a int, b string"),
                             new_version("SELECT 1", 0, ["db"], None, {"engine-name": "spark"}), props)


def test_round_trip_and_required_fields():
    m = _meta(k="v")
    doc = m.to_json()
    assert doc["format-version"] == 1 and doc["current-version-id"] == 1
    assert doc["versions"][0]["default-namespace"] == ["db"] and "default-catalog" not in doc["versions"][0]
    assert ViewMetadata.from_json(json.loads(m.dumps())) == m
    for broken, why in (({**doc, "format-version": 2}, "format-version"),
                        ({**doc, "current-version-id": 9}, "current-version-id 9"),
                        ({**doc, "versions": [{**doc["versions"][0], "schema-id": 5}]}, "schema 5"),
                        ({**doc, "versions": [{**doc["versions"][0], "representations": [
                            {"type": "sql", "sql": "a", "dialect": "spark"},
                            {"type": "sql", "sql": "b", "dialect": "Spark"}]}]}, "multiple queries for dialect spark")):
        with pytest.raises(CorruptMetadataError, match=why):
            ViewMetadata.from_json(broken, "v.json")


def test_a_view_metadata_file_that_is_not_a_json_object_is_named():
    for data, why in ((b'{"format-version": 1', "not valid JSON"), (b"\xff\xfe", "not valid JSON"),
                      (b"[1, 2]", "view metadata must be a JSON object, not list")):
        with pytest.raises(CorruptMetadataError, match=why) as e:
            ViewMetadata.loads(data, "s3://b/v/metadata/00001-x.metadata.json")
        assert e.value.path == "s3://b/v/metadata/00001-x.metadata.json"
    m = _meta()
    assert ViewMetadata.loads(m.dumps(), "v.json") == m


def test_updates_reuse_versions_and_schemas_and_keep_the_history_size():
    m = _meta(**{"version.history.num-entries": "2"})
    uid = m.view_uuid

    def replace(meta, sql, ddl):
        return apply_view_updates(meta, [AddViewSchema(parse_schema(ddl)),
                                         AddViewVersion(new_version(sql, -1, ["db"], None, {"engine-name": "spark"})),
                                         SetCurrentViewVersion(-1)])

    m2 = replace(m, "SELECT 2", "a int, b string")            # same schema: schema 0 again
    assert [v.version_id for v in m2.versions] == [1, 2] and m2.current_version.schema_id == 0
    m3 = replace(m2, "SELECT 3", "x long")                     # a new schema; version 1 expires (2 kept)
    assert [v.version_id for v in m3.versions] == [2, 3] and [s.schema_id for s in m3.schemas] == [0, 1]
    assert [e[1] for e in m3.version_log] == [2, 3]
    m4 = replace(m3, "SELECT 2", "a int, b string")            # equal to version 2: made current again
    assert m4.current_version_id == 2 and [e[1] for e in m4.version_log] == [2, 3, 2]
    assert m4.view_uuid == uid
    with pytest.raises(ViewUpdateError, match="unknown version 7"):
        apply_view_updates(m, [SetCurrentViewVersion(7)])
    with pytest.raises(VersionConflict):
        AssertViewUuid("other").check(m)
    with pytest.raises(ViewUpdateError, match="unknown view update"):
        view_update_from_json({"action": "set-snapshot-ref"})
    assert apply_view_updates(m, [SetViewProperties({"x": "1"})]).properties["x"] == "1"


def test_gzip_compressed_view_metadata_is_read(tmp_path):
    m = _meta()
    path = tmp_path / "00003-0d4b1b5e-9a42-4a43-9d1f-6c2ab0e5f0a1.gz.metadata.json"
    path.write_bytes(gzip.compress(m.dumps()))
    assert read_view_metadata(LOCAL, str(path)) == m and view_version_of(str(path)) == 3
    bad = tmp_path / "bad.metadata.json"
    bad.write_bytes(b"\x1f\x8bnot gzip")
    with pytest.raises(CorruptMetadataError, match="gzip"):
        read_view_metadata(LOCAL, str(bad))
