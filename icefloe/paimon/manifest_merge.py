# pyright: strict
"""Manifest compaction from columns and raw record bytes.

A compaction (``commit.minor_compaction``'s merge of a run of manifests) keeps every entry as it
is except the ADD/DELETE pairs that cancel, so the kept records need not be decoded into objects
and encoded again: here each source manifest is decompressed once, the compiled walker
(``avro_spans.record_spans``) gives each record's byte span, and the columnar decoder
(``avro_decode.decode``, statistics read past) gives the columns that identify a file (partition,
bucket, level, name, extra files, embedded index, external path) and those the manifest list
records. Cancelling pairs are found on integer identities; the kept records' bytes are gathered in
the order ``manifest.merge_entries`` leaves them, grouped by partition then bucket as
``manifest.encode_manifests`` groups them, cut into blocks and files by the same rules (block
boundaries at a bucket or partition change once ``MIN_BLOCK_ENTRIES`` long or at the sync
interval, a new file at the target size), compressed by the same Avro writer, with the same block
index and the same ``ManifestFileMeta``.

Only manifests in the entry schema icefloe writes are merged so (their records' bytes are then
valid records of the new file), or in it without the last nullable fields of ``_FILE`` (older
writers'; each record is given those fields' nulls, one byte each); for any other, ``merge_run``
returns None and the caller merges entry by entry.
"""
from __future__ import annotations

import io as _io
import json
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from fastavro import write as fastavro_write
from fastavro.schema import SchemaParseException, to_parsing_canonical_form

from icefloe.core import avro_decode, numba_cache
from icefloe.core.types import IcebergType
from icefloe.errors import CorruptMetadataError, DuplicateFileError
from icefloe.paimon import manifest as mf
from icefloe.paimon import manifest_blocks
from icefloe.paimon.binary_row import BinaryRow, decode_row, encode_row
from icefloe.paimon.data_file import SimpleStats

Ints = npt.NDArray[np.int64]

# the fields of ``_FILE`` a merge reads past (kept only as the record's bytes)
_DROP = tuple(f"_FILE.{n}" for n in (
    "_FILE_SIZE", "_MIN_KEY", "_MAX_KEY", "_KEY_STATS", "_VALUE_STATS", "_MIN_SEQUENCE_NUMBER",
    "_MAX_SEQUENCE_NUMBER", "_CREATION_TIME", "_DELETE_ROW_COUNT", "_FILE_SOURCE", "_VALUE_STATS_COLS",
    "_WRITE_COLS", "_WRITE_COLS_SEQUENCES"))

# the fields of ``_FILE`` a merge keeps as columns, and their Arrow types
_FILE_COLUMNS = (("_FILE_NAME", pa.string()), ("_ROW_COUNT", pa.int64()), ("_SCHEMA_ID", pa.int64()),
                 ("_LEVEL", pa.int32()), ("_EXTRA_FILES", pa.list_(pa.string())), ("_EMBEDDED_FILE_INDEX", pa.binary()),
                 ("_EXTERNAL_PATH", pa.string()), ("_FIRST_ROW_ID", pa.int64()))
_CANONICAL: dict[bytes, Optional[int]] = {}
_FORMS: list[str] = []


def _forms() -> list[str]:
    """The Parsing Canonical Forms of icefloe's entry schema (item 0) and of it without the last
    ``k`` fields of ``_FILE`` (item ``k``, while those are nullable with null first: fields older
    writers did not have, read as null)."""
    if not _FORMS:
        fields = list(mf.DATA_FILE_SCHEMA["fields"])
        k = 0
        while True:
            file_schema = {**mf.DATA_FILE_SCHEMA, "fields": fields[:len(fields) - k]}
            entry = {**mf.MANIFEST_ENTRY_SCHEMA, "fields": [
                f if f["name"] != "_FILE" else {**f, "type": file_schema} for f in mf.MANIFEST_ENTRY_SCHEMA["fields"]]}
            _FORMS.append(to_parsing_canonical_form(entry))
            k += 1
            t = fields[len(fields) - k]["type"] if k < len(fields) else None
            if not (isinstance(t, list) and t and t[0] == "null"):
                break
    return _FORMS


def _padding(text: Optional[bytes]) -> Optional[int]:
    """How many trailing fields of ``_FILE`` a manifest's ``avro.schema`` lacks against icefloe's entry
    schema (``_forms``; each a null written as one byte, the union's branch 0): 0 for the same schema
    (the same Parsing Canonical Form: names, types and field order; defaults and docs aside); None for
    any other schema."""
    if text is None:
        return None
    if text not in _CANONICAL:
        try:
            form = to_parsing_canonical_form(json.loads(text))
            pad = _forms().index(form) if form in _forms() else None
        except (ValueError, TypeError, KeyError, SchemaParseException):
            pad = None
        if len(_CANONICAL) > 64:
            _CANONICAL.clear()
        _CANONICAL[text] = pad
    return _CANONICAL[text]


@dataclass
class _Part:
    """One source manifest: its decompressed records and the columns a merge reads."""
    buf: npt.NDArray[np.uint8]
    spans: tuple[Ints, Ints]
    cols: pa.Table


def _read_part(data: bytes, path: str) -> Optional[_Part]:
    meta, decompress, starts, ends, counts = avro_decode.frames(data)
    pad = _padding(meta.get("avro.schema"))
    if pad is None:
        return None
    view = memoryview(data)
    raws = [view[a:b] if decompress is None else decompress(view[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]
    sizes = np.array([len(r) for r in raws], np.int64)
    run_ends = np.cumsum(sizes)
    run_starts = run_ends - sizes
    buf = np.frombuffer(b"".join(raws), np.uint8)
    total = int(counts.sum())
    prog = avro_decode.Program(json.loads(meta["avro.schema"]))
    at = np.empty((total, 1), np.int64)        # where each record's first field (node 0) starts: its start
    out_end = np.empty(total, np.int64)
    n = numba_cache.spans().record_spans(buf, run_starts, run_ends, counts, prog.kind, prog.end, prog.nullbr,
                                         prog.fsize, np.zeros(1, np.int64), at, out_end)
    out_start = at[:, 0]
    if n != total:
        raise CorruptMetadataError(path, "a block's records do not decode with the file's schema")
    cols = avro_decode.decode(data, _DROP)
    if cols.num_rows != total:
        raise CorruptMetadataError(path, "the file's blocks and records do not agree")
    if pad:     # the fields an older writer did not write: nulls, so that every manifest's columns concatenate
        f = cols.column("_FILE").combine_chunks()
        have = {f.type.field(i).name for i in range(f.type.num_fields)}
        arrays = [f.field(name) if name in have else pa.nulls(total, typ) for name, typ in _FILE_COLUMNS]
        cols = cols.set_column(cols.schema.get_field_index("_FILE"), "_FILE",
                               pa.StructArray.from_arrays(arrays, names=[n for n, _ in _FILE_COLUMNS]))
    versions = cols.column("_VERSION").to_numpy()
    if total and not bool((versions == mf.MANIFEST_VERSION).all()):
        bad = versions[versions != mf.MANIFEST_VERSION][0]
        raise CorruptMetadataError(path, f"unsupported _VERSION {int(bad)!r} (expected 2)")
    if total and int(pc.min(pc.binary_length(cols.column("_PARTITION"))).as_py()) < 4:
        raise CorruptMetadataError(path, "bad manifest entry: a _PARTITION shorter than its arity")
    if pad:     # each record followed by its missing fields' nulls
        lens = out_end - out_start
        at = np.zeros(total + 1, np.int64)
        np.cumsum(lens + pad, out=at[1:])
        padded = np.zeros(int(at[-1]), np.uint8)
        numba_cache.kernel().gather(buf, out_start, lens, at, padded)
        buf, out_start, out_end = padded, at[:-1], at[1:]
    return _Part(buf, (out_start, out_end), cols)


def _codes(arr: pa.ChunkedArray) -> tuple[Ints, int]:
    """Dense codes of a column's values (nulls a value of their own) in first-appearance order."""
    enc = pc.dictionary_encode(arr, null_encoding="encode").combine_chunks()
    idx = np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64)
    return idx, len(enc.dictionary)


def _identities(cols: pa.Table, f: pa.ChunkedArray) -> Ints:
    """One integer per record, equal where ``ManifestEntry.identifier`` is."""
    extra = f.combine_chunks().field("_EXTRA_FILES")
    columns = [cols.column("_PARTITION"), cols.column("_BUCKET"), _field(f, "_LEVEL"), _field(f, "_FILE_NAME"),
               pa.chunked_array([pc.list_value_length(extra)]),
               pa.chunked_array([pc.binary_join(extra, "/")]),
               _field(f, "_EMBEDDED_FILE_INDEX"), _field(f, "_EXTERNAL_PATH")]
    key = np.zeros(cols.num_rows, np.int64)
    radix = 1
    parts: list[Ints] = []
    for c in columns:
        codes, card = _codes(c)
        parts.append(codes)
        if radix * max(card, 1) >= 2**62:
            radix = 0
            break
        key = key * max(card, 1) + codes
        radix *= max(card, 1)
    if radix == 0:      # too many values for one integer: rows of codes made unique
        matrix = np.stack([_codes(c)[0] for c in columns], axis=1)
        inverse: Ints = np.asarray(np.unique(matrix, axis=0, return_inverse=True)[1], np.int64)
        key = np.ravel(inverse)
    return key


def _field(f: pa.ChunkedArray, name: str) -> pa.ChunkedArray:
    return pa.chunked_array([c.field(name) for c in f.chunks], type=f.type.field(name).type)


def _merged(kinds: Ints, ids: Ints, names: pa.ChunkedArray) -> Ints:
    """The records ``manifest.merge_entries`` keeps, in its order (a dict's insertion order)."""
    ordered = np.sort(ids)      # (a sort: numpy's hashed unique of a million ints took a second)
    if bool((kinds == mf.ADD).all()) and bool((ordered[1:] != ordered[:-1]).all()):
        return np.arange(len(ids), dtype=np.int64)
    into: dict[int, int] = {}
    for i, (k, ident) in enumerate(zip(kinds.tolist(), ids.tolist())):
        if k == mf.ADD:
            if ident in into:
                raise DuplicateFileError(f"trying to add file {names[i].as_py()} which is already added")
            into[ident] = i
        elif ident in into:
            del into[ident]
        else:
            into[ident] = i
    return np.fromiter(into.values(), np.int64, len(into))


class _Partitions:
    """The distinct partitions of the kept records, each decoded once."""

    def __init__(self, raw: pa.ChunkedArray, types: Sequence[IcebergType]):
        codes, _ = _codes(raw)
        self.codes = codes
        self.types = types
        uniq = pc.unique(raw).to_pylist()
        self.values: list[tuple[Any, ...]] = [
            tuple(decode_row(BinaryRow.from_bytes(b), types)) if types else () for b in uniq]

    def stats(self, codes: Ints) -> SimpleStats:
        """``manifest.partition_stats`` of records of these partition codes."""
        n = len(self.types)
        mins: list[Any] = [None] * n
        maxs: list[Any] = [None] * n
        nulls = [0] * n
        present, counts = np.unique(codes, return_counts=True)
        pairs: list[tuple[int, int]] = list(zip(present.tolist(), counts.tolist()))
        for c, cnt in pairs:
            values: tuple[Any, ...] = self.values[c]
            for i, v in enumerate(values):
                if v is None:
                    nulls[i] += cnt
                else:
                    if mins[i] is None or v < mins[i]:
                        mins[i] = v
                    if maxs[i] is None or v > maxs[i]:
                        maxs[i] = v
        return SimpleStats(encode_row(mins, self.types), encode_row(maxs, self.types), tuple(nulls))


def _grouped(parts: _Partitions, buckets: Ints) -> Optional[Ints]:
    """The order ``manifest_blocks.grouped_by_partition`` gives the records; None where partition
    values have no total order."""
    n = len(buckets)
    group_key = parts.codes * (int(buckets.max()) - int(buckets.min()) + 1 if n else 1) + (buckets - (
        int(buckets.min()) if n else 0))
    _u, first_idx, inverse = np.unique(group_key, return_index=True, return_inverse=True)
    if len(_u) < 2:
        return np.arange(n, dtype=np.int64)
    keyed = [tuple((v is not None, v) for v in vals) for vals in parts.values]
    try:
        order = sorted(range(len(keyed)), key=lambda j: keyed[j])
    except TypeError:
        return None
    rank = np.empty(len(keyed), np.int64)
    r = 0
    for pos, j in enumerate(order):
        if pos and keyed[j] != keyed[order[pos - 1]]:
            r += 1
        rank[j] = r
    first = first_idx[np.ravel(inverse)]
    return np.lexsort((np.arange(n), first, buckets, rank[parts.codes])).astype(np.int64)


@dataclass
class _Run:
    """Manifests read for a merge: their decompressed records in one buffer, each record's span in
    it, the columns a merge reads, and which manifest each record came from."""
    buf: npt.NDArray[np.uint8]
    starts: Ints
    ends: Ints
    cols: pa.Table
    source: Ints

    def identities(self) -> Ints:
        return _identities(self.cols, self.cols.column("_FILE"))

    def kinds(self) -> Ints:
        return np.asarray(self.cols.column("_KIND").to_numpy(), np.int64)

    def names(self) -> pa.ChunkedArray:
        return _field(self.cols.column("_FILE"), "_FILE_NAME")


def _load(store: Any, metas: Sequence[mf.ManifestFileMeta]) -> Optional[_Run]:
    """The manifests read and decoded for a merge; None where one is not in icefloe's entry schema
    (or not of the size its list records: the entry-by-entry path reports that)."""
    parts: list[_Part] = []
    for m in metas:
        path = store.manifest_path(m.file_name)
        try:
            data = store.io.read_bytes(path)
        except FileNotFoundError:
            raise CorruptMetadataError(path, "manifest referenced by a manifest list is missing") from None
        if len(data) != m.file_size:
            return None
        try:
            part = _read_part(data, path)
        except avro_decode.Unsupported:
            return None
        except avro_decode.Corrupt as e:
            raise CorruptMetadataError(path, f"not a readable Avro file: {e}") from None
        if part is None:
            return None
        parts.append(part)
    offsets = np.cumsum([0] + [len(p.buf) for p in parts[:-1]]).tolist()
    buf = np.concatenate([p.buf for p in parts]) if parts else np.empty(0, np.uint8)
    starts = np.concatenate([p.spans[0] + o for p, o in zip(parts, offsets)])
    ends = np.concatenate([p.spans[1] + o for p, o in zip(parts, offsets)])
    source = np.concatenate([np.full(len(p.spans[0]), k, np.int64) for k, p in enumerate(parts)])
    return _Run(buf, starts, ends, pa.concat_tables([p.cols for p in parts]), source)


def merge_run(store: Any, run: Sequence[mf.ManifestFileMeta], created: list[str]
              ) -> Optional[list[mf.ManifestFileMeta]]:
    """The manifests ``commit``'s entry-by-entry merge of ``run`` writes (same records, order,
    files and metadata), or None where a manifest is not in the entry schema icefloe writes."""
    loaded = _load(store, run)
    if loaded is None:
        return None
    return _write_kept(store, loaded, _merged(loaded.kinds(), loaded.identities(), loaded.names()), created)


def full_compaction(store: Any, to_merge: Sequence[mf.ManifestFileMeta], delta: Sequence[bool], created: list[str]
                    ) -> Optional[tuple[list[mf.ManifestFileMeta], list[mf.ManifestFileMeta]]]:
    """``commit.try_full_compaction``'s rewrite of the manifests ``to_merge`` (``delta``: which of
    them are delta manifests; every manifest holding a DELETE is among them): every DELETE applied
    and dropped. Returns the manifests kept as they are (base manifests without a deleted file) and
    those written, or None where a manifest is not in icefloe's entry schema."""
    loaded = _load(store, to_merge)
    if loaded is None:
        return None
    kinds, ids = loaded.kinds(), loaded.identities()
    is_delete = kinds == mf.DELETE
    hit = np.isin(ids, np.unique(ids[is_delete])) & ~is_delete
    rewrite = np.array(delta, np.bool_)
    rewrite[np.unique(loaded.source[hit])] = True
    kept = np.flatnonzero(rewrite[loaded.source] & ~is_delete & ~hit)
    _u, first, counts = np.unique(ids[kept], return_index=True, return_counts=True)
    if bool((counts > 1).any()):
        twice = np.setdiff1d(np.arange(len(kept)), first)
        raise DuplicateFileError(f"trying to add file {loaded.names()[int(kept[twice.min()])].as_py()} "
                                 "which is already added")
    untouched = [m for m, r in zip(to_merge, rewrite.tolist()) if not r]
    written = _write_kept(store, loaded, kept.astype(np.int64), created)
    return None if written is None else (untouched, written)


def _write_kept(store: Any, run: _Run, kept: Ints, created: list[str]) -> Optional[list[mf.ManifestFileMeta]]:
    """The records ``kept`` (in that order) written as ``FileStore.write_manifests`` writes entries."""
    if len(kept) == 0:
        return []
    types = store.partition_types
    cols = run.cols.take(pa.array(kept))
    starts, ends = run.starts[kept], run.ends[kept]
    partitions = _Partitions(cols.column("_PARTITION"), types)
    buckets = np.asarray(cols.column("_BUCKET").to_numpy(), np.int64)
    grouped = bool(types) and len(kept) > manifest_blocks.MIN_BLOCK_ENTRIES
    if grouped:
        order = _grouped(partitions, buckets)
        if order is None:
            return None
        cols = cols.take(pa.array(order))
        starts, ends, buckets = starts[order], ends[order], buckets[order]
        partitions.codes = partitions.codes[order]
    return _write(store, run.buf, starts, ends, cols, cols.column("_FILE"), partitions, buckets, grouped, created)


def _write(store: Any, buf: npt.NDArray[np.uint8], starts: Ints, ends: Ints, cols: pa.Table, f: pa.ChunkedArray,
           partitions: _Partitions, buckets: Ints, grouped: bool, created: list[str]) -> list[mf.ManifestFileMeta]:
    """The records written as ``manifest.encode_manifests`` writes them, and their file metas."""
    lens = ends - starts
    n = len(lens)
    out = np.empty(int(lens.sum()), np.uint8)
    cum = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=cum[1:])
    numba_cache.kernel().gather(buf, starts, lens, cum, out)
    target = store.options.manifest_target_file_size
    codec = mf.avro_codec(store.options.manifest_compression)
    sync = max(256, min(16000, target // 4))
    # where a block may end early: a change of bucket or partition before a record
    change = np.zeros(n + 1, np.bool_)
    if grouped and n > 1:
        change[1:n] = (buckets[1:] != buckets[:-1]) | (partitions.codes[1:] != partitions.codes[:-1])
    cuts = np.flatnonzero(change)
    kinds = np.asarray(cols.column("_KIND").to_numpy(), np.int64)
    levels = np.asarray(_field(f, "_LEVEL").to_numpy(), np.int64)
    schema_ids = np.asarray(_field(f, "_SCHEMA_ID").to_numpy(), np.int64)
    totals = np.asarray(cols.column("_TOTAL_BUCKETS").to_numpy(), np.int64)
    first_ids = _field(f, "_FIRST_ROW_ID")
    row_counts = np.asarray(_field(f, "_ROW_COUNT").to_numpy(), np.int64)
    base = mf.new_manifest_name()
    metas: list[mf.ManifestFileMeta] = []
    i = 0
    while i < n:
        body = _io.BytesIO()
        w: Any = fastavro_write.Writer(body, mf.MANIFEST_ENTRY_SCHEMA_PARSED, codec=codec, sync_interval=1 << 62)
        header_len = body.tell()
        blocks: list[tuple[int, int]] = []
        start = i
        while i < n:
            lo = i
            # the first record after which the block holds ``sync`` bytes
            hi = int(np.searchsorted(cum, int(cum[lo]) + sync, side="left"))
            hi = max(hi, lo + 1)
            if grouped:
                k = int(np.searchsorted(cuts, lo + manifest_blocks.MIN_BLOCK_ENTRIES, side="left"))
                if k < len(cuts) and int(cuts[k]) < hi:
                    hi = int(cuts[k])
            hi = min(hi, n)
            w.write_block(_Block(hi - lo, out[cum[lo]:cum[hi]].tobytes()))
            w.flush()
            blocks.append((lo, hi))
            i = hi
            if body.tell() >= target:
                break
        data = body.getvalue()
        if grouped and len(blocks) >= 2:
            index: list[list[Any]] = []
            for lo, hi in blocks:
                st = partitions.stats(partitions.codes[lo:hi])
                index.append([hi - lo, st.min_values.data.hex(), st.max_values.data.hex(), list(st.null_counts or ()),
                              int(buckets[lo:hi].min()), int(buckets[lo:hi].max())])
            head = _io.BytesIO()
            fastavro_write.Writer(head, mf.MANIFEST_ENTRY_SCHEMA_PARSED, codec=codec, sync_interval=1 << 62,
                                  sync_marker=w.sync_marker,
                                  metadata={manifest_blocks.INDEX_KEY: json.dumps(index, separators=(",", ":"))})
            data = head.getvalue() + data[header_len:]
        name = f"{base}-{len(metas)}"
        store.io.write_bytes(store.manifest_path(name), data, overwrite=False)
        created.append(name)
        sl = slice(start, i)
        firsts = first_ids.slice(start, i - start)
        low = high = None
        if firsts.null_count == 0:
            fv = np.asarray(firsts.to_numpy(), np.int64)
            low, high = int(fv.min()), int((fv + row_counts[sl] - 1).max())
        total_set = np.unique(totals[sl])
        total = int(total_set[0]) if len(total_set) == 1 else None
        added = int((kinds[sl] == mf.ADD).sum())
        metas.append(mf.ManifestFileMeta(
            file_name=name, file_size=len(data), num_added_files=added, num_deleted_files=(i - start) - added,
            partition_stats=partitions.stats(partitions.codes[sl]),
            schema_id=int(schema_ids[sl].max()),
            min_bucket=int(buckets[sl].min()), max_bucket=int(buckets[sl].max()),
            min_level=int(levels[sl].min()), max_level=int(levels[sl].max()),
            min_row_id=low, max_row_id=high,
            total_buckets=total if total is not None and total > 0 else None))
    return metas


class _Block:
    """What fastavro's ``Writer.write_block`` reads of a block: its record count and bytes."""

    def __init__(self, num_records: int, data: bytes):
        self.num_records = num_records
        self.bytes_ = _io.BytesIO(data)


def deleted_partitions(store: Any, metas: Sequence[mf.ManifestFileMeta]) -> Optional[set[bytes]]:
    """The partitions (``_PARTITION`` bytes) of the DELETE entries of ``metas``; None where a
    manifest is not in icefloe's entry schema."""
    loaded = _load(store, metas)
    if loaded is None:
        return None
    deletes = loaded.cols.filter(pc.equal(loaded.cols.column("_KIND"), mf.DELETE))
    return set(pc.unique(deletes.column("_PARTITION")).to_pylist())
