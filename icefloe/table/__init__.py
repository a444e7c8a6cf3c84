# pyright: strict
"""The user-facing tables: one contract (``Table``) over both formats."""
from icefloe.table.base import Table
from icefloe.table.iceberg import IcebergTable
from icefloe.table.paimon import PaimonTable

__all__ = ["Table", "IcebergTable", "PaimonTable"]
