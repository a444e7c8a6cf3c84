"""Deleted positions as a filter on Spark's scan (``icefloe.spark.bitmaps``): the constant filter
keeps exactly the rows whose bit is clear, for sparse files (a constant set) and dense ones (the
words), with several files told apart by their key, and gives way to the join when too big."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from icefloe.spark import bitmaps


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.tuples(st.integers(1, 300), st.floats(0, 1)), min_size=1, max_size=4),
       seed=st.integers(0, 10**6), by_path=st.booleans())
def test_literal_filter_keeps_exactly_the_clear_bits(spark, files, seed, by_path):
    rnd = np.random.default_rng(seed)
    rows, marked, dense = [], [], 0
    for number, (count, share) in enumerate(files):
        # keys are file sizes or paths (quotes and backslashes must survive the SQL text)
        key = f"file:/w/it's\\{number}.parquet" if by_path else number
        deleted = np.flatnonzero(rnd.random(count) < share)
        words = bitmaps.bitmap_words(deleted, count)
        marked.append((key, words))
        dense += len(deleted) * 4 >= len(words)
        rows += [(key, i, i not in set(deleted.tolist())) for i in range(count)]
    ddl = f"k {'string' if by_path else 'long'}, pos long, keep boolean"
    df = spark.createDataFrame(rows, ddl)
    cond = bitmaps.literal_filter(marked, "k", "pos")
    assert cond is not None
    got = sorted((r.k, r.pos) for r in df.where(cond).collect())
    assert got == sorted((k, p) for k, p, keep in rows if keep)
    # a file not named by any branch keeps all its rows
    other = spark.createDataFrame([("99" if by_path else 99, 0, True), ("99" if by_path else 99, 5, True)], ddl)
    assert other.where(cond).count() == 2


def test_the_words_constant_without_jvm_access_is_folded_json(spark, monkeypatch):
    """A session without JVM access (Spark Connect) gets the JSON form of the same constant."""
    from pyspark.sql import SparkSession

    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    monkeypatch.setattr(SparkSession, "_instantiatedSession", None)
    col = bitmaps.long_array_constant(np.array([5, -1, 1 << 62], dtype=np.int64))
    monkeypatch.undo()
    assert "from_json" in str(col)
    assert spark.range(1).select(col.alias("w")).first().w == [5, -1, 1 << 62]
    assert spark.range(1).select(bitmaps.long_array_constant(np.array([5, -1], np.int64)).alias("w")).first().w \
        == [5, -1]


def test_both_forms_of_constants_and_the_size_limit(spark, monkeypatch):
    sparse = bitmaps.bitmap_words([3], 10_000)            # one of 10,000 rows: a constant set
    dense = bitmaps.bitmap_words(list(range(0, 640, 2)), 640)   # half the rows: the words
    df = spark.range(10_000).select(F.lit(1).alias("k"), F.col("id").alias("pos")).union(
        spark.range(640).select(F.lit(2).alias("k"), F.col("id").alias("pos")))
    cond = bitmaps.literal_filter([(1, sparse), (2, dense)], "k", "pos")
    text = str(cond)
    # sparse: (file number 1 << 40 | position 3) in the set; dense: the one shared array of words,
    # a primitive array built in the JVM (no JSON to parse)
    assert str((1 << 40) | 3) in text and text.count("UnsafeArrayData") == 1 and "from_json" not in text, text
    assert df.where(cond).count() == 9_999 + 320
    monkeypatch.setattr(bitmaps, "MAX_LITERAL_ELEMENTS", 5)
    assert bitmaps.literal_filter([(1, sparse), (2, dense)], "k", "pos") is None
