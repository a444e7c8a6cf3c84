# pyright: strict
"""Existing Parquet files as data files of an Iceberg table, without rewriting them (what
Iceberg's ``add_files``, ``snapshot`` and ``migrate`` procedures do).

A file keeps its path. Its partition comes from Hive-style directories (``k=v/``) above it
(an identity partition field per key); its statistics come from its footer (``core/parquet``,
read in Spark tasks); its columns are matched to the table's by name, through the table's name
mapping (``schema.name-mapping.default``, spec "Column Projection") when the file has no field
ids. A column that is only in the path is read from the partition tuple: the spec's rule for a
field an identity transform partitions by and the file lacks.
"""
from __future__ import annotations

import datetime as _dt
import decimal
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence
from urllib.parse import unquote

from icefloe.core.types import (
    BooleanType, DateType, DecimalType, IcebergType, IntegerType, LongType, Schema, StringType, TimestampType,
    TimestamptzType, is_floating, is_integral, is_plain_string,
)
from icefloe.core.parquet import FileMetrics
from icefloe.core.values import to_internal
from icefloe.errors import MigrationError, SchemaError
from icefloe.iceberg.arrow_writer import data_file_from_metrics
from icefloe.iceberg.manifest import DataFile
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.transforms import IdentityTransform

if TYPE_CHECKING:
    import pyarrow as pa

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"     # Hive's directory name of a null partition value
INT_RANGE = (-(1 << 31), (1 << 31) - 1)


def hive_partition(relative_dir: str) -> dict[str, str]:
    """``a=1/b=x%2Fy`` (a file's directory below the source's root) -> ``{"a": "1", "b": "x/y"}``
    (Hive escapes ``/``, ``=``, ``%`` and others as ``%XX``). A segment without ``=`` is refused."""
    out: dict[str, str] = {}
    for seg in [s for s in relative_dir.replace("\\", "/").split("/") if s and s != "."]:
        if "=" not in seg:
            raise MigrationError(f"directory {seg!r} is not a Hive-style partition directory (key=value)")
        key, value = seg.split("=", 1)
        key = unquote(key)
        if key in out:
            raise MigrationError(f"partition key {key!r} appears twice in {relative_dir!r}")
        out[key] = unquote(value)
    return out


def infer_partition_type(values: Sequence[Optional[str]]) -> IcebergType:
    """The type of a partition column from its directory values, as Spark infers it for a path
    table without a schema: ``int`` when every value is a 32-bit integer, ``long`` when every
    value is an integer, else ``string`` (a null value says nothing)."""
    present = [v for v in values if v is not None]
    try:
        ints = [int(v) for v in present]
    except ValueError:
        return StringType()
    if not ints:
        return StringType()
    if all(INT_RANGE[0] <= i <= INT_RANGE[1] for i in ints):
        return IntegerType()
    return LongType()


def parse_partition_value(t: IcebergType, raw: Optional[str]) -> Any:
    """A partition directory's value text as the internal value of a column of type ``t``."""
    if raw is None or raw == HIVE_NULL:
        return None
    try:
        if is_integral(t):
            return int(raw)
        if is_floating(t):
            return float(raw)
        if isinstance(t, BooleanType):
            if raw.lower() not in ("true", "false"):
                raise ValueError(raw)
            return raw.lower() == "true"
        if isinstance(t, DecimalType):
            return to_internal(t, decimal.Decimal(raw))
        if isinstance(t, DateType):
            return to_internal(t, _dt.date.fromisoformat(raw))
        if t in (TimestampType(), TimestamptzType()):
            return to_internal(t, _dt.datetime.fromisoformat(raw))
        if is_plain_string(t):
            return raw
    except (ValueError, decimal.InvalidOperation):
        raise MigrationError(f"partition value {raw!r} is not a {t}") from None
    raise MigrationError(f"partition columns of type {t} cannot be read from directory names")


def check_spec_for_import(spec: PartitionSpec, schema: Schema, keys: Sequence[str], table: str) -> None:
    """The table must be partitioned by identity on exactly the files' partition keys (Iceberg's
    ``add_files`` rule), and unpartitioned when the files are."""
    names = [schema.find_field(f.source_id).name for f in spec.fields]
    if any(not isinstance(f.transform, IdentityTransform) for f in spec.fields):
        raise MigrationError(f"{table} is partitioned by {', '.join(str(f.transform) for f in spec.fields)}; "
                           "imported files can only be placed by identity partitions of their directories")
    if sorted(n.lower() for n in names) != sorted(k.lower() for k in keys):
        raise MigrationError(f"the files are partitioned by {list(keys) or 'nothing'} (their directories) but "
                           f"{table} by {names or 'nothing'}; they must match")


def partition_tuple(spec: PartitionSpec, schema: Schema, values: Mapping[str, Optional[str]]) -> tuple[Any, ...]:
    """The partition tuple of a file whose directories gave ``values`` (key -> text)."""
    lowered = {k.lower(): v for k, v in values.items()}
    out: list[Any] = []
    for f in spec.fields:
        col = schema.find_field(f.source_id)
        out.append(parse_partition_value(col.field_type, lowered.get(col.name.lower())))
    return tuple(out)


def matches_filter(values: Mapping[str, Optional[str]], partition_filter: Optional[Mapping[Any, Any]]) -> bool:
    """Whether a file's partition values (key -> directory text) match every entry of
    ``partition_filter`` (``add_files``' ``partition_filter``: key -> value)."""
    if not partition_filter:
        return True
    lowered = {k.lower(): v for k, v in values.items()}
    return all(lowered.get(str(k).lower()) == str(v) for k, v in partition_filter.items())


def check_filter_keys(partition_filter: Optional[Mapping[Any, Any]], keys: Sequence[str]) -> None:
    unknown = sorted(str(k) for k in (partition_filter or {}) if str(k).lower() not in {x.lower() for x in keys})
    if unknown:
        raise MigrationError(f"partition_filter names {', '.join(unknown)}, which "
                           f"{'are not partition keys of the source: ' + ', '.join(keys) if keys else 'the source is not partitioned by'}")


def import_schema(file_schema: pa.Schema, partition_columns: Sequence[tuple[str, IcebergType]]) -> Schema:
    """A table schema for files whose columns are ``file_schema`` (a ``pyarrow.Schema``) plus the
    partition columns only their directories hold (``(name, type)``): fresh ids from 1, the
    files' columns first, as Iceberg numbers a new table's."""
    import pyarrow as pa

    from icefloe.core.types import from_arrow_schema
    from icefloe.core.types.arrow import to_arrow_type

    have = {n.lower() for n in file_schema.names}
    extra = [pa.field(n, to_arrow_type(t)) for n, t in partition_columns if n.lower() not in have]
    plain = pa.schema([f.remove_metadata() for f in file_schema] + extra)
    return from_arrow_schema(plain)


def data_file(path: str, size: int, partition: tuple[Any, ...], spec: PartitionSpec, schema: Schema,
              metrics: FileMetrics) -> DataFile:
    return data_file_from_metrics(path, size, partition, spec.spec_id, schema, metrics)


def check_file_columns(path: str, file_columns: Sequence[tuple[str, IcebergType]], schema: Schema) -> None:
    """Every top-level column of a file (``(name, type)`` in the types of ``schema``) must be a
    column of the table of the same type after the table's widening (a file's ``tinyint`` is an
    ``int`` column): readers match columns by name and would otherwise drop or misread it."""
    from icefloe.core.types import widen_to_common_types

    for name, t in file_columns:
        col = schema.find_field_or_none(name)
        if col is None:
            raise MigrationError(f"{path}: column {name!r} is not a column of the table "
                               f"(columns: {', '.join(schema.column_names)})")
        if str(widen_to_common_types(t)) != str(widen_to_common_types(col.field_type)):
            raise MigrationError(f"{path}: column {name!r} is {t} in the file but {col.field_type} in the table")


__all__ = ["HIVE_NULL", "MigrationError", "hive_partition", "infer_partition_type", "parse_partition_value",
           "check_spec_for_import", "partition_tuple", "matches_filter", "check_filter_keys", "import_schema",
           "data_file", "check_file_columns", "SchemaError"]
