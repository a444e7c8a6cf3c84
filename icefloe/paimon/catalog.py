# pyright: strict
"""Paimon's filesystem catalog: ``<warehouse>/<db>.db/<table>/`` directories.

A database is a directory named ``<db>.db``; a table is a directory in it with a
``schema/`` directory holding ``schema-0``. The same layout Java Paimon's and
pypaimon's filesystem catalogs use, so any of them can open the warehouse.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, cast

import pyarrow as pa

from icefloe.core.io import FileAlreadyExistsError, FileIO, normalize_location
from icefloe.core.object_store import file_io_for
from icefloe.core.names import check_name_part
from icefloe.core.names import split_name as _split_name
from icefloe.core.types import Schema, parse_schema
from icefloe.errors import (
    NoSuchNamespaceError, NoSuchTableError, NotSupportedError, SchemaError, TableAlreadyExistsError,
)
from icefloe.paimon import types as pt
from icefloe.paimon.branches import branch_path
from icefloe.paimon.ownership import check_owns_files, drop_metadata, shared_with
from icefloe.paimon.schema import (
    SCHEMA_DIR, TableSchema, create_schema, latest_schema, list_schema_ids, schema_path, validate,
)
from icefloe.paimon.table import FileStoreTable

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

# what a catalog makes of a table it creates or loads: (name, location, io) -> the table
TableFactory = Callable[[str, str, FileIO], FileStoreTable]

DB_SUFFIX = ".db"
DEFAULT_DATABASE = "default"     # the database Paimon's Spark and Flink catalogs create when opened

# What Paimon's own filesystem catalog refuses as well (its Hive, JDBC and REST catalogs differ): the
# reasons icefloe gives when it refuses the same statements
NO_VIEWS = ("a Paimon filesystem catalog has no views, as Paimon's own has none (Paimon keeps views in a Hive, "
            "JDBC or REST catalog)")
NO_ALTER_DATABASE = ("a Paimon filesystem catalog's database is the directory <warehouse>/<db>.db and keeps no "
                     "properties or location of its own; Paimon's filesystem catalog refuses ALTER DATABASE too "
                     "(a Hive, JDBC or REST catalog keeps them)")
HIVE_MIGRATION = ("Paimon migrates the tables of a Hive metastore (source_type 'hive') only in a Paimon Hive catalog "
                  "and refuses it in others ('Only support Hive Catalog'); a filesystem warehouse has no metastore")


BRANCH_MARK = "$branch_"       # db.t$branch_b: branch b of table db.t, as Paimon's catalogs name it


def split_name(name: str) -> tuple[str, str]:
    return _split_name(name, "database")


def branch_of(name: str) -> tuple[str, Optional[str]]:
    """(table name, branch) of ``db.t$branch_b``; (name, None) for a plain name."""
    if isinstance(name, str) and BRANCH_MARK in name:  # pyright: ignore[reportUnnecessaryIsInstance] - callers pass anything
        base, _, branch = name.partition(BRANCH_MARK)
        return base, branch
    return name, None


def _to_fields(schema: object) -> list[pt.DataField]:
    """Paimon fields (fresh ids) of a DDL string, an icefloe Schema, a pyarrow.Schema or a Spark
    StructType; TINYINT and SMALLINT stay so (the shared type system has them)."""
    type_name = type(schema).__name__
    if isinstance(schema, (list, tuple)):
        items = cast("Sequence[object]", schema)
        if items and all(isinstance(f, pt.DataField) for f in items):
            return list(cast("Sequence[pt.DataField]", items))  # Paimon's own fields (CREATE TABLE ... LIKE): types as they are
    if isinstance(schema, str):
        return pt.fields_from_core_schema(parse_schema(schema))
    if isinstance(schema, Schema):
        return pt.fields_from_core_schema(schema)
    if isinstance(schema, pa.Schema):
        return pt.fields_from_arrow_schema(schema)
    if type_name == "StructType":
        return pt.fields_from_spark_schema(cast("StructType", schema))  # told by name: pyspark loads on use
    raise SchemaError(f"cannot use {type_name} as a table schema")


class PaimonCatalog:
    """Tables of ``table_type`` under ``warehouse``: ``FileStoreTable``, or a factory ``(name, location, io)``
    of a table with a data plane (the user-facing table, which holds the Spark session)."""

    def __init__(self, warehouse: str, io: Optional[FileIO] = None, table_type: TableFactory = FileStoreTable):
        self.warehouse = normalize_location(warehouse)
        self.io = io or file_io_for(self.warehouse)
        self.table_type = table_type

    def database_path(self, db: str) -> str:
        return f"{self.warehouse}/{check_name_part(db, 'database')}{DB_SUFFIX}"

    def namespace_path(self, namespace: str) -> str:
        return self.database_path(namespace)

    def table_location(self, name: str) -> str:
        db, tbl = split_name(name)
        return f"{self.database_path(db)}/{tbl}"

    def table_exists(self, name: str) -> bool:
        name, branch = branch_of(name)
        location = self.table_location(name)
        if branch is not None:
            return bool(list_schema_ids(self.io, branch_path(location, branch)))
        return bool(list_schema_ids(self.io, location))

    def create_table(self, name: str, schema: object, partitioned_by: Optional[Sequence[str]] = None,
                     properties: Optional[Mapping[str, Any]] = None,
                     primary_key: Optional[Sequence[str]] = None) -> FileStoreTable:
        """Create a table. ``partitioned_by``: partition key column names; ``properties``:
        Paimon table options (``bucket``, ``bucket-key``, ``merge-engine``, ...); a primary
        key (``primary_key`` or the ``primary-key`` option, comma-separated) makes it a
        primary-key table, whose key columns become NOT NULL."""
        location = self.table_location(name)
        if self.table_exists(name):
            raise TableAlreadyExistsError(f"table {name} already exists at {location}")
        table_schema = _new_schema(0, schema, partitioned_by, properties, primary_key)
        self.io.makedirs(self.database_path(split_name(name)[0]))
        create_schema(self.io, location, table_schema)
        return self.table_type(name, location, self.io)

    def replace_table(self, name: str, schema: object, partitioned_by: Optional[Sequence[str]] = None,
                      properties: Optional[Mapping[str, Any]] = None, create_if_missing: bool = False) -> FileStoreTable:
        """Paimon's REPLACE TABLE: the table is truncated (an OVERWRITE snapshot), then the new
        definition is committed as the next ``schema-N``; the location and every earlier snapshot
        stay, readable by time travel. Not atomic, as in Paimon. The partition keys cannot change
        (as in Paimon: drop and create the table instead)."""
        if not self.table_exists(name):
            if create_if_missing:
                return self.create_table(name, schema, partitioned_by, properties)
            raise NoSuchTableError(f"table {name} does not exist, so it cannot be replaced")
        table = self.load_table(name)
        latest = latest_schema(self.io, table.location)
        if latest is None:
            raise NoSuchTableError(f"Paimon table {name} has no schema file, so it cannot be replaced")
        new = _new_schema(latest.id + 1, schema, partitioned_by, properties)   # validated before any change
        if list(new.partition_keys) != list(latest.partition_keys):
            raise SchemaError(f"REPLACE TABLE of Paimon table {name} cannot change the partition keys (old="
                              f"{list(latest.partition_keys)}, new={list(new.partition_keys)}), as in Paimon; "
                              "drop the table and create it again (nothing was changed)")
        if table.current_snapshot() is not None:
            table.commit([], overwrite=True)                   # truncate: one OVERWRITE snapshot
        while True:                                            # the next schema-N, create-if-absent
            try:
                self.io.write_bytes(schema_path(table.location, new.id), new.to_json().encode("utf-8"),
                                    overwrite=False)
                break
            except FileAlreadyExistsError:
                new = dataclasses.replace(new, id=new.id + 1)
        return self.load_table(name)

    def load_table(self, name: str) -> FileStoreTable:
        name, branch = branch_of(name)
        location = self.table_location(name)
        if not list_schema_ids(self.io, location):
            raise NoSuchTableError(f"table {name} does not exist (no Paimon schema under {location})")
        table = self.table_type(name, location, self.io)
        return table if branch is None else table.branch_table(branch)

    def list_namespaces(self) -> list[str]:
        return sorted(n[:-len(DB_SUFFIX)] for n in self.io.list_dir(self.warehouse)
                      if n.endswith(DB_SUFFIX) and self.io.is_dir(f"{self.warehouse}/{n}"))

    def list_tables(self, namespace: str) -> list[str]:
        db_path = self.database_path(namespace)
        if not self.io.is_dir(db_path):
            raise NoSuchNamespaceError(f"database {namespace} does not exist in {self.warehouse}")
        out: list[str] = []
        for n in self.io.list_dir(db_path):
            if n.startswith(".") or not self.io.is_dir(f"{db_path}/{n}"):
                continue
            if list_schema_ids(self.io, f"{db_path}/{n}"):
                out.append(f"{namespace}.{n}")
        return sorted(out)

    def rename_table(self, name: str, new_name: str) -> None:
        """Move the table directory, as Paimon's filesystem catalog does: a Paimon table records
        its manifests, manifest lists and data files by names relative to the table directory
        (files with an external path keep pointing there), so the moved table is complete."""
        src, dst = self.table_location(name), self.table_location(new_name)
        if not self.table_exists(name):
            raise NoSuchTableError(f"table {name} does not exist")
        if self.table_exists(new_name) or self.io.is_dir(dst) or self.io.exists(dst):
            raise TableAlreadyExistsError(f"cannot rename {name} to {new_name}: {dst} already exists")
        db = self.database_path(split_name(new_name)[0])
        if not self.io.is_dir(db):
            raise NoSuchNamespaceError(f"cannot rename {name} to {new_name}: database "
                                       f"{split_name(new_name)[0]} does not exist in {self.warehouse}")
        current = latest_schema(self.io, src)
        check_owns_files(current.options if current else {}, src, f"rename it to {new_name} (which moves its "
                         "directory, the shared data files with it)")
        self.io.rename(src, dst)

    def drop_table(self, name: str, purge: Optional[bool] = None) -> None:
        """Delete the table directory (a Paimon table's data lives inside it); ``purge=False`` is
        refused, since nothing of the table could be kept. A table whose data files another table
        references (``ownership.SHARED_WITH``, the backup of a ``migrate``) loses its metadata only,
        whatever ``purge`` says: its data files are the other table's."""
        location = self.table_location(name)
        if not self.io.is_dir(f"{location}/{SCHEMA_DIR}"):
            raise NoSuchTableError(f"table {name} does not exist")
        current = latest_schema(self.io, location)
        if current is not None and shared_with(current.options) is not None:
            drop_metadata(self.io, location)
            return
        if purge is False:
            raise NotSupportedError("drop without purge", name, "paimon",
                                    "a Paimon table is its directory in the warehouse: dropping it deletes its files")
        self.io.delete_tree(location)


def _new_schema(schema_id: int, schema: object, partitioned_by: Optional[Sequence[object]],
                properties: Optional[Mapping[str, Any]], primary_key: Optional[Sequence[str]] = None) -> TableSchema:
    """A validated table schema of a definition (fresh field ids), as CREATE TABLE gives it."""
    fields = _to_fields(schema)
    keys: list[str] = []
    for k in partitioned_by or []:
        if not isinstance(k, str) or "(" in k:
            raise SchemaError(f"Paimon partition keys are column names, got {k!r}")
        keys.append(pt.field_by_name(fields, k.strip()).name)
    options = {str(k): str(v) for k, v in (properties or {}).items()}
    comment = options.pop("comment", None)      # the schema's comment field, not an option (as Paimon's catalogs)
    pk_text = options.pop("primary-key", None)
    if primary_key is not None and pk_text is not None:
        raise SchemaError("give the primary key once: primary_key= or the 'primary-key' option")
    pk_names = list(primary_key) if primary_key is not None else \
        [k.strip() for k in (pk_text or "").split(",") if k.strip()]
    pk = [pt.field_by_name(fields, k).name for k in pk_names]
    fields = [f.copy(nullable=False) if f.name in pk else f for f in fields]
    table_schema = TableSchema(id=schema_id, fields=fields, partition_keys=keys, primary_keys=pk,
                               options=options, comment=comment)
    validate(table_schema)
    return table_schema
