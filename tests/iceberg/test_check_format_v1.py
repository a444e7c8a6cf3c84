"""``icefloe check`` on a format v1 table, whose manifest list may leave its row counts out.

In format v1 the manifest list's ``added_rows_count``, ``existing_rows_count`` and
``deleted_rows_count`` are optional [Manifest Lists]; a list that leaves them out says nothing
about the rows, so the checker must not read the absence as 0 rows.
"""
from __future__ import annotations

import fastavro
import pyarrow as pa

import icefloe


def _v1_table_without_row_counts(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    uri = f"sqlite:///{tmp_path / 'c.db'}"
    py = SqlCatalog("default", uri=uri, warehouse=f"file://{tmp_path}")
    py.create_namespace("db")
    pt = py.create_table("db.t", schema=pa.schema([pa.field("id", pa.int64())]), properties={"format-version": "1"})
    pt.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    path = pt.current_snapshot().manifest_list.removeprefix("file://")
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        schema, records = reader.writer_schema, list(reader)
        meta = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
    assert records[0]["added_rows_count"] == 3 and ["null", "long"] in [
        fld["type"] for fld in schema["fields"] if fld["name"] == "added_rows_count"]   # optional in v1
    for r in records:                        # what a v1 writer that keeps no row counts writes
        r.update(added_rows_count=None, existing_rows_count=None, deleted_rows_count=None)
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records, metadata=meta)
    return icefloe.Catalog(str(tmp_path), type="sql", uri=uri).load_table("db.t")


def test_a_v1_manifest_list_without_row_counts_is_not_a_count_problem(tmp_path):
    t = _v1_table_without_row_counts(tmp_path)
    report = t.check()
    assert report.problems == [] and report.checked["manifests"] == 1
    assert t.to_arrow().column("id").to_pylist() == [1, 2, 3]


def test_a_commit_over_such_a_list_writes_the_counts_it_finds_in_the_manifest(tmp_path):
    t = _v1_table_without_row_counts(tmp_path)
    t.append(pa.table({"id": pa.array([4], pa.int64())}))
    report = t.check()
    assert report.problems == [] and report.checked["snapshots"] == 2
    path = t.current_snapshot().manifest_list.removeprefix("file://")
    with open(path, "rb") as f:
        carried = [r for r in fastavro.reader(f) if r["added_rows_count"] == 3]
    assert len(carried) == 1 and carried[0]["added_files_count"] == 1   # pyiceberg's manifest: 3 rows, 1 file
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2, 3, 4]


def test_a_manifest_list_is_never_written_with_an_unknown_count_as_0(tmp_path):
    from dataclasses import replace

    import pytest

    from icefloe.core.io import LOCAL
    from icefloe.iceberg.manifest_list import read_manifest_list, write_manifest_list

    t = _v1_table_without_row_counts(tmp_path)
    listed = read_manifest_list(LOCAL, t.current_snapshot().manifest_list.removeprefix("file://"))
    assert listed[0].added_rows_count is None                       # unknown, not 0
    out = str(tmp_path / "list.avro")
    with pytest.raises(ValueError, match="added_rows_count, existing_rows_count, deleted_rows_count unknown"):
        write_manifest_list(LOCAL, out, listed, 7, None, 1, format_version=1)
    assert not (tmp_path / "list.avro").exists()
    write_manifest_list(LOCAL, out, [replace(listed[0], added_rows_count=3, existing_rows_count=0,
                                             deleted_rows_count=0)], 7, None, 1, format_version=1)
    with open(out, "rb") as f:
        assert [r["added_rows_count"] for r in fastavro.reader(f)] == [3]


def test_rewrite_table_path_keeps_the_absent_counts_absent(tmp_path):
    from icefloe.core.io import LOCAL
    from icefloe.iceberg.table_path import rewrite_table_path

    t = _v1_table_without_row_counts(tmp_path)
    source = t.current_snapshot().manifest_list
    result = rewrite_table_path(LOCAL, t.metadata_location, f"file://{tmp_path}", "file:///elsewhere",
                                staging_location=str(tmp_path / "stage"))
    staged = [src for src, dst in result.copy_plan if dst.endswith(source.rsplit("/", 1)[1])]
    assert len(staged) == 1
    with open(staged[0], "rb") as f:
        reader = fastavro.reader(f)
        records = list(reader)
        assert ["null", "long"] in [fld["type"] for fld in reader.writer_schema["fields"]
                                    if fld["name"] == "added_rows_count"]
    assert [(r["added_rows_count"], r["added_files_count"]) for r in records] == [(None, 1)]
    assert records[0]["manifest_path"].startswith("file:///elsewhere/")
