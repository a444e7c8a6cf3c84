"""Iceberg's Parquet writer properties (``write.parquet.*`` and, for delete files, the
``write.delete.parquet.*`` variants falling back to them) reach every writer of a table's Parquet
files: the Arrow writers (data files, position and equality delete files), Spark's Parquet writer,
and icefloe's JVM change writer. Each test reads the written files' footers and page headers;
a value icefloe cannot honour is refused, naming the property, before anything is written."""
from __future__ import annotations

import glob
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.core.parquet_footer import decode_struct
from icefloe.errors import IcefloeError
from icefloe.iceberg.delete_files import write_equality_deletes, write_position_deletes
from icefloe.iceberg.parquet_props import ParquetSettings
from icefloe.spark import iceberg_change_writer

P, D = "write.parquet.", "write.delete.parquet."
MOR = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read",
       "write.merge.mode": "merge-on-read"}


def _local(path: str) -> str:
    return path.removeprefix("file:").removeprefix("//") if path.startswith("file:") else path


def pages(path: str, column: int = 0) -> list[tuple[int, int, int]]:
    """Each page of the column's chunks in the file: (page type, values, compressed size); type
    0 is a data page, 2 a dictionary page, 3 a data page v2 (parquet.thrift's ``PageHeader``)."""
    md = pq.read_metadata(path)
    data = open(path, "rb").read()
    out = []
    for g in range(md.num_row_groups):
        c = md.row_group(g).column(column)
        pos = c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset
        end = pos + c.total_compressed_size
        while pos < end:
            header, body = decode_struct(data, pos)
            size = header.get(3)
            values = (header.get(5) or header.get(7) or header.get(8)).get(1)
            out.append((header.get(1), values, size))
            pos = body + size
    return out


def codecs(path: str) -> set[int]:
    """The codec of each column chunk as the footer holds it (parquet.thrift's ``CompressionCodec``:
    5 is the Hadoop-framed LZ4, 7 LZ4_RAW), read from the Thrift itself: pyarrow names 5 UNKNOWN."""
    data = open(path, "rb").read()
    size = int.from_bytes(data[-8:-4], "little")
    footer, _ = decode_struct(data, len(data) - 8 - size)
    return {chunk.get(3).get(4) for group in footer.get(4).items for chunk in group.get(1).items}


def data_pages(path: str, column: int = 0) -> list[int]:
    """The number of values of each data page of the column."""
    return [v for kind, v, _ in pages(path, column) if kind in (0, 3)]


def _rows(n: int) -> pa.Table:
    # "s": 2000 distinct strings: a dictionary of some 40 kB, outgrowing a small limit
    return pa.table({"id": pa.array(range(n), pa.int64()), "s": [f"value-{i % 2000:08d}" for i in range(n)]})


def _paths(t, content: int) -> list[str]:
    """The live files of the table's current snapshot holding ``content`` (0 data, 1 position deletes)."""
    from icefloe.iceberg.manifest_reader import load_manifest_entries, snapshot_manifests

    t = t.refresh()
    meta = t.metadata
    return [e.data_file.file_path for m in snapshot_manifests(t.io, meta.current_snapshot)
            for e in load_manifest_entries(t.io, meta, m) if e.data_file.content == content and e.status != 2]


SETTINGS = {P + "compression-codec": "gzip", P + "compression-level": "1", P + "page-row-limit": "700",
            P + "dict-size-bytes": "4096", P + "row-group-size-bytes": "60000"}


def _check_data_file(path: str, rows: int) -> None:
    """A data file written under SETTINGS: gzip, pages of at most 700 rows, the string column's
    dictionary capped (falling back to plain pages), row groups of about 60 kB."""
    md = pq.read_metadata(path)
    assert md.num_rows == rows
    assert {md.row_group(g).column(c).compression for g in range(md.num_row_groups)
            for c in range(md.num_columns)} == {"GZIP"}
    for col in range(md.num_columns):
        counts = data_pages(path, col)
        assert max(counts) <= 700 and sum(counts) == rows
    strings = md.row_group(0).column(1)
    assert "PLAIN" in strings.encodings, "the dictionary outgrew its 4096-byte limit and fell back"
    # pyarrow keeps the dictionary it filled; parquet-java drops it, writing every value plainly
    assert all(size <= 4096 + 1024 for kind, _, size in pages(path, 1) if kind == 2)
    assert md.num_row_groups >= 3
    sizes = [sum(md.row_group(g).column(c).total_compressed_size for c in range(md.num_columns))
             for g in range(md.num_row_groups - 1)]
    assert all(25_000 <= s <= 120_000 for s in sizes), sizes


def test_arrow_data_files_take_every_setting(tmp_path):
    t = icefloe.Catalog(str(tmp_path / "wh")).create_table("db.t", "id bigint, s string", properties=SETTINGS)
    t.append(_rows(60_000))
    [path] = _paths(t, 0)
    _check_data_file(_local(path), 60_000)


def test_arrow_levels_and_page_sizes_change_the_file(tmp_path):
    """A higher level compresses smaller; a smaller page size makes more pages."""
    sizes, counts = {}, {}
    for level, page in (("1", "1048576"), ("19", "1048576"), ("1", "8192")):
        t = icefloe.Catalog(str(tmp_path / f"wh{level}-{page}")).create_table(
            "db.t", "id bigint, s string",
            properties={P + "compression-codec": "zstd", P + "compression-level": level, P + "page-size-bytes": page})
        t.append(_rows(40_000))
        [path] = _paths(t, 0)
        sizes[level, page] = os.path.getsize(_local(path))
        counts[level, page] = len(data_pages(_local(path), 0))
    assert sizes["19", "1048576"] < sizes["1", "1048576"]
    # 40,000 longs: 320 kB in pages of 1 MB or of 8 kB
    assert counts["1", "1048576"] <= 2 and counts["1", "8192"] >= 30


def test_delete_files_take_their_own_settings_and_fall_back(tmp_path):
    """Position and equality delete files: the write.delete.parquet.* settings where set, the data
    files' otherwise (here: the page row limit and the dictionary size)."""
    t = icefloe.Catalog(str(tmp_path / "wh")).create_table("db.t", "id bigint, s string")
    meta = t.metadata
    props = {P + "compression-codec": "gzip", P + "page-row-limit": "300", P + "dict-size-bytes": "2048",
             D + "compression-codec": "zstd", D + "compression-level": "9", D + "row-group-size-bytes": "20000"}
    paths = pa.array([f"{t.location}/data/f{i % 40:03d}-{'x' * 60}.parquet" for i in range(30_000)])
    rows = pa.table({"file_path": paths, "pos": pa.array(range(30_000), pa.int64())})
    [pos] = write_position_deletes(t.io, t.location, meta.schema, meta.spec, {(): rows}, props)
    [eq] = write_equality_deletes(t.io, t.location, meta.schema, meta.spec, {(): _rows(30_000).select(["s"])},
                                  [2], props)
    for f in (pos, eq):
        path = _local(f.file_path)
        md = pq.read_metadata(path)
        assert {md.row_group(g).column(0).compression for g in range(md.num_row_groups)} == {"ZSTD"}
        assert max(data_pages(path, 0)) <= 300
        assert md.num_row_groups >= 2
    eq_md = pq.read_metadata(_local(eq.file_path))
    assert "PLAIN" in eq_md.row_group(0).column(0).encodings
    # the level: level 9 files are smaller than level 1 ones
    small = write_position_deletes(t.io, t.location, meta.schema, meta.spec, {(): rows},
                                   {**props, D + "compression-level": "1"})[0]
    assert os.path.getsize(_local(pos.file_path)) < os.path.getsize(_local(small.file_path))


@pytest.mark.parametrize("prop,value,says", [
    (P + "compression-level", "high", "not an integer"),
    (P + "compression-level", "23", "out of range"),
    (D + "compression-level", "0", "out of range"),          # gzip takes 1 to 9
    (P + "page-size-bytes", "0", "positive"),
    (D + "page-row-limit", "-5", "positive"),
    (P + "dict-size-bytes", "1MB", "not an integer"),
    (D + "row-group-size-bytes", "3000000000", "positive"),
    (D + "compression-codec", "lzo", "not a Parquet codec"),
])
def test_unusable_values_are_refused_naming_the_property(tmp_path, prop, value, says):
    props = {P + "compression-codec": "zstd", D + "compression-codec": "gzip"}
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    with pytest.raises(IcefloeError, match=f"{prop}.*{says}"):
        cat.create_table("db.bad", "id bigint, s string", properties={**props, prop: value})
    t = cat.create_table("db.t", "id bigint, s string", properties=props)
    before = t.metadata_location
    with pytest.raises(IcefloeError, match=f"{prop}.*{says}"):
        t.update_properties(set={prop: value})
    assert t.refresh().metadata_location == before and t.properties.get(prop) != value
    # a table another engine configured so: the write is refused before any file is written
    from icefloe.iceberg.arrow_writer import write_arrow

    meta = t.metadata
    bad = {**t.properties, prop: value}
    with pytest.raises(IcefloeError, match=prop):
        write_position_deletes(t.io, t.location, meta.schema, meta.spec,
                               {(): [(f"{t.location}/data/x.parquet", 0)]}, bad)
    if prop.startswith(P):
        with pytest.raises(IcefloeError, match=prop):
            write_arrow(t.io, _rows(10), meta.schema, meta.spec, t.location, bad, meta=meta)
    assert not glob.glob(os.path.join(t.location.removeprefix("file:"), "data", "**", "*.parquet"), recursive=True)


def test_levels_of_codecs_without_levels_are_left_unused():
    """As in the Java runtime: snappy and uncompressed take no level, so one set beside them
    (by another engine) leaves the table writable; a delete level falls back to the data one."""
    s = ParquetSettings.of({P + "compression-codec": "snappy", P + "compression-level": "5"})
    assert s.level is None and "compression_level" not in s.arrow_options()
    d = ParquetSettings.of({P + "compression-codec": "zstd", P + "compression-level": "5",
                            D + "compression-codec": "gzip"}, delete=True)
    assert (d.codec, d.level) == ("gzip", 5)
    assert d.hadoop_options()["zlib.compress.level"] == "FIVE"


def test_spark_writes_take_every_setting(tmp_path, spark):
    """Spark's own Parquet writer (an append of a Spark DataFrame)."""
    t = icefloe.Catalog(str(tmp_path / "wh"), spark=spark).create_table(
        "db.t", "id bigint, s string", properties=SETTINGS)
    rows = spark.createDataFrame(_rows(60_000).to_pandas()).coalesce(1)
    t.append(rows)
    [path] = _paths(t, 0)
    _check_data_file(_local(path), 60_000)
    # without the settings: one row group, the strings dictionary-encoded, pages of Spark's size
    plain = icefloe.Catalog(str(tmp_path / "wh2"), spark=spark).create_table("db.t", "id bigint, s string")
    plain.append(rows)
    [path] = _paths(plain, 0)
    md = pq.read_metadata(_local(path))
    assert md.num_row_groups == 1 and md.row_group(0).column(1).has_dictionary_page
    assert max(data_pages(_local(path), 0)) > 700


def test_spark_levels_reach_the_compressor(tmp_path, spark):
    sizes = {}
    for codec, level in (("gzip", "1"), ("gzip", "9"), ("zstd", "1"), ("zstd", "22")):
        t = icefloe.Catalog(str(tmp_path / f"wh{codec}{level}"), spark=spark).create_table(
            "db.t", "id bigint, s string",
            properties={P + "compression-codec": codec, P + "compression-level": level})
        t.append(spark.createDataFrame(_rows(40_000).to_pandas()).coalesce(1))
        [path] = _paths(t, 0)
        sizes[codec, level] = os.path.getsize(_local(path))
    assert sizes["gzip", "9"] < sizes["gzip", "1"]
    assert sizes["zstd", "22"] < sizes["zstd", "1"]


def test_change_writer_takes_data_and_delete_settings(tmp_path, spark, monkeypatch):
    """icefloe's JVM change writer: the updated rows' data files under write.parquet.*, the
    position delete files under write.delete.parquet.*."""
    ran = []
    original = iceberg_change_writer.write
    monkeypatch.setattr(iceberg_change_writer, "write", lambda *a, **k: ran.append(1) or original(*a, **k))
    props = {**MOR, "format-version": "2", P + "compression-codec": "gzip", P + "page-row-limit": "500",
             D + "compression-codec": "zstd", D + "page-row-limit": "200", D + "dict-size-bytes": "1024"}
    t = icefloe.Catalog(str(tmp_path / "wh"), spark=spark).create_table("db.t", "id bigint, s string",
                                                                      properties=props)
    t.append(_rows(20_000))
    t.update({"s": "concat(s, '-u')"}, where="id % 2 = 0")
    assert ran, "the JVM change writer did not write the change"
    [deletes] = _paths(t, 1)
    md = pq.read_metadata(_local(deletes))
    assert md.row_group(0).column(0).compression == "ZSTD"
    assert max(data_pages(_local(deletes), 1)) <= 200 and sum(data_pages(_local(deletes), 1)) == 10_000
    written = [p for p in _paths(t, 0) if "-u" in pq.read_table(_local(p), columns=["s"]).column(0)[0].as_py()]
    assert written
    for p in written:
        assert pq.read_metadata(_local(p)).row_group(0).column(0).compression == "GZIP"
        assert max(data_pages(_local(p), 0)) <= 500
    assert sorted(r["s"] for r in t.to_arrow().to_pylist() if r["id"] in (0, 1)) == ["value-00000000-u",
                                                                                      "value-00000001"]


def test_brotli_tables_are_written_by_arrow_where_spark_has_no_brotli(tmp_path, spark):
    """Spark's Parquet writer has no brotli: a Spark append to a brotli table is written by the
    Arrow writers in the tasks, at the table's level, rather than failing or taking another codec."""
    t = icefloe.Catalog(str(tmp_path / "wh"), spark=spark).create_table(
        "db.t", "id bigint, s string", properties={P + "compression-codec": "brotli", P + "compression-level": "3",
                                                   P + "page-row-limit": "900"})
    t.append(spark.createDataFrame(_rows(5_000).to_pandas()).coalesce(1))
    [path] = _paths(t, 0)
    md = pq.read_metadata(_local(path))
    assert md.row_group(0).column(0).compression == "BROTLI" and max(data_pages(_local(path), 0)) <= 900
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(5_000))


def test_lz4_is_written_by_spark_and_refused_by_arrow(tmp_path, spark):
    """``lz4`` names Parquet's Hadoop-framed LZ4, which Spark's writer writes and pyarrow does not
    (it writes LZ4_RAW): an Arrow write of an ``lz4`` table is refused naming the property, before
    any file is written; ``lz4_raw`` is written by both."""
    cat = icefloe.Catalog(str(tmp_path / "wh"), spark=spark)
    t = cat.create_table("db.t", "id bigint, s string", properties={P + "compression-codec": "lz4"})
    t.append(spark.createDataFrame(_rows(1_000).to_pandas()).coalesce(1))
    [path] = _paths(t, 0)
    assert codecs(_local(path)) == {5}
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(1_000))
    with pytest.raises(IcefloeError, match=f"{P}compression-codec=lz4.*lz4_raw"):
        t.append(_rows(10))
    assert _paths(t, 0) == [path] and len(glob.glob(os.path.join(t.location, "data", "*.parquet"))) == 1
    raw = cat.create_table("db.r", "id bigint, s string", properties={P + "compression-codec": "lz4_raw"})
    raw.append(_rows(10))
    raw.append(spark.createDataFrame(_rows(1_000).to_pandas()).coalesce(1))
    assert set().union(*(codecs(_local(p)) for p in _paths(raw, 0))) == {7}


@pytest.fixture(scope="module")
def jvm(tmp_path_factory, iceberg_runtime):
    from tools.jvm_runtime import newest_iceberg_version

    return iceberg_runtime(newest_iceberg_version(), tmp_path_factory.mktemp("jvm-parquet"))


def test_the_java_runtime_reads_the_properties_alike(jvm, spark):
    """One table, the same properties: the Java runtime's files and icefloe's (data files by the
    Arrow writer, position delete files by the JVM change writer) carry the same codecs, page row
    limits and row group cuts, and the runtime reads icefloe's rows."""
    props = {P + "compression-codec": "zstd", P + "compression-level": "9", P + "page-row-limit": "700",
             P + "row-group-size-bytes": "30000", D + "compression-codec": "gzip", D + "page-row-limit": "250"}
    name = "db.pqprops"
    listed = ", ".join(f"'{k}'='{v}'" for k, v in {**props, **MOR, "format-version": "2"}.items())
    jvm.sql(f"CREATE TABLE jvm.{name} (id bigint, s string) USING iceberg TBLPROPERTIES ({listed})")
    jvm.sql(f"INSERT INTO jvm.{name} SELECT id, concat('value-', lpad(cast(id % 2000 as string), 8, '0')) "
            "FROM range(0, 30000, 1, 1)")
    jvm.sql(f"DELETE FROM jvm.{name} WHERE id % 10 = 1")
    t = icefloe.load_table(jvm.table_location(name))
    theirs = {0: set(map(_local, _paths(t, 0))), 1: set(map(_local, _paths(t, 1)))}
    t.append(pa.table({"id": pa.array(range(30_000, 60_000), pa.int64()),
                       "s": [f"value-{i % 2000:08d}" for i in range(30_000, 60_000)]}))
    t = icefloe.load_table(jvm.table_location(name), spark=spark)
    t.delete("id % 10 = 3")
    ours = {k: set(map(_local, _paths(t, k))) - theirs[k] for k in (0, 1)}
    assert theirs[0] and theirs[1] and ours[0] and ours[1]
    for files, codec, limit in ((theirs[0] | ours[0], "ZSTD", 700), (theirs[1] | ours[1], "GZIP", 250)):
        for path in files:
            md = pq.read_metadata(path)
            assert {md.row_group(g).column(0).compression for g in range(md.num_row_groups)} == {codec}, path
            assert max(data_pages(path, 0)) <= limit, path
    for path in theirs[0] | ours[0]:        # both cut row groups at about 30 kB
        assert pq.read_metadata(path).num_row_groups >= 3, path
    jvm.sql(f"REFRESH TABLE jvm.{name}")
    # the runtime's delete came before icefloe's append
    expected = [i for i in range(60_000) if i % 10 != 3 and (i % 10 != 1 or i >= 30_000)]
    assert [list(r) for r in jvm.sql(f"SELECT count(*), sum(id) FROM jvm.{name}")] == [[len(expected), sum(expected)]]
