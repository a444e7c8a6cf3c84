# pyright: strict
"""Where a view's metadata lives: ``<location>/metadata/<NNNNN>-<uuid>.metadata.json`` files
(the version number first, as Iceberg's ``BaseViewOperations`` names them), made current by a
catalog: the SQL catalog's row (``iceberg_type = 'VIEW'``) or a REST server.

The view operations every catalog offers (``SqlCatalog``, ``RestCatalog``; the Hadoop catalog
refuses them, see ``VIEWS_NEED_A_CATALOG``): ``list_views``, ``view_exists``, ``load_view``,
``create_view``, ``commit_view`` (updates with the requirement that the view is the one loaded),
``drop_view``, ``rename_view``.
"""
from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass

from icefloe.core.io import FileAlreadyExistsError, FileIO
from icefloe.errors import VersionConflict
from icefloe.iceberg.locations import read_regular_file
from icefloe.iceberg.metadata_files import encode_metadata, metadata_suffix
from icefloe.iceberg.view_metadata import ViewMetadata

VIEWS_NEED_A_CATALOG = (
    "a directory (Hadoop) catalog has no views: Iceberg's HadoopCatalog keeps none either, since a view "
    "is a name in a catalog, not a directory of data; open the warehouse as a SQL catalog (type='sql', "
    "the JDBC catalog's database) or a REST catalog (icefloe serve) to create views")


@dataclass(frozen=True)
class LoadedView:
    """A view as its catalog has it: its name, current metadata file and metadata."""
    name: str
    metadata_location: str
    metadata: ViewMetadata


def write_view_metadata(io: FileIO, meta: ViewMetadata, version: int) -> str:
    """Write ``meta`` as the file of version ``version`` (never over another file); its path.
    Compressed (``.gz.metadata.json``) when the view's ``write.metadata.compression-codec`` is
    ``gzip``; plain when it is ``none`` or not set; another value is refused before writing."""
    suffix = metadata_suffix(meta.properties, f"view at {meta.location}")
    path = f"{meta.location}/metadata/{version:05d}-{uuid.uuid4()}{suffix}"
    try:
        io.write_bytes(path, encode_metadata(meta.dumps(), path), overwrite=False)
    except FileAlreadyExistsError as e:      # pragma: no cover - a fresh uuid
        raise VersionConflict(f"metadata file {path} exists") from e
    return path


_VERSION_RE = re.compile(r"^(\d+)-[0-9a-fA-F-]{36}(?:\.gz)?\.metadata\.json$")


def view_version_of(path: str) -> int:
    """The version number a view metadata file's name starts with (``00003-<uuid>[.gz].metadata.json``)."""
    m = _VERSION_RE.match(os.path.basename(path))
    return int(m.group(1)) if m else 0


def read_view_metadata(io: FileIO, path: str) -> ViewMetadata:
    """The view metadata in ``path``, gzip-compressed or not (Iceberg's Java catalogs compress view
    metadata by default: ``.gz.metadata.json``), never inflated past the metadata size limit
    (``metadata_files.inflate_metadata``, which ``ViewMetadata.loads`` applies)."""
    return ViewMetadata.loads(read_regular_file(io, path), path)
