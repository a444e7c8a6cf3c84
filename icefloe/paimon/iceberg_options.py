# pyright: strict
"""Paimon's Iceberg compatibility options (``metadata.iceberg.*``): where a Paimon table's Iceberg
metadata goes and how it is written.

Paimon (its ``IcebergOptions``) writes, after each snapshot, Iceberg metadata over the same data
files so that Iceberg readers can read the table. ``metadata.iceberg.storage`` says where:

* ``disabled`` (the default): no Iceberg metadata;
* ``table-location``: ``<table>/metadata/`` (``vN.metadata.json``, ``version-hint.text``), the
  table directory is then an Iceberg table as well, opened by its path;
* ``hadoop-catalog``: ``<warehouse>/iceberg/<db>/<table>/metadata/``, so that
  ``<warehouse>/iceberg`` is the warehouse of an Iceberg Hadoop catalog;
* ``rest-catalog``: the files as for ``hadoop-catalog``, and after each commit the table is
  registered in (created, then updated in) the Iceberg REST catalog that the
  ``metadata.iceberg.rest.<key>`` options name (``uri``; ``credential`` or ``token``; ``clients``),
  as ``metadata.iceberg.database``.``metadata.iceberg.table`` (default: the Paimon table's names);
* ``hive-catalog`` also registers the table in a Hive metastore: icefloe refuses it (it has no
  Hive client; it would write the files but not register them).

Paimon 0.9 spelled the ``table-location`` case ``metadata.iceberg-compatible = true``.
``metadata.iceberg.storage-location`` (``table-location`` / ``catalog-location``) overrides where
the files go. The rest: ``metadata.iceberg.format-version`` (2, the default, or 3),
``metadata.iceberg.compaction.min.file-num`` / ``max.file-num`` (when the Iceberg manifests are
merged), ``metadata.iceberg.delete-after-commit.enabled`` and ``previous-versions-max`` (how many
old ``vN.metadata.json`` stay), ``metadata.iceberg.table-properties.<key>`` (Iceberg table
properties). Every other ``metadata.iceberg.*`` key is refused: icefloe would not honour it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Mapping, Optional, Sequence

from icefloe.errors import SchemaError

if TYPE_CHECKING:
    from icefloe.core.types.model import IcebergType, NestedField

STORAGE = "metadata.iceberg.storage"
LEGACY_COMPATIBLE = "metadata.iceberg-compatible"
STORAGE_LOCATION = "metadata.iceberg.storage-location"
FORMAT_VERSION = "metadata.iceberg.format-version"
COMPACT_MIN_FILE_NUM = "metadata.iceberg.compaction.min.file-num"
COMPACT_MAX_FILE_NUM = "metadata.iceberg.compaction.max.file-num"
DELETE_AFTER_COMMIT = "metadata.iceberg.delete-after-commit.enabled"
PREVIOUS_VERSIONS_MAX = "metadata.iceberg.previous-versions-max"
MANIFEST_COMPRESSION = "metadata.iceberg.manifest-compression"
TABLE_PROPERTIES_PREFIX = "metadata.iceberg.table-properties."

REST_PREFIX = "metadata.iceberg.rest."
CATALOG_DATABASE = "metadata.iceberg.database"
CATALOG_TABLE = "metadata.iceberg.table"

DISABLED, TABLE_LOCATION, HADOOP_CATALOG = "disabled", "table-location", "hadoop-catalog"
REST_CATALOG, HIVE_CATALOG = "rest-catalog", "hive-catalog"
STORAGES = (DISABLED, TABLE_LOCATION, HADOOP_CATALOG, REST_CATALOG)
CATALOG_LOCATION = "catalog-location"
# the REST catalog client's settings icefloe honours (Iceberg's RESTCatalog properties): the server,
# OAuth2 client credentials ("id:secret") or a bearer token, the connection pool size (icefloe
# sends one request at a time, which any pool size allows)
REST_KEYS = ("uri", "credential", "token", "clients")

_KNOWN = {STORAGE, STORAGE_LOCATION, FORMAT_VERSION, COMPACT_MIN_FILE_NUM, COMPACT_MAX_FILE_NUM,
          DELETE_AFTER_COMMIT, PREVIOUS_VERSIONS_MAX, MANIFEST_COMPRESSION, CATALOG_DATABASE, CATALOG_TABLE}


@dataclass(frozen=True)
class RestTarget:
    """Where ``rest-catalog`` registers the Iceberg view: the server and the table's name there."""

    uri: str
    namespace: str
    table: str
    credential: Optional[str] = None
    token: Optional[str] = None

    @property
    def name(self) -> str:
        return f"{self.namespace}.{self.table}"


@dataclass(frozen=True)
class IcebergCompat:
    """The Iceberg view of one Paimon table, as its options ask for it."""

    storage: str
    root: str                      # the Iceberg table directory: its metadata is <root>/metadata
    format_version: int = 2
    compact_min_files: int = 10
    compact_max_files: int = 50
    delete_after_commit: bool = True
    previous_versions_max: int = 0
    table_properties: dict[str, str] = field(default_factory=dict[str, str])
    rest: Optional[RestTarget] = None

    @property
    def metadata_dir(self) -> str:
        return f"{self.root}/metadata"


def _int(options: Mapping[str, str], key: str, default: int, low: int) -> int:
    v = options.get(key)
    if v is None:
        return default
    try:
        n = int(str(v).strip())
    except ValueError:
        raise SchemaError(f"option {key!r} must be an integer, got {v!r}") from None
    if n < low:
        raise SchemaError(f"option {key!r} must be at least {low}, got {n}")
    return n


def _bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    v = options.get(key)
    if v is None:
        return default
    s = str(v).strip().lower()
    if s not in ("true", "false"):
        raise SchemaError(f"option {key!r} must be true or false, got {v!r}")
    return s == "true"


def storage_of(options: Mapping[str, str]) -> str:
    """``disabled``, ``table-location``, ``hadoop-catalog`` or ``rest-catalog``; refuses what icefloe
    cannot honour."""
    raw = options.get(STORAGE)
    legacy = options.get(LEGACY_COMPATIBLE)
    if legacy is not None:
        legacy_on = _bool(options, LEGACY_COMPATIBLE, False)
        if raw is None:
            return TABLE_LOCATION if legacy_on else DISABLED
        if legacy_on and str(raw).strip().lower() == DISABLED:
            raise SchemaError(f"{LEGACY_COMPATIBLE} = true contradicts {STORAGE} = 'disabled'")
    if raw is None:
        return DISABLED
    s = str(raw).strip().lower()
    if s == HIVE_CATALOG:
        raise SchemaError(f"{STORAGE} = {s!r} registers the table in a Hive metastore, which icefloe does not do "
                          f"(no Hive client); use {REST_CATALOG!r} (an Iceberg REST catalog), {TABLE_LOCATION!r} or "
                          f"{HADOOP_CATALOG!r} (the Iceberg metadata beside the table, or under <warehouse>/iceberg)")
    if s not in STORAGES:
        raise SchemaError(f"unknown {STORAGE} {raw!r}: one of {', '.join(STORAGES)} ({HIVE_CATALOG} is not "
                          "supported by icefloe)")
    return s


def check_options(options: Mapping[str, str]) -> None:
    """Refuse ``metadata.iceberg.*`` options icefloe would not honour, and bad values."""
    for key in options:
        if key.startswith("metadata.iceberg.") and key not in _KNOWN:
            if key.startswith(TABLE_PROPERTIES_PREFIX) and len(key) > len(TABLE_PROPERTIES_PREFIX):
                continue
            if key.startswith(REST_PREFIX) and key[len(REST_PREFIX):] in REST_KEYS:
                continue
            if key.startswith(REST_PREFIX):
                raise SchemaError(f"option {key!r} is not honoured by icefloe's REST catalog client; the "
                                  f"{REST_PREFIX}<key> options it honours are {', '.join(REST_KEYS)}")
            raise SchemaError(f"option {key!r} is not honoured by icefloe's Iceberg metadata; the "
                              f"metadata.iceberg options it honours are {', '.join(sorted(_KNOWN))}, "
                              f"{REST_PREFIX}<{'|'.join(REST_KEYS)}> and {TABLE_PROPERTIES_PREFIX}<key>")
    storage = storage_of(options)
    catalog_keys = sorted(k for k in options if k.startswith(REST_PREFIX) or k in (CATALOG_DATABASE, CATALOG_TABLE))
    if storage != REST_CATALOG and catalog_keys:
        raise SchemaError(f"{', '.join(catalog_keys)}: only {STORAGE} = {REST_CATALOG!r} registers the table in a "
                          f"catalog, and {STORAGE} is {storage!r}")
    if storage == REST_CATALOG:
        if not str(options.get(REST_PREFIX + "uri") or "").strip():
            raise SchemaError(f"{STORAGE} = {REST_CATALOG!r} needs {REST_PREFIX}uri, the Iceberg REST catalog's address")
        if options.get(REST_PREFIX + "credential") and options.get(REST_PREFIX + "token"):
            raise SchemaError(f"give {REST_PREFIX}credential or {REST_PREFIX}token, not both")
        _int(options, REST_PREFIX + "clients", 1, 1)
        for key in (CATALOG_DATABASE, CATALOG_TABLE):
            v = options.get(key)
            if v is not None and (not str(v).strip() or any(c in str(v) for c in ";./")):
                raise SchemaError(f"{key} {v!r} must be one name (no '.', '/' or ';': icefloe registers the table "
                                  "in one namespace of one level)")
    loc = options.get(STORAGE_LOCATION)
    if loc is not None and str(loc).strip().lower() not in (TABLE_LOCATION, CATALOG_LOCATION):
        raise SchemaError(f"unknown {STORAGE_LOCATION} {loc!r}: {TABLE_LOCATION} or {CATALOG_LOCATION}")
    version = _int(options, FORMAT_VERSION, 2, 2)
    if version not in (2, 3):
        raise SchemaError(f"{FORMAT_VERSION} must be 2 or 3, got {version}")
    comp = options.get(MANIFEST_COMPRESSION)
    if comp is not None and str(comp).strip().lower() != "deflate":
        raise SchemaError(f"{MANIFEST_COMPRESSION} {comp!r} is not supported: icefloe writes Iceberg manifests "
                          "with deflate, which every Iceberg reader takes")
    _int(options, COMPACT_MIN_FILE_NUM, 10, 2)
    _int(options, COMPACT_MAX_FILE_NUM, 50, 2)
    _bool(options, DELETE_AFTER_COMMIT, True)
    _int(options, PREVIOUS_VERSIONS_MAX, 0, 0)


def iceberg_root(table_path: str, storage: str, storage_location: Optional[str] = None) -> str:
    """The directory whose ``metadata/`` holds the Iceberg metadata of the table at ``table_path``."""
    where = (storage_location or "").strip().lower() or (TABLE_LOCATION if storage == TABLE_LOCATION
                                                         else CATALOG_LOCATION)
    path = table_path.rstrip("/")
    if where == TABLE_LOCATION:
        return path
    db_dir, name = path.rsplit("/", 1)
    warehouse, db = db_dir.rsplit("/", 1) if "/" in db_dir else ("", db_dir)
    if not db.endswith(".db"):
        raise SchemaError(f"{STORAGE} = {storage!r} keeps the Iceberg metadata under <warehouse>/iceberg/<db>/, "
                          f"which needs the table in a <db>.db directory; {path} is not (set {STORAGE_LOCATION} "
                          f"= {TABLE_LOCATION!r})")
    return f"{warehouse}/iceberg/{db[:-3]}/{name}"


def compat_of(table_path: str, options: Mapping[str, str]) -> Optional[IcebergCompat]:
    """The Iceberg view the options ask for, or None when it is disabled."""
    check_options(options)
    storage = storage_of(options)
    if storage == DISABLED:
        return None
    props = {k[len(TABLE_PROPERTIES_PREFIX):]: str(v) for k, v in options.items()
             if k.startswith(TABLE_PROPERTIES_PREFIX)}
    return IcebergCompat(
        rest=rest_target(table_path, options) if storage == REST_CATALOG else None,
        storage=storage, root=iceberg_root(table_path, storage, options.get(STORAGE_LOCATION)),
        format_version=_int(options, FORMAT_VERSION, 2, 2),
        compact_min_files=_int(options, COMPACT_MIN_FILE_NUM, 10, 2),
        compact_max_files=_int(options, COMPACT_MAX_FILE_NUM, 50, 2),
        delete_after_commit=_bool(options, DELETE_AFTER_COMMIT, True),
        previous_versions_max=_int(options, PREVIOUS_VERSIONS_MAX, 0, 0),
        table_properties=props,
    )


def rest_target(table_path: str, options: Mapping[str, str]) -> RestTarget:
    """The REST catalog and name ``rest-catalog`` registers the table at ``table_path`` under:
    ``metadata.iceberg.database`` / ``metadata.iceberg.table``, else the Paimon database (its
    ``<db>.db`` directory) and table name, as Paimon's REST committer names it."""
    path = table_path.rstrip("/")
    db_dir, name = path.rsplit("/", 1) if "/" in path else ("", path)
    db = db_dir.rsplit("/", 1)[-1]
    namespace = str(options.get(CATALOG_DATABASE) or "").strip()
    if not namespace:
        if not db.endswith(".db"):
            raise SchemaError(f"{path} is not in a <db>.db directory: set {CATALOG_DATABASE} to name the namespace "
                              "the REST catalog registers it in")
        namespace = db[:-3]
    def get(k: str) -> Optional[str]:
        return str(options.get(REST_PREFIX + k) or "").strip() or None

    return RestTarget(uri=get("uri") or "", namespace=namespace,
                      table=str(options.get(CATALOG_TABLE) or "").strip() or name,
                      credential=get("credential"), token=get("token"))


def check_types(fields: Iterable[NestedField], format_version: int) -> None:
    """Refuse columns Iceberg readers could not read as Paimon maps them (Paimon's table of
    supported types): TINYINT, SMALLINT, TIME, MULTISET and VARIANT have no Iceberg type here, and
    timestamps of 7 to 9 digits are Iceberg's nanosecond timestamps, format version 3 only."""
    from icefloe.core.types.model import (ByteType, ListType, MapType, MultisetType, ShortType, StructType,
                                          TimeType, TimestampType, TimestamptzType, VariantType)

    def walk(t: IcebergType, path: str) -> None:
        if isinstance(t, (ByteType, ShortType, TimeType, MultisetType, VariantType)):
            raise SchemaError(f"column {path!r} of type {t} has no Iceberg type in Paimon's Iceberg metadata "
                              f"({STORAGE}); use INT, BIGINT or STRING, or disable the option")
        if isinstance(t, (TimestampType, TimestamptzType)) and t.precision < 3:
            raise SchemaError(f"column {path!r} of type {t}: Paimon's Iceberg metadata takes timestamps of 3 to 9 "
                              "fractional digits")
        if isinstance(t, (TimestampType, TimestamptzType)) and t.precision > 6 and format_version < 3:
            raise SchemaError(f"column {path!r} of type {t} is a nanosecond timestamp in Iceberg, which needs "
                              f"{FORMAT_VERSION} = 3")
        if isinstance(t, StructType):
            for f in t.fields:
                walk(f.field_type, f"{path}.{f.name}")
        elif isinstance(t, ListType):
            walk(t.element_type, f"{path}.element")
        elif isinstance(t, MapType):
            walk(t.key_type, f"{path}.key")
            walk(t.value_type, f"{path}.value")

    for f in fields:
        walk(f.field_type, f.name)


def check_schema(options: Mapping[str, str], fields: Iterable[NestedField], primary_keys: Sequence[str]) -> None:
    """What a table with these options and columns must satisfy for its Iceberg view (create and
    ALTER TABLE run this)."""
    check_options(options)
    if storage_of(options) == DISABLED:
        return
    check_types(fields, _int(options, FORMAT_VERSION, 2, 2))
    vectors = str(options.get("deletion-vectors.enabled", "false")).strip().lower() == "true"
    if vectors and _int(options, FORMAT_VERSION, 2, 2) < 3:     # append tables' vectors too
        raise SchemaError(f"{STORAGE} on a table with deletion vectors needs {FORMAT_VERSION} = 3: "
                          "the vectors become Iceberg deletion vectors, which Iceberg has from format version 3 "
                          "(with 2, Iceberg readers would see the deleted rows)")


__all__ = ["check_schema", "IcebergCompat", "RestTarget", "rest_target", "REST_CATALOG", "compat_of", "check_options", "storage_of", "iceberg_root", "STORAGE", "check_types",
           "LEGACY_COMPATIBLE", "FORMAT_VERSION"]
