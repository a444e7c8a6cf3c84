"""Paimon row tracking in SQL (``row-tracking.enabled``, Paimon's append-table row-tracking page):
``_ROW_ID`` and ``_SEQUENCE_NUMBER`` in SELECT and DML conditions, the ``$row_tracking`` system table,
ids kept by UPDATE, MERGE and DELETE as the page's walk-through shows (a long test)."""
import pyarrow as pa
import pytest

import icefloe
from icefloe.sql.errors import SqlError


@pytest.fixture
def pcat(warehouse, spark):
    return icefloe.Catalog(warehouse, format="paimon", spark=spark)


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_select_and_the_row_tracking_table_read_the_ids_given_at_commit(pcat):
    """(The commit's first row ids, nextRowId and compaction: tests/paimon/test_paimon_row_tracking.py.)"""
    pcat.sql("CREATE TABLE default.rt (id INT, data STRING) TBLPROPERTIES ('row-tracking.enabled' = 'true')")
    t = pcat.load_table("default.rt")
    t.append(pa.table({"id": pa.array([11, 22], pa.int32()), "data": ["a", "b"]}))
    t.append(pa.table({"id": pa.array([33], pa.int32()), "data": ["c"]}))
    df = pcat.sql("SELECT *, _ROW_ID, _sequence_number FROM default.rt WHERE _ROW_ID > 0")
    assert df.columns == ["id", "data", "_ROW_ID", "_sequence_number"]       # SELECT * leaves them out
    assert _rows(df) == [(22, "b", 1, 1), (33, "c", 2, 2)]
    assert _rows(pcat.sql("SELECT id, _ROW_ID FROM default.`rt$row_tracking` WHERE _SEQUENCE_NUMBER = 1")) == \
        [(11, 0), (22, 1)]


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


@pytest.mark.long
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
