# pyright: strict
"""A Paimon table over its directory: schema, snapshots, planning, commits, tags, maintenance.

``FileStoreTable`` (Paimon's name for a table backed by its file store) is the format's
side of a table, with no data plane: writes arrive as commit messages (from Spark tasks or
the Arrow writer) and become one snapshot (``commit``); reads are planned here and carried
out by Spark or, for ``to_arrow``, by pyarrow. The user-facing table (``icefloe.table``)
adds Spark reads and writes on top.
"""
from __future__ import annotations

import copy
import dataclasses
import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
import datetime as _dt
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence, TypeVar

import pyarrow as pa

from icefloe.core.io import LOCAL, FileIO
from icefloe.core.timetravel import AsOf, to_epoch_ms
from icefloe.core.types import Schema
from icefloe.errors import AfterCommitError, NoSuchTableError, NotSupportedError, SchemaMismatchError
from icefloe.paimon import branch_merge
from icefloe.paimon import branches
from icefloe.paimon import chain
from icefloe.paimon import changelog
from icefloe.paimon import consumer
from icefloe.paimon import data_evolution as evolution
from icefloe.paimon import scan as scan_mod
from icefloe.paimon import table_hooks
from icefloe.paimon import tag_auto
from icefloe.paimon.tag_period import auto_tag_options
from icefloe.paimon import types as pt
from icefloe.paimon import manifest as mf
from icefloe.paimon.arrow_read import read_data_file
from icefloe.paimon.data_file import DataFileMeta
from icefloe.paimon.commit import CommitMessage, FileStoreCommit
from icefloe.paimon.commit_changes import (
    BucketsKeepSame, DeleteFiles, FilesLive, NotCommitted, PaimonCommit, Requirement, SequenceAfter, message_changes,
    sequence_firsts, written_totals,
)
from icefloe.paimon.expire import expire_snapshots
from icefloe.paimon.file_store import FileStore
from icefloe.paimon.index_rewrite import rewrite_file_indexes
from icefloe.paimon.maintenance import compact, rewrite_manifests, rollback_to, rollback_to_tag
from icefloe.paimon.manifest_sort import MAX_REWRITE_SIZE, ManifestSort, sort_field_index
from icefloe.paimon.orphans import remove_orphan_files
from icefloe.paimon.predicate import to_arrow_expression
from icefloe.paimon import deletion_vectors as dv
from icefloe.paimon.merge import check_engine_options, merge_engine, read_merged_bucket
from icefloe.paimon.scan import UnsupportedTableError
from icefloe.paimon.schema import FALLBACK_BRANCH, SchemaHistory, TableSchema, evolve_arrow, latest_schema
from icefloe.paimon.schema import check_file_format
from icefloe.paimon.schema_update import UpdateSchema
from icefloe.paimon.snapshot import APPEND, BATCH_COMMIT_IDENTIFIER, OVERWRITE, Snapshot
from icefloe.paimon.statistics import Statistics, read_statistics
from icefloe.paimon.types import DataField
from icefloe.paimon.tag import Tag, TagManager, create_tag, delete_tag, rename_tag, replace_tag
from icefloe.paimon.table_plan import PlannedReads

_T = TypeVar("_T")


class FileStoreTable(PlannedReads):
    format = "paimon"
    # options over the schema file's own for writes (``with_options``): a rescale's bucket, SET spark.paimon.<key>
    _dynamic: Mapping[str, str] = {}

    def __init__(self, name: str, location: str, io: Optional[FileIO] = None, branch: Optional[str] = None):
        self.name = name
        self._location = location.rstrip("/")
        self.io = io or LOCAL
        self.branch = None if branch in (None, branches.MAIN) else branches.check_branch_name(branch)
        self._meta = self._location if self.branch is None else branches.branch_path(self._location, self.branch)
        self.commit_user = str(uuid.uuid4())
        self.refresh()

    # ------------------------------------------------------------------ state
    def refresh(self) -> "FileStoreTable":
        schema = latest_schema(self.io, self._meta)
        if schema is None:
            if self.branch is not None:
                raise NoSuchTableError(f"table {self.name} has no branch {self.branch!r} (no schema under "
                                       f"{self._meta})")
            raise NoSuchTableError(f"no Paimon table at {self._location}")
        if self._dynamic:
            schema = dataclasses.replace(schema, options={**schema.options, **self._dynamic})
        self._store = FileStore.renewed(getattr(self, "_store", None), self.io, self._location, schema, self._meta)
        self._schema = schema
        return self

    def with_options(self, options: Mapping[str, str]) -> "FileStoreTable":
        """A copy whose writes take ``options`` over the table's own (Paimon's dynamic options), the schema
        file unchanged; options its files cannot take (a format, a size that is none) are a ``SchemaError``."""
        if not options:
            return self
        out = copy.copy(self)
        out._dynamic = {**self._dynamic, **options}
        check_file_format(out.refresh()._schema)
        return out

    def __getstate__(self) -> dict[str, Any]:  # picklable for Spark tasks: no caches
        state = dict(self.__dict__)
        state.pop("_store", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._store = FileStore(self.io, self._location, self._schema, self._meta)

    @property
    def location(self) -> str:
        return self._location

    @property
    def meta_location(self) -> str:
        """Where this table's snapshots, schemas and tags live: its directory, or for a branch
        ``<table>/branch/branch-<name>`` (data files and manifests stay the table's)."""
        return self._meta

    @property
    def table_schema(self) -> TableSchema:
        """The Paimon schema (``schema-N``): fields with Paimon types, keys, options."""
        return self._schema

    @property
    def schema(self) -> Schema:
        """The icefloe Schema (field ids are Paimon's)."""
        return pt.to_core_schema(self._schema.fields, self._schema.id)

    @property
    def store(self) -> FileStore:
        return self._store

    @property
    def properties(self) -> dict[str, str]:
        """The options, and the table comment as ``comment`` (as Paimon's Spark tables show them)."""
        props: dict[str, str] = dict(self._schema.options)
        if self._schema.comment is not None:
            props["comment"] = self._schema.comment
        return props

    @property
    def comment(self) -> Optional[str]:
        """The table comment (the schema file's ``comment`` field)."""
        return self._schema.comment

    @property
    def options(self) -> dict[str, str]:
        return dict(self._schema.options)

    @property
    def partition_keys(self) -> list[str]:
        return list(self._schema.partition_keys)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self._location!r})"

    # ------------------------------------------------------------------ history
    def snapshots(self) -> list[Snapshot]:
        return self._store.snapshots.snapshots()

    def current_snapshot(self) -> Optional[Snapshot]:
        return self._store.snapshots.latest()

    def history(self) -> list[dict[str, int]]:
        """When each snapshot was committed (Paimon's history is linear)."""
        return [{"timestamp-ms": s.time_millis, "snapshot-id": s.id} for s in self.snapshots()]

    def snapshot(self, snapshot_id: int) -> Snapshot:
        return self._store.snapshots.snapshot(int(snapshot_id))

    def snapshot_for(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, ref: Optional[str] = None,
                     tag: Optional[str] = None) -> Optional[Snapshot]:
        """The snapshot a read uses: by id, by time (``as_of``), by tag (``ref`` or ``tag``:
        the tag's own copy, readable after its snapshot expired), else the latest."""
        ref = FileStoreTable.one_ref(ref, tag)
        if sum(x is not None for x in (snapshot_id, as_of, ref)) > 1:
            raise ValueError("give one of snapshot_id, as_of and ref (a tag)")
        if ref is not None:
            tags = self._tags()
            if tags.get(ref) is None and branches.branch_exists(self.io, self._location, ref):
                raise NotSupportedError(f"{ref!r} is a branch of Paimon table {self.name}, not a tag: read it as "
                                        f"branch_table({ref!r}) (in SQL db.`t$branch_{ref}`)")
            return tags.tag(ref).snapshot
        if snapshot_id is not None:
            return self.snapshot(snapshot_id)
        if as_of is not None:
            return self._store.snapshots.as_of(to_epoch_ms(as_of))
        return self.current_snapshot()

    # ------------------------------------------------------------------ schema evolution
    def update_schema(self) -> UpdateSchema:
        """``with t.update_schema() as u:`` -- add, rename, drop, widen, reorder columns;
        committed on exit as one new ``schema-N`` file (``icefloe.paimon.schema_update``)."""
        return UpdateSchema(self)

    def update_properties(self, set: Optional[Mapping[str, Optional[str]]] = None,
                          remove: Optional[Sequence[str]] = None) -> dict[str, str]:
        """Set and remove table options in one new ``schema-N`` (Paimon's SetOption and
        RemoveOption); returns the options now in effect. ``comment`` is the table comment, kept in
        the schema's ``comment`` field (Paimon's UpdateComment), not an option."""
        with self.update_schema() as u:
            for k, v in (set or {}).items():
                u.update_comment(v) if k == "comment" else u.set_option(k, v)
            for k in remove or ():
                u.update_comment(None) if k == "comment" else u.remove_option(k)
        return dict(self.refresh()._schema.options)

    def schema_by_id(self, schema_id: int) -> TableSchema:
        """The Paimon schema ``schema-<schema_id>`` (cached: schema files never change)."""
        history = self.__dict__.get("_schema_history")
        if history is None or history.table_path != self._meta:
            history = self.__dict__["_schema_history"] = SchemaHistory(self.io, self._meta)
        return self._schema if schema_id == self._schema.id else history.get(schema_id)

    @staticmethod
    def one_ref(ref: Optional[str], tag: Optional[str]) -> Optional[str]:
        if ref is not None and tag is not None and ref != tag:
            raise ValueError("give ref or tag, not both")
        return ref if ref is not None else tag

    def schema_for(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                   ref: Optional[str] = None) -> Schema:
        """The icefloe Schema a read uses: the snapshot's for time travel, else the table's latest."""
        ts = self.table_schema_for(snapshot_id, as_of, ref)
        return pt.to_core_schema(ts.fields, ts.id)

    def table_schema_for(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, ref: Optional[str] = None) -> TableSchema:
        """The Paimon schema a read uses: the snapshot's for time travel, else the table's latest."""
        snap = None if snapshot_id is None and as_of is None and ref is None else \
            self.snapshot_for(snapshot_id, as_of, ref)
        return self._schema if snap is None else self.schema_by_id(snap.schema_id)

    # ------------------------------------------------------------------ planning
    def iter_plan(self, where: Any = None, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None,
                  ref: Optional[str] = None, tag: Optional[str] = None) -> Iterator[mf.ManifestEntry]:
        """``plan``'s entries (``table_plan.PlannedReads``) made as they are read (``scan.iter_plan``),
        the arguments checked at once."""
        ref = FileStoreTable.one_ref(ref, tag)
        if self._schema.options.get(FALLBACK_BRANCH):     # a table another engine set so
            raise UnsupportedTableError(f"table {self.name} sets '{FALLBACK_BRANCH}'; icefloe's reads do not fall "
                                        "back to another branch for missing partitions")
        snap = self.snapshot_for(snapshot_id, as_of, ref)
        travel = (snapshot_id is not None or as_of is not None or ref is not None) and snap is not None
        schema = self.schema_by_id(snap.schema_id) if travel and snap is not None else self._schema
        return scan_mod.iter_plan(self._store, snap, where, schema, self.schema_by_id)

    # ------------------------------------------------------------------ reads
    def to_arrow(self, snapshot_id: Optional[int] = None, as_of: Optional[AsOf] = None, where: Optional[str] = None,
                 columns: Optional[Sequence[str]] = None, ref: Optional[str] = None,
                 tag: Optional[str] = None) -> pa.Table:
        """The rows as a pyarrow Table, read in this process without Spark (a primary-key table's rows merged by key).

        Args:
            snapshot_id: Read this snapshot (time travel by id).
            as_of: Read the snapshot current at this time: a ``datetime`` or epoch milliseconds.
            ref: Read the head of this branch or tag.
            where: Spark SQL predicate text: comparisons, ``IN``, ``IS [NOT] NULL``, prefix ``LIKE``,
                ``AND``, ``OR``; anything else raises ``UnsupportedFilterError`` (use ``to_spark``).
            columns: The columns to read (all by default).
            tag: Read the snapshot this tag names (the same as ``ref``).

        Returns:
            pyarrow.Table: the rows.
        """
        ref = FileStoreTable.one_ref(ref, tag)
        if chain.active(self):      # main merged with the snapshot and delta branches
            return chain.to_arrow(self, where, columns, (snapshot_id, as_of, ref) != (None, None, None))
        schema = self.table_schema_for(snapshot_id, as_of, ref)
        row_filter = to_arrow_expression(where, schema.fields) if where is not None else None
        target = pt.to_arrow_schema(schema.fields, with_ids=False)
        parts: list[pa.Table] = []
        if schema.primary_keys and dv.enabled(schema.options):     # files above level 0, minus their vectors
            vectors = dv.bucket_vectors(self._store, self.snapshot_for(snapshot_id, as_of, ref))
            loaded: dict[tuple[bytes, int], Any] = {}
            for e in dv.readable(self.plan(where, snapshot_id, as_of, ref)):
                key = (e.partition.to_bytes(), e.bucket)
                if key in vectors and key not in loaded:
                    loaded[key] = vectors[key].load(self.io)
                parts.append(dv.read_rows(self.io, e.file.path, self.schema_by_id(e.file.schema_id).fields,
                                          schema.fields, loaded.get(key, {}).get(e.file.file_name)))
        elif schema.primary_keys:       # merged per (partition, bucket); the filter applies after the merge
            self.check_mergeable(schema)
            entries = self.plan(where, snapshot_id, as_of, ref)
            if dv.skips_level0(schema.options):         # first-row: level 0 waits for its compaction
                entries = dv.readable(entries)
            levels = {e.file.file_path: e.file.level for e in entries}
            for paths, fields in self.buckets_of(entries):
                parts.append(read_merged_bucket(self.io, paths, fields, schema, self.name, [levels[p] for p in paths]))
        elif evolution.enabled(schema.options):     # a row-id range's files merged column by column
            for group in evolution.groups(self.plan(where, snapshot_id, as_of, ref)):
                files = evolution.group_files(group, lambda i: self.schema_by_id(i).fields)
                parts.append(evolution.read_group(self.io, files, schema.fields))
        else:
            # an append table's deletion vectors: each file's rows minus those its vector marks
            marks = dv.file_vectors(self._store, self.snapshot_for(snapshot_id, as_of, ref))
            for f in self.plan_files(where, snapshot_id, as_of, ref):  # columns matched by field id
                where_dv = marks.get(f.file_name)
                parts.append(dv.without_positions(
                    evolve_arrow(read_data_file(f.path, self.io), self.schema_by_id(f.schema_id).fields, schema.fields),
                    dv.read_vector(self.io, *where_dv) if where_dv is not None else None))
        out = pa.concat_tables(parts) if parts else target.empty_table()
        if row_filter is not None:
            out = out.filter(row_filter)
        if columns:
            out = out.select(list(columns))
        return out

    def check_mergeable(self, schema: TableSchema) -> None:
        """Refuse, before reading, a primary-key table whose merge icefloe cannot do exactly."""
        keys = set(schema.primary_keys)
        check_engine_options(merge_engine(schema.options), [f.name for f in schema.fields if f.name not in keys],
                             schema.primary_keys, schema.options, self.name)

    def buckets_of(self, entries: Iterable[mf.ManifestEntry]
                   ) -> list[tuple[list[str], list[list[DataField]]]]:
        """Planned entries grouped per (partition, bucket), oldest files first: for each, the
        file paths and the fields of the schema each file was written with."""
        groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        for e in entries:
            groups.setdefault((e.partition.data, e.bucket), []).append(e.file)
        out: list[tuple[list[str], list[list[DataField]]]] = []
        for files in groups.values():
            files.sort(key=lambda f: (f.max_sequence_number, f.min_sequence_number))
            out.append(([f.path for f in files], [self.schema_by_id(f.schema_id).fields for f in files]))
        return out

    # ------------------------------------------------------------------ writes
    def check_writable(self) -> None:
        if self._schema.primary_keys and self._schema.num_buckets <= 0 and self._schema.num_buckets != -1:
            raise UnsupportedTableError(f"table {self.name} is a primary-key table with bucket mode "
                                        f"{self._schema.num_buckets}; icefloe writes fixed or dynamic (-1) buckets")
        if self._schema.num_buckets < -1 or self._schema.num_buckets == 0:
            raise UnsupportedTableError(f"table {self.name} uses bucket mode {self._schema.num_buckets}; "
                                        "icefloe writes bucket -1 (unaware) or fixed buckets only")

    def commit(self, messages: Sequence[CommitMessage], overwrite: bool = False,
               overwrite_partitions: Optional[Callable[[Sequence[Any]], bool]] = None, commit_user: Optional[str] = None,
               commit_identifier: Optional[int] = None) -> Optional[Snapshot]:
        """Commit messages written elsewhere (e.g. by Spark tasks). If the commit fails,
        the messages' data files are deleted: nothing references them. An overwrite with
        ``overwrite_partitions`` (a predicate on partition values) replaces only those.
        A streaming write passes its ``commit_user`` and batch id (``commit_identifier``):
        a batch that user committed already raises ``BatchAlreadyCommitted`` (and its files
        are deleted), as Paimon filters the committables a restarted stream replays."""
        self.refresh()
        try:
            self.check_writable()
            requirements: list[Requirement] = []
            if self._schema.primary_keys:
                requirements.append(SequenceAfter(sequence_firsts(messages, self._schema.partition_types), self.name))
            if commit_identifier is not None:
                requirements.append(NotCommitted(commit_user, commit_identifier))
            committer = FileStoreCommit(self._store, commit_user or self.commit_user,
                                        BATCH_COMMIT_IDENTIFIER if commit_identifier is None else commit_identifier)
            if overwrite and not messages:      # a chain table's snapshot branch keeps the anchors deltas need
                chain.check_drop(self, overwrite_partitions)
            snap = committer.commit(list(messages), overwrite=overwrite, overwrite_partitions=overwrite_partitions,
                                    requirements=requirements)
        except AfterCommitError:        # committed: the files are the table's
            raise
        except BaseException:
            self.abort(messages)
            raise
        if overwrite and snap is not None:      # a chain table's delta branch: the snapshot branch truncated
            chain.after_overwrite(self, snap)
        return snap

    def replace_files(self, removed: Sequence[mf.ManifestEntry], messages: Sequence[CommitMessage], operation: str,
                      base_id: Optional[int], also: Sequence[Requirement] = ()) -> Snapshot:
        """Commit a copy-on-write change of an append table as one OVERWRITE snapshot (as Paimon
        commits file deletions): the live files ``removed`` (manifest entries) are deleted and
        the messages' files added. Refused with ``CommitConflictError`` when another commit
        since snapshot ``base_id`` removed one of them; then the new files are deleted too."""
        self.refresh()
        try:
            self.check_writable()
            changes, requirements = message_changes(messages, self._store.partition_types)
            gone = tuple(removed)
            return FileStoreCommit(self._store, self.commit_user).apply(PaimonCommit(
                OVERWRITE, (DeleteFiles(gone), *changes),
                (FilesLive(gone, f"{operation} on {self.name}", base_id), *requirements, *also,
                 # rows rewritten into a partition still in another bucket number: refused, as Paimon's writers do
                 BucketsKeepSame(written_totals(messages, self._store.partition_types), tuple(self.partition_keys)))))
        except AfterCommitError:        # committed: the files are the table's
            raise
        except BaseException:
            self.abort(messages)
            raise

    def commit_column_updates(self, messages: Sequence[CommitMessage], updated: Sequence[mf.ManifestEntry],
                              operation: str, base_id: Optional[int]) -> Snapshot:
        """Commit a data-evolution update (``data_evolution``) as one APPEND snapshot adding the
        messages' files, removing none; a ``CommitConflictError`` (new files deleted) when a commit
        since snapshot ``base_id`` removed a file of a row-id range it updates (``updated``)."""
        self.refresh()
        try:
            changes, requirements = message_changes(messages, self._store.partition_types)
            return FileStoreCommit(self._store, self.commit_user).apply(PaimonCommit(APPEND, tuple(changes), (
                FilesLive(tuple(updated), f"{operation} on {self.name}", base_id, "updates rows of"), *requirements)))
        except AfterCommitError:        # committed: the files are the table's
            raise
        except BaseException:
            self.abort(messages)
            raise

    def commit_existing_files(self, messages: Sequence[CommitMessage]) -> Optional[Snapshot]:
        """Commit messages whose data files were moved into the table from elsewhere (a
        migration); unlike ``commit``, a failure leaves the files where they are, for the caller
        to move back."""
        self.refresh()
        self.check_writable()
        return FileStoreCommit(self._store, self.commit_user, BATCH_COMMIT_IDENTIFIER).commit(list(messages))

    def commit_statistics(self, stats: Statistics) -> Snapshot:
        """Commit ``stats`` (what ``ANALYZE TABLE`` computed) as an ANALYZE snapshot."""
        self.refresh()
        return FileStoreCommit(self._store, self.commit_user).commit_statistics(stats)

    def statistics(self, snapshot: Optional[Snapshot] = None) -> Optional[Statistics]:
        """The statistics the snapshot (the latest by default) names, if any."""
        snapshot = snapshot if snapshot is not None else self.current_snapshot()
        if snapshot is None or not snapshot.statistics:
            return None
        return read_statistics(self.io, self.location, snapshot.statistics)

    def abort(self, messages: Sequence[CommitMessage]) -> None:
        """Delete the data files (and dynamic-bucket index files) of uncommitted messages."""
        self._store.delete_uncommitted(messages)

    def commit_overwrite(self, messages: Sequence[CommitMessage], partition: Optional[Mapping[str, Any]] = None,
                         dynamic: bool = False) -> Optional[Snapshot]:
        """Commit ``messages`` as an OVERWRITE: of the whole table; of the partitions matching
        ``partition`` (some or all keys); with ``dynamic``, of the partitions the messages
        write to (none: nothing is committed)."""
        if dynamic and self.partition_keys:
            if not messages:
                return None
            present: set[tuple[Any, ...]] = {tuple(m.partition) for m in messages}
            return self.commit(messages, overwrite=True, overwrite_partitions=lambda values: tuple(values) in present)
        if partition:
            return self.commit(messages, overwrite=True, overwrite_partitions=self.static_partition_match(partition))
        return self.commit(messages, overwrite=True)

    def drop_partitions(self, partitions: Sequence[Mapping[str, Any]], if_exists: bool = False) -> Optional[Snapshot]:
        """Paimon's drop partition: one OVERWRITE snapshot deleting every live file of the partitions
        (each a dict of some or all keys). A partition with no live file is an error unless
        ``if_exists``; None when nothing is left to drop."""
        if not self.partition_keys:
            raise SchemaMismatchError(f"table {self.name} is not partitioned")
        self.refresh()
        matches = [self.static_partition_match(p) for p in partitions]
        store = self._store
        live: set[tuple[Any, ...]] = ({store.partition_values(e.partition) for e in self.plan()}
                                      if self.current_snapshot() else set())
        missing = [p for p, m in zip(partitions, matches) if not any(m(v) for v in live)]
        if missing and not if_exists:
            raise SchemaMismatchError(f"table {self.name} has no partition {missing[0]}; nothing was dropped")
        if len(missing) == len(partitions):
            return None
        return self.commit([], overwrite=True, overwrite_partitions=lambda values: any(m(values) for m in matches))

    def mark_partition_done(self, partitions: Sequence[Mapping[str, Any]]) -> list[str]:
        """Paimon's mark-done with the ``success-file`` action (its default): a ``_SUCCESS`` file
        (``creationTime``, ``modificationTime`` in epoch ms) in each partition's directory; a
        partition marked before keeps its creation time. Returns the files' paths."""
        actions = [a.strip() for a in self.options.get("partition.mark-done-action", "success-file").split(",")]
        other = [a for a in actions if a and a != "success-file"]
        if other:
            raise SchemaMismatchError(f"partition.mark-done-action {', '.join(other)} of {self.name}: icefloe "
                                      "marks partitions done with 'success-file' only")
        keys = self.partition_keys
        arrow = pt.to_arrow_schema(self._schema.fields, with_ids=False)
        paths: list[str] = []
        for spec in partitions:
            given = {str(k).lower(): v for k, v in spec.items()}
            if sorted(given) != sorted(k.lower() for k in keys):
                raise SchemaMismatchError(f"partition {spec} of {self.name} must give each partition key {keys}")
            values = [pa.array([given[k.lower()]]).cast(arrow.field(k).type).to_pylist()[0] for k in keys]
            paths.append(f"{self._location}/{self._store.partition_dir(values)}/_SUCCESS")
        for path in paths:
            now = int(time.time() * 1000)
            created = now
            if self.io.exists(path):
                created = json.loads(self.io.read_bytes(path)).get("creationTime", now)
            doc = f'{{\n  "creationTime" : {int(created)},\n  "modificationTime" : {now}\n}}'
            self.io.write_bytes(path, doc.encode("utf-8"), overwrite=True)
        return paths

    def check_in_partition(self, messages: Sequence[CommitMessage], partition: Mapping[str, Any],
                           match: Callable[[Sequence[Any]], bool]) -> None:
        """Every message writes into the partition ``partition`` selects, else nothing is kept."""
        stray = [m.partition for m in messages if not match(m.partition)]
        if stray:
            self.abort(messages)
            raise SchemaMismatchError(
                f"overwrite of {self.name} partition {partition}: the data has rows in partition "
                f"{dict(zip(self.partition_keys, stray[0]))}; nothing was committed")

    def static_partition_match(self, partition: Mapping[str, Any]) -> Callable[[Sequence[Any]], bool]:
        """A predicate on partition values: those equal to ``partition``'s (cast to the key types)."""
        keys = self.partition_keys
        arrow = pt.to_arrow_schema(self._schema.fields, with_ids=False)
        wanted: list[tuple[int, Any]] = []
        for k, v in partition.items():
            name = next((p for p in keys if p.lower() == str(k).lower()), None)
            if name is None:
                raise SchemaMismatchError(f"{k!r} is not a partition key of {self.name} (keys: {keys})")
            try:
                typed = pa.array([v]).cast(arrow.field(name).type).to_pylist()[0] if v is not None else None
            except (pa.ArrowException, ValueError) as e:
                raise SchemaMismatchError(f"partition value {v!r} does not fit key {name} of {self.name}: {e}") \
                    from None
            wanted.append((keys.index(name), typed))
        return lambda values: all(values[i] == v for i, v in wanted)

    def expire_snapshots(self, now_ms: Optional[int] = None, older_than: Optional[AsOf] = None, retain_last: Optional[int] = None,
                         retain_max: Optional[int] = None, max_deletes: Optional[int] = None) -> list[int]:
        """Expire snapshots per the retention options; returns the expired ids.
        ``older_than`` (a time) replaces ``snapshot.time-retained`` and ``retain_last``
        the retained minimum, as the expire procedure's arguments do. Not on a branch: its snapshots
        may delete files main still reads."""
        if self.branch is not None:
            raise branches.BranchError(f"expire_snapshots on branch {self.branch!r} of {self.name}: icefloe expires "
                                       "main's snapshots only (a branch's snapshots can remove files main reads)")
        expired = expire_snapshots(self.refresh()._store, now_ms,
                                   older_than_ms=to_epoch_ms(older_than) if older_than is not None else None,
                                   retain_min=retain_last, retain_max=retain_max, max_deletes=max_deletes)
        table_hooks.changed(self._store)
        return expired

    # ------------------------------------------------------------------ maintenance
    def rewrite_data_files(self, where: Any = None, target_file_size: Optional[int] = None) -> Optional[Snapshot]:
        """Compaction: small files of each (partition, bucket) rewritten as one COMPACT snapshot."""
        return compact(self, where, target_file_size)

    def rewrite_manifests(self, sort_field: Optional[str] = None, sort_max_size: Optional[int] = None,
                          sort: bool = False) -> Optional[Snapshot]:
        """Merge all manifests of the latest snapshot into a COMPACT snapshot; with ``sort``
        (Paimon's manifest sort), their entries ordered by partition field ``sort_field`` (default
        the first), unless the manifests total more than ``sort_max_size`` bytes."""
        if not sort:
            return rewrite_manifests(self)
        return rewrite_manifests(self, self.manifest_sort(sort_field, sort_max_size))

    def manifest_sort(self, field: Optional[str] = None, max_size: Optional[int] = None) -> ManifestSort:
        """How a manifest sort of this table orders entries; ValueError for a field that is not a
        partition field (or a table without partitions)."""
        return ManifestSort(sort_field_index(self.partition_keys, field, self.name),
                            MAX_REWRITE_SIZE if max_size is None else int(max_size))

    def rewrite_file_index(self, where: Any = None) -> tuple[int, int]:
        """Paimon's ``rewrite_file_index``: the live files (of the partitions ``where`` selects) get
        the file indexes the table's ``file-index.*`` options ask for, in one COMPACT snapshot;
        returns (partitions written, files given a new index)."""
        return rewrite_file_indexes(self, where)

    def rollback_to_snapshot(self, snapshot_id: int) -> Snapshot:
        """Paimon's rollback: later snapshots, their tags and the files only they added are
        deleted. An expired snapshot a tag still holds is restored from the tag."""
        snap = rollback_to(self, snapshot_id)
        table_hooks.changed(self.refresh()._store)
        return snap

    def rollback_to_timestamp(self, as_of: AsOf) -> Snapshot:
        """Roll back to the latest snapshot committed at or before ``as_of``."""
        return self.rollback_to_snapshot(self.refresh()._store.snapshots.as_of(to_epoch_ms(as_of)).id)

    def remove_orphan_files(self, older_than: Optional[AsOf] = None, dry_run: bool = False,
                            parallelism: Optional[int] = None, sizes: Optional[dict[str, int]] = None) -> list[str]:
        """Delete files under the table directory that no snapshot, tag or schema refers to
        (default: only those older than 3 days; ``parallelism`` deletes at once); returns their
        paths, sorted (``sizes`` gets each one's size in bytes)."""
        return remove_orphan_files(self.refresh()._store, older_than, dry_run, parallelism, sizes)

    def remove_unexisting_files(self, dry_run: bool = False, parallelism: Optional[int] = None) -> list[str]:
        """Paimon's ``remove_unexisting_files``: the live data files of the latest snapshot whose file
        is gone (looked for by ``parallelism`` threads), forgotten by one commit of DELETE entries (not
        with ``dry_run``); returns their paths."""
        self.refresh()
        store = self._store
        live = store.live_entries(self.current_snapshot())

        def exists(e: mf.ManifestEntry) -> bool:
            return self.io.exists(store.data_file_path(e))

        with ThreadPoolExecutor(max_workers=max(1, parallelism or 8)) as pool:
            found = list(pool.map(exists, live))
        missing = [e for e, there in zip(live, found) if not there]
        if missing and not dry_run:
            FileStoreCommit(store, self.commit_user).apply(
                PaimonCommit(APPEND, (DeleteFiles(tuple(missing), only_live=True),)))
        return sorted(store.data_file_path(e) for e in missing)

    def expire_changelogs(self, retain_min: Optional[int] = None, retain_max: Optional[int] = None,
                          older_than_ms: Optional[int] = None, max_deletes: Optional[int] = None,
                          delete_all: bool = False) -> list[int]:
        """Expire the changelogs kept past their snapshots (``changelog/changelog-<id>``) by the
        table's ``changelog.*`` retention or the arguments; returns the expired ids."""
        self._main_only("expire_changelogs")
        store = self.refresh()._store
        latest = store.snapshots.latest_id()
        if latest is None:
            return []
        return changelog.expire_changelogs(store, latest, int(time.time() * 1000), retain_min, retain_max,
                                           older_than_ms, max_deletes, delete_all)

    # ------------------------------------------------------------------ consumers
    def consumers(self) -> dict[str, int]:
        """{consumer id: the next snapshot it reads} (``<table>/consumer/consumer-<id>``)."""
        return consumer.consumers(self.io, self.meta_location)

    def reset_consumer(self, consumer_id: str, next_snapshot_id: Optional[int] = None) -> None:
        """Set the consumer's next snapshot (it must exist), or delete the consumer (None)."""
        if next_snapshot_id is None:
            consumer.delete_consumer(self.io, self.meta_location, consumer_id)
            return
        self.snapshot(int(next_snapshot_id))            # NoSuchSnapshotError when it does not exist
        consumer.reset_consumer(self.io, self.meta_location, consumer_id, int(next_snapshot_id))

    def clear_consumers(self, including: Optional[str] = None, excluding: Optional[str] = None) -> list[str]:
        """Delete the consumers whose id matches the regular expression ``including`` (all by
        default) but not ``excluding``; returns their ids."""
        return consumer.clear_consumers(self.io, self.meta_location, including, excluding)

    def purge_files(self) -> None:
        """Paimon's ``purge_files``: drop every branch, tag and consumer, commit an empty OVERWRITE,
        delete the kept changelogs, expire every snapshot but that one and delete every file no
        longer referenced: the table stays, empty, with its schema."""
        self._main_only("purge_files")
        for name in self.branches():
            self.delete_branch(name)
        for name in list(self.tags()):
            self.delete_tag(name)
        self.clear_consumers()
        self.commit([], overwrite=True)
        self.io.delete_tree(f"{self._location}/changelog")
        now = int(time.time() * 1000)
        expire_snapshots(self.refresh()._store, now, older_than_ms=now, retain_min=1, retain_max=1)
        table_hooks.changed(self._store)
        remove_orphan_files(self._store, older_than=now)

    # ------------------------------------------------------------------ tags
    def _tags(self) -> TagManager:
        return TagManager(self.io, self._meta)

    def tags(self) -> dict[str, Tag]:
        """``{name: Tag}``, ordered by snapshot id then name (``tag/tag-<name>`` files)."""
        return {t.name: t for t in self._tags().tags()}

    def refs(self) -> dict[str, Tag]:
        """The table's refs: its tags (a branch is a table of its own: ``branch_table(name)``)."""
        return self.tags()

    def tag(self, name: str) -> Tag:
        return self._tags().tag(name)

    def tag_path(self, name: str) -> str:
        """The file of tag ``name`` (``tag/tag-<name>`` of the table or branch)."""
        return self._tags().tag_path(name)

    def create_tag(self, name: str, snapshot_id: Optional[int] = None,
                   time_retained: Optional[_dt.timedelta] = None) -> Tag:
        """Tag ``snapshot_id`` (default: the latest snapshot). The tag keeps the snapshot's
        files after it expires; ``TagAlreadyExistsError`` if ``name`` is taken. ``time_retained``
        (a ``timedelta``) is recorded in the tag file as Paimon records it; by default the table's
        ``tag.default-time-retained``."""
        store = self.refresh()._store
        if time_retained is None:
            time_retained = auto_tag_options(store.schema.options).default_time_retained
        return self._tags_changed(create_tag(store, name, snapshot_id, time_retained))

    def trigger_tag_automatic_creation(self) -> dict[str, list[str]]:
        """The automatic tags the snapshots call for and the expiry of tags past their retention, as
        after a commit (``tag_auto``; batch tags are made by writes only). ``{"created", "deleted"}``."""
        return self._tags_changed(tag_auto.run(self.refresh()._store, after_commit=False))

    def replace_tag(self, name: str, snapshot_id: Optional[int] = None,
                    time_retained: Optional[_dt.timedelta] = None) -> Tag:
        """Point tag ``name`` at ``snapshot_id`` (default: the latest snapshot)."""
        return self._tags_changed(replace_tag(self.refresh()._store, name, snapshot_id, time_retained,
                                              self._tag_files_shared(name)))

    def rename_tag(self, name: str, new_name: str) -> Tag:
        """Rename tag ``name`` to ``new_name``."""
        return self._tags_changed(rename_tag(self._store, name, new_name))

    def delete_tag(self, name: str) -> list[str]:
        """Delete tag ``name`` and the files only it kept alive; returns their paths."""
        return self._tags_changed(delete_tag(self.refresh()._store, name, self._tag_files_shared(name)))

    def _tags_changed(self, result: _T) -> _T:
        """After a change of main's tags: the hooks of ``table_hooks`` (the Iceberg view's tag refs,
        as Paimon's tag callbacks keep them)."""
        if self.branch is None:
            table_hooks.changed(self._store)
        return result

    def _tag_files_shared(self, name: str) -> bool:
        """Whether a tag's files may be another history's: every tag of a branch (the branch shares
        the table's files), and a tag of main that branches were made from."""
        return self.branch is not None or bool(branches.branches_from_tag(self.io, self._location, name))

    # ------------------------------------------------------------------ branches
    def branches(self) -> list[str]:
        """The table's branches (``<table>/branch/branch-<name>``), not counting main."""
        return branches.branch_names(self.io, self._location)

    def branch_table(self, name: str) -> "FileStoreTable":
        """Branch ``name`` as a table of its own: reads, writes, schema changes and tags there."""
        if name not in (None, branches.MAIN) and not branches.branch_exists(self.io, self._location, name):
            raise branches.BranchError(f"table {self.name} has no branch {name!r}; branches are "
                                       f"{self.branches() or 'none'}")
        return self._with_branch(None if name == branches.MAIN else name).with_options(self._dynamic)

    def _with_branch(self, branch: Optional[str]) -> "FileStoreTable":
        """This table on another branch (None: main); subclasses keep what they add."""
        return FileStoreTable(self.name, self._location, self.io, branch=branch)

    def create_branch(self, name: str, tag: Optional[str] = None) -> "FileStoreTable":
        """Create branch ``name`` from tag ``tag`` (its snapshot is the branch's first), or an empty
        branch with the table's latest schema; on a branch, from that branch's tag and schemas.
        Returns the new branch as a table."""
        branches.create_branch(self.io, self._location, name, tag, source=self._meta)
        return self.branch_table(name)

    def merge_branch(self, source_branch: str, target_branch: Optional[str] = None) -> Optional[Snapshot]:
        """Append to ``target_branch`` (main by default) the data files of ``source_branch`` it lacks,
        as Paimon's ``merge_branch`` (append tables with complete append-only histories; see
        ``branch_merge``). The new snapshot, or None when there is nothing to merge."""
        target = target_branch or branches.MAIN
        return branch_merge.merge_branch(self.branch_table(source_branch), self.branch_table(target),
                                         (source_branch, target))

    def delete_branch(self, name: str) -> None:
        """Delete branch ``name``: its snapshots, schemas and tags (the data files it wrote stay until
        orphan cleanup, as in Paimon)."""
        self._main_only("delete_branch")
        branches.delete_branch(self.io, self._location, name)

    def rename_branch(self, name: str, new_name: str) -> "FileStoreTable":
        """Rename branch ``name`` to ``new_name`` (its directory moves; main cannot be renamed).
        Returns the branch under its new name as a table."""
        self._main_only("rename_branch")
        branches.rename_branch(self.io, self._location, name, new_name)
        return self.branch_table(new_name)

    def repair_earliest_snapshot(self, snapshot_id: int) -> int:
        """Point the EARLIEST hint at ``snapshot_id``, as Paimon's ``repair_earliest_snapshot``: the
        snapshots from it to the latest must all exist and the one before it must not (the first
        after a gap), or it is the earliest already. Returns the earliest snapshot id before."""
        snaps = self._store.snapshots
        previous, latest = snaps.earliest_id(), snaps.latest_id()
        if previous is None or latest is None:
            raise ValueError(f"table {self.name} has no snapshot: there is no earliest snapshot to repair")
        if not previous <= snapshot_id <= latest:
            raise ValueError(f"snapshot {snapshot_id} is not between the earliest ({previous}) and the latest "
                             f"({latest}) snapshot of {self.name}")
        missing = sorted(set(range(snapshot_id, latest + 1)) - set(snaps.ids()))
        if missing:
            raise ValueError(f"snapshot {missing[0]} of {self.name} does not exist: the snapshots from "
                             f"{snapshot_id} to the latest must all exist")
        if snapshot_id != previous and snaps.ids().count(snapshot_id - 1):
            raise ValueError(f"snapshot {snapshot_id} of {self.name} does not follow a gap: snapshot "
                             f"{snapshot_id - 1} exists")
        snaps.commit_earliest_hint(snapshot_id)
        return previous

    def fast_forward(self, name: str) -> Optional[Snapshot]:
        """Paimon's fast-forward: main's snapshots, schemas and tags from the branch's first snapshot on
        are replaced by the branch's; returns main's new latest snapshot."""
        self._main_only("fast_forward")
        branches.fast_forward(self.io, self._location, name)
        table_hooks.changed(self.refresh()._store)       # main's snapshots changed
        return self.current_snapshot()

    def _main_only(self, operation: str) -> None:
        if self.branch is not None:
            raise branches.BranchError(f"{operation} is an operation of the table: call it on {self.name}, not on "
                                       f"its branch {self.branch!r}")

    def drop_tag(self, name: str) -> list[str]:
        """``delete_tag`` under the Iceberg table API's name."""
        return self.delete_tag(name)

    def rollback_to_tag(self, name: str) -> Snapshot:
        """Roll back to a tag's snapshot (written back from the tag if it expired); later
        snapshots and their tags are deleted."""
        snap = rollback_to_tag(self, name)
        table_hooks.changed(self.refresh()._store)
        return snap
