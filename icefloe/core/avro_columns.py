# pyright: strict
"""Avro container files decoded into Arrow columns: a manifest of either format decoded by a
compiled loop (``core.avro_decode``, numba) in a fraction of the time of a record-by-record decoder.
Planning at scale keeps a manifest's entries as these columns (``iceberg.manifest_arrow``,
``paimon.manifest_columns``).

Every codec of the Avro spec a manifest is written with is read (``null``, ``deflate``, ``snappy``,
``zstandard``, ``bzip2``, ``xz``). A file this cannot decode (a schema outside what
``avro_decode`` reads, a damaged frame) gives None: the caller's entry-by-entry decoder reads it
and names what is wrong.
"""
from __future__ import annotations

import importlib.util
import json
import threading
import zlib
from typing import Any, Optional, Sequence, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from icefloe.core import avro_decode
from icefloe.core.native_memory import hold_mmap_threshold


def available() -> bool:
    """Whether Avro files can be decoded into columns here (numba installed)."""
    return importlib.util.find_spec("numba") is not None


def decode(data: bytes, drop: Sequence[str] = (),
           blocks: Optional[npt.NDArray[np.int64]] = None) -> Optional[pa.Table]:
    """The records of an Avro file as an Arrow table, one row per record in file order, less the
    fields ``drop`` names (dotted paths); only those of the file's blocks ``blocks`` (indexes, in
    order) where given. None where the file cannot be decoded into columns (the caller's decoder
    then judges it)."""
    if not available():
        return None
    hold_mmap_threshold()      # decoded buffers go back to the system when freed
    try:
        return avro_decode.decode(data, drop, blocks)
    except (avro_decode.Unsupported, avro_decode.Corrupt):
        return None


def block_counts(data: bytes) -> Optional[npt.NDArray[np.int64]]:
    """The record count of each of an Avro file's blocks, in order (what ``decode``'s ``blocks``
    index); None where the file does not frame or its codec is not read here."""
    try:
        return avro_decode.frames(data)[4]
    except (avro_decode.Unsupported, avro_decode.Corrupt):
        return None


def record_fields(data: bytes, field: str) -> Optional[list[str]]:
    """The names of the fields of top-level record field ``field`` of an Avro file's writer's
    schema (declared in place); None where it has no such record field or the header does not read."""
    try:
        schema = json.loads(avro_decode.header(data)[0]["avro.schema"])
    except (KeyError, ValueError, IndexError, avro_decode.Corrupt):
        return None
    if not isinstance(schema, dict):
        return None
    for f in cast(list[Any], cast(dict[str, Any], schema).get("fields") or []):
        if isinstance(f, dict) and cast(dict[str, Any], f).get("name") == field:
            typ = cast(dict[str, Any], f).get("type")
            if isinstance(typ, dict) and isinstance(cast(dict[str, Any], typ).get("fields"), list):
                return [str(cast(dict[str, Any], g).get("name")) for g in cast(list[Any], cast(dict[str, Any], typ)["fields"])
                        if isinstance(g, dict)]
            return None
    return None


_warm_lock = threading.Lock()
_warming: Optional[threading.Thread] = None


def _text(s: bytes) -> bytes:
    return avro_decode.encode_long(len(s)) + s


def _tiny_file() -> bytes:
    """A deflated container of one record with a string, a nullable long and a map: decoding it
    loads every compiled function and Arrow path a manifest's decode uses."""
    schema = {"type": "record", "name": "w", "fields": [
        {"name": "s", "type": "string"}, {"name": "n", "type": ["null", "long"]},
        {"name": "m", "type": {"type": "array", "logicalType": "map", "items": {
            "type": "record", "name": "kv", "fields": [{"name": "key", "type": "int"},
                                                       {"name": "value", "type": "bytes"}]}}}]}
    sync = bytes(range(16))
    head = avro_decode.encode_header({"avro.schema": json.dumps(schema).encode(), "avro.codec": b"deflate"}, sync)
    long = avro_decode.encode_long
    record = _text(b"a") + long(1) + long(5) + long(1) + long(3) + _text(b"x") + long(0)
    packer = zlib.compressobj(wbits=-15)
    block = packer.compress(record) + packer.flush()
    return head + long(1) + long(len(block)) + block + sync


def _warm() -> None:
    try:
        avro_decode.decode(_tiny_file())
    except Exception:       # noqa: BLE001 -- a warm-up only: the first real decode reports what fails
        pass


def warm_up() -> None:
    """Start loading the decoder (importing numba, loading its cached machine code, Arrow's first
    use) on a thread of its own, once per process, so a plan about to decode overlaps that fixed
    cost (~0.5-1 s) with its other work. Nothing where numba is not installed. The thread is not a
    daemon: a process that exits meanwhile waits for it (an import cut off at exit may crash)."""
    global _warming
    if _warming is not None or not available():
        return
    with _warm_lock:
        if _warming is None:
            _warming = threading.Thread(target=_warm, name="icefloe-decoder-warm-up")
            _warming.start()
