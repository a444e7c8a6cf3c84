"""Table names in SQL: ``db.table``, ``<catalog>.db.table`` and metadata tables.

``local.db.tb01`` (the demo's catalog name, configurable) and ``db.tb01`` name
the same icefloe table; ``db.tb01.snapshots`` and ``local.db.tb01.snapshots``
name its metadata tables (for Paimon tables also ``db.`tb01$snapshots```). A two-part name that is not an icefloe table is left
to Spark (it may be a table of Spark's own catalog); a name under the icefloe
catalog that does not exist is an error.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from sqlglot import exp

from icefloe.sql.metadata_tables import METADATA_TABLES


@dataclass(frozen=True)
class TableRef:
    name: str                          # "db.table" as the icefloe catalog knows it
    metadata: Optional[str] = None     # "snapshots", "files"... for metadata tables
    qualified: bool = False            # written with the icefloe catalog name
    ref: Optional[str] = None          # db.t.branch_dev / db.t.tag_v1: the branch or tag read or written
    ref_kind: Optional[str] = None     # "branch" | "tag"
    catalog: Optional[str] = None      # another catalog of the session (other.db.t); None: the session's own

    def __str__(self) -> str:
        return (f"{self.catalog}." if self.catalog else "") + self.name + \
            (f".{self.ref_kind}_{self.ref}" if self.ref else "") + \
            (f".{self.metadata}" if self.metadata else "")


def _ref_part(part: str) -> Optional[tuple[str, str]]:
    """(kind, name) of Iceberg's ``branch_<name>`` / ``tag_<name>`` table-name suffix."""
    for kind in ("branch", "tag"):
        if part.lower().startswith(kind + "_") and len(part) > len(kind) + 1:
            return kind, part[len(kind) + 1:]
    return None


def resolve_parts(parts: list[str], catalog_name: str, exists: Callable[[str], bool]) -> tuple[Optional[TableRef], bool]:
    """(ref, ours): ``ref`` for an existing icefloe table; ``ours`` when the name is in our catalog.

    ``exists(name)`` tells whether ``db.table`` is an icefloe table.
    """
    parts = [p for p in parts]
    if parts and "$" in parts[-1]:
        # Paimon's spelling of system tables: db.`t$snapshots`
        base, _, suffix = parts[-1].rpartition("$")
        if base and suffix.lower() in METADATA_TABLES:
            ref, ours = resolve_parts(parts[:-1] + [base], catalog_name, exists)
            if ref is not None and ref.metadata is None:
                return TableRef(ref.name, suffix.lower(), ref.qualified), True
            return None, ours
    low = [p.lower() for p in parts]
    cat = catalog_name.lower()
    if len(parts) in (4, 5) and low[-1] in METADATA_TABLES and (ref_part := _ref_part(parts[-2])) and \
            (len(parts) == 4) != (low[0] == cat):
        # a branch's or tag's metadata table, db.t.`branch_b`.files: the metadata table as of the
        # ref's head, as Iceberg's path identifiers (``<table>#files,branch_b``) select it
        name = f"{parts[-4]}.{parts[-3]}"
        if not exists(name):
            return None, len(parts) == 5
        kind, ref = ref_part
        return TableRef(name, low[-1], len(parts) == 5, ref=ref, ref_kind=kind), True
    if len(parts) == 4 and low[0] == cat and low[3] in METADATA_TABLES:
        name = f"{parts[1]}.{parts[2]}"
        return (TableRef(name, low[3], True) if exists(name) else None), True
    if len(parts) in (3, 4) and (ref_part := _ref_part(parts[-1])) and (len(parts) == 3 or low[0] == cat):
        name = f"{parts[-3]}.{parts[-2]}"
        if exists(name):
            kind, ref = ref_part
            return TableRef(name, None, len(parts) == 4, ref=ref, ref_kind=kind), True
        if len(parts) == 4:
            return None, True
    if len(parts) == 3 and low[0] == cat:
        name = f"{parts[1]}.{parts[2]}"
        return (TableRef(name, None, True) if exists(name) else None), True
    if len(parts) == 3 and low[2] in METADATA_TABLES:
        name = f"{parts[0]}.{parts[1]}"
        if exists(name):
            return TableRef(name, low[2], False), True
        return None, False
    if len(parts) == 2:
        name = f"{parts[0]}.{parts[1]}"
        if exists(name):
            return TableRef(name, None, False), True
    return None, False


def table_parts(table: exp.Table) -> list[str]:
    parts = []
    for key in ("catalog", "db", "this"):
        v = table.args.get(key)
        if v is None:
            continue
        if isinstance(v, exp.Dot):  # deeper names: a.b.c.d
            parts.extend(p.name for p in v.flatten())
        else:
            parts.append(v.name)
    return parts
