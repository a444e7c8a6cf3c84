# pyright: strict
"""Manifests merged on commit without decoding their entries into objects (Iceberg spec,
"Manifests", "Sequence Number Inheritance"; ``snapshot_producer.merge_manifests``).

A merge of a large table rewrites a manifest of hundreds of thousands of entries, of which only
the leading fields change: an entry another snapshot wrote becomes EXISTING with its snapshot id
and sequence numbers written out (what it inherited from its manifest-list entry made explicit),
DELETED entries of other snapshots are dropped, and this snapshot's ADDED and DELETED entries keep
their status. So each kept entry is written as its new leading fields followed by the bytes of its
``data_file`` copied from the source's decompressed blocks: a compiled walk of each record by its
writer's schema (``core.avro_spans``) finds where ``data_file`` starts and the record ends, and the
leading fields, the record counts and the partitions (for the manifest list's counts and partition
summaries) come from a columnar decode (``core.avro_decode``) of the few fields needed.

The copy is exact only where a source's ``data_file`` is encoded as the written one is (the same
types, fields and names, whatever its docs and ids). ``merge`` returns None, and the caller merges
entry by entry as before, where it is not: a source whose ``data_file`` schema differs (format v1,
another writer's layout, a partition type evolved), a partition type whose summaries are not
computed from columns here, a format v3 data manifest whose files inherit first row ids (which a
merged manifest must write out), numba missing, or a file the decoders refuse (the entry reader
then names the damage).
"""
from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Optional, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.core import avro_decode, numba_cache
from icefloe.core.io import FileIO
from icefloe.core.types import Schema, StructType
from icefloe.iceberg import conversions
from icefloe.iceberg.avro_schemas import avro_name, manifest_entry_schema
from icefloe.iceberg.manifest import ADDED, DATA, DELETED, EXISTING, POSITION_DELETES
from icefloe.iceberg.manifest_codec import DEFAULT as DEFAULT_CODEC
from icefloe.iceberg.manifest_codec import ManifestCodec
from icefloe.iceberg.manifest_avro import manifest_metadata
from icefloe.iceberg.manifest_list import DATA_MANIFEST, FieldSummary, ManifestFile
from icefloe.iceberg.partitioning import PartitionSpec

Ints = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

# the leading fields of a written entry, before ``data_file`` (``avro_schemas.manifest_entry_schema``)
LEADING = ("status", "snapshot_id", "sequence_number", "file_sequence_number")
# the fields of ``data_file`` decoded as columns; the rest are read past
_DECODED = ("content", "partition", "record_count", "first_row_id")
# a written block's size before compression (bytes of records)
BLOCK_BYTES = 64 * 1024
# partition field types summarised from columns, and how their Arrow column becomes internal values
_PARTITION_TYPES = ("int", "long", "string", "boolean", "date", "time", "timestamp", "timestamptz")


def available() -> bool:
    try:
        import numba  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError:
        return False
    return True


def shape(schema: Any, named: Optional[dict[str, Any]] = None) -> Any:
    """Schema ``schema`` reduced to what its binary encoding and meaning depend on: types, field
    names and order, fixed sizes, logical types (docs, ids, defaults and namespaces dropped)."""
    named = {} if named is None else named
    if isinstance(schema, list):
        return [shape(b, named) for b in schema]            # pyright: ignore[reportUnknownVariableType]
    if isinstance(schema, str):
        if schema in named:
            return named[schema]
        return schema
    if not isinstance(schema, dict):
        return repr(schema)
    s: dict[str, Any] = schema                               # pyright: ignore[reportUnknownVariableType]
    t = s.get("type")
    logical = s.get("logicalType")
    if t in ("record", "error"):
        out: Any = ["record", [(str(f["name"]), shape(f["type"], named)) for f in s["fields"]]]
    elif t == "fixed":
        out = ["fixed", int(s["size"]), logical]
    elif t == "array":
        out = ["array", shape(s["items"], named), logical]
    elif t == "map":
        out = ["map", shape(s["values"], named)]
    elif t == "enum":
        out = ["enum", list(s.get("symbols", []))]
    else:
        out = [shape(t, named), logical]
    if t in ("record", "error", "fixed", "enum") and "name" in s:
        name = str(s["name"])
        named[name] = out
        named[name.rsplit(".", 1)[-1]] = out
    return out


def _entry_shape(entry_schema: Any) -> tuple[Optional[Any], int]:
    """The shape of an entry schema's ``data_file`` and its index among the entry's fields."""
    if not isinstance(entry_schema, dict):
        return None, -1
    fields = cast(list[dict[str, Any]], entry_schema.get("fields") or [])  # pyright: ignore[reportUnknownMemberType]
    for i, f in enumerate(fields):
        if f.get("name") == "data_file":
            return shape(f["type"]), i
    return None, -1


@dataclass
class _Source:
    """One source manifest's kept entries: their leading fields and the spans of their data files."""

    buf: npt.NDArray[np.uint8]
    segs: Ints             # (entries, 2 * segments): the spans of its data file's bytes copied
    lead: Ints             # (entries, 3 + segments): status, snapshot id, sequence numbers; first row id
    lead_null: npt.NDArray[np.uint8]
    record_count: Ints
    partitions: list[pa.Array]   # each partition field's column (internal values), kept entries


def _column(table: pa.Table, name: str, n: int) -> tuple[Ints, Mask]:
    """A whole-number column's values (nulls 0) and where it is null; all null if absent."""
    if name not in table.column_names:
        return np.zeros(n, np.int64), np.ones(n, np.bool_)
    col = table.column(name)
    null = np.array(col.is_null().to_numpy(zero_copy_only=False), np.bool_)       # copies: written to
    vals = np.array(col.fill_null(0).to_numpy(zero_copy_only=False), np.int64)
    return vals, null


def _partition_columns(files: pa.ChunkedArray, ptype: StructType) -> Optional[list[pa.Array]]:
    """Each partition field's column as internal values; None for a type not summarised here."""
    part = pa.concat_arrays([c.field("partition") for c in files.chunks]) if files.num_chunks else None
    out: list[pa.Array] = []
    for f in ptype.fields:
        if str(f.field_type) not in _PARTITION_TYPES or part is None:
            return None
        col: pa.Array = part.field(avro_name(f.name))     # the shapes matched: the written name
        t = col.type
        if pa.types.is_date32(t):
            col = col.cast(pa.int32())
        elif pa.types.is_timestamp(t) or pa.types.is_time64(t):
            if getattr(t, "unit", "us") != "us":
                return None
            col = col.view(pa.int64())
        out.append(col)
    return out


def _read_source(io: FileIO, m: ManifestFile, target_shape: Any, ptype: StructType, snapshot_id: int) -> Optional[_Source]:
    try:
        data = io.read_bytes(m.manifest_path)
    except (OSError, ValueError):
        return None          # the entry reader names what is wrong
    try:
        meta, decompress, starts, ends, counts = avro_decode.frames(data)
        schema = json.loads(meta["avro.schema"])
        got, split_field = _entry_shape(schema)
        if got is None or got != target_shape:
            return None
        prog = avro_decode.Program(schema)
        table = avro_decode.decode(data, drop=[f"data_file.{f['name']}" for f in schema["fields"][split_field]["type"]["fields"]
                                               if f["name"] not in _DECODED])
    except (avro_decode.Unsupported, avro_decode.Corrupt, KeyError, ValueError, TypeError):
        return None
    n = int(counts.sum())
    if table.num_rows != n:
        return None
    if decompress is None:
        buf = np.frombuffer(data, np.uint8)
        bstarts, bends = starts, ends
    else:
        try:
            raws = [decompress(data[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]
        except Exception:      # noqa: BLE001 -- each codec's own error: the entry reader names it
            return None
        sizes = np.array([len(r) for r in raws], np.int64)
        bends = np.cumsum(sizes).astype(np.int64)
        bstarts = (bends - sizes).astype(np.int64)
        buf = np.frombuffer(b"".join(raws), np.uint8)
    data_file = next(c for c in prog.root.children if c.name == "data_file")
    row_id_node = next((c for c in data_file.children if c.name == "first_row_id"), None)
    # a v3 data manifest's files that inherit first row ids get them written out: the data file's
    # bytes are copied around its first_row_id
    inherits = m.first_row_id is not None and m.content == DATA_MANIFEST and row_id_node is not None
    marks = [data_file.index] + ([row_id_node.index, row_id_node.end] if inherits and row_id_node else [])
    at = np.empty((n, len(marks)), np.int64)
    rec_end = np.empty(n, np.int64)
    spans = numba_cache.spans()
    walked = spans.record_spans(buf, bstarts, bends, counts, prog.kind, prog.end, prog.nullbr, prog.fsize,
                                np.array(marks, np.int64), at, rec_end)
    if walked != n:
        return None
    files = table.column("data_file")
    ffields = {files.type.field(i).name for i in range(files.type.num_fields)}
    status, _ = _column(table, "status", n)
    snap, snap_null = _column(table, "snapshot_id", n)
    seq, seq_null = _column(table, "sequence_number", n)
    fseq, fseq_null = _column(table, "file_sequence_number", n)
    flat = pa.table({k: pa.concat_arrays([c.field(k) for c in files.chunks]) for k in ffields if k != "partition"})
    rows, rows_null = _column(flat, "record_count", n)
    if rows_null.any():
        return None
    # inherited values, as the entry reader applies them (``manifest_avro.read_kept_entries``)
    snap[snap_null] = m.added_snapshot_id
    inherit = (status == ADDED) | (m.sequence_number == 0)
    seq[seq_null & inherit] = m.sequence_number
    seq_null &= ~inherit
    fseq[fseq_null & inherit] = m.sequence_number
    fseq_null &= ~inherit
    mine = (snap == snapshot_id) & ((status == ADDED) | (status == DELETED))
    keep = mine | (status != DELETED)
    new_status = np.where(mine, status, EXISTING)
    lead_cols = [new_status, snap, seq, fseq]
    null_cols = [np.zeros(n, np.bool_), np.zeros(n, np.bool_), seq_null, fseq_null]
    if inherits:      # as ``manifest_reader`` inherits them: live files without one, in file order
        assert m.first_row_id is not None
        ids, ids_null = _column(flat, "first_row_id", n)
        missing = ids_null & (status != DELETED)
        add = np.where(missing, rows, 0)
        ids[missing] = (m.first_row_id + np.cumsum(add) - add)[missing]
        lead_cols.append(ids)
        null_cols.append(ids_null & ~missing)
        segs = np.stack([at[:, 0], at[:, 1], at[:, 2], rec_end], axis=1)
    else:
        segs = np.stack([at[:, 0], rec_end], axis=1)
    lead = np.stack(lead_cols, axis=1)[keep]
    lead_null = np.stack(null_cols, axis=1)[keep].astype(np.uint8)
    parts = _partition_columns(files, ptype)
    if parts is None:
        return None
    index = pa.array(np.flatnonzero(keep))
    return _Source(buf, np.ascontiguousarray(segs[keep]), np.ascontiguousarray(lead), np.ascontiguousarray(lead_null),
                   rows[keep], [p.take(index) for p in parts])


def _summaries(ptype: StructType, columns: list[list[pa.Array]]) -> list[FieldSummary]:
    """``manifest_list.summarize_partitions`` over the written entries' partition columns."""
    out: list[FieldSummary] = []
    for i, f in enumerate(ptype.fields):
        col = pa.chunked_array([c[i] for c in columns], columns[0][i].type) if columns else pa.chunked_array([], pa.null())
        has_null = col.null_count > 0
        lo = hi = None
        if len(col) > col.null_count:
            mm = pc.min_max(col)   # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
        out.append(FieldSummary(
            contains_null=has_null, contains_nan=False,
            lower_bound=None if lo is None else conversions.to_bytes(f.field_type, lo),
            upper_bound=None if hi is None else conversions.to_bytes(f.field_type, hi)))
    return out


def _container(schema_json: str, metadata: dict[str, str], records: npt.NDArray[np.uint8], offsets: Ints,
               codec: ManifestCodec) -> bytes:
    """An Avro object container file (compressed by ``codec``) of the encoded records (record ``i`` at
    ``records[offsets[i]:offsets[i + 1]]``), in blocks of about ``BLOCK_BYTES``."""
    sync = os.urandom(16)
    meta = {"avro.schema": schema_json.encode(), "avro.codec": codec.avro.encode(),
            **{k: v.encode() for k, v in metadata.items()}}
    head = avro_decode.encode_header(meta, sync)
    n = len(offsets) - 1
    cuts = [0]
    while cuts[-1] < n:
        a = cuts[-1]
        b = int(np.searchsorted(offsets, int(offsets[a]) + BLOCK_BYTES, side="right")) - 1
        cuts.append(min(n, max(b, a + 1)))
    raw = [records[int(offsets[a]):int(offsets[b])].tobytes() for a, b in zip(cuts, cuts[1:])]
    with ThreadPoolExecutor(max_workers=min(4, max(1, os.cpu_count() or 1))) as pool:
        packed = list(pool.map(codec.compress, raw))
    parts = [head]
    for (a, b), z in zip(zip(cuts, cuts[1:]), packed):
        parts.append(avro_decode.encode_long(b - a) + avro_decode.encode_long(len(z)) + z + sync)
    return b"".join(parts)


def merge(io: FileIO, manifests: list[ManifestFile], path: str, schema: Schema, spec: PartitionSpec,
          content: int, format_version: int, snapshot_id: int, sequence_number: int,
          codec: ManifestCodec = DEFAULT_CODEC) -> Optional[ManifestFile]:
    """Manifests ``manifests`` (of one spec and content kind) merged into a new manifest at
    ``path`` written by ``snapshot_id`` and compressed by ``codec``; its manifest-list entry, or
    None (nothing written) where this cannot copy them exactly."""
    if not available():
        return None
    ptype = spec.partition_type(schema)
    entry_schema = manifest_entry_schema(ptype, format_version)
    target_shape, _ = _entry_shape(entry_schema)
    spans = numba_cache.spans()
    sources: list[_Source] = []
    pieces: list[tuple[npt.NDArray[np.uint8], Ints]] = []
    for m in manifests:      # one source's blocks held at a time: its kept entries are copied out first
        s = _read_source(io, m, target_shape, ptype, snapshot_id)
        if s is None:
            return None
        # status an int; the sequence numbers and a first row id ["null", "long"]
        lead_union = np.array([-1] + [0] * (s.lead.shape[1] - 1), np.int64)
        n = s.segs.shape[0]
        size = int((s.segs[:, 1::2] - s.segs[:, 0::2]).sum()) + s.lead.shape[1] * 11 * n
        out = np.empty(size, np.uint8)
        offsets = np.empty(n + 1, np.int64)
        used = spans.assemble(s.buf, s.segs, s.lead, s.lead_null, lead_union, out, offsets)
        pieces.append((out[:used], offsets))
        s.buf = np.empty(0, np.uint8)
        sources.append(s)
    records = np.concatenate([p[0] for p in pieces]) if pieces else np.empty(0, np.uint8)
    shift = np.cumsum([0] + [int(p[1][-1]) for p in pieces])
    offsets = np.concatenate([p[1][:-1] + shift[i] for i, p in enumerate(pieces)] + [np.array([shift[-1]], np.int64)])
    data = _container(json.dumps(entry_schema), manifest_metadata(schema, spec, DATA if content == DATA_MANIFEST else POSITION_DELETES,
                                                                   format_version), records, offsets.astype(np.int64),
                      codec)
    io.write_bytes(path, data, overwrite=False)
    status = np.concatenate([s.lead[:, 0] for s in sources]) if sources else np.empty(0, np.int64)
    rows = np.concatenate([s.record_count for s in sources]) if sources else np.empty(0, np.int64)
    seq = np.concatenate([s.lead[:, 2] for s in sources]) if sources else np.empty(0, np.int64)
    seq_known = np.concatenate([s.lead_null[:, 2] == 0 for s in sources]) if sources else np.empty(0, np.bool_)
    live_seq = seq[(status != DELETED) & seq_known]
    min_seq = min(sequence_number, int(live_seq.min())) if len(live_seq) else sequence_number
    def count(st: int) -> tuple[int, int]:
        sel = status == st
        return int(sel.sum()), int(rows[sel].sum())

    (af, ar), (ef, er), (df, dr) = count(ADDED), count(EXISTING), count(DELETED)
    return ManifestFile(
        manifest_path=path, manifest_length=len(data), partition_spec_id=spec.spec_id, content=content,
        sequence_number=sequence_number, min_sequence_number=min_seq, added_snapshot_id=snapshot_id,
        added_files_count=af, existing_files_count=ef, deleted_files_count=df, added_rows_count=ar,
        existing_rows_count=er, deleted_rows_count=dr,
        partitions=_summaries(ptype, [s.partitions for s in sources]))
