# pyright: strict
"""The ``overwrite`` snapshot: data files replaced (spec "Snapshots", operation ``overwrite``).

Three kinds, as Java's ``OverwriteFiles`` / ``ReplacePartitions``:

* ``replace_all``: every live file removed (a full overwrite); nothing to
  validate, the new contents replace whatever is there at commit time;
* ``by_filter``: the files matching a row filter, planned on a read snapshot,
  removed; a concurrent commit that removed one of them, added a delete file
  for their partitions or added a data file that may match the filter conflicts
  (serializable, as Java's default for overwrites);
* ``replace_partitions``: the live files of the partitions the new files fall
  in removed (dynamic partition overwrite); a concurrent commit that touched
  those partitions conflicts.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional

from icefloe.iceberg.manifest import DataFile
from icefloe.iceberg.snapshot import DELETE, OVERWRITE
from icefloe.iceberg.snapshot_producer import FileChangeProducer
from icefloe.iceberg.validate import SERIALIZABLE, Validation


class Overwrite(FileChangeProducer):
    """Add ``added`` and remove ``removed_paths`` (or every live file) in one ``overwrite`` snapshot."""

    operation = OVERWRITE

    @classmethod
    def replace_all(cls, added: Iterable[DataFile], summary_extra: Optional[dict[str, str]] = None) -> "Overwrite":
        return cls(added, remove_all=True, summary_extra=summary_extra)

    @classmethod
    def by_filter(cls, added: Iterable[DataFile], removed_paths: Iterable[str], read_snapshot_id: Optional[int],
                  row_filter: object, description: str, summary_extra: Optional[dict[str, str]] = None) -> "Overwrite":
        """Replace the files matching ``row_filter`` (Spark SQL text or an expression) as planned
        on ``read_snapshot_id``; ``description`` names the statement in conflict messages."""
        removed = set(removed_paths)
        validation = Validation(read_snapshot_id=read_snapshot_id, isolation=SERIALIZABLE, operation=description,
                                conflict_filter=row_filter, protected_files=set(removed))
        return cls(added, removed, validation=validation, summary_extra=summary_extra)

    @classmethod
    def replace_partitions(cls, added: Iterable[DataFile], removed_paths: Iterable[str],
                           read_snapshot_id: Optional[int], partitions: set[tuple[int, tuple[Any, ...]]], description: str,
                           summary_extra: Optional[dict[str, str]] = None) -> "Overwrite":
        """Replace the live files of ``partitions`` ({(spec id, partition)}: those of the new files),
        as planned on ``read_snapshot_id``."""
        removed = set(removed_paths)
        validation = Validation(read_snapshot_id=read_snapshot_id, isolation=SERIALIZABLE, operation=description,
                                scope_partitions=partitions, protected_files=set(removed),
                                protected_partitions=partitions)
        return cls(added, removed, validation=validation, summary_extra=summary_extra)


class DeleteAll(FileChangeProducer):
    """Every live file (data and delete files) removed, nothing added: the ``delete`` snapshot
    of ``TRUNCATE TABLE``, which reads no file."""

    operation = DELETE

    def __init__(self, summary_extra: Optional[dict[str, str]] = None):
        super().__init__((), remove_all=True, summary_extra=summary_extra)
