"""A plan with a partition filter judges a large manifest by partition first and decodes in full only
the Avro blocks holding entries it keeps (``manifest_reader``'s partition-first path): its tasks are
exactly those of the plan over the whole manifest's columns, and of the plan over its entries, on
random manifests (partitions clustered or scattered over many blocks, every entry status) and
random filters on the partition columns and data columns."""
from __future__ import annotations

import dataclasses
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import icefloe
from icefloe.core import avro_columns
from icefloe.iceberg import manifest as mf
from icefloe.iceberg import manifest_avro, manifest_reader
from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.manifest_list import DATA_MANIFEST, manifest_file_for

FIELDS = [f.name for f in dataclasses.fields(mf.DataFile)]
SNAPSHOT, SEQUENCE = 7, 3


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    cat = icefloe.Catalog(str(tmp_path_factory.mktemp("pfirst") / "wh"))
    return cat.create_table("db.t", "id bigint not null, p int not null, s string not null",
                            partitioned_by=["p", "s"])


def _entries(n: int, rng: np.random.Generator, clustered: bool) -> list[mf.ManifestEntry]:
    parts = np.sort(rng.integers(0, 12, n)) if clustered else rng.integers(0, 12, n)
    statuses = rng.choice([mf.ADDED, mf.EXISTING, mf.DELETED], n, p=[0.5, 0.3, 0.2])
    out = []
    for i in range(n):
        p = int(parts[i])
        f = mf.DataFile(file_path=f"s3://b/t/data/{i:06d}.parquet", file_format="PARQUET",
                        partition=(p, "ab"[p % 2]), record_count=10 + i % 7, file_size_in_bytes=1000 + i,
                        value_counts={1: 10, 2: 10}, null_value_counts={1: 0, 2: 0},
                        lower_bounds={1: struct.pack("<q", i * 10)}, upper_bounds={1: struct.pack("<q", i * 10 + 9)})
        status = int(statuses[i])
        own = None if status == mf.ADDED else 1 + i % 3
        out.append(mf.ManifestEntry(status, None if status == mf.ADDED else 5, own, own, f))
    return out


def _manifest(t, entries, name):
    meta = t.metadata
    spec = meta.spec_by_id(0)
    path = f"{t.location.rstrip('/')}/metadata/{name}.avro"
    length = manifest_avro.write_manifest(t.io, path, meta.schema, spec, entries)
    return manifest_file_for(path, length, 0, DATA_MANIFEST, SNAPSHOT, SEQUENCE, entries,
                             spec.partition_type(meta.schema))


def _plan(t, m, where):
    bound = scan_mod.bind_row_filter(t.metadata, where)
    manifest_reader.clear_manifest_cache()
    first = scan_mod.plan_manifests(t.io, t.metadata, bound, [m])[0].tasks
    again = scan_mod.plan_manifests(t.io, t.metadata, bound, [m])[0].tasks      # the pass from the cache
    described = [(tuple(getattr(x.file, n) for n in FIELDS), x.data_sequence_number) for x in first]
    assert described == [(tuple(getattr(x.file, n) for n in FIELDS), x.data_sequence_number) for x in again]
    return described


WHERES = ["p = 4", "p < 3", "p > 9 OR p = 0", "s = 'a'", "p = 3 AND s = 'b'", "p = 5 AND id < 2000",
          "p IN (1, 7) AND id >= 500", "p = 99", "p >= 0"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 1500), seed=st.integers(0, 2**32 - 1), clustered=st.booleans(),
       where=st.sampled_from(WHERES))
def test_partition_first_plan_equals_whole_manifest_plan(table, monkeypatch, n, seed, clustered, where):
    rng = np.random.default_rng(seed)
    entries = _entries(n, rng, clustered)
    m = _manifest(table, entries, f"m-{seed}-{n}-{int(clustered)}")
    with monkeypatch.context() as mp:
        mp.setattr(manifest_reader, "COLUMNS_MIN_ENTRIES", 0)
        mp.setattr(manifest_reader, "PARTITION_FIRST_MIN_ENTRIES", 10**9)      # whole manifests
        whole = _plan(table, m, where)
        mp.setattr(manifest_reader, "PARTITION_FIRST_MIN_ENTRIES", 0)
        mp.setattr(manifest_reader, "PARTITION_FIRST_MAX_SHARE", 1.0)           # always partition first
        partial = _plan(table, m, where)
        mp.setattr(scan_mod, "load_manifest_columns", lambda *args: None)     # entry by entry
        by_entries = _plan(table, m, where)
    assert partial == whole
    assert sorted(partial) == sorted(by_entries)
    manifest_reader.clear_manifest_cache()


def test_only_the_blocks_holding_kept_entries_are_decoded(table, monkeypatch):
    """A partition kept in few of a manifest's blocks: the full decode reads only those blocks (and
    the plan still equals the whole manifest's); the pass is cached, the partial columns are not."""
    rng = np.random.default_rng(1)
    entries = _entries(3000, rng, clustered=True)
    m = _manifest(table, entries, "clustered")
    decoded = []
    real = manifest_reader.decode_blocks

    def spy(data, blocks):
        decoded.append(blocks.tolist())
        return real(data, blocks)

    monkeypatch.setattr(manifest_reader, "decode_blocks", spy)
    monkeypatch.setattr(manifest_reader, "PARTITION_FIRST_MIN_ENTRIES", 0)
    got = _plan(table, m, "p = 4")
    per_block = avro_columns.block_counts(table.io.read_bytes(m.manifest_path))
    assert per_block is not None and len(per_block) > 4
    assert decoded and all(0 < len(b) < len(per_block) for b in decoded)
    live4 = [e for e in entries if e.status != mf.DELETED and e.data_file.partition[0] == 4]
    assert [g[0][0] for g in got] == [e.data_file.file_path for e in live4]
    monkeypatch.setattr(manifest_reader, "PARTITION_FIRST_MIN_ENTRIES", 10**9)
    assert _plan(table, m, "p = 4") == got
    manifest_reader.clear_manifest_cache()


def test_a_filter_on_no_partition_column_decodes_no_partition_pass(table, monkeypatch):
    """``id < 2000`` says nothing of the partitions: the manifest is decoded whole, with no first pass."""
    m = _manifest(table, _entries(600, np.random.default_rng(2), clustered=False), "unclustered")
    passes = []
    real = manifest_reader.PartitionPass.of
    monkeypatch.setattr(manifest_reader.PartitionPass, "of", staticmethod(lambda *a: passes.append(1) or real(*a)))
    monkeypatch.setattr(manifest_reader, "PARTITION_FIRST_MIN_ENTRIES", 0)
    assert _plan(table, m, "id < 2000")
    assert passes == []
    assert _plan(table, m, "p = 2")
    assert passes == [1]
    manifest_reader.clear_manifest_cache()
