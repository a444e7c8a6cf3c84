"""Merge-on-read UPDATE and MERGE are written by one Spark job, as the JVM runtime writes them:
the tasks that write a data file's position delete file (format v2) or deletion vector (v3) also
write the updated and inserted rows they receive, with the rows' lineage on v3. Nothing is
checkpointed and the changed rows are not read twice; the table ends exactly as a copy-on-write
twin of it does, and a task failing at either write leaves the table and its directory as they
were."""
import pytest

from icefloe.core.faults import FaultInjectingFileIO
from icefloe.catalog import Catalog
from tests.iceberg.twin_tables import in_group, jobs, sorted_rows, twins, write_modes
from tests.reliability.rel_util import all_files

@pytest.mark.parametrize("version", ["2", "3"])
def test_update_and_merge_write_deletes_and_rows_in_one_job(catalog, spark, version):
    mor, cow = twins(catalog, spark, version, 400, {"format-version": version})
    got = in_group(spark, f"mor-update-{version}",
                   lambda: mor.update({"name": "concat(name, '!')", "p": "p + 10"}, where="id % 9 = 4"))
    assert cow.update({"name": "concat(name, '!')", "p": "p + 10"}, where="id % 9 = 4")["updated"] == got["updated"] == 44
    stages = [name for job in jobs(spark, f"mor-update-{version}") for name in job]
    # every Spark job of the statement is the one that writes (no checkpoint, no count, no second
    # pass): the JVM's writer, which takes partitioned tables too
    assert stages and all("ChangeWriter.java" in s for s in stages), stages
    assert sorted_rows(mor) == sorted_rows(cow)

    source = spark.range(390, 420).selectExpr("id", "'merged' as name", "cast(id % 4 as int) as p")
    for t in (mor, cow):
        out = t.merge(source, "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute()
        assert (out["updated"], out["inserted"]) == (10, 20)
    assert sorted_rows(mor) == sorted_rows(cow)
    added = [f for f in mor.refresh().inspect.files().collect() if f["content"] == 1]
    if version == "3":      # deletion vectors, one per data file: every one names its data file
        assert added and all(f["file_format"] == "PUFFIN" and f["referenced_data_file"] for f in added)
    else:
        assert added and all(f["file_format"] == "PARQUET" for f in added)


@pytest.mark.parametrize("version", ["2", "3"])
def test_update_scan_reads_no_column_the_update_overwrites(catalog, spark, version, monkeypatch):
    """Only the updated rows are written, so a column set to a value that does not read it (here a
    constant) is not read at all; copy-on-write rewrites the untouched rows too and reads it."""
    from icefloe.spark import iceberg_dml

    mor, cow = twins(catalog, spark, version, 400, {"format-version": version})
    plans = []
    real = iceberg_dml.commit_changes

    def spy(table, req):
        plans.append(req.labelled(req.read.tasks)._jdf.queryExecution().executedPlan().toString())
        return real(table, req)

    monkeypatch.setattr(iceberg_dml, "commit_changes", spy)
    for t in (mor, cow):
        assert t.update({"name": "'changed'"}, where="id % 7 = 1")["updated"] == 57
    read = [p[p.index("ReadSchema: "):].split("\n")[0] for p in plans]
    assert "name" not in read[0] and "id:bigint" in read[0], read[0]
    assert "name:string" in read[1], read[1]
    assert sorted_rows(mor) == sorted_rows(cow)


@pytest.mark.parametrize("fault", ["deletes.puffin", ".parquet"])
@pytest.mark.parametrize("op", ["update", "merge"])
def test_a_task_failing_at_either_write_leaves_the_table_as_it_was(tmp_path, spark, op, fault):
    """On a v3 table the tasks write the new rows (.parquet) and then the vectors (.puffin):
    a fault at either leaves no file behind and the table unchanged."""
    wh = str(tmp_path / "wh")
    t = Catalog(wh, spark=spark).create_table("db.t", "id bigint not null, name string",
                                              properties={"format-version": "3", **write_modes("merge-on-read")})
    t.append(spark.range(0, 100, 1, 2).selectExpr("id", "cast(id as string) as name"))
    before, rows = all_files(wh), sorted_rows(t)
    faulty = Catalog(wh, io=FaultInjectingFileIO(task_fault=fault), spark=spark).load_table("db.t")
    with pytest.raises(Exception, match="injected fault in a task"):
        if op == "update":
            faulty.update({"name": "'u'"}, where="id % 3 = 0")
        else:
            faulty.merge(spark.range(95, 105).selectExpr("id", "'m' as name"), "t.id = s.id") \
                .when_matched_update_all().when_not_matched_insert_all().execute()
    assert all_files(wh) == before, sorted(all_files(wh) - before)
    assert sorted_rows(t) == rows
