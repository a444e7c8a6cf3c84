# pyright: strict
"""Transactions: several changes of one table committed as ONE new metadata version, and several
tables committed all-or-nothing.

``with table.transaction() as tx:`` (pyiceberg's shape) stages schema, partition, sort order and
property changes, branch and tag changes, and snapshots (``append``, ``commit_files``) in order:
each is produced at once on the metadata as the earlier ones left it (``tx.staged``), so an
append after ``add_column`` writes and commits under the new schema. Leaving the block commits
everything as one commit: the updates in order, with the requirements the first read made. An
exception inside the block commits nothing (and deletes the manifests and the data files staged
for it). When another writer committed in between, every staged change is produced again on the
newer metadata and committed then, as a single change is retried (``commit.retry.*``); a change
whose checks no longer hold raises, and nothing is committed.

``CatalogTransaction`` (``catalog.transaction()``) holds one ``Transaction`` per table and commits
them together through the catalog's ``commit_transaction``: the SQL catalog swaps every table's row
in one database transaction, the REST catalog sends one ``POST /v1/transactions/commit``. A
Hadoop or object-store catalog has no such place and refuses (see ``MultiTableCommitUnsupported``).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Protocol, Sequence

from icefloe.core.retry import RetryPolicy
from icefloe.errors import (  # noqa: F401 - defined in icefloe.errors, importable here too
    IcefloeError, MultiTableCommitUnsupported, TransactionClosed, VersionConflict,
)
from icefloe.iceberg.append import Append
from icefloe.iceberg.maintenance import properties_change
from icefloe.iceberg.metadata_builder import apply_changes
from icefloe.iceberg.metadata_commit import MetadataChange, change_producer
from icefloe.iceberg.operations import Changes, Committed, TableOperations
from icefloe.iceberg.overwrite import Overwrite
from icefloe.iceberg.refs import create_branch_change, create_tag_change
from icefloe.iceberg.snapshot_producer import SnapshotProducer
from icefloe.iceberg.sort_order import sort_order_change
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata
from icefloe.iceberg.table_requirements import check_requirements
from icefloe.iceberg.manifest import DataFile

if TYPE_CHECKING:
    from icefloe.iceberg.schema_update import UpdateSchema
    from icefloe.iceberg.spec_update import UpdateSpec

MULTI_TABLE_UNSUPPORTED = (
    "a Hadoop or object-store catalog cannot commit several tables atomically: each table's current "
    "version is its own metadata/vN.metadata.json, made current by one create-if-absent write per table, "
    "and there is no single write that makes several tables' versions current together (use a SQL or a "
    "REST catalog, or commit each table on its own)")


@dataclass
class _Step:
    """One staged change: how to produce it on a metadata, and what it produced last."""
    produce: Callable[[TableMetadata, int], Optional[Changes]]
    snapshot: Optional[SnapshotProducer] = None
    changes: Optional[Changes] = None


class Transaction:
    """Changes of one table staged for one commit (see the module doc)."""

    def __init__(self, ops: TableOperations, on_commit: Optional[Callable[[], object]] = None,
                 write: Optional[Callable[[TableMetadata, Any], list[DataFile]]] = None,
                 summary: Optional[Mapping[str, str]] = None):
        """A transaction on the table's current metadata (``table.transaction()`` makes one).

        Args:
            ops: The table's operations.
            on_commit: Called once the transaction committed (the table refreshes).
            write: Writes data as data files under a metadata (what ``append`` uses).
            summary: Snapshot summary entries for the snapshots staged here.
        """
        self.ops = ops
        self._on_commit = on_commit
        self._write = write                 # data -> data files under a metadata (the data plane's)
        self._summary = dict(summary or {})
        self._version, self.base = ops.load()
        self.staged: TableMetadata = self.base
        self._steps: list[_Step] = []
        self._added: list[DataFile] = []              # data files staged by appends, deleted if nothing commits
        self._open = True
        self.member = False                 # part of a CatalogTransaction, which commits it
        self.committed: Optional[Committed] = None

    @property
    def base_version(self) -> int:
        """The version of ``base``, the metadata this transaction's changes were first produced on."""
        return self._version

    @property
    def has_changes(self) -> bool:
        """Whether any staged change changes the metadata."""
        return any(s.changes for s in self._steps)

    # ------------------------------------------------------------------ staging
    def _stage(self, step: _Step) -> None:
        if not self._open:
            raise TransactionClosed("this transaction was committed or abandoned; start a new one")
        changes = step.produce(self.staged, 0)
        if changes:
            check_requirements(self.staged, changes.requirements)
            self.staged = apply_changes(self.staged, changes.updates)
        step.changes = changes
        self._steps.append(step)

    def stage_change(self, change: MetadataChange) -> None:
        """Stage a metadata change (a function of the metadata to its updates)."""
        self._stage(_Step(change_producer(change)))

    def stage_snapshot(self, producer: SnapshotProducer, branch: str = MAIN_BRANCH) -> None:
        """Stage a snapshot: its manifests are written now, on the staged metadata."""
        self._added += producer.added
        commit_uuid = str(uuid.uuid4())     # its own: manifest names count from 0 per snapshot
        self._stage(_Step(lambda meta, n: producer.changes(self.ops, meta, branch, commit_uuid, n), producer))

    def update_schema(self) -> UpdateSchema:
        """A schema change staged here on leaving its ``with`` block (``UpdateSchema``)."""
        from icefloe.iceberg.schema_update import UpdateSchema

        return UpdateSchema(self.ops, transaction=self)

    def update_spec(self) -> UpdateSpec:
        """A partition spec change staged here on leaving its ``with`` block (``UpdateSpec``)."""
        from icefloe.iceberg.spec_update import UpdateSpec

        return UpdateSpec(self.ops, transaction=self)

    def update_properties(self, set: Optional[Mapping[Any, Any]] = None, remove: Optional[Sequence[str]] = None) -> "Transaction":
        """Stage setting and removing table properties.

        Args:
            set: Properties to set (``format-version`` upgrades the table).
            remove: Property names to remove.

        Returns:
            Transaction: this transaction.
        """
        updates = {str(k): str(v) for k, v in (set or {}).items()}
        removals = [str(k) for k in (remove or [])]
        version = updates.pop("format-version", None)
        both = sorted(frozenset(updates) & frozenset(removals))
        if both or "format-version" in removals:
            raise IcefloeError(f"properties {both or ['format-version']} cannot be both set and removed, and "
                               "format-version cannot be removed")
        self.stage_change(properties_change(self.ops.location, updates, removals, version))
        return self

    def set_properties(self, **props: str) -> "Transaction":
        """Stage setting table properties (pyiceberg's name).

        Args:
            props: The properties, as keyword arguments.
        """
        return self.update_properties(set=props)

    def remove_properties(self, *keys: str) -> "Transaction":
        """Stage removing table properties (pyiceberg's name).

        Args:
            keys: The property names.
        """
        return self.update_properties(remove=keys)

    def replace_sort_order(self, *terms: str) -> "Transaction":
        """Stage a new default sort order (as ``Table.replace_sort_order``).

        Args:
            terms: Sort terms (``"id"``, ``"ts desc nulls last"``); none makes the table unsorted.
        """
        self.stage_change(sort_order_change(list(terms)))
        return self

    def create_tag(self, name: str, snapshot_id: Optional[int] = None,
                   max_ref_age_ms: Optional[int] = None) -> "Transaction":
        """Stage a tag.

        Args:
            name: The tag's name.
            snapshot_id: Its snapshot (default: the staged current snapshot).
            max_ref_age_ms: How long the tag is kept.
        """
        self.stage_change(create_tag_change(name, snapshot_id, max_ref_age_ms))
        return self

    def create_branch(self, name: str, snapshot_id: Optional[int] = None) -> "Transaction":
        """Stage a branch.

        Args:
            name: The branch's name.
            snapshot_id: Its snapshot (default: the staged current snapshot).
        """
        self.stage_change(create_branch_change(name, snapshot_id))
        return self

    def commit_files(self, files: Iterable[DataFile], overwrite: bool = False, branch: str = MAIN_BRANCH) -> "Transaction":
        """Stage data files written elsewhere as one new snapshot.

        Args:
            files: The ``DataFile``s (``IcebergTable.write_files``).
            overwrite: The snapshot replaces every row instead of adding to them.
            branch: The branch the snapshot goes to.
        """
        produce = Overwrite.replace_all if overwrite else Append
        self.stage_snapshot(produce(list(files), summary_extra=dict(self._summary)), branch)
        return self

    def append(self, data: Any, branch: str = MAIN_BRANCH) -> "Transaction":
        """Write ``data`` under the staged metadata (so under a schema changed earlier in this
        transaction) and stage it as one new snapshot.

        Args:
            data: A Spark DataFrame, a pyarrow Table or a pandas DataFrame.
            branch: The branch the snapshot goes to.
        """
        if self._write is None:
            raise IcefloeError("this transaction has no data plane to write data with; stage data files "
                               "with commit_files")
        return self.commit_files(self._write(self.staged, data), branch=branch)

    # ------------------------------------------------------------------ commit
    def _produce_all(self, base: TableMetadata, attempt: int) -> Changes:
        """Every staged change produced again on ``base`` (the table moved on since it was staged)."""
        staged, out = base, Changes()
        for step in self._steps:
            _delete(self.ops, step.changes)
            step.changes = None
            changes = step.produce(staged, attempt)
            step.changes = changes
            if changes:
                check_requirements(staged, changes.requirements)
                before, staged = staged, apply_changes(staged, changes.updates)
                out.extend(changes, before, base)
        return out

    def changes(self) -> Changes:
        """The staged changes as one commit on ``base``."""
        out = Changes()
        staged = self.base
        for step in self._steps:
            if step.changes:
                out.extend(step.changes, staged, self.base)
                staged = apply_changes(staged, step.changes.updates)
        return out

    def commit_transaction(self, policy: Optional[RetryPolicy] = None) -> TableMetadata:
        """Commit every staged change as one new metadata version (leaving the ``with`` block does).

        Args:
            policy: How lost races are retried (default: the table's ``commit.retry.*``).

        Returns:
            TableMetadata: the committed metadata (the base when nothing was staged).
        """
        if not self._open:
            raise TransactionClosed("this transaction was committed or abandoned already")
        self._open = False
        if not any(s.changes for s in self._steps):
            return self.base
        state: dict[str, Any] = {"version": self._version, "changes": self.changes()}

        def attempt(n: int) -> Committed:
            version, base = self.ops.load()
            if version != state["version"]:
                state["version"], state["changes"] = version, self._produce_all(base, n)
            return self.ops.commit_changes(version, base, state["changes"])

        try:
            if policy is None:
                policy = RetryPolicy.from_iceberg_properties(self.base.properties)
            self.committed = policy.run(attempt, retry_on=(VersionConflict,))
        except BaseException:
            self.abandon()
            raise
        self.finished(self.committed.metadata)
        return self.committed.metadata

    def finished(self, meta: TableMetadata) -> None:
        """The commit holding this transaction is durable (for each snapshot: its id, and the
        manifests merged away dropped)."""
        self._open = False
        for step in self._steps:
            if step.snapshot is not None and step.changes is not None:
                step.snapshot.committed(self.ops.io, meta, step.changes)
        if self._on_commit is not None:
            self._on_commit()

    def abandon(self) -> None:
        """Commit nothing: delete what was written for the staged changes."""
        self._open = False
        for step in self._steps:
            _delete(self.ops, step.changes)
            step.changes = None
        for f in self._added:
            try:
                self.ops.io.delete(f.file_path)
            except OSError:
                pass

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool:
        if self.member:                     # the catalog transaction commits or abandons it
            return False
        if exc_type is None:
            self.commit_transaction()
        elif self._open:
            self.abandon()
        return False


def _delete(ops: TableOperations, changes: Optional[Changes]) -> None:
    for p in (changes.written if changes else []):
        try:
            ops.io.delete(p)
        except OSError:
            pass


TableCommit = tuple[str, TableOperations, int, TableMetadata, Changes]   # name, ops, base version, base, changes


class TransactionCatalog(Protocol):
    """What a catalog transaction needs of its catalog (``atomic_multi_table``, read with a default,
    says whether it commits several tables together)."""

    def commit_transaction(self, entries: list[TableCommit]) -> dict[str, TableMetadata]: ...


class CatalogTransaction:
    """Changes of several tables of one catalog committed all-or-nothing (see the module doc):
    ``with catalog.transaction() as ctx: ctx.table("db.a").append(...)``."""

    def __init__(self, catalog: TransactionCatalog, open_transaction: Callable[[str], Transaction]):
        """A transaction over a catalog's tables (``Catalog.transaction()`` makes one).

        Args:
            catalog: The catalog implementation (its ``commit_transaction`` commits).
            open_transaction: Makes the ``Transaction`` of a table by name.
        """
        self._catalog = catalog
        self._open_transaction = open_transaction
        self._tables: dict[str, Transaction] = {}
        self._open = True

    def table(self, name: str) -> Transaction:
        """The transaction of one table in this catalog transaction (made on first use; its
        changes are produced on the table as it is then).

        Args:
            name: ``"db.table"``.

        Returns:
            Transaction: stage the table's changes on it.
        """
        if not self._open:
            raise TransactionClosed("this catalog transaction was committed or abandoned already")
        if name not in self._tables:
            if self._tables and not getattr(self._catalog, "atomic_multi_table", False):
                raise MultiTableCommitUnsupported(f"cannot add table {name} to a transaction of "
                                                  f"{sorted(self._tables)[0]}: {MULTI_TABLE_UNSUPPORTED}")
            tx = self._open_transaction(name)
            tx.member = True
            self._tables[name] = tx
        return self._tables[name]

    def commit(self) -> dict[str, TableMetadata]:
        """Commit every table's changes together (leaving the ``with`` block does).

        Returns:
            dict: the new metadata by table name.
        """
        self._open = False
        staged = {n: tx for n, tx in self._tables.items() if tx.has_changes}
        if not staged:
            return {}
        try:
            out = self._catalog.commit_transaction(
                [(n, tx.ops, tx.base_version, tx.base, tx.changes()) for n, tx in staged.items()])
        except BaseException:
            self.abandon()
            raise
        for n, tx in staged.items():
            tx.finished(out[n])
        return out

    def abandon(self) -> None:
        """Commit nothing (an exception in the ``with`` block does this)."""
        self._open = False
        for tx in self._tables.values():
            tx.abandon()

    def __enter__(self) -> "CatalogTransaction":
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool:
        if exc_type is None:
            self.commit()
        else:
            self.abandon()
        return False
