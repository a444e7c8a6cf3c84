"""Paimon row tracking (``row-tracking.enabled``) held to Apache Paimon 1.4's Java engine
(``paimon-bundle``, ``tools/paimon_java.py``): Paimon reads the ``_ROW_ID`` and ``_SEQUENCE_NUMBER``
icefloe gave (at commit, through compaction and UPDATE) from its ``$row_tracking`` system table, and
icefloe reads the ids Paimon gave; each engine's next commit goes on from the other's ``nextRowId``."""
from __future__ import annotations

import pyarrow as pa
import pytest

from icefloe.catalog import Catalog

pytestmark = pytest.mark.long
TRACKED = {"row-tracking.enabled": "true"}


@pytest.fixture(scope="module")
def ice(paimon_bundle, paimon_spark):
    return Catalog(paimon_bundle.warehouse, "paimon", paimon_spark)


def _arrow(rows):
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "v": [r[1] for r in rows]})


def _ice_tracked(t) -> list:
    df = t.refresh().to_spark_with_metadata(["_ROW_ID", "_SEQUENCE_NUMBER"])
    return sorted(tuple(r) for r in df.collect())


def _java_tracked(pj, table: str) -> list:
    return sorted(pj.rows(f"db.{table}$row_tracking", columns=("id", "v", "_ROW_ID", "_SEQUENCE_NUMBER")))


def test_paimon_reads_the_row_ids_icefloe_gives(paimon_bundle, ice):
    pj = paimon_bundle
    t = ice.create_table("db.rt_ice", "id bigint, v string", properties=TRACKED)
    t.append(_arrow([(1, "a"), (2, "b")]))
    t.append(_arrow([(3, "c")]))
    assert _java_tracked(pj, "rt_ice") == _ice_tracked(t) == [(1, "a", 0, 1), (2, "b", 1, 1), (3, "c", 2, 2)]
    t.refresh().rewrite_data_files()                          # compaction: the ids go into the new file
    live = t.refresh().store.live_entries(t.current_snapshot())
    assert [(e.file.first_row_id, e.file.write_cols) for e in live] == [(None, ("id", "v", "_ROW_ID", "_SEQUENCE_NUMBER"))]
    t.refresh().update({"v": "'B'"}, "id = 2")                # an update keeps the id, takes a new sequence number
    want = [(1, "a", 0, 1), (2, "B", 1, 4), (3, "c", 2, 2)]
    assert _ice_tracked(t) == want
    assert _java_tracked(pj, "rt_ice") == want
    pj.write("db.rt_ice", [(4, "d")])                         # Paimon goes on from icefloe's nextRowId
    t.append(_arrow([(5, "e")]))
    want += [(4, "d", 3, 5), (5, "e", 4, 6)]
    assert _java_tracked(pj, "rt_ice") == _ice_tracked(t) == sorted(want)


def test_icefloe_reads_the_row_ids_paimon_gives(paimon_bundle, ice):
    pj = paimon_bundle
    pj.create_table("db.rt_java", [("id", "BIGINT"), ("v", "STRING")], options=TRACKED)
    pj.write("db.rt_java", [(1, "a"), (2, "b")])
    pj.write("db.rt_java", [(3, "c")])
    t = ice.load_table("db.rt_java")
    assert _ice_tracked(t) == _java_tracked(pj, "rt_java") == [(1, "a", 0, 1), (2, "b", 1, 1), (3, "c", 2, 2)]
    t.append(_arrow([(4, "d")]))
    t.refresh().delete("id = 1")
    want = [(2, "b", 1, 1), (3, "c", 2, 2), (4, "d", 3, 3)]
    assert _ice_tracked(t) == _java_tracked(pj, "rt_java") == want
