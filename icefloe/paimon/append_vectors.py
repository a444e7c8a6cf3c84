# pyright: strict
"""Row-level deletes of an append table with ``deletion-vectors.enabled``, as Paimon's writers make
them: the deleted rows' positions are marked in deletion vectors instead of their files rewritten.

A statement's deleted (and updated: the old row) positions, per data file, are added to the file's
vector (its marks so far kept); each (partition, bucket) touched gets one new index file holding
all its vectors, which replaces the bucket's index files in the index manifest (a reader needs
only the ranges listed there). Updated and inserted rows are new files of the same commit. One
APPEND snapshot (what Paimon's commit of index files with new data makes) commits both; it is a
conflict when a commit since the read removed a file the statement marks or changed the vectors
of a bucket it marks in.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Optional, Sequence

from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon import manifest as mf
from icefloe.paimon.commit import FileStoreCommit
from icefloe.paimon.commit_changes import FilesLive, PaimonCommit, SetDeletionVectors, VectorsUnchanged
from icefloe.paimon.commit_changes import message_changes
from icefloe.paimon.snapshot import APPEND

if TYPE_CHECKING:
    from pyroaring import BitMap

    from icefloe.paimon.data_file import CommitMessage
    from icefloe.paimon.dynamic_bucket import IndexFile, PartBucket
    from icefloe.paimon.file_store import FileStore
    from icefloe.paimon.snapshot import Snapshot


def writes_vectors(options: Mapping[str, str], primary_keys: Sequence[str]) -> bool:
    """Whether a row-level delete of the table marks rows instead of rewriting files: an append
    table with ``deletion-vectors.enabled``."""
    return not primary_keys and dv.enabled(options)


def marked_vectors(store: FileStore, base: Optional[Snapshot], entries: Sequence[mf.ManifestEntry],
                   positions: Mapping[str, BitMap | Iterable[int]]
                   ) -> tuple[dict[PartBucket, Optional[IndexFile]], dict[PartBucket, Optional[str]]]:
    """The new index files of the buckets whose files ``positions`` (data file path -> positions to
    mark: a bitmap, or any iterable of them) names, each with the bucket's vectors of ``base`` plus
    the new marks, and what each bucket's vectors were (``BucketVectors.signature``, None: none), for
    the commit's conflict check."""
    from pyroaring import BitMap

    current = dv.bucket_vectors(store, base)
    by_path = {e.file.path: e for e in entries}
    marks: dict[PartBucket, dict[str, BitMap]] = {}
    for path, rows in positions.items():
        e = by_path[path]
        key = (e.partition.to_bytes(), e.bucket)
        if key not in marks:
            bv = current.get(key)
            marks[key] = bv.load(store.io) if bv is not None else {}
        bitmap = marks[key].setdefault(e.file.file_name, BitMap())
        if isinstance(rows, BitMap):
            bitmap |= rows
        else:
            bitmap.update(int(r) for r in rows)
    read = {key: (current[key].signature if key in current else None) for key in marks}
    return {key: dv.write_index(store, vectors) for key, vectors in marks.items()}, read


def commit_marks(store: FileStore, commit_user: str, base_id: Optional[int], operation: str,
                 vectors: dict[PartBucket, Optional[IndexFile]], read: dict[PartBucket, Optional[str]],
                 marked: Sequence[mf.ManifestEntry], messages: Sequence[CommitMessage] = ()) -> Snapshot:
    """One APPEND snapshot: the buckets' new ``vectors`` and the ``messages``' new files; refused
    (``CommitConflictError``) when a file ``marked`` is no longer live or a bucket's vectors are
    no longer those ``read``."""
    changes, requirements = message_changes(messages, store.partition_types)
    return FileStoreCommit(store, commit_user).apply(PaimonCommit(
        APPEND, (*changes, SetDeletionVectors(vectors)),
        (FilesLive(tuple(marked), operation, base_id, "deletes rows of"), VectorsUnchanged(read, operation, base_id),
         *requirements)))


def vectors_read(store: FileStore, base: Optional[Snapshot], entries: Sequence[mf.ManifestEntry],
                 operation: str) -> VectorsUnchanged:
    """The requirement of a commit that rewrote ``entries`` (read at ``base``, less their vectors):
    the vectors of their buckets are still those it read (another writer's marks on a file it
    removes would be lost with the vector the commit drops)."""
    current = dv.bucket_vectors(store, base)
    keys = {(e.partition.to_bytes(), e.bucket) for e in entries}
    return VectorsUnchanged({k: (current[k].signature if k in current else None) for k in keys}
                            if current else {}, operation, base.id if base is not None else None)


__all__ = ["writes_vectors", "marked_vectors", "commit_marks", "vectors_read"]
