"""String columns read through ``TableParquetFormat`` (``jvm/DictionaryStringVector.java``): each
dictionary entry of a column chunk is decoded once rather than once per row. What a scan returns must
be exactly what the file holds, across row groups whose dictionaries differ (an id means another
string in the next chunk), a chunk whose dictionary overflowed and fell back to plain pages, nulls,
deleted rows moved down in the vectors, filters that skip row groups, and generated code that reads
the strings (hashes, lengths, comparisons)."""
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.spark import deleted_rows, jvm, scans

ROWS = 6000
PER_GROUP = 1500


def _value(i: int):
    group = i // PER_GROUP
    if i % 11 == 0:
        return None
    return ["", "ä-€", f"g{group}-a", f"g{group}-b", f"g{group}-{i % 7}"][(i * 7 + group) % 5]


def _page_kinds(spark, path) -> dict:
    """Per row group and string column: (any dictionary-encoded page, any plain page), as
    Parquet's own footer records its pages' encodings."""
    jvm = spark._jvm
    footer = jvm.org.apache.parquet.hadoop.ParquetFileReader.readFooter(
        spark._jsc.hadoopConfiguration(), jvm.org.apache.hadoop.fs.Path(path))
    out = {}
    for g, block in enumerate(footer.getBlocks()):
        for column in block.getColumns():
            stats = column.getEncodingStats()
            out[(g, column.getPath().toDotString())] = (stats.hasDictionaryEncodedPages(),
                                                         stats.hasNonDictionaryEncodedPages())
    return out


def _file(spark, path):
    """Four row groups, each with its own dictionary for ``s``; ``wide`` has more distinct values
    than its dictionary page may hold, so each chunk starts dictionary-encoded and goes on plain."""
    table = pa.table({
        "id": pa.array(range(ROWS), pa.int64()),
        "s": pa.array([_value(i) for i in range(ROWS)], pa.string()),
        "wide": pa.array([None if i % 13 == 0 else f"wide-{i:06d}-{'x' * (i % 9)}" for i in range(ROWS)],
                         pa.string()),
    })
    pq.write_table(table, path, row_group_size=PER_GROUP, dictionary_pagesize_limit=2048,
                   data_page_size=1024)
    assert pq.ParquetFile(path).metadata.num_row_groups == ROWS // PER_GROUP
    kinds = _page_kinds(spark, path)
    for g in range(ROWS // PER_GROUP):
        assert kinds[(g, "s")] == (True, False)
        assert kinds[(g, "wide")] == (True, True)        # fell back to plain pages
    return path, table


def _vector_types(df) -> str:
    """The vector classes the scan declares to generated code."""
    stack = [df._jdf.queryExecution().executedPlan()]
    while stack:
        node = stack.pop()
        if node.getClass().getSimpleName() == "FileSourceScanExec":
            types = node.vectorTypes()
            return str(types.get()) if types.isDefined() else ""
        children = node.children()
        stack.extend(children.apply(i) for i in range(children.size()))
    raise AssertionError("no file scan in the plan")


def _rows(df):
    return sorted((r.id, r.s, r.wide) for r in df.select("id", "s", "wide").collect())


@pytest.fixture
def strings_file(tmp_path, spark):
    return _file(spark, str(tmp_path / "strings.parquet"))


def _expected(table, keep=lambda i: True):
    return sorted((i, s, w) for i, s, w in zip(*(table.column(c).to_pylist() for c in ("id", "s", "wide")))
                  if keep(i))


def test_strings_read_through_decoded_dictionaries_are_the_files_own(spark, strings_file):
    path, table = strings_file
    assert jvm.available(spark)
    schema = spark.read.parquet(path).schema
    df = scans.file_scan(spark, [path], schema)
    assert "DictionaryStringVector" in _vector_types(df)
    assert _rows(df) == _expected(table)
    # generated code reading the strings: the same answers as Spark's own reader over the same file
    df.createOrReplaceTempView("decoded")
    spark.read.parquet(path).createOrReplaceTempView("spark_own")
    query = ("SELECT sum(hash(s)), sum(hash(wide)), sum(length(s)), count(DISTINCT s), max(wide), "
             "count_if(s = 'g2-a'), count_if(s IS NULL) FROM {}")
    ours, theirs = spark.sql(query.format("decoded")).collect(), spark.sql(query.format("spark_own")).collect()
    assert ours == theirs
    assert ours[0][6] == sum(1 for i in range(ROWS) if _value(i) is None)


def test_filters_that_skip_row_groups_and_deleted_rows_read_the_right_strings(spark, strings_file):
    path, table = strings_file
    schema = spark.read.parquet(path).schema
    # row groups skipped by the filter: the next chunk read has another dictionary
    df = scans.file_scan(spark, [path], schema).where("id >= 4000 OR id < 100")
    assert _rows(df) == _expected(table, lambda i: i >= 4000 or i < 100)
    # deleted rows moved down within the reader's vectors (dictionary ids and plain values alike)
    gone = [i for i in range(ROWS) if i % 3 == 0 or 1400 <= i < 1600]
    options = deleted_rows.scan_options(spark, {path: gone})
    df = scans.file_scan(spark, [path], schema, options, deleted_rows.CLASS, whole=[path])
    assert "DictionaryStringVector" in _vector_types(df)
    assert _rows(df) == _expected(table, lambda i: not (i % 3 == 0 or 1400 <= i < 1600))
    df.createOrReplaceTempView("decoded_less")
    assert spark.sql("SELECT count_if(s = 'g1-b'), sum(length(wide)) FROM decoded_less").collect()[0] == (
        sum(1 for i, s, _ in _expected(table) if s == "g1-b" and not (i % 3 == 0 or 1400 <= i < 1600)),
        sum(len(w) for i, _, w in _expected(table) if w is not None and not (i % 3 == 0 or 1400 <= i < 1600)))


def test_a_tables_strings_after_changes(tmp_path, spark):
    import icefloe

    cat = icefloe.Catalog(str(tmp_path / "wh"), spark=spark)
    t = cat.create_table("db.t", "id bigint, s string", properties={"write.delete.mode": "merge-on-read",
                                                                    "write.update.mode": "merge-on-read"})
    t.append(spark.range(0, 5000, 1, 2).selectExpr("id", "IF(id % 9 = 0, NULL, concat('v', id % 40)) AS s"))
    t.delete("id % 4 = 1")
    t.update({"s": "'changed'"}, where="id % 10 = 2")
    expected = sorted((i, "changed" if i % 10 == 2 else (None if i % 9 == 0 else f"v{i % 40}"))
                      for i in range(5000) if i % 4 != 1)
    df = t.to_spark()
    assert "DictionaryStringVector" in _vector_types(df)
    assert sorted((r.id, r.s) for r in df.collect()) == expected
