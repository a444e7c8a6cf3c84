# pyright: strict
"""Iceberg evaluation of bound expressions for scan planning (spec, "Scan Planning").

* :class:`MetricsEvaluator` - may a data file hold a matching row, judging by
  its column bounds and value/null/NaN counts?
* :func:`project_inclusive` - turn a row filter into a filter on partition
  values that every matching row's partition tuple satisfies.
* :class:`PartitionEvaluator` - evaluate a projected filter on one partition
  tuple (exact).
* :class:`ManifestEvaluator` - may a manifest hold a matching file, judging by
  the manifest list's partition field summaries?

All of them are inclusive: they answer False only when the statistics prove
that no row can match; missing statistics mean "may match". Comparisons follow
Spark SQL (see ``icefloe.core.expressions``): NaN is above every float, so a
float column that may hold NaN may match ``>``/``>=``/``!=``/``NOT IN``.
"""
from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Protocol, Sequence

from icefloe.core import expressions as ex
from icefloe.core.expressions import (
    AlwaysFalse, AlwaysTrue, And, BoundReference, EqualTo, Expr, GreaterThan, GreaterThanOrEqual,
    In, IsNaN, IsNull, LessThan, LessThanOrEqual, Not, NotEqualTo, NotIn, NotNaN, NotNull,
    NotStartsWith, Or, Predicate, StartsWith, Unknown, and_, or_,
)
from icefloe.core.types import (
    DateType, DecimalType, IcebergType, IntegerType, LongType, Schema, StructType, is_floating, is_integral, is_micros,
    is_nanos, is_plain_string,
)
from icefloe.iceberg import conversions
from icefloe.iceberg.manifest_list import FieldSummary
from icefloe.iceberg.partitioning import PartitionField, PartitionSpec
from icefloe.iceberg.transforms import (
    BucketTransform, DayTransform, HourTransform, IdentityTransform, MonthTransform,
    TruncateTransform, VoidTransform, YearTransform,
)

# A file's metrics of one column: value count, null count, NaN count, lower and upper bound
Metrics = tuple[Optional[int], Optional[int], Optional[int], Optional[bytes], Optional[bytes]]
# A stored bound -> its value (None where it cannot be read)
BoundReader = Callable[[Optional[bytes]], Any]


class FileMetrics(Protocol):
    """What the metrics evaluator reads of a data file (``DataFile`` and the planner's encoded files)."""

    def metrics_of(self, field_id: int) -> Metrics: ...


# =========================================================================== stats logic
@dataclass
class _Stats:
    """What is known about one column's values in a file or manifest.

    ``lower``/``upper`` bound the non-null, non-NaN values (None: unknown);
    they may be looser than the real min/max (truncated strings).
    """

    lower: Any
    upper: Any
    null_possible: bool    # may hold a null
    nan_possible: bool     # may hold a NaN
    value_possible: bool   # may hold a non-null, non-NaN value


_UNKNOWN_STATS = _Stats(None, None, True, True, True)
# A compiled filter: may this file (its column statistics read so far in the dict) hold a match?
_Judge = Callable[[FileMetrics, "dict[int, _Stats]"], bool]


def _decode(t: IcebergType, data: Optional[bytes]) -> Any:
    if data is None:
        return None
    try:
        v = conversions.from_bytes(t, data)
    except Exception:  # a bound we cannot read is no bound
        return None
    if isinstance(v, float) and math.isnan(v):
        return None  # bounds must not be NaN; a writer that stored one tells us nothing
    return v


def stats_may_match(p: Predicate, st: _Stats) -> bool:
    if isinstance(p, IsNull):
        return st.null_possible
    if isinstance(p, NotNull):
        return st.value_possible or st.nan_possible
    if isinstance(p, IsNaN):
        return st.nan_possible
    if isinstance(p, NotNaN):
        return st.null_possible or st.value_possible
    # value predicates: a null never matches; a NaN (floats) matches the ones below
    is_float = is_floating(p.ref.field_type)
    if is_float and st.nan_possible and isinstance(p, (GreaterThan, GreaterThanOrEqual, NotEqualTo, NotIn)):
        return True
    if not st.value_possible:
        return False
    lo, hi = st.lower, st.upper
    try:
        if isinstance(p, LessThan):
            return lo is None or lo < p.literal
        if isinstance(p, LessThanOrEqual):
            return lo is None or lo <= p.literal
        if isinstance(p, GreaterThan):
            return hi is None or hi > p.literal
        if isinstance(p, GreaterThanOrEqual):
            return hi is None or hi >= p.literal
        if isinstance(p, EqualTo):
            return (lo is None or lo <= p.literal) and (hi is None or hi >= p.literal)
        if isinstance(p, NotEqualTo):
            # every value equals the literal only if both bounds do (lower <= v <= upper)
            return not (lo is not None and hi is not None and lo == p.literal and hi == p.literal)
        if isinstance(p, In):
            return any((lo is None or lo <= v) and (hi is None or hi >= v) for v in p.literals
                       if not (isinstance(v, float) and math.isnan(v)))
        if isinstance(p, NotIn):
            return not (lo is not None and hi is not None and lo == hi and any(lo == v for v in p.literals))
        if isinstance(p, StartsWith):
            prefix = p.literal
            if not isinstance(prefix, str):
                return True
            n = len(prefix)
            if isinstance(lo, str) and lo[:n] > prefix:
                return False
            if isinstance(hi, str) and hi[:n] < prefix:
                return False
            return True
        if isinstance(p, NotStartsWith):
            prefix = p.literal
            # lower <= every value <= upper, both starting with prefix: so does every value
            return not (isinstance(lo, str) and isinstance(hi, str) and isinstance(prefix, str)
                        and lo.startswith(prefix) and hi.startswith(prefix))
    except TypeError:  # a bound of an unexpected type: cannot judge
        return True
    return True


def _walk(e: Expr, pred_fn: Callable[[Predicate], bool]) -> bool:
    """Inclusive evaluation of an NNF expression with a per-predicate judge."""
    if isinstance(e, And):
        return _walk(e.left, pred_fn) and _walk(e.right, pred_fn)
    if isinstance(e, Or):
        return _walk(e.left, pred_fn) or _walk(e.right, pred_fn)
    if isinstance(e, (AlwaysFalse, ex.AlwaysNull)):
        return False
    if isinstance(e, (AlwaysTrue, Unknown)):
        return True
    if isinstance(e, Not):
        return _walk(ex.rewrite_not(e), pred_fn)
    if isinstance(e, Predicate):
        if not isinstance(e.term, BoundReference):
            raise ex.ExpressionError(f"expression {e} is not bound; bind it to the table schema first")
        return pred_fn(e)
    return True


# =========================================================================== metrics
class MetricsEvaluator:
    """Decides from a data file's column metrics whether it may contain a matching row.

    The expression is turned into nested closures once (a plan asks this of every file): each
    predicate knows its field, whether NaN counts matter and how to read its bounds; a file's
    statistics of one column are read once however many predicates name it."""

    def __init__(self, schema: Schema, bound_expr: Expr):
        self.schema = schema
        self.expr = ex.rewrite_not(bound_expr)
        self._fn = self._compile(self.expr)

    def may_match(self, data_file: FileMetrics) -> bool:
        """False only if the file's stats prove that no row matches."""
        rc = getattr(data_file, "record_count", None)
        if rc is not None and rc <= 0:
            return False
        return self._fn(data_file, {})

    def _compile(self, e: Expr) -> _Judge:
        if isinstance(e, (And, Or)):
            left, right = self._compile(e.left), self._compile(e.right)
            if isinstance(e, And):
                return lambda f, c: left(f, c) and right(f, c)
            return lambda f, c: left(f, c) or right(f, c)
        if isinstance(e, (AlwaysFalse, ex.AlwaysNull)):
            return lambda f, c: False
        if isinstance(e, Not):
            return self._compile(ex.rewrite_not(e))
        if isinstance(e, Predicate):
            if not isinstance(e.term, BoundReference):
                raise ex.ExpressionError(f"expression {e} is not bound; bind it to the table schema first")
            return self._leaf(e)
        return lambda f, c: True          # AlwaysTrue, Unknown

    @staticmethod
    def _leaf(p: Predicate) -> _Judge:
        fid, t = p.ref.field_id, p.ref.field_type
        is_float = is_floating(t)
        read = bound_reader(t)

        def leaf(f: FileMetrics, c: dict[int, _Stats]) -> bool:
            st = c.get(fid)
            if st is None:
                st = c[fid] = file_stats(f.metrics_of(fid), is_float, read)
            return stats_may_match(p, st)
        return leaf

    @staticmethod
    def _stats(f: FileMetrics, fid: int, t: IcebergType) -> _Stats:
        return file_stats(f.metrics_of(fid), is_floating(t), bound_reader(t))


def bound_reader(t: IcebergType) -> BoundReader:
    """A function from a stored bound of type ``t`` to its value (None where it cannot be read)."""
    if isinstance(t, LongType) or is_micros(t) or is_nanos(t):
        def read_long(data: Optional[bytes]) -> Optional[int]:   # 8 bytes, or 4 where the column was promoted from int
            if data is None:
                return None
            n = len(data)
            return int.from_bytes(data, "little", signed=True) if n in (4, 8) else None
        return read_long
    if isinstance(t, (IntegerType, DateType)):
        def read_int(data: Optional[bytes]) -> Optional[int]:
            return int.from_bytes(data, "little", signed=True) if data is not None and len(data) == 4 else None
        return read_int

    def read(data: Optional[bytes]) -> Any:
        return _decode(t, data)
    return read


def file_stats(metrics: Metrics, is_float: bool, read: BoundReader) -> _Stats:
    vc, nc, nanc, lower_raw, upper_raw = metrics
    if not is_float:
        nanc = 0
    null_possible = nc is None or nc > 0
    nan_possible = is_float and (nanc is None or nanc > 0)
    if vc is not None:
        if nanc is not None and nanc >= vc:
            null_possible = False
        if nc is not None and nc >= vc:
            nan_possible = False
        value_possible = (nc or 0) + (nanc or 0) < vc
    else:
        value_possible = True
    return _Stats(read(lower_raw), read(upper_raw), null_possible, nan_possible, value_possible)


# =========================================================================== projection
def project_inclusive(bound_expr: Expr, spec: PartitionSpec, schema: Schema) -> Expr:
    """Project a bound row filter onto ``spec``'s partition fields (inclusive).

    The result refers to partition fields (``BoundReference(partition field
    id, partition field name, result type)``) and holds for the partition
    tuple of every row that satisfies ``bound_expr``. Columns without a
    partition field project to ``AlwaysTrue``; several partition fields on one
    column are ANDed.
    """
    by_source: dict[int, list[tuple[PartitionField, IcebergType]]] = {}
    for pf in spec.fields:
        src = schema.find_field_or_none(pf.source_id)
        if src is None:
            continue
        by_source.setdefault(pf.source_id, []).append((pf, src.field_type))

    def project(e: Expr) -> Expr:
        if isinstance(e, And):
            return and_(project(e.left), project(e.right))
        if isinstance(e, Or):
            return or_(project(e.left), project(e.right))
        if isinstance(e, AlwaysFalse):
            return AlwaysFalse()
        if isinstance(e, Predicate):
            if not isinstance(e.term, BoundReference):
                raise ex.ExpressionError(f"expression {e} is not bound; bind it to the table schema first")
            parts = [_project_predicate(e, pf, st) for pf, st in by_source.get(e.term.field_id, [])]
            return and_(*parts)
        return AlwaysTrue()  # AlwaysTrue, Unknown

    return project(ex.rewrite_not(bound_expr))


def _step(t: IcebergType, v: Any, direction: int) -> Any:
    """The next representable value above (+1) or below (-1) ``v`` for discrete types."""
    if is_integral(t) or isinstance(t, DateType) or is_micros(t):
        return v + direction
    if isinstance(t, DecimalType):
        return v + direction * decimal.Decimal(1).scaleb(-t.scale)
    return None


def _project_predicate(p: Predicate, pf: PartitionField, source: IcebergType) -> Expr:
    tr = pf.transform
    pref = BoundReference(pf.field_id, pf.name, tr.result_type(source))
    if isinstance(tr, VoidTransform):
        return AlwaysTrue()
    if isinstance(tr, IdentityTransform):
        return p.with_term(pref)
    if isinstance(p, (IsNull, NotNull)):
        return type(p)(pref)  # every other transform maps null to null and only null
    def apply(v: Any) -> Any:
        return tr.apply(source, v)
    if isinstance(tr, BucketTransform):
        if isinstance(p, EqualTo):
            return EqualTo(pref, apply(p.literal))
        if isinstance(p, In):
            return In(pref, [apply(v) for v in p.literals])
        return AlwaysTrue()
    monotone = isinstance(tr, (TruncateTransform, YearTransform, MonthTransform, DayTransform, HourTransform))
    if not monotone:
        return AlwaysTrue()
    if isinstance(p, EqualTo):
        return EqualTo(pref, apply(p.literal))
    if isinstance(p, In):
        return In(pref, [apply(v) for v in p.literals])
    if isinstance(p, (LessThan, LessThanOrEqual)):
        v = p.literal
        if isinstance(p, LessThan):
            # x < v  =>  x <= v - 1 for discrete types  =>  f(x) <= f(v - 1)
            prev = _step(source, v, -1)
            if prev is not None:
                v = prev
        return LessThanOrEqual(pref, apply(v))
    if isinstance(p, (GreaterThan, GreaterThanOrEqual)):
        v = p.literal
        if isinstance(p, GreaterThan):
            nxt = _step(source, v, +1)
            if nxt is not None:
                v = nxt
        return GreaterThanOrEqual(pref, apply(v))
    if isinstance(tr, TruncateTransform) and is_plain_string(source):
        w = tr.width
        if isinstance(p, StartsWith):
            prefix = p.literal
            if len(prefix) >= w:
                return EqualTo(pref, prefix[:w])
            return StartsWith(pref, prefix)
        if isinstance(p, NotStartsWith):
            prefix = p.literal
            if len(prefix) <= w:
                # s starts with prefix  <=>  s[:w] starts with prefix
                return NotStartsWith(pref, prefix)
            return AlwaysTrue()
    return AlwaysTrue()  # !=, NOT IN, NaN tests: nothing to say about the partition value


# =========================================================================== partitions
def _positions(partition_type: StructType) -> dict[int, int]:
    return {f.field_id: i for i, f in enumerate(partition_type.fields)}


class PartitionEvaluator:
    """Evaluates a projected expression on partition tuples (exact)."""

    def __init__(self, partition_type: StructType, projected_expr: Expr):
        self.partition_type = partition_type
        self.expr = ex.rewrite_not(projected_expr)
        self._pos = _positions(partition_type)
        self._seen: dict[tuple[Any, ...], bool] = {}     # a plan meets the same few partitions in every manifest entry

    def eval(self, partition_tuple: Optional[Sequence[Any]]) -> bool:
        values = tuple(partition_tuple) if partition_tuple is not None else ()
        try:
            hit = self._seen.get(values)
        except TypeError:        # a value that cannot be hashed: evaluated every time
            return self._eval(values)
        if hit is None:
            if len(self._seen) >= 65536:
                self._seen.clear()
            hit = self._seen[values] = self._eval(values)
        return hit

    def _eval(self, values: tuple[Any, ...]) -> bool:

        def lookup(fid: int) -> Any:
            i = self._pos.get(fid)
            if i is None or i >= len(values):
                return ex.MISSING  # unknown field: may match
            return values[i]

        return ex.eval_nnf(self.expr, lookup)


class ManifestEvaluator:
    """Decides from a manifest's partition field summaries whether it may hold matching files."""

    def __init__(self, partition_type: StructType, projected_expr: Expr):
        self.partition_type = partition_type
        self.expr = ex.rewrite_not(projected_expr)
        self._pos = _positions(partition_type)

    def may_match(self, field_summaries: Optional[Iterable[Optional[FieldSummary]]]) -> bool:
        if field_summaries is None:
            return True
        summaries = list(field_summaries)
        cache: dict[int, _Stats] = {}

        def judge(p: Predicate) -> bool:
            fid = p.ref.field_id
            st = cache.get(fid)
            if st is None:
                i = self._pos.get(fid)
                fs = None if i is None or i >= len(summaries) else summaries[i]
                if i is None or fs is None:
                    st = _UNKNOWN_STATS
                else:
                    st = self._stats(fs, self.partition_type.fields[i].field_type)
                cache[fid] = st
            return stats_may_match(p, st)

        return _walk(self.expr, judge)

    @staticmethod
    def _stats(fs: FieldSummary, t: IcebergType) -> _Stats:
        is_float = is_floating(t)
        contains_null = getattr(fs, "contains_null", None)
        contains_nan = getattr(fs, "contains_nan", None)
        null_possible = contains_null is None or bool(contains_null)
        nan_possible = is_float and contains_nan is not False
        lower = _decode(t, getattr(fs, "lower_bound", None))
        upper = _decode(t, getattr(fs, "upper_bound", None))
        raw_lo, raw_hi = getattr(fs, "lower_bound", None), getattr(fs, "upper_bound", None)
        # Spec: the bounds are null when every value is null or NaN.
        all_null_or_nan = raw_lo is None and raw_hi is None and (contains_null is True or contains_nan is True)
        return _Stats(lower, upper, null_possible, nan_possible, not all_null_or_nan)


__all__ = ["MetricsEvaluator", "project_inclusive", "PartitionEvaluator", "ManifestEvaluator"]
