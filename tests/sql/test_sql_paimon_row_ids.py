"""Paimon's Spark procedures on Data Evolution row ids (docs: spark/procedures): ``reassign_row_id``
makes each partition's row ids contiguous, metadata only; ``materialize_deletion_vectors`` makes
Paimon's checks (icefloe's tables never have deletion vectors on a Data Evolution table)."""
import os

import pyarrow as pa
import pytest

from icefloe.sql.errors import SqlError

DE = "'row-tracking.enabled' = 'true', 'data-evolution.enabled' = 'true'"


def _tracked(pcat, name="db.t"):
    return sorted(tuple(r) for r in pcat.sql(f"SELECT id, pt, _ROW_ID FROM {name}").collect())


def _data_files(warehouse, table="t"):
    root = os.path.join(warehouse, "db.db", table)
    return sorted(f for _, _, names in os.walk(root) for f in names if f.startswith("data-"))


def _table(pcat, rows, name="db.t", props=DE, partitioned=True):
    pcat.sql("CREATE DATABASE IF NOT EXISTS db")
    pcat.sql(f"CREATE TABLE {name} (id INT, pt STRING) {'PARTITIONED BY (pt)' if partitioned else ''} "
             f"TBLPROPERTIES ({props})")
    t = pcat.load_table(name)
    for i, pt in rows:          # one commit each: the partitions' ids interleave
        t.append(pa.table({"id": pa.array([i], pa.int32()), "pt": [pt]}))
    return t


def test_reassign_row_id_makes_each_partitions_ids_contiguous(pcat, warehouse):
    t = _table(pcat, [(0, "a"), (1, "b"), (2, "a"), (3, "b"), (4, "a")])
    assert _tracked(pcat) == [(0, "a", 0), (1, "b", 1), (2, "a", 2), (3, "b", 3), (4, "a", 4)]
    files = _data_files(warehouse)
    out = pcat.sql("CALL sys.reassign_row_id(table => 'db.t')").collect()
    assert [tuple(r) for r in out] == [("Success. Reassigned row IDs for table 'db.t': snapshot 5 -> 6, "
                                        "nextRowId 5 -> 10, files=5, rows=5, indexFiles=0.",)]
    # partition order, each partition's rows in their old order, from the next row id on
    assert _tracked(pcat) == [(0, "a", 5), (1, "b", 8), (2, "a", 6), (3, "b", 9), (4, "a", 7)]
    snap = t.refresh().current_snapshot()
    assert (snap.id, snap.commit_kind, snap.next_row_id, snap.total_record_count) == (6, "OVERWRITE", 10, 5)
    assert _data_files(warehouse) == files                                       # metadata only
    assert sorted(e.file.first_row_id for e in t.store.live_entries(snap)) == [5, 6, 7, 8, 9]
    again = pcat.sql("CALL sys.reassign_row_id('db.t')").collect()[0][0]
    assert again == ("Skipped. Row IDs for table 'db.t' were not reassigned because no partition requires "
                     "row-id reassignment: snapshot 6 unchanged, nextRowId=10.")
    assert t.refresh().current_snapshot().id == 6
    # the table goes on from the new ids: an insert and a column update by row id
    t.append(pa.table({"id": pa.array([5], pa.int32()), "pt": ["b"]}))
    pcat.sql("UPDATE db.t SET id = 20 WHERE id = 2")
    assert _tracked(pcat) == [(0, "a", 5), (1, "b", 8), (3, "b", 9), (4, "a", 7), (5, "b", 10), (20, "a", 6)]


def test_reassign_row_id_partitions_filter(pcat):
    _table(pcat, [(0, "a"), (1, "b"), (2, "a")])
    skipped = pcat.sql("CALL sys.reassign_row_id(table => 'db.t', partitions => 'pt=c')").collect()[0][0]
    assert skipped.startswith("Skipped.") and "no partition requires" in skipped
    done = pcat.sql("CALL sys.reassign_row_id(table => 'db.t', partitions => 'pt=a')").collect()[0][0]
    assert done.startswith("Success.") and "nextRowId 3 -> 5, files=2, rows=2" in done
    assert _tracked(pcat) == [(0, "a", 3), (1, "b", 1), (2, "a", 4)]            # b keeps its id


def test_reassign_row_id_needs_a_partitioned_data_evolution_table(pcat):
    _table(pcat, [(0, "a")], "db.plain", props="'bucket' = '-1'")
    with pytest.raises(SqlError, match=r"must enable 'row-tracking.enabled=true'"):
        pcat.sql("CALL sys.reassign_row_id(table => 'db.plain')")
    _table(pcat, [(0, "a")], "db.tracked", props="'row-tracking.enabled' = 'true'")
    with pytest.raises(SqlError, match=r"must enable 'data-evolution.enabled=true'"):
        pcat.sql("CALL sys.reassign_row_id(table => 'db.tracked')")
    _table(pcat, [(0, "a")], "db.flat", partitioned=False)
    out = pcat.sql("CALL sys.reassign_row_id(table => 'db.flat')").collect()[0][0]
    assert out.startswith("Skipped.") and "because table is not partitioned" in out
    # materialize_deletion_vectors: Paimon's checks, in its order
    with pytest.raises(SqlError, match="partitions and where cannot be used together"):
        pcat.sql("CALL sys.materialize_deletion_vectors(table => 'db.flat', partitions => 'pt=a', where => 'pt=1')")
    with pytest.raises(SqlError, match="only supports unaware-bucket data evolution tables"):
        pcat.sql("CALL sys.materialize_deletion_vectors(table => 'db.plain')")
    with pytest.raises(SqlError, match="Cannot change deletion vectors mode from false to true"):
        pcat.sql("CALL sys.materialize_deletion_vectors(table => 'db.flat', "
                 "options => 'deletion-vectors.enabled=true')")
    with pytest.raises(SqlError, match="requires deletion vectors to be enabled"):
        pcat.sql("CALL sys.materialize_deletion_vectors(table => 'db.flat')")
