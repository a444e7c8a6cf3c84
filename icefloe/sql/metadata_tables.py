"""Metadata tables in SQL: ``db.t.snapshots``, ``local.db.t.files``, ``db.`t$options```...

The tables are the formats' own, built once as Arrow (``Table.metadata_table``): Iceberg's in
``icefloe.iceberg.inspect``, Paimon's system tables in ``icefloe.paimon.system_tables``. Here
are only the names a three-part reference may end in, and the Spark view of a table.
"""
from __future__ import annotations

from icefloe.iceberg.inspect import NAMES as ICEBERG_NAMES
from icefloe.paimon.system_tables import NAMES as PAIMON_NAMES
from icefloe.table.inspect import to_spark

# every name that may follow a table name; whether the table has it is the table's to say
# (``audit_log`` is Paimon's table of rows with their kinds, ``changes`` Iceberg's changelog of
# the rows, ``ro``, ``binlog`` and ``row_tracking`` Paimon's read-optimized rows, rows as arrays and rows
# with their row ids, all read in Spark)
METADATA_TABLES = tuple(dict.fromkeys(ICEBERG_NAMES + PAIMON_NAMES + ("audit_log", "changes", "ro", "binlog",
                                                                                 "row_tracking")))

__all__ = ["METADATA_TABLES", "to_spark"]
