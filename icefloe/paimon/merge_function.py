# pyright: strict
"""The partial-update and aggregation merge engines, record by record.

``icefloe.paimon.merge`` merges whole buckets with Arrow kernels where it can (deduplicate,
first-row, and the simple cases of the other two engines). What those kernels cannot
express runs here, one key's records at a time in sequence order, with Paimon's semantics:

- Per-column aggregate functions (``fields.<name>.aggregate-function``, default
  ``fields.default-aggregate-function``, else ``last_non_null_value``): sum, product, max,
  min, last_value, last_non_null_value, first_value, first_non_null_value, bool_and,
  bool_or, listagg (``fields.<name>.list-agg-delimiter``, ``fields.<name>.distinct``),
  collect (``fields.<name>.distinct``) and merge_map. Paimon has no ``count`` function.
- Retractions (-U/-D records) in the aggregation engine: sum subtracts, product divides,
  last_value and last_non_null_value clear, collect removes the elements, merge_map removes
  the keys; other functions refuse them unless ``fields.<name>.ignore-retract``. With
  ``aggregation.remove-record-on-delete`` a -D removes the row.
- Partial-update sequence groups (``fields.<s1>[,<s2>].sequence-group = <c1>,<c2>``): the
  columns of a group change only with records whose group sequence is not all null and not
  older than the current one (nulls included); a retraction clears the group's columns.
  Aggregate functions in partial-update need a sequence group (``last_non_null_value``
  excepted). ``partial-update.remove-record-on-delete`` makes a -D remove the row,
  ``partial-update.remove-record-on-sequence-group`` does so for the named groups.

The result of a key is its row and whether the key is deleted (a deleted key still has a
row: writers store it as a -D record, which carries the retraction to older files).
"""
from __future__ import annotations

import decimal
from typing import Any, Iterable, Mapping, Sequence, cast

from icefloe.errors import NotSupportedError, RetractRefused, UnsupportedTableError

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3

# A record as merge functions take it: (row kind, values in the function's column order)
Record = tuple[int, Sequence[Any]]

FUNCTIONS = ("sum", "product", "max", "min", "last_value", "last_non_null_value", "first_value",
             "first_non_null_value", "bool_and", "bool_or", "listagg", "collect", "merge_map", "primary_key")


def _truthy(options: Mapping[str, str], key: str) -> bool:
    return str(options.get(key, "false")).strip().lower() == "true"


def _csv(value: object) -> list[str]:
    return [p.strip() for p in str(value or "").split(",") if p.strip()]


# --------------------------------------------------------------------------- aggregators
class Aggregator:
    """One column's aggregate function: ``agg`` folds a value in, ``retract`` takes one out."""

    def __init__(self, name: str, column: str, options: Mapping[str, str], arrow_type: Any = None):
        self.name, self.column, self.type = name, column, arrow_type
        self.ignore_retract = _truthy(options, f"fields.{column}.ignore-retract")
        self.distinct = _truthy(options, f"fields.{column}.distinct")
        self.delimiter = str(options.get(f"fields.{column}.list-agg-delimiter", ","))
        self._seen = False

    def reset(self) -> None:
        self._seen = False

    def agg(self, acc: Any, value: Any) -> Any:
        n = self.name
        if n in ("primary_key", "last_value"):
            return value
        if n == "last_non_null_value":
            return acc if value is None else value
        if n == "first_value":
            if not self._seen:
                self._seen = True
                return value
            return acc
        if n == "first_non_null_value":
            if not self._seen and value is not None:
                self._seen = True
                return value
            return acc
        if n == "listagg":
            return self._listagg(acc, value)
        if n == "collect":
            if acc is None and value is None:
                return None
            if self.distinct:
                out: list[Any] = []
                for part in (acc, value):
                    for v in part or ():
                        if v not in out:
                            out.append(v)
                return out
            if acc is None or value is None:
                return value if acc is None else acc
            return list(acc) + list(value)
        if acc is None or value is None:
            return value if acc is None else acc
        if n == "sum":
            return acc + value
        if n == "product":
            return acc * value
        if n == "max":
            return value if value > acc else acc
        if n == "min":
            return value if value < acc else acc
        if n == "bool_and":
            return acc and value
        if n == "bool_or":
            return acc or value
        if n == "merge_map":
            merged = dict(_pairs(acc))
            merged.update(_pairs(value))
            return list(merged.items())
        raise UnsupportedTableError(f"unknown aggregate function {n!r}")   # pragma: no cover - validated first

    def agg_reversed(self, acc: Any, value: Any) -> Any:
        """An older record's value folded in (partial-update sequence groups)."""
        return self.agg(value, acc)

    def retract(self, acc: Any, value: Any) -> Any:
        if self.ignore_retract:
            return acc
        n = self.name
        if n == "primary_key":
            return value
        if n == "last_value":
            return None
        if n == "last_non_null_value":
            return None if value is not None else acc
        if n == "sum":
            if acc is None or value is None:
                return _negate(value) if acc is None else acc
            return acc - value
        if n == "product":
            if acc is None or value is None:
                return acc
            return _divide(acc, value)
        if n == "collect":
            if acc is None or not value:
                return acc
            out = list(acc)
            for v in value:
                if v in out:
                    out.remove(v)
            return out
        if n == "merge_map":
            if acc is None or not value:
                return acc
            drop = {k for k, _ in _pairs(value)}
            return [(k, v) for k, v in _pairs(acc) if k not in drop]
        raise RetractRefused(
            f"the aggregate function {n!r} of column {self.column!r} cannot retract (a -U/-D record "
            f"arrived); set 'fields.{self.column}.ignore-retract' = 'true' to ignore retractions")

    def _listagg(self, acc: Any, value: Any) -> Any:
        if value is None or not str(value).strip():
            return acc
        if acc is None or not str(acc).strip():
            return value
        if not self.distinct:
            return f"{acc}{self.delimiter}{value}"
        sep = self.delimiter or " "
        tokens = str(acc).split(sep)
        seen, out = set(tokens), [str(acc)]
        for t in str(value).split(sep):
            if t.strip() and t not in seen:
                seen.add(t)
                out.append(t)
        return self.delimiter.join(out)


def _pairs(m: Any) -> list[tuple[Any, ...]]:
    if m is None:
        return []
    if isinstance(m, dict):
        return list(cast("dict[Any, Any]", m).items())
    return [tuple(p) for p in m]


def _negate(v: Any) -> Any:
    return None if v is None else -v


def _divide(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        q = abs(a) // abs(b)              # truncated toward zero, as integer division does in Java
        return q if (a >= 0) == (b >= 0) else -q
    if isinstance(a, decimal.Decimal):
        return a / b
    if b == 0:
        return float("nan") if a == 0 else (float("inf") if a > 0 else float("-inf"))
    return a / b


def aggregate_function_name(name: str, primary_keys: Sequence[str], options: Mapping[str, str], seq_fields: Sequence[str] = ()) -> str:
    """The aggregation engine's function for column ``name`` (Paimon's precedence)."""
    if name in seq_fields:
        return "last_value"
    if name in primary_keys:
        return "primary_key"
    return str(options.get(f"fields.{name}.aggregate-function")
               or options.get("fields.default-aggregate-function") or "last_non_null_value").strip().lower()


def _check_function(fn: str, column: str, table: str) -> None:
    if fn not in FUNCTIONS:
        extra = " (Paimon has no 'count': use sum over a column of ones)" if fn == "count" else ""
        raise NotSupportedError(f"read the aggregate function {fn!r} (column {column!r})", table, "paimon",
                                f"icefloe merges {', '.join(f for f in FUNCTIONS if f != 'primary_key')}{extra}")


# --------------------------------------------------------------------------- partial-update groups
def sequence_groups(names: Sequence[str], options: Mapping[str, str], table: str = "table") -> list[tuple[list[str], list[str]]]:
    """The partial-update sequence groups: (sequence columns, protected columns) each."""
    groups: list[tuple[list[str], list[str]]] = []
    owner: dict[str, str] = {}
    for key in sorted(options):
        k = str(key)
        if not (k.startswith("fields.") and k.endswith(".sequence-group")):
            continue
        seq = _csv(k[len("fields."):-len(".sequence-group")])
        cols = _csv(options[key])
        for c in seq + cols:
            if c not in names:
                raise UnsupportedTableError(f"table {table}: option {k} names column {c!r}, which the table lacks")
        for c in cols:
            if c in owner:
                raise UnsupportedTableError(f"table {table}: column {c!r} is in two sequence groups "
                                            f"({owner[c]} and {k})")
            owner[c] = k
        groups.append((seq, cols))
    return groups


class PartialUpdate:
    """Paimon's partial-update merge function over value rows (lists in ``names`` order)."""

    def __init__(self, names: Sequence[str], primary_keys: Sequence[str], options: Mapping[str, str], nullable: Sequence[bool],
                 table: str = "table"):
        self.names = list(names)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.nullable = list(nullable)
        self.table = table
        self.ignore_delete = _truthy(options, "ignore-delete") or _truthy(options, "partial-update.ignore-delete")
        self.remove_on_delete = _truthy(options, "partial-update.remove-record-on-delete")
        groups = sequence_groups(self.names, options, table)
        self.groups = [([self.index[s] for s in seq], [self.index[c] for c in cols]) for seq, cols in groups]
        remove_groups = _csv(options.get("partial-update.remove-record-on-sequence-group"))
        seq_names = {s for seq, _ in groups for s in seq}
        for s in remove_groups:
            if s not in seq_names:
                raise UnsupportedTableError(f"table {table}: 'partial-update.remove-record-on-sequence-group' "
                                            f"names {s!r}, which is no sequence group's sequence field")
        self.remove_groups = {self.index[s] for s in remove_groups}
        if self.remove_on_delete and self.ignore_delete:
            raise UnsupportedTableError(f"table {table}: 'ignore-delete' and "
                                        "'partial-update.remove-record-on-delete' cannot both be set")
        if self.remove_on_delete and self.groups:
            raise UnsupportedTableError(f"table {table}: sequence groups and "
                                        "'partial-update.remove-record-on-delete' cannot both be set")
        protected = {c for _, cols in groups for c in cols}
        self.aggs: dict[int, Aggregator] = {}
        for n in self.names:
            if n in seq_names:
                continue
            if n in primary_keys:
                fn = "primary_key"
            else:
                fn = options.get(f"fields.{n}.aggregate-function") or options.get("fields.default-aggregate-function")
                if fn is None:
                    continue
                fn = str(fn).strip().lower()
                if fn != "last_non_null_value" and n not in protected:
                    raise UnsupportedTableError(f"table {table}: column {n!r} has aggregate function {fn!r} "
                                                "without a sequence group; partial-update needs one")
            _check_function(fn, n, table)
            self.aggs[self.index[n]] = Aggregator(fn, n, options)
        # column index -> its group (sequence indexes, protected indexes)
        self.group_of: dict[int, tuple[list[int], list[int]]] = {}
        for g in self.groups:
            for i in g[0] + g[1]:
                self.group_of[i] = g

    def merge(self, records: Iterable[Record]) -> tuple[list[Any], bool]:
        """``records``: (kind, values) in sequence order; returns (row, deleted)."""
        row: list[Any] = [None] * len(self.names)
        for a in self.aggs.values():
            a.reset()
        met_insert = deleted = False
        for kind, values in records:
            deleted = False
            if not met_insert:           # the NOT NULL columns (the key) are set from any record
                for i, v in enumerate(values):
                    if not self.nullable[i] and row[i] is None:
                        row[i] = v
            if kind in (UPDATE_BEFORE, DELETE):
                if self.ignore_delete:
                    continue
                if self.groups:
                    if self._retract(row, values, kind):
                        row, deleted = self._cleared(values), True
                    continue
                if self.remove_on_delete:
                    if kind == DELETE:
                        row, deleted = self._cleared(values), True
                    continue
                raise UnsupportedTableError(
                    f"table {self.table}: the partial-update merge engine got a DELETE/UPDATE_BEFORE record; "
                    "set 'ignore-delete', 'partial-update.remove-record-on-delete' or sequence groups")
            if self.groups:
                self._update(row, values)
            else:
                for i, v in enumerate(values):
                    if v is not None:
                        row[i] = v
            met_insert = True
        return row, deleted or not met_insert

    def _cleared(self, values: Sequence[Any]) -> list[Any]:
        return [v if not self.nullable[i] else None for i, v in enumerate(values)]

    @staticmethod
    def _seq_key(values: Sequence[Any], seq: Iterable[int]) -> tuple[tuple[int, Any], ...]:
        return tuple((0, None) if values[i] is None else (1, values[i]) for i in seq)

    def _update(self, row: list[Any], values: Sequence[Any]) -> None:
        # a group's sequence columns are set together when the first of them is reached; a
        # protected column compares the record with the row as it is then (equal once set)
        done: set[int] = set()
        for i, v in enumerate(values):
            agg = self.aggs.get(i)
            g = self.group_of.get(i)
            if g is None:
                if agg is not None:
                    row[i] = agg.agg(row[i], v)
                elif v is not None:
                    row[i] = v
                continue
            seq, _ = g
            if all(values[s] is None for s in seq):
                continue                                   # this record does not touch the group
            newer = self._seq_key(values, seq) >= self._seq_key(row, seq)
            if i in seq:
                if newer and id(g) not in done:
                    for s in seq:
                        row[s] = values[s]
                    done.add(id(g))
                continue
            if newer:
                row[i] = v if agg is None else agg.agg(row[i], v)
            elif agg is not None:
                row[i] = agg.agg_reversed(row[i], v)

    def _retract(self, row: list[Any], values: Sequence[Any], kind: int) -> bool:
        """Retract a -U/-D record's groups; True if the row is to be removed."""
        old = list(row)
        for seq, cols in self.groups:
            if all(values[s] is None for s in seq):
                continue
            if self._seq_key(values, seq) >= self._seq_key(old, seq):
                if kind == DELETE and any(s in self.remove_groups for s in seq):
                    return True
                for s in seq:
                    row[s] = values[s]
                for c in cols:
                    agg = self.aggs.get(c)
                    row[c] = None if agg is None else agg.retract(row[c], values[c])
            else:
                for c in cols:
                    agg = self.aggs.get(c)
                    if agg is not None:
                        row[c] = agg.retract(row[c], values[c])
        return False


class Aggregation:
    """Paimon's aggregation merge function over value rows."""

    def __init__(self, names: Sequence[str], primary_keys: Sequence[str], options: Mapping[str, str], nullable: Sequence[bool],
                 seq_fields: Sequence[str] = (), table: str = "table"):
        self.names = list(names)
        self.nullable = list(nullable)
        self.remove_on_delete = _truthy(options, "aggregation.remove-record-on-delete")
        self.aggs: list[Aggregator] = []
        for n in self.names:
            fn = aggregate_function_name(n, primary_keys, options, seq_fields)
            _check_function(fn, n, table)
            self.aggs.append(Aggregator(fn, n, options))

    def merge(self, records: Iterable[Record]) -> tuple[list[Any], bool]:
        row: list[Any] = [None] * len(self.names)
        for a in self.aggs:
            a.reset()
        deleted = False
        for kind, values in records:
            deleted = self.remove_on_delete and kind == DELETE
            if deleted:
                row = [v if not self.nullable[i] else None for i, v in enumerate(values)]
                for a in self.aggs:
                    a.reset()
                continue
            retract = kind in (UPDATE_BEFORE, DELETE)
            for i, (a, v) in enumerate(zip(self.aggs, values)):
                row[i] = a.retract(row[i], v) if retract else a.agg(row[i], v)
        return row, deleted


def merge_function(engine: str, names: Sequence[str], primary_keys: Sequence[str], options: Mapping[str, str],
                   nullable: Sequence[bool], seq_fields: Sequence[str] = (), table: str = "table") -> PartialUpdate | Aggregation:
    if engine == "partial-update":
        return PartialUpdate(names, primary_keys, options, nullable, table)
    return Aggregation(names, primary_keys, options, nullable, seq_fields, table)


__all__ = ["Aggregator", "PartialUpdate", "Aggregation", "merge_function", "sequence_groups",
           "aggregate_function_name", "FUNCTIONS", "RetractRefused"]
