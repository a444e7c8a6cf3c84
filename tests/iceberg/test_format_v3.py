"""Iceberg format v3: deletion vectors and row-id assignment, with Apache Iceberg's Java runtime
(1.10, Spark 3.5) as the oracle both ways, and pyiceberg and DuckDB reading icefloe's v3 tables.

Expected rows are plain Python models; every engine's answer is compared with them.
"""
from __future__ import annotations

import glob
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import icefloe  # noqa: E402
from icefloe.errors import UnsupportedFeatureError, UnsupportedFormatVersionError  # noqa: E402
from icefloe.iceberg.manifest_reader import snapshot_manifests  # noqa: E402
from tests.interop_util import JVM_LOAD_TABLE, iceberg_referees, duckdb_connection, pyiceberg_table  # noqa: E402

MOR = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read",
       "write.merge.mode": "merge-on-read"}


@pytest.fixture(scope="module", params=iceberg_referees())
def jvm(request, tmp_path_factory, iceberg_runtime):
    return iceberg_runtime(request.param, tmp_path_factory.mktemp("jvm-v3"))


def jvm_read(jvm, location, snapshot_id=None, cols="id, name", vectorized=True):
    option = f".option('snapshot-id', {snapshot_id})" if snapshot_id else ""
    if not vectorized:
        option += ".option('vectorization-enabled', 'false')"
    return sorted(tuple(r) for r in jvm.run(
        f"result = rows(spark.read.format('iceberg'){option}.load(location).selectExpr(*cols.split(', ')))",
        location=location, cols=cols))


def ours(t, snapshot_id=None):
    return sorted(tuple(r) for r in t.to_spark(snapshot_id=snapshot_id).select("id", "name").collect())


def model_rows(model: dict) -> list:
    return sorted(model.items())


def _rows(spark, ids, name):
    return spark.createDataFrame([(i, name) for i in ids], "id bigint, name string")


def test_icefloe_writes_v3_with_deletion_vectors_and_row_ids_the_runtime_reads(catalog, spark, jvm):
    t = catalog.create_table("db.v3", "id bigint, name string", partitioned_by=["bucket(2, id)"],
                             properties={"format-version": "3", **MOR})
    assert t.metadata.format_version == 3 and t.metadata.next_row_id == 0
    assert "format-version" not in t.metadata.properties
    model: dict = {}
    states = []

    def record():
        t.refresh()
        states.append((t.metadata.current_snapshot_id, model_rows(model)))

    t.append(_rows(spark, range(0, 60), "a"))
    model.update({i: "a" for i in range(60)})
    record()
    t.append(_rows(spark, range(60, 90), "b"))
    model.update({i: "b" for i in range(60, 90)})
    record()
    t.delete("id % 7 = 0")
    for i in [i for i in model if i % 7 == 0]:
        del model[i]
    record()
    t.delete("id % 7 = 1")               # a second vector for the same data files: merged with the first
    for i in [i for i in model if i % 7 == 1]:
        del model[i]
    record()
    t.update({"name": "'u'"}, where="id % 5 = 2")
    for i in [i for i in model if i % 5 == 2]:
        model[i] = "u"
    record()
    t.merge(_rows(spark, range(80, 100, 2), "m"), "t.id = s.id").when_matched_update_all() \
        .when_not_matched_insert_all().execute()
    for i in range(80, 100, 2):
        model[i] = "m"
    record()
    for snapshot_id, rows in states:
        assert ours(t, snapshot_id) == rows
        assert jvm_read(jvm, t.location, snapshot_id) == rows, snapshot_id

    # only deletion vectors were written (v3 forbids new position delete files), at most one per data file
    files = jvm.run("result = rows(spark.read.format('iceberg').load(location + '#files')"
                    ".selectExpr('content', 'file_format', 'referenced_data_file', 'record_count'))", location=t.location)
    deletes = [r for r in files if r[0] == 1]
    assert deletes and all(r[1] == "PUFFIN" and r[2] for r in deletes)
    assert len({r[2] for r in deletes}) == len(deletes)
    live = {r[2]: r[3] for r in deletes}
    assert all(target in {f.file_path for f in t.plan_files()} for target in live)

    # row ids: every row has one, unique, below the table's next row id; each snapshot assigned
    # the rows its manifests added
    meta = t.refresh().metadata
    got = jvm_read(jvm, t.location, cols="id, _row_id, _last_updated_sequence_number")
    row_ids = [r[1] for r in got]
    assert len(set(row_ids)) == len(row_ids) and all(0 <= r < meta.next_row_id for r in row_ids)
    first = meta.snapshots[0]
    assert (first.first_row_id, first.added_rows) == (0, 60)
    assert meta.snapshots[1].first_row_id == 60
    untouched = {r[0]: r for r in got if r[0] < 60 and model[r[0]] == "a"}
    assert all(r[2] == first.sequence_number for r in untouched.values())
    for s in meta.snapshots:
        data = [m for m in snapshot_manifests(t.io, s) if m.content == 0]
        assert all(m.first_row_id is not None for m in data)

    # pyiceberg and DuckDB read the v3 table with its vectors
    location = sorted(glob.glob(os.path.join(t.location, "metadata", "*.metadata.json")))[-1]
    arrow = pyiceberg_table(location).scan().to_arrow()
    assert sorted(zip(arrow.column("id").to_pylist(), arrow.column("name").to_pylist())) == model_rows(model)
    con = duckdb_connection()
    assert sorted(con.execute(f"SELECT id, name FROM iceberg_scan('{location}')").fetchall()) == model_rows(model)


@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_rows_keep_their_ids_through_changes_and_compaction(catalog, spark, jvm, mode):
    """Row lineage as the runtime reads it: an updated row keeps its ``_row_id`` and takes the
    change's sequence number; untouched rows keep both, also through copy-on-write rewrites and
    compaction; inserted rows get new ids."""
    t = catalog.create_table(f"db.lineage_{mode[:3]}", "id bigint, name string", partitioned_by=["bucket(2, id)"],
                             properties={"format-version": "3", "write.delete.mode": mode,
                                         "write.update.mode": mode, "write.merge.mode": mode})
    t.append(_rows(spark, range(0, 60), "a"))
    t.append(_rows(spark, range(60, 90), "b"))

    def lineage():
        theirs = {r[0]: (r[1], r[2]) for r in jvm_read(jvm, t.location,
                                                       cols="id, _row_id, _last_updated_sequence_number")}
        mine = {r[0]: (r[1], r[2]) for r in t.refresh().to_spark(row_lineage=True)
                .select("id", "_row_id", "_last_updated_sequence_number").collect()}
        assert mine == theirs                         # icefloe reads the lineage the runtime reads
        return theirs

    before = lineage()
    assert len({v[0] for v in before.values()}) == 90
    t.update({"name": "'u'"}, where="id % 5 = 2")
    seq = t.refresh().current_snapshot().sequence_number
    after = lineage()
    for i, (row_id, last) in after.items():
        assert row_id == before[i][0], i
        assert last == (seq if i % 5 == 2 else before[i][1]), i

    next_id = t.metadata.next_row_id
    t.merge(_rows(spark, range(80, 100, 2), "m"), "t.id = s.id").when_matched_update_all() \
        .when_not_matched_insert_all().execute()
    seq = t.refresh().current_snapshot().sequence_number
    merged = lineage()
    for i, (row_id, last) in merged.items():
        if i >= 90:                                   # inserted: a new id, this commit's number
            assert row_id >= next_id and last == seq, i
        elif i >= 80 and i % 2 == 0:                  # matched: its id kept, this commit's number
            assert (row_id, last) == (after[i][0], seq), i
        else:
            assert (row_id, last) == after[i], i
    assert len({v[0] for v in merged.values()}) == len(merged)

    t.delete("id % 7 = 0")
    kept = {i: v for i, v in merged.items() if i % 7}
    assert lineage() == kept
    t.rewrite_data_files()
    assert lineage() == kept
    assert sorted(ours(t.refresh())) == sorted(jvm_read(jvm, t.location))


def test_icefloe_reads_and_changes_the_runtimes_v3_tables(spark, jvm):
    jvm.sql("CREATE TABLE jvm.db.theirs (id bigint, name string) USING iceberg PARTITIONED BY (bucket(2, id)) "
            "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read', "
            "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')")
    jvm.sql("INSERT INTO jvm.db.theirs SELECT id, 'j' FROM range(0, 80)")
    model = {i: "j" for i in range(80)}
    states = []

    def record():
        sid = jvm.sql("SELECT snapshot_id FROM jvm.db.theirs.snapshots ORDER BY committed_at DESC LIMIT 1")[0][0]
        states.append((sid, model_rows(model)))

    record()
    jvm.sql("DELETE FROM jvm.db.theirs WHERE id % 6 = 0")
    for i in [i for i in model if i % 6 == 0]:
        del model[i]
    record()
    jvm.sql("UPDATE jvm.db.theirs SET name = 'u' WHERE id % 4 = 1")
    for i in [i for i in model if i % 4 == 1]:
        model[i] = "u"
    record()
    jvm.sql("MERGE INTO jvm.db.theirs t USING (SELECT id, 'm' AS name FROM range(70, 90)) s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    for i in range(70, 90):
        model[i] = "m"
    record()
    location = jvm.table_location("db.theirs")
    t = icefloe.load_table(location)
    assert t.metadata.format_version == 3
    for snapshot_id, rows in states:
        assert ours(t, snapshot_id) == rows, snapshot_id
    assert sorted(zip(*[t.to_arrow().column(c).to_pylist() for c in ("id", "name")])) == model_rows(model)

    # icefloe deletes from data files that already have the runtime's vectors, and appends
    before = t.metadata.next_row_id
    t.delete("id % 6 = 1")
    for i in [i for i in model if i % 6 == 1]:
        del model[i]
    t.append(_rows(spark, range(200, 210), "ours"))
    model.update({i: "ours" for i in range(200, 210)})
    t.refresh()
    assert t.metadata.next_row_id == before + 10
    jvm.sql("REFRESH TABLE jvm.db.theirs")
    assert sorted(tuple(r) for r in jvm.sql("SELECT id, name FROM jvm.db.theirs")) == model_rows(model)
    # still one vector per data file: icefloe's replaced the runtime's rather than adding a second
    per_file = jvm.sql("SELECT referenced_data_file, count(*) FROM jvm.db.theirs.delete_files GROUP BY 1")
    assert per_file and all(n == 1 for _, n in per_file)
    ids = jvm.sql("SELECT _row_id FROM jvm.db.theirs")
    assert len({r[0] for r in ids}) == len(ids)
    # and the runtime writes on after icefloe
    jvm.sql("DELETE FROM jvm.db.theirs WHERE id = 200")
    del model[200]
    assert ours(t.refresh()) == model_rows(model)


def test_a_v2_table_upgraded_to_v3_keeps_its_position_deletes_and_writes_vectors(catalog, spark, jvm):
    t = catalog.create_table("db.up", "id bigint, name string", properties=MOR)
    t.append(_rows(spark, range(40), "a"))
    originals = {f.file_path for f in t.plan_files()}
    t.delete("id % 10 = 0")                    # v2 position deletes
    model = {i: "a" for i in range(40) if i % 10}
    with pytest.raises(UnsupportedFeatureError, match="format version 3"):
        t.to_spark(row_lineage=True)
    with pytest.raises(UnsupportedFormatVersionError, match="4"):
        t.update_properties({"format-version": "4"})
    t.update_properties({"format-version": "3"})
    assert t.refresh().metadata.format_version == 3 and t.metadata.next_row_id == 0
    with pytest.raises(UnsupportedFormatVersionError, match="downgraded"):
        t.update_properties({"format-version": "2"})
    t.delete("id % 10 = 1")                    # vectors holding the earlier deletes of their files too
    for i in range(1, 40, 10):
        del model[i]
    t.append(_rows(spark, range(100, 103), "b"))
    model.update({i: "b" for i in range(100, 103)})
    assert ours(t.refresh()) == model_rows(model)
    assert jvm_read(jvm, t.location) == model_rows(model)
    deletes = jvm.run("result = rows(spark.read.format('iceberg').load(location + '#delete_files')"
                      ".selectExpr('file_format', 'referenced_data_file', 'record_count'))", location=t.location)
    vectors = [r for r in deletes if r[0] == "PUFFIN"]
    assert {r[1] for r in vectors} == originals
    assert sum(r[2] for r in vectors) == 8     # the four rows of each delete, old and new merged
    assert {r[0] for r in deletes} <= {"PUFFIN", "PARQUET"}
    # the upgrade's first commit assigned row ids to the rows written before it, and the append's
    meta = t.metadata
    assert meta.next_row_id >= 43
    ids = [r[1] for r in jvm_read(jvm, t.location, cols="id, _row_id")]
    assert len(set(ids)) == len(ids)


def test_check_verifies_deletion_vectors_against_their_puffin_footer(catalog, spark):
    t = catalog.create_table("db.checked", "id bigint, name string", properties={"format-version": "3", **MOR})
    t.append(_rows(spark, range(50), "a"))
    t.delete("id % 4 = 0")
    t.delete("id % 4 = 1")
    report = t.check()
    assert report.ok, report.problems
    files = t.inspect.files().collect()
    vectors = [r for r in files if r["content"] == 1]
    assert vectors and all(r["file_format"] == "PUFFIN" and r["referenced_data_file"] and
                           r["content_offset"] is not None and r["content_size_in_bytes"] for r in vectors)
    assert sum(r["record_count"] for r in vectors) == 26
    positions = t.inspect.position_deletes().collect()
    assert len(positions) == 26 and {r["file_path"] for r in positions} == {r["referenced_data_file"] for r in vectors}
    assert all(r["first_row_id"] is not None for r in files if r["content"] == 0)
    summary = t.current_snapshot().summary
    assert summary["added-dvs"] == summary["removed-dvs"] == str(len(vectors))
    # a flipped byte inside one vector's bitmap is named by check, as is a wrong offset
    v = vectors[0]
    data = bytearray(open(v["file_path"], "rb").read())
    data[v["content_offset"] + 12] ^= 0xFF
    open(v["file_path"], "wb").write(bytes(data))
    problems = [p.message for p in t.check().problems]
    assert any("checksum" in m for m in problems), problems


ADD_DEFAULTS = JVM_LOAD_TABLE + """
T = jvm.org.apache.iceberg.types.Types
L = jvm.org.apache.iceberg.expressions.Literal
t.updateSchema().addColumn("c", T.IntegerType.get(), "with a default", L.of(5)).commit()
t.updateSchema().addColumn("s", T.StringType.get(), "with a default", L.of("hello")).commit()
result = 'ok'
"""


def test_default_values_of_the_runtimes_columns_are_read_and_written(spark, jvm):
    jvm.sql("CREATE TABLE jvm.db.defaults (id bigint) USING iceberg TBLPROPERTIES ('format-version'='3')")
    jvm.sql("INSERT INTO jvm.db.defaults VALUES (1), (2)")
    location = jvm.table_location("db.defaults")
    jvm.run(ADD_DEFAULTS, location=location)          # columns added with initial and write defaults
    jvm.sql("REFRESH TABLE jvm.db.defaults")
    jvm.sql("INSERT INTO jvm.db.defaults VALUES (3, 7, 'x'), (4, null, null)")
    t = icefloe.load_table(location)
    field = t.metadata.schema.find_field(2)
    assert (field.initial_default, field.write_default) == (5, 5)
    expected = [(1, 5, "hello"), (2, 5, "hello"), (3, 7, "x"), (4, None, None)]
    assert sorted(tuple(r) for r in t.to_spark().collect()) == expected
    assert sorted(tuple(r) for r in t.to_spark(where="c = 5").collect()) == expected[:2]
    arrow = t.to_arrow()
    assert sorted(zip(*[arrow.column(c).to_pylist() for c in ("id", "c", "s")])) == expected
    # icefloe writes the write default for a column the data lacks (Spark and Arrow), and keeps nulls given
    t.append(spark.createDataFrame([(5,)], "id bigint"))
    import pyarrow as pa

    t.append(pa.table({"id": pa.array([6], pa.int64())}))
    t.append(spark.createDataFrame([(7, None)], "id bigint, c int"))
    expected += [(5, 5, "hello"), (6, 5, "hello"), (7, None, "hello")]
    assert sorted(tuple(r) for r in t.refresh().to_spark().collect()) == expected
    jvm.sql("REFRESH TABLE jvm.db.defaults")
    assert sorted(tuple(r) for r in jvm.sql("SELECT id, c, s FROM jvm.db.defaults")) == expected
    # the schema icefloe commits keeps the defaults
    t.update({"s": "'y'"}, where="id = 1")
    assert t.refresh().metadata.schema.find_field(3).initial_default == "hello"


def test_columns_added_with_defaults_by_icefloe_read_the_same_in_the_runtime(catalog, spark, jvm):
    import datetime
    import decimal

    v2 = catalog.create_table("db.nodefaults", "id bigint")
    with pytest.raises(Exception, match="format version 3"):
        v2.update_schema().add_column("c", "int", default=1).commit()
    t = catalog.create_table("db.withdefaults", "id bigint", properties={"format-version": "3"})
    t.append(_rows(spark, [1, 2], "x").select("id"))
    (t.update_schema().add_column("n", "int", default=7).add_column("d", "date", default=datetime.date(2024, 2, 29))
     .add_column("amount", "decimal(9, 2)", default=decimal.Decimal("1.5"))
     .add_column("ts", "timestamptz", default="2024-03-01T10:00:00+00:00").commit())
    with pytest.raises(Exception, match="does not fit"):
        t.update_schema().add_column("bad", "int", default="seven").commit()
    fields = {f.name: f for f in t.refresh().metadata.schema.fields}
    assert (fields["d"].initial_default, fields["amount"].initial_default) == ("2024-02-29", "1.50")
    t.append(spark.createDataFrame([(3,)], "id bigint"))
    cols = "id, n, unix_date(d) AS d, CAST(amount AS STRING) AS amount, unix_micros(ts) AS ts"
    want = [(i, 7, 19782, "1.50", 1709287200000000) for i in (1, 2, 3)]
    # (the runtime's vectorized Parquet reader fails on a decimal column with a default, in its own
    # tables too: "Cannot cast default value to int"; its row reader is used here)
    assert jvm_read(jvm, t.location, cols=cols, vectorized=False) == want
    t.to_spark().createOrReplaceTempView("with_defaults")
    assert sorted(tuple(r) for r in spark.sql(f"SELECT {cols} FROM with_defaults").collect()) == want


def test_expiry_compaction_and_orphan_cleanup_know_puffin_files(catalog, spark):
    import time

    t = catalog.create_table("db.maint", "id bigint, name string", properties={"format-version": "3", **MOR})
    t.append(_rows(spark, range(60), "a"))
    t.delete("id % 5 = 0")
    first = {f.file_path for task in _tasks(t) for f in task.deletes}
    t.delete("id % 5 = 1")                     # new vectors replace the first ones
    second = {f.file_path for task in _tasks(t) for f in task.deletes}
    assert first and second and not first & second
    model = [(i, "a") for i in range(60) if i % 5 > 1]
    # expiring the first delete's snapshot removes the Puffin files no live snapshot uses
    t.expire_snapshots(older_than=int(time.time() * 1000) + 1, retain_last=1)
    assert not any(os.path.exists(p) for p in first) and all(os.path.exists(p) for p in second)
    assert ours(t.refresh()) == model
    assert t.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000, dry_run=True) == []
    # compaction folds the vectors in: no delete file is left, the rows are the same
    t.rewrite_data_files()
    assert not any(task.deletes for task in _tasks(t.refresh()))
    assert ours(t) == model and t.check().ok


def _tasks(t):
    from icefloe.iceberg import scan as scan_mod

    return scan_mod.plan_files(t.io, t.metadata, t.metadata.current_snapshot)
