"""Paimon's batch incremental queries in SQL: ``paimon_incremental_query('t', start, end)``,
``paimon_incremental_between_timestamp('t', start, end)`` and
``paimon_incremental_to_auto_tag('t', end_tag)``, the table-valued functions of Paimon's Spark SQL.

Between two TAGS (both arguments name tags of the table) and to an automatic tag (from the newest
automatic tag of an earlier period; no rows when either tag is missing), the rows are the
difference of the tags' files, as Paimon reads it: ``diff_between_tags`` of the table.

The rows are the changes committed after snapshot ``start`` up to ``end``, read as Paimon's
default scan mode reads them: a table with a changelog producer gives its changelog records, any
other table the records its APPEND snapshots wrote (compactions are not changes), a primary-key
table's records merged by key over the range (the last one wins, its ``deduplicate`` merge). As in
Paimon's batch reads, retractions (``-D``, ``-U``) are dropped: the ``audit_log`` system table shows
them. Each call becomes a temporary view of those rows, in the table's columns.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, Optional, cast

from sqlglot import exp

from icefloe.errors import IcefloeError, NotSupportedError
from icefloe.sql.call_args import spark_value
from icefloe.sql.translate import literal_value
from icefloe.table.capabilities import INCREMENTAL_QUERIES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.sql.statement_context import StatementSession
    from icefloe.table.paimon import PaimonTable

FUNCTIONS = ("paimon_incremental_query", "paimon_incremental_between_timestamp", "paimon_incremental_to_auto_tag")
_KEEP = ("INSERT", "UPDATE_AFTER")


def _arg(sess: StatementSession, node: exp.Expression, what: str) -> Any:
    try:
        return literal_value(node)
    except ValueError:
        raise sess.error(f"{what} must be a literal, got {node.sql('spark')}", node) from None


def _snapshot_arg(sess: StatementSession, t: PaimonTable, value: object, node: exp.Expression) -> int:
    if isinstance(value, bool) or value is None:
        raise sess.error(f"paimon_incremental_query: {value!r} is not a snapshot id", node)
    if isinstance(value, int) or str(value).strip().isdigit():
        return int(str(value))
    raise sess.error(f"paimon_incremental_query: {value!r} is neither a tag of {t.name} (tags: "
                     f"{', '.join(t.tags()) or 'none'}) nor a snapshot id; give two tags or two snapshot ids", node)


@contextmanager
def _as_sql_error(sess: StatementSession, name: str, node: exp.Expression) -> Iterator[None]:
    """A table's refusal of the arguments (a tag that is no automatic tag, tags out of order) as the
    query's error."""
    try:
        yield
    except NotSupportedError:
        raise
    except IcefloeError as e:
        raise sess.error(f"{name}: {e}", node) from None


def _both_tags(t: PaimonTable, start: object, end: object) -> bool:
    """Paimon's rule: when both arguments name tags, the query is between the tags (a tag named
    like a number is a tag first)."""
    if start is None or end is None or isinstance(start, bool) or isinstance(end, bool):
        return False
    tags = t.tags()
    return str(start) in tags and str(end) in tags


def _time_arg(sess: StatementSession, value: object, node: exp.Expression) -> int:
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        return int(value)
    micros = spark_value(sess, f"unix_micros(CAST({exp.Literal.string(str(value)).sql('spark')} AS TIMESTAMP))")
    if micros is None:
        raise sess.error(f"paimon_incremental_between_timestamp: {value!r} is not a time", node)
    return micros // 1000


def _at_or_before(t: PaimonTable, millis: int) -> Optional[int]:
    ids = [s.id for s in t.snapshots() if s.time_millis <= millis]
    return max(ids) if ids else None


def incremental_df(sess: StatementSession, fn: exp.Anonymous) -> DataFrame:
    """The rows of one incremental function call."""
    name = fn.name.lower()
    args = list(fn.expressions)
    if name == "paimon_incremental_to_auto_tag":
        if len(args) != 2:
            raise sess.error(f"{name} takes (table, end_tag), got {len(args)} arguments", fn)
    elif len(args) != 3:
        raise sess.error(f"{name} takes (table, start, end), got {len(args)} arguments", fn)
    table_name = _arg(sess, args[0], "the table name")
    ref, _ours = sess.resolve_name(str(table_name).split("."))
    if ref is None or ref.metadata:
        raise sess.error(f"{name}: unknown table {table_name}", args[0])
    loaded = sess.load(ref)
    if not loaded.supports(INCREMENTAL_QUERIES):
        raise sess.error(f"{name} reads Paimon tables; {loaded.name} is an {loaded.format} table (Iceberg: CALL "
                         "system.create_changelog_view)", fn)
    t = cast("PaimonTable", loaded)          # INCREMENTAL_QUERIES: a Paimon table
    if name == "paimon_incremental_to_auto_tag":
        end_tag = _arg(sess, args[1], "the end tag")
        with sess.refused_as(name, fn), _as_sql_error(sess, name, fn):
            df = t.diff_to_auto_tag(str(end_tag))
        return t.to_spark().limit(0) if df is None else df
    start, end = (_arg(sess, a, "start and end") for a in args[1:])
    if name == "paimon_incremental_query" and _both_tags(t, start, end):
        with sess.refused_as(name, fn), _as_sql_error(sess, name, fn):
            return t.diff_between_tags(str(start), str(end))
    if name == "paimon_incremental_query":
        lo, hi = _snapshot_arg(sess, t, start, args[1]), _snapshot_arg(sess, t, end, args[2])
    else:
        hi = _at_or_before(t, _time_arg(sess, end, args[2]))
        lo = _at_or_before(t, _time_arg(sess, start, args[1]))
        if hi is None:
            return t.to_spark().limit(0)
        lo = 0 if lo is None else lo
    if lo > hi:
        raise sess.error(f"{name}: start snapshot {lo} is after end snapshot {hi}", fn)
    return _changes(sess, t, lo, hi, fn)


def _changes(sess: StatementSession, t: PaimonTable, lo: int, hi: int, node: exp.Expression) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    schema = t.table_schema
    engine = schema.options.get("merge-engine", "deduplicate")
    produces = schema.options.get("changelog-producer", "none") != "none"
    keys = list(schema.primary_keys)
    if keys and not produces and engine != "deduplicate":
        raise sess.not_supported(f"paimon_incremental_query of {t.name} (merge-engine {engine} without a changelog "
                                 "producer: the range's records would be merged by that engine; read "
                                 f"db.`t$audit_log` or set a changelog-producer)", node)
    with sess.refused_as("paimon_incremental_query", node):
        df = t.changelog(lo, hi)
    columns = [f.name for f in schema.fields]
    if keys and not produces:        # newly changed files, merged by key: the last record of each key wins
        last = Window.partitionBy(*[F.col(f"`{k}`") for k in keys]).orderBy(F.col("_change_ordinal").desc())
        df = df.withColumn("__last", F.row_number().over(last)).where("__last = 1")
    df = df.where(F.col("_change_type").isin(*_KEEP))
    return df.select(*[F.col(f"`{c}`") for c in columns])


def rewrite(sess: StatementSession, tree: exp.Expression) -> int:
    """Replace each incremental function call in ``tree``'s FROM clauses by a view of its rows."""
    count = 0
    for table in list(tree.find_all(exp.Table)):
        fn = table.this
        if not isinstance(fn, exp.Anonymous) or fn.name.lower() not in FUNCTIONS:
            continue
        df = incremental_df(sess, fn)
        view = f"__icefloe_incremental_{count}_{abs(hash(fn.sql('spark'))) % 10 ** 10}"
        df.createOrReplaceTempView(view)
        alias = table.args.get("alias")
        table.replace(exp.Table(this=exp.to_identifier(view), alias=alias.copy() if alias is not None else None))
        count += 1
    return count
