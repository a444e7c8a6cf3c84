"""Server-side scan planning for ``icefloe serve`` (the REST spec's ``planTableScan``,
``fetchPlanningResult``, ``cancelPlanning`` and ``fetchScanTasks``).

A plan is made at once with icefloe's own planner (``icefloe.iceberg.scan``: partition summaries,
partition values and column metrics prune the files; delete files are attached by the spec's
sequence-number rules), so ``POST .../plan`` answers ``completed``. Its first
``plan_task_files`` file scan tasks come in the answer; the rest are held as plan tasks (opaque
names) that ``POST .../tasks`` hands out, each once. A plan belongs to the table it was made
for: its id and its plan tasks are unknown under any other table's path, and a principal reaches
them only through that table's routes (the ``read`` grant on its namespace, as a load needs). The
server holds at most ``MAX_PLANS`` plans; the oldest is forgotten first, and ``DELETE .../plan/{id}``
forgets one at once.

A request asks for a point-in-time scan (``snapshot-id``, or the main branch's head) or an
incremental one (``start-snapshot-id`` exclusive, ``end-snapshot-id`` inclusive: the data files the
``append`` snapshots between them added, as Iceberg's incremental append scan reads them). Its
``filter`` binds against the table's schema (``case-sensitive``, true by default); ``select`` and
``stats-fields`` must name columns of it. ``min-rows-requested`` is a hint the spec lets a server
pass over: every matching file is planned.
"""
from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Optional, TypeVar

from icefloe.core import expressions as ex
from icefloe.core.types import ListType, MapType, StructType
from icefloe.errors import RequestError
from icefloe.iceberg import evaluators as ev
from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.changelog import snapshot_range
from icefloe.iceberg.rest_scan import PlanningError, filter_from_json, partition_types, tasks_to_json
from icefloe.iceberg.scan import FileScanTask, attach_identity_values
from icefloe.iceberg.snapshot import APPEND
from icefloe.iceberg.streaming import added_data_files

if TYPE_CHECKING:
    from icefloe.core.types import IcebergType, Schema
    from icefloe.iceberg.table import BaseTable
    from icefloe.iceberg.table_metadata import TableMetadata

Json = dict[str, Any]           # a request's or an answer's JSON object (the REST spec's bodies)
_K = TypeVar("_K")
_D = TypeVar("_D")

MAX_PLANS = 1000
PLAN_TASK_FILES = 1000          # file scan tasks per answer (the rest in plan tasks)
_KEYS = {"snapshot-id", "select", "filter", "min-rows-requested", "case-sensitive", "use-snapshot-schema",
         "start-snapshot-id", "end-snapshot-id", "stats-fields"}


def _bad(message: str) -> RequestError:
    return RequestError(400, "BadRequestException", message)


class ScanPlans:
    """The plans a server holds (module doc): by plan id, each with its table and its plan tasks
    not yet fetched."""

    def __init__(self, plan_task_files: int = PLAN_TASK_FILES, max_plans: int = MAX_PLANS):
        self.plan_task_files = max(1, plan_task_files)
        self.max_plans = max_plans
        # plan id -> (table name, {plan task: JSON of its tasks})
        self._plans: OrderedDict[str, tuple[str, dict[str, Json]]] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ routes
    def plan(self, table: BaseTable, name: str, body: Json) -> Json:
        """``POST .../plan``: the ``completed`` answer for ``body`` (a ``PlanTableScanRequest``)."""
        unknown = sorted(set(body) - _KEYS)
        if unknown:
            raise _bad(f"the plan request has fields the REST spec does not define: {', '.join(unknown)}")
        meta = table.metadata
        case_sensitive = _typed(body, "case-sensitive", bool, True)
        for key in ("select", "stats-fields"):
            names = _typed(body, key, list, None)
            for n in names or ():
                if not isinstance(n, str):
                    raise _bad(f"{key} must be an array of column names, not {n!r}")
                _check_column(meta.schema, n, case_sensitive, key)
        try:
            bound = filter_from_json(body["filter"], meta.schema, case_sensitive) if "filter" in body else None
        except PlanningError as e:
            raise _bad(f"filter: {e}") from None
        except ex.ExpressionError as e:
            raise _bad(f"filter: {e}") from None
        snapshot_id = _typed(body, "snapshot-id", int, None)
        start, end = _typed(body, "start-snapshot-id", int, None), _typed(body, "end-snapshot-id", int, None)
        _typed(body, "use-snapshot-schema", bool, False)
        _typed(body, "min-rows-requested", int, None)
        if (start is not None or end is not None) and snapshot_id is not None:
            raise _bad("a plan request is either point-in-time (snapshot-id) or incremental (start-snapshot-id, "
                       "end-snapshot-id), not both")
        if start is not None and end is None:
            raise _bad("an incremental plan request needs end-snapshot-id with start-snapshot-id")
        if end is not None:
            tasks = _incremental(table, meta, start, end, bound)
        else:
            snap = meta.snapshot_by_id(snapshot_id) if snapshot_id is not None else meta.current_snapshot
            tasks = scan_mod.plan_files(table.io, meta, snap, bound)
        return self._answer(name, meta, tasks, body.get("filter", True))

    def fetch(self, name: str, plan_id: str) -> Json:
        """``GET .../plan/{plan-id}``: planning is done when a plan is submitted, so a known plan
        is ``completed``, with the plan tasks not fetched yet."""
        with self._lock:
            plan = self._plans.get(plan_id)
            if plan is None or plan[0] != name:
                raise _no_plan(plan_id, name)
            return {"status": "completed", "plan-tasks": list(plan[1])} if plan[1] else {"status": "completed"}

    def cancel(self, name: str, plan_id: str) -> None:
        """``DELETE .../plan/{plan-id}``: forget the plan and its plan tasks."""
        with self._lock:
            plan = self._plans.get(plan_id)
            if plan is None or plan[0] != name:
                raise _no_plan(plan_id, name)
            del self._plans[plan_id]

    def tasks(self, name: str, body: Json) -> Json:
        """``POST .../tasks``: the file scan tasks of one plan task (each handed out once)."""
        task = body.get("plan-task")
        if not isinstance(task, str):
            raise _bad("the request lacks the field 'plan-task' (a string)")
        plan_id = task.split(":", 1)[0]
        with self._lock:
            plan = self._plans.get(plan_id)
            if plan is None or plan[0] != name or task not in plan[1]:
                raise RequestError(404, "NoSuchPlanTaskException", f"plan task {task[:80]!r} does not exist for "
                                                                   f"table {name} (fetched already, cancelled or "
                                                                   "never planned)")
            return plan[1].pop(task)

    # ------------------------------------------------------------------ plans
    def _answer(self, name: str, meta: TableMetadata, tasks: list[FileScanTask], residual: Any) -> Json:
        types = partition_types(meta)
        n = self.plan_task_files
        chunks = [tasks[i:i + n] for i in range(0, len(tasks), n)] or [[]]
        plan_id = secrets.token_hex(16)
        held = {f"{plan_id}:{i}": tasks_to_json(chunk, types, residual) for i, chunk in enumerate(chunks[1:], 1)}
        with self._lock:
            self._plans[plan_id] = (name, held)
            while len(self._plans) > self.max_plans:
                self._plans.popitem(last=False)
        first = tasks_to_json(chunks[0], types, residual)
        answer: Json = {"status": "completed", "plan-id": plan_id}
        if first["file-scan-tasks"]:
            answer["file-scan-tasks"] = first["file-scan-tasks"]
        if first["delete-files"]:
            answer["delete-files"] = first["delete-files"]
        if held:
            answer["plan-tasks"] = list(held)
        return answer


def _no_plan(plan_id: str, name: str) -> RequestError:
    return RequestError(404, "NoSuchPlanIdException", f"plan {plan_id[:80]!r} does not exist for table {name} "
                                                      "(cancelled, forgotten or never planned)")


def _typed(body: Json, key: str, kind: type[_K], default: _D) -> _K | _D:
    v = body.get(key)
    if v is None:
        return default
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise _bad(f"the plan request's {key!r} must be {'a ' + kind.__name__ if kind is not list else 'an array'}, "
                   f"not {v!r}"[:300])
    return v


def _check_column(schema: Schema, name: str, case_sensitive: bool, what: str) -> None:
    fields = _column_names(schema)
    if name in fields or (not case_sensitive and name.lower() in {f.lower() for f in fields}):
        return
    raise _bad(f"{what}: no column {name!r} in the table")


def _column_names(schema: Schema) -> set[str]:
    """Every column's full name (``a.b`` for a struct's field; ``key``/``value``/``element`` inside
    maps and lists, as Java's ``Schema.findColumnName`` names them)."""
    out: set[str] = set()

    def walk(t: IcebergType, prefix: str) -> None:
        if isinstance(t, StructType):
            for f in t.fields:
                out.add(prefix + f.name)
                walk(f.field_type, prefix + f.name + ".")
        elif isinstance(t, ListType):
            out.add(prefix + "element")
            walk(t.element_type, prefix + "element.")
        elif isinstance(t, MapType):
            out.update((prefix + "key", prefix + "value"))
            walk(t.key_type, prefix + "key.")
            walk(t.value_type, prefix + "value.")
    walk(schema.struct, "")
    return out


def _incremental(table: BaseTable, meta: TableMetadata, start: Optional[int], end: int,
                 bound: Optional[ex.Expr]) -> list[FileScanTask]:
    """The data files the ``append`` snapshots after ``start`` up to ``end`` added, pruned by ``bound``."""
    specs = meta.specs_by_id()
    metrics = ev.MetricsEvaluator(meta.schema, bound) if bound is not None else None
    parts: dict[int, ev.PartitionEvaluator] = {}
    if bound is not None:
        for spec_id, spec in specs.items():
            parts[spec_id] = ev.PartitionEvaluator(spec.partition_type(meta.schema),
                                                   ev.project_inclusive(bound, spec, meta.schema))
    tasks: list[FileScanTask] = []
    for snap in snapshot_range(meta, start, end):
        if snap.operation != APPEND:
            continue
        for f, seq in added_data_files(table.io, meta, snap):
            if bound is not None and (not parts[f.spec_id].eval(f.partition)
                                      or (metrics is not None and not metrics.may_match(f))):
                continue
            tasks.append(FileScanTask(f, seq))
    attach_identity_values(tasks, specs)
    return tasks
