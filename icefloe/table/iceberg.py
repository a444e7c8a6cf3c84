# pyright: strict
"""The user-facing Iceberg table: the format's ``BaseTable`` with Spark as its data plane."""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence

import pyarrow as pa

from icefloe.core.arrow import as_arrow_table, is_arrow_data
from icefloe.core.io import FileIO
from icefloe.core.timetravel import AsOf
from icefloe.core.reports import Report, RowChanges
from icefloe.core.tree import Node
from icefloe.core.types import IcebergType, NestedField, parse_type, to_spark_ddl_type, widen_small_ints
from icefloe.iceberg import unhonoured
from icefloe.iceberg import inspect as metadata
from icefloe.iceberg.append import Append
from icefloe.iceberg.arrow_writer import align_arrow, write_arrow
from icefloe.iceberg.check import check_iceberg
from icefloe.iceberg import partition_stats, puffin, table_path, theta
from icefloe.iceberg import scan as scan_mod
from icefloe.iceberg.layout import metadata_tree
from icefloe.iceberg.manifest import DataFile
from icefloe.iceberg.metadata_builder import SetPartitionStatistics, SetStatistics
from icefloe.iceberg.metadata_commit import commit_metadata
from icefloe.iceberg.operations import TableOperations
from icefloe.iceberg.overwrite import DeleteAll, Overwrite
from icefloe.iceberg.snapshot import Snapshot
from icefloe.iceberg.snapshot_producer import SnapshotProducer
from icefloe.iceberg.table import BaseTable
from icefloe.iceberg.scan import FileScanTask
from icefloe.iceberg.table_metadata import MAIN_BRANCH, TableMetadata
from icefloe.iceberg.transforms import IdentityTransform
from icefloe.spark import iceberg_compaction, iceberg_delete_rewrite, iceberg_dml, iceberg_stats
from icefloe.spark.iceberg_changelog import changelog_df
from icefloe.errors import UnsupportedFeatureError
from icefloe.spark import iceberg_lineage as lineage
from icefloe.spark.iceberg_plan import SparkPlanner, running_session
from icefloe.spark.iceberg_read import FILE_COL, POS_COL, read_tasks
from icefloe.spark.iceberg_write import write_data_files
from icefloe.spark.session import app_summary, get_spark
from icefloe.spark.target import WriteTarget
from icefloe.table import migration
from icefloe.table.base import Table, Where, WriteData
from icefloe.table.capabilities import FileRow
from icefloe.table.overwrite import iceberg_partition_overwrite

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.iceberg.transaction import Transaction


def write_files_for(meta: TableMetadata, data: WriteData, io: FileIO, name: str,
                    spark: Callable[[], object]) -> list[DataFile]:
    """``data`` (a Spark DataFrame, or Arrow/pandas data) written as data files of the table
    whose metadata is ``meta``; nothing committed. ``spark()`` gives the session, configured
    for the write, when ``data`` needs Spark. A table whose properties ask for what icefloe does not
    do (``iceberg.unhonoured``) is refused before anything is written."""
    unhonoured.check(meta.properties, name, meta.location)
    if is_arrow_data(data):
        aligned = align_arrow(as_arrow_table(data), meta.schema, name)
        return write_arrow(io, aligned, meta.schema, meta.spec, meta.location, meta.properties, meta=meta)
    spark()
    return write_data_files(data, meta, io, name)


class IcebergTable(BaseTable, Table):
    """An Iceberg table: every operation of ``Table``, plus what only Iceberg has."""

    format = "iceberg"

    def __init__(self, name: str, ops: TableOperations, spark: Optional[SparkSession] = None):
        """An Iceberg table over its catalog's table operations (``Catalog.load_table`` makes it).

        Args:
            name: ``"db.table"``.
            ops: The catalog's table operations (load and commit its metadata, its file I/O).
            spark: The SparkSession its Spark reads and writes run in (the active or embedded one by default).
        """
        self._spark: Optional[SparkSession] = spark      # the data plane's session, started on first use (``spark``)
        super().__init__(name, ops)

    def refresh(self) -> IcebergTable:
        """Load the table's current metadata; returns this table."""
        BaseTable.refresh(self)
        return self

    @property
    def spark(self) -> SparkSession:
        self._spark = get_spark(self._spark)
        return self._spark

    def app_summary(self) -> dict[str, str]:
        """What a snapshot this table object commits says of its writer (the Spark application,
        when one runs; none is started for it)."""
        return app_summary(self._spark)

    def writing_to(self, branch: Optional[str] = None, wap_id: Optional[str] = None) -> IcebergTable:
        """This table with its writes going to ``branch``, or staged under ``wap_id`` (see ``Table.writing_to``)."""
        return super().writing_to(branch, wap_id)

    def write_target(self, branch: Optional[str] = None) -> WriteTarget:
        """This table as the Spark layer's writes see it (``spark.target.WriteTarget``): writes go to
        ``branch``, by default this table object's write branch."""
        return IcebergWriteTarget(self, branch or self.write_branch)

    # ------------------------------------------------------------------ reads
    def plan_snapshot(self, snap: Optional[Snapshot], where: object = None) -> list[FileScanTask]:
        """Scan tasks of ``snap`` that may match ``where``, their manifests read here or in Spark
        tasks as the planning modes say (``read.data-planning-mode``, ``read.delete-planning-mode``);
        by the REST catalog's server when server-side planning is on (``served_plan``)."""
        served = self.served_plan(snap, where)
        if served is not None:
            return served
        return scan_mod.plan_files(self.io, self._meta, snap, where,
                                   remote=SparkPlanner(lambda: self.spark, lambda: running_session(self._spark)))

    def iter_snapshot(self, snap: Optional[Snapshot], where: object = None) -> Iterator[FileScanTask]:
        """``plan_snapshot``'s tasks, streamed (``scan.iter_plan_files``)."""
        served = self.served_plan(snap, where)
        if served is not None:
            return iter(served)
        return scan_mod.iter_plan_files(self.io, self._meta, snap, where,
                                        remote=SparkPlanner(lambda: self.spark, lambda: running_session(self._spark)))

    def to_spark(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, where: Where = None,
                 columns: Optional[Sequence[str]] = None, ref: Optional[str] = None,
                 row_lineage: bool = False) -> DataFrame:
        """The rows as a Spark DataFrame, read by Spark tasks.

        Args:
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.
            where: Spark SQL predicate text or a ``Column``; files are pruned by it, rows filtered.
            columns: The columns to read (all by default).
            row_lineage: Add each row's ``_row_id`` and ``_last_updated_sequence_number`` (format
                version 3 tables).

        Returns:
            pyspark.sql.DataFrame: the rows, lazily read.

        Raises:
            UnsupportedFeatureError: ``row_lineage`` on a table of format version 2.
        """
        snap = self.snapshot_for(snapshot_id, as_of, ref)
        tasks = self.plan_snapshot(snap, where)
        schema = self.read_schema(snap, snapshot_id, as_of, ref)
        mapping = self._meta.properties.get("schema.name-mapping.default")
        if not row_lineage:
            return read_tasks(self.spark, tasks, schema, where, columns, history=self._meta.schemas, io=self.io,
                              name_mapping=mapping)
        from pyspark.sql import functions as F

        if self._meta.format_version < 3:
            raise UnsupportedFeatureError(f"{self.name}: row lineage (_row_id, _last_updated_sequence_number) is "
                                          f"kept by format version 3 tables; this one is version "
                                          f"{self._meta.format_version} (upgrade it with format-version 3)")
        rows = read_tasks(self.spark, tasks, lineage.with_lineage_fields(schema), where, None, with_positions=True, io=self.io,
                          history=self._meta.schemas, name_mapping=mapping)
        rows = lineage.computed(self.spark, lineage.as_stored(rows), tasks, FILE_COL, POS_COL)
        keep = [f"`{c}`" for c in columns] if columns else [f"`{f.name}`" for f in schema.fields]
        return rows.select(*keep, F.col(lineage.ROW_ID_COL).alias(lineage.ROW_ID.name),
                           F.col(lineage.LAST_SEQ_COL).alias(lineage.LAST_UPDATED.name))

    def changelog(self, start_snapshot_id: Optional[int] = None, end_snapshot_id: Optional[int] = None,
                  identifier_columns: Optional[Sequence[str]] = None, compute_updates: Optional[bool] = None,
                  net_changes: bool = False) -> DataFrame:
        return changelog_df(self.spark, self, start_snapshot_id, end_snapshot_id, identifier_columns,
                            compute_updates, net_changes)

    # ------------------------------------------------------------------ writes
    def write_files(self, data: WriteData) -> list[DataFile]:
        """Write data files of the current partition spec without committing them; ``commit`` commits them.

        Args:
            data: A Spark DataFrame, a pyarrow Table or a pandas DataFrame.

        Returns:
            list: the ``DataFile``s written.
        """
        return write_files_for(self.refresh()._meta, data, self.io, self.name, lambda: self.spark)

    def transaction(self) -> Transaction:
        """``with t.transaction() as tx:`` -- changes committed as one metadata version (see
        ``BaseTable.transaction``); ``tx.append(data)`` writes ``data`` under the schema and spec
        as the transaction left them."""
        from icefloe.iceberg.transaction import Transaction

        return Transaction(self.ops, on_commit=self.refresh, summary=self.app_summary(),
                           write=lambda meta, data: write_files_for(meta, data, self.io, self.name, lambda: self.spark))

    def append(self, data: WriteData, branch: Optional[str] = None) -> Snapshot:
        """Append a Spark DataFrame or pyarrow.Table as one new snapshot."""
        files = self.write_files(data)
        return self.write_target(branch).commit(Append(files), branch or self.write_branch)

    def overwrite(self, data: WriteData, partition: Optional[dict[str, Any]] = None, dynamic: bool = False,
                  branch: Optional[str] = None, where: Optional[str] = None) -> Any:
        """Replace the table's contents with ``data`` in one snapshot; with ``partition``
        or ``dynamic=True`` only some partitions, with ``where`` the rows matching it (see
        ``Table.overwrite``)."""
        if where is not None:
            if partition or dynamic or (branch or self.write_branch) != MAIN_BRANCH:
                raise ValueError("overwrite(where=...) takes no partition, dynamic or branch")
            return iceberg_dml.replace_where(self.write_target(), data, where)
        if partition or dynamic:
            return iceberg_partition_overwrite(self, data, partition or {}, dynamic, branch or self.write_branch)
        files = self.write_files(data)
        return self.write_target(branch).commit(Overwrite.replace_all(files), branch or self.write_branch)

    def add_files(self, source: Any, partition_filter: Optional[dict[str, Any]] = None,
                  check_duplicate_files: bool = True, parallelism: Optional[int] = None) -> dict[str, Any]:
        """Add existing Parquet files to the table without rewriting them (Iceberg's ``add_files``).

        The files keep their paths; their statistics come from their footers, read by Spark
        tasks; columns are matched by name (the table's name mapping). See [Migration](migration.md).

        Args:
            source: A Parquet file or directory (files in Hive-style ``key=value/`` directories
                when the table is partitioned by identity on those keys), or a Paimon append table.
            partition_filter: Only the files of the partitions with these values (``{"region": "eu"}``).
            check_duplicate_files: Refuse files the table has already (the default).
            parallelism: Spark tasks that read the footers (by default the session's cores).

        Returns:
            dict: ``added_files_count`` and ``changed_partition_count`` (None for format version 2
            and later, as Iceberg reports it).

        Raises:
            MigrationError: a file whose columns are not the table's, a partitioning that does not
                match the directories, a file already in the table; nothing was added.
        """
        return migration.add_files(self, source, partition_filter, check_duplicate_files, parallelism)

    def truncate(self, branch: Optional[str] = None) -> Optional[Snapshot]:
        """Remove every row in one ``delete`` snapshot: all files dropped, none read (None for a
        table without rows)."""
        branch = branch or self.write_branch
        snap = self.snapshot_for(ref=branch) if branch in self.refs() else self.current_snapshot()
        if snap is None:
            return None
        return self.write_target(branch).commit(DeleteAll(), branch)

    def commit(self, messages: Iterable[DataFile], overwrite: bool = False, branch: Optional[str] = None) -> Snapshot:
        return self.commit_files(list(messages), overwrite=overwrite, branch=branch or self.write_branch,
                                 summary=self.app_summary())

    # ------------------------------------------------------------------ row-level changes
    # Modes per table property write.{delete,update,merge}.mode (copy-on-write | merge-on-read),
    # isolation per write.{delete,update,merge}.isolation-level (serializable | snapshot).
    def delete(self, where: Where, isolation_level: Optional[str] = None) -> RowChanges:
        """``DELETE FROM t WHERE where`` (Spark SQL text or a Column); returns counts and snapshot id."""
        return iceberg_dml.delete_rows(self.write_target(), where, isolation_level)

    def update(self, set: dict[str, Any], where: Where = None, isolation_level: Optional[str] = None) -> RowChanges:
        """``UPDATE t SET col = expr, ... WHERE where``; values are Spark SQL text or Columns."""
        return iceberg_dml.update_rows(self.write_target(), set, where, isolation_level)

    def merge(self, source: WriteData, on: Any, target_alias: str = "t", source_alias: str = "s",
              isolation_level: Optional[str] = None) -> iceberg_dml.MergeBuilder:
        """``MERGE INTO t USING source s ON on``: add when_* clauses, then ``execute()``."""
        return iceberg_dml.MergeBuilder(self.write_target(), source, on, target_alias, source_alias,
                                        isolation_level)

    def delete_by_key(self, keys: WriteData) -> Optional[Snapshot]:
        """Equality deletes of the rows matching ``keys`` (a DataFrame or Arrow table of key columns)."""
        return iceberg_dml.delete_by_key(self.write_target(), keys)

    def rewrite_data_files(self, where: Where = None, target_file_size: Optional[int] = None,
                           options: Optional[dict[str, Any]] = None, strategy: Optional[str] = None, sort_order: Optional[str] = None) -> Optional[Snapshot]:
        """Compaction as a ``replace`` snapshot, by the rules and ``options`` of Iceberg's
        rewrite_data_files (bin-pack, or ``strategy='sort'`` by ``sort_order``)."""
        return iceberg_compaction.rewrite_data_files(self.write_target(MAIN_BRANCH), where, target_file_size, options,
                                                     strategy, sort_order)

    def rewrite_position_delete_files(self, where: Optional[str] = None,
                                      options: Optional[dict[str, Any]] = None) -> dict[str, Any]:
        """Compaction of the position delete files (Iceberg's rewrite_position_delete_files): each
        partition's small files rewritten as one, deletes of removed data files dropped.

        Args:
            where: Spark SQL predicate text: only the delete files of the data files it selects.
            options: The procedure's options (``min-input-files``, ``rewrite-all``,
                ``target-file-size-bytes``, ...); an unknown key is an error naming it.

        Returns:
            dict: ``rewritten_delete_files_count``, ``added_delete_files_count``,
            ``rewritten_bytes_count``, ``added_bytes_count``.
        """
        return iceberg_delete_rewrite.rewrite_position_delete_files(self.write_target(MAIN_BRANCH), where, options)

    def rewrite_table_path(self, source_prefix: str, target_prefix: str, start_version: Optional[str] = None,
                           end_version: Optional[str] = None, staging_location: Optional[str] = None,
                           create_file_list: bool = True) -> dict[str, Any]:
        """Table replication (Iceberg's rewrite_table_path): the table's metadata files, manifest
        lists, manifests and position delete files written again under ``staging_location`` with
        ``source_prefix`` replaced by ``target_prefix``; the table itself is only read. Copying each
        file of the copy plan to its target makes a working table at the target prefix.

        Args:
            source_prefix: The prefix of the table's paths to replace (its location, or above it).
            target_prefix: What replaces it.
            start_version: A metadata file name (``v3.metadata.json``): copy only what came after
                it (incremental copy); default: everything.
            end_version: The last metadata file name to copy; default: the current one.
            staging_location: Where rewritten files go; default: ``copy-table-staging-<uuid>/``
                in the table's metadata directory.
            create_file_list: Write the copy plan as a CSV file (``source,target`` lines).

        Returns:
            dict: ``latest_version`` (the file name of the newest metadata file rewritten),
            ``file_list_location`` (``N/A`` without a file list),
            ``rewritten_manifest_file_paths_count``, ``rewritten_delete_file_paths_count``.
        """
        result = table_path.rewrite_table_path(self.io, self.refresh().metadata_location, source_prefix,
                                               target_prefix, start_version, end_version, staging_location,
                                               _flag(create_file_list))
        return result.as_row()

    def compute_table_stats(self, snapshot_id: Optional[int] = None,
                            columns: Optional[Sequence[str]] = None) -> Optional[str]:
        """Iceberg's compute_table_stats: a Puffin statistics file with an
        ``apache-datasketches-theta-v1`` sketch (its estimate as property ``ndv``) of each column,
        registered with ``set-statistics``.

        Args:
            snapshot_id: The snapshot whose rows are counted (default: the current one).
            columns: The top-level primitive columns (default: all of them).

        Returns:
            str: the statistics file's path (None for a table without snapshots).
        """
        meta = self.refresh().metadata
        snap = meta.snapshot_by_id(int(snapshot_id)) if snapshot_id is not None else meta.current_snapshot
        if snap is None:
            return None
        schema = meta.schema_by_id(snap.schema_id)
        by_name = {f.name.lower(): f for f in schema.fields}
        names = list(dict.fromkeys(columns)) if columns else [f.name for f in schema.fields
                                                              if f.field_type.is_primitive]
        if not names:
            raise ValueError("compute_table_stats: no columns found to compute stats")
        fields: list[NestedField] = []
        for name in names:
            field = by_name.get(str(name).lower())
            if field is None:
                raise ValueError(f"compute_table_stats: no top-level column {name!r} in the snapshot's schema; "
                                 f"columns are {', '.join(f.name for f in schema.fields)}")
            kind = str(field.field_type)
            if not field.field_type.is_primitive or kind.endswith("_ns") or kind in ("unknown", "variant"):
                raise ValueError(f"compute_table_stats: cannot compute stats on column {field.name} of type {kind}")
            fields.append(field)
        rows = self.to_spark(snapshot_id=snap.snapshot_id)
        sketches = iceberg_stats.column_sketches(rows, [(f.name, str(f.field_type)) for f in fields])
        blobs = [(theta.BLOB_TYPE, [f.field_id], snap.snapshot_id, snap.sequence_number, data, {"ndv": str(int(ndv))})
                 for f, (data, ndv) in zip(fields, sketches)]
        path = f"{self.ops.metadata_dir}/{snap.snapshot_id}-{uuid.uuid4()}.stats"
        stats = puffin.write_statistics_file(self.io, path, blobs, created_by="icefloe")
        stats["snapshot-id"] = snap.snapshot_id
        commit_metadata(self.ops, lambda base: [SetStatistics(stats)])
        return path

    def compute_partition_stats(self, snapshot_id: Optional[int] = None) -> Optional[str]:
        """Iceberg's compute_partition_stats: the spec's partition statistics file (a Parquet row of
        counts per partition), registered with ``set-partition-statistics``.

        Args:
            snapshot_id: The snapshot whose files are counted (default: the current one).

        Returns:
            str: the partition statistics file's path (None for a table without snapshots).
        """
        meta = self.refresh().metadata
        snap = meta.snapshot_by_id(int(snapshot_id)) if snapshot_id is not None else meta.current_snapshot
        if snap is None:
            return None
        if all(not spec.fields for spec in meta.partition_specs):
            raise ValueError(f"compute_partition_stats: table {self.name} is not partitioned")
        rows = partition_stats.snapshot_rows(self, meta, snap.snapshot_id)
        stats = partition_stats.write_partition_stats(self.io, self.ops.metadata_dir, snap.snapshot_id, rows)
        commit_metadata(self.ops, lambda base: [SetPartitionStatistics(stats)])
        return stats["statistics-path"]

    def rewrite_manifests(self, branch: Optional[str] = None, spec_id: Optional[int] = None, *,
                          sort_by: Optional[Sequence[str]] = None,
                          summary: Optional[Mapping[str, str]] = None) -> Snapshot:
        """Regroup the manifests of ``branch``'s head (this table object's write branch by default)
        into manifests of ``commit.manifest.target-size-bytes``, clustered by the partition fields
        ``sort_by`` names first; ``summary``: properties added to the snapshot summary, after the
        Spark application's."""
        return BaseTable.rewrite_manifests(self, branch or self.write_branch, spec_id,
                                           summary={**self.app_summary(), **(summary or {})}, sort_by=sort_by)



    # ------------------------------------------------------------------ description (SQL, CLI, check)
    def partition_columns(self) -> list[str]:
        out: list[str] = []
        for pf in self.spec.fields:
            if isinstance(pf.transform, IdentityTransform):
                name = self.schema.name_of(pf.source_id)
                if name is not None and "." not in name:
                    out.append(name)
        return out

    def partitioning(self) -> list[str]:
        """Each partition field as Spark SQL writes it: ``ts_year`` of ``year(ts)`` is ``years(ts)``'s
        spelling ``year(ts)``, ``bucket[16]`` of ``id`` is ``bucket(16, id)``."""
        terms: list[str] = []
        for pf in self.spec.fields:
            src = self.schema.find_field_or_none(pf.source_id)
            src_name = src.name if src is not None else str(pf.source_id)
            tr = str(pf.transform)
            if tr == "identity":
                terms.append(src_name)
            elif "[" in tr:
                terms.append(f"{tr.split('[')[0]}({tr[tr.find('[') + 1:-1]}, {src_name})")
            else:
                terms.append(f"{tr}({src_name})")
        return terms

    def data_files(self, where: Where = None) -> list[FileRow]:
        rows: list[FileRow] = []
        meta = self.metadata
        for f in self.plan_files(where=where):
            spec = meta.spec_by_id(f.spec_id)
            part: dict[str, Optional[str]] = {}
            for pf, v in zip(spec.fields, f.partition):      # each value as the spec writes it (2024-01-01)
                src = meta.schema.find_field_or_none(pf.source_id)
                part[pf.name] = None if v is None else pf.transform.human(src.field_type, v) if src else str(v)
            rows.append(FileRow(f.file_path, part, f.record_count, f.file_size_in_bytes, f.content))
        return rows

    def describe_columns(self) -> list[tuple[str, str, Optional[str]]]:
        return [(f.name, to_spark_ddl_type(f.field_type) + (" not null" if f.required else ""), f.doc or "")
                for f in self.schema.fields]

    def parse_column_type(self, text: str) -> IcebergType:
        return widen_small_ints(parse_type(text))

    def metadata_tree(self, all_snapshots: bool = True) -> Node:
        return metadata_tree(self, all_snapshots)

    def check(self, progress: Optional[Callable[[str], None]] = None) -> Report:
        return check_iceberg(self, progress)

    # ------------------------------------------------------------------ metadata tables
    def metadata_table_names(self) -> tuple[str, ...]:
        return metadata.NAMES

    def metadata_table(self, name: str, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                       ref: Optional[str] = None) -> pa.Table:
        if name not in metadata.NAMES:
            raise self.unsupported(f"metadata table {name}", f"Iceberg's metadata tables: {', '.join(metadata.NAMES)}")
        if name not in metadata.TABLE_LEVEL and (as_of is not None or ref is not None):
            snap = self.snapshot_for(snapshot_id, as_of, ref)
            snapshot_id = snap.snapshot_id if snap is not None else None
        return metadata.metadata_table(self, name, snapshot_id)


class IcebergWriteTarget:
    """An ``IcebergTable`` as a ``WriteTarget``: the Spark layer's writes see its metadata, I/O and
    session, and commit through it to ``branch``, the snapshot summary naming the Spark application."""

    def __init__(self, table: IcebergTable, branch: str):
        meta = table.metadata
        unhonoured.check(meta.properties, table.name, meta.location)      # before a write's tasks write anything
        self.table = table
        self.name = table.name
        self.io = table.io
        self.branch = branch

    @property
    def metadata(self) -> TableMetadata:
        return self.table.metadata

    @property
    def spark(self) -> SparkSession:
        return self.table.spark

    def refresh(self) -> "IcebergWriteTarget":
        self.table.refresh()
        return self

    def commit(self, change: SnapshotProducer, branch: str) -> Snapshot:
        change.summary_extra = {**self.table.app_summary(), **change.summary_extra}
        return self.table.commit_change(change, branch)


def _flag(value: object) -> bool:
    """A boolean argument given as a bool or as text (``'true'``/``'false'``)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"create_file_list must be true or false, not {value!r}")
    return text == "true"
