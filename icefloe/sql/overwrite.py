"""``INSERT OVERWRITE`` on icefloe tables: Spark's static and dynamic partition overwrite.

``spark.sql.sources.partitionOverwriteMode`` decides, as it does for Iceberg's
Spark runtime:

* ``static`` (Spark's default): the rows matching the PARTITION clause's
  constants are replaced (``PARTITION (p = 'x')`` replaces partition ``x``; no
  clause replaces the whole table), even when the query returns no rows;
* ``dynamic``: the partitions the query writes rows to are replaced, the others
  stay (an unpartitioned table is replaced whole); a query without rows
  changes nothing.

The PARTITION clause's constants are evaluated by Spark (cast to the column
types) and handed to ``Table.overwrite(df, partition=...)``; dynamic mode is
``Table.overwrite(df, dynamic=True)``. How each format replaces partitions is
the table's business (``icefloe.table.overwrite`` for Iceberg, the Paimon
commit's OVERWRITE snapshot for Paimon).
"""
from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from icefloe.core.types import TimestamptzType
from icefloe.errors import NotSupportedError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from sqlglot import exp

    from icefloe.core.types.model import NestedField
    from icefloe.sql.statement_context import StatementSession
    from icefloe.table.base import Table

    #: the PARTITION clause's constant columns: {name: (field, value node, value cast to the column's type, as SQL)}
    StaticColumns = dict[str, tuple[NestedField, exp.Expression, str]]

STATIC, DYNAMIC = "static", "dynamic"
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def overwrite_mode(sess: StatementSession) -> str:
    try:
        mode = sess.spark.conf.get("spark.sql.sources.partitionOverwriteMode", STATIC)
    except Exception:
        mode = STATIC
    return (mode or STATIC).lower()


def _value(sess: StatementSession, f: NestedField, value_sql: str) -> Any:
    """The PARTITION clause's value (``value_sql``, already cast to column ``f``'s type) as a
    Python value; an instant (timestamptz) as an aware UTC datetime, whatever the session zone."""
    if f.field_type == TimestamptzType():
        micros = sess.run_spark(f"SELECT unix_micros(CAST(({value_sql}) AS TIMESTAMP)) AS v").collect()[0][0]
        return None if micros is None else _EPOCH + _dt.timedelta(microseconds=micros)
    return sess.run_spark(f"SELECT ({value_sql}) AS v").collect()[0][0]


def overwrite(sess: StatementSession, t: Table, df: DataFrame, static: StaticColumns, node: exp.Expression) -> None:
    """Replace the part of ``t`` that ``static`` (PARTITION clause constants) and the mode select."""
    mode = overwrite_mode(sess)
    try:
        if mode == DYNAMIC:
            t.overwrite(df, dynamic=True)
        elif static:
            t.overwrite(df, partition={name: _value(sess, f, value_sql)
                                       for name, (f, _node, value_sql) in static.items()})
        else:
            t.overwrite(df)
    except NotSupportedError as e:
        raise sess.not_supported(str(e), node) from None
