# pyright: strict
"""The Hadoop-catalog table layout: ``metadata/vN.metadata.json`` and ``version-hint.text``.

Version N is ``vN.metadata.json``, or ``vN.gz.metadata.json`` when the table's
``write.metadata.compression-codec`` is ``gzip`` (``metadata_files``); a reader looks for the two
in that order, then for ``vN.metadata.json.gz`` (older Java versions' name), as Iceberg's
``HadoopTableOperations`` does. Versions newer than the hint are looked for under the two names
written today. A commit that finds the same version under the other name once its own file is
written withdraws its file (``VersionConflict``): two writers of different codecs racing for one
version both create their file, and this keeps at most one of them.

A commit writes version N+1 with create-if-absent, so of two writers racing
for the same version exactly one wins; the hint is written afterwards and is
only a hint: readers look past it for newer versions, and list the directory
when it is missing, empty or garbage (also when it is not a regular file or is
larger than a version number can be).

A metadata version is read only when it is a regular file under the size limit
of :func:`icefloe.iceberg.locations.read_regular_file` (the rule register and
the SQL catalog use): a FIFO, a device or a huge file planted as
``vN.metadata.json`` is refused with a ``LocationError`` before it is opened,
so a reader never blocks or runs out of memory on it.
"""
from __future__ import annotations

import re
import threading
from typing import Optional

from icefloe.core.io import FileAlreadyExistsError, FileIO
from icefloe.errors import LocationError, NoSuchTableError
from icefloe.iceberg.locations import read_regular_file
from icefloe.iceberg.metadata_files import (
    GZIP_SUFFIX, OLD_GZIP_SUFFIX, PLAIN_SUFFIX, encode_metadata, metadata_suffix,
)
from icefloe.iceberg.operations import SwapCommits
from icefloe.iceberg.table_metadata import TableMetadata, with_metadata_log
from icefloe.errors import VersionConflict  # noqa: F401 - defined in icefloe.errors, importable here too

HINT_FILE = "version-hint.text"
_VERSION_RE = re.compile(r"^v([0-9]+)(\.gz\.metadata\.json|\.metadata\.json(?:\.gz)?)$")
_SUFFIXES = (PLAIN_SUFFIX, GZIP_SUFFIX, OLD_GZIP_SUFFIX)    # the order a reader prefers them in
_WRITTEN_SUFFIXES = (PLAIN_SUFFIX, GZIP_SUFFIX)
_HINT_RE = re.compile(r"^[0-9]{1,18}$")
_HINT_MAX_BYTES = 64  # 18 digits and surrounding whitespace; anything larger is garbage
# The metadata files parsed lately, process-wide: path -> (its bytes, what they parse to). A table
# load, the refresh before its commit and the commit's own read of the latest version read the same
# file: parsed once, as long as the bytes are the same (a table's metadata grows with its snapshots).
_PARSED: dict[str, tuple[bytes, TableMetadata]] = {}
_PARSED_LIMIT = 32
_PARSED_LOCK = threading.Lock()


class HadoopTableOperations(SwapCommits):
    """A table of the Hadoop / object-store layout (the ``TableOperations`` protocol)."""

    def __init__(self, io: FileIO, location: str):
        self.io = io
        self.location = location.rstrip("/")
        self.metadata_dir = f"{self.location}/metadata"
        self._paths: dict[int, str] = {}     # the file of each version seen (a version's file never changes)

    def metadata_path(self, version: int) -> str:
        """The file of ``version``: the one that exists, else its uncompressed name."""
        return self._find(version) or f"{self.metadata_dir}/v{version}{PLAIN_SUFFIX}"

    def _find(self, version: int, suffixes: tuple[str, ...] = _SUFFIXES, probe: bool = False) -> Optional[str]:
        """The file of ``version`` under the first of ``suffixes`` that exists (None if none does);
        a file seen before is taken as it is unless ``probe`` asks to look again (a version's file
        never changes; ``load`` looks again should it have gone)."""
        known = self._paths.get(version)
        if known is not None and not probe:
            return known
        names = [f"{self.metadata_dir}/v{version}{suffix}" for suffix in suffixes]
        for path in ([known] if known in names else []) + [n for n in names if n != known]:
            if self.io.exists(path):
                self._paths[version] = path
                return path
        self._paths.pop(version, None)
        return None

    # ------------------------------------------------------------------ versions
    def _read_hint(self) -> Optional[int]:
        try:
            data = read_regular_file(self.io, f"{self.metadata_dir}/{HINT_FILE}", _HINT_MAX_BYTES, HINT_FILE)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, LocationError):
            return None  # missing, not a regular file or too large: list the directory instead
        text = data.decode("utf-8", "replace").strip()
        # ASCII digits only: str.isdigit() also accepts e.g. superscripts, which int() rejects
        return int(text) if _HINT_RE.match(text) else None

    def _list_versions(self) -> list[int]:
        found: dict[int, str] = {}
        for name in self.io.list_dir(self.metadata_dir):
            m = _VERSION_RE.match(name)
            if m:
                v = int(m.group(1))
                if v not in found or _SUFFIXES.index(m.group(2)) < _SUFFIXES.index(found[v]):
                    found[v] = m.group(2)
        for v, suffix in found.items():
            self._paths.setdefault(v, f"{self.metadata_dir}/v{v}{suffix}")
        return sorted(found)

    def current_version(self) -> Optional[int]:
        """The highest committed version; the hint is a starting point, never the last word."""
        hint = self._read_hint()
        if hint is not None and hint > 0 and self._find(hint) is not None:
            v = hint
            while self._find(v + 1, _WRITTEN_SUFFIXES, probe=True) is not None:
                v += 1
            return v
        versions = self._list_versions()
        return versions[-1] if versions else None

    def exists(self) -> bool:
        return self.current_version() is not None

    def load(self, version: Optional[int] = None) -> tuple[int, TableMetadata]:
        v = self.current_version() if version is None else version
        if v is None:
            raise NoSuchTableError(f"no Iceberg table at {self.location} (no metadata/v*.metadata.json)")
        path = self.metadata_path(v)
        try:
            data = read_regular_file(self.io, path, what=f"metadata file {path}")
        except FileNotFoundError:
            self._paths.pop(v, None)         # gone since it was seen (a dropped table made again): look again
            path = self.metadata_path(v)
            try:
                data = read_regular_file(self.io, path, what=f"metadata file {path}")
            except FileNotFoundError as e:
                raise NoSuchTableError(f"metadata file {path} is missing") from e
        with _PARSED_LOCK:
            seen = _PARSED.get(path)
        if seen is not None and seen[0] == data:
            return v, seen[1]
        meta = TableMetadata.loads(data, path)
        with _PARSED_LOCK:
            if len(_PARSED) >= _PARSED_LIMIT:
                _PARSED.clear()
            _PARSED[path] = (data, meta)
        return v, meta

    # ------------------------------------------------------------------ commit
    def commit(self, base_version: Optional[int], base: Optional[TableMetadata],
               new: TableMetadata) -> int:
        """Write ``new`` as version base_version+1; raise VersionConflict if it exists."""
        version = (base_version or 0) + 1
        suffix = metadata_suffix(new.properties, self.location)     # an unknown codec: nothing is written
        if base is not None and base_version is not None:
            max_log = int(new.properties.get("write.metadata.previous-versions-max", "100"))
            new = with_metadata_log(new, self.metadata_path(base_version), base.last_updated_ms, max_log)
        path = f"{self.metadata_dir}/v{version}{suffix}"
        data = encode_metadata(new.dumps(), path)
        conflict = f"version {version} of {self.location} was committed by another writer"
        try:
            self.io.write_bytes(path, data, overwrite=False)
        except FileAlreadyExistsError as e:
            raise VersionConflict(conflict) from e
        other = f"{self.metadata_dir}/v{version}{GZIP_SUFFIX if suffix == PLAIN_SUFFIX else PLAIN_SUFFIX}"
        if self.io.exists(other):        # a writer of the other codec created this version too
            self.io.delete(path)
            raise VersionConflict(conflict)
        self._paths[version] = path
        with _PARSED_LOCK:      # what the next load of this version reads back, if the bytes are these
            if len(_PARSED) >= _PARSED_LIMIT:
                _PARSED.clear()
            _PARSED[path] = (data, new)
        self._write_hint(version)
        self.last_written = new
        return version

    def _write_hint(self, version: int) -> None:
        try:
            self.io.write_hint(f"{self.metadata_dir}/{HINT_FILE}", str(version).encode())
        except OSError:
            # The commit is already durable; a stale hint is repaired by readers.
            pass
