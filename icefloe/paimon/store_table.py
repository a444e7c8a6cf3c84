# pyright: strict
"""What maintenance procedures read of a Paimon table (``table.FileStoreTable``, which calls them).

Compaction, manifest rewrites, rollbacks and file index rewrites are functions over a table that
``FileStoreTable`` exposes as methods; they name this protocol rather than the class, which imports
them.
"""
from __future__ import annotations

from typing import Any, Optional, Protocol

from icefloe.core.timetravel import AsOf
from icefloe.paimon import manifest as mf
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.schema import TableSchema
from icefloe.paimon.snapshot import Snapshot


class StoreTable(Protocol):
    """A Paimon table (or branch) over its file store."""

    @property
    def name(self) -> str: ...
    @property
    def commit_user(self) -> str: ...
    @property
    def store(self) -> FileStore: ...
    @property
    def table_schema(self) -> TableSchema: ...

    def refresh(self) -> object:
        """Read the latest schema again (a commit may have changed it)."""
        ...

    def check_writable(self) -> None: ...
    def current_snapshot(self) -> Optional[Snapshot]: ...
    def schema_by_id(self, schema_id: int) -> TableSchema: ...

    def plan(self, where: Any = None, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
             ref: Optional[str] = None, tag: Optional[str] = None) -> list[mf.ManifestEntry]: ...


__all__ = ["StoreTable"]
