"""The user-facing catalog, the same for both formats."""
from __future__ import annotations

import os
from typing import Optional

from icefloe.core.io import FileIO, is_remote, normalize_location
from icefloe.core.object_store import ObjectStoreIO, file_io_for
from icefloe.core.schema_input import to_schema
from icefloe.errors import (
    IcefloeError, NamespaceAlreadyExistsError, NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError,
    NotSupportedError,
)
from icefloe.iceberg.catalog import HadoopCatalog
from icefloe.paimon.catalog import DEFAULT_DATABASE, PaimonCatalog
from icefloe.spark.session import get_spark
from icefloe.sql import SqlError, SqlSession
from icefloe.table import IcebergTable, PaimonTable
from icefloe.table.iceberg import write_files_for

FORMATS = ("iceberg", "paimon")

__all__ = ["Catalog", "FORMATS", "sql", "to_schema"]


class Catalog:
    """A warehouse directory of tables in one format.

    >>> cat = Catalog("warehouse")                      # Iceberg, embedded local Spark
    >>> t = cat.create_table("db.tb01", "id bigint not null, ts timestamp", partitioned_by=["year(ts)"])
    """

    def __init__(self, warehouse: Optional[str] = None, format: str = "iceberg", spark=None,
                 io: Optional[FileIO] = None, type: Optional[str] = None, uri: Optional[str] = None,
                 name: str = "default", **properties):
        """``type``: ``hadoop`` (the default: the warehouse directories are the catalog) or ``sql``
        (Iceberg tables registered in a database, as Iceberg's JDBC catalog and pyiceberg's
        ``SqlCatalog`` keep them: ``uri`` a SQLAlchemy URL, default SQLite
        ``<warehouse>/catalog.db``; ``name`` the catalog's name in it) or ``rest`` (a server of the
        Iceberg REST catalog protocol at ``uri``, such as ``icefloe serve``; no warehouse needed).

        The warehouse may be on an object store (``s3://bucket/warehouse``, ``gs://``, ``az://``),
        configured by ``properties`` with pyiceberg's names: ``s3.endpoint``, ``s3.access-key-id``,
        ``s3.secret-access-key``, ``s3.session-token``, ``s3.region``, ``s3.path-style-access``;
        ``gcs.oauth2.token``, ``gcs.service.host``; ``adls.account-name``, ``adls.account-key``,
        ``adls.sas-token``, ``adls.connection-string``, ``adls.blob-storage-authority``
        (see ``icefloe.core.object_store``)."""
        fmt = (format or "iceberg").lower()
        if fmt not in FORMATS:
            raise IcefloeError(f"unknown table format {format!r}; expected one of {FORMATS}")
        kind = (type or ("rest" if uri and uri.startswith(("http://", "https://")) else "sql" if uri
                         else "hadoop")).lower()
        if kind not in ("hadoop", "sql", "rest"):
            raise IcefloeError(f"unknown catalog type {type!r}; expected 'hadoop', 'sql' or 'rest'")
        if kind in ("sql", "rest") and fmt != "iceberg":
            raise IcefloeError(f"the {kind.upper()} catalog holds Iceberg tables; Paimon tables use the warehouse "
                               "directories")
        if kind == "rest" and not uri:
            raise IcefloeError("a REST catalog needs uri='http://host:port'")
        if warehouse is None and kind != "rest":
            raise IcefloeError("a warehouse directory is needed (icefloe.Catalog('warehouse'))")
        self.warehouse = normalize_location(warehouse) if warehouse is not None else None
        self.properties = {str(k): str(v) for k, v in properties.items() if v is not None}
        if io is None and self.warehouse is not None:
            io = file_io_for(self.warehouse, self.properties)
            if is_remote(self.warehouse):
                io.check_location(self.warehouse)
        self.format = fmt
        self.type = kind
        self._spark = spark
        if kind == "rest":
            from icefloe.iceberg.rest_client import RestCatalog

            if io is None and self.properties:   # the server's tables are on an object store: reach it with these
                io = ObjectStoreIO(self.properties)
            self._impl = RestCatalog(uri, spark, io, table_type=IcebergTable, warehouse=self.warehouse or "")
            return
        if kind == "sql":
            from icefloe.iceberg.sql_catalog import SqlCatalog

            self._impl = SqlCatalog(self.warehouse, uri, name, spark, io, table_type=IcebergTable)
        elif fmt == "iceberg":
            self._impl = HadoopCatalog(self.warehouse, spark, io, table_type=IcebergTable)
        else:
            self._impl = PaimonCatalog(self.warehouse, spark, io, table_type=PaimonTable)
        self._impl.io.makedirs(self.warehouse)
        if fmt == "paimon":     # a Paimon catalog has database `default` (<warehouse>/default.db), as Paimon's do
            self._impl.io.makedirs(self._impl.database_path(DEFAULT_DATABASE))

    @property
    def io(self) -> FileIO:
        """The file I/O this catalog's tables read and write through."""
        return self._impl.io

    def __repr__(self) -> str:       # never the properties: they may hold secrets
        return f"Catalog({self.warehouse!r}, format={self.format!r})"

    @property
    def spark(self):
        """The SparkSession this catalog's tables use (the embedded one unless one was given)."""
        self._spark = get_spark(self._spark)
        return self._spark

    def create_table(self, name: str, schema, partitioned_by=None, properties: Optional[dict] = None):
        """A new table; ``schema`` is DDL text, an icefloe Schema, a pyarrow.Schema or a Spark StructType."""
        return self._impl.create_table(name, schema, partitioned_by=partitioned_by, properties=properties)

    def table_location(self, name: str) -> str:
        """The directory table ``name`` has (or would have) in this warehouse."""
        return self._impl.table_location(name)

    def load_table(self, name: str):
        """The table ``name`` (``db.table``), in this catalog's format; ``NoSuchTableError`` if
        there is none."""
        return self._impl.load_table(name)

    def table_exists(self, name: str) -> bool:
        """Whether table ``name`` exists."""
        return self._impl.table_exists(name)

    def list_namespaces(self) -> list[str]:
        """The namespaces (databases) of the warehouse."""
        return self._impl.list_namespaces()

    def list_tables(self, namespace: str) -> list[str]:
        """The tables of ``namespace`` as ``db.table`` names."""
        return self._impl.list_tables(namespace)

    def namespace_exists(self, namespace: str) -> bool:
        """Whether namespace ``namespace`` exists."""
        if hasattr(self._impl, "namespace_exists"):
            return self._impl.namespace_exists(namespace)
        return self.io.is_dir(self._impl.namespace_path(namespace))

    def create_namespace(self, namespace: str, exist_ok: bool = False) -> None:
        """Create namespace (database) ``namespace``: its directory in the warehouse (Paimon:
        ``<name>.db``). An existing one raises ``NamespaceAlreadyExistsError`` unless ``exist_ok``."""
        if hasattr(self._impl, "create_namespace"):
            return self._impl.create_namespace(namespace, exist_ok)
        path = self._impl.namespace_path(namespace)
        if self.io.is_dir(path):
            if exist_ok:
                return
            raise NamespaceAlreadyExistsError(f"namespace {namespace} already exists in {self.warehouse}")
        self.io.makedirs(path)

    def drop_namespace(self, namespace: str, cascade: bool = False, missing_ok: bool = False) -> None:
        """Drop namespace ``namespace``; one that holds tables only with ``cascade`` (its tables
        are dropped first)."""
        if not self.namespace_exists(namespace):
            if missing_ok:
                return
            raise NoSuchNamespaceError(f"namespace {namespace} does not exist in "
                                       f"{self.warehouse or getattr(self._impl, 'uri', 'the catalog')}")
        tables = self.list_tables(namespace)
        if tables and not cascade:
            raise NamespaceNotEmptyError(f"namespace {namespace} holds {len(tables)} table(s) "
                                         f"({', '.join(tables[:5])}{', ...' if len(tables) > 5 else ''}); "
                                         "drop them first or use CASCADE")
        for name in tables:
            self.drop_table(name)
        remove = getattr(self._impl, "remove_namespace", None)    # a catalog that records namespaces
        if remove is not None:
            remove(namespace)
        else:                                                   # a warehouse namespace is its directory
            self.io.delete_tree(self._impl.namespace_path(namespace))

    def drop_table(self, name: str) -> None:
        """Drop table ``name``: its directory, data included, is deleted."""
        self._impl.drop_table(name)

    def replace_table(self, name: str, schema, partitioned_by=None, properties: Optional[dict] = None,
                      data=None, create_if_missing: bool = False):
        """Replace a table's definition (and data), keeping its history: Iceberg's ``REPLACE TABLE`` /
        ``CREATE OR REPLACE TABLE [AS SELECT]`` (see ``icefloe.iceberg.catalog``); on Paimon tables
        Paimon's (the table truncated, then a new ``schema-N``; see ``icefloe.paimon.catalog``)."""
        if isinstance(self._impl, PaimonCatalog):
            # Paimon's replace: truncate, then the next schema-N; earlier snapshots stay (time travel)
            t = self._impl.replace_table(name, schema, partitioned_by, properties, create_if_missing)
            if data is not None:
                t.append(data)
            return t
        if not isinstance(self._impl, HadoopCatalog):
            raise NotSupportedError("replace_table", format=self.format,
                                    reason=f"the {self.type} catalog has no replace operation")
        impl = self._impl
        write = None if data is None else (
            lambda meta: write_files_for(meta, data, impl.io, name, lambda: self.spark))
        return impl.replace_table(name, to_schema(schema), partitioned_by, properties, write, create_if_missing)

    def rename_table(self, name: str, new_name: str) -> None:
        """Rename a table (Paimon: the table directory moves; Iceberg Hadoop tables cannot be renamed)."""
        self._impl.rename_table(name, new_name)

    def register_table(self, name: str, metadata_location: str):
        """Adopt an Iceberg table written elsewhere: ``name`` points at ``metadata_location``
        (a ``vN.metadata.json``); nothing is copied."""
        if not isinstance(self._impl, HadoopCatalog):
            raise NotSupportedError("register_table", format=self.format,
                                    reason="Paimon tables are adopted by pointing a catalog at their warehouse")
        return self._impl.register_table(name, metadata_location)

    def sql(self, text: str, catalog_name: str = "local", catalogs: Optional[dict] = None):
        """Run Spark SQL over this catalog's tables (``local.db.t`` or ``db.t``); a Spark DataFrame.
        ``catalogs`` adds more catalogs by name, usable in the same statements (``other.db.t``).
        Calls share one SQL session per ``catalog_name``, so ``USE db`` holds for the next ones."""
        sessions = self.__dict__.setdefault("_sql_sessions", {})
        key = (catalog_name, tuple(sorted((str(k), id(v)) for k, v in (catalogs or {}).items())))
        if key not in sessions:
            sessions[key] = SqlSession(self, self.spark, catalog_name, catalogs)
        return sessions[key].sql(text)


def load_table(location: str, spark=None, io: Optional[FileIO] = None):
    """The table in directory ``location``, its format detected (like Delta's ``forPath``): an
    Iceberg table (``metadata/``) as ``<warehouse>/<db>/<table>``, a Paimon table
    (``schema/``) as ``<warehouse>/<db>.db/<table>``."""
    loc = os.path.abspath(location[5:] if location.startswith("file:") else location).rstrip("/")
    db_dir, name = os.path.split(loc)
    warehouse, db = os.path.split(db_dir)
    if os.path.isdir(os.path.join(loc, "schema")):
        if not db.endswith(".db"):
            raise NoSuchTableError(f"{location} holds a Paimon table outside a <db>.db directory; open it with "
                                   f"icefloe.Catalog(<warehouse>, format='paimon')")
        return Catalog(warehouse, "paimon", spark, io).load_table(f"{db[:-3]}.{name}")
    if os.path.isdir(os.path.join(loc, "metadata")):
        return Catalog(warehouse, "iceberg", spark, io).load_table(f"{db}.{name}")
    raise NoSuchTableError(f"no Iceberg or Paimon table at {location} (an Iceberg table directory holds "
                           "metadata/, a Paimon table directory schema/)")


def sql(spark, text: str, warehouse: Optional[str] = None, catalog: Optional[Catalog] = None,
        format: str = "iceberg", catalog_name: str = "local"):
    """Run SQL ``text`` over the icefloe tables of ``warehouse`` (or ``catalog``); a Spark DataFrame."""
    if catalog is None:
        if warehouse is None:
            raise SqlError("icefloe.sql needs a warehouse directory or a catalog")
        catalog = Catalog(warehouse, format=format, spark=spark)
    return SqlSession(catalog, spark, catalog_name).sql(text)
