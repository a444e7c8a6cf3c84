# pyright: strict
"""Table replication: a table's metadata rewritten with another location prefix (Iceberg's
``rewrite_table_path`` action), so a copy of its files at the new prefix is a working table.

Every absolute path an Iceberg table keeps lives in its metadata: the table location, the
metadata log, each snapshot's manifest list and the statistics files (metadata.json); the
manifests (manifest lists); the data and delete files (manifests, with a position delete file's
bounds on ``file_path`` and a deletion vector's ``referenced_data_file``); the data files again
inside position delete files (their ``file_path`` column) and deletion vectors' Puffin footers
(the ``referenced-data-file`` property). Each of these files is written again under a staging
location, its relative path below ``source_prefix`` kept, with ``source_prefix`` replaced by
``target_prefix`` in every path it holds; data files, equality delete files and statistics files
hold no paths and are copied as they are.

The copy plan pairs each file to copy (its staged rewrite, or the original) with its place under
the target prefix; it is written as a CSV file (``source,target`` lines) in the staging location.
Without ``start_version`` it covers every version up to ``end_version`` (a full copy); with it,
the versions after ``start_version`` and the files their snapshots added (an incremental copy on
top of an earlier one). The source table is only read.

Rewritten files are written before the files that name them (delete files, then manifests, then
manifest lists, then metadata.json), so each records the true length of what it names.
"""
from __future__ import annotations

import copy
import io as _io
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional, cast

import fastavro

from icefloe.core.io import FileIO
from icefloe.iceberg.locations import read_regular_file
from icefloe.iceberg.metadata_files import encode_metadata
from icefloe.iceberg.puffin import MAGIC
from icefloe.iceberg.table_metadata import metadata_json

SEPARATOR = "/"
FILE_LIST = "file-list"
NOT_APPLICABLE = "N/A"
POSITION_DELETES = 1
EQUALITY_DELETES = 2
DELETE_FILE_PATH_ID = 2147483546      # the file_path column of position delete files (spec, "Position Delete Files")
PATH_PROPERTIES = ("write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path")
LIVE = (0, 1)                          # manifest entry status EXISTING, ADDED

Json = dict[str, Any]                  # a JSON document (metadata.json, a Puffin footer) or an Avro record


def _entries(doc: Json, key: str) -> list[Json]:
    """The list of objects under ``key`` (none when it is absent or null)."""
    entries: list[Json] = doc.get(key) or []
    return entries


def with_separator(path: str) -> str:
    return path if path.endswith(SEPARATOR) else path + SEPARATOR


def relativize(path: str, prefix: str) -> str:
    """``path`` below ``prefix`` ("" for the prefix itself); ``ValueError`` when it is not below it."""
    root = with_separator(prefix)
    if not with_separator(path).startswith(root):
        raise ValueError(f"{path} is not under the source prefix {prefix}")
    return "" if with_separator(path) == root else path[len(root):]


def new_path(path: str, source_prefix: str, target_prefix: str) -> str:
    rel = relativize(path, source_prefix)
    return target_prefix if not rel else with_separator(target_prefix) + rel


def file_name(path: str) -> str:
    return path.rsplit(SEPARATOR, 1)[-1]


@dataclass
class TablePathResult:
    latest_version: str
    staging_location: str
    file_list_location: str
    copy_plan: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])       # (source, target) pairs
    rewritten_manifests: int = 0
    rewritten_delete_files: int = 0

    def as_row(self) -> dict[str, str | int]:
        return {"latest_version": self.latest_version, "file_list_location": self.file_list_location,
                "rewritten_manifest_file_paths_count": self.rewritten_manifests,
                "rewritten_delete_file_paths_count": self.rewritten_delete_files}


class _Rewrite:
    """One run: the prefixes, where rewritten files go, and what to copy."""

    def __init__(self, io: FileIO, source: str, target: str, staging: str):
        self.io, self.source, self.target, self.staging = io, source, target, staging
        self.plan: dict[str, str] = {}                   # source file -> target path
        self.written: list[str] = []                # the files this run wrote

    def write(self, path: str, data: bytes) -> None:
        self.io.write_bytes(path, data, overwrite=True)
        self.written.append(path)

    def path(self, p: str, what: str) -> str:
        try:
            return new_path(p, self.source, self.target)
        except ValueError:
            raise ValueError(f"{what} {p} is not under the source prefix {self.source}") from None

    def staged(self, original: str) -> str:
        rel = relativize(original, self.source)
        return with_separator(self.staging) + rel

    def copy(self, source_file: str, target_file: str) -> None:
        self.plan[source_file] = target_file


def rewrite_table_path(io: FileIO, current_metadata_file: str, source_prefix: str, target_prefix: str,
                       start_version: Optional[str] = None, end_version: Optional[str] = None,
                       staging_location: Optional[str] = None, create_file_list: bool = True) -> TablePathResult:
    """Rewrite the metadata of the table whose current metadata file is ``current_metadata_file``
    into the staging location with ``source_prefix`` replaced by ``target_prefix``; returns the
    latest version rewritten, the copy plan and where its CSV was written."""
    if not source_prefix:
        raise ValueError("source_prefix cannot be empty")
    if not target_prefix:
        raise ValueError("target_prefix cannot be empty")
    if source_prefix == target_prefix:
        raise ValueError(f"source_prefix and target_prefix are the same ({source_prefix})")
    current = _load(io, current_metadata_file)
    known = [current_metadata_file] + [e["metadata-file"] for e in _entries(current, "metadata-log")]
    end_file = _version(io, known, end_version, "end_version") if end_version else current_metadata_file
    start_file = _version(io, known, start_version, "start_version") if start_version else None
    if staging_location is None:
        staging = current_metadata_file.rsplit(SEPARATOR, 1)[0] + f"/copy-table-staging-{uuid.uuid4()}/"
    else:
        staging = with_separator(staging_location)
    run = _Rewrite(io, source_prefix, target_prefix, staging)
    end = _load(io, end_file)
    start = _load(io, start_file) if start_file else None
    run.path(end["location"], "table location")        # refused before anything is written
    for entry in _entries(end, "metadata-log"):
        run.path(entry["metadata-file"], "metadata file")
    try:
        return _rewrite(run, end_file, end, start_file, start, create_file_list)
    except BaseException:       # nothing of a failed run is left in the staging location
        for path in run.written:
            io.delete(path)
        raise


def _rewrite(run: _Rewrite, end_file: str, end: Json, start_file: Optional[str], start: Optional[Json],
             create_file_list: bool) -> TablePathResult:
    io, staging = run.io, run.staging
    # the versions to rewrite: end_version and the ones before it, back to start_version (not included)
    versions: list[tuple[str, Json]] = [(end_file, end)]
    for entry in reversed(_entries(end, "metadata-log")):
        if entry["metadata-file"] == start_file:
            break
        if not io.exists(entry["metadata-file"]):
            raise ValueError(f"metadata file {entry['metadata-file']} of the metadata log does not exist")
        versions.append((entry["metadata-file"], _load(io, entry["metadata-file"])))
    old_ids: set[int] = {s["snapshot-id"] for s in _entries(start or {}, "snapshots")}
    delta_ids: set[int] = {s["snapshot-id"] for _, meta in versions for s in _entries(meta, "snapshots")} - old_ids
    snapshots = [s for s in _entries(end, "snapshots") if s["snapshot-id"] not in old_ids]
    for s in snapshots:
        if "manifest-list" not in s:
            raise ValueError(f"snapshot {s['snapshot-id']} lists its manifests inline (format v1 without a manifest "
                             "list), which rewrite_table_path does not rewrite")
    lists: dict[str, Json] = {s["manifest-list"]: s for s in snapshots}
    manifests = _manifests_of(io, list(lists))
    lengths: dict[str, int] = {}
    deletes = 0
    for path, record in manifests.items():
        copied = record["added_snapshot_id"] in delta_ids
        lengths[path], n = _rewrite_manifest(run, path, record, delta_ids, write=copied)
        deletes += n
        if copied:
            run.copy(run.staged(path), run.path(path, "manifest"))
    for path in lists:
        _rewrite_manifest_list(run, path, lengths)
        run.copy(run.staged(path), run.path(path, "manifest list"))
    for path, meta in versions:
        _write_metadata(run, path, meta, delta_ids)
        run.copy(run.staged(path), run.path(path, "metadata file"))
    result = TablePathResult(file_name(end_file), staging, NOT_APPLICABLE, sorted(run.plan.items()),
                             sum(1 for r in manifests.values() if r["added_snapshot_id"] in delta_ids), deletes)
    if create_file_list:
        result.file_list_location = staging + FILE_LIST
        text = "".join(f"{s},{t}\n" for s, t in result.copy_plan)
        run.write(result.file_list_location, text.encode("utf-8"))
    return result


# --------------------------------------------------------------------------- metadata.json
def _load(io: FileIO, path: str) -> Json:
    return metadata_json(read_regular_file(io, path, what=f"metadata file {path}"), path, "table")


def _version(io: FileIO, known: list[str], name: str, what: str) -> str:
    """The metadata file named ``name`` (its file name, or its whole path) among ``known``."""
    hits = [p for p in known if file_name(p) == name or p == name]
    if not hits:
        raise ValueError(f"{what} {name} is not a version in the table's metadata log (versions: "
                         f"{', '.join(file_name(p) for p in reversed(known))})")
    if not io.exists(hits[0]):
        raise ValueError(f"{what} {name}: metadata file {hits[0]} does not exist")
    return hits[0]


def _write_metadata(run: _Rewrite, path: str, meta: Json, delta_ids: set[int]) -> None:
    """One metadata.json with every path replaced; its statistics files join the copy plan."""
    out = copy.deepcopy(meta)
    out["location"] = run.path(meta["location"], "table location")
    props: dict[str, str] = out.get("properties") or {}
    for key in PATH_PROPERTIES:
        if key in props:
            props[key] = run.path(props[key], f"table property {key}")
    for s in _entries(out, "snapshots"):
        if "manifest-list" in s:
            s["manifest-list"] = run.path(s["manifest-list"], "manifest list")
    for e in _entries(out, "metadata-log"):
        e["metadata-file"] = run.path(e["metadata-file"], "metadata file")
    for key in ("statistics", "partition-statistics"):
        for stats in _entries(out, key):
            original: str = stats["statistics-path"]
            stats["statistics-path"] = run.path(original, "statistics file")
            if stats.get("snapshot-id") in delta_ids:       # Puffin and Parquet statistics hold no paths
                run.copy(original, stats["statistics-path"])
    data = json.dumps(out, separators=(",", ":")).encode("utf-8")
    run.write(run.staged(path), encode_metadata(data, path))


# --------------------------------------------------------------------------- Avro files
def _strip_logical(schema: Any) -> Any:
    """The Avro schema without logical types: values are read and written back as stored."""
    if isinstance(schema, dict):
        return {k: _strip_logical(v) for k, v in cast(Json, schema).items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_strip_logical(s) for s in cast(list[Any], schema)]
    return schema


def _read_avro(io: FileIO, path: str, what: str) -> tuple[Json, list[Json], dict[str, str], str]:
    """(writer schema, records as stored, key/value metadata, codec) of an Avro file."""
    try:
        data = io.read_bytes(path)
    except FileNotFoundError:
        raise ValueError(f"{what} {path} does not exist") from None
    reader = fastavro.reader(_io.BytesIO(data))
    # fastavro types the header loosely
    header = cast(dict[str, Any], reader.metadata)  # pyright: ignore[reportUnknownMemberType]
    schema: Json = json.loads(header["avro.schema"])
    codec = str(header.get("avro.codec") or "null")
    records = cast(list[Json], list(fastavro.reader(_io.BytesIO(data), reader_schema=_strip_logical(schema))))
    meta: dict[str, str] = {k: (v.decode("utf-8") if isinstance(v, bytes) else v) for k, v in header.items()
                            if not k.startswith("avro.")}
    return schema, records, meta, codec


def _avro_bytes(schema: Json, records: list[Json], meta: dict[str, str], codec: str) -> bytes:
    buf = _io.BytesIO()
    try:
        fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec,  # pyright: ignore[reportUnknownMemberType]
                        metadata=meta)                  # (fastavro's writer is loosely typed)
    except ValueError:          # a codec this writer lacks (snappy): the file is written with deflate
        buf = _io.BytesIO()
        fastavro.writer(buf, fastavro.parse_schema(schema), records, codec="deflate",  # pyright: ignore[reportUnknownMemberType]
                        metadata=meta)
    return buf.getvalue()


def _manifests_of(io: FileIO, lists: list[str]) -> dict[str, Json]:
    """{manifest path: its manifest list record} over the manifest lists."""
    out: dict[str, Json] = {}
    for path in lists:
        _schema, records, _meta, _codec = _read_avro(io, path, "manifest list")
        for r in records:
            out.setdefault(r["manifest_path"], r)
    return out


def _rewrite_manifest_list(run: _Rewrite, path: str, lengths: dict[str, int]) -> None:
    schema, records, meta, codec = _read_avro(run.io, path, "manifest list")
    for r in records:
        original = r["manifest_path"]
        r["manifest_path"] = run.path(original, "manifest")
        r["manifest_length"] = lengths[original]
    run.write(run.staged(path), _avro_bytes(schema, records, meta, codec))


def _rewrite_manifest(run: _Rewrite, path: str, listed: Json, delta_ids: set[int], write: bool) -> tuple[int, int]:
    """Rewrite one manifest (written to staging when ``write``, else only measured: an earlier
    copy holds it); returns its new length and the number of position delete files rewritten.
    The live files that snapshots after ``start_version`` added join the copy plan."""
    schema, records, meta, codec = _read_avro(run.io, path, "manifest")
    rewritten = 0
    for entry in records:
        f = entry["data_file"]
        original = f["file_path"]
        f["file_path"] = run.path(original, "data file" if not f.get("content") else "delete file")
        snapshot_id = entry.get("snapshot_id")
        added_here = (snapshot_id if snapshot_id is not None else listed["added_snapshot_id"]) in delta_ids
        copied = write and entry["status"] in LIVE and added_here
        if f.get("referenced_data_file"):
            f["referenced_data_file"] = run.path(f["referenced_data_file"], "referenced data file")
        if f.get("content") == POSITION_DELETES:
            for key in ("lower_bounds", "upper_bounds"):
                for kv in _entries(f, key):
                    if kv["key"] == DELETE_FILE_PATH_ID and kv["value"].decode("utf-8").startswith(run.source):
                        kv["value"] = run.path(kv["value"].decode("utf-8"), "data file").encode("utf-8")
            if entry["status"] in LIVE and run.io.exists(original):
                f["file_size_in_bytes"] = _rewrite_position_deletes(run, original, f, write=copied)
                rewritten += 1 if copied else 0
            if copied:
                run.copy(run.staged(original), f["file_path"])
        elif copied:
            run.copy(original, f["file_path"])
    data = _avro_bytes(schema, records, meta, codec)
    if write:
        run.write(run.staged(path), data)
    return len(data), rewritten


# --------------------------------------------------------------------------- position deletes
def _rewrite_position_deletes(run: _Rewrite, path: str, f: Json, write: bool) -> int:
    """A position delete file (Parquet) or deletion vector file (Puffin) with its data file paths
    replaced; returns its new size (written to staging when ``write``)."""
    if str(f.get("file_format", "")).upper() == "PUFFIN":
        data = _puffin_bytes(run, path)
    else:
        data = _parquet_bytes(run, path, f)
    if write:
        run.write(run.staged(path), data)
    return len(data)


def _puffin_bytes(run: _Rewrite, path: str) -> bytes:
    """The Puffin file with each blob's ``referenced-data-file`` replaced in its footer; the blobs
    keep their bytes and offsets, so the manifests' content offsets and sizes still hold."""
    import struct

    data = run.io.read_bytes(path)
    (size,) = struct.unpack("<i", data[-12:-8])
    (flags,) = struct.unpack("<i", data[-8:-4])
    start = len(data) - 12 - size
    if flags & 1:
        raise ValueError(f"Puffin file {path} has a compressed footer, which icefloe does not rewrite")
    footer: Json = json.loads(data[start:start + size])
    for blob in _entries(footer, "blobs"):
        props: dict[str, str] = blob.get("properties") or {}
        if props.get("referenced-data-file", "").startswith(run.source):
            props["referenced-data-file"] = run.path(props["referenced-data-file"], "referenced data file")
    payload = json.dumps(footer, separators=(",", ":")).encode("utf-8")
    return data[:start] + payload + struct.pack("<i", len(payload)) + data[-8:-4] + MAGIC


def _parquet_bytes(run: _Rewrite, path: str, f: Json) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if str(f.get("file_format", "")).upper() != "PARQUET":
        raise ValueError(f"position delete file {path} is {f.get('file_format')}; icefloe rewrites Parquet "
                         "position delete files and deletion vectors")
    with run.io.open_read(path) as fh:
        pf = pq.ParquetFile(fh)
        table = pf.read()
        codec = pf.metadata.row_group(0).column(0).compression if pf.metadata.num_row_groups else "ZSTD"
    if "row" in table.column_names and table.column("row").null_count < table.num_rows:
        raise ValueError(f"position delete file {path} keeps the deleted rows (column 'row'), which "
                         "rewrite_table_path does not rewrite")
    paths = table.column("file_path").to_pylist()
    bad = next((p for p in paths if not with_separator(p).startswith(with_separator(run.source))), None)
    if bad is not None:
        raise ValueError(f"position delete file {path} names data file {bad}, not under the source prefix "
                         f"{run.source}")
    index = table.schema.get_field_index("file_path")
    column = pa.array([new_path(p, run.source, run.target) for p in paths], pa.string())
    table = table.set_column(index, table.schema.field(index), column)
    buf = _io.BytesIO()
    pq.write_table(table, buf, compression=None if codec == "UNCOMPRESSED" else codec.lower(),
                   store_schema=False, write_page_checksum=True)
    return buf.getvalue()
