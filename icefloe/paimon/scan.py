# pyright: strict
"""Scan planning: the data files a read of one snapshot uses, after pruning.

The snapshot's base and delta manifest lists name every manifest up to it; their
entries, merged in order (ADD minus DELETE), are the live files. With a filter:

1. a manifest whose partition statistics cannot match is not opened;
2. a file whose exact partition value cannot match is dropped;
3. with equality on every bucket-key column, only the buckets of those keys stay;
4. a file whose value statistics (min/max/null counts) cannot match is dropped;
5. an append table's file whose file index (bloom filter) rules out an ``=`` / ``IN`` is dropped;
6. a row-tracking table's file whose rows the global indexes (``global_index``) prove hold no value
   an ``=``, ``IN``, range or ``IS NULL`` asks for is dropped.

Steps 4 and 5 skip no file of a data-evolution table (``data_evolution``): a row's columns may
be in several files, and a file alone tells nothing about the merged rows.

Dropping an ADD whose DELETE sat in a skipped manifest is safe: both are in the
same partition, which the filter rejects either way.
"""
from __future__ import annotations

import decimal
from typing import Any, Callable, Iterator, Optional, Sequence

from icefloe.core import expressions as ex
from icefloe.core.gc_pause import collection_paused
from icefloe.paimon import file_index as fi
from icefloe.paimon import global_index as gi
from icefloe.paimon.dynamic_bucket import read_index_manifest
from icefloe.paimon import manifest as mf
from icefloe.paimon import manifest_columns as mc
from icefloe.paimon import predicate as pr
from icefloe.paimon import row_tracking
from icefloe.paimon.binary_row import BinaryRow, decode_field, encode_row, null_bits_size
from icefloe.paimon.bucket import bucket_of_hash
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.merge import trimmed_primary_keys
from icefloe.paimon.snapshot import Snapshot
from icefloe.paimon.types import length, root as root_of, type_string
from icefloe.paimon.data_file import DataFileMeta, SimpleStats
from icefloe.paimon.schema import SchemaHistory, TableSchema
from icefloe.paimon.types import DataField
from icefloe.core.types import IcebergType as DataType
from icefloe.paimon.schema_update import can_widen
from icefloe.errors import UnsupportedTableError  # noqa: F401 - defined in icefloe.errors, importable here too

# a schema by its id (a SchemaHistory)
Schemas = Callable[[int], TableSchema]
# where a file's value statistics hold the columns a filter names: (the statistics' field count,
# [(read column, position, type in the file)], [read columns the file's schema lacks])
StatsLayout = tuple[int, list[tuple[str, int, DataType]], list[str]]


def bind_filter(where: object, fields: Sequence[DataField]) -> ex.Expr:
    """A bound predicate for Spark SQL text; anything else (e.g. a Column) prunes nothing."""
    if isinstance(where, str):
        return pr.bind(pr.parse_where(where), fields)
    return pr.ALWAYS


def plan(store: FileStore, snapshot: Optional[Snapshot], where: object = None, schema: Optional[TableSchema] = None,
         schemas: Optional[Schemas] = None) -> list[mf.ManifestEntry]:
    """Live ADD entries of ``snapshot`` that may hold rows matching ``where``, each with
    ``file.file_path`` set to the data file's location. ``where`` is bound to ``schema``
    (the read schema; default: the store's); ``schemas`` looks up a schema by id (for
    the statistics of files written with other schemas)."""
    return list(iter_plan(store, snapshot, where, schema, schemas))


def iter_plan(store: FileStore, snapshot: Optional[Snapshot], where: object = None,
              schema: Optional[TableSchema] = None, schemas: Optional[Schemas] = None) -> Iterator[mf.ManifestEntry]:
    """``plan``'s entries in its order, made as they are read: the manifests are read and judged
    at the first, the entries of those held as columns built as they go (a caller keeping the
    files alone holds no entry per file). The cyclic collector waits until it is exhausted or
    closed."""
    with collection_paused():       # a plan of many files builds objects by the hundred thousand: see core.gc_pause
        yield from _plan(store, snapshot, where, schema, schemas)


def _plan(store: FileStore, snapshot: Optional[Snapshot], where: object, schema: Optional[TableSchema],
          schemas: Optional[Schemas]) -> Iterator[mf.ManifestEntry]:
    if snapshot is None:
        return
    schema = schema if schema is not None else store.schema
    if schemas is None:

        schemas = SchemaHistory(store.io, store.meta_path, [schema, store.schema])
    records = read_index_manifest(store, snapshot.index_manifest)
    if records:
        # HASH indexes (dynamic bucket mode) only guide writers, global indexes only let reads skip
        # rows; deletion vectors change what a read sees
        # (of a primary-key table with 'deletion-vectors.enabled', or of any append table: its files
        # are read minus their vectors)
        kinds = {str(r["_INDEX_TYPE"]) for r in records if not gi.is_global(r)} - {"HASH"}
        if kinds - {"DELETION_VECTORS"} or (kinds and schema.primary_keys
                                            and not schema.core_options.deletion_vectors_enabled) \
                or (kinds and row_tracking.evolution_enabled(schema.options)):
            raise UnsupportedTableError(f"snapshot {snapshot.id} of {store.table_path} has {', '.join(sorted(kinds))} "
                                        "index files icefloe cannot apply here (it reads deletion vectors of "
                                        "append tables and of primary-key tables with 'deletion-vectors.enabled')")
    pred = bind_filter(where, schema.fields)
    pruning = not isinstance(pred, pr.Always)
    part_keys = schema.partition_keys
    part_types = store.partition_types
    manifests = store.data_manifests(snapshot)
    part_cache: dict[bytes, tuple[Any, ...]] = {}
    keep_partition: Optional[Callable[[bytes], bool]] = None
    keep_stats: Optional[Callable[[SimpleStats, int], bool]] = None
    if pruning and part_keys and pr.referenced_columns(pred) & set(part_keys):
        manifests = [m for m in manifests if _manifest_may_match(pred, m, part_keys, part_types)]
        verdicts: dict[bytes, bool] = {}

        def partition_kept(data: bytes) -> bool:
            # an entry of a partition the filter rejects is never built (its DELETE, if
            # any, is in the same partition and dropped alike)
            ok = verdicts.get(data)
            if ok is None:
                values = part_cache[data] = store.partition_values(BinaryRow(len(part_keys), data))
                ranges = {k: pr.ColumnRange(v, v, 1 if v is None else 0, 1) for k, v in zip(part_keys, values)}
                ok = verdicts[data] = pr.may_match(pred, ranges)
            return ok

        def stats_kept(stats: SimpleStats, rows: int) -> bool:   # a block of an indexed manifest
            return _stats_may_match(pred, stats, rows, part_keys, part_types)
        keep_partition, keep_stats = partition_kept, stats_kept
    # a data-evolution table's files are pruned by partition only (its rows merge files column by column)
    per_file = pruning and not row_tracking.evolution_enabled(schema.options)
    keep_file = _raw_stats_filter(pred, schema, schemas) if per_file and not schema.primary_keys else None
    # large manifests are judged as columns (manifest_columns): the same plan, objects built only for kept files
    stats_mask = mc.stats_mask(pred, schema) if keep_file is not None else None
    found, merged = mc.live_entries(store, manifests, keep_partition, keep_file, keep_stats, stats_mask)
    live = found if merged else store.merge_live(found)
    buckets = _selected_buckets(pred, schema) if pruning else None
    index_kept = _index_filter(store, pred, schema, schemas) if per_file else None

    def field_type(schema_id: int, field_id: int) -> Optional[DataType]:
        return next((f.type for f in schemas(schema_id).fields if f.id == field_id), None)
    global_kept = gi.file_filter(store, records, pred, schema, field_type,
                                 lambda: store.live_entries(snapshot)) if per_file else None
    # per partition: its values, its ranges and whether the filter admits it; per (partition, bucket): its directory
    partitions: dict[bytes, tuple[tuple[Any, ...], dict[str, pr.ColumnRange], bool]] = {}
    dirs: dict[tuple[bytes, int], str] = {}
    for e in live:
        data = e.partition.data
        known = partitions.get(data)
        if known is None:
            values = part_cache.get(data)
            if values is None:
                values = part_cache[data] = store.partition_values(e.partition)
            ranges = {k: pr.ColumnRange(v, v, 1 if v is None else 0, 1) for k, v in zip(part_keys, values)}
            known = partitions[data] = (values, ranges, not pruning or pr.may_match(pred, ranges))
        values, ranges, admitted = known
        if pruning:
            if not admitted:
                continue
            if buckets is not None and e.total_buckets > 0 and e.bucket not in buckets(e.total_buckets) \
                    and _same_bucket_keys(schemas, e.file.schema_id, schema):
                continue
            # a primary-key table's file may hold the newer record of a key whose older record
            # matches: only a whole (partition, bucket) may be skipped, never one of its files
            if per_file and not schema.primary_keys and not _file_may_match(pred, e.file, schema, ranges, schemas):
                continue
            # 5. ... or whose file index (a bloom filter) proves an equality cannot match
            if index_kept is not None and not index_kept(e, values):
                continue
            # 6. ... or whose rows the global indexes prove hold none of the values asked for
            if global_kept is not None and not global_kept(e):
                continue
            # ... unless the filter is on the key alone: a file whose key range cannot match holds
            # no record of a matching key, so every record a matching key's merge needs stays
            if schema.primary_keys and not _key_range_may_match(pred, e.file, schema, ranges, schemas):
                continue
        directory = dirs.get((data, e.bucket))
        if directory is None:
            directory = dirs[(data, e.bucket)] = store.bucket_dir(values, e.bucket)
        f = e.file
        placed = f.in_directory(directory)     # a copy, or a file built for this plan placed in place
        yield e if placed is f else mf.ManifestEntry(e.kind, e.partition, e.bucket, e.total_buckets, placed)


def _index_filter(store: FileStore, pred: ex.Expr, schema: TableSchema, schemas: Schemas
                  ) -> Optional[Callable[[mf.ManifestEntry, tuple[Any, ...]], bool]]:
    """For an append table read with ``file-index.read.enabled`` (the default) and an ``=`` / ``IN``
    condition: a test of an entry's file index (embedded, or its ``.index`` file beside the data
    file), False only where a bloom filter rules the file out. A primary-key table's files are
    never skipped one by one (a skipped file may hold the newer record of a key)."""
    if schema.primary_keys or not fi.read_enabled(schema.options):
        return None
    try:     # range conditions only where the table declares bit-sliced indexes (bloom filters cannot help)
        wanted = fi.index_options(schema.options)
    except Exception:
        return None
    bsi = any(fi.BSI in kinds for kinds in wanted.columns.values())
    bitmap = any(fi.BITMAP in kinds for kinds in wanted.columns.values())
    names = fi.point_lookups(pred, ranges=bsi, nulls=bitmap)
    if not names:
        return None
    read_fields = {f.name: f for f in schema.fields if f.name in names}

    def columns_of(schema_id: int) -> dict[str, DataField]:
        file_schema = schema if schema_id == schema.id else schemas(schema_id)
        by_id = {f.id: f for f in file_schema.fields}
        out: dict[str, DataField] = {}
        for n, rf in read_fields.items():
            f = by_id.get(rf.id)
            if f is not None and type_string(f.type) == type_string(rf.type):
                out[n] = f
        return out

    layouts: dict[int, dict[str, DataField]] = {}

    def keep(e: mf.ManifestEntry, values: tuple[Any, ...]) -> bool:
        f = e.file
        raw = f.embedded_index
        where = f"the file index of {f.file_name}"
        if raw is None:
            found = fi.index_files(f.extra_files)
            if len(found) != 1:
                return True
            directory = store.bucket_dir(values, e.bucket) if not f.external_path else \
                store.data_file_path(e).rsplit("/", 1)[0]
            where = f"{directory}/{found[0]}"
            raw = store.io.read_bytes(where)
        columns = layouts.get(f.schema_id)
        if columns is None:
            try:
                columns = layouts[f.schema_id] = columns_of(f.schema_id)
            except Exception:
                return True
        return not columns or fi.may_match(pred, raw, columns, where)

    return keep


def _manifest_may_match(pred: ex.Expr, m: mf.ManifestFileMeta, keys: Sequence[str], types: Sequence[DataType]) -> bool:
    return _stats_may_match(pred, m.partition_stats, m.num_added_files + m.num_deleted_files, keys, types)


def _stats_may_match(pred: ex.Expr, stats: SimpleStats, rows: int, keys: Sequence[str],
                     types: Sequence[DataType]) -> bool:
    """Whether entries with these partition statistics may hold a partition ``pred`` admits."""
    mins, maxs, nulls = stats.decode(types)
    ranges = {k: pr.ColumnRange(lo, hi, n, rows) for k, lo, hi, n in zip(keys, mins, maxs, nulls)}
    return pr.may_match(pred, ranges)


def _raw_stats_filter(pred: ex.Expr, schema: TableSchema,
                      schemas: Schemas) -> Optional[Callable[[dict[str, Any]], bool]]:
    """For an append table: a predicate on an ADD's raw ``_FILE`` record, False only where
    the value statistics of the columns ``pred`` names (not partition keys) rule the file out,
    read from the statistics' bytes without building the entry, by the rules of
    :func:`_file_may_match` (which still checks every entry it keeps). A file whose schema
    cannot be read, or whose statistics are laid out unexpectedly, is kept; None when ``pred``
    names no such column."""
    names = pr.referenced_columns(pred) - set(schema.partition_keys)
    if not names or not names <= {f.name for f in schema.fields}:
        return None
    layouts: dict[tuple[int, Optional[tuple[str, ...]]], StatsLayout] = {}   # (schema id, value-stats columns) -> _stats_layout

    def keep(f: dict[str, Any]) -> bool:
        try:
            cols = f.get("_VALUE_STATS_COLS")
            key: tuple[int, Optional[tuple[str, ...]]] = (f["_SCHEMA_ID"], None if cols is None else tuple(cols))
            layout = layouts.get(key)
            if layout is None:
                file_schema = schema if key[0] == schema.id else schemas(key[0])
                layout = layouts[key] = _stats_layout(schema, file_schema, key[1], names)
            stats = f["_VALUE_STATS"]
            lo, hi = stats["_MIN_VALUES"], stats["_MAX_VALUES"]
            if int.from_bytes(lo[:4], "big") != layout[0] or int.from_bytes(hi[:4], "big") != layout[0]:
                return True
            ranges = _stats_ranges({}, layout, lo[4:], hi[4:], stats["_NULL_COUNTS"], f["_ROW_COUNT"])
        except Exception:
            return True
        return pr.may_match(pred, ranges)

    return keep


def _stats_layout(schema: TableSchema, file_schema: TableSchema, cols: Optional[Sequence[str]],
                  names: set[str]) -> StatsLayout:
    """Where a file's value statistics hold the columns ``names`` of the read ``schema``: (the
    statistics' field count, [(read column, position, type in the file)], [read columns the
    file's schema lacks]). ``cols`` is the file's ``_VALUE_STATS_COLS`` (None: every column of
    its schema). Statistics of a file written with another schema are matched to ``schema``'s
    columns by field id, and used only where the type kept its values' order (the same type or a
    widening). Raises KeyError for a statistics column the file's schema lacks."""
    by_name = {x.name: x for x in file_schema.fields}
    fields = file_schema.fields if cols is None else [by_name[c] for c in cols]
    read_by_id = {f.id: f for f in schema.fields}
    positions: list[tuple[str, int, DataType]] = []
    for i, x in enumerate(fields):
        rf = x if file_schema is schema else read_by_id.get(x.id)
        if rf is not None and rf.name in names and (file_schema is schema or _order_kept(x.type, rf.type)):
            positions.append((rf.name, i, x.type))
    ids = {x.id for x in file_schema.fields}
    return len(fields), positions, [rf.name for rf in schema.fields if rf.name in names and rf.id not in ids]


def _stats_ranges(ranges: dict[str, pr.ColumnRange], layout: StatsLayout, lo: bytes, hi: bytes,
                  counts: Optional[Sequence[Optional[int]]], rows: int) -> dict[str, pr.ColumnRange]:
    """``ranges`` with each column of ``layout`` it lacks: its range from the statistics' min and
    max row bytes (without the arity prefix) and null counts; a column the file lacks is all null."""
    arity, positions, absent = layout
    nb = null_bits_size(arity)
    for n, i, t in positions:
        if n not in ranges:
            ranges[n] = pr.ColumnRange(decode_field(lo, nb, i, t), decode_field(hi, nb, i, t),
                                       counts[i] if counts is not None else None, rows)
    for n in absent:
        if n not in ranges:
            ranges[n] = pr.ColumnRange(None, None, rows, rows)
    return ranges


def _file_may_match(pred: ex.Expr, f: DataFileMeta, schema: TableSchema, part_ranges: dict[str, pr.ColumnRange],
                    schemas: Optional[Schemas] = None) -> bool:
    """Whether a file's value statistics allow rows matching ``pred`` (bound to ``schema``), by
    :func:`_stats_layout`'s rules; only the columns ``pred`` names are decoded."""
    file_schema = schema
    if f.schema_id != schema.id:
        if schemas is None:
            return True
        try:
            file_schema = schemas(f.schema_id)
        except Exception:
            return True
    try:
        layout = _stats_layout(schema, file_schema, f.value_stats_cols, pr.referenced_columns(pred))
        lo, hi = f.value_stats.min_values, f.value_stats.max_values
        if lo.arity != layout[0] or hi.arity != layout[0]:
            return True
        ranges = _stats_ranges(dict(part_ranges), layout, lo.data, hi.data, f.value_stats.null_counts,
                               f.row_count)
    except Exception:
        return True
    return pr.may_match(pred, ranges)


def _key_range_may_match(pred: ex.Expr, f: DataFileMeta, schema: TableSchema, part_ranges: dict[str, pr.ColumnRange],
                         schemas: Schemas) -> bool:
    """For a primary-key table: whether a file's key statistics allow a key matching ``pred``,
    when ``pred`` refers to key and partition columns only (else True)."""
    keys = trimmed_primary_keys(schema.primary_keys, schema.partition_keys)
    if not pr.referenced_columns(pred) <= set(keys) | set(schema.partition_keys):
        return True
    try:
        file_schema = schema if f.schema_id == schema.id else schemas(f.schema_id)
        file_keys = [file_schema.field(k) for k in trimmed_primary_keys(file_schema.primary_keys,
                                                                        file_schema.partition_keys)]
        mins, maxs, nulls = f.key_stats.decode([k.type for k in file_keys])
    except Exception:
        return True
    by_id = {x.id: x for x in schema.fields}
    ranges = dict(part_ranges)
    for k, lo, hi, n in zip(file_keys, mins, maxs, nulls):
        rf = by_id.get(k.id)
        if rf is None or lo is None or hi is None:
            return True
        ranges[rf.name] = pr.ColumnRange(lo, hi, n, f.row_count)
    return pr.may_match(pred, ranges)


def _order_kept(old: DataType, new: DataType) -> bool:
    """Statistics of ``old`` values bound values of ``new`` (same type, or a widening)."""
    if not old.is_primitive or not new.is_primitive:
        return False
    if root_of(old) in ("CHAR", "BINARY") or root_of(new) in ("CHAR", "BINARY"):
        return root_of(old) == root_of(new) and length(old) == length(new)
    return can_widen(old, new)


def _same_bucket_keys(schemas: Schemas, schema_id: int, schema: TableSchema) -> bool:
    """Whether a file's schema puts rows in buckets as ``schema`` does (the same bucket-key
    field ids and types), so bucket pruning computed with ``schema`` applies to it."""
    if schema_id == schema.id:
        return True
    try:
        other = schemas(schema_id)
    except Exception:
        return False

    def keys(s: TableSchema) -> Optional[list[tuple[int, str]]]:
        try:
            return [(k.id, type_string(k.type)) for k in s.bucket_key_fields]
        except Exception:
            return None

    mine = keys(schema)
    return mine is not None and keys(other) == mine and other.num_buckets > 0


def _selected_buckets(pred: ex.Expr, schema: TableSchema) -> Optional[Callable[[int], set[int]]]:
    """When ``pred`` fixes every bucket key by equality (``k = v`` or ``k IN (...)`` in the top-level
    AND): the buckets that can hold matching rows, given a file's total bucket number; else None."""
    if schema.num_buckets <= 0:
        return None
    keys = schema.bucket_key_fields
    if not keys or any(root_of(k.type) not in
                       ("TINYINT", "SMALLINT", "INT", "BIGINT", "CHAR", "VARCHAR", "DATE", "BOOLEAN")
                       for k in keys):
        return None
    conjuncts = pr.conjuncts(pred)
    choices: dict[str, list[Any]] = {}
    for c in conjuncts:
        if isinstance(c, (ex.EqualTo, ex.In)) and isinstance(c.term, ex.BoundReference) \
                and not isinstance(c, ex.LikeEqualTo):
            choices[c.term.name] = [c.literal] if isinstance(c, ex.EqualTo) else list(c.literals)
    if any(k.name not in choices for k in keys):
        return None
    combos: list[list[Any]] = [[]]
    for k in keys:
        vals: list[Any] = []
        for v in choices[k.name]:
            if isinstance(v, decimal.Decimal):
                if v != v.to_integral_value():
                    continue  # no integer equals it: no bucket
                v = int(v)
            vals.append(v)
        combos = [c + [v] for c in combos for v in vals]
        if len(combos) > 1000:
            return None
    types = [k.type for k in keys]
    hashes = [encode_row(list(c), types).hash_code() for c in combos]
    by_total: dict[int, set[int]] = {}

    def of_total(total: int) -> set[int]:     # each file's own total bucket number (a rescaled table mixes them)
        if total not in by_total:
            by_total[total] = {bucket_of_hash(h, total) for h in hashes}
        return by_total[total]
    return of_total
