"""Shared fixtures: one SparkSession for the whole test session, fresh warehouses per test."""
import os
import sys

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("ICEFLOE_SHUFFLE_PARTITIONS", "4")


@pytest.fixture(scope="session")
def spark():
    from icefloe.spark.session import get_spark

    return get_spark()


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path / "warehouse")


@pytest.fixture
def catalog(warehouse, spark):
    import icefloe

    return icefloe.Catalog(warehouse, spark=spark)
