"""Paimon's bucket rescale (``CALL sys.rescale``) of a fixed-bucket table, in Spark.

The rows of the partitions chosen (a primary-key table's merged rows) are read at the latest
snapshot and written again with ``bucket_num`` buckets (the table's 'bucket' option when not given),
as one OVERWRITE snapshot of those partitions: their new files' manifest entries say
``_TOTAL_BUCKETS = bucket_num``. The table's 'bucket' option is not changed (``ALTER TABLE ... SET
TBLPROPERTIES ('bucket' = 'N')`` changes it), so after a rescale to another number than the option's,
writes to those partitions are refused until the option says the same (Paimon's writers keep one
bucket number per partition).
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from icefloe.errors import CommitConflictError, MaintenanceError
from icefloe.paimon.snapshot import Snapshot
from icefloe.spark.paimon_compact import chosen_entries

if TYPE_CHECKING:
    from pyspark.sql import Column


def _bucket_count(value: object) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise MaintenanceError(f"bucket_num must be a positive number of buckets, got {value!r}")
    return value


def _unquoted(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Partition values as Paimon's ``partitions`` takes them: ``pt="p1"``, ``pt='p1'`` or ``pt=p1``."""
    out: dict[str, Any] = {}
    for k, v in spec.items():
        text = str(v).strip()
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1]
        out[k] = text
    return out


def rescale(table: Any, bucket_num: Optional[int] = None, where: Optional[str] = None,
            partitions: Optional[Sequence[Mapping[str, Any]]] = None) -> Optional[Snapshot]:
    """Rewrite the partitions ``where`` / ``partitions`` choose (all by default; the whole table when
    it is unpartitioned) into ``bucket_num`` buckets. Returns the OVERWRITE snapshot, or None when the
    table has no data file to rewrite. Bad input raises ``MaintenanceError`` with the table unchanged."""
    from pyspark.sql import functions as F

    if where is not None and partitions is not None:
        raise MaintenanceError("rescale: partitions and where cannot be used together")
    table.refresh()
    schema = table.table_schema
    if schema.num_buckets <= 0:
        mode = "dynamic buckets" if schema.primary_keys else "no fixed buckets (bucket-unaware)"
        raise MaintenanceError(f"table {table.name} has {mode} ('bucket' = {schema.num_buckets}): rescale "
                               "rewrites a fixed-bucket table's partitions into another number of buckets")
    buckets = _bucket_count(bucket_num)
    buckets = schema.num_buckets if buckets is None else buckets
    latest = table.current_snapshot()
    if latest is None:
        raise MaintenanceError(f"Table {table.name} has no snapshot, no need to rescale.")
    specs = [_unquoted(p) for p in partitions] if partitions is not None else None
    entries = chosen_entries(table, where, specs)
    store = table.store
    chosen = {store.partition_values(e.partition) for e in entries}
    for spec in specs or []:
        match = table.static_partition_match(spec)
        if not any(match(values) for values in chosen):
            known = sorted({", ".join(f"{k}={v}" for k, v in zip(table.partition_keys, store.partition_values(e.partition)))
                            for e in table.plan()})
            raise MaintenanceError(f"table {table.name} has no partition "
                                   f"{', '.join(f'{k}={v}' for k, v in spec.items())} with data files "
                                   f"(partitions: {'; '.join(known) or 'none'}); nothing was rescaled")
    if where is not None and not chosen:
        raise MaintenanceError(f"where {where!r} chooses no partition of {table.name} with data files; "
                               "nothing was rescaled")
    if not entries:
        return None
    df = table.to_spark(snapshot_id=latest.id)
    keys = list(table.partition_keys)
    if keys and (where is not None or specs is not None):
        conds: list[Column] = []
        for values in chosen:
            parts = [F.col(f"`{k}`").eqNullSafe(F.lit(v)) for k, v in zip(keys, values)]
            conds.append(functools.reduce(lambda a, b: a & b, parts))
        df = df.filter(functools.reduce(lambda a, b: a | b, conds))
    writer = table.with_options({"bucket": str(buckets)})     # as Paimon's rescale writes
    messages = writer.write(df)
    now = table.refresh().current_snapshot()
    if now is None or now.id != latest.id:
        writer.abort(messages)
        raise CommitConflictError(f"rescale of {table.name} read snapshot {latest.id}, but snapshot "
                                  f"{now.id if now else None} was committed since; nothing was rescaled (run it again)")
    if not keys:
        return writer.commit(messages, overwrite=True)
    return writer.commit(messages, overwrite=True, overwrite_partitions=lambda values: tuple(values) in chosen)
