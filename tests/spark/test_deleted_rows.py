"""The Parquet format that drops deleted positions inside the scan (``icefloe.spark.deleted_rows``):
its position encoding, and the rows it returns against plain Spark's rows less the deleted ones, on
the vectorized reader (kept rows moved down in its vectors: fixed-width, decimal, dictionary-encoded,
variable-length and nested columns, with nulls) and the row-based reader, row groups skipped by a
pushed filter, files split across tasks, and the row index a query asks for itself."""
import base64

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icefloe.spark import deleted_rows, jvm


def _decode(text: str) -> list:
    data, out, pos, i = base64.b64decode(text), [], 0, 0
    while i < len(data):
        delta = shift = 0
        while True:
            b = data[i]
            i += 1
            delta |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        pos += delta
        out.append(pos)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**62), max_size=60))
def test_positions_encode_as_ascending_leb128_deltas(positions):
    assert _decode(deleted_rows.encode(positions)) == sorted(set(positions))


def test_small_deltas_take_one_byte():
    assert len(base64.b64decode(deleted_rows.encode(range(0, 12_700, 100)))) == 127
    assert base64.b64decode(deleted_rows.encode([0, 127, 128, 128 + 2**14])) == bytes([0, 127, 1, 0x80, 0x80, 1])


@pytest.fixture(scope="module")
def files(spark, tmp_path_factory):
    """Three files of 3,000 rows in row groups of about 500 rows: nested and plain columns."""
    base = tmp_path_factory.mktemp("deleted-rows")
    paths = []
    for k in range(3):
        out = str(base / f"f{k}")
        (spark.range(k * 10_000, k * 10_000 + 3_000, 1, 1)
         .selectExpr("id", "cast(id as string) AS s", "named_struct('a', id, 'b', array(id, id + 1)) AS st",
                     "map('k', id) AS m", "IF(id % 5 = 0, NULL, id * 0.5) AS d",
                     "IF(id % 3 = 0, NULL, cast(id % 7 as string)) AS dict",    # dictionary-encoded, nulls
                     "cast(id / 7 as decimal(9, 2)) AS d9", "cast(id as decimal(30, 3)) AS d30",
                     "cast(id % 2 = 0 as boolean) AS b", "timestamp_seconds(id) AS ts")
         .write.option("parquet.block.size", 16 * 1024).option("parquet.page.size", 4 * 1024).parquet(out))
        paths += [f"{out}/{f}" for f in sorted(__import__("os").listdir(out)) if f.endswith(".parquet")]
    return paths


def _row(r):
    return (r.id, r.s, r.st.a, tuple(r.st.b), r.m["k"], r.d, r.dict, r.d9, r.d30, r.b, r.ts)


def _rows(df):
    return sorted(_row(r) for r in df.collect())


def _expected(spark, files, deleted):
    from pyspark.sql import functions as F

    df = spark.read.parquet(*files).select("*", F.col("_metadata.file_path").alias("_f"),
                                           F.col("_metadata.row_index").alias("_p"))
    gone = {("file:" + p if not p.startswith("file:") else p, int(x)) for p, xs in deleted.items() for x in xs}
    return sorted(_row(r) for r in df.collect() if (r._f, r._p) not in gone)


@pytest.mark.parametrize("vectorized", [True, False])
def test_the_scan_drops_exactly_the_deleted_positions(spark, files, vectorized):
    assert jvm.available(spark), "the session cannot load " + deleted_rows.CLASS
    rng = np.random.default_rng(7)
    deleted = {files[0]: rng.choice(3000, 300, replace=False),          # scattered
               files[1]: np.arange(1000, 2600)}                          # whole row groups and batches
    # files[2] has no deletes and is read in the same scan
    key = "spark.sql.parquet.enableVectorizedReader"
    old = spark.conf.get(key)
    spark.conf.set(key, str(vectorized).lower())
    try:
        df = deleted_rows.reader(spark, deleted).load(files)
        plan = df._jdf.queryExecution().executedPlan().toString()
        assert ("Batched: true" in plan) == vectorized, plan
        assert _rows(df) == _expected(spark, files, deleted)
        assert df.count() == 9000 - 300 - 1600
        # a pushed filter skips row groups: positions still count the skipped rows
        got = _rows(df.where("id >= 1500 AND id < 1800 OR id >= 12500"))
        assert got == [r for r in _expected(spark, files, deleted) if 1500 <= r[0] < 1800 or r[0] >= 12500]
        # the query's own row index (row-level changes ask for it) is kept and correct
        from pyspark.sql import functions as F

        pos = df.select("id", F.col("_metadata.row_index").alias("p"), F.col("_metadata.file_path").alias("f"))
        assert all(r.id % 10_000 == r.p for r in pos.collect())
    finally:
        spark.conf.set(key, old)


def test_files_split_across_tasks(spark, files):
    deleted = {files[0]: np.arange(0, 3000, 3)}
    key = "spark.sql.files.maxPartitionBytes"
    old = spark.conf.get(key)
    spark.conf.set(key, "4096")
    try:
        df = deleted_rows.reader(spark, deleted).load(files[:1])
        assert df.rdd.getNumPartitions() > 1
        assert sorted(r.id for r in df.select("id").collect()) == [i for i in range(3000) if i % 3]
    finally:
        spark.conf.set(key, old)


def test_too_many_positions_for_the_plan_fall_back(spark, monkeypatch):
    monkeypatch.setattr(deleted_rows, "MAX_ENCODED_BYTES", 10)
    assert deleted_rows.reader(spark, {"/x.parquet": range(100)}) is None


def test_partition_columns_are_read_through_a_selection(spark, tmp_path):
    # partition values are constant vectors the reader does not rewrite: they are read through
    out = str(tmp_path / "parts")
    spark.range(0, 2000, 1, 1).selectExpr("id", "cast(id % 2 as int) AS p").write.partitionBy("p").parquet(out)
    import glob

    files = sorted(glob.glob(f"{out}/p=*/*.parquet"))
    deleted = {f: np.arange(0, 1000, 4) for f in files}
    df = deleted_rows.reader(spark, deleted).option("basePath", out).load(files)
    got = sorted((r.id, r.p) for r in df.collect())
    assert got == [(i, i % 2) for i in range(2000) if (i // 2) % 4]


def test_paths_with_spaces_and_escapes_name_their_files(spark, tmp_path):
    out = str(tmp_path / "a dir %20 #x")
    spark.range(0, 100, 1, 1).write.parquet(out)
    import glob

    (path,) = glob.glob(glob.escape(out) + "/*.parquet")
    for name in (path, "file:" + path):
        df = deleted_rows.reader(spark, {name: [0, 5, 99]}).load([path])
        assert sorted(r.id for r in df.collect()) == [i for i in range(100) if i not in (0, 5, 99)]


def test_without_javac_or_with_sources_that_do_not_compile_there_is_no_jar(tmp_path, monkeypatch):
    """...unless the package ships one (built with the wheel, ``setup.py``) for these sources and
    this Spark: then no JDK is needed."""
    import shutil

    from icefloe.spark import javac, jvm

    built = jvm.jar_path()
    sources = tmp_path / "jvm"              # the package's sources, without a jar beside them
    shutil.copytree(jvm.SOURCES, sources, ignore=shutil.ignore_patterns("*.jar"))
    monkeypatch.setattr(jvm, "SOURCES", sources)
    monkeypatch.setenv("ICEFLOE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(jvm, "find_javac", lambda: None)
    assert jvm._build() is None                        # reads fall back to the SQL filter
    shipped = sources / javac.extension_jar_name(javac.spark_jars()[0], javac.extension_sources(sources))
    shutil.copy(built, shipped)
    assert jvm._build() == str(shipped)
    (sources / "icefloe" / "jvm" / "Scans.java").write_text("// changed\n", "utf-8")
    assert jvm._build() is None                        # a jar of other sources is not used
    bad = tmp_path / "Bad.java"
    bad.write_text("class Bad { int x = ; }")
    with pytest.raises(javac.JavacError, match="Bad.java"):
        javac.compile_jar([bad], ".", tmp_path / "bad.jar")
    assert not (tmp_path / "bad.jar").exists()
