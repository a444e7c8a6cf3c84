"""MERGE's cardinality rule (a target row matched by more than one source row is an error) is checked
inside the job that joins the target with the source: a small source broadcast, or a large one
shuffled with the target on the join's preserved side (copy-on-write, or a NOT MATCHED BY SOURCE
clause), even with Spark splitting skewed partitions. A large source merged on read with matched
and not-matched clauses alone keeps a check job of its own. The error names the target row (its data
file and position) and leaves the table as it was; rows matched once each, however many, pass."""
import pytest

from icefloe.spark import iceberg_dml
from icefloe.spark.iceberg_dml import MergeCardinalityError
from icefloe.spark.merge_clauses import MergeClauses

MODES = ["copy-on-write", "merge-on-read"]


@pytest.fixture
def no_separate_check(monkeypatch):
    """The check after the join (a job of its own) fails the test if it runs."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("the cardinality rule was checked by a job of its own")

    monkeypatch.setattr(MergeClauses, "check_cardinality", refuse)


@pytest.fixture
def separate_checks(monkeypatch):
    """How many times the check after the join (a job of its own) ran."""
    calls = []
    original = MergeClauses.check_cardinality
    monkeypatch.setattr(MergeClauses, "check_cardinality",
                        lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    return calls


def _in_join(source_size, mode, by_source):
    return source_size == "small" or mode == "copy-on-write" or by_source


@pytest.fixture(params=["small", "large"])
def source_size(request, spark):
    """"large": the session's broadcast joins off, so MERGE takes its shuffled-join path."""
    if request.param == "large":
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    yield request.param
    spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


def _table(catalog, spark, mode, name="db.c"):
    """Four data files of 100 rows: ids [0, 400), each file's rows in id order."""
    t = catalog.create_table(name, "id bigint, name string", properties={"write.merge.mode": mode})
    for k in range(4):
        t.append(spark.range(k * 100, (k + 1) * 100, 1, 1).selectExpr("id", "concat('n', cast(id as string)) as name"))
    return t


def _file_of(t, i):
    (path,) = [f.file_path for f in t.plan_files() if f.lower_bounds and
               int.from_bytes(f.lower_bounds[1], "little") <= i <= int.from_bytes(f.upper_bounds[1], "little")]
    return path


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("by_source", [False, True])
def test_a_row_matched_twice_fails_inside_the_join(catalog, spark, separate_checks, source_size, mode,
                                                   by_source):
    t = _table(catalog, spark, mode)
    before = t.current_snapshot().snapshot_id
    src = spark.createDataFrame([(5, "a"), (250, "b"), (250, "c"), (390, "d")], "id bigint, name string")
    m = t.merge(src, "t.id = s.id").when_matched_update({"name": "s.name"}).when_not_matched_insert_all()
    if by_source:
        m = m.when_not_matched_by_source_delete("t.id < 0")
    with pytest.raises(MergeCardinalityError, match="more than one source row") as info:
        m.execute()
    assert f"(file {_file_of(t, 250)}, position 50)" in str(info.value)
    assert t.refresh().current_snapshot().snapshot_id == before
    assert t.to_arrow().num_rows == 400
    assert len(separate_checks) == (0 if _in_join(source_size, mode, by_source) else 1)


@pytest.mark.parametrize("mode", MODES)
def test_rows_matched_once_each_pass(catalog, spark, separate_checks, source_size, mode):
    t = _table(catalog, spark, mode)
    # every target row matched once; source duplicates only among rows that match no target row,
    # or that the ON condition's other term keeps from matching
    rows = [(i, f"u{i}", True) for i in range(0, 400, 3)] + [(1000, "x", True), (1000, "y", True)] + \
        [(7, "no", False), (7, "never", False)]
    src = spark.createDataFrame(rows, "id bigint, name string, ok boolean").repartition(3)
    r = (t.merge(src, "t.id = s.id AND s.ok").when_matched_update({"name": "s.name"})
         .when_not_matched_insert({"id": "s.id", "name": "s.name"}).execute())
    assert r["updated"] == len(range(0, 400, 3)) and r["inserted"] == 4
    got = sorted((x["id"], x["name"]) for x in t.refresh().to_arrow().to_pylist())
    want = sorted([(i, f"u{i}" if i % 3 == 0 else f"n{i}") for i in range(400)] +
                  [(1000, "x"), (1000, "y"), (7, "no"), (7, "never")])
    assert got == want
    assert len(separate_checks) == (0 if _in_join(source_size, mode, False) else 1)


@pytest.mark.parametrize("mode", MODES)
def test_a_row_matched_twice_fails_though_no_clause_takes_either_match(catalog, spark, source_size, mode):
    """The rule is about the ON condition: two matches fail even when no MATCHED clause's
    condition holds for either of them."""
    t = _table(catalog, spark, mode)
    before = t.current_snapshot().snapshot_id
    src = spark.createDataFrame([(250, "b"), (250, "c"), (5000, "new")], "id bigint, name string")
    m = (t.merge(src, "t.id = s.id").when_matched_update({"name": "s.name"}, condition="s.name = 'zzz'")
         .when_not_matched_insert_all())
    with pytest.raises(MergeCardinalityError, match=r"position 50\)"):
        m.execute()
    assert t.refresh().current_snapshot().snapshot_id == before


@pytest.mark.parametrize("mode", MODES)
def test_a_skewed_large_source_is_checked_inside_the_join(catalog, spark, no_separate_check, mode):
    """A large source whose shuffle partition holding key 123 is skewed (thousands of other keys
    that hash with it), 123 itself coming once from each of its two partitions:
    Spark splits a skewed partition by the source tasks that wrote it and copies the other side's
    rows to each split, so were the source side split, each split would see 123 matched once. The
    target side is the one kept whole: the two matches are seen by one task."""
    t = _table(catalog, spark, mode)
    before = t.current_snapshot().snapshot_id
    n = int(spark.conf.get("spark.sql.shuffle.partitions"))
    filler = [r[0] for r in spark.range(100_000, 160_000).where(
        f"pmod(hash(id), {n}) = pmod(hash(cast(123 as bigint)), {n})").limit(3000).collect()]
    rows = [(123, "first")] + [(i, "f") for i in filler] + [(123, "last")]
    src = spark.createDataFrame(spark.sparkContext.parallelize(rows, 2), "id bigint, name string")
    assert [[r[1] for r in p if r[0] == 123] for p in src.rdd.glom().collect()] == [["first"], ["last"]]
    settings = {"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.sql.adaptive.skewJoin.enabled": "true",
                "spark.sql.adaptive.skewJoin.skewedPartitionFactor": "1",
                "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "1",
                "spark.sql.adaptive.advisoryPartitionSizeInBytes": "512"}
    for k, v in settings.items():
        spark.conf.set(k, v)
    m = t.merge(src, "t.id = s.id").when_matched_update({"name": "s.name"})
    if mode == "merge-on-read":     # the target's rows kept by the join: one clause takes them
        m = m.when_not_matched_by_source_delete("t.id < 0")
    try:
        with pytest.raises(MergeCardinalityError, match="more than one source row") as info:
            m.execute()
    finally:
        for k in settings:
            spark.conf.unset(k)
    assert f"(file {_file_of(t, 123)}, position 23)" in str(info.value)
    assert t.refresh().current_snapshot().snapshot_id == before


def test_a_large_source_joined_without_an_equality_is_checked_by_a_job(catalog, spark, monkeypatch, source_size):
    """An ON condition with no equality of a target and a source column may be joined by a nested
    loop over either side: the rule is checked after the join, by a job of its own."""
    t = _table(catalog, spark, "copy-on-write")
    calls = []
    original = MergeClauses.check_cardinality
    monkeypatch.setattr(MergeClauses, "check_cardinality",
                        lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    src = spark.createDataFrame([(3, "a"), (4, "b")], "id bigint, name string")
    with pytest.raises(MergeCardinalityError, match=r"position 3\)"):
        t.merge(src, "t.id BETWEEN s.id - 1 AND s.id").when_matched_update({"name": "s.name"}).execute()
    assert len(calls) == (1 if source_size == "large" else 0)


def test_without_the_jvm_classes_the_rule_is_still_checked(catalog, spark, monkeypatch):
    """Where icefloe's classes cannot be loaded the matches are checked after the join."""
    from icefloe.spark import jvm

    t = _table(catalog, spark, "merge-on-read")
    calls = []
    original = MergeClauses.check_cardinality
    monkeypatch.setattr(MergeClauses, "check_cardinality",
                        lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    monkeypatch.setattr(jvm, "jvm_column", lambda build: None)
    src = spark.createDataFrame([(3, "a"), (3, "b")], "id bigint, name string")
    with pytest.raises(MergeCardinalityError, match=r"position 3\)"):
        t.merge(src, "t.id = s.id").when_matched_update({"name": "s.name"}).execute()
    assert calls and iceberg_dml is not None
