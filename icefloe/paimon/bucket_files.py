# pyright: strict
"""The live files of a few buckets as columns: what a primary-key write and the checks around its
commit read of the buckets it writes.

A writer of a primary-key table numbers its records on from the largest sequence number of the
bucket (Paimon's writers restore every file of the bucket for it); the commit checks no other commit
numbered records past that meanwhile; the writer then looks at the bucket's sorted runs (their levels
and sizes) to decide whether universal compaction is due, and waits when too many runs piled up.
None of that reads more of a file than its name, level, size and sequence range, so a bucket of
thousands of files is restored here as those columns: its manifests' kept records are read field by
field (fastavro's compiled readers of one value), the statistics and other fields skipped, and no
object is made per file. Whole entries are made only where a compaction is picked
(``kv_compact.plan_universal``) and reads the files themselves.

The merge of ADD and DELETE entries is the manifest's (``manifest.merge_entries``): entries are told
apart by their identifier (partition, bucket, level, file name, extra files, embedded index, external
path); the last three are decoded only for the entries whose partition, bucket, level and name another
entry shares.
"""
from __future__ import annotations

import io as _io
import importlib
from itertools import chain, repeat
from dataclasses import dataclass, field
from typing import AbstractSet, Any, Callable, Iterable, Optional, Sequence, cast

from icefloe.core import numba_cache
from icefloe.errors import CorruptMetadataError, DuplicateFileError
from icefloe.paimon import manifest as mf

BucketKey = tuple[bytes, int]         # (partition row bytes without the arity prefix, bucket)
# a block ``Rows.take`` left for ``Rows.finish``: (path, count, block bytes, _FILE schema, named,
# keep_partition, buckets)
_Pending = tuple[str, int, bytes, Any, Any, Callable[[bytes], bool], Optional[AbstractSet[int]]]
IdentTail = tuple[tuple[str, ...], Optional[bytes], Optional[str]]       # extra files, embedded index, external path

_read: Any = importlib.import_module("fastavro._read")
_long, _bytes, _utf8 = _read.read_long, _read.read_bytes, _read.read_utf8
_skip_record, _record = _read.skip_record, _read.read_record
_skip_bytes, _skip_utf8 = _read.skip_bytes, _read.skip_utf8

# the leading fields of ``_FILE`` as Paimon's writers (and icefloe's) lay them out: read one by one
_PREFIX = (("_FILE_NAME", ("string",)), ("_FILE_SIZE", ("long",)), ("_ROW_COUNT", ("long",)),
           ("_MIN_KEY", ("bytes",)), ("_MAX_KEY", ("bytes",)), ("_KEY_STATS", ()), ("_VALUE_STATS", ()),
           ("_MIN_SEQUENCE_NUMBER", ("long",)), ("_MAX_SEQUENCE_NUMBER", ("long",)), ("_SCHEMA_ID", ("long", "int")),
           ("_LEVEL", ("int", "long")))


def _shape(t: Any) -> Any:
    """An Avro type as what its encoding depends on: names, namespaces, defaults and logical types left out."""
    if isinstance(t, list):
        return tuple(_shape(x) for x in cast(list[Any], t))
    if isinstance(t, dict):
        d = cast(dict[str, Any], t)
        kind: Any = d.get("type")
        if kind == "record":
            return ("record", tuple((f.get("name"), _shape(f.get("type"))) for f in d.get("fields") or ()))
        if kind == "array":
            return ("array", _shape(d.get("items")))
        if kind == "map":
            return ("map", _shape(d.get("values")))
        if kind in ("enum", "fixed"):
            return (kind, d.get("size"), tuple(d.get("symbols") or ()))
        return _shape(kind)
    return t


# the fields of ``_FILE`` from ``_ROW_COUNT`` to ``_VALUE_STATS``, and after ``_LEVEL``, as icefloe's and Paimon's
# writers lay them out: skipped by the hand-written loops below; another shape by fastavro's skip
_FILE_FIELDS: Any = cast(Any, mf.MANIFEST_ENTRY_SCHEMA)["fields"][5]["type"]["fields"]
_MIDDLE_SHAPE = _shape({"type": "record", "fields": _FILE_FIELDS[2:7]})
_TAIL_SHAPE = _shape({"type": "record", "fields": _FILE_FIELDS[11:]})


def _skip_stats(stream: Any) -> None:
    """A ``SimpleStats`` record: min and max rows, then a nullable array of nullable longs."""
    long = _long
    _skip_bytes(stream)
    _skip_bytes(stream)
    if long(stream):
        count = long(stream)
        while count:
            if count < 0:
                count = -count
                long(stream)            # the block's size in bytes
            for _ in range(count):
                if long(stream):
                    long(stream)
            count = long(stream)


def _skip_middle(stream: Any, _schema: Any, _named: Any) -> None:
    long = _long
    long(stream)                        # row count
    _skip_bytes(stream)                 # min key
    _skip_bytes(stream)                 # max key
    _skip_stats(stream)
    _skip_stats(stream)


def _skip_array(stream: Any, item: Callable[[Any], Any], count: Optional[int] = None) -> None:
    """An array's blocks of items (``count``: the first block's count, already read)."""
    long = _long
    if count is None:
        count = long(stream)
    while count:
        if count < 0:
            count = -count
            long(stream)
        for _ in range(count):
            item(stream)
        count = long(stream)


def _skip_tail(stream: Any, _schema: Any, _named: Any) -> None:
    long = _long
    count = long(stream)                # extra files (an empty array: one zero)
    if count:
        _skip_array(stream, _skip_utf8, count)
    if long(stream):                    # creation time
        long(stream)
    if long(stream):                    # delete row count
        long(stream)
    if long(stream):                    # embedded file index
        _skip_bytes(stream)
    if long(stream):                    # file source
        long(stream)
    if long(stream):                    # value statistics columns
        _skip_array(stream, _skip_utf8)
    if long(stream):                    # external path
        _skip_utf8(stream)
    if long(stream):                    # first row id
        long(stream)
    if long(stream):                    # write columns
        _skip_array(stream, _skip_utf8)
    if long(stream):                    # write columns' sequences
        _skip_array(stream, long)


@dataclass(frozen=True)
class _Plan:
    """How the records of one ``_FILE`` schema are read: the fields from ``_ROW_COUNT`` to
    ``_VALUE_STATS`` skipped as one record, and the fields after ``_LEVEL`` (a record of their own),
    each by a loop of its own where it has the usual shape; None: read whole (another layout)."""
    middle: Any
    tail: Any
    skip_middle: Callable[[Any, Any, Any], None]
    skip_tail: Callable[[Any, Any, Any], None]


_PLANS: dict[int, tuple[Any, Optional[_Plan]]] = {}


def _plan(file_schema: Any) -> Optional[_Plan]:
    got = _PLANS.get(id(file_schema))
    if got is not None and got[0] is file_schema:
        return got[1]
    plan = None
    schema: Any = file_schema
    fields: Any = cast(dict[str, Any], schema).get("fields") if isinstance(schema, dict) else None
    if isinstance(fields, list) and len(cast(list[Any], fields)) >= len(_PREFIX) and \
            all(isinstance(f, dict) for f in cast(list[Any], fields)):
        shaped = cast(list[dict[str, Any]], fields)
        ok = True
        for f, (name, types) in zip(shaped, _PREFIX):
            t: Any = f.get("type")
            if f.get("name") != name or (t not in types if types else
                                         not (isinstance(t, dict) and cast(dict[str, Any], t).get("type") == "record")):
                ok = False
                break
        if ok:
            middle = {"type": "record", "name": "icefloe_file_middle", "fields": shaped[2:7]}
            tail = {"type": "record", "name": "icefloe_file_tail", "fields": shaped[len(_PREFIX):]}
            plan = _Plan(middle, tail, _skip_middle if _shape(middle) == _MIDDLE_SHAPE else _skip_record,
                         _skip_tail if _shape(tail) == _TAIL_SHAPE else _skip_record)
    if len(_PLANS) > 64:
        _PLANS.clear()
    _PLANS[id(file_schema)] = (file_schema, plan)
    return plan


def _tail_of(record: dict[str, Any]) -> IdentTail:
    return (tuple(record.get("_EXTRA_FILES") or ()), record.get("_EMBEDDED_FILE_INDEX"), record.get("_EXTERNAL_PATH"))


@dataclass
class Rows:
    """Manifest entries as columns (one manifest's kept entries, in its order): kind, partition row
    bytes (without the arity prefix), bucket, level, file name, size and sequence range; the rest of
    each entry's identifier where it is known (``tails``) or where its record can be decoded again
    (``blocks``, ``block_of``, ``offset_of``)."""
    kinds: list[int] = field(default_factory=lambda: [])
    partitions: list[bytes] = field(default_factory=lambda: [])
    buckets: list[int] = field(default_factory=lambda: [])
    levels: list[int] = field(default_factory=lambda: [])
    names: list[str] = field(default_factory=lambda: [])
    sizes: list[int] = field(default_factory=lambda: [])
    min_seqs: list[int] = field(default_factory=lambda: [])
    max_seqs: list[int] = field(default_factory=lambda: [])
    tails: dict[int, IdentTail] = field(default_factory=lambda: {})
    blocks: list[tuple[bytes, Any, Any]] = field(default_factory=lambda: [])      # (block bytes, tail schema, named)
    block_of: list[int] = field(default_factory=lambda: [])
    offset_of: list[int] = field(default_factory=lambda: [])
    # blocks taken but not yet decoded (``finish``): (path, count, block bytes, _FILE schema, named,
    # keep_partition, buckets)
    pending: list[_Pending] = field(default_factory=lambda: [])

    @classmethod
    def of_entries(cls, entries: Iterable[mf.ManifestEntry]) -> "Rows":
        """The columns of entries already made (read before as whole entries)."""
        rows = cls()
        for e in entries:
            f = e.file
            i = len(rows.names)
            rows.kinds.append(e.kind)
            rows.partitions.append(e.partition.data)
            rows.buckets.append(e.bucket)
            rows.levels.append(f.level)
            rows.names.append(f.file_name)
            rows.sizes.append(f.file_size)
            rows.min_seqs.append(f.min_sequence_number)
            rows.max_seqs.append(f.max_sequence_number)
            rows.block_of.append(-1)
            rows.offset_of.append(-1)
            rows.tails[i] = (tuple(f.extra_files or ()), f.embedded_index, f.external_path)
        return rows

    def tail(self, i: int) -> IdentTail:
        """Extra files, embedded index and external path of row ``i``."""
        got = self.tails.get(i)
        if got is None:
            data, schema, named = self.blocks[self.block_of[i]]
            stream = _io.BytesIO(data)
            stream.seek(self.offset_of[i])
            got = self.tails[i] = _tail_of(_record(stream, schema, named))
        return got

    def take(self, path: str, count: int, stream: Any, file_schema: Any, named: Any,
             keep_partition: Callable[[bytes], bool], buckets: Optional[AbstractSet[int]],
             seen: Optional[tuple[set[bytes], set[int]]]) -> None:
        """The ``count`` records of one block's ``stream`` that ``keep_partition`` and ``buckets``
        keep, as ``manifest.TakeRecords`` takes them: their columns appended, checked as the
        record reader checks them."""
        plan = _plan(file_schema) if hasattr(stream, "getvalue") else None
        if plan is not None and seen is None and \
                (self.pending or _usual(plan) or (numba_cache.loaded() and count >= COMPILED_MIN_RECORDS)):
            # ``finish`` reads the blocks taken at once (once one waits, the rest wait: in order): entries
            # of the usual layout by the compiled entry reader where it pays, others by the compiled
            # decoder where it is loaded (a manifest merge or a plan of this process did)
            self.pending.append((path, count, stream.getvalue(), file_schema, named, keep_partition, buckets))
            return
        self._take(path, count, stream, file_schema, named, keep_partition, buckets, seen, plan)

    def finish(self) -> "Rows":
        """The blocks ``take`` left for the compiled decoder decoded (in their order, after the rows
        taken so far); where it cannot decode them, read field by field as ``take`` reads them."""
        pending, self.pending = self.pending, []
        if not pending:
            return self
        first = pending[0]
        plan = _plan(first[3])
        alike = all(p[3] is first[3] and p[5] is first[5] and p[6] is first[6] for p in pending)
        decoded = None
        if plan is not None and _usual(plan) and alike:
            kernel = _entry_kernel(sum(p[1] for p in pending))
            if kernel is not None and self._take_compiled(kernel, pending, plan):
                return self
        elif alike and numba_cache.loaded():
            decoded = _compiled(pending)
        if decoded is None:
            for path, count, data, file_schema, named, keep_partition, buckets in pending:
                try:
                    self._take(path, count, _io.BytesIO(data), file_schema, named, keep_partition, buckets, None,
                               _plan(file_schema))
                except CorruptMetadataError:
                    raise
                except Exception as e:      # noqa: BLE001 -- fastavro raises assorted errors on garbage
                    raise CorruptMetadataError(path, f"not a readable Avro file: {e}") from None
            return self
        path = pending[0][0]
        versions, kinds, partitions, bucket_col, names, sizes, min_seqs, max_seqs, levels, tails = decoded
        for version in set(versions) - {mf.MANIFEST_VERSION}:
            mf.check_version(path, version)
        for partition in partitions if min(map(len, partitions), default=4) < 4 else ():
            mf.check_partition(path, partition)
        keep_partition, buckets = pending[0][5], pending[0][6]
        stripped = {p: p[4:] for p in set(partitions)}
        kept_parts = {p for p, data in stripped.items() if keep_partition(data)}
        rows = [i for i, (p, b) in enumerate(zip(partitions, bucket_col))
                if p in kept_parts and (buckets is None or b in buckets)]
        start = len(self.names)
        if len(rows) < len(partitions):
            def pick(col: list[Any]) -> list[Any]:
                return [col[i] for i in rows]
            kinds, partitions, bucket_col, names, sizes = pick(kinds), pick(partitions), pick(bucket_col), pick(names), pick(sizes)
            min_seqs, max_seqs, levels = pick(min_seqs), pick(max_seqs), pick(levels)
            tails = None if tails is None else pick(tails)
        self.kinds.extend(kinds)
        self.partitions.extend(stripped[p] for p in partitions)
        self.buckets.extend(bucket_col)
        self.levels.extend(levels)
        self.names.extend(names)
        self.sizes.extend(sizes)
        self.min_seqs.extend(min_seqs)
        self.max_seqs.extend(max_seqs)
        self.block_of.extend([-1] * len(names))
        self.offset_of.extend([-1] * len(names))
        self.tails.update(zip(range(start, len(self.names)), tails if tails is not None else repeat(_NO_TAIL)))
        return self

    def _take_compiled(self, kernel: Any, pending: Sequence[_Pending], plan: _Plan) -> bool:
        """The entries of blocks ``pending`` (one schema and predicate, the usual layout) read by the
        compiled entry reader (``entry_kernel``) and the kept ones appended, as ``_take`` appends
        them; False (nothing appended) where it finds the bytes are not such entries."""
        import numpy as np

        path, keep_partition, buckets = pending[0][0], pending[0][5], pending[0][6]
        raws = [p[2] for p in pending]
        joined = b"".join(raws)
        sizes = np.fromiter(map(len, raws), np.int64, len(raws))
        ends = np.cumsum(sizes)
        starts = ends - sizes
        counts = np.fromiter((p[1] for p in pending), np.int64, len(pending))
        total = int(counts.sum())
        out = np.empty((total, kernel.COLUMNS), np.int64)
        if kernel.light_entries(np.frombuffer(joined, np.uint8), starts, ends, counts, out) != total:
            return False
        block_at = np.repeat(np.arange(len(raws), dtype=np.int64), counts)
        for row in np.flatnonzero(out[:, kernel.VERSION] != mf.MANIFEST_VERSION)[:1].tolist():
            mf.check_version(path, int(out[row, kernel.VERSION]))
        for row in np.flatnonzero(out[:, kernel.PARTITION_LEN] < 4)[:1].tolist():
            at = int(out[row, kernel.PARTITION_AT])
            mf.check_partition(path, joined[at:at + int(out[row, kernel.PARTITION_LEN])])
        chosen = np.isin(out[:, kernel.BUCKET], np.fromiter(buckets, np.int64, len(buckets))) \
            if buckets is not None else np.ones(total, bool)
        first_block = len(self.blocks)
        self.blocks.extend((raw, plan.tail, pending[0][4]) for raw in raws)
        picked = np.flatnonzero(chosen)
        at, length = out[picked, kernel.PARTITION_AT].tolist(), out[picked, kernel.PARTITION_LEN].tolist()
        parts = [joined[i + 4:i + n] for i, n in zip(at, length)]
        verdicts = {part: keep_partition(part) for part in set(parts)}
        kept_mask = np.fromiter((verdicts[part] for part in parts), bool, len(parts))
        kept = picked[kept_mask]
        cols = out[kept]
        blocks = block_at[kept]
        self.kinds.extend(cols[:, kernel.KIND].tolist())
        self.partitions.extend(part for part, k in zip(parts, kept_mask.tolist()) if k)
        self.buckets.extend(cols[:, kernel.BUCKET].tolist())
        self.levels.extend(cols[:, kernel.LEVEL].tolist())
        self.names.extend(joined[i:i + n].decode() for i, n in zip(cols[:, kernel.NAME_AT].tolist(),
                                                                   cols[:, kernel.NAME_LEN].tolist()))
        self.sizes.extend(cols[:, kernel.SIZE].tolist())
        self.min_seqs.extend(cols[:, kernel.MIN_SEQ].tolist())
        self.max_seqs.extend(cols[:, kernel.MAX_SEQ].tolist())
        self.block_of.extend((blocks + first_block).tolist())
        self.offset_of.extend((cols[:, kernel.TAIL_AT] - starts[blocks]).tolist())
        return True

    def _take(self, path: str, count: int, stream: Any, file_schema: Any, named: Any,
              keep_partition: Callable[[bytes], bool], buckets: Optional[AbstractSet[int]],
              seen: Optional[tuple[set[bytes], set[int]]], plan: Optional[_Plan]) -> None:
        block = -1
        if plan is not None:
            block = len(self.blocks)
            self.blocks.append((stream.getvalue(), plan.tail, named))
        kinds, partitions, bucket_col, levels = self.kinds, self.partitions, self.buckets, self.levels
        names, sizes, min_seqs, max_seqs = self.names, self.sizes, self.min_seqs, self.max_seqs
        block_of, offset_of = self.block_of, self.offset_of
        long, tell = _long, stream.tell
        middle = tail = None
        skip_middle = skip_tail = _skip_record
        if plan is not None:
            middle, tail, skip_middle, skip_tail = plan.middle, plan.tail, plan.skip_middle, plan.skip_tail
        for _ in range(count):
            version, kind, partition = long(stream), long(stream), _bytes(stream)
            bucket, _total = long(stream), long(stream)
            if version != mf.MANIFEST_VERSION or len(partition) < 4:
                mf.check_version(path, version)
                mf.check_partition(path, partition)
            if seen is not None:
                seen[0].add(partition[4:])
                seen[1].add(bucket)
            if not keep_partition(partition[4:]) or (buckets is not None and bucket not in buckets):
                _skip_record(stream, file_schema, named)
                continue
            kinds.append(kind)
            partitions.append(partition[4:])
            bucket_col.append(bucket)
            if plan is None:        # another layout of _FILE: the record decoded whole
                record: dict[str, Any] = _record(stream, file_schema, named)
                self.tails[len(names)] = _tail_of(record)
                names.append(record["_FILE_NAME"])
                sizes.append(record["_FILE_SIZE"])
                min_seqs.append(record["_MIN_SEQUENCE_NUMBER"])
                max_seqs.append(record["_MAX_SEQUENCE_NUMBER"])
                levels.append(record["_LEVEL"])
                block_of.append(-1)
                offset_of.append(-1)
                continue
            names.append(_utf8(stream))
            sizes.append(long(stream))
            skip_middle(stream, middle, named)        # row count, key range, key and value statistics
            min_seqs.append(long(stream))
            max_seqs.append(long(stream))
            long(stream)                              # schema id
            levels.append(long(stream))
            block_of.append(block)
            offset_of.append(tell())
            skip_tail(stream, tail, named)


def _usual(plan: _Plan) -> bool:
    """Whether entries read by ``plan`` are laid out as ``entry_kernel`` reads them."""
    return plan.skip_middle is _skip_middle and plan.skip_tail is _skip_tail


_kernel_module: Any = None
# the compiled entry reader is loaded (numba's fixed cost, about half a second) by a read of at least
# this many entries; once loaded, every read of the usual layout takes it
ENTRY_KERNEL_MIN_RECORDS = 512


def _entry_kernel(records: int) -> Any:
    """``entry_kernel`` where it is loaded or a read of ``records`` entries pays for loading it;
    None: read field by field."""
    global _kernel_module
    if _kernel_module is None:
        if records < ENTRY_KERNEL_MIN_RECORDS and not numba_cache.loaded():
            return None
        numba_cache.kernel()        # numba pointed at its cache directory first
        _kernel_module = importlib.import_module("icefloe.paimon.entry_kernel")
    return _kernel_module


_NO_TAIL: IdentTail = ((), None, None)
# blocks of fewer records are read field by field even where the compiled decoder is loaded
COMPILED_MIN_RECORDS = 64
# the fields of an entry the compiled decoder reads past
_DROPPED = tuple(f"_FILE.{f['name']}" for f in _FILE_FIELDS
                 if f["name"] not in ("_FILE_NAME", "_FILE_SIZE", "_MIN_SEQUENCE_NUMBER", "_MAX_SEQUENCE_NUMBER",
                                      "_LEVEL", "_EXTRA_FILES", "_EMBEDDED_FILE_INDEX", "_EXTERNAL_PATH"))


# an uncompressed container's header by the ``_FILE`` schema its entries are of (``_compiled``), and its sync marker
_HEADERS: dict[int, tuple[Any, bytes]] = {}
_SYNC = b"icefloe-blocks-0"


def _plain(schema: Any) -> Any:
    """A parsed schema as plain JSON (fastavro's markers left out)."""
    if isinstance(schema, dict):
        return {k: _plain(v) for k, v in schema.items() if not str(k).startswith("__")}   # pyright: ignore
    if isinstance(schema, list):
        return [_plain(v) for v in schema]      # pyright: ignore[reportUnknownVariableType]
    return schema


def _compiled(pending: Sequence[_Pending]) -> Optional[tuple[list[int], list[int], list[bytes], list[int], list[str], list[int], list[int], list[int],
                                  list[int], Optional[list[IdentTail]]]]:
    """The records of decompressed blocks of one manifest (``pending``, one ``_FILE`` schema and
    predicate) decoded by the compiled decoder (``core.avro_decode``) as one uncompressed container
    of those blocks: (versions, kinds, partitions, buckets, names, sizes, min and max sequence
    numbers, levels, and the rest of each identifier, None where every one is empty). None where
    the blocks are of several schemas or predicates, or the decoder refuses them."""
    first = pending[0]
    if any(p[3] is not first[3] or p[5] is not first[5] or p[6] is not first[6] for p in pending):
        return None
    import json

    import pyarrow.compute as pc

    from icefloe.core import avro_decode

    got = _HEADERS.get(id(first[3]))
    if got is None or got[0] is not first[3]:
        schema = {"type": "record", "name": "icefloe_manifest_entry", "fields": [
            {"name": "_VERSION", "type": "int"}, {"name": "_KIND", "type": "int"}, {"name": "_PARTITION", "type": "bytes"},
            {"name": "_BUCKET", "type": "int"}, {"name": "_TOTAL_BUCKETS", "type": "int"},
            {"name": "_FILE", "type": _plain(first[3])}]}
        got = (first[3], avro_decode.encode_header({"avro.schema": json.dumps(schema).encode(), "avro.codec": b"null"},
                                                   _SYNC))
        if len(_HEADERS) > 64:
            _HEADERS.clear()
        _HEADERS[id(first[3])] = got
    encode = avro_decode.encode_long
    data = got[1] + b"".join(encode(count) + encode(len(raw)) + raw + _SYNC for _p, count, raw, *_rest in pending)
    try:
        table = avro_decode.decode(data, _DROPPED + ("_TOTAL_BUCKETS",))
        file: Any = table.column("_FILE").combine_chunks()
        extra, embedded, external = (file.field(n) for n in ("_EXTRA_FILES", "_EMBEDDED_FILE_INDEX", "_EXTERNAL_PATH"))
        plain = (extra.null_count == 0 and pc.max(pc.list_value_length(extra)).as_py() in (None, 0)
                 and embedded.null_count == len(embedded) and external.null_count == len(external))
        tails = None if plain else [(tuple(x or ()), y, z) for x, y, z in zip(
            extra.to_pylist(), embedded.to_pylist(), external.to_pylist())]
        return (table.column("_VERSION").to_pylist(), table.column("_KIND").to_pylist(),
                table.column("_PARTITION").to_pylist(), table.column("_BUCKET").to_pylist(),
                file.field("_FILE_NAME").to_pylist(), file.field("_FILE_SIZE").to_pylist(),
                file.field("_MIN_SEQUENCE_NUMBER").to_pylist(), file.field("_MAX_SEQUENCE_NUMBER").to_pylist(),
                file.field("_LEVEL").to_pylist(), tails)
    except (avro_decode.Unsupported, avro_decode.Corrupt, KeyError, ValueError, TypeError):
        return None


@dataclass(frozen=True)
class BucketFiles:
    """The live files of one bucket: their names, levels, sizes and sequence ranges, in the order
    the manifests list them."""
    names: tuple[str, ...]
    levels: tuple[int, ...]
    sizes: tuple[int, ...]
    min_seqs: tuple[int, ...]
    max_seqs: tuple[int, ...]

    def max_sequence_number(self) -> int:
        return max(self.max_seqs, default=-1)

    def runs(self) -> list[tuple[int, int]]:
        """The bucket's sorted runs, newest first, as ``(level, total size)``: each level-0 file a
        run of its own (newest sequence numbers first), then each higher level, lowest first (as
        ``kv_compact.sorted_runs`` orders them)."""
        level0 = sorted((i for i, lvl in enumerate(self.levels) if lvl == 0),
                        key=lambda i: (self.max_seqs[i], self.min_seqs[i]), reverse=True)
        out = [(0, self.sizes[i]) for i in level0]
        by_level: dict[int, int] = {}
        for lvl, size in zip(self.levels, self.sizes):
            if lvl > 0:
                by_level[lvl] = by_level.get(lvl, 0) + size
        out.extend((lvl, by_level[lvl]) for lvl in sorted(by_level))
        return out


def live(parts: Sequence[Rows], wanted: AbstractSet[BucketKey]) -> dict[BucketKey, BucketFiles]:
    """The live files of the ``wanted`` buckets of manifests' kept entries (``parts``, in the
    manifests' order), merged as ``manifest.live_files`` merges entries; a file added twice is a
    ``DuplicateFileError``. Buckets without a live file are left out."""
    total = sum(len(r.names) for r in parts)
    picks: list[tuple[Rows, Optional[list[int]]]]       # each part's rows that stay (None: all of them)
    if all(mf.DELETE not in r.kinds for r in parts) and len(set(chain.from_iterable(r.names for r in parts))) == total:
        picks = [(r, None) for r in parts]       # nothing to cancel, no name twice: every entry stays
    else:
        picks = _merged(parts)
    keys = set(wanted)
    cols: dict[BucketKey, tuple[list[str], list[int], list[int], list[int], list[int]]] = {}
    for r, rows in picks:
        if rows is None and len(keys) == 1:
            # one bucket asked for: the manifests kept its partition and bucket number only
            key = next(iter(keys))
            if r.names:
                got = cols.setdefault(key, ([], [], [], [], []))
                got[0].extend(r.names)
                got[1].extend(r.levels)
                got[2].extend(r.sizes)
                got[3].extend(r.min_seqs)
                got[4].extend(r.max_seqs)
            continue
        for i in (range(len(r.names)) if rows is None else rows):
            key = (r.partitions[i], r.buckets[i])
            if key not in keys:
                continue
            got = cols.get(key)
            if got is None:
                got = cols[key] = ([], [], [], [], [])
            got[0].append(r.names[i])
            got[1].append(r.levels[i])
            got[2].append(r.sizes[i])
            got[3].append(r.min_seqs[i])
            got[4].append(r.max_seqs[i])
    return {key: BucketFiles(tuple(c[0]), tuple(c[1]), tuple(c[2]), tuple(c[3]), tuple(c[4])) for key, c in cols.items()}


def _merged(parts: Sequence[Rows]) -> list[tuple[Rows, Optional[list[int]]]]:
    """The rows of ``parts`` left as ADDs after ``manifest.merge_entries``' rules, each part's in order."""
    def quick(r: Rows, i: int) -> tuple[bytes, int, int, str]:
        return (r.partitions[i], r.buckets[i], r.levels[i], r.names[i])
    counts: dict[tuple[bytes, int, int, str], int] = {}
    for r in parts:
        for i in range(len(r.names)):
            q = quick(r, i)
            counts[q] = counts.get(q, 0) + 1
    merged: dict[Any, tuple[int, int]] = {}      # identifier -> (part, row) (``manifest.merge_entries``)
    for n, r in enumerate(parts):
        for i in range(len(r.names)):
            q = quick(r, i)
            ident = q if counts[q] == 1 else (q, r.tail(i))     # the rest of the identifier where it tells apart
            if r.kinds[i] == mf.ADD:
                if ident in merged:
                    raise DuplicateFileError(f"trying to add file {r.names[i]} which is already added")
                merged[ident] = (n, i)
            elif ident in merged:
                del merged[ident]
            else:
                merged[ident] = (n, i)
    kept: list[list[int]] = [[] for _ in parts]
    for n, i in merged.values():
        if parts[n].kinds[i] == mf.ADD:
            kept[n].append(i)
    # the merge keeps its survivors in the order they were first added: by part, then by row
    return [(r, sorted(rows)) for r, rows in zip(parts, kept)]


__all__ = ["BucketFiles", "BucketKey", "Rows", "live"]
