"""MERGE with a small source reads only the target files that can hold a match: each equality of a
target column and a source column in the ON condition bounds the target rows by the source's range
of that column (taken in the job that counts the source), and planning drops the files whose
column bounds or partitions lie outside it. The rows come out as without pruning, and pyiceberg
reads the same table."""
import pytest

from icefloe.spark import iceberg_dml
from tests.interop_util import pyiceberg_table

MODES = ["copy-on-write", "merge-on-read"]


@pytest.fixture
def files_read(monkeypatch):
    """The data files each MERGE reads from the target (every ``read_target`` call's)."""
    seen: set = set()
    original = iceberg_dml.read_target

    def recorded(table, meta, file_tasks, *args, **kwargs):
        seen.update(t.path for t in file_tasks)
        return original(table, meta, file_tasks, *args, **kwargs)

    monkeypatch.setattr(iceberg_dml, "read_target", recorded)
    return seen


def _table(catalog, spark, mode, name="db.m", partitioned=False):
    """Four data files, ids [0, 100), [100, 200), [200, 300), [300, 400); ``part`` = id // 100."""
    t = catalog.create_table(name, "id bigint, part int, name string",
                             partitioned_by=["part"] if partitioned else None,
                             properties={"write.merge.mode": mode})
    files = []
    for k in range(4):
        before = {f.file_path for f in t.plan_files()}
        t.append(spark.range(k * 100, (k + 1) * 100, 1, 1).selectExpr(
            "id", "cast(id div 100 as int) as part", "concat('n', cast(id as string)) as name"))
        (new,) = {f.file_path for f in t.plan_files()} - before
        files.append(new)
    return t, files


def _rows(t) -> list:
    return sorted((r["id"], r["part"], r["name"]) for r in t.refresh().to_arrow().to_pylist())


def _model(updates: dict, inserts: dict, deleted=()) -> list:
    rows = {i: (i, i // 100, f"n{i}") for i in range(400)}
    for i, name in updates.items():
        rows[i] = (i, i // 100, name)
    for i, (part, name) in inserts.items():
        rows[i] = (i, part, name)
    return sorted(v for k, v in rows.items() if k not in deleted)


def _theirs(t) -> list:
    arrow = pyiceberg_table(t.refresh().metadata_location).scan().to_arrow()
    return sorted(zip(arrow.column("id").to_pylist(), arrow.column("part").to_pylist(),
                      arrow.column("name").to_pylist()))


@pytest.mark.parametrize("mode", MODES)
def test_only_files_within_the_sources_key_range_are_read(catalog, spark, files_read, mode):
    t, files = _table(catalog, spark, mode)
    src = spark.createDataFrame([(150, 1, "u150"), (160, 1, "u160"), (199, 1, "u199")], "id bigint, part int, name string")
    counts = t.merge(src, "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute()
    assert files_read == {files[1]}
    assert (counts["updated"], counts["inserted"]) == (3, 0)
    expected = _model({150: "u150", 160: "u160", 199: "u199"}, {})
    assert _rows(t) == expected and _theirs(t) == expected


@pytest.mark.parametrize("mode", MODES)
def test_a_source_beyond_every_file_reads_none_and_inserts(catalog, spark, files_read, mode):
    t, _files = _table(catalog, spark, mode)
    src = spark.createDataFrame([(1000, 9, "new"), (1001, 9, "new")], "id bigint, part int, name string")
    counts = t.merge(src, "s.id = t.id").when_matched_delete().when_not_matched_insert_all().execute()
    assert files_read == set()
    assert (counts["deleted"], counts["inserted"]) == (0, 2)
    assert _rows(t) == _model({}, {1000: (9, "new"), 1001: (9, "new")})


@pytest.mark.parametrize("mode", MODES)
def test_every_equality_of_the_on_condition_bounds_the_files(catalog, spark, files_read, mode):
    t, files = _table(catalog, spark, mode, partitioned=True)
    # the ids span every file; the partitions (2 and 3) leave out the first two
    src = spark.createDataFrame([(205, 2, "a"), (395, 3, "b"), (5, 3, "c")], "id bigint, part int, name string")
    t.merge(src, "t.id = s.id AND (t.part = s.part)").when_matched_update_all().when_not_matched_insert_all().execute()
    assert files_read == {files[2], files[3]}
    expected = sorted(_model({205: "a", 395: "b"}, {}) + [(5, 3, "c")])    # (5, 3) matches no row: inserted
    assert _rows(t) == expected and _theirs(t) == expected


@pytest.mark.parametrize("mode", MODES)
def test_pruning_stays_off_where_it_could_lose_a_match(catalog, spark, files_read, mode):
    t, files = _table(catalog, spark, mode)

    def live() -> set:
        return {f.file_path for f in t.refresh().plan_files()}

    src = spark.createDataFrame([(150, 1, "u")], "id bigint, part int, name string")
    # NOT MATCHED BY SOURCE touches rows of every file
    t.merge(src, "t.id = s.id").when_matched_update_all().when_not_matched_by_source_delete("t.id >= 390").execute()
    assert files_read == set(files)
    files_read.clear()
    # a key computed from the source column: no range is taken from it
    every = live()
    t.merge(src, "t.id = s.id + 1").when_matched_update({"name": "'v'"}).execute()
    assert files_read == every
    files_read.clear()
    # the text form prunes to the file holding id 150; a Column (no SQL text in Spark 4) reads them all
    from pyspark.sql import functions as F

    holding, every = {f.file_path for f in t.refresh().plan_files(where="id = 150")}, live()
    assert len(holding) < len(every)
    t.merge(src, "t.id = s.id").when_matched_update({"name": "'w'"}).execute()
    assert files_read == holding
    files_read.clear()
    every = live()
    t.merge(src, F.col("t.id") == F.col("s.id")).when_matched_update({"name": "concat(t.name, 'w')"}).execute()
    assert files_read == every
    expected = _model({150: "ww", 151: "v"}, {}, deleted=range(390, 400))
    assert _rows(t) == expected and _theirs(t) == expected


def test_string_and_null_keys(catalog, spark, files_read):
    t, files = _table(catalog, spark, "merge-on-read")
    # names bound as strings: 'n150' and 'n155' lie within the first file's ('n0'..'n99') and the
    # second's ('n100'..'n199'), not the others' ('n200'..'n299', 'n300'..'n399')
    src = spark.createDataFrame([("n150", "x"), ("n155", "y"), (None, "z")], "name string, v string")
    t.merge(src, "t.name = s.name").when_matched_update({"name": "concat(s.name, s.v)"}).execute()
    assert files_read == {files[0], files[1]}
    assert _rows(t) == _model({150: "n150x", 155: "n155y"}, {})
    files_read.clear()
    # every source key null: no range, so no pruning (and no row matches)
    every = {f.file_path for f in t.refresh().plan_files()}
    nulls = spark.createDataFrame([(None, "z")], "name string, v string")
    t.merge(nulls, "t.name = s.name").when_matched_delete().execute()
    assert files_read == every
    assert _rows(t) == _model({150: "n150x", 155: "n155y"}, {})
