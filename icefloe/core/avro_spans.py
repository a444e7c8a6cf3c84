# pyright: strict
"""Compiled loops for copying Avro records without decoding them (``core.avro_decode``'s programs):
where each record of a container file's decompressed blocks starts, ends and where one of its
top-level fields starts (``record_spans``), and records re-assembled from new leading fields
and a copied tail (``assemble``). Loaded like ``core.avro_kernel`` (``numba_cache.spans``)."""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

Bytes = npt.NDArray[np.uint8]
Ints = npt.NDArray[np.int64]

# node kinds, as ``avro_kernel`` numbers them
NULL, BOOLEAN, INT, LONG, FLOAT, DOUBLE, BYTES, STRING, FIXED, RECORD, ARRAY, MAP = range(12)
CORRUPT = -1


@njit(cache=True, nogil=True, inline="always")
def _skip_varint(buf: Bytes, p: Any, e: Any) -> tuple[Any, Any]:
    """The zig-zag varint at ``p`` and the position after it; position -1 where it runs past ``e``
    or ten bytes."""
    shift = 0
    acc: Any = np.int64(0)
    while True:
        if p >= e or shift > 63:
            return np.int64(0), np.int64(-1)
        b = np.int64(buf[p])
        p += 1
        acc |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    return ((acc >> 1) & 0x7FFFFFFFFFFFFFFF) ^ -(acc & 1), p


@njit(cache=True, nogil=True)
def record_spans(buf: Bytes, starts: Ints, ends: Ints, counts: Ints, kind: Ints, end: Ints, nullbr: Ints,
                 fsize: Ints, split: int, at_split: Ints, rec_end: Ints) -> int:
    """Walk every record of the blocks (block ``b``: ``counts[b]`` records in
    ``buf[starts[b]:ends[b]]``) by the program's nodes; record ``r``'s node ``split`` starts at
    ``at_split[r]`` and the record ends at ``rec_end[r]``. Returns the records walked, or ``CORRUPT``."""
    n_nodes = kind.shape[0]
    stack_node = np.empty(n_nodes + 1, np.int64)
    stack_left = np.empty(n_nodes + 1, np.int64)
    r = 0
    for b in range(starts.shape[0]):
        p = starts[b]
        e = ends[b]
        for _i in range(counts[b]):
            pc = 0
            top = 0
            at_split[r] = -1
            while True:
                stop = n_nodes if top == 0 else end[stack_node[top - 1]]
                if pc == stop:
                    if top == 0:
                        break
                    t = top - 1
                    stack_left[t] -= 1
                    node = stack_node[t]
                    if stack_left[t] > 0:
                        pc = node + 1
                        continue
                    n, p = _skip_varint(buf, p, e)
                    if p < 0:
                        return CORRUPT
                    if n < 0:
                        n = -n
                        _size, p = _skip_varint(buf, p, e)
                        if p < 0:
                            return CORRUPT
                    if n > 0:
                        stack_left[t] = n
                        pc = node + 1
                        continue
                    top = t
                    pc = end[node]
                    continue
                if pc == split and top == 0:
                    at_split[r] = p
                k = kind[pc]
                nb = nullbr[pc]
                if nb >= 0:
                    br, p = _skip_varint(buf, p, e)
                    if p < 0:
                        return CORRUPT
                    if br == nb:
                        pc = end[pc]
                        continue
                    if br != 1 - nb:
                        return CORRUPT
                if k == INT or k == LONG:
                    _v, p = _skip_varint(buf, p, e)
                    if p < 0:
                        return CORRUPT
                    pc += 1
                elif k == STRING or k == BYTES:
                    n, p = _skip_varint(buf, p, e)
                    if p < 0 or n < 0 or p + n > e:
                        return CORRUPT
                    p += n
                    pc += 1
                elif k == RECORD:
                    pc += 1
                elif k == ARRAY or k == MAP:
                    n, p = _skip_varint(buf, p, e)
                    if p < 0:
                        return CORRUPT
                    if n < 0:
                        n = -n
                        _size, p = _skip_varint(buf, p, e)
                        if p < 0:
                            return CORRUPT
                    if n == 0:
                        pc = end[pc]
                    else:
                        stack_node[top] = pc
                        stack_left[top] = n
                        top += 1
                        pc += 1
                elif k == BOOLEAN:
                    if p >= e:
                        return CORRUPT
                    p += 1
                    pc += 1
                elif k == FLOAT or k == DOUBLE or k == FIXED:
                    w = 4 if k == FLOAT else (8 if k == DOUBLE else fsize[pc])
                    if p + w > e:
                        return CORRUPT
                    p += w
                    pc += 1
                else:          # NULL
                    pc += 1
            if at_split[r] < 0:
                return CORRUPT
            rec_end[r] = p
            r += 1
        if p != e:
            return CORRUPT
    return r


@njit(cache=True, nogil=True, inline="always")
def _put_varint(out: Bytes, o: Any, v: Any) -> Any:
    z = np.uint64((v << 1) ^ (v >> 63))
    while z >= 0x80:
        out[o] = np.uint8((z & np.uint64(0x7F)) | np.uint64(0x80))
        z = z >> np.uint64(7)
        o += 1
    out[o] = np.uint8(z)
    return o + 1


@njit(cache=True, nogil=True)
def assemble(buf: Bytes, tail_start: Ints, tail_end: Ints, lead: Ints, lead_null: Bytes, lead_union: Ints,
             out: Bytes, offsets: Ints) -> int:
    """Record ``i``: its leading fields (``lead[i, j]``; field ``j`` a whole number, or with
    ``lead_union[j] >= 0`` a union whose null branch that is, null where ``lead_null[i, j]``)
    followed by the bytes ``buf[tail_start[i]:tail_end[i]]``, written one after another into
    ``out`` (record ``i`` from ``offsets[i]``); returns the bytes written."""
    o = 0
    k = lead_union.shape[0]
    for i in range(tail_start.shape[0]):
        offsets[i] = o
        for j in range(k):
            u = lead_union[j]
            if u >= 0:
                if lead_null[i, j]:
                    o = _put_varint(out, o, np.int64(u))
                    continue
                o = _put_varint(out, o, np.int64(1 - u))
            o = _put_varint(out, o, lead[i, j])
        a = tail_start[i]
        for x in range(tail_end[i] - a):
            out[o + x] = buf[a + x]
        o += tail_end[i] - a
    offsets[tail_start.shape[0]] = o
    return o
