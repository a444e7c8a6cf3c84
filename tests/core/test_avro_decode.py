"""core.avro_decode against fastavro: random schemas of every Avro type the manifests of both formats
use (records, nullable unions either way round, arrays, maps, Iceberg's key/value arrays, fixed, the
logical types), random values with nulls and empty arrays and maps, files of many blocks, every codec."""
from __future__ import annotations

import datetime as dt
import io
import itertools
import json
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icefloe.core import avro_decode, numba_cache

EPOCH = dt.datetime(1970, 1, 1)
_UNITS = {"timestamp-millis": dt.timedelta(milliseconds=1), "timestamp-micros": dt.timedelta(microseconds=1),
          "local-timestamp-millis": dt.timedelta(milliseconds=1),
          "local-timestamp-micros": dt.timedelta(microseconds=1)}

LEAVES = st.sampled_from([
    "boolean", "int", "long", "float", "double", "bytes", "string", {"type": "fixed", "size": 3},
    {"type": "fixed", "size": 16}, {"type": "int", "logicalType": "date"},
    {"type": "long", "logicalType": "timestamp-millis"}, {"type": "long", "logicalType": "timestamp-micros"},
    {"type": "long", "logicalType": "local-timestamp-micros"},
])


def _compound(child: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(child, min_size=1, max_size=4).map(lambda ts: {"type": "record", "fields": ts}),
        child.map(lambda t: {"type": "array", "items": t}),
        child.map(lambda t: {"type": "map", "values": t}),
        child.map(lambda t: {"type": "array", "logicalType": "map", "items": {
            "type": "record", "fields": ["int", t], "kv": True}}),
        child.map(lambda t: ["null", t]),
        child.map(lambda t: [t, "null"]),
    )


TYPES = st.recursive(LEAVES, _compound, max_leaves=12)


def _named(schema: Any, counter: itertools.count) -> Any:
    """``schema`` with names given to its records, fields and fixed types (unions in unions unwrapped)."""
    if isinstance(schema, list):
        inner = _named(next(t for t in schema if t != "null"), counter)
        if isinstance(inner, list):
            return inner
        return ["null", inner] if schema[0] == "null" else [inner, "null"]
    if isinstance(schema, str):
        return schema
    s = dict(schema)
    if s["type"] == "fixed":
        s["name"] = f"f{next(counter)}"
    elif s["type"] == "record":
        names = ["key", "value"] if s.pop("kv", False) else [f"c{i}" for i in range(len(s["fields"]))]
        s["name"] = f"r{next(counter)}"
        s["fields"] = [{"name": n, "type": _named(t, counter)} for n, t in zip(names, s["fields"])]
    elif s["type"] == "array":
        s["items"] = _named(s["items"], counter)
    elif s["type"] == "map":
        s["values"] = _named(s["values"], counter)
    return s


def _values(schema: Any) -> st.SearchStrategy[Any]:
    """Values of ``schema`` as fastavro writes them (logical types as their integers)."""
    if isinstance(schema, list):
        inner = next(t for t in schema if t != "null")
        return st.one_of(st.none(), _values(inner))
    if isinstance(schema, str):
        schema = {"type": schema}
    t, logical = schema["type"], schema.get("logicalType")
    if logical == "date":
        return st.integers(-100_000, 100_000)
    if logical in _UNITS:      # within datetime's years
        return st.integers(-2 * 10**11, 2 * 10**11) if "millis" in logical else st.integers(-2 * 10**14, 2 * 10**14)
    simple = {"boolean": st.booleans(), "int": st.integers(-2**31, 2**31 - 1), "long": st.integers(-2**63, 2**63 - 1),
              "float": st.floats(width=32, allow_nan=False), "double": st.floats(allow_nan=False),
              "bytes": st.binary(max_size=12), "string": st.text(max_size=12)}
    if t in simple:
        return simple[t]
    if t == "fixed":
        return st.binary(min_size=schema["size"], max_size=schema["size"])
    if t == "record":
        return st.fixed_dictionaries({f["name"]: _values(f["type"]) for f in schema["fields"]})
    if t == "array":
        return st.lists(_values(schema["items"]), max_size=4)
    return st.dictionaries(st.text(max_size=6), _values(schema["values"]), max_size=4)


def _integer(logical: str, v: Any) -> Any:
    """A date's or timestamp's value as the integer it is written as (naive: UTC)."""
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return (v - EPOCH) // _UNITS[logical]
    if isinstance(v, dt.date):
        return (v - EPOCH.date()).days
    return v


def _as_fastavro(schema: Any, v: Any, arrow: bool = True) -> Any:
    """A value of the decoded Arrow table (``to_pylist``), or of fastavro's (``arrow=False``), in
    fastavro's shape with logical types as integers."""
    if v is None:
        return None
    if isinstance(schema, list):
        return _as_fastavro(next(t for t in schema if t != "null"), v, arrow)
    if isinstance(schema, str):
        return v
    t, logical = schema["type"], schema.get("logicalType")
    if logical == "date" or logical in _UNITS:
        return _integer(logical, v)
    if t == "record":
        return {f["name"]: _as_fastavro(f["type"], v[f["name"]], arrow) for f in schema["fields"]}
    if t == "array" and logical == "map":
        value_type = schema["items"]["fields"][1]["type"]
        pairs = v if arrow else [(kv["key"], kv["value"]) for kv in v]
        return [{"key": k, "value": _as_fastavro(value_type, x, arrow)} for k, x in pairs]
    if t == "array":
        return [_as_fastavro(schema["items"], x, arrow) for x in v]
    if t == "map":
        return {k: _as_fastavro(schema["values"], x, arrow) for k, x in (v if arrow else v.items())}
    return v


CASES = st.tuples(TYPES, st.integers(0, 25), st.sampled_from(["null", "deflate", "snappy", "zstandard"]),
                  st.sampled_from([1, 64, 4096]), st.sampled_from([1, 7, avro_decode.CHUNK_RECORDS]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=CASES, data=st.data())
def test_decoder_equals_fastavro(case: tuple[Any, int, str, int, int], data: st.DataObject) -> None:
    body, n, codec, sync_interval, chunk = case
    fields = body["fields"] if isinstance(body, dict) and body["type"] == "record" else [body]
    schema = _named({"type": "record", "fields": fields}, itertools.count())
    rows = data.draw(st.lists(_values(schema), min_size=n, max_size=n))
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), rows, codec=codec, sync_interval=sync_interval)
    raw = out.getvalue()
    expected = [_as_fastavro(schema, r, arrow=False) for r in fastavro.reader(io.BytesIO(raw))]
    default = avro_decode.CHUNK_RECORDS
    avro_decode.CHUNK_RECORDS = chunk       # runs of blocks decoded into chunks of their own
    try:
        table = avro_decode.decode(raw)
    finally:
        avro_decode.CHUNK_RECORDS = default
    assert table.num_rows == n
    assert table.column_names == [f["name"] for f in schema["fields"]]
    got = [_as_fastavro(schema, r) for r in table.to_pylist()]
    assert got == expected


def _file(schema: dict[str, Any], rows: list[Any], codec: str = "deflate", sync_interval: int = 100) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), rows, codec=codec, sync_interval=sync_interval)
    return out.getvalue()


MANIFESTISH = {"type": "record", "name": "entry", "fields": [
    {"name": "status", "type": "int"}, {"name": "snapshot_id", "type": ["null", "long"]},
    {"name": "data_file", "type": {"type": "record", "name": "file", "fields": [
        {"name": "path", "type": "string"},
        {"name": "bounds", "type": ["null", {"type": "array", "logicalType": "map", "items": {
            "type": "record", "name": "kv", "fields": [{"name": "key", "type": "int"}, {"name": "value", "type": "bytes"}]}}]},
    ]}}]}


def _manifestish(n: int) -> list[dict[str, Any]]:
    return [{"status": i % 3, "snapshot_id": None if i % 2 else i,
             "data_file": {"path": f"s3://b/{i}.parquet", "bounds": None if i % 5 == 0 else
                           [{"key": k, "value": bytes([k] * k)} for k in range(i % 7)]}} for i in range(n)]


def test_arrow_types_of_a_manifest() -> None:
    """Nullable unions are nullable columns, an Iceberg key/value array a map of its key type."""
    table = avro_decode.decode(_file(MANIFESTISH, _manifestish(10)))
    assert table.schema.field("status").type == pa.int32()
    assert table.schema.field("snapshot_id").type == pa.int64()
    files = table.schema.field("data_file").type
    assert files.field("path").type == pa.string()
    assert files.field("bounds").type == pa.map_(pa.int32(), pa.binary())
    assert table.column("snapshot_id").null_count == 5


def test_pools_grow_for_many_items(monkeypatch: pytest.MonkeyPatch) -> None:
    """Items beyond the first guess of room (many per record, thousands of records) are all kept,
    in each chunk of the columns."""
    monkeypatch.setattr(avro_decode, "CHUNK_RECORDS", 6_000)
    schema = {"type": "record", "name": "r", "fields": [{"name": "xs", "type": {"type": "array", "items": "long"}}]}
    rows = [{"xs": list(range(i % 50))} for i in range(20_000)]
    table = avro_decode.decode(_file(schema, rows, sync_interval=16_000))
    assert table.column("xs").num_chunks >= 3
    assert table.column("xs").to_pylist() == [r["xs"] for r in rows]


def test_dropped_fields_are_read_past() -> None:
    rows = _manifestish(300)
    table = avro_decode.decode(_file(MANIFESTISH, rows), drop=["snapshot_id", "data_file.bounds"])
    assert table.column_names == ["status", "data_file"]
    assert table.column("data_file").to_pylist() == [{"path": r["data_file"]["path"]} for r in rows]
    assert table.column("status").to_pylist() == [r["status"] for r in rows]
    assert avro_decode.decode(_file(MANIFESTISH, rows), drop=["nope", "data_file.nope"]).column_names == [
        "status", "snapshot_id", "data_file"]       # a projection: what the schema does not have is not there


def test_records_of_no_fields() -> None:
    """An unpartitioned Iceberg table's partition: a record of no fields, a row of each entry."""
    schema = {"type": "record", "name": "e", "fields": [
        {"name": "partition", "type": {"type": "record", "name": "p", "fields": []}},
        {"name": "maybe", "type": ["null", {"type": "record", "name": "q", "fields": []}]},
        {"name": "n", "type": "int"}]}
    rows = [{"partition": {}, "maybe": None if i % 2 else {}, "n": i} for i in range(5)]
    table = avro_decode.decode(_file(schema, rows))
    assert table.to_pylist() == rows
    assert avro_decode.decode(_file(schema, rows), drop=["n"]).num_rows == 5


def test_empty_file() -> None:
    table = avro_decode.decode(_file(MANIFESTISH, []))
    assert table.num_rows == 0 and table.column_names == ["status", "snapshot_id", "data_file"]


def test_corrupt_files_are_named() -> None:
    good = _file(MANIFESTISH, _manifestish(200), codec="null")
    with pytest.raises(avro_decode.Corrupt):
        avro_decode.decode(good[:-40])          # cut inside the last block
    meta, _sync, start = avro_decode.header(good)
    assert json.loads(meta["avro.schema"])["name"] == "entry"
    damaged = bytearray(good)
    damaged[start + 4:start + 40] = b"\xff" * 36     # varints that never end inside the first block
    with pytest.raises(avro_decode.Corrupt):
        avro_decode.decode(bytes(damaged))
    with pytest.raises(avro_decode.Corrupt, match="not an Avro"):
        avro_decode.decode(b"PAR1" + good[4:])


def test_schemas_it_does_not_read() -> None:
    for field_type in (["null", "int", "string"], {"type": "enum", "name": "e", "symbols": ["A"]},
                       {"type": "array", "items": {"type": "record", "name": "empty", "fields": []}}):
        schema = {"type": "record", "name": "r", "fields": [{"name": "x", "type": field_type}]}
        with pytest.raises(avro_decode.Unsupported):
            avro_decode.decode(_file(schema, []))


def test_cache_dir_where_the_package_is_read_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A read-only install caches the compiled kernel in the user's cache directory, or else in the
    system's temporary one; a user's NUMBA_CACHE_DIR is kept."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    writable = numba_cache.writable
    monkeypatch.setattr(numba_cache, "writable", lambda p: "__pycache__" not in p and writable(p))
    assert numba_cache.cache_dir() == str(tmp_path / "home-cache" / "icefloe" / "numba")
    monkeypatch.setattr(numba_cache, "writable", lambda p: "home-cache" not in p and "__pycache__" not in p
                        and writable(p))
    assert "icefloe-numba-" in str(numba_cache.cache_dir())
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert numba_cache.cache_dir() is None
