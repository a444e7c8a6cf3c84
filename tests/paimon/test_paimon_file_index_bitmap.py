"""Paimon's bitmap file index: its bytes (format version 2, Java's value order), the files it skips
for ``=``, ``IN``, ``IS NULL`` and ``IS NOT NULL``, and Paimon's Java engine (1.4) reading icefloe's
indexes and icefloe reading Paimon's (``make test-long``)."""
from __future__ import annotations

import struct

import pyarrow as pa
import pytest

from icefloe.errors import IcefloeError
from icefloe.paimon import file_index as fi
from icefloe.paimon import file_index_bitmap as bmi
from icefloe.paimon.types import parse_field

BIG = parse_field({"id": 0, "name": "id", "type": "BIGINT"}).type
TEXT = parse_field({"id": 1, "name": "name", "type": "STRING"}).type
PROPS = {"file-index.bitmap.columns": "id,name", "file-index.in-manifest-threshold": "64kb"}


def test_layout_of_a_small_index():
    """Rows 1, 2, 1, null, 3, null: value 1 has a bitmap of two rows, 2 and 3 one row each (offset
    -1 - row, length -1), the two nulls a bitmap before the others in the body."""
    raw, certain = bmi.bitmap_bytes([1, 2, 1, None, 3, None], BIG)
    assert certain
    nulls = _roaring([3, 5])
    ones = _roaring([0, 2])
    head = struct.pack(">biI?ii", 2, 6, 3, True, 0, len(nulls))
    block = struct.pack(">i", 3) + b"".join(struct.pack(">qii", k, o, n) for k, o, n in
                                           [(1, len(nulls), len(ones)), (2, -2, -1), (3, -5, -1)])
    blocks = struct.pack(">iqi", 1, 1, 0) + struct.pack(">i", len(block))
    assert raw == head + blocks + block + nulls + ones
    index = bmi.BitmapIndex(raw, BIG)
    assert index.rows == 6 and index.has_nulls and index.keys == {1, 2, 3}


def _roaring(rows):
    from pyroaring import BitMap

    b = BitMap(rows)
    b.run_optimize()
    return b.serialize()


def test_java_hash_map_order_and_string_hashes():
    # Paimon's BinaryString.hashCode (Murmur3 32, seed 42, over the UTF-8 bytes), values from Java
    assert [bmi.java_hash(s.encode(), "VARCHAR") for s in ["", "a", "abcd", "v3\u00e9", "h\u00e9llo w\u00f6rld"]] \
        == [142593372, 1485273170, -396302900, 2049041566, -281075962]
    assert bmi.java_string_hash("name") == 3373707 and bmi.java_hash(-1 << 40, "BIGINT") == -256
    # 20 distinct longs: the table grew to 32 bins; a bin holds the newest key first
    keys = [i * 32 for i in range(3)] + list(range(1, 18))
    order, certain = bmi.java_order(keys, "BIGINT")
    assert certain and order[:3] == [64, 32, 0] and order[3:] == list(range(1, 18))
    # body bitmaps follow that order, entries are sorted
    raw, _ = bmi.bitmap_bytes([5, 5, 3, 3], BIG)
    assert raw.endswith(_roaring([2, 3]) + _roaring([0, 1]))
    strings, _ = bmi.bitmap_bytes([b"b", b"a", None], TEXT)
    assert bmi.BitmapIndex(strings, TEXT).keys == {b"a", b"b"}


def test_containers_list_columns_as_paimons_writer_does():
    # "d" and "t" share a bin of Java's maps; Paimon's writer puts "t" first (seen in its bytes)
    order = bmi.java_container_order({c: ["bitmap"] for c in "abcfghdt"})
    assert [c for c, _ in order] == ["a", "b", "c", "t", "d", "f", "g", "h"]
    raw = fi.write_container({"d": {"bitmap": b"\x01"}, "t": {"bitmap": b"\x02"}})
    assert [m.column for m in fi.read_header(raw)] == ["t", "d"]


def test_blocks_split_at_the_block_size_and_version_1_reads():
    keys = list(range(40))
    raw, _ = bmi.bitmap_bytes(keys, BIG, {"index-block-size": "100b"})
    (blocks,) = struct.unpack_from(">i", raw, 10)
    assert blocks == 7                    # 4 + 6 * 16 bytes per block
    assert bmi.BitmapIndex(raw, BIG).keys == set(keys)
    v1, _ = bmi.bitmap_bytes([7, None, 7, 9], BIG, {"version": "1"})
    index = bmi.BitmapIndex(v1, BIG)
    assert v1[0] == 1 and index.keys == {7, 9} and index.has_nulls
    with pytest.raises(IcefloeError, match="bitmap index version 3"):
        bmi.BitmapIndex(b"\x03" + v1[1:], BIG)


def test_bitmap_indexes_skip_files(paimon_catalog):
    t = paimon_catalog.create_table("db.bm", "id bigint, name string, d date", properties=PROPS)
    t.append(pa.table({"id": pa.array([1, 9, None], pa.int64()), "name": ["a", "z", "a"],
                       "d": pa.array([1, 2, 3], pa.int32()).cast(pa.date32())}))
    t.append(pa.table({"id": pa.array([2, 8, 8], pa.int64()), "name": ["b", "y", None],
                       "d": pa.array([1, 2, 3], pa.int32()).cast(pa.date32())}))
    files = t.plan_files()
    assert all(f.embedded_index for f in files)
    metas = fi.read_header(files[0].embedded_index)
    assert {(m.column, m.index_type) for m in metas} == {("id", "bitmap"), ("name", "bitmap")}
    assert len(t.plan()) == 2
    assert len(t.plan(where="id = 2")) == 1
    assert len(t.plan(where="name = 'b'")) == 1
    assert len(t.plan(where="name in ('a', 'b')")) == 2
    assert t.plan(where="name = 'q'") == [] and t.plan(where="id in (3, 4)") == []
    assert len(t.plan(where="id is null")) == 1
    assert len(t.plan(where="name is null")) == 1
    assert len(t.plan(where="id is not null")) == 2
    assert len(t.plan(where="id = 2 or name = 'z'")) == 2
    assert len(t.plan(where="d = date '1970-01-02'")) == 2       # no index on d
    assert t.to_arrow(where="id is null").column("name").to_pylist() == ["a"]
    t.update_schema().set_option("file-index.read.enabled", "false").commit()
    assert len(t.refresh().plan(where="id = 2")) == 2


def test_rewrite_file_index_adds_bitmaps_and_file_indexes_lists_them(paimon_catalog):
    t = paimon_catalog.create_table("db.bm_rw", "id int, name string")
    t.append(pa.table({"id": pa.array([1, 9], pa.int32()), "name": ["a", None]}))
    t.append(pa.table({"id": pa.array([2, 8], pa.int32()), "name": ["b", "y"]}))
    assert len(t.plan(where="id = 2")) == 2
    t.update_schema().set_option("file-index.bitmap.columns", "id,name").commit()
    assert t.refresh().rewrite_file_index() == (1, 2)
    t.refresh()
    assert len(t.plan(where="id = 2")) == 1 and len(t.plan(where="name is null")) == 1
    rows = t.metadata_table("file_indexes").to_pylist()
    assert sorted((r["column_name"], r["index_type"]) for r in rows) == \
        [("id", "bitmap"), ("id", "bitmap"), ("name", "bitmap"), ("name", "bitmap")]
    assert sorted(t.to_arrow(where="id in (2, 3)").column("id").to_pylist()) == [2]


@pytest.mark.parametrize("options, message", [
    ({"file-index.bitmap.columns": "price"}, "bitmap index cannot hold"),
    ({"file-index.bitmap.columns": "id", "file-index.bitmap.id.version": "3"}, "must be 1 or 2"),
    ({"file-index.bitmap.columns": "id", "file-index.bitmap.id.index-block-size": "big"}, "memory size"),
    ({"file-index.bitmap.columns": "id", "file-index.bitmap.id.fpp": "0.1"}, "not an option of the bitmap"),
])
def test_bitmap_options_a_writer_cannot_honour_are_refused(paimon_catalog, options, message):
    with pytest.raises(IcefloeError, match=message):
        paimon_catalog.create_table("db.bad_bitmap", "id bigint, price decimal(10,2)", properties=options)


# ---------------------------------------------------------------- Paimon's Java engine (make test-long)
@pytest.mark.long
def test_bitmap_indexes_both_ways(paimon_bundle):
    """The same bytes from both engines for the same rows (repeated values, nulls, more values than
    a Java HashMap's first 16 bins), and each engine skips files by the other's."""
    from icefloe.catalog import Catalog

    ice = Catalog(paimon_bundle.warehouse, "paimon")
    t = ice.create_table("db.bm_ice", "id bigint, name string, n int", properties=PROPS)
    paimon_bundle.create_table("db.bm_java", [("id", "BIGINT"), ("name", "STRING"), ("n", "INT")], options=PROPS)
    first = [(i % 23 - 5, f"v{i % 17}é", i) for i in range(60)] + [(None, None, 60), (7, None, 61)]
    for rows in (first, [(100, "x", 1), (101, "y", 2)]):
        t.append(pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "name": [r[1] for r in rows],
                           "n": pa.array([r[2] for r in rows], pa.int32())}))
        paimon_bundle.write("db.bm_java", rows)
    jt = ice.load_table("db.bm_java")
    mine = sorted(f.embedded_index for f in t.plan_files())
    assert mine == sorted(f.embedded_index for f in jt.plan_files())
    assert paimon_bundle.indexed_read("db.bm_ice", "id", [101])["files"] == 1
    assert paimon_bundle.indexed_read("db.bm_ice", "name", ["v3é"])["files"] == 1
    assert paimon_bundle.indexed_read("db.bm_ice", "id", [55, 56]) == {"files": 0, "rows": []}
    assert len(jt.plan(where="name = 'y'")) == 1 and jt.plan(where="id = 55") == []
    assert len(jt.plan(where="id is null")) == 1


@pytest.mark.long
def test_bitmap_index_bytes_of_every_type_are_paimons(paimon_bundle):
    """Integers of each width, floats (-0.0 and 0.0 are two values, as in Java), booleans, dates and
    timestamps: each column's index, and the container, the same bytes as Paimon's."""
    from icefloe.catalog import Catalog

    spec = [("a", "TINYINT", "tinyint", pa.int8()), ("b", "SMALLINT", "smallint", pa.int16()),
            ("c", "INT", "int", pa.int32()), ("f", "FLOAT", "float", pa.float32()),
            ("g", "DOUBLE", "double", pa.float64()), ("h", "BOOLEAN", "boolean", pa.bool_()),
            ("d", "DATE", "date", pa.int32()), ("t", "TIMESTAMP(6)", "timestamp", pa.int64())]
    props = {"file-index.bitmap.columns": ",".join(s[0] for s in spec), "file-index.in-manifest-threshold": "64kb"}
    rows = [(i % 7 - 3, (i % 19 - 9) * 1000, (i % 29 - 14) * 70000,
             [1.5, -0.0, 0.0, -2.25, 3e10][i % 5] if i % 11 else None, [1.5, -0.0, 0.0, -2.25, 3e30, 1e-300][i % 6],
             [True, False, None][i % 3], i % 13 - 6, (i % 23) * 1_000_001 - 10 ** 12) for i in range(40)]
    ice = Catalog(paimon_bundle.warehouse, "paimon")
    t = ice.create_table("db.bm_types", ", ".join(f"{n} {it}" for n, _, it, _ in spec), properties=props)
    paimon_bundle.create_table("db.bm_types_java", [(n, jt) for n, jt, _, _ in spec], options=props)
    arrays = {}
    for k, (n, _, _, at) in enumerate(spec):
        arr = pa.array([r[k] for r in rows], at)
        arrays[n] = arr.cast(pa.date32()) if n == "d" else arr.cast(pa.timestamp("us")) if n == "t" else arr
    t.append(pa.table(arrays))
    paimon_bundle.write("db.bm_types_java", rows)
    mine = t.plan_files()[0].embedded_index
    theirs = ice.load_table("db.bm_types_java").plan_files()[0].embedded_index
    assert [m.column for m in fi.read_header(mine)] == [m.column for m in fi.read_header(theirs)]
    assert mine == theirs
    assert len(t.plan(where="c = 70000")) == 1 and t.plan(where="c = 70001") == []
