"""Spark SQL for icefloe tables.

``Catalog.sql(text)`` and ``icefloe.sql(spark, text, warehouse=...)`` run SQL
text: statements about icefloe tables are carried out through the table API,
queries reading them run on Spark over temporary views, and everything else
goes to ``spark.sql`` unchanged. Modules by concern:

* ``parser``: text -> statements (sqlglot's Spark dialect + Iceberg extensions)
* ``names``: ``db.t`` / ``local.db.t`` / ``db.t.snapshots`` resolution
* ``session``: dispatch, temp views and time travel, error positions
* ``ddl``, ``dml``, ``procedures``: the statements, carried out through the ``Table``
  contract (a format's ``NotSupportedError`` becomes the statement's ``NotSupportedYetError``)
* ``metadata_tables``: ``snapshots``, ``history``, ``files``... as rows
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from icefloe.sql.errors import NotSupportedYetError, SqlError

if TYPE_CHECKING:
    from icefloe.sql.session import SqlSession


def __getattr__(name: str) -> type[SqlSession]:
    if name == "SqlSession":        # loaded on first use: it brings in the parser and both formats
        from icefloe.sql.session import SqlSession

        return SqlSession
    raise AttributeError(f"module 'icefloe.sql' has no attribute {name!r}")


__all__ = ["SqlSession", "SqlError", "NotSupportedYetError"]
