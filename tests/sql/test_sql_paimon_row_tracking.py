"""Paimon row tracking in SQL (``row-tracking.enabled``, Paimon's append-table row-tracking page):
``_ROW_ID`` and ``_SEQUENCE_NUMBER`` in SELECT, the ``$row_tracking`` system table, row ids given
at commit and kept through compaction; checked on the manifests and snapshots too."""
import json
import os

import pytest

import icefloe
from icefloe.sql.errors import SqlError


@pytest.fixture
def pcat(warehouse, spark):
    return icefloe.Catalog(warehouse, format="paimon", spark=spark)


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _snapshot(warehouse, table, n):
    with open(os.path.join(warehouse, "default.db", table, "snapshot", f"snapshot-{n}")) as f:
        return json.load(f)


def test_row_ids_are_given_at_commit_and_read_as_hidden_columns(pcat, warehouse):
    pcat.sql("CREATE TABLE default.rt (id INT, data STRING) TBLPROPERTIES ('row-tracking.enabled' = 'true')")
    pcat.sql("INSERT INTO default.rt VALUES (11, 'a'), (22, 'b')")
    pcat.sql("INSERT INTO default.rt VALUES (33, 'c')")
    assert _rows(pcat.sql("SELECT id, data, _ROW_ID, _SEQUENCE_NUMBER FROM default.rt")) == \
        [(11, "a", 0, 1), (22, "b", 1, 1), (33, "c", 2, 2)]
    # SELECT * leaves them out; a filter on them works
    assert pcat.sql("SELECT * FROM default.rt").columns == ["id", "data"]
    assert _rows(pcat.sql("SELECT *, _row_id FROM default.rt WHERE _ROW_ID > 0")) == [(22, "b", 1), (33, "c", 2)]
    assert _snapshot(warehouse, "rt", 1)["nextRowId"] == 2
    assert _snapshot(warehouse, "rt", 2)["nextRowId"] == 3
    t = pcat.load_table("default.rt")
    files = sorted((e.file.first_row_id, e.file.row_count, e.file.min_sequence_number, e.file.max_sequence_number)
                   for e in t.store.live_entries(t.current_snapshot()))
    # each file's ids follow the one before's (Spark may write a commit's rows as several files)
    assert [f[0] for f in files] == [sum(g[1] for g in files[:i]) for i in range(len(files))]
    assert [(f[2], f[3]) for f in files][-1] == (2, 2) and {(f[2], f[3]) for f in files[:-1]} == {(1, 1)}
    assert sorted((m.min_row_id, m.max_row_id) for m in t.store.data_manifests(t.current_snapshot())) == \
        [(0, 1), (2, 2)]
    # the system table: the rows with both columns
    df = pcat.sql("SELECT * FROM default.`rt$row_tracking`")
    assert df.columns == ["id", "data", "_ROW_ID", "_SEQUENCE_NUMBER"]
    assert _rows(df) == [(11, "a", 0, 1), (22, "b", 1, 1), (33, "c", 2, 2)]


def test_compaction_keeps_each_rows_id_and_sequence_number(pcat):
    pcat.sql("CREATE TABLE default.rc (id INT, p STRING) PARTITIONED BY (p) "
             "TBLPROPERTIES ('row-tracking.enabled' = 'true')")
    for i in range(3):
        pcat.sql(f"INSERT INTO default.rc VALUES ({i}, 'x'), ({i + 10}, 'y')")
    before = _rows(pcat.sql("SELECT id, p, _ROW_ID, _SEQUENCE_NUMBER FROM default.rc"))
    assert sorted(r[2] for r in before) == list(range(6))
    pcat.sql("CALL sys.compact(table => 'default.rc')")
    t = pcat.load_table("default.rc")
    live = t.store.live_entries(t.current_snapshot())
    assert len(live) == 2 and all(e.file.first_row_id is None and e.file.write_cols[-2:] == ("_ROW_ID", "_SEQUENCE_NUMBER")
                                  for e in live)
    assert _rows(pcat.sql("SELECT id, p, _ROW_ID, _SEQUENCE_NUMBER FROM default.rc")) == before
    pcat.sql("INSERT INTO default.rc VALUES (99, 'x')")        # new rows go on from nextRowId
    assert _rows(pcat.sql("SELECT _ROW_ID, _SEQUENCE_NUMBER FROM default.rc WHERE id = 99")) == [(6, 5)]


def test_row_tracking_is_refused_where_paimon_refuses_it(pcat):
    with pytest.raises(SqlError, match="append tables"):
        pcat.sql("CREATE TABLE default.pk (id INT NOT NULL, v STRING) TBLPROPERTIES ('primary-key' = 'id', "
                 "'row-tracking.enabled' = 'true')")
    with pytest.raises(SqlError, match="bucket"):
        pcat.sql("CREATE TABLE default.bk (id INT, v STRING) TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id', "
                 "'row-tracking.enabled' = 'true')")
    pcat.sql("CREATE TABLE default.plain (id INT)")
    with pytest.raises(SqlError, match="cannot be changed"):
        pcat.sql("ALTER TABLE default.plain SET TBLPROPERTIES ('row-tracking.enabled' = 'true')")
    assert "row-tracking.enabled" not in pcat.load_table("default.plain").table_schema.options
    with pytest.raises(SqlError, match="row_tracking"):
        pcat.sql("SELECT * FROM default.`plain$row_tracking`")


def test_update_merge_and_delete_keep_row_ids_as_paimon_documents(pcat, spark):
    """The row-tracking page's walk-through: an updated row keeps its id and takes the new snapshot
    as its sequence number, an untouched row keeps both, a MERGE's new row gets the next id."""
    pcat.sql("CREATE TABLE default.rd (id INT, data STRING) TBLPROPERTIES ('row-tracking.enabled' = 'true')")
    pcat.sql("INSERT INTO default.rd VALUES (11, 'a'), (22, 'b')")
    pcat.sql("UPDATE default.rd SET data = 'new-data-update' WHERE id = 11")
    q = "SELECT id, data, _ROW_ID, _SEQUENCE_NUMBER FROM default.rd"
    assert _rows(pcat.sql(q)) == [(11, "new-data-update", 0, 2), (22, "b", 1, 1)]
    pcat.sql("UPDATE default.rd SET data = 'again' WHERE _ROW_ID = 0")
    assert _rows(pcat.sql(q)) == [(11, "again", 0, 3), (22, "b", 1, 1)]
    spark.createDataFrame([(22, "new-data-merge"), (33, "c")], "id int, data string") \
        .createOrReplaceTempView("rd_source")
    pcat.sql("MERGE INTO default.rd t USING rd_source s ON t.id = s.id "
             "WHEN MATCHED THEN UPDATE SET t.data = s.data WHEN NOT MATCHED THEN INSERT *")
    assert _rows(pcat.sql(q)) == [(11, "again", 0, 3), (22, "new-data-merge", 1, 4), (33, "c", 2, 4)]
    pcat.sql("DELETE FROM default.rd WHERE _ROW_ID = 0")
    assert _rows(pcat.sql(q)) == [(22, "new-data-merge", 1, 4), (33, "c", 2, 4)]
    pcat.sql("INSERT INTO default.rd VALUES (44, 'd')")
    assert _rows(pcat.sql(q + " WHERE id = 44")) == [(44, "d", 3, 6)]
    # the files moved rows went to carry them as columns and have no first row id of their own
    t = pcat.load_table("default.rd")
    for e in t.store.live_entries(t.current_snapshot()):
        assert (e.file.first_row_id is None) == ("_ROW_ID" in (e.file.write_cols or ()))
