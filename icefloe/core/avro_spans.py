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
        b: Any = np.int64(buf[p])
        p += 1
        acc |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    return ((acc >> 1) & 0x7FFFFFFFFFFFFFFF) ^ -(acc & 1), p


@njit(cache=True, nogil=True)
def record_spans(buf: Bytes, starts: Ints, ends: Ints, counts: Ints, kind: Ints, end: Ints, nullbr: Ints,
                 fsize: Ints, marks: Ints, at: Ints, rec_end: Ints) -> int:
    """Walk every record of the blocks (block ``b``: ``counts[b]`` records in
    ``buf[starts[b]:ends[b]]``) by the program's nodes; in record ``r`` node ``marks[j]`` (one
    outside any array or map; ``len(kind)``: the record's end) starts at ``at[r, j]``, and the
    record ends at ``rec_end[r]``. Returns the records walked, or ``CORRUPT`` (a mark not met
    included)."""
    n_nodes = kind.shape[0]
    n_marks = marks.shape[0]
    stack_node = np.empty(n_nodes + 1, np.int64)
    stack_left = np.empty(n_nodes + 1, np.int64)
    r = 0
    for b in range(starts.shape[0]):
        p = starts[b]
        e = ends[b]
        for _i in range(counts[b]):
            pc = 0
            top = 0
            for j in range(n_marks):
                at[r, j] = -1
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
                if top == 0:
                    for j in range(n_marks):
                        if marks[j] == pc:
                            at[r, j] = p
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
            for j in range(n_marks):
                if marks[j] == n_nodes:
                    at[r, j] = p
                elif at[r, j] < 0:
                    return CORRUPT
            rec_end[r] = p
            r += 1
        if p != e:
            return CORRUPT
    return r


@njit(cache=True, nogil=True, inline="always")
def _put_varint(out: Bytes, o: Any, v: Any) -> Any:
    z: Any = np.uint64((v << 1) ^ (v >> 63))  # pyright: ignore[reportUnknownArgumentType]  (numba: an int64)
    while z >= 0x80:
        out[o] = np.uint8((z & np.uint64(0x7F)) | np.uint64(0x80))
        z = z >> np.uint64(7)
        o += 1
    out[o] = np.uint8(z)
    return o + 1


@njit(cache=True, nogil=True)
def assemble(buf: Bytes, segs: Ints, lead: Ints, lead_null: Bytes, lead_union: Ints, out: Bytes,
             offsets: Ints) -> int:
    """Record ``i`` written into ``out`` from ``offsets[i]``, one after another: its leading field
    ``lead[i, 0]``, then for each segment ``s`` the bytes ``buf[segs[i, 2s]:segs[i, 2s + 1]]``
    followed (but the last) by field ``lead[i, s + 1]``. A field ``j`` is a whole number, or with
    ``lead_union[j] >= 0`` a union whose null branch that is, null where ``lead_null[i, j]``.
    Fields before the first segment: ``len(lead_union) - segments + 1``. Returns the bytes written."""
    o = 0
    k = lead_union.shape[0]
    n_segs = segs.shape[1] // 2
    first = k - n_segs + 1
    for i in range(segs.shape[0]):
        offsets[i] = o
        j = 0
        for s in range(n_segs + 1):
            stop = first if s == 0 else first + s
            while j < stop and j < k:
                u = lead_union[j]
                if u >= 0:
                    if lead_null[i, j]:
                        o = _put_varint(out, o, np.int64(u))
                        j += 1
                        continue
                    o = _put_varint(out, o, np.int64(1 - u))
                o = _put_varint(out, o, lead[i, j])
                j += 1
            if s < n_segs:
                a = segs[i, 2 * s]
                w = segs[i, 2 * s + 1] - a
                for x in range(w):
                    out[o + x] = buf[a + x]
                o += w
    offsets[segs.shape[0]] = o
    return o
