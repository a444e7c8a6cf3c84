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
from typing import Optional

from icefloe.core.io import FileAlreadyExistsError, FileIO
from icefloe.errors import CorruptMetadataError, SchemaError, TableAlreadyExistsError
from icefloe.paimon import options as opt
from icefloe.paimon.types import (
    AtomicType, DataField, field_to_json, highest_field_id, parse_field,
)

CURRENT_VERSION = 3
SCHEMA_DIR = "schema"
SCHEMA_PREFIX = "schema-"
_SCHEMA_FILE_RE = re.compile(r"^schema-(\d+)$")


@dataclass
class TableSchema:
    id: int
    fields: list
    partition_keys: list = field(default_factory=list)
    primary_keys: list = field(default_factory=list)
    options: dict = field(default_factory=dict)
    comment: Optional[str] = None
    time_millis: int = field(default_factory=lambda: int(time.time() * 1000))
    highest_field_id: Optional[int] = None
    version: int = CURRENT_VERSION

    def __post_init__(self):
        if self.highest_field_id is None:
            self.highest_field_id = highest_field_id(self.fields)

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> str:
        doc = {
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
            return TableSchema(
                id=int(doc["id"]),
                fields=[parse_field(f) for f in doc["fields"]],
                partition_keys=list(doc.get("partitionKeys") or []),
                primary_keys=list(doc.get("primaryKeys") or []),
                options={str(k): str(v) for k, v in (doc.get("options") or {}).items()},
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
    def partition_types(self) -> list:
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


def validate(schema: TableSchema) -> None:
    """The rules icefloe enforces at create time (append tables only)."""
    names = [f.name for f in schema.fields]
    if not names:
        raise SchemaError("a table needs at least one column")
    lowered = [n.lower() for n in names]
    if len(set(lowered)) != len(lowered):
        raise SchemaError(f"duplicate column names in {names}")
    if schema.primary_keys or schema.options.get(opt.PRIMARY_KEY):
        raise SchemaError("icefloe only supports Paimon append tables (no primary key)")
    for k in schema.partition_keys:
        f = schema.field(k)
        if not isinstance(f.type, AtomicType):
            raise SchemaError(f"partition key {k!r} must have an atomic type, not {f.type}")
    if len(set(schema.partition_keys)) != len(schema.partition_keys):
        raise SchemaError(f"duplicate partition keys {schema.partition_keys}")
    co = schema.core_options
    if co.file_format != "parquet":
        raise SchemaError(f"file.format {co.file_format!r} is not supported; icefloe writes parquet")
    bucket = co.bucket
    if bucket == 0 or bucket < -1:
        raise SchemaError(f"bucket must be -1 (bucket-unaware) or a positive number, got {bucket}")
    if bucket > 0:
        if not co.bucket_key:
            raise SchemaError("a bucketed append table needs a 'bucket-key' option "
                              "(the columns whose hash picks the bucket)")
        for k in co.bucket_key:
            f = schema.field(k)
            if k in schema.partition_keys:
                raise SchemaError(f"bucket key {k!r} must not be a partition key")
            if not isinstance(f.type, AtomicType):
                raise SchemaError(f"bucket key {k!r} must have an atomic type, not {f.type}")
    elif co.bucket_key:
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
    ids = []
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
