"""Verify a table end to end, without Spark: what ``icefloe check TABLE`` runs.

Each format checks its own tables (``icefloe.iceberg.check``, ``icefloe.paimon.check``) behind
``Table.check``; this module is the entry point the command line uses.

Iceberg (spec sections in brackets):

* ``version-hint.text`` names the latest ``vN.metadata.json`` [Hadoop tables];
* the current snapshot, every ref and snapshot-log entry name a known snapshot;
  snapshot ids are unique, sequence numbers grow from parent to child and
  never pass ``last-sequence-number`` [Snapshots, Sequence Numbers];
* every manifest list, manifest and data/delete file exists with the recorded
  size; Parquet footers hold the recorded row counts [Manifests];
* manifest-list counts match the manifest entries; entries' sequence numbers
  are not newer than their manifest's [Manifest Lists];
* each snapshot's live files add up to its summary totals [Snapshot Summary].

Paimon: the ``EARLIEST``/``LATEST`` hints agree with the snapshot files and
each snapshot's manifest lists exist.
"""
from __future__ import annotations

from typing import Callable, Optional

from icefloe.core.reports import Problem, Report
from icefloe.table import Table

__all__ = ["Problem", "Report", "check_table"]


def check_table(table: Table, progress: Optional[Callable[[str], None]] = None) -> Report:
    return table.check(progress)
