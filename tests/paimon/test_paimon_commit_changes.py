"""A Paimon commit as typed changes plus requirements (``paimon/commit_changes.py``), applied by the
one commit path ``FileStoreCommit.apply``: a requirement that fails leaves the table exactly as it was;
the changes resolve on the snapshot the commit follows; pypaimon reads what was committed."""
import os

import pyarrow as pa
import pytest

from icefloe.errors import BatchAlreadyCommitted, CommitConflictError, NotSupportedError
from icefloe.paimon.commit import FileStoreCommit
from icefloe.paimon.commit_changes import (
    DeleteFiles, FilesLive, NotCommitted, OverwritePartitions, PaimonCommit, SequenceAfter,
    VectorsUnchanged, message_changes, sequence_firsts,
)
from icefloe.paimon.snapshot import APPEND, COMPACT, OVERWRITE
from tests.paimon.test_paimon_interop import pypaimon_read

SCHEMA = "id bigint not null, name string, p int"


def rows(start, n, p=None):
    ids = range(start, start + n)
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "p": pa.array([p if p is not None else i % 2 for i in ids], pa.int32())})


def state(t):
    """Everything a commit writes: snapshot files and hints, manifests, data files."""
    out = set()
    for d, _, files in os.walk(t.location):
        out.update(os.path.relpath(os.path.join(d, f), t.location) for f in files)
    return out


def ids_of(table):
    return sorted(table.column("id").to_pylist())


def test_a_failing_requirement_leaves_the_table_as_it_was(paimon_catalog):
    t = paimon_catalog.create_table("db.r", SCHEMA, partitioned_by=["p"])
    t.append(rows(0, 4))
    gone = t.plan()[0]                  # live now, deleted by the overwrite below
    t.overwrite(rows(10, 2))
    before, latest = state(t), t.current_snapshot().id
    new = t.write(rows(20, 2))
    adds, own = message_changes(new, t.store.partition_types)
    commit = PaimonCommit(OVERWRITE, (DeleteFiles((gone,)), *adds),
                          (FilesLive((gone,), "rewrite of db.r", 1), *own))
    with pytest.raises(CommitConflictError, match=f"data file {gone.file.file_name} it rewrites is no longer live"):
        FileStoreCommit(t.store).apply(commit)
    t.abort(new)
    assert state(t) == before           # no manifest, list or snapshot of the attempt is left
    assert t.current_snapshot().id == latest and ids_of(t.to_arrow()) == [10, 11]


def test_each_requirement_is_checked_on_the_latest_snapshot(paimon_catalog):
    t = paimon_catalog.create_table("db.k", SCHEMA, properties={"primary-key": "id", "bucket": "1"})
    t.append(rows(0, 3))
    entry = t.plan()[0]
    key = (entry.partition.to_bytes(), entry.bucket)
    refused = [
        (SequenceAfter({(entry.partition.data, entry.bucket): entry.file.max_sequence_number}, "db.k"),
         CommitConflictError, "got records numbered up to"),
        (NotCommitted(t.commit_user, 0), BatchAlreadyCommitted, "is a replay"),
        (VectorsUnchanged({key: "index-that-never-was"}, "compaction of db.k", 1), CommitConflictError,
         "deletion vectors of a bucket it compacts changed"),
    ]
    FileStoreCommit(t.store, t.commit_user, 0).commit(t.write(rows(5, 1)))     # batch 0 of this user
    before = state(t)
    for requirement, error, message in refused:
        with pytest.raises(error, match=message):
            FileStoreCommit(t.store, t.commit_user).apply(PaimonCommit(APPEND, (), (requirement,)))
        assert state(t) == before, requirement
    # the same requirements hold where nothing conflicts: the commit goes through
    ok = SequenceAfter({(entry.partition.data, entry.bucket): 10**9}, "db.k")
    snap = FileStoreCommit(t.store, t.commit_user, 1).apply(
        PaimonCommit(APPEND, (), (ok, NotCommitted(t.commit_user, 1))))
    assert snap.commit_identifier == 1 and snap.id == t.refresh().current_snapshot().id


def test_changes_resolve_in_order_and_pypaimon_reads_the_result(paimon_catalog, pypaimon_catalog):
    t = paimon_catalog.create_table("db.o", SCHEMA, partitioned_by=["p"])
    t.append(rows(0, 6))
    p0 = [e for e in t.plan() if t.store.partition_values(e.partition) == (0,)]
    added = t.write(rows(100, 2, p=1))
    adds, own = message_changes(added, t.store.partition_types)
    # one snapshot: partition 0 dropped by the overwrite, partition 1 gains two rows
    snap = FileStoreCommit(t.store).apply(PaimonCommit(
        OVERWRITE, (OverwritePartitions(lambda values: values == (0,)), *adds), (FilesLive(tuple(p0), "x", 1), *own)))
    assert snap.commit_kind == OVERWRITE and snap.delta_record_count == 2 - 3
    assert ids_of(t.refresh().to_arrow()) == [1, 3, 5, 100, 101]
    assert ids_of(pypaimon_read(pypaimon_catalog, "db.o")) == [1, 3, 5, 100, 101]
    # deleting files that are gone already: with only_live they are skipped, not an error
    snap = FileStoreCommit(t.store).apply(PaimonCommit(COMPACT, (DeleteFiles(tuple(p0), only_live=True),)))
    assert snap.delta_record_count == 0 and ids_of(pypaimon_read(pypaimon_catalog, "db.o")) == [1, 3, 5, 100, 101]


def test_the_same_file_written_twice_is_refused_before_anything_is_written(paimon_catalog):
    from icefloe.paimon.manifest import DuplicateFileError

    t = paimon_catalog.create_table("db.d", SCHEMA)
    t.append(rows(0, 2))
    messages = t.write(rows(5, 1))
    before = state(t)
    with pytest.raises(DuplicateFileError):
        t.commit(messages * 2)
    assert {p for p in state(t) if "data-" not in p} == {p for p in before if "data-" not in p}
    assert ids_of(t.to_arrow()) == [0, 1]


def test_sequence_firsts_are_the_lowest_per_bucket(paimon_catalog):
    t = paimon_catalog.create_table("db.s", SCHEMA, properties={"primary-key": "id", "bucket": "2"})
    t.append(rows(0, 4))
    messages = t.write(rows(10, 6))
    firsts = {bucket: first for (_part, bucket), first in sequence_firsts(messages, t.store.partition_types).items()}
    assert firsts == {m.bucket: min(f.min_sequence_number for f in m.new_files) for m in messages}
    assert all(first > 0 for first in firsts.values())      # numbered after the first append's records
    t.abort(messages)


def test_a_paimon_table_refuses_a_transaction_and_says_why(paimon_catalog):
    t = paimon_catalog.create_table("db.t", SCHEMA)
    with pytest.raises(NotSupportedError, match="transaction .*one commit kind.*schema/schema-N"):
        t.transaction()
