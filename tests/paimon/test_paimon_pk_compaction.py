"""Full compaction of primary-key tables: every bucket's files merged into one sorted run at
the highest LSM level, as a COMPACT snapshot; the rows do not change, pypaimon and
pypaimon-rust read the compacted table as icefloe does, later upserts still win."""
import pyarrow as pa
import pytest

from icefloe.errors import CommitConflictError
from icefloe.paimon import kv_compact

DDL = "id bigint, dt string, a bigint, b string"


def _rows(table):
    return sorted(table.to_pylist(), key=lambda r: (r["id"], r.get("dt")))


def _rust_rows(warehouse, name):
    from pypaimon_rust.datafusion import SQLContext

    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": warehouse})
    batches = ctx.sql(f"SELECT * FROM paimon.{name}")
    return sorted(pa.Table.from_batches(batches).to_pylist(), key=lambda r: (r["id"], r.get("dt"))) if batches else []


def _pypaimon_rows(pcat, name):
    pt = pcat.get_table(name)
    rb = pt.new_read_builder()
    return _rows(rb.new_read().to_arrow(rb.new_scan().plan().splits()))


def _fill(t, spark=None, commits=4):
    schema = t.to_arrow().schema
    for c in range(commits):
        rows = [{"id": i, "dt": "x" if i % 2 else "y", "a": i * 10 + c, "b": None if (i + c) % 3 else f"b{c}"}
                for i in range(c, 12, 2)]
        data = pa.Table.from_pylist(rows, schema=schema)
        t.append(data if spark is None or c % 2 else spark.createDataFrame(rows, t.to_spark().schema))


ENGINES = {
    "deduplicate": {},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.a.aggregate-function": "sum",
                    "fields.b.aggregate-function": "listagg"},
    # first-row writers compact each new run up (reads leave level 0 out); write-only keeps the runs
    "first-row": {"merge-engine": "first-row", "write-only": "true"},
}


def _merged_rows(t):
    """Every run merged (level 0 too): the rows the compaction must keep."""
    from icefloe.paimon.merge import read_merged_bucket

    parts = [read_merged_bucket(t.io, paths, fields, t.table_schema) for paths, fields in t.buckets_of(t.plan())]
    return _rows(pa.concat_tables(parts))


@pytest.mark.parametrize("engine", list(ENGINES))
def test_full_compaction_keeps_the_rows_and_the_referees_agree(engine, spark_catalog, paimon_spark,
                                                               paimon_warehouse, pypaimon_catalog):
    t = spark_catalog.create_table("db.c", DDL, partitioned_by=["dt"],
                                   properties={"primary-key": "id,dt", "bucket": "2", **ENGINES[engine]})
    _fill(t, paimon_spark)
    before = _merged_rows(t) if engine == "first-row" else _rows(t.to_arrow())
    if engine == "first-row":
        assert _rows(t.to_arrow()) == []                               # nothing above level 0 yet
    files_before = len(t.plan_files())
    snap = t.rewrite_data_files()
    assert snap is not None and snap.commit_kind == "COMPACT"
    entries = t.refresh().plan()
    buckets = {(e.partition.to_bytes(), e.bucket) for e in entries}
    assert len(entries) == len(buckets) < files_before                 # one sorted run per bucket
    assert {e.file.level for e in entries} == {5}
    assert _rows(t.to_arrow()) == before
    assert sorted((r.asDict() for r in t.to_spark().collect()), key=lambda r: (r["id"], r["dt"])) == before
    assert _rust_rows(paimon_warehouse, "db.c") == before
    assert _pypaimon_rows(pypaimon_catalog, "db.c") == before
    assert t.rewrite_data_files() is None                              # nothing left to compact
    assert t.check().ok
    # a later upsert is a newer run: it wins over the compacted one
    t.append(pa.Table.from_pylist([{"id": 3, "dt": "x", "a": 1000, "b": "late"}], schema=t.to_arrow().schema))
    after = {(r["id"], r["dt"]): r for r in _rows(t.refresh().to_arrow())}
    assert _rust_rows(paimon_warehouse, "db.c") == _rows(t.to_arrow())
    old = {(r["id"], r["dt"]): r for r in before}[(3, "x")]
    if engine == "deduplicate":
        assert after[(3, "x")]["a"] == 1000 and after[(3, "x")]["b"] == "late"
    elif engine == "aggregation":
        assert after[(3, "x")]["a"] == old["a"] + 1000
    elif engine == "first-row":
        assert after[(3, "x")] == old


def test_compaction_drops_delete_records_at_the_top_level(paimon_catalog, paimon_warehouse):
    t = paimon_catalog.create_table("db.d", "id bigint, a bigint, op string",
                                    properties={"primary-key": "id", "bucket": "1", "rowkind.field": "op"})
    schema = t.to_arrow().schema
    t.append(pa.Table.from_pylist([{"id": i, "a": i, "op": "+I"} for i in range(8)], schema=schema))
    t.append(pa.Table.from_pylist([{"id": i, "a": None, "op": "-D"} for i in range(0, 8, 3)], schema=schema))
    before = _rows(t.to_arrow())
    assert [r["id"] for r in before] == [1, 2, 4, 5, 7]
    assert kv_compact.compact_table(t) is not None                    # on the caller, no Spark
    [e] = t.refresh().plan()
    assert e.file.row_count == 5 and e.file.delete_row_count == 0 and e.file.level == 5
    assert _rows(t.to_arrow()) == before == _rust_rows(paimon_warehouse, "db.d")
    assert (e.file.min_sequence_number, e.file.max_sequence_number) == (1, 7)    # each key's own number


def test_a_compaction_racing_another_is_refused_and_leaves_nothing(paimon_catalog):
    t = paimon_catalog.create_table("db.r", "id bigint, a bigint", properties={"primary-key": "id", "bucket": "1"})
    schema = t.to_arrow().schema
    for c in range(3):
        t.append(pa.Table.from_pylist([{"id": i, "a": c} for i in range(5)], schema=schema))
    base = t.current_snapshot()
    [task] = kv_compact.plan(t)
    fields = [t.schema_by_id(e.file.schema_id).fields for e in task.entries]
    metas = kv_compact.compact_bucket(t.io, t.location, t.table_schema, task.paths(), fields, task.partition,
                                      task.bucket, t.name)
    other = paimon_catalog.load_table("db.r")
    kv_compact.compact_table(other)                                      # another compaction lands first
    with pytest.raises(CommitConflictError, match="no longer live"):
        kv_compact.commit(t.refresh(), base, [(task, metas)])
    import os

    assert not any(os.path.exists(m.file_path) for m in metas)          # its files were removed
    assert [r["a"] for r in _rows(t.to_arrow())] == [2] * 5


def test_upserts_committed_during_a_compaction_stay(paimon_catalog, paimon_warehouse):
    t = paimon_catalog.create_table("db.u", "id bigint, a bigint", properties={"primary-key": "id", "bucket": "1"})
    schema = t.to_arrow().schema
    for c in range(3):
        t.append(pa.Table.from_pylist([{"id": i, "a": c} for i in range(5)], schema=schema))
    base = t.current_snapshot()
    [task] = kv_compact.plan(t)
    fields = [t.schema_by_id(e.file.schema_id).fields for e in task.entries]
    metas = kv_compact.compact_bucket(t.io, t.location, t.table_schema, task.paths(), fields, task.partition,
                                      task.bucket, t.name)
    writer = paimon_catalog.load_table("db.u")
    writer.append(pa.Table.from_pylist([{"id": 2, "a": 99}], schema=schema))   # lands before the compaction
    kv_compact.commit(t.refresh(), base, [(task, metas)])
    got = {r["id"]: r["a"] for r in _rows(t.refresh().to_arrow())}
    assert got == {0: 2, 1: 2, 2: 99, 3: 2, 4: 2}
    assert _rows(t.to_arrow()) == _rust_rows(paimon_warehouse, "db.u")
    assert sorted(e.file.level for e in t.plan()) == [0, 5]


def test_we_compact_a_pypaimon_table_and_pypaimon_reads_it(pypaimon_catalog, spark_catalog):
    from tools.pypaimon_env import remote_module
    Schema = remote_module("pypaimon").Schema

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.int64()), ("b", pa.string())])
    pypaimon_catalog.create_database("db", True)
    pypaimon_catalog.create_table("db.p", Schema.from_pyarrow_schema(
        schema, primary_keys=["id"], options={"bucket": "2", "merge-engine": "partial-update"}), False)
    pt = pypaimon_catalog.get_table("db.p")
    for batch in ([{"id": i, "a": i, "b": None} for i in range(10)],
                  [{"id": i, "a": None, "b": f"b{i}"} for i in range(0, 10, 2)],
                  [{"id": i, "a": -i, "b": None} for i in range(0, 10, 3)]):
        wb = pt.new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(pa.Table.from_pylist(batch, schema=schema))
        c.commit(w.prepare_commit())
        w.close()
        c.close()
    before = _pypaimon_rows(pypaimon_catalog, "db.p")
    t = spark_catalog.load_table("db.p")
    assert t.rewrite_data_files() is not None
    assert len(t.refresh().plan_files()) == 2
    assert _pypaimon_rows(pypaimon_catalog, "db.p") == before == _rows(t.to_arrow())
