"""Merge-on-read changes written by icefloe's JVM writer (``ChangeWriter.java``) on tables it
takes: the position delete files (v2) or deletion vectors (v3) and the new rows' data files come
from Spark's own Parquet writer, with no Python worker. pyiceberg and DuckDB read the result as
icefloe does; the files carry what the spec asks (field ids, one data file per delete file, a
vector per data file merged with its earlier deletes, lineage kept on v3); a null in a required
column fails the job with its typed error and leaves the table and its directory as they were."""
import glob
import os

import pyarrow.parquet as pq
import pytest

from icefloe.catalog import Catalog
from icefloe.errors import RequiredFieldNullError
from icefloe.spark import iceberg_change_writer
from tests.interop_util import duckdb_connection, pyiceberg_table
from tests.reliability.rel_util import all_files

MOR = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read",
       "write.merge.mode": "merge-on-read"}


@pytest.fixture
def jvm_writes(monkeypatch):
    """Counts the jobs ``ChangeWriter`` runs, by whether they wrote rows."""
    calls = {"rows": 0, "positions": 0}
    original = iceberg_change_writer.write

    def counted(*args, **kwargs):
        row_meta = kwargs.get("row_meta", args[9] if len(args) > 9 else None)
        calls["positions" if row_meta is None else "rows"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(iceberg_change_writer, "write", counted)
    return calls


def _latest(t) -> str:
    return sorted(glob.glob(os.path.join(t.location, "metadata", "*.metadata.json")))[-1]


def _theirs(t) -> tuple:
    location = _latest(t)
    arrow = pyiceberg_table(location).scan().to_arrow()
    pyiceberg_rows = sorted(zip(arrow.column("id").to_pylist(), arrow.column("name").to_pylist()))
    duck = sorted(duckdb_connection().execute(f"SELECT id, name FROM iceberg_scan('{location}')").fetchall())
    return pyiceberg_rows, duck


@pytest.mark.parametrize("version", ["2", "3"])
def test_changes_written_by_the_jvm_read_alike_everywhere(tmp_path, spark, jvm_writes, version):
    t = Catalog(str(tmp_path / "wh"), spark=spark).create_table(
        "db.t", "id bigint not null, name string", properties={"format-version": version, **MOR})
    t.append(spark.range(0, 3000, 1, 2).selectExpr("id", "concat('n', cast(id as string)) as name"))
    appended = {f.file_path for f in t.plan_files()}
    model = {i: f"n{i}" for i in range(3000)}
    ids_before = ({r["id"]: r["_row_id"] for r in t.to_spark(row_lineage=True).select("id", "_row_id").collect()}
                  if version == "3" else None)

    t.delete("id % 10 = 1")
    model = {k: v for k, v in model.items() if k % 10 != 1}
    t.update({"name": "'u'"}, where="id % 10 = 2")
    model.update({k: "u" for k in model if k % 10 == 2})
    updated_at = t.refresh().metadata.current_snapshot.sequence_number
    t.delete("id % 10 = 3")              # a second change to the same data files (merged into one vector on v3)
    model = {k: v for k, v in model.items() if k % 10 != 3}
    source = spark.range(2990, 3010).selectExpr("id", "'m' as name")
    t.merge(source, "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute()
    model.update({i: "m" for i in range(2990, 3010)})

    assert jvm_writes == {"rows": 2, "positions": 2}
    expected = sorted(model.items())
    assert sorted((r["id"], r["name"]) for r in t.refresh().to_arrow().to_pylist()) == expected
    assert _theirs(t) == (expected, expected)

    files = t.inspect.files().collect()
    deletes = [f for f in files if f["content"] == 1]
    # the tasks' counts: data files' rows less the deleted positions are the live rows
    assert (sum(f["record_count"] for f in files if f["content"] == 0)
            - sum(f["record_count"] for f in deletes)) == len(model)
    assert deletes and all(f["referenced_data_file"] for f in deletes)
    # the rows the JVM wrote carry the table's field ids (and, on v3, the lineage fields' ids)
    ids = {"id": 1, "name": 2, "_row_id": 2147483540, "_last_updated_sequence_number": 2147483539}
    written = [f["file_path"] for f in files if f["content"] == 0 and f["file_path"] not in appended]
    assert written
    for path in written:
        stored = {fld.name: int(fld.metadata[b"PARQUET:field_id"]) for fld in pq.read_schema(path.removeprefix("file:"))}
        assert stored == {k: v for k, v in ids.items() if version == "3" or not k.startswith("_")}
    if version == "3":
        # one vector per data file, holding every deleted position of it (the earlier vectors merged in)
        assert all(f["file_format"] == "PUFFIN" for f in deletes)
        assert len({f["referenced_data_file"] for f in deletes}) == len(deletes)
        live = t.to_spark(row_lineage=True).select("id", "_row_id", "_last_updated_sequence_number").collect()
        kept = {r["id"]: r["_row_id"] for r in live if r["id"] < 2990}
        assert kept == {k: ids_before[k] for k in kept}, "updated rows keep their row ids"
        assert {r["_last_updated_sequence_number"] for r in live if r["id"] < 2990 and r["id"] % 10 == 2} == {updated_at}
    else:
        assert all(f["file_format"] == "PARQUET" for f in deletes)
    assert not [p for p in all_files(str(tmp_path / "wh")) if p.endswith(".crc")]


@pytest.fixture
def waits(monkeypatch):
    """The pauses (seconds) taken while a failed job is cleaned up (``icefloe.spark.jobs``)."""
    from icefloe.spark import jobs

    taken: list = []
    original = jobs.time.sleep

    class Clock:
        monotonic = staticmethod(jobs.time.monotonic)

        @staticmethod
        def sleep(seconds):
            taken.append(seconds)
            original(seconds)

    monkeypatch.setattr(jobs, "time", Clock)
    return taken


@pytest.mark.parametrize("sorted_table", [False, True])
def test_a_null_in_a_required_column_fails_the_jvm_job_and_changes_nothing(tmp_path, spark, jvm_writes, waits,
                                                                            sorted_table):
    """The JVM's job fails with the typed error and leaves nothing, without waiting out the Python
    workers' kill timeout (it has none); a sorted table's rows go through Python workers, and
    their failed job does wait for them before its last clean-up."""
    wh = str(tmp_path / "wh")
    t = Catalog(wh, spark=spark).create_table("db.t", "id bigint not null, name string not null",
                                              properties={"format-version": "2", **MOR})
    if sorted_table:
        t.replace_sort_order("id")
    t.append(spark.range(0, 50, 1, 2).selectExpr("id", "cast(id as string) as name"))
    before = all_files(wh)
    rows = sorted(tuple(r.values()) for r in t.to_arrow().to_pylist())
    with pytest.raises(RequiredFieldNullError, match="name"):
        t.update({"name": "cast(null as string)"}, where="id % 5 = 0")
    assert jvm_writes["rows"] == (0 if sorted_table else 1)
    kill_timeout = spark.sparkContext._jsc.sc().conf().getTimeAsSeconds("spark.python.task.killTimeout", "2s")
    assert any(w >= kill_timeout for w in waits) == sorted_table, waits
    assert all_files(wh) == before
    assert sorted(tuple(r.values()) for r in t.refresh().to_arrow().to_pylist()) == rows


@pytest.mark.parametrize("version", ["2", "3"])
def test_partitioned_changes_written_by_the_jvm_land_in_their_partitions(tmp_path, spark, jvm_writes, version):
    """Rows the JVM writes into a partitioned table: each data file holds one partition's rows,
    records that partition and sits in its directory. An UPDATE moves rows to another partition and
    a MERGE inserts into more partitions than a task keeps files open at once; pyiceberg and DuckDB
    read the result as the model says, pyiceberg's partition pruning included."""
    from pyiceberg.transforms import BucketTransform
    from pyiceberg.types import LongType

    t = Catalog(str(tmp_path / "wh"), spark=spark).create_table(
        "db.t", "id bigint not null, name string, grp string", partitioned_by=["grp", "bucket(4, id)"],
        properties={"format-version": version, **MOR})
    t.append(spark.range(0, 2000, 1, 2).selectExpr("id", "concat('n', cast(id as string)) as name",
                                                   "concat('g_', cast(id % 3 as string)) as grp"))
    appended = {f.file_path for f in t.plan_files()}
    model = {i: (f"n{i}", f"g_{i % 3}") for i in range(2000)}
    t.update({"grp": "'moved/é'", "name": "'u'"}, where="id % 10 = 2")
    model.update({k: ("u", "moved/é") for k in model if k % 10 == 2})
    source = spark.range(1990, 2400, 1, 2).selectExpr("id", "'m' as name", "concat('p', cast(id % 40 as string)) as grp")
    t.merge(source, "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute()
    model.update({i: ("m", f"p{i % 40}") for i in range(1990, 2400)})
    assert jvm_writes["rows"] == 2

    expected = sorted((k, n, g) for k, (n, g) in model.items())
    assert sorted((r["id"], r["name"], r["grp"]) for r in t.refresh().to_arrow().to_pylist()) == expected
    location = _latest(t)
    arrow = pyiceberg_table(location).scan().to_arrow()
    assert sorted(zip(*(arrow.column(c).to_pylist() for c in ("id", "name", "grp")))) == expected
    duck = duckdb_connection().execute(f"SELECT id, name, grp FROM iceberg_scan('{location}')").fetchall()
    assert sorted(duck) == expected
    for grp in ("moved/é", "p7", "g_1"):
        got = pyiceberg_table(location).scan(row_filter=f"grp = '{grp}'").to_arrow().column("id").to_pylist()
        assert sorted(got) == sorted(k for k, (_n, g) in model.items() if g == grp)

    bucket = BucketTransform(4).transform(LongType())
    written = [f for f in t.plan_files() if f.file_path not in appended]
    assert len({f.partition for f in written}) > 16     # more partitions than a task keeps open
    for f in written:
        rows = pq.read_table(f.file_path.removeprefix("file:"), columns=["id", "grp"]).to_pylist()
        grp, b = f.partition
        assert rows and {r["grp"] for r in rows} == {grp} and {bucket(r["id"]) for r in rows} == {b}
        assert f"/data/{t.metadata.spec.partition_path(t.metadata.schema, f.partition)}/" in f.file_path


def test_where_the_jvm_writer_applies(tmp_path, spark):
    cat = Catalog(str(tmp_path / "wh"), spark=spark)
    plain = cat.create_table("db.plain", "id bigint, name string", properties={"format-version": "2"})
    parted = cat.create_table("db.parted", "id bigint, name string", partitioned_by=["bucket(2, id)"])
    nested = cat.create_table("db.nested", "id bigint, s struct<a: int>")
    by_partition = cat.create_table("db.bypart", "id bigint", properties={"write.delete.granularity": "partition"})
    usable = iceberg_change_writer.usable
    assert usable(spark, plain.metadata, plain.io, plain.metadata)
    # deletes go to the JVM on any spec, and rows to a table of flat columns without a sort order
    assert usable(spark, parted.metadata, parted.io) and usable(spark, parted.metadata, parted.io, parted.metadata)
    sorted_t = cat.create_table("db.sorted", "id bigint, name string")
    sorted_t.replace_sort_order("id")
    assert usable(spark, sorted_t.metadata, sorted_t.io) and not usable(spark, sorted_t.metadata, sorted_t.io,
                                                                         sorted_t.metadata)
    assert not usable(spark, nested.metadata, nested.io, nested.metadata)
    assert not usable(spark, by_partition.metadata, by_partition.io)
    # a v3 table's earlier deletes are read by the tasks: a position delete file that is not Parquet keeps Python's
    from icefloe.iceberg.manifest import POSITION_DELETES, DataFile

    v3 = cat.create_table("db.v3", "id bigint", properties={"format-version": "3"})
    target = f"{v3.location}/data/a.parquet"
    vector = DataFile(f"{v3.location}/data/d.puffin", "PUFFIN", (), 3, 100, content=POSITION_DELETES,
                      referenced_data_file=target, content_offset=4, content_size_in_bytes=40)
    avro = DataFile(f"{v3.location}/data/p.avro", "AVRO", (), 3, 100, content=POSITION_DELETES)
    assert usable(spark, v3.metadata, v3.io, previous={target: [vector]})
    assert not usable(spark, v3.metadata, v3.io, previous={target: [vector, avro]})


@pytest.mark.parametrize("mode", ["-rw-------", "-rw-r-----", "-rwxr-xr-x", "-r--r--r--"])
def test_local_files_set_the_mode_hadoop_asks_for(spark, tmp_path, mode):
    """``LocalFiles`` (the file system of the JVM writer's local files) sets a file's mode with
    Java's file API, where Hadoop's own starts a ``chmod`` process per file."""
    import stat

    jvm = spark._jvm
    fs = jvm.icefloe.jvm.LocalFiles()
    fs.initialize(jvm.java.net.URI("file:///"), spark._jsc.hadoopConfiguration())
    f = tmp_path / "f.parquet"
    f.write_bytes(b"x")
    fs.setPermission(jvm.org.apache.hadoop.fs.Path(str(f)), jvm.org.apache.hadoop.fs.permission.FsPermission.valueOf(mode))
    expected = sum(bit for ch, bit in zip(mode[1:], (0o400, 0o200, 0o100, 0o40, 0o20, 0o10, 0o4, 0o2, 0o1)) if ch != "-")
    assert stat.S_IMODE(os.stat(f).st_mode) == expected


def test_local_files_serve_local_outputs_only(spark):
    """The writers name ``LocalFiles`` as the ``file:`` file system only for a write to local
    files: a connector such as S3A keeps the settings it was created with and asks them for its
    own local buffer files, where a class of an added jar may not load (every native write to S3
    on a cluster failed with ``ClassNotFoundException: icefloe.jvm.LocalFiles``)."""
    jvm = spark._jvm
    local_files = jvm.icefloe.jvm.LocalFiles
    path = jvm.org.apache.hadoop.fs.Path

    def settings_for(target):
        conf = jvm.org.apache.hadoop.conf.Configuration(False)
        local_files.useFor(path(target), conf)
        return conf.get("fs.file.impl")

    assert settings_for("file:/tmp/wh/db/t/data") == "icefloe.jvm.LocalFiles"
    assert settings_for("/tmp/wh/db/t/data") == "icefloe.jvm.LocalFiles"     # the default file system
    for remote in ("s3a://bucket/wh/db/t/data", "s3://bucket/wh/t", "hdfs://nn:8020/wh/t", "gs://b/wh/t"):
        assert settings_for(remote) is None, remote
