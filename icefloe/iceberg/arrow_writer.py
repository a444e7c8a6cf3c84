# pyright: strict
"""Writing Arrow data as Iceberg data files (used for pyarrow input and in Spark tasks).

Rows are split by partition tuple (transforms applied with Arrow compute), each
group is written with pyarrow's Parquet writer carrying field ids, and the
footer plus exact NaN counts give the file metrics.
"""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Optional

from icefloe.core.arrow import dictionary_columns, fit_array
from icefloe.core.io import FileIO, staged_files
from icefloe.core.parquet import metrics_from_footer, variant_paths
from icefloe.core.parquet_footer import FooterPatchingSink, annotate_variants
from icefloe.core.types import Schema, to_arrow_schema
from icefloe.core.types.model import UUIDType, is_floating
from icefloe.errors import RequiredFieldNullError, SchemaMismatchError
from icefloe.iceberg import conversions
from icefloe.iceberg.schema import default_value, stored_schema
from icefloe.iceberg.manifest import DataFile
from icefloe.iceberg.metrics_modes import apply_modes, for_table, metrics_config
from icefloe.iceberg.parquet_props import ParquetSettings, rows_per_group
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.transforms import apply_arrow
from icefloe.core.ranges import arrow_out_of_range, out_of_range_message
from icefloe.iceberg.sort_order import writer_sort_columns
from icefloe.iceberg.transforms import BucketTransform, TruncateTransform, VoidTransform

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.core.parquet import FileMetrics


def align_arrow(table: pa.Table, schema: Schema, table_name: str = "table") -> pa.Table:
    """Project and cast an Arrow table to ``schema``; reject what does not fit."""
    import pyarrow as pa

    target = to_arrow_schema(schema)
    names = {n.lower(): n for n in table.column_names}
    extra = set(names) - {f.name.lower() for f in schema.fields}
    if extra:
        raise SchemaMismatchError(f"data has columns that table {table_name} does not: {sorted(extra)}; "
                                  f"table columns are {schema.column_names}")
    arrays: list[Any] = []
    for f, af in zip(schema.fields, target):
        src = names.get(f.name.lower())
        if src is None:
            if f.write_default is not None:          # format v3: what a row without the column holds
                value = default_value(f.field_type, f.write_default)
                if isinstance(value, uuid.UUID):
                    value = value.bytes if pa.types.is_fixed_size_binary(af.type) else str(value)
                arrays.append(pa.array([value] * table.num_rows, af.type))
                continue
            if f.required:
                raise SchemaMismatchError(f"required column {f.name!r} of table {table_name} is missing from the data")
            arrays.append(pa.nulls(table.num_rows, type=af.type))
            continue
        col = table.column(src)
        if f.required and col.null_count:
            raise RequiredFieldNullError(f"null value in required column '{f.name}' of table {table_name}")
        if isinstance(f.field_type, UUIDType) and (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            col = _uuid_bytes(col, f.name, table_name)      # uuids as their text, as Spark writers give them
        if col.type != af.type:
            _check_arrow_cast(col.type, af.type, f.name)
            if pa.types.is_nested(af.type):         # struct fields by name, at any depth
                col = fit_array(col, af.type, f.name)
            else:
                try:
                    col = col.cast(af.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                    raise SchemaMismatchError(f"column {f.name!r}: cannot convert {col.type} to {af.type}: {e}") from e
        arrays.append(col)
    return pa.Table.from_arrays(arrays, schema=target)


def _uuid_bytes(col: pa.ChunkedArray, name: str, table_name: str) -> pa.Array:
    import pyarrow as pa

    out: list[Optional[bytes]] = []
    for v in col.to_pylist():
        try:
            out.append(None if v is None else uuid.UUID(v).bytes)
        except ValueError:
            raise SchemaMismatchError(f"column {name!r} of table {table_name}: {v!r} is not a uuid") from None
    return pa.array(out, pa.binary(16))


def _check_arrow_cast(src: pa.DataType, dst: pa.DataType, name: str) -> None:
    import pyarrow.types as pt

    ok = (
        # binary values for a fixed[n] column: each must be n bytes long (the cast checks)
        ((pt.is_binary(src) or pt.is_large_binary(src) or pt.is_fixed_size_binary(src))
         and pt.is_fixed_size_binary(dst)) or
        (pt.is_integer(src) and pt.is_integer(dst) and src.bit_width <= dst.bit_width)
        or (pt.is_floating(src) and pt.is_floating(dst) and src.bit_width <= dst.bit_width)
        or ((pt.is_string(src) or pt.is_large_string(src)) and pt.is_string(dst))
        or ((pt.is_binary(src) or pt.is_large_binary(src)) and pt.is_binary(dst))
        # naive values for a timestamptz column are UTC instants (Arrow's reading of them); zoned
        # values for a naive column would lose their zone: refused
        or (pt.is_timestamp(src) and pt.is_timestamp(dst) and ((src.tz is None) == (dst.tz is None) or src.tz is None))
        or (pt.is_date(src) and pt.is_date(dst))
        or (pt.is_decimal(src) and pt.is_decimal(dst) and src.scale == dst.scale and src.precision <= dst.precision)
        or (pt.is_nested(src) and pt.is_nested(dst))
    )
    if not ok:
        raise SchemaMismatchError(f"column {name!r} has type {src} but the table column needs {dst}; cast it explicitly")


def estimate_records_per_file(meta: Optional[TableMetadata], target_bytes: int, schema: Schema) -> int:
    """Rows per file for Spark's ``maxRecordsPerFile``, from the table's recent bytes/row."""
    summary = meta.current_snapshot.summary if meta is not None and meta.current_snapshot else {}
    rows = int(summary.get("total-records", "0") or 0)
    size = int(summary.get("total-files-size", "0") or 0)
    if rows > 10_000 and size > 0:
        per_row = size / rows
    else:
        per_row = 0
        for f in schema.fields:  # compressed-size guess per column
            s = str(f.field_type)
            per_row += {"boolean": 0.2, "int": 2.5, "long": 4, "date": 2, "float": 4, "double": 6,
                        "timestamp": 4, "timestamptz": 4}.get(s, 8)
    return max(1000, int(target_bytes / max(per_row, 0.1)))


def write_arrow(io: FileIO, table: pa.Table, schema: Schema, spec: PartitionSpec, location: str,
                properties: Optional[dict[str, str]] = None, task_id: int = 0, write_id: Optional[str] = None,
                meta: Optional[TableMetadata] = None, first_counter: int = 0) -> list[DataFile]:
    """Write an already aligned Arrow table; returns uncommitted DataFiles. File names count on
    from ``first_counter`` (a writer calling again with the same task and write id)."""
    import pyarrow.parquet as pq

    props = properties or {}
    write_id = write_id or uuid.uuid4().hex
    settings = ParquetSettings.of(props)     # the table's write.parquet.*, refused before anything is written
    options = settings.arrow_options()
    max_rows = estimate_records_per_file(meta, int(props.get("write.target-file-size-bytes", 512 * 1024 * 1024)),
                                         schema)
    # the columns' metrics modes, refused (naming the property) before anything is written
    modes = for_table(meta, props) if meta is not None else metrics_config(props, schema)
    out: list[DataFile] = []
    if table.num_rows == 0:
        return out
    order_id, sort_cols = 0, []
    if meta is not None:

        order_id, sort_cols = writer_sort_columns(meta)
    if sort_cols:  # the table's sort order within each file, each key's nulls where its field says
        table = table.sort_by([(c, "ascending" if asc else "descending", "at_start" if nulls_first else "at_end")
                               for c, asc, nulls_first in sort_cols])
    groups = [(p, chunk) for p, t in split_by_partition(table, schema, spec)
              for chunk in (t.slice(o, max_rows) for o in range(0, t.num_rows, max_rows))]
    counter = first_counter
    variants = variant_paths(stored_schema(schema))
    with staged_files(io) as written:
        for partition, part_table in groups:
            counter += 1
            sub = spec.partition_path(schema, partition) if spec.fields else ""
            name = f"{task_id:05d}-0-{write_id}-{counter:05d}.parquet"
            path = f"{location.rstrip('/')}/data/{sub + '/' if sub else ''}{name}"
            written.append(path)
            with io.open_write(path) as sink:          # unknown fields are never stored (the spec)
                stored = stored_arrow(part_table, schema)
                _write_parquet(stored, sink, variants, rows_per_group(stored, settings),
                               store_schema=False, write_page_checksum=True,  # readers can catch bit rot
                               **options)
            with io.open_read(path) as fh:
                md = pq.read_metadata(fh)
            m = metrics_from_footer(md, schema, truncate=None)
            _add_nan_counts(m, part_table, schema)
            apply_modes(m, modes, schema)
            df = _to_data_file(path, io.size(path), partition, spec.spec_id, schema, m)
            df.sort_order_id = order_id
            out.append(df)
    return out


def _write_parquet(table: pa.Table, sink: Any, variants: list[tuple[str, ...]], group_rows: Optional[int] = None,
                   **options: Any) -> None:
    """``table`` as one Parquet file into ``sink``, its row groups of ``group_rows`` rows (None:
    pyarrow's default). Arrow writes a variant as a plain group of its
    two byte strings: the footer is given the VARIANT annotation the spec requires on its way out
    (``parquet_footer``), the data pages pass through as they are."""
    import pyarrow.parquet as pq

    options = {"use_dictionary": dictionary_columns(table), **options}
    if not variants:
        pq.write_table(table, sink, row_group_size=group_rows, **options)
        return
    patching = FooterPatchingSink(sink, lambda footer: annotate_variants(footer, variants))
    writer = pq.ParquetWriter(patching, table.schema, **options)
    writer.write_table(table, row_group_size=group_rows)
    patching.hold()
    writer.close()
    patching.finish()


def stored_arrow(table: pa.Table, schema: Schema) -> pa.Table:
    """``table`` (aligned to ``schema``) as data files hold it (``schema.stored_schema``): no
    field of type ``unknown`` at any depth, the rest as they are."""
    import pyarrow as pa

    stored = stored_schema(schema)
    if [f.field_type for f in stored.fields] == [f.field_type for f in schema.fields]:
        return table
    target = to_arrow_schema(stored)
    return pa.Table.from_arrays([fit_array(table.column(af.name), af.type, af.name, drop_extra=True) for af in target],
                                schema=target)


def _add_nan_counts(m: FileMetrics, table: pa.Table, schema: Schema) -> None:
    import pyarrow.compute as pc

    for f in schema.fields:
        if is_floating(f.field_type):
            col = table.column(f.name)
            m.nan_value_counts[f.field_id] = int(pc.sum(pc.is_nan(col).cast("int64")).as_py() or 0)
            # min/max from Arrow compute ignore NaN, as the spec requires
            mm = pc.min_max(pc.if_else(pc.is_nan(col), None, col))
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
            if lo is not None:
                m.lower_bounds[f.field_id] = lo
                m.upper_bounds[f.field_id] = hi


def split_by_partition(table: pa.Table, schema: Schema,
                        spec: PartitionSpec) -> list[tuple[tuple[Any, ...], pa.Table]]:
    import pyarrow as pa

    if spec.is_unpartitioned:
        return [((), table)]

    keys: list[Any] = []
    for pf in spec.fields:
        src = schema.find_field(pf.source_id)
        col = table.column(src.name).combine_chunks()
        if not isinstance(pf.transform, (BucketTransform, TruncateTransform, VoidTransform)):
            bad = arrow_out_of_range(col)  # dates and times only; None for other types
            if bad is not None:
                raise SchemaMismatchError(out_of_range_message(src.name, bad))
        keys.append(apply_arrow(pf.transform, src.field_type, col))
    key_names = [f"__p{i}" for i in range(len(keys))]
    with_keys = table.append_column("__row", pa.array(range(table.num_rows), pa.int64()))
    for n, k in zip(key_names, keys):
        with_keys = with_keys.append_column(n, k)
    grouped = with_keys.group_by(key_names, use_threads=False).aggregate([("__row", "list")])
    result: list[tuple[tuple[Any, ...], pa.Table]] = []
    rtypes = spec.result_types(schema)
    for row in grouped.to_pylist():
        partition = tuple(conversions.to_internal(t, row[n]) for n, t in zip(key_names, rtypes))
        idx = pa.array(row["__row_list"], pa.int64())
        result.append((partition, table.take(idx)))
    return result


def data_file_from_metrics(path: str, size: int, partition: tuple[Any, ...], spec_id: int, schema: Schema,
                           m: FileMetrics) -> DataFile:
    """A DataFile (content DATA) from a written file's metrics; bounds serialized per the spec."""
    def enc(bounds: dict[int, Any]) -> dict[int, bytes]:
        return {fid: conversions.to_bytes(schema.find_field(fid).field_type, v) for fid, v in bounds.items()}

    return DataFile(
        file_path=path, file_format="PARQUET", partition=partition, record_count=m.record_count,
        file_size_in_bytes=size, content=0, column_sizes=m.column_sizes, value_counts=m.value_counts,
        null_value_counts=m.null_value_counts, nan_value_counts=m.nan_value_counts or {},
        lower_bounds=enc(m.lower_bounds), upper_bounds=enc(m.upper_bounds),
        split_offsets=m.split_offsets or None, sort_order_id=0, spec_id=spec_id,
    )


_to_data_file = data_file_from_metrics
