"""Spark's Parquet reader less the rows a table format deleted by position, inside the scan.

Iceberg's position deletes and deletion vectors, and Paimon's deletion vectors, name rows of a data
file by position. The class ``icefloe.jvm.DeletedRowsParquetFormat`` (its Java source beside this
module, in ``jvm/``) is Spark's own Parquet file format with one step added in each task: the rows
whose position (the reader's row index) its file's positions name are dropped from each vectorized
batch by a selection over the batch's vectors, before any other operator sees them. A scan of a
table with deletes then costs about what a scan of the same files without them costs: no per-row
expression, no join, no shuffle.

The class is part of icefloe's JVM extension (``icefloe.spark.jvm``: its jar, built or shipped, and
whether a session can load it). Where it is not loadable (no jar, Spark Connect) :func:`reader`
returns None and the callers filter with Spark SQL instead.

Beyond ``DRIVER_READ_POSITIONS`` deleted positions in a scan, the scan's options name the files
that keep them (Iceberg's position delete files and deletion vectors, Paimon's deletion vectors),
per data file (:func:`source_options`), and each task reads its own file's positions from them
(``DeleteSources.java``): the driver reads no deletes and holds no positions. Fewer positions the
driver reads once, and they travel in the options themselves (:func:`scan_options`): ascending,
delta-encoded as unsigned LEB128 varints, base64 (one to three bytes per deleted row for the usual
sparse deletes); a read of the same deletes again takes them as it left them
(:func:`remembered_scan_options`).
"""
from __future__ import annotations

import base64
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Callable, Optional

from icefloe.spark import jvm
from icefloe.spark.jvm import jar_path  # noqa: F401 - its documented name before icefloe.spark.jvm

if TYPE_CHECKING:
    import numpy.typing as npt
    from pyspark.sql import DataFrameReader, SparkSession

CLASS = "icefloe.jvm.DeletedRowsParquetFormat"
OPTION = "icefloe.deleted-rows"
SOURCES_OPTION = "icefloe.deleted-rows-in"
# Deletes of at most this many positions in all (position delete rows, vectors' cardinalities) are
# read once on the driver, their positions sent in the scan's options: cheaper, measured, than each
# task opening its delete files. Beyond it the tasks read them, and the driver holds no positions.
DRIVER_READ_POSITIONS = 2_000_000
# the kinds of file a task reads a data file's deleted positions from
POSITION_FILE = "position-file"     # Iceberg position delete file (Parquet): its rows naming the data file
POSITION_FILE_OF_ONE = "position-file-of-one"   # one whose every row names the data file: its positions alone
ICEBERG_VECTOR = "iceberg-dv"       # Iceberg deletion-vector-v1 blob of a Puffin file, at (offset, length)
PAIMON_VECTOR = "paimon-dv"         # Paimon deletion vector of an index file, at (offset, size)
MAX_ENCODED_BYTES = 64 << 20        # the positions of one scan, as they travel in its plan


def encode(positions: npt.ArrayLike) -> str:
    """``positions`` (any order, repeats allowed) as base64 of their ascending deltas in LEB128."""
    import numpy as np

    p = np.asarray(positions, dtype=np.int64)
    if p.size > 1 and not bool(np.all(p[1:] > p[:-1])):      # vectors arrive sorted; files of deletes may not
        p = np.sort(p)          # then repeats dropped (numpy's unique hashes first: several times slower)
        p = p[np.concatenate(([True], p[1:] != p[:-1]))]
    p = p.astype(np.uint64)
    if p.size == 0:
        return ""
    deltas = np.diff(p, prepend=np.uint64(0))
    nbytes = np.ones(deltas.size, dtype=np.int64)
    top, width = int(deltas.max()), 1
    while width < 10 and top >= 1 << (7 * width):        # only as many passes as the largest delta needs
        nbytes += deltas >= (np.uint64(1) << np.uint64(7 * width))
        width += 1
    ends = np.cumsum(nbytes)
    starts = ends - nbytes
    out = np.empty(int(ends[-1]), dtype=np.uint8)
    # the first byte of every delta, then the further bytes of the deltas that have them
    out[starts] = ((deltas & np.uint64(0x7F)) | ((nbytes > 1).astype(np.uint64) << np.uint64(7))).astype(np.uint8)
    for k in range(1, width):
        at = np.nonzero(nbytes > k)[0]
        low = (deltas[at] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = (nbytes[at] > k + 1).astype(np.uint64) << np.uint64(7)
        out[starts[at] + k] = (low | more).astype(np.uint8)
    return base64.b64encode(out.tobytes()).decode("ascii")


def reader(spark: SparkSession, deleted: dict) -> Optional[DataFrameReader]:
    """``spark.read`` with the format and each file's deleted positions (``path -> positions``), or
    None when the class is not loadable or the positions are too many to travel in the plan."""
    options = scan_options(spark, deleted)
    return None if options is None else spark.read.format(CLASS).options(**options)


def scan_options(spark: SparkSession, deleted: dict) -> Optional[dict]:
    """The options of a scan in the format (``CLASS``) that drops each file's deleted positions
    (``path -> positions``), or None when the class is not loadable or the positions are too many to
    travel in the plan."""
    if not jvm.available(spark):
        return None
    lines = []
    size = 0
    for path, positions in deleted.items():
        if len(positions) == 0:
            continue
        line = f"{path}\t{encode(positions)}"
        size += len(line) + 1
        if size > MAX_ENCODED_BYTES:
            return None
        lines.append(line)
    return {OPTION: "\n".join(lines)}


REMEMBERED_BYTES = 64 << 20         # the scan options of earlier reads' driver-read deletes kept, in all
_remembered: "OrderedDict[tuple, dict]" = OrderedDict()
_remembered_lock = threading.Lock()


def remembered_scan_options(spark: SparkSession, deletes_of: dict, read: Callable[[dict], dict],
                            exists: Callable[[str], bool]) -> tuple:
    """(scan options, positions) for data files whose deletes the driver reads: ``deletes_of`` maps
    a data file's path to the delete files applying to it (each with ``delete_key`` and
    ``file_path``), ``read(deletes_of)`` gives each data file's positions, and the options are
    ``scan_options``' of those. A table's delete files never change (a path is written once), so the
    options of the same data files with the same delete files are remembered (the newest, up to
    ``REMEMBERED_BYTES``), as the JVM runtime's executors keep the deletes they read: a table read
    again at the same snapshot reads and encodes its deletes once. A remembered read still names a
    delete file that no longer ``exists``: it reads them again, which raises. ``positions`` is None
    when the options were remembered."""
    key = tuple(sorted((path, tuple(sorted(d.delete_key for d in deletes))) for path, deletes in deletes_of.items()))
    with _remembered_lock:
        hit = _remembered.get(key)
        if hit is not None:
            _remembered.move_to_end(key)
    if hit is not None and jvm.available(spark) and all(
            exists(f) for f in {d.file_path for deletes in deletes_of.values() for d in deletes}):
        return hit, None
    positions = read(deletes_of)
    options = scan_options(spark, positions)
    if options is not None and len(options[OPTION]) <= REMEMBERED_BYTES // 4:
        with _remembered_lock:
            _remembered[key] = options
            total = sum(len(o[OPTION]) for o in _remembered.values())
            while total > REMEMBERED_BYTES:
                _old, dropped = _remembered.popitem(last=False)
                total -= len(dropped[OPTION])
    return options, positions


def source_options(spark: SparkSession, sources: dict, positions: int) -> Optional[dict]:
    """The options of a scan in the format (``CLASS``) whose tasks read each data file's deleted
    positions where they are kept: ``sources`` maps a data file's path (as the table's metadata names
    it) to ``(kind, file, offset, length)`` tuples, ``kind`` one of ``POSITION_FILE``,
    ``POSITION_FILE_OF_ONE``, ``ICEBERG_VECTOR``, ``PAIMON_VECTOR`` (offset and length 0 for a
    position delete file); ``positions`` is how many positions they hold in all (an upper bound).
    None when the driver reads them instead (at most ``DRIVER_READ_POSITIONS``), the class is not
    loadable here, or a path holds a tab or a line break (the options' separators)."""
    if positions <= DRIVER_READ_POSITIONS or not jvm.available(spark):
        return None
    lines = []
    for path, items in sources.items():
        for kind, file, offset, length in items:
            if any(c in path or c in file for c in "\t\n\r"):
                return None
            lines.append(f"{path}\t{kind}\t{file}\t{int(offset)}\t{int(length)}")
    return {SOURCES_OPTION: "\n".join(lines)}


__all__ = ["CLASS", "OPTION", "SOURCES_OPTION", "DRIVER_READ_POSITIONS", "POSITION_FILE", "POSITION_FILE_OF_ONE",
           "ICEBERG_VECTOR", "PAIMON_VECTOR", "encode", "reader", "scan_options", "remembered_scan_options",
           "source_options"]
