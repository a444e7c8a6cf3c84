# pyright: strict
"""Paimon's ``reassign_row_id``: the row ids of a partitioned Data Evolution table made contiguous
within each partition, rewriting metadata only.

As Paimon lays it out (``DataEvolutionRowIdReassigner``):

- A partition's *logical ranges* are its live files' row-id ranges (``_FIRST_ROW_ID`` ..
  ``+ _ROW_COUNT - 1``), overlapping ones merged (the files of one range hold its columns). Runs of
  adjacent ranges holding more than ``data-evolution.reassign.skip-contiguous-row-count`` rows
  (default 1,000,000,000; 0: none skipped) keep their ids.
- A partition is *fragmented* when two of its remaining ranges are not adjacent (another
  partition's rows came between them); only fragmented partitions (of those the ``partitions``
  filter accepts) are renumbered.
- They are taken in partition order, each range in row-id order, and given new ids from the
  snapshot's next row id on: a file keeps its place in its range. The snapshot's next row id moves
  past them; the data files are untouched, and the data is the same.
- The commit is one OVERWRITE snapshot whose data manifests are the latest's, those holding a moved
  file written again with its new first row id (its entry keeps its place: Paimon's scans skip a
  file once deleted, so it cannot be deleted and added again), and no delta.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional, Sequence

from icefloe.errors import NotSupportedError, SchemaError
from icefloe.paimon import manifest as mf
from icefloe.paimon import row_tracking
from icefloe.paimon.commit_changes import Resolved
from icefloe.paimon.data_evolution import row_range
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.global_index import global_files
from icefloe.paimon.snapshot import Snapshot

SKIP_CONTIGUOUS = "data-evolution.reassign.skip-contiguous-row-count"
DEFAULT_SKIP_CONTIGUOUS = 1_000_000_000

Range = tuple[int, int]          # first and last row id (inclusive)
# a partition's renumbered ranges: (old first, old last, new first)
Moves = list[tuple[int, int, int]]


def skip_contiguous(options: Mapping[str, str]) -> int:
    value = options.get(SKIP_CONTIGUOUS)
    try:
        n = DEFAULT_SKIP_CONTIGUOUS if value is None else int(str(value).strip())
    except ValueError:
        n = -1
    if n < 0:
        raise SchemaError(f"option {SKIP_CONTIGUOUS!r} must be a count of rows (0: no limit), got {value!r}")
    return n


def logical_ranges(ranges: Sequence[Range]) -> list[Range]:
    """The ranges sorted, overlapping ones merged (adjacent ones stay apart)."""
    out: list[Range] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _runs(ranges: Sequence[Range]) -> list[list[Range]]:
    """Runs of adjacent ranges."""
    runs: list[list[Range]] = []
    for r in ranges:
        if runs and r[0] == runs[-1][-1][1] + 1:
            runs[-1].append(r)
        else:
            runs.append([r])
    return runs


def fragmented(ranges: Sequence[Range], threshold: int) -> list[Range]:
    """The ranges of a partition to renumber: none unless, with runs of more than ``threshold`` rows
    taken out, two are not adjacent."""
    kept = [r for run in _runs(ranges) if threshold <= 0 or run[-1][1] - run[0][0] + 1 <= threshold for r in run]
    return kept if len(_runs(kept)) > 1 else []


def _sort_key(values: tuple[Any, ...]) -> tuple[tuple[bool, Any], ...]:
    return tuple((v is not None, v) for v in values)


@dataclass
class Plan:
    """The renumbering of one snapshot: per partition (its bytes) the moves, the rows renumbered."""
    moves: dict[bytes, Moves]
    rows: int


def plan(store: FileStore, live: Sequence[mf.ManifestEntry], accept: Optional[Callable[[tuple[Any, ...]], bool]],
         threshold: int, next_row_id: int) -> Plan:
    """What ``reassign_row_id`` renumbers in the live files ``live``, new ids from ``next_row_id``."""
    by_partition: dict[bytes, list[Range]] = {}
    values: dict[bytes, tuple[Any, ...]] = {}
    for e in live:
        key = e.partition.to_bytes()
        if key not in values:
            values[key] = store.partition_values(e.partition)
        if accept is not None and not accept(values[key]):
            continue
        if e.file.write_cols is not None and row_tracking.ROW_ID in e.file.write_cols:
            raise NotSupportedError(f"Cannot reassign row IDs for file '{e.file.file_name}' because it physically "
                                    "stores the row-id field.")
        if e.file.row_count > 0:
            by_partition.setdefault(key, []).append(row_range(e.file))
    chosen = {k: fragmented(logical_ranges(r), threshold) for k, r in by_partition.items()}
    chosen = {k: r for k, r in chosen.items() if r}
    moves: dict[bytes, Moves] = {}
    offset = next_row_id
    for key in sorted(chosen, key=lambda k: (_sort_key(values[k]), chosen[k][0][0])):
        moves[key] = []
        for start, end in chosen[key]:
            moves[key].append((start, end, offset))
            offset += end - start + 1
    return Plan(moves, offset - next_row_id)


def new_first_row_id(moves: Moves, first: int, last: int) -> Optional[int]:
    """The file's new first row id, None when its range is not renumbered."""
    i = bisect.bisect_right([m[0] for m in moves], first) - 1
    if i < 0 or last > moves[i][1]:
        return None
    return moves[i][2] + first - moves[i][0]


@dataclass(frozen=True)
class ReassignRowIds:
    """The commit change: the plan made on the snapshot the commit follows (again on a retry),
    every moved file deleted and added with its new first row id, the next row id past them.
    ``report`` holds the committed attempt's counts (files, rows, first and next row id)."""
    table_name: str
    accept: Optional[Callable[[tuple[Any, ...]], bool]]
    threshold: int
    report: dict[str, int] = field(default_factory=dict[str, int])

    def resolve(self, store: FileStore, latest: Optional[Snapshot], into: Resolved) -> None:
        if latest is None:
            return
        first = latest.next_row_id or 0
        live = store.live_entries(latest)
        p = plan(store, live, self.accept, self.threshold, first)
        for g in global_files(store, latest):
            if any(g.covers(start, end) for start, end, _ in p.moves.get(g.partition, [])):
                raise NotSupportedError(f"reassign_row_id on {self.table_name}: global index file {g.file_name} "
                                        f"covers row ids {g.range_start} to {g.range_end}, which would move; icefloe "
                                        "does not renumber global indexes (CALL sys.drop_global_index first)")

        def moved(e: mf.ManifestEntry) -> mf.ManifestEntry:
            moves = p.moves.get(e.partition.to_bytes())
            if moves is None or e.file.first_row_id is None or e.file.row_count <= 0:
                return e
            new = new_first_row_id(moves, *row_range(e.file))
            return e if new is None else replace(e, file=replace(e.file, first_row_id=new))

        into.rewrite = moved if p.moves else None
        into.next_row_id = first + p.rows if p.rows else None
        self.report.clear()
        self.report.update(files=sum(1 for e in live if moved(e) is not e), rows=p.rows, first=first,
                           next=first + p.rows)

__all__ = ["ReassignRowIds", "plan", "fragmented", "logical_ranges", "new_first_row_id", "skip_contiguous",
           "DEFAULT_SKIP_CONTIGUOUS", "SKIP_CONTIGUOUS"]
