"""A primary-key write and its commit read only the manifest blocks of the buckets they write: the
merged manifests group a partition's entries by bucket and index each block's bucket range. What
they skip must not change what they decide: each bucket's restored sequence number, live files and
compaction pick equal those of a full read, a write numbers its records after its bucket's highest
number, a concurrent write to the same bucket is a conflict, and a table object that keeps its store
across refreshes sees another writer's commits."""
import pyarrow as pa
import pytest

from icefloe.core.types import LongType
from icefloe.errors import CommitConflictError, CorruptMetadataError
from icefloe.paimon import kv_compact
from icefloe.paimon import manifest as mf
from icefloe.paimon.binary_row import encode_row
from icefloe.paimon.commit import FileStoreCommit
from icefloe.paimon.data_file import CommitMessage, DataFileMeta
from icefloe.paimon.writer import restored_sequence_numbers

NAME = "db.pk"
PARTS, BUCKETS, PER_BUCKET = 3, 4, 40


def _table(cat):
    """PARTS x BUCKETS buckets of PER_BUCKET files each (metadata only), one sorted run at the top
    level per bucket, each bucket's sequence numbers its own: committed together, so that the
    table's one manifest holds more than a block of every bucket."""
    t = cat.create_table(NAME, "id bigint not null, p int not null, v string", partitioned_by=["p"],
                         properties={"primary-key": "id,p", "bucket": str(BUCKETS)})
    messages = []
    for p in range(PARTS):
        for b in range(BUCKETS):
            files = []
            for i in range(PER_BUCKET):
                lo = ((p * BUCKETS + b) * PER_BUCKET + i) * 10
                seq = 1000 * (p * BUCKETS + b) + 7 * i
                files.append(DataFileMeta(
                    file_name=f"data-{p}-{b}-{i}.parquet", file_size=1000 + i, row_count=10,
                    min_key=encode_row([lo], [LongType()]), max_key=encode_row([lo + 9], [LongType()]),
                    min_sequence_number=seq, max_sequence_number=seq + 5, level=5))
            messages.append(CommitMessage((p,), b, BUCKETS, files))
    FileStoreCommit(t.store, t.commit_user).commit(messages)
    return cat.load_table(NAME)


def _key(store, p, b):
    return encode_row([p], store.partition_types).data, b


def test_a_bucket_read_decodes_its_blocks_only_and_equals_a_full_read(paimon_catalog, monkeypatch):
    t = _table(paimon_catalog)
    store = t.store
    latest = store.snapshots.latest()
    full = store.live_entries(latest)
    full_seq = restored_sequence_numbers(store)
    decoded = []
    real = mf._avro_record

    def counting(*a):
        decoded.append(1)
        return real(*a)

    monkeypatch.setattr(mf, "_avro_record", counting)
    for p in range(PARTS):
        for b in range(BUCKETS):
            key = _key(store, p, b)
            fresh = paimon_catalog.load_table(NAME).store
            decoded.clear()
            got = fresh.bucket_entries(latest, [key])
            assert len(decoded) == PER_BUCKET, "the blocks of other buckets were decoded"
            assert sorted(e.file.file_name for e in got) == sorted(
                e.file.file_name for e in full if (e.partition.data, e.bucket) == key)
            assert restored_sequence_numbers(fresh, [key]) == {key: full_seq[key]}
            assert full_seq[key] == 1000 * (p * BUCKETS + b) + 7 * (PER_BUCKET - 1) + 5
            # the compaction pick of the bucket is the one a full read makes
            def names(runs):
                return [(level, sorted(e.file.file_name for e in run)) for level, run in runs]
            assert names(kv_compact.sorted_runs(got)) == names(kv_compact.sorted_runs(
                [e for e in full if (e.partition.data, e.bucket) == key]))


def test_a_write_numbers_after_its_bucket_and_a_concurrent_one_conflicts(paimon_catalog):
    t = _table(paimon_catalog)
    row = pa.table({"id": pa.array([10**9], pa.int64()), "p": pa.array([1], pa.int32()), "v": ["a"]})
    messages = t.write(row)
    (m,) = messages
    key = _key(t.store, 1, m.bucket)
    before = restored_sequence_numbers(t.store)[key]
    assert m.new_files[0].min_sequence_number == before + 1
    other = paimon_catalog.load_table(NAME)
    other.append(row.set_column(2, "v", pa.array(["b"])))       # same key, same bucket, committed first
    with pytest.raises(CommitConflictError, match="numbered"):
        t.commit(messages)
    # the same table object, its store kept across refreshes, numbers its next write after the other's
    t.append(row.set_column(2, "v", pa.array(["c"])))
    seqs = sorted(e.file.max_sequence_number for e in t.store.live_entries(t.store.snapshots.latest())
                  if (e.partition.data, e.bucket) == key)
    assert seqs[-2:] == [before + 1, before + 2]


def test_a_manifest_read_again_in_the_process_reads_only_its_kept_blocks(paimon_catalog, monkeypatch):
    """Once a manifest's layout is known, a commit's read of a bucket reads the byte ranges of that
    bucket's blocks, not the file; a file cut short since is corrupt, not silently fewer entries."""
    t = _table(paimon_catalog)
    latest = t.store.snapshots.latest()
    key = _key(t.store, 2, 3)
    first = sorted(e.file.file_name for e in paimon_catalog.load_table(NAME).store.bucket_entries(latest, [key]))
    (m,) = t.store.data_manifests(latest)
    path = t.store.manifest_path(m.file_name)
    store = paimon_catalog.load_table(NAME).store
    whole, ranges = [], []
    real_read, real_open = store.io.read_bytes, store.io.open_read

    def read_bytes(p):
        whole.append(p)
        return real_read(p)

    def open_read(p):
        f = real_open(p)
        real_f_read = f.read

        def read(n=-1):
            ranges.append(n)
            return real_f_read(n)
        f.read = read
        return f
    monkeypatch.setattr(store.io, "read_bytes", read_bytes)
    monkeypatch.setattr(store.io, "open_read", open_read)
    again = sorted(e.file.file_name for e in store.bucket_entries(latest, [key]))
    assert again == first and len(first) == PER_BUCKET
    assert path not in whole and ranges and sum(ranges) < m.file_size / 4
    monkeypatch.undo()
    with open(path, "r+b") as f:
        f.truncate(m.file_size - 100)
    with pytest.raises(CorruptMetadataError, match="truncated"):
        paimon_catalog.load_table(NAME).store.bucket_entries(latest, [_key(t.store, 2, 3)])


def test_a_manifest_without_an_index_gets_one_from_its_first_read(paimon_catalog, monkeypatch):
    """Another writer's manifest (here: its index ignored) is read whole once; what each block holds
    is kept, and the next read of a bucket decodes that bucket's blocks only, with the same entries."""
    from icefloe.paimon import manifest_blocks as mb

    t = _table(paimon_catalog)
    latest = t.store.snapshots.latest()
    full = t.store.live_entries(latest)
    with monkeypatch.context() as m:
        m.setattr(mb, "block_index", lambda metadata: None)
        m.setattr(mf, "_LAYOUTS", {})
        key = _key(t.store, 0, 0)
        first = paimon_catalog.load_table(NAME).store.bucket_entries(latest, [key])
        decoded = []
        real = mf._avro_record

        def counting(*a):
            decoded.append(1)
            return real(*a)
        m.setattr(mf, "_avro_record", counting)
        for p in range(PARTS):
            for b in range(BUCKETS):
                key = _key(t.store, p, b)
                decoded.clear()
                got = paimon_catalog.load_table(NAME).store.bucket_entries(latest, [key])
                assert len(decoded) == PER_BUCKET
                assert sorted(e.file.file_name for e in got) == sorted(
                    e.file.file_name for e in full if (e.partition.data, e.bucket) == key)
    assert len(first) == PER_BUCKET
