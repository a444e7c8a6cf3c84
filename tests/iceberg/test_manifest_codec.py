"""The manifest codec a table asks for (``write.manifest.compression-codec`` / ``-level``, as Apache
Iceberg's Java runtime reads them): every manifest icefloe writes for the table (a commit's, a merge's
copied entries) is compressed by it; icefloe, pyiceberg and the Java runtime read those manifests; the
runtime's own manifests under the property read back in icefloe; and a codec or level icefloe cannot
honour is refused, naming the property, with the table as it was."""
from __future__ import annotations

import os

import pyarrow as pa
import pytest

import icefloe
from icefloe.core import avro_decode
from icefloe.errors import IcefloeError
from icefloe.iceberg import maintenance
from icefloe.iceberg.manifest_codec import CODEC_PROPERTY, LEVEL_PROPERTY, ManifestCodec
from icefloe.iceberg.manifest_reader import clear_manifest_cache, snapshot_manifests

AVRO = {None: "deflate", "gzip": "deflate", "ZSTD": "zstandard", "snappy": "snappy", "uncompressed": "null"}


def _batch(ids) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "s": [f"s{i}" for i in ids]})


def _codecs(t) -> list[str]:
    """The ``avro.codec`` of each manifest of the table's current snapshot."""
    out = []
    for m in snapshot_manifests(t.io, t.current_snapshot()):
        meta, _sync, _p = avro_decode.header(t.io.read_bytes(m.manifest_path))
        out.append(meta.get("avro.codec", b"null").decode())
    return out


@pytest.mark.parametrize("codec,level", [(None, None), ("gzip", "1"), ("ZSTD", "5"), ("snappy", None),
                                         ("uncompressed", None)])
def test_every_manifest_is_written_with_the_tables_codec(tmp_path, codec, level):
    """Appends, then a merge of the manifests (copied entries): each manifest carries the codec,
    and icefloe (entry by entry and as columns) and pyiceberg read every row."""
    from pyiceberg.table import StaticTable

    props = {"commit.manifest.min-count-to-merge": "3"}
    if codec is not None:
        props[CODEC_PROPERTY] = codec
    if level is not None:
        props[LEVEL_PROPERTY] = level
    t = icefloe.Catalog(str(tmp_path / "wh")).create_table("db.t", "id bigint, s string", properties=props)
    for k in range(4):
        t.append(_batch(range(k * 10, k * 10 + 10)))
    t = t.refresh()
    codecs = _codecs(t)
    assert len(codecs) < 4, "the appends' manifests were not merged"
    assert set(codecs) == {AVRO[codec]}
    for columns in (False, True):
        from icefloe.iceberg import manifest_reader

        manifest_reader.COLUMNS_MIN_ENTRIES, saved = (0 if columns else 10**9), manifest_reader.COLUMNS_MIN_ENTRIES
        try:
            clear_manifest_cache()
            assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(40))
            assert len(t.plan_files("id = 17")) == 1
        finally:
            manifest_reader.COLUMNS_MIN_ENTRIES = saved
    py = StaticTable.from_metadata(t.metadata_location)
    assert sorted(py.scan().to_arrow().column("id").to_pylist()) == list(range(40))


def test_a_level_compresses_as_asked(tmp_path):
    """The level reaches the compressor: a gzip manifest at level 0 (stored) is larger than at 9."""
    from icefloe.iceberg import manifest as mf

    sizes = {}
    for level in ("0", "9"):
        t = icefloe.Catalog(str(tmp_path / f"wh{level}")).create_table(
            "db.t", "id bigint, s string", properties={CODEC_PROPERTY: "gzip", LEVEL_PROPERTY: level})
        t.commit_files([mf.DataFile(file_path=f"{t.location}/data/f{i:05d}.parquet", file_format="PARQUET",
                                    partition=(), record_count=10, file_size_in_bytes=100 + i) for i in range(300)])
        [m] = snapshot_manifests(t.io, t.refresh().current_snapshot())
        sizes[level] = m.manifest_length
    assert sizes["0"] > sizes["9"] * 3


@pytest.mark.parametrize("props,named", [
    ({CODEC_PROPERTY: "lz4"}, CODEC_PROPERTY),
    ({CODEC_PROPERTY: "zstd", LEVEL_PROPERTY: "high"}, LEVEL_PROPERTY),
    ({CODEC_PROPERTY: "zstd", LEVEL_PROPERTY: "23"}, LEVEL_PROPERTY),
    ({LEVEL_PROPERTY: "10"}, LEVEL_PROPERTY),          # gzip, the default: 0 to 9 (-1: zlib's default)
])
def test_a_codec_icefloe_cannot_honour_is_refused_and_the_table_stays(tmp_path, monkeypatch, props, named):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    with pytest.raises(IcefloeError, match=named):
        cat.create_table("db.bad", "id bigint, s string", properties=props)
    t = cat.create_table("db.t", "id bigint, s string")
    t.append(_batch(range(3)))
    before = t.refresh().metadata_location
    with pytest.raises(IcefloeError, match=named):
        t.update_properties(set=props)
    assert t.refresh().metadata_location == before and CODEC_PROPERTY not in t.properties
    # set by another engine that does not check it: a commit is refused before it writes anything
    metadata_dir = os.path.join(t.location, "metadata")
    with monkeypatch.context() as m:
        m.setattr(maintenance, "ManifestCodec", type("Unchecked", (), {"of": staticmethod(lambda props: None)}))
        t.update_properties(set=props)
    stored = t.refresh()
    files = set(os.listdir(metadata_dir))
    with pytest.raises(IcefloeError, match=named):
        stored.append(_batch(range(3, 6)))
    assert set(os.listdir(metadata_dir)) == files
    assert sorted(stored.refresh().to_arrow().column("id").to_pylist()) == [0, 1, 2]


def test_snappy_and_uncompressed_take_no_level(tmp_path):
    """As in the Java runtime, a level beside ``snappy`` or ``uncompressed`` is not used (a table
    another engine configured stays writable); a level that is not a number is still refused."""
    assert ManifestCodec.of({CODEC_PROPERTY: "snappy", LEVEL_PROPERTY: "7"}) == ManifestCodec("snappy", None)
    assert ManifestCodec.of({CODEC_PROPERTY: "Uncompressed", LEVEL_PROPERTY: "3"}).avro == "null"
    with pytest.raises(IcefloeError, match=LEVEL_PROPERTY):
        ManifestCodec.of({CODEC_PROPERTY: "snappy", LEVEL_PROPERTY: "x"})


@pytest.fixture(scope="module")
def jvm(tmp_path_factory, iceberg_runtime):
    from tools.jvm_runtime import newest_iceberg_version

    return iceberg_runtime(newest_iceberg_version(), tmp_path_factory.mktemp("jvm-codec"))


@pytest.mark.parametrize("codec", ["zstd", "snappy"])
def test_the_runtime_and_icefloe_read_each_others_manifests(jvm, codec):
    """The Java runtime writes a table whose manifests it compresses by ``codec``; icefloe reads it,
    appends (its manifests by the same codec) and merges, and the runtime reads icefloe's commits."""
    name = f"db.codec_{codec}"
    jvm.sql(f"CREATE TABLE jvm.{name} (id bigint, s string) USING iceberg TBLPROPERTIES "
            f"('{CODEC_PROPERTY}'='{codec}', 'commit.manifest.min-count-to-merge'='4')")
    jvm.sql(f"INSERT INTO jvm.{name} SELECT id, concat('s', id) FROM range(0, 20)")
    t = icefloe.load_table(jvm.table_location(name))
    assert _codecs(t) == [AVRO[codec.lower()] if codec != "zstd" else "zstandard"]
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(20))
    for k in range(1, 4):
        t.append(_batch(range(k * 20, k * 20 + 20)))
    t = t.refresh()
    assert set(_codecs(t)) == {"zstandard" if codec == "zstd" else codec}
    assert len(_codecs(t)) < 4, "icefloe's appends were not merged with the runtime's manifest"
    jvm.sql(f"REFRESH TABLE jvm.{name}")
    assert sorted(r[0] for r in jvm.sql(f"SELECT id FROM jvm.{name}")) == list(range(80))
    jvm.sql(f"INSERT INTO jvm.{name} SELECT id, concat('s', id) FROM range(80, 90)")
    assert sorted(t.refresh().to_arrow().column("id").to_pylist()) == list(range(90))
