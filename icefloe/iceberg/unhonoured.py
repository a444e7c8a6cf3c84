"""Iceberg table properties that ask for what icefloe does not do: refused, never silently ignored.

Apache Iceberg's Java runtime reads these when it writes to a table; icefloe cannot do what they ask, so a
table that sets them is not written by icefloe. ``refusal`` names the first one a table's properties set;
creating a table with one, setting one (``ALTER TABLE ... SET TBLPROPERTIES``, ``update_properties``, a
transaction) and every snapshot commit to a table that has one (set by another engine) are refused with an
``IcefloeError`` naming it, before anything is written:

- ``write.format.default`` / ``write.delete.format.default`` other than ``parquet``: icefloe writes data and
  delete files as Parquet only;
- ``write.location-provider.impl``: a Java class choosing data file locations;
- ``write.object-storage.enabled=true``: the Java runtime's hashed object-storage layout of data files;
- ``encryption.key-id``: table encryption (icefloe writes no encrypted file);
- ``write.data.path``, ``write.metadata.path`` (and the older ``write.folder-storage.path``,
  ``write.object-storage.path``) other than the table's own ``data`` and ``metadata`` directories: icefloe
  keeps every file of a table inside its location (the rule its catalogs and ``icefloe serve`` enforce).
"""
from __future__ import annotations

from typing import Mapping, Optional

from icefloe.errors import IcefloeError

FORMAT_DEFAULT = "write.format.default"
DELETE_FORMAT_DEFAULT = "write.delete.format.default"
LOCATION_PROVIDER = "write.location-provider.impl"
OBJECT_STORAGE = "write.object-storage.enabled"
ENCRYPTION_KEY = "encryption.key-id"
# where the Java runtime writes a table's files, each with the directory of the table it must name
PATHS = {"write.data.path": "data", "write.folder-storage.path": "data", "write.object-storage.path": "data",
         "write.metadata.path": "metadata"}
KEYS = (FORMAT_DEFAULT, DELETE_FORMAT_DEFAULT, LOCATION_PROVIDER, OBJECT_STORAGE, ENCRYPTION_KEY, *PATHS)


def refusal(properties: Mapping[str, str], location: Optional[str] = None) -> Optional[str]:
    """Why icefloe does not write a table of these properties, naming the first property it cannot
    honour; None: none. The path properties are judged against the table's ``location`` (None: not
    judged, the location is not known yet)."""
    for key in (FORMAT_DEFAULT, DELETE_FORMAT_DEFAULT):
        value = properties.get(key)
        if value is not None and str(value).strip().lower() != "parquet":
            kind = "data" if key == FORMAT_DEFAULT else "delete"
            return f"table property {key}={value!r}: icefloe writes {kind} files as Parquet only"
    if LOCATION_PROVIDER in properties:
        return (f"table property {LOCATION_PROVIDER}={properties[LOCATION_PROVIDER]!r}: a Java location provider "
                f"class, which icefloe cannot run (remove the property for the default layout)")
    if str(properties.get(OBJECT_STORAGE, "false")).strip().lower() != "false":
        return (f"table property {OBJECT_STORAGE}={properties[OBJECT_STORAGE]!r}: icefloe writes data files in "
                f"the default layout only, not the Java runtime's hashed object-storage layout")
    if ENCRYPTION_KEY in properties:
        return f"table property {ENCRYPTION_KEY} asks for table encryption, which icefloe does not do"
    if location is not None:
        for key, directory in PATHS.items():
            value = properties.get(key)
            own = f"{location.rstrip('/')}/{directory}"
            if value is not None and not _same(str(value), own):
                return (f"table property {key}={value!r}: icefloe writes a table's files inside its location "
                        f"only ({own})")
    return None


def _same(a: str, b: str) -> bool:
    """Whether locations ``a`` and ``b`` name one directory (compared as the catalogs compare them)."""
    from icefloe.iceberg.locations import normalize

    try:
        return normalize(a) == normalize(b)
    except IcefloeError:
        return False


def check(properties: Mapping[str, str], table: str, location: Optional[str] = None) -> None:
    """``IcefloeError`` naming the property where ``refusal`` finds one (``table``: its name)."""
    why = refusal(properties, location)
    if why is not None:
        raise IcefloeError(f"{table}: {why}")


__all__ = ["KEYS", "refusal", "check"]
