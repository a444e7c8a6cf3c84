"""``icefloe serve``: the Iceberg REST catalog protocol over an icefloe catalog (a Starlette ASGI
app, served by uvicorn), so pyiceberg's ``RestCatalog`` and Iceberg's Java ``RESTCatalog`` create,
commit to and read the warehouse's Iceberg tables.

Routes (``/v1``): config; namespaces (list, create, load, exists, drop); tables (list, create,
load, exists, drop, commit, rename, register, server-side scan planning: ``icefloe.rest.planning``); multi-table transactions (commit); views (list,
create, load, exists, replace, drop, rename: the view spec's metadata, kept by a SQL catalog; a
view's location, like every file the server writes, stays inside the warehouse). A commit checks the request's requirements against
the table's current metadata, applies its updates (``icefloe.iceberg.metadata_builder``, which
checks each) and commits the result through the catalog's table operations (the Hadoop layout's create-if-absent or the SQL
catalog's compare-and-swap), retrying on a lost race; a failed requirement is HTTP 409.
"""
from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from typing import Optional, TypeVar

from icefloe.errors import (
    CorruptMetadataError, IcefloeError, LocationError, NamespaceAlreadyExistsError,
    NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError, NoSuchViewError, SchemaError,
    TableAlreadyExistsError, VersionConflict, RequestError,
)
from icefloe.iceberg.locations import check_commit_locations, is_inside, normalize
from icefloe.iceberg.partitioning import PartitionSpec
from icefloe.iceberg.schema import schema_from_json
from icefloe.iceberg.schema_update import renumber_new_table
from icefloe.iceberg.metadata_builder import (
    AddPartitionSpec, AddSchema, AddSortOrder, AssignUUID, BadUpdate, SetCurrentSchema, SetDefaultSortOrder,
    SetDefaultSpec, SetLocation, SetProperties, UpgradeFormatVersion, apply_changes, update_from_json,
)
from icefloe.iceberg.operations import Changes, apply_commit
from icefloe.iceberg.table_requirements import AssertCreate, RequirementFailed, requirement_from_json
from icefloe.iceberg.table_metadata import new_table_metadata
from icefloe.iceberg.view_metadata import (
    SetViewLocation, SetViewProperties, ViewUpdateError, ViewVersion, new_view_metadata, view_requirement_from_json,
    view_update_from_json,
)
from icefloe.rest.auth import Authenticator, Guard, request_may, visible_namespaces
from icefloe.rest.planning import PLAN_TASK_FILES, ScanPlans

_T = TypeVar("_T")     # the kind of a commit's update a create transaction takes (take)
SEPARATOR = "\x1f"          # namespace levels in a URL path
# the routes this server offers, as the config response lists them (the REST spec's ``endpoints``)
ENDPOINTS = [f"{m} /v1/{{prefix}}/{p}" for m, p in (
    ("GET", "namespaces"), ("POST", "namespaces"), ("GET", "namespaces/{namespace}"),
    ("HEAD", "namespaces/{namespace}"), ("DELETE", "namespaces/{namespace}"),
    ("POST", "namespaces/{namespace}/properties"), ("GET", "namespaces/{namespace}/tables"),
    ("POST", "namespaces/{namespace}/tables"), ("GET", "namespaces/{namespace}/tables/{table}"),
    ("HEAD", "namespaces/{namespace}/tables/{table}"), ("POST", "namespaces/{namespace}/tables/{table}"),
    ("DELETE", "namespaces/{namespace}/tables/{table}"), ("POST", "namespaces/{namespace}/register"),
    ("POST", "tables/rename"), ("POST", "transactions/commit"),
    ("GET", "namespaces/{namespace}/views"), ("POST", "namespaces/{namespace}/views"),
    ("GET", "namespaces/{namespace}/views/{view}"), ("HEAD", "namespaces/{namespace}/views/{view}"),
    ("POST", "namespaces/{namespace}/views/{view}"), ("DELETE", "namespaces/{namespace}/views/{view}"),
    ("POST", "views/rename"), ("POST", "namespaces/{namespace}/register-view"),
    ("POST", "namespaces/{namespace}/tables/{table}/plan"), ("GET", "namespaces/{namespace}/tables/{table}/plan/{plan-id}"),
    ("DELETE", "namespaces/{namespace}/tables/{table}/plan/{plan-id}"),
    ("POST", "namespaces/{namespace}/tables/{table}/tasks"))]
COMMIT_ATTEMPTS = 10
log = logging.getLogger("icefloe.rest")


@dataclass(frozen=True)
class ServerSettings:
    """What the server allows (``icefloe serve`` options; see docs/configuration.md).

    ``allow_purge``: ``DELETE .../tables/t?purgeRequested=true`` deletes the table's files (off by
    default: a drop forgets the table and keeps its files). ``allowed_locations``: directories a
    registered table may live in besides the warehouse. The limits make a request past them a
    413 (body, JSON depth) or a 400 (a property larger than ``max_property_bytes``).
    ``plan_task_files``: file scan tasks in one answer of server-side scan planning (the rest
    come as plan tasks, ``icefloe.rest.planning``)."""
    allow_purge: bool = False
    allowed_locations: tuple = ()
    max_body_bytes: int = 16 * 1024 * 1024
    max_json_depth: int = 200
    max_property_bytes: int = 1024 * 1024
    plan_task_files: int = PLAN_TASK_FILES


def _renumbered_sources(doc: Optional[dict], ids: dict[int, int]) -> Optional[dict]:
    """A partition spec's or sort order's JSON with its fields' source ids renumbered by ``ids``."""
    if not doc or not isinstance(doc.get("fields"), list):
        return doc

    def source(i):
        if i not in ids:
            raise _bad(f"a partition or sort field's source id {i!r} is no field of the table's schema")
        return ids[i]

    def field(f):
        if not isinstance(f, dict):
            return f
        f = dict(f)
        if "source-id" in f:
            f["source-id"] = source(f["source-id"])
        if isinstance(f.get("source-ids"), list):
            f["source-ids"] = [source(i) for i in f["source-ids"]]
        return f
    return {**doc, "fields": [field(f) for f in doc["fields"]]}


# icefloe's "table db.t does not exist ..." and the like, in the words Java's catalogs use for them
# ("Table does not exist: db.t ..."), which REST clients show and their test suites expect.
_CONVENTIONS = [(re.compile(r"(table|namespace|view) (\S+) (does not exist|already exists)(.*)", re.S),
                 lambda m: f"{m[1].capitalize()} {m[3]}: {m[2]}{m[4]}"),
                (re.compile(r"cannot (?:create|register) (table|view) (\S+): a (view|table) of that name exists.*",
                            re.S), lambda m: f"{m[3].capitalize()} with same name already exists: {m[2]}"),
                (re.compile(r"cannot rename (?:table|view) (\S+) to (\S+): (?:a (view|table) of that name|\S+) "
                            r"exists", re.S),
                 lambda m: f"Cannot rename {m[1]} to {m[2]}. {(m[3] or 'view').capitalize()} already exists"),
                (re.compile(r"namespace (\S+) (holds .*)", re.S), lambda m: f"Namespace is not empty: {m[1]} ({m[2]})")]


def _conventional(message: str) -> str:
    for pattern, render in _CONVENTIONS:
        m = pattern.fullmatch(message)
        if m:
            return render(m)
    return message


def _bad(message: str) -> RequestError:
    return RequestError(400, "BadRequestException", message)


def _unregistrable(kind: str) -> RequestError:
    """One answer for a metadata file to register that is missing, unreadable, not regular, or
    outside the allowed locations: the server is not an oracle of which files exist."""
    return _bad(f"metadata-location must name a readable Iceberg {kind}metadata file (an absolute path, a regular "
                "file) inside the warehouse or the server's allowed locations")


def _error(status: int, kind: str, message: str):
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


def json_depth_exceeds(data: bytes, limit: int) -> bool:
    """Whether the JSON text ``data`` nests arrays and objects deeper than ``limit`` (brackets
    inside strings do not count), checked before the text is parsed."""
    depth, in_string, escaped = 0, False, False
    for b in data:
        if in_string:
            if escaped:
                escaped = False
            elif b == 0x5C:          # backslash
                escaped = True
            elif b == 0x22:          # quote
                in_string = False
        elif b == 0x22:
            in_string = True
        elif b in (0x5B, 0x7B):      # [ {
            depth += 1
            if depth > limit:
                return True
        elif b in (0x5D, 0x7D):
            depth -= 1
    return False


def _handler(fn):
    """A route: its body read and parsed under the limits on the event loop, its work (file and
    database I/O) in the thread pool, so a slow request never holds up the others; icefloe's
    errors as the protocol's error responses (``ErrorModel``), 5xx only for the server's own
    faults, without a trace or a file's content."""
    import functools

    @functools.wraps(fn)
    async def wrapped(self, request):
        from starlette.concurrency import run_in_threadpool

        try:
            body = await self._body(request) if request.method == "POST" else None
            return await run_in_threadpool(fn, self, request, body)
        except RequestError as e:
            return _error(e.status, e.kind, str(e))
        except NoSuchViewError as e:
            return _error(404, "NoSuchViewException", _conventional(str(e)))
        except ViewUpdateError as e:             # what Java's view builders refuse with IllegalArgumentException
            return _error(400, "IllegalArgumentException", str(e))
        except NoSuchTableError as e:
            return _error(404, "NoSuchTableException", _conventional(str(e)))
        except NoSuchNamespaceError as e:
            return _error(404, "NoSuchNamespaceException", _conventional(str(e)))
        except (TableAlreadyExistsError, NamespaceAlreadyExistsError) as e:
            return _error(409, "AlreadyExistsException", _conventional(str(e)))
        except NamespaceNotEmptyError as e:
            return _error(409, "NamespaceNotEmptyException", _conventional(str(e)))
        except (RequirementFailed, VersionConflict) as e:
            return _error(409, "CommitFailedException", str(e))
        except CorruptMetadataError as e:        # the table's own metadata: the server's fault, not the caller's
            log.error("%s %s: %s", request.method, request.url.path, e)
            return _error(500, "ServerErrorException", "the table's metadata cannot be read (see the server's log)")
        except IcefloeError as e:                # an invalid update, name, schema or location; a refusal
            return _error(400, "BadRequestException", str(e))
        except Exception:                        # the server's own fault
            log.exception("%s %s failed", request.method, request.url.path)
            return _error(500, "ServerErrorException", "the server failed on this request (see its log)")
    return wrapped


class RestCatalogApp:
    """The ASGI application for one icefloe ``Catalog`` (Iceberg format)."""

    def __init__(self, catalog, settings: Optional[ServerSettings] = None, auth: Optional[Authenticator] = None):
        """``settings``: what the server accepts (``ServerSettings``); ``auth``: who may do what
        (``icefloe.rest.auth``); None serves everyone."""
        from starlette.applications import Starlette
        from starlette.routing import Route

        if catalog.format != "iceberg":
            raise IcefloeError("the REST catalog serves Iceberg tables; open the warehouse with format='iceberg'")
        self.catalog = catalog
        self.settings = settings or ServerSettings()
        ns, tbl = "/v1/namespaces/{namespace}", "/v1/namespaces/{namespace}/tables/{table}"
        self.routes = Starlette(routes=[
            Route("/v1/config", self.config, methods=["GET"]),
            Route("/v1/namespaces", self.list_namespaces, methods=["GET"]),
            Route("/v1/namespaces", self.create_namespace, methods=["POST"]),
            Route(ns, self.load_namespace, methods=["GET", "HEAD"]),
            Route(ns, self.drop_namespace, methods=["DELETE"]),
            Route(f"{ns}/properties", self.namespace_properties, methods=["POST"]),
            Route(f"{ns}/tables", self.list_tables, methods=["GET"]),
            Route(f"{ns}/tables", self.create_table, methods=["POST"]),
            Route(f"{ns}/register", self.register_table, methods=["POST"]),
            Route(tbl, self.load_table, methods=["GET", "HEAD"]),
            Route(tbl, self.commit_table, methods=["POST"]),
            Route(tbl, self.drop_table, methods=["DELETE"]),
            Route(f"{tbl}/plan", self.plan_scan, methods=["POST"]),
            Route(f"{tbl}/plan/{{plan_id}}", self.plan_result, methods=["GET", "DELETE"]),
            Route(f"{tbl}/tasks", self.plan_tasks, methods=["POST"]),
            Route("/v1/tables/rename", self.rename_table, methods=["POST"]),
            Route("/v1/transactions/commit", self.commit_transaction, methods=["POST"]),
            Route(f"{ns}/views", self.list_views, methods=["GET"]),
            Route(f"{ns}/views", self.create_view, methods=["POST"]),
            Route(f"{ns}/views/{{view}}", self.load_view, methods=["GET", "HEAD"]),
            Route(f"{ns}/views/{{view}}", self.replace_view, methods=["POST"]),
            Route(f"{ns}/views/{{view}}", self.drop_view, methods=["DELETE"]),
            Route("/v1/views/rename", self.rename_view, methods=["POST"]),
            Route(f"{ns}/register-view", self.register_view, methods=["POST"]),
        ])
        self.app = Guard(self.routes, auth)
        self.plans = ScanPlans(self.settings.plan_task_files)

    async def __call__(self, scope, receive, send):
        await self.app(scope, receive, send)

    # ------------------------------------------------------------------ requests
    async def _body(self, request):
        """The request's JSON object, read under the size and depth limits (413 past them)."""
        limit = self.settings.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise RequestError(413, "RequestTooLargeException", f"the request body is larger than the limit "
                                                                f"of {limit} bytes")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise RequestError(413, "RequestTooLargeException", f"the request body is larger than the limit "
                                                                    f"of {limit} bytes")
            chunks.append(chunk)
        data = b"".join(chunks)
        if json_depth_exceeds(data, self.settings.max_json_depth):
            raise RequestError(413, "RequestTooLargeException", f"the request body nests JSON deeper than the "
                                                                f"limit of {self.settings.max_json_depth} levels")
        try:
            body = json.loads(data)
        except (ValueError, RecursionError):
            raise _bad("the request body is not valid JSON") from None
        if not isinstance(body, dict):
            raise _bad(f"the request body must be a JSON object, not {_kind(body)}")
        return body

    @staticmethod
    def _field(body: dict, key: str, kind, required: bool = True, what: str = ""):
        v = body.get(key)
        if v is None:
            if required:
                raise _bad(f"{what or 'the request'} lacks the field {key!r}")
            return None
        if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
            names = {str: "a string", dict: "a JSON object", list: "a JSON array", bool: "a boolean", int: "a number"}
            raise _bad(f"{what or 'the request'}: {key!r} must be {names.get(kind, kind)}, not {_kind(v)}")
        return v

    @staticmethod
    def _namespace(raw: str) -> str:
        parts = raw.split(SEPARATOR)
        if not all(parts):
            raise _bad(f"namespace {parts}: a namespace level is empty")
        if len(parts) != 1:     # no such namespace can exist (clients probe them: Spark's `t.snapshots`)
            raise NoSuchNamespaceError(f"namespace {'.'.join(parts)} does not exist: icefloe namespaces have one level")
        return parts[0]

    @staticmethod
    def _one_level(levels) -> str:
        if not isinstance(levels, list) or len(levels) != 1 or not isinstance(levels[0], str):
            raise _bad("a namespace is a JSON array of one string: icefloe namespaces have one level")
        return levels[0]

    def _name(self, request) -> str:
        try:
            namespace = self._namespace(request.path_params["namespace"])
        except NoSuchNamespaceError:
            name = request.path_params["namespace"].replace(SEPARATOR, ".") + "." + request.path_params["table"]
            raise NoSuchTableError(f"table {name} does not exist") from None
        return f"{namespace}.{request.path_params['table']}"

    def _check_properties(self, props, what: str) -> dict:
        if props is None:
            return {}
        if not isinstance(props, dict):
            raise _bad(f"{what} must be a JSON object of strings, not {_kind(props)}")
        limit = self.settings.max_property_bytes
        for k, v in props.items():
            if not isinstance(v, str):
                raise _bad(f"{what}: the value of {k!r} must be a string, not {_kind(v)}")
            if len(k.encode()) + len(v.encode()) > limit:
                raise _bad(f"{what}: property {k[:100]!r} is larger than the limit of {limit} bytes")
        return props

    def _allowed_roots(self) -> list:
        return [self.catalog.warehouse, *self.settings.allowed_locations]

    def _result(self, t):
        from starlette.responses import JSONResponse

        return JSONResponse({"metadata-location": t.metadata_location, "metadata": t.metadata.to_json(),
                             "config": {}})

    # ------------------------------------------------------------------ config and namespaces
    async def config(self, request):
        from starlette.responses import JSONResponse

        return JSONResponse({"defaults": {}, "overrides": {}, "endpoints": ENDPOINTS})

    @_handler
    def list_namespaces(self, request, _body):
        from starlette.responses import JSONResponse

        parent = request.query_params.get("parent")
        if parent:
            if not self.catalog.namespace_exists(self._namespace(parent)):
                raise NoSuchNamespaceError(f"namespace {parent.replace(SEPARATOR, '.')} does not exist")
            return JSONResponse({"namespaces": []})        # one level: nothing below a namespace
        names = visible_namespaces(request.scope, sorted(self.catalog.list_namespaces()))
        return JSONResponse({"namespaces": [[n] for n in names]})

    @_handler
    def create_namespace(self, request, body):
        from starlette.responses import JSONResponse

        ns = self._one_level(body.get("namespace"))
        props = self._check_properties(body.get("properties"), "properties")
        if props and not self.catalog.keeps_namespace_properties:
            raise _bad("namespace properties are kept by the SQL catalog only (a Hadoop warehouse "
                       "namespace is a directory)")
        self.catalog.create_namespace(ns, properties=props or None)
        return JSONResponse({"namespace": [ns], "properties": props})

    @_handler
    def load_namespace(self, request, _body):
        from starlette.responses import JSONResponse, Response

        ns = self._namespace(request.path_params["namespace"])
        if not self.catalog.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {ns} does not exist")
        if request.method == "HEAD":
            return Response(status_code=204)
        props = self.catalog.namespace_properties(ns)
        return JSONResponse({"namespace": [ns], "properties": props})

    @_handler
    def drop_namespace(self, request, _body):
        from starlette.responses import Response

        self.catalog.drop_namespace(self._namespace(request.path_params["namespace"]))
        return Response(status_code=204)

    @_handler
    def namespace_properties(self, request, body):
        from starlette.responses import JSONResponse

        ns = self._namespace(request.path_params["namespace"])
        updates = self._check_properties(body.get("updates"), "updates")
        removals = self._field(body, "removals", list, required=False) or []
        if not all(isinstance(k, str) for k in removals):
            raise _bad("removals must be a JSON array of strings")
        if updates and not self.catalog.keeps_namespace_properties:
            raise _bad("namespace properties are kept by the SQL catalog only")
        updated, removed, missing = self.catalog.update_namespace_properties(ns, updates, removals)
        return JSONResponse({"updated": updated, "removed": removed, "missing": missing})

    # ------------------------------------------------------------------ tables
    @_handler
    def list_tables(self, request, _body):
        from starlette.responses import JSONResponse

        ns = self._namespace(request.path_params["namespace"])
        return JSONResponse({"identifiers": [{"namespace": [ns], "name": n.split(".", 1)[1]}
                                             for n in self.catalog.list_tables(ns)]})

    @_handler
    def create_table(self, request, body):
        ns = self._namespace(request.path_params["namespace"])
        name = f"{ns}.{self._field(body, 'name', str)}"
        if self.catalog.keeps_empty_namespaces and not self.catalog.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {ns} does not exist")
        if body.get("location"):
            raise _bad("tables are created in the warehouse; a location cannot be given")
        props = self._check_properties(body.get("properties"), "properties")
        schema_doc = self._field(body, "schema", dict)
        spec_doc = self._field(body, "partition-spec", dict, required=False) or {"spec-id": 0, "fields": []}
        order = self._field(body, "write-order", dict, required=False)
        staged = self._field(body, "stage-create", bool, required=False)
        ops = self.catalog.table_operations(name)
        if ops.exists():
            raise TableAlreadyExistsError(f"table {name} already exists")
        try:
            # ids afresh, as every Java catalog assigns them to a new table (a client's ids are its own)
            schema, ids = renumber_new_table(schema_from_json(schema_doc))
            spec_doc, order = _renumbered_sources(spec_doc, ids), _renumbered_sources(order, ids)
        except (KeyError, TypeError, ValueError, AttributeError, SchemaError) as e:
            raise _bad(f"the table's schema is malformed ({type(e).__name__}: {e})") from None
        meta = self._new_metadata(name, ops, schema, spec_doc, order, props)
        if staged:
            # a create transaction: nothing is written until the client commits it (assert-create)
            from starlette.responses import JSONResponse

            return JSONResponse({"metadata": meta.to_json(), "config": {}})
        try:
            ops.commit(None, None, meta)
        except VersionConflict:
            raise TableAlreadyExistsError(f"table {name} was created concurrently") from None
        return self._result(self.catalog.load_table(name))

    def _new_metadata(self, name: str, ops, schema, spec_doc: dict, order: Optional[dict], props: dict):
        """The first metadata of table ``name``: its schema, partition spec, sort order, properties."""
        try:
            spec = PartitionSpec.from_json(spec_doc)
            spec.partition_type(schema)          # source columns exist; transforms apply to them
        except (KeyError, TypeError, ValueError, AttributeError, SchemaError) as e:
            raise _bad(f"the table's partition spec is malformed ({type(e).__name__}: {e})") from None
        meta = new_table_metadata(ops.location, schema, spec, props)
        if order and order.get("fields"):
            meta = apply_changes(meta, [AddSortOrder(order), SetDefaultSortOrder(-1)])
        self.catalog.check_new_location(name, ops.location)
        return meta

    def _create_from_changes(self, name: str, ops, changes: Changes):
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
            raise _bad(f"creating {name}: the commit has no add-schema")
        take(SetCurrentSchema)
        add_spec, _ = take(AddPartitionSpec), take(SetDefaultSpec)
        add_order, _ = take(AddSortOrder), take(SetDefaultSortOrder)
        set_props, location, version, assign = take(SetProperties), take(SetLocation), take(UpgradeFormatVersion), take(AssignUUID)
        if location is not None and normalize(location.location, "set-location") != normalize(ops.location):
            raise _bad(f"creating {name}: tables are created in the warehouse, at {ops.location}; "
                       f"set-location {location.location[:200]!r} is elsewhere")
        props = dict(set_props.updates) if set_props else {}
        if version is not None:
            props["format-version"] = str(version.format_version)
        try:
            schema = schema_from_json(add_schema.schema)
        except (KeyError, TypeError, ValueError, AttributeError, SchemaError) as e:
            raise _bad(f"creating {name}: add-schema is malformed ({type(e).__name__}: {e})") from None
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

    @_handler
    def register_table(self, request, body):
        name, path = self._registration(request, body)
        refused = _unregistrable("")
        try:
            t = self.catalog.register_table(name, path)
        except (NoSuchTableError, OSError):
            raise refused from None
        except LocationError as e:
            if "share a location" in str(e):
                raise
            raise refused from None
        except CorruptMetadataError:
            raise _bad("metadata-location is not valid Iceberg table metadata") from None
        return self._result(t)

    def _registration(self, request, body) -> tuple:
        """A register request's (name, metadata file): the file's path absolute and inside the
        warehouse or the server's allowed locations."""
        ns = self._namespace(request.path_params["namespace"])
        name = f"{ns}.{self._field(body, 'name', str)}"
        location = self._field(body, "metadata-location", str)
        try:
            path = normalize(location, "metadata-location")
        except LocationError:
            raise _unregistrable("view " if "register-view" in request.url.path else "") from None
        if not any(is_inside(path, normalize(r)) for r in self._allowed_roots()):
            raise _unregistrable("view " if "register-view" in request.url.path else "")
        return name, path

    @_handler
    def load_table(self, request, _body):
        from starlette.responses import Response

        t = self.catalog.load_table(self._name(request))
        if request.method == "HEAD":
            return Response(status_code=204)
        return self._result(t)

    @_handler
    def drop_table(self, request, _body):
        from starlette.responses import Response

        raw = request.query_params.get("purgeRequested", "false").lower()
        if raw not in ("true", "false"):
            raise _bad(f"purgeRequested must be true or false, not {raw[:20]!r}")
        purge = raw == "true"
        if purge and not self.settings.allow_purge:
            raise RequestError(403, "ForbiddenException", "purge is off on this server: the table is kept (drop it "
                                                          "without purgeRequested, or start the server with "
                                                          "--allow-purge)")
        self.catalog.drop_table(self._name(request), purge=purge)
        return Response(status_code=204)

    @_handler
    def rename_table(self, request, body):
        from starlette.responses import Response

        src = self._field(body, "source", dict)
        dst = self._field(body, "destination", dict)
        names = []
        for ident, what in ((src, "source"), (dst, "destination")):
            names.append(f"{self._one_level(ident.get('namespace'))}.{self._field(ident, 'name', str, what=what)}")
        self.catalog.rename_table(*names)
        return Response(status_code=204)

    # ------------------------------------------------------------------ server-side scan planning
    @_handler
    def plan_scan(self, request, body):
        from starlette.responses import JSONResponse

        name = self._name(request)
        return JSONResponse(self.plans.plan(self.catalog.load_table(name), name, body))

    @_handler
    def plan_result(self, request, _body):
        from starlette.responses import JSONResponse, Response

        name = self._name(request)
        self.catalog.load_table(name)                  # 404 for a table that is not there (any more)
        if request.method == "DELETE":
            self.plans.cancel(name, request.path_params["plan_id"])
            return Response(status_code=204)
        return JSONResponse(self.plans.fetch(name, request.path_params["plan_id"]))

    @_handler
    def plan_tasks(self, request, body):
        from starlette.responses import JSONResponse

        name = self._name(request)
        self.catalog.load_table(name)
        return JSONResponse(self.plans.tasks(name, body))

    def _changes(self, body: dict) -> Changes:
        """A commit request's requirements and updates (both required by the spec)."""
        try:
            requirements = [requirement_from_json(r) for r in self._field(body, "requirements", list)]
            updates = [update_from_json(u) for u in self._field(body, "updates", list)]
        except BadUpdate as e:
            raise _bad(str(e)) from None
        for u in updates:
            if isinstance(u, SetProperties):
                self._check_properties(u.updates, "set-properties")
        return Changes(updates, requirements)

    def _apply(self, ops, changes: Changes) -> tuple:
        """(version, base, new): the changes checked and applied to the table's current metadata
        by the library's own commit path, and every file the result names checked to be inside
        the table."""
        version, base = ops.load()
        new = apply_commit(base, changes)
        check_commit_locations(ops.io, base, new, os.path.dirname(ops.metadata_path(version)))
        return version, base, new

    @_handler
    def commit_table(self, request, body):
        from starlette.responses import JSONResponse

        name = self._name(request)
        changes = self._changes(body)
        ops = self.catalog.table_operations(name)
        if not ops.exists() and any(isinstance(r, AssertCreate) for r in changes.requirements):
            namespace = name.split(".", 1)[0]
            if not request_may(request.scope, "create", namespace):
                raise RequestError(403, "ForbiddenException", f"committing a create transaction makes a table: "
                                                              f"it needs the create grant on namespace {namespace}")
            self._create_from_changes(name, ops, changes)
        else:
            self._commit_existing(name, ops, changes)
        t = self.catalog.load_table(name)
        return JSONResponse({"metadata-location": t.metadata_location, "metadata": t.metadata.to_json()})

    def _commit_existing(self, name: str, ops, changes: Changes) -> None:
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

    @_handler
    def commit_transaction(self, request, body):
        """``POST /v1/transactions/commit``: several tables' changes, all committed or none (the
        catalog's ``commit_transaction``: one database transaction in a SQL catalog; a Hadoop
        warehouse refuses several tables)."""
        from starlette.responses import Response

        table_changes = self._field(body, "table-changes", list)
        if not table_changes:
            raise _bad("table-changes is empty")
        entries, names = [], set()
        for i, c in enumerate(table_changes):
            what = f"table-changes[{i}]"
            if not isinstance(c, dict):
                raise _bad(f"{what} must be a JSON object, not {_kind(c)}")
            ident = self._field(c, "identifier", dict, what=what)
            name = f"{self._one_level(ident.get('namespace'))}.{self._field(ident, 'name', str, what=what)}"
            if name in names:
                raise _bad(f"{what}: table {name} appears twice in the transaction")
            names.add(name)
            changes = self._changes(c)
            ops = self.catalog.table_operations(name)
            if not ops.exists():
                raise NoSuchTableError(f"table {name} does not exist")
            version, base, _new = self._apply(ops, changes)
            entries.append((name, ops, version, base, changes))
        self.catalog.commit_transaction(entries)
        return Response(status_code=204)

    # ------------------------------------------------------------------ views
    def _view_name(self, request) -> str:
        try:
            namespace = self._namespace(request.path_params["namespace"])
        except NoSuchNamespaceError:
            raise NoSuchViewError(f"view {request.path_params['namespace']}.{request.path_params['view']} does not "
                                  "exist") from None
        return f"{namespace}.{request.path_params['view']}"

    def _view_result(self, loaded):
        from starlette.responses import JSONResponse

        return JSONResponse({"metadata-location": loaded.metadata_location, "metadata": loaded.metadata.to_json(),
                             "config": {}})

    def _check_view_location(self, location: str) -> str:
        """A view location a request names: absolute, inside the warehouse (or an allowed location)."""
        refused = _bad("a view's location must be a directory inside the warehouse")
        try:
            path = normalize(location, "location")
        except LocationError:
            raise refused from None
        if not any(is_inside(path, normalize(r)) for r in self._allowed_roots()):
            raise refused
        return path

    @_handler
    def list_views(self, request, _body):
        from starlette.responses import JSONResponse

        ns = self._namespace(request.path_params["namespace"])
        return JSONResponse({"identifiers": [{"namespace": [ns], "name": n.split(".", 1)[1]}
                                             for n in self.catalog.list_views(ns)]})

    @_handler
    def create_view(self, request, body):
        ns = self._namespace(request.path_params["namespace"])
        name = f"{ns}.{self._field(body, 'name', str)}"
        props = self._check_properties(body.get("properties"), "properties")
        location = self._field(body, "location", str, required=False)
        location = self._check_view_location(location) if location else self.catalog.view_location(name)
        try:
            schema = schema_from_json(self._field(body, "schema", dict))
            version = ViewVersion.from_json(self._field(body, "view-version", dict), bad=ViewUpdateError)
            meta = new_view_metadata(location, schema, version, props)
        except (KeyError, TypeError, ValueError, AttributeError, SchemaError) as e:
            raise _bad(f"the view's schema or version is malformed ({type(e).__name__}: {e})") from None
        return self._view_result(self.catalog.create_view(name, meta))

    @_handler
    def load_view(self, request, _body):
        from starlette.responses import Response

        loaded = self.catalog.load_view(self._view_name(request))
        if request.method == "HEAD":
            return Response(status_code=204)
        return self._view_result(loaded)

    @_handler
    def replace_view(self, request, body):
        name = self._view_name(request)
        try:
            requirements = [view_requirement_from_json(r) for r in
                            self._field(body, "requirements", list, required=False) or []]
            updates = [view_update_from_json(u) for u in self._field(body, "updates", list)]
        except ViewUpdateError as e:
            raise _bad(str(e)) from None
        for u in updates:
            if isinstance(u, SetViewProperties):
                self._check_properties(u.updates, "set-properties")
            if isinstance(u, SetViewLocation):
                self._check_view_location(u.location)
        return self._view_result(self.catalog.commit_view(name, updates, requirements))

    @_handler
    def drop_view(self, request, _body):
        from starlette.responses import Response

        self.catalog.drop_view(self._view_name(request))
        return Response(status_code=204)

    @_handler
    def register_view(self, request, body):
        from icefloe.iceberg.view_store import read_view_metadata

        name, path = self._registration(request, body)
        try:
            # the view's next metadata files go to its location: it must be one the server writes to
            self._check_view_location(read_view_metadata(self.catalog.io, path).location)
            return self._view_result(self.catalog.register_view(name, path))
        except (OSError, LocationError):
            raise _unregistrable("view ") from None
        except CorruptMetadataError:
            raise _bad("metadata-location is not valid Iceberg view metadata") from None

    @_handler
    def rename_view(self, request, body):
        from starlette.responses import Response

        names = []
        for key in ("source", "destination"):
            ident = self._field(body, key, dict)
            names.append(f"{self._one_level(ident.get('namespace'))}.{self._field(ident, 'name', str, what=key)}")
        self.catalog.rename_view(*names)
        return Response(status_code=204)


def _kind(v) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(v), "a number")


def serve(catalog, host: str = "127.0.0.1", port: int = 8181, settings: Optional[ServerSettings] = None,
          auth_file: Optional[str] = None, insecure: bool = False, ssl_certfile: Optional[str] = None,
          ssl_keyfile: Optional[str] = None) -> None:   # pragma: no cover - blocks
    """Serve ``catalog`` until stopped, accepting what ``settings`` allows. Without ``auth_file`` only
    a loopback address is served, unless ``insecure`` (see ``icefloe.rest.serving``); TLS with
    ``ssl_certfile``/``ssl_keyfile``."""
    import uvicorn

    from icefloe.rest.serving import prepare

    auth, tls = prepare(host, auth_file, insecure, ssl_certfile, ssl_keyfile)
    uvicorn.run(RestCatalogApp(catalog, settings, auth), host=host, port=port, log_level="warning",
                access_log=False, **tls)
