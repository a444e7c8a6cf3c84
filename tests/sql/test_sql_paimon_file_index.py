"""Paimon file indexes through SQL, as Paimon's Spark documentation uses them: ``TBLPROPERTIES
('file-index.bloom-filter.columns' = ...)``, an INSERT whose Spark tasks build the indexes, reads that
skip files by them, ``CALL sys.rewrite_file_index`` and the ``$file_indexes`` system table."""
import pyarrow as pa
import pytest

from icefloe.sql.errors import SqlError


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_bloom_filter_index_from_create_to_skipped_reads(pcat):
    pcat.sql("CREATE TABLE default.t (id bigint, name string, dt string) PARTITIONED BY (dt) TBLPROPERTIES ("
             "'file-index.bloom-filter.columns' = 'name', 'file-index.bloom-filter.name.items' = '100')")
    # one task: one file holding both rows (so its min/max statistics cannot skip it for 'b')
    pcat.sql("INSERT INTO default.t SELECT /*+ REPARTITION(1) */ * FROM VALUES (1, 'a', 'd1'), (9, 'z', 'd1')")
    t = pcat.load_table("default.t")
    t.append(pa.table({"id": pa.array([2, 8], pa.int64()), "name": ["b", "y"], "dt": ["d1", "d1"]}))
    assert len(t.plan_files()) == 2 and all(f.embedded_index for f in t.plan_files())
    assert _rows(pcat.sql("SELECT column_name, index_type, storage_type, is_empty FROM default.`t$file_indexes`")) \
        == [("name", "bloom-filter", "EMBEDDED", False)] * 2
    df = t.to_spark(where="name = 'b'")
    assert len(df.inputFiles()) == 1                 # one data file read of two
    assert len(t.to_spark(where="name = 'q'").inputFiles()) == 0
    assert _rows(pcat.sql("SELECT id FROM default.t WHERE name IN ('a', 'y')")) == [(1,), (8,)]
    pcat.sql("ALTER TABLE default.t SET TBLPROPERTIES ('file-index.read.enabled' = 'false')")
    assert len(t.refresh().to_spark(where="name = 'b'").inputFiles()) == 2

    # an index asked for later: CALL sys.rewrite_file_index gives the existing files theirs
    pcat.sql("ALTER TABLE default.t SET TBLPROPERTIES ('file-index.read.enabled' = 'true', "
             "'file-index.bloom-filter.columns' = 'name,id', 'file-index.bloom-filter.id.items' = '100')")
    assert _rows(pcat.sql("CALL sys.rewrite_file_index(table => 'default.t', where => \"dt = 'd1'\")")) == [(1, 2)]
    assert _rows(pcat.sql("SELECT column_name, count(*) FROM default.`t$file_indexes` GROUP BY column_name")) == \
        [("id", 2), ("name", 2)]
    assert _rows(pcat.sql("CALL sys.rewrite_file_index('default.t')")) == [(0, 0)]
    assert len(t.refresh().to_spark(where="id = 2").inputFiles()) == 1
    before = t.table_schema.id
    with pytest.raises(SqlError, match="range bitmap"):
        pcat.sql("ALTER TABLE default.t SET TBLPROPERTIES ('file-index.range-bitmap.columns' = 'dt')")
    with pytest.raises(SqlError, match="does not have"):
        pcat.sql("CREATE TABLE default.bad (id bigint) TBLPROPERTIES ('file-index.bloom-filter.columns' = 'x')")
    assert t.refresh().table_schema.id == before
