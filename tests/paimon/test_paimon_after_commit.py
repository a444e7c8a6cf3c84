"""A failure after a Paimon snapshot became visible (what keeps another view of the table in step,
``paimon/table_hooks.py``) never deletes the committed files: the caller sees ``AfterCommitError``
and the table reads every committed row, through the table API and through a Spark write."""
import os

import pyarrow as pa
import pytest

from icefloe.errors import AfterCommitError
from icefloe.paimon import table_hooks


def _failing(store):
    raise OSError("the view's metadata could not be written")


def _data_files(t):
    return {f for d, _, files in os.walk(t.location) for f in files if f.endswith(".parquet")}


def test_a_hook_failure_after_the_commit_keeps_the_committed_files(paimon_catalog, monkeypatch):
    t = paimon_catalog.create_table("db.after", "id bigint not null, v string")
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"]}))
    monkeypatch.setattr(table_hooks, "_HOOKS", [_failing])
    with pytest.raises(AfterCommitError, match="snapshot 2 of .* is committed.*could not be written"):
        t.append(pa.table({"id": pa.array([3], pa.int64()), "v": ["c"]}))
    monkeypatch.setattr(table_hooks, "_HOOKS", [])
    t.refresh()
    assert t.current_snapshot().id == 2
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert {e.file.file_name for e in t.plan()} <= _data_files(t)


def test_abort_of_committed_messages_deletes_nothing(paimon_catalog):
    t = paimon_catalog.create_table("db.aborted", "id bigint not null, v string")
    messages = t.write(pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]}))
    t.commit(messages)
    before = _data_files(t)
    t.abort(messages)                   # e.g. Spark aborting a write whose commit raised after the snapshot
    assert _data_files(t) == before
    assert t.to_arrow().column("id").to_pylist() == [1]
