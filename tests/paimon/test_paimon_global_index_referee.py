"""Paimon global indexes held to Apache Paimon 1.4's Java engine (``paimon-bundle``,
``tools/paimon_java.py``): Paimon's global index scanner finds rows through the bitmap index files and
index manifest entries icefloe writes, and reads the table; icefloe reads the index Paimon's own index
writer builds (the same bytes icefloe writes for the same rows) and skips files by it."""
from __future__ import annotations

import pyarrow as pa
import pytest

from icefloe.catalog import Catalog
from icefloe.paimon import file_index_bitmap as bmi
from icefloe.paimon import global_index as gi
from icefloe.paimon import global_index_btree as bt
from icefloe.paimon.global_index_ops import create_global_index, drop_global_index

pytestmark = pytest.mark.long
TRACKED = {"row-tracking.enabled": "true", "global-index.row-count-per-shard": "4"}
FIRST = [(0, "a"), (1, "c"), (2, "e"), (3, None), (4, "c")]
SECOND = [(5, "b"), (6, "d"), (7, "f"), (8, "d"), (9, None)]


@pytest.fixture(scope="module")
def ice(paimon_bundle):
    return Catalog(paimon_bundle.warehouse, "paimon")


def _arrow(rows):
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "v": pa.array([r[1] for r in rows], pa.string())})


@pytest.mark.parametrize("index_type", ["bitmap", "btree"])
def test_paimon_finds_rows_through_the_index_icefloe_builds(paimon_bundle, ice, index_type):
    pj = paimon_bundle
    name = f"db.gi_ice_{index_type}"
    t = ice.create_table(name, "id bigint, v string", properties=TRACKED)
    t.append(_arrow(FIRST))
    t.append(_arrow(SECOND))
    t = ice.load_table(name)
    create_global_index(t, "v", index_type, {"btree-index.records-per-range": "3"} if index_type == "btree" else {})
    ranges = {(f.range_start, f.range_end) for f in gi.global_files(t.store, t.refresh().current_snapshot())}
    assert ranges == ({(0, 3), (4, 7), (8, 9)} if index_type == "bitmap" else {(0, 9)})
    assert pj.global_index_rows(name, "v", ["c"]) == [1, 4]
    assert pj.global_index_rows(name, "v", ["d", "zz"]) == [6, 8]
    assert pj.global_index_rows(name, "v", ["zz"]) == []
    assert sorted(pj.rows(name), key=lambda r: r[0]) == FIRST + SECOND
    pj.write(name, [(10, "c")])                                # Paimon writes on after icefloe's index commit
    assert sorted(t.refresh().to_arrow(where="v = 'c'").column("id").to_pylist()) == [1, 4, 10]
    drop_global_index(t, "v", index_type)
    assert pj.global_index_rows(name, "v", ["c"]) is None


def test_paimon_finds_rows_through_sorted_bitmap_files_and_an_incremental_build(paimon_bundle, ice):
    pj = paimon_bundle
    name = "db.gi_ice_sorted"
    t = ice.create_table(name, "id bigint, v string", properties=TRACKED)
    t.append(_arrow(FIRST))
    t.append(_arrow(SECOND))
    t = ice.load_table(name)
    create_global_index(t, "v", "bitmap", {"sorted-index.records-per-range": "3"})   # 4 files of 3 ids
    files = gi.global_files(t.store, t.refresh().current_snapshot())
    assert sorted((f.range_start, f.range_end, f.row_count) for f in files) == \
        [(0, 2, 3), (3, 5, 3), (6, 8, 3), (9, 9, 1)]
    assert pj.global_index_rows(name, "v", ["c"]) == [1, 4]
    assert pj.global_index_rows(name, "v", ["d", "zz"]) == [6, 8]
    assert pj.global_index_rows(name, "v", ["f", "a"]) == [0, 7]
    pj.write(name, [(10, "c"), (11, "q")])                     # row ids 10-11
    create_global_index(t, "v", "bitmap", {})                  # only [10, 11] built, by shard of 4 ids
    new = [f for f in gi.global_files(t.store, t.refresh().current_snapshot()) if f not in files]
    assert [(f.range_start, f.range_end, f.row_count) for f in new] == [(10, 11, 2)]
    assert pj.global_index_rows(name, "v", ["c"]) == [1, 4, 10]
    assert pj.global_index_rows(name, "v", ["q"]) == [11]
    assert sorted(pj.rows(name), key=lambda r: r[0]) == FIRST + SECOND + [(10, "c"), (11, "q")]


@pytest.mark.parametrize("index_type", ["bitmap", "btree"])
def test_icefloe_reads_the_index_paimon_builds(paimon_bundle, ice, index_type):
    pj = paimon_bundle
    name = f"db.gi_java_{index_type}"
    pj.create_table(name, [("id", "BIGINT"), ("v", "STRING")], options={"row-tracking.enabled": "true"})
    pj.write(name, FIRST)
    pj.write(name, SECOND)
    names = pj.build_global_index(name, "v", index_type)
    t = ice.load_table(name)
    [f] = gi.global_files(t.store, t.current_snapshot())
    assert [f.file_name] == names and (f.index_type, f.range_start, f.range_end, f.row_count) == (index_type, 0, 9, 10)
    v = t.table_schema.fields[1]
    keys = bmi.column_keys(pa.array([r[1] for r in FIRST + SECOND]), v.type)
    if index_type == "bitmap":
        want = bmi.bitmap_bytes(keys, v.type)[0]
    else:
        [want_file] = bt.files(keys, v.type, {})
        assert f.index_meta == want_file.meta
        want = want_file.raw
    assert t.store.io.read_bytes(f.path) == want                   # Paimon's bytes are icefloe's
    assert len(t.plan("v = 'c'")) == 1 and len(t.plan()) == 2
    assert sorted(t.to_arrow(where="v = 'c'").column("id").to_pylist()) == [1, 4]
    assert sorted(t.to_arrow(where="v IS NULL").column("id").to_pylist()) == [3, 9]
