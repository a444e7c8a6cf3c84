"""Paimon's global index procedures in SQL (Paimon's docs: append-table/global-index, spark/procedures):
``CALL sys.create_global_index`` / ``sys.drop_global_index``, the ``$table_indexes`` rows, and reads
through Spark that use the index and stay right after UPDATE and DELETE; an index built in Spark tasks."""
import pyarrow as pa
import pytest

from icefloe.paimon import file_index_bitmap as bmi
from icefloe.paimon import global_index as gi
from icefloe.paimon.global_index_ops import create_global_index
from icefloe.spark.paimon_global_index import builder
from icefloe.sql.errors import SqlError

PROPS = "TBLPROPERTIES ('row-tracking.enabled' = 'true', 'global-index.row-count-per-shard' = '4')"


def _rows(df):
    return [tuple(r) for r in df.collect()]


def _ids(pcat, where):
    return sorted(r[0] for r in pcat.sql(f"SELECT id FROM default.g WHERE {where}").collect())


def _make(pcat):
    pcat.sql(f"CREATE TABLE default.g (id INT, v STRING) {PROPS}")
    pcat.sql("INSERT INTO default.g VALUES (0, 'a'), (1, 'c'), (2, 'e'), (3, NULL), (4, 'c')")
    pcat.sql("INSERT INTO default.g VALUES (5, 'b'), (6, 'd'), (7, 'f'), (8, 'd'), (9, NULL)")


@pytest.mark.long          # many Spark statements: make test-long
def test_create_read_update_delete_and_drop(pcat):
    _make(pcat)
    t = pcat.load_table("default.g")
    before = len(t.plan("v = 'c'"))
    call = "CALL sys.create_global_index(table => 'default.g', index_column => 'v', index_type => 'bitmap')"
    assert _rows(pcat.sql(call)) == [(True,)]
    assert len(t.refresh().plan("v = 'c'")) < before           # the second INSERT's files hold no 'c'
    got = _rows(pcat.sql("SELECT index_type, bucket, row_range_start, row_range_end, index_field_name, row_count "
                         "FROM default.`g$table_indexes` ORDER BY row_range_start"))
    assert got == [("bitmap", 0, 0, 3, "v", 4), ("bitmap", 0, 4, 7, "v", 4), ("bitmap", 0, 8, 9, "v", 2)]
    assert _ids(pcat, "v = 'c'") == [1, 4]
    assert sorted(r.id for r in t.to_spark(where="v = 'c'").collect()) == [1, 4]     # files pruned by the index
    assert _ids(pcat, "v IN ('d', 'zz')") == [6, 8]
    assert _ids(pcat, "v IS NULL") == [3, 9]
    pcat.sql("UPDATE default.g SET v = 'c' WHERE id = 6")      # the index said 'd' for row id 6
    assert _ids(pcat, "v = 'c'") == [1, 4, 6]
    assert _ids(pcat, "v = 'd'") == [8]
    pcat.sql("DELETE FROM default.g WHERE id = 1")
    assert _ids(pcat, "v = 'c'") == [4, 6]
    pcat.sql("INSERT INTO default.g VALUES (10, 'c'), (11, 'e')")
    assert _ids(pcat, "v = 'c'") == [4, 6, 10]
    indexed = "SELECT file_name, row_range_start, row_range_end FROM default.`g$table_indexes`"
    old = set(_rows(pcat.sql(indexed)))
    assert _rows(pcat.sql(call)) == [(True,)]                 # again: only the rows not yet indexed, 10 and 11
    new = set(_rows(pcat.sql(indexed))) - old
    assert old < set(_rows(pcat.sql(indexed))) and [(lo, hi) for _, lo, hi in new] == [(10, 11)]
    assert _ids(pcat, "v = 'c'") == [4, 6, 10]
    assert _ids(pcat, "v = 'e'") == [2, 11]
    drop = "CALL sys.drop_global_index(table => 'default.g', index_column => 'v', index_type => 'bitmap')"
    # a dry run (Paimon's procedures page) counts the index files and commits nothing
    indexes = _rows(pcat.sql("SELECT * FROM default.`g$table_indexes`"))
    snapshots = len(t.refresh().snapshots())
    assert _rows(pcat.sql(drop.replace(")", ", dry_run => true)"))) == [(True, len(indexes))]
    assert _rows(pcat.sql("SELECT * FROM default.`g$table_indexes`")) == indexes and len(indexes) == 4
    assert len(t.refresh().snapshots()) == snapshots
    assert _rows(pcat.sql(drop)) == [(True, 4)]
    assert len(t.refresh().snapshots()) == snapshots + 1
    assert _rows(pcat.sql(drop)) == [(True, 0)]                                   # nothing left: no commit
    assert len(t.refresh().snapshots()) == snapshots + 1
    assert _rows(pcat.sql("SELECT * FROM default.`g$table_indexes`")) == []
    assert _ids(pcat, "v = 'c'") == [4, 6, 10]
    # Paimon's documented example: a btree index, then a query by IN
    assert _rows(pcat.sql(call.replace("'bitmap'", "'btree'"))) == [(True,)]
    got = _rows(pcat.sql("SELECT index_type, row_range_start, row_range_end FROM default.`g$table_indexes`"))
    # rows UPDATE and DELETE moved sit in files without a first row id, which no range covers
    assert all(r[0] == "btree" for r in got) and max(r[2] for r in got) == 11
    assert not any(lo <= i <= hi for _, lo, hi in got for i in (1, 6))
    assert len(t.refresh().plan("v = 'd'")) < len(t.plan())          # statistics ('c' to 'e') keep it, the index not
    assert _ids(pcat, "v IN ('c', 'f')") == [4, 6, 7, 10]


def test_a_build_again_over_partitions_indexes_only_the_new_rows_and_options_cut_the_files(pcat):
    pcat.sql(f"CREATE TABLE default.gp (id INT, name STRING, pt STRING) PARTITIONED BY (pt) {PROPS}")
    pcat.sql("INSERT INTO default.gp VALUES (0, 'n0', 'p1'), (1, 'n1', 'p1')")             # row ids 0-1
    pcat.sql("INSERT INTO default.gp VALUES (2, 'n2', 'p2'), (3, 'n0', 'p2')")             # row ids 2-3
    call = "CALL sys.create_global_index(table => 'default.gp', index_column => 'name', index_type => 'btree'{})"
    indexed = "SELECT file_name, partition, row_range_start, row_range_end, row_count FROM default.`gp$table_indexes`"
    assert _rows(pcat.sql(call.format(", partitions => 'pt=p1'"))) == [(True,)]
    old = _rows(pcat.sql(indexed))
    assert [r[1:] for r in old] == [("{p1}", 0, 1, 2)]
    pcat.sql("INSERT INTO default.gp VALUES (4, 'n1', 'p1'), (5, 'n4', 'p1')")             # row ids 4-5
    pcat.sql("INSERT INTO default.gp VALUES (6, 'n0', 'p2')")                              # row id 6
    # Paimon's procedures page, again on the indexed column: only the rows not yet indexed are built
    assert _rows(pcat.sql(call.format(", partitions => 'pt=p1;pt=p2'"))) == [(True,)]
    got = _rows(pcat.sql(indexed))
    assert set(old) <= set(got)
    assert sorted(r[1:] for r in got if r not in old) == [("{p1}", 4, 5, 2), ("{p2}", 2, 3, 2), ("{p2}", 6, 6, 1)]
    gp = pcat.load_table("default.gp")
    assert len(gp.plan("name = 'n4'")) == 1 and len(gp.plan()) == 4               # three files ruled out
    assert sorted(r.id for r in gp.to_spark(where="name = 'n0'").collect()) == [0, 3, 6]
    assert _ids_of(pcat, "gp", "name IN ('n1', 'n4')") == [1, 4, 5]
    assert _rows(pcat.sql(call.format(""))) == [(True,)]                          # nothing left: no commit
    assert _rows(pcat.sql(indexed)) == got
    # the page's bitmap example: sorted-index.records-per-range sets the rows of a file (times 1.2)
    bitmap = "CALL sys.create_global_index(table => 'default.gp', index_column => 'id', index_type => 'bitmap', " \
             "options => 'sorted-index.records-per-range=1')"
    assert _rows(pcat.sql(bitmap)) == [(True,)]
    files = [r for r in _rows(pcat.sql("SELECT index_type, row_range_start, row_range_end, row_count "
                                       "FROM default.`gp$table_indexes`")) if r[0] == "bitmap"]
    assert sorted(files) == [("bitmap", i, i, 1) for i in range(7)]
    assert _ids_of(pcat, "gp", "id = 5") == [5]


def _ids_of(pcat, table, where):
    return sorted(r[0] for r in pcat.sql(f"SELECT id FROM default.{table} WHERE {where}").collect())


BAD_CALLS = [
    ("create_global_index(table => 'default.g', index_column => 'v', index_type => 'lumina-vector-ann')",
     "native Lumina"),
    ("create_global_index(table => 'default.g', index_column => 'v', index_type => 'full-text', "
     "options => 'full-text.tokenizer=jieba')", "native full-text index library"),
    ("create_global_index(table => 'default.g', index_column => 'v', index_type => 'bitmap', options => 'x=1')",
     "'x' is not an option"),
    ("create_global_index(table => 'default.g', index_column => 'v', index_type => 'bitmap', "
     "partitions => 'p=1')", "not partitioned"),
    ("create_global_index(table => 'default.g', index_column => 'w', index_type => 'bitmap')", "does not exist"),
    ("create_global_index(table => 'default.plain', index_column => 'v', index_type => 'bitmap')",
     "row-tracking.enabled"),
]


def test_bad_calls_are_refused_and_change_nothing(pcat):
    _make(pcat)
    pcat.sql("CREATE TABLE default.plain (id INT, v STRING)")
    pcat.sql("INSERT INTO default.plain VALUES (1, 'a')")
    before = {n: pcat.load_table(f"default.{n}").current_snapshot().id for n in ("g", "plain")}
    for call, match in BAD_CALLS:
        with pytest.raises(SqlError, match=match):
            pcat.sql(f"CALL sys.{call}")
    assert {n: pcat.load_table(f"default.{n}").current_snapshot().id for n in ("g", "plain")} == before


@pytest.mark.long          # a Spark job of its own: make test-long
def test_an_index_built_in_spark_tasks_is_the_one_the_driver_builds(pcat, spark):
    _make(pcat)
    t = pcat.load_table("default.g")
    create_global_index(t, "v", "bitmap", {}, build=builder(spark, driver_rows=0))
    files = sorted(gi.global_files(t.store, t.refresh().current_snapshot()), key=lambda f: f.range_start)
    values = ["a", "c", "e", None, "c", "b", "d", "f", "d", None]
    v = t.table_schema.fields[1]
    assert [(f.range_start, f.range_end) for f in files] == [(0, 3), (4, 7), (8, 9)]
    for f in files:
        want = bmi.bitmap_bytes(bmi.column_keys(pa.array(values[f.range_start:f.range_end + 1]), v.type), v.type)[0]
        assert t.store.io.read_bytes(f.path) == want
    assert _ids(pcat, "v = 'd'") == [6, 8]
