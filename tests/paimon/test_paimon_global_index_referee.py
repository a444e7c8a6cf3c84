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


def test_paimon_finds_rows_through_the_index_icefloe_builds(paimon_bundle, ice):
    pj = paimon_bundle
    t = ice.create_table("db.gi_ice", "id bigint, v string", properties=TRACKED)
    t.append(_arrow(FIRST))
    t.append(_arrow(SECOND))
    t = ice.load_table("db.gi_ice")
    create_global_index(t, "v", "bitmap", {})
    assert [(f.range_start, f.range_end) for f in sorted(gi.global_files(t.store, t.refresh().current_snapshot()),
                                                         key=lambda f: f.range_start)] == [(0, 3), (4, 7), (8, 9)]
    assert pj.global_index_rows("db.gi_ice", "v", ["c"]) == [1, 4]
    assert pj.global_index_rows("db.gi_ice", "v", ["d", "zz"]) == [6, 8]
    assert pj.global_index_rows("db.gi_ice", "v", ["zz"]) == []
    assert sorted(pj.rows("db.gi_ice"), key=lambda r: r[0]) == FIRST + SECOND
    pj.write("db.gi_ice", [(10, "c")])                         # Paimon writes on after icefloe's index commit
    assert sorted(t.refresh().to_arrow(where="v = 'c'").column("id").to_pylist()) == [1, 4, 10]
    drop_global_index(t, "v", "bitmap")
    assert pj.global_index_rows("db.gi_ice", "v", ["c"]) is None


def test_icefloe_reads_the_index_paimon_builds(paimon_bundle, ice):
    pj = paimon_bundle
    pj.create_table("db.gi_java", [("id", "BIGINT"), ("v", "STRING")], options={"row-tracking.enabled": "true"})
    pj.write("db.gi_java", FIRST)
    pj.write("db.gi_java", SECOND)
    names = pj.build_global_index("db.gi_java", "v")
    t = ice.load_table("db.gi_java")
    [f] = gi.global_files(t.store, t.current_snapshot())
    assert [f.file_name] == names and (f.index_type, f.range_start, f.range_end, f.row_count) == ("bitmap", 0, 9, 10)
    v = t.table_schema.fields[1]
    keys = bmi.column_keys(pa.array([r[1] for r in FIRST + SECOND]), v.type)
    assert open(f.path, "rb").read() == bmi.bitmap_bytes(keys, v.type)[0]     # Paimon's bytes are icefloe's
    assert len(t.plan("v = 'c'")) == 1 and len(t.plan()) == 2
    assert sorted(t.to_arrow(where="v = 'c'").column("id").to_pylist()) == [1, 4]
    assert sorted(t.to_arrow(where="v IS NULL").column("id").to_pylist()) == [3, 9]
