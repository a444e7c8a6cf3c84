"""The user-facing catalog, the same for both formats."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union, cast

import pyarrow as pa

from icefloe import catalog_namespaces as namespaces
from icefloe.catalog_backend import FORMATS, CatalogBackend, IcebergBackend, open_backend
from icefloe.core.io import FileIO
from icefloe.core.schema_input import to_schema
from icefloe.errors import MigrationError, NoSuchNamespaceError, NoSuchTableError, NotSupportedError
from icefloe.iceberg.catalog import HadoopCatalog
from icefloe.iceberg.sql_catalog import SqlCatalog
from icefloe.paimon import global_system_tables
from icefloe.paimon.catalog import NO_ALTER_DATABASE as PAIMON_NO_ALTER_DATABASE
from icefloe.paimon.catalog import NO_VIEWS as PAIMON_NO_VIEWS
from icefloe.paimon.catalog import PaimonCatalog
from icefloe.spark.session import get_spark
from icefloe.sql import SqlError, SqlSession
from icefloe.table import IcebergTable, PaimonTable, Table, migration
from icefloe.table.iceberg import write_files_for

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.iceberg.operations import TableOperations
    from icefloe.iceberg.table_metadata import TableMetadata
    from icefloe.iceberg.transaction import CatalogTransaction, TableCommit
    from icefloe.iceberg.view_metadata import ViewMetadata
    from icefloe.iceberg.view_store import LoadedView

__all__ = ["Catalog", "FORMATS", "sql", "to_schema"]


class Catalog:
    """A catalog of tables in one format: a warehouse directory, a SQL database or a REST server.

    Example:
        ```python
        cat = icefloe.Catalog("warehouse")                    # Iceberg
        logs = icefloe.Catalog("warehouse", format="paimon")  # Paimon
        t = cat.create_table("db.events", "id bigint not null, ts timestamp", partitioned_by=["days(ts)"])
        ```
    """

    def __init__(self, warehouse: Optional[str] = None, format: str = "iceberg", spark: Optional[SparkSession] = None,
                 io: Optional[FileIO] = None, type: Optional[str] = None, uri: Optional[str] = None,
                 name: str = "default", **properties: object) -> None:
        """Open or create the catalog.

        Args:
            warehouse: The warehouse: a directory (``"warehouse"``, ``"/data/wh"``) or an object-store
                location (``"s3://bucket/warehouse"``, ``"gs://..."``, ``"az://..."``). Not needed for a
                REST catalog.
            format: ``"iceberg"`` (the default) or ``"paimon"``.
            spark: Your ``SparkSession``. By default the active session, else an embedded local one
                started on first use (see [Your own SparkSession](own-session.md)).
            io: A ``FileIO`` to read and write files through (by default chosen from ``warehouse``).
            type: ``"hadoop"`` (the default: the warehouse directories are the catalog), ``"sql"``
                (Iceberg tables registered in a database, as Iceberg's JDBC catalog and pyiceberg's
                ``SqlCatalog`` keep them) or ``"rest"`` (a server of the Iceberg REST catalog protocol,
                such as ``icefloe serve``). Inferred from ``uri`` when not given.
            uri: The SQL catalog's SQLAlchemy URL (default SQLite ``<warehouse>/catalog.db``) or the
                REST server's ``http://host:port``.
            name: The catalog's name inside a SQL catalog's database (pyiceberg's catalog name).
            **properties: Catalog properties, with pyiceberg's names: object-store settings
                (``s3.endpoint``, ``s3.access-key-id``, ``s3.secret-access-key``, ``s3.region``,
                ``gcs.*``, ``adls.*``; see [Configuration](configuration.md#object-stores)) and
                ``spark.native-io`` (``"true"``: Spark's own Parquet reader and writer touch the object
                store, for clusters with the store's Hadoop connector).
                For a REST catalog, ``credential="id:secret"`` signs in through the server's OAuth2
                token endpoint and ``token=`` sends a bearer token as it is; ``**{"scan-planning-mode":
                "server"}`` has the server plan reads (the REST spec's server-side scan planning).

        Raises:
            IcefloeError: an unknown format or catalog type, or a combination that does not exist.
            ObjectStoreError: the object store cannot be reached with these settings.
        """
        backend = open_backend(warehouse, format, spark, io, type, uri, name, properties)
        self.warehouse: Optional[str] = backend.warehouse
        self.properties: dict[str, str] = backend.properties
        self.format: str = backend.format
        self.type: str = backend.type
        self._spark: Optional[SparkSession] = spark
        self._impl: CatalogBackend = backend.impl

    @property
    def io(self) -> FileIO:
        """The file I/O this catalog's tables read and write through."""
        return self._impl.io

    def __repr__(self) -> str:       # never the properties: they may hold secrets
        return f"Catalog({self.warehouse!r}, format={self.format!r})"

    @property
    def spark(self) -> SparkSession:
        """The SparkSession this catalog's tables use (the embedded one unless one was given)."""
        self._spark = get_spark(self._spark)
        return self._spark

    def create_table(self, name: str, schema: object, partitioned_by: Optional[Sequence[str]] = None,
                     properties: Optional[dict[str, str]] = None, location: Optional[str] = None) -> Table:
        """Create a table.

        Args:
            name: ``"db.table"``.
            schema: DDL text (``"id bigint not null, name string"``), an icefloe ``Schema``, a
                ``pyarrow.Schema`` or a Spark ``StructType``.
            partitioned_by: Iceberg: partition terms (``["days(ts)", "bucket(16, id)"]``); Paimon:
                partition column names.
            properties: Table properties (Iceberg, e.g. ``format-version``, ``write.delete.mode``) or
                options (Paimon, e.g. ``primary-key``, ``bucket``, ``merge-engine``).
            location: Where the table lives, on an Iceberg SQL catalog (which finds a table by its
                row); a directory catalog's table is its directory ``<warehouse>/<db>/<table>``.

        Returns:
            IcebergTable | PaimonTable: the new table.

        Raises:
            TableAlreadyExistsError: the table exists.
            SchemaError: the schema or a partition term cannot be used.
            LocationError: ``location`` cannot be the table's here, or overlaps another table's.
        """
        if location is None:
            return cast(Table, self._impl.create_table(name, schema, partitioned_by, properties))
        impl = self._impl
        if isinstance(impl, PaimonCatalog):
            raise NotSupportedError("creating a table at a location", name, self.format, self.table_location_rule)
        return cast(Table, impl.create_table(name, schema, partitioned_by, properties, location=location))

    def table_location(self, name: str) -> str:
        """The directory a table has (or would have) in this warehouse.

        Args:
            name: ``"db.table"``.

        Returns:
            str: the location.
        """
        return self._impl.table_location(name)

    def load_table(self, name: str) -> Table:
        """A table of this catalog.

        Args:
            name: ``"db.table"``.

        Returns:
            IcebergTable | PaimonTable: the table.

        Raises:
            NoSuchTableError: there is no such table.
        """
        return cast(Table, self._impl.load_table(name))   # the backend's table factory

    def table_exists(self, name: str) -> bool:
        """Whether a table exists.

        Args:
            name: ``"db.table"``.

        Returns:
            bool: True if it exists.
        """
        return self._impl.table_exists(name)

    def list_namespaces(self) -> list[str]:
        """The namespaces (databases) of the catalog.

        Returns:
            list[str]: their names.
        """
        return self._impl.list_namespaces()

    def list_tables(self, namespace: str) -> list[str]:
        """The tables of a namespace.

        Args:
            namespace: The namespace (database).

        Returns:
            list[str]: ``"db.table"`` names.
        """
        return self._impl.list_tables(namespace)

    def namespace_exists(self, namespace: str) -> bool:
        """Whether a namespace exists.

        Args:
            namespace: The namespace (database).

        Returns:
            bool: True if it exists.
        """
        return namespaces.namespace_exists(self._impl, self.io, namespace)

    @property
    def keeps_empty_namespaces(self) -> bool:
        """Whether a namespace exists before it holds a table: in a database catalog and in a
        warehouse on a file system, yes; in a warehouse on an object store, whose namespace is a
        key prefix that exists only while a table's files are under it, no."""
        return self.type in ("sql", "rest") or self.io.keeps_empty_dirs

    @property
    def has_system_database(self) -> bool:
        """Whether the catalog's SQL has a ``sys`` database of its own (a Paimon catalog's, whose
        global system tables icefloe does not have; an Iceberg catalog's ``sys`` is a plain name)."""
        return self.format == "paimon"

    @property
    def table_location_rule(self) -> str:
        """Where the catalog's tables live, which is why ``CREATE TABLE ... LOCATION`` is refused here
        (Paimon's Spark catalog makes LOCATION a 'path' option, which only its Hive and REST catalogs take)."""
        paimon = ("a Paimon filesystem catalog keeps each table at <warehouse>/<db>.db/<table> and refuses a "
                  "table path, as Paimon's own does: external tables need Paimon's Hive or REST catalog")
        hadoop = ("a directory (Hadoop) catalog's table is its directory <warehouse>/<db>/<table>: the path is the "
                  "table's identity, so it cannot live elsewhere, as Iceberg's HadoopCatalog refuses a location too; "
                  "an Iceberg SQL catalog takes one")
        return paimon if self.format == "paimon" else hadoop

    @property
    def takes_table_locations(self) -> bool:
        """Whether ``CREATE TABLE ... LOCATION`` places a table where it says: an Iceberg SQL catalog
        (which finds a table by its row) does, a REST catalog's server decides; a directory catalog's
        table is its directory (``table_location_rule``)."""
        return self.format == "iceberg" and self.type in ("sql", "rest")

    def system_table(self, name: str) -> pa.Table:
        """A table of a Paimon catalog's ``sys`` database, as Arrow with Paimon's columns.

        Args:
            name: ``tables``, ``partitions``, ``all_table_options`` or ``catalog_options`` (if ``catalog-options-table.enabled``).

        Raises:
            NoSuchTableError: the catalog's ``sys`` has no such table, or the catalog has no ``sys``.
        """
        impl = self._impl
        if not self.has_system_database or not isinstance(impl, PaimonCatalog):
            raise NoSuchTableError(f"sys.{name}: a {self.format} catalog has no system database sys")
        return global_system_tables.system_table(impl, name, self.warehouse, self.properties)

    @property
    def views_refused(self) -> Optional[str]:
        """Why the catalog keeps no views (a Paimon filesystem catalog's: Paimon keeps views in a Hive,
        JDBC or REST catalog), or None where it keeps them."""
        return PAIMON_NO_VIEWS if self.format == "paimon" else None

    @property
    def alter_namespace_refused(self) -> Optional[str]:
        """Why ``ALTER NAMESPACE`` is refused whatever it sets (Paimon's filesystem catalog refuses
        ALTER DATABASE), or None."""
        return PAIMON_NO_ALTER_DATABASE if self.format == "paimon" else None

    @property
    def keeps_namespace_properties(self) -> bool:
        """Whether the catalog keeps properties of a namespace (the SQL catalog; a warehouse
        namespace is a directory, with nothing to keep them in)."""
        return self.type == "sql"

    def namespace_properties(self, namespace: str) -> dict[str, str]:
        """A namespace's properties (empty where the catalog keeps none).

        Args:
            namespace: The namespace (database).

        Returns:
            dict: its properties.

        Raises:
            NoSuchNamespaceError: the namespace does not exist.
        """
        if not self.namespace_exists(namespace):
            raise NoSuchNamespaceError(f"namespace {namespace} does not exist")
        impl = self._impl
        return impl.namespace_properties(namespace) if isinstance(impl, SqlCatalog) else {}

    def update_namespace_properties(self, namespace: str, updates: Optional[Mapping[str, object]] = None,
                                    removals: Optional[list[str]] = None
                                    ) -> tuple[list[str], list[str], list[str]]:
        """Set and remove properties of a namespace in one change (the SQL catalog keeps them).

        Args:
            namespace: The namespace (database).
            updates: The properties to set, ``{key: value}``.
            removals: The keys to remove.

        Returns:
            tuple: the keys updated, removed, and asked to be removed but missing.

        Raises:
            NotSupportedError: properties to set on a catalog that keeps none.
            NoSuchNamespaceError: the namespace does not exist.
        """
        impl = self._impl
        if not isinstance(impl, SqlCatalog):        # the SQL catalog is the one that keeps them
            if updates:
                raise namespaces.no_namespace_properties(namespace, self.type)
            if not self.namespace_exists(namespace):
                raise NoSuchNamespaceError(f"namespace {namespace} does not exist")
            return [], [], list(removals or [])
        return impl.update_namespace_properties(namespace, updates, removals)

    def table_operations(self, name: str) -> TableOperations:
        """The operations of an Iceberg table (load and commit its metadata, its file I/O), for a
        service that commits changes it received (the REST server).

        Args:
            name: ``"db.table"``; the table need not exist yet.

        Returns:
            the catalog's table operations for it.

        Raises:
            NotSupportedError: a Paimon catalog.
        """
        impl = self._impl
        if isinstance(impl, PaimonCatalog):
            raise NotSupportedError("table operations", name, self.format, "an Iceberg catalog's")
        return impl.table_operations(name)

    def check_new_location(self, name: str, location: str) -> None:
        """Refuse a new table's location when another table of the catalog uses it.

        Args:
            name: The new table, ``"db.table"``.
            location: The directory it would have.

        Raises:
            IcefloeError: another table of the catalog has its files there.
            NotSupportedError: a REST catalog (its server places tables) or a Paimon catalog (which
                places each table itself).
        """
        impl = self._impl
        if not isinstance(impl, HadoopCatalog):
            raise NotSupportedError("checking a new table's location", name, self.format,
                                    f"the {self.type} catalog places its tables itself")
        impl.check_new_location(name, location)

    def create_namespace(self, namespace: str, exist_ok: bool = False,
                         properties: Optional[Mapping[str, object]] = None) -> None:
        """Create a namespace (database): its directory in the warehouse (Paimon: ``<name>.db``).

        Args:
            namespace: The namespace's name.
            exist_ok: Do nothing if it exists.
            properties: The namespace's properties (the SQL catalog keeps them).

        Raises:
            NamespaceAlreadyExistsError: it exists and ``exist_ok`` is false.
            NotSupportedError: ``properties`` on a catalog that keeps none.
        """
        namespaces.create_namespace(self._impl, self.io, namespace, exist_ok, properties, self.type, self.warehouse)

    def drop_namespace(self, namespace: str, cascade: bool = False, missing_ok: bool = False) -> None:
        """Drop a namespace.

        Args:
            namespace: The namespace's name.
            cascade: Drop its tables first; without it, a namespace holding tables is refused.
            missing_ok: Do nothing if it does not exist.

        Raises:
            NoSuchNamespaceError: it does not exist and ``missing_ok`` is false.
            NamespaceNotEmptyError: it holds tables and ``cascade`` is false.
        """
        if not self.namespace_exists(namespace):
            if missing_ok:
                return
            raise namespaces.missing_namespace(self._impl, namespace, self.warehouse)
        tables = self.list_tables(namespace)
        views = self.list_views(namespace)
        if not cascade:
            namespaces.refuse_non_empty(namespace, tables, views)
        for name in views:
            self.drop_view(name)
        for name in tables:
            self.drop_table(name)
        namespaces.remove_namespace(self._impl, self.io, namespace)

    def drop_table(self, name: str, purge: Optional[bool] = None) -> None:
        """Drop a table.

        Args:
            name: ``"db.table"``.
            purge: with ``True`` the files the table's metadata refers to are deleted, those inside
                its location only; with ``False`` the table is forgotten and its files stay (a
                directory-catalog table loses only its metadata versions). Left out, each catalog
                does what its kind does: a warehouse directory (Iceberg or Paimon) purges, since the
                table is its directory; an SQL or REST catalog keeps the files (the REST spec: no
                purge unless requested; Spark's ``DROP TABLE`` without ``PURGE``).

        Raises:
            NoSuchTableError: there is no such table.
        """
        self._impl.drop_table(name, purge=purge)

    def replace_table(self, name: str, schema: object, partitioned_by: Optional[Sequence[str]] = None,
                      properties: Optional[dict[str, str]] = None, data: object = None,
                      create_if_missing: bool = False) -> Table:
        """Replace a table's definition (and data), keeping its history.

        Iceberg's ``REPLACE TABLE`` / ``CREATE OR REPLACE TABLE [AS SELECT]``; on a Paimon catalog,
        Paimon's: the table is truncated, then the new definition is its next ``schema-N`` and the
        earlier snapshots stay readable.

        Args:
            name: ``"db.table"``.
            schema: The new schema (as ``create_table`` takes it).
            partitioned_by: The new partition terms (a Paimon table's may not change).
            properties: Properties to set.
            data: Rows for the replaced table (Spark DataFrame, pyarrow or pandas data).
            create_if_missing: Create the table if it does not exist.

        Returns:
            Table: the table.

        Raises:
            NotSupportedError: on an SQL or REST catalog.
        """
        if isinstance(self._impl, PaimonCatalog):
            # Paimon's replace: truncate, then the next schema-N; earlier snapshots stay (time travel)
            t = cast(PaimonTable, self._impl.replace_table(name, schema, partitioned_by, properties, create_if_missing))
            if data is not None:
                t.append(data)
            return t
        if not isinstance(self._impl, HadoopCatalog):
            raise NotSupportedError("replace_table", format=self.format,
                                    reason=f"the {self.type} catalog has no replace operation")
        impl = self._impl
        write = None if data is None else (
            lambda meta: write_files_for(meta, data, impl.io, name, lambda: self.spark))
        return cast(Table, impl.replace_table(name, to_schema(schema), partitioned_by, properties, write,
                                              create_if_missing))

    def transaction(self) -> CatalogTransaction:
        """Changes of several Iceberg tables committed all-or-nothing.

        ``with catalog.transaction() as ctx:`` then ``ctx.table("db.a").append(data)``,
        ``ctx.table("db.b").update_properties(...)``: each table's changes are staged on its own
        ``Transaction`` and leaving the block commits every table or none. A SQL catalog swaps every
        table's row in one database transaction; a REST catalog sends one
        ``POST /v1/transactions/commit``.

        Returns:
            CatalogTransaction: the transaction (a context manager; ``commit()`` commits it).

        Raises:
            MultiTableCommitUnsupported: a second table on a Hadoop or object-store catalog, which
                cannot make several tables' versions current in one step.
            VersionConflict: on commit, a table changed since its changes were staged (nothing committed).
        """
        from icefloe.iceberg.transaction import CatalogTransaction

        impl = self._impl
        if isinstance(impl, PaimonCatalog):
            raise NotSupportedError("catalog transactions", format=self.format,
                                    reason="Paimon tables commit one table at a time")
        return CatalogTransaction(impl, lambda name: self._iceberg_table(name).transaction())

    def _iceberg_table(self, name: str) -> IcebergTable:
        # an Iceberg catalog's table factory makes IcebergTables (the backends are built with it)
        return cast(IcebergTable, self.load_table(name))

    def commit_transaction(self, entries: list[TableCommit]) -> dict[str, TableMetadata]:
        """Commit several Iceberg tables' changes all-or-nothing, for a service that received them
        (the REST server's ``POST /v1/transactions/commit``); ``transaction()`` is the way to stage them.

        Args:
            entries: ``(name, operations, base_version, base, changes)`` per table: its
                ``table_operations``, the version and metadata the changes were checked against,
                and the ``Changes`` (updates and requirements).

        Returns:
            dict: the new metadata by table name.

        Raises:
            MultiTableCommitUnsupported: several tables on a Hadoop or object-store catalog.
            VersionConflict: a table moved on since its base (nothing committed).
        """
        impl = self._impl
        if isinstance(impl, PaimonCatalog):
            raise NotSupportedError("catalog transactions", format=self.format,
                                    reason="Paimon tables commit one table at a time")
        return impl.commit_transaction(entries)

    def rename_table(self, name: str, new_name: str) -> None:
        """Rename a table.

        Args:
            name: ``"db.table"``.
            new_name: Its new ``"db.table"`` name.

        Raises:
            RenameNotSupportedError: an Iceberg table of a directory catalog (see
                [Limitations](limitations.md#what-is-refused)).
            TableAlreadyExistsError: ``new_name`` exists.
        """
        self._impl.rename_table(name, new_name)

    # ------------------------------------------------------------------ views (Iceberg's view spec)
    def _views(self, what: str) -> IcebergBackend:
        impl = self._impl
        if isinstance(impl, PaimonCatalog):
            raise NotSupportedError(what, format=self.format, reason=PAIMON_NO_VIEWS)
        return impl

    def view_exists(self, name: str) -> bool:
        """Whether an Iceberg view exists (always False where there are no views).

        Args:
            name: The view's ``"db.view"`` name.
        """
        impl = self._impl
        return not isinstance(impl, PaimonCatalog) and impl.view_exists(name)

    def list_views(self, namespace: str) -> list[str]:
        """The ``"db.view"`` names of a namespace's Iceberg views.

        Args:
            namespace: The namespace (database).
        """
        return [] if isinstance(self._impl, PaimonCatalog) else self._views("SHOW VIEWS").list_views(namespace)

    def load_view(self, name: str) -> LoadedView:
        """A view's ``LoadedView`` (``name``, ``metadata_location``, ``metadata``: its ``ViewMetadata``).

        Args:
            name: The view's ``"db.view"`` name.

        Raises:
            NoSuchViewError: there is no such view.
        """
        return self._views(f"view {name}").load_view(name)

    def view_location(self, name: str) -> str:
        """Where a new view's files would go.

        Args:
            name: The view's ``"db.view"`` name.
        """
        return self._views(f"CREATE VIEW {name}").view_location(name)

    def create_view(self, name: str, metadata: ViewMetadata) -> LoadedView:
        """Create a view (SQL's ``CREATE VIEW`` is the usual way).

        Args:
            name: The view's ``"db.view"`` name.
            metadata: Its first ``ViewMetadata`` (``icefloe.iceberg.view_metadata``).

        Raises:
            ViewAlreadyExistsError: a view or a table has the name.
            NotSupportedError: a directory catalog (views need a SQL or REST catalog).
        """
        return self._views(f"CREATE VIEW {name}").create_view(name, metadata)

    def register_view(self, name: str, metadata_location: str) -> LoadedView:
        """Adopt an Iceberg view whose metadata file was written elsewhere; nothing is copied.

        Args:
            name: The ``"db.view"`` name it gets here.
            metadata_location: Its metadata file (``...metadata.json``, gzipped or not).

        Raises:
            ViewAlreadyExistsError: a view or a table has the name.
            CorruptMetadataError: the file is not valid view metadata.
        """
        return self._views(f"registering view {name}").register_view(name, metadata_location)

    def replace_view(self, name: str, updates: Sequence[Any], view_uuid: str) -> LoadedView:
        """Commit view updates if the view is still the one read.

        Args:
            name: The view's ``"db.view"`` name.
            updates: ``icefloe.iceberg.view_metadata`` updates (``AddViewVersion``, ...).
            view_uuid: The uuid of the view the updates were made for.
        """
        return self._views(f"changing view {name}").replace_view(name, updates, view_uuid)

    def commit_view(self, name: str, updates: Sequence[Any], requirements: Sequence[Any] = ()) -> LoadedView:
        """Commit view updates once the requirements hold (the REST commit).

        Args:
            name: The view's ``"db.view"`` name.
            updates: ``icefloe.iceberg.view_metadata`` updates.
            requirements: What must hold first (``AssertViewUuid``).
        """
        return self._views(f"changing view {name}").commit_view(name, updates, requirements)

    def drop_view(self, name: str) -> None:
        """Drop a view (its metadata files stay).

        Args:
            name: The view's ``"db.view"`` name.
        """
        self._views(f"DROP VIEW {name}").drop_view(name)

    def rename_view(self, name: str, new_name: str) -> None:
        """Rename a view.

        Args:
            name: The view's ``"db.view"`` name.
            new_name: Its new ``"db.view"`` name (a view or a table of that name: ``ViewAlreadyExistsError``).
        """
        self._views(f"ALTER VIEW {name} RENAME").rename_view(name, new_name)

    def register_table(self, name: str, metadata_location: str) -> Table:
        """Adopt an Iceberg table written elsewhere; nothing is copied.

        Args:
            name: The ``"db.table"`` name it gets here.
            metadata_location: Its ``vN.metadata.json``.

        Returns:
            IcebergTable: the table.

        On a REST catalog the server registers it (the REST spec's ``register`` route; ``icefloe
        serve`` adopts only a metadata file inside its warehouse or its allowed locations).

        Raises:
            NotSupportedError: on a Paimon catalog.
            TableAlreadyExistsError: a table or view of that name exists.
        """
        if isinstance(self._impl, PaimonCatalog):
            raise NotSupportedError("register_table", format=self.format,
                                    reason="Paimon tables are adopted by pointing a catalog at their warehouse")
        return cast(Table, self._impl.register_table(name, metadata_location))   # the backend's table factory

    def snapshot_table(self, source: Union[str, Table], name: str, source_catalog: Optional[Catalog] = None,
                       location: Optional[str] = None, properties: Optional[dict[str, Any]] = None,
                       parallelism: Optional[int] = None) -> dict[str, int]:
        """A new Iceberg table over another table's files, the source untouched (Iceberg's ``snapshot``).

        The new table does not own the files: it is created with ``gc.enabled=false``, and icefloe
        deletes no file outside a table's location. See [Migration](migration.md).

        Args:
            source: A Parquet file or directory (Hive-style ``key=value/`` partition directories
                below it), or the name of a Paimon append table of ``source_catalog``.
            name: The new table's ``"db.table"``.
            source_catalog: The catalog ``source`` names a table of.
            location: The catalog's own location for the table (a directory catalog places tables itself).
            properties: Properties of the new table.
            parallelism: Spark tasks that read the files' footers (by default the session's cores).

        Returns:
            dict: ``imported_files_count``.

        Raises:
            MigrationError: the source's files cannot be imported as they are; nothing was created.
        """
        self._needs("iceberg", "snapshot_table")
        return migration.snapshot(self, self._source(source, source_catalog), name, location, properties,
                                  parallelism=parallelism)

    def migrate_table(self, source: str, name: Optional[str] = None, source_catalog: Optional[Catalog] = None,
                      properties: Optional[dict[str, Any]] = None, drop_backup: bool = False,
                      backup_table_name: Optional[str] = None, delete_origin: bool = True,
                      parallelism: Optional[int] = None) -> Union[dict[str, int], bool]:
        """Replace a table of the other format by one of this catalog's, over the same data files.

        On an Iceberg catalog, Iceberg's ``migrate``: ``source`` is a Paimon append table of
        ``source_catalog``; the Iceberg table gets its name and references its files where they
        are; the Paimon table stays as ``backup_table_name`` (default ``<table>_BACKUP_``) unless
        ``drop_backup``. On a Paimon catalog, Paimon's ``migrate_table``: ``source`` is a Parquet
        directory or an Iceberg table of ``source_catalog``; the files move (renamed, not
        rewritten) into the new append table ``name`` (default the source's name), and with
        ``delete_origin`` the source is dropped. See [Migration](migration.md).

        Args:
            source: The source table's ``"db.table"`` (or, into Paimon, a Parquet directory).
            name: Into Paimon: the new table's name.
            source_catalog: The catalog of ``source``.
            properties: The new table's properties (Iceberg) or options (Paimon).
            drop_backup: Into Iceberg: keep no backup.
            backup_table_name: Into Iceberg: the backup's name.
            delete_origin: Into Paimon: drop the source afterwards.
            parallelism: Spark tasks that read the files' footers.

        Returns:
            dict | bool: Iceberg's ``migrated_files_count``; Paimon's result ``True``.

        Raises:
            MigrationError: the source cannot be migrated as it is; nothing was changed.
        """
        if self.format == "iceberg":
            if name is not None or delete_origin is not True:
                raise MigrationError("migrate_table into Iceberg keeps the source's name and takes drop_backup; "
                                     f"{'name' if name is not None else 'delete_origin'} is Paimon's argument")
            if source_catalog is None:
                raise MigrationError("migrate_table into Iceberg needs source_catalog (the Paimon table's)")
            return migration.migrate(self, source_catalog, source, properties, drop_backup, backup_table_name,
                                     parallelism=parallelism)
        if drop_backup or backup_table_name is not None:
            raise MigrationError("migrate_table into Paimon takes delete_origin; "
                                 f"{'drop_backup' if drop_backup else 'backup_table_name'} is Iceberg's argument")
        src = self._source(source, source_catalog)
        return migration.migrate_to_paimon(self, src, name or (source if source_catalog is not None else None),
                                           properties, delete_origin, source_catalog,
                                           source if source_catalog is not None else None, parallelism=parallelism)

    def _source(self, source: Union[str, Table], source_catalog: Optional[Catalog]
                ) -> Union[Table, migration.ParquetDirectory]:
        if source_catalog is not None:
            return source_catalog.load_table(cast(str, source))     # a table name of source_catalog
        if isinstance(source, str):
            return migration.ParquetDirectory.at(source, self.io)
        return source

    def _needs(self, fmt: str, what: str) -> None:
        if self.format != fmt:
            raise NotSupportedError(what, format=self.format, reason=f"it creates {fmt.capitalize()} tables")

    def sql(self, text: str, catalog_name: str = "local", catalogs: Optional[dict[str, Catalog]] = None
            ) -> DataFrame:
        """Run Spark SQL over this catalog's tables: ``SELECT``, ``INSERT``, ``MERGE``, DDL, ``CALL``.

        Use this rather than ``spark.sql``: Spark's own catalogs do not see icefloe's tables (see [Your
        own SparkSession](own-session.md)). Calls share one SQL session per ``catalog_name``, so ``USE db``
        holds for the next ones.

        Args:
            text: One or more statements.
            catalog_name: The catalog's name in the statements (``local.db.t``; ``db.t`` works too).
            catalogs: More catalogs by name, usable in the same statements (``{"other": other_cat}``).

        Returns:
            pyspark.sql.DataFrame: the last statement's result.

        Raises:
            SqlError: the statement cannot run; names the line and column.
        """
        sessions: dict[tuple[str, tuple[tuple[str, int], ...]], SqlSession] = \
            self.__dict__.setdefault("_sql_sessions", {})
        key = (catalog_name, tuple(sorted((str(k), id(v)) for k, v in (catalogs or {}).items())))
        if key not in sessions:
            sessions[key] = SqlSession(self, self.spark, catalog_name, catalogs)
        return cast("DataFrame", sessions[key].sql(text))


def load_table(location: str, spark: Optional[SparkSession] = None, io: Optional[FileIO] = None) -> Table:
    """A table by its directory, its format detected (like Delta's ``forPath``).

    Args:
        location: The table's directory: ``<warehouse>/<db>/<table>`` for Iceberg (it holds
            ``metadata/``), ``<warehouse>/<db>.db/<table>`` for Paimon (it holds ``schema/``).
        spark: Your ``SparkSession`` (see ``Catalog``).
        io: A ``FileIO`` to read and write files through.

    Returns:
        IcebergTable | PaimonTable: the table.

    Raises:
        NoSuchTableError: no Iceberg or Paimon table is there.
    """
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


def sql(spark: SparkSession, text: str, warehouse: Optional[str] = None, catalog: Optional[Catalog] = None,
        format: str = "iceberg", catalog_name: str = "local") -> DataFrame:
    """Run SQL over the icefloe tables of a warehouse or catalog; see ``Catalog.sql``.

    Args:
        spark: The ``SparkSession`` to run on.
        text: One or more statements.
        warehouse: The warehouse directory (when no ``catalog`` is given).
        catalog: A ``Catalog``.
        format: The warehouse's format, ``"iceberg"`` or ``"paimon"``.
        catalog_name: The catalog's name in the statements.

    Returns:
        pyspark.sql.DataFrame: the last statement's result.
    """
    if catalog is None:
        if warehouse is None:
            raise SqlError("icefloe.sql needs a warehouse directory or a catalog")
        catalog = Catalog(warehouse, format=format, spark=spark)
    session = SqlSession(catalog, spark, catalog_name)
    result = cast("DataFrame", session.sql(text))
    session.finish()            # a transaction left open is rolled back, and an error
    return result
