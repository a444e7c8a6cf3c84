# pyright: strict
"""The compiled loops of ``core.avro_decode``: an Avro record decoder driven by a small program (the
writer's schema flattened in preorder, ``avro_decode.Program``), compiled by numba once and cached on
disk (``cache=True``), and run without the GIL, so manifests or parts of one decode on several cores.

A node of the program is one schema node: its kind, the index after its subtree (``end``), the
branch of its union that is null (-1: not a union with null), its slot (-1: decoded but not kept,
a projected-out field), and its fixed size. A kept node's slot owns three columns of the pools,
laid out by the caller: values (``vals``: an integer, a float's bits, a string's start in the
buffer, an array's item count), lengths (``lens``: a string's), and validity (``valid``, which the
caller fills with ones: the loop writes only the nulls). Slots
at the top level grow by one per record; those inside an array or map by one per item, at most
one per byte of a block (every item reads a byte at least, which ``Program`` checks): before each
block the loop checks each slot has that room and otherwise returns the block's index, so the
caller grows the pools and calls again from there.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

Bytes = npt.NDArray[np.uint8]
Ints = npt.NDArray[np.int64]

# node kinds
NULL, BOOLEAN, INT, LONG, FLOAT, DOUBLE, BYTES, STRING, FIXED, RECORD, ARRAY, MAP = range(12)

# what ``decode_blocks`` returns when a block does not frame its records (a corrupt file)
CORRUPT = -1


@njit(cache=True, nogil=True, inline="always")
def _varint(buf: Bytes, p: Any, e: Any) -> tuple[Any, Any]:
    """The zig-zag varint at ``p`` (below ``e``) and the position after it; position -1 where
    the buffer ends first or the varint runs past ten bytes."""
    if p < e and buf[p] < 0x80:
        b: Any = np.int64(buf[p])
        return ((b >> 1) ^ -(b & 1)), p + 1
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


# the varint reader, for other compiled loops over Avro bytes (``paimon.entry_kernel``)
read_varint = _varint


@njit(cache=True, nogil=True)
def _null_fill(q: Any, stop: Any, kind: Ints, end: Ints, slot: Ints, cnt: Ints, vals: Ints, valid: Bytes,
               vbase: Ints, lbase: Ints, lens: Ints, nbase: Ints) -> None:
    """Null values for the kept slots of subtree ``[q, stop)`` at its own level (an array's items
    are not visited: the null array holds none)."""
    while q < stop:
        s = slot[q]
        if s >= 0:
            i = cnt[s]
            vals[vbase[s] + i] = 0
            valid[nbase[s] + i] = 0
            if lbase[s] >= 0:
                lens[lbase[s] + i] = 0
            cnt[s] = i + 1
        if kind[q] == ARRAY or kind[q] == MAP:
            q = end[q]
        else:
            q += 1


@njit(cache=True, nogil=True)
def decode_blocks(buf: Bytes, starts: Ints, ends: Ints, counts: Ints, first: int, last: int, kind: Ints, end: Ints,
                  nullbr: Ints, slot: Ints, fsize: Ints, top_level: npt.NDArray[np.bool_], cap: Ints, cnt: Ints,
                  vbase: Ints, lbase: Ints, nbase: Ints, vals: Ints, lens: Ints, valid: Bytes) -> int:
    """Decode blocks ``first`` to ``last`` (not included) of ``buf`` (block ``b`` holds ``counts[b]``
    records in ``buf[starts[b]:ends[b]]``) into the pools; returns ``last`` (all decoded), the index
    of a block the pools have no room for, or ``CORRUPT``."""
    n_nodes = kind.shape[0]
    n_slots = cap.shape[0]
    stack_node = np.empty(n_nodes + 1, np.int64)
    stack_left = np.empty(n_nodes + 1, np.int64)
    stack_items = np.empty(n_nodes + 1, np.int64)
    for b in range(first, last):
        p = starts[b]
        e = ends[b]
        records = counts[b]
        room = e - p + 1
        for s in range(n_slots):
            if cnt[s] + (records if top_level[s] else room) > cap[s]:
                return b
        for _r in range(records):
            pc = 0
            top = 0
            while True:
                stop = n_nodes if top == 0 else end[stack_node[top - 1]]
                if pc == stop:
                    if top == 0:
                        break
                    t = top - 1
                    stack_items[t] += 1
                    stack_left[t] -= 1
                    node = stack_node[t]
                    if stack_left[t] > 0:
                        pc = node + 1
                        continue
                    n, p = _varint(buf, p, e)
                    if p < 0:
                        return CORRUPT
                    if n < 0:
                        n = -n
                        _size, p = _varint(buf, p, e)
                        if p < 0:
                            return CORRUPT
                    if n > 0:
                        stack_left[t] = n
                        pc = node + 1
                        continue
                    s = slot[node]
                    if s >= 0:
                        i = cnt[s]
                        vals[vbase[s] + i] = stack_items[t]
                        cnt[s] = i + 1
                    top = t
                    pc = end[node]
                    continue
                k = kind[pc]
                s = slot[pc]
                nb = nullbr[pc]
                if nb >= 0:
                    br, p = _varint(buf, p, e)
                    if p < 0:
                        return CORRUPT
                    if br == nb:
                        _null_fill(pc, end[pc], kind, end, slot, cnt, vals, valid, vbase, lbase, lens, nbase)
                        pc = end[pc]
                        continue
                    if br != 1 - nb:
                        return CORRUPT
                if k == INT or k == LONG:
                    v, p = _varint(buf, p, e)
                    if p < 0:
                        return CORRUPT
                    if s >= 0:
                        i = cnt[s]
                        vals[vbase[s] + i] = v
                        cnt[s] = i + 1
                    pc += 1
                elif k == STRING or k == BYTES:
                    n, p = _varint(buf, p, e)
                    if p < 0 or n < 0 or p + n > e:
                        return CORRUPT
                    if s >= 0:
                        i = cnt[s]
                        vals[vbase[s] + i] = p
                        lens[lbase[s] + i] = n
                        cnt[s] = i + 1
                    p += n
                    pc += 1
                elif k == RECORD:
                    if s >= 0:
                        cnt[s] += 1
                    pc += 1
                elif k == ARRAY or k == MAP:
                    n, p = _varint(buf, p, e)
                    if p < 0:
                        return CORRUPT
                    if n < 0:
                        n = -n
                        _size, p = _varint(buf, p, e)
                        if p < 0:
                            return CORRUPT
                    if n == 0:
                        if s >= 0:
                            i = cnt[s]
                            vals[vbase[s] + i] = 0
                            cnt[s] = i + 1
                        pc = end[pc]
                    else:
                        stack_node[top] = pc
                        stack_left[top] = n
                        stack_items[top] = 0
                        top += 1
                        pc += 1
                elif k == BOOLEAN:
                    if p >= e:
                        return CORRUPT
                    if s >= 0:
                        i = cnt[s]
                        vals[vbase[s] + i] = buf[p]
                        cnt[s] = i + 1
                    p += 1
                    pc += 1
                elif k == FLOAT or k == DOUBLE or k == FIXED:
                    w = 4 if k == FLOAT else (8 if k == DOUBLE else fsize[pc])
                    if p + w > e:
                        return CORRUPT
                    if s >= 0:
                        i = cnt[s]
                        if k == FIXED:
                            vals[vbase[s] + i] = p
                        else:
                            v: Any = np.int64(0)
                            for j in range(w):
                                v = v | (np.int64(buf[p + j]) << (8 * j))  # pyright: ignore[reportUnknownVariableType]  (numba: an int64)
                            vals[vbase[s] + i] = v
                        cnt[s] = i + 1
                    p += w
                    pc += 1
                else:          # NULL
                    if s >= 0:
                        i = cnt[s]
                        vals[vbase[s] + i] = 0
                        valid[nbase[s] + i] = 0
                        cnt[s] = i + 1
                    pc += 1
        if p != e:
            return CORRUPT
    return last


@njit(cache=True, nogil=True)
def gather(buf: Bytes, starts: Ints, lens: Ints, offsets: Ints, out: Bytes) -> None:
    """``out[offsets[i]:offsets[i + 1]] = buf[starts[i]:starts[i] + lens[i]]`` for every ``i``."""
    for i in range(starts.shape[0]):
        a = starts[i]
        o = offsets[i]
        for j in range(lens[i]):
            out[o + j] = buf[a + j]
