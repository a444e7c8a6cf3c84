"""A primary-key commit reads the buckets it writes, not the table: its restored sequence numbers,
its checks, the stop-trigger wait and the compaction after it read only the manifests whose
partition statistics and bucket range admit the buckets the commit messages name."""
import pyarrow as pa

import icefloe
from icefloe.paimon import kv_compact
from icefloe.paimon.file_store import FileStore

PARTS = 24


def _rows(p, ids, tag):
    return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array([p] * len(ids), pa.int32()),
                     "v": [f"{tag}{i}" for i in ids]})


def _table(tmp_path):
    t = icefloe.Catalog(str(tmp_path / "wh"), format="paimon").create_table(
        "db.t", "id bigint not null, p int not null, v string", partitioned_by=["p"],
        properties={"primary-key": "id,p", "bucket": "4", "num-sorted-run.compaction-trigger": "2",
                    "manifest.merge-min-count": "1000"})
    for p in range(PARTS):                 # one commit per partition: a delta manifest each
        t.append(_rows(p, list(range(8)), "a"))
    return t


def _counting(monkeypatch):
    """The manifest files read (by name) from now on, cached or not."""
    read: list[str] = []
    real, real_buckets = FileStore.read_manifest, FileStore._read_buckets

    def counted(self, name, *a, **k):
        read.append(name)
        return real(self, name, *a, **k)

    def counted_buckets(self, m, *a, **k):     # a commit's pruned read of the buckets it writes
        read.append(m.file_name)
        return real_buckets(self, m, *a, **k)
    monkeypatch.setattr(FileStore, "read_manifest", counted)
    monkeypatch.setattr(FileStore, "_read_buckets", counted_buckets)
    return read


def test_a_commit_and_its_compaction_read_only_the_written_buckets_manifests(tmp_path, monkeypatch):
    t = _table(tmp_path)
    t.append(_rows(5, [1, 2], "b"))       # a second run in two buckets of partition 5
    before = t.current_snapshot().id
    manifests = len(t.store.data_manifests(t.current_snapshot()))
    assert manifests >= PARTS
    read = _counting(monkeypatch)
    t.append(_rows(5, [1, 2, 100], "c"))  # a third run there: compaction after the commit
    kinds = [s.commit_kind for s in t.snapshots() if s.id > before]
    assert kinds == ["APPEND", "COMPACT"], kinds
    # partition 5's manifests (its first write, the second, this commit's own), never every one
    assert 0 < len(set(read)) <= 4, (len(set(read)), manifests)
    monkeypatch.undo()
    got = t.refresh().to_arrow().to_pydict()
    rows = {(i, p): v for i, p, v in zip(got["id"], got["p"], got["v"])}
    assert len(rows) == PARTS * 8 + 1
    assert rows[(1, 5)] == "c1" and rows[(2, 5)] == "c2" and rows[(100, 5)] == "c100" and rows[(3, 5)] == "a3"
    assert rows[(1, 4)] == "a1"
    # the compacted buckets hold one run each again, the others were left alone
    runs = {}
    for e in t.plan():
        runs.setdefault((e.partition.to_bytes(), e.bucket), []).append(e)
    assert all(len(kv_compact.sorted_runs(es)) == 1 for es in runs.values())


def test_the_sequence_numbers_of_a_write_follow_its_buckets(tmp_path, monkeypatch):
    """The write restores the sequence numbers of the buckets it writes only: numbered from 0
    again, the new record of key 3 would lose to the old one (numbered 3) in the merge."""
    t = _table(tmp_path)
    read = _counting(monkeypatch)
    t.append(_rows(7, [3], "d"))
    assert 0 < len(set(read)) <= 3
    monkeypatch.undo()
    got = t.refresh().to_arrow().to_pydict()
    rows = {(i, p): v for i, p, v in zip(got["id"], got["p"], got["v"])}
    assert rows[(3, 7)] == "d3" and rows[(4, 7)] == "a4" and len(rows) == PARTS * 8
