"""Paimon chain tables (``chain-table.enabled``; ``icefloe.paimon.chain``): Paimon's checks of the
options, the merged read of main, the snapshot branch and the delta branch (read here with Arrow;
Spark's read is in tests/sql/test_sql_paimon_chain.py), and what writes to the branches do to each
other, on the documented example's shape (``t1`` key, ``t2`` the sequence field, daily partitions)."""
import os

import pyarrow as pa
import pytest

from icefloe.errors import IcefloeError, SchemaError, UnsupportedTableError
from icefloe.paimon import chain
from icefloe.paimon.types import to_arrow_schema

BRANCHES = {"scan.fallback-snapshot-branch": "snapshot", "scan.fallback-delta-branch": "delta"}


@pytest.fixture
def pc(paimon_catalog):
    return paimon_catalog       # Arrow only: no Spark session


def _props(keys, **extra):
    return {"chain-table.enabled": "true", "primary-key": ",".join([*keys, "t1"]), "sequence.field": "t2",
            "bucket-key": "t1", "bucket": "2", "partition.timestamp-pattern": "$dt",
            "partition.timestamp-formatter": "yyyyMMdd", **extra}


def chain_table(pc, keys=("dt",), **extra):
    """The documented setup: the table, its snapshot and delta branches, the fallback options on all three."""
    cols = ", ".join(["t1 string not null", "t2 string", "t3 string"] + [f"{k} string not null" for k in keys])
    t = pc.create_table("default.t", cols, partitioned_by=list(keys), properties=_props(keys, **extra))
    t.create_branch("snapshot")
    t.create_branch("delta")
    for b in (t, t.branch_table("snapshot"), t.branch_table("delta")):
        b.update_properties(set=BRANCHES)
    return t.refresh()


def put(table, rows, overwrite=None):
    data = pa.Table.from_pylist([dict(zip([f.name for f in table.table_schema.fields], r)) for r in rows],
                                schema=to_arrow_schema(table.table_schema.fields, with_ids=False))
    if overwrite is None:
        return table.append(data)
    return table.overwrite(data, partition=overwrite)


def rows(table, where=None):
    out = table.to_arrow(where=where)
    return sorted(tuple(r.values()) for r in out.to_pylist())


def snapshot_ids(table):
    return [s.id for s in table.refresh().snapshots()]


def test_options_are_checked_as_paimon_checks_them(pc):
    base = _props(("dt",))
    cases = [
        ({"bucket": "-1", "bucket-key": None}, "Bucket number must be greater than 0 for chain table"),
        ({"sequence.field": None}, "Sequence field is required for chain table"),
        ({"partition.timestamp-pattern": None}, "Partition timestamp pattern is required"),
        ({"partition.timestamp-formatter": None}, "Partition timestamp formatter is required"),
        ({"changelog-producer": "lookup"}, "Changelog producer must be none or input"),
        ({"deletion-vectors.enabled": "true"}, "do not support enable deletion vector"),
        ({"chain-table.chain-partition-keys": "region"}, "must be a contiguous suffix"),
        ({"partition.timestamp-formatter": "yyyyMMdd EEE"}, "not 'EEE'"),
    ]
    for change, message in cases:
        props = {k: v for k, v in {**base, **change}.items() if v is not None}
        with pytest.raises(SchemaError, match=message):
            pc.create_table("default.bad", "t1 string not null, t2 string, dt string not null", partitioned_by=["dt"],
                            properties=props)
        assert not pc.table_exists("default.bad")
    with pytest.raises(SchemaError, match="Chain table must be partition table"):
        pc.create_table("default.bad", "t1 string not null, t2 string",
                        properties={**base, "primary-key": "t1"})
    with pytest.raises(SchemaError, match="Primary key is required for chain table"):
        pc.create_table("default.bad", "t1 string, t2 string, dt string", partitioned_by=["dt"],
                        properties={k: v for k, v in base.items() if k != "primary-key"})
    # a change that would break the rules is refused and writes no schema
    t = chain_table(pc)
    schemas = sorted(os.listdir(os.path.join(t.location, "schema")))
    with pytest.raises(SchemaError, match="must be a contiguous suffix"):
        t.update_properties(set={"chain-table.chain-partition-keys": "t1"})
    assert sorted(os.listdir(os.path.join(t.location, "schema"))) == schemas


def test_read_merges_the_snapshot_and_delta_branches(pc):
    """The documented example: a full partition in the snapshot branch, the next day's changes in the
    delta branch; the table reads the next day as the two merged, each branch reads as itself."""
    t = chain_table(pc)
    snap, delta = t.branch_table("snapshot"), t.branch_table("delta")
    put(snap, [("1", "1", "1", "20250810")], overwrite={"dt": "20250810"})
    put(delta, [("2", "1", "1", "20250811")], overwrite={"dt": "20250811"})
    assert rows(t, "dt = '20250811'") == [("1", "1", "1", "20250811"), ("2", "1", "1", "20250811")]
    assert rows(delta, "dt = '20250811'") == [("2", "1", "1", "20250811")]
    assert rows(t) == [("1", "1", "1", "20250810"), ("1", "1", "1", "20250811"), ("2", "1", "1", "20250811")]
    assert rows(snap) == [("1", "1", "1", "20250810")]
    # the sequence field orders a key's records across the branches: a later day's record with a lower
    # t2 loses to the anchor's
    put(delta, [("1", "0", "older", "20250812"), ("3", "9", "x", "20250812")])
    assert rows(t, "dt = '20250812'") == [("1", "1", "1", "20250812"), ("2", "1", "1", "20250812"),
                                          ("3", "9", "x", "20250812")]
    put(delta, [("1", "7", "newer", "20250814")])       # 20250813 has no delta: the days step over it
    assert rows(t, "dt = '20250814'") == [("1", "7", "newer", "20250814"), ("2", "1", "1", "20250814"),
                                          ("3", "9", "x", "20250814")]
    assert rows(t, "dt = '20250814' AND t3 = 'x'") == [("3", "9", "x", "20250814")]
    # a partition main has is main's alone
    put(t, [("9", "1", "main", "20250811")])
    assert rows(t, "dt = '20250811'") == [("9", "1", "main", "20250811")]
    # without Spark, time travel of the merged read is refused (the branches have their own histories)
    with pytest.raises(UnsupportedTableError, match="time travel"):
        t.to_arrow(snapshot_id=1)


def test_group_partitions_chain_each_group_alone(pc):
    """``chain-table.chain-partition-keys = dt``: each region finds its own anchor; from the anchor the
    days are stepped; a group with no snapshot partition merges every delta partition up to the one read."""
    t = chain_table(pc, ("region", "dt"), **{"chain-table.chain-partition-keys": "dt"})
    snap, delta = t.branch_table("snapshot"), t.branch_table("delta")
    put(snap, [("a", "1", "cn-full", "CN", "20250810"), ("b", "1", "us-full", "US", "20250808")])
    put(delta, [("c", "1", "cn-11", "CN", "20250811"), ("f", "1", "cn-09", "CN", "20250809"),
                ("d", "1", "us-11", "US", "20250811"), ("e", "1", "us-09", "US", "20250809"),
                ("p", "1", "jp-01", "JP", "20250801"), ("q", "1", "jp-02", "JP", "20250802")])
    assert [r[0] for r in rows(t, "region = 'CN' AND dt = '20250811'")] == ["a", "c"]     # not f: before the anchor
    assert [r[0] for r in rows(t, "region = 'US' AND dt = '20250811'")] == ["b", "d", "e"]
    assert [r[0] for r in rows(t, "region = 'JP' AND dt = '20250802'")] == ["p", "q"]
    assert [r[0] for r in rows(t, "region = 'JP' AND dt = '20250801'")] == ["p"]
    assert {r[3:] for r in rows(t, "region = 'US'")} == {("US", "20250808"), ("US", "20250809"), ("US", "20250811")}


def test_delta_overwrite_truncates_the_snapshot_partition(pc):
    """An INSERT OVERWRITE of a delta partition makes the snapshot branch's copy of it stale: Paimon
    truncates it there (one OVERWRITE snapshot); an append to the delta branch leaves it alone."""
    t = chain_table(pc)
    snap, delta = t.branch_table("snapshot"), t.branch_table("delta")
    put(snap, [("1", "1", "full", "20250810")])
    put(snap, [("1", "1", "full", "20250811"), ("2", "1", "full", "20250811")])
    put(delta, [("3", "1", "d", "20250811")])                   # an append: the snapshot branch unchanged
    before = snapshot_ids(snap)
    assert rows(t, "dt = '20250811'") == [("1", "1", "full", "20250811"), ("2", "1", "full", "20250811")]
    put(delta, [("4", "1", "d", "20250811")], overwrite={"dt": "20250811"})
    after = snap.refresh()
    assert snapshot_ids(after) == before + [before[-1] + 1]
    assert after.current_snapshot().commit_kind == "OVERWRITE"
    assert rows(after) == [("1", "1", "full", "20250810")]
    assert rows(t, "dt = '20250811'") == [("1", "1", "full", "20250811"), ("4", "1", "d", "20250811")]


def test_dropping_an_anchor_the_deltas_need_is_refused(pc):
    t = chain_table(pc)
    snap, delta = t.branch_table("snapshot"), t.branch_table("delta")
    put(snap, [("1", "1", "full", "20250810")])
    put(delta, [("2", "1", "d", "20250811")])
    before = snapshot_ids(snap)
    with pytest.raises(IcefloeError, match="Snapshot partition cannot be dropped.*20250811"):
        snap.drop_partitions([{"dt": "20250810"}])
    assert snapshot_ids(snap) == before and rows(snap) == [("1", "1", "full", "20250810")]
    put(snap, [("1", "0", "older", "20250809")])                 # an earlier anchor: now it may go
    snap.drop_partitions([{"dt": "20250810"}])
    assert rows(t, "dt = '20250811'") == [("1", "0", "older", "20250811"), ("2", "1", "d", "20250811")]


def test_days_are_stepped_by_the_partition_time():
    """Paimon's ``getDeltaPartitions``: one chain key steps a day at a time, after the anchor up to the
    partition read; two step hour by hour within each day."""
    from icefloe.paimon.schema import TableSchema
    from icefloe.paimon.types import DataField
    from icefloe.core import types as core

    def schema(keys, pattern, formatter):
        fields = [DataField(i, k, core.StringType()) for i, k in enumerate(keys)]
        return TableSchema(id=0, fields=fields, highest_field_id=len(keys), partition_keys=list(keys),
                           primary_keys=[], options={"partition.timestamp-pattern": pattern,
                                                     "partition.timestamp-formatter": formatter})

    daily = schema(["dt"], "$dt", "yyyy-MM-dd")
    assert chain.delta_partitions_between(("2025-02-27",), ("2025-03-02",), 0, daily) == \
        [("2025-02-28",), ("2025-03-01",), ("2025-03-02",)]
    hourly = schema(["dt", "hour"], "$dt $hour:00:00", "yyyyMMdd HH:mm:ss")
    got = chain.delta_partitions_between(("20250810", "22"), ("20250811", "01"), 0, hourly)
    assert got == [("20250810", "23"), ("20250811", "00"), ("20250811", "01")]
