"""Paimon's Spark procedures over a whole catalog rather than one table: ``compact_database``.

``CALL sys.compact_database(including_databases, including_tables, excluding_tables, options)``
compacts every table whose database matches ``including_databases`` and whose ``db.table`` name
matches ``including_tables`` and not ``excluding_tables`` (Java regular expressions, matched
whole; Python's ``re`` reads the ones people write the same way), as ``CALL sys.compact`` does
one table. A table whose compaction fails is counted, not fatal, as in Paimon; the result row
says how many succeeded and failed.
"""
from __future__ import annotations

import re

from icefloe.errors import IcefloeError
from icefloe.sql.call_args import bind_args
from icefloe.sql.errors import NotSupportedYetError, SqlError
from icefloe.sql.parser import Call
from icefloe.sql.translate import literal_value
from icefloe.table.capabilities import PAIMON_PROCEDURES

PARAMS = ("including_databases", "including_tables", "excluding_tables", "options")
PROCEDURES = ("compact_database",)


def _pattern(sess, args: dict, key: str, default):
    node = args.get(key)
    if node is None:
        return default
    try:
        text = literal_value(node)
    except ValueError:
        text = sess.run_spark(f"SELECT {node.sql('spark')}").first()[0]
    if text is None or not str(text).strip():
        return default
    try:
        return re.compile(str(text))
    except re.error as e:
        raise SqlError(f"compact_database: argument {key!r} is not a regular expression: {e}") from None


def compact_database(sess, call: Call):
    """Compact the catalog's tables the arguments select; one row: Paimon's result message."""
    args = bind_args(call, PARAMS)
    options = args.get("options")
    if options is not None and str(literal_value(options) or "").strip():
        raise NotSupportedYetError(f"CALL sys.compact_database with options {options.sql('spark')} (icefloe "
                                   "compacts each table with its own options, as CALL sys.compact does)")
    databases = _pattern(sess, args, "including_databases", re.compile(".*"))
    including = _pattern(sess, args, "including_tables", re.compile(".*"))
    excluding = _pattern(sess, args, "excluding_tables", None)
    success = failed = 0
    for db in sess.catalog.list_namespaces():
        if not databases.fullmatch(db):
            continue
        for name in sess.catalog.list_tables(db):
            if not including.fullmatch(name) or (excluding is not None and excluding.fullmatch(name)):
                continue
            t = sess.catalog.load_table(name)
            if not t.supports(PAIMON_PROCEDURES):       # Paimon compacts its own tables only
                continue
            try:
                t.compact()
                success += 1
            except IcefloeError:
                failed += 1
    return sess.spark.createDataFrame([(f"Compact database finished. Success: {success}, Failed: {failed}",)],
                                      "result string")
