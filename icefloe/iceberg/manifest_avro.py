# pyright: strict
"""The Avro encoding of manifests (Iceberg spec, "Manifests" and "Appendix A: Format-specific
Requirements", Avro): writing a manifest file, and decoding one into ``ManifestEntry`` values.

Two decoders give the same entries. ``entries_from_records`` builds them from
fastavro's full decode (``read_manifest_raw``), the reference. ``read_manifest_entries``,
used for planning, decodes with code generated from each manifest's writer schema
and leaves the six metrics maps of every data file undecoded until first read
(``ManifestDataFile``).
"""
from __future__ import annotations

import io
import json
import uuid
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, cast

import fastavro

from icefloe.core import avro_decode
from icefloe.core.avro import as_records
from icefloe.core.io import FileIO
from icefloe.core.lazy import Deferred
from icefloe.core.types import BooleanType, IntegerType, LongType, Schema, StringType, StructType, UUIDType
from icefloe.errors import CorruptMetadataError
from icefloe.iceberg import conversions
from icefloe.iceberg.avro_schemas import avro_name, manifest_entry_schema
from icefloe.iceberg.manifest import ADDED, DATA, DELETED, METRIC_FIELDS, DataFile, ManifestEntry
from icefloe.iceberg.manifest_codec import DEFAULT as DEFAULT_CODEC
from icefloe.iceberg.manifest_codec import ManifestCodec
from icefloe.iceberg.manifest_codegen import EntryDecoder, entry_decoder, read_long
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.schema import schema_to_json

# A record as fastavro (or the generated decoder) reads and writes it: a JSON-like object
AvroRecord = dict[str, Any]
# ``DataFile.metrics_of``: (value count, null count, NaN count, lower bound, upper bound)
Metrics = tuple[Optional[int], Optional[int], Optional[int], Optional[bytes], Optional[bytes]]
# what a ``ManifestDataFile`` keeps of its entry until its metrics maps are read: the decompressed
# block, each metrics map's offset in it (None where the schema lacks the map) and the decoder
Lazy = tuple[bytes, tuple[Optional[int], ...], EntryDecoder]


def _map_to_avro(d: Optional[dict[int, Any]]) -> Optional[list[AvroRecord]]:
    if d is None:
        return None
    return [{"key": k, "value": v} for k, v in sorted(d.items())]


def _map_from_avro(a: Optional[list[AvroRecord]]) -> Optional[dict[Any, Any]]:
    if a is None:
        return None
    return {kv["key"]: kv["value"] for kv in a}


def _partition_to_avro(partition_type: StructType, values: tuple[Any, ...]) -> AvroRecord:
    out: AvroRecord = {}
    for f, v in zip(partition_type.fields, values):
        if v is not None and isinstance(f.field_type, UUIDType):
            v = v.bytes
        out[avro_name(f.name)] = v
    return out


def _partition_from_avro(partition_type: StructType, rec: AvroRecord) -> tuple[Any, ...]:
    out: list[Any] = []
    for f in partition_type.fields:
        v = rec.get(avro_name(f.name), rec.get(f.name))
        if v is not None:
            v = conversions.to_internal(f.field_type, v)
            if isinstance(f.field_type, UUIDType) and isinstance(v, (bytes, bytearray)):
                v = uuid.UUID(bytes=bytes(v))
        out.append(v)
    return tuple(out)


def entry_to_avro(e: ManifestEntry, partition_type: StructType, format_version: int = 2) -> AvroRecord:
    f = e.data_file
    rec: AvroRecord = {
        "status": e.status,
        "snapshot_id": e.snapshot_id,
        "sequence_number": e.sequence_number,
        "file_sequence_number": e.file_sequence_number,
        "data_file": {
            "content": f.content,
            "file_path": f.file_path,
            "file_format": f.file_format,
            "partition": _partition_to_avro(partition_type, f.partition),
            "record_count": f.record_count,
            "file_size_in_bytes": f.file_size_in_bytes,
            "column_sizes": _map_to_avro(f.column_sizes),
            "value_counts": _map_to_avro(f.value_counts),
            "null_value_counts": _map_to_avro(f.null_value_counts),
            "nan_value_counts": _map_to_avro(f.nan_value_counts),
            "lower_bounds": _map_to_avro(f.lower_bounds),
            "upper_bounds": _map_to_avro(f.upper_bounds),
            "key_metadata": f.key_metadata,
            "split_offsets": f.split_offsets,
            "equality_ids": f.equality_ids,
            "sort_order_id": f.sort_order_id,
            "referenced_data_file": f.referenced_data_file,
        },
    }
    if format_version >= 3:
        rec["data_file"].update(first_row_id=f.first_row_id, content_offset=f.content_offset,
                                content_size_in_bytes=f.content_size_in_bytes)
    return rec


def manifest_metadata(schema: Schema, spec: PartitionSpec, content: int, format_version: int) -> dict[str, str]:
    """The key/value metadata of a manifest's Avro header (spec "Manifests")."""
    return {
        "schema": json.dumps(schema_to_json(schema), separators=(",", ":")),
        "schema-id": str(schema.schema_id),
        "partition-spec": json.dumps(spec.fields_json(), separators=(",", ":")),
        "partition-spec-id": str(spec.spec_id),
        "format-version": str(max(format_version, 2)),
        "content": "data" if content == DATA else "deletes",
    }


def write_manifest(io_: FileIO, path: str, schema: Schema, spec: PartitionSpec,
                   entries: Iterable[ManifestEntry], content: int = DATA, format_version: int = 2,
                   codec: ManifestCodec = DEFAULT_CODEC) -> int:
    """Write a manifest file compressed by ``codec`` (the table's ``ManifestCodec.of``); returns its
    length in bytes."""
    ptype = spec.partition_type(schema)
    avro_schema = manifest_entry_schema(ptype, format_version)
    metadata = manifest_metadata(schema, spec, content, format_version)
    buf = io.BytesIO()
    records = [entry_to_avro(e, ptype, format_version) for e in entries]
    # fastavro's stub leaves the file parameter of its writer as IO[Unknown]
    fastavro.writer(buf, fastavro.parse_schema(avro_schema), records,  # pyright: ignore[reportUnknownMemberType]
                    codec=codec.avro, codec_compression_level=codec.avro_level, metadata=metadata)
    data = buf.getvalue()
    io_.write_bytes(path, data, overwrite=False)
    return len(data)


def read_manifest_raw(io_: FileIO, path: str) -> tuple[dict[str, Any], list[AvroRecord]]:
    """Read a manifest's key/value metadata and raw records; errors name the file."""
    try:
        data = io_.read_bytes(path)
    except FileNotFoundError as e:
        raise CorruptMetadataError(path, "manifest file is missing") from e
    except (IsADirectoryError, ValueError) as e:   # e.g. a path with a NUL byte
        raise CorruptMetadataError(path, f"manifest file cannot be read ({type(e).__name__}: {e})") from e
    try:
        reader = fastavro.reader(io.BytesIO(data))
        # fastavro's stub types the reader's metadata partly unknown: it is the header's str -> bytes map
        header = cast("dict[str, Any]", reader.metadata)  # pyright: ignore[reportUnknownMemberType]
        meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in header.items()}
        records = as_records(reader)
    except Exception as e:
        raise CorruptMetadataError(path, f"not a readable Avro manifest ({type(e).__name__}: {e})") from e
    return meta, records


def entries_from_records(records: list[AvroRecord], partition_type: StructType, spec_id: int,
                         inherited_snapshot_id: int, inherited_sequence_number: int) -> list[ManifestEntry]:
    out: list[ManifestEntry] = []
    for r in records:
        df = r["data_file"]
        status = r["status"]
        snap = r.get("snapshot_id")
        seq = r.get("sequence_number")
        fseq = r.get("file_sequence_number")
        if snap is None:
            snap = inherited_snapshot_id
        # Inheritance applies to ADDED entries only (spec: "Sequence Number Inheritance").
        # v1 manifests carry no sequence numbers: every entry then has the list's (0).
        if seq is None and (status == ADDED or inherited_sequence_number == 0):
            seq = inherited_sequence_number
        if fseq is None and (status == ADDED or inherited_sequence_number == 0):
            fseq = inherited_sequence_number
        f = DataFile(
            file_path=df["file_path"], file_format=df["file_format"],
            partition=_partition_from_avro(partition_type, df["partition"] or {}),
            record_count=df["record_count"], file_size_in_bytes=df["file_size_in_bytes"],
            content=df.get("content", 0) or 0,
            column_sizes=_map_from_avro(df.get("column_sizes")),
            value_counts=_map_from_avro(df.get("value_counts")),
            null_value_counts=_map_from_avro(df.get("null_value_counts")),
            nan_value_counts=_map_from_avro(df.get("nan_value_counts")),
            lower_bounds=_map_from_avro(df.get("lower_bounds")),
            upper_bounds=_map_from_avro(df.get("upper_bounds")),
            key_metadata=df.get("key_metadata"), split_offsets=df.get("split_offsets"),
            equality_ids=df.get("equality_ids"), sort_order_id=df.get("sort_order_id"),
            spec_id=spec_id, referenced_data_file=df.get("referenced_data_file"),
            first_row_id=df.get("first_row_id"), content_offset=df.get("content_offset"),
            content_size_in_bytes=df.get("content_size_in_bytes"),
        )
        out.append(ManifestEntry(status, snap, seq, fseq, f))
    return out


def container_record_count(data: bytes) -> int:
    """The records an Avro object container file holds, by its block headers, every block's sync
    marker checked (no block decompressed): what a decoder that does not check the framing itself
    must have read. A damaged frame raises ``ValueError``."""
    _meta, sync, p = avro_decode.header(data)
    return sum(count for count, _lo, _hi, _next in _framed_blocks(data, sync, p))


def _framed_blocks(data: bytes, sync: bytes, p: int) -> Iterator[tuple[int, int, int, int]]:
    """Each block of an Avro object container file from offset ``p`` (just past its header), its
    frame checked: (record count, start and end of its bytes, offset past its sync marker). A
    damaged frame raises ``ValueError``."""
    end = len(data)
    while p < end:
        count, p = read_long(data, p)
        size, p = read_long(data, p)
        if count < 0 or size < 0:
            raise ValueError("bad block header")
        lo, p = p, p + size
        if data[p:p + 16] != sync:
            raise ValueError("sync marker mismatch")
        yield count, lo, p, p + 16
        p += 16


def container_parts(data: bytes, records: int) -> list[bytes]:
    """An Avro object container file cut at its blocks into files of about ``records`` records
    each (whole blocks: a part may hold more): each is the file's header (metadata and sync
    marker) followed by a run of its blocks, so each is a container file of its own and together
    they hold the file's records in order. One part, ``[data]``, when the file holds no more than
    ``records``. A damaged frame raises ``ValueError``."""
    _meta, sync, p = avro_decode.header(data)
    header, end = data[:p], len(data)
    cuts: list[tuple[int, int]] = []      # (start, end) of each part's blocks
    start, held = p, 0
    for count, _lo, _hi, after in _framed_blocks(data, sync, p):
        held += count
        if held >= records:
            cuts.append((start, after))
            start, held = after, 0
    if start < end:
        cuts.append((start, end))
    if len(cuts) <= 1:
        return [data]
    return [header + data[a:b] for a, b in cuts]


def _container_blocks(data: bytes) -> Optional[tuple[dict[str, bytes], list[tuple[bytes, int]]]]:
    """(metadata, [(decompressed block, record count)]) of an Avro object container file,
    or None for a codec handled only by fastavro."""
    meta, sync, p = avro_decode.header(data)
    codec = meta.get("avro.codec", b"null").decode() or "null"
    if codec not in ("null", "deflate", "zstandard", "snappy"):
        return None
    try:
        inflate = avro_decode.decompressor(codec)
    except avro_decode.Unsupported:
        return None
    blocks: list[tuple[bytes, int]] = []
    for count, lo, hi, _next in _framed_blocks(data, sync, p):
        raw = data[lo:hi]
        blocks.append((inflate(raw) if inflate is not None else raw, count))
    return meta, blocks



def _decoded_metrics(d: dict[str, Any], name: str) -> Any:
    """A metrics map of a ``ManifestDataFile``: the six maps are decoded together on the first
    read of any of them (a map assigned since is kept)."""
    lazy: Optional[Lazy] = d.pop("_lazy", None)
    if lazy is not None:
        buf, offsets, dec = lazy
        for k, v in dec.read_metrics(buf, offsets).items():
            d.setdefault(k, v)
    return d[name]


_FIELD_NAMES = tuple(DataFile.__dataclass_fields__)


class ManifestDataFile(DataFile):
    """A ``DataFile`` read by ``read_manifest_entries``: its metrics maps stay encoded (in
    ``_lazy``: the decompressed block, each map's offset and the decoder) until first read.
    Equal to the plain ``DataFile`` with the same values; copies and pickles are plain."""

    # Read through DataFile's declarations, so the checker sees each field as its value type;
    # at run time a Deferred in the class makes the value on first read.
    if not TYPE_CHECKING:
        column_sizes = Deferred(_decoded_metrics)
        value_counts = Deferred(_decoded_metrics)
        null_value_counts = Deferred(_decoded_metrics)
        nan_value_counts = Deferred(_decoded_metrics)
        lower_bounds = Deferred(_decoded_metrics)
        upper_bounds = Deferred(_decoded_metrics)

    def metrics_of(self, field_id: int) -> Metrics:
        """``DataFile.metrics_of``, found in the encoded maps while they are not decoded: a
        filter's evaluation reads the columns it names, not all six maps of every column."""
        d = self.__dict__
        lazy: Optional[Lazy] = d.get("_lazy")
        if lazy is None:
            return DataFile.metrics_of(self, field_id)
        found: Optional[dict[int, Metrics]] = d.get("_found")             # a cached manifest's files are planned again: kept
        if found is None or any(n in d for n in METRIC_FIELDS):     # (not past a map assigned since)
            found = d["_found"] = {}
        elif field_id in found:
            return found[field_id]
        buf, offsets, dec = lazy
        found[field_id] = out = _find_metrics(buf, offsets, dec, field_id, d)
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DataFile):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _FIELD_NAMES)

    __hash__ = None   # as DataFile's: mutable, compared by value

    def __reduce__(self) -> tuple[type[DataFile], tuple[Any, ...]]:
        return DataFile, tuple(getattr(self, n) for n in _FIELD_NAMES)


def _find_metrics(buf: bytes, offsets: tuple[Optional[int], ...], dec: EntryDecoder, field_id: int,
                  assigned: dict[str, Any]) -> Metrics:
    """``DataFile.metrics_of`` from the encoded maps of an entry (those in ``assigned`` from there)."""
    out: list[Any] = []
    for k in range(1, len(METRIC_FIELDS)):
        name = METRIC_FIELDS[k]
        if name in assigned:                                # assigned since it was read
            given: Optional[dict[int, Any]] = assigned[name]
            out.append((given or {}).get(field_id))
        else:
            find, at = dec.find_metric[k], offsets[k]
            out.append(None if find is None or at is None else find(buf, at, field_id))
    return cast(Metrics, tuple(out))


def metric_columns(files: list[DataFile], field_id: int, kinds: tuple[int, ...]) -> list[list[Any]]:
    """For each metric of ``kinds`` (indexes into ``METRIC_FIELDS``), the list of field
    ``field_id``'s values over ``files``, read from the encoded maps where they still are (one
    generated finder call per file and metric, no per-file bookkeeping): a plan's columnar view of a
    cached manifest (``file_columns``)."""
    out: list[list[Any]] = [[] for _ in kinds]
    for f in files:
        d = f.__dict__
        lazy: Optional[Lazy] = d.get("_lazy")
        if lazy is None or any(n in d for n in METRIC_FIELDS[1:]):
            metrics = f.metrics_of(field_id)
            for col, k in zip(out, kinds):
                col.append(metrics[k - 1])
            continue
        buf, offsets, dec = lazy
        for col, k in zip(out, kinds):
            find, at = dec.find_metric[k], offsets[k]
            col.append(None if find is None or at is None else find(buf, at, field_id))
    return out


class EncodedFile:
    """What a plan's filter reads of an entry's file before the entry is built (``content``,
    ``partition``, ``record_count``, ``metrics_of``): one object, moved from entry to entry."""

    __slots__ = ("content", "partition", "record_count", "_buf", "_offsets", "_dec")

    content: int
    partition: tuple[Any, ...]
    record_count: int
    _buf: bytes
    _offsets: tuple[Optional[int], ...]
    _dec: EntryDecoder

    _NONE: dict[str, Any] = {}

    def metrics_of(self, field_id: int) -> Metrics:
        return _find_metrics(self._buf, self._offsets, self._dec, field_id, self._NONE)


# partition types whose raw Avro value (as fastavro decodes it) is already the internal value
_IDENTITY_PARTITION_TYPES = frozenset({IntegerType(), LongType(), StringType(), BooleanType()})


def read_manifest_entries(io_: FileIO, path: str, partition_type: StructType, spec_id: int,
                          inherited_snapshot_id: int, inherited_sequence_number: int) -> list[ManifestEntry]:
    """The entries of a manifest, like ``entries_from_records(read_manifest_raw(...)[1], ...)``, but
    each data file is a ``ManifestDataFile`` whose six metrics maps are decoded on first read."""
    return read_kept_entries(io_, path, partition_type, spec_id, inherited_snapshot_id,
                             inherited_sequence_number)[0]


def read_kept_entries(io_: FileIO, path: str, partition_type: StructType, spec_id: int,
                      inherited_snapshot_id: int, inherited_sequence_number: int,
                      keep: Optional[Callable[[EncodedFile], bool]] = None) -> tuple[list[ManifestEntry], int]:
    """``read_manifest_entries`` and the number of entries the manifest holds. With ``keep`` (a
    predicate on an :class:`EncodedFile`), only the live entries whose file it keeps are built:
    a scan's filter judges each file from the encoded entry, and the rest cost no objects."""
    try:
        data = io_.read_bytes(path)
    except FileNotFoundError as e:
        raise CorruptMetadataError(path, "manifest file is missing") from e
    except (IsADirectoryError, ValueError) as e:   # e.g. a path with a NUL byte
        raise CorruptMetadataError(path, f"manifest file cannot be read ({type(e).__name__}: {e})") from e
    try:
        parsed = _container_blocks(data)
        dec: Optional[EntryDecoder] = None
        blocks: list[tuple[bytes, int]] = []
        if parsed is not None:
            meta, blocks = parsed
            dec = entry_decoder(meta["avro.schema"].decode())
    except Exception as e:
        raise CorruptMetadataError(path, f"not a readable Avro manifest ({type(e).__name__}: {e})") from e
    if dec is None:
        _m, records = read_manifest_raw(io_, path)
        out = entries_from_records(records, partition_type, spec_id, inherited_snapshot_id,
                                   inherited_sequence_number)
        return out, len(out)
    # partition conversion: identity for the common case (the raw value is already internal)
    pfields = partition_type.fields
    wnames: set[str] = set()
    ps = dec.partition_schema
    if isinstance(ps, dict):
        wnames = {f["name"] for f in cast("dict[str, Any]", ps).get("fields", [])}
    simple = all(f.field_type in _IDENTITY_PARTITION_TYPES for f in pfields)
    keys = tuple(avro_name(f.name) if avro_name(f.name) in wnames else f.name for f in pfields)
    converted: dict[tuple[Any, ...], tuple[Any, ...]] = {}   # a manifest's files share few partitions: each converted once

    def convert(prec: AvroRecord) -> tuple[Any, ...]:
        raw = tuple(map(prec.get, keys))
        try:
            hit = converted.get(raw)
        except TypeError:       # a raw value that cannot be hashed
            return _partition_from_avro(partition_type, prec)
        if hit is None:
            hit = converted[raw] = _partition_from_avro(partition_type, prec)
        return hit

    read_entry, skim = dec.read_entry, dec.skim_entry
    if skim is None:   # not an entry schema to judge by (no status or data file): every entry is built
        keep = None
    inherit_all = inherited_sequence_number == 0
    out: list[ManifestEntry] = []
    append = out.append
    new = object.__new__
    n = 0
    view = EncodedFile()
    # the reader fills its one view in place, entry by entry (the module's own class, on a hot path)
    view._dec = dec  # pyright: ignore[reportPrivateUsage]
    prec: AvroRecord
    try:
        for buf, count in blocks:
            p = 0
            view._buf = buf  # pyright: ignore[reportPrivateUsage]
            n += count
            for _ in range(count):
                if keep is not None and skim is not None:   # judged from the skimmed entry; only a kept one is read whole
                    start = p
                    status, content, rows, prec, offsets, p = skim(buf, p)
                    if status == DELETED:
                        continue
                    prec = prec or {}
                    view.partition = tuple([prec.get(k) for k in keys]) if simple else convert(prec)
                    view.content, view.record_count, view._offsets = (  # pyright: ignore[reportPrivateUsage]
                        content or 0, rows, offsets)
                    if not keep(view):
                        continue
                    r = read_entry(buf, start)[0]
                else:
                    r, p = read_entry(buf, p)
                df = r["data_file"]
                status = r["status"]
                snap = r.get("snapshot_id")
                seq = r.get("sequence_number")
                fseq = r.get("file_sequence_number")
                if snap is None:
                    snap = inherited_snapshot_id
                if seq is None and (status == ADDED or inherit_all):
                    seq = inherited_sequence_number
                if fseq is None and (status == ADDED or inherit_all):
                    fseq = inherited_sequence_number
                prec = df.get("partition") or {}
                part = tuple([prec.get(k) for k in keys]) if simple else convert(prec)
                f = new(ManifestDataFile)
                f.__dict__ = {
                    "file_path": df["file_path"], "file_format": df["file_format"], "partition": part,
                    "record_count": df["record_count"], "file_size_in_bytes": df["file_size_in_bytes"],
                    "content": df.get("content", 0) or 0,
                    "key_metadata": df.get("key_metadata"), "split_offsets": df.get("split_offsets"),
                    "equality_ids": df.get("equality_ids"), "sort_order_id": df.get("sort_order_id"),
                    "spec_id": spec_id, "referenced_data_file": df.get("referenced_data_file"),
                    "first_row_id": df.get("first_row_id"), "content_offset": df.get("content_offset"),
                    "content_size_in_bytes": df.get("content_size_in_bytes"),
                    "_lazy": (buf, df["@"], dec),
                }
                append(ManifestEntry(status, snap, seq, fseq, f))
            if p != len(buf):
                raise ValueError("block length does not match its records")
    except Exception as e:
        raise CorruptMetadataError(path, f"not a readable Avro manifest ({type(e).__name__}: {e})") from e
    return out, n


