# pyright: strict
"""Avro schemas of manifests and manifest lists (Iceberg spec, "Manifests" and "Manifest Lists").

Every field carries its ``field-id``; maps with non-string keys are arrays of
key/value records with ``logicalType: map``, named ``k<key id>_v<value id>``
as the spec's Appendix A describes.
"""
from __future__ import annotations

from typing import Any

from icefloe.core.types import (
    BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType, IcebergType, IntegerType, LongType,
    StringType, StructType, TimestampType, TimestamptzType, TimeType, UUIDType, is_micros, is_nanos,
)


# An Avro schema, a JSON document
AvroSchema = dict[str, Any]


def _opt(t: object) -> list[object]:
    return ["null", t]


def _int_map(field_id: int, name: str, key_id: int, value_id: int, value_type: str) -> AvroSchema:
    return {
        "name": name, "field-id": field_id, "default": None,
        "type": _opt({
            "type": "array", "logicalType": "map",
            "items": {"type": "record", "name": f"k{key_id}_v{value_id}", "fields": [
                {"name": "key", "type": "int", "field-id": key_id},
                {"name": "value", "type": value_type, "field-id": value_id},
            ]},
        }),
    }


# Iceberg's primitive types stored as the Avro primitive of the same meaning
_AVRO_PRIMITIVES: dict[IcebergType, str] = {BooleanType(): "boolean", IntegerType(): "int", LongType(): "long", FloatType(): "float",
                    DoubleType(): "double", StringType(): "string", BinaryType(): "bytes"}


def avro_primitive(t: IcebergType, name_hint: str = "f") -> object:
    simple = _AVRO_PRIMITIVES.get(t)
    if simple is not None:
        return simple
    if isinstance(t, DateType):
        return {"type": "int", "logicalType": "date"}
    if t == TimeType():
        return {"type": "long", "logicalType": "time-micros"}
    if is_micros(t) and isinstance(t, (TimestampType, TimestamptzType)):
        return {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": isinstance(t, TimestamptzType)}
    if is_nanos(t):
        return {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": isinstance(t, TimestamptzType)}
    if isinstance(t, UUIDType):
        return {"type": "fixed", "size": 16, "name": f"uuid_fixed_{name_hint}", "logicalType": "uuid"}
    if isinstance(t, FixedType):
        return {"type": "fixed", "size": t.length, "name": f"fixed_{name_hint}"}
    if isinstance(t, DecimalType):
        size = _decimal_size(t.precision)
        return {"type": "fixed", "size": size, "name": f"decimal_{name_hint}", "logicalType": "decimal",
                "precision": t.precision, "scale": t.scale}
    raise ValueError(f"no Avro type for {t}")


def _decimal_size(precision: int) -> int:
    size = 1
    while 10 ** precision > 2 ** (8 * size - 1):
        size += 1
    return size


def avro_name(name: str) -> str:
    """A valid Avro name for ``name``: invalid characters become ``_x<HEX>``, a leading digit gets ``_``."""
    out: list[str] = []
    for i, ch in enumerate(name):
        valid = ch == "_" or ("a" <= ch <= "z") or ("A" <= ch <= "Z") or (i > 0 and "0" <= ch <= "9")
        if valid:
            out.append(ch)
        elif i == 0 and "0" <= ch <= "9":
            out.append("_" + ch)
        else:
            out.append(f"_x{ord(ch):X}")
    return "".join(out) or "_"


def partition_record(partition_type: StructType) -> AvroSchema:
    return {
        "type": "record", "name": "r102",
        "fields": [
            {"name": avro_name(f.name), "type": _opt(avro_primitive(f.field_type, str(f.field_id))),
             "field-id": f.field_id, "default": None}
            for f in partition_type.fields
        ],
    }


def manifest_entry_schema(partition_type: StructType, format_version: int = 2) -> AvroSchema:
    """The manifest entry schema; format v3 adds row lineage (142) and deletion vector fields (144, 145)."""
    data_file: AvroSchema = {
        "type": "record", "name": "r2",
        "fields": [
            {"name": "content", "type": "int", "field-id": 134, "doc": "Contents of the file: 0=data, 1=position deletes, 2=equality deletes"},
            {"name": "file_path", "type": "string", "field-id": 100, "doc": "Location URI with FS scheme"},
            {"name": "file_format", "type": "string", "field-id": 101, "doc": "File format name: avro, orc, or parquet"},
            {"name": "partition", "type": partition_record(partition_type), "field-id": 102, "doc": "Partition data tuple, schema based on the partition spec"},
            {"name": "record_count", "type": "long", "field-id": 103, "doc": "Number of records in the file"},
            {"name": "file_size_in_bytes", "type": "long", "field-id": 104, "doc": "Total file size in bytes"},
            _int_map(108, "column_sizes", 117, 118, "long"),
            _int_map(109, "value_counts", 119, 120, "long"),
            _int_map(110, "null_value_counts", 121, 122, "long"),
            _int_map(137, "nan_value_counts", 138, 139, "long"),
            _int_map(125, "lower_bounds", 126, 127, "bytes"),
            _int_map(128, "upper_bounds", 129, 130, "bytes"),
            {"name": "key_metadata", "type": ["null", "bytes"], "field-id": 131, "default": None},
            {"name": "split_offsets", "type": _opt({"type": "array", "items": "long", "element-id": 133}),
             "field-id": 132, "default": None},
            {"name": "equality_ids", "type": _opt({"type": "array", "items": "int", "element-id": 136}),
             "field-id": 135, "default": None},
            {"name": "sort_order_id", "type": ["null", "int"], "field-id": 140, "default": None},
            {"name": "referenced_data_file", "type": ["null", "string"], "field-id": 143, "default": None,
             "doc": "Fully qualified location of the data file all deletes of this file reference"},
        ],
    }
    if format_version >= 3:
        fields: list[AvroSchema] = data_file["fields"]
        fields.insert(len(fields) - 1, {"name": "first_row_id", "type": ["null", "long"], "field-id": 142,
                                        "default": None, "doc": "The _row_id of the first row in the data file"})
        fields += [
            {"name": "content_offset", "type": ["null", "long"], "field-id": 144, "default": None,
             "doc": "The offset in the file where the content starts"},
            {"name": "content_size_in_bytes", "type": ["null", "long"], "field-id": 145, "default": None,
             "doc": "The length of a referenced content stored in the file"},
        ]
    return {
        "type": "record", "name": "manifest_entry",
        "fields": [
            {"name": "status", "type": "int", "field-id": 0},
            {"name": "snapshot_id", "type": ["null", "long"], "field-id": 1, "default": None},
            {"name": "sequence_number", "type": ["null", "long"], "field-id": 3, "default": None},
            {"name": "file_sequence_number", "type": ["null", "long"], "field-id": 4, "default": None},
            {"name": "data_file", "type": data_file, "field-id": 2},
        ],
    }


MANIFEST_LIST_SCHEMA: AvroSchema = {
    "type": "record", "name": "manifest_file",
    "fields": [
        {"name": "manifest_path", "type": "string", "field-id": 500, "doc": "Location URI with FS scheme"},
        {"name": "manifest_length", "type": "long", "field-id": 501, "doc": "Total file size in bytes"},
        {"name": "partition_spec_id", "type": "int", "field-id": 502, "doc": "Spec ID used to write"},
        {"name": "content", "type": "int", "field-id": 517, "doc": "Contents of the manifest: 0=data, 1=deletes"},
        {"name": "sequence_number", "type": "long", "field-id": 515, "doc": "Sequence number when the manifest was added"},
        {"name": "min_sequence_number", "type": "long", "field-id": 516, "doc": "Lowest sequence number in the manifest"},
        {"name": "added_snapshot_id", "type": "long", "field-id": 503, "doc": "Snapshot ID that added the manifest"},
        {"name": "added_files_count", "type": "int", "field-id": 504, "doc": "Added entry count"},
        {"name": "existing_files_count", "type": "int", "field-id": 505, "doc": "Existing entry count"},
        {"name": "deleted_files_count", "type": "int", "field-id": 506, "doc": "Deleted entry count"},
        {"name": "added_rows_count", "type": "long", "field-id": 512, "doc": "Added rows count"},
        {"name": "existing_rows_count", "type": "long", "field-id": 513, "doc": "Existing rows count"},
        {"name": "deleted_rows_count", "type": "long", "field-id": 514, "doc": "Deleted rows count"},
        {"name": "partitions", "field-id": 507, "default": None, "doc": "Summary for each partition",
         "type": ["null", {"type": "array", "element-id": 508, "items": {
             "type": "record", "name": "r508", "fields": [
                 {"name": "contains_null", "type": "boolean", "field-id": 509, "doc": "True if any file has a null partition value"},
                 {"name": "contains_nan", "type": ["null", "boolean"], "field-id": 518, "default": None, "doc": "True if any file has a nan partition value"},
                 {"name": "lower_bound", "type": ["null", "bytes"], "field-id": 510, "default": None, "doc": "Partition lower bound for all files"},
                 {"name": "upper_bound", "type": ["null", "bytes"], "field-id": 511, "default": None, "doc": "Partition upper bound for all files"},
             ]}}]},
        {"name": "key_metadata", "type": ["null", "bytes"], "field-id": 519, "default": None, "doc": "Encryption key metadata blob"},
    ],
}

# format v3 adds the first row id a data manifest's files inherit from (field 520)
MANIFEST_LIST_SCHEMA_V3: AvroSchema = dict(MANIFEST_LIST_SCHEMA, fields=MANIFEST_LIST_SCHEMA["fields"] + [
    {"name": "first_row_id", "type": ["null", "long"], "field-id": 520, "default": None,
     "doc": "Starting row ID to assign to new rows in ADDED data files"},
])
