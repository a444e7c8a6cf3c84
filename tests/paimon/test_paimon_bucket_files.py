"""A primary-key write restores the buckets it writes as columns (``FileStore.bucket_files``: names,
levels, sizes, sequence ranges), not as one entry per file; the commit's sequence check and the
compaction trigger after it read the same columns. What they read must be what whole entries say:
after compactions (DELETE entries cancelling ADDs of other manifests) every bucket's columns, runs
and largest sequence number equal a full read's; a write numbers its records after the bucket's
largest number wherever that file is listed; the compaction still picks its runs once the trigger is
reached; a concurrent write to the bucket is still a conflict; a ``_FILE`` layout of another order is
read whole; entries told apart only by the rest of their identifier merge as whole entries do."""
import io

import fastavro
import pyarrow as pa
import pytest

from icefloe.core.types import LongType
from icefloe.errors import CommitConflictError, CorruptMetadataError, DuplicateFileError
from icefloe.paimon import bucket_files as bf
from icefloe.paimon import kv_compact
from icefloe.paimon import manifest as mf
from icefloe.paimon.binary_row import BinaryRow, encode_row
from icefloe.paimon.commit import FileStoreCommit
from icefloe.paimon.data_file import CommitMessage, DataFileMeta
from icefloe.paimon.writer import restored_sequence_numbers

NAME = "db.pkcols"


def _full(store, snapshot):
    """(partition bytes, bucket) -> sorted (name, level, size, min seq, max seq) of a full read."""
    out = {}
    for e in store.live_entries(snapshot):
        f = e.file
        out.setdefault((e.partition.data, e.bucket), []).append(
            (f.file_name, f.level, f.file_size, f.min_sequence_number, f.max_sequence_number))
    return {k: sorted(v) for k, v in out.items()}


def _cols(files):
    return sorted(zip(files.names, files.levels, files.sizes, files.min_seqs, files.max_seqs))


def _rows(ids, p, v):
    return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array([p] * len(ids), pa.int32()),
                     "v": [v] * len(ids)})


def test_columns_equal_a_full_read_after_compactions(paimon_catalog):
    """Writes that compact (trigger 3) leave DELETE entries in later manifests: every bucket's columns,
    runs and largest sequence number are a full read's, read by a fresh table as a commit reads them."""
    t = paimon_catalog.create_table(NAME, "id bigint not null, p int not null, v string", partitioned_by=["p"],
                                    properties={"primary-key": "id,p", "bucket": "2",
                                                "num-sorted-run.compaction-trigger": "3"})
    for step in range(7):
        for p in (0, 1):
            t.append(_rows(list(range(step, step + 12)), p, f"s{step}"))
    store = t.store
    latest = store.snapshots.latest()
    kinds = [e.kind for m in store.data_manifests(latest) for e in store.read_manifest(m.file_name)]
    assert mf.DELETE in kinds, "the compactions left no DELETE entry to merge"
    full = _full(store, latest)
    assert len(full) == 4
    for key, files in full.items():
        fresh = paimon_catalog.load_table(NAME).store
        got = fresh.bucket_files(latest, [key])
        assert list(got) == [key] and _cols(got[key]) == files
        entries = fresh.bucket_entries(latest, [key])
        assert got[key].runs() == [(lvl, sum(e.file.file_size for e in run))
                                   for lvl, run in kv_compact.sorted_runs(entries)]
        assert restored_sequence_numbers(fresh, [key]) == {key: max(f[4] for f in files)}
    # several buckets at once, one of them empty
    empty = (encode_row([9], store.partition_types).data, 0)
    got = paimon_catalog.load_table(NAME).store.bucket_files(latest, [*full, empty])
    assert {k: _cols(v) for k, v in got.items()} == full


def _metadata_table(cat, buckets=1):
    return cat.create_table(NAME, "id bigint not null, p int not null, v string", partitioned_by=["p"],
                            properties={"primary-key": "id,p", "bucket": str(buckets)})


def _meta(name, seq, level=5, size=1000):
    return DataFileMeta(file_name=name, file_size=size, row_count=10,
                        min_key=encode_row([seq], [LongType()]), max_key=encode_row([seq + 9], [LongType()]),
                        min_sequence_number=seq, max_sequence_number=seq + 9, level=level)


def test_a_write_numbers_after_the_largest_number_of_an_older_manifest(paimon_catalog):
    """The bucket's largest sequence number is in the first commit's manifest, later commits add
    files numbered lower: the write numbers on from the largest, and its commit's check reads it."""
    t = _metadata_table(paimon_catalog)
    commit = FileStoreCommit(t.store, t.commit_user)
    commit.commit([CommitMessage((0,), 0, 1, [_meta(f"data-big-{i}.parquet", 5000 + 100 * i) for i in range(40)])])
    for j in range(3):
        commit.commit([CommitMessage((0,), 0, 1, [_meta(f"data-low-{j}.parquet", 10 * j, level=4)])])
    t = paimon_catalog.load_table(NAME)
    (m,) = t.write(_rows([10**9], 0, "x"))
    assert m.new_files[0].min_sequence_number == 5000 + 100 * 39 + 9 + 1
    # a commit that numbered its records within the bucket's range is refused by the commit's check
    stale = CommitMessage((0,), 0, 1, [_meta("data-stale.parquet", 8000, level=0)])
    t.store.snapshots.latest()
    with pytest.raises(CommitConflictError, match="numbered up to 8909"):
        t.commit([stale])


def test_the_trigger_still_picks_the_runs(paimon_catalog):
    """Metadata-only runs below the trigger: no compaction is planned and no entry is made; one
    more level-0 run reaches it and the plan names exactly the runs the whole entries give."""
    t = _metadata_table(paimon_catalog)
    commit = FileStoreCommit(t.store, t.commit_user)
    commit.commit([CommitMessage((0,), 0, 1, [_meta(f"data-top-{i}.parquet", 100 * i, size=10**6)
                                              for i in range(30)])])
    for j in range(3):
        commit.commit([CommitMessage((0,), 0, 1, [_meta(f"data-l0-{j}.parquet", 10**5 + 10 * j, level=0, size=100)])])
    t = paimon_catalog.load_table(NAME)
    key = (encode_row([0], t.store.partition_types).to_bytes(), 0)
    made = []
    real = kv_compact.bucket_entries

    def counted(table, buckets):
        made.append(buckets)
        return real(table, buckets)
    kv_compact.bucket_entries = counted
    try:
        assert kv_compact.plan_universal(t, {key}) == []
        assert made == [], "entries were made for a bucket the trigger does not pick"
        commit.commit([CommitMessage((0,), 0, 1, [_meta("data-l0-3.parquet", 10**5 + 50, level=0, size=100)])])
        t = paimon_catalog.load_table(NAME)
        (task,) = kv_compact.plan_universal(t, {key})
        assert made
    finally:
        kv_compact.bucket_entries = real
    entries = t.store.bucket_entries(t.store.snapshots.latest(), [(BinaryRow.from_bytes(key[0]).data, 0)])
    runs = kv_compact.sorted_runs(entries)
    count, level = kv_compact.pick_universal(runs, t.table_schema.options)
    assert sorted(e.file.file_name for e in task.entries) == sorted(
        e.file.file_name for _lvl, run in runs[:count] for e in run)
    assert task.level == level
    assert kv_compact.stalled_buckets(t, {key}) == set()


def test_a_concurrent_write_to_the_bucket_conflicts(paimon_catalog):
    t = _metadata_table(paimon_catalog)
    FileStoreCommit(t.store, t.commit_user).commit(
        [CommitMessage((0,), 0, 1, [_meta(f"data-{i}.parquet", 100 * i) for i in range(50)])])
    t = paimon_catalog.load_table(NAME)
    messages = t.write(_rows([10**9], 0, "a"))
    paimon_catalog.load_table(NAME).append(_rows([10**9 + 1], 0, "b"))
    with pytest.raises(CommitConflictError, match="numbered"):
        t.commit(messages)


def _records(entries, schema):
    buf = io.BytesIO()
    for e in entries:
        fastavro.schemaless_writer(buf, schema, mf.entry_to_avro(e))
    buf.seek(0)
    return buf


def test_a_file_layout_of_another_order_is_read_whole():
    """``_FILE`` fields in another order than Paimon's writers use: each record decoded whole, the
    same columns; the usual order is read field by field."""
    part = encode_row([3], [LongType()])
    entries = [mf.ManifestEntry(mf.ADD, part, 1, 2, _meta(f"f-{i}", 10 * i, level=i % 3)) for i in range(5)]
    entries[2].file.external_path = "s3://elsewhere/f-2"
    schema = mf.MANIFEST_ENTRY_SCHEMA
    for reorder in (False, True):
        s = fastavro.parse_schema(schema)
        if reorder:
            raw = dict(schema)
            file_schema = dict(raw["fields"][5]["type"])
            fields = list(file_schema["fields"])
            fields[9], fields[10] = fields[10], fields[9]     # _SCHEMA_ID and _LEVEL swapped
            file_schema["fields"] = fields
            raw["fields"] = [*raw["fields"][:5], {**raw["fields"][5], "type": file_schema}]
            s = fastavro.parse_schema(raw)
        file_type = s["fields"][5]["type"]
        assert (bf._plan(file_type) is None) == reorder
        rows = bf.Rows()
        rows.take("m", len(entries), _records(entries, s), file_type, {}, lambda p: True, None, None)
        rows.finish()
        assert rows.names == [e.file.file_name for e in entries]
        assert rows.levels == [e.file.level for e in entries]
        assert rows.max_seqs == [e.file.max_sequence_number for e in entries]
        assert [rows.tail(i)[2] for i in range(5)] == [None, None, "s3://elsewhere/f-2", None, None]


def test_entries_told_apart_by_the_rest_of_their_identifier():
    """Two ADDs of one name and level told apart by their external path; a DELETE of one cancels it
    alone; the same ADD twice is a duplicate."""
    part = encode_row([0], [LongType()])
    a = mf.ManifestEntry(mf.ADD, part, 0, 1, _meta("same", 10))
    b = mf.ManifestEntry(mf.ADD, part, 0, 1, _meta("same", 30))
    b.file.external_path = "/elsewhere/same"
    gone = mf.ManifestEntry(mf.DELETE, part, 0, 1, _meta("same", 30))
    gone.file.external_path = "/elsewhere/same"
    key = (part.data, 0)
    got = bf.live([bf.Rows.of_entries([a, b]), bf.Rows.of_entries([gone])], {key})
    assert got[key].max_seqs == (19,) == tuple(e.file.max_sequence_number for e in mf.live_files([a, b, gone]))
    assert bf.live([bf.Rows.of_entries([a, b])], {key})[key].max_sequence_number() == 39
    with pytest.raises(DuplicateFileError):
        bf.live([bf.Rows.of_entries([a]), bf.Rows.of_entries([a])], {key})


def test_a_duplicate_in_the_table_is_corrupt(paimon_catalog):
    t = _metadata_table(paimon_catalog)
    commit = FileStoreCommit(t.store, t.commit_user)
    commit.commit([CommitMessage((0,), 0, 1, [_meta("data-1.parquet", 10)])])
    store = t.store
    latest = store.snapshots.latest()
    (m,) = [m for m in store.data_manifests(latest)]
    # the same manifest listed twice: the file is added twice
    doubled = store.write_manifest_list([m, m])
    from dataclasses import replace
    twice = replace(latest, delta_manifest_list=doubled[0], delta_manifest_list_size=doubled[1],
                    base_manifest_list=store.write_manifest_list([])[0], base_manifest_list_size=None)
    with pytest.raises(CorruptMetadataError, match="already added"):
        store.bucket_files(twice, [(encode_row([0], store.partition_types).data, 0)])


def _readers(monkeypatch, reader):
    """Blocks read field by field (``fields``), or by the compiled readers however few their entries
    (``compiled``: the entry reader for the usual layout, the compiled decoder for another); which
    compiled ones read, as a list to look at."""
    from icefloe.core import avro_columns, numba_cache

    used = []
    if reader == "fields":
        monkeypatch.setattr(bf, "_entry_kernel", lambda records: None)
        monkeypatch.setattr(bf.numba_cache, "loaded", lambda: False)
        return used
    avro_columns._warm()
    assert numba_cache.loaded()
    monkeypatch.setattr(bf, "COMPILED_MIN_RECORDS", 0)
    monkeypatch.setattr(bf, "ENTRY_KERNEL_MIN_RECORDS", 0)
    real_entries, real_compiled = bf.Rows._take_compiled, bf._compiled
    def entries(self, *a):      # the entry reader read them (not refused: read field by field)
        read = real_entries(self, *a)
        used.extend(["entries"] if read else [])
        return read

    def decoder(pending):
        read = real_compiled(pending)
        used.extend(["decoder"] if read is not None else [])
        return read

    monkeypatch.setattr(bf.Rows, "_take_compiled", entries)
    monkeypatch.setattr(bf, "_compiled", decoder)
    return used


@pytest.mark.parametrize("reader", ["fields", "compiled"])
def test_every_optional_field_is_skipped_in_step(monkeypatch, reader):
    """Records whose statistics hold nulls or no null counts and whose later fields are all set
    (extra files, embedded index, statistics columns, external path, row ids, write columns) are
    read in step: every record's columns and identifier are its own, for the usual layout and for
    an older writer's (without the last two fields), whose rest fastavro skips; read field by field
    or by the compiled readers."""
    from icefloe.paimon.data_file import SimpleStats

    used = _readers(monkeypatch, reader)

    part = encode_row([3], [LongType()])
    entries = []
    for i in range(6):
        f = _meta(f"f-{i}" * (i + 1), 100 * i, level=i % 4, size=10**9 + i)
        if i % 2:
            f.key_stats = SimpleStats(encode_row([None], [LongType()]), encode_row([None], [LongType()]), (1,))
            f.value_stats = SimpleStats(encode_row([1, None], [LongType(), LongType()]),
                                        encode_row([2, None], [LongType(), LongType()]), None)
            f.extra_files = tuple(f"extra-{j}" for j in range(70))      # a count of two bytes
            f.embedded_index = b"\x01\x02"
            f.value_stats_cols = ("a", "b")
            f.external_path = f"/ext/f-{i}"
            f.first_row_id = 10**12 + i
            f.write_cols = ("id", "v")
            f.write_cols_sequences = (5, 6)
            f.delete_row_count = 3
            f.creation_time = 1700000000000 + i
        entries.append(mf.ManifestEntry(mf.ADD if i != 4 else mf.DELETE, part, i % 2, 2, f))
    older = dict(mf.MANIFEST_ENTRY_SCHEMA)
    file_schema = dict(older["fields"][5]["type"])
    file_schema["fields"] = file_schema["fields"][:-2]
    older["fields"] = [*older["fields"][:5], {**older["fields"][5], "type": file_schema}]
    for schema, fast in ((mf.MANIFEST_ENTRY_SCHEMA, True), (older, False)):
        s = fastavro.parse_schema(schema)
        file_type = s["fields"][5]["type"]
        plan = bf._plan(file_type)
        assert plan is not None and (plan.skip_tail is bf._skip_tail) == fast and plan.skip_middle is bf._skip_middle
        written = entries if fast else [mf.ManifestEntry(e.kind, e.partition, e.bucket, e.total_buckets, _older(e.file))
                                        for e in entries]
        rows = bf.Rows()
        used.clear()
        rows.take("m", len(written), _records(written, s), file_type, {}, lambda p: True, {0, 1}, None)
        rows.finish()
        assert used == ([] if reader == "fields" else ["entries" if fast else "decoder"])
        assert rows.names == [e.file.file_name for e in written]
        assert rows.kinds == [e.kind for e in written] and rows.buckets == [e.bucket for e in written]
        assert rows.sizes == [e.file.file_size for e in written]
        assert rows.levels == [e.file.level for e in written]
        assert rows.min_seqs == [e.file.min_sequence_number for e in written]
        assert rows.max_seqs == [e.file.max_sequence_number for e in written]
        assert [rows.tail(i) for i in range(len(written))] == [
            (tuple(e.file.extra_files or ()), e.file.embedded_index, e.file.external_path) for e in written]
        # only bucket 1 kept: the others skipped whole, in step
        rows = bf.Rows()
        rows.take("m", len(written), _records(written, s), file_type, {}, lambda p: True, {1}, None)
        rows.finish()
        assert rows.names == [e.file.file_name for e in written if e.bucket == 1]
        assert [rows.tail(i) for i in range(len(rows.names))] == [
            (tuple(e.file.extra_files or ()), e.file.embedded_index, e.file.external_path)
            for e in written if e.bucket == 1]


@pytest.mark.parametrize("reader", ["fields", "compiled"])
def test_a_block_that_is_not_entries_is_corrupt(monkeypatch, reader):
    """A block whose bytes end early, or that holds fewer entries than its count, is a ``CorruptMetadataError``
    naming the manifest, whichever reader reads it."""
    _readers(monkeypatch, reader)
    part = encode_row([3], [LongType()])
    entries = [mf.ManifestEntry(mf.ADD, part, 0, 1, _meta(f"f-{i}", 10 * i)) for i in range(4)]
    s = fastavro.parse_schema(mf.MANIFEST_ENTRY_SCHEMA)
    file_type = s["fields"][5]["type"]
    good = _records(entries, s).getvalue()
    for data, count in ((good[:-3], 4), (good, 5)):
        rows = bf.Rows()
        rows.take("the-manifest", count, io.BytesIO(data), file_type, {}, lambda p: True, None, None)
        with pytest.raises(CorruptMetadataError, match="the-manifest"):
            rows.finish()


def _older(f):
    from dataclasses import replace
    return replace(f, write_cols=None, write_cols_sequences=None)



@pytest.mark.parametrize("compiled", [False, True])
def test_the_compiled_reader_reads_what_the_field_reader_reads(paimon_catalog, monkeypatch, compiled):
    """A bucket of 600 files is restored by the compiled entry reader (``entry_kernel``, loaded for a
    read of 512+ entries): the same columns as field by field, and the same merge of a DELETE
    whose identifier holds an external path."""
    from icefloe.paimon.commit_changes import DeleteFiles, PaimonCommit

    if not compiled:
        monkeypatch.setattr(bf, "_entry_kernel", lambda records: None)      # read field by field
    t = _metadata_table(paimon_catalog, buckets=2)
    commit = FileStoreCommit(t.store, t.commit_user)
    metas = {(p, b): [_meta(f"data-{p}-{b}-{i}.parquet", 10_000 * b + 10 * i, level=5 - i % 2) for i in range(600)]
             for p in (0, 1) for b in (0, 1)}
    metas[(0, 1)][7].external_path = "/elsewhere/data-0-1-7.parquet"
    commit.commit([CommitMessage((p,), b, 2, files) for (p, b), files in metas.items()])
    latest = t.store.snapshots.latest()
    key01 = (encode_row([0], t.store.partition_types).data, 1)
    gone = [e for e in t.store.bucket_entries(latest, [key01]) if e.file.file_name == "data-0-1-7.parquet"]
    commit.apply(PaimonCommit("APPEND", (DeleteFiles(tuple(gone)),)))
    latest = t.store.snapshots.latest()
    full = _full(t.store, latest)
    assert len(full[key01]) == 599
    used = []
    real = bf.Rows._take_compiled
    monkeypatch.setattr(bf.Rows, "_take_compiled", lambda self, *a: used.append(real(self, *a)) or used[-1])
    for key in full:
        got = paimon_catalog.load_table(NAME).store.bucket_files(latest, [key])
        assert _cols(got[key]) == full[key]
    assert used == ([True] * len(used) if compiled else []) and bool(used) == compiled


def test_blocks_holding_several_partitions_are_judged_by_their_ranges(paimon_catalog):
    """Partitions too small for a block of their own share blocks (their statistics a range of
    partitions): a bucket read after the manifest's layout is known finds every file of each."""
    t = _metadata_table(paimon_catalog)
    messages = [CommitMessage((p,), 0, 1, [_meta(f"data-{p}-{i}.parquet", 100 * p + 10 * i) for i in range(p % 7 + 1)])
                for p in range(60)]
    FileStoreCommit(t.store, t.commit_user).commit(messages)
    latest = t.store.snapshots.latest()
    (m,) = t.store.data_manifests(latest)
    full = _full(t.store, latest)
    first = paimon_catalog.load_table(NAME).store       # its read keeps the manifest's layout
    key0 = (encode_row([0], first.partition_types).data, 0)
    assert _cols(first.bucket_files(latest, [key0])[key0]) == full[key0]
    path = first.manifest_path(m.file_name)
    groups = mf.layout_statistics(path, m.file_size)
    assert groups and any(g.min_values.data != g.max_values.data for g in groups), "no block holds several partitions"
    for key, files in full.items():
        got = paimon_catalog.load_table(NAME).store.bucket_files(latest, [key])
        assert _cols(got[key]) == files
