"""Spark's Parquet writes whose files are described by the tasks that wrote them.

Both formats write a DataFrame with Spark's own Parquet writer into a staging directory, then move
each file into place and turn its footer into the table's file statistics. Where icefloe's JVM
classes are loadable (``jvm.available``) the write goes through
``icefloe.jvm.DescribedParquetFormat``: each task reads back the footer of every file it closes and
hands it, with the file's size, to the driver through an accumulator of the write. The driver then
parses footers from memory and reads no file. Elsewhere (Spark Connect, a session without the jar)
``footers`` reads the files' footers as before.
"""
from __future__ import annotations

import os
import struct
from typing import TYPE_CHECKING, Any

from icefloe.spark import jvm

if TYPE_CHECKING:
    import pyarrow.parquet as pq
    from pyspark.sql import DataFrameWriter, SparkSession

    from icefloe.core.io import FileIO

CLASS = "icefloe.jvm.DescribedParquetFormat"
OPTION = "icefloe.write-id"


def save(spark: SparkSession, writer: DataFrameWriter, staging: str, write_id: str) -> dict:
    """``writer.parquet(staging)``; returns each written file's ``(size, footer)`` (a pyarrow
    ``FileMetaData``) by ``staged_key`` of its path, or ``{}`` when the tasks cannot describe them."""
    if not jvm.available(spark):
        writer.parquet(staging)
        return {}
    gateway: Any = spark._jvm       # py4j's view of the JVM: its classes are known at run time
    cls = gateway.icefloe.jvm.DescribedParquetFormat
    cls.open(spark._jsparkSession, write_id)
    try:
        writer.format(CLASS).option(OPTION, write_id).save(staging)
    finally:
        frames = bytes(cls.take(write_id))
    return parse(frames)


def parse(frames: bytes) -> dict:
    """The frames ``DescribedParquetFormat.take`` returns, by ``staged_key`` of each path."""
    out = {}
    pos = 0
    while pos < len(frames):
        (n,) = struct.unpack_from(">i", frames, pos)
        path = frames[pos + 4:pos + 4 + n].decode("utf-8")
        size, length = struct.unpack_from(">qi", frames, pos + 4 + n)
        start = pos + 4 + n + 12
        footer = frames[start:start + length]
        pos = start + length
        out[staged_key(path)] = (size, parse_footer(footer))
    return out


def parse_footer(footer: bytes) -> pq.FileMetaData:
    """A Parquet footer's bytes (as a task read them back) as a pyarrow ``FileMetaData``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    # a file of the footer alone: the magic, the footer, its length, the magic
    tail = b"PAR1" + footer + struct.pack("<i", len(footer)) + b"PAR1"
    return pq.read_metadata(pa.BufferReader(tail))


def staged_key(path: str) -> str:
    """A written file's name, under its partition directory (``KEY=...``) if it has one: the same
    for the task's attempt path and for the path the job commit gave the file."""
    path = path.rstrip("/")
    parent = os.path.basename(os.path.dirname(path))
    name = os.path.basename(path)
    return f"{parent}/{name}" if "=" in parent else name


def footers(described: dict, io: FileIO, paths: list) -> list:
    """``(size, FileMetaData)`` of each staged file of ``paths``: as its task gave it, else read from
    the file (several at once)."""
    out = [described.get(staged_key(p)) for p in paths]
    missing = [i for i, hit in enumerate(out) if hit is None]
    if missing:
        import pyarrow.parquet as pq

        def read(path: str):
            with io.open_read(path) as fh:
                return io.size(path), pq.read_metadata(fh)

        if len(missing) <= 4:
            got = [read(paths[i]) for i in missing]
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(8, len(missing))) as ex:
                got = list(ex.map(read, [paths[i] for i in missing]))
        for i, hit in zip(missing, got):
            out[i] = hit
    return out


__all__ = ["CLASS", "OPTION", "save", "parse", "parse_footer", "staged_key", "footers"]
