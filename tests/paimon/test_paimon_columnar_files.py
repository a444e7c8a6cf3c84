"""The files of a plan judged over a manifest's columns (``columnar_file.ColumnarFileMeta``): each
field made from the columns on first read and then kept, equal to the file read entry by entry,
copied and pickled as a plain ``DataFileMeta``, and a plan of every file holding a few hundred bytes
of Python objects per file (``tests/paimon/test_paimon_planning_equivalence.py`` compares whole
plans field by field)."""
from __future__ import annotations

import copy
import dataclasses
import pickle
import tracemalloc

import pyarrow as pa
import pytest

from icefloe.paimon import manifest_columns as mc
from icefloe.paimon.columnar_file import ColumnarFileMeta
from icefloe.paimon.data_file import FIELD_NAMES, DataFileMeta


class _Fields:
    """A source of one file's values, counting what is read."""

    def __init__(self, values):
        self.values = values
        self.reads = []

    def file_field(self, name, row):
        self.reads.append((name, row))
        return self.values[name]


def _values(**changes):
    plain = DataFileMeta("data-1.parquet", 10, 3, schema_id=2, level=1, extra_files=("a.index",))
    return {n: changes.get(n, getattr(plain, n)) for n in FIELD_NAMES}


def test_a_field_is_read_once_when_first_asked_for_and_an_assigned_one_is_never_read():
    src = _Fields(_values())
    [f] = ColumnarFileMeta.of(src, [7])
    assert src.reads == []
    assert f.row_count == 3 and f.row_count == 3 and f.level == 1
    assert src.reads == [("row_count", 7), ("level", 7)]
    f.file_size = 99
    assert f.file_size == 99 and ("file_size", 7) not in src.reads


def test_values_read_or_set_stay_out_of_the_instance_dict():
    """The class's shared attribute keys never grow, so every new file stays as small as the first."""
    [f] = ColumnarFileMeta.of(_Fields(_values()), [0])
    assert all(getattr(f, n) == v for n, v in _values().items() if n != "file_path")
    f.level = 3
    assert f.__dict__ == {} and f.level == 3
    [g] = ColumnarFileMeta.of(_Fields(_values()), [1])
    assert g.__dict__ == {}


def test_a_placed_file_has_its_directory_or_its_external_path():
    src = _Fields(_values())
    [f] = ColumnarFileMeta.of(src, [0])
    assert f.file_path is None
    with pytest.raises(ValueError, match="no path"):
        _ = f.path
    assert f.in_directory("/t/p=1/bucket-0") is f
    assert f.path == "/t/p=1/bucket-0/data-1.parquet"
    [g] = ColumnarFileMeta.of(_Fields(_values(external_path="file:/ext/data-1.parquet")), [0])
    assert g.in_directory("/t/p=1/bucket-0").path == "/ext/data-1.parquet"
    plain = DataFileMeta("data-1.parquet", 10, 3, external_path="file:/ext/data-1.parquet")
    assert plain.in_directory("/t/p=1/bucket-0").path == g.path      # the same rule both ways
    f.file_path = "/elsewhere/x.parquet"
    assert f.path == "/elsewhere/x.parquet"


def test_copies_pickles_and_replacements_are_plain_files_equal_to_it():
    [f] = ColumnarFileMeta.of(_Fields(_values()), [0])
    f.in_directory("/t/bucket-0")
    plain = DataFileMeta(**{**_values(), "file_path": "/t/bucket-0/data-1.parquet"})
    assert f == plain and plain == f
    for other in (pickle.loads(pickle.dumps(f)), copy.copy(f), copy.deepcopy(f)):
        assert type(other) is DataFileMeta and other == plain and other.file_path == plain.file_path
    moved = dataclasses.replace(f, level=5)
    assert moved.level == 5 and moved.file_name == "data-1.parquet" and moved.file_path == plain.file_path
    assert f != dataclasses.replace(plain, level=5)
    assert f.with_path("/x/y").path == "/x/y" and type(f.with_path("/x/y")) is DataFileMeta


def test_a_plan_of_every_file_reads_no_file_field_and_a_filter_only_the_kept_file_s(paimon_catalog,
                                                                                          monkeypatch):
    t = paimon_catalog.create_table("db.t", "id bigint not null, p int not null", partitioned_by=["p"],
                                    properties={"write-only": "true"})
    for i in range(4):
        t.append(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()),
                           "p": pa.array([i % 2] * 10, pa.int32())}))
    t = paimon_catalog.load_table("db.t")
    reads = []
    real = mc.ManifestColumns.file_field

    def counted(self, name, row):
        reads.append(name)
        return real(self, name, row)

    monkeypatch.setattr(mc, "COLUMNS_MIN_ENTRIES", 0)
    monkeypatch.setattr(mc.ManifestColumns, "file_field", counted)
    mc.clear_cache()
    files = t.plan_files()
    assert len(files) == 4 and all(isinstance(f, ColumnarFileMeta) for f in files) and reads == []
    assert sorted(f.path.rsplit("/", 3)[1] for f in files) == ["p=0", "p=0", "p=1", "p=1"]
    assert sorted(r for f in files for r in range(f.row_count)) == sorted(list(range(10)) * 4)
    reads.clear()
    [one] = t.plan_files(where="id = 25")
    # the file the vectorised bounds keep is judged by its statistics and file index: its fields, once each
    assert one.value_stats.min_values.arity == 2 and "value_stats" in reads and len(reads) == len(set(reads))


def test_a_plan_of_every_file_holds_a_few_hundred_bytes_per_file(tmp_path):
    """Python objects a plan of 10,000 files keeps, per file, its manifests' columns already cached:
    a built ``DataFileMeta`` with its statistics and path took ~1.7 KB."""
    from bench.scale_paimon import TABLE, generate
    from icefloe.catalog import Catalog

    generate(str(tmp_path), 10_000, 2_500)
    t = Catalog(str(tmp_path), "paimon").load_table(TABLE)
    mc.clear_cache()
    assert len(t.plan_files()) == 10_000      # the manifests decoded and cached before the count
    tracemalloc.start()
    try:
        files = t.plan_files()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(files) == 10_000
    assert held / len(files) < 250, held / len(files)
    assert files[1234].path.endswith("/bucket-0/data-00001234-0.parquet")


def test_a_streamed_plan_builds_its_entries_as_they_are_read(paimon_catalog, monkeypatch):
    t = paimon_catalog.create_table("db.t", "id bigint not null", properties={"write-only": "true"})
    for i in range(3):
        t.append(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64())}))
    t = paimon_catalog.load_table("db.t")
    built = []
    real = mc.ManifestColumns.entries

    def counted(self, rows):
        built.extend(rows)
        return real(self, rows)

    monkeypatch.setattr(mc, "COLUMNS_MIN_ENTRIES", 0)
    monkeypatch.setattr(mc, "BUILD_BATCH", 1)
    monkeypatch.setattr(mc.ManifestColumns, "entries", counted)
    mc.clear_cache()
    plan = t.iter_plan()
    first = next(plan)
    assert len(built) == 1 and first.file.path.endswith(".parquet")
    rest = list(plan)
    assert len(built) == 3 and [e.file.file_name for e in [first] + rest] == [f.file_name for f in t.plan_files()]


def test_whole_number_bounds_read_as_a_strided_view_equal_those_read_byte_by_byte():
    import numpy as np

    rng = np.random.default_rng(7)
    for width in (1, 2, 4, 8):
        values = rng.integers(-(1 << (8 * width - 1)), 1 << (8 * width - 1), size=50, dtype=np.int64)
        rows = [b"\x00" * 5 + int(v).to_bytes(width, "little", signed=True) + b"\x01\x02" for v in values]
        data = np.frombuffer(b"".join(rows), dtype=np.uint8)
        offsets = np.arange(0, len(data) + 1, len(rows[0]), dtype=np.int64)
        lengths = np.diff(offsets)
        strided = mc._slot_ints(data, offsets[:-1] + 5, offsets, lengths, 5, width)
        uneven = lengths.copy()
        uneven[0] += 1       # not one length: byte by byte
        bytewise = mc._slot_ints(data, offsets[:-1] + 5, offsets, uneven, 5, width)
        assert strided.tolist() == bytewise.tolist() == values.tolist()


def test_a_partition_s_plan_decodes_only_the_manifest_blocks_its_index_keeps(tmp_path, monkeypatch):
    """Manifests of 1,000 entries over 100 partitions, in blocks of four partitions each: a plan of
    one day decodes one block, and equals the entry-by-entry plan."""
    from bench.scale_paimon import TABLE, generate
    from icefloe.catalog import Catalog
    from icefloe.core import avro_columns

    generate(str(tmp_path), 2_000, 1_000)
    t = Catalog(str(tmp_path), "paimon").load_table(TABLE)
    decoded = []
    real = avro_columns.decode

    def counted(data):
        table = real(data)
        decoded.append(len(table))
        return table

    monkeypatch.setattr(avro_columns, "decode", counted)
    wheres = ["dt = DATE '2024-01-05'", "dt IN (DATE '2024-01-01', DATE '2024-07-01')", "dt > DATE '2024-07-15'",
              "dt = DATE '2024-01-05' AND id = 45007", None]

    def plans():
        return [sorted((f.file_name, f.path, f.row_count) for f in t.plan_files(where=w)) for w in wheres]

    mc.clear_cache()
    columnar = plans()
    # one block of four days each for the first three (one manifest, both, the second), the day again from
    # the cache, every block of both for the whole table
    assert decoded == [40, 40, 40, 40, 1000, 1000]
    assert [len(p) for p in columnar] == [10, 20, 30, 1, 2000]
    assert columnar == plans()                                             # again, from the cache
    with monkeypatch.context() as m:
        m.setattr(mc, "available", lambda: False)
        assert plans() == columnar
    # the manifest's statistics admit a date strictly between two days, none of its blocks do: no entry is read
    between = "dt > DATE '2024-01-04' AND dt < DATE '2024-01-05'"
    decoded.clear()
    with monkeypatch.context() as m:
        m.setattr(type(t.store), "read_manifest", lambda *a, **k: pytest.fail("read entry by entry"))
        assert t.plan_files(where=between) == [] and decoded == []


def test_columns_decoded_in_many_chunks_plan_as_one_chunk_does(tmp_path, monkeypatch):
    """A decoder may hand a manifest over in chunks (they are kept as they are): every field of
    every planned file, for filters on partitions, statistics and none, equals the entry-by-entry plan."""
    from bench.scale_paimon import TABLE, generate
    from icefloe.catalog import Catalog
    from icefloe.core import avro_columns

    generate(str(tmp_path), 1_200, 600)
    t = Catalog(str(tmp_path), "paimon").load_table(TABLE)
    real = avro_columns.decode
    monkeypatch.setattr(avro_columns, "decode",
                        lambda data: pa.Table.from_batches(real(data).to_batches(max_chunksize=37)))
    wheres = [None, "id = 450007", "id < 3000 OR id > 1190000", "dt = DATE '2024-01-07'", "dt > DATE '2024-06-01'"]

    def plans():
        return [[(f.path, tuple(getattr(f, n) for n in FIELD_NAMES)) for f in t.plan_files(where=w)] for w in wheres]

    mc.clear_cache()
    chunked = plans()
    cached = mc.columns_of(t.store, t.store.data_manifests(t.store.snapshots.latest())[0])
    assert cached is not None and cached.files.num_chunks > 1
    with monkeypatch.context() as m:
        m.setattr(mc, "available", lambda: False)
        assert plans() == chunked
    assert [len(p) for p in chunked] == [1_200, 1, 3 + 10, 6, 47 * 6]
