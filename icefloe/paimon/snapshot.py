# pyright: strict
"""Snapshots (the Paimon spec's "Snapshot"): ``<table>/snapshot/snapshot-N`` JSON files and the hint files.

Every commit writes ``snapshot-<latest + 1>``; ids start at 1 and are
continuous. ``EARLIEST`` and ``LATEST`` hold the first and last id but are only
hints: they may be stale, missing or garbage, and then the snapshot directory
is listed. A snapshot becomes visible the moment its file exists, so it is
written with create-if-absent: of two committers racing for one id, one wins
and the other retries on the new latest.

Snapshot JSON version 3 holds every field the spec lists (``logOffsets``,
``changelogManifestList``, ``indexManifest``, ``statistics`` included, as ``{}``
or null), plus the manifest list sizes Paimon 1.x writes and ``nextRowId`` (row tracking: the
first row id the next commit gives out; Paimon carries it in every snapshot once set).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from icefloe.core.io import FileAlreadyExistsError, FileIO
from icefloe.errors import CorruptMetadataError, NoSuchSnapshotError

CURRENT_VERSION = 3
BATCH_COMMIT_IDENTIFIER = 2**63 - 1   # Long.MAX_VALUE: a batch (non-streaming) commit
NO_WATERMARK = -(2**63)               # Long.MIN_VALUE
EARLIEST = "EARLIEST"
LATEST = "LATEST"
SNAPSHOT_PREFIX = "snapshot-"
_SNAPSHOT_RE = re.compile(r"^snapshot-(\d+)$")

APPEND = "APPEND"
COMPACT = "COMPACT"
OVERWRITE = "OVERWRITE"
ANALYZE = "ANALYZE"


@dataclass
class Snapshot:
    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    commit_user: str
    commit_identifier: int
    commit_kind: str
    time_millis: int
    total_record_count: int
    delta_record_count: int
    changelog_manifest_list: Optional[str] = None
    index_manifest: Optional[str] = None
    log_offsets: dict[str, Any] = field(default_factory=dict[str, Any])
    changelog_record_count: Optional[int] = 0
    watermark: Optional[int] = NO_WATERMARK
    statistics: Optional[str] = None
    base_manifest_list_size: Optional[int] = None
    delta_manifest_list_size: Optional[int] = None
    changelog_manifest_list_size: Optional[int] = None
    properties: Optional[dict[str, str]] = None
    version: int = CURRENT_VERSION
    next_row_id: Optional[int] = None      # row tracking: the first row id the next commit gives out

    # The attribute names the format-independent table API (CLI, SQL) reads from a
    # snapshot. Paimon's history is linear: the parent of N is N - 1.
    @property
    def snapshot_id(self) -> int:
        return self.id

    @property
    def timestamp_ms(self) -> int:
        return self.time_millis

    @property
    def operation(self) -> str:
        return self.commit_kind.lower()

    @property
    def parent_snapshot_id(self) -> Optional[int]:
        return self.id - 1 if self.id > 1 else None

    @property
    def sequence_number(self) -> int:
        return self.id

    @property
    def summary(self) -> dict[str, str]:
        return {"total-records": str(self.total_record_count),
                "delta-records": str(self.delta_record_count),
                "commit-kind": self.commit_kind}

    def to_json(self) -> str:
        doc: dict[str, Any] = {
            "version": self.version,
            "id": self.id,
            "schemaId": self.schema_id,
            "baseManifestList": self.base_manifest_list,
            "baseManifestListSize": self.base_manifest_list_size,
            "deltaManifestList": self.delta_manifest_list,
            "deltaManifestListSize": self.delta_manifest_list_size,
            "changelogManifestList": self.changelog_manifest_list,
            "indexManifest": self.index_manifest,
            "commitUser": self.commit_user,
            "commitIdentifier": self.commit_identifier,
            "commitKind": self.commit_kind,
            "timeMillis": self.time_millis,
            "logOffsets": dict(self.log_offsets),
            "totalRecordCount": self.total_record_count,
            "deltaRecordCount": self.delta_record_count,
            "changelogRecordCount": self.changelog_record_count,
            "watermark": self.watermark,
            "statistics": self.statistics,
        }
        if self.changelog_manifest_list_size is not None:
            doc["changelogManifestListSize"] = self.changelog_manifest_list_size
        if self.properties:
            doc["properties"] = dict(self.properties)
        if self.next_row_id is not None:
            doc["nextRowId"] = self.next_row_id
        for k in ("baseManifestListSize", "deltaManifestListSize"):
            if doc[k] is None:
                del doc[k]
        return json.dumps(doc, indent=2, separators=(",", " : "), ensure_ascii=False)

    @staticmethod
    def from_json(text: str, path: str = "<snapshot>") -> "Snapshot":
        try:
            d = json.loads(text)
            snap = Snapshot(
                id=int(d["id"]), schema_id=int(d["schemaId"]),
                base_manifest_list=d["baseManifestList"], delta_manifest_list=d["deltaManifestList"],
                commit_user=d.get("commitUser", ""), commit_identifier=int(d.get("commitIdentifier", 0)),
                commit_kind=str(d.get("commitKind", APPEND)), time_millis=int(d["timeMillis"]),
                total_record_count=int(d.get("totalRecordCount") or 0),
                delta_record_count=int(d.get("deltaRecordCount") or 0),
                changelog_manifest_list=d.get("changelogManifestList"),
                index_manifest=d.get("indexManifest"),
                log_offsets=dict(d.get("logOffsets") or {}),
                changelog_record_count=d.get("changelogRecordCount"),
                watermark=d.get("watermark"), statistics=d.get("statistics"),
                base_manifest_list_size=d.get("baseManifestListSize"),
                delta_manifest_list_size=d.get("deltaManifestListSize"),
                changelog_manifest_list_size=d.get("changelogManifestListSize"),
                properties=d.get("properties"), version=int(d.get("version", 1)),
                next_row_id=int(d["nextRowId"]) if d.get("nextRowId") is not None else None,
            )
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise CorruptMetadataError(path, f"not a Paimon snapshot: {type(e).__name__}: {e}") from None
        # the file names as the JSON gave them (any JSON value), not yet known to be strings
        for key in ("baseManifestList", "deltaManifestList"):
            value = d[key]
            if not isinstance(value, str) or not value:
                raise CorruptMetadataError(path, f"not a Paimon snapshot: {key} is {value!r}, not a file name")
        return snap


def has_watermark(snapshot: Snapshot) -> bool:
    """Whether a snapshot carries a watermark (null and Long.MIN_VALUE both mean none: batch commits)."""
    return snapshot.watermark is not None and snapshot.watermark != NO_WATERMARK


def later_or_equal_watermark(snapshots: list[Snapshot], watermark: int) -> Optional[Snapshot]:
    """The snapshot Paimon's time travel to a watermark reads (``VERSION AS OF 'watermark-N'``,
    ``scan.watermark``): the first snapshot, by id, whose watermark is at or after ``watermark``;
    snapshots without one are passed over. None when there is none."""
    later = [s for s in snapshots if has_watermark(s) and int(s.watermark or 0) >= watermark]
    return min(later, key=lambda s: s.id) if later else None


class SnapshotManager:
    """Finds, reads and writes the snapshots of one table directory."""

    def __init__(self, io: FileIO, table_path: str):
        self.io = io
        self.table_path = table_path.rstrip("/")
        self.snapshot_dir = f"{self.table_path}/snapshot"

    def snapshot_path(self, snapshot_id: int) -> str:
        return f"{self.snapshot_dir}/{SNAPSHOT_PREFIX}{snapshot_id}"

    # ------------------------------------------------------------------ ids
    def _listed_ids(self) -> list[int]:
        ids: list[int] = []
        for name in self.io.list_dir(self.snapshot_dir):
            m = _SNAPSHOT_RE.match(name)
            if m:
                ids.append(int(m.group(1)))
        return sorted(ids)

    def ids(self) -> list[int]:
        """The ids of the snapshot files, ascending."""
        return self._listed_ids()

    def read_hint(self, name: str) -> Optional[int]:
        """The id in hint file ``name`` (EARLIEST or LATEST), None if missing or garbage."""
        try:
            text = self.io.read_bytes(f"{self.snapshot_dir}/{name}").decode("utf-8").strip()
            v = int(text)
            return v if v > 0 else None
        except (FileNotFoundError, UnicodeDecodeError, ValueError, IsADirectoryError):
            return None

    def _exists(self, snapshot_id: int) -> bool:
        return self.io.exists(self.snapshot_path(snapshot_id))

    def latest_id(self) -> Optional[int]:
        """The LATEST hint if it names an existing snapshot with no successor; else list."""
        hint = self.read_hint(LATEST)
        if hint is not None and self._exists(hint) and not self._exists(hint + 1):
            return hint
        ids = self._listed_ids()
        return ids[-1] if ids else None

    def earliest_id(self) -> Optional[int]:
        """The EARLIEST hint if it names an existing snapshot with no predecessor; else list."""
        hint = self.read_hint(EARLIEST)
        if hint is not None and self._exists(hint) and (hint == 1 or not self._exists(hint - 1)):
            return hint
        ids = self._listed_ids()
        return ids[0] if ids else None

    # ------------------------------------------------------------------ reads
    def snapshot(self, snapshot_id: int) -> Snapshot:
        path = self.snapshot_path(snapshot_id)
        try:
            data = self.io.read_bytes(path)
        except FileNotFoundError:
            raise NoSuchSnapshotError(f"snapshot {snapshot_id} does not exist in {self.snapshot_dir}") from None
        try:
            snap = Snapshot.from_json(data.decode("utf-8"), path)
        except UnicodeDecodeError:
            raise CorruptMetadataError(path, "snapshot file is not UTF-8 JSON") from None
        if snap.id != snapshot_id:
            raise CorruptMetadataError(path, f"snapshot file holds id {snap.id}, expected {snapshot_id}")
        return snap

    def latest(self) -> Optional[Snapshot]:
        sid = self.latest_id()
        return self.snapshot(sid) if sid is not None else None

    def snapshots(self) -> list[Snapshot]:
        """Every snapshot from the earliest to the latest, in id order."""
        return list(self.iter_snapshots())

    def iter_snapshots(self) -> Iterator[Snapshot]:
        ids = self._listed_ids()
        for sid in ids:
            yield self.snapshot(sid)

    def as_of(self, time_millis: int) -> Snapshot:
        """The latest snapshot committed at or before ``time_millis``."""
        best = None
        for s in self.iter_snapshots():
            if s.time_millis <= time_millis:
                best = s
            else:
                break
        if best is None:
            raise NoSuchSnapshotError(f"no snapshot at or before {time_millis} in {self.snapshot_dir}")
        return best

    # ------------------------------------------------------------------ writes
    def try_commit(self, snapshot: Snapshot) -> bool:
        """Make ``snapshot`` visible atomically; False if its id is already taken."""
        try:
            self.io.write_bytes(self.snapshot_path(snapshot.id), snapshot.to_json().encode("utf-8"),
                                overwrite=False)
            return True
        except FileAlreadyExistsError:
            return False

    def commit_latest_hint(self, snapshot_id: int) -> None:
        self.io.write_hint(f"{self.snapshot_dir}/{LATEST}", str(snapshot_id).encode())

    def commit_earliest_hint(self, snapshot_id: int) -> None:
        self.io.write_hint(f"{self.snapshot_dir}/{EARLIEST}", str(snapshot_id).encode())

    def delete_snapshot(self, snapshot_id: int) -> None:
        self.io.delete(self.snapshot_path(snapshot_id))
