"""The SQL catalog: Iceberg tables registered in a database with the tables and columns of
Iceberg's JDBC catalog and pyiceberg's SqlCatalog. pyiceberg opens, reads and commits to the
tables icefloe makes there and icefloe to pyiceberg's; a commit is a compare-and-swap of the
metadata location, so racing writers never lose a commit."""
import os
import threading

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import LocationError, NoSuchTableError, VersionConflict


def _ids(n0, n1):
    return pa.table({"id": pa.array(range(n0, n1), pa.int64()), "s": [f"s{i}" for i in range(n0, n1)]})


@pytest.fixture
def sql_cat(tmp_path):
    return icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'cat.db'}")


def _pyiceberg(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("default", uri=f"sqlite:///{tmp_path / 'cat.db'}", warehouse=f"file://{tmp_path / 'pywh'}")


def test_pyiceberg_reads_and_commits_to_icefloe_tables(sql_cat, tmp_path):
    t = sql_cat.create_table("db.t", "id bigint not null, s string", partitioned_by=["s"])
    t.append(_ids(0, 5))
    py = _pyiceberg(tmp_path)
    assert ("db",) in py.list_namespaces() and ("db", "t") in py.list_tables("db")
    pt = py.load_table("db.t")
    assert sorted(pt.scan().to_arrow().column("id").to_pylist()) == list(range(5))
    pt.append(pa.table({"id": pa.array([100], pa.int64()), "s": ["py"]},
                       schema=pa.schema([pa.field("id", pa.int64(), False), ("s", pa.string())])))  # pyiceberg commits
    assert sorted(r["id"] for r in sql_cat.load_table("db.t").to_arrow().to_pylist()) == list(range(5)) + [100]
    t.refresh().append(_ids(5, 7))                                                       # and icefloe after it
    assert len(py.load_table("db.t").scan().to_arrow()) == 8
    assert os.path.basename(t.metadata_location).startswith("00004-")   # create, append, pyiceberg, append


def test_icefloe_opens_pyiceberg_tables(sql_cat, tmp_path):
    py = _pyiceberg(tmp_path)
    py.create_namespace("pyns")
    pt = py.create_table("pyns.p", schema=_ids(0, 1).schema)
    pt.append(_ids(0, 3))
    assert "pyns" in sql_cat.list_namespaces() and sql_cat.list_tables("pyns") == ["pyns.p"]
    t = sql_cat.load_table("pyns.p")
    assert t.location == pt.metadata.location          # where pyiceberg put it (a file: URI)
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == [0, 1, 2]
    t.append(_ids(3, 4))
    assert len(py.load_table("pyns.p").scan().to_arrow()) == 4
    assert sql_cat.sql("SELECT count(*) FROM pyns.p").collect()[0][0] == 4


def test_a_commit_is_a_compare_and_swap(sql_cat):
    t = sql_cat.create_table("db.c", "id bigint")
    a, b = sql_cat.load_table("db.c").ops, sql_cat.load_table("db.c").ops
    va, ma = a.load()
    vb, mb = b.load()
    a.commit(va, ma, ma)
    before = set(os.listdir(a.metadata_dir))
    with pytest.raises(VersionConflict, match="committed by another writer"):
        b.commit(vb, mb, mb)
    assert set(os.listdir(a.metadata_dir)) == before           # the loser's file is gone
    assert t.refresh() is not None


def test_racing_writers_lose_no_commit(sql_cat, tmp_path):
    sql_cat.create_table("db.r", "id bigint not null, s string")
    errors = []

    def writer(k):
        try:
            cat = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'cat.db'}")
            t = cat.load_table("db.r")
            for i in range(5):
                t.append(_ids(k * 100 + i, k * 100 + i + 1))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    t = sql_cat.load_table("db.r")
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == sorted(k * 100 + i for k in range(3) for i in range(5))
    assert len(t.snapshots()) == 15


def test_namespaces_rename_drop_and_register(sql_cat, tmp_path):
    sql_cat.create_namespace("ns")
    assert sql_cat.list_namespaces() == ["ns"] and sql_cat.list_tables("ns") == []
    t = sql_cat.create_table("ns.a", "id bigint")
    t.append(_ids(0, 2).select(["id"]))
    sql_cat.create_namespace("other")
    sql_cat.rename_table("ns.a", "other.b")
    assert not sql_cat.table_exists("ns.a") and sql_cat.load_table("other.b").to_arrow().num_rows == 2
    location = sql_cat.load_table("other.b").metadata_location
    with pytest.raises(LocationError, match="two tables never share a location"):
        sql_cat.register_table("ns.again", location)            # other.b's own files: refused
    assert not sql_cat.table_exists("ns.again")
    assert sql_cat.load_table("other.b").to_arrow().num_rows == 2
    sql_cat.drop_namespace("other", cascade=True)
    assert sql_cat.list_namespaces() == ["ns"]
    with pytest.raises(NoSuchTableError):
        sql_cat.load_table("other.b")


def test_maintenance_and_check_on_catalog_tables(sql_cat):
    t = sql_cat.create_table("db.m", "id bigint")
    for i in range(3):
        t.append(_ids(i, i + 1).select(["id"]))
    assert t.check().ok, t.check()
    assert t.remove_orphan_files(older_than=2**62, dry_run=True) == []
    t.expire_snapshots(older_than=2**62, retain_last=1)
    assert t.refresh().to_arrow().num_rows == 3 and len(t.snapshots()) == 1


def test_a_configured_sql_catalog_in_the_api_and_the_cli(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from icefloe.cli import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ICEFLOE_CONFIG", raising=False)
    (tmp_path / ".icefloe.yaml").write_text(
        f"catalog:\n  shared:\n    warehouse: {tmp_path / 'wh'}\n    type: sql\n    uri: sqlite:///{tmp_path / 'c.db'}\n")
    cat = icefloe.load_catalog("shared")
    assert cat.type == "sql"
    cat.create_table("db.t", "id bigint").append(_ids(0, 3).select(["id"]))
    assert (tmp_path / "c.db").exists() and not (tmp_path / "wh" / "db" / "t" / "metadata" / "version-hint.text").exists()
    res = CliRunner().invoke(cli, ["--catalog", "shared", "snapshots", "db.t", "--json"])
    assert res.exit_code == 0, res.output
    assert '"total-records": "3"' in res.output


def test_bad_catalog_configuration_is_named(tmp_path):
    import sqlite3

    from icefloe.errors import IcefloeError

    db = tmp_path / "wrong.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE iceberg_tables (catalog_name text, something_else text)")
    con.commit()
    con.close()
    with pytest.raises(IcefloeError, match="catalog database sqlite:///.*wrong.db: .*metadata_location"):
        icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{db}")
    with pytest.raises(IcefloeError) as e:
        icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri="postgresql+psycopg://u:s3cret@127.0.0.1:1/x")
    assert "s3cret" not in str(e.value) and "127.0.0.1" in str(e.value)
    with pytest.raises(IcefloeError, match="cannot be reached"):
        icefloe.Catalog(type="rest", uri="http://127.0.0.1:1")
    with pytest.raises(IcefloeError, match="unknown catalog type 'glue'"):
        icefloe.Catalog(str(tmp_path / "wh"), type="glue")
    with pytest.raises(IcefloeError, match="Paimon tables use the warehouse"):
        icefloe.Catalog(str(tmp_path / "wh"), format="paimon", type="sql")


def test_drop_keeps_the_files_unless_purge_is_asked(sql_cat, spark, tmp_path):
    """An SQL catalog forgets a dropped table and keeps its files (pyiceberg's ``drop_table``, Spark's
    ``DROP TABLE``); ``purge=True`` / ``DROP TABLE ... PURGE`` deletes them. A warehouse directory
    is the table: there a drop without ``purge`` deletes it."""
    def files(cat, name):
        t = cat.create_table(name, "id bigint not null, s string")
        t.append(_ids(0, 3))
        return [f.file_path for f in t.refresh().plan_files()]

    kept = files(sql_cat, "db.kept")
    sql_cat.drop_table("db.kept")
    assert not sql_cat.table_exists("db.kept") and kept and all(os.path.exists(p) for p in kept)

    sql = icefloe.Catalog(str(tmp_path / "wh"), type="sql", uri=f"sqlite:///{tmp_path / 'cat.db'}", spark=spark)
    kept = files(sql, "db.sql_kept")
    sql.sql("DROP TABLE db.sql_kept")
    assert not sql.table_exists("db.sql_kept") and all(os.path.exists(p) for p in kept)
    purged = files(sql, "db.purged")
    sql.sql("DROP TABLE db.purged PURGE")
    assert not sql.table_exists("db.purged") and purged and not any(os.path.exists(p) for p in purged)

    directory = icefloe.Catalog(str(tmp_path / "dirwh"), spark=spark)
    gone = files(directory, "db.t")
    directory.drop_table("db.t")
    assert not directory.table_exists("db.t") and not any(os.path.exists(p) for p in gone)


def test_an_unknown_keyword_of_the_sql_catalog_is_refused_by_name(tmp_path):
    from icefloe.iceberg.sql_catalog import SqlCatalog

    with pytest.raises(TypeError, match="'echo'"):
        SqlCatalog(str(tmp_path / "wh"), f"sqlite:///{tmp_path / 'cat.db'}", echo=True)
    assert not (tmp_path / "cat.db").exists()
