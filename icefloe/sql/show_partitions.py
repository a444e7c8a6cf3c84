"""``SHOW PARTITIONS t [PARTITION (k = v, ...)]`` on a Paimon table, as Paimon's Spark catalog
answers it: one row per partition with live files, column ``partition``, ``k1=v1/k2=v2`` (the
partition's directory name). A ``PARTITION`` spec keeps the partitions matching its keys."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from icefloe.sql.errors import SqlError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.sql.statement_context import StatementSession
    from icefloe.table.paimon import PaimonTable

_SPEC = re.compile(r"^\s*PARTITION\s*\((.*)\)\s*$", re.I | re.S)
_ITEM = re.compile(r"""^\s*`?([A-Za-z_][\w]*)`?\s*=\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([^,\s]+))\s*$""")


def _spec(text: str) -> dict[str, str]:
    m = _SPEC.match(text)
    if not m:
        raise SqlError(f"SHOW PARTITIONS: expected PARTITION (key = value, ...) after the table name, got {text.strip()!r}")
    out: dict[str, str] = {}
    for item in m.group(1).split(","):
        im = _ITEM.match(item)
        if not im:
            raise SqlError(f"SHOW PARTITIONS: {item.strip()!r} is not key = value")
        value = next(v for v in im.groups()[1:] if v is not None)
        out[im.group(1).lower()] = value
    return out


def show_partitions(sess: StatementSession, t: PaimonTable, rest: Optional[str]) -> DataFrame:
    """The DataFrame of ``SHOW PARTITIONS`` for Paimon table ``t``; ``rest`` is what follows the name."""
    from pyspark.sql.types import StringType, StructField, StructType

    keys = list(t.partition_keys)
    if not keys:
        raise SqlError(f"SHOW PARTITIONS: table {t.name} is not partitioned")
    wanted = _spec(rest) if rest and rest.strip() else {}
    unknown = [k for k in wanted if k not in {x.lower() for x in keys}]
    if unknown:
        raise SqlError(f"SHOW PARTITIONS: {', '.join(unknown)} is not a partition key of {t.name} (keys: "
                       f"{', '.join(keys)})")
    rows: list[tuple[str]] = []
    for part in t.metadata_table("partitions").column("partition").to_pylist():
        values = dict(p.split("=", 1) for p in part.split("/"))
        if all(values.get(k) == v for k, v in ((x, wanted.get(x.lower())) for x in keys) if v is not None):
            rows.append((part,))
    return sess.spark.createDataFrame(sorted(rows), StructType([StructField("partition", StringType(), False)]))
