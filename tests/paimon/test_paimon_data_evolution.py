"""Data Evolution tables (``data-evolution.enabled``, ``icefloe.paimon.data_evolution``): files of some
columns of a row-id range merged column by column when read, the newest file winning each column;
UPDATE and MERGE INTO writing files of the updated columns only, with the range's first row id
(``icefloe.spark.paimon_data_evolution``); what Paimon 1.4 refuses on these tables refused with the
table unchanged. pypaimon (an independent reader and writer of such tables) reads icefloe's updates,
and icefloe reads pypaimon's."""
import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import CorruptMetadataError, SchemaError
from icefloe.paimon import data_evolution as de
from icefloe.paimon import manifest as mf
from icefloe.paimon import system_tables
from icefloe.paimon.binary_row import EMPTY_ROW
from icefloe.paimon.data_file import CommitMessage, DataFileMeta, DataFileNamer
from icefloe.paimon.types import DataField
from icefloe.core import types as core

DE = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}


@pytest.fixture
def cat(tmp_path):
    return icefloe.Catalog(str(tmp_path / "wh"), format="paimon")


def _rows(ids):
    return pa.table({"id": pa.array(ids, pa.int32()), "b": pa.array(ids, pa.int32()), "c": [f"c{i}" for i in ids]})


def _entries(t):
    """(first row id, row count, write columns, sequence number) of each live file, by range then age."""
    t.refresh()
    return sorted(((e.file.first_row_id, e.file.row_count, e.file.write_cols, e.file.max_sequence_number)
                   for e in t.store.live_entries(t.current_snapshot())), key=lambda x: (x[0], x[3]))


def _table_rows(data):
    return sorted(tuple(r.values()) for r in data.to_pylist())


def _update_columns(t, columns, values_by_first):
    """Files of ``columns`` for the ranges starting at the given first row ids, committed as an update is,
    without Spark."""
    t.refresh()
    by_first = {}
    for e in t.store.live_entries(t.current_snapshot()):
        by_first.setdefault(e.file.first_row_id, []).append(e)
    namer, messages, updated = DataFileNamer(), [], []
    for first, data in values_by_first.items():
        meta = de.write_columns_file(t.io, t.table_schema, data, columns, t.store.bucket_dir((), 0), namer, [], first)
        messages.append(CommitMessage((), 0, -1, [meta]))
        updated += by_first[first]
    return t.commit_column_updates(messages, updated, "UPDATE", t.current_snapshot().id)


def test_a_read_merges_a_ranges_files_column_by_column_newest_first(cat):
    t = cat.create_table("default.de", "id int, b int, c string", properties=DE)
    t.append(_rows([1, 2, 3]))          # row ids 0..2
    t.append(_rows([4, 5]))             # row ids 3..4
    _update_columns(t, ["b"], {0: pa.table({"b": pa.array([10, None, 30], pa.int32())})})
    assert _entries(t) == [(0, 3, None, 1), (0, 3, ("b",), 3), (3, 2, None, 2)]
    snap = t.current_snapshot()
    assert (snap.commit_kind, snap.next_row_id) == ("APPEND", 5)        # no row is new
    assert _table_rows(t.to_arrow()) == [(1, 10, "c1"), (2, None, "c2"), (3, 30, "c3"), (4, 4, "c4"), (5, 5, "c5")]
    stats = [(r["min_value_stats"], r["max_value_stats"]) for r in system_tables.files(t, t.current_snapshot()).to_pylist()]
    assert ("{b=10}", "{b=30}") in stats                 # $files: a file of b has statistics of b only
    _update_columns(t, ["b", "c"], {0: pa.table({"b": pa.array([11, 12, 13], pa.int32()), "c": ["x", "y", "z"]})})
    _update_columns(t, ["c"], {0: pa.table({"c": ["X", "Y", "Z"]})})
    assert _table_rows(t.to_arrow()) == [(1, 11, "X"), (2, 12, "Y"), (3, 13, "Z"), (4, 4, "c4"), (5, 5, "c5")]
    # a file's statistics skip no range: the first file's b is 1..3, the merged rows' 11..13
    assert t.to_arrow(where="b = 12").to_pylist() == [{"id": 2, "b": 12, "c": "Y"}]
    assert _table_rows(t.to_arrow(columns=["c"])) == [("X",), ("Y",), ("Z",), ("c4",), ("c5",)]


def test_columns_added_later_are_read_from_the_files_that_hold_them(cat):
    t = cat.create_table("default.add", "id int, b int", properties=DE)
    t.append(pa.table({"id": pa.array([1, 2], pa.int32()), "b": pa.array([1, 2], pa.int32())}))
    with t.update_schema() as u:
        u.add_column("d", "string")
    assert _table_rows(t.to_arrow()) == [(1, 1, None), (2, 2, None)]
    _update_columns(t, ["d"], {0: pa.table({"d": ["one", "two"]})})     # a backfill of the new column
    assert _entries(t)[1][2] == ("d",)
    assert _table_rows(t.to_arrow()) == [(1, 1, "one"), (2, 2, "two")]


def _meta(name, first, rows, seq, cols=None):
    return mf.ManifestEntry(mf.ADD, EMPTY_ROW, 0, -1, DataFileMeta(name, 1, rows, max_sequence_number=seq,
                                                                  first_row_id=first, write_cols=cols))


def test_files_are_grouped_by_row_id_range_and_bad_layouts_refused():
    got = de.groups([_meta("a", 0, 3, 1), _meta("b", 3, 2, 2), _meta("c", 0, 3, 5, ("b",))])
    assert [[e.file.file_name for e in g] for g in got] == [["c", "a"], ["b"]]
    with pytest.raises(CorruptMetadataError, match="different ranges"):
        de.groups([_meta("a", 0, 3, 1), _meta("d", 1, 3, 2)])
    with pytest.raises(CorruptMetadataError, match="_FIRST_ROW_ID"):
        de.groups([_meta("e", None, 3, 1)])
    fields = [DataField(0, "id", core.IntegerType()), DataField(1, "b", core.IntegerType())]
    assert [f.name for f in de.file_fields(fields, ("b", "_ROW_ID"))] == ["b", "_ROW_ID"]
    assert de.file_fields(fields, None) == fields
    with pytest.raises(CorruptMetadataError, match="write column 'x'"):
        de.file_fields(fields, ("x",))


def test_the_option_needs_row_tracking_takes_no_deletion_vectors_and_is_fixed(cat):
    with pytest.raises(SchemaError, match="data-evolution.enabled needs 'row-tracking.enabled'"):
        cat.create_table("default.x", "id int", properties={"data-evolution.enabled": "true"})
    with pytest.raises(SchemaError, match="deletion-vectors.enabled"):
        cat.create_table("default.x", "id int", properties={**DE, "deletion-vectors.enabled": "true"})
    assert not cat.table_exists("default.x")
    t = cat.create_table("default.y", "id int", properties=DE)
    with pytest.raises(SchemaError, match="data-evolution.enabled.*cannot be changed"):
        with t.update_schema() as u:
            u.set_option("data-evolution.enabled", "false")
    assert t.refresh().table_schema.options["data-evolution.enabled"] == "true"


# --------------------------------------------------------------------------- Spark and SQL
def _referee(wh, name):
    from tools.pypaimon_env import remote_module

    t = remote_module("pypaimon").CatalogFactory.create({"warehouse": wh}).get_table(name)
    rb = t.new_read_builder()
    return _table_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits()))


def test_sql_update_and_merge_write_only_the_updated_columns(spark_catalog, paimon_warehouse):
    run = spark_catalog.sql
    run("CREATE TABLE db.t (id INT, b INT, c INT) USING paimon "
        "TBLPROPERTIES ('row-tracking.enabled' = 'true', 'data-evolution.enabled' = 'true')")
    run("INSERT INTO db.t VALUES (1, 1, 1), (2, 2, 2)")
    run("INSERT INTO db.t VALUES (3, 3, 3)")
    run("UPDATE db.t SET b = b + 10 WHERE id = 1")
    t = spark_catalog.load_table("db.t")
    base = {f: n for f, n, cols, _ in _entries(t) if cols is None}         # (INSERT's tasks may write a file each)
    row_id = {r[0]: r[1] for r in t.row_tracking().select("id", "_ROW_ID").collect()}
    assert sorted(row_id.values()) == [0, 1, 2]

    def range_of(i):                 # the (first row id, row count) of the range holding row ``id = i``
        return next((f, n) for f, n in base.items() if f <= row_id[i] < f + n)
    # one file of b for the range of id 1, numbered with the UPDATE's snapshot (3)
    assert [(f, n, cols, seq) for f, n, cols, seq in _entries(t) if cols] == [(*range_of(1), ("b",), 3)]
    run("MERGE INTO db.t AS t USING (SELECT 1 AS id, 11 AS b UNION ALL SELECT 2, 22 UNION ALL SELECT 4, 44) AS s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.b = s.b WHEN NOT MATCHED THEN INSERT (id, b, c) VALUES (s.id, s.b, 0)")
    want = [(1, 11, 1), (2, 22, 2), (3, 3, 3), (4, 44, 0)]
    merged = sorted({(*range_of(i), ("b",), 4) for i in (1, 2)})
    assert [(f, n, cols, seq) for f, n, cols, seq in _entries(t) if cols] == [(*range_of(1), ("b",), 3)] + merged \
        or sorted(e for e in _entries(t) if e[2]) == sorted([(*range_of(1), ("b",), 3)] + merged)
    assert [(f, n) for f, n, cols, seq in _entries(t) if cols is None and seq == 4] == [(3, 1)]   # the insert
    assert _table_rows(t.to_arrow()) == want
    assert sorted(tuple(r) for r in t.to_spark().collect()) == want
    tracked = sorted(tuple(r) for r in t.row_tracking().select("id", "_ROW_ID", "_SEQUENCE_NUMBER").collect())
    seq_of_3 = 2 if range_of(3)[0] not in {range_of(1)[0], range_of(2)[0]} else 4
    assert tracked == [(1, row_id[1], 4), (2, row_id[2], 4), (3, row_id[3], seq_of_3), (4, 3, 4)]   # the newest file's
    assert _referee(paimon_warehouse, "db.t") == want
    # what Paimon 1.4 refuses on these tables: refused, nothing written
    before = t.refresh().current_snapshot().id
    for sql, why in [
        ("DELETE FROM db.t WHERE id = 1", "deletes no rows of a data-evolution table"),
        ("MERGE INTO db.t t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE", "takes only UPDATE SET in WHEN MATCHED"),
        ("MERGE INTO db.t t USING (SELECT 1 AS id) s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN UPDATE SET b = 0",
         "data-evolution table does not take that clause"),
        ("CALL sys.compact(table => 'db.t')", "data-evolution compaction"),
        ("CALL sys.compact(table => 'db.t', order_strategy => 'zorder', order_by => 'b,c')", "does not sort"),
        ("ALTER TABLE db.t SET TBLPROPERTIES ('data-evolution.enabled' = 'false')", "cannot be changed"),
    ]:
        with pytest.raises(Exception, match=why):
            run(sql)
    assert t.refresh().current_snapshot().id == before and _table_rows(t.to_arrow()) == want


def test_icefloe_reads_pypaimons_update_and_pypaimon_icefloes(spark_catalog, paimon_warehouse):
    from tools.pypaimon_env import remote_module

    t = spark_catalog.create_table("db.p", "id int, b int, c string", properties=DE)
    t.append(_rows([1, 2, 3]))
    pt = remote_module("pypaimon").CatalogFactory.create({"warehouse": paimon_warehouse}).get_table("db.p")
    wb = pt.new_batch_write_builder()
    messages = wb.new_update().with_update_type(["b"]).update_by_arrow_with_row_id(
        pa.table({"_ROW_ID": pa.array([1], pa.int64()), "b": pa.array([20], pa.int32())}))
    commit = wb.new_commit()
    commit.commit(messages)
    commit.close()
    assert [(f, n, cols) for f, n, cols, _ in _entries(t)] == [(0, 3, None), (0, 3, ("b",))]
    want = [(1, 1, "c1"), (2, 20, "c2"), (3, 3, "c3")]
    assert _table_rows(t.to_arrow()) == want
    assert sorted(tuple(r) for r in t.to_spark().collect()) == want
    r = t.update({"c": "upper(c)"}, "b > 10")
    assert r.updated == 1
    assert _entries(t)[-1][:3] == (0, 3, ("c",))
    assert _referee(paimon_warehouse, "db.p") == _table_rows(t.to_arrow()) == [(1, 1, "c1"), (2, 20, "C2"), (3, 3, "c3")]
