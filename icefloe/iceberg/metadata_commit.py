"""Metadata-only commits: apply a change to the latest table metadata and write the next version.

Schema and partition evolution, ref changes, property updates and snapshot
expiry change ``vN.metadata.json`` without writing data. Each attempt re-reads
the latest version and re-applies the change to it, so a lost race is retried
on what the winner wrote (the change function must therefore be pure: its
checks run again against the new base). Nothing is written when the change
leaves the metadata as it was, as Java's ``TableOperations.commit`` does.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional

from icefloe.core.retry import RetryPolicy
from icefloe.iceberg.hadoop import HadoopTableOperations, VersionConflict
from icefloe.iceberg.table_metadata import TableMetadata, now_ms

MetadataChange = Callable[[TableMetadata], Optional[TableMetadata]]


@dataclass
class MetadataCommit:
    """The outcome of one metadata commit: the base it applied to and what was written."""

    base: TableMetadata
    new: TableMetadata
    version: Optional[int]      # the version written, None when nothing changed

    @property
    def changed(self) -> bool:
        return self.version is not None


def commit_metadata(ops: HadoopTableOperations, change: MetadataChange,
                    policy: Optional[RetryPolicy] = None) -> MetadataCommit:
    """Commit ``change(latest)`` as the next metadata version, retrying lost races.

    ``change`` returns the new metadata, or None (or its argument) for "nothing to do".
    ``last-updated-ms`` becomes now (never earlier than the base's) unless the change
    already advanced it, e.g. to match the snapshot-log entry it added.
    """

    def attempt(_n: int) -> MetadataCommit:
        version, base = ops.load()
        new = change(base)
        if new is None or new is base or new.to_json() == base.to_json():
            return MetadataCommit(base, base, None)
        if new.last_updated_ms <= base.last_updated_ms:
            new = replace(new, last_updated_ms=max(now_ms(), base.last_updated_ms))
        written = ops.commit(version, base, new)
        return MetadataCommit(base, ops.load(written)[1], written)

    if policy is None:
        policy = RetryPolicy.from_iceberg_properties(ops.load()[1].properties)
    return policy.run(attempt, retry_on=(VersionConflict,))
