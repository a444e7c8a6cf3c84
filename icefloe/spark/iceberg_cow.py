"""The copy-on-write writer of row-level changes: each data file with a changed row is replaced by
a new file holding its surviving rows (updated ones with their new values); a file whose every
live row is deleted goes without anything written; inserted rows go to new files.

The files to rewrite are read again (``ChangeRequest.labelled`` of those files alone): data files
are immutable, so this pass sees the rows the count saw, and a DELETE's or UPDATE's rows keep
their order within each file (``clustered``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from icefloe.core.io import staged_files
from icefloe.spark.iceberg_dml_plan import ChangeRequest, Written, write_rows
from icefloe.spark.iceberg_read import FILE_COL
from icefloe.spark.row_changes import ACTION, INSERT, KEEP, UPDATE
from icefloe.spark.target import WriteTarget

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def write_counted(table: WriteTarget, req: ChangeRequest, changes: DataFrame, counts: dict, touched: set,
                  whole: set) -> Written:
    """Rewrite the ``touched`` data files but the ``whole`` ones (every live row deleted: removed
    alone) with their kept and updated rows, plus the inserted rows (from ``changes``, or a MERGE's
    ``req.inserts``); every touched file is removed."""
    from pyspark.sql import functions as F

    task_by_path = req.read.task_by_path
    rewrite = sorted(touched - whole)
    parts: list[DataFrame] = []
    if rewrite:
        kept = req.labelled([task_by_path[p] for p in rewrite])
        parts.append(kept.where(F.col(ACTION).isin(KEEP, UPDATE) & F.col(FILE_COL).isNotNull()))
    if counts["inserted"]:
        parts.append(changes.where(F.col(ACTION) == INSERT) if req.inserts is None else req.inserts)
    with staged_files(table.io) as added:
        if parts:
            new_rows = parts[0]
            for more in parts[1:]:
                new_rows = new_rows.unionByName(more)
            origins = [task_by_path[p] for p in sorted(touched) if p in task_by_path]
            in_place = req.operation in ("delete", "update") and not req.inserting      # a scan's rows, in order
            added.extend(write_rows(new_rows, req.meta, table, req.cols, req.read.tasks, origins=origins,
                                    clustered=in_place))
    return Written(added, set(touched), set())
