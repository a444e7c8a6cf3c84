"""Fixtures of the SQL tests."""
import pytest

import icefloe


@pytest.fixture
def pcat(warehouse, spark):
    """A Paimon catalog in a fresh warehouse, on the session's SparkSession."""
    return icefloe.Catalog(warehouse, format="paimon", spark=spark)
