"""Results of table maintenance, the same for both formats."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ExpireReport:
    """What snapshot expiry did: the snapshots expired, refs removed, files deleted."""
    expired_snapshot_ids: list = field(default_factory=list)
    removed_refs: list = field(default_factory=list)
    deleted_data_files: list = field(default_factory=list)
    deleted_delete_files: list = field(default_factory=list)
    deleted_manifests: list = field(default_factory=list)
    deleted_manifest_lists: list = field(default_factory=list)
    errors: list = field(default_factory=list)

    @property
    def deleted_files(self) -> list:
        return (self.deleted_data_files + self.deleted_delete_files + self.deleted_manifests
                + self.deleted_manifest_lists)

    def counts(self) -> dict:
        return {"expired_snapshots": len(self.expired_snapshot_ids), "removed_refs": len(self.removed_refs),
                "deleted_data_files": len(self.deleted_data_files),
                "deleted_delete_files": len(self.deleted_delete_files),
                "deleted_manifests": len(self.deleted_manifests),
                "deleted_manifest_lists": len(self.deleted_manifest_lists)}
