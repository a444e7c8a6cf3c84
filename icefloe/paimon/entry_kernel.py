# pyright: strict
"""The compiled loop of ``bucket_files``: the fields a primary-key write restores of each entry of
decompressed manifest blocks (kind, partition, bucket, file name, size, sequence range, level and
where the rest of its identifier starts), read past everything else, for entries laid out as Paimon's
writers and icefloe's lay them out (``bucket_files`` checks the layout before it calls this; the
same fields its loops read one by one). Loaded by ``bucket_files`` once numba points at its cache directory
(``numba_cache.kernel``); varints are read by ``core.avro_kernel``'s reader."""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from icefloe.core.avro_kernel import read_varint as _varint

Bytes = npt.NDArray[np.uint8]
Ints = npt.NDArray[np.int64]

# what ``light_entries`` returns where the bytes do not hold the entries they should (a corrupt file)
CORRUPT = -1

# the columns of ``light_entries``' output, one row per entry
(VERSION, KIND, PARTITION_AT, PARTITION_LEN, BUCKET, NAME_AT, NAME_LEN, SIZE, MIN_SEQ, MAX_SEQ, LEVEL,
 TAIL_AT) = range(12)
COLUMNS = 12


@njit(cache=True, nogil=True, inline="always")
def _past_bytes(buf: Bytes, p: Any, e: Any) -> Any:
    """The position after the bytes (or string) at ``p``; -1 where they run past ``e``."""
    n, p = _varint(buf, p, e)
    if p < 0 or n < 0 or p + n > e:
        return np.int64(-1)
    return p + n


@njit(cache=True, nogil=True)
def _past_array(buf: Bytes, p: Any, e: Any, strings: bool) -> Any:
    """The position after the array at ``p`` of strings (``strings``) or of longs; -1 where it
    runs past ``e``."""
    while True:
        count, p = _varint(buf, p, e)
        if p < 0:
            return p
        if count == 0:
            return p
        if count < 0:
            count = -count
            _size, p = _varint(buf, p, e)
            if p < 0:
                return p
        for _ in range(count):
            if strings:
                p = _past_bytes(buf, p, e)
            else:
                _v, p = _varint(buf, p, e)
            if p < 0:
                return p


@njit(cache=True, nogil=True)
def _past_stats(buf: Bytes, p: Any, e: Any) -> Any:
    """The position after a ``SimpleStats`` record at ``p``: min and max rows, then a nullable
    array of nullable longs."""
    p = _past_bytes(buf, p, e)
    if p < 0:
        return p
    p = _past_bytes(buf, p, e)
    if p < 0:
        return p
    branch, p = _varint(buf, p, e)
    if p < 0 or branch == 0:
        return p
    while True:
        count, p = _varint(buf, p, e)
        if p < 0 or count == 0:
            return p
        if count < 0:
            count = -count
            _size, p = _varint(buf, p, e)
            if p < 0:
                return p
        for _ in range(count):
            branch, p = _varint(buf, p, e)
            if p < 0:
                return p
            if branch != 0:
                _v, p = _varint(buf, p, e)
                if p < 0:
                    return p


@njit(cache=True, nogil=True)
def _past_tail(buf: Bytes, p: Any, e: Any) -> Any:
    """The position after the fields of ``_FILE`` that follow ``_LEVEL``: extra files, then nine
    nullable fields (creation time, delete row count, embedded index, file source, value statistics
    columns, external path, first row id, write columns, their sequences)."""
    p = _past_array(buf, p, e, True)                     # extra files
    for field in range(9):
        if p < 0:
            return p
        branch, p = _varint(buf, p, e)
        if p < 0 or branch == 0:
            continue
        if field == 2 or field == 5:                      # embedded index (bytes), external path (string)
            p = _past_bytes(buf, p, e)
        elif field == 4 or field == 7:                    # value statistics columns, write columns
            p = _past_array(buf, p, e, True)
        elif field == 8:                                  # write columns' sequences
            p = _past_array(buf, p, e, False)
        else:                                             # a long or an int
            _v, p = _varint(buf, p, e)
    return p


@njit(cache=True, nogil=True)
def light_entries(buf: Bytes, starts: Ints, ends: Ints, counts: Ints, out: Ints) -> int:
    """Each entry of the blocks ``buf[starts[b]:ends[b]]`` (``counts[b]`` entries each) as a row of
    ``out`` (``COLUMNS`` wide, as many rows as entries; positions are into ``buf``); the number of
    entries read, or ``CORRUPT`` where a block does not hold exactly its entries."""
    row = 0
    for b in range(starts.shape[0]):
        p = starts[b]
        e = ends[b]
        for _r in range(counts[b]):
            o = out[row]
            v, p = _varint(buf, p, e)                             # version
            if p < 0:
                return CORRUPT
            o[VERSION] = v
            v, p = _varint(buf, p, e)                             # kind
            if p < 0:
                return CORRUPT
            o[KIND] = v
            n, p = _varint(buf, p, e)                             # partition
            if p < 0 or n < 0 or p + n > e:
                return CORRUPT
            o[PARTITION_AT] = p
            o[PARTITION_LEN] = n
            p += n
            v, p = _varint(buf, p, e)                             # bucket
            if p < 0:
                return CORRUPT
            o[BUCKET] = v
            _v, p = _varint(buf, p, e)                            # total buckets
            if p < 0:
                return CORRUPT
            n, p = _varint(buf, p, e)                             # file name
            if p < 0 or n < 0 or p + n > e:
                return CORRUPT
            o[NAME_AT] = p
            o[NAME_LEN] = n
            p += n
            v, p = _varint(buf, p, e)                             # file size
            if p < 0:
                return CORRUPT
            o[SIZE] = v
            _v, p = _varint(buf, p, e)                            # row count
            if p < 0:
                return CORRUPT
            p = _past_bytes(buf, p, e)                            # min key
            if p < 0:
                return CORRUPT
            p = _past_bytes(buf, p, e)                            # max key
            if p < 0:
                return CORRUPT
            p = _past_stats(buf, p, e)                            # key statistics
            if p < 0:
                return CORRUPT
            p = _past_stats(buf, p, e)                            # value statistics
            if p < 0:
                return CORRUPT
            v, p = _varint(buf, p, e)                             # min sequence number
            if p < 0:
                return CORRUPT
            o[MIN_SEQ] = v
            v, p = _varint(buf, p, e)                             # max sequence number
            if p < 0:
                return CORRUPT
            o[MAX_SEQ] = v
            _v, p = _varint(buf, p, e)                            # schema id
            if p < 0:
                return CORRUPT
            v, p = _varint(buf, p, e)                             # level
            if p < 0:
                return CORRUPT
            o[LEVEL] = v
            o[TAIL_AT] = p
            p = _past_tail(buf, p, e)
            if p < 0:
                return CORRUPT
            row += 1
        if p != e:
            return CORRUPT
    return row
