"""Deleted positions read by the scan's tasks from where the table formats keep them
(``deleted_rows.source_options``, ``DeleteSources.java``): Iceberg position delete files (only the
rows naming the task's data file count), Iceberg deletion vectors in Puffin files and Paimon
deletion vectors in index files, against plain Spark's rows less the deleted ones; damaged sources
fail the read naming the file; and the tables' reads take this path, the driver reading no deletes."""
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyroaring import BitMap, BitMap64

from icefloe.catalog import Catalog
from icefloe.core.io import LOCAL
from icefloe.errors import CorruptDataFileError
from icefloe.iceberg import puffin
from icefloe.paimon import deletion_vectors as dv
from icefloe.spark import deleted_rows, jvm
from icefloe.spark import iceberg_read

PATH_ID, POS_ID = 2147483546, 2147483545


@pytest.fixture(scope="module")
def files(spark, tmp_path_factory):
    """Three data files of 4,000 rows each (ids k*10,000 + position), in several row groups."""
    base = tmp_path_factory.mktemp("deletes-in-scan")
    paths = []
    for k in range(3):
        out = str(base / f"f{k}")
        (spark.range(k * 10_000, k * 10_000 + 4_000, 1, 1).selectExpr("id", "cast(id as string) AS s")
         .write.option("parquet.block.size", 8 * 1024).parquet(out))
        paths += [f"{out}/{f}" for f in sorted(os.listdir(out)) if f.endswith(".parquet")]
    return paths


def _position_file(path: str, pairs: list, row_group_size: int = 1000) -> str:
    """A position delete file as Iceberg writes one: (file_path, pos) sorted, with the field ids."""
    pairs = sorted(pairs)
    schema = pa.schema([pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": str(PATH_ID).encode()}),
                        pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": str(POS_ID).encode()})])
    table = pa.table({"file_path": [p for p, _ in pairs], "pos": [x for _, x in pairs]}, schema=schema)
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


def _ids(df) -> list:
    return sorted(r.id for r in df.select("id").collect())


def _kept(files, deleted: dict) -> list:
    """The ids of ``files`` (each named by its directory ``f<k>``) less the ``deleted`` positions."""
    return sorted(int(os.path.basename(os.path.dirname(f))[1:]) * 10_000 + p for f in files for p in range(4000)
                  if p not in deleted.get(f, ()))


def _scan(spark, files, sources):
    # as many positions as the driver would leave to the tasks (an upper bound is all the options need)
    assert deleted_rows.source_options(spark, sources, deleted_rows.DRIVER_READ_POSITIONS) is None
    options = deleted_rows.source_options(spark, sources, deleted_rows.DRIVER_READ_POSITIONS + 1)
    assert options is not None and deleted_rows.OPTION not in options
    return spark.read.format(deleted_rows.CLASS).options(**options).load(files)


@pytest.mark.parametrize("vectorized", [True, False])
def test_each_kind_of_source_drops_exactly_its_positions(spark, files, tmp_path, vectorized):
    assert jvm.available(spark)
    rng = np.random.default_rng(11)
    by_file = {f: set(rng.choice(4000, n, replace=False).tolist()) for f, n in zip(files, (400, 50, 700))}
    # one position delete file naming all three data files: each file takes only its own rows
    shared = _position_file(str(tmp_path / "pos-shared.parquet"), [(f, p) for f in files for p in by_file[f]])
    # an Iceberg vector for files[0] and a Paimon vector for files[1], on top of the shared file
    extra0 = set(range(0, 4000, 7)) - by_file[files[0]]
    extra1 = set(range(3000, 4000))
    blobs = puffin.write_vectors(LOCAL, str(tmp_path / "dv.puffin"), [(files[0], BitMap64(extra0))])
    vec = dv.serialize(BitMap(extra1))
    index = tmp_path / "index-0"
    index.write_bytes(b"\x01" + vec)
    sources = {f: [(deleted_rows.POSITION_FILE, shared, 0, 0)] for f in files}
    sources[files[0]].append((deleted_rows.ICEBERG_VECTOR, str(tmp_path / "dv.puffin"), blobs[0].offset,
                              blobs[0].length))
    sources[files[1]].append((deleted_rows.PAIMON_VECTOR, str(index), 1, len(vec) - 8))
    deleted = {files[0]: by_file[files[0]] | extra0, files[1]: by_file[files[1]] | extra1, files[2]: by_file[files[2]]}
    key = "spark.sql.parquet.enableVectorizedReader"
    old = spark.conf.get(key)
    spark.conf.set(key, str(vectorized).lower())
    try:
        df = _scan(spark, files, sources)
        assert _ids(df) == _kept(files, deleted)
        # a pushed filter (row groups skipped): positions are still each row's own
        assert _ids(df.where("id >= 3500 AND id < 13600")) == [i for i in _kept(files, deleted) if 3500 <= i < 13600]
    finally:
        spark.conf.set(key, old)


def test_a_file_split_across_tasks_reads_its_deletes_in_each(spark, files, tmp_path):
    gone = set(range(1, 4000, 3))
    pos = _position_file(str(tmp_path / "pos.parquet"), [(files[2], p) for p in gone])
    key = "spark.sql.files.maxPartitionBytes"
    old = spark.conf.get(key)
    spark.conf.set(key, "8192")
    try:
        df = _scan(spark, files[2:], {files[2]: [(deleted_rows.POSITION_FILE, pos, 0, 0)]})
        assert df.rdd.getNumPartitions() > 1
        assert _ids(df) == _kept(files[2:], {files[2]: gone})
    finally:
        spark.conf.set(key, old)


@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
def test_plain_position_files_of_one_data_file_drop_exactly_their_positions(spark, files, tmp_path, page_version):
    """Position delete files whose rows all name one data file, ``pos`` required and PLAIN (no
    dictionary: as Spark writes a large one), in several row groups of several pages each, are read
    straight from their pages; one with ``pos`` optional, or dictionary-encoded, through the column
    reader. Each data file loses exactly the positions of its own files, none of another's."""
    rng = np.random.default_rng(5)
    gone = {f: set(rng.choice(4000, n, replace=False).tolist()) for f, n in zip(files, (1500, 9, 2200))}
    gone[files[1]] |= {0, 3999}           # the first and the last row
    sources: dict = {}
    for k, f in enumerate(files):
        positions = sorted(gone[f])
        halves = (positions[::2], positions[1::2])       # two files for each data file, interleaved
        for h, part in enumerate(halves):
            required = not (k == 2 and h == 1)            # one optional pos: the column reader's path
            plain = not (k == 0 and h == 1)               # one dictionary-encoded: the column reader's path
            schema = pa.schema([
                pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": str(PATH_ID).encode()}),
                pa.field("pos", pa.int64(), not required, {b"PARQUET:field_id": str(POS_ID).encode()})])
            path = str(tmp_path / f"pos-{k}-{h}.parquet")
            pq.write_table(pa.table({"file_path": [f] * len(part), "pos": part}, schema=schema), path,
                           row_group_size=300, data_page_size=512, compression="zstd",
                           use_dictionary=["file_path"] if plain else True, data_page_version=page_version)
            meta = pq.ParquetFile(path).metadata
            chunk = meta.row_group(0).column(1)
            assert chunk.has_dictionary_page == (not plain), chunk
            assert meta.num_row_groups > 1 or len(part) <= 300
            sources.setdefault(f, []).append((deleted_rows.POSITION_FILE_OF_ONE, path, 0, 0))
    df = _scan(spark, files, sources)
    assert _ids(df) == _kept(files, gone)
    for f in files:         # each data file alone: only its own sources apply to it
        assert _ids(_scan(spark, [f], {f: sources[f]})) == _kept([f], gone)


@pytest.mark.parametrize("dictionary", [True, False])
def test_kept_rows_of_every_column_type_move_down_in_runs(spark, tmp_path, dictionary):
    """Deleted rows taken out of the vectorized reader's batches, the kept rows moved down run by
    run in each vector's own arrays: every column type (nulls among them, strings dictionary-encoded
    or not) keeps exactly the values of its rows, against Spark's plain read of the same file."""
    out = str(tmp_path / "typed")
    (spark.range(0, 9000, 1, 1).selectExpr(
        "id", "cast(id % 7 AS int) AS i", "cast(id AS double) / 3 AS d", "cast(id AS float) AS f",
        "id % 3 = 0 AS b", "cast(id % 100 AS tinyint) AS t", "cast(id % 1000 AS smallint) AS sh",
        "date_add(date'2020-01-01', cast(id % 500 AS int)) AS dt", "timestamp_seconds(id) AS ts",
        "cast(id AS decimal(9, 2)) AS d9", "cast(id AS decimal(18, 3)) AS d18", "cast(id AS decimal(30, 4)) AS d30",
        "IF(id % 5 = 0, NULL, concat('v', cast(id % 13 AS string))) AS s",
        "IF(id % 11 = 0, NULL, id * 2) AS n", "cast(id AS string) AS u")
     .write.option("parquet.enable.dictionary", str(dictionary).lower()).parquet(out))
    [data] = [f"{out}/{f}" for f in os.listdir(out) if f.endswith(".parquet")]
    rng = np.random.default_rng(3)
    # sparse single rows, a run of 300, the first and the last rows
    gone = set(rng.choice(9000, 400, replace=False).tolist()) | set(range(4000, 4300)) | {0, 8999}
    pos = _position_file(str(tmp_path / "pos.parquet"), [(data, p) for p in gone])
    got = _scan(spark, [data], {data: [(deleted_rows.POSITION_FILE_OF_ONE, pos, 0, 0)]})
    plain = spark.read.parquet(data)
    expected = (plain.select("*", "_metadata.row_index").where(~plain["id"].isin(sorted(gone)))
                .drop("row_index"))
    assert sorted(map(tuple, got.collect())) == sorted(map(tuple, expected.collect()))
    assert got.count() == 9000 - len(gone)


def _failure(spark, files, source) -> str:
    with pytest.raises(Exception) as info:
        _scan(spark, files[:1], {files[0]: [source]}).collect()
    return str(info.value)


def test_damaged_sources_fail_the_read_naming_the_file(spark, files, tmp_path):
    blob = puffin.serialize_vector(BitMap64([1, 2, 3]))
    bad_crc = tmp_path / "crc.puffin"
    bad_crc.write_bytes(b"PFA1" + blob[:-1] + bytes([blob[-1] ^ 1]))
    msg = _failure(spark, files, (deleted_rows.ICEBERG_VECTOR, str(bad_crc), 4, len(blob)))
    assert "crc.puffin" in msg and "checksum" in msg, msg
    short = tmp_path / "short.puffin"
    short.write_bytes(b"PFA1" + blob[:8])
    msg = _failure(spark, files, (deleted_rows.ICEBERG_VECTOR, str(short), 4, len(blob)))
    assert "short.puffin" in msg and "ends before" in msg, msg
    vec = bytearray(dv.serialize(BitMap([5])))
    vec[4] ^= 0xFF                                  # the magic number
    index = tmp_path / "index-bad"
    index.write_bytes(b"\x01" + bytes(vec))
    msg = _failure(spark, files, (deleted_rows.PAIMON_VECTOR, str(index), 1, len(vec) - 8))
    assert "index-bad" in msg and "magic" in msg, msg
    not_deletes = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1]}), str(not_deletes))
    msg = _failure(spark, files, (deleted_rows.POSITION_FILE, str(not_deletes), 0, 0))
    assert "other.parquet" in msg and "not a position delete file" in msg, msg


@pytest.fixture
def driver_reads_no_deletes(monkeypatch):
    """Reading positions of deletes on the driver fails the test (position delete files of any
    size are left to the tasks)."""
    def refuse(*_a, **_k):
        raise AssertionError("the driver read deleted positions")

    monkeypatch.setattr(deleted_rows, "DRIVER_READ_POSITIONS", 0)

    monkeypatch.setattr(iceberg_read, "positions_by_data_file", refuse)
    monkeypatch.setattr(dv.BucketVectors, "load", refuse)


@pytest.mark.parametrize("version", ["2", "3"])
def test_iceberg_reads_take_the_deletes_in_their_tasks(spark, tmp_path, driver_reads_no_deletes, version):
    cat = Catalog(str(tmp_path / "wh"), spark=spark)
    t = cat.create_table("db.t", "id bigint, s string", properties={
        "format-version": version, "write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"})
    t.append(spark.range(0, 3000, 1, 3).selectExpr("id", "cast(id as string) AS s"))
    t.delete("id % 5 = 1")
    t.update({"s": "'u'"}, where="id % 7 = 2")
    t.delete("id >= 2900")
    assert int(t.refresh().current_snapshot().summary["total-delete-files"]) >= 1
    rows = sorted((r.id, r.s) for r in t.to_spark().collect())
    assert rows == [(i, "u" if i % 7 == 2 else str(i)) for i in range(2900) if i % 5 != 1]
    plan = t.to_spark()._jdf.queryExecution().executedPlan().toString()
    assert plan.count("FileScan icefloe-parquet") == 1 and "Join" not in plan, plan
    # a row-level change reads its target the same way
    assert t.delete("id % 5 = 2")["deleted"] == len([i for i in range(2900) if i % 5 == 2])
    assert t.refresh().to_spark().count() == len([i for i in range(2900) if i % 5 not in (1, 2)])


def test_few_deleted_positions_are_read_on_the_driver_many_in_the_tasks(spark, tmp_path, monkeypatch):
    read = []
    original = iceberg_read.positions_by_data_file
    monkeypatch.setattr(iceberg_read, "positions_by_data_file", lambda *a: read.append(1) or original(*a))
    cat = Catalog(str(tmp_path / "wh"), spark=spark)
    for version in ("2", "3"):
        t = cat.create_table(f"db.t{version}", "id bigint", properties={
            "format-version": version, "write.delete.mode": "merge-on-read"})
        t.append(spark.range(0, 1000, 1, 2))
        t.delete("id % 4 = 0")
        for limit, on_driver in ((250, 1), (249, 0)):         # 250 positions deleted
            monkeypatch.setattr(deleted_rows, "DRIVER_READ_POSITIONS", limit)
            read.clear()
            assert sorted(r.id for r in t.refresh().to_spark().collect()) == [i for i in range(1000) if i % 4]
            assert len(read) == on_driver, (version, limit)


def test_iceberg_read_names_a_missing_delete_file(spark, tmp_path, monkeypatch):
    monkeypatch.setattr(deleted_rows, "DRIVER_READ_POSITIONS", 0)
    cat = Catalog(str(tmp_path / "wh"), spark=spark)
    t = cat.create_table("db.t", "id bigint", properties={"write.delete.mode": "merge-on-read"})
    t.append(spark.range(0, 100, 1, 1))
    t.delete("id % 2 = 0")
    gone = [os.path.join(r, f) for r, _d, fs in os.walk(str(tmp_path / "wh")) for f in fs if "deletes" in f]
    assert len(gone) == 1
    os.unlink(gone[0])
    with pytest.raises(CorruptDataFileError) as info:
        t.refresh().to_spark()
    assert info.value.path == gone[0] and "missing" in str(info.value)


def test_paimon_vector_reads_take_the_vectors_in_their_tasks(spark, tmp_path, driver_reads_no_deletes):
    cat = Catalog(str(tmp_path / "wh"), format="paimon", spark=spark)
    t = cat.create_table("db.t", "id bigint not null, s string", properties={
        "primary-key": "id", "bucket": "2", "deletion-vectors.enabled": "true"})
    t.append(spark.range(0, 2000, 1, 2).selectExpr("id", "cast(id as string) AS s"))
    t.append(spark.range(0, 2000, 3, 2).selectExpr("id", "'new' AS s"))
    t.append(pa.table({"id": pa.array([4, 5000], pa.int64()), "s": ["b", "b"]}))
    vectors = dv.bucket_vectors(t.store, t.current_snapshot())
    assert sum(card for bv in vectors.values() for _o, _s, card in bv.ranges.values()) >= 600
    plan = t.to_spark()._jdf.queryExecution().executedPlan().toString()
    assert plan.count("FileScan icefloe-parquet") == 1 and "Join" not in plan, plan
    rows = sorted((r.id, r.s) for r in t.to_spark().collect())
    expected = {i: "new" if i % 3 == 0 else str(i) for i in range(2000)}
    expected.update({4: "b", 5000: "b"})
    assert rows == sorted(expected.items())


@pytest.mark.parametrize("version", ["2", "3"])
def test_a_read_again_takes_the_deletes_the_driver_read_before(spark, tmp_path, monkeypatch, version):
    reads = []
    real = iceberg_read.positions_by_data_file

    def counted(io, deletes_of):
        reads.append(sorted(deletes_of))
        return real(io, deletes_of)

    monkeypatch.setattr(iceberg_read, "positions_by_data_file", counted)
    t = Catalog(str(tmp_path / "wh"), spark=spark).create_table(
        "db.t", "id bigint", properties={"write.delete.mode": "merge-on-read", "format-version": version})
    t.append(spark.range(0, 1000, 1, 2))
    t.delete("id % 3 = 0")
    expected = [i for i in range(1000) if i % 3]
    assert sorted(r.id for r in t.refresh().to_spark().collect()) == expected
    assert sorted(r.id for r in t.refresh().to_spark().collect()) == expected
    assert len(reads) == 1                      # the second read took the first's positions
    t.delete("id % 5 = 0")                      # new deletes: read again
    expected = [i for i in expected if i % 5]
    assert sorted(r.id for r in t.refresh().to_spark().collect()) == expected
    assert len(reads) == 2
    # a delete file gone since is still named, remembered or not
    assert sorted(r.id for r in t.refresh().to_spark().collect()) == expected and len(reads) == 2
    live = sorted({f["file_path"] for f in t.inspect.files().collect() if f["content"] == 1})
    assert live
    os.unlink(live[0])
    with pytest.raises(CorruptDataFileError, match="missing"):
        t.refresh().to_spark().collect()
