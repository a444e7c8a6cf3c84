"""Fixtures of the Spark-side tests."""
import pytest


@pytest.fixture
def small_splits(spark):
    """Spark cuts files into ranges of 2 KB (``spark.sql.files.maxPartitionBytes``) for the test,
    so a small file spreads over several tasks unless it is read whole."""
    key = "spark.sql.files.maxPartitionBytes"
    old = spark.conf.get(key)
    spark.conf.set(key, "2048")
    yield
    spark.conf.set(key, old)
