# pyright: strict
"""Tags and branches, the table contract's refs: part of ``Table`` (``icefloe.table.base``), kept here
as a base class of it. A format without an operation refuses it with ``Table.unsupported``."""
from __future__ import annotations

from typing import Any, Optional

from icefloe.errors import NotSupportedError


class RefOperations:
    """Create, move and drop a table's tags and branches."""

    def unsupported(self, operation: str, reason: str = "") -> NotSupportedError:
        """The error for an operation the table's format does not offer (``Table`` defines it)."""
        raise NotImplementedError  # pragma: no cover - overridden by Table

    def create_tag(self, name: str, snapshot_id: Optional[int] = None, max_ref_age_ms: Optional[int] = None) -> Any:
        """Name a snapshot.

        Args:
            name: The tag's name.
            snapshot_id: The snapshot (the current one by default).
            max_ref_age_ms: How long the tag is kept (Iceberg).
        """
        raise self.unsupported("create_tag")

    def replace_tag(self, name: str, snapshot_id: Optional[int] = None, max_ref_age_ms: Optional[int] = None) -> Any:
        """Point an existing tag at another snapshot.

        Args:
            name: The tag's name.
            snapshot_id: The snapshot (the current one by default).
            max_ref_age_ms: How long the tag is kept (Iceberg).
        """
        raise self.unsupported("replace_tag")

    def drop_tag(self, name: str) -> Any:
        """Remove a tag (the snapshot stays until expired).

        Args:
            name: The tag's name.
        """
        raise self.unsupported("drop_tag")

    def create_branch(self, name: str, snapshot_id: Optional[int] = None, min_snapshots_to_keep: Optional[int] = None,
                      max_snapshot_age_ms: Optional[int] = None, max_ref_age_ms: Optional[int] = None) -> Any:
        """Create a branch (Iceberg).

        Args:
            name: The branch's name.
            snapshot_id: Its first snapshot (the current one by default).
            min_snapshots_to_keep: Snapshots expiry keeps on the branch.
            max_snapshot_age_ms: Age past which expiry may remove the branch's snapshots.
            max_ref_age_ms: Age past which the branch itself may be removed.
        """
        raise self.unsupported("create_branch")

    def replace_branch(self, name: str, snapshot_id: Optional[int], min_snapshots_to_keep: Optional[int] = None,
                       max_snapshot_age_ms: Optional[int] = None, max_ref_age_ms: Optional[int] = None) -> Any:
        """Point a branch at another snapshot (Iceberg).

        Args:
            name: The branch's name.
            snapshot_id: The snapshot.
            min_snapshots_to_keep: Snapshots expiry keeps on the branch.
            max_snapshot_age_ms: Age past which expiry may remove the branch's snapshots.
            max_ref_age_ms: Age past which the branch itself may be removed.
        """
        raise self.unsupported("replace_branch")

    def rename_branch(self, name: str, new_name: str) -> Any:
        """Rename a branch (Iceberg).

        Args:
            name: The branch's name.
            new_name: Its new name.
        """
        raise self.unsupported("rename_branch")

    def drop_branch(self, name: str) -> Any:
        """Remove a branch (Iceberg).

        Args:
            name: The branch's name.
        """
        raise self.unsupported("drop_branch")

    def fast_forward(self, branch: str, source: str) -> Any:
        """Move a branch to the head of another when it is that one's ancestor (Iceberg).

        Args:
            branch: The branch to move.
            source: The branch whose head it moves to.
        """
        raise self.unsupported("fast_forward")
