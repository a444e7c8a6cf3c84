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
from typing import Optional, Sequence

import pyarrow as pa

from icefloe.core import avro_decode
from icefloe.core.native_memory import hold_mmap_threshold


def available() -> bool:
    """Whether Avro files can be decoded into columns here (numba installed)."""
    return importlib.util.find_spec("numba") is not None


def decode(data: bytes, drop: Sequence[str] = ()) -> Optional[pa.Table]:
    """The records of an Avro file as an Arrow table, one row per record in file order, less the
    fields ``drop`` names (dotted paths); None where the file cannot be decoded into columns (the
    caller's decoder then judges it)."""
    if not available():
        return None
    hold_mmap_threshold()      # decoded buffers go back to the system when freed
    try:
        return avro_decode.decode(data, drop)
    except (avro_decode.Unsupported, avro_decode.Corrupt):
        return None
