"""Paimon's Spark procedures over a whole catalog rather than one table: ``compact_database``,
and ``copy`` (from one table to another: ``icefloe.paimon.copy_files``).

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
from typing import TYPE_CHECKING, Any, Mapping, Optional, cast

from icefloe.errors import IcefloeError
from icefloe.paimon.copy_files import check_compatible, copy_files, create_like
from icefloe.sql.call_args import bind_args, spark_value
from icefloe.sql.errors import SqlError
from icefloe.sql.paimon_compact_procedures import compaction_target
from icefloe.sql.parser import Call
from icefloe.sql.translate import literal_value
from icefloe.table.capabilities import PAIMON_PROCEDURES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from sqlglot import exp

    from icefloe.sql.statement_context import StatementSession
    from icefloe.table.paimon import PaimonTable

PARAMS = ("including_databases", "including_tables", "excluding_tables", "options")
PROCEDURES = ("compact_database", "copy")
COPY_PARAMS = ("source_table", "target_table", "where")
_ANY = re.compile(".*")


def _text(sess: StatementSession, node: exp.Expression) -> Any:
    try:
        return literal_value(node)
    except ValueError:
        return spark_value(sess, node.sql('spark'))


def _pattern(sess: StatementSession, args: Mapping[str, exp.Expression], key: str) -> Optional[re.Pattern[str]]:
    """The regular expression argument ``key`` holds; None when it is not given or blank."""
    node = args.get(key)
    if node is None:
        return None
    text = _text(sess, node)
    if text is None or not str(text).strip():
        return None
    try:
        return re.compile(str(text))
    except re.error as e:
        raise SqlError(f"compact_database: argument {key!r} is not a regular expression: {e}") from None


def compact_database(sess: StatementSession, call: Call) -> DataFrame:
    """Compact the catalog's tables the arguments select; one row: Paimon's result message."""
    args = bind_args(call, PARAMS)
    options = args.get("options")
    target = None if options is None else compaction_target(_text(sess, options), "compact_database")
    databases = _pattern(sess, args, "including_databases") or _ANY
    including = _pattern(sess, args, "including_tables") or _ANY
    excluding = _pattern(sess, args, "excluding_tables")
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


def call(sess: StatementSession, stmt: Call, name: str) -> DataFrame:
    try:
        return copy(sess, stmt) if name == "copy" else compact_database(sess, stmt)
    except SqlError:
        raise
    except IcefloeError as e:           # the format's refusal, said as the statement's
        raise SqlError(f"CALL sys.{name}: {e}") from None


def _name(sess: StatementSession, args: Mapping[str, exp.Expression], key: str) -> str:
    node = args.get(key)
    value = None if node is None else literal_value(node)
    if not isinstance(value, str) or not value.strip():
        raise SqlError(f"copy: argument {key!r} must be a table name")
    return value.strip()


def copy(sess: StatementSession, stmt: Call) -> DataFrame:
    """``CALL sys.copy(source_table, target_table[, where])``: the source's files copied into the
    target (created like the source when missing), as Paimon's copy; one row ``result``."""
    args = bind_args(stmt, COPY_PARAMS)
    source_name, target_name = _name(sess, args, "source_table"), _name(sess, args, "target_table")
    where = args.get("where")
    where = None if where is None else literal_value(where)
    where = None if where is None or not str(where).strip() else str(where)
    ref, _ours = sess.resolve_name(source_name.split("."))
    if ref is None or ref.metadata:
        raise SqlError(f"copy: unknown table {source_name}")
    loaded = sess.load(ref)
    if not loaded.supports(PAIMON_PROCEDURES):
        raise SqlError(f"copy copies Paimon tables; {loaded.name} is an {loaded.format} table")
    source = cast("PaimonTable", loaded)        # PAIMON_PROCEDURES: a Paimon table
    target_ref, _ours = sess.resolve_name(target_name.split("."))
    created = None
    if target_ref is not None and not target_ref.metadata:
        found = sess.load(target_ref)
        if not found.supports(PAIMON_PROCEDURES):
            raise SqlError(f"copy copies into Paimon tables; {found.name} is an {found.format} table")
        target = cast("PaimonTable", found)
        check_compatible(source.table_schema, target.table_schema, target.name)
    else:
        full = target_name if "." in target_name else f"{sess.namespace or 'default'}.{target_name}"
        sess.catalog.create_namespace(full.rsplit(".", 1)[0], exist_ok=True)
        create_like(sess.catalog.io, sess.catalog.table_location(full), source.table_schema)
        created = full
        target = cast("PaimonTable", sess.catalog.load_table(full))     # created like the source
    try:
        copy_files(source, target, where)
    except BaseException:
        if created is not None:             # the target was made for this copy: it goes again
            sess.catalog.drop_table(created, purge=True)
        raise
    return sess.spark.createDataFrame([(True,)], "result boolean")
