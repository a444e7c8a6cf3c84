# pyright: strict
"""Manifest sort rewrite (Paimon's ``manifest-sort.*`` options, ``CALL sys.compact_manifest(...,
manifest_sort_enabled => true)``): the live entries of a snapshot's manifests written again in the
order of one partition field (``manifest-sort.partition-field``, default the first), so that each
new manifest covers a narrow range of that field and a read filtering on it skips most manifests by
their partition statistics.

icefloe sorts the merged entries of every manifest as one run, when their manifests total at most
``manifest-sort.max-rewrite-size`` (Paimon's default 256 mb); above it the sorted rewrite is
skipped and the manifests are only merged, as Paimon's cap leaves the merge to happen anyway.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from icefloe.paimon import manifest as mf
from icefloe.paimon.binary_row import decode_row
from icefloe.paimon.file_store import FileStore

MAX_REWRITE_SIZE = 256 << 20


@dataclass(frozen=True)
class ManifestSort:
    """How to sort: the index of the partition field, and the most manifest bytes sorted at once."""
    field_index: int
    max_rewrite_size: int = MAX_REWRITE_SIZE


def sort_field_index(partition_keys: list[str], name: Optional[str], table: str = "table") -> int:
    """The index of partition field ``name`` (None: the first); ValueError when the table has no
    partition or no such partition field."""
    if not partition_keys:
        raise ValueError(f"manifest sort orders entries by a partition field; {table} is not partitioned")
    if name is None or not str(name).strip():
        return 0
    for i, key in enumerate(partition_keys):
        if key.lower() == str(name).strip().lower():
            return i
    raise ValueError(f"manifest sort partition field {name!r} is not a partition field of {table} "
                     f"(partition fields: {', '.join(partition_keys)})")


def sort_manifests(store: FileStore, manifests: list[mf.ManifestFileMeta], created: list[str],
                   sort: ManifestSort) -> Optional[list[mf.ManifestFileMeta]]:
    """The manifests replacing ``manifests``: their live entries, sorted by the partition field
    (nulls first), then by the whole partition, bucket and file name, in manifests of about the
    target size; None when they total more than the rewrite cap (the caller merges instead)."""
    if sum(m.file_size for m in manifests) > sort.max_rewrite_size:
        return None
    merged: dict[tuple[Any, ...], mf.ManifestEntry] = {}
    count = 0
    for m in manifests:
        entries = store.read_manifest(m.file_name, m.file_size)
        count += len(entries)
        mf.merge_entries(entries, merged)
    live = [e for e in merged.values() if e.kind == mf.ADD]
    if not live:
        return []
    types = store.partition_types

    def key(e: mf.ManifestEntry) -> tuple[Any, ...]:
        values = decode_row(e.partition, types)
        whole = tuple((v is not None, v) for v in values)
        return (whole[sort.field_index], whole, e.bucket, e.file.file_name)

    live.sort(key=key)
    # about one target size of entries per manifest, from the bytes an entry took before
    per_manifest = max(1, int(store.options.manifest_target_file_size * count / max(1, sum(m.file_size
                                                                                            for m in manifests))))
    out: list[mf.ManifestFileMeta] = []
    for start in range(0, len(live), per_manifest):
        out.extend(store.write_manifests(live[start:start + per_manifest], created))
    return out


__all__ = ["ManifestSort", "sort_manifests", "sort_field_index", "MAX_REWRITE_SIZE"]
