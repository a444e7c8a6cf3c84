# pyright: strict
"""Data files and their metadata (``DataFileMeta``), as recorded in manifest entries.

A data file of an append table carries: its name and size, the row count, the
sequence-number range of its rows, the schema id it was written with, its LSM
level (always 0 here), the creation time, and ``SimpleStats`` of the value
columns (min row, max row, null counts). Append tables have no keys, so the
key fields (``_MIN_KEY``, ``_MAX_KEY``, ``_KEY_STATS``) hold the empty row.

File names follow Paimon: ``data-<uuid>-<n>.parquet``, ``n`` counting the files
one writer (one uuid) produced.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import Any, Optional, Sequence

from icefloe.core.io import strip_scheme
from icefloe.core.types import IcebergType as DataType
from icefloe.paimon.binary_row import EMPTY_ROW, BinaryRow, decode_row

FILE_SOURCE_APPEND = 0
FILE_SOURCE_COMPACT = 1


@dataclass(frozen=True)
class SimpleStats:
    """Per-column min and max values (as BinaryRows) and null counts."""

    min_values: BinaryRow
    max_values: BinaryRow
    null_counts: Optional[tuple[Optional[int], ...]]

    def decode(self, types: Sequence[DataType]
               ) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[Optional[int], ...]]:
        """(mins, maxs, null counts) as python values for the given field types."""
        counts: tuple[Optional[int], ...] = tuple(self.null_counts) if self.null_counts is not None else (None,) * len(types)
        return decode_row(self.min_values, types), decode_row(self.max_values, types), counts


EMPTY_STATS = SimpleStats(EMPTY_ROW, EMPTY_ROW, ())


def local_now_millis() -> int:
    """Creation time as Paimon records it: the local wall clock read as if it were UTC
    (Java ``Timestamp.fromLocalDateTime(LocalDateTime.now())``)."""
    t = time.time()
    return int((t + time.localtime(t).tm_gmtoff) * 1000)


@dataclass
class DataFileMeta:
    """One data file's metadata (``columnar_file.ColumnarFileMeta``: the same, its fields read from
    a manifest's columns on first use)."""

    file_name: str
    file_size: int
    row_count: int
    min_key: BinaryRow = EMPTY_ROW
    max_key: BinaryRow = EMPTY_ROW
    key_stats: SimpleStats = EMPTY_STATS
    value_stats: SimpleStats = EMPTY_STATS
    min_sequence_number: int = 0
    max_sequence_number: int = 0
    schema_id: int = 0
    level: int = 0
    extra_files: tuple[str, ...] = ()
    creation_time: Optional[int] = None   # epoch millis of the local wall clock
    delete_row_count: Optional[int] = 0
    embedded_index: Optional[bytes] = None
    file_source: Optional[int] = FILE_SOURCE_APPEND
    value_stats_cols: Optional[tuple[str, ...]] = None  # None: stats cover every column of the schema
    external_path: Optional[str] = None
    first_row_id: Optional[int] = None
    write_cols: Optional[tuple[str, ...]] = None
    write_cols_sequences: Optional[tuple[int, ...]] = None
    # not persisted: where the file is, filled in by scan planning and writers
    file_path: Optional[str] = field(default=None, compare=False)

    @property
    def path(self) -> str:
        """Where the file is: planned and written files carry it."""
        if self.file_path is None:
            raise ValueError(f"data file {self.file_name} has no path (not planned or written)")
        return self.file_path

    def with_path(self, path: str) -> "DataFileMeta":
        """The same file with ``file_path`` set (``dataclasses.replace``'s result, without its
        per-field work), a plain ``DataFileMeta``."""
        out = DataFileMeta.__new__(DataFileMeta)
        if type(self) is DataFileMeta:
            out.__dict__.update(self.__dict__)
        else:       # a subclass keeping its values elsewhere (ColumnarFileMeta)
            values: tuple[Any, ...] = _all_fields(self)
            out.__dict__.update({n: v for n, v in zip(FIELD_NAMES, values)})
        out.file_path = path
        return out

    def in_directory(self, directory: str) -> "DataFileMeta":
        """This file as a plan returns it: ``file_path`` set to its external path (without a
        scheme) if it has one, else to ``<directory>/<file_name>``, its bucket's directory. A copy
        (the entries of a manifest read entry by entry are cached and shared);
        ``ColumnarFileMeta``, built afresh for each plan, places itself."""
        if self.external_path:
            return self.with_path(strip_scheme(self.external_path))
        return self.with_path(directory + "/" + self.file_name)

    def with_sequence_numbers(self, start: int) -> "DataFileMeta":
        """The same file with rows numbered ``start .. start + row_count - 1``."""
        return replace(self, min_sequence_number=start, max_sequence_number=start + self.row_count - 1)


FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(DataFileMeta))
_all_fields = attrgetter(*FIELD_NAMES)


class DataFileNamer:
    """``<prefix><uuid>-<n>.<format>``: one uuid per writer, ``n`` counts its files."""

    def __init__(self, prefix: str = "data-", file_format: str = "parquet"):
        self.prefix = prefix
        self.file_format = file_format
        self.uuid = str(uuid.uuid4())
        self.count = 0

    def sibling(self, prefix: str) -> "DataFileNamer":
        """A namer of other files of the same writer (changelog files): same uuid, its own count."""
        other = DataFileNamer(prefix, self.file_format)
        other.uuid = self.uuid
        return other

    def next(self) -> str:
        name = f"{self.prefix}{self.uuid}-{self.count}.{self.file_format}"
        self.count += 1
        return name


@dataclass
class IndexFile:
    """A new index file a writer wrote for its (partition, bucket) (a dynamic-bucket table's HASH index,
    or a file of deletion vectors)."""
    index_type: str
    file_name: str
    file_size: int
    row_count: int
    file_path: Optional[str] = field(default=None, compare=False)
    # deletion vectors: (data file name, offset, size, cardinality) per vector in the file
    dv_ranges: Optional[list[tuple[str, int, int, int]]] = field(default=None, compare=False)


@dataclass
class CommitMessage:
    """What one writer task produced for one (partition, bucket): picklable plain data. It
    lives here, beside the files it lists, so that a Spark task writing files does not import the
    commit."""
    partition: tuple[Any, ...]
    bucket: int
    total_buckets: int
    new_files: list[DataFileMeta] = field(default_factory=list["DataFileMeta"])   # with file_path set
    # dynamic-bucket tables: the bucket's new complete HASH index file, and the snapshot id
    # whose index the bucket assignment read (None: no snapshot yet)
    index_files: list[IndexFile] = field(default_factory=list["IndexFile"])
    index_base: Optional[int] = None
    # the bucket's changelog files (changelog-producer input: the records as written)
    changelog_files: list[DataFileMeta] = field(default_factory=list["DataFileMeta"])
