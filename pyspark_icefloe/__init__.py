"""Spark finds Python data sources in installed modules named ``pyspark_*`` that define
``DefaultSource``: this one makes ``format("icefloe")`` work in any SparkSession whose
Python has icefloe installed, with no import and no registration."""
from icefloe.spark.source import DiscoveredDataSource as DefaultSource

__all__ = ["DefaultSource"]
