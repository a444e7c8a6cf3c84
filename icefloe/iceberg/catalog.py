"""The Hadoop catalog: ``<warehouse>/<db>/<table>/`` directories with Iceberg metadata."""
from __future__ import annotations

import os
from typing import Optional

from icefloe.core.io import FileIO, LOCAL
from icefloe.core.names import check_name_part, is_valid_name_part, split_name
from icefloe.core.types import Schema
from icefloe.errors import (
    InvalidNameError, NoSuchNamespaceError, NoSuchTableError, TableAlreadyExistsError,
)
from icefloe.iceberg.hadoop import HadoopTableOperations
from icefloe.iceberg.partitioning import build_spec
from icefloe.iceberg.table import IcebergTable
from icefloe.iceberg.table_metadata import TableMetadata, new_table_metadata

class HadoopCatalog:
    def __init__(self, warehouse: str, spark=None, io: Optional[FileIO] = None):
        self.warehouse = os.path.abspath(warehouse)
        self.io = io or LOCAL
        self.spark = spark

    def table_location(self, name: str) -> str:
        db, tbl = split_name(name)
        return f"{self.warehouse}/{db}/{tbl}"

    def _ops(self, name: str) -> HadoopTableOperations:
        return HadoopTableOperations(self.io, self.table_location(name))

    def table_exists(self, name: str) -> bool:
        return self._ops(name).exists()

    def create_table(self, name: str, schema: Schema, partitioned_by=None,
                     properties: Optional[dict] = None) -> IcebergTable:
        ops = self._ops(name)
        if ops.exists():
            raise TableAlreadyExistsError(f"table {name} already exists at {ops.location}")
        spec = build_spec(schema, partitioned_by)
        meta = new_table_metadata(ops.location, schema, spec, properties or {})
        try:
            ops.commit(None, None, meta)
        except Exception as e:
            if ops.exists():
                raise TableAlreadyExistsError(f"table {name} was created concurrently") from e
            raise
        return IcebergTable(name, ops, self.spark)

    def load_table(self, name: str) -> IcebergTable:
        ops = self._ops(name)
        if not ops.exists():
            raise NoSuchTableError(f"table {name} does not exist (looked in {ops.location})")
        return IcebergTable(name, ops, self.spark)

    def register_table(self, name: str, metadata_location: str) -> IcebergTable:
        """Adopt a table written by another engine: its metadata becomes our version 1."""
        ops = self._ops(name)
        if ops.exists():
            raise TableAlreadyExistsError(f"table {name} already exists at {ops.location}")
        data = self.io.read_bytes(metadata_location)
        meta = TableMetadata.loads(data, metadata_location)  # validates before anything is written
        ops.commit(None, None, meta)
        return IcebergTable(name, ops, self.spark)

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

    def drop_table(self, name: str, purge: bool = True) -> None:
        ops = self._ops(name)
        if not ops.exists():
            raise NoSuchTableError(f"table {name} does not exist")
        _, meta = ops.load()
        inside = os.path.abspath(meta.location).startswith(ops.location)
        if purge and inside:
            self.io.delete_tree(ops.location)
        else:
            self.io.delete_tree(ops.metadata_dir)
