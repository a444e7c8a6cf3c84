# pyright: strict
"""A data manifest held as Arrow columns (Iceberg spec, "Manifests"): what a plan judges at scale.

A plan of a large table reads every entry of every manifest it opens, but builds a file's objects
only for the files it keeps. The manifest's Avro is decoded into columns by a compiled decoder
(``core.avro_columns``, numba), in a fraction of the time of the generated pure-Python decoder
(``manifest_codegen``); the columns stay in the process-wide manifest cache, and the scan's filters
are judged over them (``columnar_filter``). The values a file's entry inherits are applied as in
``manifest_avro``: a null snapshot id, and for ADDED entries a null sequence number, take the
manifest list's ("Sequence Number Inheritance"); in format v3 a live data file without a first row
id takes the manifest's, moved on by the rows of the files before it ("First Row ID Inheritance").

A manifest whose columns this module cannot give exactly (no numba, a partition type outside the
whole numbers, strings and booleans, a delete file in it, or a file the decoder refuses) is not held
here: ``ManifestColumns.of`` returns None and the plan reads that manifest's entries as before,
whose decoder names a corrupt file (``CorruptMetadataError``).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Optional, Union, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from icefloe.core import avro_columns
from icefloe.core.arrow import arrow_of, numpy_of
from icefloe.core.avro_columns import available as available
from icefloe.core.lazy import Deferred
from icefloe.core.types import StructType
from icefloe.iceberg.avro_schemas import avro_name
from icefloe.iceberg.manifest import ADDED, DATA, DELETED, METRIC_FIELDS, DataFile
from icefloe.iceberg.manifest_avro import container_parts

Mask = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]

# partition field types whose Avro value is the internal value (date: days, time and timestamps:
# microseconds), and the Arrow types the decoder gives them (``core.avro_decode``)
_PARTITION_ARROW = {
    "int": ("int32",), "long": ("int64",), "string": ("string", "large_string"), "boolean": ("bool",),
    "date": ("date32", "int32"), "time": ("time64", "int64"),
    "timestamp": ("timestamp", "int64"), "timestamptz": ("timestamp", "int64"),
}
# the scalar fields of ``data_file`` a plan's files are built from (the metrics maps stay columns)
_SCALARS = ("file_path", "file_format", "record_count", "file_size_in_bytes", "key_metadata", "split_offsets",
            "equality_ids", "sort_order_id", "referenced_data_file", "first_row_id", "content_offset",
            "content_size_in_bytes")
# the fields of ``data_file`` a manifest's columns do not hold: its partition is held as indexes into
# its distinct tuples, and its content is DATA (a manifest listing other files is not held as columns)
_NOT_HELD = ("content", "partition")


# A manifest of more entries than this is decoded in parts of about this many entries, several at
# once (the decoder runs one file on one thread, outside the interpreter's lock; a manifest merged up
# to its 8 MB target holds ~600,000 entries, where a whole decode was most of a cold plan). Tests lower it.
PART_ENTRIES = 50_000
# fields of a manifest entry the columns do not hold: read past, not decoded into columns
_SKIPPED = ("snapshot_id", "file_sequence_number")
# ... and, for a plan that judges no column metrics, the metrics maps (decoded when first read)
WITHOUT_METRICS = _SKIPPED + tuple(f"data_file.{name}" for name in METRIC_FIELDS)


def decode(data: bytes, part_entries: Optional[int] = None, drop: tuple[str, ...] = _SKIPPED,
           split: bool = True) -> Optional[pa.Table]:
    """The records of an Avro manifest as an Arrow table, one row per entry in file order; None
    where the decoder is not installed or cannot read the file (the caller's decoder then judges it).
    The entries' ``snapshot_id`` and ``file_sequence_number``, which ``ManifestColumns`` does not
    hold, are read past (``_SKIPPED``).
    A file of more than ``part_entries`` records (default ``PART_ENTRIES``) is cut at its Avro
    blocks into files of about that many, each the original header and a run of its blocks
    (``manifest_avro.container_parts``), decoded concurrently (``core.avro_columns``) and joined in order.
    Not ``split``: decoded whole in this thread, for a caller that decodes other manifests beside it
    on the other cores (two manifests of bench.scale's 1M-file table each cut into parts on a 2-core
    machine took a third more CPU, and longer, than the two decoded whole side by side)."""
    if not available():
        return None
    if not split:
        return avro_columns.decode(data, drop)
    try:
        parts = container_parts(data, part_entries or PART_ENTRIES)
    except (ValueError, IndexError):
        parts = [data]       # a damaged frame: the whole file, refused below or by the entries decoder
    if len(parts) <= 1:
        return avro_columns.decode(data, drop)
    def columns(part: bytes) -> Optional[pa.Table]:
        return avro_columns.decode(part, drop)

    workers = min(len(parts), max(2, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        tables = list(pool.map(columns, parts))
    if any(t is None for t in tables):
        return None
    got = [t for t in tables if t is not None]
    try:
        return pa.concat_tables(got)
    except pa.ArrowInvalid:       # parts typed apart (no value to infer from): the whole file at once
        return avro_columns.decode(data, drop)


class PartitionPass:
    """A data manifest's entries decoded for their status and partition only (every other field
    read past): what a plan with a partition filter judges first, to decode in full only the
    Avro blocks holding entries it keeps (``blocks_keeping``; ``decode_blocks``)."""

    __slots__ = ("status", "partitions", "partition_index", "block_counts", "n")

    def __init__(self, status: Ints, partitions: list[tuple[Any, ...]], partition_index: Ints, block_counts: Ints):
        self.status = status.astype(np.int8)
        self.partitions = partitions
        self.partition_index = partition_index.astype(np.int32)
        self.block_counts = block_counts
        self.n = len(self.status)

    @property
    def nbytes(self) -> int:
        return int(self.status.nbytes + self.partition_index.nbytes + self.block_counts.nbytes) + 64 * len(self.partitions)

    @classmethod
    def of(cls, data: bytes, partition_type: StructType) -> Optional["PartitionPass"]:
        """The pass over manifest ``data``; None where its columns could not be held exactly (as
        ``ManifestColumns.of``: a delete file in it, a partition type outside those held, a file
        the decoder refuses), or it holds no entry."""
        fields = avro_columns.record_fields(data, "data_file")
        counts = avro_columns.block_counts(data)
        if fields is None or counts is None or not {"file_path", "partition"} <= set(fields):
            return None
        drop = _SKIPPED + ("sequence_number",) + tuple(
            f"data_file.{f}" for f in fields if f not in ("partition", "content"))
        table = decode(data, drop=drop)
        if table is None or table.num_rows != int(counts.sum()):
            return None
        found = _data_files(table)
        if found is None:
            return None
        chunks, _typ, names = found
        parts = _partitions(chunks, names, partition_type)
        if parts is None:
            return None
        return cls(_numpy_ints(table.column("status"), 0), parts[0], parts[1], counts)

    def blocks_keeping(self, keep: Mask) -> Ints:
        """The blocks (indexes, ascending) holding an entry ``keep`` (over every entry) keeps."""
        block_of = np.repeat(np.arange(len(self.block_counts), dtype=np.int64), self.block_counts)
        return np.unique(block_of[keep])


def _data_files(table: pa.Table) -> Optional[tuple[list[pa.StructArray], pa.StructType, set[str]]]:
    """The non-empty chunks of a decoded data manifest's ``data_file`` column, its type and its
    field names; None where the table holds no entry, no ``status`` or no record ``data_file``, or
    lists a file that is not a data file (a delete file in a data manifest: read entry by entry)."""
    if table.num_rows == 0 or "status" not in table.column_names or "data_file" not in table.column_names:
        return None
    files = table.column("data_file")
    if not pa.types.is_struct(files.type):
        return None
    chunks: list[pa.StructArray] = [c for c in files.chunks if len(c)]
    typ: pa.StructType = files.type
    names = {typ.field(i).name for i in range(typ.num_fields)}
    if "content" in names:
        content = pa.chunked_array([c.field("content") for c in chunks])
        if content.null_count or int(np.max(_numpy_ints(content, 0))) != DATA:
            return None
    return chunks, typ, names


def decode_blocks(data: bytes, blocks: Ints) -> Optional[pa.Table]:
    """``decode``'s table of the entries of the manifest's blocks ``blocks`` only (indexes, in order)."""
    return avro_columns.decode(data, _SKIPPED, blocks)


def _numpy_ints(arr: Union[pa.Array, pa.ChunkedArray], default: int) -> Ints:
    """An integer column as int64, nulls as ``default``."""
    if arr.null_count:
        arr = arr.fill_null(default)
    return np.asarray(numpy_of(arr), dtype=np.int64)      # (a view where it is int64 already)


def _valid(arr: Union[pa.Array, pa.ChunkedArray]) -> Mask:
    """Where a column holds a value."""
    return numpy_of(arr.is_valid()) if arr.null_count else np.ones(len(arr), bool)


class ManifestColumns:
    """The entries of one data manifest as columns, with what they inherit applied. Only what a
    plan and its files read is held (this is what the manifest cache keeps): the entries' status,
    sequence numbers, record counts and partitions as numpy arrays, and ``data_file``'s other
    fields as Arrow columns, in the chunks they were decoded into (never copied into one: a
    manifest of 600,000 entries is ~200 MB of columns); a plan's files take their own values from
    them (``KeptRows``)."""

    def __init__(self, chunks: list[pa.StructArray], status: Ints, sequence_numbers: Optional[tuple[Ints, Mask]],
                 partitions: list[tuple[Any, ...]], partition_index: Ints, spec_id: int,
                 inherited_snapshot_id: Optional[int], inherited_sequence_number: int, first_row_ids: Optional[Ints],
                 metrics_source: Optional[bytes] = None):
        self.chunks = chunks
        self.type: pa.StructType = chunks[0].type
        lengths = [len(c) for c in chunks]
        self.starts: Ints = np.cumsum([0] + lengths, dtype=np.int64)     # each chunk's first entry, and n
        self.n = int(self.starts[-1])
        self.status = status.astype(np.int8)
        self.live: Mask = self.status != DELETED
        self._sequence_numbers = sequence_numbers    # each entry's own, and where it has one; None: none has
        record_count = self.field("record_count")
        self.record_count = _numpy_ints(record_count, 1)
        self.record_count_known: Mask = _valid(record_count)
        self.partitions = partitions            # the distinct partition tuples (internal values)
        self.partition_index = partition_index.astype(np.int32)  # each entry's, an index into ``partitions``
        self.spec_id = spec_id
        self.inherited_snapshot_id = inherited_snapshot_id
        self.inherited_sequence_number = inherited_sequence_number
        self.first_row_ids = first_row_ids
        self._values: dict[tuple[str, int], tuple[Ints, pa.Array]] = {}
        self._lock = threading.Lock()
        # the manifest, where ``chunks`` were decoded without its metrics maps (``WITHOUT_METRICS``):
        # they are decoded from it when first read (``_later_maps``), and it is let go then
        self._metrics_source = metrics_source
        self._later: Optional[dict[str, list[pa.Array]]] = None

    def __len__(self) -> int:
        return self.n

    def has_field(self, name: str) -> bool:
        return self.type.get_field_index(name) >= 0

    def field(self, name: str) -> pa.ChunkedArray:
        """Field ``name`` of ``data_file`` of every entry."""
        return pa.chunked_array([c.field(name) for c in self.chunks], self.type.field(name).type)

    @classmethod
    def of(cls, table: pa.Table, partition_type: StructType, spec_id: int, inherited_snapshot_id: Optional[int],
           inherited_sequence_number: int, first_row_id: Optional[int],
           metrics_source: Optional[bytes] = None) -> Optional["ManifestColumns"]:
        """The columns of a decoded data manifest (``decode``); None where they cannot give its
        entries exactly (then its entries are read as before). ``metrics_source``: the manifest
        ``table`` was decoded from without its metrics maps (``WITHOUT_METRICS``), to decode them
        from when first read."""
        names = set(table.column_names)
        found = _data_files(table)
        if found is None:
            return None
        chunks, typ, file_names = found
        if not {"file_path", "file_format", "record_count", "file_size_in_bytes"} <= file_names:
            return None
        parts = _partitions(chunks, file_names, partition_type)
        if parts is None:
            return None
        status = _numpy_ints(table.column("status"), 0)
        seq: Optional[tuple[Ints, Mask]] = None
        if "sequence_number" in names:
            own = table.column("sequence_number")
            if own.null_count < len(own):
                seq = (_numpy_ints(own, 0), _valid(own))
        held = [i for i in range(typ.num_fields) if typ.field(i).name not in _NOT_HELD]
        chunks = [pa.StructArray.from_arrays([c.field(i) for i in held], fields=[typ.field(i) for i in held])
                  for c in chunks]
        out = cls(chunks, status, seq, parts[0], parts[1], spec_id, inherited_snapshot_id, inherited_sequence_number,
                  None, metrics_source)
        if first_row_id is not None:
            own_ids = out.field("first_row_id") if "first_row_id" in file_names else pa.nulls(out.n, pa.int64())
            missing = out.live & ~_valid(own_ids)
            rows = np.where(missing, out.record_count, 0)
            ids: Ints = np.array(_numpy_ints(own_ids, 0), dtype=np.int64)
            ids[missing] = (first_row_id + np.cumsum(rows) - rows)[missing]
            out.first_row_ids = ids
        return out

    # ------------------------------------------------------------------ column metrics
    def _map(self, name: str) -> Optional[list[pa.MapArray]]:
        """Metrics map ``name`` of each chunk; None where the manifest does not hold it as a map."""
        if self._metrics_source is not None or self._later is not None:
            got = self._later_maps().get(name)
            return None if got is None or not pa.types.is_map(got[0].type) else got
        if not self.has_field(name) or not pa.types.is_map(self.type.field(name).type):
            return None
        return [c.field(name) for c in self.chunks]

    def _later_maps(self) -> dict[str, list[pa.Array]]:
        """The metrics maps of a manifest decoded without them, decoded now (once), cut into
        ``chunks``' runs of entries."""
        with self._lock:
            if self._later is not None:
                return self._later
            data = cast(bytes, self._metrics_source)
            fields = avro_columns.record_fields(data, "data_file") or []
            drop = _SKIPPED + ("status", "sequence_number") + tuple(
                f"data_file.{f}" for f in fields if f not in METRIC_FIELDS)
            table = decode(data, drop=drop)
            if table is None or table.num_rows != self.n or "data_file" not in table.column_names:
                raise ValueError("a manifest's column metrics do not decode as its other fields did")
            files = table.column("data_file")
            maps: dict[str, list[pa.Array]] = {}
            typ: pa.StructType = files.type
            for i in range(typ.num_fields):
                whole = pa.concat_arrays([c.field(i) for c in files.chunks])
                maps[typ.field(i).name] = [whole.slice(a, b - a) for a, b in
                                           zip(self.starts[:-1].tolist(), self.starts[1:].tolist())]
            self._later, self._metrics_source = maps, None
            return maps

    def metric(self, kind: int, field_id: int) -> tuple[Ints, pa.Array]:
        """Metrics map ``kind`` (an index into ``METRIC_FIELDS``) at ``field_id``: the entries that
        hold a non-null value for it, and those values (in the map's value type)."""
        name = METRIC_FIELDS[kind]
        key = (name, field_id)
        hit = self._values.get(key)
        if hit is not None:
            return hit
        maps = self._map(name)
        if maps is None:
            out: tuple[Ints, pa.Array] = (np.zeros(0, np.int64), pa.nulls(0))
        else:
            rows: list[Ints] = []
            values: list[pa.Array] = []
            for first, col in zip(self.starts.tolist(), maps):
                offsets = numpy_of(col.offsets).astype(np.int64)
                start, end = int(offsets[0]), int(offsets[-1])
                sizes = np.diff(offsets)
                lengths = np.where(_valid(col), sizes, 0)
                parents = np.repeat(np.arange(first, first + len(col), dtype=np.int64), sizes)
                keys = numpy_of(col.keys.slice(start, end - start))
                items = col.items.slice(start, end - start)
                chosen = (keys == field_id) & np.repeat(lengths > 0, sizes)
                if items.null_count:
                    chosen &= _valid(items)
                rows.append(parents[chosen])
                values.append(items.filter(arrow_of(chosen)))
            out = (np.concatenate(rows), pa.concat_arrays(values))
        with self._lock:
            self._values[key] = out
        return out

    def metric_values(self, kind: int, field_id: int) -> list[Any]:
        """``metric`` as one Python value per entry (None where the entry holds none)."""
        rows, values = self.metric(kind, field_id)
        out: list[Any] = [None] * self.n
        for r, v in zip(rows.tolist(), values.to_pylist()):
            out[r] = v
        return out

    def metrics_row(self, row: int) -> dict[str, Optional[dict[int, Any]]]:
        """The six metrics maps of entry ``row``, as ``DataFile`` holds them."""
        chunk = int(np.searchsorted(self.starts, row, side="right")) - 1
        at = row - int(self.starts[chunk])
        out: dict[str, Optional[dict[int, Any]]] = {}
        for name in METRIC_FIELDS:
            maps = self._map(name)
            pairs: Any = None if maps is None else maps[chunk][at].as_py()
            out[name] = None if pairs is None else dict(pairs)
        return out

    # ------------------------------------------------------------------ kept files
    def kept(self, rows: Ints) -> "KeptRows":
        """The entries ``rows`` a plan keeps, whose files read their fields from here."""
        return KeptRows(self, rows)

    def data_files(self, rows: Ints) -> list[DataFile]:
        """The data files of entries ``rows`` (see ``KeptRows.file``)."""
        kept = self.kept(rows)
        return [kept.file(i) for i in range(len(rows))]

    def sequence_numbers(self, rows: Ints) -> list[int]:
        """The data sequence number of entries ``rows``, inherited where the spec says so (0 where
        an entry has none: an EXISTING entry of a manifest written before sequence numbers)."""
        inherited = self.inherited_sequence_number
        status = self.status[rows]
        inherit: Mask = np.ones(len(rows), bool) if inherited == 0 else status == ADDED
        if self._sequence_numbers is None:
            return np.where(inherit, inherited, 0).tolist()
        own, has = self._sequence_numbers
        return np.where(has[rows], own[rows], np.where(inherit, inherited, 0)).tolist()

    def scalars(self, name: str, rows: Ints) -> list[Any]:
        """Field ``name`` of ``data_file`` (one of ``_SCALARS``) of entries ``rows``, as Python values."""
        if name == "first_row_id" and self.first_row_ids is not None:
            return self.first_row_ids[rows].tolist()
        if not self.has_field(name):
            return [None] * len(rows)
        col = self.field(name)
        if col.null_count == len(col):
            return [None] * len(rows)
        if len(rows) == len(col):
            return col.to_pylist()
        return col.take(arrow_of(np.asarray(rows, np.int64))).to_pylist()


class KeptRows:
    """Entries of a ``ManifestColumns`` that a plan keeps: its files each hold this and their
    index here, and read their fields as the kept rows' values, made on first use for all of
    them at once and held only as long as the files are (never the whole manifest's)."""

    __slots__ = ("columns", "rows", "_values", "_partitions")

    def __init__(self, columns: ManifestColumns, rows: Ints) -> None:
        self.columns = columns
        self.rows = rows
        self._values: dict[str, list[Any]] = {}
        self._partitions: Optional[list[int]] = None

    def __len__(self) -> int:
        return len(self.rows)

    def scalar(self, name: str) -> list[Any]:
        hit = self._values.get(name)
        if hit is None:
            hit = self._values[name] = self.columns.scalars(name, self.rows)
        return hit

    def file(self, i: int) -> "ColumnarDataFile":
        """The data file of kept row ``i``: it holds its partition and spec id, and reads its other
        fields from the columns when first used (a plan of a million files builds a million small
        objects, not a million decoded entries)."""
        index = self._partitions
        if index is None:
            index = self._partitions = self.columns.partition_index[self.rows].tolist()
        f = object.__new__(ColumnarDataFile)
        f.__dict__ = {"partition": self.columns.partitions[index[i]], "spec_id": self.columns.spec_id,
                      "_columns": (self, i)}
        return f

    def metrics_row(self, i: int) -> dict[str, Optional[dict[int, Any]]]:
        return self.columns.metrics_row(int(self.rows[i]))


def _partitions(chunks: list[pa.StructArray], file_names: set[str],
                partition_type: StructType) -> Optional[tuple[list[tuple[Any, ...]], Ints]]:
    """The distinct partition tuples of a manifest's files and each file's index into them; None
    for a partition type whose columns are not exactly its internal values."""
    n = sum(len(c) for c in chunks)
    if not partition_type.fields:
        return [()], np.zeros(n, np.int64)
    if "partition" not in file_names:
        return None
    records = [c.field("partition") for c in chunks]
    if not all(isinstance(r, pa.StructArray) and not r.null_count for r in records):
        return None
    rtype: pa.StructType = records[0].type
    written = {rtype.field(i).name for i in range(rtype.num_fields)}
    codes: list[Ints] = []
    dictionaries: list[list[Any]] = []
    for f in partition_type.fields:
        accepted = _PARTITION_ARROW.get(str(f.field_type))
        if accepted is None:
            return None
        name = avro_name(f.name) if avro_name(f.name) in written else f.name
        if name not in written:
            codes.append(np.zeros(n, np.int64))
            dictionaries.append([None])
            continue
        col: pa.Array = pa.concat_arrays([r.field(name) for r in records])
        arrow_type = col.type
        kind = str(arrow_type).split("[")[0]
        if kind not in accepted:
            return None
        if pa.types.is_date32(arrow_type):
            col = col.cast(pa.int32())
        elif pa.types.is_timestamp(arrow_type) or pa.types.is_time64(arrow_type):
            if getattr(arrow_type, "unit", "us") != "us":
                return None
            col = col.view(pa.int64())
        encoded: Any = col.dictionary_encode(null_encoding="encode")
        codes.append(numpy_of(encoded.indices).astype(np.int64))
        dictionaries.append(encoded.dictionary.to_pylist())
    if len(codes) == 1:
        return [(v,) for v in dictionaries[0]], codes[0]
    stacked = np.stack(codes, axis=1)
    distinct, index = np.unique(stacked, axis=0, return_inverse=True)
    tuples = [tuple(d[c] for d, c in zip(dictionaries, row)) for row in distinct.tolist()]
    return tuples, np.ravel(np.asarray(index, dtype=np.int64))


def _column_metrics(d: dict[str, Any], name: str) -> Any:
    """A metrics map of a ``ColumnarDataFile``: the six maps of its entry are read from the
    manifest's columns together (a map assigned since is kept)."""
    kept, i = d["_columns"]
    for k, v in kept.metrics_row(i).items():
        d.setdefault(k, v)
    return d[name]


def _column_field(d: dict[str, Any], name: str) -> Any:
    """A scalar field of a ``ColumnarDataFile``, read from the manifest's columns."""
    kept, i = d["_columns"]
    return kept.scalar(name)[i]


_FIELD_NAMES = tuple(DataFile.__dataclass_fields__)


class ColumnarDataFile(DataFile):
    """A ``DataFile`` a plan built from a manifest's columns: its fields other than the partition
    and spec id stay in the columns until first read (``content`` is DATA: only data manifests
    are held as columns). Equal to the plain ``DataFile`` with the same values; copies and pickles
    are plain."""

    # Read through DataFile's declarations, so the checker sees each field as its value type;
    # at run time a Deferred in the class makes the value on first read.
    if not TYPE_CHECKING:
        column_sizes = Deferred(_column_metrics)
        value_counts = Deferred(_column_metrics)
        null_value_counts = Deferred(_column_metrics)
        nan_value_counts = Deferred(_column_metrics)
        lower_bounds = Deferred(_column_metrics)
        upper_bounds = Deferred(_column_metrics)
        file_path = Deferred(_column_field)
        file_format = Deferred(_column_field)
        record_count = Deferred(_column_field)
        file_size_in_bytes = Deferred(_column_field)
        key_metadata = Deferred(_column_field)
        split_offsets = Deferred(_column_field)
        equality_ids = Deferred(_column_field)
        sort_order_id = Deferred(_column_field)
        referenced_data_file = Deferred(_column_field)
        first_row_id = Deferred(_column_field)
        content_offset = Deferred(_column_field)
        content_size_in_bytes = Deferred(_column_field)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DataFile):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _FIELD_NAMES)

    __hash__ = None  # pyright: ignore[reportAssignmentType]  (as DataFile's: mutable, compared by value)

    def __reduce__(self) -> tuple[type[DataFile], tuple[Any, ...]]:
        return DataFile, tuple(getattr(self, n) for n in _FIELD_NAMES)


__all__ = ["ColumnarDataFile", "KeptRows", "ManifestColumns", "PartitionPass", "available", "decode", "decode_blocks"]
