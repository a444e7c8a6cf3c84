# pyright: strict
"""Scan planning (Iceberg spec, "Scan Planning").

Pruning goes from coarse to fine: the manifest list's partition summaries
decide which manifests to open, each manifest's partition values decide which
entries to keep (each manifest is judged with its own partition spec), and
the files' column bounds and null counts decide which files can match.
Delete files are matched to data files by the spec's sequence-number rules.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from collections import deque
from typing import TYPE_CHECKING, Any, Iterator, Optional, Protocol, Union, cast

import numpy as np
import numpy.typing as npt

from icefloe.core import expressions as ex
from icefloe.core.gc_pause import collection_paused
from icefloe.core.io import FileIO
from icefloe.core.lazy import Deferred
from icefloe.errors import CorruptMetadataError, IcefloeError
from icefloe.iceberg import evaluators as ev
from icefloe.iceberg import manifest_avro
from icefloe.iceberg.manifest import DATA, DELETED, EQUALITY_DELETES, POSITION_DELETES, DataFile, ManifestEntry
from icefloe.iceberg.manifest_list import DELETE_MANIFEST, ManifestFile
from icefloe.iceberg.file_columns import FileColumns, may_match as vectorised_may_match
from icefloe.iceberg.columnar_filter import metrics_mask, partition_mask
from icefloe.iceberg.manifest_arrow import KeptRows, ManifestColumns
from icefloe.iceberg.manifest_reader import (
    FileFilter, ManifestContent, load_manifest, load_manifest_columns, snapshot_manifests, warm_decoder,
)
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.snapshot import Snapshot
from icefloe.iceberg.table_metadata import TableMetadata
from icefloe.iceberg.transforms import IdentityTransform


@dataclass
class FileScanTask:
    file: DataFile
    data_sequence_number: int
    deletes: list[DataFile] = field(default_factory=list[DataFile])   # DataFiles with content 1 or 2
    # data sequence number of each attached delete file, by its path (readers in Spark
    # re-check the spec's rules per row, so they need the numbers, not only the files)
    delete_sequence_numbers: dict[str, int] = field(default_factory=dict[str, int])
    # source field id -> partition value of each identity partition field of the file's spec:
    # what a column the file lacks reads as (spec, "Column Projection": the value from partition
    # metadata when an identity transform exists for the field), e.g. for files imported from
    # Hive-style directories, which hold partition columns only in their paths
    identity_values: dict[int, Any] = field(default_factory=dict[int, Any])

    @property
    def path(self) -> str:
        return self.file.file_path

    @property
    def partition_key(self) -> tuple[int, tuple[Any, ...]]:
        """(spec id, partition tuple): the unit position and equality deletes are scoped to."""
        return (self.file.spec_id, self.file.partition)


class _KeptFile:
    """``ColumnarScanTask.file``: made from the task's kept rows on first read, then held in the
    instance's dictionary (a non-data descriptor: the instance's value wins from then on)."""

    def __get__(self, obj: Optional["ColumnarScanTask"], owner: Optional[type] = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__["file"] = obj.kept.file(obj.index)
        return value


def _empty_list(d: dict[str, Any], name: str) -> list[Any]:
    return []


def _empty_dict(d: dict[str, Any], name: str) -> dict[Any, Any]:
    return {}


class ColumnarScanTask(FileScanTask):
    """A ``FileScanTask`` a plan built from a manifest's columns: it holds its kept rows and its
    index in them (slots: no dictionary until a field is read), and makes its file (and its empty
    lists of deletes) only when first read, so a plan of a million files that a caller only counts
    or streams through builds a million small objects. Equal to the plain task with the same
    values; copies and pickles are plain."""

    __slots__ = ("kept", "index", "data_sequence_number")
    kept: KeptRows
    index: int

    if not TYPE_CHECKING:
        file = _KeptFile()
        deletes = Deferred(_empty_list)
        delete_sequence_numbers = Deferred(_empty_dict)
        identity_values = Deferred(_empty_dict)

    def _values(self) -> tuple[Any, ...]:
        return (self.file, self.data_sequence_number, self.deletes, self.delete_sequence_numbers,
                self.identity_values)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileScanTask):
            return NotImplemented
        return self._values() == (other.file, other.data_sequence_number, other.deletes,
                                  other.delete_sequence_numbers, other.identity_values)

    __hash__ = None  # pyright: ignore[reportAssignmentType]  (as FileScanTask's: compared by value)

    def __reduce__(self) -> tuple[type[FileScanTask], tuple[Any, ...]]:
        return FileScanTask, self._values()


def _columnar_tasks(cols: ManifestColumns, rows: npt.NDArray[np.int64]) -> list[FileScanTask]:
    """The tasks of the entries ``rows`` of ``cols`` (``ColumnarScanTask``)."""
    kept = cols.kept(rows)
    new = object.__new__
    out: list[FileScanTask] = []
    append = out.append
    for i, seq in enumerate(cols.sequence_numbers(rows)):
        t = new(ColumnarScanTask)
        t.kept = kept
        t.index = i
        t.data_sequence_number = seq
        append(t)
    return out


def bind_row_filter(meta: TableMetadata, where: Any) -> Optional[ex.Expr]:
    """Bind ``where`` (Spark SQL text, an expression or a Spark Column) against the current
    schema; None when there is no filter, or a Column whose SQL text cannot be had."""
    if where is None:
        return None
    if not isinstance(where, str) and hasattr(where, "_jc"):  # a Spark Column: prune by its SQL text
        try:
            where = where._jc.expr().sql()
        except Exception:
            return None
    elif _is_spark_column(where):   # a Spark Connect Column: its text is no SQL to parse; Spark filters the rows
        return None
    expr = ex.parse_predicate(where) if isinstance(where, str) else where
    return ex.bind(expr, meta.schema)


def _is_spark_column(value: object) -> bool:
    """Whether ``value`` is a PySpark Column of any session kind (pyspark.sql.Column is the base
    of the classic and the Spark Connect one)."""
    return any(c.__name__ == "Column" and c.__module__.startswith("pyspark.sql") for c in type(value).__mro__)


# Iceberg's planning modes: where a plan reads its data and its delete manifests (the Java
# runtime's table properties ``read.data-planning-mode`` / ``read.delete-planning-mode`` and Spark
# SQL settings ``spark.sql.iceberg.data-planning-mode`` / ``...delete-planning-mode``, which win)
DATA_PLANNING_MODE = "read.data-planning-mode"
DELETE_PLANNING_MODE = "read.delete-planning-mode"
SESSION_DATA_PLANNING_MODE = "spark.sql.iceberg.data-planning-mode"
SESSION_DELETE_PLANNING_MODE = "spark.sql.iceberg.delete-planning-mode"
PLANNING_MODES = ("auto", "local", "distributed")
# in ``auto`` mode, manifests are planned in Spark tasks only when the session has more task slots
# than this process has cores, there are more than two manifests per core to open and together
# they are longer than this many bytes per core (the Java runtime's thresholds)
LOCAL_PLANNING_BYTES_PER_CORE = 128 * 1024 * 1024


class RemotePlanner(Protocol):
    """Where manifests are planned out of this process (the Spark layer's ``iceberg_plan``)."""

    def setting(self, key: str) -> Optional[str]:
        """A session setting that overrides a table property (None: not set, or no session)."""
        ...

    def parallelism(self) -> int:
        """How many manifests the session can plan at once (0: no session running)."""
        ...

    def run(self, io: FileIO, meta: TableMetadata, bound: Optional[ex.Expr],
            manifests: list[ManifestFile]) -> list[ManifestMatches]:
        """``plan_manifests(io, meta, bound, manifests)``, run in Spark tasks: one result per manifest, in order."""
        ...


@dataclass(frozen=True)
class PlanningModes:
    data: str = "auto"
    delete: str = "auto"

    @classmethod
    def of(cls, properties: dict[str, str], remote: Optional[RemotePlanner] = None) -> "PlanningModes":
        """The modes a table's properties (and a session's settings, which win) choose; an unknown
        mode is an error naming the setting."""
        def mode(prop: str, session_key: str) -> str:
            raw, where = properties.get(prop), f"table property {prop}"
            override = remote.setting(session_key) if remote is not None else None
            if override is not None:
                raw, where = override, f"Spark setting {session_key}"
            if raw is None:
                return "auto"
            value = str(raw).strip().lower()
            if value not in PLANNING_MODES:
                raise IcefloeError(f"{where} must be one of {', '.join(PLANNING_MODES)}, not {raw!r}")
            return value
        return cls(mode(DATA_PLANNING_MODE, SESSION_DATA_PLANNING_MODE),
                   mode(DELETE_PLANNING_MODE, SESSION_DELETE_PLANNING_MODE))


@dataclass
class ManifestMatches:
    """What one manifest gives a plan: the tasks of its data files that may match, and its delete
    entries that may apply (matched to data files once every manifest is read)."""
    tasks: list[FileScanTask] = field(default_factory=list[FileScanTask])
    deletes: list[ManifestEntry] = field(default_factory=list[ManifestEntry])


class _PlanFilter:
    """A plan's filter bound to each partition spec: manifests by their partition summaries, entries
    by their partition values, data files by their column metrics."""

    def __init__(self, meta: TableMetadata, bound: Optional[ex.Expr]) -> None:
        self.bound = bound
        self.manifest_evals: dict[int, ev.ManifestEvaluator] = {}
        self.part_evals: dict[int, ev.PartitionEvaluator] = {}
        self.metrics_eval: Optional[ev.MetricsEvaluator] = None
        if bound is not None:
            schema = meta.schema
            self.metrics_eval = ev.MetricsEvaluator(schema, bound)
            for spec_id, spec in meta.specs_by_id().items():
                ptype = spec.partition_type(schema)
                projected = ev.project_inclusive(bound, spec, schema)
                self.manifest_evals[spec_id] = ev.ManifestEvaluator(ptype, projected)
                self.part_evals[spec_id] = ev.PartitionEvaluator(ptype, projected)

    def may_match(self, m: ManifestFile) -> bool:
        return self.bound is None or m.partitions is None or self.manifest_evals[m.partition_spec_id].may_match(m.partitions)


def _manifests_to_open(meta: TableMetadata, snapshot: Snapshot, manifests: list[ManifestFile],
                       plan_filter: _PlanFilter) -> list[ManifestFile]:
    """The manifests of ``snapshot`` with live files whose partition summaries may match."""
    specs = meta.specs_by_id()
    to_open: list[ManifestFile] = []
    for m in manifests:
        if not m.has_added_or_existing():
            continue
        if m.partition_spec_id not in specs:
            raise CorruptMetadataError(snapshot.manifest_list, f"the entry for manifest {m.manifest_path} names "
                                       f"partition spec {m.partition_spec_id!r}, which the table metadata does not have")
        if plan_filter.may_match(m):
            to_open.append(m)
    return to_open


def plan_files(io: FileIO, meta: TableMetadata, snapshot: Optional[Snapshot], where: Any = None,
               remote: Optional[RemotePlanner] = None) -> list[FileScanTask]:
    """The scan tasks of ``snapshot`` that may match ``where``. With ``remote``, the data and delete
    manifests are planned in Spark tasks where the planning modes say so (``PlanningModes``); the
    answer is the same either way."""
    modes = PlanningModes.of(meta.properties, remote)
    if snapshot is None:
        return []
    warm_decoder(snapshot)
    bound = bind_row_filter(meta, where)
    with collection_paused():       # millions of cached objects, no cycles: see ``core.gc_pause``
        specs = meta.specs_by_id()
        plan_filter = _PlanFilter(meta, bound)
        to_open = _manifests_to_open(meta, snapshot, snapshot_manifests(io, snapshot), plan_filter)
        deletes = [i for i, m in enumerate(to_open) if m.content == DELETE_MANIFEST]
        data = [i for i, m in enumerate(to_open) if m.content != DELETE_MANIFEST]
        equality = bool(deletes) and _may_have_equality_deletes(snapshot)
        found: list[Optional[ManifestMatches]] = [None] * len(to_open)
        local: list[int] = []
        for group, mode in ((data, modes.data), (deletes, modes.delete)):
            if remote is not None and _distributed(mode, [to_open[i] for i in group], remote, equality):
                for i, got in zip(group, remote.run(io, meta, bound, [to_open[i] for i in group])):
                    found[i] = got
            else:
                local.extend(group)
        local.sort()
        for i, got in zip(local, _plan_manifests(io, meta, plan_filter, [to_open[i] for i in local])):
            found[i] = got
        planned = cast(list[ManifestMatches], found)     # every manifest planned, here or remotely
        data_tasks: list[FileScanTask] = [t for got in planned for t in got.tasks]
        delete_entries = [e for got in planned for e in got.deletes]
        if delete_entries:
            _DeleteIndex(delete_entries, specs).attach(data_tasks)
        attach_identity_values(data_tasks, specs)
    return data_tasks


# a streamed plan builds the tasks of a manifest's kept entries this many at a time
STREAM_CHUNK = 65_536


def iter_plan_files(io: FileIO, meta: TableMetadata, snapshot: Optional[Snapshot], where: Any = None,
                    remote: Optional[RemotePlanner] = None) -> Iterator[FileScanTask]:
    """``plan_files``' tasks, streamed: the delete manifests are planned first (every task needs
    them), then the data manifests, a few at a time, each one's tasks handed out as they are built
    (at most ``STREAM_CHUNK`` of a manifest at once), so a caller that does not keep them never
    holds a task per file of the table. The same tasks as ``plan_files`` in the same order. A data
    manifest that lists a delete file (which the spec does not allow; ``plan_files`` applies it to
    every task) is an error here, as its tasks before it are already handed out. The filter and
    the planning modes are checked, and the delete manifests read, before this returns."""
    modes = PlanningModes.of(meta.properties, remote)
    if snapshot is None:
        return iter(())
    warm_decoder(snapshot)
    bound = bind_row_filter(meta, where)
    specs = meta.specs_by_id()
    plan_filter = _PlanFilter(meta, bound)
    to_open = _manifests_to_open(meta, snapshot, snapshot_manifests(io, snapshot), plan_filter)
    delete_ms = [m for m in to_open if m.content == DELETE_MANIFEST]
    data_ms = [m for m in to_open if m.content != DELETE_MANIFEST]
    equality = bool(delete_ms) and _may_have_equality_deletes(snapshot)
    with collection_paused():
        if remote is not None and _distributed(modes.delete, delete_ms, remote, equality):
            planned = remote.run(io, meta, bound, delete_ms)
        else:
            planned = _plan_manifests(io, meta, plan_filter, delete_ms)
    delete_entries = [e for got in planned for e in got.deletes]
    index = _DeleteIndex(delete_entries, specs) if delete_entries else None

    distributed = remote is not None and _distributed(modes.data, data_ms, remote, equality)
    return _streamed(io, meta, bound, plan_filter, data_ms, index, specs, remote if distributed else None)


def _streamed(io: FileIO, meta: TableMetadata, bound: Optional[ex.Expr], plan_filter: _PlanFilter,
              data_ms: list[ManifestFile], index: Optional["_DeleteIndex"], specs: dict[int, PartitionSpec],
              remote: Optional[RemotePlanner]) -> Iterator[FileScanTask]:
    """The tasks of data manifests ``data_ms``, with the deletes of ``index`` attached (``remote``:
    planned there)."""
    def handed(tasks: list[FileScanTask]) -> list[FileScanTask]:
        if index is not None:
            index.attach(tasks)
        attach_identity_values(tasks, specs)
        return tasks

    if remote is not None:
        with collection_paused():
            found = remote.run(io, meta, bound, data_ms)
        for m, got in zip(data_ms, found):
            _no_deletes_listed(m, got)
            yield from handed(got.tasks)
        return
    for m, judged in _judged_in_turn(io, meta, plan_filter, data_ms):
        if isinstance(judged, ManifestMatches):
            _no_deletes_listed(m, judged)
            yield from handed(judged.tasks)
            continue
        cols, rows = judged
        for start in range(0, len(rows), STREAM_CHUNK):
            with collection_paused():
                tasks = handed(_columnar_tasks(cols, rows[start:start + STREAM_CHUNK]))
            yield from tasks


def _no_deletes_listed(m: ManifestFile, got: ManifestMatches) -> None:
    if got.deletes:
        raise CorruptMetadataError(m.manifest_path, f"is a data manifest but lists delete file "
                                   f"{got.deletes[0].data_file.file_path} (a data manifest lists data files only)")


def _judged_in_turn(io: FileIO, meta: TableMetadata, plan_filter: _PlanFilter,
                    manifests: list[ManifestFile]) -> Iterator[tuple[ManifestFile, "_Judged"]]:
    """Each manifest with what ``_judge`` makes of it, in order: read and decoded a few ahead,
    concurrently, and at most that many held at once."""
    workers = min(len(manifests), max(os.cpu_count() or 1, io.parallel_reads))
    if workers <= 1:
        for m in manifests:
            with collection_paused():
                judged = _judge(io, meta, plan_filter, m)
            yield m, judged
        return
    split = workers < (os.cpu_count() or 1)     # as many manifests at once as cores: each decoded whole

    def judge(m: ManifestFile) -> _Judged:
        with collection_paused():
            return _judge(io, meta, plan_filter, m, split)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending = iter(manifests)
        ahead: deque[tuple[ManifestFile, Any]] = deque()
        for m in pending:
            ahead.append((m, pool.submit(judge, m)))
            if len(ahead) >= workers:
                break
        while ahead:
            m, future = ahead.popleft()
            judged = future.result()
            nxt = next(pending, None)
            if nxt is not None:
                ahead.append((nxt, pool.submit(judge, nxt)))
            yield m, judged


def _distributed(mode: str, manifests: list[ManifestFile], remote: RemotePlanner, equality_deletes: bool) -> bool:
    """Whether ``manifests`` (one kind) are planned in Spark tasks: always in ``distributed`` mode
    (when there are any), never in ``local``; in ``auto``, when the session can plan more at once
    than this process, there are many large manifests, and no equality deletes may apply (their
    matching needs the data files' statistics here, as in the Java runtime)."""
    if not manifests or mode == "local":
        return False
    if mode == "distributed":
        return True
    cores = os.cpu_count() or 1
    return not equality_deletes and len(manifests) > 2 * cores and \
        sum(m.manifest_length or 0 for m in manifests) > cores * LOCAL_PLANNING_BYTES_PER_CORE and \
        remote.parallelism() > cores


def _may_have_equality_deletes(snapshot: Snapshot) -> bool:
    total = (snapshot.summary or {}).get("total-equality-deletes")
    try:
        return total is None or int(total) > 0
    except (TypeError, ValueError):
        return True


def plan_manifests(io: FileIO, meta: TableMetadata, bound: Optional[ex.Expr],
                   manifests: list[ManifestFile]) -> list[ManifestMatches]:
    """Each manifest's ``ManifestMatches`` under the bound filter ``bound`` (None: every file), in
    order: the part of a plan that reads manifests, the same in this process and in a Spark task."""
    with collection_paused():
        return _plan_manifests(io, meta, _PlanFilter(meta, bound), manifests)


def _plan_manifests(io: FileIO, meta: TableMetadata, plan_filter: _PlanFilter,
                    manifests: list[ManifestFile]) -> list[ManifestMatches]:
    """Each manifest's matches, in order. Manifests are read and decoded concurrently (a data
    manifest's columns are decoded outside the interpreter's lock, and where reads are requests,
    their latencies overlap)."""
    workers = min(len(manifests), max(os.cpu_count() or 1, io.parallel_reads))
    if workers <= 1:
        return [_plan_manifest(io, meta, plan_filter, m) for m in manifests]
    split = workers < (os.cpu_count() or 1)

    def plan(m: ManifestFile) -> ManifestMatches:
        return _plan_manifest(io, meta, plan_filter, m, split)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(plan, manifests))


# what a manifest gives a plan: the kept entries of one held as columns (tasks built from them when
# wanted), or the matches of one read entry by entry
_Judged = Union[tuple[ManifestColumns, npt.NDArray[np.int64]], "ManifestMatches"]


def _plan_manifest(io: FileIO, meta: TableMetadata, plan_filter: _PlanFilter, m: ManifestFile,
                   split: bool = True) -> ManifestMatches:
    judged = _judge(io, meta, plan_filter, m, split)
    if isinstance(judged, ManifestMatches):
        return judged
    cols, rows = judged
    return ManifestMatches(tasks=_columnar_tasks(cols, rows))


def _judge(io: FileIO, meta: TableMetadata, plan_filter: _PlanFilter, m: ManifestFile, split: bool = True) -> _Judged:
    """What a plan makes of manifest ``m``. ``split``: a large manifest's decode may use the other
    cores (false where other manifests are judged beside it)."""
    got = ManifestMatches()
    metrics_eval = plan_filter.metrics_eval
    pe = plan_filter.part_evals.get(m.partition_spec_id)
    delete_manifest = m.content == DELETE_MANIFEST
    if not delete_manifest:
        partition_keeps = None if pe is None or isinstance(pe.expr, ex.AlwaysTrue) else pe.eval   # (a filter on partitions)
        cols = load_manifest_columns(io, meta, m, partition_keeps, metrics_eval is not None, split)
        if cols is not None:        # judged as columns; objects only for the files kept
            mask = np.copy(cols.live)
            if pe is not None:
                mask &= partition_mask(cols, pe)
            if metrics_eval is not None and mask.any():
                mask &= metrics_mask(cols, metrics_eval)
            return cols, np.flatnonzero(mask)
    keep = None if plan_filter.bound is None else \
        _file_filter(pe, cast(ev.MetricsEvaluator, metrics_eval), delete_manifest)   # set with a bound
    content = load_manifest(io, meta, m, keep)
    if plan_filter.bound is not None and content.cached:       # judged as columns: the entries that may match
        for e in _matching(content, pe, metrics_eval, delete_manifest):
            if delete_manifest or e.data_file.content != DATA:
                got.deletes.append(e)
            else:
                got.tasks.append(FileScanTask(e.data_file, e.sequence_number or 0))
        return got
    for e in content.entries:
        if e.status == DELETED:
            continue
        f = e.data_file
        if pe is not None and not pe.eval(f.partition):
            continue
        if delete_manifest or f.content != DATA:
            got.deletes.append(e)
            continue
        if metrics_eval is not None and not metrics_eval.may_match(f):
            continue
        got.tasks.append(FileScanTask(f, e.sequence_number or 0))
    return got


def attach_identity_values(tasks: list[FileScanTask], specs: dict[int, PartitionSpec]) -> None:
    """Set each task's ``identity_values`` from its file's partition (``specs``: by spec id)."""
    identity = {sid: [(i, f.source_id) for i, f in enumerate(spec.fields) if isinstance(f.transform, IdentityTransform)]
                for sid, spec in specs.items()}
    if not any(identity.values()):
        return
    for t in tasks:
        fields = identity.get(t.file.spec_id)
        if fields:
            part = t.file.partition
            t.identity_values = {source: part[i] for i, source in fields if i < len(part)}


def _matching(content: ManifestContent, pe: Optional[ev.PartitionEvaluator], metrics_eval: Optional[ev.MetricsEvaluator],
              delete_manifest: bool) -> list[ManifestEntry]:
    """The live entries of a cached manifest that the partition filter ``pe`` keeps and, for data
    files, whose metrics may match (``metrics_eval``), judged over the manifest's columns
    (``file_columns``); the same entries the checks in ``plan_files`` keep one by one."""
    entries = content.entries
    cols = content.columns
    if cols is None:
        cols = content.columns = FileColumns(entries)
    mask = np.copy(cols.live)
    if pe is not None:
        mask &= np.fromiter((pe.eval(f.partition) for f in cols.files), bool, len(cols))
    if metrics_eval is not None and not delete_manifest:
        mask &= ~cols.is_data | vectorised_may_match(metrics_eval, cols)
    return [entries[i] for i in np.flatnonzero(mask)]


def _file_filter(pe: Optional[ev.PartitionEvaluator], metrics_eval: ev.MetricsEvaluator,
                 delete_manifest: bool) -> FileFilter:
    """The checks below as a predicate on an entry's file before it is built (a
    ``manifest_avro.EncodedFile``): its partition, and a data file's metrics."""
    def keep(f: manifest_avro.EncodedFile) -> bool:
        if pe is not None and not pe.eval(f.partition):
            return False
        return delete_manifest or f.content != DATA or metrics_eval.may_match(f)
    return keep


class _DeleteIndex:
    """A plan's delete entries by what they apply to. Spec rules: a position delete applies to data
    files in the same partition with a data sequence number <= its own; an equality delete to those
    strictly less (unpartitioned equality deletes apply to every partition)."""

    def __init__(self, delete_entries: list[ManifestEntry], specs: dict[int, PartitionSpec]) -> None:
        self.by_partition: dict[tuple[int, tuple[Any, ...]], list[ManifestEntry]] = {}
        self.by_target: dict[str, list[ManifestEntry]] = {}     # deletion vectors and position deletes of one file
        self.global_eq: list[ManifestEntry] = []
        for e in delete_entries:
            f = e.data_file
            if f.content == POSITION_DELETES and f.referenced_data_file is not None:
                self.by_target.setdefault(f.referenced_data_file, []).append(e)
            elif f.content == EQUALITY_DELETES and specs[f.spec_id].is_unpartitioned:
                self.global_eq.append(e)
            else:
                self.by_partition.setdefault((f.spec_id, f.partition), []).append(e)

    def attach(self, tasks: list[FileScanTask]) -> None:
        by_target, by_partition, global_eq = self.by_target, self.by_partition, self.global_eq
        for t in tasks:
            seq = t.data_sequence_number
            if by_target:
                for e in by_target.get(t.path, ()):
                    if seq <= (e.sequence_number or 0):
                        _attach(t, e)
            for e in by_partition.get((t.file.spec_id, t.file.partition), []):
                dseq = e.sequence_number or 0
                if e.data_file.content == POSITION_DELETES and seq <= dseq:
                    _attach(t, e)
                elif e.data_file.content == EQUALITY_DELETES and seq < dseq:
                    _attach(t, e)
            for e in global_eq:
                if seq < (e.sequence_number or 0):
                    _attach(t, e)


def _attach(task: FileScanTask, e: ManifestEntry) -> None:
    task.deletes.append(e.data_file)
    task.delete_sequence_numbers[e.data_file.delete_key] = e.sequence_number or 0
