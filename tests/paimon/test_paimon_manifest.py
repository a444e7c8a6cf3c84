"""Manifest files, manifest lists, the merge rules and manifest compaction (seed 004)."""
import io
import os
from dataclasses import replace

import fastavro
import pyarrow as pa
import pytest

from icefloe.core.io import LOCAL
from icefloe.errors import CorruptMetadataError
from icefloe.paimon import manifest as mf
from icefloe.paimon.binary_row import encode_row
from icefloe.paimon.commit import compact_manifests, minor_compaction, try_full_compaction
from icefloe.paimon.data_file import DataFileMeta
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.schema import TableSchema
from icefloe.paimon.types import parse_atomic, parse_field

STRING = parse_atomic("STRING")


def entry(kind, name, part="p1", bucket=0, rows=10):
    return mf.ManifestEntry(kind, encode_row([part], [STRING]), bucket, -1,
                            DataFileMeta(file_name=name, file_size=100, row_count=rows,
                                         min_sequence_number=0, max_sequence_number=rows - 1,
                                         creation_time=1_700_000_000_000))


@pytest.fixture
def store(tmp_path):
    schema = TableSchema(id=0, fields=[parse_field({"id": 0, "name": "dt", "type": "STRING"})],
                         partition_keys=["dt"], options={"manifest.compression": "zstd"})
    return FileStore(LOCAL, str(tmp_path / "t"), schema)


def write(store, entries, size=None):
    """One manifest of the given entries; ``size`` fakes its file size for classification."""
    (meta,) = store.write_manifests(entries)
    return replace(meta, file_size=size) if size is not None else meta


def names(store, metas):
    return sorted((e.kind, e.file.file_name) for e in store.entries(metas))


# --------------------------------------------------------------------------- encoding
def test_manifest_round_trip_and_java_shape(store):
    es = [entry(mf.ADD, "a"), entry(mf.DELETE, "b", part="p2", bucket=3)]
    (meta,) = store.write_manifests(es)
    raw = open(store.manifest_path(meta.file_name), "rb").read()
    reader = fastavro.reader(io.BytesIO(raw))
    assert reader.writer_schema["name"] == "org.apache.paimon.avro.generated.record"
    assert reader.codec == "zstandard"
    records = list(reader)
    assert [r["_VERSION"] for r in records] == [2, 2]
    assert records[1]["_KIND"] == 1 and records[1]["_BUCKET"] == 3 and records[1]["_TOTAL_BUCKETS"] == -1
    assert records[0]["_PARTITION"] == encode_row(["p1"], [STRING]).to_bytes()
    back = mf.decode_manifest(raw)
    assert [(e.kind, e.file) for e in back] == [(e.kind, e.file) for e in es]
    # the manifest file meta: counts, partition statistics, bucket range
    assert (meta.num_added_files, meta.num_deleted_files, meta.schema_id) == (1, 1, 0)
    mins, maxs, nulls = meta.partition_stats.decode([STRING])
    assert (mins, maxs, nulls) == (("p1",), ("p2",), (0,))
    assert (meta.min_bucket, meta.max_bucket, meta.min_level, meta.max_level) == (0, 3, 0, 0)
    name, size = store.write_manifest_list([meta])
    lst = store.read_manifest_list(name)
    assert lst == [meta] and size == os.path.getsize(store.manifest_path(name))
    raw_list = list(fastavro.reader(open(store.manifest_path(name), "rb")))
    assert raw_list[0]["_VERSION"] == 2 and raw_list[0]["_NUM_DELETED_FILES"] == 1


def test_garbage_manifest_is_a_typed_error(store):
    with pytest.raises(CorruptMetadataError):
        mf.decode_manifest(b"not avro at all", "/x/manifest-1")


def test_rolling_at_target_size(store):
    store.options.options["manifest.target-file-size"] = "2 kb"
    metas = store.write_manifests([entry(mf.ADD, f"f{i}") for i in range(60)])
    assert len(metas) > 1
    assert sum(m.num_added_files for m in metas) == 60
    assert all(m.file_size >= 2048 for m in metas[:-1])
    assert names(store, metas) == sorted((0, f"f{i}") for i in range(60))


# --------------------------------------------------------------------------- merge rules
def test_duplicate_add_is_an_error():
    with pytest.raises(mf.DuplicateFileError, match="already added"):
        mf.merge_entries([entry(mf.ADD, "a"), entry(mf.ADD, "a")], {})


def test_add_then_delete_cancel_and_lone_delete_is_kept():
    merged = mf.merge_entries([entry(mf.ADD, "a"), entry(mf.ADD, "b"), entry(mf.DELETE, "a"),
                               entry(mf.DELETE, "z")], {})
    assert [(e.kind, e.file.file_name) for e in merged.values()] == [(0, "b"), (1, "z")]
    assert [e.file.file_name for e in mf.live_files([entry(mf.ADD, "a"), entry(mf.DELETE, "a")])] == []


def test_identity_includes_partition_and_bucket():
    merged = mf.merge_entries([entry(mf.ADD, "a", part="p1"), entry(mf.ADD, "a", part="p2"),
                               entry(mf.ADD, "a", bucket=1)], {})
    assert len(merged) == 3


# --------------------------------------------------------------------------- minor compaction
def test_minor_compaction_merges_runs_reaching_the_target(store):
    m = [write(store, [entry(mf.ADD, f"f{i}")], size=40) for i in range(5)]
    created = []
    out = minor_compaction(store, m, created, target_size=100, min_count=30)
    # 40+40+40 >= 100: the first three are merged; the tail of two (< min count) is kept
    assert len(out) == 3 and out[1:] == m[3:]
    assert names(store, out[:1]) == [(0, "f0"), (0, "f1"), (0, "f2")]
    assert created == [out[0].file_name]


def test_minor_compaction_merges_leftover_tail_of_min_count(store):
    m = [write(store, [entry(mf.ADD, f"f{i}")], size=10) for i in range(4)]
    out = minor_compaction(store, m, [], target_size=1000, min_count=3)
    assert len(out) == 1 and names(store, out) == [(0, f"f{i}") for i in range(4)]
    assert minor_compaction(store, m[:2], [], target_size=1000, min_count=3) == m[:2]


def test_minor_compaction_keeps_a_large_manifest_as_it_is(store):
    big = write(store, [entry(mf.ADD, "big")], size=500)
    small = [write(store, [entry(mf.ADD, f"s{i}")], size=10) for i in range(2)]
    out = minor_compaction(store, [big] + small, [], target_size=100, min_count=30)
    assert out == [big] + small


def test_minor_compaction_cancels_add_and_delete(store):
    m = [write(store, [entry(mf.ADD, "a"), entry(mf.ADD, "b")], size=60),
         write(store, [entry(mf.DELETE, "a")], size=60)]
    out = minor_compaction(store, m, [], target_size=100, min_count=30)
    assert names(store, out) == [(0, "b")]
    m = [write(store, [entry(mf.ADD, "a")], size=60), write(store, [entry(mf.DELETE, "a")], size=60)]
    assert minor_compaction(store, m, [], target_size=100, min_count=30) == []


def test_minor_compaction_duplicate_add_is_an_error(store):
    m = [write(store, [entry(mf.ADD, "a")], size=60), write(store, [entry(mf.ADD, "a")], size=60)]
    with pytest.raises(mf.DuplicateFileError):
        minor_compaction(store, m, [], target_size=100, min_count=30)


# --------------------------------------------------------------------------- full compaction
def test_full_compaction_not_triggered_below_threshold(store):
    base = write(store, [entry(mf.ADD, "a")], size=1000)
    delta = write(store, [entry(mf.DELETE, "a")], size=50)
    assert try_full_compaction(store, [base, delta], [], target_size=500, threshold=100) is None


def test_full_compaction_applies_deletes_and_keeps_untouched_base(store):
    base_p1 = write(store, [entry(mf.ADD, "a", "p1"), entry(mf.ADD, "b", "p1")], size=1000)
    base_p2 = write(store, [entry(mf.ADD, "c", "p2")], size=1000)     # no delete can touch p2
    base_p1b = write(store, [entry(mf.ADD, "d", "p1")], size=1000)    # p1, but not deleted
    small = write(store, [entry(mf.ADD, "e", "p3")], size=100)
    delta = write(store, [entry(mf.DELETE, "a", "p1"), entry(mf.ADD, "f", "p1")], size=100)
    created = []
    out = try_full_compaction(store, [base_p1, base_p2, base_p1b, small, delta], created,
                              target_size=500, threshold=150)
    assert out is not None
    kept = [m for m in out if m.file_name not in created]
    assert kept == [base_p2, base_p1b]
    merged = [m for m in out if m.file_name in created]
    assert names(store, merged) == [(0, "b"), (0, "e"), (0, "f")]
    assert all(m.num_deleted_files == 0 for m in out)
    assert sorted(e.file.file_name for e in mf.live_files(store.entries(out))) == ["b", "c", "d", "e", "f"]


def test_compaction_prefers_full(store):
    base = write(store, [entry(mf.ADD, "a"), entry(mf.ADD, "b")], size=1000)
    delta = write(store, [entry(mf.DELETE, "a")], size=200)
    out = compact_manifests(store, [base, delta], [], target_size=500, min_count=30, full_threshold=100)
    assert names(store, out) == [(0, "b")]


def test_compaction_through_many_commits(paimon_catalog, pypaimon_catalog):
    t = paimon_catalog.create_table("db.c", "id bigint, dt string", partitioned_by=["dt"], properties={
        "manifest.target-file-size": "4 kb", "manifest.merge-min-count": "3",
        "manifest.full-compaction-threshold-size": "12 kb"})
    for i in range(12):
        t.append(pa.table({"id": pa.array([i, i + 100], pa.int64()), "dt": [f"d{i % 3}", "x"]}))
        if i == 6:
            t.overwrite(pa.table({"id": pa.array([-1], pa.int64()), "dt": ["d0"]}))
    base = t.store.read_manifest_list(t.current_snapshot().base_manifest_list)
    assert len(base) <= 4   # without compaction there would be 12 delta manifests in the base
    expected = sorted([-1] + [i for i in range(7, 12)] + [i + 100 for i in range(7, 12)])
    assert sorted(t.to_arrow().column("id").to_pylist()) == expected
    pt = pypaimon_catalog.get_table("db.c")
    rb = pt.new_read_builder()
    assert sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("id").to_pylist()) == expected
    manifests_on_disk = set(os.listdir(os.path.join(t.location, "manifest")))
    used = set()
    for s in t.snapshots():
        used |= {s.base_manifest_list, s.delta_manifest_list}
        used |= {m.file_name for m in t.store.data_manifests(s)}
    assert manifests_on_disk == used
