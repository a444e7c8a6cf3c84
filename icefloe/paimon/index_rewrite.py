# pyright: strict
"""Rewriting the file indexes of existing data files (Paimon's ``rewrite_file_index`` procedure).

Each live data file (of the partitions ``where`` selects) gets the indexes the table's
``file-index.*`` options ask for now, built from its rows; the data file itself is not rewritten.
Indexes of other types an existing index holds for columns still configured are kept; indexes
of columns no longer configured are dropped. As in Paimon, a container over
``file-index.in-manifest-threshold`` is a new ``.index`` file (``<data file>.index``, or the old
index file's name with its number increased: ``...-1.index``, ``...-2.index``), a smaller one is
embedded. The files are committed as one COMPACT snapshot: each old file entry DELETEd and the same
data file ADDed with its new index. Files whose index does not change are left out.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Mapping, Optional

from icefloe.core.io import staged_files
from icefloe.errors import SchemaError
from icefloe.paimon import file_index as fi
from icefloe.paimon import manifest as mf
from icefloe.paimon import predicate as pr
from icefloe.paimon.arrow_read import read_data_file
from icefloe.paimon.commit import FileStoreCommit
from icefloe.paimon.commit_changes import AddFiles, DeleteFiles, FilesLive, PaimonCommit
from icefloe.paimon.schema import TableSchema
from icefloe.paimon.snapshot import COMPACT
from icefloe.paimon.store_table import StoreTable
from icefloe.paimon.writer import put_data_file

_NUMBERED = re.compile(r"^(?P<stem>.*-)(?P<n>\d+)\.index$")


def next_index_name(old: str) -> str:
    """Paimon's ``createNewFileIndexFilePath``: ``x-3.index`` -> ``x-4.index``, else ``<stem>-1.index``."""
    m = _NUMBERED.match(old)
    if m:
        return f"{m.group('stem')}{int(m.group('n')) + 1}{fi.INDEX_SUFFIX}"
    return old[:old.rfind(".")] + "-1" + fi.INDEX_SUFFIX


def _partition_filter(where: Any, schema: TableSchema) -> Any:
    """``where`` bound to the table, refused unless it names partition columns only (the
    procedure selects partitions, as Paimon's does)."""
    if where is None or not str(where).strip():
        return None
    bound = pr.bind(pr.parse_where(where), schema.fields)
    if isinstance(bound, pr.Always):
        raise SchemaError(f"where {where!r} is not a condition icefloe can read on partition columns")
    others = pr.referenced_columns(bound) - set(schema.partition_keys)
    if others:
        raise SchemaError(f"where {where!r} names {sorted(others)}, which are not partition columns "
                          f"(the table's are {list(schema.partition_keys) or 'none'}); it selects partitions")
    return where


_BUILT = (fi.BLOOM_FILTER, fi.BSI, fi.BITMAP)     # the index types built here from a file's rows


def _carried(raw: Optional[bytes], configured: Mapping[str, Mapping[str, Any]],
             where: str) -> dict[str, dict[str, Optional[bytes]]]:
    """The indexes of ``raw`` (an old container) of types icefloe does not build, for columns and
    types still configured: column -> type -> bytes."""
    out: dict[str, dict[str, Optional[bytes]]] = {}
    if raw is None:
        return out
    for m in fi.read_header(raw, where):
        if m.index_type not in _BUILT and m.index_type in configured.get(m.column, {}):
            out.setdefault(m.column, {})[m.index_type] = None if m.empty else raw[m.start:m.start + m.length]
    return out


def rewrite_file_indexes(table: StoreTable, where: Any = None) -> tuple[int, int]:
    """Give the live files of ``table`` (of the partitions ``where`` selects) the file indexes its
    options ask for; returns (partitions written, files given a new index)."""
    table.refresh()
    table.check_writable()
    store, schema = table.store, table.table_schema
    where = _partition_filter(where, schema)
    base = table.current_snapshot()
    if base is None:
        return 0, 0
    wanted = fi.index_options(schema.options)
    removed: list[mf.ManifestEntry] = []
    added: list[mf.ManifestEntry] = []
    partitions: set[bytes] = set()
    with staged_files(store.io) as written:
        for e in table.plan(where):
            f = e.file
            file_schema = table.schema_by_id(f.schema_id)
            by_id = {x.id: x.name for x in file_schema.fields}
            # the configured columns as the file names them (an index holds the file's names)
            configured: dict[str, dict[str, dict[str, str]]] = {}
            for name, kinds in wanted.columns.items():
                current = next((x for x in schema.fields if x.name == name), None)
                if current is not None and current.id in by_id:
                    configured[by_id[current.id]] = kinds
            directory = f.path.rsplit("/", 1)[0]
            olds = fi.index_files(f.extra_files)
            old_raw = f.embedded_index
            if old_raw is None and olds:
                old_raw = store.io.read_bytes(f"{directory}/{olds[0]}")
            indexes = _carried(old_raw, configured, f"the file index of {f.file_name}")
            build = {c: {t: o for t, o in k.items() if t in _BUILT} for c, k in configured.items()}
            build = {c: k for c, k in build.items() if k}
            if build:
                data = read_data_file(f.path, store.io, columns=list(build))
                built = fi.build_container(data, file_schema.fields, fi.IndexOptions(build))
                if built is not None:
                    for m in fi.read_header(built):
                        indexes.setdefault(m.column, {})[m.index_type] = built[m.start:m.start + m.length]
            extras = tuple(x for x in f.extra_files or () if x not in olds)
            embedded: Optional[bytes] = None
            if indexes:
                raw = fi.write_container(indexes)
                if len(raw) > wanted.threshold:
                    name = next_index_name(olds[0]) if olds else fi.index_file_name(f.file_name)
                    put_data_file(store.io, f"{directory}/{name}", raw, written)
                    extras += (name,)
                else:
                    embedded = raw
            if embedded == f.embedded_index and extras == tuple(f.extra_files or ()):
                continue
            removed.append(mf.ManifestEntry(mf.DELETE, e.partition, e.bucket, e.total_buckets, f))
            added.append(mf.ManifestEntry(mf.ADD, e.partition, e.bucket, e.total_buckets,
                                          replace(f, embedded_index=embedded, extra_files=extras)))
            partitions.add(e.partition.to_bytes())
        if not added:
            return 0, 0

        FileStoreCommit(store, table.commit_user).apply(PaimonCommit(
            COMPACT, (DeleteFiles(tuple(removed)), AddFiles(tuple(added))),
            (FilesLive(tuple(removed), f"rewrite_file_index of {table.name}", base.id, "indexes"),)))
    return len(partitions), len(added)
