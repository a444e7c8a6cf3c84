# pyright: strict
"""The SQL catalog: Iceberg tables whose current metadata file is a row in a database.

The tables and columns are those of Iceberg's JDBC catalog and pyiceberg's ``SqlCatalog``, so
each of them opens the tables the others create in the same database:

* ``iceberg_tables(catalog_name, table_namespace, table_name, metadata_location,
  previous_metadata_location, iceberg_type)``, one row per table;
* ``iceberg_namespace_properties(catalog_name, namespace, property_key, property_value)``, the
  namespaces made without a table (``exists = true``) and their properties.

A commit writes ``<location>/metadata/<NNNNN>-<uuid>.metadata.json`` (the version number first,
as the other implementations name them; ``.gz.metadata.json`` when the table's
``write.metadata.compression-codec`` is ``gzip``), then swaps the row's ``metadata_location`` from the one
the commit read to the new one in one ``UPDATE ... WHERE metadata_location = <read>``: of two
writers that read the same version exactly one changes the row; the other gets
``VersionConflict`` and its file is deleted. SQLite (a file next to the warehouse) is the embedded
database; any SQLAlchemy URL works (``postgresql://...``).
"""
from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, cast

from icefloe.core.io import FileAlreadyExistsError, FileIO, is_remote
from icefloe.core.names import check_name_part, split_name
from icefloe.core.redact import redact
from icefloe.errors import (
    NamespaceAlreadyExistsError, NoSuchNamespaceError, NoSuchTableError, NoSuchViewError, NotSupportedError,
    TableAlreadyExistsError, VersionConflict, ViewAlreadyExistsError,
    CatalogDatabaseError, IcefloeError, LocationError,
)
from icefloe.iceberg.catalog import HadoopCatalog, read_registered_metadata
from icefloe.iceberg.locations import check_no_overlap, check_table_alone, normalize, read_regular_file
from icefloe.iceberg.maintenance import purge_table_files
from icefloe.iceberg.metadata_files import encode_metadata, is_metadata_file_name, metadata_suffix
from icefloe.iceberg.operations import SwapCommits, TableOperations, apply_commit
from icefloe.iceberg.table import BaseTable
from icefloe.iceberg.table_metadata import TableMetadata, with_metadata_log
from icefloe.iceberg.view_metadata import AssertViewUuid, ViewMetadata, apply_view_updates
from icefloe.iceberg.transaction import TableCommit
from icefloe.iceberg.view_store import LoadedView, read_view_metadata, view_version_of, write_view_metadata

if TYPE_CHECKING:
    import sqlalchemy as sa

TABLES, NAMESPACES = "iceberg_tables", "iceberg_namespace_properties"
TABLE_TYPE, VIEW_TYPE = "TABLE", "VIEW"
_NAME_RE = re.compile(r"^(\d+)-[0-9a-fA-F-]{36}(?:\.gz)?\.metadata\.json(?:\.gz)?$")
_V_RE = re.compile(r"^v(\d+)(?:\.gz)?\.metadata\.json(?:\.gz)?$")


def version_of(path: str) -> int:
    """The version number a metadata file name starts with (``00003-<uuid>`` or ``v3``, compressed
    or not); 0 if none."""
    name = os.path.basename(path)
    m = _NAME_RE.match(name) or _V_RE.match(name)
    return int(m.group(1)) if m else 0


class _Schema:
    """The two catalog tables as SQLAlchemy Core objects (created when missing)."""

    def __init__(self, engine: sa.Engine):
        import sqlalchemy as sa
        from sqlalchemy import exc as sa_exc

        self.engine = engine
        md = sa.MetaData()
        self.tables = sa.Table(
            TABLES, md,
            sa.Column("catalog_name", sa.String(255), primary_key=True, nullable=False),
            sa.Column("table_namespace", sa.String(255), primary_key=True, nullable=False),
            sa.Column("table_name", sa.String(255), primary_key=True, nullable=False),
            sa.Column("metadata_location", sa.String(1000), nullable=True),
            sa.Column("previous_metadata_location", sa.String(1000), nullable=True),
            sa.Column("iceberg_type", sa.String(5), nullable=True))
        self.namespaces = sa.Table(
            NAMESPACES, md,
            sa.Column("catalog_name", sa.String(255), primary_key=True, nullable=False),
            sa.Column("namespace", sa.String(255), primary_key=True, nullable=False),
            sa.Column("property_key", sa.String(255), primary_key=True, nullable=False),
            sa.Column("property_value", sa.String(1000), nullable=False))
        try:
            md.create_all(engine)          # only what is missing
            with engine.connect() as c:
                c.execute(sa.select(self.tables.c.metadata_location).limit(1)).fetchall()
        except sa_exc.SQLAlchemyError as e:
            raise CatalogDatabaseError(f"catalog database {engine.url.render_as_string(hide_password=True)}: "
                                       f"{str(e).splitlines()[0]}") from None
        self.typed = self._has_type_column()

    def _has_type_column(self) -> bool:
        import sqlalchemy as sa
        from sqlalchemy import exc as sa_exc

        try:
            with self.engine.connect() as c:
                c.execute(sa.text(f"SELECT iceberg_type FROM {TABLES} WHERE 1 = 0")).fetchall()
            return True
        except sa_exc.SQLAlchemyError:     # a catalog made before views (Iceberg's v0 schema)
            return False

    def table_filter(self) -> Optional[sa.ColumnElement[bool]]:
        c = self.tables.c
        return (c.iceberg_type == TABLE_TYPE) | c.iceberg_type.is_(None) if self.typed else None


class SqlTableOperations(SwapCommits):
    """One table's metadata through the catalog database (the ``TableOperations`` protocol;
    versions are the numbers metadata file names start with)."""

    uses_version_hint = False

    def __init__(self, io: FileIO, location: str, schema: _Schema, catalog_name: str, namespace: str,
                 table: str):
        self.io = io
        self.location = location.rstrip("/")
        self.metadata_dir = f"{self.location}/metadata"
        self._db, self._key = schema, (catalog_name, namespace, table)
        self._paths: dict[int, str] = {}

    def _where(self) -> sa.ColumnElement[bool]:
        c = self._db.tables.c
        cond = (c.catalog_name == self._key[0]) & (c.table_namespace == self._key[1]) & (c.table_name == self._key[2])
        f = self._db.table_filter()
        return cond if f is None else cond & f

    def current_location(self) -> Optional[str]:
        import sqlalchemy as sa

        with self._db.engine.connect() as conn:
            row = conn.execute(sa.select(self._db.tables.c.metadata_location).where(self._where())).first()
        return row[0] if row else None

    def metadata_path(self, version: int) -> str:
        if version in self._paths:
            return self._paths[version]
        for name in self.io.list_dir(self.metadata_dir):
            if version_of(name) == version and is_metadata_file_name(name):
                return f"{self.metadata_dir}/{name}"
        return f"{self.metadata_dir}/{version:05d}-missing.metadata.json"

    def _list_versions(self) -> list[int]:
        return sorted({version_of(n) for n in self.io.list_dir(self.metadata_dir) if is_metadata_file_name(n)})

    def current_version(self) -> Optional[int]:
        loc = self.current_location()
        return None if loc is None else version_of(loc)

    def exists(self) -> bool:
        return self.current_location() is not None

    def load(self, version: Optional[int] = None) -> tuple[int, TableMetadata]:
        path = self.current_location() if version is None else self.metadata_path(version)
        if path is None:
            raise NoSuchTableError(f"no Iceberg table {'.'.join(self._key[1:])} in the catalog database")
        try:
            data = read_regular_file(self.io, path)
        except FileNotFoundError as e:
            raise NoSuchTableError(f"metadata file {path} is missing") from e
        v = version_of(path)
        self._paths[v] = path
        return v, TableMetadata.loads(data, path)

    def commit(self, base_version: Optional[int], base: Optional[TableMetadata], new: TableMetadata) -> int:
        """Write ``new`` as version base_version+1 and swap the row to it; ``VersionConflict``
        when the row no longer names the version the commit read."""
        from sqlalchemy import exc as sa_exc

        staged = self.stage(base_version, base, new)
        try:
            with self._db.engine.begin() as conn:
                self.swap(conn, staged)
        except sa_exc.IntegrityError:
            self.io.delete(staged.path)
            raise VersionConflict(f"table {'.'.join(self._key[1:])} was created by another writer") from None
        except BaseException:
            self.io.delete(staged.path)
            raise
        self.last_written = staged.metadata
        return self.swapped(staged)

    def stage(self, base_version: Optional[int], base: Optional[TableMetadata], new: TableMetadata) -> "StagedVersion":
        """Write ``new`` as the file of version base_version+1, not yet current (``swap`` makes it so)."""
        version = (base_version or 0) + 1
        suffix = metadata_suffix(new.properties, ".".join(self._key[1:]))   # an unknown codec: nothing written
        base_path = self._paths.get(base_version) if base_version is not None else None
        if base is not None and base_version is not None:
            base_path = base_path or self.current_location()
            max_log = int(new.properties.get("write.metadata.previous-versions-max", "100"))
            new = with_metadata_log(new, base_path, base.last_updated_ms, max_log)
        path = f"{self.metadata_dir}/{version:05d}-{uuid.uuid4()}{suffix}"
        try:
            self.io.write_bytes(path, encode_metadata(new.dumps(), path), overwrite=False)
        except FileAlreadyExistsError as e:   # pragma: no cover - a fresh uuid
            raise VersionConflict(f"metadata file {path} exists") from e
        return StagedVersion(version, path, base_path, base is None, new)

    def swap(self, conn: sa.Connection, staged: "StagedVersion") -> None:
        """Point the table's row at a staged version inside the database transaction ``conn``;
        ``VersionConflict`` when the row no longer names the version it was staged on."""
        import sqlalchemy as sa

        t = self._db.tables
        if staged.create:
            values = dict(catalog_name=self._key[0], table_namespace=self._key[1], table_name=self._key[2],
                          metadata_location=staged.path, previous_metadata_location=None)
            if self._db.typed:
                values["iceberg_type"] = TABLE_TYPE
            conn.execute(sa.insert(t).values(**values))
            return
        done = conn.execute(sa.update(t).where(self._where() & (t.c.metadata_location == staged.base_path))
                            .values(metadata_location=staged.path, previous_metadata_location=staged.base_path))
        if done.rowcount != 1:
            raise VersionConflict(f"{'.'.join(self._key[1:])} was committed by another writer "
                                  f"(it no longer points at {staged.base_path})")

    def swapped(self, staged: "StagedVersion") -> int:
        self._paths[staged.version] = staged.path
        return staged.version


@dataclass
class StagedVersion:
    """A metadata file written for a commit, before the row points at it."""
    version: int
    path: str
    base_path: Optional[str]
    create: bool
    metadata: TableMetadata


class SqlCatalog(HadoopCatalog):
    """Iceberg tables registered in a catalog database (see the module doc); tables live under
    ``<warehouse>/<db>/<table>`` unless registered elsewhere."""

    def __init__(self, warehouse: str, uri: Optional[str] = None, catalog_name: str = "default",
                 io: Optional[FileIO] = None, table_type: Optional[Callable[[str, TableOperations], BaseTable]] = None
                 ) -> None:
        import sqlalchemy as sa
        from sqlalchemy import exc as sa_exc

        super().__init__(warehouse, io, **({"table_type": table_type} if table_type else {}))
        if uri is None and is_remote(self.warehouse):
            raise CatalogDatabaseError(f"a SQL catalog whose warehouse is on an object store ({self.warehouse}) needs "
                                       "uri= naming its database (sqlite:///<local file> or postgresql://...)")
        self.uri = uri or f"sqlite:///{os.path.join(self.warehouse, 'catalog.db')}"
        self.catalog_name = catalog_name
        if self.uri.startswith("sqlite:///"):
            os.makedirs(os.path.dirname(os.path.abspath(self.uri[len("sqlite:///"):])) or ".", exist_ok=True)
        try:
            engine = sa.create_engine(self.uri)
        except (sa_exc.ArgumentError, ImportError) as e:
            raise CatalogDatabaseError(redact(f"catalog uri {self.uri!r}: {e}")) from None
        self.db = _Schema(engine)

    # the Hadoop catalog's operations are file-based ones; a SQL catalog's table goes through its row
    def _ops(self, name: str) -> SqlTableOperations:  # pyright: ignore[reportIncompatibleMethodOverride]
        db, tbl = split_name(name)
        ops = SqlTableOperations(self.io, self.table_location(name), self.db, self.catalog_name, db, tbl)
        ops.other_table_locations = lambda: self.other_table_locations(name)
        loc = ops.current_location()
        if loc is not None:         # a table placed or registered elsewhere: its next metadata goes under its location
            ops.location = self.table_dir(loc)
            ops.metadata_dir = f"{ops.location}/metadata"
        return ops

    def table_dir(self, metadata_location: str) -> str:
        """The location of the table whose current metadata file is ``metadata_location``: the
        directory above it when the file is in a ``metadata`` directory (where every commit writes
        it), else the location the metadata names (a file registered from anywhere, as Iceberg's
        catalogs register one: the table lives where its metadata says)."""
        parent = os.path.dirname(metadata_location)
        if os.path.basename(parent) == "metadata":
            return os.path.dirname(parent)
        try:
            return TableMetadata.loads(read_regular_file(self.io, metadata_location), metadata_location).location
        except (OSError, IcefloeError, ValueError):
            return os.path.dirname(parent)

    def place_new_table(self, ops: TableOperations, name: str, location: str) -> None:
        """A SQL catalog finds a table by its row, so a new table may live at ``location`` (Iceberg's
        JDBC catalog takes a table location too): absolute, on the warehouse's file system, and
        overlapping no other table (checked when the table is created)."""
        where = normalize(location, "location")
        if is_remote(where) != is_remote(self.warehouse) or \
                (is_remote(where) and where.split("://")[0] != self.warehouse.split("://")[0]):
            raise LocationError(f"location of {name}: {location} is not on the warehouse's file system "
                                f"({self.warehouse}), which the catalog's file IO reaches")
        ops.location = where.rstrip("/")
        ops.metadata_dir = f"{ops.location}/metadata"

    def check_new_location(self, name: str, location: str) -> None:
        """``LocationError`` when a new table's directory overlaps a table the catalog has (one
        registered from files inside the warehouse); ``TableAlreadyExistsError`` when a view has
        the name (tables and views share names)."""
        if self.view_exists(name):
            raise TableAlreadyExistsError(f"cannot create table {name}: a view of that name exists (a table and "
                                          "a view cannot share a name)")
        check_no_overlap(location, self.other_table_locations(name), f"table location of {name}")

    def other_table_locations(self, name: Optional[str] = None) -> list[str]:
        """The locations of the catalog's tables other than ``name`` (the directory above each
        one's metadata directory)."""
        return [self.table_dir(str(loc)) for ns, t, loc in self._rows() if loc and f"{ns}.{t}" != name]

    def _rows(self, *where: sa.ColumnElement[bool]) -> Sequence[sa.Row[Any, Any, Any]]:
        import sqlalchemy as sa

        t = self.db.tables
        cond = t.c.catalog_name == self.catalog_name
        for w in where:
            cond = cond & w
        f = self.db.table_filter()
        with self.db.engine.connect() as conn:
            return conn.execute(sa.select(t.c.table_namespace, t.c.table_name, t.c.metadata_location)
                                .where(cond if f is None else cond & f)).fetchall()

    def load_table(self, name: str) -> BaseTable:
        ops = self._ops(name)
        loc = ops.current_location()
        if loc is None:
            raise NoSuchTableError(f"table {name} does not exist in catalog {self.catalog_name!r} ({self.uri})")
        ops.location = self.table_dir(loc)      # a registered table lives where its metadata says
        ops.metadata_dir = f"{ops.location}/metadata"
        return self.table_type(name, ops)

    def register_table(self, name: str, metadata_location: str) -> BaseTable:
        """Adopt a table written elsewhere: its row names ``metadata_location``; nothing is copied."""
        import sqlalchemy as sa
        from sqlalchemy import exc as sa_exc

        db, tbl = split_name(name)
        meta = read_registered_metadata(self.io, metadata_location)   # validate first
        if self.view_exists(name):
            raise TableAlreadyExistsError(f"cannot register table {name}: a view of that name exists (a table and "
                                          "a view cannot share a name)")
        metadata_location = normalize(metadata_location, "metadata-location") \
            if not is_remote(metadata_location) else metadata_location
        others = self.other_table_locations(name)
        check_no_overlap(self.table_dir(metadata_location), others, f"table location of {name}")
        check_no_overlap(meta.location, others, f"table location of {name}")
        values = dict(catalog_name=self.catalog_name, table_namespace=db, table_name=tbl,
                      metadata_location=metadata_location, previous_metadata_location=None)
        if self.db.typed:
            values["iceberg_type"] = TABLE_TYPE
        try:
            with self.db.engine.begin() as conn:
                conn.execute(sa.insert(self.db.tables).values(**values))
        except sa_exc.IntegrityError:
            raise TableAlreadyExistsError(f"table {name} already exists") from None
        return self.load_table(name)

    # ------------------------------------------------------------------ multi-table commits
    atomic_multi_table = True

    def commit_transaction(self, entries: list[TableCommit]) -> dict[str, TableMetadata]:
        """Commit several tables' changes all-or-nothing: each ``(name, ops, base_version, base,
        changes)`` is applied to its base and written as that table's next metadata file, then every
        table's row is swapped in ONE database transaction, each only if it still names its base.
        Any failure (a requirement, a rule of the builder, another writer first) commits nothing and
        deletes the files written. Returns the new metadata by table name."""
        from sqlalchemy import exc as sa_exc

        staged: list[tuple[str, SqlTableOperations, StagedVersion]] = []
        try:
            for name, ops, version, base, changes in entries:
                sql_ops = cast(SqlTableOperations, ops)       # the tables of this catalog
                staged.append((name, sql_ops, sql_ops.stage(version, base, apply_commit(base, changes))))
            with self.db.engine.begin() as conn:
                for _name, ops, sv in staged:
                    ops.swap(conn, sv)
        except BaseException as e:
            for _name, ops, sv in staged:
                ops.io.delete(sv.path)
            if isinstance(e, sa_exc.IntegrityError):
                raise VersionConflict("a table of the transaction was created by another writer") from None
            raise
        return {name: ops.load(ops.swapped(sv))[1] for name, ops, sv in staged}

    # ------------------------------------------------------------------ namespaces
    def namespace_path(self, namespace: str) -> str:
        return f"{self.warehouse}/{check_name_part(namespace, 'namespace')}"

    def list_namespaces(self) -> list[str]:
        import sqlalchemy as sa

        n = self.db.namespaces
        with self.db.engine.connect() as conn:
            named = {r[0] for r in conn.execute(sa.select(n.c.namespace).where(
                n.c.catalog_name == self.catalog_name)).fetchall()}
        return sorted(named | {r[0] for r in self._rows()})

    def namespace_exists(self, namespace: str) -> bool:
        return namespace in self.list_namespaces()

    def create_namespace(self, namespace: str, exist_ok: bool = False,
                         properties: Optional[Mapping[Any, Any]] = None) -> None:
        import sqlalchemy as sa

        check_name_part(namespace, "namespace")
        if self.namespace_exists(namespace):
            if exist_ok:
                return
            raise NamespaceAlreadyExistsError(f"namespace {namespace} already exists in catalog {self.catalog_name!r}")
        props = {"exists": "true", **{str(k): str(v) for k, v in (properties or {}).items()}}
        with self.db.engine.begin() as conn:
            conn.execute(sa.insert(self.db.namespaces), [
                dict(catalog_name=self.catalog_name, namespace=namespace, property_key=k, property_value=v)
                for k, v in props.items()])
        self.io.makedirs(self.namespace_path(namespace))

    def namespace_properties(self, namespace: str) -> dict[str, str]:
        """The namespace's properties (kept in iceberg_namespace_properties, as the JDBC catalog does)."""
        import sqlalchemy as sa

        if not self.namespace_exists(namespace):
            raise NoSuchNamespaceError(f"namespace {namespace} does not exist in catalog {self.catalog_name!r}")
        n = self.db.namespaces
        with self.db.engine.connect() as conn:
            rows = conn.execute(sa.select(n.c.property_key, n.c.property_value).where(
                (n.c.catalog_name == self.catalog_name) & (n.c.namespace == namespace))).fetchall()
        return {k: v for k, v in rows if k != "exists"}

    def update_namespace_properties(self, namespace: str, updates: Optional[Mapping[str, Any]] = None,
                                    removals: Optional[list[str]] = None
                                    ) -> tuple[list[str], list[str], list[str]]:
        """Set and remove namespace properties in one transaction: (updated, removed, missing)."""
        import sqlalchemy as sa

        current = self.namespace_properties(namespace)
        n = self.db.namespaces
        key = (n.c.catalog_name == self.catalog_name) & (n.c.namespace == namespace)
        removed = [k for k in (removals or []) if k in current]
        missing = [k for k in (removals or []) if k not in current]
        with self.db.engine.begin() as conn:
            for k in list(removed) + [k for k in (updates or {}) if k in current]:
                conn.execute(sa.delete(n).where(key & (n.c.property_key == k)))
            for k, v in (updates or {}).items():
                conn.execute(sa.insert(n).values(catalog_name=self.catalog_name, namespace=namespace,
                                                 property_key=str(k), property_value=str(v)))
        return sorted(updates or {}), removed, missing

    def remove_namespace(self, namespace: str) -> None:
        """Forget an empty namespace: its rows, and its directory when nothing is left in it
        (``Catalog.drop_namespace`` drops its tables first)."""
        import sqlalchemy as sa

        n = self.db.namespaces
        with self.db.engine.begin() as conn:
            conn.execute(sa.delete(n).where((n.c.catalog_name == self.catalog_name) & (n.c.namespace == namespace)))
        path = self.namespace_path(namespace)
        if self.io.is_dir(path) and not self.io.list_dir(path):
            self.io.delete_tree(path)

    def list_tables(self, namespace: str) -> list[str]:
        if not self.namespace_exists(namespace):
            raise NoSuchNamespaceError(f"namespace {namespace} does not exist in catalog {self.catalog_name!r}")
        return sorted(f"{ns}.{t}" for ns, t, _ in self._rows(self.db.tables.c.table_namespace == namespace))

    # ------------------------------------------------------------------ drop and rename
    def drop_table(self, name: str, purge: Optional[bool] = None) -> None:
        """Remove the table's row; with ``purge=True`` also the files its metadata refers to inside
        its location (left out: no purge, as Spark's ``DROP TABLE`` and pyiceberg's ``drop_table``) (``maintenance.purge_table_files``: refused, before anything is deleted, for
        a table whose location overlaps another's)."""
        import sqlalchemy as sa

        t = self.load_table(name)
        if purge:
            version, meta = t.ops.load()
            check_table_alone(t.ops, meta)
            purge_table_files(t.ops, version, meta)
        with self.db.engine.begin() as conn:
            gone = conn.execute(sa.delete(self.db.tables).where(
                cast(SqlTableOperations, t.ops)._where())).rowcount  # pyright: ignore[reportPrivateUsage] (same module)
        if not gone:
            raise NoSuchTableError(f"table {name} does not exist")

    def rename_table(self, name: str, new_name: str) -> None:
        """Rename: the row gets the new name; the files stay where they are (their paths are in
        the metadata), as Iceberg's JDBC catalog renames."""
        import sqlalchemy as sa
        from sqlalchemy import exc as sa_exc

        old = self.load_table(name)
        db, tbl = split_name(new_name)
        if not self.namespace_exists(db):
            raise NoSuchNamespaceError(f"namespace {db} does not exist in catalog {self.catalog_name!r}")
        if self.view_exists(new_name):
            raise TableAlreadyExistsError(f"cannot rename table {name} to {new_name}: a view of that name exists")
        try:
            with self.db.engine.begin() as conn:
                done = conn.execute(sa.update(self.db.tables).where(
                    cast(SqlTableOperations, old.ops)._where())  # pyright: ignore[reportPrivateUsage] (same module)
                                    .values(table_namespace=db, table_name=tbl)).rowcount
        except sa_exc.IntegrityError:
            raise TableAlreadyExistsError(f"table {new_name} already exists") from None
        if done != 1:
            raise NoSuchTableError(f"table {name} does not exist")

    # ------------------------------------------------------------------ views
    # Rows of iceberg_tables with iceberg_type = 'VIEW', as Iceberg's JdbcCatalog keeps them (its
    # schema V1); a database of the older schema (no iceberg_type column) has no views.
    def _need_views(self) -> None:
        if not self.db.typed:
            raise NotSupportedError("views", reason=f"the catalog database {redact(self.uri)} has Iceberg's older "
                                    "JDBC schema without the iceberg_type column; views need schema V1")

    def _view_where(self, name: str) -> sa.ColumnElement[bool]:
        db, tbl = split_name(name)
        c = self.db.tables.c
        return ((c.catalog_name == self.catalog_name) & (c.table_namespace == db) & (c.table_name == tbl)
                & (c.iceberg_type == VIEW_TYPE))

    def _view_location(self, name: str):
        import sqlalchemy as sa

        if not self.db.typed:
            return None
        with self.db.engine.connect() as conn:
            row = conn.execute(sa.select(self.db.tables.c.metadata_location).where(self._view_where(name))).first()
        return row[0] if row else None

    def view_exists(self, name: str) -> bool:
        return self._view_location(name) is not None

    def view_location(self, name: str) -> str:
        """Where a new view's files go: the directory a table of that name would have."""
        return self.table_location(name)

    def list_views(self, namespace: str) -> list[str]:
        import sqlalchemy as sa

        if not self.namespace_exists(namespace):
            raise NoSuchNamespaceError(f"namespace {namespace} does not exist in catalog {self.catalog_name!r}")
        if not self.db.typed:
            return []
        c = self.db.tables.c
        with self.db.engine.connect() as conn:
            rows = conn.execute(sa.select(c.table_name).where(
                (c.catalog_name == self.catalog_name) & (c.table_namespace == namespace)
                & (c.iceberg_type == VIEW_TYPE))).fetchall()
        return sorted(f"{namespace}.{r[0]}" for r in rows)

    # (the Hadoop catalog refuses every view call, whatever its arguments; this one has views)
    def load_view(self, name: str) -> LoadedView:  # pyright: ignore[reportIncompatibleMethodOverride]
        path = self._view_location(name)
        if path is None:
            raise NoSuchViewError(f"view {name} does not exist in catalog {self.catalog_name!r}")
        try:
            return LoadedView(name, path, read_view_metadata(self.io, path))
        except FileNotFoundError:
            raise NoSuchViewError(f"view {name}: its metadata file {path} is missing") from None

    def create_view(self, name: str, meta: ViewMetadata) -> LoadedView:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Register a new view whose first metadata is ``meta`` (``ViewAlreadyExistsError`` when a
        view or a table has the name)."""
        return self._add_view(name, meta, None)

    def register_view(self, name: str, metadata_location: str) -> LoadedView:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Adopt a view whose metadata file is ``metadata_location`` (read and checked first): its
        row names that file; nothing is copied (``ViewAlreadyExistsError`` as ``create_view``)."""
        self._need_views()
        return self._add_view(name, read_view_metadata(self.io, metadata_location), metadata_location)

    def _add_view(self, name: str, meta: ViewMetadata, registered: Optional[str]) -> LoadedView:
        """The view's row, naming ``registered`` or else a first metadata file written here."""
        import sqlalchemy as sa
        from sqlalchemy import exc as sa_exc

        self._need_views()
        db, tbl = split_name(name)
        verb = "register" if registered else "create"
        if not self.namespace_exists(db):
            raise NoSuchNamespaceError(f"namespace {db} does not exist in catalog {self.catalog_name!r}")
        if self.table_exists(name):
            raise ViewAlreadyExistsError(f"cannot {verb} view {name}: a table of that name exists (a table and a "
                                         "view cannot share a name)")
        if self.view_exists(name):
            raise ViewAlreadyExistsError(f"view {name} already exists")
        path = registered or write_view_metadata(self.io, meta, 1)
        try:
            with self.db.engine.begin() as conn:
                conn.execute(sa.insert(self.db.tables).values(
                    catalog_name=self.catalog_name, table_namespace=db, table_name=tbl, metadata_location=path,
                    previous_metadata_location=None, iceberg_type=VIEW_TYPE))
        except sa_exc.IntegrityError:
            if not registered:
                self.io.delete(path)
            raise ViewAlreadyExistsError(f"cannot {verb} view {name}: the name was taken meanwhile") from None
        except BaseException:
            if not registered:
                self.io.delete(path)
            raise
        return LoadedView(name, path, meta)

    def commit_view(self, name: str, updates: Sequence[object],  # pyright: ignore[reportIncompatibleMethodOverride]
                    requirements: Sequence[AssertViewUuid] = ()) -> LoadedView:
        """Apply ``updates`` to the view's current metadata (after checking ``requirements``) and
        make the result current by swapping the row from the file read to the new one; another
        writer first means the updates are checked and applied again on its version."""
        import sqlalchemy as sa

        for _attempt in range(10):
            base = self.load_view(name)
            for r in requirements:
                r.check(base.metadata)
            new = apply_view_updates(base.metadata, list(updates))
            path = write_view_metadata(self.io, new, view_version_of(base.metadata_location) + 1)
            try:
                with self.db.engine.begin() as conn:
                    done = conn.execute(sa.update(self.db.tables).where(
                        self._view_where(name) & (self.db.tables.c.metadata_location == base.metadata_location))
                        .values(metadata_location=path, previous_metadata_location=base.metadata_location)).rowcount
            except BaseException:
                self.io.delete(path)
                raise
            if done == 1:
                return LoadedView(name, path, new)
            self.io.delete(path)
        raise VersionConflict(f"view {name}: lost the race for a new metadata version 10 times")

    def replace_view(self, name: str, updates: Sequence[object], view_uuid: str) -> LoadedView:  # pyright: ignore[reportIncompatibleMethodOverride]
        return self.commit_view(name, updates, [AssertViewUuid(view_uuid)])

    def drop_view(self, name: str) -> None:
        """Forget the view (its metadata files stay, as Iceberg's catalogs leave them)."""
        import sqlalchemy as sa

        if not self.db.typed:
            raise NoSuchViewError(f"view {name} does not exist in catalog {self.catalog_name!r}")
        with self.db.engine.begin() as conn:
            gone = conn.execute(sa.delete(self.db.tables).where(self._view_where(name))).rowcount
        if not gone:
            raise NoSuchViewError(f"view {name} does not exist in catalog {self.catalog_name!r}")

    def rename_view(self, name: str, new_name: str) -> None:
        import sqlalchemy as sa
        from sqlalchemy import exc as sa_exc

        if not self.view_exists(name):
            raise NoSuchViewError(f"view {name} does not exist in catalog {self.catalog_name!r}")
        db, tbl = split_name(new_name)
        if not self.namespace_exists(db):
            raise NoSuchNamespaceError(f"namespace {db} does not exist in catalog {self.catalog_name!r}")
        if self.table_exists(new_name):
            raise ViewAlreadyExistsError(f"cannot rename view {name} to {new_name}: a table of that name exists")
        try:
            with self.db.engine.begin() as conn:
                done = conn.execute(sa.update(self.db.tables).where(self._view_where(name))
                                    .values(table_namespace=db, table_name=tbl)).rowcount
        except sa_exc.IntegrityError:
            raise ViewAlreadyExistsError(f"cannot rename view {name} to {new_name}: {new_name} exists") from None
        if done != 1:
            raise NoSuchViewError(f"view {name} does not exist in catalog {self.catalog_name!r}")
