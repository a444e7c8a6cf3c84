# pyright: strict
"""Row tracking of Paimon append tables (``row-tracking.enabled``): every row has a ``_ROW_ID``,
unique in the table and kept for the row's life, and a ``_SEQUENCE_NUMBER``, the snapshot that
last wrote it.

As Paimon 1.x records them:

- *Assigned at commit.* A new data file (``_FILE_SOURCE`` APPEND, no ``_FIRST_ROW_ID``, no
  ``_ROW_ID`` column) gets ``_FIRST_ROW_ID`` = the table's next row id, which then grows by the
  file's row count; the snapshot records the next free one as ``nextRowId``. A file whose
  ``_MIN_SEQUENCE_NUMBER`` is 0 (new rows) gets the new snapshot's id as both sequence numbers.
- *Read.* A row's ``_ROW_ID`` is the file's ``_ROW_ID`` column where it has one and it is not
  null, else ``_FIRST_ROW_ID`` + the row's position in the file; its ``_SEQUENCE_NUMBER`` the
  file's ``_SEQUENCE_NUMBER`` column likewise, else the file's ``_MAX_SEQUENCE_NUMBER``.
- *Moved rows keep them.* A writer that moves rows to another file (compaction) writes both as
  columns of that file (field ids ``2147483642`` and ``2147483646``, after the table's columns,
  named in ``_WRITE_COLS``); such a file is ``_FILE_SOURCE`` COMPACT and has no ``_FIRST_ROW_ID``.
- A manifest whose entries all have ``_FIRST_ROW_ID`` records their range as ``_MIN_ROW_ID`` /
  ``_MAX_ROW_ID`` in the manifest list.

Only unaware-bucket append tables (no primary key, ``bucket`` = -1) track rows, and the option is
fixed when the table is created. So is ``data-evolution.enabled`` (files of some columns of rows
matched by row id, ``data_evolution``), which needs row tracking and, in Paimon 1.4, no deletion vectors.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Protocol, Sequence

from icefloe.core import types as core
from icefloe.errors import SchemaError
from icefloe.paimon import manifest as mf
from icefloe.paimon.data_file import FILE_SOURCE_APPEND, DataFileMeta
from icefloe.paimon.types import DataField

ENABLED = "row-tracking.enabled"
EVOLUTION = "data-evolution.enabled"
_DELETION_VECTORS = "deletion-vectors.enabled"
ROW_ID = "_ROW_ID"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
NAMES = (ROW_ID, SEQUENCE_NUMBER)
# Paimon's system field ids (Integer.MAX_VALUE - 5 and - 1); nullable in files
ROW_ID_FIELD = DataField(2**31 - 1 - 5, ROW_ID, core.LongType())
SEQUENCE_NUMBER_FIELD = DataField(2**31 - 1 - 1, SEQUENCE_NUMBER, core.LongType())
FIELDS = (ROW_ID_FIELD, SEQUENCE_NUMBER_FIELD)


def enabled(options: Mapping[str, str]) -> bool:
    return str(options.get(ENABLED, "false")).strip().lower() == "true"


def evolution_enabled(options: Mapping[str, str]) -> bool:
    """Whether the table is a Data Evolution table (``data-evolution.enabled``)."""
    return str(options.get(EVOLUTION, "false")).strip().lower() == "true"


class TrackedSchema(Protocol):
    """What ``check_schema`` reads of a table schema (``schema.TableSchema``, which imports this module)."""
    @property
    def options(self) -> Mapping[str, str]: ...
    @property
    def primary_keys(self) -> Sequence[str]: ...
    @property
    def num_buckets(self) -> int: ...
    @property
    def field_names(self) -> list[str]: ...


def check_schema(schema: TrackedSchema) -> None:
    """The table shapes Paimon tracks rows of: an append table with ``bucket`` -1, whose columns
    do not take the two hidden columns' names; a data-evolution table is one of them, without
    deletion vectors (Paimon 1.4's rule)."""
    if evolution_enabled(schema.options):
        if not enabled(schema.options):
            raise SchemaError(f"{EVOLUTION} needs '{ENABLED}' = 'true': a data-evolution table matches the files "
                              "of some columns to its rows by row id")
        if str(schema.options.get(_DELETION_VECTORS, "false")).strip().lower() == "true":
            raise SchemaError(f"{EVOLUTION} cannot be combined with '{_DELETION_VECTORS}' (Paimon 1.4 refuses the "
                              "pair: its data-evolution reads merge files by row position and apply no deletion "
                              "vectors)")
    if not enabled(schema.options):
        return
    if schema.primary_keys:
        raise SchemaError(f"{ENABLED} is for append tables: a table with a primary key "
                          f"({', '.join(schema.primary_keys)}) does not track row ids")
    bucket = schema.num_buckets
    if bucket != -1:
        raise SchemaError(f"{ENABLED} needs 'bucket' = '-1' (rows in no fixed bucket), not {bucket}")
    taken = [name for name in schema.field_names if name.upper() in NAMES]
    if taken:
        raise SchemaError(f"{ENABLED}: column {taken[0]!r} has the name of a row-tracking column ({', '.join(NAMES)})")


def check_change(before: Mapping[str, str], after: Mapping[str, str], table: str = "") -> None:
    """``row-tracking.enabled`` and ``data-evolution.enabled`` are fixed at CREATE (Paimon's immutable
    options): rows written before would have no ids, ids given out would be lost, and files of some
    columns would be read as rows of their own."""
    where = f"table {table}: " if table else ""
    if enabled(before) != enabled(after):
        raise SchemaError(f"{where}option {ENABLED!r} cannot be changed after the table is created (rows are "
                          "given ids when written); create a new table with it and copy the rows")
    if evolution_enabled(before) != evolution_enabled(after):
        raise SchemaError(f"{where}option {EVOLUTION!r} cannot be changed after the table is created (its files "
                          "are read by it); create a new table with it and copy the rows")


def _has_row_id_column(f: DataFileMeta) -> bool:
    return f.write_cols is not None and ROW_ID in f.write_cols


def assign(entries: Sequence[mf.ManifestEntry], snapshot_id: int, next_row_id: int) -> tuple[list[mf.ManifestEntry], int]:
    """The commit's entries with sequence numbers and first row ids given out (see the module doc),
    and the next free row id."""
    out: list[mf.ManifestEntry] = []
    for e in entries:
        f = e.file
        if e.kind == mf.ADD and f.min_sequence_number == 0:
            f = replace(f, min_sequence_number=snapshot_id, max_sequence_number=snapshot_id)
        if e.kind == mf.ADD and f.file_source == FILE_SOURCE_APPEND and f.first_row_id is None \
                and not _has_row_id_column(f):
            f = replace(f, first_row_id=next_row_id)
            next_row_id += f.row_count
        out.append(e if f is e.file else replace(e, file=f))
    return out, next_row_id


def tracked_columns(data: Any, meta: DataFileMeta) -> tuple[Any, Any]:
    """The ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` of a data file's rows (pyarrow arrays): ``data`` is
    the file read with the two as its last columns (nulls where it has none)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n: int = data.num_rows
    row_id, seq = data.column(ROW_ID), data.column(SEQUENCE_NUMBER)
    if meta.first_row_id is not None:
        row_id = pc.coalesce(row_id, pa.array(range(meta.first_row_id, meta.first_row_id + n), pa.int64()))
    elif row_id.null_count:
        raise SchemaError(f"data file {meta.file_name} of a row-tracking table has rows without a {ROW_ID} "
                          "and no first row id")
    seq = pc.coalesce(seq, pa.scalar(meta.max_sequence_number, pa.int64()))
    return row_id, seq
