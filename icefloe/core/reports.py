"""Results of row-level changes, table maintenance and checks, the same for both formats."""
from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, cast


@dataclass
class ExpireReport:
    """What snapshot expiry did: the snapshots expired, refs removed, files deleted."""
    expired_snapshot_ids: list[int] = field(default_factory=list[int])
    removed_refs: list[str] = field(default_factory=list[str])
    deleted_data_files: list[str] = field(default_factory=list[str])
    deleted_delete_files: list[str] = field(default_factory=list[str])
    deleted_manifests: list[str] = field(default_factory=list[str])
    deleted_manifest_lists: list[str] = field(default_factory=list[str])
    errors: list[str] = field(default_factory=list[str])
    #: whether the deleted_* lists name every file the expiry deleted (False: only the snapshots are reported)
    files_reported: bool = True

    @property
    def deleted_files(self) -> list[str]:
        return (self.deleted_data_files + self.deleted_delete_files + self.deleted_manifests
                + self.deleted_manifest_lists)

    def counts(self) -> dict[str, int]:
        return {"expired_snapshots": len(self.expired_snapshot_ids), "removed_refs": len(self.removed_refs),
                "deleted_data_files": len(self.deleted_data_files),
                "deleted_delete_files": len(self.deleted_delete_files),
                "deleted_manifests": len(self.deleted_manifests),
                "deleted_manifest_lists": len(self.deleted_manifest_lists)}


_CHANGE_KEYS = ("updated", "deleted", "inserted", "snapshot_id")


@dataclass(frozen=True, eq=False)
class RowChanges(Mapping[str, Optional[int]]):
    """What a DELETE, UPDATE, MERGE or ``overwrite(where=...)`` changed: the rows updated, deleted
    and inserted, and the id of the snapshot committed (None: nothing changed, nothing committed).

    Read it by attribute (``result.deleted``). Reading it as a dict (``result["deleted"]``), as
    earlier releases returned, still works for one release and warns (``DeprecationWarning``)."""
    updated: int = 0
    deleted: int = 0
    inserted: int = 0
    snapshot_id: Optional[int] = None

    @classmethod
    def of(cls, counts: Mapping[str, int], snapshot_id: Optional[int] = None) -> "RowChanges":
        """The changes of a statement whose ``counts`` are ``{"updated", "deleted", "inserted"}``."""
        return cls(int(counts.get("updated", 0)), int(counts.get("deleted", 0)), int(counts.get("inserted", 0)),
                   snapshot_id)

    def __getitem__(self, key: str) -> Optional[int]:
        warnings.warn("reading a DML result as a dict is deprecated: use its attributes (result.deleted, "
                      "result.snapshot_id)", DeprecationWarning, stacklevel=2)
        if key not in _CHANGE_KEYS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_CHANGE_KEYS)

    def __len__(self) -> int:
        return len(_CHANGE_KEYS)

    def __eq__(self, other: object) -> bool:
        mine = tuple(getattr(self, k) for k in _CHANGE_KEYS)
        if isinstance(other, RowChanges):
            return mine == tuple(getattr(other, k) for k in _CHANGE_KEYS)
        if isinstance(other, Mapping):          # compared with an earlier release's dict result
            warnings.warn("comparing a DML result with a dict is deprecated: compare its attributes",
                          DeprecationWarning, stacklevel=2)
            return dict(zip(_CHANGE_KEYS, mine)) == dict(cast("Mapping[object, object]", other))
        return NotImplemented

    __hash__ = None     # type: ignore[assignment]  # equal to dicts, so not hashable


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
    problems: list[Problem] = field(default_factory=list[Problem])
    checked: dict[str, int] = field(default_factory=dict[str, int])     # what was looked at: counts per kind

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, kind: str, path: str, message: str) -> None:
        self.problems.append(Problem(kind, path, message))

    def count(self, kind: str, n: int = 1) -> None:
        self.checked[kind] = self.checked.get(kind, 0) + n

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "location": self.location, "ok": self.ok, "checked": self.checked,
                "problems": [{"kind": p.kind, "path": p.path, "message": p.message} for p in self.problems]}
