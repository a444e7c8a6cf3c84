# pyright: strict
"""The Hadoop catalog: ``<warehouse>/<db>/<table>/`` directories with Iceberg metadata.

Replacing a table (``CREATE OR REPLACE TABLE``, ``REPLACE TABLE ... AS SELECT``)
keeps its history, as Iceberg does: the new schema (columns that survive keep
their ids), partition spec and properties are added to the metadata, ``main`` is
removed so the table has no current snapshot, and the data of ``AS SELECT``
becomes one new snapshot without a parent, all in one metadata version. Older
snapshots, branches and tags stay until they expire.

Renaming is not supported: a Hadoop table is its directory, and its metadata
files, manifest lists and manifests record absolute paths inside it, so a rename
would have to rewrite all of them (Iceberg's Java ``HadoopCatalog`` refuses
renames for the same reason).
"""
from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Callable, Mapping, NoReturn, Optional, Sequence

from icefloe.core.io import FileIO, is_remote, normalize_location
from icefloe.core.object_store import file_io_for
from icefloe.core.names import check_name_part, is_valid_name_part, split_name
from icefloe.core.schema_input import to_schema
from icefloe.core.types import Schema, widen_schema_small_ints
from icefloe.errors import (  # noqa: F401 - defined in icefloe.errors, importable here too
    CommitConflictError,
    IcefloeError,
    LocationError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NotSupportedError,
    RenameNotSupportedError,
    ReplaceNotSupportedError,
    TableAlreadyExistsError,
)
from icefloe.iceberg import unhonoured
from icefloe.iceberg.manifest_codec import ManifestCodec
from icefloe.iceberg.append import Append
from icefloe.iceberg.hadoop import HadoopTableOperations, VersionConflict
from icefloe.iceberg.locations import check_no_overlap, normalize, read_regular_file
from icefloe.iceberg.maintenance import drop_versions, purge_table_files
from icefloe.iceberg.metadata_builder import (
    AddPartitionSpec, AddSortOrder, RemoveSnapshotRef, SetCurrentSchema, SetDefaultSortOrder, SetDefaultSpec,
    TableUpdate,
)
from icefloe.iceberg.manifest import DataFile
from icefloe.iceberg.operations import TableOperations, apply_commit
from icefloe.iceberg.partitioning import PartitionField, PartitionSpec, build_spec
from icefloe.iceberg.schema_update import assign_fresh_ids, schema_updates, with_schema
from icefloe.iceberg.sort_order import with_sort_order
from icefloe.iceberg.table import BaseTable
from icefloe.iceberg.transaction import TableCommit, Transaction
from icefloe.iceberg.view_store import VIEWS_NEED_A_CATALOG
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata, new_table_metadata, now_ms

RENAME_NOT_SUPPORTED = (
    "renaming a table of the Hadoop catalog: the table is its directory, and its metadata files, "
    "manifest lists and manifests record absolute paths inside that directory, so a rename would have "
    "to rewrite every one of them (Iceberg's HadoopCatalog does not rename tables either); "
    "CREATE TABLE <new> AS SELECT * FROM <old> copies the data without the history")


class HadoopCatalog:
    """Tables of ``table_type`` under ``warehouse``: ``BaseTable``, or a factory ``(name, operations)``
    of a table with a data plane (the user-facing table, which holds the Spark session)."""

    def __init__(self, warehouse: str, io: Optional[FileIO] = None,
                 table_type: Callable[[str, TableOperations], BaseTable] = BaseTable):
        self.warehouse = normalize_location(warehouse)
        self.io = io or file_io_for(self.warehouse)
        self.table_type = table_type

    def table_location(self, name: str) -> str:
        db, tbl = split_name(name)
        return f"{self.warehouse}/{db}/{tbl}"

    def _ops(self, name: str) -> HadoopTableOperations:
        ops = HadoopTableOperations(self.io, self.table_location(name))
        ops.other_table_locations = lambda: self.other_table_locations(name)
        return ops

    def table_operations(self, name: str) -> HadoopTableOperations:
        """The operations (load, commit, file I/O) of table ``name``, which need not exist yet."""
        return self._ops(name)

    def check_new_location(self, name: str, location: str) -> None:
        """Nothing to check in a Hadoop warehouse: a new table's directory is its name, which no
        other table has, and a registered table naming another location was checked when it was
        registered (the SQL catalog checks its rows)."""

    def other_table_locations(self, name: Optional[str] = None) -> list[str]:
        """The locations of the warehouse's tables other than ``name``: each table's directory and,
        for a registered table, the location its metadata names."""
        out: list[str] = []
        for ns in self.list_namespaces():
            for other in self.list_tables(ns):
                if other == name:
                    continue
                ops = HadoopTableOperations(self.io, self.table_location(other))
                out.append(ops.location)
                try:
                    out.append(ops.load()[1].location)
                except IcefloeError:
                    pass
        return out

    def table_exists(self, name: str) -> bool:
        return self._ops(name).exists()

    def create_table(self, name: str, schema: object, partitioned_by: Optional[Sequence[str]] = None,
                     properties: Optional[dict[str, str]] = None, location: Optional[str] = None) -> BaseTable:
        """A new table; ``schema`` is DDL text, an icefloe Schema, a pyarrow.Schema or a Spark
        StructType (TINYINT and SMALLINT columns become int: Iceberg has no smaller integers).
        ``location``: where the table lives, if the catalog places tables where it is asked
        (``place_new_table``)."""
        writable_properties(properties or {}, name)
        ops = self._ops(name)
        if ops.exists():
            raise TableAlreadyExistsError(f"table {name} already exists at {ops.location}")
        if location is not None:
            self.place_new_table(ops, name, location)
        unhonoured.check(properties or {}, name, ops.location)
        schema = widen_schema_small_ints(to_schema(schema))
        spec = build_spec(schema, partitioned_by)
        meta = new_table_metadata(ops.location, schema, spec, properties or {})
        self.check_new_location(name, ops.location)
        try:
            ops.commit(None, None, meta)
        except Exception as e:
            if ops.exists():
                raise TableAlreadyExistsError(f"table {name} was created concurrently") from e
            raise
        return self.table_type(name, ops)

    def place_new_table(self, ops: TableOperations, name: str, location: str) -> None:
        """A directory catalog's table is the directory ``<warehouse>/<db>/<table>``: its path is its
        identity (the catalog finds a table by it), so it cannot live elsewhere, as in Iceberg's own
        HadoopCatalog. A location naming that directory is taken; any other is a ``LocationError``."""
        if normalize(location, "location") != normalize(ops.location, "table location"):
            raise LocationError(f"location of {name}: a directory (Hadoop) catalog keeps table {name} at "
                                f"{ops.location} (the path is the table's identity, so another location ({location}) "
                                "cannot be given, as Iceberg's HadoopCatalog refuses it too); a SQL or REST catalog "
                                "places a table where it is asked")

    def load_table(self, name: str) -> BaseTable:
        ops = self._ops(name)
        if not ops.exists():
            raise NoSuchTableError(f"table {name} does not exist (looked in {ops.location})")
        return self.table_type(name, ops)

    def register_table(self, name: str, metadata_location: str) -> BaseTable:
        """Adopt a table written by another engine: its metadata becomes our version 1."""
        ops = self._ops(name)
        if ops.exists():
            raise TableAlreadyExistsError(f"table {name} already exists at {ops.location}")
        meta = read_registered_metadata(self.io, metadata_location)    # validated before anything is written
        check_no_overlap(meta.location, self.other_table_locations(name), f"table location of {name}")
        ops.commit(None, None, meta)
        return self.table_type(name, ops)

    def namespace_path(self, namespace: str) -> str:
        return f"{self.warehouse}/{check_name_part(namespace, 'namespace')}"

    def list_namespaces(self) -> list[str]:
        return [d for d in self.io.list_dir(self.warehouse)
                if is_valid_name_part(d) and self.io.is_dir(f"{self.warehouse}/{d}")]

    def list_tables(self, namespace: str) -> list[str]:
        check_name_part(namespace, "namespace")
        base = f"{self.warehouse}/{namespace}"
        if not self.io.is_dir(base):
            raise NoSuchNamespaceError(f"namespace {namespace} does not exist in {self.warehouse}")
        out: list[str] = []
        for d in self.io.list_dir(base):
            if is_valid_name_part(d) and HadoopTableOperations(self.io, f"{base}/{d}").exists():
                out.append(f"{namespace}.{d}")
        return out

    def rename_table(self, name: str, new_name: str) -> None:
        if not self.table_exists(name):
            raise NoSuchTableError(f"table {name} does not exist")
        raise RenameNotSupportedError(f"cannot rename {name} to {new_name}: {RENAME_NOT_SUPPORTED}")

    def replace_table(self, name: str, schema: Schema, partitioned_by: Optional[Sequence[str]] = None,
                      properties: Optional[dict[str, str]] = None,
                      write_files: Optional[Callable[[TableMetadata], list[DataFile]]] = None,
                      create_if_missing: bool = False) -> BaseTable:
        """Replace table ``name`` with a new schema, partitioning and (optionally) data, keeping its
        history (see the module doc). ``create_if_missing``: create the table when it does not
        exist (``CREATE OR REPLACE``); otherwise a missing table is an error (``REPLACE TABLE``).
        ``write_files(metadata)``, when given, writes the data of the new state under that
        metadata and returns its data files, which become the new state's first snapshot."""
        ops = self._ops(name)
        if not ops.exists() and not create_if_missing:
            raise NoSuchTableError(f"table {name} does not exist, so it cannot be replaced "
                                   "(CREATE OR REPLACE TABLE creates it)")
        props = properties or {}
        writable_properties(props, name)
        existed = ops.exists()
        unhonoured.check(props, name, ops.location)
        target = replacement_metadata(ops.current(), schema, partitioned_by, props) if existed else \
            new_table_metadata(ops.location, schema, build_spec(schema, partitioned_by), props)
        files = write_files(target) if write_files is not None else []

        def change(base: TableMetadata) -> list[TableUpdate]:
            """The replacement's updates of ``base`` (checked against the files written for it)."""
            new = replacement_metadata(base, schema, partitioned_by, props)
            if files and (new.default_spec_id != target.default_spec_id or not new.spec.same_fields(target.spec)
                          or not new.schema.same_fields(target.schema)):
                raise CommitConflictError(
                    f"table {name} changed while it was being replaced (its new schema or partition spec "
                    "no longer matches the files just written); run the statement again")
            return replacement_updates(base, new)

        try:
            for _attempt in range(2):
                if not ops.exists():
                    if not create_if_missing or (files and existed):
                        raise NoSuchTableError(f"table {name} was dropped while it was being replaced")
                    try:
                        _create_with_files(ops, target, files)
                        break
                    except VersionConflict:
                        continue                  # created meanwhile: replace what was created
                with Transaction(ops) as tx:      # the replacement and its data: one metadata version
                    tx.stage_change(change)
                    if files:
                        tx.commit_files(files)
                break
        except BaseException:
            for f in files:
                self.io.delete(f.file_path)
            raise
        return self.table_type(name, ops)

    # ------------------------------------------------------------------ views
    def view_exists(self, name: str) -> bool:
        return False

    def list_views(self, namespace: str) -> list[str]:
        return []

    def load_view(self, name: str) -> NoReturn:
        raise NoSuchViewError(f"view {name} does not exist ({VIEWS_NEED_A_CATALOG})")

    def _no_views(self, what: str, *_args: object, **_kwargs: object) -> NoReturn:
        raise NotSupportedError(what, reason=VIEWS_NEED_A_CATALOG)

    def create_view(self, name: str, *args: object, **kwargs: object) -> NoReturn:
        self._no_views(f"CREATE VIEW {name}")

    def register_view(self, name: str, *args: object, **kwargs: object) -> NoReturn:
        self._no_views(f"registering view {name}")

    def commit_view(self, name: str, *args: object, **kwargs: object) -> NoReturn:
        self._no_views(f"changing view {name}")

    def replace_view(self, name: str, *args: object, **kwargs: object) -> NoReturn:
        self._no_views(f"changing view {name}")

    def drop_view(self, name: str) -> None:
        self._no_views(f"DROP VIEW {name}")

    def rename_view(self, name: str, new_name: str) -> None:
        self._no_views(f"renaming view {name}")

    def view_location(self, name: str) -> str:
        return self._no_views(f"CREATE VIEW {name}")

    atomic_multi_table = False

    def commit_transaction(self, entries: list[TableCommit]) -> dict[str, TableMetadata]:
        """Commit the changes of one table (``(name, ops, base_version, base, changes)``); several
        tables are refused: a Hadoop or object-store catalog cannot make them current together."""
        if len(entries) > 1:
            from icefloe.iceberg.transaction import MULTI_TABLE_UNSUPPORTED, MultiTableCommitUnsupported

            raise MultiTableCommitUnsupported(f"cannot commit tables {', '.join(sorted(e[0] for e in entries))} "
                                              f"in one transaction: {MULTI_TABLE_UNSUPPORTED}")
        return {name: ops.commit_changes(version, base, changes).metadata
                for name, ops, version, base, changes in entries}

    def drop_table(self, name: str, purge: Optional[bool] = None) -> None:
        """Drop table ``name``. With ``purge`` (the default here: the table is its directory) the
        files its metadata refers to are deleted (only those inside its location, see
        ``maintenance.purge_table_files``); with ``purge=False`` only its metadata versions go and
        its data, manifests and statistics stay."""
        purge = True if purge is None else purge
        ops = self._ops(name)
        if not ops.exists():
            raise NoSuchTableError(f"table {name} does not exist")
        if purge:
            version, meta = ops.load()
            purge_table_files(ops, version, meta)
        drop_versions(ops)


def writable_properties(properties: Mapping[str, str], table: str) -> None:
    """A table icefloe creates (or replaces) is one it can write: a manifest codec it cannot honour
    (``ManifestCodec.of``) or a property asking for what it does not do (``unhonoured``) is refused
    naming the property. (A catalog serving other engines, ``icefloe serve``, stores what they ask.)"""
    ManifestCodec.of(properties)
    unhonoured.check(properties, table)


def read_registered_metadata(io: FileIO, metadata_location: str) -> TableMetadata:
    """The metadata a register names, validated: an absolute location (normalised), a regular file
    under the size limit, valid Iceberg table metadata."""
    path = normalize(metadata_location, "metadata-location")
    try:
        data = read_regular_file(io, path if not is_remote(path) else metadata_location)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        raise NoSuchTableError("metadata-location: no readable metadata file there") from None
    return TableMetadata.loads(data, metadata_location)


# --------------------------------------------------------------------------- replace
def replacement_metadata(base: TableMetadata, schema: Schema, partitioned_by: Optional[Sequence[str]],
                         properties: Optional[Mapping[str, object]]) -> TableMetadata:
    """``base`` replaced by a new definition, as Java's ``TableMetadata.buildReplacement`` does it:

    - the schema gets ids by :func:`assign_fresh_ids` (same path, same id; new columns after
      ``last-column-id``) and becomes current, reusing the id of an identical older schema;
    - partition fields take back the id they had in any earlier spec (same source and transform),
      new ones continue after ``last-partition-id``; an identical earlier spec is reused;
    - the sort order becomes unsorted; properties are updated (none removed);
    - ``main`` is removed, so there is no current snapshot; snapshots, their log, other branches
      and tags stay.
    """
    if base.format_version < 2:
        raise IcefloeError(f"cannot replace table {base.location}: format version {base.format_version} tables "
                           "carry removed partition fields as void transforms; upgrade to format version 2")
    last = [base.last_column_id]

    def next_id() -> int:
        last[0] += 1
        return last[0]

    fresh = assign_fresh_ids(widen_schema_small_ints(schema), base.schema, next_id)
    meta = with_schema(base, fresh.struct, last[0], []) or base
    current = meta.schema
    # Snapshots written under every spec stay in the history (time travel, tags, expiry read their
    # manifests), and their partition values are read with the current schema: each spec's source
    # columns must stay, as ALTER TABLE ... DROP COLUMN requires too.
    kept = {f.field_id for _, f in current.all_fields()}
    for old in base.partition_specs:
        for pf in old.fields:
            if pf.source_id in kept or str(pf.transform) == "void":
                continue
            col = next((s.name_of(pf.source_id) for s in reversed(base.schemas)
                        if s.name_of(pf.source_id) is not None), str(pf.source_id))
            raise ReplaceNotSupportedError(
                f"replacing {base.location} with a schema that drops column {col!r} or changes its type: it is "
                f"the source of partition field {pf.name!r} of partition spec {old.spec_id}, and the snapshots "
                "kept in the table's history need it to read their partition values (keep the column with "
                "its type, even unpartitioned, or DROP TABLE and CREATE TABLE)")

    spec = build_spec(current, partitioned_by)
    known: dict[tuple[int, str], int] = {}
    for old in base.partition_specs:
        for f in old.fields:
            key = (f.source_id, str(f.transform))
            known[key] = max(known.get(key, f.field_id), f.field_id)
    last_pid = base.last_partition_id
    fields: list[PartitionField] = []
    for f in spec.fields:
        fid = known.get((f.source_id, str(f.transform)))
        if fid is None:
            last_pid += 1
            fid = last_pid
        fields.append(PartitionField(f.source_id, fid, f.transform, f.name))
    key = [(f.source_id, str(f.transform), f.name, f.field_id) for f in fields]
    same = next((s for s in base.partition_specs
                 if [(f.source_id, str(f.transform), f.name, f.field_id) for f in s.fields] == key), None)
    specs = list(base.partition_specs)
    if same is None:
        same = PartitionSpec(fields, max(s.spec_id for s in specs) + 1)
        specs.append(same)
    meta = replace(meta, partition_specs=specs, default_spec_id=same.spec_id,
                   last_partition_id=max(base.last_partition_id, last_pid))
    meta = with_sort_order(meta, [])
    props = dict(meta.properties)
    props.update({str(k): str(v) for k, v in (properties or {}).items()})
    refs = {k: v for k, v in meta.refs.items() if k != MAIN_BRANCH}
    return replace(meta, properties=props, refs=refs, current_snapshot_id=None,
                   last_updated_ms=max(now_ms(), base.last_updated_ms))


def replacement_updates(base: TableMetadata, new: TableMetadata) -> list[TableUpdate]:
    """The updates that turn ``base`` into its replacement ``new`` (``replacement_metadata``)."""
    out: list[TableUpdate] = schema_updates(base, new) or [SetCurrentSchema(new.current_schema_id)]
    if new.default_spec_id not in {s.spec_id for s in base.partition_specs}:
        out.append(AddPartitionSpec(new.spec.to_json()))
    out.append(SetDefaultSpec(new.default_spec_id))
    if not any(o["order-id"] == 0 for o in base.sort_orders):
        out.append(AddSortOrder({"order-id": 0, "fields": []}))
    out.append(SetDefaultSortOrder(0))
    if MAIN_BRANCH in base.refs:
        out.append(RemoveSnapshotRef(MAIN_BRANCH))
    return out


def _create_with_files(ops: TableOperations, meta: TableMetadata, files: list[DataFile]) -> None:
    """Create the table as ``meta``, with ``files`` as its first snapshot, in one version."""
    if not files:
        ops.commit(None, None, meta)
        return
    append = Append(files)
    changes = append.changes(ops, meta, MAIN_BRANCH, str(uuid.uuid4()), 0)
    try:
        ops.commit(None, None, apply_commit(meta, changes))
    except BaseException:
        for p in changes.written:
            ops.io.delete(p)
        raise
