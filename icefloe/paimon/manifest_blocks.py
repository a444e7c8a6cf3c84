# pyright: strict
"""Manifests laid out for partition pruning inside one file.

A manifest is an Avro container file: a header, then blocks of entries. Paimon's readers
(Java, pypaimon, pypaimon-rust) read entries in order and care neither how the entries of
one manifest are ordered nor where its blocks end. Every manifest icefloe writes holds each
file's identifier once (merging cancels an ADD with its DELETE before writing), so order
inside one file carries no meaning; only the order of manifests in a list does.

icefloe uses that freedom for partitioned tables: the entries of a manifest are grouped by
partition (partitions in value order) and within a partition by bucket, a block ends at a
partition or bucket boundary once it holds ``MIN_BLOCK_ENTRIES`` entries, and the header carries
one more metadata key, ``icefloe.partition-blocks``, describing each block: its record count, the
min/max/null count of each partition field over its entries (the statistics a manifest list keeps
per manifest, here per block) and its smallest and largest bucket. Avro readers ignore metadata
keys they do not know.

A filtered scan's first read of such a manifest skips every block whose statistics rule out
the filter without reading one of its records: a compacted manifest of a few thousand
entries over a hundred partitions costs a plan of one partition a block or two, not a walk
over every entry. A commit's reads of the buckets it writes skip the blocks of the partition's
other buckets too. A manifest without the key (written by other writers, or with a single
block) is read as before; an index written before the bucket ranges were added skips by
partition only.
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
    """What the layout reads of a manifest entry: its partition and bucket."""
    @property
    def partition(self) -> BinaryRow: ...
    @property
    def bucket(self) -> int: ...


E = TypeVar("E", bound=PartitionedEntry)

INDEX_KEY = "icefloe.partition-blocks"
MIN_BLOCK_ENTRIES = 32


def grouped_by_partition(entries: Sequence[E], partition_types: Sequence[IcebergType]) -> list[E]:
    """The entries grouped by partition, partitions in value order (nulls first), and within a
    partition by bucket (in order); within a bucket the entries keep their order."""
    groups: dict[tuple[bytes, int], list[E]] = {}
    for e in entries:
        groups.setdefault((e.partition.data, e.bucket), []).append(e)
    if len(groups) < 2:
        return list(entries)
    values: dict[bytes, tuple[tuple[bool, Any], ...]] = {}
    for data, _bucket in groups:
        if data not in values:
            row = decode_row(BinaryRow(len(partition_types), data), partition_types)
            values[data] = tuple((v is not None, v) for v in row)
    try:
        order = sorted(groups, key=lambda k: (values[k[0]], k[1]))
    except TypeError:  # values of no total order (cannot happen for one field's type): keep arrival order
        order = list(groups)
    return [e for key in order for e in groups[key]]


def encode_file(encoded: Sequence[dict[str, Any]], entries: Sequence[E], codec: str, schema: Any, sync: int,
                target_size: int, partition_types: Sequence[IcebergType],
                stats_of: Callable[[Sequence[E], Sequence[IcebergType]], SimpleStats]) -> tuple[bytes, int]:
    """One manifest file of the first of ``encoded`` records (the Avro form of ``entries``, in
    the same order), ending once the file has reached ``target_size`` bytes: blocks cut at
    partition or bucket boundaries once ``MIN_BLOCK_ENTRIES`` long, or at ``sync`` bytes; the block
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
                i - start >= MIN_BLOCK_ENTRIES and (entries[i].bucket != entries[i - 1].bucket
                                                    or entries[i].partition.data != entries[i - 1].partition.data)):
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
        buckets = [e.bucket for e in entries[lo:hi]]
        index.append([hi - lo, st.min_values.data.hex(), st.max_values.data.hex(), list(st.null_counts),
                      min(buckets), max(buckets)])
    head = _io.BytesIO()
    fastavro_write.Writer(head, schema, codec=codec, sync_interval=1 << 62, sync_marker=w.sync_marker,
                          metadata={INDEX_KEY: json.dumps(index, separators=(",", ":"))})
    return head.getvalue() + data[header_len:], i


Block = tuple[int, SimpleStats, Optional[tuple[int, int]]]


def block_index(metadata: Optional[Mapping[str, str]]) -> Optional[list[Block]]:
    """The per-block (record count, SimpleStats, (min bucket, max bucket) or None) of a manifest's
    header, or None without a usable index (absent, or not as icefloe writes it: then every block
    is read). An index written before bucket ranges has None for every block's buckets."""
    raw = metadata.get(INDEX_KEY) if metadata else None
    if raw is None:
        return None
    try:
        out: list[Block] = []
        stats: dict[tuple[str, str, tuple[int, ...]], SimpleStats] = {}   # blocks of a partition share theirs
        for row in json.loads(raw):
            if len(row) not in (4, 6) or not isinstance(row[0], int) or row[0] < 0:
                return None
            lo, hi, nulls = str(row[1]), str(row[2]), tuple(int(n) for n in row[3])
            st = stats.get((lo, hi, nulls))
            if st is None:
                st = stats[(lo, hi, nulls)] = SimpleStats(BinaryRow(len(nulls), bytes.fromhex(lo)),
                                                          BinaryRow(len(nulls), bytes.fromhex(hi)), nulls)
            out.append((row[0], st, (int(row[4]), int(row[5])) if len(row) == 6 else None))
        return out
    except (ValueError, TypeError):
        return None


__all__ = ["INDEX_KEY", "MIN_BLOCK_ENTRIES", "Block", "block_index", "encode_file", "grouped_by_partition"]
