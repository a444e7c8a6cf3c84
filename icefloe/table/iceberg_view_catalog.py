# pyright: strict
"""The Iceberg view of a Paimon table registered in an Iceberg REST catalog
(``metadata.iceberg.storage = rest-catalog``), as Paimon's REST metadata committer keeps it.

The view's metadata is written first, where ``hadoop-catalog`` writes it
(``<warehouse>/iceberg/<db>/<table>/metadata``); that directory is the reference. Then the
catalog's table is brought to it (Paimon's rules):

* the namespace is created when missing;
* a table the catalog lacks is registered from a copy of the view's current metadata
  (``rest-register-v<N>-<uuid>.metadata.json`` beside it, never overwritten: the catalog keeps
  naming it until its next commit), so its field, schema and snapshot ids are Paimon's;
* a table that is behind is committed to: the view's snapshots it lacks added (their schemas
  first), ``main`` moved, the snapshots the view no longer keeps removed, the tags and properties
  set, under the requirements that the table is still the one read (its uuid, refs, schema);
* a table that cannot follow (a snapshot id of another timeline, after a rollback, or a state
  only a rewrite reaches) is dropped, without its files, and registered again.

Each step reads the catalog's state, so a registration that failed after the Paimon commit is
done by the next commit, or by ``sync_iceberg()``. The catalog also gets Iceberg's
``write.metadata.previous-versions-max`` and ``write.metadata.delete-after-commit.enabled`` from
the ``metadata.iceberg.*`` options of the same meaning.
"""
from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any, Optional

from icefloe.core.io import FileIO
from icefloe.errors import IcebergViewError, IcefloeError, TableAlreadyExistsError, VersionConflict
from icefloe.iceberg.metadata_builder import (AddSchema, AddSnapshot, RemoveSnapshotRef, RemoveSnapshots,
                                              SetCurrentSchema, SetProperties, SetSnapshotRef, TableUpdate,
                                              UpgradeFormatVersion)
from icefloe.iceberg.operations import Changes
from icefloe.iceberg.rest_client import RestCatalog
from icefloe.iceberg.schema import schema_to_json
from icefloe.iceberg.snapshot import Snapshot
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata
from icefloe.iceberg.table_requirements import requirements_for
from icefloe.paimon.iceberg_options import IcebergCompat, RestTarget

REGISTER_PREFIX = "rest-register-v"
ATTEMPTS = 3


def catalog_properties(compat: IcebergCompat) -> dict[str, str]:
    """The Iceberg table properties the catalog's table gets beside the view's own."""
    return {"write.metadata.previous-versions-max": str(compat.previous_versions_max),
            "write.metadata.delete-after-commit.enabled": str(compat.delete_after_commit).lower()}


def client(target: RestTarget) -> RestCatalog:
    return RestCatalog(target.uri, credential=target.credential, token=target.token)


def publish(io: FileIO, compat: IcebergCompat, meta: TableMetadata) -> None:
    """Bring the catalog's table to ``meta``, the view's current metadata (module docstring);
    ``IcebergViewError`` when the catalog refuses or cannot be reached."""
    target = compat.rest
    if target is None:
        return
    snap = meta.current_snapshot_id
    try:
        _publish(io, compat, target, meta)
    except IcebergViewError:
        raise
    except IcefloeError as e:
        raise IcebergViewError(f"Paimon snapshot {snap} is committed and its Iceberg metadata written in "
                               f"{compat.metadata_dir}, but registering it as {target.name} in the REST catalog "
                               f"{target.uri} failed ({e}); the next commit registers it") from e


def _publish(io: FileIO, compat: IcebergCompat, target: RestTarget, meta: TableMetadata) -> None:
    cat = client(target)
    meta = replace(meta, properties={**meta.properties, **catalog_properties(compat)})
    if not cat.namespace_exists(target.namespace):
        cat.create_namespace(target.namespace, exist_ok=True)
    for _ in range(ATTEMPTS):
        ops = cat.table_operations(target.name)
        try:
            if not ops.exists():
                _register(io, compat, cat, target, meta)
                return
            version, current = ops.load()
            changes = changes_to(current, meta)
            if changes is None:                 # another timeline: Paimon drops the table and makes it again
                cat.drop_table(target.name, purge=False)
                _register(io, compat, cat, target, meta)
                return
            if changes.updates:
                ops.commit_changes(version, current, changes)
            return
        except (VersionConflict, TableAlreadyExistsError):
            continue                            # another writer moved it: read it again
    raise IcebergViewError(f"{target.name} in the REST catalog {target.uri} kept changing under the registration "
                           f"of Paimon snapshot {meta.current_snapshot_id} ({ATTEMPTS} attempts); the next commit "
                           "registers it")


def _register(io: FileIO, compat: IcebergCompat, cat: RestCatalog, target: RestTarget, meta: TableMetadata) -> None:
    path = f"{compat.metadata_dir}/{REGISTER_PREFIX}{meta.current_snapshot_id}-{uuid.uuid4()}.metadata.json"
    io.write_bytes(path, meta.dumps(), overwrite=False)
    cat.register_table(target.name, path)


def _identity(s: Snapshot) -> tuple[int, int, Any, Any]:
    """What tells two snapshots of one id apart: the Paimon commit they stand for."""
    return (s.snapshot_id, s.timestamp_ms, s.summary.get("paimon-commit-user"),
            s.summary.get("paimon-commit-identifier"))


def _schema_key(doc: dict[str, Any]) -> tuple[str, str]:
    return repr(doc.get("fields")), repr(doc.get("identifier-field-ids") or [])


def changes_to(current: TableMetadata, meta: TableMetadata) -> Optional[Changes]:
    """The updates (and their requirements) that bring the catalog's ``current`` to the view's
    ``meta``; None when no commit can (the table must be registered again)."""
    have = {s.snapshot_id: s for s in current.snapshots}
    want = {s.snapshot_id: s for s in meta.snapshots}
    if current.format_version > meta.format_version or current.spec.to_json() != meta.spec.to_json():
        return None
    if any(sid in want and _identity(s) != _identity(want[sid]) for sid, s in have.items()):
        return None
    adds = [s for s in meta.snapshots if s.snapshot_id not in have]
    if any(s.sequence_number <= current.last_sequence_number for s in adds):
        return None
    if meta.format_version >= 3 and any((s.first_row_id or 0) < (current.next_row_id or 0) for s in adds):
        return None
    updates: list[TableUpdate] = []
    if meta.format_version > current.format_version:
        updates.append(UpgradeFormatVersion(meta.format_version))
    # schemas: the view's, under the id the catalog has for the same one, else a free id
    known = {_schema_key(schema_to_json(s)): s.schema_id for s in current.schemas}
    taken = {s.schema_id for s in current.schemas}
    ids: dict[int, int] = {}
    needed = {meta.current_schema_id} | {s.schema_id for s in adds}
    for s in meta.schemas:
        if s.schema_id not in needed:
            continue
        doc = schema_to_json(s)
        sid = known.get(_schema_key(doc))
        if sid is None:
            sid = s.schema_id if s.schema_id not in taken else max(taken) + 1
            taken.add(sid)
            known[_schema_key(doc)] = sid
            updates.append(AddSchema(dict(doc, **{"schema-id": sid}),
                                     max(meta.last_column_id, current.last_column_id)))
        ids[s.schema_id] = sid
    if ids[meta.current_schema_id] != current.current_schema_id:
        updates.append(SetCurrentSchema(ids[meta.current_schema_id]))
    present = set(have)
    for s in adds:
        doc = s.to_json()
        if s.schema_id is not None:
            doc["schema-id"] = ids[s.schema_id]
        if doc.get("parent-snapshot-id") not in present:
            doc.pop("parent-snapshot-id", None)         # expired from the view before the catalog had it
        updates.append(AddSnapshot(doc))
        present.add(s.snapshot_id)
    main = current.refs.get(MAIN_BRANCH)
    if meta.current_snapshot_id is not None and (main is None or main.snapshot_id != meta.current_snapshot_id):
        updates.append(SetSnapshotRef(MAIN_BRANCH, meta.current_snapshot_id, "branch"))
    for name, ref in current.refs.items():
        if name != MAIN_BRANCH and name not in meta.refs:
            updates.append(RemoveSnapshotRef(name))
    gone = sorted(sid for sid in have if sid not in want)
    if gone:
        updates.append(RemoveSnapshots(gone))
    for name, ref in meta.refs.items():
        if name != MAIN_BRANCH and current.refs.get(name) != ref:
            updates.append(SetSnapshotRef(name, ref.snapshot_id, ref.type, max_ref_age_ms=ref.max_ref_age_ms))
    props = {k: v for k, v in meta.properties.items() if current.properties.get(k) != v}
    if props:
        updates.append(SetProperties(props))
    return Changes(updates, requirements_for(current) if updates else [])


def catalog_state(compat: IcebergCompat) -> Optional[TableMetadata]:
    """The catalog's metadata of the registered table, None when it has none."""
    target = compat.rest
    if target is None:
        return None
    ops = client(target).table_operations(target.name)
    if not ops.exists():
        return None
    return ops.load()[1]


def in_step(catalog_meta: Optional[TableMetadata], meta: TableMetadata) -> bool:
    """Whether the catalog's table stands for the same Paimon snapshot as the view's metadata."""
    if catalog_meta is None or catalog_meta.current_snapshot is None or meta.current_snapshot is None:
        return False
    return _identity(catalog_meta.current_snapshot) == _identity(meta.current_snapshot)


__all__ = ["publish", "changes_to", "catalog_state", "in_step", "catalog_properties", "REGISTER_PREFIX"]
