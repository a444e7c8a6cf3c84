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


@pytest.fixture(scope="session")
def s3_server():
    """A real S3 protocol server (moto) on the loopback address, for the whole test session."""
    from tools.s3_server import S3Server

    server = S3Server()
    yield server
    server.stop()


@pytest.fixture
def s3_warehouse(s3_server):
    """A fresh bucket on the S3 server; the warehouse URI in it."""
    return f"s3://{s3_server.new_bucket()}/warehouse"


@pytest.fixture(scope="session")
def gcs_server():
    """A Google Cloud Storage emulator (fake-gcs-server behind tools/gcs_server.py's XML API adapter)
    on the loopback address, for the whole test session."""
    from tools.gcs_server import GCSServer

    server = GCSServer()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def azure_server():
    """Azurite, the Azure Blob Storage emulator, on the loopback address, for the whole test session
    (installed from tools/azurite/package-lock.json on first use)."""
    from tools.azurite_server import AzuriteServer

    server = AzuriteServer()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def hdfs(tmp_path_factory):
    """A real HDFS: Hadoop's MiniDFSCluster (tools/hdfs_cluster.py, its jars fetched by make jvm) on
    the loopback address, for the whole test session; ``hdfs.url()`` is a fresh location on it."""
    from tools.hdfs_cluster import MiniHdfs

    with MiniHdfs(tmp_path_factory.mktemp("minihdfs")) as cluster:
        yield cluster
