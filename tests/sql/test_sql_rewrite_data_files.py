"""``CALL system.rewrite_data_files`` (Iceberg's spark-procedures page): the bin-pack defaults of
Iceberg's procedure, its output counts, ``options``, ``strategy => 'sort'`` and ``where``."""
import json

import pytest

from icefloe.sql.errors import SqlError


def _files(run):
    return [tuple(r) for r in run("SELECT file_path, record_count, file_size_in_bytes FROM db.sample.files").collect()]


def test_rewrite_data_files_binpacks_by_icebergs_rules_and_counts(catalog):
    run = catalog.sql
    run("CREATE TABLE db.sample (id bigint, data string) USING iceberg")
    for i in range(5):
        run(f"INSERT INTO db.sample VALUES ({5 - i}, 'v{i}')")
    before = _files(run)
    assert len(before) == 5
    out = [tuple(r) for r in run("CALL system.rewrite_data_files('db.sample')").collect()]
    after = _files(run)
    # five one-row files are one group of min-input-files (5): one file, Iceberg's counts
    assert len(after) == 1 and after[0][1] == 5
    assert out == [(5, 1, sum(f[2] for f in before), 0, 0)]
    t = catalog.load_table("db.sample")
    meta = json.loads(t.io.read_bytes(t.metadata_location))
    assert meta["snapshots"][-1]["summary"]["operation"] == "replace"
    assert sorted(r[0] for r in run("SELECT id FROM db.sample").collect()) == [1, 2, 3, 4, 5]

    # two small files are below min-input-files: nothing to do, unless the option says 2
    run("INSERT INTO db.sample VALUES (6, 'w')")
    assert [tuple(r) for r in run("CALL system.rewrite_data_files('db.sample')").collect()] == [(0, 0, 0, 0, 0)]
    out = run("CALL system.rewrite_data_files(table => 'db.sample', options => map('min-input-files', '2'))")
    assert [tuple(r)[:2] for r in out.collect()] == [(2, 1)] and len(_files(run)) == 1
    with pytest.raises(SqlError, match="unknown rewrite_data_files option 'min-input-file'"):
        run("CALL system.rewrite_data_files(table => 'db.sample', options => map('min-input-file', '2'))")
    with pytest.raises(SqlError, match="partial-progress.enabled=true is not supported"):
        run("CALL system.rewrite_data_files(table => 'db.sample', options => map('partial-progress.enabled', 'true'))")

    # sort: every file rewritten (rewrite-all) in the given order
    run("CALL system.rewrite_data_files(table => 'db.sample', strategy => 'sort', "
        "sort_order => 'id DESC NULLS LAST', options => map('rewrite-all', 'true'))")
    path = _files(run)[0][0]
    import pyarrow.parquet as pq
    assert pq.read_table(t.io.open_read(path)).column("id").to_pylist() == [6, 5, 4, 3, 2, 1]
    with pytest.raises(SqlError, match="no sort order"):
        run("CALL system.rewrite_data_files(table => 'db.sample', strategy => 'sort')")
    # where: only the files it selects
    run("INSERT INTO db.sample VALUES (7, 'x')")
    out = run("CALL system.rewrite_data_files(table => 'db.sample', where => 'id = 7', "
              "options => map('rewrite-all', 'true'))")
    assert [tuple(r)[:2] for r in out.collect()] == [(1, 1)]
    assert path in {f[0] for f in _files(run)}          # the other file was not touched
    assert sorted(r[0] for r in run("SELECT id FROM db.sample").collect()) == [1, 2, 3, 4, 5, 6, 7]


def _bounds(t, names):
    """{file path: {column: (lower, upper)}} from the files' column bounds in the manifests."""
    ids = {t.schema.find_field(n).field_id: n for n in names}
    out = {}
    for r in t.metadata_table("files").to_pylist():
        lower = dict(r["lower_bounds"])
        upper = dict(r["upper_bounds"])
        out[r["file_path"]] = {n: (int.from_bytes(lower[i], "little", signed=True),
                                   int.from_bytes(upper[i], "little", signed=True)) for i, n in ids.items()}
    return out


def test_rewrite_data_files_zorder_clusters_files_in_every_column(catalog):
    run = catalog.sql
    run("CREATE TABLE db.z (x int, y int, s string) USING iceberg")
    run("INSERT INTO db.z SELECT CAST(id % 16 AS INT), CAST(id DIV 16 AS INT), CAST(id AS STRING) FROM range(256)")
    t = catalog.load_table("db.z")
    inputs = [tuple(r) for r in run("SELECT file_size_in_bytes FROM db.z.files").collect()]
    size = sum(r[0] for r in inputs)
    # four output files: a linear sort by x would give four bands of x, each spanning every y
    out = run(f"CALL system.rewrite_data_files(table => 'db.z', strategy => 'sort', sort_order => 'zorder(x, y)', "
              f"options => map('rewrite-all', 'true', 'target-file-size-bytes', '{size // 4 + 1}'))").collect()
    assert [tuple(r)[:2] for r in out] == [(len(inputs), 4)]
    boxes = sorted(_bounds(t.refresh(), ["x", "y"]).values(), key=lambda b: (b["y"], b["x"]))
    # each file holds one quadrant of the 16 x 16 grid: z-order clusters both columns
    assert boxes == [{"x": (0, 7), "y": (0, 7)}, {"x": (8, 15), "y": (0, 7)},
                     {"x": (0, 7), "y": (8, 15)}, {"x": (8, 15), "y": (8, 15)}]
    assert sorted(r[0] for r in run("SELECT x * 16 + y FROM db.z").collect()) == list(range(256))
    meta = json.loads(t.io.read_bytes(t.metadata_location))
    assert meta["snapshots"][-1]["summary"]["operation"] == "replace"
    files = t.metadata_table("files").to_pylist()
    assert {f["sort_order_id"] for f in files} == {0}          # in no order the table declares

    # Iceberg's z-order options are honoured and checked; anything else is refused, table unchanged
    before = t.refresh().metadata_location
    with pytest.raises(SqlError, match="var-length-contribution must be at least 1"):
        run("CALL system.rewrite_data_files(table => 'db.z', strategy => 'sort', sort_order => 'zorder(s, x)', "
            "options => map('var-length-contribution', '0'))")
    with pytest.raises(SqlError, match="applies only to z-order"):
        run("CALL system.rewrite_data_files(table => 'db.z', strategy => 'sort', sort_order => 'x', "
            "options => map('max-output-size', '4'))")
    with pytest.raises(SqlError, match="'nope' is not a top-level column"):
        run("CALL system.rewrite_data_files(table => 'db.z', strategy => 'sort', sort_order => 'zorder(nope)')")
    with pytest.raises(SqlError, match="mixes sort columns"):
        run("CALL system.rewrite_data_files(table => 'db.z', strategy => 'sort', sort_order => 'x, zorder(y)')")
    assert t.refresh().metadata_location == before
    out = run("CALL system.rewrite_data_files(table => 'db.z', strategy => 'sort', sort_order => 'zorder(s, y)', "
              "options => map('rewrite-all', 'true', 'var-length-contribution', '2', 'max-output-size', '3'))")
    assert [tuple(r)[:2] for r in out.collect()] == [(4, 1)]
    assert sorted(r[0] for r in run("SELECT x * 16 + y FROM db.z").collect()) == list(range(256))
