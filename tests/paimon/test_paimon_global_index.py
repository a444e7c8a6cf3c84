"""Paimon global indexes (``icefloe.paimon.global_index``, ``global_index_ops``) without Spark: the row
ranges a build cuts, the index files and their index manifest entries, reads that skip files by the
index and return what a full read returns (after appends and compaction too), drop and expiry, and
bad input refused with the table unchanged."""
import os
import re
import time
import zlib

import pyarrow as pa
import pytest

import icefloe
from icefloe.core.io import strip_scheme
from icefloe.core.types import StringType
from icefloe.errors import IcefloeError, SchemaError
from icefloe.paimon import file_index_bitmap as bmi
from icefloe.paimon import global_index as gi
from icefloe.paimon import global_index_btree as bt
from icefloe.paimon import maintenance
from icefloe.paimon.binary_row import BinaryRow
from icefloe.paimon.global_index_ops import create_global_index, drop_global_index
from icefloe.paimon.system_tables import table_indexes

TRACKED = {"row-tracking.enabled": "true", "global-index.row-count-per-shard": "4"}


@pytest.fixture
def cat(tmp_path):
    return icefloe.Catalog(str(tmp_path / "wh"), format="paimon")


def _batch(ids, vs):
    return pa.table({"id": pa.array(ids, pa.int32()), "v": pa.array(vs, pa.string())})


def _table(cat, name="default.gi", props=TRACKED):
    t = cat.create_table(name, "id int, v string", properties=props)
    # two files whose value ranges overlap: statistics skip neither for v = 'c'
    t.append(_batch([0, 1, 2, 3, 4], ["a", "c", "e", None, "c"]))      # row ids 0-4
    t.append(_batch([5, 6, 7, 8, 9], ["b", "d", "f", "d", None]))      # row ids 5-9
    return cat.load_table(name)


def _index_files(t):
    return sorted(gi.global_files(t.store, t.refresh().current_snapshot()), key=lambda f: f.range_start)


def _planned(t, where):
    return sorted(e.file.first_row_id for e in t.refresh().plan(where))


def test_a_build_cuts_row_ranges_per_shard_and_writes_paimons_bitmap_bytes(cat):
    t = _table(cat)
    before = t.current_snapshot().id
    snap = create_global_index(t, "v", "bitmap", {})
    assert snap.id == before + 1 and snap.commit_kind == "APPEND" and snap.total_record_count == 10
    assert t.refresh().store.live_entries(snap) == t.store.live_entries(t.snapshot(before))   # no data file changes
    files = _index_files(t)
    # shards of 4 ids: [0, 3] (file 1), [4, 7] (files 1 and 2, contiguous), [8, 9] (file 2)
    assert [(f.range_start, f.range_end, f.row_count) for f in files] == [(0, 3, 4), (4, 7, 4), (8, 9, 2)]
    field_id = next(f.id for f in t.table_schema.fields if f.name == "v")
    values = ["a", "c", "e", None, "c", "b", "d", "f", "d", None]
    for f in files:
        assert f.index_type == "bitmap" and f.field_id == field_id and f.partition == files[0].partition
        assert re.fullmatch(r"bitmap-global-index-[0-9a-f-]{36}\.index", f.file_name)
        assert f.path == f"{t.store.table_path}/index/{f.file_name}"
        raw = t.store.io.read_bytes(f.path)
        assert f.file_size == len(raw)
        keys = bmi.column_keys(pa.array(values[f.range_start:f.range_end + 1]), t.table_schema.fields[1].type)
        assert raw == bmi.bitmap_bytes(keys, t.table_schema.fields[1].type)[0]
    rows = table_indexes(t, t.current_snapshot()).to_pylist()
    assert sorted((r["index_type"], r["bucket"], r["row_range_start"], r["row_range_end"], r["index_field_id"],
                   r["index_field_name"], r["row_count"]) for r in rows) == \
        [("bitmap", 0, 0, 3, field_id, "v", 4), ("bitmap", 0, 4, 7, field_id, "v", 4),
         ("bitmap", 0, 8, 9, field_id, "v", 2)]


def test_the_bitmap_reader_gives_each_values_rows():
    t = pa.array(["a", "c", None, "c", None, "x"])
    raw = bmi.bitmap_bytes(bmi.column_keys(t, StringType()), StringType())[0]
    index = bmi.BitmapIndex(raw, StringType())
    assert list(index.rows_of("c", StringType())) == [1, 3]
    assert list(index.rows_of("x", StringType())) == [5]        # one row: kept in the entry, no bitmap
    assert list(index.rows_of("q", StringType())) == []
    assert list(index.null_rows()) == [2, 4]
    one_null = bmi.BitmapIndex(bmi.bitmap_bytes(["a".encode(), None], StringType())[0], StringType())
    assert list(one_null.null_rows()) == [1]
    v1 = bmi.BitmapIndex(bmi.bitmap_bytes(bmi.column_keys(t, StringType()), StringType(), {"version": "1"})[0],
                         StringType())
    assert v1.rows_of("c", StringType()) is None and v1.null_rows() is None     # no lengths: cannot tell


CASES = [  # (where, files planned without the index, files planned with it)
    ("v = 'c'", [0, 5], [0]),                   # file 2 holds no 'c': skipped by the index alone
    ("v = 'f'", [5], [5]),                      # statistics skip file 1 already
    ("v IN ('a', 'f')", [0, 5], [0, 5]),
    ("v IN ('a', 'e')", [0, 5], [0]),
    ("v = 'cc'", [0, 5], []),
    ("v IS NULL", [0, 5], [0, 5]),
    ("v = 'c' AND id >= 0", [0, 5], [0]),
    ("v = 'c' OR v = 'b'", [0, 5], [0, 5]),
    ("v = 'a' OR v = 'e'", [0, 5], [0]),
    ("v = 'c' OR id = 7", [0, 5], [0, 5]),      # id has no index: the OR cannot skip
    ("v <> 'c'", [0, 5], [0, 5]),               # not a condition the index answers
    ("v >= 'e' AND v < 'f'", [0, 5], [0]),      # ranges: file 2's values in [e, f) are none
    ("v > 'c' AND v < 'd'", [0, 5], []),
    ("v <= 'a' OR v > 'e'", [0, 5], [0, 5]),
]


@pytest.mark.parametrize("index_type, options", [("bitmap", {}), ("btree", {}),
                                                 ("btree", {"btree-index.records-per-range": "2"})])
def test_reads_skip_files_the_index_rules_out_and_return_the_full_reads_rows(cat, index_type, options):
    t = _table(cat)
    before = {where: _planned(t, where) for where, _b, _f in CASES}
    create_global_index(t, "v", index_type, options)
    everything = t.refresh().to_arrow().to_pylist()
    for where, without, files in CASES:
        assert before[where] == without, where
        assert _planned(t, where) == files, where
        got = sorted(t.to_arrow(where=where).column("id").to_pylist())
        assert got == sorted(r["id"] for r in everything if _matches(where, r)), where


def _matches(where, r):
    v, i = r["v"], r["id"]
    return {"v = 'c'": v == "c", "v = 'f'": v == "f", "v IN ('a', 'f')": v in ("a", "f"),
            "v IN ('a', 'e')": v in ("a", "e"), "v = 'cc'": False, "v IS NULL": v is None,
            "v = 'c' AND id >= 0": v == "c" and i >= 0, "v = 'c' OR v = 'b'": v in ("c", "b"),
            "v = 'a' OR v = 'e'": v in ("a", "e"), "v = 'c' OR id = 7": v == "c" or i == 7,
            "v <> 'c'": v is not None and v != "c", "v >= 'e' AND v < 'f'": v is not None and "e" <= v < "f",
            "v > 'c' AND v < 'd'": v is not None and "c" < v < "d",
            "v <= 'a' OR v > 'e'": v is not None and (v <= "a" or v > "e")}[where]


def test_later_appends_and_compaction_are_read_whole_and_the_answer_stays_right(cat):
    t = _table(cat)
    create_global_index(t, "v", "bitmap", {})
    t.append(_batch([10, 11], ["c", "q"]))                  # ids 10-11: outside every range
    assert _planned(t, "v = 'c'") == [0, 10]
    assert sorted(t.refresh().to_arrow(where="v = 'c'").column("id").to_pylist()) == [1, 4, 10]
    maintenance.compact(cat.load_table("default.gi"))       # rows move to a file without a first row id
    t = cat.load_table("default.gi")
    live = t.store.live_entries(t.current_snapshot())
    assert [e.file.first_row_id for e in live] == [None]
    assert len(_index_files(t)) == 3                         # the index stays; it makes no claim on moved rows
    assert sorted(t.to_arrow(where="v = 'c'").column("id").to_pylist()) == [1, 4, 10]
    assert sorted(t.to_arrow(where="v = 'd'").column("id").to_pylist()) == [6, 8]


def test_global_index_enabled_false_reads_without_it(cat):
    t = _table(cat)
    create_global_index(t, "v", "bitmap", {})
    assert _planned(t, "v = 'c'") == [0]
    t.update_properties({"global-index.enabled": "false"})
    assert _planned(t, "v = 'c'") == [0, 5]


def test_partitions_are_indexed_one_by_one_and_a_partition_filter_narrows_the_build(cat):
    t = cat.create_table("default.gp", "p int, id int, v string", partitioned_by=["p"], properties=TRACKED)
    t.append(pa.table({"p": pa.array([1, 1, 2], pa.int32()), "id": pa.array([0, 1, 2], pa.int32()),
                       "v": ["a", "b", "a"]}))
    t = cat.load_table("default.gp")
    create_global_index(t, "v", "bitmap", {}, accept=lambda values: values == (1,))
    files = _index_files(t)
    assert [(t.store.partition_values(BinaryRow.from_bytes(f.partition)), f.row_count) for f in files] == [((1,), 2)]
    create_global_index(t, "v", "bitmap", {}, accept=lambda values: values == (2,))
    assert len(_index_files(t)) == 2
    assert sorted(t.refresh().to_arrow(where="v = 'a'").column("id").to_pylist()) == [0, 2]


def test_expiry_keeps_the_index_files_the_kept_snapshots_use(cat):
    t = _table(cat)
    create_global_index(t, "v", "bitmap", {})
    t.append(_batch([10], ["c"]))
    report = t.expire_snapshots(older_than=int(time.time() * 1000) + 60_000, retain_last=1)
    assert report.expired_snapshot_ids == [1, 2, 3]
    assert all(os.path.exists(strip_scheme(f.path)) for f in _index_files(t))
    assert _planned(t, "v = 'c'") == [0, 10]
    assert sorted(t.refresh().to_arrow(where="v = 'c'").column("id").to_pylist()) == [1, 4, 10]


def test_drop_deletes_the_entries_and_expiry_the_files(cat):
    t = _table(cat)
    create_global_index(t, "v", "bitmap", {})
    paths = [strip_scheme(f.path) for f in _index_files(t)]
    snap = drop_global_index(t, "v", "BITMAP")
    assert snap.commit_kind == "APPEND" and _index_files(t) == []
    assert _planned(t, "v = 'c'") == [0, 5]
    assert all(os.path.exists(p) for p in paths)                      # the snapshot before still uses them
    assert drop_global_index(t, "v", "bitmap") is None                 # nothing to drop: no snapshot
    t.expire_snapshots(older_than=int(time.time() * 1000) + 60_000, retain_last=1)
    assert not any(os.path.exists(p) for p in paths)
    assert _planned(t, "v = 'c'") == [0, 5]
    create_global_index(t, "v", "bitmap", {})                          # built again after the drop
    assert _planned(t, "v = 'c'") == [0]


def _unchanged(t, run, error, match):
    before = t.refresh().current_snapshot().id
    index_dir = os.path.join(strip_scheme(t.store.table_path), "index")
    files = sorted(os.listdir(index_dir)) if os.path.isdir(index_dir) else []
    with pytest.raises(error, match=match):
        run()
    assert t.refresh().current_snapshot().id == before
    assert (sorted(os.listdir(index_dir)) if os.path.isdir(index_dir) else []) == files


@pytest.mark.parametrize("args, match", [
    (("nope", "bitmap", {}), "column 'nope' does not exist"),
    (("v", "btree", {"btree-index.compression": "zstd"}), "uncompressed"),
    (("v", "btree", {"version": "2"}), "'version' is not an option of the btree index"),
    (("v", "lumina-vector-ann", {}), "native Lumina"),
    (("v", "hash", {}), "not a global index type of Paimon 1.4"),
    (("v", "bitmap", {"index-block-size": "1kb", "fpp": "0.1"}), "'fpp' is not an option of the bitmap index"),
    (("v", "bitmap", {"version": "3"}), "must be 1 or 2"),
])
def test_bad_input_is_refused_and_the_table_unchanged(cat, args, match):
    t = _table(cat)
    _unchanged(t, lambda: create_global_index(t, *args), SchemaError, match)


def test_a_table_without_row_tracking_or_a_decimal_column_is_refused(cat):
    t = _table(cat, "default.plain", {})
    _unchanged(t, lambda: create_global_index(t, "v", "bitmap", {}), SchemaError, "row-tracking.enabled")
    d = cat.create_table("default.dec", "id int, d decimal(10, 2)", properties=TRACKED)
    d.append(pa.table({"id": pa.array([1], pa.int32()), "d": pa.array([1], pa.decimal128(10, 2))}))
    d = cat.load_table("default.dec")
    _unchanged(d, lambda: create_global_index(d, "d", "bitmap", {}), SchemaError, "cannot hold")


def _ids(t, where):
    return sorted(t.refresh().to_arrow(where=where).column("id").to_pylist())


@pytest.mark.parametrize("index_type, options", [("bitmap", {}), ("btree", {"btree-index.records-per-range": "2"})])
def test_a_build_again_indexes_only_the_rows_not_yet_indexed(cat, index_type, options):
    t = _table(cat)
    create_global_index(t, "v", index_type, options)
    old = _index_files(t)
    before = t.current_snapshot().id
    assert create_global_index(t, "v", index_type, options) is None        # every row indexed: no snapshot
    assert t.refresh().current_snapshot().id == before
    t.append(_batch([10, 11, 12], ["c", "z", None]))                       # row ids 10-12
    snap = create_global_index(t, "v", index_type, options)
    assert snap is not None and snap.id == before + 2
    files = _index_files(t)
    assert set(old) <= set(files)                                           # the old index files stay
    new = [f for f in files if f not in old]
    # shards of 4 ids cut a bitmap build: [10, 11] (the rest of shard [8, 11]) and [12, 12]; btree: one range
    assert sorted({(f.range_start, f.range_end) for f in new}) == \
        ([(10, 11), (12, 12)] if index_type == "bitmap" else [(10, 12)])
    assert sum(f.row_count for f in new) == 3
    assert _planned(t, "v = 'z'") == [10] and _planned(t, "v = 'q'") == []   # the new rows' file skipped by it too
    assert _ids(t, "v = 'c'") == [1, 4, 10]
    assert _ids(t, "v = 'z'") == [11]
    assert _ids(t, "v IS NULL") == [3, 9, 12]
    assert _ids(t, "v IN ('d', 'z')") == [6, 8, 11]
    other = "btree" if index_type == "bitmap" else "bitmap"                 # another type over the same rows
    _unchanged(t, lambda: create_global_index(t, "v", other, {}), IcefloeError, "drop it first")
    create_global_index(t, "id", "bitmap", {})                  # another column: its own index
    assert _planned(t, "id = 7") == [5]


def test_a_bitmap_build_given_sorted_records_per_range_writes_one_file_per_that_many_row_ids(cat):
    t = _table(cat)
    create_global_index(t, "v", "bitmap", {"sorted-index.records-per-range": "3"})   # 3 * 1.2: 3 rows a file
    files = _index_files(t)
    # the run of both files, [0, 9], is not cut into shards of 4 ids but into files of 3 row ids
    assert [(f.range_start, f.range_end, f.row_count) for f in files] == [(0, 2, 3), (3, 5, 3), (6, 8, 3), (9, 9, 1)]
    assert all(re.fullmatch(r"bitmap-global-index-[0-9a-f-]{36}\.index", f.file_name) for f in files)
    v = t.table_schema.fields[1]
    values = ["a", "c", "e", None, "c", "b", "d", "f", "d", None]
    for f in files:               # Paimon's bitmap bytes of the file's rows, as without the option
        want = bmi.bitmap_bytes(bmi.column_keys(pa.array(values[f.range_start:f.range_end + 1]), v.type), v.type)[0]
        assert t.store.io.read_bytes(f.path) == want
    assert _planned(t, "v = 'c'") == [0] and _planned(t, "v IS NULL") == [0, 5] and _planned(t, "v = 'f'") == [5]
    assert _ids(t, "v = 'c'") == [1, 4] and _ids(t, "v > 'd'") == [2, 7] and _ids(t, "v IS NULL") == [3, 9]
    t.append(_batch([10, 11], ["c", "q"]))
    create_global_index(t, "v", "bitmap", {"sorted-index.records-per-range": "3"})   # the new rows only
    assert [(f.range_start, f.range_end, f.row_count) for f in _index_files(t)][4:] == [(10, 11, 2)]
    _unchanged(t, lambda: create_global_index(t, "id", "bitmap", {"sorted-index.records-per-range": "0"}),
               SchemaError, "must be a positive count")
    # btree takes it as its records-per-range, before btree-index.records-per-range
    create_global_index(t, "id", "btree", {"sorted-index.records-per-range": "5", "btree-index.records-per-range": "1"})
    ranges = sorted((f.range_start, f.range_end, f.row_count) for f in _index_files(t) if f.index_type == "btree")
    assert ranges == [(0, 11, 6), (0, 11, 6)]


def test_a_btree_index_is_one_row_range_per_run_of_files_cut_by_records_per_range(cat):
    t = _table(cat)
    create_global_index(t, "v", "btree", {"btree-index.records-per-range": "3"})   # 3 * 1.2: 3 rows a file
    files = _index_files(t)
    assert [(f.range_start, f.range_end, f.row_count) for f in files] == [(0, 9, 3), (0, 9, 3), (0, 9, 3), (0, 9, 1)]
    assert all(re.fullmatch(r"btree-global-index-[0-9a-f-]{36}\.index", f.file_name) for f in files)
    # rows in value order, nulls first: (null 3, null 9, a 0), (b 5, c 1, c 4), (d 6, d 8, e 2), (f 7)
    metas = sorted(f.index_meta for f in files)
    def meta(first, last, nulls):
        return len(first).to_bytes(4, "little") + first + len(last).to_bytes(4, "little") + last + bytes([nulls])
    assert metas == sorted([meta(b"a", b"a", 1), meta(b"b", b"c", 0), meta(b"d", b"e", 0), meta(b"f", b"f", 0)])
    rows = sorted(table_indexes(t, t.current_snapshot()).to_pylist(), key=lambda r: r["row_count"])
    assert [(r["index_type"], r["row_range_start"], r["row_range_end"], r["index_field_name"]) for r in rows] == \
        [("btree", 0, 9, "v")] * 4
    assert _planned(t, "v = 'c'") == [0] and _planned(t, "v IS NULL") == [0, 5] and _planned(t, "v = 'f'") == [5]


def test_range_lookups_walk_the_btree_blocks_and_the_bitmap_entries():
    keys = [f"k{i:03d}".encode() for i in range(300)] + [None]
    rows = [(k, i) for i, k in enumerate(keys)]
    index = bt.BTreeIndex(bt.write(rows, StringType(), block_size=64).raw, StringType(), None)
    assert len(index.index) > 10                                              # many small blocks
    assert list(index.rows_in(b"k010", True, b"k013", False)) == [10, 11, 12]
    assert list(index.rows_in(b"k298", False, None, False)) == [299]
    assert list(index.rows_in(None, False, b"k001", True)) == [0, 1]
    assert list(index.rows_in(b"zz", True, None, False)) == []
    bitmap = bmi.BitmapIndex(bmi.bitmap_bytes(keys, StringType())[0], StringType())
    assert list(bitmap.rows_in(b"k010", True, b"k013", False)) == [10, 11, 12]
    assert list(bitmap.rows_in(None, False, b"k001", True)) == [0, 1]


def test_the_btree_file_layout():
    # records (key, positions): a -> [0], b -> [2, 5], and row 1 null; one data block, aligned
    raw = bt.write([(b"a", 0), (None, 1), (b"b", 5), (b"b", 2)], StringType()).raw
    rec_a = b"\x01a" + b"\x02\x01\x00"          # key length, key, value length, value (count 1, row 0)
    rec_b = b"\x01b" + b"\x03\x02\x02\x05"
    block = rec_a + rec_b + (0).to_bytes(4, "little") + (5).to_bytes(4, "little") + (2).to_bytes(4, "little") + b"\x01"
    assert raw.startswith(block + b"\x00" + zlib.crc32(block + b"\x00").to_bytes(4, "little"))
    footer = raw[-52:]
    assert footer[:20] == bytes(20)                                       # no bloom filter
    assert footer[-8:] == (1).to_bytes(4, "little") + (0x50425449).to_bytes(4, "little")
    index = bt.BTreeIndex(raw, StringType(), None)
    assert list(index.rows_of("b", StringType())) == [2, 5] and list(index.null_rows()) == [1]
    assert list(index.rows_of("zz", StringType())) == [] and list(index.rows_of("ab", StringType())) == []
    same = bt.write([(b"a", 0), (b"b", 1)], StringType()).raw                 # records of one size: aligned
    assert same[10:14] == (5).to_bytes(4, "little") and same[14] == 0


def test_a_branch_merge_gives_fresh_row_ids_that_the_index_does_not_cover(cat):
    t = cat.create_table("default.gb", "id int, v string", properties=TRACKED)
    t.append(_batch([0, 1, 2, 3, 4], ["a", "b", "c", "d", "e"]))               # row ids 0-4
    t = cat.load_table("default.gb")
    t.create_tag("t1", 1)
    t.create_branch("b", tag="t1")
    t.append(_batch([5, 6, 7, 8, 9], ["x", "x", "x", "x", "x"]))               # main: row ids 5-9
    t.append(_batch([15, 16, 17, 18, 19], ["y", "x", "y", "x", "y"]), branch="b")   # branch: row ids 5-9 too
    t = cat.load_table("default.gb")
    create_global_index(t, "v", "bitmap", {})                                   # from main's rows 5-9: all 'x'
    t.merge_branch("b")
    t = cat.load_table("default.gb")
    assert sorted(t.to_arrow(where="v = 'y'").column("id").to_pylist()) == [15, 17, 19]
    assert sorted(t.to_arrow(where="v = 'a'").column("id").to_pylist()) == [0]
    # the branch's file: merged with fresh row ids 10-14 (it had 5-9, main's too), which no index covers
    assert _planned(t, "v = 'y'") == [10]


def test_a_table_without_rows_gets_no_snapshot(cat):
    t = cat.create_table("default.empty", "id int, v string", properties=TRACKED)
    assert create_global_index(t, "v", "bitmap", {}) is None and t.refresh().current_snapshot() is None
