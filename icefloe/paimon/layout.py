# pyright: strict
"""A Paimon table's metadata as a tree people read: snapshot -> base/delta (and changelog)
manifest lists -> manifests -> ADD/DELETE data file entries (the spec's "Snapshot" and
"Manifest" sections)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from icefloe.core.tree import Node
from icefloe.errors import IcefloeError
from icefloe.paimon import manifest as mf
from icefloe.paimon.snapshot import Snapshot

if TYPE_CHECKING:
    from icefloe.paimon.table import FileStoreTable


def manifest_lists(snap: Snapshot) -> list[tuple[str, str]]:
    """(kind, manifest list name) of a snapshot: base, delta, and changelog if any."""
    out = [("base", snap.base_manifest_list), ("delta", snap.delta_manifest_list)]
    if snap.changelog_manifest_list:
        out.append(("changelog", snap.changelog_manifest_list))
    return out


def metadata_tree(table: FileStoreTable, all_snapshots: bool = True) -> Node:
    """The tree of ``table`` (a ``FileStoreTable``): every snapshot, or only the latest."""
    table.refresh()
    store = table.store
    current = table.current_snapshot()
    root = Node([(table.name, "bold"), (" ", ""), (f"{table.location} (paimon)", "dim")])
    snaps = table.snapshots() if all_snapshots else [s for s in [current] if s is not None]
    for s in snaps:
        parts = [(f"snapshot-{s.id} ", ""), (str(s.commit_kind), "bold"),
                 (f" schema {s.schema_id} {s.total_record_count} rows", "")]
        if current is not None and s.id == current.id:
            parts += [(" ", ""), ("(current)", "green")]
        sn = root.add(*parts)
        for kind, lst in manifest_lists(s):
            ml = sn.add(f"{kind} manifest list {lst}")
            try:
                metas = store.read_manifest_list(lst)
            except IcefloeError as e:
                ml.add((str(e), "red"))
                continue
            for m in metas:
                mn = ml.add(f"manifest {m.file_name} ",
                            (f"(+{m.num_added_files} -{m.num_deleted_files}, schema {m.schema_id})", "dim"))
                try:
                    entries = store.read_manifest(m.file_name, m.file_size)
                except IcefloeError as e:
                    mn.add((str(e), "red"))
                    continue
                for e in entries:
                    path = store.data_file_path(e)
                    rel = os.path.relpath(path, table.location) if path.startswith(table.location) else path
                    added = e.kind == mf.ADD
                    mn.add((f"{'ADD' if added else 'DELETE':8} {rel} ", "green" if added else "red"),
                           (f"({e.file.row_count} rows, {e.file.file_size} bytes)", "dim"))
    return root
