# pyright: strict
"""Manifest entries and the files they track (Iceberg spec, "Manifests").

Plain data only: the Avro encoding of these types is in ``manifest_avro``, and
reading a snapshot's manifests (with inheritance applied and cached) is in
``manifest_reader``.

A manifest entry's ``snapshot_id``, ``sequence_number`` and
``file_sequence_number`` may be null in the file: an ADDED entry inherits them
from its manifest-list entry when read ("Sequence Number Inheritance").
Existing and deleted entries carry their own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

# manifest_entry.status (field 0)
EXISTING, ADDED, DELETED = 0, 1, 2
# data_file.content (field 134)
DATA, POSITION_DELETES, EQUALITY_DELETES = 0, 1, 2

# The column-metrics maps of data_file (fields 108, 109, 110, 137, 125, 128): the bulk of a
# manifest's bytes, needed only for files that survive partition pruning.
METRIC_FIELDS = ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts",
                 "lower_bounds", "upper_bounds")


@dataclass
class DataFile:
    """``data_file``: a data file or a delete file, with its partition tuple and column metrics.

    Metrics maps are keyed by field id; bounds are single-value serialized
    ("Appendix D"). ``spec_id`` is the partition spec of the manifest that
    lists the file (not stored in the entry itself).
    """

    file_path: str
    file_format: str
    partition: tuple[Any, ...]
    record_count: int
    file_size_in_bytes: int
    content: int = DATA
    column_sizes: Optional[dict[int, int]] = None
    value_counts: Optional[dict[int, int]] = None
    null_value_counts: Optional[dict[int, int]] = None
    nan_value_counts: Optional[dict[int, int]] = None
    lower_bounds: Optional[dict[int, bytes]] = None
    upper_bounds: Optional[dict[int, bytes]] = None
    key_metadata: Optional[bytes] = None
    split_offsets: Optional[list[int]] = None
    equality_ids: Optional[list[int]] = None
    sort_order_id: Optional[int] = None
    spec_id: int = 0
    # a position delete file whose deletes all reference one data file names it (field 143)
    referenced_data_file: Optional[str] = None
    # format v3: the row id of the file's first row (field 142; null in the manifest means
    # inherited from the manifest's first_row_id), and a deletion vector's blob in its Puffin
    # file (fields 144, 145)
    first_row_id: Optional[int] = None
    content_offset: Optional[int] = None
    content_size_in_bytes: Optional[int] = None

    def metrics_of(self, field_id: int) -> tuple[
            Optional[int], Optional[int], Optional[int], Optional[bytes], Optional[bytes]]:
        """Field ``field_id``'s value count, null count, NaN count, lower and upper bound, each
        None where the file's metrics do not hold it (METRIC_FIELDS[1:], in that order)."""
        return ((self.value_counts or {}).get(field_id), (self.null_value_counts or {}).get(field_id),
                (self.nan_value_counts or {}).get(field_id), (self.lower_bounds or {}).get(field_id),
                (self.upper_bounds or {}).get(field_id))

    @property
    def is_deletion_vector(self) -> bool:
        """A deletion vector: a blob in a Puffin file, the deleted positions of one data file."""
        return self.content == POSITION_DELETES and self.file_format.upper() == "PUFFIN"

    @property
    def delete_key(self) -> str:
        """What names this delete file among others: its path, and for a deletion vector (many share
        one Puffin file) its blob's offset too."""
        if self.content_offset is not None and self.file_format.upper() == "PUFFIN":
            return f"{self.file_path}#{self.content_offset}"
        return self.file_path


@dataclass
class ManifestEntry:
    """``manifest_entry``: one file's status in a manifest and the snapshot that set it."""

    status: int
    snapshot_id: Optional[int]
    sequence_number: Optional[int]
    file_sequence_number: Optional[int]
    data_file: DataFile


def as_existing(e: ManifestEntry) -> ManifestEntry:
    """The entry carried into a rewritten manifest: still live, added by an earlier snapshot."""
    return ManifestEntry(EXISTING, e.snapshot_id, e.sequence_number, e.file_sequence_number, e.data_file)


def as_deleted(e: ManifestEntry, snapshot_id: int) -> ManifestEntry:
    """The entry recording that ``snapshot_id`` removed the file; sequence numbers are kept."""
    return ManifestEntry(DELETED, snapshot_id, e.sequence_number, e.file_sequence_number, e.data_file)
