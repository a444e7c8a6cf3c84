"""Manifest compaction from columns and raw record bytes (``paimon.manifest_merge``) writes what the
entry-by-entry merge writes: the same records in the same order (read back with fastavro), the same
files, block indexes and manifest metas, on random runs of manifests with ADDs, cancelling and
orphan DELETEs, append and primary-key tables, partitioned or not; manifests in another entry schema
take the entry-by-entry path; pypaimon reads a table whose manifests it merged."""
import dataclasses
import io
import random

import fastavro
import pyarrow as pa
import pytest

from icefloe.core.types import LongType
from icefloe.errors import DuplicateFileError
from icefloe.paimon import commit as pc
from icefloe.paimon import manifest as mf
from icefloe.paimon import manifest_merge
from icefloe.paimon.binary_row import encode_row
from icefloe.paimon.data_file import DataFileMeta, SimpleStats

SHAPES = {
    "append-one": ("id bigint, p int, v string", ["p"], {}),
    "append-two": ("id bigint, p int, q string, v double", ["p", "q"], {}),
    "append-none": ("id bigint, v string", [], {}),
    "pk-one": ("id bigint not null, p int not null, v string", ["p"], {"primary-key": "id,p", "bucket": "4"}),
    "pk-none": ("id bigint not null, v string", [], {"primary-key": "id", "bucket": "3"}),
}


def _table(cat, shape, target="6kb"):
    ddl, parts, props = SHAPES[shape]
    return cat.create_table("db.t", ddl, partitioned_by=parts,
                            properties={**props, "manifest.target-file-size": target})


def _partition(store, rnd):
    out = []
    for t in store.partition_types:
        if rnd.random() < 0.1:
            out.append(None)
        elif "String" in type(t).__name__:
            out.append(rnd.choice(["a", "bb", "ccc", ""]))
        else:
            out.append(rnd.randrange(12))
    return encode_row(out, store.partition_types)


def _file(rnd, i, pk, row_ids):
    key = encode_row([i], [LongType()])
    empty = encode_row([], [])
    stats = SimpleStats(key, key, (0,))
    return DataFileMeta(
        file_name=f"data-{i:06d}.parquet", file_size=rnd.randrange(1, 10**7), row_count=rnd.randrange(1, 5000),
        min_key=key if pk else empty, max_key=key if pk else empty,
        key_stats=stats if pk else SimpleStats(empty, empty, ()),
        value_stats=stats, min_sequence_number=i, max_sequence_number=i + rnd.randrange(100),
        schema_id=rnd.choice([0, 0, 1]), level=rnd.randrange(6) if pk else 0,
        extra_files=tuple(f"x-{i}-{k}" for k in range(rnd.choice([0, 0, 0, 2]))),
        creation_time=1_700_000_000_000 + i, delete_row_count=rnd.choice([None, 0, 3]),
        embedded_index=rnd.choice([None, None, b"\x01\x02"]), file_source=rnd.choice([None, 0, 1]),
        value_stats_cols=rnd.choice([None, ("id",)]), external_path=rnd.choice([None, None, f"s3://b/e-{i}"]),
        first_row_id=(i * 10_000 if row_ids else None),
        write_cols=rnd.choice([None, ("id", "v")]), write_cols_sequences=rnd.choice([None, (1, 2)]))


def _run(store, rnd, manifests=5, per=120, deletes=True, row_ids=False, start=0):
    """Manifests of random entries: new ADDs, DELETEs cancelling earlier ADDs of the run, DELETEs of
    files added before the run, and files added again after their DELETE."""
    pk = bool(store.schema.primary_keys)
    buckets = 4 if pk else 1
    live: list[mf.ManifestEntry] = []
    gone: list[mf.ManifestEntry] = []
    metas = []
    n = start
    for _ in range(manifests):
        entries = []
        for _ in range(per):
            r = rnd.random()
            if deletes and r < 0.2 and live:
                e = live.pop(rnd.randrange(len(live)))
                entries.append(mf.ManifestEntry(mf.DELETE, e.partition, e.bucket, e.total_buckets, e.file))
                gone.append(e)
            elif deletes and r < 0.25:
                n += 1
                entries.append(mf.ManifestEntry(mf.DELETE, _partition(store, rnd), rnd.randrange(buckets),
                                                buckets if pk else -1, _file(rnd, 10**6 + n, pk, row_ids)))
            elif deletes and r < 0.28 and gone:
                e = gone.pop(rnd.randrange(len(gone)))
                entries.append(e)
                live.append(e)
            else:
                n += 1
                e = mf.ManifestEntry(mf.ADD, _partition(store, rnd), rnd.randrange(buckets),
                                     buckets if pk else -1, _file(rnd, n, pk, row_ids))
                entries.append(e)
                live.append(e)
        metas.extend(store.write_manifests(entries, []))
    return metas


def _records(store, metas):
    out = []
    for m in metas:
        reader = fastavro.reader(io.BytesIO(store.io.read_bytes(store.manifest_path(m.file_name))))
        out.append((list(reader), reader.metadata.get("icefloe.partition-blocks"), reader.codec))
    return out


def _same(store, run):
    slow = pc.merge_run_entries(store, run, [])
    created = []
    fast = manifest_merge.merge_run(store, run, created)
    assert fast is not None
    assert created == [m.file_name for m in fast]
    strip = [{k: v for k, v in dataclasses.asdict(m).items() if k != "file_name"} for m in slow]
    assert strip == [{k: v for k, v in dataclasses.asdict(m).items() if k != "file_name"} for m in fast]
    assert _records(store, slow) == _records(store, fast)
    return fast


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("seed", [1, 2])
def test_fast_merge_equals_entry_by_entry_merge(paimon_catalog, shape, seed):
    t = _table(paimon_catalog, shape)
    rnd = random.Random(seed * 1000 + len(shape))
    run = _run(t.store, rnd, row_ids=seed == 2 and shape == "append-none")
    fast = _same(t.store, run)
    assert len(fast) >= 2          # rolled at the target size
    kinds = {r["_KIND"] for recs, _i, _c in _records(t.store, fast) for r in recs}
    assert kinds == {mf.ADD, mf.DELETE}     # cancelled pairs gone, orphan DELETEs kept


def test_fast_merge_of_adds_only_small_runs_and_codecs(paimon_catalog):
    t = paimon_catalog.create_table("db.t", "id bigint, p int, v string", partitioned_by=["p"],
                                    properties={"manifest.compression": "deflate"})
    rnd = random.Random(7)
    run = _run(t.store, rnd, manifests=3, per=10, deletes=False)      # 30 entries: no grouping, one file
    fast = _same(t.store, run)
    assert len(fast) == 1 and _records(t.store, fast)[0][2] == "deflate"
    big = _run(t.store, rnd, manifests=4, per=200, deletes=False)
    assert _records(t.store, _same(t.store, big))[0][1] is not None       # grouped and indexed


def test_every_entry_cancelled_writes_nothing(paimon_catalog):
    t = _table(paimon_catalog, "append-one")
    store = t.store
    rnd = random.Random(3)
    adds = [mf.ManifestEntry(mf.ADD, _partition(store, rnd), 0, -1, _file(rnd, i, False, False)) for i in range(50)]
    run = store.write_manifests(adds, []) + store.write_manifests(
        [dataclasses.replace(e, kind=mf.DELETE) for e in adds], [])
    assert pc.merge_run_entries(store, run, []) == []
    assert manifest_merge.merge_run(store, run, []) == []


def test_a_file_added_twice_is_an_error_both_ways(paimon_catalog):
    t = _table(paimon_catalog, "pk-one")
    store = t.store
    rnd = random.Random(4)
    e = mf.ManifestEntry(mf.ADD, _partition(store, rnd), 1, 4, _file(rnd, 1, True, False))
    run = store.write_manifests([e], []) + store.write_manifests([e], [])
    with pytest.raises(DuplicateFileError, match="data-000001.parquet"):
        pc.merge_run_entries(store, run, [])
    with pytest.raises(DuplicateFileError, match="data-000001.parquet"):
        manifest_merge.merge_run(store, run, [])


def _rewritten(store, meta, name, drop=(), extra=None):
    """Manifest ``meta``'s records written again as ``name`` in the entry schema less the ``_FILE``
    fields ``drop`` (each record without them) or with one more last field ``extra``."""
    schema = dict(mf.MANIFEST_ENTRY_SCHEMA)
    file_schema = dict(mf.DATA_FILE_SCHEMA)
    file_schema["fields"] = [f for f in file_schema["fields"] if f["name"] not in drop] + (
        [{"name": extra, "type": ["null", "long"], "default": None}] if extra else [])
    schema["fields"] = [f if f["name"] != "_FILE" else {"name": "_FILE", "type": file_schema} for f in schema["fields"]]
    records = [r for recs, _i, _c in _records(store, [meta]) for r in recs]
    for r in records:
        for d in drop:
            r["_FILE"].pop(d)
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec="zstandard")
    store.io.write_bytes(store.manifest_path(name), buf.getvalue(), overwrite=False)
    return dataclasses.replace(meta, file_name=name, file_size=len(buf.getvalue()))


@pytest.mark.parametrize("drop", [("_WRITE_COLS_SEQUENCES",), ("_FIRST_ROW_ID", "_WRITE_COLS", "_WRITE_COLS_SEQUENCES")])
def test_manifests_of_older_writers_are_merged_from_bytes_too(paimon_catalog, drop):
    """A manifest written without the last fields of ``_FILE`` (nullable ones older writers did not
    have) is merged from bytes, each record given those fields' nulls: as the entry-by-entry merge."""
    t = _table(paimon_catalog, "pk-one")
    store = t.store
    run = _run(store, random.Random(5), manifests=3, per=60)
    run[0] = _rewritten(store, run[0], "manifest-old-0", drop)
    run[2] = _rewritten(store, run[2], "manifest-old-2", drop)
    _same(store, run)


def test_manifests_in_another_entry_schema_are_merged_entry_by_entry(paimon_catalog):
    """A manifest in another entry schema (here one more field) is not merged from bytes; the
    commit's merge still merges it, entry by entry."""
    t = _table(paimon_catalog, "append-one")
    store = t.store
    run = _run(store, random.Random(5), manifests=2, per=40)
    run[0] = _rewritten(store, run[0], "manifest-other-0", extra="_SOMETHING_ELSE")
    assert manifest_merge.merge_run(store, run, []) is None
    merged = pc.minor_compaction(store, run, [], 10**9, 2)      # one run of both, merged entry by entry
    assert _records(store, merged) == _records(store, pc.merge_run_entries(store, run, []))


def test_pypaimon_reads_a_table_whose_manifests_were_merged_from_bytes(paimon_catalog, pypaimon_catalog,
                                                                        monkeypatch):
    calls = []
    real = manifest_merge.merge_run

    def counted(store, run, created):
        out = real(store, run, created)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(manifest_merge, "merge_run", counted)
    t = paimon_catalog.create_table("db.t", "id bigint, p int, v string", partitioned_by=["p"],
                                    properties={"manifest.merge-min-count": "3"})
    for c in range(12):
        t.append(pa.table({"id": pa.array(range(c * 10, c * 10 + 10), pa.int64()),
                           "p": pa.array([i % 3 for i in range(10)], pa.int32()), "v": ["x"] * 10}))
    t = paimon_catalog.load_table("db.t")
    t.delete("id < 25")
    for c in range(12, 16):
        t.append(pa.table({"id": pa.array(range(c * 10, c * 10 + 10), pa.int64()),
                           "p": pa.array([i % 3 for i in range(10)], pa.int32()), "v": ["x"] * 10}))
    assert calls and all(calls)
    ours = sorted(paimon_catalog.load_table("db.t").to_arrow().column("id").to_pylist())
    assert ours == [i for i in range(160) if i >= 25]
    pt = pypaimon_catalog.get_table("db.t")
    rb = pt.new_read_builder()
    assert sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("id").to_pylist()) == ours


@pytest.mark.parametrize("shape", ["append-two", "pk-one", "append-none"])
def test_full_compaction_from_bytes_equals_entry_by_entry(paimon_catalog, monkeypatch, shape):
    """Full compaction (every DELETE applied): the same kept base manifests and the same written
    records as with the entry-by-entry path."""
    t = _table(paimon_catalog, shape)
    store = t.store
    rnd = random.Random(11)
    base = _run(store, rnd, manifests=3, per=150, deletes=False)
    delta = _run(store, rnd, manifests=3, per=60, start=100_000)
    # DELETEs of some base files too
    victims = [e for recs, _i, _c in _records(store, base[:1]) for e in recs][:5]
    delta += store.write_manifests([mf.ManifestEntry(mf.DELETE, *_entry_parts(r)) for r in victims], [])
    manifests = base + delta
    target = min(m.file_size for m in base)
    fast = pc.try_full_compaction(store, manifests, [], target, 1)
    monkeypatch.setattr(manifest_merge, "deleted_partitions", lambda store, metas: None)
    slow = pc.try_full_compaction(store, manifests, [], target, 1)
    assert fast is not None and slow is not None
    kept_as_is = [m.file_name for m in fast if m.file_name in {b.file_name for b in manifests}]
    assert kept_as_is == [m.file_name for m in slow if m.file_name in {b.file_name for b in manifests}]
    assert len(kept_as_is) < len(base)                   # a base manifest holding a deleted file rewritten
    assert _records(store, fast) == _records(store, slow)
    assert all(r["_KIND"] == mf.ADD for recs, _i, _c in _records(store, fast) for r in recs)


def _entry_parts(r):
    entry = mf.entry_from_avro(r)
    return entry.partition, entry.bucket, entry.total_buckets, entry.file


@pytest.mark.long
def test_paimon_java_reads_a_table_whose_manifests_were_merged_from_bytes(paimon_bundle, monkeypatch):
    """Paimon 1.4's own reader reads every row of a partitioned primary-key table whose manifests
    icefloe merged from bytes (ADDs cancelled by compactions' DELETEs); Paimon's writer commits on it,
    icefloe's next merges take its manifest too, and both engines read every row after them."""
    from icefloe.catalog import Catalog

    calls = []
    real = manifest_merge.merge_run

    def counted(store, run, created):
        out = real(store, run, created)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(manifest_merge, "merge_run", counted)
    cat = Catalog(paimon_bundle.warehouse, "paimon")
    t = cat.create_table("db.merged", "id bigint not null, p int not null, v string", partitioned_by=["p"],
                         properties={"primary-key": "id,p", "bucket": "2", "manifest.merge-min-count": "3",
                                     "num-sorted-run.compaction-trigger": "2"})
    model = {}
    for c in range(10):
        rows = [(c * 3 + i, i % 2, f"v{c}") for i in range(6)]
        t.append(pa.table({"id": pa.array([r[0] for r in rows], pa.int64()),
                           "p": pa.array([r[1] for r in rows], pa.int32()), "v": [r[2] for r in rows]}))
        model.update({(r[0], r[1]): r[2] for r in rows})
    assert calls and any(calls)
    want = sorted((i, p, v) for (i, p), v in model.items())
    assert sorted(paimon_bundle.rows("db.merged")) == want
    calls.clear()
    paimon_bundle.write("db.merged", [(1000, 0, "java")])
    t = cat.load_table("db.merged")
    for c in range(10, 14):
        t.append(pa.table({"id": pa.array([2000 + c], pa.int64()), "p": pa.array([1], pa.int32()), "v": [f"v{c}"]}))
        want.append((2000 + c, 1, f"v{c}"))
    assert calls and all(calls)     # Paimon 1.4 writes manifests in the entry schema icefloe writes: merged from bytes
    want = sorted(want + [(1000, 0, "java")])
    assert sorted(paimon_bundle.rows("db.merged")) == want
    assert sorted(tuple(r.values()) for r in cat.load_table("db.merged").to_arrow().select(["id", "p", "v"])
                  .to_pylist()) == want
