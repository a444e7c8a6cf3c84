"""A row-level change's result (``RowChanges``): typed attributes, and the dict access of earlier
releases kept for one release with a ``DeprecationWarning``; and the ``staged_files`` cleanup."""
import pytest

from icefloe.core.io import FileIO, staged_files
from icefloe.core.reports import RowChanges


def test_row_changes_read_by_attribute_and_as_a_deprecated_dict():
    r = RowChanges(updated=1, deleted=2, inserted=3, snapshot_id=9)
    assert (r.updated, r.deleted, r.inserted, r.snapshot_id) == (1, 2, 3, 9)
    assert r == RowChanges.of({"updated": 1, "deleted": 2, "inserted": 3}, 9)
    with pytest.warns(DeprecationWarning, match="result.deleted"):
        assert r["deleted"] == 2
    with pytest.warns(DeprecationWarning):
        assert dict(r) == {"updated": 1, "deleted": 2, "inserted": 3, "snapshot_id": 9}
    with pytest.warns(DeprecationWarning):
        assert r == {"updated": 1, "deleted": 2, "inserted": 3, "snapshot_id": 9}
    with pytest.warns(DeprecationWarning), pytest.raises(KeyError):
        r["rows"]  # noqa: B018
    assert RowChanges() == RowChanges(0, 0, 0, None) and RowChanges() != RowChanges(deleted=1)


def test_staged_files_deletes_what_was_written_when_the_block_fails(tmp_path):
    io = FileIO()
    kept, lost = tmp_path / "kept", tmp_path / "lost"
    with staged_files(io, path=str) as added:
        kept.write_text("x")
        added.append(str(kept))
    assert kept.exists()                        # a block that completes keeps its files
    with pytest.raises(RuntimeError, match="task failed"):
        with staged_files(io, path=str) as added:
            lost.write_text("x")
            added.append(str(lost))
            raise RuntimeError("task failed")
    assert not lost.exists()
