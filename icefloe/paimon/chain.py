# pyright: strict
"""Paimon chain tables: a batch read of main merged with the snapshot and delta branches, and what
a write to those branches does to the other, as Paimon's ``ChainGroupReadTable`` and its commit
callbacks (release 1.4.2) do.

A read of the table (main, or any branch other than the two) plans partition by partition:

1. a partition main has is read from main;
2. else a partition the snapshot branch has is read from it (a full partition);
3. else a partition only the delta branch has is *chain merged*: its group (the values of the
   partition keys before the chain keys, ``chain-table.chain-partition-keys``) is looked up in the
   snapshot branch for the nearest earlier full partition (the anchor, compared on the chain keys);
   the anchor's files and the files of the delta partitions after it up to the one read (found by
   stepping the partition time, ``partition.timestamp-pattern`` and ``-formatter``, a day at a time
   for one chain key, an hour at a time for more) are merged by key, bucket by bucket, with the
   delta branch's merge engine, and every row takes the partition's values. Without an anchor,
   every delta partition of the group up to the one read is merged.

Which partition a row belongs to is decided before any filter, so a filter only selects rows.
A write to the delta branch that overwrites partitions truncates the same partitions of the
snapshot branch (one OVERWRITE snapshot there); dropping a snapshot partition that delta
partitions after it rely on, with no earlier snapshot partition to anchor them, is refused.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Protocol, Sequence

from icefloe.core import types as core
from icefloe.errors import AfterCommitError, SchemaError, UnsupportedTableError
from icefloe.paimon import chain_options as co
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon import manifest as mf
from icefloe.paimon import predicate as pr
from icefloe.paimon.merge import iter_merged_bucket
from icefloe.paimon.scan import bind_filter
from icefloe.paimon.snapshot import OVERWRITE
from icefloe.paimon.schema import TableSchema
from icefloe.paimon.predicate import to_arrow_expression
from icefloe.paimon.types import DataField, to_arrow_schema

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.core.io import FileIO
    from icefloe.paimon.file_store import FileStore
    from icefloe.paimon.snapshot import Snapshot

Values = tuple[Any, ...]

# why icefloe refuses, on a chain table's merged read, what it reads from one branch's files
ONE_BRANCH = ("a chain table's rows are main's, its snapshot branch's and its delta branch's merged, and icefloe "
              "does this from one branch's files only: use it on a branch, db.`t$branch_<name>` (writes go to "
              "the snapshot or delta branch)")
# why icefloe refuses a chain table's changes (incremental queries, changelogs) read on main
INCREMENTAL = ("a chain table's rows are merged from its main, snapshot and delta branches, whose snapshots are "
               "numbered apart, so main's changes are not the table's and a range of main's snapshots names none of "
               "the other two's; Paimon's docs read a chain table's increments from its delta branch: query "
               "db.`t$branch_delta` (or another branch)")


class ChainTable(Protocol):
    """What the chain read and the branch writes ask of a table (``FileStoreTable``)."""

    name: str
    branch: Optional[str]
    io: FileIO

    @property
    def table_schema(self) -> TableSchema: ...

    @property
    def store(self) -> FileStore: ...

    def plan(self, where: Any = None) -> list[mf.ManifestEntry]: ...

    def current_snapshot(self) -> Optional[Snapshot]: ...

    def schema_by_id(self, schema_id: int) -> TableSchema: ...

    def check_mergeable(self, schema: TableSchema) -> None: ...

    def branch_table(self, name: str) -> ChainTable: ...

    def commit(self, messages: Sequence[Any], overwrite: bool = False, *,
               overwrite_partitions: Optional[Callable[[Sequence[Any]], bool]] = None) -> Optional[Snapshot]: ...


@dataclass(frozen=True)
class MergeUnit:
    """One bucket of partition ``partition`` read as one merge: ``schema`` (the branch's) gives the
    merge engine, keys and read fields, ``file_fields`` the fields each file was written with; the
    merged rows take the column names ``names`` (main's) and, for a chain merge (``chained``), the
    partition's values in the partition columns."""
    paths: tuple[str, ...]
    file_fields: tuple[tuple[DataField, ...], ...]
    levels: tuple[int, ...]
    schema: TableSchema
    names: tuple[str, ...]
    partition: Values
    chained: bool = False


def active(table: ChainTable) -> bool:
    """Whether a read of ``table`` is a chain read."""
    return co.branches(table.table_schema.options, table.branch) is not None


def _branch(table: ChainTable, name: str, option: str) -> ChainTable:
    try:
        return table.branch_table(name)
    except Exception as e:
        raise UnsupportedTableError(f"chain table {table.name}: {option} names branch {name!r}, which cannot be "
                                    f"read ({e})") from None


def _check_same_row_type(a: ChainTable, b: ChainTable) -> None:
    """Paimon's check: the branches' columns have the same types, position by position."""
    fa, fb = a.table_schema.fields, b.table_schema.fields
    if len(fa) != len(fb) or any(str(x.type) != str(y.type) for x, y in zip(fa, fb)):
        raise UnsupportedTableError(
            f"chain table {a.name}: branch {a.branch or 'main'} and {b.branch or 'main'} do not have the same row "
            f"type ({', '.join(f'{f.name} {f.type}' for f in fa)} vs {', '.join(f'{f.name} {f.type}' for f in fb)})")


def _by_partition(table: ChainTable) -> dict[Values, list[mf.ManifestEntry]]:
    """The table's live files by partition (every partition with a file, as Paimon lists them)."""
    entries = table.plan()
    out: dict[Values, list[mf.ManifestEntry]] = {}
    store = table.store
    for e in entries:
        out.setdefault(tuple(store.partition_values(e.partition)), []).append(e)
    return out


def _order(values: Values) -> tuple[tuple[int, Any], ...]:
    """A sort key of partition values, nulls first (Paimon's partition comparator)."""
    return tuple((0, None) if v is None else (1, v) for v in values)


def _same(a: Values, b: Values) -> bool:
    """Paimon's equality predicate on each field: a null equals nothing."""
    return all(x is not None and y is not None and x == y for x, y in zip(a, b))


def _before(a: Values, b: Values) -> bool:
    """Paimon's "triangular" predicate: ``a`` before ``b`` field by field (a null compares to nothing)."""
    for x, y in zip(a, b):
        if x is None or y is None:
            return False
        if x != y:
            return bool(x < y)
    return False


def _units(table: ChainTable, entries: Sequence[tuple[ChainTable, mf.ManifestEntry]], schema: TableSchema,
           names: tuple[str, ...], partition: Values, chained: bool = False) -> list[MergeUnit]:
    """``entries`` of partition ``partition`` (each with the branch it belongs to; a chain merge's
    from several partitions) merged per bucket, one unit each."""
    buckets: dict[int, list[tuple[ChainTable, mf.ManifestEntry]]] = {}
    totals = {e.total_buckets for _, e in entries}
    if chained and len(totals) > 1:
        raise UnsupportedTableError(f"chain table {table.name}: Inconsistent bucket num {sorted(totals)} among the "
                                    f"partitions merged for partition {list(partition)}")
    for owner, e in entries:
        if e.file.level == 0 and dv.skips_level0(owner.table_schema.options):     # first-row: as its reads
            continue
        buckets.setdefault(e.bucket, []).append((owner, e))
    out: list[MergeUnit] = []
    for group in buckets.values():
        group.sort(key=lambda oe: (oe[1].file.max_sequence_number, oe[1].file.min_sequence_number))
        out.append(MergeUnit(
            tuple(e.file.path for _, e in group),
            tuple(tuple(owner.schema_by_id(e.file.schema_id).fields) for owner, e in group),
            tuple(e.file.level for _, e in group), schema, names, partition, chained))
    return out


def plan(table: ChainTable, where: Any = None, travel: bool = False, with_main: bool = True,
         not_in_snapshot: Sequence[Values] = ()) -> list[MergeUnit]:
    """The merges a chain read of ``table`` is made of (see the module). ``where`` only narrows the
    partitions planned. Without ``with_main`` the read is of the snapshot and delta branches alone
    (as ``compact_chain_table`` reads them); partitions in ``not_in_snapshot`` are chain merged
    even where the snapshot branch has them."""
    if travel:
        raise UnsupportedTableError(f"chain table {table.name}: time travel of its merged read is not supported "
                                    "(the branches' snapshots are not one history); read a branch, "
                                    "db.`t$branch_<name>`, at a snapshot")
    found = co.branches(table.table_schema.options, table.branch)
    if found is None:
        raise UnsupportedTableError(f"table {table.name} is not read as a chain table")
    schema = table.table_schema
    snap_t = _branch(table, found[0], co.SNAPSHOT_BRANCH)
    delta_t = _branch(table, found[1], co.DELTA_BRANCH)
    _check_same_row_type(table, snap_t)
    _check_same_row_type(snap_t, delta_t)
    for t in (table, snap_t, delta_t):
        t.check_mergeable(t.table_schema)
    names = tuple(f.name for f in schema.fields)
    keys = schema.partition_keys
    pred = bind_filter(where, schema.fields)

    def kept(values: Values) -> bool:
        return pr.may_match(pred, {k: pr.ColumnRange(v, v, 1 if v is None else 0, 1) for k, v in zip(keys, values)})

    units: list[MergeUnit] = []
    main_parts = _by_partition(table) if with_main else {}
    complete = {p for p in main_parts if kept(p)}
    for p in complete:
        units += _units(table, [(table, e) for e in main_parts[p]], schema, names, p)
    snap_parts, delta_parts = _by_partition(snap_t), _by_partition(delta_t)
    skipped = set(not_in_snapshot)
    full = {p: es for p, es in snap_parts.items() if p not in skipped}
    remaining = {p for p in (*snap_parts, *delta_parts) if p not in complete and kept(p)}
    for p in remaining:
        if p in full:
            units += _units(table, [(snap_t, e) for e in full[p]], snap_t.table_schema, names, p)
    chained = [p for p in remaining if p not in full and p in delta_parts]
    n_group = len(keys) - len(co.chain_keys(schema.options, keys))
    for p in sorted(chained, key=_order):
        group, chain = p[:n_group], p[n_group:]
        anchors = [s for s in full if _same(s[:n_group], group) and _before(s[n_group:], chain)]
        anchor = max(anchors, key=lambda s: _order(s[n_group:])) if anchors else None
        if anchor is None:
            deltas = [d for d in delta_parts if d == p or (_same(d[:n_group], group) and _before(d[n_group:], chain))]
        else:
            stepped = set(delta_partitions_between(anchor, p, n_group, schema))
            deltas = [d for d in delta_parts if d in stepped]
        merged = [(delta_t, e) for d in sorted(deltas, key=_order) for e in delta_parts[d]]
        if anchor is not None:
            merged += [(snap_t, e) for e in full[anchor]]
        units += _units(table, merged, delta_t.table_schema, names, p, chained=True)
    return units


# --------------------------------------------------------------------------- partition times
def _text(value: Any) -> str:
    return str(value)


def _typed(text: str, t: core.IcebergType, default_name: str, key: str) -> Any:
    """A partition value from its text (Paimon's ``convertSpecToInternalRow``)."""
    if text == default_name:
        return None
    if isinstance(t, core.StringType):
        return text
    if isinstance(t, (core.IntegerType, core.LongType, core.ShortType, core.ByteType)):
        try:
            return int(text)
        except ValueError:
            raise UnsupportedTableError(f"chain partition key {key}: {text!r} is not a {t} value") from None
    raise UnsupportedTableError(f"chain partition key {key} has type {t}; icefloe steps chain partitions of "
                                "string and integer keys")


def _time_of(keys: Sequence[str], values: Values, pattern: str, fmt: str, formatter: str) -> _dt.datetime:
    """Paimon's ``PartitionTimeExtractor``: ``$key`` in the pattern replaced by each value, then parsed."""
    text = pattern
    for k, v in zip(keys, values):
        text = text.replace("$" + k, _text(v))
    try:
        return _dt.datetime.strptime(text, fmt)
    except ValueError:
        raise UnsupportedTableError(f"chain partition {dict(zip(keys, values))}: {text!r} is not a time of "
                                    f"{co.TIMESTAMP_FORMATTER} {formatter!r}") from None


def _values_at(time: _dt.datetime, keys: Sequence[str], types: Sequence[core.IcebergType], pattern: str,
               fmt: str, default_name: str) -> Optional[Values]:
    """Paimon's ``calPartValues``: the time formatted, read back through the pattern's ``$key`` places."""
    formatted = time.strftime(fmt)
    order: list[str] = []
    regex = ""
    last = 0
    for m in re.finditer(r"\$(\w+)", pattern):
        regex += re.escape(pattern[last:m.start()]) + "(.+)"
        order.append(m.group(1))
        last = m.end()
    regex += re.escape(pattern[last:])
    found = re.fullmatch(regex, formatted)
    if found is None:
        raise UnsupportedTableError(f"{co.TIMESTAMP_PATTERN} {pattern!r} does not match the formatted time "
                                    f"{formatted!r}")
    texts = {k: found.group(i + 1) for i, k in enumerate(order)}
    return tuple(_typed(texts.get(k, ""), t, default_name, k) for k, t in zip(keys, types))


def delta_partitions_between(begin: Values, end: Values, n_group: int, schema: TableSchema) -> list[Values]:
    """The partitions after ``begin`` up to ``end`` (same group), stepped by partition time as Paimon's
    ``getDeltaPartitions``: one chain key steps a day at a time, more step hour by hour within each day."""
    options = schema.options
    pattern, formatter = options[co.TIMESTAMP_PATTERN], options[co.TIMESTAMP_FORMATTER]
    try:
        fmt = co.python_time_format(formatter)
    except SchemaError as e:
        raise UnsupportedTableError(str(e)) from None
    keys = schema.partition_keys[n_group:]
    types = schema.partition_types[n_group:]
    default_name = schema.core_options.partition_default_name
    group, first, last = begin[:n_group], begin[n_group:], end[n_group:]
    start = _time_of(keys, first, pattern, fmt, formatter)
    stop = _time_of(keys, last, pattern, fmt, formatter)
    out: list[Values] = []
    candidate = start
    while candidate <= stop:
        if len(keys) == 1:
            if candidate > start:
                v = _values_at(candidate, keys, types, pattern, fmt, default_name)
                if v is not None:
                    out.append(group + v)
        else:
            day = _dt.datetime.combine(candidate.date(), _dt.time())
            for hour in range(24):
                candidate = day + _dt.timedelta(hours=hour)
                v = _values_at(candidate, keys, types, pattern, fmt, default_name)
                if v is not None and _order(v) > _order(first) and _order(v) <= _order(last):
                    out.append(group + v)
        candidate = _dt.datetime.combine(candidate.date() + _dt.timedelta(days=1), _dt.time())
    return out


# --------------------------------------------------------------------------- reading a unit
def merged_rows(io: FileIO, unit: MergeUnit, table: str) -> Iterator[pa.Table]:
    """The merged rows of one unit, under main's column names, a chain merge's partition columns
    holding the partition read."""
    import pyarrow as pa

    names = [f.name for f in unit.schema.fields]
    positions = [names.index(k) for k in unit.schema.partition_keys]
    for merged in iter_merged_bucket(io, list(unit.paths), [list(f) for f in unit.file_fields], unit.schema, table,
                                     levels=list(unit.levels)):
        merged = merged.rename_columns(list(unit.names))
        if unit.chained:
            for pos, v in zip(positions, unit.partition):
                merged = merged.set_column(pos, unit.names[pos], pa.array([v] * merged.num_rows, merged.column(pos).type))
        yield merged


def to_arrow(table: ChainTable, where: Optional[str], columns: Optional[Sequence[str]], travel: bool) -> pa.Table:
    """A chain read in this process (``FileStoreTable.to_arrow``)."""
    import pyarrow as pa

    schema = table.table_schema
    row_filter = to_arrow_expression(where, schema.fields) if where is not None else None
    units = plan(table, where, travel)
    target = to_arrow_schema(schema.fields, with_ids=False)
    parts = [pa.Table.from_arrays([c.cast(f.type) for c, f in zip(t.columns, target)], schema=target)
             for u in units for t in merged_rows(table.io, u, table.name)]
    out = pa.concat_tables(parts) if parts else target.empty_table()
    if row_filter is not None:
        out = out.filter(row_filter)
    return out.select(list(columns)) if columns else out


# --------------------------------------------------------------------------- writes to the branches
def _partitions_of(store: FileStore, snapshot: Snapshot) -> set[Values]:
    """The partitions of the files a snapshot added or deleted (its delta manifests)."""
    metas = store.read_manifest_list(snapshot.delta_manifest_list, snapshot.delta_manifest_list_size)
    return {tuple(store.partition_values(e.partition)) for e in store.entries(metas)}


def after_overwrite(table: ChainTable, snapshot: Snapshot) -> None:
    """After an OVERWRITE commit of a chain table's delta branch: the partitions it wrote or deleted
    are truncated in the snapshot branch (one OVERWRITE snapshot there), as Paimon's
    ``ChainTableOverwriteCommitCallback`` does; the delta commit stands whatever happens here."""
    options = table.table_schema.options
    if not co.is_branch(options, table.branch, co.DELTA_BRANCH) or snapshot.commit_kind != OVERWRITE:
        return
    parts = _partitions_of(table.store, snapshot)
    if not parts:
        return
    try:
        snap_t = table.branch_table(options[co.SNAPSHOT_BRANCH])
        snap_t.commit([], overwrite=True, overwrite_partitions=lambda values: tuple(values) in parts)
    except Exception as e:
        raise AfterCommitError(f"snapshot {snapshot.id} of branch {table.branch!r} of chain table {table.name} is "
                               f"committed, but truncating its partitions in the snapshot branch failed: {e}") from e


def check_drop(table: ChainTable, overwrite_partitions: Optional[Callable[[Sequence[Any]], bool]]) -> None:
    """Before an OVERWRITE of a chain table's snapshot branch that only deletes files (a drop or a
    truncation): each partition it empties must have no delta partition after it (before the next
    snapshot partition), or an earlier snapshot partition to anchor those, as Paimon's
    ``ChainTableCommitPreCallback`` checks. Raises before anything is written."""
    options = table.table_schema.options
    if not co.is_branch(options, table.branch, co.SNAPSHOT_BRANCH) or table.current_snapshot() is None:
        return
    store = table.store
    live = sorted({tuple(store.partition_values(e.partition)) for e in table.plan()}, key=_order)
    dropped = [p for p in live if overwrite_partitions is None or overwrite_partitions(p)]
    if not dropped:
        return
    delta_t = _branch(table, options[co.DELTA_BRANCH], co.DELTA_BRANCH)
    deltas = sorted({tuple(delta_t.store.partition_values(e.partition)) for e in delta_t.plan()}, key=_order)
    keys = table.table_schema.partition_keys
    for p in dropped:
        earlier = any(_order(s) < _order(p) for s in live)
        later = [s for s in live if _order(s) > _order(p)]
        following = [d for d in deltas if _before(p, d) and (not later or _order(d) < _order(later[0]))]
        if following and not earlier:
            raise UnsupportedTableError(
                f"Snapshot partition cannot be dropped: partition {dict(zip(keys, p))} of chain table {table.name}'s "
                f"snapshot branch {table.branch!r} anchors delta partitions "
                f"{[dict(zip(keys, d)) for d in following]} and no earlier snapshot partition would; nothing was "
                "changed")


__all__ = ["ONE_BRANCH", "INCREMENTAL", "MergeUnit", "active", "plan", "merged_rows", "to_arrow", "after_overwrite", "check_drop",
           "delta_partitions_between"]
