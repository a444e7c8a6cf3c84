"""Iceberg table properties asking for what icefloe does not do (``iceberg.unhonoured``): another data or
delete file format, a Java location provider, the object-storage layout, table encryption. Creating a
table with one and setting one are refused naming it; a table another engine gave one is not written:
appends (Arrow and Spark), row-level changes and commits are refused naming the property, before any file
is written, and the table stays as it was."""
from __future__ import annotations

import os
import types

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import IcefloeError
from icefloe.iceberg import maintenance, unhonoured

REFUSED = [
    ("write.format.default", "orc"),
    ("write.format.default", "AVRO"),
    ("write.delete.format.default", "avro"),
    ("write.location-provider.impl", "com.example.MyLocations"),
    ("write.object-storage.enabled", "true"),
    ("encryption.key-id", "kms-key-1"),
    ("write.data.path", "/elsewhere/data"),
    ("write.metadata.path", "s3://other-bucket/meta"),
    ("write.folder-storage.path", "/elsewhere/folders"),
    ("write.object-storage.path", "/elsewhere/objects"),
]


def _batch(ids) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "s": [f"s{i}" for i in ids]})


def _files(root: str) -> set[str]:
    return {os.path.join(d, f) for d, _dirs, names in os.walk(root) for f in names}


@pytest.mark.parametrize("key,value", REFUSED)
def test_create_and_set_are_refused_naming_the_property(tmp_path, key, value):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    with pytest.raises(IcefloeError, match=key):
        cat.create_table("db.bad", "id bigint, s string", properties={key: value})
    assert not cat.table_exists("db.bad")
    t = cat.create_table("db.t", "id bigint, s string")
    t.append(_batch(range(3)))
    before = t.refresh().metadata_location
    with pytest.raises(IcefloeError, match=key):
        t.update_properties(set={key: value})
    assert t.refresh().metadata_location == before and key not in t.properties


def test_the_values_icefloe_honours_are_taken(tmp_path):
    """Parquet, said outright, the default layout and the table's own data and metadata directories
    (however the location is spelled) are what icefloe writes: accepted."""
    props = {"write.format.default": "Parquet", "write.delete.format.default": "parquet",
             "write.object-storage.enabled": "false"}
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", "id bigint, s string", properties=props)
    t.append(_batch(range(3)))
    t.update_properties(set={"write.format.default": "parquet", "write.data.path": f"file:{t.location}/data/",
                             "write.metadata.path": f"{t.location}/metadata"})
    assert sorted(t.refresh().to_arrow().column("id").to_pylist()) == [0, 1, 2]


@pytest.mark.parametrize("key,value", REFUSED[::2] + [REFUSED[5], REFUSED[6]])
def test_a_table_another_engine_configured_so_is_not_written(catalog, spark, monkeypatch, key, value):
    t = catalog.create_table(f"db.other_{abs(hash((key, value))) % 10**6}", "id bigint, s string")
    t.append(_batch(range(3)))
    with monkeypatch.context() as m:       # stored as another engine would store it, unchecked
        m.setattr(maintenance, "unhonoured", types.SimpleNamespace(KEYS=(), check=lambda *a: None))
        t.update_properties(set={key: value})
    t = t.refresh()
    before, files = t.metadata_location, _files(t.location)
    attempts = [lambda: t.append(_batch(range(3, 6))),
                lambda: t.append(spark.createDataFrame([(9, "x")], "id bigint, s string")),
                lambda: t.delete("id = 1"),
                lambda: t.update({"s": "'u'"}, "id = 2"),
                lambda: t.commit_files([]),
                lambda: catalog.sql(f"INSERT INTO {t.name} VALUES (7, 'q')"),
                lambda: catalog.sql(f"ALTER TABLE {t.name} SET TBLPROPERTIES ('{key}'='{value}x')")]
    for attempt in attempts:
        with pytest.raises(Exception, match=key):
            attempt()
    assert t.refresh().metadata_location == before and _files(t.location) == files
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 1, 2]      # still read


def test_every_refused_key_is_named_by_the_module():
    assert {k for k, _v in REFUSED} == set(unhonoured.KEYS)
    assert unhonoured.refusal({}) is None
