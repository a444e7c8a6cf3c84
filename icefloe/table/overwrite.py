# pyright: strict
"""Partition overwrite of Iceberg tables: static (``partition={...}``) and dynamic.

Iceberg removes whole data files, so a static overwrite needs every file it removes to
hold only matching rows. Files are planned twice with the inclusive (may-match)
evaluators: with the partition filter and with its complement; a file that may hold rows
of both (written under an older spec that mixes partitions) cannot be removed whole, and
the overwrite is refused rather than wrong. A dynamic overwrite replaces the partitions
the data has rows in (an unpartitioned table whole; no rows: nothing is committed). The
commit validates against snapshots committed meanwhile (serializable isolation): a
concurrent write into the replaced partitions is a conflict, not a survivor.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Protocol

import pyarrow as pa

from icefloe.core.expressions import format_literal
from icefloe.core.types import Schema, to_arrow_type
from icefloe.errors import SchemaMismatchError
from icefloe.iceberg.manifest import DataFile
from icefloe.iceberg.overwrite import Overwrite
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.scan import FileScanTask
from icefloe.iceberg.snapshot import Snapshot
from icefloe.spark.target import WriteTarget


class OverwrittenTable(Protocol):
    """What a partition overwrite needs of an Iceberg table (``IcebergTable``)."""

    @property
    def name(self) -> str: ...

    @property
    def schema(self) -> Schema: ...

    @property
    def spec(self) -> PartitionSpec: ...

    def refresh(self) -> object: ...

    def current_snapshot(self) -> Optional[Snapshot]: ...

    def plan_files(self, where: Optional[str] = None, snapshot_id: Optional[int] = None) -> Iterable[DataFile]: ...

    def plan_tasks(self, where: Optional[str] = None, snapshot_id: Optional[int] = None) -> Iterable[FileScanTask]: ...

    def unsupported(self, operation: str, reason: str = "") -> Exception: ...

    def write_files(self, data: Any) -> list[DataFile]: ...

    def write_target(self, branch: Optional[str] = None) -> WriteTarget: ...

    def commit(self, messages: Iterable[DataFile], overwrite: bool = False,
               branch: Optional[str] = None) -> Snapshot: ...


def iceberg_partition_overwrite(t: OverwrittenTable, data: Any, partition: Mapping[str, Any], dynamic: bool,
                                branch: str) -> Optional[Snapshot]:
    if partition and dynamic:
        raise ValueError("give partition or dynamic=True, not both")
    if dynamic:
        return _dynamic(t, data, branch)
    return _static(t, data, partition, branch)


def partition_literal(t: OverwrittenTable, name: str, value: Any) -> tuple[str, str]:
    """Column ``name`` of ``t`` (as the schema spells it) and ``value`` as a Spark SQL literal of its type."""
    field = next((f for f in t.schema.fields if f.name.lower() == str(name).lower()), None)
    if field is None:
        raise SchemaMismatchError(f"{name!r} is not a column of {t.name}")
    if value is None:
        return field.name, "NULL"
    kind = str(field.field_type)
    try:
        typed = pa.array([value]).cast(to_arrow_type(field.field_type, with_ids=False))
    except (pa.ArrowException, ValueError) as e:
        raise SchemaMismatchError(f"partition value {value!r} does not fit column {field.name} of {t.name}: {e}") \
            from None
    if kind in ("timestamp", "timestamptz"):
        micros: Any = typed.cast(pa.int64()).to_pylist()[0]
        return field.name, format_literal(micros, field.field_type)
    return field.name, format_literal(typed.to_pylist()[0], field.field_type)


def _static(t: OverwrittenTable, data: Any, partition: Mapping[str, Any], branch: str) -> Snapshot:
    match: list[str] = []
    other: list[str] = []
    for name, value in partition.items():
        col_name, lit = partition_literal(t, name, value)
        col = "`" + col_name.replace("`", "``") + "`"
        if lit == "NULL":
            match.append(f"{col} IS NULL")
            other.append(f"{col} IS NOT NULL")
        else:
            match.append(f"{col} = {lit}")
            other.append(f"{col} <> {lit} OR {col} IS NULL")
    where = " AND ".join(match)
    complement = " OR ".join(f"({o})" for o in other)
    snap = t.current_snapshot()
    remove: set[str] = set()
    if snap is not None:
        mixed = {f.file_path for f in t.plan_files(where=complement, snapshot_id=snap.snapshot_id)}
        for f in t.plan_files(where=where, snapshot_id=snap.snapshot_id):
            if f.file_path in mixed:
                raise t.unsupported(
                    "overwrite of a partition",
                    f"data file {f.file_path} may hold rows both inside and outside {where} (written under "
                    "another partition spec), so it cannot be replaced whole; rewrite it first "
                    "(CALL system.rewrite_data_files) or use DELETE and INSERT")
            remove.add(f.file_path)
    files = t.write_files(data)
    change = Overwrite.by_filter(
        files, remove, snap.snapshot_id if snap else None, where, "INSERT OVERWRITE ... PARTITION")
    return t.write_target(branch).commit(change, branch)


def _dynamic(t: OverwrittenTable, data: Any, branch: str) -> Optional[Snapshot]:
    snap = t.current_snapshot()
    files = t.write_files(data)
    if not files:
        return None                            # no rows: no partition to replace
    t.refresh()
    if t.spec.is_unpartitioned:
        return t.commit(files, overwrite=True, branch=branch)
    written: set[tuple[int, tuple[Any, ...]]] = {(f.spec_id, f.partition) for f in files}
    remove: set[str] = set()
    if snap is not None:
        remove = {task.file.file_path for task in t.plan_tasks(snapshot_id=snap.snapshot_id)
                  if (task.file.spec_id, task.file.partition) in written}
    change = Overwrite.replace_partitions(
        files, remove, snap.snapshot_id if snap else None, written, "INSERT OVERWRITE (dynamic partition overwrite)")
    return t.write_target(branch).commit(change, branch)
