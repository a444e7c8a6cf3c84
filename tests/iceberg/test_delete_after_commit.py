"""``write.metadata.delete-after-commit.enabled``: after each commit, the metadata files the table's
metadata log let go (``write.metadata.previous-versions-max``) are deleted, as Iceberg's catalogs
delete them; never a file outside the table's location, and without the property none."""
from __future__ import annotations

import os

import pyarrow as pa
import pytest

import icefloe
from icefloe.iceberg.operations import delete_dropped_metadata


def _batch(i: int) -> pa.Table:
    return pa.table({"id": pa.array([i], pa.int64())})


def _versions(t) -> set[str]:
    d = os.path.join(t.location, "metadata")
    return {os.path.join(d, f) for f in os.listdir(d) if f.endswith("metadata.json")}


@pytest.mark.parametrize("kind", ["hadoop", "sql"])
@pytest.mark.parametrize("enabled", [True, False])
def test_versions_the_log_lets_go_are_deleted(tmp_path, kind, enabled):
    kw = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'c.db'}"} if kind == "sql" else {}
    cat = icefloe.Catalog(str(tmp_path / "wh"), **kw)
    t = cat.create_table("db.t", "id bigint", properties={
        "write.metadata.previous-versions-max": "2",
        "write.metadata.delete-after-commit.enabled": str(enabled).lower()})
    for i in range(6):
        t.append(_batch(i))
    t = t.refresh()
    log = [e["metadata-file"] for e in t.metadata.metadata_log]
    assert len(log) == 2
    kept = {os.path.realpath(p.replace("file:", "")) for p in [*log, t.metadata_location]}
    versions = {os.path.realpath(p) for p in _versions(t)}
    if enabled:
        assert versions == kept
    else:
        assert kept < versions and len(versions) == 7
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(6))
    from pyiceberg.table import StaticTable

    assert StaticTable.from_metadata(t.metadata_location).scan().to_arrow().num_rows == 6


def test_a_file_outside_the_table_is_never_deleted(tmp_path):
    """A metadata log naming a file elsewhere (a table whose log another writer filled) loses
    nothing outside the table's location."""
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", "id bigint", properties={"write.metadata.delete-after-commit.enabled": "true"})
    t.append(_batch(0))
    meta = t.refresh().metadata
    outside = tmp_path / "precious.metadata.json"
    outside.write_text("{}")
    inside = os.path.join(t.location, "metadata", "old.metadata.json")
    with open(inside, "w") as f:
        f.write("{}")
    from dataclasses import replace

    base = replace(meta, metadata_log=[{"timestamp-ms": 1, "metadata-file": str(outside)},
                                       {"timestamp-ms": 2, "metadata-file": inside}])
    new = replace(meta, metadata_log=[])
    assert delete_dropped_metadata(t.io, base, new, t.location) == [inside]
    assert outside.exists() and not os.path.exists(inside)
    off = replace(new, properties={**new.properties, "write.metadata.delete-after-commit.enabled": "false"})
    assert delete_dropped_metadata(t.io, base, off, t.location) == []
