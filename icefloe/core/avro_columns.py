# pyright: strict
"""Avro container files decoded into Arrow columns by DuckDB's ``read_avro`` (the
``duckdb-extension-avro`` package, loaded from its wheel: no download): native code that decodes
a manifest of either format in a fraction of the time of a record-by-record decoder. Planning at
scale keeps a manifest's entries as these columns (``iceberg.manifest_arrow``,
``paimon.manifest_columns``).

DuckDB reads the ``null``, ``deflate`` and ``snappy`` codecs; a file of another codec (Paimon's
default is ``zstandard``) is first rewritten block by block, uncompressed, by :func:`uncompressed`.
"""
from __future__ import annotations

import glob
import importlib
import io
import os
import tempfile
import threading
from typing import Any, Optional

import fastavro
import pyarrow as pa

from icefloe.core.native_memory import hold_mmap_threshold

_DUCKDB_CODECS = ("null", "deflate", "snappy")


class _Duck:
    """One DuckDB connection per process with the Avro extension loaded from its package (each
    thread decodes through a cursor of its own); ``None`` where the packages are not installed."""

    _lock = threading.Lock()
    _con: Any = None
    _tried = False
    _local = threading.local()

    @classmethod
    def cursor(cls) -> Any:
        cur = getattr(cls._local, "cursor", None)
        if cur is not None:
            return cur
        with cls._lock:
            if not cls._tried:
                cls._tried = True
                cls._con = _connect()
        if cls._con is None:
            return None
        cur = cls._local.cursor = cls._con.cursor()
        return cur


def _connect() -> Any:
    try:
        duckdb = importlib.import_module("duckdb")
        avro = importlib.import_module("duckdb_extension_avro")
    except ImportError:
        return None
    found = glob.glob(os.path.join(os.path.dirname(str(avro.__file__)), "extensions", "*", "avro.duckdb_extension"))
    if not found:
        return None
    hold_mmap_threshold()      # decoded buffers go back to the system when freed
    con = duckdb.connect(config={"threads": 1})      # a manifest per cursor; manifests in parallel
    con.execute(f"LOAD '{found[0]}'")
    return con


def available() -> bool:
    """Whether Avro files can be decoded into columns here (DuckDB and its Avro extension installed)."""
    return _Duck.cursor() is not None


# decoded through a file: DuckDB's table functions read paths, and tmpfs keeps it in memory
_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _long(n: int) -> bytes:
    """Avro's zig-zag varint of ``n``."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _bytes(b: bytes) -> bytes:
    return _long(len(b)) + b


def uncompressed(data: bytes) -> bytes:
    """The Avro container file ``data`` with the codec DuckDB reads: unchanged if it does, else the
    same schema, metadata and records in the same blocks, uncompressed (codec ``null``)."""
    blocks: Any = fastavro.block_reader(io.BytesIO(data))   # Any: fastavro's Block stub omits bytes_
    meta: dict[str, Any] = dict(blocks.metadata)
    if meta.get("avro.codec", "null") in _DUCKDB_CODECS:
        return data
    meta["avro.codec"] = "null"
    sync = os.urandom(16)
    out = [b"Obj\x01", _long(len(meta))]
    for k, v in meta.items():
        out += [_bytes(k.encode()), _bytes(v if isinstance(v, bytes) else str(v).encode())]
    out += [_long(0), sync]
    for block in blocks:
        raw: bytes = block.bytes_.getvalue()
        out += [_long(block.num_records), _bytes(raw), sync]
    return b"".join(out)


def decode(data: bytes) -> Optional[pa.Table]:
    """The records of an Avro file as an Arrow table, one row per record in file order; None
    where DuckDB is not installed or cannot read the file (the caller's decoder then judges it)."""
    cur = _Duck.cursor()
    if cur is None:
        return None
    fd, name = tempfile.mkstemp(suffix=".avro", prefix="icefloe-manifest-", dir=_TMP)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(uncompressed(data))
        table: pa.Table = cur.execute("SELECT * FROM read_avro(?)", [name]).to_arrow_table()
        return table
    except Exception:       # noqa: BLE001 -- any refusal: the entries decoder reads the file and names what is wrong
        return None
    finally:
        os.unlink(name)
