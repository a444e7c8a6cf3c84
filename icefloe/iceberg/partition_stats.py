# pyright: strict
"""Partition statistics files (table spec, "Partition Statistics"): one Parquet row per partition
of a snapshot, in the unified partition type of all the table's specs, sorted by partition.

Fields, by id: 1 ``partition``, 2 ``spec_id``, 3 ``data_record_count``, 4 ``data_file_count``,
5 ``total_data_file_size_in_bytes``, 6 ``position_delete_record_count``, 7
``position_delete_file_count``, 8 ``equality_delete_record_count``, 9
``equality_delete_file_count``, 10 ``total_record_count``, 11 ``last_updated_at`` (epoch ms), 12
``last_updated_snapshot_id``; format v3 adds 13 ``dv_count`` (the last column) and makes 6-9
required. In v3, ``position_delete_record_count`` counts the deleted positions of position delete
files and deletion vectors together, ``position_delete_file_count`` the position delete files only
(not the deletion vectors, which ``dv_count`` counts). ``total_record_count`` is the live record
count where metadata alone gives it (no equality deletes and no position delete files in the
partition: the data records less the deletion vectors' positions), else null. The counts come from
the ``partitions`` metadata table of the snapshot (and, in v3, its ``delete_files`` table for the
deletion vectors). The file is registered with ``set-partition-statistics``.
"""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Optional

import pyarrow as pa

from icefloe.core.io import FileIO
from icefloe.iceberg.inspect import metadata_table
from icefloe.iceberg.manifest import POSITION_DELETES
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.table_metadata import TableMetadata

if TYPE_CHECKING:
    from icefloe.iceberg.table import BaseTable

# (name in the file, field id, Arrow type, required, column of the ``partitions`` metadata table)
FIELDS = [("spec_id", 2, pa.int32(), True, "spec_id"), ("data_record_count", 3, pa.int64(), True, "record_count"),
          ("data_file_count", 4, pa.int32(), True, "file_count"),
          ("total_data_file_size_in_bytes", 5, pa.int64(), True, "total_data_file_size_in_bytes"),
          ("position_delete_record_count", 6, pa.int64(), False, "position_delete_record_count"),
          ("position_delete_file_count", 7, pa.int32(), False, "position_delete_file_count"),
          ("equality_delete_record_count", 8, pa.int64(), False, "equality_delete_record_count"),
          ("equality_delete_file_count", 9, pa.int32(), False, "equality_delete_file_count"),
          ("total_record_count", 10, pa.int64(), False, None),
          ("last_updated_at", 11, pa.int64(), False, "last_updated_at"),
          ("last_updated_snapshot_id", 12, pa.int64(), False, "last_updated_snapshot_id")]
V3_REQUIRED = (6, 7, 8, 9)      # optional before v3
DV_COUNT = ("dv_count", 13, pa.int32())


def _with_id(field: pa.Field, field_id: int) -> pa.Field:
    return field.with_metadata({b"PARQUET:field_id": str(field_id).encode()})


def partition_field_ids(meta: TableMetadata) -> dict[str, int]:
    """Partition field name -> its field id, over every spec (the unified type's field ids)."""
    specs: list[PartitionSpec] = meta.partition_specs
    return {f.name: f.field_id for spec in specs for f in spec.fields}


def snapshot_rows(table: BaseTable, meta: TableMetadata, snapshot_id: int) -> pa.Table:
    """The file's rows for snapshot ``snapshot_id`` of ``table`` (``meta`` its metadata)."""
    partitions = metadata_table(table, "partitions", snapshot_id)
    deletes = metadata_table(table, "delete_files", snapshot_id) if meta.format_version >= 3 else None
    return stats_table(partitions, meta, deletes)


def _key(value: dict[str, Any]) -> str:
    return repr(tuple(value.values()))


def _vectors(delete_files: pa.Table) -> dict[str, int]:
    """Partition key -> how many of the live delete files are deletion vectors."""
    out: dict[str, int] = {}
    for row in delete_files.select(["content", "file_format", "partition"]).to_pylist():
        if row["content"] == POSITION_DELETES and str(row["file_format"]).upper() == "PUFFIN":
            out[_key(row["partition"])] = out.get(_key(row["partition"]), 0) + 1
    return out


def stats_table(partitions: pa.Table, meta: TableMetadata, delete_files: Optional[pa.Table] = None) -> pa.Table:
    """The file's rows from a snapshot's ``partitions`` metadata table, sorted by partition; a v3
    table's rows need the snapshot's ``delete_files`` table too (its deletion vectors)."""
    v3 = meta.format_version >= 3
    if v3 and delete_files is None:
        raise ValueError("partition statistics of a format v3 table need the snapshot's delete files")
    ids = partition_field_ids(meta)
    part = partitions.column("partition").combine_chunks()
    children = [_with_id(pa.field(f.name, f.type, True), ids[f.name]) for f in part.type]
    part_type = pa.struct(children)
    keys = [_key(p) for p in part.to_pylist()]
    vectors = _vectors(delete_files) if delete_files is not None else {}
    dv = [vectors.get(k, 0) for k in keys]
    columns = [pa.StructArray.from_arrays([part.field(i) for i in range(part.type.num_fields)], fields=children)]
    fields = [_with_id(pa.field("partition", part_type, False), 1)]
    pos_records = partitions.column("position_delete_record_count").to_pylist()
    pos_files = [n - c for n, c in zip(partitions.column("position_delete_file_count").to_pylist(), dv)]
    eq_files = partitions.column("equality_delete_file_count").to_pylist()
    live = [None if p or e else d - r
            for d, r, p, e in zip(partitions.column("record_count").to_pylist(), pos_records, pos_files, eq_files)]
    for name, field_id, arrow_type, required, source in FIELDS:
        if source is None:
            col = pa.array(live, arrow_type)
        elif source == "position_delete_file_count":
            col = pa.array(pos_files, arrow_type)
        else:
            col = partitions.column(source).combine_chunks()
            if pa.types.is_timestamp(col.type):         # last_updated_at: epoch milliseconds
                col = col.cast(pa.timestamp("ms", col.type.tz), safe=False)
            col = col.cast(arrow_type)
        columns.append(col)
        fields.append(_with_id(pa.field(name, arrow_type, not (required or (v3 and field_id in V3_REQUIRED))),
                               field_id))
    if v3:
        name, field_id, arrow_type = DV_COUNT
        columns.append(pa.array(dv, arrow_type))
        fields.append(_with_id(pa.field(name, arrow_type, False), field_id))
    table = pa.Table.from_arrays(columns, schema=pa.schema(fields))
    values = [tuple(p.values()) for p in part.to_pylist()]
    order = sorted(range(table.num_rows), key=lambda i: tuple((v is not None, v) for v in values[i]))
    return table.take(pa.array(order, pa.int64()))


def write_partition_stats(io: FileIO, metadata_dir: str, snapshot_id: int, table: pa.Table) -> dict[str, Any]:
    """Write the file; returns its ``partition-statistics`` entry."""
    import pyarrow.parquet as pq

    path = f"{metadata_dir}/partition-stats-{snapshot_id}-{uuid.uuid4()}.parquet"
    with io.open_write(path) as sink:
        pq.write_table(table, sink, compression="zstd", store_schema=False)
    return {"snapshot-id": snapshot_id, "statistics-path": path, "file-size-in-bytes": io.size(path)}
