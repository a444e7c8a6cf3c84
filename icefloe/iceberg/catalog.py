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

from dataclasses import replace
from typing import Optional

from icefloe.core.io import FileIO, is_remote, normalize_location
from icefloe.core.object_store import file_io_for
from icefloe.core.names import check_name_part, is_valid_name_part, split_name
from icefloe.core.retry import RetryPolicy
from icefloe.core.schema_input import to_schema
from icefloe.core.types import Schema, widen_schema_small_ints
from icefloe.errors import (  # noqa: F401 - defined in icefloe.errors, importable here too
    CommitConflictError,
    IcefloeError,
    NoSuchNamespaceError,
    NoSuchTableError,
    RenameNotSupportedError,
    ReplaceNotSupportedError,
    TableAlreadyExistsError,
)
from icefloe.iceberg.append import Append
from icefloe.iceberg.hadoop import HadoopTableOperations, VersionConflict
from icefloe.iceberg.locations import check_no_overlap, normalize, read_regular_file
from icefloe.iceberg.maintenance import drop_versions, purge_table_files
from icefloe.iceberg.partitioning import PartitionField, PartitionSpec, build_spec
from icefloe.iceberg.schema_update import assign_fresh_ids, with_schema
from icefloe.iceberg.sort_order import with_sort_order
from icefloe.iceberg.table import BaseTable
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata, new_table_metadata, now_ms

RENAME_NOT_SUPPORTED = (
    "renaming a table of the Hadoop catalog: the table is its directory, and its metadata files, "
    "manifest lists and manifests record absolute paths inside that directory, so a rename would have "
    "to rewrite every one of them (Iceberg's HadoopCatalog does not rename tables either); "
    "CREATE TABLE <new> AS SELECT * FROM <old> copies the data without the history")


class HadoopCatalog:
    """Tables of ``table_type`` under ``warehouse``: ``BaseTable``, or a factory ``(name, operations)``
    of a table with a data plane (the user-facing table, which holds the Spark session)."""

    def __init__(self, warehouse: str, io: Optional[FileIO] = None, table_type=BaseTable):
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
        out = []
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

    def create_table(self, name: str, schema, partitioned_by=None,
                     properties: Optional[dict] = None) -> BaseTable:
        """A new table; ``schema`` is DDL text, an icefloe Schema, a pyarrow.Schema or a Spark
        StructType (TINYINT and SMALLINT columns become int: Iceberg has no smaller integers)."""
        ops = self._ops(name)
        if ops.exists():
            raise TableAlreadyExistsError(f"table {name} already exists at {ops.location}")
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
        out = []
        for d in self.io.list_dir(base):
            if is_valid_name_part(d) and HadoopTableOperations(self.io, f"{base}/{d}").exists():
                out.append(f"{namespace}.{d}")
        return out

    def rename_table(self, name: str, new_name: str) -> None:
        if not self.table_exists(name):
            raise NoSuchTableError(f"table {name} does not exist")
        raise RenameNotSupportedError(f"cannot rename {name} to {new_name}: {RENAME_NOT_SUPPORTED}")

    def replace_table(self, name: str, schema: Schema, partitioned_by=None, properties: Optional[dict] = None,
                      write_files=None, create_if_missing: bool = False) -> BaseTable:
        """Replace table ``name`` with a new schema, partitioning and (optionally) data, keeping its
        history (see the module doc). ``create_if_missing``: create the table when it does not
        exist (``CREATE OR REPLACE``); otherwise a missing table is an error (``REPLACE TABLE``).
        ``write_files(metadata)``, when given, writes the data of the new state under that
        metadata and returns its data files, which become the new state's first snapshot."""
        ops = self._ops(name)
        if not ops.exists() and not create_if_missing:
            raise NoSuchTableError(f"table {name} does not exist, so it cannot be replaced "
                                   "(CREATE OR REPLACE TABLE creates it)")

        def build(base: Optional[TableMetadata]) -> TableMetadata:
            if base is None:
                if not create_if_missing:
                    raise NoSuchTableError(f"table {name} was dropped while it was being replaced")
                return new_table_metadata(ops.location, schema, build_spec(schema, partitioned_by),
                                          properties or {})
            return replacement_metadata(base, schema, partitioned_by, properties or {})

        def latest():
            return ops.load() if ops.exists() else (None, None)

        policy = RetryPolicy.from_iceberg_properties(latest()[1].properties if ops.exists() else {})
        if write_files is None:
            def attempt(_n: int) -> None:
                version, base = latest()
                ops.commit(version, base, build(base))
            policy.run(attempt, retry_on=(VersionConflict,))
            return self.table_type(name, ops)

        target = build(latest()[1])
        files = write_files(target)

        def checked(base: Optional[TableMetadata]) -> TableMetadata:
            new = build(base)
            if new.default_spec_id != target.default_spec_id or not new.spec.same_fields(target.spec) \
                    or not new.schema.same_fields(target.schema):
                raise CommitConflictError(
                    f"table {name} changed while it was being replaced (its new schema or partition spec "
                    "no longer matches the files just written); run the statement again")
            return new
        try:
            Append(files).commit(_ReplacingOperations(ops, checked), MAIN_BRANCH, policy)
        except BaseException:
            for f in files:
                self.io.delete(f.file_path)
            raise
        return self.table_type(name, ops)

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


def read_registered_metadata(io, metadata_location: str) -> TableMetadata:
    """The metadata a register names, validated: an absolute location (normalised), a regular file
    under the size limit, valid Iceberg table metadata."""
    path = normalize(metadata_location, "metadata-location")
    try:
        data = read_regular_file(io, path if not is_remote(path) else metadata_location)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        raise NoSuchTableError("metadata-location: no readable metadata file there") from None
    return TableMetadata.loads(data, metadata_location)


# --------------------------------------------------------------------------- replace
def replacement_metadata(base: TableMetadata, schema: Schema, partitioned_by, properties: dict) -> TableMetadata:
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
    known: dict = {}
    for old in base.partition_specs:
        for f in old.fields:
            key = (f.source_id, str(f.transform))
            known[key] = max(known.get(key, f.field_id), f.field_id)
    last_pid = base.last_partition_id
    fields = []
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


class _ReplacingOperations:
    """Operations of one table that show every version already replaced: ``Append.commit`` then
    produces the snapshot of ``AS SELECT`` on top of the replacement, and both land in one metadata
    version. A version that does not exist yet (``CREATE OR REPLACE`` of a new table) loads as the
    new table's metadata and commits as version 1."""

    def __init__(self, ops: HadoopTableOperations, build):
        self._ops = ops
        self._build = build
        self._bases: dict = {}
        self.io = ops.io
        self.location = ops.location
        self.metadata_dir = ops.metadata_dir

    def load(self, version: Optional[int] = None):
        if version is None and not self._ops.exists():
            return None, self._build(None)
        v, base = self._ops.load(version)
        self._bases[v] = base
        return v, self._build(base)

    def commit(self, base_version, _replaced, new) -> int:
        return self._ops.commit(base_version, self._bases.get(base_version), new)

    def __getattr__(self, name):
        return getattr(self._ops, name)
