"""icefloe: Apache Iceberg v2 and Apache Paimon tables with Apache Spark as the data plane."""
from icefloe.catalog import Catalog
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
