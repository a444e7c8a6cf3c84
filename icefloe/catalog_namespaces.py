"""Namespaces (databases) over the catalog backends, which keep them in two ways.

A SQL or REST catalog records its namespaces (and a SQL catalog their properties); a warehouse
catalog's namespace is a directory (``<warehouse>/<db>`` for Iceberg, ``<warehouse>/<db>.db`` for
Paimon), which exists on an object store only while files are under it.
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

from icefloe.catalog_backend import CatalogBackend
from icefloe.core.io import FileIO, prune_empty_dirs
from icefloe.errors import NamespaceAlreadyExistsError, NamespaceNotEmptyError, NoSuchNamespaceError, NotSupportedError
from icefloe.iceberg.rest_client import RestCatalog
from icefloe.iceberg.sql_catalog import SqlCatalog


def namespace_exists(impl: CatalogBackend, io: FileIO, namespace: str) -> bool:
    """Whether the namespace exists: recorded by the catalog, or its directory."""
    if isinstance(impl, (SqlCatalog, RestCatalog)):     # a catalog that records namespaces
        return impl.namespace_exists(namespace)
    return io.is_dir(impl.namespace_path(namespace))


def no_namespace_properties(namespace: str, kind: str) -> NotSupportedError:
    """The refusal of properties for a namespace of a catalog that keeps none."""
    return NotSupportedError(f"properties of namespace {namespace}", reason=(
        f"namespace properties are kept by the SQL catalog only (a {kind} catalog's namespace is a directory)"))


def create_namespace(impl: CatalogBackend, io: FileIO, namespace: str, exist_ok: bool,
                     properties: Optional[Mapping[str, object]], kind: str, where: Optional[str]) -> None:
    """Record the namespace (with its properties: the SQL catalog's) or make its directory."""
    if properties:
        if not isinstance(impl, SqlCatalog):
            raise no_namespace_properties(namespace, kind)
        impl.create_namespace(namespace, exist_ok, properties=properties)
        return
    if isinstance(impl, (SqlCatalog, RestCatalog)):
        impl.create_namespace(namespace, exist_ok)
        return
    path = impl.namespace_path(namespace)
    if io.is_dir(path):
        if exist_ok:
            return
        raise NamespaceAlreadyExistsError(f"namespace {namespace} already exists in {where}")
    io.makedirs(path)


def missing_namespace(impl: CatalogBackend, namespace: str, warehouse: Optional[str]) -> NoSuchNamespaceError:
    """The error for a namespace that is not there, naming where it was looked for."""
    place = warehouse or (impl.uri if isinstance(impl, (SqlCatalog, RestCatalog)) else "the catalog")
    return NoSuchNamespaceError(f"namespace {namespace} does not exist in {place}")


def remove_namespace(impl: CatalogBackend, io: FileIO, namespace: str) -> None:
    """Remove a namespace whose tables and views are dropped."""
    if isinstance(impl, (SqlCatalog, RestCatalog)):     # a catalog that records namespaces
        impl.remove_namespace(namespace)
        return
    # A warehouse namespace is its directory: it goes only when nothing but empty directories
    # is left in it (Java's HadoopCatalog rule), so plain files beside the tables stay.
    path = impl.namespace_path(namespace)
    if not prune_empty_dirs(io, path):
        raise NamespaceNotEmptyError(f"namespace {namespace} holds files that belong to no table of the "
                                     f"catalog ({path}); nothing of them was deleted")


def refuse_non_empty(namespace: str, tables: Sequence[str], views: Sequence[str]) -> None:
    """Refuse to drop a namespace that still holds tables or views (without CASCADE)."""
    if tables or views:
        held = [f"{len(names)} {kind}(s) ({', '.join(names[:5])}{', ...' if len(names) > 5 else ''})"
                for kind, names in (("table", tables), ("view", views)) if names]
        raise NamespaceNotEmptyError(f"namespace {namespace} holds {' and '.join(held)}; "
                                     "drop them first or use CASCADE")
