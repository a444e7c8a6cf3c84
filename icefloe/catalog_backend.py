"""The catalog a user-facing ``Catalog`` stands in front of, opened from its options.

One backend per kind: Iceberg tables in warehouse directories (``HadoopCatalog``), registered in
a database (``SqlCatalog``, Iceberg's JDBC catalog tables) or served by an Iceberg REST catalog
(``RestCatalog``); Paimon tables in a filesystem warehouse (``PaimonCatalog``). This module
holds the rules of which options go together and builds the backend; ``icefloe.catalog`` is
the facade over it.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Mapping, Optional, Union

from icefloe.core.hdfs_io import HdfsIO
from icefloe.core.io import FileIO, normalize_location
from icefloe.core.object_store import ObjectStoreIO, file_io_for
from icefloe.errors import IcefloeError
from icefloe.iceberg.catalog import HadoopCatalog
from icefloe.iceberg.rest_client import RestCatalog
from icefloe.iceberg.sql_catalog import SqlCatalog
from icefloe.paimon.catalog import DEFAULT_DATABASE, PaimonCatalog
from icefloe.table import IcebergTable, PaimonTable

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FORMATS = ("iceberg", "paimon")
KINDS = ("hadoop", "sql", "rest")

# a SqlCatalog is a HadoopCatalog whose tables are rows of a database
CatalogBackend = Union[RestCatalog, HadoopCatalog, PaimonCatalog]
IcebergBackend = Union[RestCatalog, HadoopCatalog]


@dataclass
class Backend:
    """An opened catalog: its format, its kind, where it is and the catalog implementation."""
    format: str
    type: str
    warehouse: Optional[str]
    properties: dict[str, str]          # the catalog properties left once the REST sign-in ones are taken
    impl: CatalogBackend


def open_backend(warehouse: Optional[str], format: str, spark: Optional[SparkSession], io: Optional[FileIO],
                 type: Optional[str], uri: Optional[str], name: str, properties: Mapping[str, object]) -> Backend:
    """The catalog these ``Catalog(...)`` arguments name (see ``Catalog.__init__`` for each).

    Raises:
        IcefloeError: an unknown format or catalog type, or a combination that does not exist.
        ObjectStoreError: the object store cannot be reached with these settings.
    """
    fmt = (format or "iceberg").lower()
    if fmt not in FORMATS:
        raise IcefloeError(f"unknown table format {format!r}; expected one of {FORMATS}")
    kind = (type or ("rest" if uri and uri.startswith(("http://", "https://")) else "sql" if uri
                     else "hadoop")).lower()
    if kind not in KINDS:
        raise IcefloeError(f"unknown catalog type {type!r}; expected 'hadoop', 'sql' or 'rest'")
    if kind in ("sql", "rest") and fmt != "iceberg":
        raise IcefloeError(f"the {kind.upper()} catalog holds Iceberg tables; Paimon tables use the warehouse "
                           "directories")
    rest_uri: Optional[str] = None
    if kind == "rest":
        if not uri:
            raise IcefloeError("a REST catalog needs uri='http://host:port'")
        rest_uri = uri
    if warehouse is None and kind != "rest":
        raise IcefloeError("a warehouse directory is needed (icefloe.Catalog('warehouse'))")
    wh = normalize_location(warehouse) if warehouse is not None else None
    props = {str(k): str(v) for k, v in properties.items() if v is not None}
    rest_auth = {k: props.pop(k) for k in ("credential", "token") if k in props}
    if rest_auth and kind != "rest":
        raise IcefloeError(f"{' and '.join(rest_auth)} authenticate to a REST catalog; this is a {kind} catalog")
    if "scan-planning-mode" in props:
        if kind != "rest":
            raise IcefloeError(f"scan-planning-mode chooses where a REST catalog plans reads; this is a {kind} "
                               "catalog")
        rest_auth["scan_planning_mode"] = props.pop("scan-planning-mode")
    if io is None and wh is not None:
        io = file_io_for(wh, props)
        if isinstance(io, (ObjectStoreIO, HdfsIO)):     # a remote warehouse: reached now, with these settings
            io.check_location(wh)
    if rest_uri is not None:
        if io is None and props:   # the server's tables are on an object store: reach it with these
            io = ObjectStoreIO(props)
        rest = RestCatalog(rest_uri, io, table_type=partial(IcebergTable, spark=spark), warehouse=wh or "",
                           **rest_auth)
        return Backend(fmt, kind, wh, props, rest)
    assert wh is not None       # refused above: only a REST catalog goes without a warehouse
    impl: CatalogBackend
    if kind == "sql":
        impl = SqlCatalog(wh, uri, name, io, table_type=partial(IcebergTable, spark=spark))
    elif fmt == "iceberg":
        impl = HadoopCatalog(wh, io, table_type=partial(IcebergTable, spark=spark))
    else:
        impl = PaimonCatalog(wh, io, table_type=partial(PaimonTable, spark=spark))
    impl.io.makedirs(wh)
    if isinstance(impl, PaimonCatalog):   # a Paimon catalog has database `default` (<warehouse>/default.db)
        impl.io.makedirs(impl.database_path(DEFAULT_DATABASE))
    return Backend(fmt, kind, wh, props, impl)
