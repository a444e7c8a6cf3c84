# pyright: strict
"""Manifests laid out for partition pruning inside one file.

A manifest is an Avro container file: a header, then blocks of entries. Paimon's readers
(Java, pypaimon, pypaimon-rust) read entries in order and care neither how the entries of
one manifest are ordered nor where its blocks end. Every manifest icefloe writes holds each
file's identifier once (merging cancels an ADD with its DELETE before writing), so order
inside one file carries no meaning; only the order of manifests in a list does.

icefloe uses that freedom for partitioned tables: the entries of a manifest are grouped by
partition (partitions in value order), a block ends at a partition boundary once it holds
``MIN_BLOCK_ENTRIES`` entries, and the header carries one more metadata key,
``icefloe.partition-blocks``, describing each block: its record count and the min/max/null
count of each partition field over its entries (the statistics a manifest list keeps per
manifest, here per block). Avro readers ignore metadata keys they do not know.

A filtered scan's first read of such a manifest skips every block whose statistics rule out
the filter without reading one of its records: a compacted manifest of a few thousand
entries over a hundred partitions costs a plan of one partition a block or two, not a walk
over every entry. A manifest without the key (written by other writers, or with a single
block) is read as before.
"""
from __future__ import annotations

import io as _io
import json
from typing import Any, Callable, Mapping, Optional, Protocol, Sequence, TypeVar

from fastavro import write as fastavro_write

from icefloe.paimon.binary_row import BinaryRow, decode_row
from icefloe.core.types import IcebergType
from icefloe.paimon.data_file import SimpleStats


class PartitionedEntry(Protocol):
    """What the layout reads of a manifest entry: its partition."""
    @property
    def partition(self) -> BinaryRow: ...


E = TypeVar("E", bound=PartitionedEntry)

INDEX_KEY = "icefloe.partition-blocks"
MIN_BLOCK_ENTRIES = 32


def grouped_by_partition(entries: Sequence[E], partition_types: Sequence[IcebergType]) -> list[E]:
    """The entries grouped by partition, partitions in value order (nulls first); within a
    partition the entries keep their order."""
    groups: dict[bytes, list[E]] = {}
    for e in entries:
        groups.setdefault(e.partition.data, []).append(e)
    if len(groups) < 2:
        return list(entries)

    def key(data: bytes) -> tuple[tuple[bool, Any], ...]:
        values = decode_row(BinaryRow(len(partition_types), data), partition_types)
        return tuple((v is not None, v) for v in values)

    try:
        order = sorted(groups, key=key)
    except TypeError:  # values of no total order (cannot happen for one field's type): keep arrival order
        order = list(groups)
    return [e for data in order for e in groups[data]]


def encode_file(encoded: Sequence[dict[str, Any]], entries: Sequence[E], codec: str, schema: Any, sync: int,
                target_size: int, partition_types: Sequence[IcebergType],
                stats_of: Callable[[Sequence[E], Sequence[IcebergType]], SimpleStats]) -> tuple[bytes, int]:
    """One manifest file of the first of ``encoded`` records (the Avro form of ``entries``, in
    the same order), ending once the file has reached ``target_size`` bytes: blocks cut at
    partition boundaries once ``MIN_BLOCK_ENTRIES`` long, or at ``sync`` bytes; the block
    index in the header when there are at least two blocks. Returns the file's bytes and the
    number of records it holds."""
    body = _io.BytesIO()
    # fastavro's Writer, typed Any: its stub leaves write's record type partly unknown and omits io and sync_marker
    w: Any = fastavro_write.Writer(body, schema, codec=codec, sync_interval=1 << 62)
    header_len = body.tell()
    blocks: list[tuple[int, int]] = []
    start = i = 0
    while i < len(encoded):
        w.write(encoded[i])
        i += 1
        if i == len(encoded) or w.io.tell() >= sync or (
                i - start >= MIN_BLOCK_ENTRIES and entries[i].partition.data != entries[i - 1].partition.data):
            w.flush()
            blocks.append((start, i))
            start = i
            if body.tell() >= target_size:
                break
    data = body.getvalue()
    if len(blocks) < 2 or not partition_types:
        return data, i
    index: list[list[Any]] = []
    for lo, hi in blocks:
        st = stats_of(entries[lo:hi], partition_types)
        if st.null_counts is None:
            raise TypeError("partition statistics without null counts")
        index.append([hi - lo, st.min_values.data.hex(), st.max_values.data.hex(), list(st.null_counts)])
    head = _io.BytesIO()
    fastavro_write.Writer(head, schema, codec=codec, sync_interval=1 << 62, sync_marker=w.sync_marker,
                          metadata={INDEX_KEY: json.dumps(index, separators=(",", ":"))})
    return head.getvalue() + data[header_len:], i


def block_index(metadata: Optional[Mapping[str, str]]) -> Optional[list[tuple[int, SimpleStats]]]:
    """The per-block (record count, SimpleStats) of a manifest's header, or None without a
    usable index (absent, or not as icefloe writes it: then every block is read)."""
    raw = metadata.get(INDEX_KEY) if metadata else None
    if raw is None:
        return None
    try:
        out: list[tuple[int, SimpleStats]] = []
        for count, lo, hi, nulls in json.loads(raw):
            if not isinstance(count, int) or count < 0:
                return None
            arity = len(nulls)
            out.append((count, SimpleStats(BinaryRow(arity, bytes.fromhex(lo)), BinaryRow(arity, bytes.fromhex(hi)),
                                           tuple(int(n) for n in nulls))))
        return out
    except (ValueError, TypeError):
        return None


__all__ = ["INDEX_KEY", "MIN_BLOCK_ENTRIES", "block_index", "encode_file", "grouped_by_partition"]
