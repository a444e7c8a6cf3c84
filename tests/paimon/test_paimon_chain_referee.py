"""Paimon chain tables against Apache Paimon 1.4's Java engine without Spark (``paimon-bundle``'s table
API, ``tools/paimon_java.py``), both ways: Paimon Java reads the chain table icefloe wrote (main, the
snapshot branch, the delta branch, group partitions, anchors, stepped days, the sequence field across
branches) with the same rows as icefloe's Arrow and Spark reads; Paimon Java's overwrite of a delta
partition truncates the snapshot branch and icefloe reads the result as Paimon does; icefloe's does the
same and Paimon reads it. Long: one JVM for the session (``paimon_bundle``)."""
from __future__ import annotations

import pyarrow as pa
import pytest

from icefloe.catalog import Catalog
from icefloe.paimon.types import to_arrow_schema

pytestmark = pytest.mark.long

BRANCHES = {"scan.fallback-snapshot-branch": "snapshot", "scan.fallback-delta-branch": "delta"}
PROPS = {"chain-table.enabled": "true", "primary-key": "region,dt,t1", "sequence.field": "t2", "bucket-key": "t1",
         "bucket": "2", "partition.timestamp-pattern": "$dt", "partition.timestamp-formatter": "yyyyMMdd",
         "chain-table.chain-partition-keys": "dt"}


def _put(table, rows, overwrite=None):
    data = pa.Table.from_pylist([dict(zip([f.name for f in table.table_schema.fields], r)) for r in rows],
                                schema=to_arrow_schema(table.table_schema.fields, with_ids=False))
    return table.append(data) if overwrite is None else table.overwrite(data, partition=overwrite)


def _ice(table):
    return sorted((tuple(r.values()) for r in table.refresh().to_arrow().to_pylist()), key=repr)


def _spark(table):
    return sorted((tuple(r) for r in table.refresh().to_spark().collect()), key=repr)


def _chain_table(ice, name):
    """A chain table partitioned by region and dt, with its snapshot and delta branches."""
    t = ice.create_table(name, "t1 string not null, t2 string, t3 string, region string not null, "
                         "dt string not null", partitioned_by=["region", "dt"], properties=PROPS)
    t.create_branch("snapshot")
    t.create_branch("delta")
    for b in (t, t.branch_table("snapshot"), t.branch_table("delta")):
        b.update_properties(set=BRANCHES)
    return t.refresh()


def _java(pj, name):
    return sorted((tuple(r) for r in pj.rows(name)), key=repr)


def test_paimon_java_reads_icefloe_chain_table_and_writes_it(paimon_bundle, paimon_spark):
    pj = paimon_bundle
    t = _chain_table(Catalog(pj.warehouse, "paimon", paimon_spark), "db.chain")
    snap, delta = t.branch_table("snapshot"), t.branch_table("delta")
    _put(snap, [("a", "5", "cn-full", "CN", "20250810"), ("b", "1", "us-full", "US", "20250808"),
                ("z", "1", "cn-old", "CN", "20250801")])
    _put(delta, [("a", "3", "loses-to-anchor", "CN", "20250811"), ("c", "1", "cn-11", "CN", "20250811"),
                 ("f", "1", "cn-09", "CN", "20250809"), ("d", "1", "us-11", "US", "20250811"),
                 ("e", "1", "us-09", "US", "20250809"), ("p", "1", "jp-01", "JP", "20250801"),
                 ("q", "1", "jp-02", "JP", "20250802"), ("a", "9", "wins", "CN", "20250813")])
    _put(t, [("m", "1", "main", "US", "20250813")])
    want = _java(pj, "db.chain")
    assert ("a", "5", "cn-full", "CN", "20250811") in want and ("a", "9", "wins", "CN", "20250813") in want
    assert _ice(t) == want
    assert _spark(t) == want
    for branch in ("snapshot", "delta"):
        assert _ice(t.branch_table(branch)) == _java(pj, f"db.chain$branch_{branch}")

    # Paimon Java overwrites a delta partition the snapshot branch also has: its callback truncates it there
    _put(snap, [("a", "6", "cn-full-11", "CN", "20250811")])
    pj.write("db.chain$branch_delta", [("k", "1", "java", "CN", "20250811")], overwrite={"region": "CN", "dt": "20250811"})
    assert snap.refresh().current_snapshot().commit_kind == "OVERWRITE"
    assert _ice(snap) == _java(pj, "db.chain$branch_snapshot")
    assert ("CN", "20250811") not in {r[3:] for r in _ice(snap)}
    assert _ice(t) == _java(pj, "db.chain")

    # icefloe does the same; Paimon Java reads what it left
    _put(snap, [("a", "7", "cn-full-11b", "CN", "20250811")])
    _put(delta, [("l", "1", "ice", "CN", "20250811")], overwrite={"region": "CN", "dt": "20250811"})
    assert _java(pj, "db.chain$branch_snapshot") == _ice(snap)
    assert ("CN", "20250811") not in {r[3:] for r in _ice(snap)}
    assert _java(pj, "db.chain") == _ice(t) == _spark(t)


def test_paimon_java_lists_the_chain_tables_partitions_and_files_as_icefloe(paimon_bundle, paimon_spark):
    """``$partitions`` of main: main's, then the snapshot and delta branches' not listed yet; ``$files``:
    main's files only. Paimon Java's system tables of the chain table are the referee."""
    pj = paimon_bundle
    t = _chain_table(Catalog(pj.warehouse, "paimon", paimon_spark), "db.chain_ls")
    _put(t.branch_table("snapshot"), [("a", "1", "s", "CN", "20250810"), ("b", "1", "s", "CN", "20250810")])
    _put(t.branch_table("delta"), [("c", "1", "d", "CN", "20250810"), ("d", "1", "d", "CN", "20250811")])
    _put(t, [("m", "1", "main", "US", "20250813")])
    java = sorted(pj.rows("db.chain_ls$partitions", columns=("partition", "record_count", "file_count")))
    ice_parts = sorted((r["partition"], r["record_count"], r["file_count"])
                       for r in t.refresh().metadata_table("partitions").to_pylist())
    assert ice_parts == java and len(java) == 3
    java_files = sorted(r[0].rsplit("/", 1)[-1] for r in pj.rows("db.chain_ls$files", columns=("file_path",)))
    assert java_files == sorted(e.file.file_name for e in t.plan()) and len(java_files) == 1
    assert sorted(r["file_path"].rsplit("/", 1)[-1] for r in t.metadata_table("files").to_pylist()) == java_files
