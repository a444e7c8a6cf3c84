# pyright: strict
"""A Paimon table's plans over its one planning call (``FileStoreTable.iter_plan``).

``iter_plan`` yields a plan's entries as they are made (``scan.iter_plan``); ``plan`` is their list
and ``plan_files`` the list of their files, which holds no entry per file: a plan of every file of
a table of a million files keeps a million ``DataFileMeta`` and no more.
"""
from __future__ import annotations

from typing import Any, Iterator, Optional

from icefloe.core.timetravel import AsOf
from icefloe.paimon import manifest as mf
from icefloe.paimon.data_file import DataFileMeta


class PlannedReads:
    """``plan`` and ``plan_files`` of a table that defines ``iter_plan``."""

    def iter_plan(self, where: Any = None, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                  ref: Optional[str] = None, tag: Optional[str] = None) -> Iterator[mf.ManifestEntry]:
        raise NotImplementedError

    def plan(self, where: Any = None, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
             ref: Optional[str] = None, tag: Optional[str] = None) -> list[mf.ManifestEntry]:
        """Manifest entries (ADD) of the files a read would use, paths filled in. ``where``
        is bound to the read schema (the snapshot's when time travelling)."""
        return list(self.iter_plan(where, snapshot_id, as_of, ref, tag))

    def plan_files(self, where: Any = None, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                   ref: Optional[str] = None, tag: Optional[str] = None) -> list[DataFileMeta]:
        """DataFileMetas of the files a read would use (``file_path`` filled in)."""
        return [e.file for e in self.iter_plan(where, snapshot_id, as_of, ref, tag)]


__all__ = ["PlannedReads"]
