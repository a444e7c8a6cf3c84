"""Migration between formats without rewriting data: Iceberg's add_files, snapshot and migrate,
Paimon's migrate_table and migrate_file. Each result is read by the target format's independent
readers (pyiceberg and DuckDB for Iceberg, pypaimon for Paimon) and compared row for row with
the source; files keep their paths (into Iceberg) or are moved, not rewritten (into Paimon)."""
import hashlib
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.core.faults import FaultInjectingFileIO
from icefloe.errors import InjectedFault, MigrationError, SqlError
from tests.interop_util import duckdb_connection, pyiceberg_table

ROWS = {"eu": [(1, "a", 1.5), (2, "b", None)], "us": [(3, "c", 2.5)], "a b/c": [(4, None, 0.25)]}


def write_hive_dir(root, with_partition_column=False) -> str:
    """Parquet files under Hive-style region=<v>/ directories (one escaped), plus files readers skip."""
    for region, rows in ROWS.items():
        d = os.path.join(root, "region=" + region.replace(" ", "%20").replace("/", "%2F"))
        os.makedirs(d, exist_ok=True)
        cols = {"id": pa.array([r[0] for r in rows], pa.int64()), "name": pa.array([r[1] for r in rows], pa.string()),
                "score": pa.array([r[2] for r in rows], pa.float64())}
        if with_partition_column:
            cols["region"] = pa.array([region] * len(rows), pa.string())
        pq.write_table(pa.table(cols), os.path.join(d, "part-00000.parquet"))
    open(os.path.join(root, "_SUCCESS"), "w").close()
    os.makedirs(os.path.join(root, "_temporary"), exist_ok=True)
    return root


def expected(regions=tuple(ROWS)) -> list:
    return sorted((r[0], r[1], r[2], region) for region in regions for r in ROWS[region])


def state(root) -> dict:
    """Every file below ``root`` with its content's digest."""
    out = {}
    for d, _dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def rows_of(table, cols=("id", "name", "score", "region")) -> list:
    data = table.refresh().to_arrow()
    return sorted(tuple(r[c] for c in cols) for r in data.to_pylist())


def spark_rows(table, cols=("id", "name", "score", "region")) -> list:
    return sorted(tuple(r[c] for c in cols) for r in table.refresh().to_spark().collect())


def iceberg_referees(table, cols=("id", "name", "score", "region")) -> tuple:
    """(pyiceberg's rows, DuckDB's rows) of an Iceberg table."""
    meta = table.refresh().metadata_location
    py = pyiceberg_table(meta).scan().to_arrow().to_pylist()
    con = duckdb_connection()
    duck = con.execute(f"SELECT {', '.join(cols)} FROM iceberg_scan('{meta}')").fetchall()
    return sorted(tuple(r[c] for c in cols) for r in py), sorted(tuple(r) for r in duck)


def pypaimon_rows(warehouse, name, cols=("id", "name", "score", "region")) -> list:
    from tools.pypaimon_env import remote_module

    t = remote_module("pypaimon").CatalogFactory.create({"warehouse": warehouse}).get_table(name)
    rb = t.new_read_builder()
    return sorted(tuple(r[c] for c in cols) for r in rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist())


# --------------------------------------------------------------------------- into Iceberg
def test_snapshot_of_a_hive_partitioned_directory(tmp_path, catalog):
    src = write_hive_dir(str(tmp_path / "src"))
    before = state(src)
    out = catalog.sql(f"CALL local.system.snapshot('`parquet`.`{src}`', 'db.snap')").collect()
    assert [tuple(r) for r in out] == [(3,)]
    t = catalog.load_table("db.snap")
    assert [f.name for f in t.schema.fields] == ["id", "name", "score", "region"]
    assert t.partitioning() == ["region"]
    assert t.properties["gc.enabled"] == "false"           # the files are not the snapshot's
    assert {f.file_path for f in t.plan_files()} == {os.path.join(src, p) for p in before if p.endswith(".parquet")}
    # the partition column is only in the paths: every reader takes it from the partition tuple
    assert rows_of(t) == spark_rows(t) == expected()
    py, duck = iceberg_referees(t)
    assert py == expected()
    assert duck == expected()
    # statistics come from the footers: the files' bounds prune a filtered read
    assert len(t.plan_files("id > 3")) == 1
    f = next(f for f in t.plan_files() if f.record_count == 2)
    assert f.null_value_counts[3] == 1 and f.value_counts[1] == 2
    assert state(src) == before                            # the source is untouched
    assert t.check().ok, t.check().to_json()
    # an Iceberg table as the source: its files are Iceberg's already, refused by name (was an AttributeError)
    for call in ("snapshot('db.snap', 'db.snap2')", "add_files('db.snap', 'db.snap')"):
        with pytest.raises(SqlError, match="db.snap is an Iceberg table already"):
            catalog.sql(f"CALL local.system.{call}")
    assert not catalog.table_exists("db.snap2")
    # the changelog reads the imported files' partition column from their paths too
    inserted = t.changelog().where("_change_type = 'INSERT'").select("id", "name", "score", "region").collect()
    assert sorted(tuple(r) for r in inserted) == expected()
    t.append(pa.table({"id": pa.array([9], pa.int64()), "name": ["z"], "score": [9.0], "region": ["eu"]}))
    assert state(src) == before and rows_of(t)[-1] == (9, "z", 9.0, "eu")


def test_add_files_with_partition_filter_and_duplicates(tmp_path, catalog):
    src = write_hive_dir(str(tmp_path / "src"))
    t = catalog.create_table("db.t", "id bigint, name string, score double, region string", partitioned_by=["region"])
    assert t.add_files(src, partition_filter={"region": "eu"}) == {"added_files_count": 1,
                                                                   "changed_partition_count": None}
    assert rows_of(t) == expected(["eu"])
    out = catalog.sql(f"CALL local.system.add_files(table => 'db.t', source_table => '`parquet`.`{src}`', "
                      "partition_filter => map('region', 'us'))").collect()
    assert [tuple(r) for r in out] == [(1, None)]
    assert spark_rows(t) == expected(["eu", "us"])
    with pytest.raises(MigrationError, match="already in db.t"):
        t.add_files(src)
    assert rows_of(t) == expected(["eu", "us"])           # nothing was added
    with pytest.raises(SqlError, match="partition_filter names nope"):
        catalog.sql(f"CALL local.system.add_files('db.t', '`parquet`.`{src}`', map('nope', 'x'))")
    with pytest.raises(SqlError, match="unknown argument 'bogus'"):
        catalog.sql(f"CALL local.system.add_files(table => 'db.t', source_table => '`parquet`.`{src}`', bogus => 1)")
    with pytest.raises(SqlError, match="format 'orc'"):
        catalog.sql("CALL local.system.add_files(table => 'db.t', source_table => '`orc`.`/x`')")
    assert t.refresh().add_files(src, partition_filter={"region": "a b/c"})["added_files_count"] == 1
    assert rows_of(t) == expected()
    py, duck = iceberg_referees(t)
    assert py == duck == expected()


def test_add_files_refuses_files_that_do_not_fit(tmp_path, catalog):
    src = write_hive_dir(str(tmp_path / "src"))
    flat = str(tmp_path / "flat")
    os.makedirs(flat)
    pq.write_table(pa.table({"id": pa.array([1], pa.int64()), "extra": ["x"]}), os.path.join(flat, "a.parquet"))
    pq.write_table(pa.table({"id": ["not a long"]}), os.path.join(flat, "b.parquet"))
    t = catalog.create_table("db.t", "id bigint, name string, score double, region string", partitioned_by=["region"])
    u = catalog.create_table("db.u", "id bigint, name string")
    with pytest.raises(MigrationError, match="the files are partitioned by nothing"):
        t.add_files(flat)
    with pytest.raises(MigrationError, match=r"partitioned by \['region'\].*db.u by nothing"):
        u.add_files(src)
    with pytest.raises(MigrationError, match="column 'extra' is not a column of the table|is string in the file"):
        u.add_files(flat)
    assert t.refresh().current_snapshot() is None and u.refresh().current_snapshot() is None
    with pytest.raises(MigrationError, match="no Parquet file or directory"):
        u.add_files(str(tmp_path / "missing"))


def test_snapshot_and_migrate_of_a_paimon_table(tmp_path, catalog):
    pc = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=catalog.spark)
    p = pc.create_table("default.p", "id bigint, name string, score double, region string", partitioned_by=["region"])
    p.append(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"], "score": [1.5, None],
                       "region": ["eu", "us"]}))
    p.append(pa.table({"id": pa.array([3], pa.int64()), "name": [None], "score": [2.0], "region": ["eu"]}))
    want = sorted(r for r in rows_of(p))
    paimon_files = state(p.location)
    out = catalog.sql("CALL local.system.snapshot(source_table => 'paimon.default.p', table => 'db.snap')",
                      catalogs={"paimon": pc}).collect()
    assert [tuple(r) for r in out] == [(2 + 0 + 1,)]
    snap = catalog.load_table("db.snap")
    assert rows_of(snap) == want and iceberg_referees(snap) == (want, want)
    assert state(p.location) == paimon_files and pypaimon_rows(pc.warehouse, "default.p") == want
    # migrate: an Iceberg table of the same name; the Paimon table stays as the backup
    out = catalog.sql("CALL local.system.migrate('paimon.default.p', map('owner', 'ops'))",
                      catalogs={"paimon": pc}).collect()
    assert [tuple(r) for r in out] == [(3,)]
    mig = catalog.load_table("default.p")
    assert mig.properties["owner"] == "ops" and "gc.enabled" not in mig.properties
    assert rows_of(mig) == spark_rows(mig) == want and iceberg_referees(mig) == (want, want)
    assert mig.check().ok, mig.check().to_json()
    assert pc.list_tables("default") == ["default.p_BACKUP_"]
    assert pypaimon_rows(pc.warehouse, "default.p_BACKUP_") == want
    # a second table, migrated without a backup: Paimon's metadata is gone, the data files stay
    q = pc.create_table("default.q", "id bigint, name string, score double, region string")
    q.append(pa.table({"id": pa.array([7], pa.int64()), "name": ["q"], "score": [0.5], "region": ["x"]}))
    q.append(pa.table({"id": pa.array([8], pa.int64()), "name": ["r"], "score": [0.5], "region": ["x"]}))
    q.overwrite(pa.table({"id": pa.array([9], pa.int64()), "name": ["s"], "score": [0.5], "region": ["x"]}))
    assert catalog.migrate_table("default.q", source_catalog=pc, drop_backup=True) == {"migrated_files_count": 1}
    assert not pc.table_exists("default.q")
    left = [p for p in state(os.path.join(pc.warehouse, "default.db", "q"))]
    assert len(left) == 1 and left[0].endswith(".parquet")
    assert rows_of(catalog.load_table("default.q")) == [(9, "s", 0.5, "x")]


def test_into_iceberg_refuses_primary_key_tables_and_unknown_arguments(tmp_path, catalog):
    pc = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=catalog.spark)
    pc.create_table("default.k", "id bigint not null, v string", properties={"primary-key": "id", "bucket": "1"})
    with pytest.raises(SqlError, match="primary-key table"):
        catalog.sql("CALL local.system.migrate('paimon.default.k')", catalogs={"paimon": pc})
    assert pc.table_exists("default.k") and not catalog.table_exists("default.k")
    with pytest.raises(SqlError, match="ignore_missing_files"):
        catalog.sql("CALL local.system.snapshot('paimon.default.k', 'db.s', ignore_missing_files => true)",
                    catalogs={"paimon": pc})
    src = write_hive_dir(str(tmp_path / "src"))
    with pytest.raises(SqlError, match="location of db.s: a directory \\(Hadoop\\) catalog keeps table db.s"):
        catalog.sql(f"CALL local.system.snapshot('`parquet`.`{src}`', 'db.s', '/elsewhere')")
    assert not catalog.table_exists("db.s")


# --------------------------------------------------------------------------- into Paimon
def test_migrate_table_from_iceberg_to_paimon(tmp_path, catalog):
    t = catalog.create_table("db.ice", "id bigint, name string, score double, region string",
                             partitioned_by=["region"])
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", None, "c"], "score": [1.0, 2.0, None],
                       "region": ["eu", "eu", "us"]}))
    t.append(pa.table({"id": pa.array([4], pa.int64()), "name": ["d"], "score": [4.0], "region": ["us"]}))
    want = rows_of(t)
    sizes = sorted(os.path.getsize(f.file_path) for f in t.plan_files())
    pwh = str(tmp_path / "pwh")
    pc = icefloe.Catalog(pwh, format="paimon", spark=catalog.spark)
    out = pc.sql("CALL sys.migrate_table(source_type => 'iceberg', table => 'ice.db.ice', "
                 "options => 'file.compression=zstd')", catalogs={"ice": catalog}).collect()
    assert [tuple(r) for r in out] == [(True,)]
    p = pc.load_table("db.ice")
    assert p.partition_keys == ["region"] and p.options["bucket"] == "-1"
    assert rows_of(p) == spark_rows(p) == want == pypaimon_rows(pwh, "db.ice")
    assert sorted(f.file_size for f in p.plan_files()) == sizes            # moved, not rewritten
    assert all("/bucket-0/" in f.file_path for f in p.plan_files())
    assert p.check().ok, p.check().to_json()
    assert not catalog.table_exists("db.ice")                               # delete_origin (the default)


def test_migrate_table_refuses_row_level_deletes(tmp_path, catalog):
    t = catalog.create_table("db.ice", "id bigint, v string", properties={"write.delete.mode": "merge-on-read"})
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"]}))
    t.delete("id = 1")
    files = state(t.location)
    pc = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=catalog.spark)
    with pytest.raises(SqlError, match="row-level deletes"):
        pc.sql("CALL sys.migrate_table('iceberg', 'ice.db.ice')", catalogs={"ice": catalog})
    assert state(t.location) == files and not pc.table_exists("db.ice")
    with pytest.raises(SqlError, match="source_type 'hive'"):
        pc.sql("CALL sys.migrate_table('hive', 'ice.db.ice')", catalogs={"ice": catalog})


def test_migrate_file_from_parquet_into_an_existing_table(tmp_path, catalog):
    src = write_hive_dir(str(tmp_path / "src"), with_partition_column=True)
    pwh = str(tmp_path / "pwh")
    pc = icefloe.Catalog(pwh, format="paimon", spark=catalog.spark)
    p = pc.create_table("default.t", "id bigint, name string, score double, region string", partitioned_by=["region"])
    p.append(pa.table({"id": pa.array([0], pa.int64()), "name": ["z"], "score": [0.0], "region": ["eu"]}))
    out = pc.sql(f"CALL sys.migrate_file(source_type => 'parquet', source_table => '{src}', "
                 "target_table => 'default.t')").collect()
    assert [tuple(r) for r in out] == [(True,)]
    want = sorted(expected() + [(0, "z", 0.0, "eu")])
    assert rows_of(p) == want == pypaimon_rows(pwh, "default.t")
    assert not os.path.exists(src) or not any(f.endswith(".parquet") for _d, _s, fs in os.walk(src) for f in fs)
    # files without their partition column cannot become Paimon data files
    bare = write_hive_dir(str(tmp_path / "bare"))
    with pytest.raises(MigrationError, match="do not hold their partition columns"):
        p.migrate_files(bare)
    assert rows_of(p) == want


def _migrate_once(run, spark, direction, fail_at):
    """One migration of a fresh source with the ``fail_at``-th file operation failing; returns
    (the injecting FileIO, whether it failed, the source's files before, its root, the catalogs)."""
    io = FaultInjectingFileIO(fail_at=fail_at)
    if direction == "into_iceberg":
        pc = icefloe.Catalog(str(run / "pwh"), format="paimon", spark=spark)
        p = pc.create_table("default.p", "id bigint, name string, score double, region string",
                            partitioned_by=["region"])
        p.append(pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "name": ["a", "b", "c", "d"],
                           "score": [1.0, 2.0, 3.0, 4.0], "region": ["eu", "us", "eu", "a b/c"]}))
        root = p.location
        before = state(root)
        go = lambda: icefloe.Catalog(str(run / "wh"), spark=spark, io=io).migrate_table(  # noqa: E731
            "default.p", source_catalog=icefloe.Catalog(str(run / "pwh"), format="paimon", spark=spark, io=io))
    else:
        root = write_hive_dir(str(run / "src"), with_partition_column=True)
        before = state(root)
        go = lambda: icefloe.Catalog(str(run / "pwh"), format="paimon", spark=spark, io=io).migrate_table(  # noqa: E731
            root, name="default.t")
    try:
        go()
        return io, False, before, root
    except InjectedFault:
        return io, True, before, root


@pytest.mark.parametrize("direction", ["into_iceberg", "into_paimon"])
def test_a_failure_at_any_file_operation_leaves_the_source_unchanged(tmp_path, spark, direction):
    """Every file operation of a migration fails in turn: the source is as it was and the target
    does not exist, or (a failure the commit protocol tolerates, such as a version hint) the
    migration is whole."""
    probe, _failed, _before, _root = _migrate_once(tmp_path / "probe", spark, direction, None)
    count = probe.count
    assert count >= 4
    for k in range(1, count + 1):
        run = tmp_path / f"run{k}"
        _io, failed, before, root = _migrate_once(run, spark, direction, k)
        if direction == "into_iceberg":
            pc = icefloe.Catalog(str(run / "pwh"), format="paimon", spark=spark)
            ic = icefloe.Catalog(str(run / "wh"), spark=spark)
            if failed:
                assert state(root) == before, f"fault at {probe.log[k - 1]}"
                assert pc.list_tables("default") == ["default.p"] and not ic.table_exists("default.p")
                assert rows_of(pc.load_table("default.p"), ("id",)) == [(1,), (2,), (3,), (4,)]
            else:
                assert rows_of(ic.load_table("default.p"), ("id",)) == [(1,), (2,), (3,), (4,)]
        else:
            pc = icefloe.Catalog(str(run / "pwh"), format="paimon", spark=spark)
            if failed:
                assert state(root) == before, f"fault at {probe.log[k - 1]}"
                assert not pc.table_exists("default.t")
            else:
                assert rows_of(pc.load_table("default.t")) == expected()
