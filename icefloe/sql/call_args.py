"""The arguments of a ``CALL``, bound to a procedure's parameter names the way Spark binds them
for Iceberg's and Paimon's procedures: positional arguments first, in the parameters' order, then
named ones (names are lower-cased by the parser); at most as many as there are parameters, none
twice, none unknown, every required one present."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from sqlglot import exp

from icefloe.sql.errors import SqlError
from icefloe.sql.parser import Call, node_position

if TYPE_CHECKING:
    from icefloe.sql.statement_context import StatementSession

#: a procedure's arguments, evaluated, by name
Args = Mapping[str, Any]
#: a procedure's output rows, in its result's columns
Rows = list[tuple[Any, ...]]


def _err(reason: str, node: exp.Expression) -> SqlError:
    line, col = node_position(node)
    return SqlError(reason, line, col)


def bind_args(call: Call, params: Sequence[str], required: Sequence[str] = ()) -> dict[str, exp.Expression]:
    """``call``'s arguments as {parameter name: sqlglot expression}, for a procedure whose
    parameters are ``params`` (in positional order), of which ``required`` must be given."""
    name = call.procedure.parts[-1]
    out: dict[str, exp.Expression] = {}
    seen_named = False
    for i, (key, value) in enumerate(call.args):
        if key is None:
            if seen_named:
                raise _err("positional arguments must come before named ones", value)
            if i >= len(params):
                raise _err(f"{name} takes at most {len(params)} arguments", value)
            key = params[i]
        else:
            seen_named = True
            # names are matched without case (Paimon's are camelCase: consumerId)
            key = next((p for p in params if p.lower() == key.lower()), key)
            if key not in params:
                raise _err(f"unknown argument {key!r} of {name}; arguments are {', '.join(params)}", value)
        if key in out:
            raise _err(f"argument {key!r} given twice", value)
        out[key] = value
    for key in required:
        if key not in out:
            raise SqlError(f"{name} needs argument {key!r}", call.procedure.line, call.procedure.column)
    return out


def spark_value(sess: StatementSession, sql_text: str) -> Any:
    """The value of ``SELECT <sql_text>`` (one row), as Spark evaluates it: an argument that is an
    expression rather than a literal."""
    return sess.run_spark(f"SELECT {sql_text}").collect()[0][0]


def partition_specs(text: object, procedure: str, example: str) -> list[dict[str, str]]:
    """Paimon's ``partitions`` argument (``'p=0;p=1'``, ``'dt=01,h=02'``: ``;`` separates partitions,
    ``,`` their keys) as one dict per partition; a piece that is not ``k=v`` is an error of ``procedure``."""
    specs: list[dict[str, str]] = []
    for part in str(text or "").split(";"):
        if not part.strip():
            continue
        spec: dict[str, str] = {}
        for item in part.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise SqlError(f"{procedure}: partition {part.strip()!r} is not k=v[,k2=v2] (partitions => {example!r})")
            spec[key.strip()] = value.strip()
        specs.append(spec)
    return specs


__all__ = ["partition_specs", "bind_args", "spark_value"]
