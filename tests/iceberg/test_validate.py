"""Conflict validation (``icefloe.iceberg.validate``): one test per check, each through a producer's
commit on top of a concurrent commit, so removing the check from the commit path fails its test.

Files are described, not written: validation and manifests only read the metadata of data and
delete files, so each test commits ``DataFile`` records for paths that hold nothing.
"""
from __future__ import annotations

import pytest

import icefloe
from icefloe.errors import CommitConflictError
from icefloe.iceberg.append import Append
from icefloe.iceberg.manifest import DATA, EQUALITY_DELETES, POSITION_DELETES, DataFile
from icefloe.iceberg.overwrite import Overwrite
from icefloe.iceberg.rewrite import RewriteFiles
from icefloe.iceberg.row_delta import RowDelta
from icefloe.iceberg.validate import (
    SERIALIZABLE, SNAPSHOT, Validation, isolation_level, validate_read_snapshot_is_ancestor,
)


@pytest.fixture
def table(tmp_path):
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    return cat.create_table("db.t", "id bigint not null, p int not null", partitioned_by=["p"])


def _file(t, name: str, p, content: int = DATA, spec_id: int = 0) -> DataFile:
    return DataFile(file_path=f"{t.location}/data/{name}.parquet", file_format="PARQUET",
                    partition=() if p is None else (p,), record_count=10, file_size_in_bytes=100,
                    content=content, equality_ids=[1] if content == EQUALITY_DELETES else None, spec_id=spec_id)


def _head(t):
    return t.refresh().current_snapshot()


def _row_delta_of(t, read, victim: DataFile, isolation=SERIALIZABLE, **extra) -> RowDelta:
    """A copy-on-write DELETE planned on ``read`` that rewrites ``victim``'s partition."""
    part = {(victim.spec_id, victim.partition)}
    v = Validation(read_snapshot_id=read.snapshot_id, isolation=isolation, operation="DELETE",
                   scope_partitions=part, protected_files={victim.file_path}, protected_partitions=part, **extra)
    return RowDelta([_file(t, "rewritten", victim.partition[0])], {victim.file_path}, v)


def test_read_snapshot_must_be_an_ancestor(table):
    a = _file(table, "a", 1)
    Append([a]).commit(table.ops)
    s1 = _head(table)
    Append([_file(table, "b", 2)]).commit(table.ops)
    s2 = _head(table)
    table.rollback_to_snapshot(s1.snapshot_id)
    with pytest.raises(CommitConflictError, match="no longer an ancestor"):
        _row_delta_of(table, s2, a).commit(table.ops)
    # the check itself: the snapshots since the read one, newest first
    meta = table.refresh().metadata
    assert validate_read_snapshot_is_ancestor(meta, s2.snapshot_id, s1.snapshot_id) == [s2]
    assert validate_read_snapshot_is_ancestor(meta, s1.snapshot_id, s1.snapshot_id) == []


def test_removed_files_must_still_be_live(table):
    a = _file(table, "a", 1)
    Append([a, _file(table, "b", 1)]).commit(table.ops)
    RowDelta(removed_paths={a.file_path}).commit(table.ops)        # another writer removed it first
    head = _head(table)
    with pytest.raises(CommitConflictError, match="no longer live"):
        RowDelta(removed_paths={a.file_path}).commit(table.ops)
    assert _head(table).snapshot_id == head.snapshot_id


def test_referenced_files_must_not_be_removed(table):
    """Position deletes pointing at a data file another writer removed would delete nothing."""
    a = _file(table, "a", 1)
    Append([a, _file(table, "b", 2)]).commit(table.ops)
    read = _head(table)
    RowDelta(removed_paths={a.file_path}).commit(table.ops)
    part = {(0, (1,))}
    v = Validation(read_snapshot_id=read.snapshot_id, isolation=SNAPSHOT, operation="DELETE",
                   protected_files={a.file_path}, protected_partitions=part, referenced_files={a.file_path})
    with pytest.raises(CommitConflictError, match="removed data file"):
        RowDelta([_file(table, "pos", 1, POSITION_DELETES)], validation=v).commit(table.ops)


@pytest.mark.parametrize("isolation, concurrent_partition, conflicts", [
    (SERIALIZABLE, 1, True),     # a new row in our scope we should have seen
    (SERIALIZABLE, 2, False),    # outside the scope: commits on top of it
    (SNAPSHOT, 1, False),        # snapshot isolation allows it
])
def test_no_conflicting_data(table, isolation, concurrent_partition, conflicts):
    a = _file(table, "a", 1)
    Append([a]).commit(table.ops)
    read = _head(table)
    Append([_file(table, "new", concurrent_partition)]).commit(table.ops)
    change = _row_delta_of(table, read, a, isolation=isolation)
    if conflicts:
        with pytest.raises(CommitConflictError, match="added data file .*new.parquet"):
            change.commit(table.ops)
    else:
        change.commit(table.ops)
        assert _head(table).operation == "overwrite"


@pytest.mark.parametrize("concurrent_partition, conflicts", [(1, True), (2, False)])
def test_no_conflicting_data_by_row_filter(table, concurrent_partition, conflicts):
    """An overwrite by filter judges a concurrent data file by the filter projected on its partition."""
    a = _file(table, "a", 1)
    Append([a]).commit(table.ops)
    read = _head(table)
    Append([_file(table, "new", concurrent_partition)]).commit(table.ops)
    change = Overwrite.by_filter([_file(table, "a2", 1)], {a.file_path}, read.snapshot_id, "p = 1",
                                 "INSERT OVERWRITE ... PARTITION")
    if conflicts:
        with pytest.raises(CommitConflictError, match="INSERT OVERWRITE .* added data file"):
            change.commit(table.ops)
    else:
        change.commit(table.ops)


def test_replace_partitions_conflicts_with_data_added_to_them(table):
    a = _file(table, "a", 1)
    Append([a]).commit(table.ops)
    read = _head(table)
    Append([_file(table, "new", 1)]).commit(table.ops)
    change = Overwrite.replace_partitions([_file(table, "a2", 1)], {a.file_path}, read.snapshot_id, {(0, (1,))},
                                          "INSERT OVERWRITE (dynamic partition overwrite)")
    with pytest.raises(CommitConflictError, match="dynamic partition overwrite"):
        change.commit(table.ops)


@pytest.mark.parametrize("concurrent_partition, conflicts", [(1, True), (2, False)])
def test_no_conflicting_deletes(table, concurrent_partition, conflicts):
    """A compaction (snapshot isolation) conflicts only with delete files for the partitions it rewrote."""
    a, b = _file(table, "a", 1), _file(table, "b", 1)
    Append([a, b]).commit(table.ops)
    read = _head(table)
    RowDelta([_file(table, "pos", concurrent_partition, POSITION_DELETES)]).commit(table.ops)
    change = RewriteFiles(read, [a, b], [_file(table, "ab", 1)])
    if conflicts:
        with pytest.raises(CommitConflictError, match="added delete file .*pos.parquet"):
            change.commit(table.ops)
    else:
        change.commit(table.ops)
        assert _head(table).operation == "replace"


def test_unpartitioned_equality_deletes_conflict_everywhere(tmp_path):
    """An equality delete of an unpartitioned spec applies to every partition (spec "Scan Planning")."""
    cat = icefloe.Catalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", "id bigint not null, p int not null")
    with t.update_spec() as u:
        u.add_field("p")
    spec_id = t.refresh().metadata.default_spec_id
    a = _file(t, "a", 1, spec_id=spec_id)
    Append([a]).commit(t.ops)
    read = _head(t)
    RowDelta([_file(t, "eq", None, EQUALITY_DELETES, spec_id=0)]).commit(t.ops)
    with pytest.raises(CommitConflictError, match="added delete file .*eq.parquet"):
        RewriteFiles(read, [a], [_file(t, "a2", 1, spec_id=spec_id)]).commit(t.ops)


def test_isolation_level_from_properties():
    assert isolation_level({}, "delete") == SERIALIZABLE
    assert isolation_level({"write.merge.isolation-level": "snapshot"}, "merge") == SNAPSHOT
    assert isolation_level({"write.merge.isolation-level": "snapshot"}, "merge", "serializable") == SERIALIZABLE
    with pytest.raises(ValueError):
        isolation_level({}, "update", "read-committed")
