# pyright: strict
"""The ``append`` snapshot: data files added, none removed (spec "Snapshots", operation ``append``).

Nothing is validated: an append only adds files, so it commits on top of
whatever another writer committed meanwhile. An append of no files is an empty
snapshot (how a branch starts on a table without snapshots).
"""
from __future__ import annotations

from typing import Iterable, Optional

from icefloe.iceberg.manifest import DataFile
from icefloe.iceberg.snapshot import APPEND
from icefloe.iceberg.snapshot_producer import FileChangeProducer


class Append(FileChangeProducer):
    """Add ``files`` (data files written by the caller) in one ``append`` snapshot."""

    operation = APPEND

    def __init__(self, files: Iterable[DataFile] = (), summary_extra: Optional[dict[str, str]] = None):
        super().__init__(files, summary_extra=summary_extra)
