# pyright: strict
"""Paimon tables that do not own their data files.

``migrate`` into Iceberg keeps the Paimon table as a backup whose data files the new Iceberg
table references where they are. The backup is marked with the option ``SHARED_WITH`` (its value
names the Iceberg table), and icefloe then never deletes, moves or replaces those files through
it: commits (appends, overwrites, compaction, schema-free deletes), rollbacks, fast-forwards,
snapshot expiry, orphan cleanup and renames of the table are refused, and dropping it deletes
the Paimon metadata only (the way Iceberg's catalogs drop a ``gc.enabled=false`` table), leaving
the data files to the table that references them. Removing the option (``update_properties``)
is the user's explicit choice to make the table own its files again.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Mapping, Optional

from icefloe.core.io import FileIO, prune_empty_dirs
from icefloe.errors import NoSuchTableError, SharedFilesError
from icefloe.paimon.schema import latest_schema, schema_path

SHARED_WITH = "icefloe.files-shared-with"
# a Paimon table's own metadata directories (the rest of its directory holds data files)
METADATA_DIRS = ("schema", "snapshot", "manifest", "index", "statistics", "tag", "branch", "changelog",
                 "consumer", "service", "metadata")


def shared_with(options: Mapping[str, str]) -> Optional[str]:
    """The table that references this table's data files (``SHARED_WITH``), or None."""
    value = options.get(SHARED_WITH)
    return value if value else None


def check_owns_files(options: Mapping[str, str], table_path: str, what: str) -> None:
    """Refuse ``what`` on a table whose data files another table references."""
    other = shared_with(options)
    if other is not None:
        raise SharedFilesError(f"{table_path}: cannot {what}: its data files are shared with {other} "
                               f"(option {SHARED_WITH}), which a migration made over them; the table is "
                               "read-only so they are never deleted or moved; drop it (its metadata only "
                               f"goes) or remove the option to make it own its files again")


def mark_shared(io: FileIO, table_path: str, other: str) -> str:
    """Mark the table's data files as ``other``'s (a new schema version with ``SHARED_WITH``);
    returns the schema file written, which ``unmark`` deletes to undo the mark exactly (no snapshot
    refers to it: the table takes no commit while marked)."""
    current = latest_schema(io, table_path)
    if current is None:
        raise NoSuchTableError(f"no Paimon table at {table_path}")
    marked = dataclasses.replace(current, id=current.id + 1, options={**current.options, SHARED_WITH: other},
                                 time_millis=int(time.time() * 1000))
    path = schema_path(table_path, marked.id)
    io.write_bytes(path, marked.to_json().encode("utf-8"), overwrite=False)
    return path


def unmark(io: FileIO, path: str) -> None:
    """Undo ``mark_shared`` (the schema file it wrote)."""
    io.delete(path)


def drop_metadata(io: FileIO, table_path: str) -> None:
    """Drop a table that does not own its data files: its metadata directories are deleted (the
    schemas first: from then on the directory is no table) and the data files stay."""
    root = table_path.rstrip("/")
    for name in METADATA_DIRS:
        d = f"{root}/{name}"
        if io.is_dir(d):
            io.delete_tree(d)
    prune_empty_dirs(io, root)


__all__ = ["SHARED_WITH", "shared_with", "check_owns_files", "mark_shared", "unmark", "drop_metadata"]
