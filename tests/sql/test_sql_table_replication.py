"""Iceberg's spark-procedures page, "Table Replication": ``CALL system.rewrite_table_path`` rewrites
a table's metadata into a staging location with a new prefix; copying the files of its file list
makes a working table there (icefloe and pyiceberg read it), the source untouched."""
import hashlib
import json
import os
import shutil

import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.sql.errors import SqlError
from tests.interop_util import pyiceberg_table


def _checksums(root) -> dict:
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


def _plan(location) -> list:
    with open(location) as fh:
        return [tuple(line.rstrip("\n").split(",")) for line in fh if line.strip()]


def _copy(plan) -> None:
    for source, target in plan:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(source, target)


def _rows(run, table):
    return sorted(tuple(r) for r in run(f"SELECT id, part FROM {table}").collect())


def test_rewrite_table_path_full_and_incremental_copy(catalog, spark, tmp_path):
    run = catalog.sql
    run("CREATE TABLE db.r (id bigint, part string) USING iceberg PARTITIONED BY (part) "
        "TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'format-version' = '2')")
    run("INSERT INTO db.r SELECT id, IF(id < 5, 'a', 'b') FROM range(10)")
    run("DELETE FROM db.r WHERE id IN (1, 7)")          # position delete files naming the data files
    run("INSERT INTO db.r VALUES (10, 'a')")
    t = catalog.load_table("db.r")
    source = t.location
    first = t.snapshots()[0].snapshot_id
    expected = _rows(run, "db.r")
    before = _checksums(source)
    target = str(tmp_path / "copy" / "r")
    staging = str(tmp_path / "staging")

    out = run(f"CALL system.rewrite_table_path(table => 'db.r', source_prefix => '{source}', "
              f"target_prefix => '{target}', staging_location => '{staging}')")
    assert out.columns == ["latest_version", "file_list_location", "rewritten_manifest_file_paths_count",
                           "rewritten_delete_file_paths_count"]
    latest, listing, manifests, deletes = out.first()
    assert latest == os.path.basename(t.metadata_location) and listing == f"{staging}/file-list"
    assert deletes == 2          # one position delete file per partition
    plan = _plan(listing)
    assert all(tgt.startswith(target + "/") for _, tgt in plan)
    staged = [(s, tgt) for s, tgt in plan if s.startswith(staging)]
    originals = [(s, tgt) for s, tgt in plan if not s.startswith(staging)]
    # metadata files, manifest lists, manifests and delete files are staged rewrites; data files are originals
    assert {os.path.relpath(s, staging) for s, _ in staged} == {os.path.relpath(tgt, target) for _, tgt in staged}
    assert sum(1 for s, _ in staged if s.endswith(".metadata.json")) == 4
    assert sum(1 for s, _ in staged if "-deletes.parquet" in s) == 2 and manifests == sum(
        1 for s, _ in staged if s.endswith(".avro") and "/snap-" not in s)
    live = {f.file_path for f in t.plan_files()}
    assert live <= {s for s, _ in originals} and all(os.path.relpath(s, source) == os.path.relpath(tgt, target)
                                                     for s, tgt in originals)
    assert _checksums(source) == before                  # the source table is only read

    _copy(plan)
    latest_copy = f"{target}/metadata/{latest}"
    meta = json.loads(open(latest_copy).read())
    assert meta["location"] == target and all(s["manifest-list"].startswith(target) for s in meta["snapshots"])
    assert all(e["metadata-file"].startswith(target) for e in meta["metadata-log"])
    other = icefloe.Catalog(str(tmp_path / "wh2"), spark=spark)
    registered = other.sql(f"CALL system.register_table('db.copy', '{latest_copy}')").first()
    assert registered[1] == int(t.current_snapshot().summary["total-records"])
    copy = other.load_table("db.copy")
    assert _rows(other.sql, "db.copy") == expected
    assert all(f.file_path.startswith(target) for f in copy.plan_files())
    for task in copy.plan_tasks():                        # the delete files name the copied data files
        for d in task.deletes:
            assert d.file_path.startswith(target)
            assert set(pq.read_table(d.file_path).column("file_path").to_pylist()) <= \
                {f.file_path for f in copy.plan_files()}
    assert sorted(r[0] for r in other.sql(f"SELECT id FROM db.copy VERSION AS OF {first}").collect()) == list(range(10))
    arrow = pyiceberg_table(latest_copy).scan().to_arrow()     # an independent reader
    assert sorted(zip(arrow.column("id").to_pylist(), arrow.column("part").to_pylist())) == expected

    # incremental: what came after the copied version only
    run("INSERT INTO db.r VALUES (11, 'b')")
    out = run(f"CALL system.rewrite_table_path('db.r', '{source}', '{target}', '{latest}', NULL, "
              f"'{tmp_path / 'staging2'}')").first()
    plan2 = _plan(out.file_list_location)
    new_data = [s for s, _ in plan2 if s.endswith(".parquet")]
    assert len(new_data) == 1 and out.rewritten_delete_file_paths_count == 0
    assert sum(1 for s, _ in plan2 if s.endswith(".metadata.json")) == 1
    assert not {tgt for _, tgt in plan2} & {tgt for _, tgt in plan if not tgt.endswith(".metadata.json")}
    _copy(plan2)
    arrow = pyiceberg_table(f"{target}/metadata/{out.latest_version}").scan().to_arrow()
    assert sorted(zip(arrow.column("id").to_pylist(), arrow.column("part").to_pylist())) == \
        sorted(expected + [(11, "b")])


def test_rewrite_table_path_refusals(catalog, tmp_path):
    run = catalog.sql
    run("CREATE TABLE db.q (id bigint) USING iceberg")
    run("INSERT INTO db.q VALUES (1)")
    t = catalog.load_table("db.q")
    source = t.location
    before = _checksums(source)
    call = "CALL system.rewrite_table_path(table => 'db.q', "
    with pytest.raises(SqlError, match="source_prefix and target_prefix are the same"):
        run(f"{call}source_prefix => '{source}', target_prefix => '{source}')")
    with pytest.raises(SqlError, match="end_version v9.metadata.json is not a version in the table's metadata log"):
        run(f"{call}source_prefix => '{source}', target_prefix => '/x', end_version => 'v9.metadata.json')")
    with pytest.raises(SqlError, match=f"table location {source} is not under the source prefix /elsewhere"):
        run(f"{call}source_prefix => '/elsewhere', target_prefix => '/x', staging_location => '{tmp_path}/s')")
    with pytest.raises(SqlError, match="needs argument 'target_prefix'|target_prefix"):
        run(f"{call}source_prefix => '{source}')")
    with pytest.raises(SqlError, match="unknown argument|copy_all"):
        run(f"{call}source_prefix => '{source}', target_prefix => '/x', copy_all => true)")
    # create_file_list => false: the metadata is staged, no file list
    out = run(f"{call}source_prefix => '{source}', target_prefix => '/x', staging_location => '{tmp_path}/s2', "
              "create_file_list => false)").first()
    assert out.file_list_location == "N/A" and not os.path.exists(f"{tmp_path}/s2/file-list")
    assert os.path.exists(f"{tmp_path}/s2/metadata/{out.latest_version}")
    # the default staging location: copy-table-staging-<uuid>/ in the table's metadata directory
    out = run(f"{call}source_prefix => '{source}', target_prefix => '/x')").first()
    assert out.file_list_location.startswith(f"{source}/metadata/copy-table-staging-")
    shutil.rmtree(os.path.dirname(out.file_list_location))
    assert _checksums(source) == before
