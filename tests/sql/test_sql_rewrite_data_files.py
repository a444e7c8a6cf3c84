"""``CALL system.rewrite_data_files`` (Iceberg's spark-procedures page): the bin-pack defaults of
Iceberg's procedure, its output counts, ``options``, ``strategy => 'sort'`` and ``where``."""
import json

import pytest

from icefloe.sql.errors import NotSupportedYetError, SqlError


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
    with pytest.raises(NotSupportedYetError, match="z-order"):
        run("CALL system.rewrite_data_files(table => 'db.sample', strategy => 'sort', sort_order => 'zorder(id)')")
    with pytest.raises(SqlError, match="no sort order"):
        run("CALL system.rewrite_data_files(table => 'db.sample', strategy => 'sort')")
    # where: only the files it selects
    run("INSERT INTO db.sample VALUES (7, 'x')")
    out = run("CALL system.rewrite_data_files(table => 'db.sample', where => 'id = 7', "
              "options => map('rewrite-all', 'true'))")
    assert [tuple(r)[:2] for r in out.collect()] == [(1, 1)]
    assert path in {f[0] for f in _files(run)}          # the other file was not touched
    assert sorted(r[0] for r in run("SELECT id FROM db.sample").collect()) == [1, 2, 3, 4, 5, 6, 7]
