# pyright: strict
"""The Iceberg view of a Paimon table (Paimon's Iceberg compatibility, ``metadata.iceberg.storage``).

After every change of a Paimon table's snapshots that icefloe makes (a commit of any kind, an
expiry, a rollback), ``sync`` writes Iceberg metadata over the same data files, as Paimon's
``IcebergCommitCallback`` does, so that Iceberg readers (Iceberg's Java runtime, pyiceberg,
DuckDB...) read the table by its Iceberg metadata. Paimon's rules:

* Iceberg version ``vN.metadata.json`` and Iceberg snapshot ``N`` (sequence number ``N``) stand for
  Paimon snapshot ``N``, its commit time their timestamp; ``version-hint.text`` names the latest;
* the data files an Iceberg reader can read alone: every live file of an append table; of a
  primary-key table only the files at the highest LSM level, which full compaction writes (merged
  by key, deletes dropped), so the Iceberg view shows the rows as of the last full compaction;
* columns keep Paimon's field ids (Iceberg's schema ids are Paimon's schema ids), partition keys
  are identity partitions with field ids from 1000; CHAR/VARCHAR are strings, VARBINARY binary;
* an Iceberg snapshot is kept while Paimon keeps its snapshot; old ``vN.metadata.json`` are
  deleted after a commit unless ``metadata.iceberg.previous-versions-max`` keeps some;
* the manifests of earlier snapshots are reused; once ``metadata.iceberg.compaction.min.file-num``
  small ones pile up (and ``max.file-num``, or their total reaches Paimon's manifest target size),
  they are merged into one.

Each version is computed from the whole Paimon snapshot against the previous Iceberg version (not
from one commit's changes), so a crash between the Paimon commit and its Iceberg metadata, or
anything else that left the view behind, is repaired by the next sync; a version from an
abandoned timeline (after a rollback) is replaced. The formats' layers never import each other:
this module, above both, is where they meet; it registers ``sync`` with ``paimon.table_hooks``.
"""
from __future__ import annotations

import json
import logging
import re
import uuid
import warnings
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Optional, Protocol

from pyroaring import BitMap64

from icefloe.core.io import FileAlreadyExistsError, FileIO
from icefloe.core.reports import Report
from icefloe.core.types.model import (IcebergType, ListType, MapType, NestedField, Schema, StructType,
                                      widen_to_common_types)
from icefloe.core.values import to_internal
from icefloe.errors import CorruptMetadataError, IcebergViewError, IcebergViewWarning, IcefloeError, NoSuchSnapshotError
from icefloe.iceberg import conversions
from icefloe.iceberg import puffin
from icefloe.iceberg.manifest import ADDED, DATA, DELETED, EXISTING, POSITION_DELETES, DataFile, ManifestEntry
from icefloe.iceberg.manifest_avro import write_manifest
from icefloe.iceberg.manifest_reader import load_manifest_entries, with_counts
from icefloe.iceberg.manifest_list import (DATA_MANIFEST, ManifestFile, assign_first_row_ids, manifest_file_for,
                                            read_manifest_list, write_manifest_list)
from icefloe.iceberg.partitioning import PartitionField, PartitionSpec
from icefloe.iceberg.schema import name_mapping
from icefloe.iceberg.snapshot import Snapshot, SnapshotRef, build_summary
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata
from icefloe.iceberg.transforms import IdentityTransform
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon import table_hooks
from icefloe.paimon.binary_row import decode_row
from icefloe.paimon.data_file import DataFileMeta
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.iceberg_options import DISABLED, IcebergCompat, check_types, compat_of, storage_of
from icefloe.paimon.kv_compact import max_level
from icefloe.paimon.schema import TableSchema, latest_schema, load_schema
from icefloe.paimon.snapshot import Snapshot as PaimonSnapshot
from icefloe.paimon.tag import TagManager
from icefloe.table import iceberg_view_catalog

log = logging.getLogger(__name__)

HINT_FILE = "version-hint.text"
_VERSION_RE = re.compile(r"^v(\d+)\.metadata\.json$")
PARTITION_FIELD_START = 1000


class ViewedTable(Protocol):
    """What the view's check and description need of the Paimon table (``PaimonTable``)."""

    @property
    def location(self) -> str: ...

    @property
    def io(self) -> FileIO: ...

    @property
    def table_schema(self) -> TableSchema: ...

    @property
    def store(self) -> FileStore: ...

    def current_snapshot(self) -> Optional[PaimonSnapshot]: ...


@dataclass
class _Visible:
    path: str
    partition: tuple[Any, ...]          # Iceberg internal values
    file: DataFileMeta        # the Paimon data file
    partition_bytes: bytes = b""
    bucket: int = 0


# --------------------------------------------------------------------------- schema and spec
def iceberg_schema(paimon_schema: TableSchema, format_version: int) -> Schema:
    """A Paimon schema as Iceberg's: the same field ids and schema id, Paimon's types mapped."""
    check_types(paimon_schema.fields, format_version)
    fields = [NestedField(f.field_id, f.name, _with_nested_ids(widen_to_common_types(f.field_type), f.field_id, 0),
                          f.required, f.doc) for f in paimon_schema.fields]
    return Schema(fields, schema_id=int(paimon_schema.id))


# Paimon gives list elements and map keys and values no ids; its Iceberg metadata (and its Parquet
# writer from 1.0) derive them from the field's id and the nesting depth (``SpecialFields``)
STRUCTURED_ID_BASE, STRUCTURED_DEPTH_LIMIT = 2**31 // 4, 1 << 10


def _with_nested_ids(t: IcebergType, field_id: int, depth: int) -> IcebergType:
    if isinstance(t, ListType):
        return ListType(STRUCTURED_ID_BASE + field_id * STRUCTURED_DEPTH_LIMIT + depth + 1,
                        _with_nested_ids(t.element_type, field_id, depth + 1), t.element_required)
    if isinstance(t, MapType):
        return MapType(STRUCTURED_ID_BASE - field_id * STRUCTURED_DEPTH_LIMIT - depth - 1,
                       _with_nested_ids(t.key_type, field_id, depth + 1),
                       STRUCTURED_ID_BASE + field_id * STRUCTURED_DEPTH_LIMIT + depth + 1,
                       _with_nested_ids(t.value_type, field_id, depth + 1), t.value_required, t.key_required)
    if isinstance(t, StructType):
        return StructType([NestedField(f.field_id, f.name, _with_nested_ids(f.field_type, f.field_id, 0),
                                       f.required, f.doc) for f in t.fields])
    return t


def iceberg_spec(paimon_schema: TableSchema) -> PartitionSpec:
    by_name = {f.name: f for f in paimon_schema.fields}
    return PartitionSpec([PartitionField(by_name[k].field_id, PARTITION_FIELD_START + i, IdentityTransform(), k)
                          for i, k in enumerate(paimon_schema.partition_keys)], spec_id=0)


# Paimon's ids of a primary-key file's system columns (its ``SpecialFields``)
KEY_FIELD_ID_START = 2**31 // 2
SEQUENCE_NUMBER_ID, VALUE_KIND_ID = 2**31 - 2, 2**31 - 3


def _name_mapping(schema: Schema, primary_key: bool) -> list[dict[str, Any]]:
    """Iceberg's name mapping, for data files written without field ids (Paimon before 1.0, and a
    primary-key table's files): the columns by name, and a key-value file's ``_KEY_<name>``,
    ``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` under Paimon's ids for them, so that a reader that
    maps every column of a file (pyiceberg) finds them and leaves them out."""
    mapping = name_mapping(schema)
    if primary_key:
        mapping += [{"field-id": KEY_FIELD_ID_START + f.field_id, "names": [f"_KEY_{f.name}"]}
                    for f in schema.fields]
        mapping += [{"field-id": SEQUENCE_NUMBER_ID, "names": ["_SEQUENCE_NUMBER"]},
                    {"field-id": VALUE_KIND_ID, "names": ["_VALUE_KIND"]}]
    return mapping


# --------------------------------------------------------------------------- data files
def _bound(t: IcebergType, value: Any) -> Optional[bytes]:
    if value is None or not t.is_primitive:
        return None
    try:
        return conversions.to_bytes(t, to_internal(t, value))
    except Exception:       # a value Iceberg cannot hold in this type: no bound (bounds are optional)
        return None


def _data_file(v: _Visible, schema: Schema, file_schema: TableSchema) -> DataFile:
    """The Iceberg ``data_file`` of a Paimon data file: counts, and Paimon's value statistics as
    bounds where the column's type is the same in the file's schema and the current one."""
    f = v.file
    lowers: dict[int, bytes] = {}
    uppers: dict[int, bytes] = {}
    nulls: dict[int, int] = {}
    stats = f.value_stats
    fields = file_schema.fields
    if f.value_stats_cols is not None:
        by_name = {x.name: x for x in fields}
        fields = [by_name[n] for n in f.value_stats_cols if n in by_name]
    if fields and stats.min_values.arity == len(fields):
        try:
            mins, maxs, counts = stats.decode([x.type for x in fields])
        except Exception:
            mins, maxs, counts = (None,) * len(fields), (None,) * len(fields), (None,) * len(fields)
        for x, lo, hi, nc in zip(fields, mins, maxs, counts):
            current = schema.find_field_or_none(x.field_id)
            if current is None:
                continue
            t = current.field_type
            if str(widen_to_common_types(x.field_type)) != str(t):
                continue
            if nc is not None:
                nulls[x.field_id] = int(nc)
            for out, val in ((lowers, lo), (uppers, hi)):
                b = _bound(t, val)
                if b is not None:
                    out[x.field_id] = b
    # the format the file's name gives it, as Paimon's Iceberg commit callback records each file's
    file_format = {"orc": "ORC", "avro": "AVRO"}.get(v.path.rsplit(".", 1)[-1].lower(), "PARQUET")
    return DataFile(file_path=v.path, file_format=file_format, partition=v.partition, record_count=f.row_count,
                    file_size_in_bytes=f.file_size, null_value_counts=nulls or None,
                    lower_bounds=lowers or None, upper_bounds=uppers or None)


def visible_files(store: FileStore, paimon_schema: TableSchema, snapshot: Optional[PaimonSnapshot], spec: PartitionSpec,
                  schema: Schema) -> list[_Visible]:
    """The live files of a Paimon snapshot an Iceberg reader can read alone (module docstring)."""
    options = paimon_schema.options
    pk = bool(paimon_schema.primary_keys)
    top = max_level(options) if pk else None
    vectors = pk and dv.enabled(options)
    ptypes = [f.field_type for f in spec.partition_type(schema).fields]
    out: list[_Visible] = []
    for e in store.live_entries(snapshot):
        if pk and (e.file.level == 0 if vectors else e.file.level != top):
            continue
        values = decode_row(e.partition, store.partition_types) if store.partition_types else ()
        out.append(_Visible(store.data_file_path(e), tuple(to_internal(t, x) for t, x in zip(ptypes, values)),
                            e.file, e.partition.to_bytes(), e.bucket))
    return out


# --------------------------------------------------------------------------- versions
def _versions(io: FileIO, metadata_dir: str) -> list[int]:
    try:
        names = io.list_dir(metadata_dir)
    except FileNotFoundError:
        return []
    return sorted(int(m.group(1)) for m in (_VERSION_RE.match(n) for n in names) if m)


def _load(io: FileIO, path: str) -> Optional[TableMetadata]:
    try:
        return TableMetadata.loads(io.read_bytes(path), path)
    except FileNotFoundError:
        return None


def _last_updated(io: FileIO, path: str, base: Optional[TableMetadata]) -> int:
    """When the view's metadata file ``path`` was written (the base's time when it is gone)."""
    meta = _load(io, path) or base
    if meta is None:
        raise CorruptMetadataError(path, "the Iceberg view's metadata file is missing")
    return meta.last_updated_ms


def _matches(meta: Optional[TableMetadata], snap: PaimonSnapshot) -> bool:
    """Whether Iceberg metadata stands for this Paimon snapshot: the same id and, for icefloe's,
    the same commit (time, user, identifier, which icefloe keeps in the Iceberg summary); Paimon's
    Java engine records only the time it wrote the metadata, at or after its commit. Metadata of an
    id from before a rollback, or of a dropped table of the same name, is another commit's."""
    if meta is None or meta.current_snapshot_id != snap.id:
        return False
    cur = meta.current_snapshot
    if cur is None:
        return False
    if "paimon-commit-user" in cur.summary:          # icefloe's: the commit's own identity
        return (cur.timestamp_ms == snap.time_millis and cur.summary["paimon-commit-user"] == snap.commit_user
                and cur.summary.get("paimon-commit-identifier") == str(snap.commit_identifier))
    return cur.timestamp_ms >= snap.time_millis


def _delete(io: FileIO, path: str) -> None:
    try:
        io.delete(path)
    except FileNotFoundError:
        pass


def _live_entries(io: FileIO, meta: TableMetadata, schema: Schema) -> tuple[
        list[ManifestFile], dict[str, tuple[ManifestFile, ManifestEntry]], dict[Optional[str], ManifestEntry]]:
    """The data manifests of ``meta``'s current snapshot, its live data entries by path and its live
    deletion vectors by the data file they belong to (first row ids inherited, format v3)."""
    cur = meta.current_snapshot
    if cur is None:
        return [], {}, {}
    # the base's manifests are listed again in the new list: one without counts is counted first
    manifests = [with_counts(io, meta, m) for m in read_manifest_list(io, cur.manifest_list)]
    live: dict[str, tuple[ManifestFile, ManifestEntry]] = {}
    vectors: dict[Optional[str], ManifestEntry] = {}
    for m in manifests:
        for e in load_manifest_entries(io, meta, m):
            if e.status == DELETED:
                continue
            if m.content == DATA_MANIFEST:
                live[e.data_file.file_path] = (m, e)
            else:
                vectors[e.data_file.referenced_data_file] = e
    return [m for m in manifests if m.content == DATA_MANIFEST], live, vectors


def _vector_files(store: FileStore, snap: PaimonSnapshot, visible: list[_Visible],
                  base_live: dict[str, tuple[ManifestFile, ManifestEntry]],
                  base_vectors: dict[Optional[str], ManifestEntry], mdir: str,
                  uid: uuid.UUID) -> tuple[list[ManifestEntry], list[DataFile], list[ManifestEntry]]:
    """The Iceberg deletion vectors of the Paimon snapshot's vectors on ``visible`` files: those of
    an unchanged Paimon index file are the base's (the Puffin file is named after it), the others
    are written to a new Puffin file per Paimon index file. Returns (entries of the kept and new
    vectors, the base's vectors no longer current)."""
    by_bucket = dv.bucket_vectors(store, snap)
    kept: list[ManifestEntry] = []
    added: list[DataFile] = []
    todo: dict[str, tuple[Any, list[_Visible]]] = {}
    for v in visible:
        bv = by_bucket.get((v.partition_bytes, v.bucket))
        if bv is None or v.file.file_name not in bv.ranges:
            continue
        index_name = bv.index_path(v.file.file_name).rsplit("/", 1)[-1]     # a bucket may have several
        old = base_vectors.get(v.path)
        if old is not None and v.path in base_live \
                and old.data_file.file_path.rsplit("/", 1)[-1].startswith(f"dv-{index_name}-"):
            kept.append(old)
        else:
            todo.setdefault(index_name, (bv, []))[1].append(v)
    for name, (bv, files) in todo.items():
        bitmaps = bv.load(store.io)
        path = f"{mdir}/dv-{name}-{uid}.puffin"
        vectors = [(v.path, BitMap64(bitmaps[v.file.file_name])) for v in files]
        blobs = puffin.write_vectors(store.io, path, vectors, created_by="icefloe (Paimon deletion vectors)")
        size = store.io.size(path)
        for v, b in zip(files, blobs):
            added.append(DataFile(file_path=path, file_format="PUFFIN", partition=v.partition,
                                  record_count=int(b.properties["cardinality"]), file_size_in_bytes=size,
                                  content=POSITION_DELETES, referenced_data_file=v.path,
                                  content_offset=b.offset, content_size_in_bytes=b.length))
    kept_ids = {id(e) for e in kept}
    gone = [e for e in base_vectors.values() if id(e) not in kept_ids]     # replaced, or their file gone
    return kept, added, gone


# --------------------------------------------------------------------------- sync
def sync(store: FileStore, snapshot: Optional[PaimonSnapshot] = None) -> Optional[int]:
    """Bring the Iceberg view of the Paimon table of ``store`` up to its latest snapshot (or
    ``snapshot``); returns the Iceberg version now current, None when the view is disabled or the
    table has no snapshot. Failures raise ``IcebergViewError`` (the Paimon change stays)."""
    paimon_schema = latest_schema(store.io, store.table_path)
    if paimon_schema is None:
        return None
    compat = compat_of(store.table_path, paimon_schema.options)
    if compat is None:
        return None
    snap = snapshot or store.snapshots.latest()
    if snap is None:
        return None
    try:
        return _sync(store, paimon_schema, compat, snap)
    except IcefloeError as e:
        if isinstance(e, IcebergViewError):
            raise
        raise IcebergViewError(f"Paimon snapshot {snap.id} of {store.table_path} is committed, but its Iceberg "
                               f"metadata in {compat.metadata_dir} could not be written ({e}); the next commit "
                               "writes it") from e
    except OSError as e:
        raise IcebergViewError(f"Paimon snapshot {snap.id} of {store.table_path} is committed, but its Iceberg "
                               f"metadata in {compat.metadata_dir} could not be written ({e}); the next commit "
                               "writes it") from e


def _sync(store: FileStore, paimon_schema: TableSchema, compat: IcebergCompat, snap: PaimonSnapshot) -> int:
    io, mdir, n = store.io, compat.metadata_dir, snap.id
    versions = _versions(io, mdir)
    path_of: Callable[[int], str] = lambda v: f"{mdir}/v{v}.metadata.json"  # noqa: E731
    if n in versions:
        current = _load(io, path_of(n))
        if current is not None and _matches(current, snap):
            # no new snapshot: an expiry (the view drops what Paimon dropped), a tag created or
            # deleted, or a crash after the metadata was written (the hint and the clean-up are left)
            _refresh(io, compat, store, current, path_of(n), versions)
            _finish(io, compat, n, versions)
            _register(io, compat, path_of(n))
            return n
    # versions at or past n from another timeline (a rollback, a retried crash): not ours
    for v in [v for v in versions if v >= n]:
        _delete(io, path_of(v))
    versions = [v for v in versions if v < n]
    base, base_version = None, None
    for v in reversed(versions):
        meta = _load(io, path_of(v))
        try:
            paimon_then = store.snapshots.snapshot(v)
        except NoSuchSnapshotError:
            paimon_then = None          # expired in Paimon: still the view's last state
        if meta is not None and (paimon_then is None or _matches(meta, paimon_then)):
            base, base_version = meta, v
        break
    meta = _build(store, paimon_schema, compat, snap, base, base_version, versions)
    try:
        io.write_bytes(path_of(n), meta.dumps(), overwrite=False)
    except FileAlreadyExistsError:
        if not _matches(_load(io, path_of(n)), snap):
            raise IcebergViewError(f"{path_of(n)} was written by another writer for another snapshot") from None
    _finish(io, compat, n, versions + [n], dropped_from=base)
    _register(io, compat, path_of(n))
    return n


def _register(io: FileIO, compat: IcebergCompat, path: str) -> None:
    """``rest-catalog``: the catalog's table brought to the version at ``path`` (last: the
    metadata directory is the reference, as in Paimon)."""
    if compat.rest is not None:
        meta = _load(io, path)
        if meta is None:
            raise CorruptMetadataError(path, "the Iceberg view's metadata file is missing")
        iceberg_view_catalog.publish(io, compat, meta)


def _build(store: FileStore, paimon_schema: TableSchema, compat: IcebergCompat, snap: PaimonSnapshot,
           base: Optional[TableMetadata], base_version: Optional[int], versions: list[int]) -> TableMetadata:
    io, mdir, n = store.io, compat.metadata_dir, snap.id
    fv = compat.format_version
    if base is not None and base.format_version > fv:
        raise IcebergViewError(f"the Iceberg metadata of {store.table_path} has format version "
                               f"{base.format_version}; {fv} would lower it, which Iceberg does not allow")
    schema = iceberg_schema(paimon_schema, fv)
    spec = base.spec if base is not None else iceberg_spec(paimon_schema)
    ptype = spec.partition_type(schema)
    visible = visible_files(store, paimon_schema, snap, spec, schema)
    base_manifests, base_live, base_vectors = _live_entries(io, base, base.schema) if base is not None \
        else ([], {}, {})
    wanted = {v.path: v for v in visible}
    removed = {p for p in base_live if p not in wanted}
    added = [v for v in visible if v.path not in base_live]
    schema_cache: dict[int, TableSchema] = {}

    def file_schema(sid: int) -> TableSchema:
        if sid not in schema_cache:
            schema_cache[sid] = load_schema(store.io, store.table_path, sid)
        return schema_cache[sid]

    uid = uuid.uuid4()
    count = [0]

    def new_manifest(entries: list[ManifestEntry], content: int = DATA) -> ManifestFile:
        count[0] += 1
        path = f"{mdir}/{uid}-m{count[0] - 1}.avro"
        length = write_manifest(io, path, schema, spec, entries, content=content, format_version=fv)
        return manifest_file_for(path, length, spec.spec_id, content, n, n, entries, ptype)

    manifests: list[ManifestFile] = []
    removed_files: list[DataFile] = []
    for m in base_manifests:
        mine = [(p, e) for p, (mm, e) in base_live.items() if mm.manifest_path == m.manifest_path]
        if not mine:
            continue                  # nothing live in it any more
        if any(p in removed for p, _ in mine):
            entries: list[ManifestEntry] = []
            for p, e in mine:
                if p in removed:
                    entries.append(ManifestEntry(DELETED, n, e.sequence_number, e.file_sequence_number, e.data_file))
                    removed_files.append(e.data_file)
                else:
                    entries.append(ManifestEntry(EXISTING, e.snapshot_id, e.sequence_number,
                                                 e.file_sequence_number, e.data_file))
            manifests.append(new_manifest(entries))
        else:
            manifests.append(m)
    added_files = [_data_file(v, schema, file_schema(v.file.schema_id)) for v in added]
    if added_files:
        manifests.append(new_manifest([ManifestEntry(ADDED, n, n, n, f) for f in added_files]))
    manifests = _compact(io, compat, store, manifests, base, new_manifest)
    next_row_id = (base.next_row_id or 0) if base is not None else 0
    assigned = 0
    if fv >= 3:
        manifests, assigned = assign_first_row_ids(manifests, next_row_id)
    # deletion vectors (format v3): one delete manifest, written again whenever they change
    kept_dvs, new_dvs, gone_dvs = [], [], []
    if fv >= 3 and dv.enabled(paimon_schema.options):      # of primary-key and append tables
        kept_dvs, new_dvs, gone_dvs = _vector_files(store, snap, visible, base_live, base_vectors, mdir, uid)
    if kept_dvs or new_dvs or gone_dvs:
        entries = [ManifestEntry(EXISTING, e.snapshot_id, e.sequence_number, e.file_sequence_number, e.data_file)
                   for e in kept_dvs]
        entries += [ManifestEntry(ADDED, n, n, n, f) for f in new_dvs]
        entries += [ManifestEntry(DELETED, n, e.sequence_number, e.file_sequence_number, e.data_file)
                    for e in gone_dvs]
        manifests.append(new_manifest(entries, POSITION_DELETES))

    list_path = f"{mdir}/snap-{n}-{uid}.avro"
    parent = base.current_snapshot_id if base is not None else None
    write_manifest_list(io, list_path, manifests, n, parent, n, format_version=fv,
                        first_row_id=next_row_id if fv >= 3 else None)
    changed = removed_files or new_dvs or gone_dvs
    operation = "append" if not changed else ("delete" if not added_files else "overwrite")
    previous = (base.current_snapshot.summary or {}) if base is not None and base.current_snapshot else None
    summary = build_summary(operation, added_files + new_dvs, removed_files + [e.data_file for e in gone_dvs],
                            previous, {"paimon-snapshot-id": str(n), "paimon-commit-kind": str(snap.commit_kind),
                             "paimon-commit-user": str(snap.commit_user),
                             "paimon-commit-identifier": str(snap.commit_identifier)})
    new_snap = Snapshot(snapshot_id=n, sequence_number=n, timestamp_ms=snap.time_millis, manifest_list=list_path,
                        summary=summary, parent_snapshot_id=parent, schema_id=schema.schema_id,
                        first_row_id=next_row_id if fv >= 3 else None, added_rows=assigned if fv >= 3 else None)

    earliest = store.snapshots.earliest_id() or n
    kept = [s for s in (base.snapshots if base is not None else []) if earliest <= s.snapshot_id < n]
    schemas = [s for s in (base.schemas if base is not None else []) if s.schema_id != schema.schema_id]
    props = dict(compat.table_properties)
    props["schema.name-mapping.default"] = json.dumps(_name_mapping(schema, bool(paimon_schema.primary_keys)))
    keep_old = compat.previous_versions_max if compat.delete_after_commit else len(versions)
    log = [{"timestamp-ms": _last_updated(io, f"{mdir}/v{v}.metadata.json", base),
            "metadata-file": f"{mdir}/v{v}.metadata.json"}
           for v in (versions[-keep_old:] if keep_old else [])]
    return TableMetadata(
        location=store.table_path, table_uuid=base.table_uuid if base is not None else str(uuid.uuid4()),
        last_sequence_number=n, last_updated_ms=snap.time_millis,
        last_column_id=max(schema.highest_field_id, base.last_column_id if base is not None else 0),
        schemas=schemas + [schema], current_schema_id=schema.schema_id,
        partition_specs=[spec], default_spec_id=spec.spec_id,
        last_partition_id=max(spec.last_field_id, PARTITION_FIELD_START - 1),
        properties=props, current_snapshot_id=n, snapshots=kept + [new_snap],
        snapshot_log=[{"timestamp-ms": s.timestamp_ms, "snapshot-id": s.snapshot_id} for s in kept + [new_snap]],
        metadata_log=log, sort_orders=[{"order-id": 0, "fields": []}], default_sort_order_id=0,
        refs={MAIN_BRANCH: SnapshotRef(n, "branch"), **tag_refs(store, {s.snapshot_id for s in kept + [new_snap]})},
        format_version=fv,
        next_row_id=next_row_id + assigned if fv >= 3 else None,
    )


# Paimon's Iceberg tags never age out by Iceberg's rule: Paimon expires its tags itself
TAG_MAX_REF_AGE_MS = 2**63 - 1


def tag_refs(store: FileStore, snapshot_ids: Iterable[int]) -> dict[str, SnapshotRef]:
    """Paimon's tags as Iceberg tag refs, those of a snapshot the view keeps (an Iceberg ref to a
    snapshot the metadata lacks would make every read fail), as Paimon's ``IcebergCommitCallback``
    writes them."""
    return {t.name: SnapshotRef(t.snapshot_id, "tag", max_ref_age_ms=TAG_MAX_REF_AGE_MS)
            for t in TagManager(store.io, store.meta_path).tags() if t.snapshot_id in snapshot_ids}


def _compact(io: FileIO, compat: IcebergCompat, store: FileStore, manifests: list[ManifestFile],
             base: Optional[TableMetadata], new_manifest: Callable[[list[ManifestEntry]], ManifestFile]
             ) -> list[ManifestFile]:
    """Paimon's rule: manifests under 2/3 of the target size are candidates; merged into one when
    there are ``min.file-num`` of them and either ``max.file-num`` or the target size in total."""
    target = store.options.manifest_target_file_size
    small = [m for m in manifests if m.manifest_length < target * 2 // 3]
    if len(small) < compat.compact_min_files:
        return manifests
    if len(small) < compat.compact_max_files and sum(m.manifest_length for m in small) < target:
        return manifests
    if base is None:
        return manifests
    entries: list[ManifestEntry] = []
    for m in small:
        for e in load_manifest_entries(io, base, m):
            if e.status != DELETED:
                entries.append(ManifestEntry(EXISTING, e.snapshot_id, e.sequence_number, e.file_sequence_number,
                                             e.data_file))
    keep = [m for m in manifests if m not in small]
    return keep + ([new_manifest(entries)] if entries else [])


def _refresh(io: FileIO, compat: IcebergCompat, store: FileStore, meta: TableMetadata, path: str,
             versions: list[int]) -> None:
    """The current version brought up to date in place (it still stands for the same Paimon
    snapshot): the snapshots Paimon has expired since it was written are dropped (their data files
    may be gone), and its tag refs are Paimon's tags now (Paimon rewrites the latest metadata file
    when a tag is created or deleted). The manifest lists and manifests only dropped snapshots
    reached are deleted."""
    earliest = store.snapshots.earliest_id()
    kept = [s for s in meta.snapshots
            if earliest is None or s.snapshot_id >= earliest or s.snapshot_id == meta.current_snapshot_id]
    ids = {s.snapshot_id for s in kept}
    refs = {k: r for k, r in meta.refs.items() if r.type != "tag"}
    refs.update(tag_refs(store, ids))
    if len(kept) == len(meta.snapshots) and refs == meta.refs:
        return
    pruned = replace(meta, snapshots=kept, snapshot_log=[e for e in meta.snapshot_log if e["snapshot-id"] in ids],
                     refs=refs)
    io.write_bytes(path, pruned.dumps(), overwrite=True)
    if len(kept) == len(meta.snapshots):
        return
    still = _reachable(io, pruned)
    for v in versions:
        other = f"{compat.metadata_dir}/v{v}.metadata.json"
        if other != path:
            still |= _reachable(io, _load(io, other))
    for f in _reachable(io, meta) - still:
        _delete(io, f)


def _finish(io: FileIO, compat: IcebergCompat, n: int, versions: list[int],
            dropped_from: Optional[TableMetadata] = None) -> None:
    """The hint, then old versions and the manifests no kept snapshot reaches."""
    mdir = compat.metadata_dir
    io.write_hint(f"{mdir}/{HINT_FILE}", str(n).encode())
    if not compat.delete_after_commit:
        return
    old = [v for v in versions if v < n]
    keep = old[-compat.previous_versions_max:] if compat.previous_versions_max else []
    doomed = [v for v in old if v not in keep]
    if not doomed:
        return
    current = _load(io, f"{mdir}/v{n}.metadata.json")
    reach = set(_reachable(io, current))
    for v in keep:
        reach |= _reachable(io, _load(io, f"{mdir}/v{v}.metadata.json"))
    for v in doomed:
        path = f"{mdir}/v{v}.metadata.json"
        meta = _load(io, path)
        if meta is not None:
            for f in _reachable(io, meta) - reach:
                _delete(io, f)
        _delete(io, path)


def _reachable(io: FileIO, meta: Optional[TableMetadata]) -> set[str]:
    """The manifest lists, manifests and deletion-vector Puffin files of every snapshot of ``meta``
    (the data files are Paimon's: its expiry deletes them)."""
    out: set[str] = set()
    if meta is None:
        return out
    for s in meta.snapshots:
        out.add(s.manifest_list)
        try:
            manifests = read_manifest_list(io, s.manifest_list)
        except FileNotFoundError:
            continue
        for m in manifests:
            out.add(m.manifest_path)
            if m.content != DATA_MANIFEST:
                try:
                    out.update(e.data_file.file_path for e in load_manifest_entries(io, meta, m)
                               if e.status != DELETED)
                except FileNotFoundError:
                    continue
    return out


def _sync_hook(store: FileStore) -> None:
    """After a Paimon change: the Paimon snapshot is the commit, so a failure to write its Iceberg
    metadata must not look like a failed commit (a writer would delete the committed files): it is
    logged and warned about, ``check`` reports the lagging view, and the next commit (or
    ``sync_iceberg()``) writes it."""
    if storage_of(store.schema.options) == DISABLED:
        return              # the writer's schema: no reads for the tables without the option
    try:
        sync(store)
    except IcebergViewError as e:
        log.error("%s", e)
        warnings.warn(str(e), IcebergViewWarning, stacklevel=3)


table_hooks.register(_sync_hook)


# --------------------------------------------------------------------------- check and describe
def _current(paimon_table: ViewedTable, compat: IcebergCompat) -> Optional[TableMetadata]:
    versions = _versions(paimon_table.io, compat.metadata_dir)
    return _load(paimon_table.io, f"{compat.metadata_dir}/v{versions[-1]}.metadata.json") if versions else None


def check_view(paimon_table: ViewedTable, report: Report, check_iceberg_table: Callable[[str], Report]) -> None:
    """Add to ``report`` what is wrong with the Iceberg view of a Paimon table: missing, behind
    Paimon's latest snapshot, other files than the Paimon snapshot's readable ones, other field
    ids; and the Iceberg table's own check (``check_iceberg_table(root)`` gives its report)."""
    compat = compat_of(paimon_table.location, paimon_table.table_schema.options)
    if compat is None:
        return
    snap = paimon_table.current_snapshot()
    if snap is None:
        return
    where = compat.metadata_dir
    meta = _current(paimon_table, compat)
    if meta is None:
        report.add("iceberg view", where, f"no Iceberg metadata, though {compat.storage} asks for it; "
                   "sync_iceberg() or the next commit writes it")
        return
    if not _matches(meta, snap):
        report.add("iceberg view", where, f"the Iceberg metadata stands for snapshot {meta.current_snapshot_id}, "
                   f"Paimon's latest is {snap.id}: Iceberg readers see an older state; sync_iceberg() or the "
                   "next commit brings it up to date")
        return
    _check_catalog(compat, meta, report)
    store = paimon_table.store
    schema = meta.schema
    try:
        want = {v.path: v for v in visible_files(store, paimon_table.table_schema, snap, meta.spec, schema)}
        _, live, _vectors = _live_entries(paimon_table.io, meta, schema)
    except (IcefloeError, OSError) as e:
        report.add("iceberg view", where, f"the Iceberg snapshot's files cannot be read: {e}")
        live, want = dict[str, tuple[ManifestFile, ManifestEntry]](), dict[str, _Visible]()
    report.checked["iceberg view files"] = len(live)
    report.checked["iceberg view rows"] = sum(e.data_file.record_count for _, e in live.values())
    for p in sorted(set(live) - set(want)):
        report.add("iceberg view", p, "in the Iceberg snapshot but not a readable file of the Paimon snapshot")
    for p in sorted(set(want) - set(live)) if live else []:
        report.add("iceberg view", p, "a readable file of the Paimon snapshot missing from the Iceberg snapshot")
    for p in sorted(set(want) & set(live)):
        if live[p][1].data_file.record_count != want[p].file.row_count:
            report.add("iceberg view", p, f"the Iceberg snapshot counts {live[p][1].data_file.record_count} rows in "
                       f"it, the Paimon snapshot {want[p].file.row_count}")
    ids = {f.name: f.field_id for f in paimon_table.table_schema.fields}
    if {f.name: f.field_id for f in schema.fields} != ids:
        report.add("iceberg view", where, f"the Iceberg schema's field ids differ from Paimon's {ids}")
    try:
        sub = check_iceberg_table(compat.root)
    except (IcefloeError, OSError) as e:
        report.add("iceberg view", where, f"the Iceberg table cannot be checked: {e}")
        return
    for p in sub.problems:
        report.add("iceberg view: " + p.kind, p.path, p.message)


def _check_catalog(compat: IcebergCompat, meta: TableMetadata, report: Report) -> None:
    """``rest-catalog``: the catalog's table stands for the view's current snapshot."""
    target = compat.rest
    if target is None:
        return
    where = f"{target.uri} {target.name}"
    try:
        registered = iceberg_view_catalog.catalog_state(compat)
    except IcefloeError as e:
        report.add("iceberg view", where, f"the REST catalog cannot be read: {e}")
        return
    if registered is None:
        report.add("iceberg view", where, f"{target.name} is not registered in the REST catalog {target.uri}; "
                   "sync_iceberg() or the next commit registers it")
    elif not iceberg_view_catalog.in_step(registered, meta):
        report.add("iceberg view", where, f"{target.name} in the REST catalog {target.uri} stands for snapshot "
                   f"{registered.current_snapshot_id}, the Iceberg metadata for {meta.current_snapshot_id}: "
                   "sync_iceberg() or the next commit brings it up to date")


def _catalog_info(compat: IcebergCompat, meta: Optional[TableMetadata]) -> list[tuple[str, str]]:
    target = compat.rest
    if target is None:
        return []
    out = [("Iceberg Catalog", f"{target.name} in the REST catalog {target.uri}")]
    try:
        registered = iceberg_view_catalog.catalog_state(compat)
    except IcefloeError as e:
        return out + [("Iceberg Catalog In Step", f"unknown (the catalog cannot be read: {e})")]
    if registered is None:
        return out + [("Iceberg Catalog In Step", "no (not registered yet)")]
    step = meta is not None and iceberg_view_catalog.in_step(registered, meta)
    return out + [("Iceberg Catalog In Step", "yes" if step else f"no (at snapshot {registered.current_snapshot_id})")]


def view_info(paimon_table: ViewedTable) -> list[tuple[str, str]]:
    """``describe``'s lines on the Iceberg view of a Paimon table (none without one)."""
    compat = compat_of(paimon_table.location, paimon_table.table_schema.options)
    if compat is None:
        return []
    out = [("Iceberg Storage", compat.storage), ("Iceberg Format Version", str(compat.format_version))]
    meta = _current(paimon_table, compat)
    out += _catalog_info(compat, meta)
    if meta is None:
        return out + [("Iceberg Metadata", "none yet (written by the first commit)")]
    versions = _versions(paimon_table.io, compat.metadata_dir)
    snap = paimon_table.current_snapshot()
    out.append(("Iceberg Metadata Location", f"{compat.metadata_dir}/v{versions[-1]}.metadata.json"))
    out.append(("Iceberg Snapshot", str(meta.current_snapshot_id)))
    cur = meta.current_snapshot
    if cur is not None:
        out.append(("Iceberg Rows", cur.summary.get("total-records", "")))
        out.append(("Iceberg Data Files", cur.summary.get("total-data-files", "")))
    out.append(("Iceberg View In Step", "yes" if snap is not None and _matches(meta, snap)
                else f"no (Paimon is at snapshot {snap.id if snap else None})"))
    return out


def iceberg_root_of(paimon_table: ViewedTable) -> Optional[str]:
    """Where the Iceberg view of a Paimon table is (its ``metadata/``'s parent), None if it has none."""
    compat = compat_of(paimon_table.location, paimon_table.table_schema.options)
    return compat.root if compat is not None else None


__all__ = ["sync", "iceberg_schema", "iceberg_spec", "visible_files", "IcebergViewError", "IcebergViewWarning",
           "iceberg_root_of", "check_view", "view_info"]
