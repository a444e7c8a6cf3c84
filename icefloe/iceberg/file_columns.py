# pyright: strict
"""A cached manifest's files as columns, judged by a plan's filter all at once (spec, "Scan Planning").

A plan asks of every file of every manifest whether its partition and column metrics may match its
filter. Asked file by file, a repeated plan of a large table costs its time in Python calls; held
as columns (one array per statistic of a column the filters name, built once per cached manifest
and column) the comparisons of a predicate run over the whole manifest in a few numpy operations.
Each file's statistics are read exactly as ``evaluators.MetricsEvaluator`` reads them
(``file_stats``), so both answer the same; predicates numpy cannot compare exactly (floats,
strings, decimals, literals beyond 64 bits) are judged file by file with the same rules.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icefloe.core import expressions as ex
from icefloe.core.expressions import (
    AlwaysFalse, AlwaysTrue, And, EqualTo, GreaterThan, GreaterThanOrEqual, In, IsNaN, IsNull, LessThan,
    LessThanOrEqual, Not, NotEqualTo, NotIn, NotNaN, NotNull, Or, Predicate, Unknown,
)
from icefloe.core.types.model import is_floating
from icefloe.iceberg import manifest_avro
from icefloe.iceberg.evaluators import BoundReader, MetricsEvaluator, bound_reader, file_stats, stats_may_match
from icefloe.iceberg.manifest import DATA, DELETED, ManifestEntry

Mask = NDArray[np.bool_]


# types whose bounds are whole numbers that fit 64 bits
_WHOLE = frozenset({"int", "long", "date", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"})
_I64 = (-(1 << 63), (1 << 63) - 1)


class _Column:
    """One column's statistics over a manifest's files: bounds (int64 with a mask of known ones),
    whether a null / a value may be present."""

    __slots__ = ("lower", "has_lower", "upper", "has_upper", "null_possible", "value_possible")

    lower: NDArray[np.int64]
    has_lower: Mask
    upper: NDArray[np.int64]
    has_upper: Mask
    null_possible: Mask
    value_possible: Mask


class FileColumns:
    """The files of a manifest's entries as columns: status, record count, and per column (on first
    use) its statistics."""

    def __init__(self, entries: list[ManifestEntry]):
        self.files = [e.data_file for e in entries]
        self.live = np.fromiter((e.status != DELETED for e in entries), bool, len(entries))
        self.is_data = np.fromiter((f.content == DATA for f in self.files), bool, len(entries))
        # (a record count read from a damaged manifest may be null)
        self.rows_ok = np.fromiter((f.record_count is None or f.record_count > 0  # pyright: ignore[reportUnnecessaryComparison]
                                    for f in self.files), bool,
                                   len(entries))
        self._columns: dict[tuple[int, str], _Column] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.files)

    def column(self, field_id: int, type_name: str, read: BoundReader) -> _Column:
        key = (field_id, type_name)
        hit = self._columns.get(key)
        if hit is not None:
            return hit
        n = len(self.files)
        # value counts, null counts, lower and upper bounds (NaN counts mean nothing to whole numbers)
        vcs, ncs, lows, highs = manifest_avro.metric_columns(self.files, field_id, (1, 2, 4, 5))
        vc_known = np.fromiter((v is not None for v in vcs), bool, n)
        nc_known = np.fromiter((v is not None for v in ncs), bool, n)
        vc = np.fromiter((v or 0 for v in vcs), np.int64, n)
        nc = np.fromiter((v or 0 for v in ncs), np.int64, n)
        # as ``evaluators.file_stats`` with no NaN: a null may be present unless the null count is
        # 0, or the value count is 0 or less; a value unless the nulls are all the values
        null_possible = (~nc_known | (nc > 0)) & ~(vc_known & (vc <= 0))
        value_possible = ~vc_known | (nc < vc)
        lower, upper = np.zeros(n, np.int64), np.zeros(n, np.int64)
        has_lower, has_upper = np.zeros(n, bool), np.zeros(n, bool)
        for i in range(n):
            lo, hi = read(lows[i]), read(highs[i])
            if lo is not None and _I64[0] <= lo <= _I64[1]:
                lower[i], has_lower[i] = lo, True
            if hi is not None and _I64[0] <= hi <= _I64[1]:
                upper[i], has_upper[i] = hi, True
        c = _Column()
        c.lower, c.has_lower, c.upper, c.has_upper = lower, has_lower, upper, has_upper
        c.null_possible, c.value_possible = null_possible, value_possible
        with self._lock:
            self._columns[key] = c
        return c


def _whole(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and _I64[0] <= v <= _I64[1]


def may_match(evaluator: MetricsEvaluator, cols: FileColumns) -> Mask:
    """``evaluator.may_match(f)`` for every file of ``cols``, as a boolean array."""
    return _eval(evaluator.expr, cols) & cols.rows_ok


def _eval(e: ex.Expr, cols: FileColumns) -> Mask:
    n = len(cols)
    if isinstance(e, And):
        return _eval(e.left, cols) & _eval(e.right, cols)
    if isinstance(e, Or):
        return _eval(e.left, cols) | _eval(e.right, cols)
    if isinstance(e, (AlwaysFalse, ex.AlwaysNull)):
        return np.zeros(n, bool)
    if isinstance(e, Not):
        return _eval(ex.rewrite_not(e), cols)
    if isinstance(e, Predicate):
        return _leaf(e, cols)
    if isinstance(e, (AlwaysTrue, Unknown)):
        return np.ones(n, bool)
    return np.ones(n, bool)


def _leaf(p: Predicate, cols: FileColumns) -> Mask:
    fid, t = p.ref.field_id, str(p.ref.field_type)
    literals: list[Any] = list(p.literals) if isinstance(p, (In, NotIn)) else \
        [] if isinstance(p, (IsNull, NotNull, IsNaN, NotNaN)) else [getattr(p, "literal", None)]
    vectorised = (IsNull, NotNull, IsNaN, NotNaN, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual,
                  EqualTo, NotEqualTo, In, NotIn)
    if t not in _WHOLE or not isinstance(p, vectorised) or not all(_whole(v) for v in literals):
        read, is_float = bound_reader(p.ref.field_type), is_floating(p.ref.field_type)     # file by file, the same rules
        return np.fromiter((stats_may_match(p, file_stats(f.metrics_of(fid), is_float, read)) for f in cols.files),
                           bool, len(cols))
    c = cols.column(fid, t, bound_reader(p.ref.field_type))
    if isinstance(p, IsNull):
        return np.array(c.null_possible, copy=True)
    if isinstance(p, NotNull):
        return np.array(c.value_possible, copy=True)          # no NaN in whole numbers
    if isinstance(p, IsNaN):
        return np.zeros(len(cols), bool)
    if isinstance(p, NotNaN):
        return c.null_possible | c.value_possible
    lo_unknown, hi_unknown = ~c.has_lower, ~c.has_upper
    if isinstance(p, (In, NotIn)):
        values = np.asarray(literals, np.int64)
        v = np.int64(0)                     # each of the values in turn, below
    else:
        values = np.zeros(0, np.int64)
        v = np.int64(literals[0])
    if isinstance(p, LessThan):
        out = lo_unknown | (c.lower < v)
    elif isinstance(p, LessThanOrEqual):
        out = lo_unknown | (c.lower <= v)
    elif isinstance(p, GreaterThan):
        out = hi_unknown | (c.upper > v)
    elif isinstance(p, GreaterThanOrEqual):
        out = hi_unknown | (c.upper >= v)
    elif isinstance(p, EqualTo):
        out = (lo_unknown | (c.lower <= v)) & (hi_unknown | (c.upper >= v))
    elif isinstance(p, NotEqualTo):
        out = ~(c.has_lower & c.has_upper & (c.lower == v) & (c.upper == v))
    elif isinstance(p, In):
        out = np.zeros(len(cols), bool)
        for v in values:
            out |= (lo_unknown | (c.lower <= v)) & (hi_unknown | (c.upper >= v))
    else:   # NotIn
        out = ~(c.has_lower & c.has_upper & (c.lower == c.upper) & np.isin(c.lower, values))
    return out & c.value_possible


__all__ = ["FileColumns", "may_match"]
