# pyright: strict
"""What runs after a Paimon table's snapshots change: a commit, an expiry, a rollback.

A layer above (the Iceberg view of a Paimon table, ``icefloe.table.iceberg_view``) registers a
function here; ``changed(store)`` calls each with the table's ``FileStore`` once the snapshot files
are in place. The formats' layers never import each other, so this is where they meet. A function
that fails raises to the caller: the Paimon change is done, but what the function keeps in step
with it is not.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from icefloe.paimon.file_store import FileStore

Hook = Callable[["FileStore"], None]

_HOOKS: list[Hook] = []


def register(fn: Hook) -> None:
    """Run ``fn(store)`` after every change of a Paimon table's snapshots (once per function)."""
    if fn not in _HOOKS:
        _HOOKS.append(fn)


def changed(store: FileStore) -> None:
    for fn in list(_HOOKS):
        fn(store)


__all__ = ["register", "changed"]
