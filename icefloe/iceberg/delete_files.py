# pyright: strict
"""Delete files (Iceberg spec, "Row-level Deletes"): writing them and applying them with Arrow.

* Position delete files hold ``file_path`` (field id 2147483546) and ``pos``
  (2147483545), sorted by file path then position; a row is deleted when its
  data file and 0-based position are listed. They live in the partition of the
  data files they point at.
* Equality delete files hold some columns of the table (their field ids are the
  file's ``equality_ids``); a row is deleted when it equals a delete row on all
  of them, null equal to null.

Which delete files apply to which data file (sequence numbers, partitions) is
scan planning's business (``icefloe.iceberg.scan``); here a data file's rows
meet the delete files already chosen for it.
"""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Iterable, Optional

from icefloe.core.arrow import dictionary_columns
from icefloe.core.io import FileIO, staged_files
from icefloe.core.parquet import metrics_from_footer
from icefloe.core.types import PRIMITIVES_BY_NAME, NestedField, Schema, to_arrow_schema
from icefloe.errors import CorruptDataFileError
from icefloe.iceberg.arrow_writer import data_file_from_metrics
from icefloe.iceberg.manifest import EQUALITY_DELETES, POSITION_DELETES, DataFile
from icefloe.iceberg.parquet_props import ParquetSettings, rows_per_group
from icefloe.iceberg.puffin import vector_positions
from icefloe.iceberg.partitioning import PartitionSpec

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from numpy.typing import NDArray

# Reserved field ids (spec, "Reserved Field IDs")
FILE_PATH_ID = 2147483546
POS_ID = 2147483545

POSITION_DELETE_SCHEMA = Schema([
    NestedField(FILE_PATH_ID, "file_path", PRIMITIVES_BY_NAME["string"], True),
    NestedField(POS_ID, "pos", PRIMITIVES_BY_NAME["long"], True),
])


def equality_delete_schema(schema: Schema, equality_ids: Iterable[int]) -> Schema:
    """The columns of an equality delete file: the table's fields with those ids, in table order."""
    ids = set(equality_ids)
    return Schema([f for f in schema.fields if f.field_id in ids])


def _delete_path(location: str, spec: PartitionSpec, schema: Schema, partition: tuple[Any, ...], kind: str,
                 write_id: str, n: int) -> str:
    sub = spec.partition_path(schema, partition) if spec.fields else ""
    return f"{location.rstrip('/')}/data/{sub + '/' if sub else ''}{n:05d}-{write_id}-{kind}-deletes.parquet"


def _write(io: FileIO, path: str, table: pa.Table, file_schema: Schema, settings: ParquetSettings) -> pq.FileMetaData:
    import pyarrow.parquet as pq

    with io.open_write(path) as sink:
        # pyarrow takes a list of columns to dictionary-encode, beyond its annotations; the table's
        # write.delete.parquet.* settings (falling back to write.parquet.*)
        pq.write_table(table, sink, store_schema=False, use_dictionary=dictionary_columns(table),
                       write_page_checksum=True, row_group_size=rows_per_group(table, settings),
                       **settings.arrow_options())
    with io.open_read(path) as fh:
        return pq.read_metadata(fh)


def describe_delete_file(path: str, size: int, footer: pq.FileMetaData, file_schema: Schema,
                         partition: tuple[Any, ...], spec_id: int,
                         content: int) -> DataFile:
    """A delete file's DataFile from its Parquet footer (``file_schema``'s columns): its bounds
    kept whole, not truncated, so readers can tell which data files it may touch."""
    m = metrics_from_footer(footer, file_schema, truncate=1 << 30)
    df = data_file_from_metrics(path, size, partition, spec_id, file_schema, m)
    df.content = content
    df.sort_order_id = None
    return df


def write_position_deletes(io: FileIO, location: str, schema: Schema, spec: PartitionSpec,
                           deletes_by_partition: dict[tuple[Any, ...], Any],
                           properties: Optional[dict[str, str]] = None,
                           write_id: Optional[str] = None) -> list[DataFile]:
    """One position delete file per partition (``write_id`` in each file's name; new if not given).

    ``deletes_by_partition`` maps a partition tuple of ``spec`` to an Arrow table
    or a list of ``(file_path, pos)`` pairs; rows are sorted as the spec requires.
    The bounds on ``file_path`` are kept whole (not truncated) so readers can tell
    which data files a delete file may touch.
    """
    import pyarrow as pa

    settings = ParquetSettings.of(properties, delete=True)     # refused before anything is written
    settings.arrow_options()
    target = to_arrow_schema(POSITION_DELETE_SCHEMA)
    write_id = write_id or uuid.uuid4().hex
    out: list[DataFile] = []
    with staged_files(io) as written:
        for n, (partition, rows) in enumerate(sorted(deletes_by_partition.items(), key=lambda kv: repr(kv[0]))):
            if not isinstance(rows, pa.Table):
                paths, positions = zip(*rows) if rows else ((), ())
                rows = pa.table({"file_path": pa.array(paths, pa.string()), "pos": pa.array(positions, pa.int64())})
            rows = rows.select(["file_path", "pos"]).cast(target)
            if rows.num_rows == 0:
                continue
            rows = rows.sort_by([("file_path", "ascending"), ("pos", "ascending")])
            path = _delete_path(location, spec, schema, partition, "pos", write_id, n)
            written.append(path)
            md = _write(io, path, rows, POSITION_DELETE_SCHEMA, settings)
            df = describe_delete_file(path, io.size(path), md, POSITION_DELETE_SCHEMA, partition, spec.spec_id,
                                      POSITION_DELETES)
            targets = rows.column("file_path")
            if rows.num_rows and targets[0] == targets[rows.num_rows - 1]:   # sorted: first == last, all one file
                df.referenced_data_file = targets[0].as_py()
            out.append(df)
    return out


def delete_granularity(properties: dict[str, str]) -> str:
    """``write.delete.granularity``: ``file`` (the default, as Iceberg's runtime writes them) or
    ``partition``; anything else is refused, naming the property."""
    value = str(properties.get("write.delete.granularity", "file")).strip().lower()
    if value not in ("file", "partition"):
        raise ValueError(f"write.delete.granularity must be 'file' or 'partition', not {value!r}")
    return value


def write_equality_deletes(io: FileIO, location: str, schema: Schema, spec: PartitionSpec,
                           keys_by_partition: dict[tuple[Any, ...], pa.Table], equality_ids: list[int],
                           properties: Optional[dict[str, str]] = None) -> list[DataFile]:
    """One equality delete file per partition, holding the key columns ``equality_ids``."""
    settings = ParquetSettings.of(properties, delete=True)     # refused before anything is written
    settings.arrow_options()
    file_schema = equality_delete_schema(schema, equality_ids)
    target = to_arrow_schema(file_schema)
    write_id = uuid.uuid4().hex
    out: list[DataFile] = []
    with staged_files(io) as written:
        for n, (partition, keys) in enumerate(sorted(keys_by_partition.items(), key=lambda kv: repr(kv[0]))):
            keys = keys.select([f.name for f in file_schema.fields]).cast(target)
            if keys.num_rows == 0:
                continue
            path = _delete_path(location, spec, schema, partition, "eq", write_id, n)
            written.append(path)
            md = _write(io, path, keys, file_schema, settings)
            df = describe_delete_file(path, io.size(path), md, file_schema, partition, spec.spec_id, EQUALITY_DELETES)
            df.equality_ids = sorted(f.field_id for f in file_schema.fields)
            out.append(df)
    return out


# --------------------------------------------------------------------------- reading
def _read_by_ids(io: FileIO, path: str, fields: list[NestedField]) -> pa.Table:
    """Read the columns with these field ids from a Parquet file (by ``PARQUET:field_id``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with io.open_read(path) as fh:
        t = pq.read_table(fh)
    by_id: dict[int, int] = {}
    for i, f in enumerate(t.schema):
        field_meta: dict[bytes, bytes] = f.metadata or {}
        fid = field_meta.get(b"PARQUET:field_id")
        if fid is not None:
            by_id[int(fid)] = i
    cols: list[Any] = []
    names: list[str] = []
    for f in fields:
        i = by_id.get(f.field_id)
        if i is None:  # files written without ids: fall back to the column name
            i = t.schema.get_field_index(f.name)
        cols.append(t.column(i) if i >= 0 else pa.nulls(t.num_rows))
        names.append(f.name)
    return pa.Table.from_arrays(cols, names=names)


def referenced_data_files(io: FileIO, delete_file: DataFile) -> set[str]:
    """The data files a position delete file points at (from its bounds when they pin one file)."""
    if delete_file.referenced_data_file is not None and delete_file.content == POSITION_DELETES:
        return {delete_file.referenced_data_file}
    lo = (delete_file.lower_bounds or {}).get(FILE_PATH_ID)
    hi = (delete_file.upper_bounds or {}).get(FILE_PATH_ID)
    if lo is not None and lo == hi:
        return {bytes(lo).decode("utf-8")}
    t = _read_by_ids(io, delete_file.file_path, [POSITION_DELETE_SCHEMA.fields[0]])
    return set(t.column(0).unique().to_pylist())


def deleted_positions(io: FileIO, data_path: str, delete_files: Iterable[DataFile]) -> set[int]:
    return set(positions_by_data_file(io, {data_path: list(delete_files)})[data_path].tolist())


def positions_by_data_file(io: FileIO, deletes_of: dict[str, list[DataFile]]) -> dict[str, NDArray[np.int64]]:
    """For each data file (its path -> the delete files applying to it), the positions its position
    delete files and deletion vectors delete, as an int64 numpy array: a vector read from its
    Puffin blob, each position delete file read once and split by the data file its rows name."""
    import numpy as np
    import pyarrow.compute as pc

    split: dict[str, dict[Any, Any]] = {}
    out: dict[str, NDArray[np.int64]] = {}
    for path, deletes in deletes_of.items():
        parts: list[NDArray[np.int64]] = []
        for d in deletes:
            if d.content != POSITION_DELETES:
                continue
            if d.is_deletion_vector:
                if d.referenced_data_file == path:
                    parts.append(np.asarray(vector_positions(io, d).to_array(), dtype=np.int64))
                continue
            if names_only(d, path):      # every row names this data file: its positions alone are read
                parts.append(_read_positions(io, d.file_path))
                continue
            if d.file_path not in split:
                t = _read_position_file(io, d.file_path)
                targets = t.column(0)
                split[d.file_path] = {target: t.column(1).filter(pc.equal(targets, target)).to_numpy()
                                      for target in pc.unique(targets).to_pylist()}
            hit = split[d.file_path].get(path)
            if hit is not None:
                parts.append(np.asarray(hit, dtype=np.int64))
        out[path] = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
    return out


def names_only(delete_file: DataFile, path: str) -> bool:
    """Whether every row of a position delete file names the data file ``path``: it says so
    (``referenced_data_file``), or its ``file_path`` bounds are both that path (whole, not truncated)."""
    if delete_file.referenced_data_file is not None:
        return delete_file.referenced_data_file == path
    lower = (delete_file.lower_bounds or {}).get(FILE_PATH_ID)
    return lower is not None and lower == (delete_file.upper_bounds or {}).get(FILE_PATH_ID) == path.encode("utf-8")


def _read_positions(io: FileIO, path: str) -> NDArray[np.int64]:
    """The ``pos`` column alone of a position delete file whose rows all name one data file: its
    ``file_path`` strings (most of its bytes once decoded) are not read. Found by field id, else by name."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with io.open_read(path) as fh:
            f = pq.ParquetFile(fh)
            pos_id = str(POS_ID).encode()
            names: list[str] = []
            for x in f.schema_arrow:
                field_meta: dict[bytes, bytes] = x.metadata or {}
                if field_meta.get(b"PARQUET:field_id") == pos_id:
                    names.append(x.name)
            names = names or ["pos"]
            column = f.read(columns=names[:1]).column(0)
    except FileNotFoundError:
        raise CorruptDataFileError(path, "delete file referenced by the snapshot is missing") from None
    except (pa.ArrowException, OSError, KeyError) as e:
        raise CorruptDataFileError(path, f"not a readable position delete file ({type(e).__name__}: {e})") from None
    if column.null_count:
        raise CorruptDataFileError(path, "not a readable position delete file (a row has no pos)")
    return np.asarray(column.to_numpy(), dtype=np.int64)


def _read_position_file(io: FileIO, path: str) -> pa.Table:
    """A position delete file's (file_path, pos) rows; a missing or unreadable file is named."""
    import pyarrow as pa

    try:
        return _read_by_ids(io, path, list(POSITION_DELETE_SCHEMA.fields))
    except FileNotFoundError:
        raise CorruptDataFileError(path, "delete file referenced by the snapshot is missing") from None
    except (pa.ArrowException, OSError, KeyError) as e:
        raise CorruptDataFileError(path, f"not a readable position delete file ({type(e).__name__}: {e})") from None


def apply_deletes_arrow(table: pa.Table, data_path: str, delete_files: list[DataFile], schema: Schema,
                        io: FileIO) -> pa.Table:
    """Drop the rows of one data file's Arrow table (rows in file order) that its delete files delete.

    ``table`` has the columns of ``schema`` (at least those the equality deletes use).
    """
    import pyarrow as pa

    if not delete_files:
        return table
    keep = [True] * table.num_rows
    for pos in deleted_positions(io, data_path, delete_files):
        if 0 <= pos < len(keep):
            keep[pos] = False
    for d in delete_files:
        if d.content != EQUALITY_DELETES:
            continue
        fields = [f for f in schema.fields if f.field_id in set(d.equality_ids or [])]
        if not fields:
            continue
        deleted = _read_by_ids(io, d.file_path, fields)
        keys = set(zip(*[deleted.column(i).to_pylist() for i in range(len(fields))]))
        rows = zip(*[table.column(f.name).to_pylist() for f in fields])
        for i, key in enumerate(rows):
            if keep[i] and key in keys:
                keep[i] = False
    if all(keep):
        return table
    return table.filter(pa.array(keep, pa.bool_()))
