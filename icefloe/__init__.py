"""icefloe: Apache Iceberg v2 and Apache Paimon tables with Apache Spark as the data plane.

The API's names load on first use (``icefloe.Catalog``, ``icefloe.load_table``,
``icefloe.load_catalog``, ``icefloe.sql``): a module of icefloe imported on its own (as Spark's
Python workers import the code of their tasks) does not bring in the catalogs, SQL and both
formats with it, which took half a second per new worker."""
from __future__ import annotations

import sys as _sys
from typing import TYPE_CHECKING, Optional

import icefloe.sql as _sql_package  # noqa: F401 - loaded first, so ``sql`` below stays the function
from icefloe.errors import (
    CommitConflictError, CommitFailedError, CorruptMetadataError, IcefloeError, InvalidNameError,
    NoSuchTableError, RequiredFieldNullError, SchemaError, SchemaMismatchError, TableAlreadyExistsError,
    UnknownTransformError,
)

__version__ = "0.1.0"

__all__ = [
    "Catalog", "IcefloeError", "NoSuchTableError", "TableAlreadyExistsError", "InvalidNameError",
    "SchemaError", "SchemaMismatchError", "RequiredFieldNullError", "UnknownTransformError",
    "CorruptMetadataError", "CommitFailedError", "CommitConflictError",
]


if TYPE_CHECKING:       # what the names below stand for, to type checkers and the API reference
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.catalog import Catalog, load_table as load_table
    from icefloe.config import load_catalog as load_catalog
    from icefloe.spark.session import configure_spark as configure_spark

_LAZY = {
    "Catalog": ("icefloe.catalog", "Catalog"),
    "load_table": ("icefloe.catalog", "load_table"),        # a table by its directory, format detected
    "load_catalog": ("icefloe.config", "load_catalog"),     # by name from .icefloe.yaml / ICEFLOE_CATALOG__*
    "configure_spark": ("icefloe.spark.session", "configure_spark"),    # a user's SparkSession.builder
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'icefloe' has no attribute {name!r}")


def sql(spark: SparkSession, text: str, warehouse: Optional[str] = None, catalog: Optional[Catalog] = None,
        format: str = "iceberg", catalog_name: str = "local") -> DataFrame:
    """SQL over a warehouse: ``icefloe.sql(spark, text, warehouse=...)`` (see ``icefloe.catalog.sql``)."""
    from icefloe.catalog import sql as run

    return run(spark, text, warehouse, catalog, format, catalog_name)


def _attach_to_active_session() -> None:
    """``import icefloe`` in a script that already built its SparkSession: register the
    data source there (with filter pushdown, which icefloe's reader uses to prune files)."""
    if "pyspark.sql" not in _sys.modules:      # no session could have been built
        return
    try:
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None:
            from icefloe.spark.session import attach_data_source

            attach_data_source(active)
    except Exception:  # pragma: no cover - never let an import fail over this
        pass


_attach_to_active_session()
