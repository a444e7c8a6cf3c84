"""Apache Iceberg's own Java runtime (1.10, on Spark 3.5) as an oracle, both ways, format v2.

The runtime runs in its own environment (``tools/jvm_runtime.py``, set up by ``make test``) and
one process serves this module. Each side computes its rows on its own: the expected rows are
plain Python, and each engine's answer is compared with them.

* icefloe writes (appends, merge-on-read and copy-on-write DELETE / UPDATE / MERGE, schema and
  partition evolution) and the runtime reads every snapshot, its metadata tables and the data;
* the runtime writes (row-level changes in both modes, evolution) and icefloe reads every snapshot,
  then appends and deletes, and the runtime reads icefloe's commits.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import icefloe  # noqa: E402

COLS = "id, name, v, unix_micros(ts) AS ts, unix_date(d) AS d, CAST(amount AS STRING) AS amount"


@pytest.fixture(scope="module")
def jvm(tmp_path_factory, iceberg_runtime):
    return iceberg_runtime(None, tmp_path_factory.mktemp("jvm-warehouse"))


def jvm_rows(jvm, location, snapshot_id=None, where=""):
    option = f".option('snapshot-id', {snapshot_id})" if snapshot_id else ""
    code = (f"df = spark.read.format('iceberg'){option}.load(location)\n"
            f"df.createOrReplaceTempView('jvm_read')\n"
            f"result = rows(spark.sql(\"SELECT {COLS} FROM jvm_read {where}\"))")
    return sorted(tuple(r) for r in jvm.run(code, location=location))


def icefloe_rows(spark, table, snapshot_id=None):
    table.to_spark(snapshot_id=snapshot_id).createOrReplaceTempView("icefloe_read")
    return sorted(tuple(r) for r in spark.sql(f"SELECT {COLS} FROM icefloe_read").collect())


def expected(model: dict) -> list:
    return sorted((i, *vals) for i, vals in model.items())


def _row(i: int, name: str) -> tuple:
    # (name, v, ts micros, date days, amount text), the values both engines compute from i
    return (name, i * 0.5, (1_700_000_000 + i * 3600) * 1_000_000, 19_000 + i % 40, f"{i % 1000}.25")


def _data(spark, ids, name):
    return spark.createDataFrame([(i, name) for i in ids], "i bigint, name string").selectExpr(
        "i AS id", "name", "CAST(i AS DOUBLE) * 0.5 AS v", "timestamp_seconds(1700000000 + i * 3600) AS ts",
        "date_from_unix_date(19000 + CAST(i % 40 AS INT)) AS d", "CAST(i % 1000 + 0.25 AS DECIMAL(10,2)) AS amount")


SCHEMA = "id bigint, name string, v double, ts timestamp, d date, amount decimal(10,2)"


@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_the_runtime_reads_every_snapshot_icefloe_writes(catalog, spark, jvm, mode):
    t = catalog.create_table("db.ours", SCHEMA, partitioned_by=["day(ts)", "bucket(4, id)"], properties={
        "write.delete.mode": mode, "write.update.mode": mode, "write.merge.mode": mode})
    model: dict = {}
    states = []

    def record():
        states.append((t.refresh().current_snapshot().snapshot_id, expected(model)))

    t.append(_data(spark, range(0, 60), "a"))
    model.update({i: _row(i, "a") for i in range(60)})
    record()
    t.append(_data(spark, range(60, 90), "b"))
    model.update({i: _row(i, "b") for i in range(60, 90)})
    record()
    t.delete("id % 7 = 0")
    for i in [i for i in model if i % 7 == 0]:
        del model[i]
    record()
    t.update({"name": "'upd'"}, where="id % 5 = 1")
    for i in [i for i in model if i % 5 == 1]:
        model[i] = _row(i, "upd")
    record()
    src = _data(spark, list(range(80, 100, 2)), "merged")
    t.merge(src, "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute()
    for i in range(80, 100, 2):
        model[i] = _row(i, "merged")
    record()
    assert len(states) == 5
    for snapshot_id, rows in states:
        assert jvm_rows(jvm, t.location, snapshot_id) == rows, snapshot_id
    # metadata tables: the runtime sees the snapshots and live files icefloe committed
    got = jvm.run("result = rows(spark.read.format('iceberg').load(location + '#snapshots')"
                  ".select('snapshot_id', 'operation'))", location=t.location)
    assert sorted(r[0] for r in got) == sorted(s for s, _ in states)
    assert {r[1] for r in got} >= {"append", "overwrite"}
    files = jvm.run("result = rows(spark.read.format('iceberg').load(location + '#files')"
                    ".selectExpr('content', 'record_count'))", location=t.location)
    live = {f.file_path: f for f in t.plan_files()}
    assert sum(r[1] for r in files if r[0] == 0) == sum(f.record_count for f in live.values())
    if mode == "merge-on-read":
        assert any(r[0] == 1 for r in files), "merge-on-read changes wrote no position delete files"
    # the runtime filters on a partition source column and prunes as icefloe planned
    assert jvm_rows(jvm, t.location, where="WHERE id BETWEEN 10 AND 20") == \
        [r for r in expected(model) if 10 <= r[0] <= 20]


def test_icefloe_reads_what_the_runtime_writes_and_the_runtime_reads_icefloes_commits(spark, jvm, tmp_path):
    jvm.sql("CREATE TABLE jvm.db.theirs (id bigint, name string, v double, ts timestamp, d date, "
            "amount decimal(10,2)) USING iceberg PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='2', "
            "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
            "'write.merge.mode'='merge-on-read')")
    values = ", ".join(f"({i}, 'j', {i * 0.5}, timestamp_seconds({1_700_000_000 + i * 3600}), "
                       f"date_from_unix_date({19_000 + i % 40}), {i % 1000}.25)" for i in range(50))
    jvm.sql(f"INSERT INTO jvm.db.theirs VALUES {values}")
    model = {i: _row(i, "j") for i in range(50)}
    states = []

    def record():
        sid = jvm.sql("SELECT snapshot_id FROM jvm.db.theirs.snapshots ORDER BY committed_at DESC LIMIT 1")[0][0]
        states.append((sid, expected(model)))

    record()
    jvm.sql("DELETE FROM jvm.db.theirs WHERE id % 6 = 0")
    for i in [i for i in model if i % 6 == 0]:
        del model[i]
    record()
    jvm.sql("UPDATE jvm.db.theirs SET name = 'u' WHERE id % 4 = 1")
    for i in [i for i in model if i % 4 == 1]:
        model[i] = _row(i, "u")
    record()
    jvm.sql("MERGE INTO jvm.db.theirs t USING (SELECT id, 'm' AS name, id * 0.5 AS v, timestamp_seconds(1700000000 + "
            "id * 3600) AS ts, date_from_unix_date(19000 + CAST(id % 40 AS INT)) AS d, "
            "CAST(id % 1000 + 0.25 AS DECIMAL(10,2)) AS amount FROM range(40, 60)) s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    for i in range(40, 60):
        model[i] = _row(i, "m")
    record()
    jvm.sql("ALTER TABLE jvm.db.theirs ADD COLUMN note string")
    location = jvm.table_location("db.theirs")
    t = icefloe.load_table(location)
    for snapshot_id, rows in states:
        assert icefloe_rows(spark, t, snapshot_id) == rows, snapshot_id
    assert icefloe_rows(spark, t) == expected(model)
    assert jvm.sql("SELECT count(*) FROM jvm.db.theirs.delete_files")[0][0] > 0   # merge-on-read really happened
    # icefloe commits on the runtime's table; the runtime reads both commits
    t.append(_data(spark, range(100, 110), "ours").selectExpr("*", "CAST(NULL AS STRING) AS note"))
    model.update({i: _row(i, "ours") for i in range(100, 110)})
    t.delete("id < 10")
    for i in [i for i in model if i < 10]:
        del model[i]
    jvm.sql("REFRESH TABLE jvm.db.theirs")
    assert jvm_rows(jvm, location) == expected(model)
    got = jvm.sql(f"SELECT {COLS} FROM jvm.db.theirs")
    assert sorted(tuple(r) for r in got) == expected(model)


_LOAD_EACH = """
tables = spark._jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
result = []
for location in locations:
    m = tables.load(location).operations().current()
    refs = m.refs()
    result.append({
        "format": m.formatVersion(), "schema": m.currentSchemaId(), "spec": m.defaultSpecId(),
        "order": m.defaultSortOrderId(), "snapshots": [s.snapshotId() for s in m.snapshots()],
        "main": m.currentSnapshot().snapshotId() if m.currentSnapshot() is not None else None,
        "refs": {name: [refs[name].snapshotId(), refs[name].isBranch()] for name in refs.keySet()},
        "seq": m.lastSequenceNumber(), "last_column": m.lastColumnId(),
        "next_row_id": m.nextRowId() if m.formatVersion() >= 3 else None,
        "columns": [f.name() for f in m.schema().columns()]})
"""


def test_the_runtime_loads_what_the_commit_validation_accepts(jvm, tmp_path):
    """Seeded lists of valid updates (the model of tests/iceberg/test_metadata_builder.py), applied
    by the validating builder, give metadata that Iceberg's Java runtime loads, with the format
    version, ids, snapshots, refs and sequence numbers the model predicts."""
    import random

    from icefloe.core.io import FileIO
    from icefloe.core.schema_input import to_schema
    from icefloe.iceberg.hadoop import HadoopTableOperations
    from icefloe.iceberg.metadata_builder import apply_changes, update_from_json
    from icefloe.iceberg.partitioning import PartitionSpec
    from icefloe.iceberg.table_metadata import new_table_metadata
    from tests.iceberg.test_metadata_builder import KINDS, Model

    rng = random.Random(48)
    # eight seeded lists, and one that surely has format 3 with row lineage on two snapshots
    lists = [[rng.choice(KINDS) for _ in range(rng.randint(4, 12))] for _ in range(8)]
    lists.append(["upgrade", "schema", "current-schema", "snapshot", "ref", "order", "default-order",
                  "snapshot", "ref", "spec", "default-spec"])
    cases = []
    for kinds in lists:
        model, updates = Model(), []
        for kind in kinds:
            doc, ok = model.step(kind, True)
            if ok:                               # a step the model refuses leaves it where it was
                updates.append(update_from_json(doc))
        location = str(tmp_path / f"t{len(cases)}")
        base = new_table_metadata(location, to_schema("id bigint, s string"), PartitionSpec([], 0), {})
        HadoopTableOperations(FileIO(), location).commit(None, None, apply_changes(base, updates))
        cases.append((location, model, [u.to_json()["action"] for u in updates]))
    actions = {a for _, _, done in cases for a in done}
    assert {"add-snapshot", "set-snapshot-ref", "upgrade-format-version", "add-schema", "add-spec"} <= actions
    assert cases[-1][1].format_version == 3 and len(cases[-1][1].snapshots) == 2
    loaded = jvm.run(_LOAD_EACH, locations=[loc for loc, _, _ in cases])
    for (location, model, done), got in zip(cases, loaded):
        expect = {"format": model.format_version, "schema": model.current_schema, "spec": model.default_spec,
                  "order": model.default_order, "snapshots": model.snapshots, "main": model.main,
                  "refs": {} if model.main is None else {"main": [model.main, True]}, "seq": model.last_seq,
                  "last_column": model.last_column_id,
                  "next_row_id": model.next_row_id if model.format_version >= 3 else None,
                  # schema n (n > 0) of the model adds columns c3 .. c(n+2)
                  "columns": ["id", "s"] + [f"c{i}" for i in range(3, model.current_schema + 3)]}
        assert got == expect, (location, done)


_LOAD_TRANSACTION = """
m = spark._jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration()).load(location) \\
    .operations().current()
snap = m.currentSnapshot()
result = {"previous_files": m.previousFiles().size(), "snapshots": m.snapshots().size(),
          "parent": snap.parentId(), "snapshot_schema": snap.schemaId(), "schema": m.currentSchemaId(),
          "columns": [f.name() for f in m.schema().columns()], "owner": m.properties().get("owner"),
          "operation": snap.operation(),
          "rows": sorted(rows(spark.read.format('iceberg').load(location).selectExpr('id', 's', 'x')))}
"""


def test_a_transaction_is_one_snapshot_and_one_metadata_version_for_the_runtime_and_pyiceberg(jvm, tmp_path):
    """Schema change + append + property change in one ``t.transaction()``: Iceberg's Java runtime
    and pyiceberg each load ONE new metadata version (one more previous file) holding ONE new
    snapshot, written under the new schema, with the new property, and read the rows."""
    import pyarrow as pa
    from pyiceberg.table import StaticTable

    cat = icefloe.Catalog(str(tmp_path / "tx-wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.tx", "id bigint, s string")
    t.append(pa.table({"id": pa.array([1], pa.int64()), "s": ["a"]}))
    first = t.current_snapshot().snapshot_id
    before = jvm.run(_LOAD_TRANSACTION.replace(", 'x'", ""), location=t.location)
    with t.transaction() as tx:
        with tx.update_schema() as u:
            u.add_column("x", "double")
        tx.append(pa.table({"id": pa.array([2], pa.int64()), "s": ["b"], "x": [2.5]}))
        tx.update_properties(set={"owner": "etl"})
    got = jvm.run(_LOAD_TRANSACTION, location=t.location)
    assert got["previous_files"] == before["previous_files"] + 1 and got["snapshots"] == before["snapshots"] + 1
    assert got["parent"] == first and got["snapshot_schema"] == got["schema"] == 1
    assert got["columns"] == ["id", "s", "x"] and got["owner"] == "etl" and got["operation"] == "append"
    assert got["rows"] == [[1, "a", None], [2, "b", 2.5]]
    py = StaticTable.from_metadata(t.refresh().metadata_location)
    assert len(py.metadata.metadata_log) == before["previous_files"] + 1 and len(py.metadata.snapshots) == 2
    snap = py.current_snapshot()
    assert snap.parent_snapshot_id == first and snap.schema_id == py.metadata.current_schema_id == 1
    assert py.properties["owner"] == "etl"
    assert sorted(py.scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "s": "a", "x": None}, {"id": 2, "s": "b", "x": 2.5}]
