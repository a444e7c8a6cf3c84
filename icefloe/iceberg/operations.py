# pyright: strict
"""One table's operations, whatever keeps its current metadata: the ``TableOperations`` protocol,
a commit as typed updates and requirements, and the retried commit every producer goes through.

A commit is a :class:`Changes`: the spec's ``TableUpdate`` objects (``metadata_builder``) and the
``TableRequirement`` objects (``table_requirements``) that must still hold of the metadata the
updates apply to. :func:`apply_commit` checks the requirements and applies the updates with the one
validating builder; the REST server applies incoming commits with it too. A catalog implements
``commit_changes``:

- the Hadoop / object-store and SQL catalogs apply the changes here and write the result as the
  next version by compare-and-swap (create-if-absent of ``vN.metadata.json``, or an ``UPDATE ...
  WHERE metadata_location = <read>``): their ``commit(base_version, base, new)``;
- the REST catalog sends the changes as they were produced and the server applies them;
- :class:`InMemoryTableOperations` keeps the versions in a list (tests, and a model of the
  contract: every implementation passes the same tests).

:func:`commit_with_retry` runs a producer (a function of the latest metadata to ``Changes``) and
commits what it produced; a lost race (``VersionConflict``, which a failed requirement is too)
re-runs the producer on the metadata the winner wrote, as the spec's "Commit Conflict Resolution
and Retry" asks. Files an attempt wrote (``Changes.written``) are deleted when it fails.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Protocol, runtime_checkable

from icefloe.core.io import FileIO
from icefloe.core.retry import RetryPolicy
from icefloe.errors import NoSuchTableError, VersionConflict
from icefloe.iceberg.metadata_builder import AddSnapshot, TableUpdate, apply_changes
from icefloe.iceberg.table_metadata import TableMetadata, with_metadata_log
from icefloe.iceberg.table_requirements import TableRequirement, check_requirements


@dataclass
class Changes:
    """One commit's updates and the requirements they rely on; ``written``: files the producer
    wrote for it (manifests, manifest lists), deleted should the commit fail."""
    updates: list[TableUpdate] = field(default_factory=list[TableUpdate])
    requirements: list[TableRequirement] = field(default_factory=list[TableRequirement])
    written: list[str] = field(default_factory=list[str])

    def __bool__(self) -> bool:
        return bool(self.updates)

    def extend(self, other: "Changes", staged: Optional[TableMetadata] = None,
               base: Optional[TableMetadata] = None) -> None:
        """Add ``other`` (produced on ``staged``, the metadata with this commit's earlier updates) to
        this commit, whose requirements are about ``base``: a requirement already made is kept as
        it is, and one about what an earlier update of this commit changed is dropped (that update's
        producer required what it changed)."""
        self.updates += list(other.updates)
        self.written += list(other.written)
        have = {_requirement_key(r) for r in self.requirements}
        for r in other.requirements:
            if _requirement_key(r) in have:
                continue
            if base is not None and staged is not base:
                try:
                    r.check(base)
                except VersionConflict:
                    continue
            self.requirements.append(r)
            have.add(_requirement_key(r))


def _requirement_key(r: TableRequirement) -> tuple[str, Any]:
    return (r.type, getattr(r, "ref", None))


@dataclass
class Committed:
    """What a commit wrote: its version number and the metadata of that version."""
    version: int
    metadata: TableMetadata


@runtime_checkable
class TableOperations(Protocol):
    """What the table, its producers and the maintenance operations need of a catalog, for one table."""

    io: FileIO
    location: str          # the table's directory (its metadata says where its data goes)
    metadata_dir: str      # where new manifests, manifest lists and metadata versions are written

    def exists(self) -> bool: ...

    def load(self, version: Optional[int] = None) -> tuple[int, TableMetadata]:
        """The latest (or the given) version and its metadata; ``NoSuchTableError`` if none."""
        ...

    def current(self) -> TableMetadata:
        """The latest metadata (``load()[1]``)."""
        ...

    def metadata_path(self, version: int) -> str: ...

    def commit(self, base_version: Optional[int], base: Optional[TableMetadata], new: TableMetadata) -> int:
        """Write a whole document as the version after ``base_version`` (create a table with
        ``base=None``); ``VersionConflict`` when another writer got there first."""
        ...

    def commit_changes(self, base_version: int, base: TableMetadata, changes: Changes) -> Committed:
        """Apply ``changes`` to ``base`` (version ``base_version``) and make the result current;
        ``VersionConflict`` when the table moved on or a requirement fails, ``BadUpdate`` when an
        update breaks a rule."""
        ...


def apply_commit(base: TableMetadata, changes: Changes) -> TableMetadata:
    """``base`` with the changes' requirements checked and updates applied (the one builder)."""
    check_requirements(base, changes.requirements)
    return apply_changes(base, changes.updates)


class SwapCommits:
    """``commit_changes`` for the operations that write metadata files and swap a pointer: apply
    here, then ``commit`` the result as the next version."""

    last_written: Optional[TableMetadata] = None     # what ``commit`` wrote last (its metadata log added)
    # the locations of the catalog's other tables, set by the catalog (``locations.check_table_alone``)
    other_table_locations: Optional[Callable[[], list[str]]] = None

    if TYPE_CHECKING:    # what the implementations define (the TableOperations protocol's)
        io: FileIO
        location: str

        def load(self, version: Optional[int] = None) -> tuple[int, TableMetadata]: ...

        def commit(self, base_version: Optional[int], base: Optional[TableMetadata],
                   new: TableMetadata) -> int: ...

    def commit_changes(self, base_version: int, base: TableMetadata, changes: Changes) -> Committed:
        new = apply_commit(base, changes)
        version = self.commit(base_version, base, new)
        written = self.last_written if self.last_written is not None else self.load(version)[1]
        delete_dropped_metadata(self.io, base, written, self.location)
        return Committed(version, written)

    def current(self) -> TableMetadata:
        return self.load()[1]


class InMemoryTableOperations(SwapCommits):
    """A table whose metadata versions live in this object (its files still go through ``io``
    under ``location``): the smallest implementation of the protocol."""

    def __init__(self, io: FileIO, location: str):
        self.io = io
        self.location = location.rstrip("/")
        self.metadata_dir = f"{self.location}/metadata"
        self._versions: list[TableMetadata] = []

    def exists(self) -> bool:
        return bool(self._versions)

    def load(self, version: Optional[int] = None) -> tuple[int, TableMetadata]:
        if not self._versions:
            raise NoSuchTableError(f"no table at {self.location} (nothing committed)")
        v = len(self._versions) if version is None else version
        if not 1 <= v <= len(self._versions):
            raise NoSuchTableError(f"table {self.location} has no version {v}")
        return v, self._versions[v - 1]

    def metadata_path(self, version: int) -> str:
        return f"memory:{self.location}#v{version}"

    def commit(self, base_version: Optional[int], base: Optional[TableMetadata], new: TableMetadata) -> int:
        if (base_version or 0) != len(self._versions):
            raise VersionConflict(f"version {(base_version or 0) + 1} of {self.location} was committed by another "
                                  "writer")
        if base is not None and base_version is not None:
            new = with_metadata_log(new, self.metadata_path(base_version), base.last_updated_ms,
                                    int(new.properties.get("write.metadata.previous-versions-max", "100")))
        self._versions.append(copy.deepcopy(new))
        self.last_written = new
        return len(self._versions)


DELETE_AFTER_COMMIT = "write.metadata.delete-after-commit.enabled"


def delete_dropped_metadata(io: FileIO, base: TableMetadata, new: TableMetadata, location: str) -> list[str]:
    """After a commit of ``new`` on ``base``: where ``new``'s ``write.metadata.delete-after-commit.enabled``
    is true, the metadata files ``base``'s metadata log lists and ``new``'s no longer does (those
    ``write.metadata.previous-versions-max`` let go) deleted, as Iceberg's catalogs delete them. Only
    files inside the table's ``location``; a delete that fails is left (the commit stands, a later
    ``remove_orphan_files`` finds the file). The files deleted."""
    if str(new.properties.get(DELETE_AFTER_COMMIT, "false")).strip().lower() != "true":
        return []
    from icefloe.iceberg.locations import inside_any, normalize

    kept = {e.get("metadata-file") for e in new.metadata_log}
    root = [normalize(location)]
    deleted: list[str] = []
    for entry in base.metadata_log:
        path = entry.get("metadata-file")
        if not isinstance(path, str) or path in kept or inside_any(path, root) is None:
            continue
        try:
            io.delete(path)
        except Exception:       # noqa: BLE001 -- the commit stands; the file is an orphan now
            continue
        deleted.append(path)
    return deleted


# --------------------------------------------------------------------------- the retried commit
Producer = Callable[[TableMetadata, int], Optional[Changes]]


@dataclass
class CommitOutcome:
    """A retried commit's result: the base its last attempt read, what it wrote (None when the
    producer had nothing to change) and the changes it committed."""
    base: TableMetadata
    committed: Optional[Committed]
    changes: Optional[Changes] = None

    @property
    def new(self) -> TableMetadata:
        return self.committed.metadata if self.committed is not None else self.base

    @property
    def changed(self) -> bool:
        return self.committed is not None


def commit_with_retry(ops: TableOperations, produce: Producer, policy: Optional[RetryPolicy] = None) -> CommitOutcome:
    """Produce ``Changes`` on the latest metadata and commit them, re-producing on the newer
    metadata after a lost race (see the module doc). ``produce(base, attempt)`` returns None or
    empty changes for "nothing to do"."""

    first = ops.load()

    def attempt(n: int) -> CommitOutcome:
        version, base = first if n == 1 else ops.load()     # the first attempt reuses the read below
        changes: Optional[Changes] = None
        try:
            changes = produce(base, n)
            if not changes or _no_change(base, changes):
                _delete(ops.io, changes.written if changes else [])
                return CommitOutcome(base, None, changes)
            return CommitOutcome(base, ops.commit_changes(version, base, changes), changes)
        except BaseException:
            _delete(ops.io, changes.written if changes else [])
            raise

    if policy is None:
        policy = RetryPolicy.from_iceberg_properties(first[1].properties)
    return policy.run(attempt, retry_on=(VersionConflict,))


def _no_change(base: TableMetadata, changes: Changes) -> bool:
    """The changes leave the metadata as it was (no version is written then, as in Java); a new
    snapshot always changes it."""
    if any(isinstance(u, AddSnapshot) for u in changes.updates):
        return False
    a, b = apply_commit(base, changes).to_json(), base.to_json()
    a.pop("last-updated-ms", None)
    b.pop("last-updated-ms", None)
    return a == b


def _delete(io: FileIO, paths: Iterable[str]) -> None:
    for p in paths:
        try:
            io.delete(p)
        except OSError:
            pass

