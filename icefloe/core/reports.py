"""Results of table maintenance and checks, the same for both formats."""
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


# --------------------------------------------------------------------------- check
@dataclass
class Problem:
    kind: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.path}: {self.message}"


@dataclass
class Report:
    table: str
    location: str
    problems: list = field(default_factory=list)
    checked: dict = field(default_factory=dict)     # what was looked at: counts per kind

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, kind: str, path: str, message: str) -> None:
        self.problems.append(Problem(kind, path, message))

    def count(self, kind: str, n: int = 1) -> None:
        self.checked[kind] = self.checked.get(kind, 0) + n

    def to_json(self) -> dict:
        return {"table": self.table, "location": self.location, "ok": self.ok, "checked": self.checked,
                "problems": [{"kind": p.kind, "path": p.path, "message": p.message} for p in self.problems]}
