"""``system.<function>(...)`` in queries: the functions Iceberg's Spark extensions register
(spark-queries): ``bucket(N, v)``, ``truncate(W, v)``, ``years``, ``months``, ``days``,
``hours`` and ``iceberg_version()``, also written ``<catalog>.system.<function>``.

Each call is replaced in the query before Spark sees it: the time transforms and ``bucket`` by
icefloe's UDFs (``icefloe.spark.iceberg_functions``), ``truncate`` by the Spark expression of the
spec's truncation for the argument's type (which Spark reports for the argument in the query's
FROM clause), ``iceberg_version()`` by icefloe's version.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from icefloe.iceberg.snapshot import icefloe_version
from icefloe.spark import iceberg_functions

if TYPE_CHECKING:
    from icefloe.sql.statement_context import StatementSession

_ARITY = {"bucket": 2, "truncate": 2, "years": 1, "months": 1, "days": 1, "hours": 1, "iceberg_version": 0}


def _prefix(node: exp.Expression) -> list[str]:
    if isinstance(node, exp.Identifier):
        return [node.name.lower()]
    if isinstance(node, exp.Dot):
        return _prefix(node.this) + _prefix(node.expression)
    return []


def rewrite(sess: StatementSession, tree: exp.Expression) -> int:
    """Replace the ``system.*`` calls of ``tree`` (in place); how many were replaced."""
    count = 0
    for dot in list(tree.find_all(exp.Dot)):
        call = dot.expression
        if not isinstance(call, exp.Anonymous) or _prefix(dot.this) not in (["system"],
                                                                             [sess.catalog_name.lower(), "system"]):
            continue
        name = call.name.lower()
        args = list(call.expressions)
        if name not in _ARITY:
            raise sess.error(f"unknown function system.{name}; Iceberg's system functions are "
                             f"{', '.join(sorted(_ARITY))}", dot)
        if len(args) != _ARITY[name]:
            raise sess.error(f"system.{name} takes {_ARITY[name]} argument(s), got {len(args)}", dot)
        dot.replace(_replacement(sess, name, args, dot))
        count += 1
    return count


def _replacement(sess: StatementSession, name: str, args: list[exp.Expression], node: exp.Expression) -> exp.Expression:
    if name == "iceberg_version":
        return exp.Literal.string(f"icefloe {icefloe_version()}")
    if name == "truncate":
        return _truncate(sess, args[0], args[1], node)
    iceberg_functions.register(sess.spark)
    value = args[-1]
    typed = [value.copy(), exp.Anonymous(this="typeof", expressions=[value.copy()])]
    head = [args[0].copy()] if name == "bucket" else []
    return exp.Anonymous(this=iceberg_functions.PREFIX + name, expressions=head + typed)


def _truncate(sess: StatementSession, width: exp.Expression, value: exp.Expression, node: exp.Expression) -> exp.Expression:
    """The spec's truncation as a Spark expression for the type of ``value``."""
    if not isinstance(width, exp.Literal) or width.is_string or int(width.name) <= 0:
        raise sess.error(f"system.truncate needs a positive integer width, got {width.sql('spark')}", node)
    w = int(width.name)
    spark_type = _type_of(sess, value, node)
    v = f"({value.sql('spark')})"
    if spark_type in ("tinyint", "smallint", "int", "bigint"):
        text = f"({v} - pmod({v}, {w}))"
    elif spark_type in ("string", "binary"):
        text = f"substring({v}, 1, {w})"
    elif spark_type.startswith("decimal"):
        precision, scale = (int(x) for x in spark_type[spark_type.index("(") + 1:-1].split(","))
        unscaled = f"CAST({v} * {10 ** scale} AS DECIMAL(38,0))"
        text = f"CAST(({unscaled} - pmod({unscaled}, {w})) / {10 ** scale} AS DECIMAL({precision},{scale}))"
    else:
        raise sess.error(f"system.truncate takes int, long, decimal, string or binary values, not {spark_type}",
                         node)
    return exp.maybe_parse(text, dialect="spark")


def _type_of(sess: StatementSession, value: exp.Expression, node: exp.Expression) -> str:
    """Spark's type of ``value`` where it stands: analysed (no job runs) over the FROM clause of
    the query it is in."""
    select = node.find_ancestor(exp.Select)
    probe = exp.Select(expressions=[value.copy()])
    if select is not None:
        source = select.args.get("from_") or select.args.get("from")
        if source is not None:
            probe = probe.from_(source.this.copy())
        for join in select.args.get("joins") or []:
            probe = probe.join(join.copy())
    try:
        return sess.spark.sql(probe.sql("spark")).schema.fields[0].dataType.simpleString()
    except Exception as e:
        raise sess.error(f"system.truncate: cannot tell the type of {value.sql('spark')} ({e})", node) from None
