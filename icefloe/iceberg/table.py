"""An Iceberg table: reads, writes and history over one Hadoop-layout table directory."""
from __future__ import annotations

import datetime as _dt
from typing import Optional, Sequence

from icefloe.core.io import FileIO
from icefloe.core.timetravel import to_epoch_ms
from icefloe.errors import NoSuchSnapshotError
from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.append import Append
from icefloe.iceberg.hadoop import HadoopTableOperations
from icefloe.iceberg.overwrite import Overwrite
from icefloe.iceberg.rewrite import RewriteManifests
from icefloe.iceberg.snapshot import Snapshot
from icefloe.iceberg.snapshot_producer import SnapshotProducer
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata


class IcebergTable:
    format = "iceberg"

    def __init__(self, name: str, ops: HadoopTableOperations, spark=None):
        self.name = name
        self.ops = ops
        self.io: FileIO = ops.io
        self._spark = spark
        self._version, self._meta = ops.load()

    # ------------------------------------------------------------------ state
    def refresh(self) -> "IcebergTable":
        self._version, self._meta = self.ops.load()
        return self

    @property
    def metadata(self) -> TableMetadata:
        return self._meta

    @property
    def metadata_location(self) -> str:
        return self.ops.metadata_path(self._version)

    @property
    def location(self) -> str:
        return self._meta.location

    @property
    def schema(self):
        return self._meta.schema

    @property
    def spec(self):
        return self._meta.spec

    @property
    def properties(self) -> dict:
        return dict(self._meta.properties)

    def snapshots(self) -> list[Snapshot]:
        return list(self.refresh()._meta.snapshots)

    def current_snapshot(self) -> Optional[Snapshot]:
        return self.refresh()._meta.current_snapshot

    def history(self) -> list[dict]:
        return list(self.refresh()._meta.snapshot_log)

    def __repr__(self) -> str:
        return f"IcebergTable({self.name!r}, {self.location!r})"

    @property
    def spark(self):
        from icefloe.spark.session import get_spark

        self._spark = get_spark(self._spark)
        return self._spark

    # ------------------------------------------------------------------ snapshots for reads
    def snapshot_for(self, snapshot_id: Optional[int] = None, as_of=None, ref: Optional[str] = None) -> Optional[Snapshot]:
        meta = self.refresh()._meta
        if snapshot_id is not None:
            return meta.snapshot_by_id(int(snapshot_id))
        if as_of is not None:
            return meta.snapshot_as_of(to_epoch_ms(as_of))
        if ref is not None:
            r = meta.refs.get(ref)
            if r is None:
                raise NoSuchSnapshotError(f"table {self.name} has no branch or tag {ref!r}")
            return meta.snapshot_by_id(r.snapshot_id)
        return meta.current_snapshot

    def plan_files(self, where=None, snapshot_id: Optional[int] = None, as_of=None, ref=None):
        """The data files a read would hand Spark, after pruning."""
        return [t.file for t in self.plan_tasks(where, snapshot_id, as_of, ref)]

    def plan_tasks(self, where=None, snapshot_id=None, as_of=None, ref=None):
        snap = self.snapshot_for(snapshot_id, as_of, ref)
        return scan_mod.plan_files(self.io, self._meta, snap, where)

    def schema_for(self, snap: Optional[Snapshot]):
        if snap is None or snap.schema_id is None:
            return self._meta.schema
        return self._meta.schema_by_id(snap.schema_id)

    def read_schema(self, snap: Optional[Snapshot], snapshot_id=None, as_of=None, ref=None):
        """The schema a read uses, as Iceberg chooses it: the current schema for the current state
        and branches; the snapshot's own schema for time travel by id, by time or to a tag."""
        is_tag = ref is not None and getattr(self._meta.refs.get(ref), "type", "") == "tag"
        if snapshot_id is None and as_of is None and not is_tag:
            return self._meta.schema
        return self.schema_for(snap)

    # ------------------------------------------------------------------ reads
    def to_spark(self, snapshot_id: Optional[int] = None, as_of=None, where=None,
                 columns: Optional[Sequence[str]] = None, ref: Optional[str] = None):
        """A Spark DataFrame of the table (at a snapshot, a time, or a ref)."""
        from icefloe.spark.iceberg_read import read_tasks

        snap = self.snapshot_for(snapshot_id, as_of, ref)
        tasks = scan_mod.plan_files(self.io, self._meta, snap, where)
        return read_tasks(self.spark, tasks, self.read_schema(snap, snapshot_id, as_of, ref), where, columns,
                          history=self._meta.schemas,
                          name_mapping=self._meta.properties.get("schema.name-mapping.default"))

    def to_arrow(self, snapshot_id: Optional[int] = None, as_of=None, where=None, ref=None):
        """The table as a pyarrow.Table, read without Spark (for small tables and tools)."""
        import pyarrow as pa

        from icefloe.core.types import to_arrow_schema

        snap = self.snapshot_for(snapshot_id, as_of, ref)
        schema = self.read_schema(snap, snapshot_id, as_of, ref)
        target = to_arrow_schema(schema)
        tasks = scan_mod.plan_files(self.io, self._meta, snap, where)
        parts = []
        from icefloe.iceberg.delete_files import apply_deletes_arrow

        for t in tasks:
            part = _read_by_field_id(read_data_file(t.file), target,
                                     self._meta.properties.get("schema.name-mapping.default"), t.path)
            parts.append(apply_deletes_arrow(part, t.path, t.deletes, schema, self.io))
        if not parts:
            return target.empty_table()
        return pa.concat_tables(parts)

    # ------------------------------------------------------------------ writes
    def _write_files(self, data) -> list:
        meta = self.refresh()._meta
        if _is_arrow(data):
            from icefloe.iceberg.arrow_writer import align_arrow, write_arrow

            aligned = align_arrow(_as_arrow_table(data), meta.schema, self.name)
            return write_arrow(self.io, aligned, meta.schema, meta.spec, meta.location, meta.properties, meta=meta)
        from icefloe.spark.iceberg_write import write_data_files

        self.spark  # noqa: B018 - make sure the session has the settings the write relies on
        return write_data_files(data, meta, self.io, self.name)

    def _commit(self, change: SnapshotProducer, branch: str) -> Snapshot:
        try:
            meta = change.commit(self.ops, branch)
        except BaseException:
            for f in change.added:
                self.io.delete(f.file_path)
            raise
        self.refresh()
        return meta.snapshot_by_id(meta.refs[branch].snapshot_id)

    def append(self, data, branch: str = MAIN_BRANCH) -> Snapshot:
        """Append a Spark DataFrame or pyarrow.Table as one new snapshot."""
        files = self._write_files(data)
        return self._commit(Append(files, summary_extra=self._app_summary()), branch)

    def overwrite(self, data, branch: str = MAIN_BRANCH) -> Snapshot:
        """Replace the table's contents with ``data`` in one snapshot."""
        files = self._write_files(data)
        return self._commit(Overwrite.replace_all(files, summary_extra=self._app_summary()), branch)

    def commit_files(self, files: list, overwrite: bool = False, branch: str = MAIN_BRANCH) -> Snapshot:
        """Commit data files written elsewhere (e.g. by Spark tasks of the data source)."""
        produce = Overwrite.replace_all if overwrite else Append
        return self._commit(produce(list(files), summary_extra=self._app_summary()), branch)

    def _app_summary(self) -> dict:
        try:
            if self._spark is not None:
                return {"spark.app.id": self._spark.sparkContext.applicationId}
        except Exception:
            pass
        return {}

    # ------------------------------------------------------------------ row-level changes (issue 4)
    # Modes per table property write.{delete,update,merge}.mode (copy-on-write | merge-on-read),
    # isolation per write.{delete,update,merge}.isolation-level (serializable | snapshot).
    def delete(self, where, isolation_level: Optional[str] = None) -> dict:
        """``DELETE FROM t WHERE where`` (Spark SQL text or a Column); returns counts and snapshot id."""
        from icefloe.spark.iceberg_dml import delete_rows

        return delete_rows(self, where, isolation_level)

    def update(self, set: dict, where=None, isolation_level: Optional[str] = None) -> dict:
        """``UPDATE t SET col = expr, ... WHERE where``; values are Spark SQL text or Columns."""
        from icefloe.spark.iceberg_dml import update_rows

        return update_rows(self, set, where, isolation_level)

    def merge(self, source, on, target_alias: str = "t", source_alias: str = "s",
              isolation_level: Optional[str] = None):
        """``MERGE INTO t USING source s ON on``: add when_* clauses, then ``execute()``."""
        from icefloe.spark.iceberg_dml import MergeBuilder

        return MergeBuilder(self, source, on, target_alias, source_alias, isolation_level)

    def delete_by_key(self, keys) -> Optional[Snapshot]:
        """Equality deletes of the rows matching ``keys`` (a DataFrame or Arrow table of key columns)."""
        from icefloe.spark.iceberg_dml import delete_by_key

        return delete_by_key(self, keys)

    def rewrite_data_files(self, where=None, target_file_size: Optional[int] = None) -> Optional[Snapshot]:
        """Compaction as a ``replace`` snapshot: small files merged, delete files folded in."""
        from icefloe.spark.iceberg_dml import rewrite_data_files

        return rewrite_data_files(self, where, target_file_size)

    def rewrite_manifests(self, branch: str = MAIN_BRANCH) -> Snapshot:
        """Regroup the live manifest entries into manifests of commit.manifest.target-size-bytes."""
        return self._commit(RewriteManifests(summary_extra=self._app_summary()), branch)


    # ------------------------------------------------------------------ evolution and lifecycle (issue 5)
    def update_schema(self):
        """``with t.update_schema() as u: u.add_column("c", "string")`` -- one metadata commit on exit."""
        from icefloe.iceberg.schema_update import UpdateSchema

        return UpdateSchema(self.ops, on_commit=self.refresh)

    def update_spec(self):
        """``with t.update_spec() as u: u.add_field("month(ts)")`` -- a new default partition spec on exit."""
        from icefloe.iceberg.spec_update import UpdateSpec

        return UpdateSpec(self.ops, on_commit=self.refresh)

    def replace_sort_order(self, *terms: str) -> dict:
        """Declare the table's sort order (``"id"``, ``"ts desc nulls last"``, ``"truncate(4, name)"``);
        no terms makes the table unsorted. Writers sort each data file by it. Returns the order."""
        from icefloe.iceberg.sort_order import default_order, replace_sort_order

        replace_sort_order(self.ops, list(terms))
        order_id, fields = default_order(self.refresh()._meta)
        return {"order-id": order_id, "fields": fields}

    def update_properties(self, set: Optional[dict] = None, remove: Optional[Sequence[str]] = None) -> dict:
        """Set and remove table properties in one commit (the table comment is property ``comment``)."""
        from icefloe.iceberg.maintenance import update_properties

        update_properties(self.ops, set, remove)
        return self.refresh().properties

    @property
    def inspect(self):
        """Iceberg's metadata tables as Spark DataFrames: ``t.inspect.snapshots()``, ``.files()``..."""
        from icefloe.iceberg.inspect import InspectTable

        return InspectTable(self)

    def refs(self) -> dict:
        return dict(self.refresh()._meta.refs)

    def _ref_change(self, change, name: str):
        from icefloe.iceberg.refs import commit_ref_change

        meta = commit_ref_change(self.ops, change)
        self.refresh()
        return meta.refs.get(name)

    def create_tag(self, name: str, snapshot_id: Optional[int] = None, max_ref_age_ms: Optional[int] = None):
        from icefloe.iceberg.refs import create_tag_change

        return self._ref_change(create_tag_change(name, snapshot_id, max_ref_age_ms), name)

    def create_branch(self, name: str, snapshot_id: Optional[int] = None, min_snapshots_to_keep: Optional[int] = None,
                      max_snapshot_age_ms: Optional[int] = None, max_ref_age_ms: Optional[int] = None):
        from icefloe.iceberg.refs import create_branch

        meta = create_branch(self.ops, name, snapshot_id, min_snapshots_to_keep, max_snapshot_age_ms, max_ref_age_ms)
        self.refresh()
        return meta.refs[name]

    def replace_tag(self, name: str, snapshot_id, max_ref_age_ms: Optional[int] = None):
        """Point tag ``name`` at ``snapshot_id`` (or at the snapshot of the ref named so)."""
        from icefloe.iceberg.refs import TAG, replace_ref_change

        return self._ref_change(replace_ref_change(name, TAG, snapshot_id, max_ref_age_ms=max_ref_age_ms), name)

    def replace_branch(self, name: str, snapshot_id, min_snapshots_to_keep: Optional[int] = None,
                       max_snapshot_age_ms: Optional[int] = None, max_ref_age_ms: Optional[int] = None):
        """Point branch ``name`` at ``snapshot_id`` (or at the snapshot of the ref named so)."""
        from icefloe.iceberg.refs import BRANCH, replace_ref_change

        return self._ref_change(replace_ref_change(
            name, BRANCH, snapshot_id, min_snapshots_to_keep=min_snapshots_to_keep,
            max_snapshot_age_ms=max_snapshot_age_ms, max_ref_age_ms=max_ref_age_ms), name)

    def rename_branch(self, name: str, new_name: str):
        from icefloe.iceberg.refs import rename_branch_change

        return self._ref_change(rename_branch_change(name, new_name), new_name)

    def drop_tag(self, name: str) -> None:
        from icefloe.iceberg.refs import TAG, drop_ref_change

        self._ref_change(drop_ref_change(name, TAG), name)

    def drop_branch(self, name: str) -> None:
        from icefloe.iceberg.refs import BRANCH, drop_ref_change

        self._ref_change(drop_ref_change(name, BRANCH), name)

    def fast_forward(self, branch: str, source: str):
        """Move ``branch`` to the head of ``source`` if that head descends from ``branch``'s."""
        from icefloe.iceberg.refs import fast_forward_change

        return self._ref_change(fast_forward_change(branch, source), branch)

    def rollback_to_snapshot(self, snapshot_id: int) -> Snapshot:
        """Make ``snapshot_id``, an ancestor of the current snapshot, current again."""
        from icefloe.iceberg.refs import rollback_to_snapshot_change

        self._ref_change(rollback_to_snapshot_change(snapshot_id), MAIN_BRANCH)
        return self._meta.current_snapshot

    def rollback_to_timestamp(self, as_of) -> Snapshot:
        """Make current the newest ancestor of the current snapshot committed before ``as_of``."""
        from icefloe.iceberg.refs import rollback_to_timestamp_change

        self._ref_change(rollback_to_timestamp_change(to_epoch_ms(as_of)), MAIN_BRANCH)
        return self._meta.current_snapshot

    def set_current_snapshot(self, snapshot_id: int) -> Snapshot:
        from icefloe.iceberg.refs import set_current_snapshot_change

        self._ref_change(set_current_snapshot_change(snapshot_id), MAIN_BRANCH)
        return self._meta.current_snapshot

    def cherry_pick(self, snapshot_id: int) -> Snapshot:
        """Apply an append snapshot (e.g. staged on a branch) to main: fast-forward or a new append."""
        from icefloe.iceberg.refs import cherry_pick

        cherry_pick(self.ops, snapshot_id)
        return self.refresh()._meta.current_snapshot

    def expire_snapshots(self, older_than=None, retain_last: Optional[int] = None):
        """Expire snapshots by the retention policy of every ref; returns an ExpireReport."""
        from icefloe.iceberg.maintenance import expire_snapshots

        report = expire_snapshots(self.ops, older_than, retain_last)
        self.refresh()
        return report

    def remove_orphan_files(self, older_than=None, dry_run: bool = False) -> list:
        """Delete files under the table location that no metadata refers to (default: older than 3 days)."""
        from icefloe.iceberg.maintenance import remove_orphan_files

        return remove_orphan_files(self.ops, older_than, dry_run)


def _is_arrow(data) -> bool:
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover
        return False
    return isinstance(data, (pa.Table, pa.RecordBatch)) or type(data).__name__ == "DataFrame" and \
        type(data).__module__.startswith("pandas")


def _as_arrow_table(data):
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    return pa.Table.from_pandas(data, preserve_index=False)


def read_data_file(data_file):
    """A data file (a ``DataFile``) as a pyarrow.Table, without Hive-partition guessing.
    A missing or unreadable file, or one whose row count is not the manifest's, is a
    ``CorruptDataFileError`` naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from icefloe.errors import CorruptDataFileError

    path = data_file.file_path
    try:
        # page checksums, where the writer stored them (parquet-mr does by default), catch flipped bits
        table = pq.ParquetFile(path, page_checksum_verification=True).read()
    except FileNotFoundError:
        raise CorruptDataFileError(path, "data file referenced by the table's manifests is missing") from None
    except (pa.ArrowException, OSError, ValueError) as e:
        raise CorruptDataFileError(path, f"not a readable Parquet file ({type(e).__name__}: {e})") from None
    expected = data_file.record_count
    if expected is not None and expected >= 0 and table.num_rows != expected:
        raise CorruptDataFileError(path, f"has {table.num_rows} rows, but its manifest entry says {expected} "
                                         "(replaced or rewritten after the commit?)")
    return table


def _read_by_field_id(table, target, name_mapping=None, path: Optional[str] = None):
    """Project a file's Arrow table onto ``target`` by ``PARQUET:field_id``, recursively through
    structs, list elements and map values (a missing optional id reads as nulls).

    A file without field ids (e.g. added with pyiceberg's ``add_files``) gets them from
    ``name_mapping`` (spec, "Column Projection": JSON text or the parsed list), by name.
    A required field the file does not have is an error naming the file (``path``)."""
    import pyarrow as pa

    if name_mapping is not None and table.num_columns and all(_fid(f) is None for f in table.schema):
        import json

        mapping = json.loads(name_mapping) if isinstance(name_mapping, str) else name_mapping
        table = table.cast(pa.schema([_map_field(f, mapping) for f in table.schema],
                                     metadata=table.schema.metadata))
    where = path or "a data file"
    cols = [_chunked(table.column(i)) for i in range(table.num_columns)]
    by_id = {_fid(f): (f, c) for f, c in zip(table.schema, cols) if _fid(f) is not None}
    out = []
    for f in target:
        hit = by_id.get(_fid(f))
        if hit is None:
            _check_optional(f, where, f.name)
        out.append(_conform(hit[1], hit[0], f, table.num_rows, where, f.name) if hit
                   else pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(out, schema=target)


def _check_optional(field, where: str, path: str) -> None:
    if not field.nullable:
        from icefloe.errors import IcefloeError

        raise IcefloeError(f"data file {where} has no column for required field {path!r} "
                           f"(id {_fid(field)}); it has no matching field id and no name-mapped column")


def _map_field(field, entries):
    """``field`` (of a file without ids) with the id the name mapping gives its name, recursively."""
    import pyarrow as pa
    import pyarrow.types as pt

    entry = next((e for e in entries or [] if field.name in e.get("names", [])), None)
    sub = (entry or {}).get("fields") or []
    t = field.type
    if pt.is_struct(t):
        t = pa.struct([_map_field(t.field(i), sub) for i in range(t.num_fields)])
    elif pt.is_list(t) or pt.is_large_list(t):
        vf = _map_field(t.value_field, [dict(e, names=list(e.get("names", [])) + [t.value_field.name])
                                        for e in sub[:1]])
        t = pa.large_list(vf) if pt.is_large_list(t) else pa.list_(vf)
    elif pt.is_map(t):
        key_entry = [dict(e, names=list(e.get("names", [])) + [t.key_field.name]) for e in sub[:1]]
        item_entry = [dict(e, names=list(e.get("names", [])) + [t.item_field.name]) for e in sub[1:2]]
        t = pa.map_(_map_field(t.key_field, key_entry), _map_field(t.item_field, item_entry))
    md = dict(field.metadata or {})
    md.pop(b"PARQUET:field_id", None)
    if entry is not None and entry.get("field-id") is not None:
        md[b"PARQUET:field_id"] = str(entry["field-id"]).encode()
    return pa.field(field.name, t, nullable=field.nullable, metadata=md or None)


def _fid(field):
    v = (field.metadata or {}).get(b"PARQUET:field_id")
    return int(v) if v is not None else None


def _chunked(col):
    return col.combine_chunks() if hasattr(col, "combine_chunks") else col


def _conform(arr, src_field, dst_field, n, where: str = "a data file", path: str = ""):
    """``arr`` (of ``src_field``) as ``dst_field``'s type, matching nested fields by id."""
    import pyarrow as pa
    import pyarrow.types as pt

    st, dt = src_field.type, dst_field.type
    if pt.is_struct(dt) and pt.is_struct(st):
        children = {}
        for i in range(st.num_fields):
            fid = _fid(st.field(i))
            if fid is not None:
                children[fid] = (st.field(i), arr.field(i))
        parts = []
        for j in range(dt.num_fields):
            df_ = dt.field(j)
            hit = children.get(_fid(df_))
            if hit is None and arr.null_count < len(arr):
                _check_optional(df_, where, f"{path}.{df_.name}")
            parts.append(_conform(hit[1], hit[0], df_, len(arr), where, f"{path}.{df_.name}") if hit
                         else pa.nulls(len(arr), df_.type))
        return pa.StructArray.from_arrays(parts, fields=list(dt), mask=arr.is_null())
    if (pt.is_list(dt) or pt.is_large_list(dt)) and (pt.is_list(st) or pt.is_large_list(st)):
        values = _conform(arr.values, st.value_field, dt.value_field, len(arr.values), where, f"{path}.element")
        return pa.ListArray.from_arrays(arr.offsets, values, type=dt, mask=arr.is_null())
    if pt.is_map(dt) and pt.is_map(st):
        keys = _conform(arr.keys, st.key_field, dt.key_field, len(arr.keys), where, f"{path}.key")
        items = _conform(arr.items, st.item_field, dt.item_field, len(arr.items), where, f"{path}.value")
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=dt, mask=arr.is_null())
    return arr.cast(dt) if st != dt else arr
