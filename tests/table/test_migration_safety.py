"""A table made by a migration shares its data files with another table: the Paimon backup that
``migrate`` keeps, and the Iceberg table ``snapshot`` makes over a source. No drop, write or
maintenance of either ever deletes or moves the files the other one reads: each destructive call
is made in turn and the other table's files are checksummed before and after."""
import time

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import MaintenanceError, SharedFilesError
from tests.interop_util import pyiceberg_table
from tests.table.test_migration import rows_of, state

COLS = ("id", "name")


def _paimon_source(tmp_path, spark):
    pc = icefloe.Catalog(str(tmp_path / "pwh"), format="paimon", spark=spark)
    p = pc.create_table("default.p", "id bigint, name string")
    p.append(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]}))
    p.append(pa.table({"id": pa.array([3], pa.int64()), "name": ["c"]}))
    return pc, p


def _files_of(table) -> dict:
    """The table's live data files with their contents' digests."""
    import hashlib

    out = {}
    for f in table.refresh().plan_files():
        with open(f.file_path, "rb") as fh:
            out[f.file_path] = hashlib.sha256(fh.read()).hexdigest()
    return out


def _unchanged(iceberg, files: dict, want: list) -> None:
    assert _files_of(iceberg) == files
    assert rows_of(iceberg, COLS) == want
    py = pyiceberg_table(iceberg.refresh().metadata_location).scan().to_arrow().to_pylist()
    assert sorted((r["id"], r["name"]) for r in py) == want


@pytest.mark.parametrize("drop", ["sql_purge", "api_default"])
def test_the_backup_of_a_migration_never_deletes_the_migrated_tables_files(tmp_path, catalog, drop):
    pc, p = _paimon_source(tmp_path, catalog.spark)
    want = rows_of(p, COLS)
    catalog.migrate_table("default.p", source_catalog=pc)
    mig = catalog.load_table("default.p")
    files = _files_of(mig)
    assert len(files) == 2
    backup = pc.load_table("default.p_BACKUP_")
    assert backup.options["icefloe.files-shared-with"].startswith("Iceberg table default.p at ")
    assert rows_of(backup, COLS) == want                       # still a readable Paimon table
    later = int(time.time() * 1000) + 10 * 24 * 3600 * 1000
    refused = [
        lambda: backup.append(pa.table({"id": pa.array([9], pa.int64()), "name": ["z"]})),
        lambda: backup.overwrite(pa.table({"id": pa.array([9], pa.int64()), "name": ["z"]})),
        lambda: backup.truncate(),
        lambda: backup.rewrite_data_files(),
        lambda: backup.expire_snapshots(older_than=later, retain_last=1),
        lambda: backup.remove_orphan_files(older_than=later),
        lambda: backup.rollback_to_snapshot(1),
        lambda: pc.rename_table("default.p_BACKUP_", "default.elsewhere"),
    ]
    for i, call in enumerate(refused):
        before = state(backup.location)
        with pytest.raises(SharedFilesError, match="shared with Iceberg table default.p"):
            call()
        assert state(backup.location) == before, i
        assert _files_of(mig) == files, i
    _unchanged(mig, files, want)
    if drop == "sql_purge":
        pc.sql("DROP TABLE default.p_BACKUP_ PURGE")
    else:
        pc.drop_table("default.p_BACKUP_")
    assert not pc.table_exists("default.p_BACKUP_") and pc.list_tables("default") == []
    _unchanged(mig, files, want)
    # only the data files are left of the backup's directory
    assert sorted(state(backup.location)) == sorted(f[len(backup.location) + 1:] for f in files)


def test_a_failed_migrate_leaves_the_source_unmarked(tmp_path, catalog):
    pc, p = _paimon_source(tmp_path, catalog.spark)
    before = state(p.location)
    catalog.create_table("default.p", "id bigint")              # the Iceberg name is taken
    with pytest.raises(icefloe.errors.TableAlreadyExistsError):
        catalog.migrate_table("default.p", source_catalog=pc)
    assert state(p.location) == before and "icefloe.files-shared-with" not in pc.load_table("default.p").options


def test_maintenance_and_purge_of_a_snapshot_table_never_touch_the_source(tmp_path, catalog):
    pc, p = _paimon_source(tmp_path, catalog.spark)
    want = rows_of(p, COLS)
    source = state(p.location)
    catalog.snapshot_table("default.p", "db.snap", source_catalog=pc)
    snap = catalog.load_table("db.snap")
    snap.append(pa.table({"id": pa.array([4], pa.int64()), "name": ["d"]}))      # a file of the snapshot's own
    snap.delete("id = 1")
    later = int(time.time() * 1000) + 10 * 24 * 3600 * 1000
    with pytest.raises(MaintenanceError, match="gc.enabled is false"):
        snap.expire_snapshots(older_than=later, retain_last=1)
    with pytest.raises(MaintenanceError, match="gc.enabled is false"):
        snap.remove_orphan_files(older_than=later)
    assert state(p.location) == source
    catalog.sql("DROP TABLE db.snap PURGE")
    assert not catalog.table_exists("db.snap")
    assert state(p.location) == source and rows_of(pc.load_table("default.p"), COLS) == want
    # as Iceberg's catalogs drop a gc.enabled=false table: its metadata goes, no data file
    assert not any("/metadata/" in f or f.startswith("metadata/") for f in state(snap.location))


def test_a_snapshot_table_that_owns_its_files_still_deletes_none_of_the_source(tmp_path, catalog):
    """``gc.enabled=true`` given to a snapshot: expiry and purge delete only files inside the
    table's own location, never the source's."""
    pc, p = _paimon_source(tmp_path, catalog.spark)
    source = state(p.location)
    catalog.snapshot_table("default.p", "db.snap", source_catalog=pc, properties={"gc.enabled": "true"})
    snap = catalog.load_table("db.snap")
    snap.overwrite(pa.table({"id": pa.array([7], pa.int64()), "name": ["x"]}))
    later = int(time.time() * 1000) + 10 * 24 * 3600 * 1000
    with pytest.raises(MaintenanceError, match="deleted no file: 2 file.s. the expired snapshots name lie outside"):
        snap.expire_snapshots(older_than=later, retain_last=1)
    snap.remove_orphan_files(older_than=later)
    assert state(p.location) == source and rows_of(snap, COLS) == [(7, "x")]
    with pytest.raises(MaintenanceError, match="outside the table.s location"):
        catalog.sql("DROP TABLE db.snap PURGE")    # its manifests name the source's files: nothing is deleted
    assert state(p.location) == source and catalog.table_exists("db.snap")
