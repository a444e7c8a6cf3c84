"""A partitioned table's merged manifests group their entries by partition and index their
Avro blocks (per-block partition statistics in the header); a filtered scan's first read skips
the blocks the filter rules out. Plans equal those read without the index, each block holds
what its statistics say, an index that does not describe its blocks is ignored, and pypaimon
and pypaimon-rust read such tables as icefloe does."""
import io
import json

import fastavro
import pyarrow as pa
import pytest

from icefloe.paimon import manifest as mf
from icefloe.paimon import manifest_blocks as mb
from icefloe.paimon.binary_row import decode_row

NAME = "db.t"
WHERE = ["p = 3", "p = 11", "p < 4", "p >= 9", "p IN (2, 7)", "p IS NULL", "p IS NOT NULL", "NOT (p = 5)",
         "p = 3 OR id = 150", "p = 3 AND q = 'b'", "q = 'a'", "q > 'a' AND p BETWEEN 4 AND 6", "id = 77",
         "p = 3 OR q = 'c'", "p = 99"]


def _rows(c, n=12):
    ids = list(range(c * 100, c * 100 + n))
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "p": pa.array([None if i % 12 == 11 else (c // 4) * 4 + i % 4 for i in ids], pa.int32()),
                     "q": [("a", "b", "c")[(i // 4) % 3] for i in ids],
                     "v": [float(i) for i in ids]})


def _table(cat):
    """40 appends of 12 rows over (p, q) partitions, p changing every 4 appends, some p null;
    merge-min-count 8 merges manifests every few commits, so the latest snapshot has merged
    manifests of well over a block of entries."""
    t = cat.create_table(NAME, "id bigint not null, p int, q string, v double", partitioned_by=["p", "q"],
                         properties={"manifest.merge-min-count": "8"})
    for c in range(40):
        t.append(_rows(c))
    return cat.load_table(NAME)


def _indexed(t):
    store = t.store
    out = []
    for m in store.data_manifests(store.snapshots.latest()):
        data = store.io.read_bytes(store.manifest_path(m.file_name))
        blocks = fastavro.block_reader(io.BytesIO(data))
        index = mb.block_index(blocks.metadata)
        if index is not None:
            out.append((m, index, [list(b) for b in blocks]))
    return out


def _plan(cat, where):
    return sorted(f.file_path for f in cat.load_table(NAME).plan_files(where=where))


def test_merged_manifests_hold_blocks_their_statistics_describe(paimon_catalog):
    t = _table(paimon_catalog)
    indexed = _indexed(t)
    assert indexed, "no manifest of the latest snapshot indexes its blocks"
    types = t.store.partition_types
    blocks_seen = 0
    for m, index, blocks in indexed:
        assert len(index) == len(blocks) >= 2
        seen_partitions: list = []
        seen_buckets: list = []
        for (count, stats, buckets), records in zip(index, blocks):
            blocks_seen += 1
            assert count == len(records)
            assert buckets == (min(r["_BUCKET"] for r in records), max(r["_BUCKET"] for r in records))
            for r in records:   # each bucket's entries are together
                if not seen_buckets or seen_buckets[-1] != (r["_PARTITION"], r["_BUCKET"]):
                    assert (r["_PARTITION"], r["_BUCKET"]) not in seen_buckets
                    seen_buckets.append((r["_PARTITION"], r["_BUCKET"]))
            mins, maxs, nulls = stats.decode(types)
            values = [decode_row(mf.BinaryRow.from_bytes(r["_PARTITION"]), types) for r in records]
            for i in range(len(types)):
                present = [v[i] for v in values if v[i] is not None]
                assert nulls[i] == sum(1 for v in values if v[i] is None)
                assert (mins[i], maxs[i]) == ((min(present), max(present)) if present else (None, None))
            for r in records:   # each partition's entries are together
                if not seen_partitions or seen_partitions[-1] != r["_PARTITION"]:
                    assert r["_PARTITION"] not in seen_partitions
                    seen_partitions.append(r["_PARTITION"])
        assert sum(c for c, _s, _b in index) == m.num_added_files + m.num_deleted_files
    assert blocks_seen >= 4


def test_plans_equal_plans_read_without_the_index(paimon_catalog, monkeypatch):
    _table(paimon_catalog)
    skipped = []
    real_skip = mf._avro_skip

    def counting_skip(*a):
        skipped.append(1)
        return real_skip(*a)

    monkeypatch.setattr(mf, "_avro_skip", counting_skip)
    with_index, skips = {}, {}
    for w in WHERE:
        skipped.clear()
        with_index[w] = _plan(paimon_catalog, w)
        skips[w] = len(skipped)
    monkeypatch.setattr(mb, "block_index", lambda metadata: None)
    monkeypatch.setattr(mf, "_LAYOUTS", {})     # the layouts read with the index are forgotten
    monkeypatch.setattr(mf, "_located_blocks", lambda *a: None)    # and none is found by reading
    without, skips_without = {}, {}
    for w in WHERE:
        skipped.clear()
        without[w] = _plan(paimon_catalog, w)
        skips_without[w] = len(skipped)
    assert with_index == without
    everything = _plan(paimon_catalog, None)
    assert len(with_index["p = 3"]) and len(with_index["p IS NULL"]) and not with_index["p = 99"]
    assert len(with_index["p = 3"]) < len(everything)
    # the index spares the records of the blocks it rules out: a one-partition plan skips far
    # fewer entries than it does reading every block
    for w in ("p = 3", "p = 11", "p IS NULL"):
        assert skips[w] * 3 < skips_without[w], (w, skips[w], skips_without[w])
    # the second plan of a table object reads the manifests whole, and plans the same
    t = paimon_catalog.load_table(NAME)
    for w in WHERE:
        t.plan_files(where=w)
        assert sorted(f.file_path for f in t.plan_files(where=w)) == without[w]


def test_rows_read_through_the_index_equal_a_filtered_full_read(paimon_catalog):
    _table(paimon_catalog)
    every = paimon_catalog.load_table(NAME).to_arrow().to_pylist()
    for where, keep in (("p = 3", lambda r: r["p"] == 3), ("p IS NULL", lambda r: r["p"] is None),
                        ("p IN (2, 7) AND q = 'b'", lambda r: r["p"] in (2, 7) and r["q"] == "b")):
        got = paimon_catalog.load_table(NAME).to_arrow(where=where).to_pylist()
        assert sorted(r["id"] for r in got) == sorted(r["id"] for r in every if keep(r)), where


def test_an_index_that_does_not_describe_the_blocks_is_ignored(paimon_catalog):
    t = _table(paimon_catalog)
    m, index, blocks = _indexed(t)[0]
    store = t.store
    data = store.io.read_bytes(store.manifest_path(m.file_name))
    reader = fastavro.block_reader(io.BytesIO(data))
    records = [r for b in blocks for r in b]
    raw = json.loads(reader.metadata[mb.INDEX_KEY])
    raw[0][0] += 1      # the first block's count is wrong: the index describes other blocks
    buf = io.BytesIO()
    w = fastavro.write.Writer(buf, fastavro.parse_schema(reader.writer_schema), codec="zstandard",
                              metadata={mb.INDEX_KEY: json.dumps(raw)})
    for r in records:
        w.write(r)
    w.flush()

    def nothing(stats, rows):
        return False    # an index it trusted would drop every record

    kept = mf.read_kept_records(buf.getvalue(), "m", lambda data: True, nothing)
    assert len(kept) == len(records)
    assert len(mf.read_kept_records(data, "m", lambda data: True, nothing)) == 0
    assert mb.block_index({mb.INDEX_KEY: "not json"}) is None
    assert mb.block_index({mb.INDEX_KEY: '[[-1, "", "", []]]'}) is None
    assert mb.block_index({mb.INDEX_KEY: '[[1, "00", "00", [0], 2]]'}) is None     # half a bucket range
    # an index written before bucket ranges: blocks judged by their partitions only
    legacy = mb.block_index({mb.INDEX_KEY: '[[3, "00", "00", [0]], [2, "00", "00", [0], 1, 3]]'})
    assert [(n, b) for n, _s, b in legacy] == [(3, None), (2, (1, 3))]


def test_files_roll_at_the_target_size_each_with_its_own_index(paimon_catalog):
    t = _table(paimon_catalog)
    entries = t.store.live_entries(t.store.snapshots.latest())
    types = t.store.partition_types
    files = mf.encode_manifests(entries, 2048, "zstandard", types)
    assert len(files) >= 2
    assert sorted(e.file.file_name for _, chunk in files for e in chunk) == sorted(e.file.file_name for e in entries)
    for data, chunk in files:
        reader = fastavro.block_reader(io.BytesIO(data))
        index = mb.block_index(reader.metadata)
        got = [r["_FILE"]["_FILE_NAME"] for b in reader for r in b]
        assert got == [e.file.file_name for e in chunk]
        if index is not None:
            assert sum(c for c, _s, _b in index) == len(chunk)
    unpartitioned = mf.encode_manifests(entries, 8 << 20, "zstandard", ())
    assert mb.block_index(fastavro.block_reader(io.BytesIO(unpartitioned[0][0])).metadata) is None


@pytest.mark.parametrize("where", [None, "p = 3", "p IS NULL"])
def test_pypaimon_and_pypaimon_rust_read_tables_with_indexed_manifests(paimon_catalog, pypaimon_catalog,
                                                                       paimon_warehouse, where):
    from pypaimon_rust.datafusion import SQLContext

    t = _table(paimon_catalog)
    assert _indexed(t)
    ours = sorted(r["id"] for r in paimon_catalog.load_table(NAME).to_arrow(where=where).to_pylist())
    pt = pypaimon_catalog.get_table(NAME)
    rb = pt.new_read_builder()
    theirs = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    if where == "p = 3":
        theirs = [r for r in theirs if r["p"] == 3]
    elif where == "p IS NULL":
        theirs = [r for r in theirs if r["p"] is None]
    assert sorted(r["id"] for r in theirs) == ours
    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": paimon_warehouse})
    sql = f"SELECT id FROM paimon.{NAME}" + (f" WHERE {where}" if where else "")
    rust = pa.Table.from_batches(ctx.sql(sql)).column("id").to_pylist()
    assert sorted(rust) == ours
    assert len(ours) == (480 if where is None else len(ours)) and ours


def test_pypaimon_commits_over_indexed_manifests_and_icefloe_merges_theirs(paimon_catalog, pypaimon_catalog,
                                                                           monkeypatch):
    """pypaimon appends on top of a table whose manifests are indexed (its own manifests carry no
    index); icefloe's plans over the mix equal those read without the index, its next commits merge
    pypaimon's manifests with its own, and pypaimon reads every row at the end."""
    _table(paimon_catalog)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("p", pa.int32()), ("q", pa.string()),
                        ("v", pa.float64())])
    for c in range(40, 46):
        pt = pypaimon_catalog.get_table(NAME)
        wb = pt.new_batch_write_builder()
        w, commit = wb.new_write(), wb.new_commit()
        w.write_arrow(_rows(c).cast(schema))
        commit.commit(w.prepare_commit())
        w.close()
        commit.close()
    t = paimon_catalog.load_table(NAME)
    for c in range(46, 56):      # enough commits for manifest merges over pypaimon's manifests too
        t.append(_rows(c))
    t = paimon_catalog.load_table(NAME)
    assert _indexed(t)
    got = sorted(r["id"] for r in t.to_arrow().to_pylist())
    assert got == sorted(i for c in range(56) for i in range(c * 100, c * 100 + 12)) and len(got) == 672
    filters = ("p = 3", "p = 13", "p = 42", "p IS NULL", "q = 'b' AND p > 10")
    fresh = {w: _plan(paimon_catalog, w) for w in filters}
    monkeypatch.setattr(mb, "block_index", lambda metadata: None)
    monkeypatch.setattr(mf, "_LAYOUTS", {})     # the layouts read with the index are forgotten
    assert fresh == {w: _plan(paimon_catalog, w) for w in filters}
    assert all(fresh.values())
    pt = pypaimon_catalog.get_table(NAME)
    rb = pt.new_read_builder()
    theirs = sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("id").to_pylist())
    assert theirs == got
