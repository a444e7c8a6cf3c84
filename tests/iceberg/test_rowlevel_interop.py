"""DELETE / UPDATE / MERGE in both write modes, read back by icefloe (Spark and Arrow), pyiceberg and DuckDB,
checked against the same statement computed by Spark on a plain DataFrame."""
import datetime as dt
import os
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from icefloe.iceberg.delete_files import FILE_PATH_ID, POS_ID
from tests.interop_util import duckdb_connection, pyiceberg_table

SCHEMA = "id bigint not null, name string, cat string, ts timestamp"
MODES = ["copy-on-write", "merge-on-read"]


def _rows(ids):
    return [(i, f"n{i}", ["a", "b", "c"][i % 3], dt.datetime(2023 - i % 2, 3, 1)) for i in ids]


def _props(mode):
    return {f"write.{op}.mode": mode for op in ("delete", "update", "merge")}


def _state(df):
    return sorted((r.id, r.name, r.cat) for r in df.collect())


def _check_readers(t, expected):
    assert _state(t.to_spark()) == expected
    a = t.to_arrow()
    assert sorted(zip(a["id"].to_pylist(), a["name"].to_pylist(), a["cat"].to_pylist())) == expected
    p = pyiceberg_table(t.metadata_location).scan().to_arrow()
    assert sorted(zip(p["id"].to_pylist(), p["name"].to_pylist(), p["cat"].to_pylist())) == expected
    d = duckdb_connection().execute(f"select id, name, cat from iceberg_scan('{t.metadata_location}')").fetchall()
    assert sorted(d) == expected


@pytest.mark.parametrize("mode", MODES)
def test_statements_agree_with_plain_dataframes(catalog, spark, mode):
    t = catalog.create_table("db.t", SCHEMA, partitioned_by=["cat"], properties=_props(mode))
    schema = "id bigint, name string, cat string, ts timestamp"
    plain = spark.createDataFrame(_rows(range(1, 41)), schema)
    t.append(plain.where("id <= 20"))
    t.append(plain.where("id > 20"))

    # DELETE
    r = t.delete("id % 7 = 0 or name = 'n11'")
    plain = plain.where(~F.coalesce(F.expr("id % 7 = 0 or name = 'n11'"), F.lit(False))).localCheckpoint()
    assert r["deleted"] == 6
    assert t.current_snapshot().operation == ("overwrite" if mode == "copy-on-write" else "delete")
    _check_readers(t, _state(plain))

    # UPDATE
    r = t.update({"name": "concat(name, '_u')", "id": "id + 100"}, where="cat = 'b' and id > 10")
    cond = F.expr("cat = 'b' and id > 10")
    assert r["updated"] == plain.where(cond).count() == 9
    plain = plain.select(F.when(cond, F.col("id") + 100).otherwise(F.col("id")).alias("id"),
                         F.when(cond, F.concat("name", F.lit("_u"))).otherwise(F.col("name")).alias("name"),
                         "cat", "ts").localCheckpoint()
    _check_readers(t, _state(plain))

    # DELETE of a whole partition (metadata only: no rows rewritten, no delete files)
    r = t.delete("cat = 'c'")
    plain = plain.where("cat != 'c'").localCheckpoint()
    sm = t.current_snapshot().summary
    assert sm["operation"] == "delete" and "added-data-files" not in sm
    assert sm.get("added-delete-files") is None
    _check_readers(t, _state(plain))

    # MERGE with every kind of clause
    src = spark.createDataFrame([(2, "m2", "a", "U"), (4, "m4", "b", "D"), (5, "m5", "c", "U"), (200, "m200", "a", "I"),
                                 (201, "m201", "b", "X")], "id bigint, name string, cat string, op string")
    src = src.withColumn("ts", F.lit(dt.datetime(2024, 1, 1)))
    r = (t.merge(src, "t.id = s.id")
         .when_matched_delete(condition="s.op = 'D'")
         .when_matched_update({"name": "s.name"})
         .when_not_matched_insert_all(condition="s.op = 'I'")
         .when_not_matched_insert({"id": "s.id", "name": "'ins'", "cat": "s.cat"})
         .when_not_matched_by_source_update({"name": "upper(t.name)"}, condition="t.id between 30 and 33")
         .when_not_matched_by_source_delete(condition="t.id > 37")
         .execute())
    model = {row[0]: list(row) for row in plain.collect()}
    src_rows = {row.id: row for row in src.collect()}
    counts = {"updated": 0, "deleted": 0, "inserted": 0}
    for i, s in src_rows.items():
        if i in model:
            if s.op == "D":
                del model[i]
                counts["deleted"] += 1
            else:
                model[i][1] = s.name
                counts["updated"] += 1
        else:
            model[i] = [i, s.name if s.op == "I" else "ins", s.cat, None]
            counts["inserted"] += 1
    for i in list(model):
        if i in src_rows:
            continue
        if 30 <= i <= 33 and i <= 40:
            model[i][1] = model[i][1].upper()
            counts["updated"] += 1
        elif i > 37 and i < 200:
            del model[i]
            counts["deleted"] += 1
    assert {k: r[k] for k in counts} == counts
    _check_readers(t, sorted((v[0], v[1], v[2]) for v in model.values()))

    if mode == "merge-on-read":
        assert int(t.current_snapshot().summary["total-delete-files"]) > 0
        _check_position_delete_files(t)
    # compaction folds every delete file in and leaves the rows as they are
    expected = sorted((v[0], v[1], v[2]) for v in model.values())
    snap = t.rewrite_data_files()
    assert snap.operation == "replace"
    assert snap.summary["total-delete-files"] == "0" and snap.summary["total-records"] == str(len(expected))
    _check_readers(t, expected)


def _check_position_delete_files(t):
    deletes = {d.file_path: d for task in t.plan_tasks() for d in task.deletes}
    assert deletes
    for path, d in deletes.items():
        assert d.content == 1
        pf = pq.ParquetFile(path)
        ids = [pf.schema_arrow.field(i).metadata[b"PARQUET:field_id"] for i in range(2)]
        assert pf.schema_arrow.names == ["file_path", "pos"] and ids == [str(FILE_PATH_ID).encode(), str(POS_ID).encode()]
        rows = list(zip(*[c.to_pylist() for c in pf.read().columns]))
        assert rows == sorted(rows) and d.record_count == len(rows)


def test_equality_deletes_and_sequence_numbers(catalog, spark):
    t = catalog.create_table("db.eq", SCHEMA, partitioned_by=["cat"])
    t.append(spark.createDataFrame(_rows(range(1, 13)), "id bigint, name string, cat string, ts timestamp"))
    # keys without the partition column: written once per live partition, no data read
    snap = t.delete_by_key(spark.createDataFrame([(1,), (2,), (3,)], "id bigint"))
    assert snap.operation == "delete" and snap.summary["added-equality-deletes"] == "9"
    assert snap.summary["added-delete-files"] == "3"
    # rows appended later with a deleted key are not deleted (equality deletes apply to older data only)
    t.append(spark.createDataFrame(_rows([1]), "id bigint, name string, cat string, ts timestamp"))
    expected = sorted((i, f"n{i}", ["a", "b", "c"][i % 3]) for i in [1] + list(range(4, 13)))
    assert _state(t.to_spark()) == expected
    a = t.to_arrow()
    assert sorted(zip(a["id"].to_pylist(), a["name"].to_pylist(), a["cat"].to_pylist())) == expected
    d = duckdb_connection().execute(f"select id, name, cat from iceberg_scan('{t.metadata_location}')").fetchall()
    assert sorted(d) == expected
    # keys with the partition column go to their partition only; a null key deletes null values
    t.append(spark.createDataFrame([(50, None, "a", None)], "id bigint, name string, cat string, ts timestamp"))
    snap = t.delete_by_key(pa.table({"cat": ["a", "c", "b"], "name": [None, "n5", "n5"]}))
    assert snap.summary["added-delete-files"] == "3"
    expected = [e for e in expected if e[1] != "n5"]
    assert _state(t.to_spark()) == expected
    # the Spark data source applies deletes too
    got = spark.read.format("icefloe").load(t.location).select("id", "name", "cat").collect()
    assert sorted(tuple(r) for r in got) == expected
    t.rewrite_data_files()
    assert t.current_snapshot().summary["total-delete-files"] == "0"
    assert _state(t.to_spark()) == expected


class _FileCatalog:
    """Just enough of a pyiceberg catalog to commit to a metadata file (no sqlalchemy here)."""

    @staticmethod
    def make():
        from pyiceberg.catalog.noop import NoopCatalog
        from pyiceberg.serializers import ToOutputFile
        from pyiceberg.table import CommitTableResponse
        from pyiceberg.table.update import update_table_metadata

        class FileCatalog(NoopCatalog):
            def commit_table(self, table, requirements, updates):
                for req in requirements:
                    req.validate(table.metadata)
                new = update_table_metadata(table.metadata, updates, metadata_location=table.metadata_location)
                loc = os.path.join(os.path.dirname(table.metadata_location), f"pyiceberg-{uuid.uuid4()}.metadata.json")
                ToOutputFile.table_metadata(new, table.io.new_output(loc))
                return CommitTableResponse(metadata=new, metadata_location=loc)

        return FileCatalog("files")


def test_icefloe_reads_rows_deleted_by_pyiceberg(catalog, spark, tmp_path):
    import icefloe

    t = icefloe.Catalog(str(tmp_path / "first"), spark=spark).create_table("db.src", SCHEMA, partitioned_by=["cat"])
    t.append(spark.createDataFrame(_rows(range(1, 31)), "id bigint, name string, cat string, ts timestamp"))
    t.delete("id = 3")  # our own row-level commit first
    theirs = pyiceberg_table(t.metadata_location)
    theirs.catalog = _FileCatalog.make()
    theirs.delete("id < 10")
    theirs.delete("cat == 'b'")
    adopted = catalog.register_table("db.adopted", theirs.metadata_location)
    expected = sorted((i, f"n{i}", ["a", "b", "c"][i % 3]) for i in range(10, 31) if i % 3 != 1)
    assert _state(adopted.to_spark()) == expected
    # and our row-level changes continue on top of pyiceberg's commits, in merge-on-read too
    adopted.ops  # noqa: B018
    r = adopted.update({"name": "'z'"}, where="id = 12")
    assert r["updated"] == 1
    expected = [(i, "z" if i == 12 else n, c) for i, n, c in expected]
    assert _state(adopted.to_spark()) == expected
    p = pyiceberg_table(adopted.metadata_location).scan().to_arrow()
    assert sorted(zip(p["id"].to_pylist(), p["name"].to_pylist(), p["cat"].to_pylist())) == expected
