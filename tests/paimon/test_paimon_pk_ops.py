"""Primary-key tables under the rest of the lifecycle: time travel, tags, rollback, expiry,
orphan cleanup, the ``files`` system table, ``check`` (clean on what every writer writes,
naming what is broken) and the CLI."""
import json
import os
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

DDL = "id bigint, a bigint, s string"


def _rows(table):
    return sorted(table.to_pylist(), key=lambda r: r["id"])


def _pypaimon_rows(pcat, name, **options):
    pt = pcat.get_table(name)
    if options:
        pt = pt.copy(options)
    rb = pt.new_read_builder()
    return _rows(rb.new_read().to_arrow(rb.new_scan().plan().splits()))


def _commits(t, n=4):
    schema = t.to_arrow().schema
    for c in range(n):
        t.append(pa.Table.from_pylist([{"id": i, "a": c, "s": f"c{c}"} for i in range(c, c + 5)], schema=schema))


@pytest.fixture
def table(paimon_catalog):
    t = paimon_catalog.create_table("db.t", DDL, properties={"primary-key": "id", "bucket": "2"})
    _commits(t)
    return t


def test_time_travel_tags_and_rollback(table, pypaimon_catalog):
    t = table
    at2 = _rows(t.to_arrow(snapshot_id=2))
    assert {r["id"]: r["a"] for r in at2} == {0: 0, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1}
    assert at2 == _pypaimon_rows(pypaimon_catalog, "db.t", **{"scan.snapshot-id": "2"})
    t.create_tag("v2", snapshot_id=2)
    assert _rows(t.to_arrow(ref="v2")) == at2
    t.delete("id = 1")
    t.rollback_to_tag("v2")
    assert _rows(t.refresh().to_arrow()) == at2 == _pypaimon_rows(pypaimon_catalog, "db.t")
    assert t.current_snapshot().id == 2
    _commits(t, 2)
    t.rollback_to_snapshot(3)
    assert _rows(t.refresh().to_arrow()) == _pypaimon_rows(pypaimon_catalog, "db.t")
    assert t.check().ok


def test_expiry_and_orphan_cleanup_keep_the_merged_rows(table, pypaimon_catalog):
    t = table
    before = _rows(t.to_arrow())
    live = {f.file_path for f in t.plan_files()}
    t.expire_snapshots(retain_last=1, older_than=int(time.time() * 1000) + 1000)
    assert [s.id for s in t.refresh().snapshots()] == [4]
    assert _rows(t.to_arrow()) == before == _pypaimon_rows(pypaimon_catalog, "db.t")
    assert all(os.path.exists(p) for p in live)
    stray = os.path.join(os.path.dirname(next(iter(live))), "data-stray-0.parquet")
    pq.write_table(pa.table({"x": [1]}), stray)
    old = time.time() - 7 * 24 * 3600
    os.utime(stray, (old, old))
    removed = t.remove_orphan_files(older_than=int(time.time() * 1000))
    assert removed == [stray] and all(os.path.exists(p) for p in live)
    assert _rows(t.to_arrow()) == before
    assert t.check().ok


def test_files_system_table_shows_levels_and_sequence_numbers(table):
    files = table.metadata_table("files").to_pylist()
    assert len(files) == len(table.plan_files())
    assert {f["level"] for f in files} == {0}
    ranges = sorted((f["bucket"], f["min_sequence_number"], f["max_sequence_number"]) for f in files)
    for (b1, lo1, hi1), (b2, lo2, _hi2) in zip(ranges, ranges[1:]):
        assert lo1 <= hi1 and (b1 != b2 or hi1 < lo2)             # numbered on per bucket


def test_check_is_clean_on_what_every_writer_writes(paimon_catalog, pypaimon_catalog, paimon_warehouse):
    from tools.pypaimon_env import remote_module
    Schema = remote_module("pypaimon").Schema
    from pypaimon_rust.datafusion import SQLContext

    from icefloe.paimon import kv_compact

    t = paimon_catalog.create_table("db.ours", DDL, properties={"primary-key": "id", "bucket": "2"})
    _commits(t)
    kv_compact.compact_table(t)
    _commits(t, 2)
    d = paimon_catalog.create_table("db.dyn", DDL, properties={"primary-key": "id",
                                                               "dynamic-bucket.target-row-num": "3"})
    _commits(d)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.int64()), ("s", pa.string())])
    pypaimon_catalog.create_table("db.py", Schema.from_pyarrow_schema(schema, primary_keys=["id"],
                                                                      options={"bucket": "2"}), False)
    for c in range(3):
        pt = pypaimon_catalog.get_table("db.py")
        wb = pt.new_batch_write_builder()
        w, cm = wb.new_write(), wb.new_commit()
        w.write_arrow(pa.Table.from_pylist([{"id": i, "a": c, "s": None} for i in range(c, c + 4)], schema=schema))
        cm.commit(w.prepare_commit())
        w.close()
        cm.close()
    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": paimon_warehouse})
    ctx.sql("CREATE TABLE paimon.db.rs (id BIGINT, a BIGINT, s STRING, PRIMARY KEY (id)) WITH ('bucket' = '-1')")
    ctx.sql("INSERT INTO paimon.db.rs VALUES (1, 1, 'x'), (2, 2, NULL)")
    ctx.sql("INSERT INTO paimon.db.rs VALUES (1, 3, 'y'), (5, 5, NULL)")
    for name in ("db.ours", "db.dyn", "db.py", "db.rs"):
        report = paimon_catalog.load_table(name).check()
        assert report.ok, (name, report.problems)
        assert report.checked.get("primary-key files", 0) >= 2, name
    assert paimon_catalog.load_table("db.dyn").check().checked.get("index files", 0) >= 2


def _first_file(t):
    return sorted(t.plan_files(), key=lambda f: f.file_path)[0].file_path


def test_check_names_what_is_broken(paimon_catalog):
    t = paimon_catalog.create_table("db.k", DDL, properties={"primary-key": "id", "bucket": "1"})
    _commits(t, 2)
    path = _first_file(t)
    data = pq.ParquetFile(path).read()
    pq.write_table(data.take(pa.array(list(reversed(range(data.num_rows))))), path)    # out of key order
    problems = [p.message for p in t.check().problems]
    assert any("ascending key order" in m for m in problems), problems
    assert any("keys" in m and "manifest records" in m for m in problems), problems
    seq = data.column("_SEQUENCE_NUMBER")
    data = data.set_column(data.schema.get_field_index("_SEQUENCE_NUMBER"), "_SEQUENCE_NUMBER",
                           pa.compute.add(seq, 100))
    pq.write_table(data, path)
    problems = [p.message for p in t.check().problems]
    assert any(m.startswith("sequence numbers") for m in problems), problems
    d = paimon_catalog.create_table("db.i", DDL, properties={"primary-key": "id"})
    _commits(d, 2)
    index_dir = os.path.join(d.location, "index")
    live = sorted(os.listdir(index_dir))
    from icefloe.paimon import dynamic_bucket as db

    current = {r["_FILE_NAME"] for r in db.hash_entries(d.store, d.current_snapshot()).values()}
    os.remove(os.path.join(index_dir, sorted(current)[0]))
    problems = [(p.kind, p.message) for p in d.check().problems]
    assert any(k == "index" and "missing" in m for k, m in problems), (problems, live)


def test_cli_on_a_primary_key_table(table, paimon_warehouse, monkeypatch):
    from click.testing import CliRunner

    from icefloe.cli import cli

    monkeypatch.setenv("ICEFLOE_CLI_WIDTH", "250")
    base = ["--warehouse", paimon_warehouse, "--format", "paimon"]
    r = CliRunner().invoke(cli, base + ["snapshots", "db.t", "--json"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.output)) == 4
    r = CliRunner().invoke(cli, base + ["files", "db.t", "--json"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.output)) == len(table.plan_files())
    r = CliRunner().invoke(cli, base + ["check", "db.t", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["ok"] is True
