# pyright: strict
"""The blocks of an indexed manifest a partition filter keeps, as an Avro container file of their own.

A manifest icefloe writes for a partitioned table carries a block index (``manifest_blocks``): each
block's record count and partition statistics. The entry-by-entry read skips the blocks a filter
rules out; a plan over columns (``manifest_columns``) decodes instead the file made of the
manifest's header (its schema, codec and sync marker) and the blocks kept, whole: a plan of one
partition of a manifest of 700,000 entries over 140 partitions decodes ~5,000 of them.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Optional, Sequence

from icefloe.core import avro_decode
from icefloe.paimon import manifest_blocks
from icefloe.paimon.data_file import SimpleStats
from icefloe.paimon.file_store import KeepStats


def _long(data: bytes, p: int) -> tuple[int, int]:
    """Avro's zig-zag varint at ``p``: (value, offset after it)."""
    shift = n = 0
    while True:
        if p >= len(data):
            raise ValueError("truncated varint")
        b = data[p]
        p += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return (n >> 1) ^ -(n & 1), p
        shift += 7


def _blocks(data: bytes, sync: bytes, p: int) -> list[tuple[int, int, int]]:
    """Each block from ``p``: (record count, where its frame starts, where it ends past its sync marker)."""
    out: list[tuple[int, int, int]] = []
    while p < len(data):
        start = p
        count, p = _long(data, p)
        size, p = _long(data, p)
        if count < 0 or size < 0 or data[p + size:p + size + 16] != sync:
            raise ValueError("bad block frame")
        p += size + 16
        out.append((count, start, p))
    return out


class Layout:
    """Where an indexed manifest's blocks are: the header's end, each block's (record count, frame
    start, frame end), and the index's entry of each (record count, partition statistics, and
    whatever else ``manifest_blocks.block_index`` gives after them)."""

    __slots__ = ("header_end", "blocks", "index")

    def __init__(self, header_end: int, blocks: list[tuple[int, int, int]],
                 index: Sequence[tuple[Any, ...]]) -> None:
        self.header_end, self.blocks, self.index = header_end, blocks, index

    def kept(self, keep_stats: KeepStats) -> Optional[tuple[int, ...]]:
        """The blocks ``keep_stats`` keeps (None: all of them); blocks of equal statistics judged once."""
        verdicts: dict[tuple[bytes, bytes, Optional[tuple[Optional[int], ...]], int], bool] = {}
        kept: list[int] = []
        for n, row in enumerate(self.index):
            count: int = row[0]
            stats: SimpleStats = row[1]
            k = (stats.min_values.data, stats.max_values.data, stats.null_counts, count)
            ok = verdicts.get(k)
            if ok is None:
                ok = verdicts[k] = keep_stats(stats, count)
            if ok:
                kept.append(n)
        return None if len(kept) == len(self.index) else tuple(kept)

    def container(self, data: bytes, kept: Sequence[int]) -> bytes:
        """The container file of ``data``'s header and its blocks ``kept``."""
        return data[:self.header_end] + b"".join(data[self.blocks[n][1]:self.blocks[n][2]] for n in kept)


# the layouts of manifests read lately, by path and size (a manifest never changes under its name)
_LAYOUTS: "OrderedDict[tuple[str, int], Optional[Layout]]" = OrderedDict()
_LAYOUTS_HELD = 256
_lock = threading.Lock()


def known_layout(path: str, size: int) -> tuple[bool, Optional[Layout]]:
    """(whether the manifest's layout is known, the layout: None for a manifest without a usable index)."""
    with _lock:
        if (path, size) in _LAYOUTS:
            return True, _LAYOUTS[(path, size)]
    return False, None


def layout(path: str, data: bytes) -> Optional[Layout]:
    """The layout of manifest ``data`` when its header indexes its blocks and the index describes
    them (else None: the whole file is read), kept for later plans."""
    found, lay = known_layout(path, len(data))
    if found:
        return lay
    lay = None
    try:
        meta, sync, p = avro_decode.header(data)
        raw = meta.get(manifest_blocks.INDEX_KEY)
        index = manifest_blocks.block_index({manifest_blocks.INDEX_KEY: raw.decode()} if raw is not None else None)
        if index is not None:
            blocks = _blocks(data, sync, p)
            if len(blocks) == len(index) and all(b[0] == i[0] for b, i in zip(blocks, index)):
                lay = Layout(p, blocks, index)
    except (ValueError, UnicodeDecodeError):
        lay = None
    with _lock:
        _LAYOUTS[(path, len(data))] = lay
        while len(_LAYOUTS) > _LAYOUTS_HELD:
            _LAYOUTS.popitem(last=False)
    return lay


__all__ = ["Layout", "known_layout", "layout"]
