"""Optimized scan planning returns exactly what a straightforward full decode returns.

``manifest_reader.load_manifest_entries`` reads manifests with a decoder generated from each writer
schema that leaves the six metrics maps undecoded until a ``DataFile`` reads them.
The reference here is the plain path: fastavro decodes every record
(``read_manifest_raw``) and ``entries_from_records`` builds the entries. Both must
give the same planned files with the same fields and metrics, for filters on
partition columns, data columns and none, on icefloe's and pyiceberg's manifests;
and manifests rewritten by commits (manifest merging) must keep full metrics.
"""
from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import pickle
from decimal import Decimal

import pyarrow as pa
import pytest

import icefloe
from icefloe.iceberg import manifest as mf
from icefloe.iceberg import manifest_arrow, manifest_avro
from icefloe.iceberg import manifest_reader
from icefloe.iceberg import scan as scan_mod

FIELDS = [f.name for f in dataclasses.fields(mf.DataFile)]


def _clear():
    manifest_reader.clear_manifest_cache()


def _full_decode(io_, path, ptype, spec_id, snap, seq):
    _meta, records = manifest_avro.read_manifest_raw(io_, path)
    return manifest_avro.entries_from_records(records, ptype, spec_id, snap, seq)


def _describe(tasks):
    out = []
    for t in tasks:
        f = t.file
        out.append((tuple(getattr(f, n) for n in FIELDS), t.data_sequence_number,
                    sorted((d.file_path, t.delete_sequence_numbers[d.file_path]) for d in t.deletes)))
    return sorted(out, key=lambda x: x[0][0])


def _full_decode_counted(io_, path, ptype, spec_id, snap, seq, keep=None):
    out = _full_decode(io_, path, ptype, spec_id, snap, seq)
    return out, len(out)


def _no_columns(m):
    """Plan from manifest entries, never from Arrow columns (``manifest_arrow``)."""
    m.setattr(scan_mod, "load_manifest_columns", lambda *args: None)


def _plan_entries(monkeypatch, io_, meta, snapshot, where):
    """The plans from manifest entries: a filtered read with the manifest cache off (only the
    kept entries built), a first read with it on (the manifests decoded whole and cached) and a
    second (the cached manifests judged as columns, ``file_columns``)."""
    _clear()
    with monkeypatch.context() as m:
        _no_columns(m)
        m.setattr(manifest_reader.CacheSettings, "of", classmethod(lambda cls, props: cls(enabled=False)))
        fast = _describe(scan_mod.plan_files(io_, meta, snapshot, where))
        assert len(manifest_reader.MANIFESTS) == 0
        again = _describe(scan_mod.plan_files(io_, meta, snapshot, where))
        assert again == fast
        cached = _describe(scan_mod.plan_files(io_, meta, snapshot, where))      # judged as columns
        assert cached == fast
    _clear()
    return fast


def _plan_columnar(monkeypatch, io_, meta, snapshot, where, columns=True):
    """The plans from Arrow columns (``manifest_arrow``, ``columnar_filter``): with the manifest
    cache off, a first read with it on, and a second from the cached columns; each data manifest
    must have been judged as columns."""
    used = []
    real = scan_mod.load_manifest_columns

    def spy(*args):
        got = real(*args)
        used.append(got is not None)
        return got

    _clear()
    with monkeypatch.context() as m:
        m.setattr(scan_mod, "load_manifest_columns", spy)
        with monkeypatch.context() as off:
            off.setattr(manifest_reader.CacheSettings, "of", classmethod(lambda cls, props: cls(enabled=False)))
            uncached = _describe(scan_mod.plan_files(io_, meta, snapshot, where))
        first = _describe(scan_mod.plan_files(io_, meta, snapshot, where))
        second = _describe(scan_mod.plan_files(io_, meta, snapshot, where))
    _clear()
    if columns:
        assert all(used) and (used or first == []), "a data manifest was not held as columns"
    else:
        assert not any(used), "a manifest held as columns that columns cannot give exactly"
    assert uncached == first == second
    return first


def _plan_both(monkeypatch, io_, meta, snapshot, where, columns=True):
    """The plan from Arrow columns and from entries (which must agree), and the plain path's plan:
    fastavro's full decode of every manifest."""
    columnar = _plan_columnar(monkeypatch, io_, meta, snapshot, where, columns)
    fast = _plan_entries(monkeypatch, io_, meta, snapshot, where)
    assert columnar == fast
    with monkeypatch.context() as m:
        _no_columns(m)
        m.setattr(manifest_avro, "read_kept_entries", _full_decode_counted)
        full = _describe(scan_mod.plan_files(io_, meta, snapshot, where))
    _clear()
    return fast, full


def _assert_manifests_equal(io_, meta, snapshot):
    """Every entry of every manifest: same fields, same metrics, as the full decode."""
    n = 0
    for m in manifest_reader.snapshot_manifests(io_, snapshot):
        ptype = meta.spec_by_id(m.partition_spec_id).partition_type(meta.schema)
        fast = manifest_avro.read_manifest_entries(io_, m.manifest_path, ptype, m.partition_spec_id,
                                        m.added_snapshot_id, m.sequence_number)
        full = _full_decode(io_, m.manifest_path, ptype, m.partition_spec_id,
                            m.added_snapshot_id, m.sequence_number)
        assert len(fast) == len(full)
        ids = [f.field_id for f in meta.schema.fields] + [9999]
        for a, b in zip(fast, full):
            # one column's metrics found in the encoded maps: what the decoded maps hold, or None
            assert "_lazy" in a.data_file.__dict__
            for fid in ids:
                assert a.data_file.metrics_of(fid) == tuple(
                    (getattr(b.data_file, name) or {}).get(fid) for name in mf.METRIC_FIELDS[1:]), fid
            assert (a.status, a.snapshot_id, a.sequence_number, a.file_sequence_number) == \
                   (b.status, b.snapshot_id, b.sequence_number, b.file_sequence_number)
            for name in FIELDS:
                assert getattr(a.data_file, name) == getattr(b.data_file, name), name
            assert a == b
            n += 1
    return n


@pytest.fixture(autouse=True)
def small_manifests_as_columns(monkeypatch):
    """These tables' manifests are small: judge them as columns too (by default a manifest of fewer
    than ``COLUMNS_MIN_ENTRIES`` entries is decoded entry by entry)."""
    monkeypatch.setattr(manifest_reader, "COLUMNS_MIN_ENTRIES", 0)


# --------------------------------------------------------------------------- icefloe-written tables
@pytest.fixture
def table(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", "id bigint not null, p int not null, v double, s string",
                         partitioned_by=["p"])
    for c in range(12):
        ids = list(range(c * 20, c * 20 + 20))
        t.append(pa.table({
            "id": pa.array(ids, pa.int64()),
            "p": pa.array([(c // 4) * 3 + i % 3 for i in range(20)], pa.int32()),
            "v": pa.array([float("nan") if i % 7 == 0 else i * 0.5 for i in ids], pa.float64()),
            "s": pa.array([None if i % 5 == 0 else f"s{i:04d}" for i in ids], pa.string()),
        }))
    t.delete("id = 25")  # a delete (position deletes or a rewrite): exercises delete manifests
    return cat.load_table("db.t")


WHERES = [None, "p = 4", "p > 2 AND p < 7", "id = 137", "id < 30 OR id >= 230", "s = 's0101'",
          "v IS NAN", "s IS NULL", "p = 4 AND id > 90", "p = 999"]


@pytest.mark.parametrize("where", WHERES)
def test_same_plan_as_full_decode(table, monkeypatch, where):
    fast, full = _plan_both(monkeypatch, table.io, table.metadata, table.current_snapshot(), where)
    assert fast == full
    if where is None:
        assert len(fast) > 0


def test_a_filtered_read_builds_only_the_files_it_keeps_where_nothing_is_cached(table, monkeypatch):
    """With the manifest cache off, a filtered plan judges each entry before building it and
    keeps nothing; with it on, the first plan decodes every manifest whole and caches it, and the
    next plans, whatever their filter, read nothing."""
    reads = []
    real = manifest_avro.read_kept_entries

    def spy(*args):
        out, n = real(*args)
        reads.append((len(out), n, args[6] if len(args) > 6 else None))
        return out, n

    monkeypatch.setattr(manifest_avro, "read_kept_entries", spy)
    _no_columns(monkeypatch)
    _clear()
    snap, meta = table.current_snapshot(), table.metadata
    with monkeypatch.context() as m:
        m.setattr(manifest_reader.CacheSettings, "of", classmethod(lambda cls, props: cls(enabled=False)))
        first = _describe(scan_mod.plan_files(table.io, meta, snap, "id = 137"))
    built, held = sum(r[0] for r in reads), sum(r[1] for r in reads)
    assert all(r[2] is not None for r in reads) and held > 30
    assert built == len(first) == 3          # the files whose id range holds 137, nothing else built
    reads.clear()
    assert _describe(scan_mod.plan_files(table.io, meta, snap, "id = 137")) == first
    assert all(r[2] is None and r[0] == r[1] for r in reads) and sum(r[1] for r in reads) == held
    reads.clear()
    assert _describe(scan_mod.plan_files(table.io, meta, snap, "id = 137")) == first
    assert _describe(scan_mod.plan_files(table.io, meta, snap, "p = 4")) == \
        [d for d in _describe(scan_mod.plan_files(table.io, meta, snap, None)) if d[0][FIELDS.index("partition")] == (4,)]
    assert reads == []


@pytest.mark.parametrize("where", ["id = 137", "p = 4 AND id > 90", "v IS NAN", "id > 1000"])
def test_format_v3_tables_plan_the_same(tmp_path, monkeypatch, where):
    """Format v3: data files inherit first row ids counted over every entry of a manifest, so a
    filtered read there decodes the manifest whole; the plans and their row ids are the same."""
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.v3", "id bigint not null, p int not null, v double", partitioned_by=["p"],
                         properties={"format-version": "3"})
    for c in range(6):
        ids = list(range(c * 50, c * 50 + 50))
        t.append(pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array([i % 5 for i in ids], pa.int32()),
                           "v": pa.array([float("nan") if i % 9 == 0 else i / 3 for i in ids], pa.float64())}))
    t = cat.load_table("db.v3")
    fast, full = _plan_both(monkeypatch, t.io, t.metadata, t.current_snapshot(), where)
    assert fast == full
    rows = [d[0][FIELDS.index("first_row_id")] for d in fast]
    assert all(r is not None for r in rows) and (len(fast) > 0 or where == "id > 1000")


def test_every_entry_equal(table):
    _clear()
    assert _assert_manifests_equal(table.io, table.metadata, table.current_snapshot()) > 0


def test_merged_manifests_keep_full_metrics(table):
    """Commits merge manifests from cached (lazily decoded) entries: the rewritten ones carry metrics."""
    snap = table.current_snapshot()
    seen = 0
    for m in manifest_reader.snapshot_manifests(table.io, snap):
        _meta, records = manifest_avro.read_manifest_raw(table.io, m.manifest_path)
        for r in records:
            df = r["data_file"]
            if df["content"] == 0:
                for name in mf.METRIC_FIELDS:
                    if name != "nan_value_counts":
                        assert df[name], (m.manifest_path, name)
                seen += 1
    assert seen > 0


def test_lazy_datafile_behaves_like_plain(table):
    _clear()
    meta = table.metadata
    fast, full = [], []
    for m in manifest_reader.snapshot_manifests(table.io, table.current_snapshot()):
        ptype = meta.spec_by_id(m.partition_spec_id).partition_type(meta.schema)
        args = (table.io, m.manifest_path, ptype, m.partition_spec_id, m.added_snapshot_id, m.sequence_number)
        fast += manifest_avro.read_manifest_entries(*args)
        full += _full_decode(*args)
    assert len(fast) >= 5
    a, b = fast[0].data_file, full[0].data_file
    assert "_lazy" in a.__dict__
    assert pickle.loads(pickle.dumps(a)) == b
    assert type(pickle.loads(pickle.dumps(a))) is mf.DataFile    # copies and pickles are plain
    assert "__getattr__" not in vars(mf.DataFile)                  # the spec type is not patched
    assert copy.deepcopy(a) == b and copy.copy(fast[1].data_file) == full[1].data_file
    assert dataclasses.replace(fast[2].data_file) == full[2].data_file
    assert dataclasses.asdict(fast[3].data_file) == dataclasses.asdict(full[3].data_file)
    # a value assigned before the first read wins over the manifest's
    f = fast[4].data_file
    before = f.metrics_of(1)
    f.upper_bounds = {1: b"x"}
    assert f.metrics_of(1) == before[:4] + (b"x",)               # the finder sees the assigned map too
    assert f.upper_bounds == {1: b"x"} and f.lower_bounds == full[4].data_file.lower_bounds
    with pytest.raises(AttributeError):
        a.no_such_field
    assert mf.DataFile("p", "PARQUET", (), 1, 1).column_sizes is None


# --------------------------------------------------------------------------- pyiceberg-written tables
def _pyiceberg_table(tmp_path, decimal=True):
    from tests.iceberg.test_interop_writers import _dict_catalog_class
    from pyiceberg.transforms import IdentityTransform

    root = tmp_path / "pyiceberg-warehouse"
    root.mkdir()
    pycat = _dict_catalog_class()("interop", warehouse=f"file://{root}")
    pycat.create_namespace("db")
    schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("dt", pa.date32()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("flag", pa.bool_()),
    ])
    tbl = pycat.create_table("db.py", schema)
    with tbl.update_spec() as u:
        u.add_identity("name")
        u.add_field("dt", IdentityTransform(), "dt_ident")
        u.add_field("ts", IdentityTransform(), "ts_ident")
        if decimal:
            u.add_field("amount", IdentityTransform(), "amount_ident")
        u.add_identity("flag")
    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    for c in range(4):
        rows = [{"id": c * 10 + i, "name": [None, "north", "south"][i % 3],
                 "dt": dt.date(2024, 1, 1 + i % 3), "ts": base + dt.timedelta(hours=7 * i + c),
                 "amount": Decimal(f"{i % 2}.25"), "flag": i % 2 == 0} for i in range(10)]
        tbl.append(pa.Table.from_pylist(rows, schema=schema))
    return tbl


@pytest.mark.parametrize("where", [None, "name = 'north'", "dt = DATE '2024-01-02'", "id = 13",
                                   "amount = 1.25", "flag = true", "ts > TIMESTAMP '2024-01-01 20:00:00'",
                                   "name IS NULL"])
def test_pyiceberg_manifests(tmp_path, monkeypatch, where):
    py_tbl = _pyiceberg_table(tmp_path)
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.register_table("db.py", py_tbl.metadata_location)
    _clear()
    assert _assert_manifests_equal(t.io, t.metadata, t.current_snapshot()) == 40
    # a decimal partition: its manifests are not held as columns, but read entry by entry
    fast, full = _plan_both(monkeypatch, t.io, t.metadata, t.current_snapshot(), where, columns=False)
    assert fast == full
    if where is None:
        assert len(fast) == len({task.file.file_path for task in py_tbl.scan().plan_files()})


@pytest.mark.parametrize("where", [None, "name = 'north'", "dt = DATE '2024-01-02'", "id = 13", "id IN (3, 27)",
                                   "flag = true", "ts > TIMESTAMP '2024-01-01 20:00:00'", "name IS NULL",
                                   "id > 5 AND name = 'south'", "amount > 0.5"])
def test_pyiceberg_manifests_as_columns(tmp_path, monkeypatch, where):
    """pyiceberg's manifests (string, date, timestamp and boolean partitions) judged as columns."""
    py_tbl = _pyiceberg_table(tmp_path, decimal=False)
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.register_table("db.py", py_tbl.metadata_location)
    fast, full = _plan_both(monkeypatch, t.io, t.metadata, t.current_snapshot(), where)
    assert fast == full
    if where is None:
        assert len(fast) == len({task.file.file_path for task in py_tbl.scan().plan_files()}) == 40


@pytest.fixture
def files_table(tmp_path):
    """A metadata-only table (no Spark): 3 commits of 20 files, ``id`` bounds of 10 values per file,
    partitioned by ``p`` (the file number modulo 4)."""
    import struct

    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.f", "id bigint not null, p int not null", partitioned_by=["p"])
    loc = t.location.rstrip("/")
    for c in range(3):
        t.commit_files([mf.DataFile(
            file_path=f"{loc}/data/f{i:04d}.parquet", file_format="PARQUET", partition=(i % 4,), record_count=10,
            file_size_in_bytes=100, value_counts={1: 10, 2: 10}, null_value_counts={1: 0, 2: 0},
            lower_bounds={1: struct.pack("<q", i * 10), 2: struct.pack("<i", i % 4)},
            upper_bounds={1: struct.pack("<q", i * 10 + 9), 2: struct.pack("<i", i % 4)})
            for i in range(c * 20, c * 20 + 20)])
    return cat.load_table("db.f")


@pytest.mark.parametrize("bounds", ["all eight bytes", "widths mixed"])
@pytest.mark.parametrize("where", ["id = 137", "id < 30 OR id >= 230", "id > 40 AND id <= 57"])
def test_whole_number_bounds_of_every_width(tmp_path, monkeypatch, bounds, where):
    """``id`` bounds judged as columns: all eight bytes back to back (read as one array), or mixed with
    files bounded in four bytes (as an int promoted to long writes them), in three, or not at all."""
    import struct

    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.w", "id bigint not null", partitioned_by=[])
    loc = t.location.rstrip("/")

    def bound(v, i):
        if bounds == "all eight bytes" or i % 4 == 0:
            return {1: struct.pack("<q", v)}
        return {1: struct.pack("<i", v)} if i % 4 == 1 else ({1: b"abc"} if i % 4 == 2 else {})

    t.commit_files([mf.DataFile(
        file_path=f"{loc}/data/f{i:04d}.parquet", file_format="PARQUET", partition=(), record_count=10,
        file_size_in_bytes=100, value_counts={1: 10}, null_value_counts={1: 0},
        lower_bounds=bound(i * 10, i), upper_bounds=bound(i * 10 + 9, i)) for i in range(30)])
    t = cat.load_table("db.w")
    fast, full = _plan_both(monkeypatch, t.io, t.metadata, t.current_snapshot(), where)
    assert fast == full and 0 < len(fast) < 30


def test_columnar_plan_builds_only_the_files_it_keeps(files_table, monkeypatch):
    """Judged as columns, a filtered plan builds a file object for each file it keeps and no other;
    the files are plain ``DataFile`` values when copied or pickled."""
    from icefloe.iceberg import manifest_arrow

    built = []
    real = manifest_arrow.KeptRows.file

    def spy(self, i):
        built.append(1)
        return real(self, i)

    table = files_table
    monkeypatch.setattr(manifest_arrow.KeptRows, "file", spy)
    _clear()
    tasks = scan_mod.plan_files(table.io, table.metadata, table.current_snapshot(), "id = 137")
    assert sum(built) == len(tasks) == 1 and tasks[0].path.endswith("f0013.parquet")
    assert tasks[0].file.partition == (1,) and tasks[0].file.spec_id == 0
    f = tasks[0].file
    assert isinstance(f, manifest_arrow.ColumnarDataFile) and "_columns" in f.__dict__
    plain = pickle.loads(pickle.dumps(f))
    assert type(plain) is mf.DataFile and plain == f and plain.lower_bounds == f.lower_bounds
    assert copy.deepcopy(f) == plain and f.metrics_of(1) == plain.metrics_of(1)
    _clear()
    assert _plan_both(monkeypatch, table.io, table.metadata, table.current_snapshot(), "id = 137 OR p = 2")[0] == \
        _plan_both(monkeypatch, table.io, table.metadata, table.current_snapshot(), "id = 137 OR p = 2")[1]


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_corrupt_manifest_is_named_when_judged_as_columns(files_table, damage):
    """A damaged data manifest gives ``CorruptMetadataError`` naming it, not a plan without its files."""
    from icefloe.errors import CorruptMetadataError

    table = files_table
    snap = table.current_snapshot()
    m = next(m for m in manifest_reader.snapshot_manifests(table.io, snap) if m.content == 0 and m.added_files_count)
    path = m.manifest_path.replace("file://", "").replace("file:", "")
    with open(path, "rb") as fh:
        data = fh.read()
    if damage == "garbage":
        data = data[:len(data) // 2] + bytes(range(256)) * 4 + data[len(data) // 2:]
    else:
        data = data[:len(data) - 40]
    with open(path, "wb") as fh:
        fh.write(data)
    _clear()
    with pytest.raises(CorruptMetadataError) as info:
        scan_mod.plan_files(table.io, table.metadata, snap, "id = 137")
    assert m.manifest_path in str(info.value) or path in str(info.value)
    _clear()


def test_small_manifests_are_decoded_entry_by_entry(table, monkeypatch):
    """Below ``COLUMNS_MIN_ENTRIES`` entries a data manifest is planned from its entries (the columns'
    fixed cost per file would exceed the decoding it saves); at or above it, as columns; same plan."""
    monkeypatch.setattr(manifest_reader, "COLUMNS_MIN_ENTRIES", 10_000)
    decoded = []
    real = manifest_reader.decode_columns
    monkeypatch.setattr(manifest_reader, "decode_columns", lambda data, **kw: decoded.append(1) or real(data, **kw))
    manifest_reader.clear_manifest_cache()
    small = sorted(f.file_path for f in table.refresh().plan_files())
    assert decoded == []
    monkeypatch.setattr(manifest_reader, "COLUMNS_MIN_ENTRIES", 1)
    manifest_reader.clear_manifest_cache()
    assert sorted(f.file_path for f in table.refresh().plan_files()) == small
    assert decoded


@pytest.mark.parametrize("where", ["id = 137", "s = 's0101'", "v IS NAN", "s IS NULL"])
def test_a_filtered_plan_after_a_plan_of_everything_decodes_the_metrics_then(table, monkeypatch, where):
    """A plan of no filter holds the manifests as columns without their metrics maps; a filtered
    plan after it, from those cached columns, decodes the maps from the manifest when it first
    judges them (once per manifest) and plans exactly what a fresh filtered plan does."""
    io_, meta, snap = table.io, table.metadata, table.current_snapshot()
    _clear()
    fresh = _describe(scan_mod.plan_files(io_, meta, snap, where))
    drops = []
    real = manifest_arrow.decode

    def spy(data, part_entries=None, drop=manifest_arrow.WITHOUT_METRICS[:2], split=True):
        drops.append(drop)
        return real(data, part_entries, drop, split)

    _clear()
    monkeypatch.setattr(manifest_arrow, "decode", spy)
    monkeypatch.setattr(manifest_reader, "decode_columns", spy)
    everything = scan_mod.plan_files(io_, meta, snap, None)
    assert drops and all("data_file.lower_bounds" in d for d in drops), "a plan of no filter decoded metrics"
    first = len(drops)
    after = _describe(scan_mod.plan_files(io_, meta, snap, where))
    maps_only = drops[first:]
    assert maps_only and all("data_file.lower_bounds" not in d and "data_file.file_path" in d for d in maps_only)
    assert after == fresh
    again = _describe(scan_mod.plan_files(io_, meta, snap, where))
    assert again == fresh and len(drops) == first + len(maps_only)      # decoded once
    # the files of the first plan read their metrics from the same maps
    assert _describe(everything) == _describe(scan_mod.plan_files(io_, meta, snap, None))
    _clear()
