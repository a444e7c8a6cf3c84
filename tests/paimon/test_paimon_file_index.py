"""Paimon file indexes (``icefloe.paimon.file_index``): the container and bloom filter bytes, the
writers embedding them or writing ``.index`` files, reads skipping files by them, and Paimon's Java
engine (1.4) reading icefloe's indexes and icefloe reading Paimon's (``make test-long``)."""
from __future__ import annotations

import decimal
import struct

import pyarrow as pa
import pytest

from icefloe.errors import IcefloeError
from icefloe.paimon import file_index as fi
from icefloe.paimon import predicate as pr
from icefloe.paimon.types import parse_field

BLOOM = {"file-index.bloom-filter.columns": "name,id",
         "file-index.bloom-filter.name.items": "50", "file-index.bloom-filter.id.items": "50"}


def _two_files(t):
    """Two appends whose min/max ranges overlap, so statistics skip neither file for 'b' or 2."""
    t.append(pa.table({"id": pa.array([1, 9], pa.int64()), "name": ["a", "z"]}))
    t.append(pa.table({"id": pa.array([2, 8], pa.int64()), "name": ["b", "y"]}))


# ---------------------------------------------------------------- the bytes
def test_container_layout_follows_the_spec():
    raw = fi.write_container({"c1": {"bloom-filter": b"\x01\x02\x03"}, "c\u00e9": {"bloom-filter": None}})
    magic, version, head_length, columns = struct.unpack_from(">qiii", raw, 0)
    assert (magic, version, columns) == (1493475289347502, 1, 2)
    # head: 20 bytes, then per column its name, index count, and per index its name, start, length; then 0
    names = (2 + 2) + (2 + 12) + (2 + 3) + (2 + 12)
    assert head_length == 20 + names + 4 + 4 + 8 + 8 + 4
    assert raw[head_length:] == b"\x01\x02\x03"
    metas = fi.read_header(raw)
    # columns in the order Java's HashMap of their names iterates: "c\u00e9" (bin 6) before "c1" (bin 14)
    assert [(m.column, m.index_type, m.start, m.length, m.empty) for m in metas] == [
        ("c\u00e9", "bloom-filter", -1, 0, True), ("c1", "bloom-filter", head_length, 3, False)]
    # Java's modified UTF-8: NUL takes two bytes
    assert fi.read_header(fi.write_container({"a\x00b": {"bloom-filter": b""}}))[0].column == "a\x00b"
    with pytest.raises(IcefloeError, match="not a Paimon file index"):
        fi.read_header(b"\x00" * 32)


def test_bloom_filter_size_and_hashes():
    # Paimon's BloomFilter64(items, fpp): bits rounded past a byte boundary, k = round(bits / items * ln 2)
    assert fi.bloom_size(1_000_000, 0.1) == (4792536, 3)
    assert fi.bloom_size(100, 0.01) == (960, 7)
    # XXH64 with seed 0 for strings; Thomas Wang's hash of the number for integers
    assert fi.literal_hash("hello", parse_field({"id": 0, "name": "s", "type": "STRING"}).type) == \
        0x26C7827D889F6DA3
    int_type = parse_field({"id": 0, "name": "i", "type": "INT"}).type
    hashes = fi.column_hashes(pa.array([1, None, 1, -5], pa.int32()), int_type)
    assert sorted(hashes.tolist()) == sorted([fi.literal_hash(1, int_type), fi.literal_hash(-5, int_type)])
    raw = fi.bloom_filter_bytes(hashes, 100, 0.01)
    assert struct.unpack(">i", raw[:4])[0] == 7 and len(raw) == 4 + 120
    assert fi.bloom_may_contain(raw, fi.literal_hash(-5, int_type))
    misses = [v for v in range(1000, 1100) if not fi.bloom_may_contain(raw, fi.literal_hash(v, int_type))]
    assert len(misses) > 90


def test_literals_that_may_hash_otherwise_never_skip():
    dbl = parse_field({"id": 0, "name": "x", "type": "DOUBLE"}).type
    ts3 = parse_field({"id": 0, "name": "t", "type": "TIMESTAMP(3)"}).type
    assert fi.literal_hash(0.0, dbl) is None and fi.literal_hash(float("nan"), dbl) is None
    assert fi.literal_hash(1.5, dbl) is not None
    assert fi.literal_hash(1_000_001, ts3) is None and fi.literal_hash(2_000, ts3) is not None


# ---------------------------------------------------------------- writing and skipping
def test_small_indexes_are_embedded_and_skip_files(paimon_catalog):
    t = paimon_catalog.create_table("db.fi", "id bigint, name string", properties=BLOOM)
    _two_files(t)
    files = t.plan_files()
    assert all(f.embedded_index and not f.extra_files for f in files)
    assert {m.column for m in fi.read_header(files[0].embedded_index)} == {"name", "id"}
    assert len(t.plan()) == 2
    assert len(t.plan(where="name = 'b'")) == 1          # statistics alone keep both files
    assert len(t.plan(where="id = 2")) == 1
    assert len(t.plan(where="name in ('a', 'b')")) == 2
    assert len(t.plan(where="name = 'b' or id = 9")) == 2
    assert t.plan(where="name = 'q'") == []
    assert len(t.plan(where="name = 'b' and id > 0")) == 1
    assert len(t.plan(where="name > 'b'")) == 2            # only = and IN use the index
    assert t.to_arrow(where="name = 'b'").column("id").to_pylist() == [2]
    t.update_schema().set_option("file-index.read.enabled", "false").commit()
    assert len(t.refresh().plan(where="name = 'b'")) == 2


def test_large_indexes_are_index_files_beside_the_data(paimon_catalog):
    t = paimon_catalog.create_table("db.fx", "id bigint, name string",
                                    properties={"file-index.bloom-filter.columns": "name"})
    _two_files(t)
    files = t.plan_files()
    for f in files:
        assert f.embedded_index is None and f.extra_files == (f.file_name + ".index",)
        raw = t.io.read_bytes(f.file_path + ".index")
        (meta,) = fi.read_header(raw)
        assert (meta.column, meta.index_type) == ("name", "bloom-filter")
        assert meta.length == 4 + 4792536 // 8        # the default 1,000,000 items at 10%
    (kept,) = t.plan(where="name = 'b'")
    assert t.io.read_parquet(kept.file.file_path).column("name").to_pylist() == ["b", "y"] \
        if hasattr(t.io, "read_parquet") else len(t.plan(where="name = 'b'")) == 1
    assert t.to_arrow(where="name = 'y'").column("id").to_pylist() == [8]


def test_bit_sliced_indexes_skip_files_by_value_and_range(paimon_catalog):
    t = paimon_catalog.create_table("db.bsi", "id bigint, d date, amt decimal(10,2), name string",
                                    properties={"file-index.bsi.columns": "id,d,amt",
                                                "file-index.in-manifest-threshold": "4 kb"})
    t.append(pa.table({"id": pa.array([1, -9, None], pa.int64()), "d": pa.array([0, 10, None], pa.date32()),
                       "amt": pa.array([decimal.Decimal("1.50"), decimal.Decimal("-3.00"), None],
                                       pa.decimal128(10, 2)), "name": ["a", "z", "n"]}))
    t.append(pa.table({"id": pa.array([2, 8], pa.int64()), "d": pa.array([3, 7], pa.date32()),
                       "amt": pa.array([decimal.Decimal("0.25"), decimal.Decimal("9.99")], pa.decimal128(10, 2)),
                       "name": ["b", "y"]}))
    (meta,) = [m for m in fi.read_header(t.plan_files()[0].embedded_index) if m.column == "id"]
    assert meta.index_type == "bsi"
    assert fi.bsi_values(fi.bsi_bytes([1, -9, None, 1 << 40])) == {1, -9, 1 << 40}
    assert len(t.plan(where="id = 2")) == 1 and len(t.plan(where="id in (-9, 8)")) == 2
    assert t.plan(where="id = 5") == [] and t.plan(where="id = -1") == []
    assert len(t.plan(where="d = date '1970-01-04'")) == 1 and t.plan(where="d = date '1970-01-05'") == []
    assert len(t.plan(where="amt = 0.25")) == 1 and t.plan(where="amt = 0.26") == []
    assert len(t.plan(where="amt > 9.5")) == 1
    assert sorted(t.to_arrow(where="id in (-9, 8)").column("name").to_pylist()) == ["y", "z"]


def test_the_threshold_decides_embedded_or_file(paimon_catalog):
    t = paimon_catalog.create_table("db.th", "id bigint, name string",
                                    properties={**BLOOM, "file-index.in-manifest-threshold": "100 b"})
    _two_files(t)
    assert all(f.embedded_index is None and f.extra_files for f in t.plan_files())    # 2 x 34 + head > 100
    assert len(t.plan(where="id = 2")) == 1
    t.update_schema().set_option("file-index.in-manifest-threshold", "2 mb") \
        .remove_option("file-index.bloom-filter.name.items").commit()
    t.refresh().append(pa.table({"id": pa.array([5], pa.int64()), "name": ["m"]}))
    (newest,) = [f for f in t.plan_files() if f.row_count == 1]
    assert newest.embedded_index is not None and len(newest.embedded_index) > 500_000 and not newest.extra_files


def test_primary_key_tables_write_indexes_but_never_skip_one_file(paimon_catalog):
    t = paimon_catalog.create_table("db.fk", "id bigint not null, name string",
                                    properties={**BLOOM, "primary-key": "id", "bucket": "1"})
    _two_files(t)
    assert all(f.embedded_index for f in t.plan_files())
    t.append(pa.table({"id": pa.array([2], pa.int64()), "name": ["c"]}))
    # the file with (2, 'b') has no 'c', but the newer record of key 2 must still replace it
    assert t.to_arrow(where="name = 'b'").num_rows == 0
    assert t.to_arrow(where="name = 'c'").column("id").to_pylist() == [2]


@pytest.mark.parametrize("options, message", [
    ({"file-index.bitmap.columns": "amount"}, "bitmap index cannot hold"),
    ({"file-index.bitmap.columns": "id", "file-index.bitmap.id.items": "5"}, "not an option of the bitmap index"),
    ({"file-index.range-bitmap.columns": "id"}, "do not write range bitmap indexes"),
    ({"file-index.bsi.columns": "flag"}, "bit-sliced index cannot hold"),
    ({"file-index.bsi.columns": "id", "file-index.bsi.id.items": "5"}, "not an option of the bsi index"),
    ({"file-index.foo.columns": "id"}, "no file index type 'foo'"),
    ({"file-index.bloom-filter.columns": "nope"}, "column 'nope', which the table does not have"),
    ({"file-index.bloom-filter.columns": "flag"}, "cannot hash"),
    ({"file-index.bloom-filter.columns": "amount"}, "cannot hash"),
    ({"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.x.fpp": "0.1"}, "not declared"),
    ({"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.fpp": "2"}, "probability"),
    ({"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.size": "2"}, "not an option"),
    ({"file-index.bloom-filter.columns": "m[k]"}, "map values by key"),
    ({"file-index.read.enabled": "yes"}, "'true' or 'false'"),
    ({"file-index.in-manifest-threshold": "lots"}, "memory size"),
    ({"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.fpp.x": "1"}, "not a file index option"),
])
def test_options_a_writer_cannot_honour_are_refused(paimon_catalog, options, message):
    with pytest.raises(IcefloeError, match=message):
        paimon_catalog.create_table("db.bad", "id bigint, flag boolean, amount decimal(10,2)", properties=options)
    t = paimon_catalog.create_table("db.ok", "id bigint, flag boolean, amount decimal(10,2)")
    before = t.table_schema.id
    with pytest.raises(IcefloeError, match=message):
        update = t.update_schema()
        for k, v in options.items():
            update = update.set_option(k, v)
        update.commit()
    assert t.refresh().table_schema.id == before


def test_predicate_columns_follow_renames(paimon_catalog):
    t = paimon_catalog.create_table("db.fr", "id bigint, name string", properties=BLOOM)
    _two_files(t)
    t.update_schema().rename_column("name", "label").commit()
    assert len(t.refresh().plan(where="label = 'b'")) == 1
    assert {f.name for f in t.table_schema.fields} == {"id", "label"}
    bound = pr.bind(pr.parse_where("label = 'b'"), t.table_schema.fields)
    assert fi.point_lookups(bound) == {"label"}


# ---------------------------------------------------------------- Paimon's Java engine (make test-long)
@pytest.mark.long
def test_paimon_java_reads_and_writes_the_same_indexes(paimon_bundle):
    """Paimon 1.4 skips files by icefloe's bloom filters (embedded: its scan drops the file; ``.index``
    file: its reader does), with its own hashes of the literals, so hashes and layout agree; and
    icefloe skips files by the indexes Paimon wrote, both kinds."""
    from icefloe.catalog import Catalog

    ice = Catalog(paimon_bundle.warehouse, "paimon")
    for name, extra in (("fi_embedded", {"file-index.bloom-filter.name.items": "50",
                                         "file-index.bloom-filter.id.items": "50"}),
                        ("fi_files", {})):
        props = {"file-index.bloom-filter.columns": "name,id", **extra}
        t = ice.create_table(f"db.{name}", "id bigint, name string", properties=props)
        _two_files(t)
        embedded = bool(extra)
        assert all(bool(f.embedded_index) == embedded and bool(f.extra_files) != embedded for f in t.plan_files())
        everything = paimon_bundle.indexed_read(f"db.{name}", "id", [1, 2, 8, 9])
        assert everything["files"] == 2 and sorted(everything["rows"]) == [(1, "a"), (2, "b"), (8, "y"), (9, "z")]
        for column, values, want in (("name", ["b"], [(2, "b"), (8, "y")]), ("id", [2], [(2, "b"), (8, "y")]),
                                     ("name", ["q"], [])):
            got = paimon_bundle.indexed_read(f"db.{name}", column, values)
            assert sorted(got["rows"]) == want, (name, column, values)
            # an embedded index drops the file in Paimon's scan, an index file in its reader
            assert got["files"] == (len(want) // 2 if embedded else 2), (name, column, values, got)
        off = paimon_bundle.indexed_read(f"db.{name}", "name", ["q"], options={"file-index.read.enabled": "false"})
        assert len(off["rows"]) == 4

        # Paimon writes a table with the same options; icefloe skips its files the same way
        paimon_bundle.create_table(f"db.{name}_java", [("id", "BIGINT"), ("name", "STRING")], options=props)
        for rows in ([(1, "a"), (9, "z")], [(2, "b"), (8, "y")]):
            paimon_bundle.write(f"db.{name}_java", rows)
        jt = ice.load_table(f"db.{name}_java")
        files = jt.plan_files()
        assert all(bool(f.embedded_index) == embedded and bool(f.extra_files) != embedded for f in files)
        ours = t.plan_files()
        if embedded:        # the same rows give the same bytes
            assert sorted(f.embedded_index for f in files) == sorted(f.embedded_index for f in ours)
        else:
            assert sorted(jt.io.read_bytes(f.file_path + ".index") for f in files) == \
                sorted(t.io.read_bytes(f.file_path + ".index") for f in ours)
        assert len(jt.plan(where="name = 'b'")) == 1 and len(jt.plan(where="id = 2")) == 1
        assert jt.plan(where="name = 'q'") == []
        assert sorted(jt.to_arrow(where="name = 'b'").column("id").to_pylist()) == [2]


# ---------------------------------------------------------------- rewrite_file_index, $file_indexes, expiry
def test_rewrite_file_index_gives_existing_files_indexes(paimon_catalog):
    t = paimon_catalog.create_table("db.rw", "id bigint, name string, dt string", partitioned_by=["dt"])
    for dt in ("d1", "d2"):
        t.append(pa.table({"id": pa.array([1, 9], pa.int64()), "name": ["a", "z"], "dt": [dt, dt]}))
        t.append(pa.table({"id": pa.array([2, 8], pa.int64()), "name": ["b", "y"], "dt": [dt, dt]}))
    assert len(t.plan(where="name = 'b'")) == 4 and t.metadata_table("file_indexes").num_rows == 0
    assert t.rewrite_file_index() == (0, 0)                          # nothing configured: nothing to do
    t.update_schema().set_option("file-index.bloom-filter.columns", "name") \
        .set_option("file-index.bloom-filter.name.items", "20").commit()
    t.refresh()
    snaps = len(t.snapshots())
    with pytest.raises(IcefloeError, match="not partition columns"):
        t.rewrite_file_index("name = 'b'")
    assert len(t.refresh().snapshots()) == snaps
    assert t.rewrite_file_index("dt = 'd1'") == (1, 2)
    assert t.refresh().current_snapshot().commit_kind == "COMPACT"
    assert len(t.plan(where="name = 'b'")) == 3
    assert t.rewrite_file_index() == (1, 2)                          # d1's files already have theirs
    assert len(t.refresh().plan(where="name = 'b'")) == 2
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 1, 2, 2, 8, 8, 9, 9]
    rows = t.metadata_table("file_indexes").to_pylist()
    assert len(rows) == 4 and {(r["column_name"], r["index_type"], r["storage_type"], r["is_empty"])
                               for r in rows} == {("name", "bloom-filter", "EMBEDDED", False)}
    assert all(r["index_file_path"] is None and r["index_size_in_bytes"] == 4 + 12 for r in rows)
    # a larger index goes to a file; the next rewrite numbers it on
    t.update_schema().remove_option("file-index.bloom-filter.name.items").commit()
    assert t.refresh().rewrite_file_index("dt = 'd2'") == (1, 2)
    rows = [r for r in t.metadata_table("file_indexes").to_pylist() if r["storage_type"] == "FILE"]
    assert len(rows) == 2 and all(r["index_file_path"] == r["file_path"] + ".index" for r in rows)
    assert all(r["index_container_size_in_bytes"] > 500_000 for r in rows)
    t.update_schema().set_option("file-index.bloom-filter.name.fpp", "0.2").commit()
    assert t.refresh().rewrite_file_index("dt = 'd2'") == (1, 2)
    paths = [r["index_file_path"] for r in t.metadata_table("file_indexes").to_pylist() if r["storage_type"] == "FILE"]
    assert len(paths) == 2 and all(p.endswith(".parquet-1.index") for p in paths)
    assert len(t.plan(where="name = 'b'")) == 2


def test_expiry_keeps_rewritten_files_and_deletes_replaced_indexes(paimon_catalog):
    import os

    t = paimon_catalog.create_table("db.ex", "id bigint, name string",
                                    properties={"file-index.bloom-filter.columns": "name"})
    _two_files(t)
    old_indexes = [f.file_path + ".index" for f in t.plan_files()]
    t.update_schema().set_option("file-index.bloom-filter.name.fpp", "0.05").commit()
    assert t.refresh().rewrite_file_index() == (1, 2)
    t.expire_snapshots(retain_last=1, now_ms=2**62)
    assert len(t.refresh().snapshots()) == 1
    for f in t.plan_files():
        assert os.path.exists(f.file_path)
        (extra,) = f.extra_files
        assert extra.endswith("-1.index") and os.path.exists(f.file_path.rsplit("/", 1)[0] + "/" + extra)
    assert not any(os.path.exists(p) for p in old_indexes)
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2, 8, 9]
    assert len(t.plan(where="name = 'b'")) == 1


@pytest.mark.long
def test_primary_key_tables_with_indexes_both_ways(paimon_bundle):
    """A primary-key table's files carry indexes of their value columns on both sides; each engine
    reads the other's with a filter and gets every key's latest record (no file skipped wrongly)."""
    from icefloe.catalog import Catalog

    ice = Catalog(paimon_bundle.warehouse, "paimon")
    props = {"file-index.bloom-filter.columns": "name", "file-index.bloom-filter.name.items": "50", "bucket": "1"}
    t = ice.create_table("db.fi_pk", "id bigint not null, name string", properties={**props, "primary-key": "id"})
    paimon_bundle.create_table("db.fi_pk_java", [("id", "BIGINT NOT NULL"), ("name", "STRING")],
                               primary_keys=("id",), options=props)
    jt = ice.load_table("db.fi_pk_java")
    for rows in ([(1, "a"), (2, "b")], [(2, "c"), (3, "b")]):
        t.append(pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "name": [r[1] for r in rows]}))
        paimon_bundle.write("db.fi_pk_java", rows)
    assert all(f.embedded_index for f in t.plan_files()) and all(f.embedded_index for f in jt.plan_files())
    want = [(1, "a"), (2, "c"), (3, "b")]
    assert sorted(paimon_bundle.rows("db.fi_pk")) == want
    got = paimon_bundle.indexed_read("db.fi_pk", "name", ["b"])
    assert {r for r in got["rows"] if r[1] == "b"} == {(3, "b")}
    for table in (t, jt):
        assert sorted(zip(*[table.to_arrow(where="name = 'b'").column(c).to_pylist() for c in ("id", "name")])) \
            == [(3, "b")]
        assert sorted(zip(*[table.to_arrow().column(c).to_pylist() for c in ("id", "name")])) == want


def test_rollback_past_a_rewrite_keeps_the_data_and_drops_the_new_index(paimon_catalog):
    import os

    t = paimon_catalog.create_table("db.rb", "id bigint, name string")
    _two_files(t)
    t.update_schema().set_option("file-index.bloom-filter.columns", "name").commit()
    t.refresh()
    before = t.current_snapshot().id
    assert t.rewrite_file_index() == (1, 2)
    indexes = [f.file_path + ".index" for f in t.refresh().plan_files()]
    assert all(os.path.exists(p) for p in indexes)
    t.rollback_to_snapshot(before)
    files = t.refresh().plan_files()
    assert all(os.path.exists(f.file_path) and not f.extra_files for f in files)
    assert not any(os.path.exists(p) for p in indexes)
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2, 8, 9]



@pytest.mark.long
def test_bit_sliced_indexes_both_ways(paimon_bundle):
    """The bsi index: the same bytes from both engines for the same rows (negative values and nulls
    included), and each engine skips files (Paimon also rows) by the other's."""
    from icefloe.catalog import Catalog

    ice = Catalog(paimon_bundle.warehouse, "paimon")
    props = {"file-index.bsi.columns": "id"}
    t = ice.create_table("db.bsi_ice", "id bigint, name string", properties=props)
    paimon_bundle.create_table("db.bsi_java", [("id", "BIGINT"), ("name", "STRING")], options=props)
    for rows in ([(1, "a"), (-9, "z"), (None, "n")], [(2, "b"), (8, "y")]):
        t.append(pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "name": [r[1] for r in rows]}))
        paimon_bundle.write("db.bsi_java", rows)
    jt = ice.load_table("db.bsi_java")
    assert sorted(f.embedded_index for f in t.plan_files()) == sorted(f.embedded_index for f in jt.plan_files())
    assert paimon_bundle.indexed_read("db.bsi_ice", "id", [2]) == {"files": 1, "rows": [(2, "b")]}
    assert paimon_bundle.indexed_read("db.bsi_ice", "id", [5]) == {"files": 0, "rows": []}
    assert len(jt.plan(where="id = 2")) == 1 and jt.plan(where="id = 5") == []
