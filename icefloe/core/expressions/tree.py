"""The expression tree: terms, predicates and their combinators, and literals spelled as Spark SQL."""
from __future__ import annotations

import datetime as _dt
import decimal
import math
import re
import uuid as _uuid
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Optional, Union

from icefloe.core.types import DateType, IcebergType, TimestampType, TimestamptzType
from icefloe.errors import ExpressionError


# =========================================================================== terms
@dataclass(frozen=True)
class Reference:
    """An unbound column reference by name (dotted path for struct fields)."""

    name: str

    def __str__(self) -> str:
        return quote_name(self.name)


@dataclass(frozen=True)
class BoundReference:
    """A column resolved against a schema (or a partition field, after projection)."""

    field_id: int
    name: str
    field_type: IcebergType

    def __str__(self) -> str:
        return quote_name(self.name)


Term = Union[Reference, BoundReference]

SIMPLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def quote_name(name: str) -> str:
    if SIMPLE_NAME.match(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def as_term(t: object) -> Term:
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
class AlwaysNull(Expr):
    """SQL's unknown truth value everywhere (``x = NULL``, ``WHERE NULL``): no row passes it,
    and none passes its NOT either. It folds by Kleene's rules (unknown AND false is false,
    unknown OR true is true, NOT unknown is unknown) and becomes false only once every NOT
    is pushed below it (``rewrite_not``), where "the row passes" is all that is asked."""

    def negate(self) -> Expr:
        return self

    def __str__(self) -> str:
        return "NULL"


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
        return f"{paren(self.left, Or)} AND {paren(self.right, Or)}"


@dataclass(frozen=True)
class Or(Expr):
    left: Expr
    right: Expr

    def negate(self) -> Expr:
        return And(self.left.negate(), self.right.negate())

    def __str__(self) -> str:
        return f"{paren(self.left, And)} OR {paren(self.right, And)}"


@dataclass(frozen=True)
class Not(Expr):
    child: Expr

    def negate(self) -> Expr:
        return self.child

    def __str__(self) -> str:
        return f"NOT ({self.child})"


def paren(e: Expr, other: Union[type[Expr], tuple[type[Expr], ...]]) -> str:
    return f"({e})" if isinstance(e, other) else str(e)


# --------------------------------------------------------------------- predicates
class Predicate(Expr):
    term: Term

    @property
    def is_bound(self) -> bool:
        return isinstance(self.term, BoundReference)

    def with_term(self, term: Term) -> "Predicate":  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def ref(self) -> BoundReference:
        """The column of a bound predicate (``ExpressionError`` before binding)."""
        if not isinstance(self.term, BoundReference):
            raise ExpressionError(f"predicate {self} is not bound to a schema")
        return self.term


@dataclass(frozen=True, init=False)
class UnaryPredicate(Predicate):
    term: Term

    def __init__(self, term: Union[Term, str]):
        object.__setattr__(self, "term", as_term(term))

    def with_term(self, term: Term) -> Predicate:
        return type(self)(term)


@dataclass(frozen=True, init=False)
class LiteralPredicate(Predicate):
    term: Term
    literal: Any
    op: ClassVar[str] = ""       # the comparison's operator in SQL (the subclasses set it)

    def __init__(self, term: Union[Term, str], literal: Any):
        object.__setattr__(self, "term", as_term(term))
        object.__setattr__(self, "literal", literal)

    def with_term(self, term: Term, literal: Any = None) -> Predicate:
        return type(self)(term, self.literal if literal is None else literal)

    def _lit(self) -> str:
        return format_literal(self.literal, self.term.field_type if isinstance(self.term, BoundReference) else None)


def literal_of(p: Predicate) -> Any:
    """The literal of a comparison or string predicate; ``ExpressionError`` for another kind."""
    if isinstance(p, LiteralPredicate):
        return p.literal
    raise ExpressionError(f"predicate {p} has no single literal")


@dataclass(frozen=True, init=False)
class SetPredicate(Predicate):
    term: Term
    literals: tuple[Any, ...]

    def __init__(self, term: Union[Term, str], literals: Iterable[Any]):
        object.__setattr__(self, "term", as_term(term))
        if isinstance(literals, (str, bytes)):
            raise ExpressionError(f"IN needs a collection of values, got {literals!r}")
        object.__setattr__(self, "literals", tuple(dedupe(literals)))

    def with_term(self, term: Term, literals: Optional[Iterable[Any]] = None) -> Predicate:
        return type(self)(term, self.literals if literals is None else literals)

    def _lits(self) -> str:
        t = self.term.field_type if isinstance(self.term, BoundReference) else None
        return ", ".join(format_literal(v, t) for v in self.literals)


def dedupe(values: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    seen: set[Any] = set()
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
    def negate(self) -> Expr:
        return NotNull(self.term)

    def __str__(self):
        return f"{self.term} IS NULL"


class NotNull(UnaryPredicate):
    def negate(self) -> Expr:
        return IsNull(self.term)

    def __str__(self):
        return f"{self.term} IS NOT NULL"


class IsNaN(UnaryPredicate):
    def negate(self) -> Expr:
        return NotNaN(self.term)

    def __str__(self):
        return f"isnan({self.term})"


class NotNaN(UnaryPredicate):
    def negate(self) -> Expr:
        return IsNaN(self.term)

    def __str__(self):
        return f"NOT isnan({self.term})"


class EqualTo(LiteralPredicate):
    op = "="

    def negate(self) -> Expr:
        return NotEqualTo(self.term, self.literal)

    def __str__(self):
        return f"{self.term} = {self._lit()}"


class NotEqualTo(LiteralPredicate):
    op = "!="

    def negate(self) -> Expr:
        return EqualTo(self.term, self.literal)

    def __str__(self):
        return f"{self.term} != {self._lit()}"


class LessThan(LiteralPredicate):
    op = "<"

    def negate(self) -> Expr:
        return GreaterThanOrEqual(self.term, self.literal)

    def __str__(self):
        return f"{self.term} < {self._lit()}"


class LessThanOrEqual(LiteralPredicate):
    op = "<="

    def negate(self) -> Expr:
        return GreaterThan(self.term, self.literal)

    def __str__(self):
        return f"{self.term} <= {self._lit()}"


class GreaterThan(LiteralPredicate):
    op = ">"

    def negate(self) -> Expr:
        return LessThanOrEqual(self.term, self.literal)

    def __str__(self):
        return f"{self.term} > {self._lit()}"


class GreaterThanOrEqual(LiteralPredicate):
    op = ">="

    def negate(self) -> Expr:
        return LessThan(self.term, self.literal)

    def __str__(self):
        return f"{self.term} >= {self._lit()}"


class StartsWith(LiteralPredicate):
    """String prefix match (``LIKE 'prefix%'``); null never matches."""

    def negate(self) -> Expr:
        return NotStartsWith(self.term, self.literal)

    def __str__(self):
        return f"{self.term} LIKE {format_literal(like_escape(str(self.literal)) + '%')}"


class NotStartsWith(LiteralPredicate):
    """Negation of :class:`StartsWith`; null never matches either."""

    def negate(self) -> Expr:
        return StartsWith(self.term, self.literal)

    def __str__(self):
        return f"{self.term} NOT LIKE {format_literal(like_escape(str(self.literal)) + '%')}"


class In(SetPredicate):
    def negate(self) -> Expr:
        return NotIn(self.term, self.literals)

    def __str__(self):
        return f"{self.term} IN ({self._lits()})"


class NotIn(SetPredicate):
    def negate(self) -> Expr:
        return In(self.term, self.literals)

    def __str__(self):
        return f"{self.term} NOT IN ({self._lits()})"


class LikeEqualTo(EqualTo):
    """``col LIKE 'abc'`` (no wildcard): string equality, but only on a string column
    (Spark casts the column to string; on other types it is not a numeric comparison)."""

    def negate(self) -> Expr:
        return LikeNotEqualTo(self.term, self.literal)

    def __str__(self):
        return f"{self.term} LIKE {format_literal(like_escape(str(self.literal)))}"


class LikeNotEqualTo(NotEqualTo):
    def negate(self) -> Expr:
        return LikeEqualTo(self.term, self.literal)

    def __str__(self):
        return f"{self.term} NOT LIKE {format_literal(like_escape(str(self.literal)))}"


def like_escape(s: str) -> str:
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
        if isinstance(e, AlwaysNull) and isinstance(out, AlwaysNull):
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
        if isinstance(e, AlwaysNull) and isinstance(out, AlwaysNull):
            continue
        out = e if out is None else Or(out, e)
    return AlwaysFalse() if out is None else out


def not_(e: Expr) -> Expr:
    """NOT, folding constants and double negation (``Unknown`` and ``AlwaysNull`` stay)."""
    if isinstance(e, (AlwaysTrue, AlwaysFalse, AlwaysNull, Unknown)):
        return e.negate()
    if isinstance(e, Not):
        return e.child
    return Not(e)


def rewrite_not(expr: Expr) -> Expr:
    """Push every NOT down to the leaves (negating predicates); constants are folded.

    The result contains no ``Not`` node. Because each predicate's negation is
    false on nulls (like SQL's NOT of an unknown), the rewritten expression
    holds for a row exactly when the original is TRUE under SQL's
    three-valued logic. For the same reason ``AlwaysNull`` is false here: below every
    NOT, "unknown" and "false" both mean the row does not pass.
    """
    if isinstance(expr, AlwaysNull):
        return AlwaysFalse()
    if isinstance(expr, Not):
        return rewrite_not(expr.child.negate())
    if isinstance(expr, And):
        return and_(rewrite_not(expr.left), rewrite_not(expr.right))
    if isinstance(expr, Or):
        return or_(rewrite_not(expr.left), rewrite_not(expr.right))
    return expr


def references(expr: Expr) -> set[Union[int, str]]:
    """The column names (unbound) or field ids (bound) an expression refers to."""
    out: set[Union[int, str]] = set()

    def walk(e: Expr) -> None:
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
    if isinstance(t, DateType) and isinstance(v, int):
        v = _dt.date(1970, 1, 1) + _dt.timedelta(days=v)
    elif t == TimestampType() and isinstance(v, int):
        v = _dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=v)
    elif t == TimestamptzType() and isinstance(v, int):
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


