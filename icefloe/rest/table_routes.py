"""The table routes of ``icefloe serve`` (``/v1/namespaces/{namespace}/tables...``, ``register``,
``/v1/tables/rename``, ``/v1/transactions/commit`` and server-side scan planning).

A table is created in the warehouse, at the location its catalog gives the name (a request's
``location`` is refused), with field ids assigned afresh as Java's catalogs assign them; a staged
create (``stage-create``) writes nothing until its create transaction (``assert-create``) is
committed. A commit checks the request's requirements against the table's current metadata,
applies its updates (``icefloe.iceberg.metadata_builder``, which checks each), checks that every
file the result names is inside the table (``icefloe.iceberg.locations``) and commits it through
the catalog's table operations (the Hadoop layout's create-if-absent or the SQL catalog's
compare-and-swap), retrying on a lost race; a failed requirement is HTTP 409. A registered table's
metadata file must be inside the warehouse or one of the server's allowed locations."""
from __future__ import annotations

import os
from dataclasses import replace as dc_replace
from typing import TYPE_CHECKING, Any, Optional, TypeVar

from starlette.responses import JSONResponse, Response

from icefloe.errors import (
    CorruptMetadataError, IcefloeError, LocationError, NoSuchNamespaceError, NoSuchTableError, RequestError,
    SchemaError, TableAlreadyExistsError, VersionConflict,
)
from icefloe.iceberg.locations import check_commit_locations, is_inside, normalize
from icefloe.iceberg.metadata_builder import (
    AddPartitionSpec, AddSchema, AddSortOrder, AssignUUID, BadUpdate, SetCurrentSchema, SetDefaultSortOrder,
    SetDefaultSpec, SetLocation, SetProperties, UpgradeFormatVersion, apply_changes, json_kind, update_from_json,
)
from icefloe.iceberg.operations import Changes, apply_commit
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.schema import schema_from_json
from icefloe.iceberg.schema_update import renumber_new_table
from icefloe.iceberg.table_metadata import new_table_metadata
from icefloe.iceberg.table_requirements import AssertCreate, RequirementFailed, requirement_from_json
from icefloe.rest.auth import request_may
from icefloe.rest.error_model import post_route, route
from icefloe.rest.request_body import (
    Json, ServerSettings, bad, check_properties, field, identifier_name, namespace_of, table_name, unregistrable,
)
from icefloe.iceberg.table import BaseTable

if TYPE_CHECKING:
    from starlette.requests import Request

    from icefloe.catalog import Catalog
    from icefloe.core.types import Schema
    from icefloe.iceberg.operations import TableOperations
    from icefloe.iceberg.table_metadata import TableMetadata
    from icefloe.iceberg.transaction import TableCommit
    from icefloe.rest.planning import ScanPlans

_T = TypeVar("_T")     # the kind of a commit's update a create transaction takes (take)
COMMIT_ATTEMPTS = 10


def renumbered_sources(doc: Json, ids: dict[int, int]) -> Json:
    """A partition spec's or sort order's JSON with its fields' source ids renumbered by ``ids``."""
    if not isinstance(doc.get("fields"), list):
        return doc

    def source(i: Any) -> int:
        if i not in ids:
            raise bad(f"a partition or sort field's source id {i!r} is no field of the table's schema")
        return ids[i]

    def renumbered(f: Any) -> Any:
        if not isinstance(f, dict):
            return f
        f = dict(f)
        if "source-id" in f:
            f["source-id"] = source(f["source-id"])
        if isinstance(f.get("source-ids"), list):
            f["source-ids"] = [source(i) for i in f["source-ids"]]
        return f
    return {**doc, "fields": [renumbered(f) for f in doc["fields"]]}


def registration(request: Request, body: Json, roots: list[str]) -> tuple[str, str]:
    """A register request's (name, metadata file): the file's path absolute and inside one of
    ``roots`` (the warehouse and the server's allowed locations)."""
    ns = namespace_of(request.path_params["namespace"])
    name = f"{ns}.{field(body, 'name', str)}"
    location = field(body, "metadata-location", str)
    try:
        path = normalize(location, "metadata-location")
    except LocationError:
        raise unregistrable("view " if "register-view" in request.url.path else "") from None
    if not any(is_inside(path, normalize(r)) for r in roots):
        raise unregistrable("view " if "register-view" in request.url.path else "")
    return name, path


def load_iceberg(catalog: Catalog, name: str) -> BaseTable:
    """Table ``name`` of the served catalog (an Iceberg one: ``RestCatalogApp`` serves no other)."""
    t = catalog.load_table(name)
    if not isinstance(t, BaseTable):
        raise IcefloeError(f"table {name} is not an Iceberg table: the REST catalog serves Iceberg tables")
    return t


def table_result(t: BaseTable) -> JSONResponse:
    """The spec's ``LoadTableResult`` of ``t``."""
    return JSONResponse({"metadata-location": t.metadata_location, "metadata": t.metadata.to_json(), "config": {}})


class TableRoutes:
    """The table routes over one catalog (module doc)."""

    def __init__(self, catalog: Catalog, warehouse: str, settings: ServerSettings, plans: ScanPlans) -> None:
        self.catalog, self.warehouse, self.settings, self.plans = catalog, warehouse, settings, plans

    def _properties(self, props: object, what: str) -> dict[str, str]:
        return check_properties(props, what, self.settings.max_property_bytes)

    @route
    def list_tables(self, request: Request) -> Response:
        ns = namespace_of(request.path_params["namespace"])
        return JSONResponse({"identifiers": [{"namespace": [ns], "name": n.split(".", 1)[1]}
                                             for n in self.catalog.list_tables(ns)]})

    @post_route
    def create_table(self, request: Request, body: Json) -> Response:
        ns = namespace_of(request.path_params["namespace"])
        name = f"{ns}.{field(body, 'name', str)}"
        if self.catalog.keeps_empty_namespaces and not self.catalog.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {ns} does not exist")
        if body.get("location"):
            raise bad("tables are created in the warehouse; a location cannot be given")
        props = self._properties(body.get("properties"), "properties")
        schema_doc = field(body, "schema", dict)
        spec_doc = field(body, "partition-spec", dict, required=False) or {"spec-id": 0, "fields": []}
        order = field(body, "write-order", dict, required=False)
        staged = field(body, "stage-create", bool, required=False)
        ops: TableOperations = self.catalog.table_operations(name)
        if ops.exists():
            raise TableAlreadyExistsError(f"table {name} already exists")
        try:
            # ids afresh, as every Java catalog assigns them to a new table (a client's ids are its own)
            schema, ids = renumber_new_table(schema_from_json(schema_doc))
            spec_doc = renumbered_sources(spec_doc, ids)
            order = renumbered_sources(order, ids) if order is not None else None
        except (KeyError, TypeError, ValueError, AttributeError, SchemaError) as e:
            raise bad(f"the table's schema is malformed ({type(e).__name__}: {e})") from None
        meta = self._new_metadata(name, ops, schema, spec_doc, order, props)
        if staged:
            # a create transaction: nothing is written until the client commits it (assert-create)
            return JSONResponse({"metadata": meta.to_json(), "config": {}})
        try:
            ops.commit(None, None, meta)
        except VersionConflict:
            raise TableAlreadyExistsError(f"table {name} was created concurrently") from None
        return table_result(load_iceberg(self.catalog, name))

    def _new_metadata(self, name: str, ops: TableOperations, schema: Schema, spec_doc: Json,
                      order: Optional[Json], props: dict[str, str]) -> TableMetadata:
        """The first metadata of table ``name``: its schema, partition spec, sort order, properties."""
        try:
            spec = PartitionSpec.from_json(spec_doc)
            spec.partition_type(schema)          # source columns exist; transforms apply to them
        except (KeyError, TypeError, ValueError, AttributeError, SchemaError) as e:
            raise bad(f"the table's partition spec is malformed ({type(e).__name__}: {e})") from None
        meta = new_table_metadata(ops.location, schema, spec, props)
        if order and order.get("fields"):
            meta = apply_changes(meta, [AddSortOrder(order), SetDefaultSortOrder(-1)])
        self.catalog.check_new_location(name, ops.location)
        return meta

    def create_from_changes(self, name: str, ops: TableOperations, changes: Changes) -> None:
        """The commit of a create transaction (``assert-create``, the table absent): its first schema,
        spec, sort order, properties, format version, UUID and location make the table's first
        metadata, the updates after them apply to it, and it is committed as a new table."""
        updates = list(changes.updates)

        def take(kind: type[_T]) -> Optional[_T]:
            for i, u in enumerate(updates):
                if isinstance(u, kind):
                    del updates[i]
                    return u
            return None
        add_schema = take(AddSchema)
        if add_schema is None:
            raise bad(f"creating {name}: the commit has no add-schema")
        take(SetCurrentSchema)
        add_spec, _ = take(AddPartitionSpec), take(SetDefaultSpec)
        add_order, _ = take(AddSortOrder), take(SetDefaultSortOrder)
        set_props, location = take(SetProperties), take(SetLocation)
        version, assign = take(UpgradeFormatVersion), take(AssignUUID)
        if location is not None and normalize(location.location, "set-location") != normalize(ops.location):
            raise bad(f"creating {name}: tables are created in the warehouse, at {ops.location}; "
                      f"set-location {location.location[:200]!r} is elsewhere")
        props = dict(set_props.updates) if set_props else {}
        if version is not None:
            props["format-version"] = str(version.format_version)
        try:
            schema = schema_from_json(add_schema.schema)
        except (KeyError, TypeError, ValueError, AttributeError, SchemaError) as e:
            raise bad(f"creating {name}: add-schema is malformed ({type(e).__name__}: {e})") from None
        spec_doc = add_spec.spec if add_spec else {"spec-id": 0, "fields": []}
        meta = self._new_metadata(name, ops, schema, spec_doc, add_order.sort_order if add_order else None, props)
        if add_schema.last_column_id is not None and add_schema.last_column_id > meta.last_column_id:
            meta = dc_replace(meta, last_column_id=add_schema.last_column_id)
        if assign is not None:
            meta = apply_changes(meta, [assign])
        new = apply_changes(meta, updates)
        check_commit_locations(ops.io, meta, new, os.path.dirname(ops.metadata_path(1)))
        try:
            ops.commit(None, None, new)
        except VersionConflict:
            raise RequirementFailed("Requirement failed: table already exists (assert-create): "
                                    f"{name} was created concurrently") from None

    @post_route
    def register_table(self, request: Request, body: Json) -> Response:
        name, path = registration(request, body, self.settings.allowed_roots(self.warehouse))
        refused = unregistrable("")
        try:
            t = self.catalog.register_table(name, path)
        except (NoSuchTableError, OSError):
            raise refused from None
        except LocationError as e:
            if "share a location" in str(e):
                raise
            raise refused from None
        except CorruptMetadataError:
            raise bad("metadata-location is not valid Iceberg table metadata") from None
        if not isinstance(t, BaseTable):   # the served catalog is an Iceberg one (RestCatalogApp serves no other)
            raise IcefloeError(f"table {name} is not an Iceberg table: the REST catalog serves Iceberg tables")
        return table_result(t)

    @route
    def load_table(self, request: Request) -> Response:
        t = load_iceberg(self.catalog, table_name(request))
        if request.method == "HEAD":
            return Response(status_code=204)
        return table_result(t)

    @route
    def drop_table(self, request: Request) -> Response:
        raw = request.query_params.get("purgeRequested", "false").lower()
        if raw not in ("true", "false"):
            raise bad(f"purgeRequested must be true or false, not {raw[:20]!r}")
        purge = raw == "true"
        if purge and not self.settings.allow_purge:
            raise RequestError(403, "ForbiddenException", "purge is off on this server: the table is kept (drop it "
                                                          "without purgeRequested, or start the server with "
                                                          "--allow-purge)")
        self.catalog.drop_table(table_name(request), purge=purge)
        return Response(status_code=204)

    @post_route
    def rename_table(self, request: Request, body: Json) -> Response:
        src = field(body, "source", dict)
        dst = field(body, "destination", dict)
        names = [identifier_name(ident, what) for ident, what in ((src, "source"), (dst, "destination"))]
        self.catalog.rename_table(*names)
        return Response(status_code=204)

    # ------------------------------------------------------------------ server-side scan planning
    @post_route
    def plan_scan(self, request: Request, body: Json) -> Response:
        name = table_name(request)
        return JSONResponse(self.plans.plan(load_iceberg(self.catalog, name), name, body))

    @route
    def plan_result(self, request: Request) -> Response:
        name = table_name(request)
        self.catalog.load_table(name)                  # 404 for a table that is not there (any more)
        if request.method == "DELETE":
            self.plans.cancel(name, request.path_params["plan_id"])
            return Response(status_code=204)
        return JSONResponse(self.plans.fetch(name, request.path_params["plan_id"]))

    @post_route
    def plan_tasks(self, request: Request, body: Json) -> Response:
        name = table_name(request)
        self.catalog.load_table(name)
        return JSONResponse(self.plans.tasks(name, body))

    # ------------------------------------------------------------------ commits
    def _changes(self, body: Json) -> Changes:
        """A commit request's requirements and updates (both required by the spec)."""
        try:
            requirements = [requirement_from_json(r) for r in field(body, "requirements", list)]
            updates = [update_from_json(u) for u in field(body, "updates", list)]
        except BadUpdate as e:
            raise bad(str(e)) from None
        for u in updates:
            if isinstance(u, SetProperties):
                self._properties(u.updates, "set-properties")
        return Changes(updates, requirements)

    def _apply(self, ops: TableOperations, changes: Changes) -> tuple[int, TableMetadata, TableMetadata]:
        """(version, base, new): the changes checked and applied to the table's current metadata
        by the library's own commit path, and every file the result names checked to be inside
        the table."""
        version, base = ops.load()
        new = apply_commit(base, changes)
        check_commit_locations(ops.io, base, new, os.path.dirname(ops.metadata_path(version)))
        return version, base, new

    @post_route
    def commit_table(self, request: Request, body: Json) -> Response:
        name = table_name(request)
        changes = self._changes(body)
        ops: TableOperations = self.catalog.table_operations(name)
        if not ops.exists() and any(isinstance(r, AssertCreate) for r in changes.requirements):
            namespace = name.split(".", 1)[0]
            if not request_may(request.scope, "create", namespace):
                raise RequestError(403, "ForbiddenException", f"committing a create transaction makes a table: "
                                                              f"it needs the create grant on namespace {namespace}")
            self.create_from_changes(name, ops, changes)
        else:
            self._commit_existing(name, ops, changes)
        t = load_iceberg(self.catalog, name)
        return JSONResponse({"metadata-location": t.metadata_location, "metadata": t.metadata.to_json()})

    def _commit_existing(self, name: str, ops: TableOperations, changes: Changes) -> None:
        if not ops.exists():
            raise NoSuchTableError(f"table {name} does not exist")
        for _attempt in range(COMMIT_ATTEMPTS):
            version, base, new = self._apply(ops, changes)
            try:
                ops.commit(version, base, new)
                return
            except VersionConflict:
                continue                       # another writer got there: check again on its metadata
        raise VersionConflict(f"{name}: lost the race for a new metadata version {COMMIT_ATTEMPTS} times")

    @post_route
    def commit_transaction(self, request: Request, body: Json) -> Response:
        """``POST /v1/transactions/commit``: several tables' changes, all committed or none (the
        catalog's ``commit_transaction``: one database transaction in a SQL catalog; a Hadoop
        warehouse refuses several tables)."""
        table_changes = field(body, "table-changes", list)
        if not table_changes:
            raise bad("table-changes is empty")
        entries: list[TableCommit] = []
        names: set[str] = set()
        for i, c in enumerate(table_changes):
            what = f"table-changes[{i}]"
            if not isinstance(c, dict):
                raise bad(f"{what} must be a JSON object, not {json_kind(c)}")
            change: Json = c
            name = identifier_name(field(change, "identifier", dict, what=what), what)
            if name in names:
                raise bad(f"{what}: table {name} appears twice in the transaction")
            names.add(name)
            changes = self._changes(change)
            ops: TableOperations = self.catalog.table_operations(name)
            if not ops.exists():
                raise NoSuchTableError(f"table {name} does not exist")
            version, base, _new = self._apply(ops, changes)
            entries.append((name, ops, version, base, changes))
        self.catalog.commit_transaction(entries)
        return Response(status_code=204)
