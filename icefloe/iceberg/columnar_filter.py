# pyright: strict
"""A plan's filter judged over a manifest's columns all at once (spec, "Scan Planning").

The same answers as ``evaluators.PartitionEvaluator`` and ``evaluators.MetricsEvaluator`` give
file by file, as boolean arrays over a ``manifest_arrow.ManifestColumns``:

- partitions: a manifest's files share few partition tuples; each distinct tuple is judged once
  and the verdicts are spread to the files by index;
- column metrics: for a predicate on a whole-number column (int, long, date, time, timestamps)
  with whole-number literals, the bounds are read from their single-value serialisation
  ("Appendix D": little-endian, 4 or 8 bytes) into int64 arrays and compared in numpy; any other
  predicate (floats with their NaN rules, strings, decimals, literals beyond 64 bits) is judged
  file by file by ``MetricsEvaluator`` itself, from the statistics of that one column.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from icefloe.core.arrow import numpy_of
from icefloe.core import expressions as ex
from icefloe.core.expressions import (
    AlwaysFalse, And, BoundReference, EqualTo, Expr, GreaterThan, GreaterThanOrEqual, In, IsNaN, IsNull, LessThan,
    LessThanOrEqual, Not, NotEqualTo, NotIn, NotNaN, NotNull, Or, Predicate,
)
from icefloe.core.types import DateType, IcebergType, IntegerType, LongType
from icefloe.core.types.model import is_micros, is_nanos
from icefloe.iceberg.evaluators import MetricsEvaluator, PartitionEvaluator
from icefloe.iceberg.manifest_arrow import ManifestColumns

Mask = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]

_I64 = (-(1 << 63), (1 << 63) - 1)
# the metrics maps, by index into ``manifest.METRIC_FIELDS``
_VALUE_COUNTS, _NULL_COUNTS, _NAN_COUNTS, _LOWER, _UPPER = 1, 2, 3, 4, 5


def partition_mask(cols: ManifestColumns, evaluator: PartitionEvaluator) -> Mask:
    """``evaluator.eval(partition)`` of every file of ``cols``."""
    judge: Callable[[tuple[Any, ...]], bool] = evaluator.eval
    verdicts = np.fromiter((judge(p) for p in cols.partitions), bool, len(cols.partitions))
    return verdicts[cols.partition_index]


def metrics_mask(cols: ManifestColumns, evaluator: MetricsEvaluator) -> Mask:
    """``evaluator.may_match(file)`` of every file of ``cols``."""
    rows_ok = ~(cols.record_count_known & (cols.record_count <= 0))
    return _eval(evaluator.expr, cols, evaluator) & rows_ok


def _eval(e: Expr, cols: ManifestColumns, evaluator: MetricsEvaluator) -> Mask:
    n = len(cols)
    if isinstance(e, And):
        return _eval(e.left, cols, evaluator) & _eval(e.right, cols, evaluator)
    if isinstance(e, Or):
        return _eval(e.left, cols, evaluator) | _eval(e.right, cols, evaluator)
    if isinstance(e, (AlwaysFalse, ex.AlwaysNull)):
        return np.zeros(n, bool)
    if isinstance(e, Not):
        return _eval(ex.rewrite_not(e), cols, evaluator)
    if isinstance(e, Predicate):
        if not isinstance(e.term, BoundReference):
            raise ex.ExpressionError(f"expression {e} is not bound; bind it to the table schema first")
        return _leaf(e, cols, evaluator)
    return np.ones(n, bool)          # AlwaysTrue, Unknown


def _widths(t: IcebergType) -> Optional[tuple[int, ...]]:
    """The byte widths a whole-number bound of type ``t`` may have (None: not a whole number),
    as ``MetricsEvaluator`` reads them (a long promoted from int keeps 4-byte bounds)."""
    if isinstance(t, LongType) or is_micros(t) or is_nanos(t):
        return (4, 8)
    if isinstance(t, (IntegerType, DateType)):
        return (4,)
    return None


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and _I64[0] <= v <= _I64[1]


def _literals(p: Predicate) -> list[Any]:
    if isinstance(p, (In, NotIn)):
        return list(p.literals)
    if isinstance(p, (IsNull, NotNull, IsNaN, NotNaN)):
        return []
    return [getattr(p, "literal", None)]


_VECTORISED = (IsNull, NotNull, IsNaN, NotNaN, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual,
               EqualTo, NotEqualTo, In, NotIn)


def _leaf(p: Predicate, cols: ManifestColumns, evaluator: MetricsEvaluator) -> Mask:
    ref = p.ref
    widths = _widths(ref.field_type)
    literals = _literals(p)
    if widths is None or not isinstance(p, _VECTORISED) or not all(_whole(v) for v in literals):
        return _file_by_file(p, cols, evaluator)
    n = len(cols)
    fid = ref.field_id
    vc, vc_known = _counts(cols, _VALUE_COUNTS, fid)
    nc, nc_known = _counts(cols, _NULL_COUNTS, fid)
    # as ``evaluators._file_stats`` without NaN: a null may be present unless the null count is 0
    # or the value count is 0 or less; a value unless the nulls are all the values
    null_possible = (~nc_known | (nc > 0)) & ~(vc_known & (vc <= 0))
    value_possible = ~vc_known | (np.where(nc_known, nc, 0) < vc)
    if isinstance(p, IsNull):
        return null_possible
    if isinstance(p, NotNull):
        return value_possible
    if isinstance(p, IsNaN):
        return np.zeros(n, bool)
    if isinstance(p, NotNaN):
        return null_possible | value_possible
    lower, has_lower = _bounds(cols, _LOWER, fid, widths)
    upper, has_upper = _bounds(cols, _UPPER, fid, widths)
    lo_unknown, hi_unknown = ~has_lower, ~has_upper
    if isinstance(p, (In, NotIn)):
        values = np.asarray(literals, np.int64)
        if isinstance(p, In):
            out = np.zeros(n, bool)
            for v in values:
                out |= (lo_unknown | (lower <= v)) & (hi_unknown | (upper >= v))
        else:
            out = ~(has_lower & has_upper & (lower == upper) & np.isin(lower, values))
        return out & value_possible
    v = np.int64(literals[0])
    if isinstance(p, LessThan):
        out = lo_unknown | (lower < v)
    elif isinstance(p, LessThanOrEqual):
        out = lo_unknown | (lower <= v)
    elif isinstance(p, GreaterThan):
        out = hi_unknown | (upper > v)
    elif isinstance(p, GreaterThanOrEqual):
        out = hi_unknown | (upper >= v)
    elif isinstance(p, EqualTo):
        out = (lo_unknown | (lower <= v)) & (hi_unknown | (upper >= v))
    else:   # NotEqualTo
        out = ~(has_lower & has_upper & (lower == v) & (upper == v))
    return out & value_possible


def _counts(cols: ManifestColumns, kind: int, field_id: int) -> tuple[Ints, Mask]:
    """A count metric of ``field_id`` per file, and whether the file holds it."""
    rows, values = cols.metric(kind, field_id)
    out = np.zeros(len(cols), np.int64)
    known = np.zeros(len(cols), bool)
    if len(rows):
        out[rows] = numpy_of(values.cast(pa.int64()))
        known[rows] = True
    return out, known


def _bounds(cols: ManifestColumns, kind: int, field_id: int, widths: tuple[int, ...]) -> tuple[Ints, Mask]:
    """A bound of ``field_id`` per file as int64, and whether the file has one that reads as a
    whole number (a bound of another width is no bound, as ``MetricsEvaluator`` reads it)."""
    rows, values = cols.metric(kind, field_id)
    out = np.zeros(len(cols), np.int64)
    known = np.zeros(len(cols), bool)
    if not len(rows):
        return out, known
    blobs = values.cast(pa.large_binary())
    offsets = np.frombuffer(blobs.buffers()[1], dtype=np.int64)[blobs.offset:blobs.offset + len(blobs) + 1]
    lengths = np.where((numpy_of(blobs.is_valid()) if blobs.null_count else np.ones(len(blobs), bool)), np.diff(offsets), -1)
    data_buffer = blobs.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    for width in widths:
        chosen = lengths == width
        if not chosen.any():
            continue
        dtype = np.dtype("<i8" if width == 8 else "<i4")
        first = int(offsets[0])
        if chosen.all() and int(offsets[-1]) - first == width * len(chosen):
            # every bound this width, back to back: the data buffer is the array of them
            decoded: Ints = np.frombuffer(data, dtype=dtype, count=len(chosen), offset=first).astype(np.int64)
        else:
            starts = offsets[:-1][chosen]
            raw = data[starts[:, None] + np.arange(width)[None, :]]
            decoded = np.frombuffer(raw.tobytes(), dtype=dtype).astype(np.int64)
        out[rows[chosen]] = decoded
        known[rows[chosen]] = True
    return out, known


class _OneColumn:
    """What ``MetricsEvaluator`` reads of a file, for one column: its statistics tuple."""

    __slots__ = ("metrics", "record_count")

    def __init__(self) -> None:
        self.metrics: tuple[Any, ...] = ()
        self.record_count: Optional[int] = None

    def metrics_of(self, field_id: int) -> tuple[Any, ...]:
        return self.metrics


def _file_by_file(p: Predicate, cols: ManifestColumns, evaluator: MetricsEvaluator) -> Mask:
    """``p`` judged by ``MetricsEvaluator`` for each file, from the statistics of its column."""
    fid = p.ref.field_id
    stats = [cols.metric_values(kind, fid) for kind in (_VALUE_COUNTS, _NULL_COUNTS, _NAN_COUNTS, _LOWER, _UPPER)]
    judge: Callable[[_OneColumn], bool] = MetricsEvaluator(evaluator.schema, p).may_match
    one = _OneColumn()
    out = np.zeros(len(cols), bool)
    for i, metrics in enumerate(zip(*stats)):
        one.metrics = metrics
        out[i] = judge(one)
    return out


__all__ = ["metrics_mask", "partition_mask"]
