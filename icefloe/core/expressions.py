"""Predicate expressions used to prune files during scan planning (format-neutral).

The AST is small and immutable: ``AlwaysTrue``, ``AlwaysFalse``, ``Unknown``,
``And``, ``Or``, ``Not`` and predicates on one column (``EqualTo``, ``In``,
``StartsWith``...). A predicate's term is a :class:`Reference` (a column name,
"unbound") or, after :func:`bind`, a :class:`BoundReference` (field id, name,
type) with literals converted to internal values (see
``icefloe.iceberg.conversions``: ints for int/long/date days/timestamp micros).

Semantics follow Spark SQL, whose filters the pruning must never contradict:

* a comparison with a null value is unknown (never true, and ``NOT`` of it is
  never true either); ``IsNull``/``NotNull``/``IsNaN``/``NotNaN`` are never
  unknown (``isnan(NULL)`` is false, so ``NotNaN`` holds for nulls);
* ``NaN = NaN`` is true and NaN sorts above every other float (so
  ``x > 5.0`` matches NaN rows);
* the ``Unknown`` node stands for any term the AST cannot express (functions,
  column-to-column comparisons, arithmetic, most LIKE patterns). It means "may
  match" in both polarities: ``NOT Unknown`` is ``Unknown``, never
  ``AlwaysFalse``, so pruning stays safe (it may keep too many files, never
  drop a file with matching rows).

Time zones: ``TIMESTAMP '...'`` literals and timestamp strings without an
offset are read as UTC (icefloe assumes a UTC session time zone); so a
timestamptz column compared with a naive timestamp string treats the string
as UTC. Strings carrying an explicit offset are converted to UTC for
timestamptz columns; compared with a timestamp (without zone) column they are
ambiguous and become ``Unknown``.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import math
import re
import struct
import uuid as _uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from icefloe.core.types import (
    DecimalType, IcebergType, ListType, MapType, NestedField, Schema, StructType,
)
from icefloe.errors import IcefloeError


class ExpressionError(IcefloeError, ValueError):
    """A predicate that cannot be parsed or bound; names the text or the column."""


# =========================================================================== terms
@dataclass(frozen=True)
class Reference:
    """An unbound column reference by name (dotted path for struct fields)."""

    name: str

    def __str__(self) -> str:
        return _quote_name(self.name)


@dataclass(frozen=True)
class BoundReference:
    """A column resolved against a schema (or a partition field, after projection)."""

    field_id: int
    name: str
    field_type: IcebergType

    def __str__(self) -> str:
        return _quote_name(self.name)


Term = Union[Reference, BoundReference]

_SIMPLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _quote_name(name: str) -> str:
    if _SIMPLE_NAME.match(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def _as_term(t) -> Term:
    if isinstance(t, (Reference, BoundReference)):
        return t
    if isinstance(t, str):
        return Reference(t)
    raise ExpressionError(f"a predicate's term must be a column name, got {t!r}")


# =========================================================================== AST
class Expr:
    """Base of every expression node. Nodes are immutable and compare by value."""

    def negate(self) -> "Expr":
        """The expression true exactly where this one is false (NOT pushed one level)."""
        raise NotImplementedError

    def __and__(self, other: "Expr") -> "Expr":
        return And(self, other)

    def __or__(self, other: "Expr") -> "Expr":
        return Or(self, other)

    def __invert__(self) -> "Expr":
        return Not(self)


@dataclass(frozen=True)
class AlwaysTrue(Expr):
    def negate(self) -> Expr:
        return AlwaysFalse()

    def __str__(self) -> str:
        return "true"


@dataclass(frozen=True)
class AlwaysFalse(Expr):
    def negate(self) -> Expr:
        return AlwaysTrue()

    def __str__(self) -> str:
        return "false"


@dataclass(frozen=True)
class Unknown(Expr):
    """A term the AST cannot express: "may match", and so is its negation."""

    text: str = "?"

    def negate(self) -> Expr:
        return self

    def __str__(self) -> str:
        return f"UNKNOWN({self.text})"


@dataclass(frozen=True)
class And(Expr):
    left: Expr
    right: Expr

    def negate(self) -> Expr:
        return Or(self.left.negate(), self.right.negate())

    def __str__(self) -> str:
        return f"{_paren(self.left, Or)} AND {_paren(self.right, Or)}"


@dataclass(frozen=True)
class Or(Expr):
    left: Expr
    right: Expr

    def negate(self) -> Expr:
        return And(self.left.negate(), self.right.negate())

    def __str__(self) -> str:
        return f"{_paren(self.left, And)} OR {_paren(self.right, And)}"


@dataclass(frozen=True)
class Not(Expr):
    child: Expr

    def negate(self) -> Expr:
        return self.child

    def __str__(self) -> str:
        return f"NOT ({self.child})"


def _paren(e: Expr, other) -> str:
    return f"({e})" if isinstance(e, other) else str(e)


# --------------------------------------------------------------------- predicates
class Predicate(Expr):
    term: Term

    @property
    def is_bound(self) -> bool:
        return isinstance(self.term, BoundReference)

    def with_term(self, term: Term) -> "Predicate":  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True, init=False)
class UnaryPredicate(Predicate):
    term: Term

    def __init__(self, term):
        object.__setattr__(self, "term", _as_term(term))

    def with_term(self, term):
        return type(self)(term)


@dataclass(frozen=True, init=False)
class LiteralPredicate(Predicate):
    term: Term
    literal: Any

    def __init__(self, term, literal):
        object.__setattr__(self, "term", _as_term(term))
        object.__setattr__(self, "literal", literal)

    def with_term(self, term, literal=None):
        return type(self)(term, self.literal if literal is None else literal)

    def _lit(self) -> str:
        return format_literal(self.literal, self.term.field_type if self.is_bound else None)


@dataclass(frozen=True, init=False)
class SetPredicate(Predicate):
    term: Term
    literals: tuple

    def __init__(self, term, literals: Iterable):
        object.__setattr__(self, "term", _as_term(term))
        if isinstance(literals, (str, bytes)):
            raise ExpressionError(f"IN needs a collection of values, got {literals!r}")
        object.__setattr__(self, "literals", tuple(_dedupe(literals)))

    def with_term(self, term, literals=None):
        return type(self)(term, self.literals if literals is None else literals)

    def _lits(self) -> str:
        t = self.term.field_type if self.is_bound else None
        return ", ".join(format_literal(v, t) for v in self.literals)


def _dedupe(values: Iterable) -> list:
    out: list = []
    seen: set = set()
    nan = False
    for v in values:
        if isinstance(v, float) and math.isnan(v):
            if not nan:
                out.append(v)
            nan = True
            continue
        try:
            if v in seen:
                continue
            seen.add(v)
        except TypeError:  # unhashable: keep as is
            pass
        out.append(v)
    return out


class IsNull(UnaryPredicate):
    def negate(self):
        return NotNull(self.term)

    def __str__(self):
        return f"{self.term} IS NULL"


class NotNull(UnaryPredicate):
    def negate(self):
        return IsNull(self.term)

    def __str__(self):
        return f"{self.term} IS NOT NULL"


class IsNaN(UnaryPredicate):
    def negate(self):
        return NotNaN(self.term)

    def __str__(self):
        return f"isnan({self.term})"


class NotNaN(UnaryPredicate):
    def negate(self):
        return IsNaN(self.term)

    def __str__(self):
        return f"NOT isnan({self.term})"


class EqualTo(LiteralPredicate):
    op = "="

    def negate(self):
        return NotEqualTo(self.term, self.literal)

    def __str__(self):
        return f"{self.term} = {self._lit()}"


class NotEqualTo(LiteralPredicate):
    op = "!="

    def negate(self):
        return EqualTo(self.term, self.literal)

    def __str__(self):
        return f"{self.term} != {self._lit()}"


class LessThan(LiteralPredicate):
    op = "<"

    def negate(self):
        return GreaterThanOrEqual(self.term, self.literal)

    def __str__(self):
        return f"{self.term} < {self._lit()}"


class LessThanOrEqual(LiteralPredicate):
    op = "<="

    def negate(self):
        return GreaterThan(self.term, self.literal)

    def __str__(self):
        return f"{self.term} <= {self._lit()}"


class GreaterThan(LiteralPredicate):
    op = ">"

    def negate(self):
        return LessThanOrEqual(self.term, self.literal)

    def __str__(self):
        return f"{self.term} > {self._lit()}"


class GreaterThanOrEqual(LiteralPredicate):
    op = ">="

    def negate(self):
        return LessThan(self.term, self.literal)

    def __str__(self):
        return f"{self.term} >= {self._lit()}"


class StartsWith(LiteralPredicate):
    """String prefix match (``LIKE 'prefix%'``); null never matches."""

    def negate(self):
        return NotStartsWith(self.term, self.literal)

    def __str__(self):
        return f"{self.term} LIKE {format_literal(_like_escape(str(self.literal)) + '%')}"


class NotStartsWith(LiteralPredicate):
    """Negation of :class:`StartsWith`; null never matches either."""

    def negate(self):
        return StartsWith(self.term, self.literal)

    def __str__(self):
        return f"{self.term} NOT LIKE {format_literal(_like_escape(str(self.literal)) + '%')}"


class In(SetPredicate):
    def negate(self):
        return NotIn(self.term, self.literals)

    def __str__(self):
        return f"{self.term} IN ({self._lits()})"


class NotIn(SetPredicate):
    def negate(self):
        return In(self.term, self.literals)

    def __str__(self):
        return f"{self.term} NOT IN ({self._lits()})"


class _LikeEqualTo(EqualTo):
    """``col LIKE 'abc'`` (no wildcard): string equality, but only on a string column
    (Spark casts the column to string; on other types it is not a numeric comparison)."""

    def negate(self):
        return _LikeNotEqualTo(self.term, self.literal)

    def __str__(self):
        return f"{self.term} LIKE {format_literal(_like_escape(str(self.literal)))}"


class _LikeNotEqualTo(NotEqualTo):
    def negate(self):
        return _LikeEqualTo(self.term, self.literal)

    def __str__(self):
        return f"{self.term} NOT LIKE {format_literal(_like_escape(str(self.literal)))}"


def _like_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# --------------------------------------------------------------------- helpers
def and_(*exprs: Expr) -> Expr:
    """AND of any number of expressions, folding constants (``and_()`` is true)."""
    out: Optional[Expr] = None
    for e in exprs:
        if isinstance(e, AlwaysFalse):
            return AlwaysFalse()
        if isinstance(e, AlwaysTrue):
            continue
        out = e if out is None else And(out, e)
    return AlwaysTrue() if out is None else out


def or_(*exprs: Expr) -> Expr:
    """OR of any number of expressions, folding constants (``or_()`` is false)."""
    out: Optional[Expr] = None
    for e in exprs:
        if isinstance(e, AlwaysTrue):
            return AlwaysTrue()
        if isinstance(e, AlwaysFalse):
            continue
        out = e if out is None else Or(out, e)
    return AlwaysFalse() if out is None else out


def not_(e: Expr) -> Expr:
    """NOT, folding constants and double negation (``Unknown`` stays ``Unknown``)."""
    if isinstance(e, (AlwaysTrue, AlwaysFalse, Unknown)):
        return e.negate()
    if isinstance(e, Not):
        return e.child
    return Not(e)


def rewrite_not(expr: Expr) -> Expr:
    """Push every NOT down to the leaves (negating predicates); constants are folded.

    The result contains no ``Not`` node. Because each predicate's negation is
    false on nulls (like SQL's NOT of an unknown), the rewritten expression
    holds for a row exactly when the original is TRUE under SQL's
    three-valued logic.
    """
    if isinstance(expr, Not):
        return rewrite_not(expr.child.negate())
    if isinstance(expr, And):
        return and_(rewrite_not(expr.left), rewrite_not(expr.right))
    if isinstance(expr, Or):
        return or_(rewrite_not(expr.left), rewrite_not(expr.right))
    return expr


def references(expr: Expr) -> set:
    """The column names (unbound) or field ids (bound) an expression refers to."""
    out: set = set()

    def walk(e):
        if isinstance(e, (And, Or)):
            walk(e.left)
            walk(e.right)
        elif isinstance(e, Not):
            walk(e.child)
        elif isinstance(e, Predicate):
            out.add(e.term.field_id if isinstance(e.term, BoundReference) else e.term.name)

    walk(expr)
    return out


# --------------------------------------------------------------------- literals
def format_literal(v: Any, t: Optional[IcebergType] = None) -> str:
    """A Spark SQL spelling of a literal (internal values are read with type ``t``)."""
    if v is None:
        return "NULL"
    s = str(t) if t is not None else None
    if s == "date" and isinstance(v, int):
        v = _dt.date(1970, 1, 1) + _dt.timedelta(days=v)
    elif s == "timestamp" and isinstance(v, int):
        v = _dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=v)
    elif s == "timestamptz" and isinstance(v, int):
        v = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(microseconds=v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(v, (bytes, bytearray)):
        return "X'" + bytes(v).hex().upper() + "'"
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            return f"TIMESTAMP_NTZ'{v.isoformat(sep=' ')}'"
        return f"TIMESTAMP'{v.isoformat(sep=' ')}'"
    if isinstance(v, _dt.date):
        return f"DATE'{v.isoformat()}'"
    if isinstance(v, float):
        if math.isnan(v):
            return "CAST('NaN' AS DOUBLE)"
        if math.isinf(v):
            return f"CAST('{'-' if v < 0 else ''}Infinity' AS DOUBLE)"
        r = repr(v)
        return r if ("e" in r or "E" in r) else r + "D"
    if isinstance(v, decimal.Decimal):
        return f"{v:f}BD"
    if isinstance(v, _uuid.UUID):
        return f"'{v}'"
    return str(v)


# =========================================================================== parsing
def parse_predicate(text: str) -> Expr:
    """Parse a Spark SQL boolean expression into an (unbound) expression.

    Supported: ``AND``/``OR``/``NOT``, comparisons of a column with a literal
    (either side), ``<=>``, ``IS [NOT] NULL``, ``IS [NOT] TRUE/FALSE``,
    ``[NOT] IN (...)``, ``[NOT] BETWEEN``, ``[NOT] LIKE`` (``'prefix%'`` becomes
    ``StartsWith``, a pattern without wildcards an equality), ``isnan(col)``,
    ``isnull(col)``, ``isnotnull(col)``, ``startswith(col, 'p')``, bare boolean
    columns; Catalyst's own SQL text (``Column.expr().sql()``) parses too. Literals: numbers, strings,
    booleans, NULL, ``DATE'..'``, ``TIMESTAMP'..'``, ``TIMESTAMP_NTZ'..'``,
    ``X'..'``, casts of literals. Anything else (functions, arithmetic,
    column-to-column comparisons, other LIKE patterns) becomes ``Unknown``.
    """
    import sqlglot
    from sqlglot import errors as sg_errors

    if not isinstance(text, str) or not text.strip():
        raise ExpressionError(f"empty predicate {text!r}")
    try:
        node = sqlglot.parse_one(text, read="spark")
    except sg_errors.ParseError as e:
        where = ""
        errs = getattr(e, "errors", None) or []
        if errs and errs[0].get("line") is not None:
            d = errs[0]
            pos = _offset(text, d["line"], d["col"])
            where = f" at position {pos} (line {d['line']}, column {d['col']})"
            desc = d.get("description") or str(e)
        else:
            desc = str(e)
        raise ExpressionError(f"cannot parse predicate {text!r}{where}: {desc}") from None
    except sg_errors.SqlglotError as e:  # tokenizer errors: unterminated quote...
        pos = _unterminated(text)
        where = f" at position {pos}" if pos is not None else ""
        raise ExpressionError(f"cannot parse predicate {text!r}{where}: {e}") from None
    if node is None:
        raise ExpressionError(f"cannot parse predicate {text!r}: no expression")
    return _Converter(text).convert(node)


def _offset(text: str, line: int, col: int) -> int:
    lines = text.split("\n")
    return sum(len(l) + 1 for l in lines[: max(line - 1, 0)]) + max(col - 1, 0)


def _unterminated(text: str) -> Optional[int]:
    """Position of an unterminated quote, if any (for error messages)."""
    i = 0
    while i < len(text):
        c = text[i]
        if c in "'\"`":
            j = i + 1
            while j < len(text):
                if text[j] == "\\" and c != "`":
                    j += 2
                    continue
                if text[j] == c:
                    break
                j += 1
            if j >= len(text):
                return i
            i = j + 1
            continue
        i += 1
    return None


class _NotLiteral(Exception):
    """Raised while reading a literal that is not one (a column, a function...)."""


_INT_RE = re.compile(r"^[0-9]+$")


class _Converter:
    def __init__(self, text: str):
        self.text = text

    def error(self, node, why: str) -> ExpressionError:
        pos = ""
        meta = _first_meta(node)
        if meta is not None:
            pos = f" at position {meta}"
        return ExpressionError(f"cannot use predicate {self.text!r}{pos}: {why}")

    def unknown(self, node) -> Unknown:
        try:
            return Unknown(node.sql(dialect="spark"))
        except Exception:  # pragma: no cover - sqlglot cannot print it back
            return Unknown(type(node).__name__)

    # ----------------------------------------------------------------- boolean
    def convert(self, node) -> Expr:
        from sqlglot import exp

        if isinstance(node, exp.Paren):
            return self.convert(node.this)
        if isinstance(node, exp.And):
            return And(self.convert(node.this), self.convert(node.expression))
        if isinstance(node, exp.Or):
            return Or(self.convert(node.this), self.convert(node.expression))
        if isinstance(node, exp.Not):
            child = self.convert(node.this)
            # NOT of one predicate is its negation (IS NOT NULL, NOT IN, NOT LIKE...)
            return child.negate() if isinstance(child, (Predicate, Unknown, AlwaysTrue, AlwaysFalse)) \
                else Not(child)
        if isinstance(node, exp.Boolean):
            return AlwaysTrue() if node.this else AlwaysFalse()
        if isinstance(node, exp.Null):
            return AlwaysFalse()  # WHERE NULL selects nothing; NOT NULL neither
        if isinstance(node, exp.Column):
            return EqualTo(self.column(node), True)  # a bare boolean column
        if isinstance(node, (exp.Alias, exp.Query, exp.Block, exp.Subquery, exp.Literal,
                             exp.Star, exp.Tuple)):
            raise self.error(node, f"{node.sql(dialect='spark')!r} is not a boolean condition")
        if isinstance(node, exp.NullSafeEQ):
            return self.null_safe_eq(node)
        for cls, pred in ((exp.EQ, EqualTo), (exp.NEQ, NotEqualTo), (exp.LT, LessThan),
                          (exp.LTE, LessThanOrEqual), (exp.GT, GreaterThan),
                          (exp.GTE, GreaterThanOrEqual)):
            if type(node) is cls:
                return self.comparison(node, pred)
        if isinstance(node, exp.Is):
            return self.is_(node)
        if isinstance(node, exp.In):
            return self.in_(node)
        if isinstance(node, exp.Between):
            return self.between(node)
        if isinstance(node, exp.Escape) and type(node.this) is exp.Like:
            esc = self.literal_or_none(node.expression)
            if not isinstance(esc, str) or len(esc) != 1:
                return self.unknown(node)
            out = self.like(node.this, esc)
            return out.negate() if node.this.args.get("negate") else out
        if type(node) is exp.Like:
            out = self.like(node, "\\")
            return out.negate() if node.args.get("negate") else out
        if isinstance(node, exp.IsNan):
            col = self.column_or_none(node.this)
            return IsNaN(col) if col is not None else self.unknown(node)
        if isinstance(node, exp.Anonymous) and str(node.this).lower() in ("isnull", "isnotnull") \
                and len(node.expressions) == 1:
            col = self.column_or_none(node.expressions[0])
            if col is None:
                return self.unknown(node)
            return IsNull(col) if str(node.this).lower() == "isnull" else NotNull(col)
        if isinstance(node, exp.StartsWith):
            col = self.column_or_none(node.this)
            prefix = self.literal_or_none(node.expression)
            if col is not None and isinstance(prefix, str):
                return StartsWith(col, prefix)
            return self.unknown(node)
        return self.unknown(node)

    # ----------------------------------------------------------------- leaves
    def column(self, node) -> str:
        parts = [p.name for p in node.parts]
        return ".".join(parts)

    def column_or_none(self, node) -> Optional[str]:
        from sqlglot import exp

        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            return self.column(node)
        return None

    def literal_or_none(self, node):
        try:
            return self.literal(node)
        except _NotLiteral:
            return None

    def comparison(self, node, pred) -> Expr:
        left_col = self.column_or_none(node.this)
        right_col = self.column_or_none(node.expression)
        if left_col is not None and right_col is None:
            col, other = left_col, node.expression
        elif right_col is not None and left_col is None:
            col, other = right_col, node.this
            pred = _FLIPPED[pred]
        else:
            return self.unknown(node)
        try:
            value = self.literal(other)
        except _NotLiteral:
            return self.unknown(node)
        if value is None:
            return AlwaysFalse()  # col op NULL is never true, nor is its negation
        return pred(col, value)

    def null_safe_eq(self, node) -> Expr:
        left_col = self.column_or_none(node.this)
        right_col = self.column_or_none(node.expression)
        if (left_col is None) == (right_col is None):
            return self.unknown(node)
        col, other = (left_col, node.expression) if left_col is not None else (right_col, node.this)
        try:
            value = self.literal(other)
        except _NotLiteral:
            return self.unknown(node)
        if value is None:
            return IsNull(col)
        # never null: its negation must hold for null rows too
        return And(NotNull(col), EqualTo(col, value))

    def is_(self, node) -> Expr:
        from sqlglot import exp

        col = self.column_or_none(node.this)
        if col is None:
            return self.unknown(node)
        if isinstance(node.expression, exp.Null):
            return IsNull(col)
        if isinstance(node.expression, exp.Boolean):
            return And(NotNull(col), EqualTo(col, bool(node.expression.this)))
        return self.unknown(node)

    def in_(self, node) -> Expr:
        col = self.column_or_none(node.this)
        if col is None or node.args.get("query") is not None or node.args.get("unnest") is not None \
                or node.args.get("field") is not None:
            return self.unknown(node)
        values = []
        for item in node.expressions:
            try:
                v = self.literal(item)
            except _NotLiteral:
                return self.unknown(node)
            if v is not None:  # x IN (.., NULL): the NULL can only make the result unknown
                values.append(v)
        if not values:
            return AlwaysFalse()
        return In(col, values)

    def between(self, node) -> Expr:
        col = self.column_or_none(node.this)
        if col is None or node.args.get("symmetric"):
            return self.unknown(node)
        try:
            low = self.literal(node.args["low"])
            high = self.literal(node.args["high"])
        except _NotLiteral:
            return self.unknown(node)
        lo = AlwaysFalse() if low is None else GreaterThanOrEqual(col, low)
        hi = AlwaysFalse() if high is None else LessThanOrEqual(col, high)
        return And(lo, hi)

    def like(self, node, escape: str) -> Expr:
        col = self.column_or_none(node.this)
        try:
            pattern = self.literal(node.expression)
        except _NotLiteral:
            return self.unknown(node)
        if col is None or not isinstance(pattern, str):
            return self.unknown(node)
        parsed = _parse_like(pattern, escape)
        if parsed is None:
            return self.unknown(node)
        kind, s = parsed
        return _LikeEqualTo(col, s) if kind == "eq" else StartsWith(col, s)

    # ----------------------------------------------------------------- literals
    def literal(self, node):
        """The Python value of a literal node; raises _NotLiteral when it is not one."""
        from sqlglot import exp

        if isinstance(node, exp.Paren):
            return self.literal(node.this)
        if isinstance(node, exp.Null):
            return None
        if isinstance(node, exp.Boolean):
            return bool(node.this)
        if isinstance(node, exp.Literal):
            if node.is_string:
                return node.this
            return _number(node.this)
        if isinstance(node, exp.Neg):
            v = self.literal(node.this)
            if isinstance(v, bool) or not isinstance(v, (int, float, decimal.Decimal)):
                raise _NotLiteral()
            return -v
        if isinstance(node, exp.Concat):
            parts = [self.literal(p) for p in node.expressions]
            if all(isinstance(p, str) for p in parts):
                return "".join(parts)
            raise _NotLiteral()
        if isinstance(node, exp.HexString):
            h = node.this or ""
            if len(h) % 2:
                h = "0" + h
            try:
                return bytes.fromhex(h)
            except ValueError:
                raise self.error(node, f"invalid hex literal X'{node.this}'") from None
        if isinstance(node, (exp.Cast, exp.TryCast)):
            return self.cast(node)
        raise _NotLiteral()

    def cast(self, node):
        from sqlglot import exp

        inner = self.literal(node.this)
        to = node.args.get("to")
        if not isinstance(to, exp.DataType):
            raise _NotLiteral()
        T = exp.DataType.Type
        kind = to.this
        if inner is None:
            return None
        try:
            if kind == T.DATE:
                return _to_date(inner)
            if kind in (T.TIMESTAMP, T.TIMESTAMPTZ, T.TIMESTAMPLTZ):
                return _to_timestamp(inner, utc=True)
            if kind == T.TIMESTAMPNTZ:
                return _to_timestamp(inner, utc=False)
            if kind in (T.TINYINT, T.SMALLINT, T.INT, T.BIGINT):
                if isinstance(inner, bool):
                    return int(inner)
                d = inner if isinstance(inner, decimal.Decimal) else decimal.Decimal(str(inner).strip())
                if not d.is_finite():
                    raise ValueError("not a finite number")
                return int(d)  # truncates toward zero, as Spark's cast does
            if kind in (T.DOUBLE, T.FLOAT):
                f = _to_float(inner)
                if kind == T.FLOAT:
                    f = _float32(f)
                return f
            if kind == T.DECIMAL:
                d = inner if isinstance(inner, decimal.Decimal) else decimal.Decimal(str(inner).strip())
                if len(to.expressions) == 2:
                    scale = int(to.expressions[1].name)
                    d = d.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
                return d
            if kind in (T.VARCHAR, T.TEXT, T.CHAR, T.NVARCHAR, T.NCHAR):
                if isinstance(inner, str):
                    return inner
                raise _NotLiteral()
            if kind == T.BOOLEAN:
                if isinstance(inner, bool):
                    return inner
                if isinstance(inner, str) and inner.strip().lower() in ("true", "false"):
                    return inner.strip().lower() == "true"
                raise _NotLiteral()
            if kind in (T.BINARY, T.VARBINARY):
                if isinstance(inner, str):
                    return inner.encode("utf-8")
                if isinstance(inner, bytes):
                    return inner
                raise _NotLiteral()
        except (ValueError, ArithmeticError, decimal.InvalidOperation) as e:
            raise self.error(node, f"invalid literal {node.sql(dialect='spark')}: {e}") from None
        raise _NotLiteral()


def _first_meta(node) -> Optional[int]:
    try:
        for n in node.walk():
            m = getattr(n, "meta", None) or {}
            if "start" in m:
                return int(m["start"])
    except Exception:  # pragma: no cover
        return None
    return None


_FLIPPED = {
    EqualTo: EqualTo, NotEqualTo: NotEqualTo, LessThan: GreaterThan, LessThanOrEqual: GreaterThanOrEqual,
    GreaterThan: LessThan, GreaterThanOrEqual: LessThanOrEqual,
}


def _number(s: str):
    s = str(s)
    if _INT_RE.match(s):
        return int(s)
    if "e" in s.lower():
        return float(s)
    return decimal.Decimal(s)


def _parse_like(pattern: str, escape: str):
    """``('eq', s)`` for a pattern without wildcards, ``('prefix', p)`` for ``p%``, else None."""
    chars: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == escape:
            if i + 1 >= n:
                return None
            nxt = pattern[i + 1]
            if nxt not in ("%", "_", escape):
                return None  # Spark rejects other escapes
            chars.append(nxt)
            i += 2
            continue
        if c == "_":
            return None
        if c == "%":
            if all(ch == "%" for ch in pattern[i:]):
                return ("prefix", "".join(chars))
            return None
        chars.append(c)
        i += 1
    return ("eq", "".join(chars))


def _to_float(v) -> float:
    if isinstance(v, bool):
        raise ValueError("a boolean is not a number")
    if isinstance(v, str):
        s = v.strip()
        low = s.lower()
        if low in ("nan",):
            return math.nan
        if low in ("inf", "infinity", "+inf", "+infinity"):
            return math.inf
        if low in ("-inf", "-infinity"):
            return -math.inf
        return float(s)
    return float(v)


def _float32(f: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", f))[0]
    except OverflowError:
        return math.copysign(math.inf, f)


def _to_date(v) -> _dt.date:
    if isinstance(v, _dt.datetime):
        return v.date()
    if isinstance(v, _dt.date):
        return v
    if isinstance(v, str):
        s = v.strip()
        try:
            return _dt.date.fromisoformat(s)
        except ValueError:
            pass
        if len(s) > 10 and s[10] in "T ":  # Spark's string->date keeps the date part
            return _dt.date.fromisoformat(s[:10])
        raise ValueError(f"invalid date {v!r}")
    raise ValueError(f"cannot convert {v!r} to a date")


_FRACTION = re.compile(r"^(.*[T ]\d{2}:\d{2}:\d{2})\.(\d{1,6})(.*)$")


def _parse_datetime(text: str) -> _dt.datetime:
    """ISO date or timestamp: ``2023-01-01``, ``2023-01-01 10:00:00.5``, ``...T10:00Z``, offsets."""
    s = text.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    m = _FRACTION.match(s)
    if m:  # Python < 3.11 only reads 3 or 6 fraction digits
        s = f"{m.group(1)}.{m.group(2).ljust(6, '0')}{m.group(3)}"
    return _dt.datetime.fromisoformat(s)


def _to_timestamp(v, utc: bool) -> _dt.datetime:
    """TIMESTAMP literals become aware (UTC when no offset); TIMESTAMP_NTZ naive."""
    if isinstance(v, str):
        s = v.strip()
        try:
            d = _parse_datetime(s)
        except ValueError:
            raise ValueError(f"invalid timestamp {v!r}") from None
    elif isinstance(v, _dt.datetime):
        d = v
    elif isinstance(v, _dt.date):
        d = _dt.datetime(v.year, v.month, v.day)
    else:
        raise ValueError(f"cannot convert {v!r} to a timestamp")
    if utc:
        return d.replace(tzinfo=_dt.timezone.utc) if d.tzinfo is None else d
    if d.tzinfo is not None:
        raise _NotLiteral()
    return d


# =========================================================================== binding
INT_MIN, INT_MAX = -(2 ** 31), 2 ** 31 - 1
LONG_MIN, LONG_MAX = -(2 ** 63), 2 ** 63 - 1
US_PER_DAY = 86_400_000_000


@dataclass
class _Field:
    path: str
    field: NestedField
    repeated: bool  # inside a list or a map


def _fields(schema: Schema) -> list[_Field]:
    out: list[_Field] = []

    def walk(t: IcebergType, prefix: str, repeated: bool):
        if isinstance(t, StructType):
            for f in t.fields:
                p = f"{prefix}.{f.name}" if prefix else f.name
                out.append(_Field(p, f, repeated))
                walk(f.field_type, p, repeated)
        elif isinstance(t, ListType):
            f = t.element_field
            p = f"{prefix}.element"
            out.append(_Field(p, f, True))
            walk(t.element_type, p, True)
        elif isinstance(t, MapType):
            for f in (t.key_field, t.value_field):
                p = f"{prefix}.{f.name}"
                out.append(_Field(p, f, True))
                walk(f.field_type, p, True)

    walk(schema.struct, "", False)
    return out


class _Resolver:
    def __init__(self, schema: Schema, case_sensitive: bool):
        self.schema = schema
        self.case_sensitive = case_sensitive
        self.fields = _fields(schema)
        self.by_path = {f.path: f for f in self.fields}
        self.by_lower: dict[str, list[_Field]] = {}
        for f in self.fields:
            self.by_lower.setdefault(f.path.lower(), []).append(f)
        self.by_id = {f.field.field_id: f for f in self.fields}

    def known(self) -> str:
        names = [f.path for f in self.fields if not f.repeated]
        return ", ".join(names) if names else "(none)"

    def resolve(self, name: str) -> BoundReference:
        f = self.by_path.get(name)
        if f is None and not self.case_sensitive:
            cands = self.by_lower.get(name.lower(), [])
            if len(cands) > 1:
                raise ExpressionError(f"column {name!r} is ambiguous: matches "
                                      f"{', '.join(c.path for c in cands)}")
            f = cands[0] if cands else None
        if f is None:
            raise ExpressionError(f"no column {name!r} in the table; columns are {self.known()}")
        if f.repeated:
            raise ExpressionError(f"column {name!r} is inside a list or map and cannot be "
                                  "used in a filter")
        return BoundReference(f.field.field_id, f.path, f.field.field_type)

    def check(self, ref: BoundReference) -> BoundReference:
        if ref.field_id not in self.by_id:
            raise ExpressionError(f"no field with id {ref.field_id} ({ref.name!r}) in the table; "
                                  f"columns are {self.known()}")
        return ref


def bind(expr: Expr, schema: Schema, case_sensitive: bool = False) -> Expr:
    """Resolve column names to fields and convert literals to internal values.

    Names match case-insensitively by default (an exact match wins); dotted
    names reach struct fields. Literals are converted to the column's type the
    way Spark compares them: strings compared with date/timestamp columns are
    parsed as ISO dates/timestamps (naive timestamps are UTC for timestamptz
    columns), numeric literals that an int/long/decimal column cannot hold
    exactly are rounded into an equivalent comparison (``i < 1.5`` becomes
    ``i <= 1``), comparisons with NaN become NaN tests. Comparisons whose
    meaning depends on a conversion the AST cannot express become ``Unknown``.

    Raises :class:`ExpressionError` for an unknown column (naming the
    columns) or a literal that cannot be compared with the column's type.
    """
    return _bind(expr, _Resolver(schema, case_sensitive))


def _bind(e: Expr, r: _Resolver) -> Expr:
    if isinstance(e, And):
        return and_(_bind(e.left, r), _bind(e.right, r))
    if isinstance(e, Or):
        return or_(_bind(e.left, r), _bind(e.right, r))
    if isinstance(e, Not):
        return not_(_bind(e.child, r))
    if isinstance(e, (AlwaysTrue, AlwaysFalse, Unknown)):
        return e
    if not isinstance(e, Predicate):
        raise ExpressionError(f"not an expression: {e!r}")
    if isinstance(e.term, BoundReference):
        r.check(e.term)
        return e
    ref = r.resolve(e.term.name)
    t = ref.field_type
    s = str(t)
    if isinstance(e, IsNull):
        return IsNull(ref)
    if isinstance(e, NotNull):
        return NotNull(ref)
    if isinstance(e, (IsNaN, NotNaN)):
        if s in ("float", "double"):
            return type(e)(ref)
        if s in ("int", "long") or isinstance(t, DecimalType):
            return AlwaysFalse() if isinstance(e, IsNaN) else AlwaysTrue()
        return Unknown(str(e))
    if isinstance(e, (StartsWith, NotStartsWith)):
        if s == "string" and isinstance(e.literal, str):
            return type(e)(ref, e.literal)
        if e.literal is None:
            return AlwaysFalse()
        return Unknown(str(e))
    if isinstance(e, (_LikeEqualTo, _LikeNotEqualTo)):
        if s == "string" and isinstance(e.literal, str):
            return (EqualTo if isinstance(e, _LikeEqualTo) else NotEqualTo)(ref, e.literal)
        return Unknown(str(e))
    if not t.is_primitive:
        raise ExpressionError(f"cannot compare column {ref.name!r} of type {t} with a value in {e}")
    if isinstance(e, (In, NotIn)):
        bound = _bind_in(e, ref)
        if isinstance(e, In) or isinstance(bound, Unknown):
            return bound
        if isinstance(bound, AlwaysFalse):  # no value can be in the list: any non-null row
            return NotNull(ref)
        return rewrite_not(bound.negate())
    if isinstance(e, LiteralPredicate):
        if e.literal is None:
            return AlwaysFalse()
        return _bind_compare(e, ref)
    raise ExpressionError(f"cannot bind {e!r}")  # pragma: no cover


def _bind_in(e: SetPredicate, ref: BoundReference) -> Expr:
    vals = []
    nan = False
    for lit in e.literals:
        if lit is None:
            continue
        kind, v = _to_domain(ref, lit, e)
        if kind == "exact":
            vals.append(v)
        elif kind == "nan":
            nan = True
        elif kind == "unknown":
            return Unknown(str(e))
        # "between", "above", "below": can never be equal to a column value
    base = In(ref, vals) if vals else AlwaysFalse()
    return or_(base, IsNaN(ref)) if nan else base


def _bind_compare(e: LiteralPredicate, ref: BoundReference) -> Expr:
    kind, v = _to_domain(ref, e.literal, e)
    op = e.op
    if kind == "exact":
        return type(e)(ref, v)
    if kind == "unknown":
        return Unknown(str(e))
    if kind == "nan":
        return {
            "=": lambda: IsNaN(ref), ">=": lambda: IsNaN(ref), ">": lambda: AlwaysFalse(),
            "<=": lambda: NotNull(ref),
            "<": lambda: And(NotNull(ref), NotNaN(ref)), "!=": lambda: And(NotNull(ref), NotNaN(ref)),
        }[op]()
    if kind == "above":  # the literal is above every value of the column
        return NotNull(ref) if op in ("<", "<=", "!=") else AlwaysFalse()
    if kind == "below":
        return NotNull(ref) if op in (">", ">=", "!=") else AlwaysFalse()
    # "between": the literal lies strictly between v and the next column value
    return {
        "=": lambda: AlwaysFalse(), "!=": lambda: NotNull(ref),
        "<": lambda: LessThanOrEqual(ref, v), "<=": lambda: LessThanOrEqual(ref, v),
        ">": lambda: GreaterThan(ref, v), ">=": lambda: GreaterThan(ref, v),
    }[op]()


def _to_domain(ref: BoundReference, lit: Any, e: Expr) -> tuple[str, Any]:
    """Place a literal in the column's value domain.

    Returns ``("exact", internal)``, ``("between", floor)`` (between floor and
    the next representable value), ``("above", None)``, ``("below", None)``,
    ``("nan", None)`` or ``("unknown", None)``. Raises ExpressionError when the
    literal cannot be compared with the column at all.
    """
    from icefloe.iceberg import conversions

    t = ref.field_type
    s = str(t)

    def bad(why: str = "") -> ExpressionError:
        return ExpressionError(f"cannot compare column {ref.name!r} of type {t} with "
                               f"{format_literal(lit)} in {e}{': ' + why if why else ''}")

    try:
        if s == "boolean":
            if isinstance(lit, bool):
                return "exact", lit
            if isinstance(lit, str) and lit.strip().lower() in ("true", "false"):
                return "exact", lit.strip().lower() == "true"
            raise bad()
        if s in ("int", "long"):
            lo, hi = (INT_MIN, INT_MAX) if s == "int" else (LONG_MIN, LONG_MAX)
            num = _numeric(lit, bad)
            if isinstance(num, float):
                if math.isnan(num):
                    return "above", None  # NaN sorts above every number
                if math.isinf(num):
                    return ("above" if num > 0 else "below"), None
                if s == "long" and abs(num) >= 2.0 ** 53:
                    return "unknown", None  # Spark compares as double: rounding
                num = decimal.Decimal(num)
            return _discrete(num, lo, hi)
        if s in ("float", "double"):
            if isinstance(lit, str):
                try:
                    f = _to_float(lit)
                except ValueError:
                    raise bad() from None
            else:
                num = _numeric(lit, bad)
                if s == "float" and isinstance(num, int):
                    f = _float32(float(num))
                else:
                    f = float(num)
            if math.isnan(f):
                return "nan", None
            return "exact", f
        if isinstance(t, DecimalType):
            num = _numeric(lit, bad)
            if isinstance(num, float):
                return "unknown", None  # Spark compares decimal with double as double
            d = decimal.Decimal(num)
            unscaled = d.scaleb(t.scale)
            limit = 10 ** t.precision
            kind, u = _discrete(unscaled, -limit + 1, limit - 1)
            if kind in ("exact", "between"):
                return kind, decimal.Decimal(u).scaleb(-t.scale)
            return kind, None
        if s == "date":
            if isinstance(lit, _dt.datetime):
                us = conversions.to_internal(_ts_type(lit), lit)
                days, rem = divmod(us, US_PER_DAY)
                return ("exact" if rem == 0 else "between"), days
            if isinstance(lit, (_dt.date, str)):
                try:
                    return "exact", conversions.to_internal(t, _to_date(lit))
                except ValueError as err:
                    raise bad(str(err)) from None
            raise bad()
        if s in ("timestamp", "timestamptz"):
            if isinstance(lit, str):
                try:
                    d = _parse_datetime(lit)
                except ValueError:
                    raise bad("not an ISO timestamp") from None
                if d.tzinfo is not None and s == "timestamp":
                    return "unknown", None  # an offset on a zone-less column: ambiguous
                return "exact", conversions.to_internal(t, d)
            if isinstance(lit, (_dt.datetime, _dt.date)):
                return "exact", conversions.to_internal(t, lit)
            raise bad()
        if s == "time":
            if isinstance(lit, str):
                try:
                    lit = _dt.time.fromisoformat(lit.strip())
                except ValueError:
                    raise bad("not an ISO time") from None
            if isinstance(lit, _dt.time):
                return "exact", conversions.to_internal(t, lit)
            raise bad()
        if s == "string":
            if isinstance(lit, str):
                return "exact", lit
            return "unknown", None  # Spark would cast the column: not a string comparison
        if s == "uuid":
            if isinstance(lit, _uuid.UUID):
                return "exact", lit
            if isinstance(lit, str):
                try:
                    return "exact", _uuid.UUID(lit.strip())
                except ValueError:
                    raise bad("not a UUID") from None
            if isinstance(lit, (bytes, bytearray)) and len(lit) == 16:
                return "exact", _uuid.UUID(bytes=bytes(lit))
            raise bad()
        if s == "binary" or s.startswith("fixed"):
            if isinstance(lit, (bytes, bytearray)):
                return "exact", bytes(lit)
            if isinstance(lit, str):
                return "exact", lit.encode("utf-8")
            raise bad()
    except ExpressionError:
        raise
    except (TypeError, ValueError, ArithmeticError) as err:
        raise bad(str(err)) from None
    return "unknown", None


def _ts_type(v: _dt.datetime) -> IcebergType:
    from icefloe.core.types import PRIMITIVES_BY_NAME

    return PRIMITIVES_BY_NAME["timestamptz" if v.tzinfo is not None else "timestamp"]


def _numeric(lit, bad: Callable[..., ExpressionError]):
    """int, Decimal or float from a numeric literal or numeric string."""
    if isinstance(lit, bool):
        raise bad()
    if isinstance(lit, (int, decimal.Decimal, float)):
        return lit
    if isinstance(lit, str):
        s = lit.strip()
        try:
            d = decimal.Decimal(s)
        except decimal.InvalidOperation:
            raise bad("not a number") from None
        if d.is_nan():
            return math.nan
        if d.is_infinite():
            return math.inf if d > 0 else -math.inf
        return d
    raise bad()


def _discrete(num, lo: int, hi: int) -> tuple[str, Any]:
    """Place an int/Decimal on the integers in [lo, hi]."""
    if num > hi:
        return "above", None
    if num < lo:
        return "below", None
    if isinstance(num, int):
        return "exact", num
    fl = int(num.to_integral_value(rounding=decimal.ROUND_FLOOR))
    return ("exact" if fl == num else "between"), fl


# =========================================================================== evaluation
def _is_nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _key(v):
    """Spark's ordering for floats: NaN above everything, NaN equal to NaN."""
    if isinstance(v, float):
        return (1, 0.0) if math.isnan(v) else (0, v)
    return (0, v)


def _eq(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return _key(a) == _key(b)
    return a == b


_MISSING = object()


def evaluate(expr: Expr, row: Union[Mapping[int, Any], Callable[[int], Any]]) -> bool:
    """Whether a row (field id -> internal value) satisfies a bound expression.

    SQL semantics: a row "matches" when the expression is TRUE (a comparison
    with a null is not). ``Unknown`` counts as a match ("may match"), so the
    result is inclusive; a field id missing from ``row`` also makes its
    predicates match.
    """
    return _eval_nnf(rewrite_not(expr), row)


def _lookup(row, fid):
    if callable(row):
        return row(fid)
    return row.get(fid, _MISSING) if hasattr(row, "get") else row[fid]


def _eval_nnf(e: Expr, row) -> bool:
    if isinstance(e, And):
        return _eval_nnf(e.left, row) and _eval_nnf(e.right, row)
    if isinstance(e, Or):
        return _eval_nnf(e.left, row) or _eval_nnf(e.right, row)
    if isinstance(e, (AlwaysTrue, Unknown)):
        return True
    if isinstance(e, AlwaysFalse):
        return False
    if isinstance(e, Not):
        return _eval_nnf(rewrite_not(e), row)
    if not isinstance(e, Predicate) or not isinstance(e.term, BoundReference):
        raise ExpressionError(f"cannot evaluate unbound expression {e}; bind it first")
    v = _lookup(row, e.term.field_id)
    if v is _MISSING:
        return True
    return eval_predicate(e, v)


def eval_predicate(p: Predicate, v: Any) -> bool:
    """Whether the value ``v`` (internal form, None for null) satisfies predicate ``p``."""
    if isinstance(p, IsNull):
        return v is None
    if isinstance(p, NotNull):
        return v is not None
    if isinstance(p, IsNaN):
        return _is_nan(v)
    if isinstance(p, NotNaN):
        return not _is_nan(v)
    if v is None:
        return False
    if isinstance(p, SetPredicate):
        found = any(_eq(v, x) for x in p.literals)
        return found if isinstance(p, In) else not found
    lit = p.literal
    if isinstance(p, StartsWith):
        return isinstance(v, str) and v.startswith(lit)
    if isinstance(p, NotStartsWith):
        return isinstance(v, str) and not v.startswith(lit)
    if isinstance(p, EqualTo):
        return _eq(v, lit)
    if isinstance(p, NotEqualTo):
        return not _eq(v, lit)
    a, b = _key(v), _key(lit)
    if isinstance(p, LessThan):
        return a < b
    if isinstance(p, LessThanOrEqual):
        return a <= b
    if isinstance(p, GreaterThan):
        return a > b
    if isinstance(p, GreaterThanOrEqual):
        return a >= b
    raise ExpressionError(f"cannot evaluate {p!r}")  # pragma: no cover


__all__ = [
    "ExpressionError", "Reference", "BoundReference", "Expr", "AlwaysTrue", "AlwaysFalse", "Unknown",
    "And", "Or", "Not", "Predicate", "UnaryPredicate", "LiteralPredicate", "SetPredicate",
    "IsNull", "NotNull", "IsNaN", "NotNaN", "EqualTo", "NotEqualTo", "LessThan", "LessThanOrEqual",
    "GreaterThan", "GreaterThanOrEqual", "StartsWith", "NotStartsWith", "In", "NotIn",
    "and_", "or_", "not_", "rewrite_not", "references", "format_literal", "parse_predicate", "bind",
    "evaluate", "eval_predicate",
]
