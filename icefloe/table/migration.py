# pyright: strict
"""Moving tables between formats without rewriting data.

Into Iceberg, as Iceberg's Spark procedures define them (spark-procedures, "Table migration"):
``add_files`` (files of a Parquet directory or of a Paimon append table added to an existing
table), ``snapshot`` (a new table over another table's files, the source untouched) and
``migrate`` (a Paimon table replaced by an Iceberg table of the same name). The files keep their
paths; the new table's name mapping (``schema.name-mapping.default``) lets readers match the
columns of files without field ids by name.

Into Paimon, as Paimon's ``migrate_table`` and ``migrate_file`` procedures do for Hive tables:
the files (of a Parquet directory or of an Iceberg table) are moved, by rename, into the
unaware-bucket (``bucket = -1``) append table's ``<partition>/bucket-0/`` directories, since a
Paimon data file lives in its table's directory. An Iceberg file written before a column was renamed
keeps its names: its columns are matched by the field ids in its footer, and it gets a Paimon
schema of its names (Paimon reads a file by its schema's names, matched by field id).

Statistics come from each file's footer, read in Spark tasks (``spark/file_import``). Every
check runs before the first change; a failed step undoes the ones before it (a moved file is
moved back, a created table dropped), so a failure leaves the source as it was.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Iterable, Optional, Protocol, Sequence

from icefloe.core.io import FileIO, normalize_location, prune_empty_dirs
from icefloe.core.parquet import FileMetrics, metrics_from_footer
from icefloe.core.types import IcebergType, Schema, from_arrow_schema, widen_schema_small_ints
from icefloe.errors import MigrationError, NoSuchTableError, TableAlreadyExistsError
from icefloe.iceberg import imports, metrics_modes
from icefloe.iceberg.manifest import DataFile
from icefloe.iceberg.operations import TableOperations
from icefloe.iceberg.partitioning import PartitionSpec, build_spec
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.iceberg.transforms import IdentityTransform
from icefloe.paimon import ownership
from icefloe.paimon.schema import TableSchema
from icefloe.paimon.types import DataField, to_core_schema
from icefloe.paimon.commit import CommitMessage
from icefloe.paimon.data_file import DataFileMeta, local_now_millis
from icefloe.paimon.stats import stats_from_footer, value_stats
from icefloe.spark.file_import import describe_files, parquet_files
from icefloe.spark.session import app_summary
from icefloe.table.migration_schemas import (SourceMatch, file_columns, file_names, footer_ids, inner_names,
                                              schema_ids)

NAME_MAPPING = "schema.name-mapping.default"
SNAPSHOT_PROPERTY = "gc.enabled"        # a snapshot table does not own its files (Iceberg sets it so)
BACKUP_SUFFIX = "_BACKUP_"

#: a file to add to an Iceberg table: (path, partition tuple, the schema it was written with, None
#: for the table's own)
Entry = tuple[str, tuple[Any, ...], Optional[Schema]]


class TableCatalog(Protocol):
    """What moving tables needs of a catalog (``icefloe.catalog.Catalog``)."""

    @property
    def io(self) -> FileIO: ...

    def table_exists(self, name: str) -> bool: ...

    def table_location(self, name: str) -> str: ...

    def load_table(self, name: str) -> Any: ...

    def create_table(self, name: str, schema: Any, partitioned_by: Any = None,
                     properties: Optional[dict[str, Any]] = None, location: Optional[str] = None) -> Any: ...

    def drop_table(self, name: str, purge: Optional[bool] = None) -> None: ...

    def rename_table(self, name: str, new_name: str) -> None: ...


class IcebergTarget(Protocol):
    """What adding files needs of the Iceberg table they go into (``IcebergTable``)."""

    @property
    def name(self) -> str: ...

    @property
    def io(self) -> FileIO: ...

    @property
    def ops(self) -> TableOperations: ...

    @property
    def metadata(self) -> TableMetadata: ...

    @property
    def spark(self) -> Any: ...

    def refresh(self) -> "IcebergTarget": ...

    def plan_files(self) -> Iterable[DataFile]: ...

    def commit_existing_files(self, files: list[DataFile], summary_extra: Optional[dict[str, Any]] = None) -> Any: ...


@dataclass
class ParquetDirectory:
    """Parquet files at ``location`` (a file or a directory, Hive-style ``k=v/`` partitions below)."""
    location: str
    io: FileIO
    files: list[tuple[str, dict[str, Any]]] = field(default_factory=list[tuple[str, dict[str, Any]]])  # (path, {key: text})
    keys: list[str] = field(default_factory=list[str])

    @staticmethod
    def at(location: str, io: FileIO) -> "ParquetDirectory":
        loc = normalize_location(location)
        try:
            paths = parquet_files(io, loc)
        except FileNotFoundError:
            raise MigrationError(f"no Parquet file or directory at {location}") from None
        if not paths:
            raise MigrationError(f"{location} holds no Parquet files")
        root = loc if io.is_dir(loc) else os.path.dirname(loc)
        files: list[tuple[str, dict[str, Any]]] = []
        keys: Optional[list[str]] = None
        for p in paths:
            rel = os.path.dirname(p[len(root) + 1:]) if p.startswith(root + "/") else ""
            values: dict[str, Any] = imports.hive_partition(rel)
            if keys is None:
                keys = list(values)
            elif list(values) != keys:
                raise MigrationError(f"{p}: partition directories {list(values)} differ from the other files' {keys}")
            files.append((p, values))
        return ParquetDirectory(loc, io, files, keys or [])

    def arrow_schema(self) -> Any:
        """The first file's columns (one footer, read here)."""
        import pyarrow.parquet as pq

        with self.io.open_read(self.files[0][0]) as fh:
            return pq.read_schema(fh)


def parse_source(text: str) -> Optional[str]:
    """The path of Iceberg's path source form ```parquet`.`/path``` (``parquet.`/path``` too);
    None for a table name. Another format than parquet is refused."""
    t = text.strip()
    if not t.startswith("`") and not t.lower().startswith("parquet."):
        return None
    if t.startswith("`"):
        end = t.find("`", 1)
        fmt, rest = t[1:end], t[end + 1:]
    else:
        fmt, rest = t.split(".", 1)
        rest = "." + rest
    if not rest.startswith(".`") or not rest.endswith("`"):
        return None
    if fmt.lower() != "parquet":
        raise MigrationError(f"source {text}: files of format {fmt!r} cannot be imported; only parquet")
    return rest[2:-1]


# --------------------------------------------------------------------------- into Iceberg
def _describe_for_iceberg(schema: Schema, file_schema: Optional[Schema], by_name: dict[str, int], path: str,
                          size: int, footer: Any) -> tuple[int, FileMetrics]:
    """In a Spark task: the file's size and metrics in the table's field ids. ``file_schema`` is
    the schema the file was written with (a Paimon file's, by its schema id: the names its columns
    had then, under field ids that never change), None for the table's own; ``by_name`` maps the
    names readers match files without field ids by (the table's name mapping) to field ids."""
    fs = file_schema or schema
    imports.check_file_columns(path, file_columns(footer), fs)
    ids = footer_ids(footer)
    for name, field_id in ((f.name, f.field_id) for f in fs.fields):
        if name in ids and ids[name] != field_id:
            raise MigrationError(f"{path}: column {name!r} has field id {ids[name]} in the file but {field_id} in "
                                 "the table; readers match columns by field id and would misread it")
        if name not in ids and by_name.get(name) != field_id:
            raise MigrationError(f"{path}: column {name!r} has no field id and the table's name mapping does not "
                                 f"give it field id {field_id} (it was renamed or its name reused since the file "
                                 "was written); readers would misread it")
    if file_schema is not None:
        _check_evolved_types(path, file_schema, schema)
    metrics = metrics_from_footer(footer, fs, truncate=None, skip_float_bounds=True)     # bounds whole
    if file_schema is not None:              # columns dropped since the file was written have no stats
        for stats in (metrics.column_sizes, metrics.value_counts, metrics.null_value_counts,
                      metrics.nan_value_counts, metrics.lower_bounds, metrics.upper_bounds):
            for fid in [k for k in stats if schema.find_field_or_none(k) is None]:
                del stats[fid]
    return size, metrics


def _check_evolved_types(path: str, file_schema: Schema, schema: Schema) -> None:
    """A column's type in an older file must be the table's, or one Iceberg promotes to it."""
    from icefloe.core.types import widen_to_common_types
    from icefloe.iceberg.schema_update import can_promote

    for f in file_schema.fields:
        now = schema.find_field_or_none(f.field_id)
        if now is None:
            continue
        old, new = widen_to_common_types(f.field_type), widen_to_common_types(now.field_type)
        if str(old) != str(new) and not can_promote(old, new):
            raise MigrationError(f"{path}: column {now.name!r} (field id {f.field_id}) is {old} in the file but "
                                 f"{new} in the table, which Iceberg cannot read it as")


def _mapping_with_old_names(schema: Schema, file_schemas: Sequence[Optional[Schema]]) -> str:
    """The name mapping of a table over a Paimon table's files: each top-level field also under the
    names it had in the schemas the files were written with (Paimon renames keep field ids), but
    for a name two fields had (one renamed, another given its name): only its current field keeps
    it, and a file without field ids of the other's time is refused when it is described."""
    import json

    from icefloe.iceberg.schema import name_mapping

    owners: dict[str, set[int]] = {}
    for fs in [schema] + [f for f in file_schemas if f is not None]:
        for f in fs.fields:
            owners.setdefault(f.name, set()).add(f.field_id)
    mapping = name_mapping(schema)
    for entry in mapping:
        old = sorted({f.name for fs in file_schemas if fs is not None for f in fs.fields
                      if f.field_id == entry["field-id"] and f.name not in entry["names"]
                      and owners[f.name] == {entry["field-id"]}})
        entry["names"] = entry["names"] + old
    return json.dumps(mapping)


def _add_file_schemas(table: IcebergTarget, file_schemas: Sequence[Optional[Schema]],
                      highest_id: int) -> IcebergTarget:
    """Record the schemas a Paimon table's files were written with in the new Iceberg table's
    metadata, as past schemas (the current one stays current; one the table has already is not
    added again), with Paimon's highest field id as the last column id: readers that look files'
    columns up by name (Spark's filter pushdown) then know a name's other owners, and a column
    added later does not take the id of one dropped before an older file was written."""
    from icefloe.iceberg.metadata_builder import AddSchema, SetCurrentSchema, TableUpdate
    from icefloe.iceberg.metadata_commit import commit_metadata
    from icefloe.iceberg.schema import schema_to_json

    past = {fs.schema_id: fs for fs in file_schemas if fs is not None}

    def change(base: TableMetadata) -> Optional[list[TableUpdate]]:
        current = base.schema
        updates: list[TableUpdate] = []
        for sid in sorted(past):
            doc = schema_to_json(widen_schema_small_ints(past[sid]))
            doc.pop("schema-id", None)
            updates.append(AddSchema(doc, max(base.last_column_id, highest_id)))
        return updates + [SetCurrentSchema(current.schema_id)] if updates else None

    commit_metadata(table.ops, change)
    return table.refresh()


def _check_paimon_ids(table: IcebergTarget, source: Any) -> None:
    """add_files of a Paimon table's files: they carry Paimon's field ids, so the Iceberg table's
    columns must have the same ids (as ``snapshot`` and ``migrate`` make them)."""
    schema = table.metadata.schema
    for f in source.table_schema.fields:
        col = schema.find_field_or_none(f.name)
        if col is None or col.field_id != f.id:
            have = "no such column" if col is None else f"field id {col.field_id}"
            raise MigrationError(f"add_files: {source.name}'s files carry Paimon's field ids, and column {f.name!r} "
                                 f"has field id {f.id} there but {have} in {table.name}; readers match columns by "
                                 "field id and would misread them (snapshot or migrate make an Iceberg table with "
                                 "Paimon's ids)")


def _name_ids(props: dict[str, str], schema: Schema) -> dict[str, int]:
    """{top-level name: field id} of the table's name mapping (its schema's names without one)."""
    import json

    text = props.get(NAME_MAPPING)
    if not text:
        return {f.name: f.field_id for f in schema.fields}
    return {n: e["field-id"] for e in json.loads(text) if "field-id" in e for n in e.get("names", ())}


def _iceberg_data_files(spark: Any, io: FileIO, entries: Sequence[Entry], meta: TableMetadata,
                        parallelism: Optional[int] = None) -> list[DataFile]:
    """Data files of ``entries`` ((path, partition, the file's schema or None)) for the table of
    ``meta``; the files of each schema described in one Spark job."""
    schema, spec = meta.schema, meta.spec
    modes = metrics_modes.for_table(meta)       # the table's metrics modes, as Iceberg's add_files applies them
    by_name = _name_ids(meta.properties, schema)
    groups: dict[Optional[int], tuple[Optional[Schema], list[int]]] = {}
    for i, (_p, _part, fs) in enumerate(entries):
        groups.setdefault(None if fs is None else fs.schema_id, (fs, []))[1].append(i)
    described: list[Any] = [None] * len(entries)
    for fs, idxs in groups.values():
        out: list[tuple[int, FileMetrics]] = describe_files(
            spark, [entries[i][0] for i in idxs], io, partial(_describe_for_iceberg, schema, fs, by_name), parallelism)
        for i, d in zip(idxs, out):
            described[i] = d
    return [imports.data_file(p, size, part, spec, schema, metrics_modes.apply_modes(m, modes, schema))
            for (p, part, _fs), (size, m) in zip(entries, described)]


def holds(obj: object, fmt: str) -> bool:
    """Whether ``obj`` (a table, or a catalog) is of (holds tables of) format ``fmt``: the procedures
    that move files into one format ask here, so the SQL front-end never compares formats itself."""
    return getattr(obj, "format", None) == fmt


def _is_paimon(source: object) -> bool:
    return getattr(source, "format", None) == "paimon"


def _check_file_source(source: object, what: str) -> None:
    """``source`` is a Parquet directory or a Paimon table: an Iceberg table's files are Iceberg's
    already (Iceberg's procedures refuse an Iceberg source too)."""
    if not isinstance(source, ParquetDirectory) and not _is_paimon(source):
        raise MigrationError(f"{what}: {getattr(source, 'name', source)} is an Iceberg table already; {what} takes "
                             "Parquet files (`parquet`.`/path`) or a Paimon append table (an Iceberg table is "
                             "copied with CREATE TABLE ... AS SELECT, or moved with rewrite_table_path)")


def _check_paimon_source(source: Any, what: str) -> None:
    ts = source.table_schema
    if ts.primary_keys:
        raise MigrationError(f"{what}: {source.name} is a primary-key table; only Paimon append tables can be "
                             "imported (their files hold rows, not changes to merge)")
    if ts.core_options.deletion_vectors_enabled:
        raise MigrationError(f"{what}: {source.name} has deletion vectors enabled; its files may hold deleted rows")


def _paimon_entries(source: Any, spec: PartitionSpec, schema: Schema,
                    partition_filter: Optional[dict[str, Any]] = None) -> list[Entry]:
    """(path, partition tuple) of a Paimon append table's live files."""
    from icefloe.core.values import to_internal
    from icefloe.paimon.binary_row import decode_row

    ts = source.table_schema
    types = ts.partition_types
    out: list[Entry] = []
    file_schemas: dict[int, Schema] = {}
    for e in source.plan():
        values = dict(zip(ts.partition_keys, decode_row(e.partition, types)))
        if partition_filter and not imports.matches_filter({k: _text(v) for k, v in values.items()}, partition_filter):
            continue
        part = tuple(to_internal(schema.find_field(f.source_id).field_type,
                                 values[schema.find_field(f.source_id).name]) for f in spec.fields)
        sid = e.file.schema_id
        if sid not in file_schemas:
            file_schemas[sid] = to_core_schema(source.schema_by_id(sid).fields, sid)
        out.append((e.file.file_path, part, file_schemas[sid]))
    return out


def _text(v: Any) -> Optional[str]:
    if v is None:
        return None
    if isinstance(v, bool):
        return str(v).lower()
    return v.isoformat() if hasattr(v, "isoformat") else str(v)


def _parquet_entries(src: ParquetDirectory, spec: PartitionSpec, schema: Schema,
                     partition_filter: Optional[dict[str, Any]] = None) -> list[Entry]:
    return [(p, imports.partition_tuple(spec, schema, values), None) for p, values in src.files
            if imports.matches_filter(values, partition_filter)]


def add_files(table: IcebergTarget, source: Any, partition_filter: Optional[dict[str, Any]] = None,
              check_duplicate_files: bool = True, parallelism: Optional[int] = None) -> dict[str, Any]:
    """Iceberg's ``add_files``: ``source`` (a Parquet path, a ``ParquetDirectory`` or a Paimon
    append table) added to the Iceberg ``table`` in one ``append`` snapshot; returns Iceberg's
    output (``added_files_count``, ``changed_partition_count``: None for format version 2 and
    later, as Iceberg reports it)."""
    table = table.refresh()
    meta = table.metadata
    schema, spec = meta.schema, meta.spec
    if isinstance(source, str):
        source = ParquetDirectory.at(source, table.io)
    _check_file_source(source, "add_files")
    if _is_paimon(source):
        _check_paimon_source(source, "add_files")
        keys = list(source.table_schema.partition_keys)
        imports.check_filter_keys(partition_filter, keys)
        imports.check_spec_for_import(spec, schema, keys, table.name)
        _check_paimon_ids(table, source)
        entries = _paimon_entries(source, spec, schema, partition_filter)
    else:
        imports.check_filter_keys(partition_filter, source.keys)
        imports.check_spec_for_import(spec, schema, source.keys, table.name)
        entries = _parquet_entries(source, spec, schema, partition_filter)
    if check_duplicate_files:
        live = {f.file_path for f in table.plan_files()}
        dupes = [p for p, _part, _fs in entries if p in live]
        if dupes:
            raise MigrationError(f"add_files: {len(dupes)} of the files are already in {table.name} ({dupes[0]}"
                                 f"{', ...' if len(dupes) > 1 else ''}); nothing was added "
                                 "(check_duplicate_files => false adds them again)")
    if not entries:
        return {"added_files_count": 0, "changed_partition_count": None if meta.format_version > 1 else 0}
    files = _iceberg_data_files(table.spark, table.io, entries, meta, parallelism)
    table.commit_existing_files(files, summary_extra=app_summary(table.spark))
    changed = len({f.partition for f in files})
    return {"added_files_count": len(files), "changed_partition_count": None if meta.format_version > 1 else changed}


def _iceberg_layout(source: Any, io: FileIO) -> tuple[Schema, list[str]]:
    """(schema, partition keys) of a new Iceberg table over ``source``'s files."""
    if _is_paimon(source):
        _check_paimon_source(source, "snapshot")
        schema = source.schema
        keys = list(source.table_schema.partition_keys)
        return schema, keys
    arrow = source.arrow_schema()
    types = {k: imports.infer_partition_type([v.get(k) for _p, v in source.files]) for k in source.keys}
    return imports.import_schema(arrow, [(k, types[k]) for k in source.keys]), list(source.keys)


def _entries_for(source: Any, spec: PartitionSpec, schema: Schema) -> list[Entry]:
    return _paimon_entries(source, spec, schema) if _is_paimon(source) else _parquet_entries(source, spec, schema)


def snapshot(catalog: TableCatalog, source: Any, name: str, location: Optional[str] = None,
             properties: Optional[dict[str, Any]] = None, summary: Optional[dict[str, str]] = None,
             parallelism: Optional[int] = None) -> dict[str, int]:
    """Iceberg's ``snapshot``: a new Iceberg table ``name`` of ``catalog`` over ``source``'s files
    (a Parquet directory or a Paimon append table), the source untouched. The new table does not
    own the files (``gc.enabled=false`` unless ``properties`` say otherwise). ``location``: where
    the new table lives (a SQL catalog places it there; a directory catalog's table is its directory)."""
    if isinstance(source, str):
        source = ParquetDirectory.at(source, catalog.io)
    if catalog.table_exists(name):
        raise TableAlreadyExistsError(f"table {name} already exists")
    own = normalize_location(location) if location is not None else catalog.table_location(name)
    _check_file_source(source, "snapshot")
    schema, keys = _iceberg_layout(source, catalog.io)
    widened = widen_schema_small_ints(schema)
    entries = _entries_for(source, build_spec(widened, keys), widened)
    for p, _part, _fs in entries:
        if normalize_location(p).startswith(own.rstrip("/") + "/"):
            raise MigrationError(f"{p} lies inside the new table's location {own}")
    # a snapshot does not own the files (gc.enabled=false, as Iceberg's snapshot sets); a migrated table does
    props = {SNAPSHOT_PROPERTY: "false", **(properties or {})} if summary is None else dict(properties or {})
    if _is_paimon(source) and NAME_MAPPING not in props:
        props[NAME_MAPPING] = _mapping_with_old_names(widened, [fs for _p, _part, fs in entries])
    table = catalog.create_table(name, schema, partitioned_by=keys or None, properties=props, location=location) \
        if location is not None else catalog.create_table(name, schema, partitioned_by=keys or None, properties=props)
    try:
        if not isinstance(source, ParquetDirectory):        # a Paimon table
            table = _add_file_schemas(table, [fs for _p, _part, fs in entries], source.table_schema.highest_id)
        meta = table.metadata
        files = _iceberg_data_files(table.spark, table.io, entries, meta, parallelism) \
            if entries else []
        if files:
            table.commit_existing_files(files, summary_extra={**app_summary(table.spark), **(summary or {})})
    except BaseException:
        catalog.drop_table(name, purge=True)     # its own metadata only: the files lie outside it
        raise
    return {"imported_files_count": len(entries)}


def migrate(catalog: TableCatalog, source_catalog: TableCatalog, source_name: str,
            properties: Optional[dict[str, Any]] = None, drop_backup: bool = False,
            backup_table_name: Optional[str] = None, parallelism: Optional[int] = None) -> dict[str, int]:
    """Iceberg's ``migrate`` of the Paimon append table ``source_name`` of ``source_catalog``: an
    Iceberg table of the same name in ``catalog`` over its files. Without ``drop_backup`` the Paimon
    table stays, renamed to ``backup_table_name`` (default ``<table>_BACKUP_``), sharing the files;
    with it, the Paimon table's metadata and the files no live row is in are deleted."""
    source = source_catalog.load_table(source_name)
    if not _is_paimon(source):
        raise MigrationError(f"migrate: {source_name} is an {source.format} table; migrate replaces Paimon append "
                             "tables (Parquet directories: snapshot or add_files)")
    _check_paimon_source(source, "migrate")
    if catalog.table_exists(source_name):
        raise TableAlreadyExistsError(f"migrate: table {source_name} already exists in the Iceberg catalog")
    backup = None if drop_backup else (backup_table_name or f"{source_name}{BACKUP_SUFFIX}")
    if backup is not None and "." not in backup:
        backup = f"{source_name.rsplit('.', 1)[0]}.{backup}"
    if backup is not None and source_catalog.table_exists(backup):
        raise TableAlreadyExistsError(f"migrate: backup table {backup} already exists")
    if backup is None:
        out = snapshot(catalog, source, source_name, properties=properties, summary={"migrated-from": "paimon"},
                       parallelism=parallelism)
        _drop_paimon_metadata(source, catalog.load_table(source_name))
        return {"migrated_files_count": out["imported_files_count"]}
    # the Paimon table, files and all, is the backup; marked before the Iceberg table exists, so
    # that no drop, write or maintenance of it ever deletes or moves the files that table references
    source_catalog.rename_table(source_name, backup)
    mark = None
    try:
        mark = ownership.mark_shared(source.io, source_catalog.table_location(backup),
                                     f"Iceberg table {source_name} at {catalog.table_location(source_name)}")
        out = snapshot(catalog, source_catalog.load_table(backup), source_name, properties=properties,
                       summary={"migrated-from": "paimon"}, parallelism=parallelism)
    except BaseException:
        if mark is not None:
            ownership.unmark(source.io, mark)
        source_catalog.rename_table(backup, source_name)
        raise
    return {"migrated_files_count": out["imported_files_count"]}


def _drop_paimon_metadata(source: Any, iceberg_table: Any) -> None:
    """After a migration without backup: the Paimon table's metadata and the files of its directory
    the Iceberg table does not reference are deleted; the referenced data files stay."""
    io = source.io
    keep = {normalize_location(f.file_path) for f in iceberg_table.plan_files()}
    root = source.location.rstrip("/")
    # the schema files first: from the first deletion on, the directory is no Paimon table
    paths = sorted(io.walk_files(root), key=lambda p: "/schema/" not in p)
    for path in paths:
        if normalize_location(path) not in keep:
            io.delete(path)
    prune_empty_dirs(io, root)


# --------------------------------------------------------------------------- into Paimon
def parse_options(options: Optional[str], options_map: Optional[dict[Any, Any]] = None) -> dict[str, str]:
    """Paimon's ``options`` text (``k1=v1,k2=v2``) and ``options_map``, merged."""
    out: dict[str, str] = {}
    for part in [p for p in (options or "").split(",") if p.strip()]:
        if "=" not in part:
            raise MigrationError(f"options: {part!r} is not key=value")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    out.update({str(k): str(v) for k, v in (options_map or {}).items()})
    return out


def _describe_for_paimon(fields: Sequence[DataField], stats_mode: str, truncate: int, schema_id: int,
                         match: Optional[SourceMatch], path: str, size: int,
                         footer: Any) -> tuple[DataFileMeta, tuple[Optional[str], ...]]:
    """In a Spark task: (a Paimon ``DataFileMeta`` of the file (its name and schema id set later),
    the names its columns have in the file, in the order of ``fields``)."""
    names = file_names(fields, match, path, footer)
    as_written = [f.copy(name=n) for f, n in zip(fields, names) if n is not None]
    stats, stats_cols = value_stats(as_written, stats_from_footer(footer, as_written), stats_mode, truncate)
    rows = footer.num_rows
    meta = DataFileMeta(file_name=os.path.basename(path), file_size=size, row_count=rows, value_stats=stats,
                        min_sequence_number=0, max_sequence_number=max(rows - 1, 0), schema_id=schema_id,
                        creation_time=local_now_millis(), value_stats_cols=stats_cols)
    return meta, names


@dataclass
class _Moves:
    """Files moved so far, to move back on failure."""
    io: FileIO
    done: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])

    def move(self, src: str, dst: str) -> None:
        if self.io.exists(dst):
            raise MigrationError(f"{dst} exists already")
        self.io.makedirs(os.path.dirname(dst))
        self.io.rename(src, dst)
        self.done.append((src, dst))

    def undo(self) -> None:
        for src, dst in reversed(self.done):
            self.io.rename(dst, src)
        self.done = []


def _iceberg_source_files(source: Any) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    """(partition keys, [(path, {key: python value})]) of an Iceberg table's live files; refused
    when row-level deletes apply or the partitioning is not identity on columns."""
    meta = source.metadata
    tasks = source.plan_tasks() if hasattr(source, "plan_tasks") else source.plan_files()
    if any(t.deletes for t in tasks):
        raise MigrationError(f"{source.name} has row-level deletes (delete files or deletion vectors) on "
                             "its data files; Paimon append tables have none (compact the table first, "
                             "e.g. rewrite_data_files)")
    spec = meta.spec
    if any(not isinstance(f.transform, IdentityTransform) for f in spec.fields):
        raise MigrationError(f"{source.name} is partitioned by {', '.join(str(f.transform) for f in spec.fields)};"
                             " a Paimon table is partitioned by columns (identity partitions only)")
    if any(t.file.spec_id != spec.spec_id for t in tasks):
        raise MigrationError(f"{source.name} has files of an earlier partition spec; rewrite them first")
    keys = [meta.schema.find_field(f.source_id).name for f in spec.fields]
    types = [meta.schema.find_field(f.source_id).field_type for f in spec.fields]
    out: list[tuple[str, dict[str, Any]]] = []
    for t in tasks:
        values = {k: _python(ty, v) for k, ty, v in zip(keys, types, t.file.partition)}
        out.append((t.path, values))
    return keys, out


def _python(t: IcebergType, v: Any) -> Any:
    import pyarrow as pa

    from icefloe.core.types.arrow import to_arrow_type

    return pa.array([v], to_arrow_type(t, with_ids=False)).to_pylist()[0]


def _paimon_source(source: Any, io: FileIO) -> tuple[Any, Schema, list[str], list[tuple[str, dict[str, Any]]]]:
    """(schema for a new table, partition keys, [(path, {key: value})], the directory to prune)."""
    if isinstance(source, str):
        source = ParquetDirectory.at(source, io)
    if isinstance(source, ParquetDirectory):
        arrow = source.arrow_schema()
        if source.keys and not all(k in arrow.names for k in source.keys):
            raise MigrationError(f"the files of {source.location} do not hold their partition columns "
                                 f"{source.keys} (only their directories do); a Paimon data file holds every column")
        schema = from_arrow_schema(arrow.remove_metadata())
        files = [(p, {k: v for k, v in values.items()}) for p, values in source.files]
        return source, schema, list(source.keys), files
    if getattr(source, "format", None) != "iceberg":
        raise MigrationError("migration into Paimon takes a Parquet directory or an Iceberg table")
    keys, files = _iceberg_source_files(source)
    return source, source.schema, keys, files


def _source_ids(src: Any, fields: Sequence[DataField]) -> Optional[SourceMatch]:
    """({field id: index in ``fields``}, {name: index}, {field id: name} of the fields inside its
    columns) of an Iceberg source's top-level columns, matched to ``fields`` by their current
    names; the names are those of the source's name mapping (its current names without one).
    None for a directory: its files match by name."""
    if isinstance(src, ParquetDirectory):
        return None
    index = {f.name: i for i, f in enumerate(fields)}
    by_id = {f.field_id: index[f.name] for f in src.schema.fields if f.name in index}
    names = _name_ids(src.properties, src.schema)
    inner: dict[int, str] = {}
    for f in src.schema.fields:
        inner_names(f.field_type, inner)
    return by_id, {n: by_id[fid] for n, fid in names.items() if fid in by_id}, inner


def _import_into_paimon(table: Any, files: Sequence[tuple[str, dict[str, Any]]], created: bool,
                        catalog: Optional[TableCatalog], name: str, parallelism: Optional[int] = None,
                        src: Any = None) -> int:
    """Describe ``files`` (path, {key: value}) in Spark tasks, move them into ``table``'s bucket
    directories and commit; undone (files moved back, a ``created`` table dropped) on failure."""
    ts = table.table_schema
    if ts.primary_keys or ts.num_buckets != -1:
        raise MigrationError(f"{table.name} must be an append table with bucket = -1 (unaware); Paimon's "
                             "migration only fills those")
    co = ts.core_options
    describe = partial(_describe_for_paimon, list(ts.fields), co.stats_mode, co.stats_truncate_length, ts.id,
                       _source_ids(src, ts.fields))
    typed: list[tuple[str, tuple[Any, ...], str]] = []
    for path, values in files:
        part = tuple(_partition_value(ts, k, values) for k in ts.partition_keys)
        target = f"{table.store.bucket_dir(part, 0)}/{_paimon_name(path)}"
        typed.append((path, part, target))
    targets = [t for _p, _part, t in typed]
    if len(set(targets)) != len(targets):
        raise MigrationError("two source files would get one name in the same Paimon bucket directory")
    moves = _Moves(table.io)
    try:
        described: list[tuple[DataFileMeta, tuple[Optional[str], ...]]] = describe_files(
            table.spark, [p for p, _part, _t in typed], table.io, describe, parallelism)
        sids = schema_ids(table, [n for _m, n in described], created, [p for p, _part, _t in typed])
        if created and catalog is not None and set(sids) != {ts.id}:     # a created table has its catalog
            table = catalog.load_table(name)            # its current schema is the last one now
        by_part: dict[tuple[Any, ...], list[DataFileMeta]] = {}
        for (_src, part, dst), (meta, _n), sid in zip(typed, described, sids):
            meta.file_name = os.path.basename(dst)
            meta.file_path = dst
            meta.schema_id = sid
            by_part.setdefault(part, []).append(meta)
        for path, _part, dst in typed:
            moves.move(path, dst)
        messages = [CommitMessage(part, 0, -1, metas) for part, metas in by_part.items()]
        if messages:
            table.commit_existing_files(messages)
    except BaseException:
        moves.undo()
        if created and catalog is not None:
            catalog.drop_table(name, purge=True)
        raise
    return len(typed)


def _partition_value(ts: TableSchema, key: str, values: dict[str, Any]) -> Any:
    """A partition key's value as Paimon's writer takes it: directory text parsed to the
    column's type; an Iceberg partition value as it is (a Python value already)."""
    lowered = {k.lower(): v for k, v in values.items()}
    v = lowered.get(key.lower())
    if isinstance(v, str):
        field_type = next(f.type for f in ts.fields if f.name == key)
        return _python(field_type, imports.parse_partition_value(field_type, v))
    return v


def _paimon_name(path: str) -> str:
    base = os.path.basename(path)
    return base if base.endswith(".parquet") else f"{base}.parquet"


def migrate_to_paimon(catalog: TableCatalog, source: Any, target: Optional[str], options: Optional[dict[str, Any]] = None,
                      delete_origin: bool = True, source_catalog: Optional[TableCatalog] = None,
                      source_name: Optional[str] = None,
                      parallelism: Optional[int] = None) -> bool:
    """Paimon's ``migrate_table``: a new append table ``target`` of the Paimon ``catalog`` whose
    files are ``source``'s (a Parquet directory or an Iceberg table), moved into it. With
    ``delete_origin`` the source is dropped (an Iceberg table's metadata; a directory emptied of
    the files is removed)."""
    opts = dict(options or {})
    if str(opts.get("bucket", "-1")).strip() != "-1":
        raise MigrationError(f"options: bucket = {opts['bucket']}; a migrated table has bucket = -1 (unaware)")
    opts["bucket"] = "-1"
    if opts.get("file.format", "parquet").lower() != "parquet":
        raise MigrationError(f"options: file.format = {opts['file.format']}; the files are Parquet")
    if "primary-key" in opts:
        raise MigrationError("options: primary-key; a migrated table is an append table (Paimon's rule)")
    if target is None:
        raise MigrationError("target_table is needed: a Parquet directory has no table name to keep")
    if catalog.table_exists(target):
        raise TableAlreadyExistsError(f"table {target} already exists")
    src, schema, keys, files = _paimon_source(source, catalog.io)
    table = catalog.create_table(target, schema, partitioned_by=keys or None, properties=opts)
    count = _import_into_paimon(table, files, True, catalog, target, parallelism, src)
    if delete_origin:
        _delete_origin(src, source_catalog, source_name)
    return count >= 0


def migrate_files_to_paimon(table: Any, source: Any, delete_origin: bool = True,
                            source_catalog: Optional[TableCatalog] = None,
                            source_name: Optional[str] = None, parallelism: Optional[int] = None) -> bool:
    """Paimon's ``migrate_file``: ``source``'s files moved into the existing append table ``table``."""
    src, _schema, keys, files = _paimon_source(source, table.io)
    if sorted(k.lower() for k in keys) != sorted(k.lower() for k in table.table_schema.partition_keys):
        raise MigrationError(f"the source is partitioned by {keys or 'nothing'} but {table.name} by "
                             f"{list(table.table_schema.partition_keys) or 'nothing'}")
    _import_into_paimon(table, files, False, None, table.name, parallelism, src)
    if delete_origin:
        _delete_origin(src, source_catalog, source_name)
    return True


def _delete_origin(src: Any, source_catalog: Optional[TableCatalog], source_name: Optional[str]) -> None:
    if isinstance(src, ParquetDirectory):
        if src.io.is_dir(src.location):
            prune_empty_dirs(src.io, src.location)
        return
    if source_catalog is not None and source_name is not None:
        source_catalog.drop_table(source_name, purge=True)   # its files inside its location: those not moved


def load_source(text: str, catalogs: dict[str, TableCatalog], io: FileIO,
                default: Optional[TableCatalog] = None) -> tuple[Any, Optional[TableCatalog], Optional[str]]:
    """A source named in a procedure call: a ```parquet`.`/path``` directory, or ``[catalog.]db.t``
    of ``catalogs`` (name -> catalog; ``default`` for a name without one). Returns (source, its
    catalog or None, its name or None)."""
    path = parse_source(text)
    if path is not None:
        return ParquetDirectory.at(path, io), None, None
    parts = text.split(".")
    if len(parts) == 3 and parts[0].lower() in catalogs:
        cat, name = catalogs[parts[0].lower()], ".".join(parts[1:])
    elif len(parts) == 2 and default is not None:
        cat, name = default, text
    else:
        raise MigrationError(f"source {text!r}: name a table as [catalog.]db.table or files as `parquet`.`/path`")
    try:
        return cat.load_table(name), cat, name
    except NoSuchTableError:
        raise MigrationError(f"source table {text} does not exist") from None


__all__ = ["ParquetDirectory", "parse_source", "add_files", "snapshot", "migrate", "parse_options",
           "migrate_to_paimon", "migrate_files_to_paimon", "load_source"]
