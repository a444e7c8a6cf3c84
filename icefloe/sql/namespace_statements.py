"""The forms of Spark's namespace statements that carry properties, on an icefloe namespace:
``CREATE NAMESPACE ... [COMMENT '...'] [LOCATION '...'] [WITH (DB)PROPERTIES (...)]``,
``DESCRIBE NAMESPACE [EXTENDED] db`` (Spark's ``info_name``/``info_value`` rows) and ``ALTER
NAMESPACE db SET|UNSET (DB)PROPERTIES (...)`` / ``SET LOCATION``. Spark would run them on its own
session catalog (creating a database of its own, or reporting the namespace missing); the SQL
catalog keeps namespace properties, and a warehouse catalog, whose namespace is a directory,
refuses properties by name. ``DATABASE`` and ``SCHEMA`` are the same word."""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Optional

from icefloe.errors import IcefloeError, NotSupportedError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.sql.statement_context import StatementSession

_KIND = r"(?:NAMESPACE|DATABASE|SCHEMA)"
_NAME = r"((?:`[^`]+`|[A-Za-z_]\w*)(?:\.(?:`[^`]+`|[A-Za-z_]\w*))?)"
_STR = r"'((?:[^'\\]|\\.)*)'"
_CREATE = re.compile(rf"^\s*CREATE\s+{_KIND}\s+(IF\s+NOT\s+EXISTS\s+)?{_NAME}(?:\s+(.*?))?\s*;?\s*$", re.I | re.S)
_DESCRIBE = re.compile(rf"^\s*(?:DESC|DESCRIBE)\s+{_KIND}\s+(EXTENDED\s+)?{_NAME}\s*;?\s*$", re.I)
_PAIR = re.compile(rf"\s*{_STR}\s*=\s*{_STR}\s*(?:,|$)")
_KEY = re.compile(rf"\s*{_STR}\s*(?:,|$)")


def _unquote(text: str) -> str:
    return text.replace("\\'", "'").replace("\\\\", "\\")


def _namespace(sess: StatementSession, name: str) -> Optional[str]:
    parts = [p.strip("`") for p in re.findall(r"`[^`]+`|[^.]+", name)]
    if len(parts) == 2 and parts[0].lower() == sess.catalog_name.lower():
        return parts[1]
    return parts[0] if len(parts) == 1 else None


def _pairs(sess: StatementSession, text: str, what: str) -> dict[str, str]:
    inner = text.strip()
    if not (inner.startswith("(") and inner.endswith(")")):
        raise sess.error(f"{what}: expected ('key' = 'value', ...), got {text.strip()!r}")
    out: dict[str, str] = {}
    inner, at = inner[1:-1], 0
    while at < len(inner.rstrip()):
        m = _PAIR.match(inner, at)
        if not m:
            raise sess.error(f"{what}: {inner[at:].strip()!r} is not 'key' = 'value'")
        out[_unquote(m.group(1))] = _unquote(m.group(2))
        at = m.end()
    return out


def statement(sess: StatementSession, text: str) -> Optional[DataFrame]:
    """The result of a namespace statement with properties on an icefloe namespace; None when the
    text is not one of them (or names another catalog's namespace)."""
    m = _DESCRIBE.match(text)
    if m:
        ns = _namespace(sess, m.group(2))
        if ns is None or not sess.catalog.namespace_exists(ns):
            return None
        return _describe(sess, ns, bool(m.group(1)))
    m = _CREATE.match(text)
    if m and m.group(3):
        ns = _namespace(sess, m.group(2))
        if ns is None:
            return None
        return _create(sess, ns, bool(m.group(1)), m.group(3))
    return None   # ALTER NAMESPACE: catalog_statements.alter_namespace


def _create(sess: StatementSession, ns: str, exist_ok: bool, rest: str) -> DataFrame:
    props: dict[str, str] = {}
    clauses = re.compile(rf"\s*(?:COMMENT\s+{_STR}|LOCATION\s+{_STR}|WITH\s+(?:DB)?PROPERTIES\s*(\((?:[^()']|{_STR})*\)))",
                         re.I | re.S)
    at = 0
    while at < len(rest):
        m = clauses.match(rest, at)
        if not m:
            raise sess.error(f"CREATE NAMESPACE {ns}: unexpected {rest[at:].strip()!r} (COMMENT '...', LOCATION "
                             "'...' and WITH PROPERTIES (...) may follow the name)")
        if m.group(1) is not None:
            props["comment"] = _unquote(m.group(1))
        elif m.group(2) is not None:
            props["location"] = _unquote(m.group(2))
        else:
            props.update(_pairs(sess, m.group(3), f"CREATE NAMESPACE {ns}"))
        at = m.end()
    with sess.refused_as(f"CREATE NAMESPACE {ns} with COMMENT, LOCATION or PROPERTIES"):
        try:
            sess.catalog.create_namespace(ns, exist_ok=exist_ok, properties=props)
        except NotSupportedError:
            raise
        except IcefloeError as e:
            raise sess.error(str(e)) from None
    return sess.empty()


def _describe(sess: StatementSession, ns: str, extended: bool) -> DataFrame:
    props = dict(sess.catalog.namespace_properties(ns))
    location = props.pop("location", None) or os.path.dirname(sess.catalog.table_location(f"{ns}.t"))
    rows = [("Catalog Name", sess.catalog_name), ("Namespace Name", ns), ("Comment", props.pop("comment", "")),
            ("Location", location), ("Owner", props.pop("owner", ""))]
    if extended:
        rows.append(("Properties", "(" + ", ".join(f"({k},{v})" for k, v in sorted(props.items())) + ")"))
    return sess.spark.createDataFrame(rows, "info_name string, info_value string")
