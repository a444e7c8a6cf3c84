"""Data Evolution tables (``data-evolution.enabled``) held to Apache Paimon 1.4's Java engine
(``paimon-bundle``, ``tools/paimon_java.py``): icefloe reads the files of some columns Paimon writes for a
row-id range (as Paimon's Spark MERGE INTO writes them), merged column by column with the newest file
winning; Paimon reads what icefloe's UPDATE and MERGE INTO write, row ids and sequence numbers included
(its ``$row_tracking`` system table), and goes on from icefloe's next row id."""
from __future__ import annotations

import pyarrow as pa
import pytest

from icefloe.catalog import Catalog
from icefloe.paimon.system_tables import files

pytestmark = pytest.mark.long
DE = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}


@pytest.fixture(scope="module")
def ice(paimon_bundle, paimon_spark):
    return Catalog(paimon_bundle.warehouse, "paimon", paimon_spark)


def _ice_tracked(t) -> list:
    df = t.refresh().to_spark_with_metadata(["_ROW_ID", "_SEQUENCE_NUMBER"])
    return sorted(tuple(r) for r in df.collect())


def _java_tracked(pj, table: str) -> list:
    return sorted(pj.rows(f"db.{table}$row_tracking", columns=("id", "b", "c", "_ROW_ID", "_SEQUENCE_NUMBER")))


def _files(t) -> list:
    t.refresh()
    return sorted((e.file.first_row_id, e.file.max_sequence_number, e.file.write_cols)
                  for e in t.store.live_entries(t.current_snapshot()))


def test_icefloe_reads_the_column_files_paimon_writes(paimon_bundle, ice):
    pj = paimon_bundle
    pj.create_table("db.de_java", [("id", "INT"), ("b", "INT"), ("c", "STRING")], options=DE)
    pj.write("db.de_java", [(1, 1, "a"), (2, 2, "b"), (3, 3, "c")])       # row ids 0..2
    pj.write("db.de_java", [(4, 4, "d")])                                  # row id 3
    pj.write_columns("db.de_java", ("b",), 0, [(10,), (None,), (30,)])
    pj.write_columns("db.de_java", ("c", "b"), 0, [("x", 11), ("y", 12), ("z", 13)])
    pj.write_columns("db.de_java", ("c",), 0, [("X",), ("Y",), ("Z",)])
    t = ice.load_table("db.de_java")
    assert _files(t) == [(0, 1, None), (0, 3, ("b",)), (0, 4, ("c", "b")), (0, 5, ("c",)), (3, 2, None)]
    want = [(1, 11, "X", 0, 5), (2, 12, "Y", 1, 5), (3, 13, "Z", 2, 5), (4, 4, "d", 3, 2)]
    assert _java_tracked(pj, "de_java") == want
    assert _ice_tracked(t) == want
    assert sorted(tuple(r.values()) for r in t.to_arrow().to_pylist()) == [w[:3] for w in want]
    stats = [(r["min_value_stats"], r["max_value_stats"]) for r in files(t, t.current_snapshot()).to_pylist()]
    assert ("{b=10}", "{b=30}") in stats and ("{c=x, b=11}", "{c=z, b=13}") in stats   # of its columns only
    assert sorted(tuple(r) for r in t.to_spark(where="b = 12").collect()) == [(2, 12, "Y")]


def test_paimon_reads_icefloes_update_and_merge(paimon_bundle, ice, paimon_spark):
    pj = paimon_bundle
    t = ice.create_table("db.de_ice", "id int, b int, c string", properties=DE)
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int32()), "b": pa.array([1, 2, 3], pa.int32()),
                       "c": ["a", "b", "c"]}))
    t.append(pa.table({"id": pa.array([4], pa.int32()), "b": pa.array([4], pa.int32()), "c": ["d"]}))
    assert t.refresh().update({"b": "b * 10"}, "id >= 2").updated == 3      # both ranges
    src = paimon_spark.createDataFrame([(1, "m1"), (5, "n5")], "id int, c string")
    r = (t.refresh().merge(src, "t.id = s.id").when_matched_update({"c": "s.c"})
         .when_not_matched_insert({"id": "s.id", "b": "0", "c": "s.c"}).execute())
    assert (r.updated, r.inserted) == (1, 1)
    assert _files(t) == [(0, 1, None), (0, 3, ("b",)), (0, 4, ("c",)), (3, 2, None), (3, 3, ("b",)), (4, 4, None)]
    want = [(1, 1, "m1", 0, 4), (2, 20, "b", 1, 4), (3, 30, "c", 2, 4), (4, 40, "d", 3, 3), (5, 0, "n5", 4, 4)]
    assert _java_tracked(pj, "de_ice") == want
    assert _ice_tracked(t) == want
    pj.write("db.de_ice", [(6, 6, "f")])                      # Paimon goes on from icefloe's nextRowId
    pj.write_columns("db.de_ice", ("c",), 4, [("N5",)])       # and updates a range icefloe wrote
    want = want[:4] + [(5, 0, "N5", 4, 6), (6, 6, "f", 5, 5)]
    assert _java_tracked(pj, "de_ice") == _ice_tracked(t) == want


def test_paimon_reads_the_row_ids_icefloes_reassign_row_id_gives(paimon_bundle, ice):
    """``CALL sys.reassign_row_id``: Paimon reads the renumbered row ids (its ``$row_tracking``), the data the
    same, and goes on from the new next row id."""
    pj = paimon_bundle
    t = ice.create_table("db.de_re", "id int, pt string", partitioned_by=["pt"], properties=DE)
    for i, pt in [(0, "a"), (1, "b"), (2, "a"), (3, "b"), (4, "a")]:
        t.append(pa.table({"id": pa.array([i], pa.int32()), "pt": [pt]}))
    out = ice.sql("CALL sys.reassign_row_id(table => 'db.de_re')").collect()[0][0]
    assert out.startswith("Success.") and "nextRowId 5 -> 10" in out

    def java():
        return sorted(pj.rows("db.de_re$row_tracking", columns=("id", "pt", "_ROW_ID")))

    assert java() == [(0, "a", 5), (1, "b", 8), (2, "a", 6), (3, "b", 9), (4, "a", 7)]
    pj.write("db.de_re", [(5, "b")])
    assert java()[-1] == (5, "b", 10)
    assert sorted(tuple(r) for r in t.refresh().to_spark_with_metadata(["_ROW_ID"]).select("id", "pt", "_ROW_ID")
                  .collect()) == java()
