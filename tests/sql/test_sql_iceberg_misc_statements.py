"""Statement forms of Iceberg's Spark pages that went to Spark and leaked its view of its own
catalog: ``CACHE [LAZY] TABLE`` / ``UNCACHE TABLE`` on icefloe tables, a branch's or tag's
metadata tables (``db.t.`branch_b`.files``), ``DESCRIBE NAMESPACE`` of a missing namespace."""
import os

import pytest

from icefloe.sql.errors import NotSupportedYetError, SqlError


def _ids(run, sql):
    return sorted(r[0] for r in run(sql).collect())


def _moved_away(t):
    """Rename the table's data files away (and back on exit): a read that still answers is served
    from a cache."""
    class Moved:
        def __enter__(self):
            self.paths = [f.file_path.removeprefix("file:") for f in t.refresh().plan_files()]
            for p in self.paths:
                os.rename(p, p + ".away")

        def __exit__(self, *exc):
            for p in self.paths:
                os.rename(p + ".away", p)
            return False
    return Moved()


def test_cache_and_uncache_table(catalog):
    run = catalog.sql
    run("CREATE TABLE db.c (id bigint) USING iceberg")
    run("INSERT INTO db.c VALUES (1)")
    t = catalog.load_table("db.c")
    run("CACHE TABLE db.c")
    with _moved_away(t):
        assert _ids(run, "SELECT id FROM db.c") == [1]            # from the cache, not the files
    run("UNCACHE TABLE db.c")
    with _moved_away(t):
        with pytest.raises(Exception):
            run("SELECT id FROM db.c").collect()                  # the files again
    # LAZY: filled by the first read, with the storage level asked for
    run("CACHE LAZY TABLE db.c OPTIONS ('storageLevel' 'DISK_ONLY')")
    assert _ids(run, "SELECT id FROM db.c") == [1]
    with _moved_away(t):
        assert _ids(run, "SELECT count(*) FROM db.c") == [1]
    # a change to the table: reads see it (the cache is of the old snapshot and is dropped)
    run("INSERT INTO db.c VALUES (2)")
    assert _ids(run, "SELECT id FROM db.c") == [1, 2]
    run("UNCACHE TABLE IF EXISTS db.c")
    run("UNCACHE TABLE IF EXISTS local.db.nope")
    with pytest.raises(SqlError, match="UNCACHE TABLE: unknown table local.db.nope"):
        run("UNCACHE TABLE local.db.nope")
    with pytest.raises(SqlError, match="storageLevel 'FAST' is not one of"):
        run("CACHE TABLE db.c OPTIONS ('storageLevel' 'FAST')")
    with pytest.raises(SqlError, match="unknown option.*level"):
        run("CACHE TABLE db.c OPTIONS ('level' 'DISK_ONLY')")
    with pytest.raises(NotSupportedYetError, match="CACHE TABLE name AS SELECT"):
        run("CACHE TABLE db.c.snapshots")
    # CACHE TABLE name AS SELECT over an icefloe table stays Spark's
    run("CACHE TABLE c_first AS SELECT * FROM db.c WHERE id = 1")
    assert _ids(run, "SELECT id FROM c_first") == [1]
    run("UNCACHE TABLE c_first")


def test_metadata_tables_of_a_branch_and_a_tag(catalog):
    run = catalog.sql
    run("CREATE TABLE db.m (id bigint) USING iceberg")
    run("INSERT INTO db.m VALUES (1)")
    run("ALTER TABLE db.m CREATE BRANCH b")
    run("ALTER TABLE db.m CREATE TAG tg")
    run("INSERT INTO db.m.branch_b VALUES (2)")
    run("INSERT INTO db.m VALUES (3)")
    t = catalog.load_table("db.m")

    def paths(sql):
        return sorted(r[0] for r in run(sql).collect())
    on_branch = sorted(f.file_path for f in t.plan_files(ref="b"))
    on_main = sorted(f.file_path for f in t.plan_files())
    assert len(on_branch) == 2 and on_branch != on_main
    assert paths("SELECT file_path FROM db.m.`branch_b`.files") == on_branch
    assert paths("SELECT file_path FROM local.db.m.branch_b.data_files") == on_branch
    assert paths("SELECT file_path FROM db.m.files") == on_main
    assert len(paths("SELECT file_path FROM db.m.`tag_tg`.files")) == 1
    head = t.refs()["b"].snapshot_id
    assert [r[0] for r in run("SELECT added_snapshot_id FROM db.m.branch_b.manifests").collect()].count(head) == 1
    with pytest.raises(SqlError, match=r"table db.m.branch_b has no metadata table nope; iceberg tables have .*files"):
        run("SELECT * FROM db.m.branch_b.nope")
    with pytest.raises(SqlError, match="has no branch 'nope'"):
        run("SELECT * FROM db.m.branch_nope.files")
    with pytest.raises(SqlError, match="takes no VERSION or TIMESTAMP AS OF"):
        run(f"SELECT * FROM db.m.branch_b.files VERSION AS OF {head}")


def test_describe_missing_namespace_in_icefloe_words(catalog):
    with pytest.raises(SqlError) as e:
        catalog.sql("DESCRIBE NAMESPACE nope")
    assert "unknown namespace nope" in str(e.value) and "SCHEMA_NOT_FOUND" not in str(e.value)
