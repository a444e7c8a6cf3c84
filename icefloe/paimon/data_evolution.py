# pyright: strict
"""Data Evolution tables (``data-evolution.enabled``, which needs ``row-tracking.enabled``): an
append table whose data files may hold only some of its columns, matched to the rows' other
columns by row id.

As Paimon 1.4 lays such a table out and reads it:

- *Row-id ranges.* Every data file has a ``_FIRST_ROW_ID``; its rows are the ids ``_FIRST_ROW_ID``
  .. ``_FIRST_ROW_ID + _ROW_COUNT - 1``, in file order. A file written with some of the table's
  columns names them in ``_WRITE_COLS`` (null: every column of the schema ``_SCHEMA_ID`` names).
- *A read merges the files of one range column by column.* Files whose ranges overlap form one
  group, and their ranges must be the same. In a group the files are taken newest first
  (``_MAX_SEQUENCE_NUMBER`` descending); each column comes from the first file that holds it (by
  field id, in the file's schema limited to its write columns), row by row in position order; a
  column no file holds is null. A row's ``_ROW_ID`` is the first row id + its position, its
  ``_SEQUENCE_NUMBER`` the newest file's. Files are never skipped one by one by their statistics:
  only whole partitions are pruned.
- *An update of some columns* (Spark's ``MERGE INTO ... WHEN MATCHED THEN UPDATE SET``) writes,
  for each range it touches, one file of the updated columns only, with a value for every row of the
  range (the new one where the row matched, the current one elsewhere), the range's first row id, and
  those columns as its write columns (null when they are all the table's columns, in order). It is
  an APPEND file numbered with the new snapshot's id; no file is removed, and the newer file wins.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from icefloe.core.io import FileIO
from icefloe.errors import CorruptDataFileError, CorruptMetadataError, IcefloeError, NotSupportedError
from icefloe.paimon import manifest as mf
from icefloe.paimon import row_tracking
from icefloe.paimon import types as pt
from icefloe.paimon.arrow_read import read_data_file
from icefloe.paimon.data_file import DataFileMeta, DataFileNamer, local_now_millis
from icefloe.paimon.file_index import index_options
from icefloe.paimon.schema import TableSchema, evolve_arrow
from icefloe.paimon.stats import stats_from_arrow, value_stats
from icefloe.paimon.types import DataField
from icefloe.paimon.writer import align_arrow, put_data_file, write_data_bytes

ENABLED = row_tracking.EVOLUTION
enabled = row_tracking.evolution_enabled


def row_range(f: DataFileMeta) -> tuple[int, int]:
    """The first and last row id of a data file of a data-evolution table."""
    if f.first_row_id is None:
        raise CorruptMetadataError(f.file_name, f"a data file of a data-evolution table ({ENABLED}) has no "
                                   "_FIRST_ROW_ID, so its rows cannot be matched to their other columns")
    return f.first_row_id, f.first_row_id + f.row_count - 1


def groups(entries: Sequence[mf.ManifestEntry]) -> list[list[mf.ManifestEntry]]:
    """The planned files grouped by row-id range (files whose ranges overlap), in row-id order, each
    group newest file first; files of one group must cover the same range."""
    ordered = sorted((e for e in entries if e.file.row_count > 0), key=lambda e: row_range(e.file))
    out: list[list[mf.ManifestEntry]] = []
    end = -1
    for e in ordered:
        first, last = row_range(e.file)
        if out and first <= end:
            out[-1].append(e)
            end = max(end, last)
        else:
            out.append([e])
            end = last
    for group in out:
        ranges = sorted({row_range(e.file) for e in group})
        if len(ranges) > 1:
            names = ", ".join(e.file.file_name for e in group)
            raise CorruptMetadataError(names, f"these data files of a data-evolution table overlap in row ids but "
                                       f"cover different ranges {ranges}; a read merges only files of one range")
        group.sort(key=lambda e: -e.file.max_sequence_number)
    return out


def file_fields(schema_fields: Sequence[DataField], write_cols: Optional[Sequence[str]],
                file_name: str = "") -> list[DataField]:
    """The fields a data file holds: those of the schema it was written with, limited to its write
    columns (which may name ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` too)."""
    if write_cols is None:
        return list(schema_fields)
    by_name = {f.name: f for f in [*schema_fields, *row_tracking.FIELDS]}
    out: list[DataField] = []
    for name in write_cols:
        f = by_name.get(name)
        if f is None:
            raise CorruptMetadataError(file_name, f"write column {name!r} is not a column of the schema the file "
                                       f"was written with ({', '.join(x.name for x in schema_fields)})")
        out.append(f)
    return out


@dataclass(frozen=True)
class GroupFile:
    """One file of a row-id range, as a read task needs it (picklable): its metadata (path set) and
    the fields it holds."""
    meta: DataFileMeta
    fields: tuple[DataField, ...]


def group_files(group: Sequence[mf.ManifestEntry], schema_fields: Callable[[int], Sequence[DataField]]
                ) -> list[GroupFile]:
    """A group's files with their fields; ``schema_fields(id)`` gives the fields of a schema."""
    return [GroupFile(e.file, tuple(file_fields(schema_fields(e.file.schema_id), e.file.write_cols, e.file.file_name)))
            for e in group]


def read_group(io: FileIO, files: Sequence[GroupFile], read_fields: Sequence[DataField],
               tracked: bool = False) -> Any:
    """The rows of one row-id range (``files`` newest first) as a pyarrow Table of ``read_fields``
    (then ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` with ``tracked``), each column from the newest file
    holding it (see the module doc)."""
    import pyarrow as pa

    read_fields = list(read_fields)
    target = pt.to_arrow_schema(read_fields, with_ids=False)
    first, last = row_range(files[0].meta)
    n = last - first + 1
    taken: dict[int, list[int]] = {}
    for j, rf in enumerate(read_fields):
        for i, f in enumerate(files):
            if any(ff.id == rf.id for ff in f.fields):
                taken.setdefault(i, []).append(j)
                break
    cols: list[Any] = [None] * len(read_fields)
    for i, js in taken.items():
        f = files[i]
        wanted = [read_fields[j] for j in js]
        ids = {rf.id for rf in wanted}
        data = read_data_file(f.meta.path, io, columns=[ff.name for ff in f.fields if ff.id in ids])
        if data.num_rows != n:
            raise CorruptDataFileError(f.meta.path, f"has {data.num_rows} rows where its row ids {first}..{last} "
                                       f"call for {n}")
        evolved = evolve_arrow(data, f.fields, wanted)
        for k, j in enumerate(js):
            cols[j] = evolved.column(k)
    for j, rf in enumerate(read_fields):
        if cols[j] is None:
            if not rf.nullable:
                raise CorruptMetadataError(files[0].meta.file_name, f"no data file of row ids {first}..{last} holds "
                                           f"column {rf.name!r}, which is NOT NULL")
            cols[j] = pa.nulls(n, target.field(j).type)
    out: Any = pa.Table.from_arrays(cols, schema=target)
    if tracked:
        newest = files[0]
        own = [ff for ff in newest.fields if ff.id in {x.id for x in row_tracking.FIELDS}]
        raw = read_data_file(newest.meta.path, io, columns=[ff.name for ff in own]) if own else pa.table({"_": pa.nulls(n)})
        both = evolve_arrow(raw, own, list(row_tracking.FIELDS))
        row_id, seq = row_tracking.tracked_columns(both, newest.meta)
        out = out.append_column(pa.field(row_tracking.ROW_ID, pa.int64(), False), row_id) \
            .append_column(pa.field(row_tracking.SEQUENCE_NUMBER, pa.int64(), False), seq)
    return out


# --------------------------------------------------------------------------- writing some columns
def updated_write_cols(schema: TableSchema, columns: Sequence[str]) -> Optional[tuple[str, ...]]:
    """The write columns of a file of ``columns`` (in the table's order): None when they are every
    column of the table, as Paimon records a file of all of them."""
    names = tuple(f.name for f in schema.fields if f.name in set(columns))
    return None if names == tuple(f.name for f in schema.fields) else names


def check_column_update(schema: TableSchema, columns: Sequence[str], table: str, operation: str) -> None:
    """What an update of ``columns`` in place cannot do on a data-evolution table, refused before
    anything is written."""
    if not columns:
        return
    parts = [c for c in columns if c in set(schema.partition_keys)]
    if parts:
        raise NotSupportedError(f"{operation} of partition column {parts[0]!r}", table, "paimon",
                                "a data-evolution table's update writes the new values beside the rows, in their "
                                "partition; a new partition value would move the row (delete and insert it instead)")
    if not index_options(schema.options).empty:
        raise NotSupportedError(operation, table, "paimon",
                                "the table asks for file indexes (file-index.*), and icefloe builds them only for "
                                "files of every column, not for a data-evolution file of some columns")


def write_columns_file(io: FileIO, schema: TableSchema, data: Any, columns: Sequence[str], directory: str,
                       namer: DataFileNamer, written: list[str], first_row_id: int, table: str = "table"
                       ) -> DataFileMeta:
    """One data file of ``columns`` (``data``: their values for every row of the range that starts at
    ``first_row_id``, in row-id order), in ``directory`` (its path appended to ``written``); its
    metadata with the range's first row id and the columns as write columns, sequence numbers from 0."""
    co = schema.core_options
    write_cols = updated_write_cols(schema, columns)
    fields = [f for f in schema.fields if f.name in set(columns)]
    chunk = align_arrow(data.select([f.name for f in fields]), fields, table)
    name = namer.next()
    path = f"{directory}/{name}"
    raw = write_data_bytes(chunk, co.file_format, co.file_compression)
    put_data_file(io, path, raw, written)
    stats, stats_cols = value_stats(fields, stats_from_arrow(chunk, fields), co.stats_mode, co.stats_truncate_length)
    if stats_cols is None and write_cols is not None:
        stats_cols = write_cols      # the statistics are of these columns, named as Paimon reads them
    return DataFileMeta(
        file_name=name, file_size=len(raw), row_count=chunk.num_rows, value_stats=stats,
        min_sequence_number=0, max_sequence_number=chunk.num_rows - 1, schema_id=schema.id,
        creation_time=local_now_millis(), value_stats_cols=stats_cols, file_path=path,
        first_row_id=first_row_id, write_cols=write_cols,
    )


def check_range_rows(row_ids: Sequence[int], first_row_id: int, row_count: int, table: str) -> None:
    """The rows written for a range are exactly its ids, in order."""
    if list(row_ids) != list(range(first_row_id, first_row_id + row_count)):
        raise IcefloeError(f"an update of table {table}: row ids {first_row_id}..{first_row_id + row_count - 1} "
                           f"got {len(row_ids)} rows for their {row_count}; nothing was committed")


# (partition values, bucket, row count) of each range an update writes, by first row id
Ranges = Mapping[int, tuple[tuple[Any, ...], int, int]]
