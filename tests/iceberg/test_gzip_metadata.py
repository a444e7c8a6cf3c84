"""Gzip-compressed table metadata (``write.metadata.compression-codec``): icefloe writes each new
metadata file compressed and named as Iceberg's Java runtime names it (``vN.gz.metadata.json``,
``<NNNNN>-<uuid>.gz.metadata.json``), reads compressed metadata wherever it reads metadata (by its
magic bytes, inflated within the size limit), refuses a codec it does not know before anything is
written, and its maintenance counts the compressed files as metadata versions. The Java runtime
and pyiceberg read what icefloe writes, and icefloe what the Java runtime writes."""
import gzip
import os
import re
import time

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import BadUpdate, CorruptMetadataError, NoSuchTableError
from icefloe.iceberg.metadata_files import MAX_METADATA_BYTES

CODEC = "write.metadata.compression-codec"
GZ = b"\x1f\x8b"


def _rows(ids, s):
    return pa.table({"id": pa.array(ids, pa.int64()), "s": [s] * len(ids)})


def _ids(t):
    return sorted(t.to_arrow().column("id").to_pylist())


def _metadata_files(location):
    return sorted(n for n in os.listdir(os.path.join(location, "metadata"))
                  if "metadata.json" in n and not n.startswith("."))     # not Hadoop's .crc sidecars


def _is_gzip(path):
    with open(path, "rb") as f:
        return f.read(2) == GZ


def test_a_hadoop_table_writes_and_reads_gzip_metadata_and_switches_codec(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", "id bigint, s string", properties={CODEC: "GZip"})
    t.append(_rows([1, 2], "a"))
    t.append(_rows([3], "b"))
    assert _metadata_files(t.location) == ["v1.gz.metadata.json", "v2.gz.metadata.json", "v3.gz.metadata.json"]
    mdir = os.path.join(t.location, "metadata")
    assert all(_is_gzip(os.path.join(mdir, n)) for n in _metadata_files(t.location))
    again = icefloe.load_table(t.location)
    assert again.metadata_location.endswith("/v3.gz.metadata.json") and _ids(again) == [1, 2, 3]
    # the metadata log and its metadata table name the compressed files
    logged = [e["metadata-file"] for e in again.metadata.metadata_log]
    assert [os.path.basename(p) for p in logged] == ["v1.gz.metadata.json", "v2.gz.metadata.json"]
    entries = again.metadata_table("metadata_log_entries").column("file").to_pylist()
    assert [os.path.basename(p) for p in entries][-1] == "v3.gz.metadata.json"
    # back to plain: the next version is vN.metadata.json, and readers follow the mix
    again.update_properties(set={CODEC: "none"})
    again.append(_rows([4], "c"))
    assert _metadata_files(t.location)[-2:] == ["v4.metadata.json", "v5.metadata.json"]
    assert not _is_gzip(os.path.join(mdir, "v5.metadata.json"))
    assert _ids(icefloe.load_table(t.location)) == [1, 2, 3, 4]
    # without the version hint the listing finds the newest version, also under Java's old name
    os.remove(os.path.join(mdir, "version-hint.text"))
    os.rename(os.path.join(mdir, "v5.metadata.json"), os.path.join(mdir, "v5.metadata.json.gz"))
    with open(os.path.join(mdir, "v5.metadata.json.gz"), "rb") as f:
        plain = f.read()
    with open(os.path.join(mdir, "v5.metadata.json.gz"), "wb") as f:
        f.write(gzip.compress(plain))
    old_name = icefloe.load_table(t.location)
    assert old_name.metadata_location.endswith("/v5.metadata.json.gz") and _ids(old_name) == [1, 2, 3, 4]
    # orphan removal keeps every version; a purge deletes them all
    orphans = old_name.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000, dry_run=True)
    assert not [p for p in orphans if "metadata.json" in p]
    old_name.update_properties(set={"write.metadata.previous-versions-max": "1"})   # v1-v4 leave the log
    assert len(old_name.refresh().metadata.metadata_log) == 1
    cat.drop_table("db.t", purge=True)
    assert not os.path.exists(mdir) or not _metadata_files(t.location)


def test_a_sql_catalog_table_writes_gzip_metadata_and_register_reads_it(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'cat.db'}")
    cat.create_namespace("db")
    t = cat.create_table("db.t", "id bigint, s string", properties={CODEC: "gzip"})
    t.append(_rows([1, 2], "a"))
    names = _metadata_files(t.location)
    assert len(names) == 2 and all(re.fullmatch(r"0000[12]-[0-9a-f-]{36}\.gz\.metadata\.json", n) for n in names)
    assert all(_is_gzip(os.path.join(t.location, "metadata", n)) for n in names)
    fresh = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'cat.db'}")
    loaded = fresh.load_table("db.t")
    assert loaded.metadata_location == t.refresh().metadata_location and _ids(loaded) == [1, 2]
    loaded.append(_rows([3], "b"))
    assert re.fullmatch(r"00003-[0-9a-f-]{36}\.gz\.metadata\.json", os.path.basename(loaded.metadata_location))
    assert loaded.metadata.metadata_log[-1]["metadata-file"].endswith(names[-1])
    # register: the compressed file is adopted by another catalog, which commits compressed files too
    other = icefloe.Catalog(str(tmp_path / "wh2"), type="sql", uri=f"sqlite:///{tmp_path / 'other.db'}")
    other.create_namespace("db")
    cat.drop_table("db.t", purge=False)
    reg = other.register_table("db.r", loaded.metadata_location)
    assert _ids(reg) == [1, 2, 3]


def test_a_metadata_file_is_read_by_its_bytes_and_inflated_within_the_limit(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", "id bigint, s string")
    t.append(_rows([1], "a"))
    mdir = os.path.join(t.location, "metadata")
    v2 = os.path.join(mdir, "v2.metadata.json")
    with open(v2, "rb") as f:
        doc = f.read()
    with open(v2, "wb") as f:           # compressed under a plain name: read by the magic bytes
        f.write(gzip.compress(doc))
    assert _ids(icefloe.load_table(t.location)) == [1]
    with open(v2, "wb") as f:
        f.write(GZ + b"\x08\x00 not deflate at all")
    with pytest.raises(CorruptMetadataError, match=r"v2\.metadata\.json.*not valid gzip"):
        icefloe.load_table(t.location)
    with open(v2, "wb") as f:
        f.write(gzip.compress(doc)[:-12])
    with pytest.raises(CorruptMetadataError, match=r"v2\.metadata\.json.*cut short"):
        icefloe.load_table(t.location)
    # a "bomb": a small file inflating past the metadata size limit is refused, not inflated
    with open(v2, "wb") as f:
        f.write(gzip.compress(b" " * (MAX_METADATA_BYTES + 1), compresslevel=1))
    assert os.path.getsize(v2) < MAX_METADATA_BYTES // 100
    with pytest.raises(CorruptMetadataError, match=rf"v2\.metadata\.json.*more than {MAX_METADATA_BYTES} bytes"):
        icefloe.load_table(t.location)


def test_two_hadoop_writers_of_different_codecs_never_both_commit_a_version(tmp_path):
    """Create-if-absent decides a race only between writers of one name: a writer that finds the
    version under the other codec's name once its own file is written withdraws it."""
    from dataclasses import replace

    from icefloe.core.io import FileIO
    from icefloe.errors import VersionConflict
    from icefloe.iceberg.hadoop import HadoopTableOperations

    cat = icefloe.Catalog(str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", "id bigint, s string")
    a, b = HadoopTableOperations(FileIO(), t.location), HadoopTableOperations(FileIO(), t.location)
    version, base = a.load()
    a.commit(version, base, replace(base, properties={**base.properties, "owner": "a"}))
    with pytest.raises(VersionConflict):
        b.commit(version, base, replace(base, properties={**base.properties, CODEC: "gzip"}))
    assert _metadata_files(t.location) == ["v1.metadata.json", "v2.metadata.json"]
    assert b.load()[1].properties["owner"] == "a"


@pytest.mark.parametrize("layout", ["hadoop", "sql"])
def test_an_unknown_codec_is_refused_before_anything_is_written(tmp_path, layout):
    kw = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'cat.db'}"} if layout == "sql" else {}
    cat = icefloe.Catalog(str(tmp_path / "wh"), **kw)
    cat.create_namespace("db")
    with pytest.raises(BadUpdate, match=rf"{re.escape(CODEC)}='zstd'"):
        cat.create_table("db.bad", "id bigint, s string", properties={CODEC: "zstd"})
    with pytest.raises(NoSuchTableError):
        cat.load_table("db.bad")
    assert not os.path.exists(str(tmp_path / "wh" / "db" / "bad" / "metadata")) or \
        not _metadata_files(str(tmp_path / "wh" / "db" / "bad"))
    t = cat.create_table("db.t", "id bigint, s string")
    t.append(_rows([1], "a"))
    before, files = t.refresh().metadata_location, _metadata_files(t.location)
    with pytest.raises(BadUpdate, match=rf"{re.escape(CODEC)}='gzip2'"):
        t.update_properties(set={CODEC: "gzip2"})
    with pytest.raises(BadUpdate, match=rf"{re.escape(CODEC)}='snappy'"):
        with t.transaction() as tx:
            tx.append(_rows([2], "b"))
            tx.update_properties(set={CODEC: "snappy"})
    t = cat.load_table("db.t")
    assert t.metadata_location == before and _metadata_files(t.location) == files and _ids(t) == [1]
    assert CODEC not in t.metadata.properties


def test_alter_table_set_tblproperties_refuses_an_unknown_codec(catalog):
    catalog.sql("CREATE TABLE db.t (id bigint, s string) USING iceberg")
    t = catalog.load_table("db.t")
    before = t.metadata_location
    with pytest.raises(Exception, match=rf"{re.escape(CODEC)}='lz4'"):
        catalog.sql(f"ALTER TABLE db.t SET TBLPROPERTIES ('{CODEC}' = 'lz4')")
    assert catalog.load_table("db.t").metadata_location == before
    catalog.sql(f"ALTER TABLE db.t SET TBLPROPERTIES ('{CODEC}' = 'GZIP')")
    assert catalog.load_table("db.t").metadata_location.endswith("/v2.gz.metadata.json")


@pytest.fixture(scope="module")
def jvm(tmp_path_factory, iceberg_runtime):
    return iceberg_runtime(None, tmp_path_factory.mktemp("jvm-gz-warehouse"))


_JAVA_READS = """
out = {}
for key, location in locations.items():
    df = spark.read.format('iceberg').load(location)
    out[key] = sorted(r[0] for r in df.select('id').collect())
result = out
"""


def test_the_java_runtime_and_icefloe_read_each_others_gzip_metadata(jvm, tmp_path):
    from pyiceberg.table import StaticTable

    # icefloe writes, with gzip metadata: a Hadoop-layout table and a SQL catalog table
    hadoop = icefloe.Catalog(str(tmp_path / "wh"))
    hadoop.create_namespace("db")
    ours = hadoop.create_table("db.ours", "id bigint, s string", properties={CODEC: "gzip"})
    ours.append(_rows([1, 2, 3], "a"))
    sql = icefloe.Catalog(str(tmp_path / "sqlwh"), type="sql", uri=f"sqlite:///{tmp_path / 'cat.db'}")
    sql.create_namespace("db")
    cat_table = sql.create_table("db.c", "id bigint, s string", properties={CODEC: "gzip"})
    cat_table.append(_rows([7, 8], "c"))
    assert ours.metadata_location.endswith(".gz.metadata.json")
    assert cat_table.metadata_location.endswith(".gz.metadata.json")
    # the Java runtime writes a table with the property set
    jvm.sql("CREATE TABLE jvm.db.theirs (id bigint, s string) USING iceberg "
            f"TBLPROPERTIES ('format-version'='2', '{CODEC}'='gzip')")
    jvm.sql("INSERT INTO jvm.db.theirs VALUES (10, 'j'), (11, 'j')")
    theirs_location = jvm.table_location("db.theirs")
    assert _metadata_files(theirs_location) == ["v1.gz.metadata.json", "v2.gz.metadata.json"]
    theirs = icefloe.load_table(theirs_location)
    assert _ids(theirs) == [10, 11]
    theirs.append(_rows([12], "ours"))          # icefloe commits on it, compressed as the table asks
    assert _metadata_files(theirs_location)[-1] == "v3.gz.metadata.json"
    got = jvm.run(_JAVA_READS, locations={
        "hadoop": ours.location, "sql": cat_table.metadata_location, "theirs": theirs_location})
    assert got == {"hadoop": [1, 2, 3], "sql": [7, 8], "theirs": [10, 11, 12]}
    jvm.sql("INSERT INTO jvm.db.theirs VALUES (13, 'j')")   # the runtime commits after icefloe's version
    assert _metadata_files(theirs_location)[-1] == "v4.gz.metadata.json"
    assert _ids(icefloe.load_table(theirs_location)) == [10, 11, 12, 13]
    # pyiceberg reads icefloe's compressed metadata too
    py = StaticTable.from_metadata(cat_table.metadata_location)
    assert sorted(py.scan().to_arrow().column("id").to_pylist()) == [7, 8]


def test_icefloe_serve_writes_gzip_metadata_and_refuses_an_unknown_codec(tmp_path):
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.exceptions import BadRequestError

    from tests.interop_util import served

    cat = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}")
    with served(cat) as uri:
        rc = RestCatalog("rest", uri=uri)
        rc.create_namespace("db")
        schema = pa.schema([pa.field("id", pa.int64(), False), ("s", pa.string())])
        with pytest.raises(BadRequestError, match=rf"{re.escape(CODEC)}='brotli'"):
            rc.create_table("db.bad", schema=schema, properties={CODEC: "brotli"})
        pt = rc.create_table("db.t", schema=schema, properties={CODEC: "gzip"})
        pt.append(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}, schema=schema))
        client = icefloe.Catalog(type="rest", uri=uri)
        t = client.load_table("db.t")
        t.append(_rows([3], "c"))
        location = cat.load_table("db.t").location
        assert len(_metadata_files(location)) == 3
        assert all(n.endswith(".gz.metadata.json") for n in _metadata_files(location))
        before = cat.load_table("db.t").metadata_location
        with pytest.raises(Exception, match=rf"{re.escape(CODEC)}='zip'"):
            with rc.load_table("db.t").transaction() as tx:
                tx.set_properties({CODEC: "zip"})
        assert cat.load_table("db.t").metadata_location == before and len(_metadata_files(location)) == 3
        assert sorted(rc.load_table("db.t").scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
        assert not rc.table_exists("db.bad")


def test_a_view_honours_the_codec_property_of_its_own(tmp_path):
    from icefloe.core.schema_input import to_schema
    from icefloe.iceberg.view_metadata import SetViewProperties, new_version, new_view_metadata

    cat = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}")
    cat.create_namespace("db")
    location = str(tmp_path / "wh" / "db" / "v")

    def meta(props):
        return new_view_metadata(location, to_schema("a int"), new_version("SELECT 1 AS a", 0, ["db"], None, {}),
                                 props)

    with pytest.raises(BadUpdate, match=rf"{re.escape(CODEC)}='xz'"):
        cat.create_view("db.bad", meta({CODEC: "xz"}))
    assert not os.path.exists(os.path.join(location, "metadata"))
    v = cat.create_view("db.v", meta({CODEC: "gzip"}))
    assert v.metadata_location.endswith(".gz.metadata.json") and _is_gzip(v.metadata_location)
    assert cat.load_view("db.v").metadata == v.metadata
    v2 = cat.replace_view("db.v", [SetViewProperties({CODEC: "none"})], v.metadata.view_uuid)
    assert v2.metadata_location.endswith(".metadata.json") and not _is_gzip(v2.metadata_location)
    with pytest.raises(BadUpdate, match=rf"{re.escape(CODEC)}='xz'"):
        cat.replace_view("db.v", [SetViewProperties({CODEC: "xz"})], v.metadata.view_uuid)
    assert cat.load_view("db.v").metadata_location == v2.metadata_location
    assert len(os.listdir(os.path.join(location, "metadata"))) == 2
