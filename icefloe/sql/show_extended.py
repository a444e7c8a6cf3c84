"""``SHOW TABLE EXTENDED [IN|FROM ns] LIKE 'pattern' [PARTITION (k = v, ...)]`` in an icefloe
namespace, with the rows Spark's own command gives for a catalog's tables: ``namespace``,
``tableName``, ``isTemporary`` and ``information``, a ``Key: value`` line per detail (catalog,
namespace, table, type, provider, location, comment, properties, partition columns of a table
whose catalog manages partitions, and the schema's tree). Temporary views matching the pattern
follow, as Spark lists them.

The pattern is Spark's: ``*`` matches any characters, ``|`` separates alternatives, case is
ignored. With ``PARTITION (...)`` the pattern names one table, and the row describes that
partition (``Partition Values: [k=v, ...]``); Paimon's Spark catalog manages partitions, Iceberg's
does not, so the partition form is refused there by name, as Spark refuses it.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional

from icefloe.core.redact import redact_properties
from icefloe.core.types.spark import to_spark_schema
from icefloe.errors import IcefloeError
from icefloe.table.capabilities import SHOW_PARTITIONS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.sql.statement_context import StatementSession
    from icefloe.table.base import Table

#: a row of the statement: namespace, tableName, isTemporary, information
Row = tuple[Any, Any, bool, Any]

_NAME = r"((?:`[^`]+`|[A-Za-z_][\w$]*)(?:\.(?:`[^`]+`|[A-Za-z_][\w$]*))*)"
_STATEMENT = re.compile(rf"^\s*SHOW\s+TABLE\s+EXTENDED\s+(?:(?:IN|FROM)\s+{_NAME}\s+)?LIKE\s+"
                        r"(?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\")\s*(PARTITION\s*\(.*\))?\s*;?\s*$",
                        re.I | re.S)
_ITEM = re.compile(r"""^\s*`?([A-Za-z_]\w*)`?\s*=\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([^,\s]+))\s*$""")
_COLUMNS = "namespace string, tableName string, isTemporary boolean, information string"


def _parts(name: str) -> list[str]:
    return [p.strip("`") for p in re.findall(r"`[^`]+`|[^.]+", name)]


def matches(pattern: str, name: str) -> bool:
    """Spark's table-name pattern: alternatives split by ``|``, ``*`` any characters, no case."""
    for alternative in pattern.split("|"):
        regex = ".*".join(re.escape(piece) for piece in alternative.strip().split("*"))
        if re.fullmatch(regex, name, re.I):
            return True
    return False


def show_table_extended(sess: StatementSession, text: str) -> Optional[DataFrame]:
    """The DataFrame of the statement when it names an icefloe namespace; None when not (Spark
    answers it for its own catalog)."""
    m = _STATEMENT.match(text)
    if not m:                  # not a form of the statement: Spark's parser says what is wrong
        return None
    ns = _parts(m.group(1)) if m.group(1) else ([sess.namespace] if sess.namespace else None)
    if ns and len(ns) == 2 and ns[0].lower() == sess.catalog_name.lower():
        ns = ns[1:]
    if not ns or len(ns) != 1 or not sess.catalog.namespace_exists(ns[0]):
        return None
    namespace = ns[0]
    pattern = next(g for g in (m.group(2), m.group(3)) if g is not None)
    if m.group(4):
        return _partition(sess, namespace, pattern, m.group(4))
    rows: list[Row] = []
    for name in sorted(sess.catalog.list_tables(namespace)):
        table_name = name.split(".", 1)[1]
        if matches(pattern, table_name):
            t = sess.catalog.load_table(name)
            rows.append((namespace, table_name, False, _information(sess, namespace, table_name, t) + "\n"))
    rows.extend(_temporary_views(sess, pattern))
    return sess.spark.createDataFrame(rows, _COLUMNS)


def _information(sess: StatementSession, namespace: str, name: str, t: Table) -> str:
    details: list[tuple[str, object]] = [("Catalog", sess.catalog_name), ("Namespace", namespace), ("Table", name), ("Type", "MANAGED"),
               ("Provider", t.format), ("Location", t.location)]
    props = redact_properties(dict(t.properties or {}))      # shown, never a secret's value
    if props.get("comment"):
        details.append(("Comment", props["comment"]))
    shown = sorted((k, v) for k, v in props.items() if k not in ("comment", "schema.name-mapping.default"))
    if shown:
        details.append(("Table Properties", "[" + ", ".join(f"{k}={v}" for k, v in shown) + "]"))
    if t.supports(SHOW_PARTITIONS) and t.partitioning():      # a catalog that manages partitions (Paimon's)
        details.append(("Partition Provider", "Catalog"))
        details.append(("Partition Columns", "[" + ", ".join(f"`{c}`" for c in t.partitioning()) + "]"))
    details.append(("Schema", to_spark_schema(t.schema, with_ids=False).treeString()))
    return "\n".join(f"{k}: {v}" for k, v in details)


def _temporary_views(sess: StatementSession, pattern: str) -> list[Row]:
    """Spark's rows for the session's temporary views matching ``pattern``."""
    try:
        rows = sess.spark.sql("SHOW TABLE EXTENDED IN default LIKE " + _quote(pattern)).collect()
    except Exception:  # noqa: BLE001 - no session catalog default namespace: no temporary views to add
        return []
    return [(r[0], r[1], True, r[3]) for r in rows if r[2]]


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _spec(sess: StatementSession, text: str) -> dict[str, str]:
    inner = text[text.index("(") + 1:text.rindex(")")]
    out: dict[str, str] = {}
    for item in inner.split(","):
        im = _ITEM.match(item)
        if not im:
            raise sess.error(f"SHOW TABLE EXTENDED: {item.strip()!r} is not key = value in PARTITION (...)")
        out[im.group(1).lower()] = next(v for v in im.groups()[1:] if v is not None)
    return out


def _partition(sess: StatementSession, namespace: str, name: str, spec_text: str) -> DataFrame:
    """The row of ``SHOW TABLE EXTENDED ... LIKE 'table' PARTITION (k = v, ...)``."""
    full = f"{namespace}.{name}"
    try:
        t = sess.catalog.load_table(full)
    except IcefloeError:
        raise sess.error(f"SHOW TABLE EXTENDED ... PARTITION: unknown table {full} (with PARTITION the LIKE "
                         "pattern names one table)") from None
    if not t.supports(SHOW_PARTITIONS):
        raise sess.not_supported(f"SHOW TABLE EXTENDED ... PARTITION on {t.format} table {full} (its Spark catalog "
                                 f"does not manage partitions; SELECT * FROM {full}.partitions lists them)")
    keys = list(t.partitioning())
    if not keys:
        raise sess.error(f"SHOW TABLE EXTENDED ... PARTITION: table {full} is not partitioned")
    wanted = _spec(sess, spec_text)
    if sorted(wanted) != sorted(k.lower() for k in keys):
        raise sess.error(f"SHOW TABLE EXTENDED ... PARTITION: the spec ({', '.join(wanted)}) must name every "
                         f"partition key of {full} ({', '.join(keys)})")
    found: Optional[dict[str, str]] = None
    for part in t.metadata_table("partitions").column("partition").to_pylist():
        values = dict(p.split("=", 1) for p in part.split("/"))
        if all(values.get(k) == wanted[k.lower()] for k in keys):
            found = values
    if found is None:
        spec = ", ".join(f"{k}={wanted[k.lower()]}" for k in keys)
        raise sess.error(f"SHOW TABLE EXTENDED ... PARTITION: table {full} has no partition ({spec})")
    information = "Partition Values: [" + ", ".join(f"{k}={found[k]}" for k in keys) + "]"
    return sess.spark.createDataFrame([(namespace, name, False, information + "\n")], _COLUMNS)
