# pyright: strict
"""Paimon's global system tables: database ``sys`` of a catalog (``sys.tables``, ``sys.partitions``,
``sys.all_table_options``, ``sys.catalog_options``), as Arrow tables with Paimon's columns.

They describe every table of every database of the catalog. Paimon's columns are kept as Paimon
types them: the times of ``sys.tables`` and ``sys.partitions`` are epoch milliseconds (BIGINT), a
partition is named ``k1=v1/k2=v2``. ``owner``, ``created_*`` and ``updated_*`` come from a REST
catalog's audit fields in Paimon; a filesystem catalog has none, so they are null unless a table's
options carry them (the same keys Paimon reads). ``record_count``, ``file_size_in_bytes``,
``file_count`` and ``last_file_creation_time`` are the live files of the latest snapshot (what a
catalog that keeps table statistics shows; null for a table without a snapshot).
``sys.catalog_options`` exists only when the catalog's option ``catalog-options-table.enabled`` is
``true`` (Paimon's default is false), as in Paimon.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Protocol, Sequence

import pyarrow as pa

from icefloe.errors import NoSuchTableError
from icefloe.paimon import system_tables
from icefloe.paimon.system_tables import Row
from icefloe.paimon.table import FileStoreTable

SYSTEM_DATABASE = "sys"
CATALOG_OPTIONS_TABLE_ENABLED = "catalog-options-table.enabled"
TABLE_TYPE_OPTION, TABLE_TYPE_DEFAULT = "type", "table"
PATH_OPTION = "path"
_AUDIT = ("owner", "createdAt", "createdBy", "updatedAt", "updatedBy")

LONG, STRING, BOOL = pa.int64(), pa.string(), pa.bool_()


def _schema(*cols: tuple[str, Any]) -> pa.Schema:
    return pa.schema([pa.field(name, t) for name, t in cols])


TABLES = _schema(("database_name", STRING), ("table_name", STRING), ("table_type", STRING),
                 ("partitioned", BOOL), ("primary_key", BOOL), ("owner", STRING), ("created_at", LONG),
                 ("created_by", STRING), ("updated_at", LONG), ("updated_by", STRING), ("record_count", LONG),
                 ("file_size_in_bytes", LONG), ("file_count", LONG), ("last_file_creation_time", LONG))
PARTITIONS = _schema(("database_name", STRING), ("table_name", STRING), ("partition_name", STRING),
                     ("record_count", LONG), ("file_size_in_bytes", LONG), ("file_count", LONG),
                     ("last_file_creation_time", LONG), ("done", BOOL))
ALL_TABLE_OPTIONS = _schema(("database_name", STRING), ("table_name", STRING), ("key", STRING), ("value", STRING))
CATALOG_OPTIONS = pa.schema([pa.field("key", STRING, nullable=False), pa.field("value", STRING, nullable=False)])

NAMES = ("tables", "partitions", "all_table_options", "catalog_options")


def names(catalog_options: Mapping[str, str]) -> tuple[str, ...]:
    """The global system tables the catalog has (``catalog_options`` only when enabled)."""
    return NAMES if options_table_enabled(catalog_options) else NAMES[:-1]


def options_table_enabled(catalog_options: Mapping[str, str]) -> bool:
    return str(catalog_options.get(CATALOG_OPTIONS_TABLE_ENABLED, "false")).strip().lower() == "true"


def _rows_table(schema: pa.Schema, rows: Sequence[Row]) -> pa.Table:
    columns: list[Sequence[Any]] = list(zip(*rows)) if rows else [[] for _ in schema]
    return pa.Table.from_arrays([pa.array(list(c), type=f.type) for c, f in zip(columns, schema)], schema=schema)


class PaimonCatalog(Protocol):
    """What the global system tables read of a catalog: its databases and their Paimon tables."""
    def list_namespaces(self) -> list[str]: ...
    def list_tables(self, namespace: str) -> list[str]: ...
    def load_table(self, name: str) -> FileStoreTable: ...


def _tables(catalog: PaimonCatalog) -> list[tuple[str, str, FileStoreTable]]:
    """(database, table name, table) of every table of the catalog, in name order."""
    out: list[tuple[str, str, FileStoreTable]] = []
    for db in catalog.list_namespaces():
        for name in catalog.list_tables(db):
            try:
                out.append((db, name.rpartition(".")[2], catalog.load_table(name)))
            except NoSuchTableError:        # dropped while listing
                continue
    return out


def _long(v: Optional[str]) -> Optional[int]:
    return None if v is None else int(v)


def _live_files(table: FileStoreTable) -> list[Row]:
    """(partition directory, records, bytes, files, last creation time) of the latest snapshot's live files."""
    snapshot = table.current_snapshot()
    if snapshot is None:
        return []
    return system_tables.partition_groups(table, snapshot)


def tables(catalog: PaimonCatalog, catalog_options: Mapping[str, str]) -> pa.Table:
    rows: list[Row] = []
    for db, name, t in _tables(catalog):
        opts = t.options
        groups = _live_files(t)
        has_snapshot = t.current_snapshot() is not None
        totals = [sum(g[i] for g in groups) if has_snapshot else None for i in (1, 2, 3)]
        last = max((g[4] for g in groups if g[4] is not None), default=None)
        rows.append((db, name, opts.get(TABLE_TYPE_OPTION, TABLE_TYPE_DEFAULT), bool(t.partition_keys),
                     bool(t.table_schema.primary_keys), opts.get("owner"), _long(opts.get("createdAt")), opts.get("createdBy"),
                     _long(opts.get("updatedAt")), opts.get("updatedBy"), *totals, last))
    return _rows_table(TABLES, rows)


def partitions(catalog: PaimonCatalog, catalog_options: Mapping[str, str]) -> pa.Table:
    rows: list[Row] = []
    for db, name, t in _tables(catalog):
        if not t.partition_keys:
            continue
        for part, records, size, count, last in _live_files(t):
            rows.append((db, name, part, records, size, count, last, False))
    return _rows_table(PARTITIONS, rows)


def all_table_options(catalog: PaimonCatalog, catalog_options: Mapping[str, str]) -> pa.Table:
    """Each table's options as Paimon's catalog loads them: the schema's, with ``path`` (the table's
    directory) added."""
    rows = [(db, name, k, v) for db, name, t in _tables(catalog)
            for k, v in sorted({**t.options, PATH_OPTION: t.location}.items())]
    return _rows_table(ALL_TABLE_OPTIONS, rows)


def catalog_options_table(catalog: PaimonCatalog, options: Mapping[str, str]) -> pa.Table:
    return _rows_table(CATALOG_OPTIONS, sorted(options.items()))


BUILDERS: dict[str, Callable[[PaimonCatalog, Mapping[str, str]], pa.Table]] = {"tables": tables, "partitions": partitions, "all_table_options": all_table_options,
            "catalog_options": catalog_options_table}


def catalog_options(warehouse: object, properties: Mapping[str, Any]) -> dict[str, str]:
    """A catalog's options as ``sys.catalog_options`` shows them: its warehouse and the properties it was
    opened with, the values of secrets (keys naming a secret, password, token or credential) masked."""
    opts = {"warehouse": str(warehouse)} if warehouse is not None else {}
    for k, v in properties.items():
        opts[str(k)] = "******" if any(w in str(k).lower() for w in _SECRET_WORDS) else str(v)
    return opts


_SECRET_WORDS = ("secret", "password", "token", "credential", "session-key", "sas")


def system_table(catalog: PaimonCatalog, name: str, warehouse: object, properties: Mapping[str, Any]) -> pa.Table:
    """Global system table ``sys.<name>`` of ``catalog`` (anything with ``list_namespaces``,
    ``list_tables`` and ``load_table`` of Paimon tables) opened on ``warehouse`` with ``properties``."""
    options = catalog_options(warehouse, properties)
    key = name.lower()
    if key not in names(options):
        why = (f" (sys.catalog_options exists when the catalog's option {CATALOG_OPTIONS_TABLE_ENABLED} is "
               "true; Paimon's default is false)") if key == "catalog_options" else ""
        raise NoSuchTableError(f"Paimon's system database sys has no table {name}{why}; its tables: "
                               f"{', '.join(names(options))}")
    return BUILDERS[key](catalog, options)
