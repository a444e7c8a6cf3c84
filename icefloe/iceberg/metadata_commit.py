# pyright: strict
"""Metadata-only commits: a change of the latest table metadata, as typed updates, committed as
the next version.

Schema and partition evolution, sort orders, ref changes, property updates and snapshot expiry
change ``vN.metadata.json`` without writing data. Each is a *change*: a function of the latest
metadata to the list of ``TableUpdate`` objects (``metadata_builder``) that make it, or None for
"nothing to do". Each attempt re-reads the latest version and runs the change again on it, so a
lost race is retried on what the winner wrote (the change function must therefore be pure: its
checks run again against the new base). The updates go with the requirements that the metadata
they were made from is still current (``table_requirements.requirements_for``), and are applied
by the one builder (``operations.commit_with_retry``). Nothing is written when the updates leave
the metadata as it was, as Java's ``TableOperations.commit`` does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from icefloe.core.retry import RetryPolicy
from icefloe.iceberg.metadata_builder import TableUpdate
from icefloe.iceberg.operations import Changes, Producer, TableOperations, commit_with_retry
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.iceberg.table_requirements import requirements_for

MetadataChange = Callable[[TableMetadata], Optional[list[TableUpdate]]]


@dataclass
class MetadataCommit:
    """The outcome of one metadata commit: the base it applied to and what was written."""

    base: TableMetadata
    new: TableMetadata
    version: Optional[int]      # the version written, None when nothing changed

    @property
    def changed(self) -> bool:
        return self.version is not None


def change_producer(change: MetadataChange) -> Producer:
    """``change`` as a producer of ``Changes`` (``operations.Producer``)."""

    def produce(base: TableMetadata, _attempt: int) -> Optional[Changes]:
        updates = change(base)
        return Changes(list(updates), requirements_for(base)) if updates else None
    return produce


def commit_metadata(ops: TableOperations, change: MetadataChange,
                    policy: Optional[RetryPolicy] = None) -> MetadataCommit:
    """Commit the updates ``change(latest)`` returns as the next metadata version, retrying lost races."""
    out = commit_with_retry(ops, change_producer(change), policy)
    return MetadataCommit(out.base, out.new, out.committed.version if out.committed is not None else None)
