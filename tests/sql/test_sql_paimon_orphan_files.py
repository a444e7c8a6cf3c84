"""Paimon's ``CALL sys.remove_orphan_files`` with its own arguments and result (procedures page of
Paimon's Spark docs): ``table => 'db.*'`` for every table of a database, ``older_than`` (default:
one day ago), ``dry_run``, ``parallelism`` and ``mode``; the row counts the files and their bytes."""
import os
import time

import pyarrow as pa
import pytest

from icefloe.sql.errors import SqlError


def _table(pcat, name):
    t = pcat.create_table(f"default.{name}", "id int, v string")
    t.append(pa.table({"id": pa.array([1, 2], pa.int32()), "v": ["a", "b"]}))
    return t


def _plant(warehouse, name, file, data: bytes, age_s: float) -> str:
    path = os.path.join(warehouse, "default.db", name, "bucket-0", file)
    with open(path, "wb") as f:
        f.write(data)
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


def test_remove_orphan_files_of_a_database_dry_run_parallelism_and_mode(pcat, warehouse):
    tables = {name: _table(pcat, name) for name in ("o1", "o2")}
    two_days = 2 * 24 * 3600
    old1 = _plant(warehouse, "o1", "data-orphan-1.parquet", b"x" * 10, two_days)
    old2 = _plant(warehouse, "o2", "data-orphan-2.parquet", b"y" * 25, two_days)
    fresh = _plant(warehouse, "o1", "data-orphan-3.parquet", b"z" * 7, 60)
    df = pcat.sql("CALL sys.remove_orphan_files(table => 'default.*', dry_run => true)")
    assert df.columns == ["deletedFileCount", "deletedFileTotalLenInBytes"]
    assert [tuple(r) for r in df.collect()] == [(2, 35)]          # older than a day, by default
    assert all(os.path.exists(p) for p in (old1, old2, fresh))
    with pytest.raises(SqlError, match="unknown mode 'cluster'"):
        pcat.sql("CALL sys.remove_orphan_files(table => 'default.*', mode => 'cluster')")
    with pytest.raises(SqlError, match="parallelism must be a positive number"):
        pcat.sql("CALL sys.remove_orphan_files(table => 'default.o1', parallelism => 0)")
    with pytest.raises(SqlError, match="unknown database 'nodb'"):
        pcat.sql("CALL sys.remove_orphan_files(table => 'nodb.*')")
    assert all(os.path.exists(p) for p in (old1, old2, fresh))
    out = pcat.sql("CALL sys.remove_orphan_files(table => 'default.*', dry_run => false, parallelism => 2, "
                   "mode => 'local')")
    assert [tuple(r) for r in out.collect()] == [(2, 35)]
    assert not os.path.exists(old1) and not os.path.exists(old2) and os.path.exists(fresh)
    # one table, older_than a local time after the fresh file was written
    later = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() + 24 * 3600))
    out = pcat.sql(f"CALL sys.remove_orphan_files(table => 'default.o1', older_than => '{later}', "
                   "mode => 'distributed')")
    assert [tuple(r) for r in out.collect()] == [(1, 7)] and not os.path.exists(fresh)
    for t in tables.values():
        assert sorted(r["id"] for r in t.refresh().to_arrow().to_pylist()) == [1, 2]


def test_a_table_with_branches_keeps_every_file_a_branch_reaches(pcat, warehouse):
    t = _table(pcat, "ob")
    t.create_tag("t1", 1)
    t.create_branch("b", tag="t1")
    pcat.sql("INSERT INTO default.`ob$branch_b` VALUES (3, 'branch only')")   # files only branch b names
    pcat.load_table("default.ob").branch_table("b").create_tag("bt")                 # a tag of the branch
    pcat.sql("INSERT INTO default.ob VALUES (4, 'main')")
    old = _plant(warehouse, "ob", "data-orphan-b.parquet", b"q" * 11, 2 * 24 * 3600)
    files_before = {os.path.join(d, f) for d, _, fs in os.walk(os.path.join(warehouse, "default.db", "ob"))
                    for f in fs}
    # everything older than a minute from now: only the planted file is no branch's
    cutoff = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() + 60))
    df = pcat.sql(f"CALL sys.remove_orphan_files(table => 'default.ob', older_than => '{cutoff}')")
    assert [tuple(r) for r in df.collect()] == [(1, 11)]
    files_after = {os.path.join(d, f) for d, _, fs in os.walk(os.path.join(warehouse, "default.db", "ob"))
                   for f in fs}
    assert files_before - files_after == {old}
    assert sorted(tuple(r) for r in pcat.sql("SELECT * FROM default.`ob$branch_b`").collect()) == \
        [(1, "a"), (2, "b"), (3, "branch only")]
    assert sorted(tuple(r) for r in pcat.sql("SELECT * FROM default.ob").collect()) == [(1, "a"), (2, "b"), (4, "main")]
    assert sorted(tuple(r) for r in pcat.sql("SELECT * FROM default.`ob$branch_b` VERSION AS OF 'bt'").collect()) == \
        [(1, "a"), (2, "b"), (3, "branch only")]
