# pyright: strict
"""Avro data files of Paimon tables (``file.format = 'avro'``), written and read with fastavro.

The file's schema is the one Paimon's ``AvroSchemaConverter`` derives from the columns' Paimon types:
the top-level record is ``org.apache.paimon.avro.generated.record`` and a nested ROW is a record
named after its parent and its field (``<parent>_<field>``); a nullable type is the union
``["null", type]`` with a null default. BOOLEAN, INT (TINYINT, SMALLINT, INT), BIGINT, FLOAT and
DOUBLE are Avro's own; CHAR, VARCHAR are ``string``; BINARY, VARBINARY ``bytes``; DECIMAL(p, s)
``bytes`` with the ``decimal`` logical type; DATE ``int`` ``date``; TIME(p <= 3) ``int``
``time-millis``; TIMESTAMP(p) ``long`` ``timestamp-millis`` (p <= 3) or ``timestamp-micros``
(p <= 6), and TIMESTAMP(p) WITH LOCAL TIME ZONE the ``local-timestamp-*`` forms (both hold epoch
units, as Paimon writes them); ARRAY an ``array``; a MAP with CHAR/VARCHAR keys an Avro ``map``,
any other MAP an array of ``{key, value}`` records (logical type ``map``). ``file.compression``
is the Avro codec (zstd as ``zstandard``, ``deflate``, ``none``).

Reading needs no Paimon schema: the file's own schema gives each column's Arrow type (then the
reader matches columns by field id, as for the other formats).
"""
from __future__ import annotations

import datetime as _dt
import io as _io
import json
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional, Sequence

import fastavro

from icefloe.core import types as core
from icefloe.errors import SchemaError
from icefloe.paimon import types as pt

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.paimon.types import DataField

RECORD = "org.apache.paimon.avro.generated.record"
CODECS = {"zstd": "zstandard", "deflate": "deflate", "none": "null", "uncompressed": "null"}
AvroSchema = Any            # a parsed-to-JSON Avro schema: a type name, a dict or a union list


# --------------------------------------------------------------------------- Paimon type -> Avro schema
def _nullable(schema: AvroSchema, nullable: bool) -> AvroSchema:
    return ["null", schema] if nullable else schema


def avro_type(t: core.IcebergType, nullable: bool, name: str) -> AvroSchema:
    """The Avro schema of a Paimon type (``name``: the record name a ROW here takes)."""
    r = pt.root(t) if t.is_primitive else None
    base: AvroSchema
    if r == "BOOLEAN":
        base = "boolean"
    elif r in ("TINYINT", "SMALLINT", "INT"):
        base = "int"
    elif r == "BIGINT":
        base = "long"
    elif r == "FLOAT":
        base = "float"
    elif r == "DOUBLE":
        base = "double"
    elif r in ("CHAR", "VARCHAR"):
        base = "string"
    elif r in ("BINARY", "VARBINARY"):
        base = "bytes"
    elif r == "DECIMAL":
        base = {"type": "bytes", "logicalType": "decimal", "precision": getattr(t, "precision"),
                "scale": getattr(t, "scale")}
    elif r == "DATE":
        base = {"type": "int", "logicalType": "date"}
    elif r == "TIME":
        if core.precision_of(t) > 3:
            raise SchemaError(f"an Avro data file holds TIME of precision 3 at most, not {t} (as in Paimon)")
        base = {"type": "int", "logicalType": "time-millis"}
    elif r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        p = core.precision_of(t)
        if p > 6:
            raise SchemaError(f"an Avro data file holds timestamps of precision 6 at most, not {t} (as in Paimon)")
        unit = "millis" if p <= 3 else "micros"
        base = {"type": "long", "logicalType": f"{'local-' if r == 'TIMESTAMP_LTZ' else ''}timestamp-{unit}"}
    elif isinstance(t, core.StructType):
        base = {"type": "record", "name": name,
                "fields": [_field(f.name, f.field_type, not f.required, f"{name}_{f.name}") for f in t.fields]}
    elif isinstance(t, core.ListType):
        base = {"type": "array", "items": avro_type(t.element_type, not t.element_required, name)}
    elif isinstance(t, core.MapType):
        value = avro_type(t.value_type, not t.value_required, name)
        text_keys = t.key_type.is_primitive and pt.root(t.key_type) in ("CHAR", "VARCHAR")
        if text_keys:
            base = {"type": "map", "values": value}
        else:
            entry = {"type": "record", "name": name,
                     "fields": [{"name": "key", "type": avro_type(t.key_type, False, f"{name}_key")},
                                {"name": "value", "type": avro_type(t.value_type, not t.value_required,
                                                                   f"{name}_value"),
                                 **({"default": None} if not t.value_required else {})}]}
            base = {"type": "array", "items": entry, "logicalType": "map"}
    else:
        raise SchemaError(f"icefloe writes no {t} column in an Avro data file; use file.format 'parquet' or 'orc'")
    return _nullable(base, nullable)


def _field(name: str, t: core.IcebergType, nullable: bool, record_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "type": avro_type(t, nullable, record_name)}
    if nullable:
        out["default"] = None
    return out


def file_schema(columns: Sequence[tuple[str, core.IcebergType, bool]]) -> dict[str, Any]:
    """The Avro schema of a data file of ``columns`` (name, Paimon type, nullable), in order."""
    return {"type": "record", "name": RECORD,
            "fields": [_field(n, t, nullable, f"{RECORD}_{n}") for n, t, nullable in columns]}


# the columns Paimon's writers add to a data file, by name: (type, nullable unless the file says)
KEY_PREFIX = "_KEY_"
_SYSTEM: dict[str, core.IcebergType] = {"_SEQUENCE_NUMBER": core.LongType(), "_VALUE_KIND": core.ByteType(),
                                        "_ROW_ID": core.LongType()}


def columns_of(data: pa.Schema, fields: Sequence[DataField]) -> list[tuple[str, core.IcebergType, bool]]:
    """(name, Paimon type, nullable) of each column of a data file about to be written: the table's
    columns as declared, the key copies (``_KEY_<k>``) as their key's type, NOT NULL, and the system
    columns (``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, ``_ROW_ID``) as Paimon types them."""
    by_name = {f.name: f for f in fields}
    out: list[tuple[str, core.IcebergType, bool]] = []
    for col in data:
        f = by_name.get(col.name)
        if f is not None:
            out.append((col.name, f.type, f.nullable))
        elif col.name.startswith(KEY_PREFIX) and col.name[len(KEY_PREFIX):] in by_name:
            out.append((col.name, by_name[col.name[len(KEY_PREFIX):]].type, False))
        elif col.name in _SYSTEM:
            out.append((col.name, _SYSTEM[col.name], col.nullable))
        else:
            raise SchemaError(f"column {col.name!r} of a data file is not a column of the table")
    return out


def check_fields(fields: Sequence[DataField]) -> None:
    """Raise unless every column has an Avro form icefloe writes."""
    file_schema([(f.name, f.type, f.nullable) for f in fields])


# --------------------------------------------------------------------------- writing
def _epoch(unit: str) -> Callable[[Any], Any]:
    scale = 1000 if unit == "millis" else 1_000_000
    naive = _dt.datetime(1970, 1, 1)
    aware = naive.replace(tzinfo=_dt.timezone.utc)

    def convert(v: Any) -> Any:
        if not isinstance(v, _dt.datetime):
            return v
        delta = v - (aware if v.tzinfo is not None else naive)
        return (delta.days * 86_400 + delta.seconds) * scale + delta.microseconds * scale // 1_000_000

    return convert


def _is_union(schema: Any) -> bool:
    """A union (a JSON list); a plain bool, so the schema stays ``Any`` to the type checker."""
    return isinstance(schema, list)


def _is_complex(schema: Any) -> bool:
    """A record, array, map or annotated type (a JSON object)."""
    return isinstance(schema, dict)


def _same(v: Any) -> Any:
    return v


def _writer_of(schema: AvroSchema) -> Optional[Callable[[Any], Any]]:
    """A function turning Arrow's Python value into the datum of ``schema``; None when it is the same."""
    if _is_union(schema):
        inner = _writer_of([s for s in schema if s != "null"][0])
        if inner is None:
            return None
        return lambda v: None if v is None else inner(v)
    if not _is_complex(schema):
        return None
    logical = schema.get("logicalType", "")
    kind = schema["type"]
    if logical.endswith(("timestamp-millis", "timestamp-micros")):
        return _epoch(logical.rsplit("-", 1)[1])
    if logical == "time-millis":
        return lambda v: v.hour * 3_600_000 + v.minute * 60_000 + v.second * 1000 + v.microsecond // 1000
    if logical == "date":
        return lambda v: (v - _dt.date(1970, 1, 1)).days if isinstance(v, _dt.date) else v
    if kind == "record":
        parts = [(f["name"], _writer_of(f["type"])) for f in schema["fields"]]
        if all(w is None for _n, w in parts):
            return None
        return lambda v: {n: (v[n] if w is None or v[n] is None else w(v[n])) for n, w in parts}
    if kind == "array" and logical == "map":
        key_w = _writer_of(schema["items"]["fields"][0]["type"]) or _same
        value_w = _writer_of(schema["items"]["fields"][1]["type"]) or _same
        return lambda v: [{"key": key_w(k), "value": None if x is None else value_w(x)} for k, x in v]
    if kind == "array":
        item = _writer_of(schema["items"])
        return None if item is None else (lambda v: [None if x is None else item(x) for x in v])
    if kind == "map":
        value = _writer_of(schema["values"])
        return lambda v: {k: (x if value is None or x is None else value(x)) for k, x in v}
    return None


def write_avro_bytes(data: pa.Table, columns: Sequence[tuple[str, core.IcebergType, bool]],
                     compression: str = "zstd") -> bytes:
    """``data`` (its columns named as ``columns``) as one Avro data file."""
    codec = CODECS.get(compression.lower())
    if codec is None:
        raise SchemaError(f"file.compression {compression!r} is not an Avro codec icefloe writes; "
                          f"use one of {', '.join(CODECS)}")
    schema = file_schema(columns)
    names = [c[0] for c in columns]
    values: list[list[Any]] = []
    for f, name in zip(schema["fields"], names):
        col = data.column(name).to_pylist()
        w = _writer_of(f["type"])
        values.append(col if w is None else [None if v is None else w(v) for v in col])
    records = (dict(zip(names, row)) for row in zip(*values)) if values else iter(())
    buf = _io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec)  # pyright: ignore[reportUnknownMemberType]
    return buf.getvalue()


# --------------------------------------------------------------------------- reading
def arrow_type(schema: AvroSchema) -> tuple[pa.DataType, bool]:
    """The Arrow type of an Avro schema of a Paimon data file, and whether it is nullable."""
    import pyarrow as pa

    if _is_union(schema):
        rest = [s for s in schema if s != "null"]
        if len(rest) != 1:
            raise SchemaError(f"an Avro union of {schema} is no Paimon column type")
        return arrow_type(rest[0])[0], len(rest) != len(schema)
    if isinstance(schema, str):
        simple = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
                  "double": pa.float64(), "string": pa.string(), "bytes": pa.binary()}
        if schema not in simple:
            raise SchemaError(f"an Avro {schema!r} is no Paimon column type")
        return simple[schema], False
    kind, logical = schema["type"], schema.get("logicalType", "")
    if logical == "decimal":
        return pa.decimal128(schema["precision"], schema.get("scale", 0)), False
    if logical == "date":
        return pa.date32(), False
    if logical == "time-millis":
        return pa.time32("ms"), False
    if logical.endswith(("timestamp-millis", "timestamp-micros")):
        unit = "ms" if logical.endswith("millis") else "us"
        return pa.timestamp(unit, tz="UTC" if logical.startswith("local-") else None), False
    if kind == "record":
        fields = [pa.field(f["name"], *arrow_type(f["type"])) for f in schema["fields"]]
        return pa.struct(fields), False
    if kind == "array" and logical == "map":
        key, _ = arrow_type(schema["items"]["fields"][0]["type"])
        value, value_null = arrow_type(schema["items"]["fields"][1]["type"])
        return pa.map_(key, pa.field("value", value, value_null)), False
    if kind == "array":
        item, item_null = arrow_type(schema["items"])
        return pa.list_(pa.field("element", item, item_null)), False
    if kind == "map":
        value, value_null = arrow_type(schema["values"])
        return pa.map_(pa.string(), pa.field("value", value, value_null)), False
    if (_is_complex(kind) or _is_union(kind) or isinstance(kind, str)) and kind not in ("record", "array", "map"):
        return arrow_type(kind)
    raise SchemaError(f"an Avro {kind!r} is no Paimon column type")


def _reader_of(schema: AvroSchema) -> Optional[Callable[[Any], Any]]:
    """A function turning fastavro's datum into the Python value Arrow takes; None when the same."""
    if _is_union(schema):
        inner = _reader_of([s for s in schema if s != "null"][0])
        return None if inner is None else (lambda v: None if v is None else inner(v))
    if not _is_complex(schema):
        return None
    kind, logical = schema["type"], schema.get("logicalType", "")
    if kind == "record":
        parts = [(f["name"], _reader_of(f["type"])) for f in schema["fields"]]
        if all(r is None for _n, r in parts):
            return None
        return lambda v: {n: (v[n] if r is None or v[n] is None else r(v[n])) for n, r in parts}
    if kind == "array" and logical == "map":
        key_r = _reader_of(schema["items"]["fields"][0]["type"]) or _same
        value_r = _reader_of(schema["items"]["fields"][1]["type"]) or _same
        return lambda v: [(key_r(e["key"]), None if e["value"] is None else value_r(e["value"])) for e in v]
    if kind == "array":
        item = _reader_of(schema["items"])
        return None if item is None else (lambda v: [None if x is None else item(x) for x in v])
    if kind == "map":
        value = _reader_of(schema["values"])
        return lambda v: [(k, x if value is None or x is None else value(x)) for k, x in v.items()]
    return None


_EPOCH_TYPES = ("date", "time-millis", "timestamp-millis", "timestamp-micros", "local-timestamp-millis",
                "local-timestamp-micros")


def _as_numbers(schema: AvroSchema) -> AvroSchema:
    """``schema`` with its dates, times and timestamps read as the numbers they are stored as (Arrow
    takes epoch numbers for those types exactly, fastavro's datetimes would pass through time zones)."""
    if _is_union(schema):
        return [_as_numbers(s) for s in schema]
    if not _is_complex(schema):
        return schema
    if schema.get("logicalType") in _EPOCH_TYPES:
        return schema["type"]
    out = dict(schema)
    if out["type"] == "record":
        out["fields"] = [{**f, "type": _as_numbers(f["type"])} for f in out["fields"]]
    elif out["type"] == "array":
        out["items"] = _as_numbers(out["items"])
    elif out["type"] == "map":
        out["values"] = _as_numbers(out["values"])
    elif (_is_complex(out["type"]) or _is_union(out["type"])):
        out["type"] = _as_numbers(out["type"])
    return out


def _columns(schema: Mapping[str, Any]) -> tuple[pa.Schema, list[tuple[str, Optional[Callable[[Any], Any]]]]]:
    import pyarrow as pa

    if schema.get("type") != "record":
        raise SchemaError("an Avro data file of a Paimon table holds records")
    fields = [pa.field(f["name"], *arrow_type(f["type"])) for f in schema["fields"]]
    return pa.schema(fields), [(f["name"], _reader_of(f["type"])) for f in schema["fields"]]


def _table(rows: list[dict[str, Any]], schema: pa.Schema,
           readers: Sequence[tuple[str, Optional[Callable[[Any], Any]]]]) -> pa.Table:
    import pyarrow as pa

    arrays: list[pa.Array] = []
    for (name, r), f in zip(readers, schema):
        col = [row[name] for row in rows]
        if r is not None:
            col = [None if v is None else r(v) for v in col]
        arrays.append(pa.array(col, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _writer_schema(reader: Any) -> dict[str, Any]:
    """The schema a data file was written with, as its header holds it (JSON)."""
    return json.loads(reader.metadata["avro.schema"])


def avro_file_schema(fh: IO[bytes]) -> pa.Schema:
    """The Arrow schema of an Avro data file (from its header)."""
    reader: Any = fastavro.reader(fh)  # pyright: ignore[reportUnknownMemberType]
    return _columns(_writer_schema(reader))[0]


def iter_avro_tables(fh: IO[bytes], batch_rows: int = 65536,
                     columns: Optional[Sequence[str]] = None) -> Iterator[pa.Table]:
    """An Avro data file as Arrow tables of at most ``batch_rows`` rows (one empty table for a file
    without rows); ``columns``: only these."""
    import pyarrow as pa

    raw = _io.BytesIO(fh.read())
    writer_schema = _writer_schema(fastavro.reader(raw))  # pyright: ignore[reportUnknownMemberType]
    schema, readers = _columns(writer_schema)
    raw.seek(0)
    reader: Any = fastavro.reader(raw, reader_schema=_as_numbers(writer_schema))  # pyright: ignore[reportUnknownMemberType]
    if columns is not None:
        keep: list[int] = [int(schema.get_field_index(c)) for c in columns]
        if -1 in keep:
            raise SchemaError(f"an Avro data file has no column {list(columns)[keep.index(-1)]!r}")
        schema = pa.schema([schema.field(i) for i in keep])
        readers = [readers[i] for i in keep]      # (the columns asked for, in that order)
    rows: list[dict[str, Any]] = []
    empty = True
    for rec in reader:
        rows.append(rec)
        if len(rows) >= batch_rows:
            empty = False
            yield _table(rows, schema, readers)
            rows = []
    if rows or empty:
        yield _table(rows, schema, readers)


def read_avro_table(fh: IO[bytes], columns: Optional[Sequence[str]] = None) -> pa.Table:
    """An Avro data file as one Arrow table (``columns``: only these)."""
    import pyarrow as pa

    return pa.concat_tables(list(iter_avro_tables(fh, 1 << 62, columns)))


__all__ = ["avro_type", "file_schema", "check_fields", "write_avro_bytes", "arrow_type", "avro_file_schema",
           "iter_avro_tables", "read_avro_table", "columns_of", "CODECS", "RECORD"]
