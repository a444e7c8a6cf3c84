"""Predicate expressions used to prune files during scan planning (format-neutral).

The AST is small and immutable: ``AlwaysTrue``, ``AlwaysFalse``, ``AlwaysNull`` (SQL's
unknown, for comparisons with NULL), ``Unknown``,
``And``, ``Or``, ``Not`` and predicates on one column (``EqualTo``, ``In``,
``StartsWith``...). A predicate's term is a :class:`Reference` (a column name,
"unbound") or, after :func:`bind`, a :class:`BoundReference` (field id, name,
type) with literals converted to internal values (see
``icefloe.core.values``: ints for int/long/date days/timestamp micros).

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

Modules: ``tree`` (the nodes and combinators), ``literals`` (reading literal values),
``parse`` (Spark SQL text -> tree, with sqlglot), ``bind`` (names -> field ids, literals
-> internal values), ``evaluate`` (a bound tree against one row), ``arrow`` (a bound tree
as a pyarrow.compute filter). Every public name is importable from this package.
"""
from __future__ import annotations

from icefloe.core.expressions.bind import (  # noqa: F401
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    US_PER_DAY,
    bind,
)
from icefloe.core.expressions.evaluate import (  # noqa: F401
    MISSING,
    eval_nnf,
    eval_predicate,
    evaluate,
    is_nan,
    sort_key,
    values_equal,
)
from icefloe.core.expressions.literals import (  # noqa: F401
    FRACTION,
    float32,
    parse_datetime,
    to_date,
    to_float,
    to_timestamp,
)
from icefloe.core.expressions.parse import (  # noqa: F401
    NotLiteral,
    parse_predicate,
)
from icefloe.core.expressions.tree import (  # noqa: F401
    SIMPLE_NAME,
    AlwaysFalse,
    AlwaysNull,
    AlwaysTrue,
    And,
    BoundReference,
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
    LikeNotEqualTo,
    LiteralPredicate,
    Not,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    Predicate,
    Reference,
    SetPredicate,
    StartsWith,
    Term,
    UnaryPredicate,
    Unknown,
    and_,
    as_term,
    dedupe,
    format_literal,
    like_escape,
    not_,
    or_,
    paren,
    quote_name,
    references,
    rewrite_not,
)
from icefloe.errors import ExpressionError

__all__ = [
    "ExpressionError",
    "Reference",
    "BoundReference",
    "Term",
    "SIMPLE_NAME",
    "quote_name",
    "as_term",
    "Expr",
    "AlwaysTrue",
    "AlwaysFalse",
    "AlwaysNull",
    "Unknown",
    "And",
    "Or",
    "Not",
    "paren",
    "Predicate",
    "UnaryPredicate",
    "LiteralPredicate",
    "SetPredicate",
    "dedupe",
    "IsNull",
    "NotNull",
    "IsNaN",
    "NotNaN",
    "EqualTo",
    "NotEqualTo",
    "LessThan",
    "LessThanOrEqual",
    "GreaterThan",
    "GreaterThanOrEqual",
    "StartsWith",
    "NotStartsWith",
    "In",
    "NotIn",
    "LikeEqualTo",
    "LikeNotEqualTo",
    "like_escape",
    "and_",
    "or_",
    "not_",
    "rewrite_not",
    "references",
    "format_literal",
    "to_float",
    "float32",
    "to_date",
    "FRACTION",
    "parse_datetime",
    "to_timestamp",
    "parse_predicate",
    "NotLiteral",
    "INT_MIN",
    "INT_MAX",
    "LONG_MIN",
    "LONG_MAX",
    "US_PER_DAY",
    "bind",
    "is_nan",
    "sort_key",
    "values_equal",
    "MISSING",
    "evaluate",
    "eval_nnf",
    "eval_predicate",
]
