"""Filters for pruning: a small predicate tree parsed from a Spark SQL condition.

``where`` is Spark SQL text (``"dt = '2024-01-01' AND id > 5"``). It is parsed
with sqlglot into ``And``/``Or``/comparison/``In``/null-test leaves over
columns and literals; anything else (functions, ``NOT``, casts of columns,
``LIKE`` other than a prefix match) becomes ``ALWAYS``, which prunes nothing.
Pruning is only ever inclusive: Spark applies the full condition to the rows.

``may_match`` evaluates a tree against what is known of a manifest or data file
per column: a ``ColumnRange`` (lower bound, upper bound, null count, row count).
An exact partition value is a range with equal bounds. Floating point and
``TIMESTAMP_LTZ`` columns are never used for pruning (NaN ordering and session
time zones make bounds unsafe to compare with literals).
"""
from __future__ import annotations

import datetime as _dt
import decimal
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from icefloe.paimon.types import AtomicType, DataField


@dataclass(frozen=True)
class Always:
    """Unknown or unsupported: may match anything."""


ALWAYS = Always()


@dataclass(frozen=True)
class Compare:
    column: str
    op: str          # = != < <= > >=
    value: Any


@dataclass(frozen=True)
class In:
    column: str
    values: tuple


@dataclass(frozen=True)
class IsNull:
    column: str


@dataclass(frozen=True)
class NotNull:
    column: str


@dataclass(frozen=True)
class StartsWith:
    column: str
    prefix: str


@dataclass(frozen=True)
class And:
    children: tuple


@dataclass(frozen=True)
class Or:
    children: tuple


@dataclass
class ColumnRange:
    lower: Any = None
    upper: Any = None
    null_count: Optional[int] = None
    row_count: Optional[int] = None

    @property
    def all_null(self) -> bool:
        return self.null_count is not None and self.row_count is not None and self.null_count >= self.row_count


# --------------------------------------------------------------------------- parsing
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}


def parse_where(text: str):
    """Parse Spark SQL condition text into a predicate tree (``ALWAYS`` if not understood)."""
    if text is None or not str(text).strip():
        return ALWAYS
    try:
        import sqlglot

        tree = sqlglot.parse_one(f"SELECT * FROM t WHERE {text}", read="spark")
        cond = tree.args["where"].this
    except Exception:
        return ALWAYS
    return _convert(cond)


def _literal(node):
    """(ok, value) of a sqlglot literal node."""
    from sqlglot import exp

    if isinstance(node, exp.Paren):
        return _literal(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return True, str(node.this)
        try:
            return True, decimal.Decimal(str(node.this))
        except decimal.InvalidOperation:
            return False, None
    if isinstance(node, exp.Neg):
        ok, v = _literal(node.this)
        return (ok and isinstance(v, decimal.Decimal)), (-v if ok and isinstance(v, decimal.Decimal) else None)
    if isinstance(node, exp.Boolean):
        return True, bool(node.this)
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        kind = node.to.this.name if hasattr(node.to.this, "name") else str(node.to.this)
        text = str(node.this.this)
        try:
            if kind == "DATE":
                return True, _dt.date.fromisoformat(text.strip())
            if kind in ("TIMESTAMP", "TIMESTAMPNTZ", "DATETIME"):
                return True, _dt.datetime.fromisoformat(text.strip())
        except ValueError:
            return False, None
        return False, None
    return False, None


def _column(node) -> Optional[str]:
    from sqlglot import exp

    if isinstance(node, exp.Paren):
        return _column(node.this)
    if isinstance(node, exp.Column) and not node.table:
        return node.name
    return None


def _convert(node):
    from sqlglot import exp

    if isinstance(node, exp.Paren):
        return _convert(node.this)
    if isinstance(node, exp.And):
        return And((_convert(node.this), _convert(node.expression)))
    if isinstance(node, exp.Or):
        return Or((_convert(node.this), _convert(node.expression)))
    ops = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
    for cls, op in ops.items():
        if type(node) is cls:
            col, (ok, v) = _column(node.this), _literal(node.expression)
            if col is None:
                col, (ok, v) = _column(node.expression), _literal(node.this)
                op = _FLIP[op]
            if col is None or not ok:
                return ALWAYS
            return Compare(col, op, v)
    if isinstance(node, exp.Between):
        col = _column(node.this)
        ok1, lo = _literal(node.args["low"])
        ok2, hi = _literal(node.args["high"])
        if col is None or not (ok1 and ok2):
            return ALWAYS
        return And((Compare(col, ">=", lo), Compare(col, "<=", hi)))
    if isinstance(node, exp.In):
        col = _column(node.this)
        lits = [_literal(e) for e in node.expressions]
        if col is None or not lits or not all(ok for ok, _ in lits) or node.args.get("query"):
            return ALWAYS
        return In(col, tuple(v for _, v in lits))
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        col = _column(node.this)
        return IsNull(col) if col else ALWAYS
    if isinstance(node, exp.Not) and isinstance(node.this, exp.Is) and isinstance(node.this.expression, exp.Null):
        col = _column(node.this.this)
        return NotNull(col) if col else ALWAYS
    if isinstance(node, exp.Like):
        col, (ok, v) = _column(node.this), _literal(node.expression)
        if col and ok and isinstance(v, str) and v.endswith("%") and not any(c in v[:-1] for c in "%_\\"):
            return StartsWith(col, v[:-1])
        return ALWAYS
    return ALWAYS


# --------------------------------------------------------------------------- binding
def _coerce(value, t: AtomicType):
    """A literal as a value comparable with column values of type ``t`` (or raise)."""
    r = t.root
    if r in ("TINYINT", "SMALLINT", "INT", "BIGINT", "DECIMAL"):
        if isinstance(value, bool):
            raise ValueError("boolean literal for a numeric column")
        return decimal.Decimal(value) if isinstance(value, (str, decimal.Decimal, int)) else _no(value)
    if r in ("CHAR", "VARCHAR"):
        if isinstance(value, str):
            return value
        raise ValueError("non-string literal for a string column")
    if r == "BOOLEAN":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ValueError("not a boolean")
    if r == "DATE":
        if isinstance(value, _dt.datetime):
            raise ValueError("timestamp literal for a date column")
        if isinstance(value, _dt.date):
            return value
        if isinstance(value, str):
            return _dt.date.fromisoformat(value.strip())
    if r == "TIMESTAMP":
        if isinstance(value, _dt.datetime) and value.tzinfo is None:
            return value
        if isinstance(value, str):
            v = _dt.datetime.fromisoformat(value.strip())
            if v.tzinfo is None:
                return v
    raise ValueError(f"cannot compare {value!r} with {t}")


def _no(value):
    raise ValueError(f"unsupported literal {value!r}")


def bind(node, fields: Sequence[DataField]):
    """Resolve column names (case-insensitively) and coerce literals; whatever cannot be
    bound safely becomes ``ALWAYS``."""
    by_name = {f.name.lower(): f for f in fields}

    def field_of(name: str) -> Optional[DataField]:
        f = by_name.get(name.lower())
        if f is None or not isinstance(f.type, AtomicType):
            return None
        if f.type.root in ("FLOAT", "DOUBLE", "TIMESTAMP_LTZ", "BINARY", "VARBINARY", "TIME"):
            return None
        return f

    def go(n):
        if isinstance(n, (And, Or)):
            kids = tuple(go(c) for c in n.children)
            return type(n)(kids)
        if isinstance(n, (IsNull, NotNull)):
            f = by_name.get(n.column.lower())
            return type(n)(f.name) if f is not None else ALWAYS
        if isinstance(n, Compare):
            f = field_of(n.column)
            if f is None:
                return ALWAYS
            try:
                return Compare(f.name, n.op, _coerce(n.value, f.type))
            except (ValueError, TypeError, decimal.InvalidOperation):
                return ALWAYS
        if isinstance(n, In):
            f = field_of(n.column)
            if f is None:
                return ALWAYS
            try:
                return In(f.name, tuple(_coerce(v, f.type) for v in n.values))
            except (ValueError, TypeError, decimal.InvalidOperation):
                return ALWAYS
        if isinstance(n, StartsWith):
            f = field_of(n.column)
            if f is None or f.type.root not in ("CHAR", "VARCHAR"):
                return ALWAYS
            return StartsWith(f.name, n.prefix)
        return ALWAYS

    return go(node)


def conjuncts(node) -> list:
    """The top-level AND terms of a tree (nested ANDs flattened)."""
    if isinstance(node, And):
        out: list = []
        for c in node.children:
            out.extend(conjuncts(c))
        return out
    return [node]


def referenced_columns(node) -> set:
    if isinstance(node, (And, Or)):
        out: set = set()
        for c in node.children:
            out |= referenced_columns(c)
        return out
    if isinstance(node, Always):
        return set()
    return {node.column}


# --------------------------------------------------------------------------- exact row filters
class UnsupportedFilterError(ValueError):
    """A condition that cannot be evaluated without Spark."""


def to_arrow_expression(text: str, fields: Sequence[DataField]):
    """The pyarrow.compute expression of a Spark SQL condition, evaluated exactly (SQL
    three-valued logic: a row matches only where the condition is true). Raises
    ``UnsupportedFilterError`` for anything beyond comparisons, IN, IS [NOT] NULL,
    prefix LIKE, AND and OR over columns and literals."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from icefloe.paimon.types import to_arrow_type

    by_name = {f.name.lower(): f for f in fields}

    def column(name: str):
        f = by_name.get(name.lower())
        if f is None or not isinstance(f.type, AtomicType):
            raise UnsupportedFilterError(f"cannot filter on column {name!r} without Spark")
        return pc.field(f.name), f

    def operands(col, f, value):
        """(column expression, literal scalar) of one comparison, in a common type."""
        r = f.type.root
        try:
            if r == "TIMESTAMP_LTZ":
                raise UnsupportedFilterError("TIMESTAMP_LTZ literals depend on the session time zone; use Spark")
            if r not in ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"):
                return col, pa.scalar(_coerce(value, f.type), to_arrow_type(f.type))
            if isinstance(value, bool) or not isinstance(value, (str, decimal.Decimal)):
                raise UnsupportedFilterError(f"{value!r} is not a number")
            d = decimal.Decimal(value)
            if r in ("FLOAT", "DOUBLE"):
                return col, pa.scalar(float(d), pa.float64())
            scale = max(0, -d.as_tuple().exponent)
            if r != "DECIMAL":
                if scale == 0:
                    return col, pa.scalar(int(d), pa.int64())
                t = pa.decimal128(min(38, 19 + scale), scale)      # like Spark, widen to a decimal
                return col.cast(t), pa.scalar(d, t)
            own = to_arrow_type(f.type)
            if scale <= own.scale:
                t = pa.decimal128(min(38, own.precision + 20), own.scale)
                return col.cast(t), pa.scalar(d.quantize(decimal.Decimal(1).scaleb(-own.scale)), t)
            t = pa.decimal128(min(38, own.precision - own.scale + scale + 20), scale)
            return col.cast(t), pa.scalar(d, t)
        except UnsupportedFilterError:
            raise
        except (ValueError, TypeError, decimal.InvalidOperation, pa.ArrowInvalid):
            raise UnsupportedFilterError(f"cannot compare column {f.name!r} with {value!r}") from None

    ops = {"=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
           "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}

    def go(n):
        if isinstance(n, And):
            out = go(n.children[0])
            for c in n.children[1:]:
                out = out & go(c)
            return out
        if isinstance(n, Or):
            out = go(n.children[0])
            for c in n.children[1:]:
                out = out | go(c)
            return out
        if isinstance(n, IsNull):
            return column(n.column)[0].is_null()
        if isinstance(n, NotNull):
            return column(n.column)[0].is_valid()
        if isinstance(n, Compare):
            col, f = column(n.column)
            return ops[n.op](*operands(col, f, n.value))
        if isinstance(n, In):
            col, f = column(n.column)
            out = None
            for v in n.values:
                term = ops["="](*operands(col, f, v))
                out = term if out is None else out | term
            return out
        if isinstance(n, StartsWith):
            col, f = column(n.column)
            return pc.starts_with(col, n.prefix)
        raise UnsupportedFilterError("condition not supported without Spark; use to_spark(where=...)")

    return go(parse_where(text))


# --------------------------------------------------------------------------- evaluation
def may_match(node, ranges: dict) -> bool:
    """False only if no row described by ``ranges`` (column -> ColumnRange) can match."""
    if isinstance(node, Always):
        return True
    if isinstance(node, And):
        return all(may_match(c, ranges) for c in node.children)
    if isinstance(node, Or):
        return any(may_match(c, ranges) for c in node.children)
    r = ranges.get(node.column)
    if r is None:
        return True
    if isinstance(node, IsNull):
        return r.null_count is None or r.null_count > 0
    if isinstance(node, NotNull):
        return not r.all_null
    if r.all_null:
        return False  # comparisons with null are never true
    lo, hi = r.lower, r.upper
    try:
        if isinstance(node, Compare):
            v, op = node.value, node.op
            if op == "=":
                return (lo is None or lo <= v) and (hi is None or v <= hi)
            if op == "!=":
                return not (lo is not None and lo == hi == v)  # null rows never match != either
            if op == "<":
                return lo is None or lo < v
            if op == "<=":
                return lo is None or lo <= v
            if op == ">":
                return hi is None or hi > v
            if op == ">=":
                return hi is None or hi >= v
        if isinstance(node, In):
            return any((lo is None or lo <= v) and (hi is None or v <= hi) for v in node.values)
        if isinstance(node, StartsWith):
            p = node.prefix
            if lo is not None and hi is not None:
                return lo[:len(p)] <= p <= hi[:len(p)]
            return True
    except TypeError:
        return True
    return True
