"""icefloe: Apache Iceberg v2 and Apache Paimon tables with Apache Spark as the data plane."""
from icefloe.catalog import Catalog
from icefloe.catalog import load_table as load_table  # a table by its directory, format detected
from icefloe.config import load_catalog as load_catalog  # a catalog by name from .icefloe.yaml / ICEFLOE_CATALOG__*
from icefloe.catalog import sql as sql  # SQL over a warehouse: icefloe.sql(spark, text, warehouse=...)
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


def _attach_to_active_session() -> None:
    """``import icefloe`` in a script that already built its SparkSession: register the
    data source there (with filter pushdown, which icefloe's reader uses to prune files)."""
    try:
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None:
            from icefloe.spark.session import attach_data_source

            attach_data_source(active)
    except Exception:  # pragma: no cover - never let an import fail over this
        pass


_attach_to_active_session()
