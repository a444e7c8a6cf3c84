# pyright: strict
"""Partition statistics files (table spec, "Partition Statistics"): one Parquet row per partition
of a snapshot, in the unified partition type of all the table's specs, sorted by partition.

Fields, by id: 1 ``partition``, 2 ``spec_id``, 3 ``data_record_count``, 4 ``data_file_count``,
5 ``total_data_file_size_in_bytes``, 6 ``position_delete_record_count``, 7
``position_delete_file_count``, 8 ``equality_delete_record_count``, 9
``equality_delete_file_count``, 10 ``total_record_count`` (left null: the live count after deletes
is not computed), 11 ``last_updated_at`` (epoch ms), 12 ``last_updated_snapshot_id``. The counts
come from the ``partitions`` metadata table of the snapshot. The file is registered with
``set-partition-statistics``.
"""
from __future__ import annotations

import uuid
from typing import Any

import pyarrow as pa

from icefloe.core.io import FileIO
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.table_metadata import TableMetadata

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


def _with_id(field: pa.Field, field_id: int) -> pa.Field:
    return field.with_metadata({b"PARQUET:field_id": str(field_id).encode()})


def partition_field_ids(meta: TableMetadata) -> dict[str, int]:
    """Partition field name -> its field id, over every spec (the unified type's field ids)."""
    specs: list[PartitionSpec] = meta.partition_specs
    return {f.name: f.field_id for spec in specs for f in spec.fields}


def stats_table(partitions: pa.Table, meta: TableMetadata) -> pa.Table:
    """The file's rows from a snapshot's ``partitions`` metadata table, sorted by partition."""
    ids = partition_field_ids(meta)
    part = partitions.column("partition").combine_chunks()
    children = [_with_id(pa.field(f.name, f.type, True), ids[f.name]) for f in part.type]
    part_type = pa.struct(children)
    columns = [pa.StructArray.from_arrays([part.field(i) for i in range(part.type.num_fields)], fields=children)]
    fields = [_with_id(pa.field("partition", part_type, False), 1)]
    for name, field_id, arrow_type, required, source in FIELDS:
        if source is None:
            col = pa.nulls(partitions.num_rows, arrow_type)
        else:
            col = partitions.column(source).combine_chunks()
            if pa.types.is_timestamp(col.type):         # last_updated_at: epoch milliseconds
                col = col.cast(pa.timestamp("ms", col.type.tz), safe=False)
            col = col.cast(arrow_type)
        columns.append(col)
        fields.append(_with_id(pa.field(name, arrow_type, not required), field_id))
    table = pa.Table.from_arrays(columns, schema=pa.schema(fields))
    order = sorted(range(table.num_rows), key=lambda i: repr(tuple(part[i].as_py().values())))
    return table.take(pa.array(order, pa.int64()))


def write_partition_stats(io: FileIO, metadata_dir: str, snapshot_id: int, table: pa.Table) -> dict[str, Any]:
    """Write the file; returns its ``partition-statistics`` entry."""
    import pyarrow.parquet as pq

    path = f"{metadata_dir}/partition-stats-{snapshot_id}-{uuid.uuid4()}.parquet"
    with io.open_write(path) as sink:
        pq.write_table(table, sink, compression="zstd", store_schema=False)
    return {"snapshot-id": snapshot_id, "statistics-path": path, "file-size-in-bytes": io.size(path)}
