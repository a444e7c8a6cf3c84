"""A position delete file whose rows all name one data file is read for its positions alone (the
driver's read of a scan's deletes, ``delete_files.positions_by_data_file``): its ``file_path``
strings, most of its bytes once decoded, are never read; a file naming several data files is read
whole and split by them, as before."""
from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from icefloe.core.io import FileIO
from icefloe.core.types import PRIMITIVES_BY_NAME, NestedField, Schema
from icefloe.errors import CorruptDataFileError
from icefloe.iceberg import delete_files
from icefloe.iceberg.partitioning import PartitionSpec

SCHEMA = Schema([NestedField(1, "id", PRIMITIVES_BY_NAME["long"], False)])
A, B = "file:/wh/t/data/a.parquet", "file:/wh/t/data/b.parquet"


def _deletes(tmp_path, rows, referenced=None):
    io = FileIO()
    [f] = delete_files.write_position_deletes(io, str(tmp_path), SCHEMA, PartitionSpec([], 0), {(): rows})
    f.referenced_data_file = referenced
    return io, f


def test_a_file_naming_one_data_file_is_read_for_its_positions_alone(tmp_path, monkeypatch):
    io, scoped = _deletes(tmp_path, [(A, 7), (A, 3), (A, 90)], referenced=A)

    def whole(*_a):
        raise AssertionError("a delete file naming one data file was read whole")

    monkeypatch.setattr(delete_files, "_read_position_file", whole)
    got = delete_files.positions_by_data_file(io, {A: [scoped]})
    assert sorted(got[A].tolist()) == [3, 7, 90] and got[A].dtype == np.int64
    # the bounds alone pin the data file too (a writer that sets no referenced_data_file)
    io, bounded = _deletes(tmp_path / "b", [(A, 5), (A, 1)])
    assert delete_files.names_only(bounded, A) and not delete_files.names_only(bounded, B)
    assert sorted(delete_files.positions_by_data_file(io, {A: [bounded]})[A].tolist()) == [1, 5]
    # and only the pos column is asked of the Parquet reader
    asked = []
    real = pq.ParquetFile.read
    monkeypatch.setattr(pq.ParquetFile, "read", lambda self, columns=None, **kw: asked.append(columns) or
                        real(self, columns=columns, **kw))
    delete_files.positions_by_data_file(io, {A: [bounded]})
    assert asked == [["pos"]]


def test_a_file_naming_several_data_files_is_split_by_them(tmp_path):
    io, shared = _deletes(tmp_path, [(A, 4), (B, 2), (A, 1), (B, 9)])
    assert not delete_files.names_only(shared, A)
    got = delete_files.positions_by_data_file(io, {A: [shared], B: [shared]})
    assert sorted(got[A].tolist()) == [1, 4] and sorted(got[B].tolist()) == [2, 9]


def test_a_missing_scoped_file_is_named(tmp_path):
    io, scoped = _deletes(tmp_path, [(A, 1)], referenced=A)
    io.delete(scoped.file_path)
    with pytest.raises(CorruptDataFileError, match="missing"):
        delete_files.positions_by_data_file(io, {A: [scoped]})
