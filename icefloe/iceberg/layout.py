# pyright: strict
"""An Iceberg table's metadata as a tree people read: snapshot -> manifest list -> manifests ->
data and delete files with their entry status (spec: Snapshots, Manifest Lists, Manifests)."""
from __future__ import annotations

import os

from typing import TYPE_CHECKING

from icefloe.core.tree import Node
from icefloe.errors import IcefloeError
from icefloe.iceberg.manifest_reader import (
    load_manifest_entries,
    snapshot_manifests,
)

STATUS = {0: "EXISTING", 1: "ADDED", 2: "DELETED"}
_STATUS_STYLE = {0: "", 1: "green", 2: "red"}

if TYPE_CHECKING:
    from icefloe.iceberg.table import BaseTable


def metadata_tree(table: BaseTable, all_snapshots: bool = True) -> Node:
    """The tree of ``table`` (a ``BaseTable``): every snapshot, or only the current one."""
    table.refresh()
    meta = table.metadata
    root = Node([(table.name, "bold"), (" ", ""), (table.metadata_location, "dim")])
    snaps = meta.snapshots if all_snapshots else [s for s in [meta.current_snapshot] if s is not None]
    for s in snaps:
        parts = [("snapshot ", ""), (str(s.snapshot_id), "bold"), (f" seq {s.sequence_number} {s.operation}", "")]
        if s.snapshot_id == meta.current_snapshot_id:
            parts += [(" ", ""), ("(current)", "green")]
        sn = root.add(*parts)
        if not s.manifest_list:
            continue
        ml = sn.add(f"manifest list {os.path.basename(s.manifest_list)}")
        try:
            mans = snapshot_manifests(table.io, s)
        except IcefloeError as e:
            ml.add((str(e), "red"))
            continue
        for m in mans:
            kind = "data" if m.content == 0 else "deletes"
            mn = ml.add(f"manifest {os.path.basename(m.manifest_path)} ",
                        (f"({kind}, seq {m.sequence_number}, +{m.added_files_count} ={m.existing_files_count} "
                         f"-{m.deleted_files_count})", "dim"))
            try:
                entries = load_manifest_entries(table.io, meta, m)
            except IcefloeError as e:
                mn.add((str(e), "red"))
                continue
            for e in entries:
                f = e.data_file
                rel = os.path.relpath(f.file_path, table.location) if f.file_path.startswith(table.location) \
                    else f.file_path
                mn.add((f"{STATUS[e.status]:8} {rel} ", _STATUS_STYLE[e.status]),
                       (f"({f.record_count} rows, {f.file_size_in_bytes} bytes)", "dim"))
    return root
