# pyright: strict
"""The row-level change snapshot: data and delete files added, data files removed (spec
"Snapshots", "Row-level Deletes"; Java's ``RowDelta``).

DELETE, UPDATE and MERGE (``spark.iceberg_dml``) and equality deletes by key
commit through it. Copy-on-write replaces whole data files; merge-on-read adds
position deletes pointing at rows of live files, and new data files for updated
or inserted rows; a file all of whose rows go is removed in both modes. The
operation is ``overwrite`` when data files are added, else ``delete``.

What the change must check against commits made since its read snapshot is the
``Validation`` it carries (see ``validate``): its scope, isolation level, the
files it removes or points at and their partitions.
"""
from __future__ import annotations

from typing import Iterable, Optional

from icefloe.iceberg.manifest import DATA, DataFile
from icefloe.iceberg.snapshot import DELETE, OVERWRITE
from icefloe.iceberg.snapshot_producer import FileChangeProducer
from icefloe.iceberg.validate import Validation


class RowDelta(FileChangeProducer):
    """Add data and delete files and remove data (or delete) files ``removed_paths`` in one snapshot."""

    def __init__(self, added: Iterable[DataFile] = (), removed_paths: Iterable[str] = (),
                 validation: Optional[Validation] = None, summary_extra: Optional[dict[str, str]] = None):
        super().__init__(added, removed_paths, validation=validation, summary_extra=summary_extra)

    @property
    def operation(self) -> str:  # pyright: ignore[reportIncompatibleVariableOverride] - a class attribute elsewhere, derived here
        return OVERWRITE if any(f.content == DATA for f in self.added) else DELETE
