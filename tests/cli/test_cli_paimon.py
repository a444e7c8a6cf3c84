"""The command line on a Paimon warehouse, in this process (``tests/cli_run.py``): the metadata and
maintenance commands without Spark (refused), compaction with the session's."""
import json
import os

import pyarrow as pa

from icefloe.catalog import Catalog
from tests.cli_run import icefloe_here


def _icefloe(*args, spark=False):
    return icefloe_here(*args, env={"ICEFLOE_CLI_WIDTH": "250", "COLUMNS": "250"}, spark=spark)


def test_files_snapshots_and_check_on_paimon(tmp_path):
    wh = str(tmp_path / "pwh")
    t = Catalog(wh, "paimon").create_table("db.t", "id bigint not null, name string", partitioned_by=["name"])
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "a"]}))
    t.append(pa.table({"id": pa.array([4], pa.int64()), "name": ["c"]}))
    base = ["--warehouse", wh, "--format", "paimon"]

    files = _icefloe(*base, "files", "db.t", "--json")
    assert files.returncode == 0, files.stderr
    got = json.loads(files.stdout)
    assert sorted((f["partition"]["name"], f["partition"]["bucket"], f["records"]) for f in got) == [
        ("a", 0, 2), ("b", 0, 1), ("c", 0, 1)]
    assert all(os.path.getsize(f["path"]) == f["size"] for f in got)

    snaps = _icefloe(*base, "snapshots", "db.t", "--json")
    assert snaps.returncode == 0, snaps.stderr
    assert [s["id"] for s in json.loads(snaps.stdout)] == [1, 2]

    ok = _icefloe(*base, "check", "db.t")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    os.remove(os.path.join(t.location, "snapshot", "snapshot-2"))
    bad = _icefloe(*base, "check", "db.t")
    assert bad.returncode == 1 and "snapshot" in (bad.stdout + bad.stderr)


def test_manifests_and_tree_on_paimon(tmp_path):
    import fastavro

    wh = str(tmp_path / "pwh")
    t = Catalog(wh, "paimon").create_table("db.t", "id bigint not null, name string", partitioned_by=["name"])
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "a"]}))
    t.overwrite(pa.table({"id": pa.array([4], pa.int64()), "name": ["c"]}))
    base = ["--warehouse", wh, "--format", "paimon"]

    r = _icefloe(*base, "manifests", "db.t", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    snap = t.current_snapshot()
    # exactly what the snapshot's manifest lists hold, read here with fastavro
    expected = []
    for kind, lst in (("base", snap.base_manifest_list), ("delta", snap.delta_manifest_list)):
        with open(os.path.join(t.location, "manifest", lst), "rb") as f:
            expected += [(kind, rec["_FILE_NAME"], rec["_NUM_ADDED_FILES"], rec["_NUM_DELETED_FILES"])
                         for rec in fastavro.reader(f)]
    assert [(m["list_kind"], m["file_name"], m["num_added_files"], m["num_deleted_files"]) for m in got] == expected
    assert sum(m["num_added_files"] for m in got) == 3 and sum(m["num_deleted_files"] for m in got) == 2
    assert all(os.path.getsize(m["path"]) == m["file_size"] for m in got)

    r = _icefloe(*base, "tree", "db.t", "--no-disk")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "snapshot-1" in out and "snapshot-2" in out and "OVERWRITE" in out
    for f in t.plan_files():
        assert os.path.relpath(f.file_path, t.location) in out
    assert out.count("DELETE ") == 2        # the overwrite's two DELETE entries

    r = _icefloe(*base, "tree", "db.t", "--current")
    assert r.returncode == 0 and "snapshot-1 APPEND" not in r.stdout and "snapshot-2 OVERWRITE" in r.stdout
    assert "schema-0" in r.stdout           # the files on disk follow the metadata tree


def test_maintenance_shows_progress_bars(tmp_path):
    wh = str(tmp_path / "pwh")
    t = Catalog(wh, "paimon").create_table("db.t", "id bigint", properties={
        "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "snapshot.time-retained": "1 ms",
        "write-only": "true"})
    for i in range(4):
        t.overwrite(pa.table({"id": pa.array([i], pa.int64())}))
    r = _icefloe("--warehouse", wh, "--format", "paimon", "expire", "db.t", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["expired_snapshot_ids"] == [1, 2, 3]   # clean JSON on stdout; bars on stderr
    bars = {line.split("━")[0].strip(): line.split()[-2] for line in r.stderr.splitlines() if "━" in line}
    assert bars["reading expired snapshots"] == "3/3"
    assert bars["deleting data files"] == "3/3"
    r = _icefloe("--warehouse", wh, "--format", "paimon", "check", "db.t")
    assert r.returncode == 0 and "checking snapshots" in r.stderr and "1/1" in r.stderr


def test_compact_rewrite_manifests_and_rollback_on_paimon(tmp_path, spark):
    wh = str(tmp_path / "pwh")
    t = Catalog(wh, "paimon").create_table("db.t", "id bigint not null, name string", partitioned_by=["name"])
    for i in range(4):
        t.append(pa.table({"id": pa.array([i, i + 10], pa.int64()), "name": ["a", "b"]}))
    base = ["--warehouse", wh, "--format", "paimon"]
    r = _icefloe(*base, "compact", "db.t", "--json", spark=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["commitKind"] == "COMPACT"
    assert "compacting buckets" in r.stderr and "2/2" in r.stderr
    assert len(t.plan_files()) == 2
    r = _icefloe(*base, "rewrite-manifests", "db.t", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["id"] == 6, r.stderr
    assert _icefloe(*base, "check", "db.t").returncode == 0
    r = _icefloe(*base, "rollback", "db.t", "--snapshot", "2", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["id"] == 2, r.stderr
    assert sorted(t.to_arrow()["id"].to_pylist()) == [0, 1, 10, 11]
    assert _icefloe(*base, "check", "db.t").returncode == 0


def test_check_on_paimon_finds_damaged_manifests_data_files_and_counts(tmp_path):
    wh = str(tmp_path / "pwh")
    t = Catalog(wh, "paimon").create_table("db.t", "id bigint not null, name string", partitioned_by=["name"])
    for i in range(3):
        t.append(pa.table({"id": pa.array([i, i + 10], pa.int64()), "name": ["a", "b"]}))
    t.create_tag("first", 1)
    base = ["--warehouse", wh, "--format", "paimon"]
    ok = _icefloe(*base, "check", "db.t", "--json")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    checked = json.loads(ok.stdout)["checked"]
    assert checked["data files"] == 6 and checked["tags"] == 1 and checked["schemas"] == 1

    victim = sorted(f.file_path for f in t.plan_files())[0]
    with open(victim, "ab") as f:
        f.write(b"junk")                                  # the recorded size no longer holds
    first = sorted(f.file_path for f in t.plan_files(snapshot_id=1))[-1]
    os.remove(first)                                      # a file snapshot 1 and the tag still use
    snap3 = os.path.join(t.location, "snapshot", "snapshot-3")
    doc = json.load(open(snap3))
    doc["totalRecordCount"] = 99
    json.dump(doc, open(snap3, "w"))
    bad = _icefloe(*base, "check", "db.t", "--json")
    assert bad.returncode == 1
    problems = json.loads(bad.stdout)["problems"]
    assert any(p["kind"] == "file" and p["path"] == victim and "the manifest records" in p["message"]
               for p in problems), problems
    assert any(p["kind"] == "file" and p["path"] == first and p["message"].startswith("missing")
               for p in problems), problems
    assert any(p["kind"] == "records" and "totalRecordCount 99" in p["message"] for p in problems), problems

    manifest_dir = os.path.join(t.location, "manifest")
    victim_manifest = sorted((n for n in os.listdir(manifest_dir) if not n.startswith("manifest-list")),
                             key=lambda n: os.path.getmtime(os.path.join(manifest_dir, n)))[-1]
    path = os.path.join(manifest_dir, victim_manifest)
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])
    bad = _icefloe(*base, "check", "db.t", "--json")
    problems = json.loads(bad.stdout)["problems"]
    assert bad.returncode == 1 and any(p["kind"] == "manifest" and p["path"] == path for p in problems), problems


def test_describe_and_check_show_and_verify_the_iceberg_view(tmp_path):
    from click.testing import CliRunner

    from icefloe.cli import cli

    wh = str(tmp_path / "pwh")
    t = Catalog(wh, "paimon").create_table("db.v", "id bigint, name string",
                                           properties={"metadata.iceberg.storage": "table-location",
                                                       "metadata.iceberg.previous-versions-max": "1"})
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]}))
    base = ["--warehouse", wh, "--format", "paimon"]
    run = lambda *a: CliRunner().invoke(cli, [*base, *a])  # noqa: E731
    desc = run("describe", "db.v", "--json")
    assert desc.exit_code == 0, desc.output
    info = {r["col_name"]: r["data_type"] for r in json.loads(desc.output)}
    assert info["Iceberg Storage"] == "table-location"
    assert info["Iceberg Metadata Location"].endswith("/db.db/v/metadata/v1.metadata.json")
    assert (info["Iceberg Snapshot"], info["Iceberg Rows"], info["Iceberg View In Step"]) == ("1", "2", "yes")
    ok = run("check", "db.v", "--json")
    assert ok.exit_code == 0 and json.loads(ok.output)["checked"]["iceberg view files"] == 1, ok.output
    # a view left behind (its latest version lost) and a broken Iceberg manifest list are both reported
    t.append(pa.table({"id": pa.array([3], pa.int64()), "name": ["c"]}))
    os.remove(os.path.join(t.location, "metadata", "v2.metadata.json"))    # v1 stays (previous-versions-max)
    lag = run("check", "db.v")
    assert lag.exit_code == 1 and "Paimon's latest is 2" in lag.output, lag.output
    assert "no (Paimon is at snapshot 2)" in run("describe", "db.v").output
    t.sync_iceberg()
    lst = json.load(open(os.path.join(t.location, "metadata", "v2.metadata.json")))["snapshots"][-1]["manifest-list"]
    os.remove(lst)
    broken = run("check", "db.v")
    assert broken.exit_code == 1 and "iceberg view" in broken.output, broken.output
