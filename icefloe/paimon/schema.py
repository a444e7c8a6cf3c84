# pyright: strict
"""Schema files: ``<table>/schema/schema-N``, one JSON document per schema version.

    {
      "version" : 3,
      "id" : 0,
      "fields" : [ {"id" : 0, "name" : "id", "type" : "BIGINT NOT NULL"}, ... ],
      "highestFieldId" : 1,
      "partitionKeys" : [ "dt" ],
      "primaryKeys" : [ ],
      "options" : { "bucket" : "4", "bucket-key" : "id" },
      "timeMillis" : 1718000000000
    }

A new table writes ``schema-0`` with create-if-absent, which is also how two
concurrent creators of one table are told apart. Paimon field ids start at 0;
nested ROW fields have ids too and ``highestFieldId`` covers them.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Protocol, cast

from icefloe.core.io import FileAlreadyExistsError, FileIO
from icefloe.errors import CorruptMetadataError, SchemaError, TableAlreadyExistsError
from icefloe.paimon import avro_data
from icefloe.paimon import chain_options
from icefloe.paimon import options as opt
from icefloe.paimon.file_index import check_options as check_index_options
from icefloe.paimon import row_tracking
from icefloe.paimon.iceberg_options import check_schema
from icefloe.paimon.tag_period import auto_tag_options
from icefloe.core import types as core
from icefloe.paimon.types import DataField, field_to_json, highest_field_id, parse_field, to_arrow_schema, to_arrow_type

if TYPE_CHECKING:
    import pyarrow as pa

CURRENT_VERSION = 3
SCHEMA_DIR = "schema"
SCHEMA_PREFIX = "schema-"
_SCHEMA_FILE_RE = re.compile(r"^schema-(\d+)$")


@dataclass
class TableSchema:
    id: int
    fields: list[DataField]
    partition_keys: list[str] = field(default_factory=list[str])
    primary_keys: list[str] = field(default_factory=list[str])
    options: dict[str, str] = field(default_factory=dict[str, str])
    comment: Optional[str] = None
    time_millis: int = field(default_factory=lambda: int(time.time() * 1000))
    highest_field_id: Optional[int] = None
    version: int = CURRENT_VERSION

    def __post_init__(self) -> None:
        if self.highest_field_id is None:
            self.highest_field_id = highest_field_id(self.fields)

    @property
    def highest_id(self) -> int:
        """The highest field id the table ever assigned (from the fields when the file does not say)."""
        return self.highest_field_id if self.highest_field_id is not None else highest_field_id(self.fields)

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> str:
        doc: dict[str, Any] = {
            "version": self.version,
            "id": self.id,
            "fields": [field_to_json(f) for f in self.fields],
            "highestFieldId": self.highest_field_id,
            "partitionKeys": list(self.partition_keys),
            "primaryKeys": list(self.primary_keys),
            "options": dict(self.options),
        }
        if self.comment is not None:
            doc["comment"] = self.comment
        doc["timeMillis"] = self.time_millis
        return json.dumps(doc, indent=2, separators=(",", " : "), ensure_ascii=False)

    @staticmethod
    def from_json(text: str, path: str = "<schema>") -> "TableSchema":
        try:
            doc = json.loads(text)
            if not isinstance(doc, dict):
                raise ValueError(f"a JSON {type(doc).__name__}, not an object")
            doc = cast(dict[str, Any], doc)
            options: Mapping[Any, Any] = doc.get("options") or {}
            return TableSchema(
                id=int(doc["id"]),
                fields=[parse_field(f) for f in doc["fields"]],
                partition_keys=list(doc.get("partitionKeys") or []),
                primary_keys=list(doc.get("primaryKeys") or []),
                options={str(k): str(v) for k, v in options.items()},
                comment=doc.get("comment"),
                time_millis=int(doc.get("timeMillis") or 0),
                highest_field_id=int(doc["highestFieldId"]) if "highestFieldId" in doc else None,
                version=int(doc.get("version", 1)),
            )
        except (ValueError, KeyError, TypeError, SchemaError) as e:
            raise CorruptMetadataError(path, f"not a Paimon schema file: {e}") from None

    # ------------------------------------------------------------------ derived views
    @property
    def core_options(self) -> opt.CoreOptions:
        return opt.CoreOptions(self.options)

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise SchemaError(f"no column {name!r}; columns are {', '.join(self.field_names)}")

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    @property
    def partition_fields(self) -> list[DataField]:
        return [self.field(k) for k in self.partition_keys]

    @property
    def partition_types(self) -> list[core.IcebergType]:
        return [f.type for f in self.partition_fields]

    @property
    def bucket_keys(self) -> list[str]:
        """``bucket-key`` if set, else the primary keys without partition keys."""
        keys = self.core_options.bucket_key
        return keys or [k for k in self.primary_keys if k not in self.partition_keys]

    @property
    def bucket_key_fields(self) -> list[DataField]:
        return [self.field(k) for k in self.bucket_keys]

    @property
    def num_buckets(self) -> int:
        return self.core_options.bucket


def _validate_primary_key(schema: TableSchema) -> None:
    """Paimon's rules for a primary key (fixed or dynamic buckets)."""
    pk = schema.primary_keys
    if len(set(pk)) != len(pk):
        raise SchemaError(f"duplicate primary-key columns {pk}")
    for k in pk:
        f = schema.field(k)
        if not f.type.is_primitive:
            raise SchemaError(f"primary-key column {k!r} must have an atomic type, not {f.type}")
        if f.nullable:
            raise SchemaError(f"primary-key column {k!r} must be NOT NULL")
    missing = [k for k in schema.partition_keys if k not in pk]
    if missing:
        raise SchemaError(f"the primary key {pk} must include every partition key (missing {missing})")
    co = schema.core_options
    if co.bucket == 0 or co.bucket < -1:
        raise SchemaError(f"'bucket' = {co.bucket}: a primary-key table has a fixed number of buckets (> 0) or "
                          "dynamic buckets (-1, the default)")
    if co.bucket == -1 and co.bucket_key:
        raise SchemaError("a dynamic-bucket table ('bucket' = -1) cannot set 'bucket-key'")
    trimmed = [k for k in pk if k not in schema.partition_keys] or list(pk)
    for k in co.bucket_key or []:
        if k not in trimmed:
            raise SchemaError(f"bucket key {k!r} must be a primary-key column that is not a partition key "
                              f"({trimmed})")
    engine = str(schema.options.get("merge-engine", "deduplicate")).lower()
    if engine not in ("deduplicate", "first-row", "partial-update", "aggregation"):
        raise SchemaError(f"unknown merge-engine {engine!r}: deduplicate, first-row, partial-update or aggregation")


def check_vector_rules(schema: TableSchema) -> None:
    """Paimon's rules for deletion vectors: the changelog producers and merge engines they take."""
    pk = schema.primary_keys
    producer = schema.core_options.changelog_producer
    vectors = schema.core_options.deletion_vectors_enabled
    if pk and producer == "full-compaction" and vectors:
        # Paimon's own rule: its full-compaction changelog compares the top level's records, which
        # vectors hide once a newer record of the key is compacted below it
        raise SchemaError(f"'changelog-producer' = {producer!r} cannot be used with deletion vectors "
                          "(as in Paimon, vectors take 'none', 'input' or 'lookup')")
    if pk and vectors and str(schema.options.get("merge-engine", "deduplicate")).lower() == "first-row":
        raise SchemaError("the first-row merge engine does not take deletion vectors (as in Paimon: it never "
                          "deletes an older record, and its reads already leave level 0 out)")


FALLBACK_BRANCH = "scan.fallback-branch"


_FORMATS = ("parquet", "orc", "avro")
_ORC_CODECS = ("zstd", "lz4", "snappy", "zlib", "none", "uncompressed")


def check_file_format(schema: TableSchema) -> None:
    """``file.format``: parquet, ORC (written with Arrow's ORC writer) or Avro (fastavro,
    ``avro_data``) on any table: append, primary-key (its key-value and changelog files),
    deletion vectors, row tracking. Changelog files are written in the table's format, and
    ``file.block-size`` (or the format's own key) must be a size; Avro files have no row groups
    or stripes for it to size."""
    co = schema.core_options
    fmt = co.file_format
    if fmt not in _FORMATS:
        raise SchemaError(f"file.format {fmt!r} is not supported; icefloe writes parquet, orc or avro")
    changelog = schema.options.get("changelog-file.format")
    if changelog and str(changelog).strip().lower() != fmt:
        raise SchemaError(f"changelog-file.format {changelog!r} is not supported on a table whose file.format is "
                          f"{fmt!r}: icefloe writes changelog files in the table's file.format (leave it unset)")
    co.block_size()                  # raises on a size that does not parse
    if fmt == "orc" and co.file_compression not in _ORC_CODECS:
        raise SchemaError(f"file.compression {co.file_compression!r} is not an ORC codec icefloe writes; "
                          f"use one of {', '.join(_ORC_CODECS)}")
    if fmt == "avro":
        if co.file_compression not in avro_data.CODECS:
            raise SchemaError(f"file.compression {co.file_compression!r} is not an Avro codec icefloe writes; "
                              f"use one of {', '.join(avro_data.CODECS)}")
        if str(schema.options.get(opt.FILE_BLOCK_SIZE) or "").strip():
            raise SchemaError(f"option {opt.FILE_BLOCK_SIZE!r} sizes Parquet row groups and ORC stripes; an Avro "
                              "data file has neither (Paimon's Avro writer does not take it): leave it unset")
        avro_data.check_fields(schema.fields)


def validate(schema: TableSchema) -> None:
    """The rules icefloe enforces at create time."""
    names = [f.name for f in schema.fields]
    if not names:
        raise SchemaError("a table needs at least one column")
    if schema.options.get(FALLBACK_BRANCH):
        raise SchemaError(f"'{FALLBACK_BRANCH}' is not supported: icefloe's reads do not fall back to another "
                          "branch for missing partitions (read the branch as db.`t$branch_b`)")
    lowered = [n.lower() for n in names]
    if len(set(lowered)) != len(lowered):
        raise SchemaError(f"duplicate column names in {names}")
    if schema.options.get(opt.PRIMARY_KEY):
        raise SchemaError("the primary key belongs in the schema's primaryKeys, not in options")
    pk = schema.primary_keys
    if pk:
        _validate_primary_key(schema)
    producer = schema.core_options.changelog_producer
    if producer != "none" and not pk:
        raise SchemaError(f"'changelog-producer' = {producer!r} needs a primary-key table; an append table's "
                          "changes are its appended rows")
    check_vector_rules(schema)
    opt.check_honoured(schema.options)
    chain_options.check_options(schema.options, schema.primary_keys, schema.partition_keys)
    check_index_options(schema.options, schema.fields)
    auto_tag_options(schema.options)      # the automatic-tag options parse (tag_period)
    row_tracking.check_schema(schema)
    check_schema(schema.options, schema.fields, schema.primary_keys)
    for k in schema.partition_keys:
        f = schema.field(k)
        if not f.type.is_primitive:
            raise SchemaError(f"partition key {k!r} must have an atomic type, not {f.type}")
    if len(set(schema.partition_keys)) != len(schema.partition_keys):
        raise SchemaError(f"duplicate partition keys {schema.partition_keys}")
    co = schema.core_options
    check_file_format(schema)
    bucket = co.bucket
    if bucket == 0 or bucket < -1:
        raise SchemaError(f"bucket must be -1 (bucket-unaware) or a positive number, got {bucket}")
    if bucket > 0 and not pk:
        if not co.bucket_key:
            raise SchemaError("a bucketed append table needs a 'bucket-key' option "
                              "(the columns whose hash picks the bucket)")
        for k in co.bucket_key:
            f = schema.field(k)
            if k in schema.partition_keys:
                raise SchemaError(f"bucket key {k!r} must not be a partition key")
            if not f.type.is_primitive:
                raise SchemaError(f"bucket key {k!r} must have an atomic type, not {f.type}")
    elif co.bucket_key and not pk:
        raise SchemaError("'bucket-key' needs a fixed bucket count ('bucket' > 0)")
    for key in (opt.MANIFEST_TARGET_FILE_SIZE, opt.MANIFEST_FULL_COMPACTION_SIZE, opt.TARGET_FILE_SIZE):
        if opt.parse_memory_size(co.get(key)) <= 0:
            raise SchemaError(f"option {key!r} must be positive")
    co.stats_truncate_length  # noqa: B018 - validates metadata.stats-mode
    co.snapshot_time_retained_ms  # noqa: B018
    co.commit_max_retries  # noqa: B018


# --------------------------------------------------------------------------- files
def schema_path(table_path: str, schema_id: int) -> str:
    return f"{table_path}/{SCHEMA_DIR}/{SCHEMA_PREFIX}{schema_id}"


def list_schema_ids(io: FileIO, table_path: str) -> list[int]:
    ids: list[int] = []
    for name in io.list_dir(f"{table_path}/{SCHEMA_DIR}"):
        m = _SCHEMA_FILE_RE.match(name)
        if m:
            ids.append(int(m.group(1)))
    return sorted(ids)


def load_schema(io: FileIO, table_path: str, schema_id: int) -> TableSchema:
    path = schema_path(table_path, schema_id)
    try:
        text = io.read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        raise CorruptMetadataError(path, "schema file is missing") from None
    except UnicodeDecodeError:
        raise CorruptMetadataError(path, "schema file is not UTF-8 JSON") from None
    return TableSchema.from_json(text, path)


def latest_schema(io: FileIO, table_path: str) -> Optional[TableSchema]:
    ids = list_schema_ids(io, table_path)
    return load_schema(io, table_path, ids[-1]) if ids else None


def create_schema(io: FileIO, table_path: str, schema: TableSchema) -> None:
    """Write ``schema-0`` of a new table; fail if the table exists."""
    if list_schema_ids(io, table_path):
        raise TableAlreadyExistsError(f"table already exists at {table_path}")
    try:
        io.write_bytes(schema_path(table_path, schema.id), schema.to_json().encode("utf-8"), overwrite=False)
    except FileAlreadyExistsError:
        raise TableAlreadyExistsError(f"table already exists at {table_path}") from None


class SchemaHistory:
    """``schema-N`` files by id, each read once (a schema file never changes)."""
    def __init__(self, io: FileIO, table_path: str, known: Iterable[TableSchema] = ()):
        self.io = io
        self.table_path = table_path
        self._by_id = {s.id: s for s in known}

    def get(self, schema_id: int) -> TableSchema:
        s = self._by_id.get(schema_id)
        if s is None:
            s = self._by_id[schema_id] = load_schema(self.io, self.table_path, schema_id)
        return s

    __call__ = get


# --------------------------------------------------------------------------- reading older files
# A data file holds the columns of the schema it was written with (its ``schema_id``),
# under that schema's names. Reads match them to the read schema by field id, as Paimon
# does: a renamed column keeps its values, a column dropped and added again under the
# same name is a new id (nulls for older files), a widened column is cast, and a column
# added later is null for older files.
class LayoutField(Protocol):
    """What ``layout`` reads of a field: a shared ``NestedField`` or a ``DataField``."""
    @property
    def field_id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def field_type(self) -> core.IcebergType: ...


# (field id, name, nested shape) per field, nested shapes as ("ROW", ...), ("ARRAY", ...), ("MAP", ...)
Layout = tuple[Any, ...]


def same_layout(file_fields: Iterable[LayoutField], read_fields: Iterable[LayoutField]) -> bool:
    """Whether files of ``file_fields`` read under ``read_fields`` need nothing but casts
    by name (same ids, names and nested fields)."""
    return _layout(file_fields) == _layout(read_fields)


def _layout(fields: Iterable[LayoutField]) -> Layout:
    def shape(t: core.IcebergType) -> Layout:
        if isinstance(t, core.StructType):
            return ("ROW", _layout(t.fields))
        if isinstance(t, (core.ListType, core.MultisetType)):
            return ("ARRAY", shape(t.element_type))
        if isinstance(t, core.MapType):
            return ("MAP", shape(t.key_type), shape(t.value_type))
        return ()

    return tuple((f.field_id, f.name, shape(f.field_type)) for f in fields)


def layout(fields: Iterable[LayoutField]) -> Layout:
    """What files of ``fields`` share when they read alike: ids, names and nested shapes."""
    return _layout(fields)


def same_type_layout(a: core.IcebergType, b: core.IcebergType) -> bool:
    """Whether types ``a`` and ``b`` have the same nested ROW ids and names (casts suffice)."""
    return _layout([_Probe(a)]) == _layout([_Probe(b)])


def _column_named(names: Mapping[str, str], name: str) -> Optional[str]:
    """The physical column of a file for a schema field name (exact, else case-insensitive)."""
    return names.get(name, names.get(name.lower()))


def evolve_arrow(data: pa.Table, file_fields: Iterable[DataField], read_fields: list[DataField]) -> pa.Table:
    """A pyarrow Table of one data file (columns named as in ``file_fields``, the fields of
    the schema it was written with) as ``read_fields``: matched by field id, cast,
    nulls for ids the file's schema does not have."""
    import pyarrow as pa

    target = to_arrow_schema(read_fields, with_ids=False)
    names: dict[str, str] = {n: n for n in data.column_names}
    for n in data.column_names:
        names.setdefault(n.lower(), n)
    by_id = {f.id: f for f in file_fields}
    cols: list[pa.Array] = []
    for rf, tf in zip(read_fields, target):
        ff = by_id.get(rf.id)
        src = _column_named(names, ff.name) if ff is not None else None
        if ff is None or src is None:
            cols.append(pa.nulls(data.num_rows, tf.type))
            continue
        cols.append(_evolve_column(data.column(src), ff.type, rf.type, tf.type))
    return pa.Table.from_arrays(cols, schema=target)


def _evolve_column(col: pa.Array, ftype: core.IcebergType, rtype: core.IcebergType,
                   arrow_type: pa.DataType) -> pa.Array:
    import pyarrow as pa

    if isinstance(col, pa.ChunkedArray):
        chunks = [_evolve_array(c, ftype, rtype, arrow_type) for c in col.chunks]
        return pa.chunked_array(chunks, type=arrow_type)
    return _evolve_array(col, ftype, rtype, arrow_type)


def _evolve_array(arr: pa.Array, ftype: core.IcebergType, rtype: core.IcebergType,
                  arrow_type: pa.DataType) -> pa.Array:
    """One Arrow array of file type ``ftype`` as read type ``rtype`` (ROW fields by id)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if _layout([_Probe(ftype)]) == _layout([_Probe(rtype)]):
        return arr.cast(arrow_type) if arr.type != arrow_type else arr
    if isinstance(rtype, core.StructType) and isinstance(ftype, core.StructType):
        by_id = {f.field_id: f for f in ftype.fields}
        names: dict[str, int] = {arr.type.field(i).name: i for i in range(arr.type.num_fields)}
        for n, i in list(names.items()):
            names.setdefault(n.lower(), i)
        children: list[pa.Array] = []
        fields: list[pa.Field] = []
        for rf, af in zip(rtype.fields, arrow_type):
            ff = by_id.get(rf.field_id)
            idx = None
            if ff is not None:
                idx = names.get(ff.name, names.get(ff.name.lower()))
            if ff is None or idx is None:
                children.append(pa.nulls(len(arr), af.type))
            else:
                children.append(_evolve_array(arr.field(idx), ff.field_type, rf.field_type, af.type))
            fields.append(af)
        mask = pc.is_null(arr) if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    if isinstance(rtype, core.ListType) and isinstance(ftype, core.ListType):
        values = _evolve_array(arr.values, ftype.element_type, rtype.element_type, arrow_type.value_type)
        mask = pc.is_null(arr) if arr.null_count else None
        return pa.ListArray.from_arrays(arr.offsets, values, type=arrow_type, mask=mask)
    if isinstance(rtype, core.MapType) and isinstance(ftype, core.MapType):
        keys = _evolve_array(arr.keys, ftype.key_type, rtype.key_type, arrow_type.key_type)
        items = _evolve_array(arr.items, ftype.value_type, rtype.value_type, arrow_type.item_type)
        mask = pc.is_null(arr) if arr.null_count else None
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=arrow_type, mask=mask)
    return arr.cast(to_arrow_type(rtype))


class _Probe:
    """A stand-in field so a lone type can go through ``_layout``."""
    def __init__(self, t: core.IcebergType):
        self.field_id, self.name, self.field_type = -1, "", t


