"""The ``icefloe`` Spark data source as Spark sees it: batch reads and writes
(``icefloe.spark.datasource``) and Structured Streaming (``icefloe.spark.streaming``)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from icefloe.spark.datasource import BatchDataSource, IcefloeReader
from icefloe.spark.streaming import IcefloeStreamReader, IcefloeStreamWriter

if TYPE_CHECKING:
    from pyspark.sql.types import StructType


class IcefloeDataSource(BatchDataSource):
    """``format("icefloe")``: batch and streaming, Iceberg and Paimon tables by location."""

    def streamWriter(self, schema: StructType, overwrite: bool) -> IcefloeStreamWriter:
        return IcefloeStreamWriter(dict(self.options), schema, overwrite)

    def streamReader(self, schema: StructType) -> IcefloeStreamReader:
        return IcefloeStreamReader(dict(self.options), schema)


class DiscoveredDataSource(IcefloeDataSource):
    """The data source as Spark finds it on its own (module ``pyspark_icefloe``), in sessions
    icefloe never configured: batch reads take no pushed filters, since such a session may
    have Python filter pushdown off. ``import icefloe`` registers the pruning reader instead."""

    def reader(self, schema: StructType) -> IcefloeReader:
        return IcefloeReader(dict(self.options), schema)
