"""Planning at scale: streamed tasks (``scan.iter_plan_files``, ``Table.iter_tasks``) are exactly
the listed ones (``plan_files``), and a large manifest decoded as columns in parts
(``manifest_arrow.decode``, ``manifest_avro.container_parts``) equals its whole decode."""
from __future__ import annotations

import copy
import pickle
import struct

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import IcefloeError
from icefloe.iceberg import manifest as mf
from icefloe.iceberg import manifest_arrow, manifest_avro, manifest_reader
from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.manifest_list import DATA_MANIFEST


def _describe(tasks):
    """Each task's file fields, sequence number, deletes and identity values, in plan order."""
    names = [f for f in mf.DataFile.__dataclass_fields__]
    return [(tuple(getattr(t.file, n) for n in names), t.data_sequence_number,
             sorted((d.file_path, t.delete_sequence_numbers[d.file_path]) for d in t.deletes),
             dict(t.identity_values)) for t in tasks]


@pytest.fixture
def table(tmp_path):
    """Real data files in 8 appends, partitioned by identity on ``p``, and a delete."""
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", "id bigint not null, p int not null, s string", partitioned_by=["p"])
    for c in range(8):
        ids = list(range(c * 20, c * 20 + 20))
        t.append(pa.table({"id": pa.array(ids, pa.int64()),
                           "p": pa.array([(c // 3) * 3 + i % 3 for i in range(20)], pa.int32()),
                           "s": pa.array([f"s{i:04d}" for i in ids], pa.string())}))
    t.delete("id = 25")
    return cat.load_table("db.t")


WHERES = [None, "p = 4", "id = 137", "id < 30 OR id >= 130", "s = 's0101'", "p = 999"]


@pytest.mark.parametrize("columns", [True, False], ids=["columns", "entries"])
@pytest.mark.parametrize("where", WHERES)
def test_streamed_tasks_equal_listed_tasks(table, monkeypatch, where, columns):
    """The same tasks in the same order, with the same deletes and identity values, whether the
    manifests are judged as columns (tasks built a few at a time) or entry by entry, cold or warm."""
    monkeypatch.setattr(manifest_reader, "COLUMNS_MIN_ENTRIES", 0 if columns else 10**9)
    monkeypatch.setattr(scan_mod, "STREAM_CHUNK", 2)
    io_, meta, snap = table.io, table.metadata, table.current_snapshot()
    manifest_reader.clear_manifest_cache()
    streamed_cold = list(scan_mod.iter_plan_files(io_, meta, snap, where))
    listed = scan_mod.plan_files(io_, meta, snap, where)
    streamed_warm = list(table.iter_tasks(where))
    assert _describe(streamed_cold) == _describe(listed) == _describe(streamed_warm)
    assert streamed_cold == listed
    if where is None:
        assert len(listed) == 8 * 3 and sum(len(t.deletes) for t in listed) + sum(
            t.file.record_count for t in listed) >= 159
    if columns and listed:
        assert all(isinstance(t, scan_mod.ColumnarScanTask) for t in streamed_cold)
        plain = pickle.loads(pickle.dumps(streamed_cold[0]))
        assert type(plain) is scan_mod.FileScanTask and plain == listed[0]
        assert type(copy.copy(streamed_cold[0])) is scan_mod.FileScanTask


def test_a_streamed_plan_builds_its_tasks_a_chunk_at_a_time(table, monkeypatch):
    """Tasks come out as they are built: a manifest's kept entries make at most ``STREAM_CHUNK``
    tasks at once, and the first task is handed out before the last manifest is judged."""
    monkeypatch.setattr(manifest_reader, "COLUMNS_MIN_ENTRIES", 0)
    monkeypatch.setattr(scan_mod, "STREAM_CHUNK", 2)
    built = []
    real_tasks = scan_mod._columnar_tasks
    monkeypatch.setattr(scan_mod, "_columnar_tasks", lambda cols, rows: built.append(len(rows)) or real_tasks(cols, rows))
    manifest_reader.clear_manifest_cache()
    it = table.iter_tasks()
    first = next(it)
    assert first.file.file_path and len(built) == 1 and built[0] <= 2     # one chunk built so far
    rest = list(it)
    assert max(built) == 2 and sum(built) == len(rest) + 1 == len(table.plan_tasks()) == 8 * 3


def test_a_streamed_plan_checks_its_settings_at_once(table):
    """A bad planning mode is refused when the plan is asked for, not when its first task is read."""
    table.update_properties(set={"read.data-planning-mode": "sometimes"})
    table = table.refresh()
    with pytest.raises(IcefloeError, match="read.data-planning-mode"):
        table.iter_tasks()


@pytest.fixture
def big_manifest(tmp_path):
    """A metadata-only table with one manifest of 1,200 files over several Avro blocks."""
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.f", "id bigint not null, p int not null, s string", partitioned_by=["p"])
    loc = t.location.rstrip("/")
    t.commit_files([mf.DataFile(
        file_path=f"{loc}/data/p={i % 7}/f{i:05d}.parquet", file_format="PARQUET", partition=(i % 7,),
        record_count=10 + i % 3, file_size_in_bytes=100 + i,
        value_counts={1: 10, 2: 10}, null_value_counts={1: 0, 2: 0},
        lower_bounds={1: struct.pack("<q", i * 10), 2: struct.pack("<i", i % 7), 3: b"a%d" % i},
        upper_bounds={1: struct.pack("<q", i * 10 + 9), 2: struct.pack("<i", i % 7), 3: b"z%d" % i},
        split_offsets=[4] if i % 2 else None)
        for i in range(1200)])
    return cat.load_table("db.f")


def test_parts_decode_equals_whole_decode(big_manifest, monkeypatch):
    """A manifest cut into parts at its blocks decodes into the same columns, in the same order, as
    the whole file, and plans the same files."""
    if not manifest_arrow.available():
        pytest.skip("DuckDB's Avro extension is not installed")
    t = big_manifest
    [m] = manifest_reader.snapshot_manifests(t.io, t.current_snapshot())
    data = t.io.read_bytes(m.manifest_path)
    parts = manifest_avro.container_parts(data, 100)
    assert len(parts) > 3 and sum(manifest_avro.container_record_count(p) for p in parts) == 1200
    assert manifest_avro.container_parts(data, 10**6) == [data]
    whole = manifest_arrow.decode(data, part_entries=10**6)
    cut = manifest_arrow.decode(data, part_entries=100)
    assert whole is not None and cut is not None and whole.num_rows == 1200
    assert cut.combine_chunks().equals(whole.combine_chunks())
    # planned from the cut decode: the same files as from the whole one
    monkeypatch.setattr(manifest_reader, "COLUMNS_MIN_ENTRIES", 0)
    plans = {}
    for name, size in (("whole", 10**6), ("parts", 100)):
        monkeypatch.setattr(manifest_arrow, "PART_ENTRIES", size)
        manifest_reader.clear_manifest_cache()
        plans[name] = [_describe(t.plan_tasks(w)) for w in (None, "id = 5007", "p = 3 AND id < 4000")]
        assert all(isinstance(x.file, manifest_arrow.ColumnarDataFile) for x in t.plan_tasks())
    assert plans["whole"] == plans["parts"]
    assert [len(p) for p in plans["parts"]] == [1200, 1, len([i for i in range(400) if i % 7 == 3])]


@pytest.mark.parametrize("cores", [1, 2, 4, 16])
def test_manifests_judged_side_by_side_are_each_decoded_whole(table, monkeypatch, cores):
    """A plan judging as many manifests at once as there are cores decodes each whole in its own
    thread (cutting each into parts as well cost more CPU than it saved); with cores to spare, a
    manifest's decode may use them. Either way the same tasks."""
    import os

    monkeypatch.setattr(manifest_reader, "COLUMNS_MIN_ENTRIES", 0)
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    monkeypatch.setattr(table.io, "parallel_reads", 1)
    real = manifest_arrow.decode
    splits = []

    def spy(data, part_entries=None, drop=manifest_arrow.WITHOUT_METRICS[:2], split=True):
        splits.append(split)
        return real(data, part_entries, drop, split)

    monkeypatch.setattr(manifest_reader, "decode_columns", spy)
    expected = _describe(scan_mod.plan_files(table.io, table.metadata, table.current_snapshot(), "id < 100"))
    for plan in (lambda w: list(table.iter_tasks(w)), table.plan_tasks):
        for where in (None, "id < 100"):
            manifest_reader.clear_manifest_cache()
            splits.clear()
            got = plan(where)
            data_manifests = [m for m in manifest_reader.snapshot_manifests(table.io, table.current_snapshot())
                              if m.content == DATA_MANIFEST]
            assert len(splits) == len(data_manifests) >= 8
            # one core: judged one at a time (a decode may cut); 2 and 4: the manifests fill them; 16: spare
            assert set(splits) == {cores in (1, 16)}
            if where is not None:
                assert _describe(got) == expected


def test_a_damaged_frame_is_not_cut(big_manifest):
    """A file whose block framing is damaged is not cut into parts: its whole decode judges it."""
    t = big_manifest
    [m] = manifest_reader.snapshot_manifests(t.io, t.current_snapshot())
    data = t.io.read_bytes(m.manifest_path)
    with pytest.raises(ValueError):
        manifest_avro.container_parts(data[:-5], 100)
    with pytest.raises(ValueError):
        manifest_avro.container_parts(data[:-20] + b"x" * 20, 100)


def test_streamed_tasks_planned_in_spark_tasks_equal_the_local_plan(table, spark, tmp_path):
    """With the data and delete manifests planned in Spark tasks (``distributed``), the streamed
    tasks are the local plan's, deletes included."""
    t = icefloe.Catalog(str(tmp_path / "wh"), spark=spark).load_table("db.t")
    local = t.plan_tasks(where="id < 50 OR p = 7")
    t.update_properties(set={"read.data-planning-mode": "distributed", "read.delete-planning-mode": "distributed"})
    t = t.refresh()
    streamed = list(t.iter_tasks(where="id < 50 OR p = 7"))
    assert _describe(streamed) == _describe(local) and len(local) > 3
