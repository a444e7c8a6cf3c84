"""Paimon's Spark procedures over a whole catalog rather than one table: ``compact_database``.

``CALL sys.compact_database(including_databases, including_tables, excluding_tables, options)``
compacts every table whose database matches ``including_databases`` and whose ``db.table`` name
matches ``including_tables`` and not ``excluding_tables`` (Java regular expressions, matched
whole; Python's ``re`` reads the ones people write the same way), as ``CALL sys.compact`` does
one table. ``options`` are Paimon's dynamic options for those compactions (``'target-file-size=128m'``;
see ``paimon_compact_procedures.COMPACT_OPTIONS``, any other key is refused before anything is
compacted). A table whose compaction fails is counted, not fatal, as in Paimon; the result row
says how many succeeded and failed.
"""
from __future__ import annotations

import re

from icefloe.errors import IcefloeError
from icefloe.sql.call_args import bind_args
from icefloe.sql.errors import SqlError
from icefloe.sql.paimon_compact_procedures import compaction_target
from icefloe.sql.parser import Call
from icefloe.sql.translate import literal_value
from icefloe.table.capabilities import PAIMON_PROCEDURES

PARAMS = ("including_databases", "including_tables", "excluding_tables", "options")
PROCEDURES = ("compact_database",)


def _text(sess, node):
    try:
        return literal_value(node)
    except ValueError:
        return sess.run_spark(f"SELECT {node.sql('spark')}").first()[0]


def _pattern(sess, args: dict, key: str, default):
    node = args.get(key)
    if node is None:
        return default
    text = _text(sess, node)
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
    target = None if options is None else compaction_target(_text(sess, options), "compact_database")
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
                t.compact(target_file_size=target)
                success += 1
            except IcefloeError:
                failed += 1
    return sess.spark.createDataFrame([(f"Compact database finished. Success: {success}, Failed: {failed}",)],
                                      "result string")
