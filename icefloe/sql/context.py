"""What a statement's handler asks of the session running it, and of the session's catalogs.

The handlers (``procedures``, ``catalog_statements``, ``wap``, ...) are called by
``icefloe.sql.session.SqlSession`` with the session itself; they name it by these protocols, so
that they need not import the session module that imports them. ``SqlCatalog`` is the part of
``icefloe.catalog.Catalog`` (a layer above SQL) the handlers call.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ContextManager, Mapping, Optional, Protocol

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from sqlglot import exp

    from icefloe.core.io import FileIO
    from icefloe.iceberg.transaction import CatalogTransaction
    from icefloe.sql.errors import NotSupportedYetError, SqlError
    from icefloe.sql.names import TableRef
    from icefloe.sql.parser import Statement
    from icefloe.table.base import Table


class SqlCatalog(Protocol):
    """The catalog calls of SQL statements (``icefloe.catalog.Catalog``'s signatures)."""

    warehouse: Optional[str]
    format: str
    properties: dict[str, str]

    @property
    def io(self) -> FileIO: ...

    @property
    def spark(self) -> SparkSession: ...

    @property
    def has_system_database(self) -> bool: ...

    @property
    def keeps_namespace_properties(self) -> bool: ...

    def load_table(self, name: str) -> Table: ...

    def table_exists(self, name: str) -> bool: ...

    def table_location(self, name: str) -> str: ...

    def create_table(self, name: str, schema: Any, partitioned_by: Any = None,
                     properties: Optional[dict[str, Any]] = None) -> Table: ...

    def drop_table(self, name: str, purge: Optional[bool] = None) -> None: ...

    def rename_table(self, name: str, new_name: str) -> None: ...

    def register_table(self, name: str, metadata_location: str) -> Any: ...

    def list_namespaces(self) -> list[str]: ...

    def list_tables(self, namespace: str) -> list[str]: ...

    def namespace_exists(self, namespace: str) -> bool: ...

    def create_namespace(self, namespace: str, exist_ok: bool = False,
                         properties: Optional[dict[str, Any]] = None) -> None: ...

    def drop_namespace(self, namespace: str, cascade: bool = False, missing_ok: bool = False) -> None: ...

    def namespace_properties(self, namespace: str) -> dict[str, Any]: ...

    def update_namespace_properties(self, namespace: str, updates: Optional[dict[str, Any]] = None,
                                    removals: Optional[list[str]] = None) -> tuple[list[Any], list[Any], list[Any]]:
        ...

    def system_table(self, name: str) -> pa.Table: ...

    def transaction(self) -> CatalogTransaction: ...


class SqlContext(Protocol):
    """The session a statement runs in (``icefloe.sql.session.SqlSession``)."""

    namespace: Optional[str]        # USE db: where one-part table names are looked up

    @property
    def catalog(self) -> SqlCatalog: ...

    @property
    def catalog_name(self) -> str: ...

    @property
    def catalogs(self) -> Mapping[str, SqlCatalog]: ...

    @property
    def spark(self) -> SparkSession: ...

    @property
    def statement(self) -> Optional[Statement]: ...

    def error(self, reason: str, node: Optional[exp.Expression] = None) -> SqlError: ...

    def not_supported(self, capability: str, node: Optional[exp.Expression] = None) -> NotSupportedYetError: ...

    def refused_as(self, capability: str, node: Optional[exp.Expression] = None) -> ContextManager[None]: ...

    def run_spark(self, sql_text: str) -> DataFrame: ...

    def empty(self) -> DataFrame: ...

    def other_catalog(self, stmt: Statement) -> Optional[str]: ...

    def resolve_name(self, parts: list[str]) -> tuple[Optional[TableRef], bool]: ...

    def resolve(self, table: exp.Table) -> tuple[Optional[TableRef], bool]: ...

    def resolve_or_fail(self, table: exp.Table, allow_metadata: bool = False,
                        allow_ref: bool = False) -> TableRef: ...

    def load(self, ref: TableRef) -> Table: ...

    def table_df(self, ref: TableRef, version: Optional[exp.Version] = None,
                 node: Optional[exp.Expression] = None) -> DataFrame: ...

    def temp_view(self, df: DataFrame, key: str, shown: str) -> str: ...
