"""Spark SQL predicate text -> an unbound expression tree (sqlglot does the parsing)."""
from __future__ import annotations

import decimal
import re
from typing import TYPE_CHECKING, Any, Optional

from icefloe.core.expressions.literals import NotLiteral, float32, to_date, to_float, to_timestamp
from icefloe.core.expressions.tree import (
    AlwaysFalse,
    AlwaysNull,
    AlwaysTrue,
    And,
    EqualTo,
    Expr,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    LikeEqualTo,
    LiteralPredicate,
    Not,
    NotEqualTo,
    NotNull,
    Or,
    Predicate,
    StartsWith,
    Unknown,
    or_,
)
from icefloe.errors import ExpressionError

if TYPE_CHECKING:
    from sqlglot import exp


# =========================================================================== parsing
def parse_predicate(text: object) -> Expr:
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
        errs: list[dict[str, Any]] = getattr(e, "errors", None) or []
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
    return _Converter(text).convert(node)


def _offset(text: str, line: int, col: int) -> int:
    lines = text.split("\n")
    return sum(len(t) + 1 for t in lines[: max(line - 1, 0)]) + max(col - 1, 0)


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


_INT_RE = re.compile(r"^[0-9]+$")


class _Converter:
    def __init__(self, text: str):
        self.text = text

    def error(self, node: exp.Expr, why: str) -> ExpressionError:
        pos = ""
        meta = _first_meta(node)
        if meta is not None:
            pos = f" at position {meta}"
        return ExpressionError(f"cannot use predicate {self.text!r}{pos}: {why}")

    def unknown(self, node: exp.Expr) -> Unknown:
        try:
            return Unknown(node.sql(dialect="spark"))
        except Exception:  # pragma: no cover - sqlglot cannot print it back
            return Unknown(type(node).__name__)

    # ----------------------------------------------------------------- boolean
    def convert(self, node: exp.Expr) -> Expr:
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
            return child.negate() if isinstance(child, (Predicate, Unknown, AlwaysTrue, AlwaysFalse, AlwaysNull)) \
                else Not(child)
        if isinstance(node, exp.Boolean):
            return AlwaysTrue() if node.this else AlwaysFalse()
        if isinstance(node, exp.Null):
            return AlwaysNull()  # WHERE NULL selects nothing; NOT NULL neither
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
    def column(self, node: exp.Column) -> str:
        parts = [p.name for p in node.parts]
        return ".".join(parts)

    def column_or_none(self, node: Optional[exp.Expr]) -> Optional[str]:
        from sqlglot import exp

        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            return self.column(node)
        return None

    def literal_or_none(self, node: exp.Expr) -> Any:
        try:
            return self.literal(node)
        except NotLiteral:
            return None

    def comparison(self, node: exp.Binary, pred: type[LiteralPredicate]) -> Expr:
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
        except NotLiteral:
            return self.unknown(node)
        if value is None:
            return AlwaysNull()  # col op NULL is unknown, and so is its negation
        return pred(col, value)

    def null_safe_eq(self, node: exp.NullSafeEQ) -> Expr:
        left_col = self.column_or_none(node.this)
        right_col = self.column_or_none(node.expression)
        if left_col is not None and right_col is None:
            col, other = left_col, node.expression
        elif right_col is not None and left_col is None:
            col, other = right_col, node.this
        else:
            return self.unknown(node)
        try:
            value = self.literal(other)
        except NotLiteral:
            return self.unknown(node)
        if value is None:
            return IsNull(col)
        # never null: its negation must hold for null rows too
        return And(NotNull(col), EqualTo(col, value))

    def is_(self, node: exp.Is) -> Expr:
        from sqlglot import exp

        col = self.column_or_none(node.this)
        if col is None:
            return self.unknown(node)
        if isinstance(node.expression, exp.Null):
            return IsNull(col)
        if isinstance(node.expression, exp.Boolean):
            return And(NotNull(col), EqualTo(col, bool(node.expression.this)))
        return self.unknown(node)

    def in_(self, node: exp.In) -> Expr:
        col = self.column_or_none(node.this)
        if col is None or node.args.get("query") is not None or node.args.get("unnest") is not None \
                or node.args.get("field") is not None:
            return self.unknown(node)
        values: list[Any] = []
        has_null = False
        for item in node.expressions:
            try:
                v = self.literal(item)
            except NotLiteral:
                return self.unknown(node)
            if v is None:
                has_null = True
            else:
                values.append(v)
        # x IN (a, NULL) is true where x = a and unknown elsewhere: never false, so its NOT
        # (x NOT IN (a, NULL)) selects no row
        found = In(col, values) if values else AlwaysFalse()
        return or_(found, AlwaysNull()) if has_null else found

    def between(self, node: exp.Between) -> Expr:
        col = self.column_or_none(node.this)
        if col is None or node.args.get("symmetric"):
            return self.unknown(node)
        try:
            low = self.literal(node.args["low"])
            high = self.literal(node.args["high"])
        except NotLiteral:
            return self.unknown(node)
        lo = AlwaysNull() if low is None else GreaterThanOrEqual(col, low)
        hi = AlwaysNull() if high is None else LessThanOrEqual(col, high)
        return And(lo, hi)

    def like(self, node: exp.Like, escape: str) -> Expr:
        col = self.column_or_none(node.this)
        try:
            pattern = self.literal(node.expression)
        except NotLiteral:
            return self.unknown(node)
        if col is None or not isinstance(pattern, str):
            return self.unknown(node)
        parsed = _parse_like(pattern, escape)
        if parsed is None:
            return self.unknown(node)
        kind, s = parsed
        return LikeEqualTo(col, s) if kind == "eq" else StartsWith(col, s)

    # ----------------------------------------------------------------- literals
    def literal(self, node: exp.Expr) -> Any:
        """The Python value of a literal node; raises NotLiteral when it is not one."""
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
                raise NotLiteral()
            return -v
        if isinstance(node, exp.Concat):
            parts = [self.literal(p) for p in node.expressions]
            if all(isinstance(p, str) for p in parts):
                return "".join(parts)
            raise NotLiteral()
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
        raise NotLiteral()

    def cast(self, node: exp.Cast) -> Any:
        from sqlglot import exp

        inner = self.literal(node.this)
        to = node.args.get("to")
        if not isinstance(to, exp.DataType):
            raise NotLiteral()
        T = exp.DataType.Type
        kind = to.this
        if inner is None:
            return None
        try:
            if kind == T.DATE:
                return to_date(inner)
            if kind in (T.TIMESTAMP, T.TIMESTAMPTZ, T.TIMESTAMPLTZ):
                return to_timestamp(inner, utc=True)
            if kind == T.TIMESTAMPNTZ:
                return to_timestamp(inner, utc=False)
            if kind in (T.TINYINT, T.SMALLINT, T.INT, T.BIGINT):
                if isinstance(inner, bool):
                    return int(inner)
                d = inner if isinstance(inner, decimal.Decimal) else decimal.Decimal(str(inner).strip())
                if not d.is_finite():
                    raise ValueError("not a finite number")
                return int(d)  # truncates toward zero, as Spark's cast does
            if kind in (T.DOUBLE, T.FLOAT):
                f = to_float(inner)
                if kind == T.FLOAT:
                    f = float32(f)
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
                raise NotLiteral()
            if kind == T.BOOLEAN:
                if isinstance(inner, bool):
                    return inner
                if isinstance(inner, str) and inner.strip().lower() in ("true", "false"):
                    return inner.strip().lower() == "true"
                raise NotLiteral()
            if kind in (T.BINARY, T.VARBINARY):
                if isinstance(inner, str):
                    return inner.encode("utf-8")
                if isinstance(inner, bytes):
                    return inner
                raise NotLiteral()
        except (ValueError, ArithmeticError, decimal.InvalidOperation) as e:
            raise self.error(node, f"invalid literal {node.sql(dialect='spark')}: {e}") from None
        raise NotLiteral()


def _first_meta(node: exp.Expr) -> Optional[int]:
    try:
        for n in node.walk():
            m: dict[str, Any] = getattr(n, "meta", None) or {}
            if "start" in m:
                return int(m["start"])
    except Exception:  # pragma: no cover
        return None
    return None


_FLIPPED: dict[type[LiteralPredicate], type[LiteralPredicate]] = {
    EqualTo: EqualTo, NotEqualTo: NotEqualTo, LessThan: GreaterThan, LessThanOrEqual: GreaterThanOrEqual,
    GreaterThan: LessThan, GreaterThanOrEqual: LessThanOrEqual,
}


def _number(s: str) -> int | float | decimal.Decimal:
    s = str(s)
    if _INT_RE.match(s):
        return int(s)
    if "e" in s.lower():
        return float(s)
    return decimal.Decimal(s)


def _parse_like(pattern: str, escape: str) -> Optional[tuple[str, str]]:
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


