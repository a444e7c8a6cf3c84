"""Fixtures of the Paimon tests: one SparkSession for the whole run, fresh warehouses."""
import os
import sys

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("ICEFLOE_SHUFFLE_PARTITIONS", "4")


@pytest.fixture(scope="session")
def paimon_spark():
    from icefloe.spark.session import get_spark

    return get_spark()


@pytest.fixture
def paimon_warehouse(tmp_path):
    return str(tmp_path / "warehouse")


@pytest.fixture
def paimon_catalog(paimon_warehouse):
    """A catalog for Arrow-only tests (no Spark session is started)."""
    from icefloe.catalog import Catalog

    return Catalog(paimon_warehouse, "paimon")


@pytest.fixture
def spark_catalog(paimon_warehouse, paimon_spark):
    from icefloe.catalog import Catalog

    return Catalog(paimon_warehouse, "paimon", paimon_spark)


@pytest.fixture
def pypaimon_catalog(paimon_warehouse):
    """pypaimon's filesystem catalog over the same warehouse."""
    from tools.pypaimon_env import remote_module
    CatalogFactory = remote_module("pypaimon").CatalogFactory

    return CatalogFactory.create({"warehouse": paimon_warehouse})


@pytest.fixture(scope="session")
def paimon_java(tmp_path_factory):
    """Apache Paimon's Java engine (its Spark 3.5 runtime, ``tools/jvm_runtime.py``), one process for
    the whole test session, its ``paimon`` catalog over one warehouse; ``paimon_java.warehouse``
    is where icefloe's side of a test opens its catalog."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from tools.jvm_runtime import JvmRuntime

    with JvmRuntime(tmp_path_factory.mktemp("paimon-java"), engine="paimon") as runtime:
        runtime.sql("CREATE DATABASE IF NOT EXISTS db")
        yield runtime


@pytest.fixture(scope="session")
def paimon_bundle(tmp_path_factory):
    """Apache Paimon's Java engine without Spark (``paimon-bundle``, its table API; ``tools/paimon_java.py``),
    one JVM for the whole test session over one warehouse with the database ``db``."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from tools.paimon_java import PaimonJava

    with PaimonJava(tmp_path_factory.mktemp("paimon-bundle")) as engine:
        engine.create_database("db")
        yield engine
