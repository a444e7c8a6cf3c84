"""The process-wide manifest cache (``manifest_reader``): keyed by a manifest's path and length, set
by the table's ``io.manifest.cache-*`` properties, never answering for a table another process has
changed since; and a plan over cached manifests (judged as columns, ``file_columns``) equal to one
without the cache, on random tables and filters."""
from __future__ import annotations

import dataclasses
import os
import struct
import subprocess
import sys
import textwrap
import time
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import icefloe
from icefloe.errors import IcefloeError
from icefloe.iceberg import manifest_avro, manifest_reader
from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.manifest import ADDED, DataFile, ManifestEntry
from icefloe.iceberg.manifest_reader import CacheSettings, ManifestCache

@pytest.fixture(autouse=True)
def small_manifests_as_columns(monkeypatch):
    """These tables' manifests are small: judge them as columns too (by default a manifest of fewer
    than ``COLUMNS_MIN_ENTRIES`` entries is decoded entry by entry)."""
    monkeypatch.setattr(manifest_reader, "COLUMNS_MIN_ENTRIES", 0)


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAY_US = 86_400_000_000


def data_file(loc: str, i: int, lo: int | None, hi: int | None, day: int, nulls: int | None = 0) -> DataFile:
    """A metadata-only data file of 10 rows: ``id`` within [lo, hi] (None: no bound), ``ts`` in ``day``."""
    lower, upper = {2: struct.pack("<q", day * DAY_US)}, {2: struct.pack("<q", day * DAY_US + 1)}
    if lo is not None:
        lower[1] = struct.pack("<q", lo)
    if hi is not None:
        upper[1] = struct.pack("<q", hi)
    return DataFile(file_path=f"{loc}/data/f{i:05d}.parquet", file_format="PARQUET", partition=(day,),
                    record_count=10, file_size_in_bytes=100, value_counts={1: 10, 2: 10},
                    null_value_counts={1: nulls, 2: 0} if nulls is not None else {2: 0},
                    lower_bounds=lower, upper_bounds=upper)


def new_table(warehouse, properties=None):
    cat = icefloe.Catalog(str(warehouse))
    return cat.create_table("db.t", "id bigint, ts timestamp not null", partitioned_by=["day(ts)"],
                            properties=properties)


def paths(tasks) -> list:
    return sorted(t.path for t in tasks)


def test_settings_take_icebergs_names_and_refuse_bad_values():
    assert CacheSettings.of({}) == CacheSettings(True, 60_000, 100 << 20, 8 << 20)
    got = CacheSettings.of({"io.manifest.cache-enabled": "false", "io.manifest.cache.expiration-interval-ms": "0",
                            "io.manifest.cache.max-total-bytes": "1000",
                            "io.manifest.cache.max-content-length": "10"})
    assert got == CacheSettings(False, 0, 1000, 10)
    with pytest.raises(IcefloeError, match="io.manifest.cache.max-total-bytes"):
        CacheSettings.of({"io.manifest.cache.max-total-bytes": "lots"})
    with pytest.raises(IcefloeError, match="io.manifest.cache-enabled"):
        CacheSettings.of({"io.manifest.cache-enabled": "yes"})


def test_the_cache_holds_manifests_up_to_their_bytes_and_forgets_unused_ones():
    cache = ManifestCache()
    small = CacheSettings(max_total_bytes=100, max_content_length=60)
    assert cache.put(("a",), "A", 50, small) and cache.put(("b",), "B", 40, small)
    assert not cache.put(("big",), "X", 61, small)             # longer than max-content-length
    assert cache.get(("a",), small) == "A"                     # a used: b is now the oldest
    assert cache.put(("c",), "C", 30, small)                   # 120 bytes > 100: b goes
    assert (cache.get(("b",), small), cache.get(("a",), small), cache.total_bytes) == (None, "A", 80)
    assert cache.get(("a",), CacheSettings(enabled=False)) is None
    time.sleep(0.02)
    assert cache.get(("a",), CacheSettings(expiration_ms=5)) is None      # unused for longer than 5 ms
    assert cache.get(("c",), small) == "C" and len(cache) == 1


def test_a_table_with_the_cache_off_keeps_nothing_and_plans_the_same(tmp_path):
    t = new_table(tmp_path / "wh", {"io.manifest.cache-enabled": "false"})
    loc = t.location.rstrip("/")
    t.commit_files([data_file(loc, i, i * 10, i * 10 + 9, 19000 + i % 3) for i in range(30)])
    manifest_reader.clear_manifest_cache()
    for where in (None, "id = 55", None, "id = 55", "id = 55"):
        got = paths(t.plan_tasks(where))
        assert len(got) == (30 if where is None else 1)
    assert len(manifest_reader.MANIFESTS) == 0
    t.update_properties(set={"io.manifest.cache-enabled": "true"})
    t.plan_tasks(None)
    assert len(manifest_reader.MANIFESTS) == 1


COMMIT_ELSEWHERE = textwrap.dedent("""
    import struct, sys
    import icefloe
    from icefloe.iceberg.manifest import DataFile
    t = icefloe.Catalog(sys.argv[1]).load_table("db.t")
    loc = t.location.rstrip("/")
    t.commit_files([DataFile(file_path=loc + "/data/other.parquet", file_format="PARQUET", partition=(19000,),
                             record_count=10, file_size_in_bytes=100, value_counts={1: 10}, null_value_counts={1: 0},
                             lower_bounds={1: struct.pack("<q", 5000)}, upper_bounds={1: struct.pack("<q", 5009)})])
""")


def test_a_commit_from_another_process_is_seen_by_a_cached_plan(tmp_path):
    wh = tmp_path / "wh"
    t = new_table(wh)
    loc = t.location.rstrip("/")
    t.commit_files([data_file(loc, i, i * 10, i * 10 + 9, 19000) for i in range(20)])
    for _ in range(3):              # cached, and judged as columns
        assert paths(t.plan_tasks("id >= 5000")) == []
    assert len(t.plan_tasks(None)) == 20
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", COMMIT_ELSEWHERE, str(wh)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    t.refresh()
    assert paths(t.plan_tasks("id >= 5000")) == [f"{loc}/data/other.parquet"]
    assert len(t.plan_tasks(None)) == 21


def test_a_manifest_rewritten_in_place_with_another_length_is_read_again(tmp_path):
    t = new_table(tmp_path / "wh")
    loc = t.location.rstrip("/")
    t.commit_files([data_file(loc, i, i, i, 19000) for i in range(5)])
    meta = t.metadata
    (m,) = manifest_reader.snapshot_manifests(t.io, meta.current_snapshot)
    assert len(manifest_reader.load_manifest_entries(t.io, meta, m)) == 5
    # the same path now holds another manifest, of one entry (and another length)
    one = ManifestEntry(ADDED, m.added_snapshot_id, m.sequence_number, m.sequence_number,
                        data_file(loc, 99, 99, 99, 19000))
    t.io.delete(m.manifest_path)
    length = manifest_avro.write_manifest(t.io, m.manifest_path, meta.schema, meta.spec_by_id(m.partition_spec_id),
                                          [one], format_version=meta.format_version)
    assert length != m.manifest_length
    m2 = dataclasses.replace(m, manifest_length=length, added_files_count=1, existing_files_count=0,
                             deleted_files_count=0)
    got = manifest_reader.load_manifest_entries(t.io, meta, m2)
    assert [e.data_file.file_path for e in got] == [f"{loc}/data/f00099.parquet"]


# random tables: files with or without id bounds and null counts; filters over id and the day
bounds = st.one_of(st.none(), st.integers(-3, 3))
files = st.lists(st.tuples(bounds, st.integers(0, 2), st.integers(0, 2), st.sampled_from([0, 3, 10, None])),
                 min_size=1, max_size=25)
leaf = st.one_of(
    st.builds(lambda op, v: f"id {op} {v}", st.sampled_from(["=", "<", "<=", ">", ">=", "!="]), st.integers(-4, 4)),
    st.builds(lambda vs: f"id IN ({', '.join(map(str, vs))})", st.lists(st.integers(-4, 4), min_size=1, max_size=3)),
    st.builds(lambda vs: f"id NOT IN ({', '.join(map(str, vs))})", st.lists(st.integers(-5, 5), min_size=1,
                                                                         max_size=2)),
    st.sampled_from(["id IS NULL", "id IS NOT NULL", "ts >= TIMESTAMP '2022-01-08 00:00:00'",
                     "ts < TIMESTAMP '2022-01-07 00:00:00'"]),
)
filters = st.recursive(leaf, lambda inner: st.one_of(
    st.builds(lambda a, b: f"({a}) AND ({b})", inner, inner), st.builds(lambda a, b: f"({a}) OR ({b})", inner, inner),
    st.builds(lambda a: f"NOT ({a})", inner)), max_leaves=3)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(table=st.lists(files, min_size=1, max_size=3), where=st.lists(filters, min_size=1, max_size=3))
@example(table=[[(0, 1, 0, 0), (2, 0, 0, 0), (2, 2, 1, 10), (None, 0, 2, None), (-1, 1, 1, 3)], [(2, 1, 0, 0)]],   # each bound met
         where=["id < 2", "id <= 1", "id > 1", "id >= 4", "id = 2", "id != 2", "id IN (2, 4)", "id NOT IN (2)",
                "id IS NULL", "id IS NOT NULL"])
def test_a_cached_plan_equals_an_uncached_one(tmp_path_factory, table, where):
    wh = tmp_path_factory.mktemp("wh")
    t = new_table(wh)
    loc = t.location.rstrip("/")
    i = 0
    day0 = 18996            # 2022-01-04
    for commit in table:
        batch = []
        for lo, width, day, nulls in commit:
            hi = None if lo is None or i % 5 == 4 else lo + width      # some files bounded below only
            batch.append(data_file(loc, i, lo, hi, day0 + 2 * day, nulls))
            i += 1
        t.commit_files(batch)
    manifest_reader.clear_manifest_cache()
    off = classmethod(lambda cls, props: cls(enabled=False))
    entries_only = mock.patch.object(scan_mod, "load_manifest_columns", lambda *args: None)
    for w in where:
        with mock.patch.object(CacheSettings, "of", off), entries_only:    # each manifest read for this filter alone
            want = paths(t.plan_tasks(w))
        assert len(manifest_reader.MANIFESTS) == 0
        with entries_only:
            for _ in range(2):      # decoded whole and cached, then from the cache: judged as columns
                assert paths(t.plan_tasks(w)) == want, w
        manifest_reader.clear_manifest_cache()
        for _ in range(2):          # Arrow columns (manifest_arrow), decoded, then from the cache
            assert paths(t.plan_tasks(w)) == want, w
        with mock.patch.object(CacheSettings, "of", off):
            assert paths(t.plan_tasks(w)) == want, w
        manifest_reader.clear_manifest_cache()
